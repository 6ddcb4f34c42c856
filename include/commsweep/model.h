/* The data model every module shares: the CommPrimitiveSpec (seed tbl-cr-08), the adapter
 * configuration (tbl-cr-07), engine options, inject records (the input translation contract),
 * transaction records (the output translation contract) and the EngineResult (tbl-cr-09).
 *
 * All structs are plain values with fixed-size members: a job can be copied, hashed, sent over
 * MPI and written to HDF5 without owning any heap memory.
 */
#ifndef COMMSWEEP_MODEL_H
#define COMMSWEEP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The adapter specification version this implementation follows; part of every cache key so a
 * change of semantics invalidates old results. */
#define CS_ADAPTER_VERSION "1.0.0"

#define CS_MAX_PARTICIPANTS 512
#define CS_NAME_MAX 32
#define CS_PATH_MAX 256
#define CS_CHIP_SPEC_MAX 1024 /* canonical JSON of chip_spec_summary, NUL included */

/* ---- CommPrimitiveSpec (tbl-cr-08) --------------------------------------------------------- */

typedef enum cs_primitive {
  CS_PRIM_ALLREDUCE,
  CS_PRIM_ALLGATHER,
  CS_PRIM_REDUCESCATTER,
  CS_PRIM_ALLTOALL,
  CS_PRIM_P2P,
  CS_PRIM_COUNT
} cs_primitive;

typedef enum cs_algorithm {
  CS_ALGO_RING,     /* allreduce, allgather, reducescatter */
  CS_ALGO_PAIRWISE, /* alltoall */
  CS_ALGO_DIRECT,   /* p2p */
  CS_ALGO_COUNT
} cs_algorithm;

typedef enum cs_p2p_op { CS_P2P_NONE, CS_P2P_READ, CS_P2P_WRITE } cs_p2p_op;

typedef struct cs_spec {
  cs_primitive primitive;
  cs_algorithm algorithm;
  uint64_t msg_size_bytes;                    /* M, > 0 */
  int num_participants;                       /* N */
  int32_t participants[CS_MAX_PARTICIPANTS];  /* logical GDMA ids, as given (C5: distinct) */
  char dtype[16];                             /* metadata only: "fp32", "bf16", ... */
  cs_p2p_op p2p_op;                           /* p2p only: read or write; NONE otherwise */
  char chip_spec_summary[CS_CHIP_SPEC_MAX];   /* canonical JSON (sorted keys) of the dict */
} cs_spec;

/* ---- adapter configuration (tbl-cr-07): every field required, no defaults ------------------ */

typedef struct cs_adapter_config {
  char mode[16];                          /* C1: "dcin" */
  char topology[CS_NAME_MAX];             /* die topology file name, e.g. "5x4", "2261_5x4" */
  int num_dies;                           /* C2: must equal the layout's die count */
  char dcin_layout[CS_NAME_MAX];          /* multi-die layout file name, e.g. "2die" */
  char endpoint_id_scheme[CS_NAME_MAX];   /* C3: "mvp" */
  int num_initiators;                     /* logical GDMA count; C3: equals the scheme's */
  int num_targets;                        /* logical DDR count; C3: equals the scheme's */
  double driver_cycle_frequency_ghz;      /* external tick rate (C7) */
  double ip_frequency_ghz;                /* IP clock domain (C7) */
  double noc_frequency_ghz;               /* NoC clock domain (C7) */
  int mst_rd_outstanding;                 /* logical GDMA read trackers; C4: even */
  int mst_wr_outstanding;                 /* logical GDMA write trackers; C4: even */
  int slv_rd_outstanding;                 /* physical DDR read trackers */
  int slv_wr_outstanding;                 /* physical DDR write trackers */
  int burst_length;                       /* flits per transaction */
  int bw_bytes;                           /* bytes per flit */
  bool enable_transaction_log;            /* C8: true */
  char transaction_log_path[CS_PATH_MAX]; /* JSON-lines path; "{key}" expands to the cache key */
} cs_adapter_config;

/* ---- engine selection and engine parameters ----------------------------------------------- */

/* An engine's own options live in `params`, laid out by the engine's options struct and
 * described by its option table (engine.h): the job stays a plain value of fixed size. */
#define CS_ENGINE_PARAMS_MAX 1024

typedef struct cs_engine_options {
  char name[16];                 /* a registered engine: cs_engine_names() */
  uint64_t deadlock_guard_ticks; /* consecutive driver ticks without a completion => error */
  bool has_options;              /* false: the engine's documented defaults apply */
  union {
    double align_;
    uint64_t align64_;
    unsigned char bytes[CS_ENGINE_PARAMS_MAX];
  } params; /* read only by the engine named `name` */
} cs_engine_options;

/* One unit of work: what to run and on what. */
typedef struct cs_job {
  cs_spec spec;
  cs_adapter_config adapter;
  cs_engine_options engine;
} cs_job;

/* ---- input translation contract: inject records --------------------------------------------- */

typedef enum cs_packet_type { CS_PKT_REQ, CS_PKT_RSP, CS_PKT_DATA } cs_packet_type;

typedef struct cs_inject {
  uint64_t request_id;   /* unique within the job */
  int32_t src_id;        /* req: logical GDMA id; rsp: logical DDR id */
  int32_t dst_id;        /* req: logical DDR id; rsp: logical GDMA id */
  uint8_t is_read;       /* 1 read, 0 write */
  uint8_t packet_type;   /* cs_packet_type; C9 forbids DATA */
  uint16_t burst_length; /* flits carried by this transaction */
} cs_inject;

/* ---- output translation contract: one record per transaction ------------------------------ */

typedef struct cs_txn_record {
  uint64_t request_id;
  uint32_t step;          /* algorithm step the transaction belongs to */
  int32_t src;            /* logical GDMA id (requester) */
  int32_t dst;            /* logical DDR id (target) */
  /* category 3: physical metadata */
  int16_t src_die, dst_die;
  int16_t src_node, dst_node;    /* node id inside the die, row * cols + col */
  int16_t src_channel, dst_channel; /* physical gdma_k / ddr_k channel index */
  int16_t d2d_src_node, d2d_dst_node; /* D2D link end nodes; -1 for a die-local transaction */
  uint8_t is_read;
  uint8_t reserved_;
  uint16_t burst_length;  /* flits */
  /* category 1: driver ticks */
  uint64_t req_inject_tick, req_complete_tick;
  uint64_t rsp_inject_tick, rsp_complete_tick;
  /* category 2: back-pressure (events; see docs/dcin-model.md for each counter) */
  uint32_t retry_count;
  uint32_t rn_rd_block, rn_wr_block, rn_rdb_block, rn_wdb_block;
  uint32_t sn_ro_block, sn_share_block, sn_wdb_block;
  uint32_t d2d_ro_block, d2d_share_block, d2d_wdb_block;
  uint32_t eject_retries; /* failed eject attempts (ring circling) of this transaction's flits */
  /* category 4: internal cycles (NoC cycles since the engine was created) */
  uint64_t req_inject_cycle, wdata_gen_cycle, req_complete_cycle;
  uint64_t rsp_inject_cycle, wdata_complete_cycle, rsp_complete_cycle;
} cs_txn_record;

/* ---- EngineResult (tbl-cr-09) plus engine identity and trace_meta summaries ----------------- */

typedef struct cs_result {
  double total_time_us;       /* max rsp_complete_tick / f_driver */
  double req_phase_us;        /* sum over transactions of req_complete - req_inject */
  double rsp_phase_us;        /* sum over transactions of rsp_complete - rsp_inject */
  double max_chip_latency_us; /* max over participants of their last rsp_complete */
  double straggler_ratio;     /* max_i T_i / median_i T_i */
  double bus_bw_gb_per_s;     /* total_comm_bytes / total_time */
  uint64_t total_comm_bytes;  /* tbl-cr-06, per participant (bus-bandwidth convention) */
  uint32_t algorithm_steps;   /* T_steps */
  char engine[16];            /* "math", "dcin" */
  uint64_t sim_cycles;        /* internal cycles simulated (0 for closed-form engines) */
  uint64_t total_ticks;       /* driver ticks at the end of the job */
  double wall_time_s;         /* host time spent in L1+L2+L3 (not deterministic) */
  /* trace_meta summaries */
  uint64_t num_transactions;
  uint64_t retries;
  uint64_t block_rn, block_sn, block_d2d; /* sums of the block counters by side */
  uint64_t cross_die_transactions;
  uint64_t cross_die_bytes;
  uint64_t flit_hops;                     /* flit movements between ring slices / links */
} cs_result;

/* Names used in files and messages; NULL for an out-of-range value. */
const char *cs_primitive_name(cs_primitive p);
const char *cs_algorithm_name(cs_algorithm a);
const char *cs_p2p_op_name(cs_p2p_op op);
/* Parse a name; returns 0 or CS_EINVAL (no message: the caller knows the field). */
int cs_primitive_parse(const char *name, cs_primitive *out);
int cs_algorithm_parse(const char *name, cs_algorithm *out);

/* The participants in the order L1 expansion uses them, which is also the order the cache key
 * hashes: ascending ids for every collective (the ring and pairwise schedules are defined on the
 * sorted list, so two specs listing the same set are the same job), as given for p2p
 * ([source, destination]).  Writes num_participants ids into out. */
void cs_spec_participant_order(const cs_spec *spec, int32_t *out);

#endif
