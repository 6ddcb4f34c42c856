/* Internals of the math engine shared by its files: the chip as the model sees it (mchip.c),
 * a step's flow-channels and their terms (flows.c), the fluid max-min solver (fluid.c) and the
 * options (params.c).  docs/math-engine.md derives every term. */
#ifndef COMMSWEEP_MATH_INT_H
#define COMMSWEEP_MATH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "commsweep/err.h"
#include "commsweep/math_engine.h"
#include "commsweep/topo.h"

/* Makes room for `need` elements of *p; the new ones are left unset.  False: out of memory,
 * *p unchanged. */
static inline bool math_grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q) return false;
  *p = q;
  *cap = n;
  return true;
}

/* ---- pending completions (events.c) ------------------------------------------------------- */

/* A pending completion: its tick, then request id << 8 | phase. */
typedef struct mevent {
  uint64_t tick;
  uint64_t id_phase;
} mevent;

/* Pending completions, taken out in (tick, insertion) order: a radix queue.  Every queued tick
 * is >= `last` (the tick last brought to the front, or the engine's clock when the queue ran
 * empty: the clock never goes back), and an event waits in bucket b = the bit length of
 * (tick XOR last): bucket 0 holds the ticks equal to last, in insertion order.  When bucket 0
 * runs dry, the lowest non-empty bucket holds the smallest tick; `last` moves up to it and that
 * bucket's events move, in order, to lower buckets.  Equal ticks always share a bucket and keep
 * their insertion order, so the order is exactly that of a (tick, sequence number) heap, while
 * an event is moved at most 64 times (a few, in practice) instead of sifted through log n
 * unpredictable comparisons per push and per pop. */
#define MQUEUE_BUCKETS 65
typedef struct mqueue_bucket {
  mevent *ev;
  size_t n, cap;
} mqueue_bucket;

typedef struct mqueue {
  uint64_t last;
  size_t count;
  size_t head; /* next mevent of bucket 0 */
  mqueue_bucket bucket[MQUEUE_BUCKETS];
} mqueue;

/* Queues the completion of request id in phase `phase` at `tick`; `floor` (<= tick, the engine's
 * clock) becomes `last` when the queue is empty.  CS_ENOMEM. */
int mqueue_push(mqueue *q, uint64_t floor, uint64_t tick, uint64_t id, uint8_t phase);
/* The smallest queued tick (the queue is not empty) into *tick, filling bucket 0 if it ran dry;
 * after CS_ENOMEM the queue is unusable. */
int mqueue_front(mqueue *q, uint64_t *tick);
/* Takes the next event of bucket 0 (not empty: after mqueue_front). */
mevent mqueue_pop(mqueue *q);
void mqueue_reset(mqueue *q); /* empty, memory kept */
void mqueue_free(mqueue *q);

/* ---- request ids in flight (idmap.c) --------------------------------------------------------- */

/* Request id -> slot: open addressing, linear probing, keys id + 1 (0: empty), deletion by
 * backward shift, so a lookup never meets a tombstone. */
typedef struct midmap {
  uint64_t *keys;
  uint32_t *slots;
  size_t cap, n; /* cap: a power of two, kept above twice n */
} midmap;

/* The slot of request id, or UINT32_MAX. */
uint32_t midmap_find(const midmap *m, uint64_t id);
/* Room for `more` entries beyond the present ones; false: out of memory. */
bool midmap_reserve(midmap *m, size_t more);
/* Maps id to slot unless id is mapped already (false then); room must be reserved. */
bool midmap_insert(midmap *m, uint64_t id, uint32_t slot);
void midmap_remove(midmap *m, uint64_t id);

/* ---- the chip (mchip.c) ------------------------------------------------------------------- */

/* Shared resources a flow's data crosses.  Ids: GDMA channels, DDR channels, ring lane links
 * (one per node and direction: the link leaving the node that way), AXI links (one per D2D
 * connection and direction), D2D_SN and D2D_RN interfaces (one per die node). */
typedef struct mchip {
  cs_die_params die;
  cs_layout lay;
  int per_die, dies, endpoints;
  double f_noc, f_ip;          /* GHz: NoC cycles and IP cycles per ns */
  double hop_h, hop_v;         /* NoC cycles a flit takes per horizontal / vertical hop */
  double flit_bytes;           /* the adapter's bw_bytes */
  int base_ddr, base_ring, base_axi, base_sn, base_rn, n_res;
  double *cap;   /* n_res: bytes per ns */
  double *burst; /* n_res: bytes a token bucket lets through at once at a step's start (0: none) */
} mchip;

enum { MCHIP_EAST, MCHIP_WEST, MCHIP_SOUTH, MCHIP_NORTH };

/* Builds the chip of the job's adapter (die file, layout file, frequencies, flit size) and the
 * capacities of its resources; on failure nothing is left allocated. */
int mchip_init(mchip *c, const cs_adapter_config *ad, const cs_math_params *p, cs_err *err);
void mchip_free(mchip *c);

/* One way along the die's route from node a to node b: the NoC cycles its hops and turn take;
 * with res (room for rows + cols ids) not NULL, the ring links crossed, *n of them. */
double mchip_path(const mchip *c, const cs_math_params *p, int die, int a, int b, int *res,
                  size_t *n);
static inline int mchip_gdma(const mchip *c, int gdma, int ch) { (void)c; return 2 * gdma + ch; }
static inline int mchip_ddr(const mchip *c, int ddr, int ch) { return c->base_ddr + 2 * ddr + ch; }

/* ---- a step's flow-channels (flows.c) ------------------------------------------------------ */

/* The requests of one flow (source GDMA, target DDR, direction) on one physical channel within
 * a step: they share a route, trackers and a fluid rate.  Times in ns from a request's issue. */
typedef struct mfc {
  int32_t src, dst;
  uint8_t ch, is_read, cross;
  int link, link_dir;       /* the D2D link and direction of a cross-die flow, else -1 */
  int d2d_src, d2d_dst;     /* its end nodes on the source / target die, else -1 */
  uint32_t n_txns;
  int burst;                 /* flits of its longest request (the others' are as long or less) */
  double bytes, first_bytes; /* all of them; the first */
  double grant_ns;           /* issue to the req phase's end (the target's grant) */
  double wdata_gen_ns;       /* issue to the write data's creation (DBID at the GDMA) */
  double wdata_done_ns;      /* issue to the write data's arrival where the GDMA sent it */
  double final_ns;           /* issue to the final completion, for a full burst */
  double flit_ns;            /* final completion per flit the burst is short of full */
  double rate_cap;           /* bytes per ns it could take alone (trackers, channel, Retry) */
  double weight;             /* its claim on a shared resource: its trackers' bytes per hold */
  double start_ns;           /* when its data reaches the resources it shares, from its issue */
  size_t res_first, n_res;   /* its resources: mres ids[res_first .. + n_res) */
} mfc;

/* The resources of a step's flow-channels, one growable list. */
typedef struct mres {
  int *ids;
  size_t n, cap;
} mres;

/* The terms of flow-channel f (src, dst, ch, is_read, n_txns, burst, bytes, first_bytes set)
 * for a job's adapter: latencies, route, own rate; its resources are appended to r.
 * CS_EINVAL when no D2D link joins the dies, CS_ENOMEM. */
int mfc_price(const mchip *c, const cs_math_params *p, const cs_adapter_config *ad, mfc *f,
              mres *r, cs_err *err);

/* ---- fluid max-min sharing (fluid.c) ------------------------------------------------------- */

/* A flow-channel's share of the network over time: its cumulative bytes served rise piecewise
 * linearly from 0 at its start_ns; pts[i] = (time ns, bytes) at each change of rate. */
typedef struct mcurve_pt {
  double t, bytes;
} mcurve_pt;

struct mfluid_ev;

typedef struct mfluid {
  /* scratch, reused from step to step */
  double *rem, *served, *rate, *resid, *credit, *load, *wsum;
  struct mfluid_ev *evs;
  size_t cap_evs;
  int *touched, *live;
  uint8_t *frozen, *is_touched;
  size_t cap_flows;
  int cap_res;
  /* out: the curves of the last solve, flow i's points pts[first[i] .. first[i] + npts[i]) */
  mcurve_pt *pts;
  size_t n_pts, cap_pts;
  size_t *first, *npts;
} mfluid;

/* Shares the chip's resources among flows[0..n) max-min fairly in proportion to their weights,
 * each flow limited by its own rate_cap, from the step's start until every flow has been served (bytes - first_bytes),
 * and fills the curves.  Token buckets start with their burst. */
int mfluid_solve(mfluid *fl, const mchip *c, const mfc *flows, size_t n, const mres *r,
                 cs_err *err);
void mfluid_free(mfluid *fl);
/* The time flow i's curve reaches `bytes` (<= its total), walking from point *cursor on. */
double mfluid_time_at(const mfluid *fl, size_t i, double bytes, size_t *cursor);

/* ---- options (params.c) -------------------------------------------------------------------- */

extern const cs_field cs_math_option_fields[];

#endif
