/* Internals of the vcnet engine, shared by its files: the topology (mesh/torus of 1-3
 * dimensions), the routing functions, the cycle-level virtual-channel router network, the
 * channel-dependency checker and synthetic traffic.  Nothing here is seen outside
 * src/engine/vcnet/ except through include/commsweep/vcnet.h.
 *
 * Port numbering of a router with D dimensions and E endpoints:
 *   2d     link towards +1 in dimension d      2d+1   link towards -1 in dimension d
 *   2D+e   endpoint e (injection in, ejection out)
 * A flit leaving router r on output port o arrives at the neighbour's input port o ("arrived
 * travelling in direction o"); its credits go back to r's output port o.
 */
#ifndef CS_VCNET_INT_H
#define CS_VCNET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsweep/err.h"
#include "fattree.h"
#include "commsweep/fields.h"

#define VCN_MAX_DIMS 3
#define VCN_MAX_RADIX 64
#define VCN_MAX_VCS 16
#define VCN_MAX_EPR 16 /* endpoints per router */
/* a fat-tree switch has one link port per leaf of its row/column (docs/vtftr.md) */
#define VCN_MAX_LINKS 32
#define VCN_MAX_PORTS (VCN_MAX_LINKS + VCN_MAX_EPR)
#define VCN_NIL UINT32_MAX
/* Cycles an endpoint takes to retire a flit the ejection channel delivered.  One, as in BookSim's
 * traffic manager: with it the zero-load latencies of the two simulators agree (docs/vcnet.md). */
#define VCN_RETIRE_CYCLES 1

/* ---- topology ------------------------------------------------------------------------------ */

typedef struct vcn_topo {
  bool torus;             /* wrap-around links in every dimension */
  int ndims;              /* 1..3 */
  int radix[VCN_MAX_DIMS]; /* routers per dimension, >= 2 */
  int epr;                /* endpoints per router */
  int routers;            /* product of radix */
  int endpoints;          /* routers * epr */
  int ports;              /* links + epr */
  /* The 2-D fat tree (fattree2d:RxC, docs/vtftr.md): routers 0..RC-1 are its leaves (the only
   * ones with endpoints), then the R row and C column switches.  Link port 0 of a leaf goes to
   * its row switch, 1 to its column switch; port c of row switch r and port r of column switch c
   * go to leaf (r,c).  A link arrives at the port of the far router that leads back. */
  bool fattree;
  int links;              /* link ports per router: 2 ndims, or max(R, C) on a fat tree */
  vtf_net ft;             /* the fat tree with its faults (fattree only) */
} vcn_topo;

/* Parses "torus:4x4x4", "mesh:8x8", "torus:16"; dimension 0 is the first number. */
int vcn_topo_parse(const char *text, int epr, vcn_topo *out, cs_err *err);
/* Router id <-> coordinates; dimension 0 varies fastest: id = x0 + k0 (x1 + k1 x2). */
void vcn_topo_coords(const vcn_topo *t, int router, int coords[VCN_MAX_DIMS]);
int vcn_topo_router(const vcn_topo *t, const int coords[VCN_MAX_DIMS]);
/* The router reached through link port o, or -1 (mesh edge, or an endpoint port). */
int vcn_topo_neighbour(const vcn_topo *t, int router, int port);
/* The input port at the neighbour a flit sent on link port `port` arrives at. */
int vcn_topo_arrival_port(const vcn_topo *t, int router, int port);
/* The router and output port feeding input link port `port` of `router` (credits go there). */
void vcn_topo_upstream(const vcn_topo *t, int router, int port, int *up_router, int *up_port);
/* Applies the fault options of p (fat tree only) to t->ft. */
/* Fat tree: true, with a message in buf, when the pair cannot talk (an endpoint on a faulty
 * leaf, or no route); mesh/torus: false. */
bool vcn_pair_problem(const vcn_topo *t, int src_ep, int dst_ep, char *buf, size_t cap);
struct vcn_params;
int vcn_topo_faults(vcn_topo *t, const struct vcn_params *p, cs_err *err);
/* "+X", "-Y", "ep0" */
void vcn_port_name(const vcn_topo *t, int port, char *buf, size_t cap);
/* "(1,2,0)" */
void vcn_coords_name(const vcn_topo *t, int router, char *buf, size_t cap);

/* ---- routing ------------------------------------------------------------------------------- */

/* Per-packet routing state the routing function carries from hop to hop. */
typedef struct vcn_route_state {
  int8_t dim; /* dimension of the previous hop, -1 before the first */
  uint8_t cls; /* VC class of the previous hop */
  int32_t src; /* source router (fat-tree routes are chosen per source/destination pair) */
} vcn_route_state;

/* One routing decision at `router` for a packet to `dst_router`/`dst_ep`: the output port and the
 * VC class of the hop it takes (an ejection hop is class 0); updates *st. */
typedef void (*vcn_route_fn)(const vcn_topo *t, int router, int dst_router, int dst_ep,
                             vcn_route_state *st, int *out_port, int *out_cls);

/* The dimension-order family: how a route's VC class follows the dateline. */
enum { VCN_DOR_NONE = 0, /* not dimension order (fat-tree routings) */
       VCN_DOR_PLAIN,    /* one class */
       VCN_DOR_DATELINE, /* class 1 from the wrap-around hop to the end of the dimension */
       VCN_DOR_SEGMENT }; /* class 1 for the whole dimension when its route wraps */

typedef struct vcn_routing {
  const char *name;  /* "dor", "dor_dateline" */
  vcn_route_fn fn;
  int classes;       /* VC classes it uses: the VCs are split evenly among them */
  bool torus_only;
  bool fattree;      /* for fattree2d only (and only it may route there) */
  const char *meaning;
  int dor;           /* VCN_DOR_*: lets the router network route from its coordinate table */
} vcn_routing;

/* The routing registry; NULL and a message listing the valid names on a miss. */
const vcn_routing *vcn_routing_find(const char *name, const vcn_topo *t, int num_vcs, cs_err *err);
const vcn_routing *vcn_routing_list(void); /* terminated by a row with name NULL */
/* Torus direction rule of DOR: +1 when (d - s + N) mod N <= N/2, else -1. */
int vcn_torus_direction(int s, int d, int n);

/* The hop dimension-order routing takes in dimension d, the first whose coordinate differs
 * (cur != dst), under dateline rule `dateline` (VCN_DOR_*): its output port and VC class; updates
 * *st.  Shared by the routing functions and the router network's route computation. */
static inline void vcn_dor_hop(const vcn_topo *t, int d, int cur, int dst, int dateline,
                               vcn_route_state *st, int *out_port, int *out_cls) {
  int k = t->radix[d];
  int ahead = dst - cur < 0 ? dst - cur + k : dst - cur; /* (dst - cur + k) mod k */
  int dir = t->torus ? (ahead <= k / 2 ? 1 : -1) : (dst > cur ? 1 : -1);
  int cls = st->dim == d ? st->cls : 0;
  if (dateline == VCN_DOR_DATELINE && ((dir > 0 && cur == k - 1) || (dir < 0 && cur == 0)))
    cls = 1;
  /* the variant: class 1 for the whole run through a dimension whose route will wrap */
  if (dateline == VCN_DOR_SEGMENT && st->dim != d)
    cls = (dir > 0 && dst < cur) || (dir < 0 && dst > cur);
  *out_port = 2 * d + (dir > 0 ? 0 : 1);
  *out_cls = cls;
  st->dim = (int8_t)d;
  st->cls = (uint8_t)cls;
}

/* ---- network parameters -------------------------------------------------------------------- */

typedef struct vcn_params {
  char topology[32];   /* "torus:4x4x4" */
  char routing[24];    /* a vcn_routing name */
  int endpoints_per_router;
  int num_vcs;         /* per port */
  int vc_depth;        /* flits per VC buffer */
  int rc_delay;        /* cycles: route computation */
  int va_delay;        /* cycles: VC allocation */
  int sa_delay;        /* cycles: switch allocation */
  int st_delay;        /* cycles: switch traversal */
  int link_latency;    /* cycles on a router-router link (and its credit return), >= 1 */
  int flit_bytes;      /* bytes a flit carries */
  double frequency_ghz; /* network clock */
  char faults[256];    /* fattree2d: faulty leaves "r,c;r,c" ("!r,c": not yet in the tables) */
  int fault_count;     /* fattree2d: random known faults added to `faults` */
  uint64_t fault_seed; /* their draw */
} vcn_params;

/* ---- the router network -------------------------------------------------------------------- */

typedef struct vcn_pkt {
  uint32_t next;        /* injection-queue link / free-list link */
  int32_t src_ep, dst_ep;
  int32_t dst_router;
  uint16_t size;        /* flits */
  vcn_route_state rs;
  uint64_t tag;         /* owner's cookie (transaction id and kind, or netbench stamp) */
  uint64_t t_created;   /* cycle it entered the injection queue */
  uint64_t t_head_in;   /* cycle its head left the endpoint */
  uint64_t t_tail_out;  /* cycle its tail left the endpoint */
  uint32_t hops;        /* router-to-router links its head crossed */
  int16_t first_vc;     /* VC its head took at the injection port */
  int16_t last_vc;      /* VC its head took at the ejection port */
} vcn_pkt;

/* A packet in its source queue, not yet started: 32 bytes against the 72 of a vcn_pkt, because
 * past saturation the queues hold most of the offered traffic.  The endpoint makes it a vcn_pkt when it starts
 * sending it. */
typedef struct vcn_queued {
  uint64_t tag, t_created;
  int32_t dst_ep;
  uint32_t next;      /* queue link / free-list link */
  uint32_t size;
} vcn_queued;

/* A flit in a buffer or in flight: its packet's pool index and whether it is the packet's head
 * and tail flit, packed in 4 bytes (the buffers and the wheel are what a cycle sweeps). */
typedef uint32_t vcn_flit;
#define VCN_FLIT(pkt, head, tail) ((uint32_t)(pkt) << 2 | (uint32_t)(head) << 1 | (uint32_t)(tail))
#define VCN_FLIT_PKT(f) ((f) >> 2)
#define VCN_FLIT_HEAD(f) (((f) >> 1) & 1u)
#define VCN_FLIT_TAIL(f) ((f) & 1u)
#define VCN_MAX_PACKETS (1u << 30)

/* 8 bytes: the target (an input VC index, or an endpoint for an ejection) and the flit. */
typedef struct vcn_event {
  uint32_t to;
  vcn_flit flit;
} vcn_event;

/* The events of one kind due in one cycle.  A cycle makes room first for the most it can
 * schedule of each kind, so scheduling an event is a store through a cursor. */
typedef struct vcn_bucket {
  vcn_event *ev;
  uint32_t n, cap;
} vcn_bucket;

/* Credits, 4 bytes each (the VC index they return to): plain increments, so landing them before
 * the cycle's flits changes nothing. */
typedef struct vcn_cbucket {
  uint32_t *to;
  uint32_t n, cap;
} vcn_cbucket;

/* One event wheel per kind, so landing an event never tests its kind. */
enum { VCN_INJECT, VCN_HOP, VCN_EJECT, VCN_FLIT_KINDS }; /* flits: from the endpoint into its router,
                                                          * over a link, into an endpoint */
enum { VCN_LINK_CREDIT, VCN_EP_CREDIT, VCN_CREDIT_KINDS }; /* credits: upstream over a link, back
                                                            * to the endpoint */

/* One VC index of a router port: the input VC (its buffer and the packet at its front) and the
 * output VC of the same index (its allocation pointer; its credits are apart, in vcn_net.credit).
 * Index (r P + port) V + vc.  Each record is followed by its buffer's vc_depth flits (VC_SLOTS),
 * the pair padded to vc_stride bytes, so with 8-flit buffers a VC is one cache line: on a
 * 4,096-router network the VCs are megabytes, and a flit's landing and its switch traversal each
 * touch one line. */
typedef struct vcn_vc {
  uint64_t ready;       /* input: cycle the current stage may act */
  uint32_t pad0_;
  uint16_t head, count; /* input: the flits, a ring in slot[] */
  uint16_t out_vc;      /* input: the VC allocated at out_port (local index) */
  uint16_t va_in_rr;    /* input: next VC of its class range to accept */
  uint16_t va_rr;       /* output: next router-local input VC to favour */
  uint8_t state;        /* input: VCN_IDLE / VCN_ROUTING / VCN_VA / VCN_ACTIVE */
  uint8_t out_port;     /* input: the port route computation chose */
  uint8_t out_cls;      /* input: the VC class it chose */
  uint8_t pad_[7];
} vcn_vc;
_Static_assert(sizeof(vcn_vc) == 32, "a VC's state is half a cache line");

/* One port of a router (r P + port): what switch traversal needs and its pointers, 16 bytes, so
 * a router's ports take two cache lines (the links themselves are the topology's: vcn_topo_*). */
typedef struct vcn_port {
  /* as an output: the first VC index of the input port it feeds (a link) or the endpoint it
   * ejects to; as an input: the first VC index of the upstream output port (a link) or of the
   * endpoint its credits return to */
  uint32_t flit_to, credit_to;
  uint16_t sa_acc_rr;   /* input: next output port to accept */
  uint16_t sa_in_rr;    /* input: next VC */
  uint16_t sa_out_rr;   /* output: next input port */
  uint16_t pad_;
} vcn_port;
_Static_assert(sizeof(vcn_port) == 16, "four ports a cache line");

/* An endpoint's sending side. */
typedef struct vcn_endpoint {
  uint32_t q_head, q_tail; /* injection queue: indices into `queued` */
  uint32_t pkt;            /* packet being sent (pool index), VCN_NIL none */
  uint32_t inject_to;      /* first VC index of the router port it injects into */
  int32_t vc;              /* VC the current packet uses, -1 none */
  uint16_t sent;           /* flits of the current packet sent */
  uint16_t size;           /* flits of the current packet */
  uint16_t rr;             /* next injection VC to try */
} vcn_endpoint;

typedef struct vcn_net vcn_net;
/* Called when a packet's tail reaches its endpoint and when its tail leaves its source endpoint. */
typedef void (*vcn_deliver_fn)(void *ctx, vcn_net *net, uint32_t pkt);
typedef void (*vcn_sent_fn)(void *ctx, vcn_net *net, uint32_t pkt);

typedef struct vcn_stats {
  uint64_t cycles, skipped_cycles;
  uint64_t flit_hops;     /* flits over router-router links */
  uint64_t flits_injected, flits_ejected;
  uint64_t packets_injected, packets_ejected;
} vcn_stats;

struct vcn_net {
  vcn_params p;
  vcn_topo t;
  const vcn_routing *routing;
  int V, D, P;          /* VCs, depth, ports */
  uint64_t pv_magic;    /* router of VC index g = (g pv_magic) >> 40, g / (P V) exactly */
  int vcs_per_class;
  uint64_t now;         /* the cycle being (or next to be) simulated */
  /* VCs, index (r P + port) V + vc: the input VC and the output VC of that index, each with
   * its ring of D flits (VC(n, g), VC_SLOTS) */
  unsigned char *vcs;   /* nvc records of vc_stride bytes, 64-byte aligned */
  size_t vc_stride;     /* sizeof(vcn_vc) + D flits, rounded up to 32 bytes */
  /* per VC index: the output VC's credits toward the buffer downstream; 4 bytes a VC, so the
   * checks of switch allocation and the credits that land each cycle stay in the cache */
  int32_t *credit;
  vcn_port *port;       /* r P + port */
  uint64_t *nonempty;   /* per router: bit li set when input VC li holds flits */
  uint64_t *ovc_busy;   /* per router, `words` words: bit set while a packet holds output VC li */
  int words;            /* 64-bit words of nonempty per router */
  uint8_t *port_of;     /* router-local VC index -> its port */
  uint8_t *coord;       /* mesh/torus: r VCN_MAX_DIMS + d -> coordinate of router r in dimension d */
  uint32_t *router_flits; /* flits buffered per router */
  uint64_t *active_bits;  /* routers with flits, a bit each */
  uint64_t *active_words; /* bit w: active_bits[w] is not zero */
  uint32_t n_active;
  /* endpoints */
  vcn_endpoint *ep;
  int32_t *ep_credits;  /* endpoints * V credits toward the router's injection port */
  uint8_t *ep_vc_busy;  /* endpoints * V: an input VC owned by a packet not yet fully sent */
  uint32_t *ep_active, n_ep_active;
  uint8_t *ep_is_active;
  /* packet pool */
  vcn_pkt *pkt;
  uint32_t pkt_cap, pkt_free, pkts_live; /* live: queued or started, not yet delivered */
  vcn_queued *queued;
  uint32_t queued_cap, queued_used, queued_free; /* entries below `used` have been handed out */
  /* event wheels: wheel_size buckets each, slot (cycle & (wheel_size - 1)) */
  vcn_bucket *wheel[VCN_FLIT_KINDS];
  vcn_cbucket *cwheel[VCN_CREDIT_KINDS];
  uint32_t wheel_size; /* power of two, > the longest scheduling delay */
  /* owner callbacks */
  vcn_deliver_fn on_deliver;
  vcn_sent_fn on_sent;
  void *ctx;
  vcn_stats st;
  int oom; /* an allocation inside a cycle failed; the owner reports it */
};

enum { VCN_IDLE = 0, VCN_ROUTING, VCN_VA, VCN_ACTIVE };

/* VC index g's record, and its buffer's flits. */
#define VC(n, g) ((vcn_vc *)((n)->vcs + (size_t)(g) * (n)->vc_stride))
#define VC_SLOTS(v) ((vcn_flit *)((v) + 1))
/* Bytes of a VC's record with its buffer of `depth` flits. */
static inline size_t vcn_vc_stride(int depth) {
  return (sizeof(vcn_vc) + (size_t)depth * sizeof(vcn_flit) + 31) & ~(size_t)31;
}

int vcn_params_check(const vcn_params *p, cs_err *err);
/* Bytes a network of these options on topology t holds with `packets` packets alive at most
 * (queued or in the network): its arrays, the pools, and event wheels as full as its buffers. */
uint64_t vcn_net_bytes(const vcn_params *p, const vcn_topo *t, uint64_t packets);
/* Builds the network; on failure *out is untouched. */
int vcn_net_create(const vcn_params *p, vcn_net **out, cs_err *err);
void vcn_net_destroy(vcn_net *n); /* accepts NULL */
/* Queues a packet of `size` flits at endpoint src for endpoint dst; returns VCN_NIL when out of
 * memory.  The callbacks name the packet by its pool index (n->pkt), which it gets when its
 * endpoint starts sending it; the network frees it after on_deliver returns. */
uint32_t vcn_net_send(vcn_net *n, int src_ep, int dst_ep, int size, uint64_t tag);
/* Simulates cycle n->now and advances to the next. */
void vcn_net_cycle(vcn_net *n);
/* True when no flit is buffered, queued or in flight. */
bool vcn_net_quiet(const vcn_net *n);
/* When nothing can move before the next scheduled event, jumps the clock to that event or to
 * `limit`, whichever is first; counts the jump as skipped cycles. */
void vcn_net_skip_idle(vcn_net *n, uint64_t limit);
/* Checks every invariant: credits + buffered + in flight = depth per VC, counters agree.
 * Returns CS_OK or CS_EINTERNAL with the first violation. */
int vcn_net_check(const vcn_net *n, cs_err *err);
/* Zero-load latency in cycles of a packet of `flits` flits crossing `hops` links: from its entry
 * in the injection queue to its tail's delivery (docs/vcnet.md derives it). */
uint64_t vcn_zero_load_latency(const vcn_params *p, int hops, int flits);

/* ---- channel dependency graph ---------------------------------------------------------------- */

typedef struct vcn_channel {
  int router, port, cls; /* a link (router, output port) and a VC class */
} vcn_channel;

typedef struct vcn_cdg_result {
  bool acyclic;
  int cycle_len;
  vcn_channel *cycle;   /* cycle_len channels, malloc'd; free with vcn_cdg_result_free */
  uint64_t channels, dependencies, pairs;
} vcn_cdg_result;

int vcn_cdg_check(const vcn_topo *t, const vcn_routing *r, vcn_cdg_result *out, cs_err *err);
void vcn_cdg_result_free(vcn_cdg_result *r);

/* ---- options (options.c) ------------------------------------------------------------------- */

struct cs_job;
extern const cs_field vcn_option_fields[]; /* the engine's option table */
extern const char vcn_options_doc[];
void vcn_params_default(vcn_params *p);
/* Topology, routing and ranges; fills *topo (may be NULL) when valid. */
int vcn_params_validate(const vcn_params *p, vcn_topo *topo, cs_err *err);
/* Fills p from a JSON object (cJSON *) with every field required; unknown keys are errors. */
int vcn_params_from_json(const void *json, const char *source, vcn_params *p, cs_err *err);
/* The job's options, or the defaults when it gives none; validated. */
int vcn_job_params(const struct cs_job *job, vcn_params *p, cs_err *err);

#endif
