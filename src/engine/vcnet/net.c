/* The cycle-level input-queued virtual-channel router network.
 *
 * Each cycle: (1) the events due now land (flits into input VC buffers, credits into output VCs,
 * flits into endpoints); (2) every endpoint with a queued packet sends at most one flit into its
 * router's injection port; (3) every router holding flits does route computation, a separable
 * input-first round-robin VC allocation and a separable input-first round-robin switch
 * allocation, and sends the winners.  Whatever a cycle sends lands at least one cycle later
 * (through the event wheel), so the order routers are visited in never changes a result.
 *
 * Invariant (vcn_net_check): for every VC of every channel, credits held upstream + flits in the
 * downstream buffer + flits and credits in flight = vc_depth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vcnet_int.h"

/* Events a landing loop looks ahead to fetch the state it will touch. */
#define PREFETCH_AHEAD 8
/* Steps (endpoint or router) a bucket opening makes room for: few enough that the room a wheel
 * holds beyond what is in flight stays small (vcn_net_bytes), enough that reopening is rare.  The
 * router pass takes its room a word of the active bitmap (64 routers) at a time. */
#define DUE_STEPS 256u
_Static_assert(DUE_STEPS >= 64, "the router pass takes 64 steps of room at once");

/* Buckets a wheel has: a power of two above the longest scheduling delay. */
static uint32_t wheel_slots(const vcn_params *p) {
  uint32_t longest = (uint32_t)(p->sa_delay + p->st_delay + p->link_latency) + 1 + VCN_RETIRE_CYCLES, slots = 8;
  while (slots <= longest) slots *= 2;
  return slots;
}

int vcn_params_check(const vcn_params *p, cs_err *err) {
  struct {
    const char *name;
    int v, lo, hi;
  } r[] = {{"num_vcs", p->num_vcs, 1, VCN_MAX_VCS},
           {"vc_depth", p->vc_depth, 1, 4096},
           {"rc_delay", p->rc_delay, 0, 64},
           {"va_delay", p->va_delay, 0, 64},
           {"sa_delay", p->sa_delay, 0, 64},
           {"st_delay", p->st_delay, 0, 64},
           {"link_latency", p->link_latency, 1, 1024},
           {"flit_bytes", p->flit_bytes, 1, 1 << 16},
           {"endpoints_per_router", p->endpoints_per_router, 1, VCN_MAX_EPR}};
  for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
    if (r[i].v < r[i].lo || r[i].v > r[i].hi)
      return cs_err_set(err, CS_EINVAL, "vcnet option '%s' = %d outside [%d, %d]", r[i].name,
                        r[i].v, r[i].lo, r[i].hi);
  if (!(p->frequency_ghz > 0 && p->frequency_ghz <= 1000))
    return cs_err_set(err, CS_EINVAL, "vcnet option 'frequency_ghz' = %g outside (0, 1000]",
                      p->frequency_ghz);
  return CS_OK;
}

uint64_t vcn_zero_load_latency(const vcn_params *p, int hops, int flits) {
  uint64_t stages = (uint64_t)(p->rc_delay + p->va_delay + p->sa_delay + p->st_delay);
  return 2 + VCN_RETIRE_CYCLES + (uint64_t)(hops + 1) * stages + (uint64_t)hops * (uint64_t)p->link_latency +
         (uint64_t)(flits - 1);
}

uint64_t vcn_net_bytes(const vcn_params *p, const vcn_topo *t, uint64_t packets) {
  uint64_t R = (uint64_t)t->routers, P = (uint64_t)t->ports, V = (uint64_t)p->num_vcs;
  uint64_t E = (uint64_t)t->endpoints, D = (uint64_t)p->vc_depth, nvc = R * P * V;
  uint64_t words = (P * V + 63) / 64;
  /* per VC: its record and its ring of flits, and its output credits */
  uint64_t per_vc = vcn_vc_stride((int)D) + sizeof(int32_t);
  /* per router: VC masks, SA pointers, coordinates, the link tables, counters and lists */
  uint64_t per_router = 2 * words * 8 + VCN_MAX_DIMS + P * sizeof(vcn_port) + 4 + 4 + 1;
  uint64_t per_ep = sizeof(vcn_endpoint) + V * (4 + 1) + 4 + 1;
  /* every buffered flit may have a flit event and a credit event pending; buckets double; each
   * bucket may hold the room of one opening (open_due) beyond its events */
  const uint64_t slots = wheel_slots(p);
  uint64_t wheels = 2 * nvc * D * (sizeof(vcn_event) + sizeof(uint32_t)) +
                    slots * DUE_STEPS * (uint64_t)t->ports * (2 * sizeof(vcn_event) + 2 * sizeof(uint32_t)) +
                    slots * 3 * PREFETCH_AHEAD * sizeof(vcn_event);
  return sizeof(vcn_net) + nvc * per_vc + R * per_router + E * per_ep + P * V + wheels +
         2 * (packets + 256) * (sizeof(vcn_pkt) + sizeof(vcn_queued));
}

void vcn_net_destroy(vcn_net *n) {
  if (!n) return;
  free(n->vcs), free(n->credit), free(n->port), free(n->ovc_busy), free(n->port_of);
  free(n->nonempty), free(n->coord), free(n->router_flits);
  free(n->active_bits), free(n->active_words);
  free(n->ep), free(n->ep_credits), free(n->ep_vc_busy), free(n->ep_active);
  free(n->ep_is_active), free(n->pkt), free(n->queued);
  for (int k = 0; k < VCN_FLIT_KINDS; k++) {
    if (n->wheel[k])
      for (uint32_t i = 0; i < n->wheel_size; i++) free(n->wheel[k][i].ev);
    free(n->wheel[k]);
  }
  for (int k = 0; k < VCN_CREDIT_KINDS; k++) {
    if (n->cwheel[k])
      for (uint32_t i = 0; i < n->wheel_size; i++) free(n->cwheel[k][i].to);
    free(n->cwheel[k]);
  }
  free(n);
}

static bool grow_pkts(vcn_net *n) {
  uint32_t cap = n->pkt_cap ? n->pkt_cap * 2 : 256;
  if (cap > VCN_MAX_PACKETS) return false;
  vcn_pkt *p = realloc(n->pkt, (size_t)cap * sizeof *p);
  if (!p) return false;
  /* only called with the free list empty */
  for (uint32_t i = n->pkt_cap; i < cap; i++) p[i].next = i + 1 < cap ? i + 1 : VCN_NIL;
  n->pkt_free = n->pkt_cap;
  n->pkt = p;
  n->pkt_cap = cap;
  return true;
}

/* Doubles the queue pool.  Its new entries are handed out in order (queued_used), so only the
 * memory a run needs is ever touched: past saturation the queues grow for the whole run. */
static bool grow_queued(vcn_net *n) {
  uint32_t cap = n->queued_cap ? n->queued_cap * 2 : 256;
  vcn_queued *q = realloc(n->queued, (size_t)cap * sizeof *q);
  if (!q) return false;
  n->queued = q;
  n->queued_cap = cap;
  return true;
}

int vcn_net_create(const vcn_params *p, vcn_net **out, cs_err *err) {
  int rc = vcn_params_check(p, err);
  if (rc) return rc;
  vcn_topo t;
  if ((rc = vcn_topo_parse(p->topology, p->endpoints_per_router, &t, err))) return rc;
  if ((rc = vcn_topo_faults(&t, p, err))) return rc;
  const vcn_routing *routing = vcn_routing_find(p->routing, &t, p->num_vcs, err);
  if (!routing) return CS_EINVAL;
  if (t.fattree) vtf_algo_parse(routing->name, &t.ft.algo, NULL);
  vcn_net *n = calloc(1, sizeof *n);
  if (!n) return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory");
  n->p = *p;
  n->pkt_free = n->queued_free = VCN_NIL;
  n->t = t;
  n->routing = routing;
  n->V = p->num_vcs, n->D = p->vc_depth, n->P = t.ports;
  n->vcs_per_class = n->V / routing->classes;
  n->pv_magic = ((1ull << 40) + (uint64_t)(t.ports * p->num_vcs) - 1) / (uint64_t)(t.ports * p->num_vcs);
  size_t R = (size_t)t.routers, P = (size_t)n->P, V = (size_t)n->V, E = (size_t)t.endpoints;
  size_t nvc = R * P * V;
  if (nvc >= (1u << 30)) {
    free(n);
    return cs_err_set(err, CS_EINVAL, "vcnet: %zu virtual channels exceed the limit of 2^30", nvc);
  }
  n->vc_stride = vcn_vc_stride(n->D);
  n->vcs = aligned_alloc(64, (nvc * n->vc_stride + 63) & ~(size_t)63);
  if (n->vcs) memset(n->vcs, 0, nvc * n->vc_stride);
  n->credit = malloc(nvc * sizeof *n->credit);
  n->port = calloc(R * P, sizeof *n->port);
  n->words = (P * V + 63) / 64;
  n->nonempty = calloc(R * (size_t)n->words, sizeof *n->nonempty);
  n->ovc_busy = calloc(R * (size_t)n->words, sizeof *n->ovc_busy);
  n->port_of = malloc(P * V);
  n->coord = calloc(R * VCN_MAX_DIMS, 1);
  n->router_flits = calloc(R, sizeof *n->router_flits);
  n->active_bits = calloc((R + 63) / 64, sizeof *n->active_bits);
  n->active_words = calloc((R + 4095) / 4096, sizeof *n->active_words);
  n->ep = calloc(E, sizeof *n->ep);
  n->ep_credits = malloc(E * V * sizeof *n->ep_credits);
  n->ep_vc_busy = calloc(E * V, 1);
  n->ep_active = malloc(E * sizeof *n->ep_active);
  n->ep_is_active = calloc(E, 1);
  n->wheel_size = wheel_slots(p);
  bool wheels = true;
  for (int k = 0; k < VCN_FLIT_KINDS; k++) wheels &= (n->wheel[k] = calloc(n->wheel_size, sizeof *n->wheel[k])) != NULL;
  for (int k = 0; k < VCN_CREDIT_KINDS; k++) wheels &= (n->cwheel[k] = calloc(n->wheel_size, sizeof *n->cwheel[k])) != NULL;
  if (!n->vcs || !n->credit || !n->port || !n->ovc_busy || !n->port_of || !n->nonempty ||
      !n->coord || !n->router_flits || !n->active_bits || !n->active_words || !n->ep || !n->ep_credits ||
      !n->ep_vc_busy || !n->ep_active || !n->ep_is_active || !wheels ||
      !grow_pkts(n)) {
    vcn_net_destroy(n);
    return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory for %zu routers", R);
  }
  if (!t.fattree)
    for (size_t r = 0; r < R; r++) {
      int c[VCN_MAX_DIMS];
      vcn_topo_coords(&t, (int)r, c);
      for (int d = 0; d < t.ndims; d++) n->coord[r * VCN_MAX_DIMS + (size_t)d] = (uint8_t)c[d];
    }
  for (size_t r = 0; r < R; r++)
    for (size_t o = 0; o < P; o++) {
      const int nbr = vcn_topo_neighbour(&t, (int)r, (int)o);
      int up = -1, up_port = 0;
      if (o < (size_t)t.links) vcn_topo_upstream(&t, (int)r, (int)o, &up, &up_port);
      if (o >= (size_t)t.links) {
        size_t ep = r * (size_t)t.epr + (o - (size_t)t.links);
        n->port[r * P + o].credit_to = (uint32_t)(ep * V);
        n->port[r * P + o].flit_to = (uint32_t)ep;
      } else {
        if (up >= 0) n->port[r * P + o].credit_to = (uint32_t)(((size_t)up * P + (size_t)up_port) * V);
        if (nbr >= 0)
          n->port[r * P + o].flit_to =
              (uint32_t)(((size_t)nbr * P + (size_t)vcn_topo_arrival_port(&t, (int)r, (int)o)) * V);
      }
      for (size_t v = 0; v < V; v++) {
        size_t g = (r * P + o) * V + v;
        /* an ejection port never runs out of credit: the endpoint sinks every flit */
        n->credit[g] = o < (size_t)t.links ? (nbr >= 0 ? n->D : 0) : INT32_MAX;
      }
    }
  for (size_t li = 0; li < P * V; li++) n->port_of[li] = (uint8_t)(li / V);
  for (size_t e = 0; e < E; e++) {
    n->ep[e].q_head = n->ep[e].q_tail = n->ep[e].pkt = VCN_NIL;
    n->ep[e].vc = -1;
    n->ep[e].inject_to = (uint32_t)(((e / (size_t)t.epr) * P + (size_t)t.links + e % (size_t)t.epr) * V);
    for (size_t v = 0; v < V; v++) n->ep_credits[e * V + v] = n->D;
  }
  *out = n;
  return CS_OK;
}

/* Where the events a cycle schedules go: a cursor into the bucket of each kind, with room for
 * `room` more endpoint or router steps (DUE_STEPS when opened). */
typedef struct vcn_due {
  vcn_event *inject, *hop, *eject;
  uint32_t *link, *ep;
  uint32_t room;
} vcn_due;

/* Cycles from scheduling to landing, per kind. */
static uint64_t flit_delay(const vcn_net *n, int kind) {
  const uint64_t pipe = (uint64_t)(n->p.sa_delay + n->p.st_delay);
  return kind == VCN_INJECT ? 1
         : kind == VCN_HOP  ? pipe + (uint64_t)n->p.link_latency
                            : pipe + 1 + VCN_RETIRE_CYCLES;
}
static uint64_t credit_delay(const vcn_net *n, int kind) {
  return kind == VCN_LINK_CREDIT ? (uint64_t)n->p.link_latency : 1;
}

/* A bucket's array of entries of `size` bytes with room for `need` more beyond `used`: the
 * array, moved when it had to grow (*cap updated), or NULL when out of memory (it is kept). */
static void *with_room(void *array, uint32_t *cap, uint32_t used, uint32_t need, size_t size) {
  if (*cap - used >= need) return array;
  uint32_t want = *cap ? *cap * 2 : 64;
  if (want < used + need) want = used + need;
  void *grown = realloc(array, (size_t)want * size);
  if (grown) *cap = want;
  return grown;
}

/* Opens the buckets this cycle schedules into, with room for DUE_STEPS steps: an endpoint step
 * sends at most one flit; a router step at most a flit out of each output port and a credit for
 * each input port (a port sends, and frees, at most one flit a cycle).  Each bucket keeps
 * PREFETCH_AHEAD more for close_due.  False when out of memory. */
static bool open_due(vcn_net *n, vcn_due *d) {
  const uint64_t mask = n->wheel_size - 1;
  const uint32_t links = (uint32_t)n->t.links * DUE_STEPS, eps = (uint32_t)n->t.epr * DUE_STEPS;
  const uint32_t fneed[VCN_FLIT_KINDS] = {DUE_STEPS, links, eps};
  const uint32_t cneed[VCN_CREDIT_KINDS] = {links, eps};
  vcn_event *fcur[VCN_FLIT_KINDS];
  uint32_t *ccur[VCN_CREDIT_KINDS];
  for (int k = 0; k < VCN_FLIT_KINDS; k++) {
    vcn_bucket *b = &n->wheel[k][(n->now + flit_delay(n, k)) & mask];
    vcn_event *ev = with_room(b->ev, &b->cap, b->n, fneed[k] + PREFETCH_AHEAD, sizeof *ev);
    if (!ev) return false;
    b->ev = ev;
    fcur[k] = ev + b->n;
  }
  for (int k = 0; k < VCN_CREDIT_KINDS; k++) {
    vcn_cbucket *b = &n->cwheel[k][(n->now + credit_delay(n, k)) & mask];
    uint32_t *to = with_room(b->to, &b->cap, b->n, cneed[k], sizeof *to);
    if (!to) return false;
    b->to = to;
    ccur[k] = to + b->n;
  }
  *d = (vcn_due){fcur[VCN_INJECT], fcur[VCN_HOP], fcur[VCN_EJECT], ccur[VCN_LINK_CREDIT],
                 ccur[VCN_EP_CREDIT], DUE_STEPS};
  return true;
}

/* Closes them: each bucket holds what its cursor passed, followed by PREFETCH_AHEAD events that
 * land nowhere (VC 0, no tail), so a landing loop fetches ahead without a bound. */
static void close_due(vcn_net *n, const vcn_due *d) {
  const uint64_t mask = n->wheel_size - 1;
  vcn_event *const fcur[VCN_FLIT_KINDS] = {d->inject, d->hop, d->eject};
  uint32_t *const ccur[VCN_CREDIT_KINDS] = {d->link, d->ep};
  for (int k = 0; k < VCN_FLIT_KINDS; k++) {
    vcn_bucket *b = &n->wheel[k][(n->now + flit_delay(n, k)) & mask];
    b->n = (uint32_t)(fcur[k] - b->ev);
    for (int i = 0; i < PREFETCH_AHEAD; i++) fcur[k][i] = (vcn_event){0, 0};
  }
  for (int k = 0; k < VCN_CREDIT_KINDS; k++) {
    vcn_cbucket *b = &n->cwheel[k][(n->now + credit_delay(n, k)) & mask];
    b->n = (uint32_t)(ccur[k] - b->to);
  }
}

/* Takes the room of `steps` steps, reopening the buckets when less is left; false when out of
 * memory (n->oom set). */
static inline bool take_steps(vcn_net *n, vcn_due *d, uint32_t steps) {
  if (__builtin_expect(d->room < steps, 0)) {
    close_due(n, d);
    if (!open_due(n, d)) {
      n->oom = 1;
      return false;
    }
  }
  d->room -= steps;
  return true;
}

static void activate_router(vcn_net *restrict n, uint32_t r) {
  uint64_t bit = 1ull << (r & 63);
  if (!(n->active_bits[r >> 6] & bit)) {
    n->active_bits[r >> 6] |= bit;
    n->active_words[r >> 12] |= 1ull << ((r >> 6) & 63);
    n->n_active++;
  }
}

static void activate_ep(vcn_net *n, uint32_t e) {
  if (!n->ep_is_active[e]) {
    n->ep_is_active[e] = 1;
    n->ep_active[n->n_ep_active++] = e;
  }
}

uint32_t vcn_net_send(vcn_net *n, int src_ep, int dst_ep, int size, uint64_t tag) {
  uint32_t i = n->queued_free;
  if (i != VCN_NIL) {
    n->queued_free = n->queued[i].next;
    /* the next send takes it: its line is far in the pool */
    if (n->queued_free != VCN_NIL) __builtin_prefetch(&n->queued[n->queued_free], 1);
  } else {
    if (n->queued_used == n->queued_cap && !grow_queued(n)) return VCN_NIL;
    i = n->queued_used++;
  }
  vcn_queued *q = &n->queued[i];
  q->tag = tag;
  q->t_created = n->now;
  q->dst_ep = dst_ep;
  q->size = (uint32_t)size;
  q->next = VCN_NIL;
  if (n->ep[src_ep].q_tail == VCN_NIL) n->ep[src_ep].q_head = i;
  else n->queued[n->ep[src_ep].q_tail].next = i;
  n->ep[src_ep].q_tail = i;
  n->pkts_live++;
  activate_ep(n, (uint32_t)src_ep);
  return i;
}

/* Endpoint e starts the packet at the head of its queue: it leaves the queue for the pool.
 * Returns its pool index, or VCN_NIL when out of memory. */
static uint32_t start_packet(vcn_net *n, uint32_t e) {
  if (n->pkt_free == VCN_NIL && !grow_pkts(n)) return VCN_NIL;
  uint32_t i = n->pkt_free, qi = n->ep[e].q_head;
  vcn_pkt *p = &n->pkt[i];
  const vcn_queued *q = &n->queued[qi];
  n->pkt_free = p->next;
  memset(p, 0, sizeof *p);
  p->next = VCN_NIL;
  p->src_ep = (int32_t)e;
  p->dst_ep = q->dst_ep;
  p->dst_router = n->t.epr == 1 ? q->dst_ep : q->dst_ep / n->t.epr;
  p->size = (uint16_t)q->size;
  p->rs.dim = -1;
  p->rs.src = n->t.epr == 1 ? (int32_t)e : (int32_t)e / n->t.epr;
  p->tag = q->tag;
  p->t_created = q->t_created;
  p->first_vc = p->last_vc = -1;
  n->ep[e].q_head = q->next;
  if (q->next == VCN_NIL) n->ep[e].q_tail = VCN_NIL;
  n->queued[qi].next = n->queued_free;
  n->queued_free = qi;
  n->ep[e].pkt = i;
  n->ep[e].size = p->size;
  return i;
}

/* What the index arithmetic of the flit landing and the router pass depends on.  The generic
 * passes read it from the network; the shapes of the pod and BookSim studies are compiled with it
 * constant (land_all_flits, step_all_routers), so the VC index products become shifts and the
 * mask loops run once. */
typedef struct vcn_shape {
  int P, V, D, links, words;
  size_t stride;
  bool fixed; /* compiled constant: li / V is a shift, no table */
} vcn_shape;

/* A flit lands in input VC `to`. */
static inline __attribute__((always_inline)) void land_flit(vcn_net *restrict n, uint32_t to, vcn_flit flit,
                                                            const vcn_shape sh) {
  vcn_vc *const vc = (vcn_vc *)(n->vcs + (size_t)to * sh.stride);
  uint32_t pos = (uint32_t)vc->head + vc->count;
  if (pos >= (uint32_t)sh.D) pos -= (uint32_t)sh.D;
  VC_SLOTS(vc)[pos] = flit;
  const uint32_t PV = (uint32_t)(sh.P * sh.V);
  uint32_t r = sh.fixed ? to / PV : (uint32_t)(((uint64_t)to * n->pv_magic) >> 40);
  if (vc->count++ == 0) {
    uint32_t li = to - r * PV;
    n->nonempty[(size_t)r * (size_t)sh.words + (li >> 6)] |= 1ull << (li & 63);
  }
  n->router_flits[r]++;
  activate_router(n, r);
}

/* A flit reaches its endpoint; its packet is delivered with its tail. */
static inline void land_eject(vcn_net *restrict n, vcn_flit flit) {
  uint32_t pi = VCN_FLIT_PKT(flit);
  n->st.flits_ejected++;
  if (VCN_FLIT_TAIL(flit)) {
    n->st.packets_ejected++;
    if (n->on_deliver) n->on_deliver(n->ctx, n, pi);
    n->pkt[pi].next = n->pkt_free;
    n->pkt_free = pi;
    n->pkts_live--;
  }
}

/* Endpoint e sends the next flit of the packet at the head of its queue, if a VC and a credit
 * allow; returns false when its queue is empty. */
static bool endpoint_step(vcn_net *n, vcn_due *due, uint32_t e) {
  uint32_t pi = n->ep[e].pkt;
  if (pi == VCN_NIL && n->ep[e].q_head == VCN_NIL) return false;
  int V = n->V;
  if (n->ep[e].vc < 0) {
    /* a packet starts in class 0 */
    int span = n->vcs_per_class;
    for (int k = 0; k < span; k++) {
      int v = (n->ep[e].rr + k) % span;
      if (!n->ep_vc_busy[(size_t)e * V + v]) {
        n->ep[e].vc = v;
        n->ep_vc_busy[(size_t)e * V + v] = 1;
        n->ep[e].rr = (uint16_t)((v + 1) % span);
        break;
      }
    }
    if (n->ep[e].vc < 0) return true;
  }
  int v = n->ep[e].vc;
  if (n->ep_credits[(size_t)e * V + v] <= 0) return true;
  if (pi == VCN_NIL && (pi = start_packet(n, e)) == VCN_NIL) {
    n->oom = 1;
    return true;
  }
  n->ep_credits[(size_t)e * V + v]--;
  vcn_endpoint *ep = &n->ep[e];
  bool head = ep->sent == 0, tail = ep->sent + 1 == ep->size;
  *due->inject++ = (vcn_event){ep->inject_to + (uint32_t)v, VCN_FLIT(pi, head, tail)};
  n->st.flits_injected++;
  if (head) { /* the packet's record is touched by its head and its tail only */
    n->pkt[pi].t_head_in = n->now;
    n->pkt[pi].first_vc = (int16_t)v;
  }
  ep->sent++;
  if (tail) {
    n->pkt[pi].t_tail_out = n->now;
    n->ep_vc_busy[(size_t)e * V + v] = 0;
    n->ep[e].vc = -1;
    n->ep[e].sent = 0;
    n->ep[e].pkt = VCN_NIL;
    n->st.packets_injected++;
    if (n->on_sent) n->on_sent(n->ctx, n, pi);
    /* the next packet may start in the next cycle: its queue entry, and the record it takes */
    if (n->ep[e].q_head != VCN_NIL) __builtin_prefetch(&n->queued[n->ep[e].q_head], 0);
    if (n->pkt_free != VCN_NIL) __builtin_prefetch(&n->pkt[n->pkt_free], 1);
  }
  return true;
}

/* x + 1 on a cycle of n positions (0 <= x < n); a mask when n is a constant power of two, as in
 * the router pass compiled for a shape. */
static inline int next_of(int x, int n) {
  if (__builtin_constant_p(n) && (n & (n - 1)) == 0) return (x + 1) & (n - 1);
  return x + 1 == n ? 0 : x + 1;
}

/* Distance from pointer rr forward to x on a cycle of n positions (0 <= x, rr < n). */
static inline int wrap_dist(int x, int rr, int n) { return x >= rr ? x - rr : x - rr + n; }

/* First set bit of mask at or after position from (cyclic over width bits), or -1. */
static int first_from(uint64_t mask, int from, int width) {
  if (!mask) return -1;
  uint64_t hi = mask >> from;
  if (hi) return from + __builtin_ctzll(hi);
  (void)width;
  return __builtin_ctzll(mask);
}

/* The len (< 32) bits of a multi-word mask starting at bit pos. */
static inline uint64_t bits_at(const uint64_t *words, int pos, int len) {
  uint64_t x = words[pos >> 6] >> (pos & 63);
  if ((pos & 63) + len > 64) x |= words[(pos >> 6) + 1] << (64 - (pos & 63));
  return x & ((1ull << len) - 1);
}

/* What a router step reads for every flit, in a local the compiler keeps in registers: a store
 * into the network's arrays would make it reload these from the network otherwise. */
typedef struct vcn_step {
  unsigned char *vcs;     /* the router's first VC record */
  size_t stride;
  int32_t *credit;        /* the router's first output VC */
  vcn_port *port;         /* the router's first port */
  uint64_t *nonempty, *ovc_busy; /* the router's masks */
  vcn_pkt *pkt;
  vcn_due *due;
  int P, V, D, links;
  uint32_t flits_sent, hops;
} vcn_step;

/* Router-local VC li's record. */
static inline vcn_vc *step_vc(const vcn_step *s, int li) {
  return (vcn_vc *)(s->vcs + (size_t)li * s->stride);
}

/* Sends the flit at the front of input VC (ip, v) through output port op (switch traversal). */
static inline __attribute__((always_inline)) void traverse(vcn_step *s, int ip, int v, int op) {
  const int V = s->V, links = s->links;
  vcn_port *const port = s->port;
  const int li = ip * V + v;
  vcn_vc *const in = step_vc(s, li);
  const vcn_flit f = VC_SLOTS(in)[in->head];
  const uint32_t pi = VCN_FLIT_PKT(f);
  in->head = (uint16_t)next_of(in->head, s->D);
  if (--in->count == 0) s->nonempty[li >> 6] &= ~(1ull << (li & 63));
  s->flits_sent++;
  port[ip].sa_in_rr = (uint16_t)next_of(v, V);
  port[op].sa_out_rr = (uint16_t)next_of(ip, s->P);
  const int ov = in->out_vc;
  /* the freed buffer slot goes back upstream as a credit */
  if (ip < links)
    *s->due->link++ = port[ip].credit_to + (uint32_t)v;
  else
    *s->due->ep++ = port[ip].credit_to + (uint32_t)v;
  if (op < links) {
    s->credit[op * V + ov]--;
    *s->due->hop++ = (vcn_event){port[op].flit_to + (uint32_t)ov, f};
    s->hops++;
    if (VCN_FLIT_HEAD(f)) s->pkt[pi].hops++;
  } else {
    if (VCN_FLIT_HEAD(f)) s->pkt[pi].last_vc = (int16_t)ov;
    *s->due->eject++ = (vcn_event){port[op].flit_to, f};
  }
  if (VCN_FLIT_TAIL(f)) {
    int oli = op * V + ov;
    s->ovc_busy[oli >> 6] &= ~(1ull << (oli & 63));
    in->state = VCN_IDLE;
  }
}

/* Route computation for the packet whose head is at the front of input VC g of router r. */
static inline void route_head(vcn_net *restrict n, uint32_t r, vcn_pkt *p, int *op, int *cls) {
  int mode = n->routing->dor;
  if (!mode) {
    n->routing->fn(&n->t, (int)r, p->dst_router, p->dst_ep % n->t.epr, &p->rs, op, cls);
    return;
  }
  /* dimension order from the coordinate table: the same decision as the routing function */
  const uint8_t *cur = &n->coord[(size_t)r * VCN_MAX_DIMS];
  const uint8_t *dst = &n->coord[(size_t)p->dst_router * VCN_MAX_DIMS];
  for (int d = 0; d < n->t.ndims; d++)
    if (cur[d] != dst[d]) {
      vcn_dor_hop(&n->t, d, cur[d], dst[d], mode, &p->rs, op, cls);
      return;
    }
  *op = 2 * n->t.ndims + (p->dst_ep - p->dst_router * n->t.epr);
  *cls = 0;
}

/* Input VC li of the router of step s accepts, among the output VCs granted to it (bit i of
 * `granted`: VC first + i, router-local; at least one), the one nearest after its pointer. */
static inline void va_accept(vcn_net *restrict n, const vcn_step *s, int li, int first, int span,
                             uint32_t granted) {
  vcn_vc *const vc = step_vc(s, li);
  /* the pointer may come from a port with a wider range (ejection takes any VC) */
  int from = vc->va_in_rr < span ? vc->va_in_rr : vc->va_in_rr % span;
  int i = first_from(granted, from, span), o = first + i;
  s->ovc_busy[o >> 6] |= 1ull << (o & 63);
  step_vc(s, o)->va_rr = (uint16_t)next_of(li, s->P * s->V);
  vc->va_in_rr = (uint16_t)next_of(i, span);
  vc->out_vc = (uint16_t)(o - vc->out_port * s->V);
  vc->state = VCN_ACTIVE;
  vc->ready = n->now + (uint64_t)n->p.va_delay;
}

/* The common case of switch allocation, found while a router step lists its VCs: the requests
 * (VCs with a credit) come from distinct input ports and go to distinct output ports, so every
 * one is granted and accepted, and the pointers move as the general rounds would move them. */
typedef struct sa_fast {
  uint64_t outs;   /* output ports with a request */
  int last_ip;     /* input port of the last request */
  /* nonzero when two requests share a port, or a request came after one of a higher input
   * port: the general rounds decide (with no conflict they decide as the fast path would) */
  uint32_t shared;
  int n;           /* the requesting VCs, in ascending input ports while `shared` is zero */
  int16_t li[VCN_MAX_PORTS];
} sa_fast;

/* Active input VC li (of input port ip) asks for its output port, if it holds a credit.  The
 * VCs are listed in ascending order, so requests from distinct input ports come in port order. */
static inline void sa_ask(sa_fast *q, const vcn_step *s, int ip, int li, const vcn_vc *vc) {
  int op = vc->out_port;
  if (s->credit[op * s->V + vc->out_vc] <= 0) return;
  q->shared |= (uint32_t)(ip <= q->last_ip) | (uint32_t)(q->outs >> op & 1);
  q->outs |= 1ull << op;
  q->last_ip = ip;
  if (!q->shared) q->li[q->n++] = (int16_t)li; /* distinct input ports: one request a port */
}

/* Steps router r; returns the flits it sent and adds those that crossed a link to *hops. */
static inline __attribute__((always_inline)) uint32_t router_step(vcn_net *restrict n, vcn_due *due,
                                                                  uint32_t r, const vcn_shape sh,
                                                                  uint64_t *hops) {
  const int P = sh.P, V = sh.V, PV = P * V, links = sh.links, words = sh.words;
  const uint64_t t = n->now;
  const size_t base = (size_t)r * (size_t)PV, rp = (size_t)r * (size_t)P;
  vcn_step s = {n->vcs + base * sh.stride, sh.stride, &n->credit[base], &n->port[rp],
                &n->nonempty[(size_t)r * (size_t)words], &n->ovc_busy[(size_t)r * (size_t)words],
                n->pkt, due, P, V, sh.D, links, 0, 0};
  const uint8_t *const port_of = n->port_of;
#define PORT_OF(li) (sh.fixed ? (li) / V : port_of[li])
  int16_t waiting[VCN_MAX_PORTS * VCN_MAX_VCS];
  int nwait = 0;
  sa_fast fast;
  fast.outs = 0, fast.last_ip = -1, fast.shared = 0, fast.n = 0;
  /* one pass over the VCs holding flits: route computation for a head at the front of an idle
   * VC, the list of VCs ready for VC allocation, and the requests of those past it */
  for (int w = 0; w < words; w++)
    for (uint64_t bits = s.nonempty[w]; bits; bits &= bits - 1) {
      int li = w * 64 + __builtin_ctzll(bits);
      vcn_vc *const vc = step_vc(&s, li);
      uint8_t st = vc->state;
      if (st == VCN_IDLE) {
        const vcn_flit f = VC_SLOTS(vc)[vc->head];
        int op, cls;
        route_head(n, r, &n->pkt[VCN_FLIT_PKT(f)], &op, &cls);
        vc->out_port = (uint8_t)op;
        vc->out_cls = (uint8_t)cls;
        vc->state = st = VCN_VA;
        vc->ready = t + (uint64_t)n->p.rc_delay; /* the head arrived in this cycle or before */
      }
      if (vc->ready > t) continue;
      if (st == VCN_VA) {
        waiting[nwait++] = (int16_t)li;
      } else {
        sa_ask(&fast, &s, PORT_OF(li), li, vc);
      }
    }
  /* VC allocation, one iteration of request-grant-accept (iSLIP style): every waiting input VC
   * requests every free output VC of its class at its output port; every requested output VC
   * grants the requester nearest after its round-robin pointer; every input VC accepts the grant
   * nearest after its own pointer.  Pointers move only on an accepted grant. */
  if (nwait == 1) {
    /* a lone requester is granted every free output VC it asks for */
    int li = waiting[0];
    int op = step_vc(&s, li)->out_port;
    int lo = op < links ? step_vc(&s, li)->out_cls * n->vcs_per_class : 0;
    int span = op < links ? n->vcs_per_class : V;
    uint32_t cand = (uint32_t)~bits_at(s.ovc_busy, op * V + lo, span) &
                    ((1u << span) - 1);
    if (cand) {
      va_accept(n, &s, li, op * V + lo, span, cand);
      if (n->p.va_delay == 0) {
        sa_ask(&fast, &s, PORT_OF(li), li, step_vc(&s, li));
      }
    }
  } else if (nwait) {
    int16_t grant_of[VCN_MAX_PORTS * VCN_MAX_VCS]; /* valid where `granted` has the bit */
    uint64_t granted[(VCN_MAX_PORTS * VCN_MAX_VCS + 63) / 64];
    uint8_t lo_of[VCN_MAX_PORTS * VCN_MAX_VCS], span_of[VCN_MAX_PORTS * VCN_MAX_VCS];
    uint32_t cand_of[VCN_MAX_PORTS * VCN_MAX_VCS]; /* bit i: output VC lo + i is free */
    const uint64_t *busy = s.ovc_busy;
    granted[0] = 0; /* one word unless a router has more than 64 VCs */
    for (int w = 1; w < words; w++) granted[w] = 0;
    int nreq = 0; /* the waiting VCs with a free output VC to request, in order */
    for (int k = 0; k < nwait; k++) {
      int li = waiting[k];
      int op = step_vc(&s, li)->out_port;
      int lo = op < links ? step_vc(&s, li)->out_cls * n->vcs_per_class : 0;
      int span = op < links ? n->vcs_per_class : V;
      int first = op * V + lo;
      uint32_t cand = (uint32_t)~bits_at(busy, first, span) & ((1u << span) - 1);
      if (!cand) continue;
      waiting[nreq] = (int16_t)li, lo_of[nreq] = (uint8_t)lo, span_of[nreq] = (uint8_t)span;
      cand_of[nreq++] = cand;
      for (uint32_t bits = cand; bits; bits &= bits - 1) {
        int o = first + __builtin_ctz(bits);
        uint64_t bit = 1ull << (o & 63);
        if (!(granted[o >> 6] & bit)) {
          granted[o >> 6] |= bit;
          grant_of[o] = (int16_t)li;
        } else {
          int rr = step_vc(&s, o)->va_rr;
          if (wrap_dist(li, rr, PV) < wrap_dist(grant_of[o], rr, PV)) grant_of[o] = (int16_t)li;
        }
      }
    }
    for (int k = 0; k < nreq; k++) {
      int li = waiting[k];
      int first = step_vc(&s, li)->out_port * V + lo_of[k], span = span_of[k];
      uint32_t mine = 0; /* bit i: output VC lo + i granted to this VC */
      for (uint32_t bits = cand_of[k]; bits; bits &= bits - 1) {
        int i = __builtin_ctz(bits);
        if (grant_of[first + i] == li) mine |= 1u << i;
      }
      if (!mine) continue;
      va_accept(n, &s, li, first, span, mine);
      if (n->p.va_delay == 0) {
        sa_ask(&fast, &s, PORT_OF(li), li, step_vc(&s, li));
      }
    }
  }
  if (!fast.shared) {
    for (int k = 0; k < fast.n; k++) { /* ascending input ports */
      const int li = fast.li[k], ip = PORT_OF(li), op = step_vc(&s, li)->out_port;
      s.port[ip].sa_acc_rr = (uint16_t)next_of(op, P);
      traverse(&s, ip, li - ip * V, op);
    }
    *hops += s.hops;
    return s.flits_sent;
  }
  /* switch allocation, one iteration of request-grant-accept: an input port requests every
   * output port one of its VCs (with a flit, past VC allocation, holding a credit) wants, naming
   * for each the VC nearest after its VC pointer; each output port grants the input port nearest
   * after its pointer; each input port accepts the grant nearest after its own output pointer. */
  int8_t want[VCN_MAX_PORTS][VCN_MAX_PORTS]; /* [ip][op]: VC; valid where in_req has the bit */
  _Static_assert(VCN_MAX_PORTS <= 64, "port masks are 64 bits");
  uint64_t in_req[VCN_MAX_PORTS], out_req[VCN_MAX_PORTS], granted[VCN_MAX_PORTS];
  uint64_t inputs = 0, outputs = 0, accepting = 0; /* ports with a request / a grant */
  /* the VCs past VC allocation and ready (those that passed it in this step included) */
  for (int w = 0; w < words; w++)
    for (uint64_t bits = s.nonempty[w]; bits; bits &= bits - 1) {
      const int li = w * 64 + __builtin_ctzll(bits), ip = PORT_OF(li), v = li - ip * V;
      const vcn_vc *vc = step_vc(&s, li);
      if (vc->state != VCN_ACTIVE || vc->ready > t) continue;
      int op = vc->out_port;
      if (s.credit[op * V + vc->out_vc] <= 0) continue;
      if (!(inputs >> ip & 1)) inputs |= 1ull << ip, in_req[ip] = 0;
      if (!(outputs >> op & 1)) outputs |= 1ull << op, out_req[op] = 0;
      int rr = s.port[ip].sa_in_rr;
      if (!(in_req[ip] >> op & 1u) || wrap_dist(v, rr, V) < wrap_dist(want[ip][op], rr, V))
        want[ip][op] = (int8_t)v;
      in_req[ip] |= 1ull << op;
      out_req[op] |= 1ull << ip;
    }
  for (uint64_t bits = outputs; bits; bits &= bits - 1) {
    int op = __builtin_ctzll(bits);
    int ip = first_from(out_req[op], s.port[op].sa_out_rr, P);
    if (!(accepting >> ip & 1)) accepting |= 1ull << ip, granted[ip] = 0;
    granted[ip] |= 1ull << op;
  }
  /* ascending input ports, as the events they schedule must be ordered */
  for (uint64_t bits = accepting; bits; bits &= bits - 1) {
    int ip = __builtin_ctzll(bits);
    int op = first_from(granted[ip], s.port[ip].sa_acc_rr, P);
    s.port[ip].sa_acc_rr = (uint16_t)next_of(op, P);
    traverse(&s, ip, want[ip][op], op);
  }
  *hops += s.hops;
  return s.flits_sent;
#undef PORT_OF
}

/* Fetches the VCs of router r that hold flits, for its step after the current one. */
static inline __attribute__((always_inline)) void prefetch_router(const vcn_net *n, uint32_t r,
                                                                  const vcn_shape sh) {
  const unsigned char *vcs = n->vcs + (size_t)r * (size_t)(sh.P * sh.V) * sh.stride;
  const uint64_t *mask = &n->nonempty[(size_t)r * (size_t)sh.words];
  for (int w = 0; w < sh.words; w++)
    for (uint64_t bits = mask[w]; bits; bits &= bits - 1)
      __builtin_prefetch(vcs + (size_t)(w * 64 + __builtin_ctzll(bits)) * sh.stride, 1);
}

/* Steps every router holding flits, in ascending order, so the sweep runs through memory in
 * order (the order changes no result: a router step reads and writes only its router's state). */
static inline __attribute__((always_inline)) void step_routers(vcn_net *restrict n, vcn_due *due,
                                                               const vcn_shape sh) {
  uint64_t hops = 0;
  for (uint32_t top = 0; top * 4096 < (uint32_t)n->t.routers; top++)
    for (uint64_t words = n->active_words[top]; words; words &= words - 1) {
      uint32_t w = top * 64 + (uint32_t)__builtin_ctzll(words);
      if (!take_steps(n, due, 64)) return;
      for (uint64_t bits = n->active_bits[w]; bits; bits &= bits - 1) {
        uint32_t r = w * 64 + (uint32_t)__builtin_ctzll(bits);
        uint64_t later = bits & (bits - 1);
        if (later) prefetch_router(n, w * 64 + (uint32_t)__builtin_ctzll(later), sh);
        if (!(n->router_flits[r] -= router_step(n, due, r, sh, &hops))) {
          n->active_bits[w] &= ~(1ull << (r & 63));
          n->n_active--;
        }
      }
      if (!n->active_bits[w]) n->active_words[top] &= ~(1ull << (w & 63));
    }
  n->st.flit_hops += hops;
}

#define SHAPE(P_, V_, D_, links_) ((vcn_shape){P_, V_, D_, links_, 1, vcn_vc_stride(D_), true})

/* Lands the flits due in wheel slot `slot` in their input VCs.  What a flit touches is spread
 * over the network, so its VC line is fetched a few events ahead.  Events landing now may
 * schedule nothing into these buckets (every delay is >= 1). */
static inline __attribute__((always_inline)) void land_flits(vcn_net *restrict n, uint32_t slot,
                                                             const vcn_shape sh) {
  for (int k = VCN_INJECT; k <= VCN_HOP; k++) {
    vcn_bucket *b = &n->wheel[k][slot];
    for (uint32_t i = 0; i < b->n; i++) {
      __builtin_prefetch(n->vcs + (size_t)b->ev[i + PREFETCH_AHEAD].to * sh.stride, 1);
      land_flit(n, b->ev[i].to, b->ev[i].flit, sh);
    }
    b->n = 0;
  }
}

/* The shape of network n: one compiled for its numbers, or the generic one. */
enum { SHAPE_7_4, SHAPE_7_2, SHAPE_5_4, SHAPE_5_2, SHAPE_GENERIC };
static int shape_of(const vcn_net *n) {
  if (n->D != 8 || n->t.fattree || n->t.epr != 1 || (n->V != 4 && n->V != 2)) return SHAPE_GENERIC;
  if (n->t.ndims == 3) return n->V == 4 ? SHAPE_7_4 : SHAPE_7_2;
  if (n->t.ndims == 2) return n->V == 4 ? SHAPE_5_4 : SHAPE_5_2;
  return SHAPE_GENERIC;
}
#define GENERIC_SHAPE(n) ((vcn_shape){(n)->P, (n)->V, (n)->D, (n)->t.links, (n)->words, (n)->vc_stride, false})

/* The landing and the router pass, each compiled for the common shapes (3-D and 2-D mesh/torus
 * with one endpoint a router, 2 or 4 VCs of 8 flits) and generic otherwise: the same code. */
static void land_all_flits(vcn_net *restrict n, uint32_t slot) {
  switch (shape_of(n)) {
    case SHAPE_7_4: land_flits(n, slot, SHAPE(7, 4, 8, 6)); break;
    case SHAPE_7_2: land_flits(n, slot, SHAPE(7, 2, 8, 6)); break;
    case SHAPE_5_4: land_flits(n, slot, SHAPE(5, 4, 8, 4)); break;
    case SHAPE_5_2: land_flits(n, slot, SHAPE(5, 2, 8, 4)); break;
    default: land_flits(n, slot, GENERIC_SHAPE(n));
  }
}
static void step_all_routers(vcn_net *restrict n, vcn_due *due) {
  switch (shape_of(n)) {
    case SHAPE_7_4: step_routers(n, due, SHAPE(7, 4, 8, 6)); break;
    case SHAPE_7_2: step_routers(n, due, SHAPE(7, 2, 8, 6)); break;
    case SHAPE_5_4: step_routers(n, due, SHAPE(5, 4, 8, 4)); break;
    case SHAPE_5_2: step_routers(n, due, SHAPE(5, 2, 8, 4)); break;
    default: step_routers(n, due, GENERIC_SHAPE(n));
  }
}

void vcn_net_cycle(vcn_net *n) {
  const uint32_t slot = (uint32_t)(n->now & (n->wheel_size - 1));
  /* credits first: they are increments into arrays that stay in the cache */
  vcn_cbucket *cb = &n->cwheel[VCN_LINK_CREDIT][slot];
  for (uint32_t i = 0, count = cb->n; i < count; i++) n->credit[cb->to[i]]++;
  cb->n = 0;
  cb = &n->cwheel[VCN_EP_CREDIT][slot];
  for (uint32_t i = 0, count = cb->n; i < count; i++) n->ep_credits[cb->to[i]]++;
  cb->n = 0;
  /* the kinds land apart: a VC receives at most one flit a cycle and a landing touches only its
   * VC and router, so only the order of the deliveries among themselves is seen (by the owner) */
  land_all_flits(n, slot);
  vcn_bucket *b = &n->wheel[VCN_EJECT][slot];
  for (uint32_t i = 0; i < b->n; i++) {
    const vcn_flit ahead = b->ev[i + PREFETCH_AHEAD].flit; /* the packet it may deliver */
    if (VCN_FLIT_TAIL(ahead)) __builtin_prefetch(&n->pkt[VCN_FLIT_PKT(ahead)], 1);
    land_eject(n, b->ev[i].flit);
  }
  b->n = 0;
  vcn_due due;
  if (!open_due(n, &due)) {
    n->oom = 1;
    return;
  }
  for (uint32_t i = 0; i < n->n_ep_active;) {
    uint32_t e = n->ep_active[i];
    if (!take_steps(n, &due, 1)) return;
    if (endpoint_step(n, &due, e)) {
      i++;
    } else {
      n->ep_is_active[e] = 0;
      n->ep_active[i] = n->ep_active[--n->n_ep_active];
    }
  }
  step_all_routers(n, &due);
  if (n->oom) return;
  close_due(n, &due);
  n->now++;
  n->st.cycles++;
}

/* True when an event of some kind lands in wheel slot i. */
static bool slot_busy(const vcn_net *n, uint32_t i) {
  for (int k = 0; k < VCN_FLIT_KINDS; k++)
    if (n->wheel[k][i].n) return true;
  for (int k = 0; k < VCN_CREDIT_KINDS; k++)
    if (n->cwheel[k][i].n) return true;
  return false;
}

/* True when a flit or a credit is in flight. */
static bool events_pending(const vcn_net *n) {
  for (uint32_t i = 0; i < n->wheel_size; i++)
    if (slot_busy(n, i)) return true;
  return false;
}

bool vcn_net_quiet(const vcn_net *n) {
  return n->n_active == 0 && n->n_ep_active == 0 && !events_pending(n);
}

void vcn_net_skip_idle(vcn_net *n, uint64_t limit) {
  if (n->n_active || n->n_ep_active || n->now >= limit) return;
  uint64_t target = limit;
  for (uint64_t c = n->now; c < n->now + n->wheel_size; c++)
    if (slot_busy(n, (uint32_t)(c & (n->wheel_size - 1)))) {
      target = c < limit ? c : limit;
      break;
    }
  n->st.skipped_cycles += target - n->now;
  n->st.cycles += target - n->now;
  n->now = target;
}

int vcn_net_check(const vcn_net *n, cs_err *err) {
  const int P = n->P, V = n->V, links = n->t.links;
  const size_t R = (size_t)n->t.routers, E = (size_t)n->t.endpoints;
  /* in flight: flits per input VC and credits per output VC / endpoint VC */
  size_t nvc = R * (size_t)P * (size_t)V;
  int32_t *fly = calloc(nvc, sizeof *fly), *cred = calloc(nvc, sizeof *cred);
  int32_t *epcred = calloc(E * (size_t)V, sizeof *epcred);
  int rc = CS_OK;
  if (!fly || !cred || !epcred) {
    rc = cs_err_set(err, CS_ENOMEM, "vcnet check: out of memory");
    goto out;
  }
  for (uint32_t w = 0; w < n->wheel_size; w++)
    for (int k = VCN_INJECT; k <= VCN_HOP; k++)
      for (uint32_t i = 0; i < n->wheel[k][w].n; i++) fly[n->wheel[k][w].ev[i].to]++;
  for (uint32_t w = 0; w < n->wheel_size && !rc; w++)
    for (uint32_t i = 0; i < n->wheel[VCN_EJECT][w].n; i++) {
      const vcn_event *ev = &n->wheel[VCN_EJECT][w].ev[i];
      if ((int32_t)ev->to != n->pkt[VCN_FLIT_PKT(ev->flit)].dst_ep) {
        rc = cs_err_set(err, CS_EINTERNAL, "vcnet check: a flit of packet %u ejects at endpoint %u, not %d",
                        VCN_FLIT_PKT(ev->flit), ev->to, n->pkt[VCN_FLIT_PKT(ev->flit)].dst_ep);
        break;
      }
    }
  if (rc) goto out;
  for (uint32_t w = 0; w < n->wheel_size; w++) {
    for (uint32_t i = 0; i < n->cwheel[VCN_LINK_CREDIT][w].n; i++) cred[n->cwheel[VCN_LINK_CREDIT][w].to[i]]++;
    for (uint32_t i = 0; i < n->cwheel[VCN_EP_CREDIT][w].n; i++) epcred[n->cwheel[VCN_EP_CREDIT][w].to[i]]++;
  }
  for (size_t r = 0; r < R && !rc; r++) {
    uint32_t flits = 0;
    for (int ip = 0; ip < P && !rc; ip++)
      for (int v = 0; v < V && !rc; v++) {
        size_t g = (r * (size_t)P + (size_t)ip) * (size_t)V + (size_t)v;
        flits += VC(n, g)->count;
        int32_t upstream;
        if (ip < links) {
          int up = -1, up_port = 0;
          vcn_topo_upstream(&n->t, (int)r, ip, &up, &up_port);
          if (up < 0) {
            if (VC(n, g)->count || fly[g]) rc = cs_err_set(err, CS_EINTERNAL, "vcnet check: flits on a missing link");
            continue;
          }
          size_t og = ((size_t)up * (size_t)P + (size_t)up_port) * (size_t)V + (size_t)v;
          upstream = n->credit[og] + cred[og];
        } else {
          size_t e = r * (size_t)n->t.epr + (size_t)(ip - links);
          if (e >= E) { /* a fat tree's row/column switch has no endpoints */
            if (VC(n, g)->count || fly[g]) rc = cs_err_set(err, CS_EINTERNAL, "vcnet check: flits on a switch's endpoint port");
            continue;
          }
          upstream = n->ep_credits[e * (size_t)V + (size_t)v] + epcred[e * (size_t)V + (size_t)v];
        }
        int32_t total = upstream + VC(n, g)->count + fly[g];
        if (total != n->D)
          rc = cs_err_set(err, CS_EINTERNAL,
                          "vcnet check at cycle %llu: router %zu input port %d VC %d: credits %d + "
                          "buffered %u + in flight %d != depth %d",
                          (unsigned long long)n->now, r, ip, v, (int)upstream,
                          VC(n, g)->count, fly[g], n->D);
      }
    if (!rc && flits != n->router_flits[r])
      rc = cs_err_set(err, CS_EINTERNAL, "vcnet check: router %zu holds %u flits, counter says %u",
                      r, flits, n->router_flits[r]);
  }
out:
  free(fly);
  free(cred);
  free(epcred);
  return rc;
}
