/* Transactions of the adapter contract on the router network.
 *
 *   write: req phase = a packet of the burst's data flits from the GDMA endpoint to the DDR
 *          endpoint; rsp phase = a one-flit write response back.
 *   read:  req phase = a one-flit read request; rsp phase = the burst's data flits back.
 *
 * A logical GDMA id and a logical DDR id both name endpoint id (router id / endpoints_per_router,
 * local index id mod endpoints_per_router).  An endpoint issues a request only while one of its
 * master trackers of that kind (mst_rd/wr_outstanding) is free, holding it until the final
 * completion; a request that reaches its target waits in the endpoint (off the network, so it
 * never blocks a link) until a slave tracker (slv_rd/wr_outstanding) is free: that moment is the
 * req-phase completion.  The slave tracker is released when the response's tail leaves the
 * target. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/hash.h"
#include "commsweep/topo.h"
#include "commsweep/vcnet.h"
#include "vcnet_txn.h"

enum { ST_NEW = 0, ST_MST_WAIT, ST_REQ_NET, ST_SLV_WAIT, ST_AT_SLV, ST_RSP_NET, ST_DONE };
enum { KIND_REQ = 0, KIND_RSP = 1 };
/* A packet's tag: its transaction's slot, whether it is a read, and req or rsp; so the network's
 * callbacks learn from the packet alone what they need before they touch the slot, which at pod
 * scale is a cache miss. */
#define TAG(s, is_read, kind) ((uint64_t)(s) << 2 | (uint64_t)(is_read) << 1 | (uint64_t)(kind))
#define TAG_SLOT(tag) ((uint32_t)((tag) >> 2))
#define TAG_READ(tag) ((bool)((tag) >> 1 & 1))
#define TAG_KIND(tag) ((int)((tag) & 1))


static uint64_t tick_of(const vcn_engine *e, uint64_t c) { return c * e->tick_num / e->tick_den; }

static int push_completion(vcn_engine *e, uint32_t s, uint8_t phase) {
  if (e->comp_n == e->comp_cap) {
    size_t cap = e->comp_cap ? e->comp_cap * 2 : 256;
    vcn_completion *c = malloc(cap * sizeof *c);
    if (!c) return CS_ENOMEM;
    for (size_t i = 0; i < e->comp_n; i++) c[i] = e->comp[(e->comp_head + i) % e->comp_cap];
    free(e->comp);
    e->comp = c;
    e->comp_cap = cap;
    e->comp_head = 0;
  }
  e->comp[(e->comp_head + e->comp_n) % e->comp_cap] =
      (vcn_completion){{e->txns[s].id, tick_of(e, e->net->now), phase}, s};
  e->comp_n++;
  return CS_OK;
}

/* ---- slots and runs ------------------------------------------------------------------------ */

/* The uint32 link at byte `next_at` of element i of an array of `size`-byte elements. */
static uint32_t *link_of(void *base, size_t size, size_t next_at, uint32_t i) {
  return (uint32_t *)((char *)base + (size_t)i * size + next_at);
}

/* Takes an element off a free list threaded through the elements' links, doubling the array (to
 * `first` elements at first) when the list is empty; VCN_NIL when out of memory. */
static uint32_t pool_take(void **base, uint32_t *cap, uint32_t *free_head, size_t size,
                          size_t next_at, uint32_t first) {
  if (*free_head == VCN_NIL) {
    uint32_t grown = *cap ? 2 * *cap : first;
    void *p = grown > *cap ? realloc(*base, (size_t)grown * size) : NULL;
    if (!p) return VCN_NIL;
    for (uint32_t i = grown; i-- > *cap;) {
      *link_of(p, size, next_at, i) = *free_head;
      *free_head = i;
    }
    *base = p;
    *cap = grown;
  }
  uint32_t i = *free_head;
  *free_head = *link_of(*base, size, next_at, i);
  return i;
}

/* A free slot; the slots a growth adds are free (ST_NEW), so the live ones can be told apart. */
static uint32_t slot_new(vcn_engine *e) {
  uint32_t had = e->txn_cap;
  uint32_t s = pool_take((void **)&e->txns, &e->txn_cap, &e->txn_free, sizeof(vcn_txn),
                         offsetof(vcn_txn, next), 256);
  for (uint32_t i = had; s != VCN_NIL && i < e->txn_cap; i++) e->txns[i].state = ST_NEW;
  return s;
}

/* The slot of live request id through the map (built from the live slots at its first use), or
 * CS_IDMAP_NONE; without memory for the map, a scan of the slots. */
static uint32_t slot_by_map(const vcn_engine *e, uint64_t id) {
  vcn_lookup *l = e->look;
  if (!l->kept) {
    bool built = true;
    for (uint32_t i = 0; i < e->txn_cap && built; i++)
      if (e->txns[i].state != ST_NEW) built = !cs_idmap_put(&l->by_id, e->txns[i].id, i);
    if (!built) {
      cs_idmap_free(&l->by_id);
      for (uint32_t i = 0; i < e->txn_cap; i++)
        if (e->txns[i].state != ST_NEW && e->txns[i].id == id) return i;
      return CS_IDMAP_NONE;
    }
    l->kept = true;
  }
  return cs_idmap_get(&l->by_id, id);
}

/* The slot of live request id, or CS_IDMAP_NONE: the next completion the last poll returned,
 * else the map. */
static uint32_t slot_of(const vcn_engine *e, uint64_t id) {
  vcn_lookup *l = e->look;
  if (l->polled_at < l->polled_n && e->txns[l->polled[l->polled_at]].id == id)
    return l->polled[l->polled_at++];
  return slot_by_map(e, id);
}

static uint32_t run_new(vcn_engine *e) {
  return pool_take((void **)&e->runs, &e->run_cap, &e->run_free, sizeof(vcn_run),
                   offsetof(vcn_run, next), 64);
}

static void slot_free(vcn_engine *e, uint32_t s) {
  if (e->look->kept) cs_idmap_del(&e->look->by_id, e->txns[s].id);
  e->txns[s].state = ST_NEW;
  e->txns[s].next = e->txn_free;
  e->txn_free = s;
}

/* Frees the slots of the transactions whose final completion the last poll returned: their
 * describe() came before this poll or advance (engine.h). */
static void retire_polled(vcn_engine *e) {
  for (size_t i = 0; i < e->retire_n; i++) slot_free(e, e->retire[i]);
  e->retire_n = 0;
}

/* FIFOs threaded through the elements' links: slots (vcn_txn.next) or runs (vcn_run.next). */
static void q_push(void *base, size_t size, size_t next_at, vcn_queue *q, uint32_t i) {
  *link_of(base, size, next_at, i) = VCN_NIL;
  if (q->tail == VCN_NIL) q->head = i;
  else *link_of(base, size, next_at, q->tail) = i;
  q->tail = i;
}

static uint32_t q_pop(void *base, size_t size, size_t next_at, vcn_queue *q) {
  uint32_t i = q->head;
  if (i == VCN_NIL) return i;
  q->head = *link_of(base, size, next_at, i);
  if (q->head == VCN_NIL) q->tail = VCN_NIL;
  return i;
}

#define SLOTS(e) (e)->txns, sizeof(vcn_txn), offsetof(vcn_txn, next)
#define RUNS(e) (e)->runs, sizeof(vcn_run), offsetof(vcn_run, next)

static void fail(vcn_engine *e, const char *what) {
  if (!e->fault[0]) snprintf(e->fault, sizeof e->fault, "%s", what);
}

/* Network flits of a burst of `burst` adapter flits. */
static uint64_t net_flits(const vcn_engine *e, uint64_t burst) {
  uint64_t bytes = burst * (uint64_t)e->bw_bytes;
  uint64_t flits = (bytes + (uint64_t)e->net->p.flit_bytes - 1) / (uint64_t)e->net->p.flit_bytes;
  return flits < 1 ? 1 : flits;
}

static void issue_req(vcn_engine *e, uint32_t s) {
  vcn_txn *t = &e->txns[s];
  vcn_ep *m = &e->eps[t->src_ep];
  if (t->is_read) m->mst_rd_used++;
  else m->mst_wr_used++;
  t->state = ST_REQ_NET;
  int size = t->is_read ? 1 : t->flits;
  if (vcn_net_send(e->net, t->src_ep, t->dst_ep, size, TAG(s, t->is_read, KIND_REQ)) == VCN_NIL)
    fail(e, "out of memory for packets");
}

/* Starts the next request of run r (blocked: it waited for its tracker) and issues it. */
static void start_next(vcn_engine *e, vcn_run *r, bool blocked) {
  uint32_t s = slot_new(e);
  if (s == VCN_NIL || (e->look->kept && cs_idmap_put(&e->look->by_id, r->first + r->k, s))) {
    if (s != VCN_NIL) e->txns[s].next = e->txn_free, e->txn_free = s;
    fail(e, "out of memory for transactions");
    r->k++;
    return;
  }
  vcn_txn *t = &e->txns[s];
  memset(t, 0, sizeof *t);
  t->id = r->first + r->k;
  t->src_ep = r->src_ep;
  t->dst_ep = r->dst_ep;
  t->is_read = r->is_read;
  uint64_t left = r->flits - r->k * r->burst;
  t->burst = (uint16_t)(left < r->burst ? left : r->burst);
  t->flits = (uint16_t)net_flits(e, t->burst);
  t->req_vc = t->rsp_vc = -1;
  t->channel = (uint8_t)cs_scheme_channel(r->issued_base + r->k);
  t->req_inject_cycle = r->inject_cycle;
  t->mst_blocks = blocked;
  t->next = VCN_NIL;
  r->k++;
  issue_req(e, s);
}

/* Master m freed a tracker of the kind: the oldest waiting request of that kind starts. */
static void serve_master(vcn_engine *e, vcn_ep *m, bool is_read) {
  vcn_queue *q = is_read ? &m->mst_rd_wait : &m->mst_wr_wait;
  if (q->head == VCN_NIL) return;
  vcn_run *r = &e->runs[q->head];
  start_next(e, r, true);
  if (r->k == r->n) {
    uint32_t i = q_pop(RUNS(e), q);
    e->runs[i].next = e->run_free;
    e->run_free = i;
  }
}

/* The target accepts the request in slot s: its req phase completes now. */
static void accept_req(vcn_engine *e, uint32_t s) {
  vcn_txn *t = &e->txns[s];
  vcn_ep *d = &e->eps[t->dst_ep];
  if (t->is_read) d->slv_rd_used++;
  else d->slv_wr_used++;
  t->state = ST_AT_SLV;
  t->req_complete_cycle = e->net->now;
  if (push_completion(e, s, CS_PHASE_REQ)) fail(e, "out of memory for completions");
}

/* A packet's tail left its source.  A request's packet keeps what the record needs (the VC its
 * head took, when it left) until it is delivered, so only a response acts now: it releases the
 * target's slave tracker, which serves the next waiting request. */
static void on_sent(void *ctx, vcn_net *net, uint32_t pi) {
  vcn_engine *e = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  if (TAG_KIND(p->tag) == KIND_REQ) return;
  vcn_ep *d = &e->eps[p->src_ep]; /* the response leaves the transaction's target */
  if (TAG_READ(p->tag)) {
    d->slv_rd_used--;
    uint32_t next = q_pop(SLOTS(e), &d->slv_rd_wait);
    if (next != VCN_NIL) accept_req(e, next);
  } else {
    d->slv_wr_used--;
    uint32_t next = q_pop(SLOTS(e), &d->slv_wr_wait);
    if (next != VCN_NIL) accept_req(e, next);
  }
}

static void on_deliver(void *ctx, vcn_net *net, uint32_t pi) {
  vcn_engine *e = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  uint32_t s = TAG_SLOT(p->tag);
  vcn_txn *t = &e->txns[s];
  if (TAG_KIND(p->tag) == KIND_REQ) {
    t->req_vc = p->first_vc;
    t->req_hops = p->hops;
    if (!t->is_read) t->wdata_gen_cycle = p->t_head_in, t->wdata_done_cycle = net->now;
    vcn_ep *d = &e->eps[t->dst_ep];
    int used = t->is_read ? d->slv_rd_used : d->slv_wr_used;
    int cap = t->is_read ? e->slv_rd : e->slv_wr;
    if (used < cap) {
      accept_req(e, s);
    } else {
      t->slv_blocks++;
      e->slv_blocks++;
      t->state = ST_SLV_WAIT;
      q_push(SLOTS(e), t->is_read ? &d->slv_rd_wait : &d->slv_wr_wait, s);
    }
    return;
  }
  t->state = ST_DONE;
  t->rsp_vc = p->first_vc;
  t->rsp_hops = p->hops;
  t->rsp_complete_cycle = net->now;
  if (push_completion(e, s, CS_PHASE_FINAL)) fail(e, "out of memory for completions");
  vcn_ep *m = &e->eps[t->src_ep];
  bool is_read = t->is_read;
  if (is_read) m->mst_rd_used--;
  else m->mst_wr_used--;
  serve_master(e, m, is_read); /* may move e->txns */
}

int vcn_engine_create(const cs_adapter_config *ad, const vcn_params *p, vcn_engine **out,
                      cs_err *err) {
  vcn_engine *e = calloc(1, sizeof *e);
  if (e && !(e->look = calloc(1, sizeof *e->look))) free(e), e = NULL;
  if (!e) return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory");
  cs_idmap_init(&e->look->by_id);
  e->txn_free = e->run_free = VCN_NIL;
  int rc = vcn_net_create(p, &e->net, err);
  if (rc) {
    free(e->look);
    free(e);
    return cs_err_prefix(err, "vcnet");
  }
  e->net->ctx = e;
  e->net->on_deliver = on_deliver;
  e->net->on_sent = on_sent;
  e->eps = calloc((size_t)e->net->t.endpoints, sizeof *e->eps);
  if (!e->eps) {
    vcn_engine_destroy(e);
    return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory");
  }
  for (int i = 0; i < e->net->t.endpoints; i++) {
    vcn_queue empty = {VCN_NIL, VCN_NIL};
    e->eps[i].mst_rd_wait = e->eps[i].mst_wr_wait = empty;
    e->eps[i].slv_rd_wait = e->eps[i].slv_wr_wait = empty;
  }
  e->mst_rd = ad->mst_rd_outstanding, e->mst_wr = ad->mst_wr_outstanding;
  e->slv_rd = ad->slv_rd_outstanding, e->slv_wr = ad->slv_wr_outstanding;
  e->bw_bytes = ad->bw_bytes;
  /* ticks: driver GHz / network GHz as a reduced ratio of integers (in kHz) */
  uint64_t num = (uint64_t)(ad->driver_cycle_frequency_ghz * 1e6 + 0.5);
  uint64_t den = (uint64_t)(p->frequency_ghz * 1e6 + 0.5);
  if (!num || !den) {
    vcn_engine_destroy(e);
    return cs_err_set(err, CS_EINVAL, "vcnet: driver_cycle_frequency_ghz %g and frequency_ghz %g must be at least 1 kHz",
                      ad->driver_cycle_frequency_ghz, p->frequency_ghz);
  }
  uint64_t g = cs_gcd_u64(num, den);
  e->tick_num = num / g;
  e->tick_den = den / g;
  *out = e;
  return CS_OK;
}

void vcn_engine_destroy(vcn_engine *e) {
  if (!e) return;
  vcn_net_destroy(e->net);
  free(e->eps);
  free(e->txns);
  free(e->runs);
  cs_idmap_free(&e->look->by_id);
  free(e->look->polled);
  free(e->look);
  free(e->comp);
  free(e->retire);
  free(e);
}

/* The checks of a flow's requests: endpoints that exist and can talk, bursts that fit. */
static int check_flow(const vcn_engine *e, const cs_flow *f, cs_err *err) {
  int E = e->net->t.endpoints;
  if (f->src < 0 || f->src >= E || f->dst < 0 || f->dst >= E)
    return cs_err_set(err, CS_EINVAL,
                      "vcnet: request %llu from %d to %d: endpoint ids must be in [0, %d) on %s "
                      "with %d endpoint(s) per router",
                      (unsigned long long)f->first_txn, f->src, f->dst, E, e->net->p.topology,
                      e->net->t.epr);
  char why[96];
  if (vcn_pair_problem(&e->net->t, f->src, f->dst, why, sizeof why))
    return cs_err_set(err, CS_EINVAL, "vcnet: request %llu from endpoint %d to %d on %s: %s",
                      (unsigned long long)f->first_txn, f->src, f->dst, e->net->p.topology, why);
  uint64_t flits = net_flits(e, f->burst);
  if (flits > 65535)
    return cs_err_set(err, CS_EINVAL, "vcnet: request %llu carries %llu flits (limit 65535)",
                      (unsigned long long)f->first_txn, (unsigned long long)flits);
  return CS_OK;
}

/* The requests of flow f arrive: those a free master tracker allows start now, the rest wait
 * as one run, in order behind the master's earlier ones. */
static int take_flow(vcn_engine *e, const cs_flow *f, cs_err *err) {
  if (!f->num_txns) return CS_OK;
  int rc = check_flow(e, f, err);
  if (rc) return rc;
  vcn_ep *m = &e->eps[f->src];
  vcn_run r = {.first = f->first_txn, .n = f->num_txns, .issued_base = m->issued,
               .inject_cycle = e->net->now, .flits = f->flits, .src_ep = f->src, .dst_ep = f->dst,
               .next = VCN_NIL, .burst = f->burst, .is_read = f->is_read};
  m->issued += f->num_txns;
  int *used = f->is_read ? &m->mst_rd_used : &m->mst_wr_used;
  int cap = f->is_read ? e->mst_rd : e->mst_wr;
  while (r.k < r.n && *used < cap && !e->fault[0]) start_next(e, &r, false);
  if (r.k < r.n) {
    e->mst_blocks += r.n - r.k;
    uint32_t i = run_new(e);
    if (i == VCN_NIL) return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory for waiting requests");
    e->runs[i] = r;
    q_push(RUNS(e), f->is_read ? &m->mst_rd_wait : &m->mst_wr_wait, i);
  }
  if (e->fault[0]) return cs_err_set(err, CS_ENOMEM, "vcnet: %s", e->fault);
  return CS_OK;
}

int vcn_engine_inject_flows(vcn_engine *e, const cs_flow *flows, size_t n, cs_err *err) {
  retire_polled(e);
  for (size_t i = 0; i < n; i++) {
    int rc = take_flow(e, &flows[i], err);
    if (rc) return rc;
  }
  return CS_OK;
}

int vcn_engine_inject(vcn_engine *e, const cs_inject *in, cs_err *err) {
  uint64_t id = in->request_id;
  if (in->packet_type == CS_PKT_REQ) {
    if (slot_by_map(e, id) != CS_IDMAP_NONE)
      return cs_err_set(err, CS_EINVAL, "vcnet: request %llu injected twice", (unsigned long long)id);
    /* a lone req is a flow of one transaction */
    cs_flow f = {.src = in->src_id, .dst = in->dst_id, .is_read = in->is_read,
                 .burst = in->burst_length, .flits = in->burst_length, .first_txn = id,
                 .num_txns = 1};
    return take_flow(e, &f, err);
  }
  if (in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: vcnet: request %llu: only req and rsp may be injected",
                      (unsigned long long)id);
  uint32_t s = slot_of(e, id);
  if (s == CS_IDMAP_NONE || e->txns[s].state != ST_AT_SLV)
    return cs_err_set(err, CS_EINVAL, "vcnet: rsp for request %llu, which has not completed its req phase",
                      (unsigned long long)id);
  vcn_txn *t = &e->txns[s];
  t->state = ST_RSP_NET;
  t->rsp_inject_cycle = e->net->now;
  int size = t->is_read ? t->flits : 1;
  if (vcn_net_send(e->net, t->dst_ep, t->src_ep, size, TAG(s, t->is_read, KIND_RSP)) == VCN_NIL)
    return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory for packets");
  return CS_OK;
}

int vcn_engine_advance(vcn_engine *e, uint64_t max_ticks, cs_err *err) {
  retire_polled(e);
  vcn_net *n = e->net;
  if (e->comp_n) return CS_OK;
  uint64_t target, end = cs_engine_advance_end(e->now_tick, max_ticks, e->tick_num, e->tick_den,
                                               &target);
  while (n->now < end) {
    vcn_net_skip_idle(n, end);
    if (n->now >= end) break;
    vcn_net_cycle(n);
    if (n->oom) fail(e, "out of memory for in-flight events");
    if (e->fault[0]) return cs_err_set(err, CS_ENOMEM, "vcnet: %s", e->fault);
    if (e->comp_n) {
      e->now_tick = tick_of(e, n->now - 1);
      return CS_OK;
    }
  }
  e->now_tick = target;
  return CS_OK;
}

size_t vcn_engine_poll(vcn_engine *e, cs_completion *out, size_t cap) {
  retire_polled(e);
  vcn_lookup *l = e->look;
  if (e->retire_cap < cap) {
    uint32_t *r = realloc(e->retire, cap * sizeof *r);
    if (r) e->retire = r;
    uint32_t *d = r ? realloc(l->polled, cap * sizeof *d) : NULL;
    if (!d) return 0; /* the completions stay; the driver polls again */
    l->polled = d;
    e->retire_cap = cap;
  }
  size_t k = 0;
  l->polled_n = l->polled_at = 0;
  while (k < cap && e->comp_n) {
    out[k] = e->comp[e->comp_head].c;
    if (out[k].phase == CS_PHASE_FINAL) e->retire[e->retire_n++] = e->comp[e->comp_head].slot;
    l->polled[l->polled_n++] = e->comp[e->comp_head].slot;
    k++;
    e->comp_head = (e->comp_head + 1) % e->comp_cap;
    e->comp_n--;
  }
  return k;
}

void vcn_engine_describe(const vcn_engine *e, uint64_t id, cs_txn_record *rec) {
  uint32_t s = slot_of(e, id);
  if (s == CS_IDMAP_NONE) return;
  const vcn_txn *t = &e->txns[s];
  const vcn_topo *tp = &e->net->t;
  rec->src_die = rec->dst_die = 0;
  rec->src_node = (int16_t)(t->src_ep / tp->epr);
  rec->dst_node = (int16_t)(t->dst_ep / tp->epr);
  rec->src_channel = rec->dst_channel = t->channel; /* the one channel rule of every engine */
  rec->d2d_src_node = rec->d2d_dst_node = -1;
  rec->rn_rd_block = t->is_read ? t->mst_blocks : 0;
  rec->rn_wr_block = t->is_read ? 0 : t->mst_blocks;
  rec->sn_ro_block = t->is_read ? t->slv_blocks : 0;
  rec->sn_wdb_block = t->is_read ? 0 : t->slv_blocks;
  rec->req_inject_cycle = t->req_inject_cycle;
  rec->wdata_gen_cycle = t->wdata_gen_cycle;
  rec->req_complete_cycle = t->req_complete_cycle;
  rec->rsp_inject_cycle = t->rsp_inject_cycle;
  rec->wdata_complete_cycle = t->wdata_done_cycle;
  rec->rsp_complete_cycle = t->rsp_complete_cycle;
  /* the engine's record columns, in the order of engine.c's table */
  int32_t *x = &rec->engine_extra[cs_engine_record_slot(&cs_vcnet_ops)];
  x[0] = tp->links + t->src_ep % tp->epr;
  x[1] = tp->links + t->dst_ep % tp->epr;
  x[2] = t->req_vc;
  x[3] = t->rsp_vc;
  x[4] = (int32_t)t->req_hops;
  x[5] = (int32_t)t->rsp_hops;
}

/* The run that holds request id, waiting for its master's tracker, or NULL. */
static const vcn_run *waiting_run(const vcn_engine *e, uint64_t id) {
  for (int ep = 0; ep < e->net->t.endpoints; ep++)
    for (int k = 0; k < 2; k++) {
      const vcn_queue *q = k ? &e->eps[ep].mst_rd_wait : &e->eps[ep].mst_wr_wait;
      for (uint32_t i = q->head; i != VCN_NIL; i = e->runs[i].next) {
        const vcn_run *r = &e->runs[i];
        if (id >= r->first + r->k && id < r->first + r->n) return r;
      }
    }
  return NULL;
}

void vcn_engine_where(const vcn_engine *e, uint64_t id, char *buf, size_t cap) {
  static const char *const names[] = {"not injected", "waiting for a master tracker",
                                      "request in the network", "waiting for a slave tracker",
                                      "at the target, awaiting its response inject",
                                      "response in the network", "done"};
  uint32_t s = slot_by_map(e, id);
  if (s != CS_IDMAP_NONE) {
    const vcn_txn *t = &e->txns[s];
    snprintf(buf, cap, "%s; endpoint %d -> %d", names[t->state], t->src_ep, t->dst_ep);
    return;
  }
  const vcn_run *r = waiting_run(e, id);
  if (r) snprintf(buf, cap, "%s; endpoint %d -> %d", names[1], r->src_ep, r->dst_ep);
  else snprintf(buf, cap, "not in flight");
}

uint64_t vcn_engine_bytes(const vcn_params *p, uint64_t inflight, uint64_t runs) {
  vcn_topo t;
  cs_err err;
  if (vcn_topo_parse(p->topology, p->endpoints_per_router, &t, &err)) return 0;
  /* a transaction in flight has one packet at most, queued or in the network; pools double */
  return sizeof(vcn_engine) + (uint64_t)t.endpoints * sizeof(vcn_ep) +
         vcn_net_bytes(p, &t, inflight) +
         2 * inflight * (sizeof(vcn_txn) + sizeof(vcn_completion)) + cs_idmap_bytes(inflight) +
         2 * runs * sizeof(vcn_run);
}
