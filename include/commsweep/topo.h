/* Shipped topology files: die parameters (one file per die type, e.g. "5x4", "2261_5x4") and
 * multi-die layouts ("1die", "2die", "4die"), plus the MVP endpoint_id_scheme that maps logical
 * GDMA/DDR ids onto (die, node, channel).  The files are JSON, compiled into the binary, so a job
 * never depends on the working directory.  docs/topologies.md describes every field.
 */
#ifndef COMMSWEEP_TOPO_H
#define COMMSWEEP_TOPO_H

#include "commsweep/err.h"
#include "commsweep/fields.h"
#include "commsweep/model.h"

#define CS_TOPO_MAX_DIES 8

#define CS_TOPO_MAX_LINKS 32

/* Parameters of one KCIN die (crossring-model.md §5).  Times are in ns as in the files;
 * engines convert to cycles. */
typedef struct cs_die_params {
  char name[CS_NAME_MAX];
  int rows, cols;                       /* node id = row * cols + col */
  int flit_bytes;                       /* FLIT_SIZE */
  double network_frequency_ghz, ip_frequency_ghz;
  int slice_per_link_h, slice_per_link_v;
  int cp_slice_count;
  int iq_ch_fifo_depth, eq_ch_fifo_depth;
  int iq_out_fifo_depth_h, iq_out_fifo_depth_v, iq_out_fifo_depth_eq;
  int rb_in_fifo_depth, rb_out_fifo_depth, eq_in_fifo_depth;
  int ip_l2h_fifo_depth, ip_h2l_h_fifo_depth, ip_h2l_l_fifo_depth;
  int tl_etag_t2, tl_etag_t1, tr_etag_t2;
  int tu_etag_t2, tu_etag_t1, td_etag_t2;
  bool etag_t1_enabled, etag_bothside_upgrade;
  int itag_trigger_th_h, itag_trigger_th_v; /* cycles */
  int itag_max_num_h, itag_max_num_v;
  double ddr_r_latency_ns, ddr_r_latency_var_ns, ddr_w_latency_ns;
  double l2m_r_latency_ns, l2m_w_latency_ns;
  double sn_tracker_release_latency_ns;
  double sn_processing_latency_ns, rn_processing_latency_ns;
  double gdma_bw_limit_gb_per_s, ddr_bw_limit_gb_per_s;
  int rn_rdb_size, rn_wdb_size;         /* flits */
  int sn_ddr_rdb_size, sn_ddr_wdb_size; /* flits */
  bool routing_yx;                      /* false: XY */
} cs_die_params;

typedef struct cs_d2d_link {
  int die_a, node_a, die_b, node_b; /* one bidirectional connection */
} cs_d2d_link;

typedef enum cs_d2d_select {
  CS_D2D_SELECT_BY_DDR_INDEX, /* CrossRing's rule: candidates[ddr channel % n] */
  CS_D2D_SELECT_SPREAD        /* spread by (source node + destination node) over candidates */
} cs_d2d_select;

typedef struct cs_layout {
  char name[CS_NAME_MAX];
  int num_dies;
  int num_links;
  cs_d2d_link links[CS_TOPO_MAX_LINKS];
  cs_d2d_select select;
  int num_die_topologies;               /* die types this layout accepts (C2) */
  char die_topologies[4][CS_NAME_MAX];
  double ar_latency_ns, r_latency_ns, aw_latency_ns, w_latency_ns, b_latency_ns;
  double axi_bw_gb_per_s;              /* per channel, per direction */
  double d2d_rn_bw_gb_per_s, d2d_sn_bw_gb_per_s;
  int d2d_rn_rdb_size, d2d_rn_wdb_size, d2d_sn_rdb_size, d2d_sn_wdb_size; /* flits */
} cs_layout;

/* Loads a shipped die/layout by name; an unknown name lists the valid ones. */
int cs_topo_die(const char *name, cs_die_params *out, cs_err *err);
int cs_topo_layout(const char *name, cs_layout *out, cs_err *err);
/* Parses die/layout JSON text (the shipped files and tests use this). */
int cs_topo_die_parse(const char *json, const char *source, cs_die_params *out, cs_err *err);
int cs_topo_layout_parse(const char *json, const char *source, cs_layout *out, cs_err *err);
/* C2 and C3 of the adapter: topology, num_dies and dcin_layout name shipped files that agree,
 * and endpoint_id_scheme with num_initiators / num_targets match the scheme on that chip.  For
 * the engines that model the shipped chips. */
int cs_topo_check_adapter(const cs_adapter_config *cfg, cs_err *err);
/* Writes "2261_5x4, 5x4" / "1die, 2die, ..." (the shipped names) into buf. */
void cs_topo_die_names(char *buf, size_t cap);
void cs_topo_layout_names(char *buf, size_t cap);

/* ---- endpoint_id_scheme "mvp" ------------------------------------------------------------- */
#define CS_SCHEME_MVP "mvp"

/* Logical GDMA g (and DDR d) lives on die g / (rows*cols), node g % (rows*cols).  Participant
 * p's DDR is logical DDR p.  Each logical endpoint drives two physical channels (gdma_0/gdma_1,
 * ddr_0/ddr_1) alternately: cs_scheme_channel is the one rule every engine applies. */
typedef struct cs_endpoint {
  int die, node;
} cs_endpoint;

#define CS_SCHEME_CHANNELS 2
/* The physical channel of a request: a logical GDMA alternates over its channels in the order
 * it issues requests, counted over the whole job (issued_before = requests the same logical
 * GDMA issued earlier in the job); the request uses the same channel index at its target. */
static inline int cs_scheme_channel(uint64_t issued_before) {
  return (int)(issued_before % CS_SCHEME_CHANNELS);
}

/* Number of logical GDMAs (= DDRs) the scheme defines for a die type and die count. */
int cs_scheme_endpoints(const cs_die_params *die, int num_dies);
/* Where logical endpoint logical_id lives (inline: engines locate every request). */
static inline cs_endpoint cs_scheme_locate(const cs_die_params *die, int logical_id) {
  int per_die = die->rows * die->cols;
  return (cs_endpoint){logical_id / per_die, logical_id % per_die};
}

/* Hops of the XY (or YX) route between two nodes of a die. */
int cs_topo_hops(const cs_die_params *die, int src_node, int dst_node);

/* The D2D link a cross-die request takes: among the links joining the two dies, sorted by their
 * node on the source die, the layout's d2d_select rule picks candidates[ddr_channel % n]
 * (ddr_index) or candidates[(src_node + dst_node) % n] (spread).  Returns the link's index and
 * sets *from_a when the request leaves by the link's die_a end; -1 when no link joins the dies. */
int cs_topo_d2d_link(const cs_layout *lay, int src_die, int src_node, int dst_die, int dst_node,
                     int ddr_channel, bool *from_a);

#endif
