/* The state of the DCIN cycle model: configuration in cycles, queues and lists of flit indices,
 * flits, transactions, rings, cross stations, IP interfaces, dies, D2D links and the engine, with
 * the accessors every layer of the model shares.  Data only: nothing here calls a function.
 *
 * Layout: one dcin_sim owns every die, every D2D link, one flit pool and one transaction table.
 * Flits are uint32 indices into the pool; every queue holds indices (bounded rings, or unbounded
 * intrusive lists threaded through dcin_flit.next).  No allocation happens per flit: the pool and
 * the transaction table grow by doubling, and every bounded queue is carved out of one arena at
 * create time.
 *
 * Lanes and dimensions: lane 0..3 = TR, TL, TD, TU.  In XY routing the first dimension is the
 * horizontal one (TR/TL inject straight from the IQ, the turn goes through the ring bridge onto
 * TD/TU); YX mirrors it.  "Negative" lanes (TL, TU) own the T0 E-Tag entry.
 */
#ifndef CS_DCIN_STATE_H
#define CS_DCIN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "commsweep/dcin.h"
#include "commsweep/engine.h"
#include "commsweep/err.h"
#include "commsweep/model.h"
#include "commsweep/topo.h"

/* Hot-path helpers that must be inlined into their one or two callers (GCC and Clang). */
#define DCIN_INLINE static inline __attribute__((always_inline))
/* An external function of the model inlined into its callers of the same translation unit (the
 * engine's files are compiled as one): every flit the protocol creates passes through them. */
#define DCIN_HOT inline __attribute__((always_inline))
/* Expands the next loop of a small fixed count (IPs, networks, ports) n times, so that its index
 * becomes a constant in each copy (GCC and Clang). */
#define DCIN_PRAGMA(x) _Pragma(#x)
#define DCIN_UNROLL(n) DCIN_PRAGMA(GCC unroll n)

#define DCIN_NIL UINT32_MAX
#define DCIN_NO_CYCLE UINT64_MAX

enum { DCIN_NET_REQ, DCIN_NET_RSP, DCIN_NET_DATA, DCIN_NUM_NETS };
/* dcin_flit.route: the first lane (or IQ_EQ) and, at the node where it reaches the ring bridge,
 * its output (DCIN_RB_*) */
#define DCIN_ROUTE_DIR 7
#define DCIN_ROUTE_RB_SHIFT 3
enum { DCIN_TR, DCIN_TL, DCIN_TD, DCIN_TU, DCIN_NUM_LANES };
/* IQ output directions: the four lanes plus local loop-back */
enum { DCIN_IQ_EQ = 4, DCIN_NUM_IQ_DIRS = 5 };
/* RB outputs */
enum { DCIN_RB_EQ, DCIN_RB_P, DCIN_RB_N, DCIN_NUM_RB_OUT }; /* P/N: second-dimension lanes */
/* EQ arbiter input ports */
enum {
  DCIN_EQP_N,
  DCIN_EQP_P,
  DCIN_EQP_IQ,
  DCIN_EQP_RB,
  DCIN_NUM_EQ_PORTS
}; /* arbiter order TU TD IQ RB */

/* IP slots of a node (every node has the four DMA/DDR channels; D2D nodes add two), in the
 * order of their names: the round-robin arbiters scan IPs in this order, as the reference does. */
enum {
  DCIN_IP_D2D_RN,
  DCIN_IP_D2D_SN,
  DCIN_IP_DDR0,
  DCIN_IP_DDR1,
  DCIN_IP_GDMA0,
  DCIN_IP_GDMA1,
  DCIN_NUM_IPS
};

/* Slice kinds on a ring */
enum { DCIN_SL_LINK, DCIN_SL_CP_IN, DCIN_SL_CP_OUT };

/* Flit kinds */
enum {
  DCIN_K_REQ_RD,
  DCIN_K_REQ_WR,
  DCIN_K_RSP_DBID, /* priority order of RSP injection: DBID, Retry, Comp, Pcredit */
  DCIN_K_RSP_RETRY,
  DCIN_K_RSP_COMP,
  DCIN_K_RSP_PCREDIT,
  DCIN_K_DATA
};
#define DCIN_NUM_RSP_PRIO 4

/* E-Tag levels */
enum { DCIN_T0 = 0, DCIN_T1 = 1, DCIN_T2 = 2, DCIN_T_NONE = 3 };

/* AXI channels */
enum { DCIN_AR, DCIN_R, DCIN_AW, DCIN_W, DCIN_B, DCIN_NUM_AXI };

/* ---- configuration in cycles ------------------------------------------------------------- */

typedef struct dcin_cfg {
  int rows, cols, nodes;
  int s_h, s_v;            /* slices per link, horizontal / vertical */
  int flit_bytes, burst;   /* bytes per flit, default flits per request */
  int net_scale, ip_scale; /* sim cycles per NoC / IP cycle */
  int cycles_per_ns_int;   /* CYCLES_PER_NS for latency conversions (int(ns * f)) */
  double cycles_per_ns;    /* sim cycles per ns */
  int iq_ch, eq_ch, l2h, h2l_h, h2l_l, arb_in; /* depths, flits */
  int iq_out[DCIN_NUM_IQ_DIRS];                /* depths of inject queues TR TL TD TU EQ */
  int rb_in, rb_out, eq_in;                    /* depths */
  int etag_cap[DCIN_NUM_LANES][3];             /* entries per lane and level [T0,T1,T2] */
  bool etag_t1, etag_bothside;
  int itag_th[2], itag_max[2]; /* [0] horizontal, [1] vertical; cycles / tags */
  bool yx;                     /* routing: false XY, true YX */
  /* Validation only (tests set it after create; no file or adapter field reaches it): reproduce
   * quirks of the reference model so contended runs can be compared with it cycle for cycle:
   * E-Tag entries also released when the flit enters the FIFO, a flit wrapping into slice 0
   * moved again in the same cycle, the I-Tag request counter that is never cleared, one set of
   * RB/EQ round-robin pointers per node shared by the three networks, T0 registrations kept on
   * positive-lane ejects, and IP work done only on cycles that are also NoC cycles. */
  bool crossring_compat;
  uint32_t ddr_r_lat, ddr_r_var, ddr_w_lat, l2m_r_lat, l2m_w_lat; /* sim cycles */
  uint32_t sn_release, sn_proc, rn_proc;                          /* sim cycles */
  double dma_rate, dma_cap, ddr_rate, ddr_cap; /* token buckets: flits/cycle, flits */
  int rn_rd_trk, rn_wr_trk, rn_rdb, rn_wdb;    /* per physical gdma channel */
  int sn_ro_trk, sn_share_trk, sn_wdb;         /* per physical ddr channel */
} dcin_cfg;

typedef struct dcin_lcfg {
  uint32_t axi_lat[DCIN_NUM_AXI];              /* sim cycles */
  double axi_rate, axi_cap;                    /* flits per cycle, flits */
  double rn_rate, rn_cap, sn_rate, sn_cap;     /* D2D interface data buckets */
  int rn_rd_trk, rn_wr_trk, rn_rdb, rn_wdb;    /* D2D_RN */
  int sn_ro_trk, sn_share_trk, sn_rdb, sn_wdb; /* D2D_SN */
  int select;                                  /* cs_d2d_select */
} dcin_lcfg;

/* ---- containers ---------------------------------------------------------------------------- */

/* Bounded FIFO of flit indices.  A flit put into it in cycle c becomes visible to the consumer
 * from cycle c + 1 on (the reference's 1-entry "pre" register, committed at the end of the cycle):
 * `put` stamps the cycle of the last put, and the last entry is not yet visible while it equals
 * the current cycle.  Every stage checks for room before the consumer of that queue pops in the
 * same cycle, so "room" is room at the start of the cycle, as with a pre register.
 *
 * Only an eject FIFO (RB and EQ inputs, dcin_q_*_ej) may hold one entry more than its depth:
 * crossring_compat frees E-Tag entries early, a flit may then eject into a full FIFO, and it waits
 * in the pre register until the FIFO has room at the end of a cycle.  That entry is the one beyond
 * the depth; popping below it makes it commit at the end of the popping cycle (put = now). */
typedef struct dcin_q {
  uint32_t *buf; /* mask + 1 entries (cap rounded up to a power of two), from the sim arena */
  uint64_t put;  /* sim cycle of the last put; DCIN_NO_CYCLE before the first */
  uint16_t head, n, cap; /* n counts every entry, the one put this cycle included */
  uint16_t mask;         /* buffer index wrap: a mask, no compare on the hot path */
} dcin_q;

/* Buffer entries of a queue of depth cap: the next power of two. */
static inline unsigned dcin_q_room(unsigned cap) {
  unsigned r = 1;
  while (r < cap) r *= 2;
  return r;
}

/* Unbounded FIFO threaded through dcin_flit.next */
typedef struct dcin_list {
  uint32_t head, tail, n;
} dcin_list;

/* Entries the consumer may take now (cycle now). */
static inline unsigned dcin_q_vis(const dcin_q *q, uint64_t now) { return q->n - (q->put == now); }
static inline unsigned dcin_q_vis_ej(const dcin_q *q, uint64_t now) {
  return q->n - (q->put == now || q->n > q->cap);
}
static inline uint32_t dcin_q_front(const dcin_q *q) { return q->buf[q->head]; }
/* The i-th entry from the head (i < n). */
static inline uint32_t dcin_q_at(const dcin_q *q, unsigned i) {
  return q->buf[(q->head + i) & q->mask];
}
static inline uint32_t dcin_q_pop(dcin_q *q) {
  uint32_t f = q->buf[q->head];
  q->head = (uint16_t)((q->head + 1) & q->mask);
  q->n--;
  return f;
}
/* The pop of an eject FIFO: an entry waiting beyond the depth commits at the end of this cycle. */
static inline uint32_t dcin_q_pop_ej(dcin_q *q, uint64_t now) {
  if (q->n > q->cap) q->put = now;
  return dcin_q_pop(q);
}
static inline void dcin_q_put(dcin_q *q, uint32_t f, uint64_t now) {
  q->buf[(q->head + q->n) & q->mask] = f;
  q->n++;
  q->put = now;
}
/* Nothing put this cycle and the FIFO not full: a flit may be put this cycle. */
static inline bool dcin_q_can_put(const dcin_q *q, uint64_t now) {
  return q->put != now && q->n < q->cap;
}
/* The eject FIFO's pre register is free (its FIFO may be full: E-Tag entries bound it). */
static inline bool dcin_q_pre_free_ej(const dcin_q *q, uint64_t now) {
  return q->put != now && q->n <= q->cap;
}
/* Between cycles: the entries in the FIFO proper, and the one waiting in the pre register (an
 * eject FIFO's beyond its depth) or DCIN_NIL. */
static inline unsigned dcin_q_len(const dcin_q *q) { return q->n > q->cap ? q->cap : q->n; }
static inline uint32_t dcin_q_pre(const dcin_q *q) {
  return q->n > q->cap ? dcin_q_at(q, q->cap) : DCIN_NIL;
}

/* ---- flits and transactions ----------------------------------------------------------------- */

typedef struct dcin_flit {
  uint32_t txn;               /* transaction index */
  uint32_t next;              /* link in a dcin_list */
  uint64_t depart;            /* earliest sim cycle to leave the IP inject FIFO */
  int16_t src_node, dst_node; /* inside the die */
  uint8_t die;                /* die the flit travels on */
  uint8_t src_ip, dst_ip;     /* DCIN_IP_* */
  uint8_t net, kind, flit_id, last;
  uint8_t etag;            /* DCIN_T0..T2 */
  uint8_t used_entry;      /* entry level taken at eject, DCIN_T_NONE if none */
  uint8_t in_t0_table;     /* registered in the node's T0 table */
  uint8_t itag;            /* carries an I-Tag request */
  uint8_t axi;             /* AXI channel while on a D2D link */
  uint8_t lane;            /* lane while on a ring */
  uint8_t route;           /* in its die: DCIN_ROUTE_DIR (first lane) | ring-bridge output << 3 */
  uint8_t old;             /* REQ: re-sent after Pcredit (resources already held) */
  uint16_t slot;           /* ring slot id taken at injection */
  int16_t ecoord;          /* eject key on the current ring (see dcin_ring.ej) */
  uint32_t wait_h, wait_v; /* inject waiting, cycles */
  uint32_t eject_fail;     /* failed eject attempts (circling) */
  uint64_t arrive;         /* D2D link: delivery cycle */
} dcin_flit;

/* Transaction state: only what the protocol and the record need. */
typedef struct dcin_txn {
  uint64_t request_id;
  int32_t src_id, dst_id; /* logical GDMA / DDR ids (-1 for internal injections) */
  uint8_t is_read, cross; /* cross: source and target on different dies */
  uint16_t burst;
  uint8_t src_die, dst_die;
  int16_t src_node, dst_node;
  uint8_t src_ip, dst_ip; /* DCIN_IP_GDMA0/1, DCIN_IP_DDR0/1 */
  int16_t link;           /* D2D connection used (index into the sim's layout.links), -1 local */
  uint8_t link_dir;       /* 0: a->b is the request direction, 1: b->a */
  uint8_t state;          /* DCIN_TS_* */
  uint8_t attr_old;       /* request was retried (holds RN resources) */
  uint8_t gate;           /* 1 waiting for the driver's rsp, 2 rsp received */
  uint8_t gate_kind;      /* what the rsp releases: DCIN_GATE_* */
  uint8_t rn_released, done_req, done_final;
  uint8_t d2d_sn_old;                           /* the D2D_SN retried this request */
  uint16_t data_rx_rn, data_rx_sn, data_rx_d2d; /* data flits received by GDMA / DDR / D2D */
  uint16_t w_rx;                                /* W beats received at the D2D_RN */
  uint64_t gate_base;                           /* cycle the gated action is timed from */
  /* stamps (sim cycles; DCIN_NO_CYCLE when not reached) */
  uint64_t t_inject;     /* driver inject (req) */
  uint64_t t_reserve;    /* RN tracker reservation: transaction start */
  uint64_t t_req_noc;    /* REQ enters the NoC (l2h -> IQ channel buffer) */
  uint64_t t_sn_req;     /* final target received the REQ (first receipt) */
  uint64_t t_req_done;   /* req phase completed */
  uint64_t t_rsp_inject; /* driver rsp inject */
  uint64_t t_dbid_rn;    /* RN received DBID */
  uint64_t t_data_noc;   /* first data flit entered the NoC (last leg) */
  uint64_t t_wdata_gen;  /* write data created at the RN */
  uint64_t t_data_done;  /* last data flit received (RN for reads, SN for writes) */
  uint64_t t_wdata_d2d;  /* cross-die write: the local D2D_SN holds the whole burst */
  uint64_t t_final;      /* final completion */
  uint64_t t_cmd_end;    /* end of the cmd latency: SN receipt (R) / DBID at RN (W) */
  /* counters */
  uint32_t retries;
  uint32_t rn_rd_block, rn_wr_block, rn_rdb_block, rn_wdb_block;
  uint32_t sn_ro_block, sn_share_block, sn_wdb_block;
  uint32_t d2d_ro_block, d2d_share_block, d2d_wdb_block;
  uint32_t eject_fail;
  uint32_t next_wait;  /* link in a tracker wait list (or the free list once recycled) */
  uint16_t live;       /* flits that reference this transaction */
  uint8_t described;   /* the driver took its record: the slot may be recycled */
  uint8_t in_release;  /* queued for a delayed SN share-tracker release */
  uint64_t release_at; /* SN share tracker release cycle */
  int16_t wait_node;   /* requester of the SN currently serving / refusing the txn */
  uint8_t wait_ip;
  uint8_t aw_ok;       /* D2D_RN accepted the AW (write tracker held) */
  uint8_t addr_waited; /* its AR/AW already counted a wait for a D2D_RN tracker */
  uint32_t step_idx;   /* index in the step being recorded for reuse (reuse.c), else DCIN_NIL */
} dcin_txn;

enum {
  DCIN_TS_QUEUED,  /* in the RN inject FIFO */
  DCIN_TS_REQ,     /* request travelling / being served */
  DCIN_TS_RETRIED, /* refused, waiting for Pcredit */
  DCIN_TS_DONE
};
enum { DCIN_GATE_NONE, DCIN_GATE_SN_READ, DCIN_GATE_SN_DBID, DCIN_GATE_D2D_DBID };

/* ---- dies ----------------------------------------------------------------------------------- */

/* A flit (or a transaction) at an IP of a node: one item of the lists a die step fills for the
 * protocol. */
typedef struct dcin_arrival {
  int16_t node;
  uint8_t ip;
  uint32_t f;
} dcin_arrival;

/* A ring in a rotating frame: slot[] is indexed by frame index; the slice at position
 * p holds frame index (p - off) mod len, so advancing every flit one slice is off += 1.  Only the
 * few flits that must not move (a stalled train at the wrap) are shifted in the frame.
 *
 * Eject buckets: a flit at frame index i reaches position P when off == (P - i) mod len, so the
 * off value at which it next stands on a CP_IN whose ej equals its ecoord is fixed while it rides
 * (its "key"; a frame shift adds one).  Every occupied frame index is chained (dnext) into the
 * bucket dhead[key]; a cycle eject-checks only bucket[off] instead of every CP_IN.
 *
 *   ndist[eidx[e] * len + p]: slices from position p to the first CP_IN at or after it (cyclic)
 *   whose ej is e, DCIN_NO_KEY if none; eidx maps an ecoord to its row (ne rows, -1 if absent). */
#define DCIN_NO_KEY UINT16_MAX
/* A CP_IN slice as an exit: the eject FIFO a flit leaving there enters (its offset in dcin_node,
 * its occ bit and E-Tag row) and the T2 entries of that FIFO for the lane. */
typedef struct dcin_ejsite {
  uint16_t qoff;
  uint8_t bit, fifo, lane;
  int16_t node, t2cap;
} dcin_ejsite;
typedef struct dcin_ring {
  uint32_t *slot; /* len entries by frame index: flit or DCIN_NIL */
  uint8_t *kind;  /* DCIN_SL_* per index */
  uint8_t *lane;  /* lane per index */
  int16_t *node;  /* node per index */
  int16_t *ej;    /* CP_IN: coordinate a flit's ecoord must equal to leave here; else -1 */
  dcin_ejsite *ejs; /* CP_IN: where a flit leaving here goes (by position) */
  uint8_t dim;    /* routing dimension of the ring's lanes: 0 first, 1 second */
  uint16_t len;
  uint16_t off;        /* rotation of the frame (position = frame index + off, mod len) */
  uint16_t *cp_in_pos; /* positions of the ring's CP_IN slices, descending (geometry only) */
  uint16_t n_cp_in;
  uint32_t count; /* flits on the ring */
  /* eject buckets (per network) */
  dcin_flit *const *flits; /* &sim->flits (the pool moves when it grows) */
  uint16_t *dkey;          /* by frame index: key of the flit there, DCIN_NO_KEY none */
  uint16_t *dnext;         /* by frame index: next frame index in its bucket, DCIN_NO_KEY last */
  uint16_t *dhead;         /* by off value: first frame index of the bucket, DCIN_NO_KEY empty */
  /* eject geometry (shared by the networks) */
  uint16_t *ndist; /* [ne][len] (see above) */
  int16_t *eidx;   /* [ecoord], necoord entries */
  int necoord;
  int16_t *itag; /* by slot id: I-Tag reserver (node * 4 + lane) or -1 (in die itag_slot) */
} dcin_ring;

/* The CP_OUT slice of a (node, lane) on one network: its ring and frame position, and per target
 * node the slices from there to the CP_IN where a flit for it leaves the ring (DCIN_NO_KEY: none
 * on this ring), i.e. its eject bucket relative to the ring's off (dcin_ring_key). */
typedef struct dcin_cp_site {
  dcin_ring *g;
  int idx;
  const uint16_t *key; /* [target node] */
} dcin_cp_site;

/* Bits of dcin_node.occ, one per queue of the station: set while the queue holds a flit (the one
 * put this cycle included).  The stages visit only the queues whose bits are set. */
enum {
  DCIN_B_IQCH = 0,   /* + ip: iq_ch[ip] */
  DCIN_B_IQARB = 8,  /* + ip: iq_arb[ip] */
  DCIN_B_IQOUT = 16, /* + direction: iq_out[dir] */
  DCIN_B_RBIN = 24,  /* + 0/1: rb_in[pos/neg] */
  DCIN_B_RBOUT = 26, /* + DCIN_RB_*: rb_out[o] */
  DCIN_B_EQIN = 32,  /* + 0/1: eq_in[pos/neg] */
  DCIN_B_EQARB = 36, /* + port: eq_arb[port] */
  DCIN_B_EQCH = 40,  /* + ip: eq_ch[ip] */
  /* the node's IP interfaces on this network, whose NoC-clock stages the station pass runs */
  DCIN_B_L2H = 48,  /* + ip: dcin_ip.l2h[net] */
  DCIN_B_H2LH = 56  /* + ip: dcin_ip.h2l_h[net] */
};
#define DCIN_BIT(b) (1ull << (b))
#define DCIN_M_IQ (0x3full << DCIN_B_IQCH | 0x3full << DCIN_B_IQARB)
#define DCIN_M_OUT (0x3full << DCIN_B_EQCH | 0x3full << DCIN_B_H2LH)

/* Per (die, network, node) queues of the node's cross station. */
typedef struct dcin_node {
  uint64_t occ; /* DCIN_B_* bits of the queues holding flits */
  dcin_q iq_ch[DCIN_NUM_IPS], iq_arb[DCIN_NUM_IPS]; /* inject channel buffer, arbiter input */
  dcin_q iq_out[DCIN_NUM_IQ_DIRS];                  /* inject queues TR TL TD TU EQ */
  dcin_q rb_in[2];                                  /* first-dimension lanes [pos, neg] */
  dcin_q rb_out[DCIN_NUM_RB_OUT];                   /* EQ, second-dim pos, neg */
  dcin_q eq_in[2];                                  /* second-dimension lanes [pos, neg] */
  dcin_q eq_arb[DCIN_NUM_EQ_PORTS];
  dcin_q eq_ch[DCIN_NUM_IPS];
  uint8_t iq_rr[DCIN_NUM_IQ_DIRS]; /* round-robin pointers (IP index) per output */
  uint8_t rb_rr[DCIN_NUM_RB_OUT];  /* per output, over the 4 inputs */
  uint8_t eq_rr[DCIN_NUM_IPS];     /* per IP output, over the 4 ports */
  /* E-Tag */
  int16_t ue[4][3]; /* entries in use: [rb_in pos, rb_in neg, eq_in pos, eq_in neg][level] */
  uint32_t t0_ptr[2];            /* T0 round-robin pointer (slot order) [first dim, second dim] */
  /* I-Tag */
  uint8_t itag_out[4]; /* tags outstanding per inject lane */
  uint8_t itag_req[4]; /* crossring_compat: heads that reached the trigger, never cleared */
} dcin_node;

/* Per (die, node, ip) interface state, and RN/SN resources. */
typedef struct dcin_ip {
  dcin_list inj[DCIN_NUM_NETS];       /* unbounded inject FIFOs (req, data) */
  dcin_list rsp_q[DCIN_NUM_RSP_PRIO]; /* RSP inject queues by priority */
  dcin_q l2h[DCIN_NUM_NETS];
  dcin_q h2l_h[DCIN_NUM_NETS], h2l_l[DCIN_NUM_NETS];
  /* RN */
  int rd_trk, wr_trk, rdb, wdb; /* free resources */
  /* SN */
  int ro_trk, share_trk, sn_wdb, sn_rdb;
  dcin_list rd_wait, wr_wait; /* txn indices (next_wait) refused, waiting for Pcredit */
  /* token buckets (data only) */
  double tx_tok, rx_tok;
  uint64_t tx_last, rx_last;
  double rate, cap;
  uint32_t busy;  /* items queued here: inject lists, l2h, h2l_h and h2l_l */
  uint16_t h2l_n; /* flits in h2l_h / h2l_l (pre registers included) */
  uint16_t rx_n;  /* flits in h2l_l, which the IP takes at its clock */
} dcin_ip;

typedef struct dcin_die {
  int id;
  dcin_cfg *cfg;
  dcin_ring *rings[DCIN_NUM_NETS]; /* rows horizontal, then cols vertical */
  int nrings;
  dcin_node *nodes[DCIN_NUM_NETS]; /* nodes entries per network */
  dcin_ip *ips;                    /* nodes * DCIN_NUM_IPS */
  /* ring geometry: index of CP_IN / CP_OUT per (node, lane) */
  uint16_t *cp_in, *cp_out;      /* [node * 4 + lane] */
  int16_t *ring_of;              /* [node * 4 + lane] ring index */
  dcin_cp_site *cp_site[DCIN_NUM_NETS]; /* [node * 4 + lane] CP_OUT (CP injection) */
  uint16_t *cp_key;              /* [(node * 4 + lane) * nodes + target]: dcin_cp_site.key */
  int16_t *ekey;                 /* [node * 2 + dim] dcin_eject_key */
  int16_t *scoord;               /* [node] second-dimension coordinate (row in XY, column in YX) */
  size_t cp_src[DCIN_NUM_LANES]; /* offset in dcin_node of the queue each lane injects from */
  /* T0 tables: per network, per node, per dim: bitset over ring slots */
  uint64_t *t0_bits; /* [net][node][dim][words] */
  uint8_t *t0_read;  /* [net][node][dim]: the T0 pointer was consulted (step reuse), or NULL */
  int t0_words;
  /* I-Tag reservations: per network per ring per slot: reserver (node*4+lane) or -1 */
  int16_t *itag_slot; /* [net][ring][slot] */
  int itag_stride;
  /* IP work sets, one bit per (node, ip) at node * DCIN_IP_BITS + ip (ascending bits visit the
   * IPs in node order, then IP order, as the nested loops did), ipwords words each: */
  uint64_t *ip_inj; /* the IP holds items on its inject side (busy > h2l_n) and is not parked
                     * (dcin_ip_parkable) */
  uint64_t *ip_ej;  /* the IP has flits to take in its h2l_l (rx_n > 0) */
  int ipwords;
  uint32_t nact[DCIN_NUM_NETS];   /* per network: nodes with a non-zero occ (skip idle networks) */
  uint64_t *busym[DCIN_NUM_NETS]; /* per network: bitset of the nodes with a non-zero occ */
  uint64_t m_rb, m_eq, m_cp;      /* occ bits of the ring bridge's, EQ's and CP injection's inputs */
  uint8_t cp_bit[DCIN_NUM_LANES]; /* occ bit of the queue each lane injects from (cp_src) */
  uint8_t lane_p, lane_n;         /* the second-dimension lanes (the ring bridge's outputs) */
  bool slow;                      /* crossring_compat or a trace: ejects take the general path */
  uint8_t eq_fifo_p, eq_fifo_n;   /* their eject FIFOs' E-Tag rows (dcin_etag_fifo) */
  uint8_t *route;                 /* [src * nodes + dst] dcin_flit.route */
  int mwords;
  /* E-Tag entries whose flit left their FIFO, each an entry of some dcin_node.ue: those of the
   * current die step in rel[relgen & 1], of the step before in the other (returned at the end of
   * this step, dcin_commit) */
  int16_t **rel[2];
  uint32_t nrel[2], cap_rel;
  uint64_t relgen; /* die steps committed */
  dcin_list sn_release; /* txns with a pending share-tracker release */
  /* what the transport hands the protocol during a step (model/protocol/arrive.c): the flits
   * the IPs took, in IP order, and the read bursts whose last flit left (f: its transaction) */
  dcin_arrival *arr, *txdone;
  uint32_t narr, ntxdone;
} dcin_die;

/* ---- D2D --------------------------------------------------------------------------------------
 */

/* One direction of one connection: the five AXI channels as delay lines. */
typedef struct dcin_axi {
  int src_die, src_node, dst_die, dst_node;
  dcin_list chan[DCIN_NUM_AXI]; /* flits in flight, in order; arrive stamp each */
  dcin_list
      pend[DCIN_NUM_AXI];     /* waiting to enter (AR/AW/W from the D2D_SN, R/B from the D2D_RN) */
  dcin_list rx[DCIN_NUM_AXI]; /* delivered, waiting for the peer interface */
  double tok[DCIN_NUM_AXI];
  uint64_t last[DCIN_NUM_AXI];
  uint32_t busy;
} dcin_axi;

/* ---- the engine ------------------------------------------------------------------------------ */

typedef struct dcin_stats {
  uint64_t flit_hops, flits_injected, flits_ejected;
  uint64_t skipped_cycles;
  uint64_t retries_rd, retries_wr;
  uint64_t itag_h, itag_v, etag_t1, etag_t0;
  uint64_t full_ring_cycles; /* ring-cycles in which a completely full ring rotated as a whole */
  /* Counted only in builds with DCIN_COUNT_MOVES (scripts/bench_dcin compare --instructions),
   * zero otherwise: the entries of flits into lists (inject FIFOs, RSP queues, D2D link
   * channels), onto rings (CP injection), into eject FIFOs and into ring-bridge outputs.  With
   * flits_injected and flits_ejected they give every flit movement (docs/dcin-model.md). */
  uint64_t moved_list, moved_ring, moved_eject, moved_rb;
} dcin_stats;
#ifdef DCIN_COUNT_MOVES
#define DCIN_COUNT(s, field) ((s)->st.field++)
#else
#define DCIN_COUNT(s, field) ((void)(s))
#endif

typedef struct dcin_reuse dcin_reuse; /* reuse.c */

/* A token bucket as its future sees it: full when the level reaches the size by now (the next
 * refill caps it whatever its stamp), else its exact level and stamp matter (reuse.c, fullstate.c). */
static inline bool dcin_bucket_full(double tok, uint64_t last, double rate, double cap,
                                    uint64_t now) {
  return rate <= 0 || tok >= cap || (now > last && tok + (double)(now - last) * rate >= cap);
}

/* A growable byte string (fullstate.c); failed: out of memory, the contents are not usable. */
typedef struct dcin_bytes {
  uint8_t *p;
  size_t len, cap;
  bool failed;
} dcin_bytes;

typedef struct dcin_sim {
  cs_die_params die_params;
  cs_layout layout;
  dcin_cfg cfg;
  dcin_lcfg lcfg;
  int ndies;
  dcin_die dies[CS_TOPO_MAX_DIES];
  int nlinks; /* connections */
  cs_d2d_link links[CS_TOPO_MAX_LINKS];
  uint8_t linked_dies[CS_TOPO_MAX_DIES]; /* bit b of [a]: a link joins die a and die b */
  _Static_assert(CS_TOPO_MAX_DIES <= 8, "linked_dies holds a die's links in one byte");
  dcin_axi *axi; /* 2 per connection: [2*i] a->b, [2*i+1] b->a */
  /* per die, in index order: the links leaving it and the links arriving at it */
  uint8_t axi_from[CS_TOPO_MAX_DIES][2 * CS_TOPO_MAX_LINKS], n_axi_from[CS_TOPO_MAX_DIES];
  uint8_t axi_to[CS_TOPO_MAX_DIES][2 * CS_TOPO_MAX_LINKS], n_axi_to[CS_TOPO_MAX_DIES];
  _Static_assert(2 * CS_TOPO_MAX_LINKS <= 255, "link indices fit a byte");
  /* pools */
  dcin_flit *flits;
  uint32_t nflits, cap_flits, free_flit;
  dcin_txn *txns;
  uint32_t ntxns, cap_txns;
  uint32_t free_txn; /* recycled transaction slots (linked by next_wait) */
  bool ids_taken;        /* some request was injected (or collected for step reuse) */
  uint64_t max_id_taken; /* the highest such request id */
  /* request_id -> txn index (open addressing) */
  uint64_t *map_keys;
  uint32_t *map_vals;
  uint32_t map_cap;
  uint32_t *arena; /* backing store of every dcin_q */
  size_t arena_used, arena_cap;
  /* logical GDMA per-endpoint transaction counters (channel alternation) */
  uint64_t *gdma_count;
  int num_endpoints;
  /* time */
  uint64_t cyc;                /* next sim cycle to simulate */
  uint64_t cycles_stepped;     /* cycles simulated here, not skipped or replayed (bench figures) */
  uint64_t tick_num, tick_den; /* tick = floor(cyc * num / den) */
  /* completions */
  cs_completion *comp;
  size_t comp_head, comp_n, comp_cap;
  uint32_t active_txns; /* injected and not final */
  uint64_t rng;         /* xorshift state for DDR latency variance */
  dcin_stats st;
  bool check_each_cycle; /* tests: run the invariant checker every cycle */
  /* Validation: called at every stage a flit reaches (NULL in production).  what is one of
   * "CP_IN", "CP_OUT", "RB", "EQ", "EQ_CH", "IP_RX"; lane is -1 where it does not apply. */
  void (*trace)(void *ctx, uint64_t cyc, const dcin_flit *fl, const char *what, int node, int lane);
  void *trace_ctx;
  char fault[256]; /* first internal fault seen inside a cycle */
  dcin_reuse *reuse; /* exact step reuse (reuse.c), made on first use */
  bool reuse_off;    /* simulate every step (tests compare both ways) */
} dcin_sim;

/* A request at its physical place, as op_inject resolves it from the logical ids (not yet
 * checked: the fields are as wide as the driver's values). */
typedef struct dcin_place {
  int src_die, src_node, src_ip; /* src_ip: DCIN_IP_GDMA0/1 */
  int dst_die, dst_node, dst_ip; /* dst_ip: DCIN_IP_DDR0/1 */
  bool is_read;
  int burst; /* flits */
} dcin_place;

/* Routing dimension of a lane: 0 first (TR/TL in XY), 1 second. */
static inline int dcin_lane_dim(const dcin_cfg *c, int lane) {
  int horiz = lane == DCIN_TR || lane == DCIN_TL;
  return horiz == (int)c->yx; /* XY: horizontal first; YX: vertical first */
}
/* ue[] index of the lane's eject FIFO: 0/1 ring-bridge input of the positive/negative
 * first-dimension lane, 2/3 the EQ input of the positive/negative second-dimension lane. */
static inline int dcin_etag_fifo(const dcin_cfg *c, int lane) {
  return dcin_lane_dim(c, lane) * 2 + (lane == DCIN_TL || lane == DCIN_TU);
}

/* Round robin over the set bits of a non-zero mask: the first at or after rr, else the lowest
 * (the same as scanning rr, rr + 1, ... modulo the number of inputs, for rr below it). */
static inline int dcin_rr_pick(unsigned mask, unsigned rr) {
  unsigned hi = mask >> rr << rr;
  return __builtin_ctz(hi ? hi : mask);
}

/* E-Tag (etag.c's entry pools), inline at its callers: an entry of level `level` of eject FIFO
 * `fifo` is returned one cycle after this one ends (none for DCIN_T_NONE). */
static inline void dcin_etag_release(dcin_die *d, dcin_node *nd, int fifo, int level) {
  if (level < DCIN_T_NONE) {
    int k = (int)(d->relgen & 1);
    d->rel[k][d->nrel[k]++] = &nd->ue[fifo][level];
  }
}
/* Between die steps: the entries of node nd returned at the end of the next step (the reference's
 * rel_now), and those returned at the end of the one after (rel_pending: always none between
 * steps), per FIFO and level. */
static inline void dcin_etag_pending(const dcin_die *d, const dcin_node *nd, uint8_t now[4][3],
                                     uint8_t pending[4][3]) {
  memset(now, 0, 12);
  memset(pending, 0, 12);
  for (int k = 0; k < 2; k++) {
    uint8_t *to = k == (int)((d->relgen + 1) & 1) ? &now[0][0] : &pending[0][0];
    for (uint32_t i = 0; i < d->nrel[k]; i++) {
      ptrdiff_t e = d->rel[k][i] - &nd->ue[0][0];
      if (e >= 0 && e < 12) to[e]++;
    }
  }
}

#define DCIN_TRACE(s, f, what, node, lane)                                                  \
  do {                                                                                      \
    if ((s)->trace) (s)->trace((s)->trace_ctx, (s)->cyc, &(s)->flits[f], what, node, lane); \
  } while (0)

static inline dcin_ip *dcin_ipp(dcin_die *d, int node, int ip) {
  return &d->ips[node * DCIN_NUM_IPS + ip];
}
/* Flit f enters queue q (occ bit b) of node (net, node) from outside the station. */
static inline void dcin_node_put(dcin_die *d, int net, int node, dcin_node *nd, dcin_q *q, int b,
                                 uint32_t f, uint64_t now) {
  dcin_q_put(q, f, now);
  if (!nd->occ) {
    d->busym[net][node >> 6] |= 1ull << (node & 63);
    d->nact[net]++;
  }
  nd->occ |= DCIN_BIT(b);
}
/* The head of queue q (occ bit b) leaves the station. */
static inline uint32_t dcin_node_take(dcin_die *d, int net, int node, dcin_node *nd, dcin_q *q,
                                      int b) {
  uint32_t f = dcin_q_pop(q);
  if (!q->n && !(nd->occ &= ~DCIN_BIT(b))) {
    d->busym[net][node >> 6] &= ~(1ull << (node & 63));
    d->nact[net]--;
  }
  return f;
}
/* Flits held by the station's queues (dcin_check, fullstate). */
static inline uint32_t dcin_node_held(const dcin_node *nd) {
  const dcin_q *q = &nd->iq_ch[0], *end = &nd->eq_ch[DCIN_NUM_IPS];
  uint32_t n = 0;
  for (; q < end; q++) n += q->n;
  return n;
}
/* Bits per node in the IP work sets: a power of two, so a bit's node and IP are a shift and a
 * mask. */
#define DCIN_IP_BITS 8
_Static_assert(DCIN_NUM_IPS <= DCIN_IP_BITS, "every IP of a node has a bit in the work sets");
static inline void dcin_ipset_add(uint64_t *set, int node, int ip) {
  unsigned b = (unsigned)(node * DCIN_IP_BITS + ip);
  set[b >> 6] |= 1ull << (b & 63);
}
static inline void dcin_ipset_del(uint64_t *set, int node, int ip) {
  unsigned b = (unsigned)(node * DCIN_IP_BITS + ip);
  set[b >> 6] &= ~(1ull << (b & 63));
}
/* An item entered / left the inject side of IP ipi of node (its inject lists and l2h); busy
 * counts both sides, so the inject side is empty exactly when busy == h2l_n.  An entering item
 * also ends a park. */
static inline void dcin_ip_inj_add(dcin_die *d, int node, int ipi, dcin_ip *ip) {
  ip->busy++;
  dcin_ipset_add(d->ip_inj, node, ipi);
}
static inline void dcin_ip_inj_del(dcin_die *d, int node, int ipi, dcin_ip *ip) {
  if (--ip->busy == ip->h2l_n) dcin_ipset_del(d->ip_inj, node, ipi);
}
/* An IP whose head REQ was just refused its tracker or buffer, with nothing else on its inject
 * side, is parked: left out of the inject work set until a release (dcin_ip_unpark) or an
 * enqueue.  Retrying the reservation before then would fail the same way and set no new flag. */
static inline bool dcin_ip_parkable(const dcin_ip *ip) {
  return ip->busy - ip->h2l_n == ip->inj[DCIN_NET_REQ].n; /* no item but the REQs waiting */
}
static inline void dcin_ip_unpark(dcin_die *d, int node, int ipi, const dcin_ip *ip) {
  if (ip->busy > ip->h2l_n) dcin_ipset_add(d->ip_inj, node, ipi);
}
static inline bool dcin_ip_is_d2d(int ip) { return ip == DCIN_IP_D2D_RN || ip == DCIN_IP_D2D_SN; }
/* Requesters (send REQ, receive RSP) as opposed to targets (receive REQ, send RSP). */
static inline bool dcin_ip_is_rn(int ip) {
  return ip == DCIN_IP_D2D_RN || ip == DCIN_IP_GDMA0 || ip == DCIN_IP_GDMA1;
}

#endif
