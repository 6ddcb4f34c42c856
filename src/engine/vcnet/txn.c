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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/hash.h"
#include "commsweep/topo.h"
#include "commsweep/vcnet.h"
#include "vcnet_txn.h"

enum { ST_NEW = 0, ST_MST_WAIT, ST_REQ_NET, ST_SLV_WAIT, ST_AT_SLV, ST_RSP_NET, ST_DONE };
enum { KIND_REQ = 0, KIND_RSP = 1 };


static uint64_t tick_of(const vcn_engine *e, uint64_t c) { return c * e->tick_num / e->tick_den; }

static int push_completion(vcn_engine *e, uint64_t id, uint8_t phase) {
  if (e->comp_n == e->comp_cap) {
    size_t cap = e->comp_cap ? e->comp_cap * 2 : 256;
    cs_completion *c = malloc(cap * sizeof *c);
    if (!c) return CS_ENOMEM;
    for (size_t i = 0; i < e->comp_n; i++) c[i] = e->comp[(e->comp_head + i) % e->comp_cap];
    free(e->comp);
    e->comp = c;
    e->comp_cap = cap;
    e->comp_head = 0;
  }
  e->comp[(e->comp_head + e->comp_n) % e->comp_cap] =
      (cs_completion){id, tick_of(e, e->net->now), phase};
  e->comp_n++;
  return CS_OK;
}

/* FIFO of transaction ids linked through vcn_txn.next. */
static void q_push(vcn_engine *e, vcn_queue *q, uint32_t id) {
  e->txns[id].next = VCN_NIL;
  if (q->tail == VCN_NIL) q->head = id;
  else e->txns[q->tail].next = id;
  q->tail = id;
}

static uint32_t q_pop(vcn_engine *e, vcn_queue *q) {
  uint32_t id = q->head;
  if (id == VCN_NIL) return id;
  q->head = e->txns[id].next;
  if (q->head == VCN_NIL) q->tail = VCN_NIL;
  return id;
}

static void fail(vcn_engine *e, const char *what) {
  if (!e->fault[0]) snprintf(e->fault, sizeof e->fault, "%s", what);
}

static void issue_req(vcn_engine *e, uint32_t id) {
  vcn_txn *t = &e->txns[id];
  vcn_ep *m = &e->eps[t->src_ep];
  if (t->is_read) m->mst_rd_used++;
  else m->mst_wr_used++;
  t->state = ST_REQ_NET;
  int size = t->is_read ? 1 : t->flits;
  if (vcn_net_send(e->net, t->src_ep, t->dst_ep, size, (uint64_t)id << 1 | KIND_REQ) == VCN_NIL)
    fail(e, "out of memory for packets");
}

/* The target accepts request id: its req phase completes now. */
static void accept_req(vcn_engine *e, uint32_t id) {
  vcn_txn *t = &e->txns[id];
  vcn_ep *s = &e->eps[t->dst_ep];
  if (t->is_read) s->slv_rd_used++;
  else s->slv_wr_used++;
  t->state = ST_AT_SLV;
  t->req_complete_cycle = e->net->now;
  if (push_completion(e, id, CS_PHASE_REQ)) fail(e, "out of memory for completions");
}

static void on_sent(void *ctx, vcn_net *net, uint32_t pi) {
  vcn_engine *e = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  uint32_t id = (uint32_t)(p->tag >> 1);
  vcn_txn *t = &e->txns[id];
  if ((p->tag & 1) == KIND_REQ) {
    t->req_vc = p->first_vc;
    if (!t->is_read) t->wdata_gen_cycle = p->t_head_in;
    return;
  }
  t->rsp_vc = p->first_vc;
  /* the response left the target: its slave tracker serves the next waiting request */
  vcn_ep *s = &e->eps[t->dst_ep];
  if (t->is_read) {
    s->slv_rd_used--;
    uint32_t next = q_pop(e, &s->slv_rd_wait);
    if (next != VCN_NIL) accept_req(e, next);
  } else {
    s->slv_wr_used--;
    uint32_t next = q_pop(e, &s->slv_wr_wait);
    if (next != VCN_NIL) accept_req(e, next);
  }
}

static void on_deliver(void *ctx, vcn_net *net, uint32_t pi) {
  vcn_engine *e = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  uint32_t id = (uint32_t)(p->tag >> 1);
  vcn_txn *t = &e->txns[id];
  if ((p->tag & 1) == KIND_REQ) {
    t->req_hops = p->hops;
    if (!t->is_read) t->wdata_done_cycle = net->now;
    vcn_ep *s = &e->eps[t->dst_ep];
    int used = t->is_read ? s->slv_rd_used : s->slv_wr_used;
    int cap = t->is_read ? e->slv_rd : e->slv_wr;
    if (used < cap) {
      accept_req(e, id);
    } else {
      t->slv_blocks++;
      e->slv_blocks++;
      t->state = ST_SLV_WAIT;
      q_push(e, t->is_read ? &s->slv_rd_wait : &s->slv_wr_wait, id);
    }
    return;
  }
  t->state = ST_DONE;
  t->rsp_hops = p->hops;
  t->rsp_complete_cycle = net->now;
  if (push_completion(e, id, CS_PHASE_FINAL)) fail(e, "out of memory for completions");
  vcn_ep *m = &e->eps[t->src_ep];
  if (t->is_read) {
    m->mst_rd_used--;
    uint32_t next = q_pop(e, &m->mst_rd_wait);
    if (next != VCN_NIL) issue_req(e, next);
  } else {
    m->mst_wr_used--;
    uint32_t next = q_pop(e, &m->mst_wr_wait);
    if (next != VCN_NIL) issue_req(e, next);
  }
}

int vcn_engine_create(const cs_adapter_config *ad, const vcn_params *p, vcn_engine **out,
                      cs_err *err) {
  vcn_engine *e = calloc(1, sizeof *e);
  if (!e) return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory");
  int rc = vcn_net_create(p, &e->net, err);
  if (rc) {
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
  free(e->comp);
  free(e);
}

int vcn_engine_inject(vcn_engine *e, const cs_inject *in, cs_err *err) {
  int E = e->net->t.endpoints;
  if (in->src_id < 0 || in->src_id >= E || in->dst_id < 0 || in->dst_id >= E)
    return cs_err_set(err, CS_EINVAL,
                      "vcnet: request %llu from %d to %d: endpoint ids must be in [0, %d) on %s "
                      "with %d endpoint(s) per router",
                      (unsigned long long)in->request_id, in->src_id, in->dst_id, E,
                      e->net->p.topology, e->net->t.epr);
  char why[96];
  if (vcn_pair_problem(&e->net->t, in->src_id, in->dst_id, why, sizeof why))
    return cs_err_set(err, CS_EINVAL, "vcnet: request %llu from endpoint %d to %d on %s: %s",
                      (unsigned long long)in->request_id, in->src_id, in->dst_id,
                      e->net->p.topology, why);
  if (in->request_id >= VCN_NIL)
    return cs_err_set(err, CS_EINVAL, "vcnet: request id %llu too large",
                      (unsigned long long)in->request_id);
  uint32_t id = (uint32_t)in->request_id;
  if (in->packet_type == CS_PKT_REQ) {
    if (id >= e->txn_cap) {
      size_t cap = e->txn_cap ? e->txn_cap : 256;
      while (cap <= id) cap *= 2;
      vcn_txn *t = realloc(e->txns, cap * sizeof *t);
      if (!t) return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory for transactions");
      memset(t + e->txn_cap, 0, (cap - e->txn_cap) * sizeof *t);
      e->txns = t;
      e->txn_cap = cap;
    }
    vcn_txn *t = &e->txns[id];
    memset(t, 0, sizeof *t);
    t->src_ep = in->src_id;
    t->dst_ep = in->dst_id;
    t->is_read = in->is_read;
    t->burst = in->burst_length;
    uint64_t bytes = (uint64_t)in->burst_length * (uint64_t)e->bw_bytes;
    uint64_t flits = (bytes + (uint64_t)e->net->p.flit_bytes - 1) / (uint64_t)e->net->p.flit_bytes;
    if (flits < 1) flits = 1;
    if (flits > 65535)
      return cs_err_set(err, CS_EINVAL, "vcnet: request %u carries %llu flits (limit 65535)", id,
                        (unsigned long long)flits);
    t->flits = (uint16_t)flits;
    t->req_vc = t->rsp_vc = -1;
    t->channel = (uint8_t)cs_scheme_channel(e->eps[t->src_ep].issued++);
    t->req_inject_cycle = e->net->now;
    vcn_ep *m = &e->eps[t->src_ep];
    int used = t->is_read ? m->mst_rd_used : m->mst_wr_used;
    int cap = t->is_read ? e->mst_rd : e->mst_wr;
    t->state = ST_MST_WAIT;
    if (used < cap) {
      issue_req(e, id);
    } else {
      t->mst_blocks++;
      e->mst_blocks++;
      q_push(e, t->is_read ? &m->mst_rd_wait : &m->mst_wr_wait, id);
    }
    if (e->fault[0]) return cs_err_set(err, CS_ENOMEM, "vcnet: %s", e->fault);
    return CS_OK;
  }
  if (in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: vcnet: request %u: only req and rsp may be injected", id);
  if (id >= e->txn_cap || e->txns[id].state != ST_AT_SLV)
    return cs_err_set(err, CS_EINVAL, "vcnet: rsp for request %u, which has not completed its req phase", id);
  vcn_txn *t = &e->txns[id];
  t->state = ST_RSP_NET;
  t->rsp_inject_cycle = e->net->now;
  int size = t->is_read ? t->flits : 1;
  if (vcn_net_send(e->net, t->dst_ep, t->src_ep, size, (uint64_t)id << 1 | KIND_RSP) == VCN_NIL)
    return cs_err_set(err, CS_ENOMEM, "vcnet: out of memory for packets");
  return CS_OK;
}

int vcn_engine_advance(vcn_engine *e, uint64_t max_ticks, cs_err *err) {
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
  size_t k = 0;
  while (k < cap && e->comp_n) {
    out[k++] = e->comp[e->comp_head];
    e->comp_head = (e->comp_head + 1) % e->comp_cap;
    e->comp_n--;
  }
  return k;
}

void vcn_engine_describe(const vcn_engine *e, uint64_t id, cs_txn_record *rec) {
  if (id >= e->txn_cap) return;
  const vcn_txn *t = &e->txns[id];
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

void vcn_engine_where(const vcn_engine *e, uint64_t id, char *buf, size_t cap) {
  static const char *const names[] = {"not injected", "waiting for a master tracker",
                                      "request in the network", "waiting for a slave tracker",
                                      "at the target, awaiting its response inject",
                                      "response in the network", "done"};
  if (id >= e->txn_cap) {
    snprintf(buf, cap, "unknown request");
    return;
  }
  const vcn_txn *t = &e->txns[id];
  snprintf(buf, cap, "%s; endpoint %d -> %d", names[t->state], t->src_ep, t->dst_ep);
}
