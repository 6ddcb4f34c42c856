/* The alpha-beta engine.  Each step's flows are priced in closed form when the step's requests
 * arrive (they arrive together: the driver injects a whole step in one tick):
 *
 *   P_f  = hops_f * hop_latency + crossings_f * d2d_latency          one-way path latency
 *   RTT_f = base_latency + 3 P_f                                     req, grant, data
 *   B_f  = min(endpoint_bw, O_mst * txn_bytes / RTT_f, 2 O_slv * txn_bytes / RTT_f,
 *              d2d_bw * links(die pair) / flows crossing that die pair this step)
 *   transaction k of flow f (bytes b_k, cumulative bytes before it S_k):
 *     req phase ends   t0 + base + 2 P_f + S_k / B_f
 *     final completion rsp_inject + b_k / B_f + P_f
 *
 * so a flow of m bytes finishes at t0 + RTT_f + m / B_f: the alpha-beta step time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/math_engine.h"
#include "commsweep/topo.h"

typedef struct math_txn {
  cs_inject req;
  double req_inject_ns, req_done_ns, rsp_inject_ns, final_ns;
  double bw_bytes_per_ns; /* B_f of its flow */
  double path_ns;         /* P_f */
  uint32_t channel;       /* cs_scheme_channel at inject */
  bool scheduled, rsp_seen;
} math_txn;

typedef struct event {
  uint64_t tick;
  uint64_t seq; /* insertion order breaks ties deterministically */
  uint64_t request_id;
  uint8_t phase;
} event;

typedef struct math_engine {
  cs_job job;
  cs_math_params params; /* the job's options, or the die file's defaults */
  uint64_t *issued;      /* requests issued so far per logical GDMA (the channel rule) */
  int num_endpoints;
  cs_die_params die;
  cs_layout layout;
  double f_driver; /* ticks per ns */
  uint64_t now;    /* driver tick */
  math_txn *txns;  /* indexed by request id */
  size_t cap_txns;
  uint64_t *unscheduled; /* req ids injected since the last pricing */
  size_t n_unscheduled, cap_unscheduled;
  event *heap;
  size_t n_heap, cap_heap;
  uint64_t seq;
  cs_completion *ready; /* completions due, not yet polled (FIFO) */
  size_t ready_head, n_ready, cap_ready;
} math_engine;

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q) return false;
  memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
  *p = q;
  *cap = n;
  return true;
}

static bool event_less(const event *a, const event *b) {
  return a->tick < b->tick || (a->tick == b->tick && a->seq < b->seq);
}

static int heap_push(math_engine *m, uint64_t tick, uint64_t id, uint8_t phase) {
  if (!grow((void **)&m->heap, &m->cap_heap, m->n_heap + 1, sizeof *m->heap)) return CS_ENOMEM;
  size_t i = m->n_heap++;
  m->heap[i] = (event){tick, m->seq++, id, phase};
  while (i && event_less(&m->heap[i], &m->heap[(i - 1) / 2])) {
    event t = m->heap[i];
    m->heap[i] = m->heap[(i - 1) / 2];
    m->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
  return CS_OK;
}

static event heap_pop(math_engine *m) {
  event top = m->heap[0];
  m->heap[0] = m->heap[--m->n_heap];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, s = i;
    if (l < m->n_heap && event_less(&m->heap[l], &m->heap[s])) s = l;
    if (r < m->n_heap && event_less(&m->heap[r], &m->heap[s])) s = r;
    if (s == i) break;
    event t = m->heap[i];
    m->heap[i] = m->heap[s];
    m->heap[s] = t;
    i = s;
  }
  return top;
}

static uint64_t tick_of(const math_engine *m, double ns) {
  /* Round up, but forgive float noise just above an integer. */
  double t = ns * m->f_driver;
  double r = ceil(t - 1e-9);
  return r < (double)m->now ? m->now : (uint64_t)r;
}

static int math_create(const cs_job *job, void **out, cs_err *err) {
  math_engine *m = calloc(1, sizeof *m);
  if (!m) return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  m->job = *job;
  int rc = cs_topo_die(job->adapter.topology, &m->die, err);
  if (!rc) rc = cs_topo_layout(job->adapter.dcin_layout, &m->layout, err);
  if (rc) {
    free(m);
    return cs_err_prefix(err, "math engine");
  }
  m->params = m->die.math;
  if (job->engine.has_options) memcpy(&m->params, job->engine.params.bytes, sizeof m->params);
  m->num_endpoints = cs_scheme_endpoints(&m->die, m->layout.num_dies);
  m->issued = calloc((size_t)m->num_endpoints, sizeof *m->issued);
  if (!m->issued) {
    free(m);
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  }
  m->f_driver = job->adapter.driver_cycle_frequency_ghz;
  *out = m;
  return CS_OK;
}

static void math_destroy(void *engine) {
  math_engine *m = engine;
  if (!m) return;
  free(m->txns);
  free(m->unscheduled);
  free(m->heap);
  free(m->ready);
  free(m->issued);
  free(m);
}

static int links_between(const cs_layout *lay, int a, int b) {
  int n = 0;
  for (int i = 0; i < lay->num_links; i++)
    n += (lay->links[i].die_a == a && lay->links[i].die_b == b) ||
         (lay->links[i].die_a == b && lay->links[i].die_b == a);
  return n;
}

typedef struct batch_flow {
  int32_t src, dst;
  double bytes_before; /* bytes of the flow's transactions priced so far in this batch */
  uint32_t count;
} batch_flow;

/* The flow of (src, dst) in the batch, added if new; `hint` makes runs of one flow O(1). */
static batch_flow *flow_of(batch_flow *flows, size_t *n, size_t *hint, int32_t src, int32_t dst) {
  if (*n && flows[*hint].src == src && flows[*hint].dst == dst) return &flows[*hint];
  for (size_t i = 0; i < *n; i++)
    if (flows[i].src == src && flows[i].dst == dst) return &flows[*hint = i];
  flows[*n] = (batch_flow){src, dst, 0, 0};
  *hint = *n;
  return &flows[(*n)++];
}

/* Prices every transaction injected since the last call: groups them into flows by (src, dst),
 * counts flows per directed die pair, and schedules each req-phase completion. */
static int price_batch(math_engine *m, cs_err *err) {
  const cs_math_params *mp = &m->params;
  const cs_adapter_config *ad = &m->job.adapter;
  int dies = m->layout.num_dies;
  int pair_flows[CS_TOPO_MAX_DIES * CS_TOPO_MAX_DIES] = {0};
  double now_ns = (double)m->now / m->f_driver;
  batch_flow *flows = malloc(m->n_unscheduled * sizeof *flows);
  if (!flows) return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  size_t n_flows = 0, hint = 0;

  for (size_t i = 0; i < m->n_unscheduled; i++) {
    const math_txn *t = &m->txns[m->unscheduled[i]];
    size_t before = n_flows;
    flow_of(flows, &n_flows, &hint, t->req.src_id, t->req.dst_id);
    cs_endpoint s = cs_scheme_locate(&m->die, t->req.src_id);
    cs_endpoint d = cs_scheme_locate(&m->die, t->req.dst_id);
    if (n_flows > before && s.die != d.die) pair_flows[s.die * dies + d.die]++;
  }

  int rc = CS_OK;
  for (size_t i = 0; i < m->n_unscheduled && !rc; i++) {
    math_txn *t = &m->txns[m->unscheduled[i]];
    cs_endpoint s = cs_scheme_locate(&m->die, t->req.src_id);
    cs_endpoint d = cs_scheme_locate(&m->die, t->req.dst_id);
    bool cross = s.die != d.die;
    /* A cross-die path is approximated by the node distance plus the crossing. */
    double path = cs_topo_hops(&m->die, s.node, d.node) * mp->hop_latency_ns +
                  (cross ? mp->d2d_latency_ns : 0.0);
    double rtt = mp->base_latency_ns + 3.0 * path;
    double txn_bytes = (double)ad->burst_length * ad->bw_bytes;
    int mst = t->req.is_read ? ad->mst_rd_outstanding : ad->mst_wr_outstanding;
    int slv = t->req.is_read ? ad->slv_rd_outstanding : ad->slv_wr_outstanding;
    double bw = mp->endpoint_bw_gb_per_s; /* GB/s == bytes/ns */
    if (rtt > 0) {
      bw = fmin(bw, mst * txn_bytes / rtt);
      bw = fmin(bw, 2.0 * slv * txn_bytes / rtt);
    }
    if (cross) {
      int links = links_between(&m->layout, s.die, d.die);
      if (links == 0) {
        rc = cs_err_set(err, CS_EINVAL, "math engine: no D2D link joins die %d and die %d in layout %s",
                        s.die, d.die, m->layout.name);
        break;
      }
      bw = fmin(bw, mp->d2d_bw_gb_per_s * links / pair_flows[s.die * dies + d.die]);
    }
    batch_flow *f = flow_of(flows, &n_flows, &hint, t->req.src_id, t->req.dst_id);
    t->path_ns = path;
    t->bw_bytes_per_ns = bw;
    t->req_inject_ns = now_ns;
    t->req_done_ns = now_ns + mp->base_latency_ns + 2.0 * path + f->bytes_before / bw;
    t->scheduled = true;
    f->bytes_before += (double)t->req.burst_length * ad->bw_bytes;
    f->count++;
    if (heap_push(m, tick_of(m, t->req_done_ns), t->req.request_id, CS_PHASE_REQ))
      rc = cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  }
  free(flows);
  m->n_unscheduled = 0;
  return rc;
}

static int math_inject(void *engine, const cs_inject *in, cs_err *err) {
  math_engine *m = engine;
  if (in->request_id > (uint64_t)1 << 40)
    return cs_err_set(err, CS_EINVAL, "math engine: request id %llu too large",
                      (unsigned long long)in->request_id);
  if (in->packet_type == CS_PKT_REQ) {
    if (!grow((void **)&m->txns, &m->cap_txns, in->request_id + 1, sizeof *m->txns) ||
        !grow((void **)&m->unscheduled, &m->cap_unscheduled, m->n_unscheduled + 1,
              sizeof *m->unscheduled))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    if (in->src_id < 0 || in->src_id >= m->num_endpoints || in->dst_id < 0 ||
        in->dst_id >= m->num_endpoints)
      return cs_err_set(err, CS_EINVAL, "math engine: request %llu: endpoint %d->%d outside 0..%d",
                        (unsigned long long)in->request_id, in->src_id, in->dst_id,
                        m->num_endpoints - 1);
    math_txn *t = &m->txns[in->request_id];
    memset(t, 0, sizeof *t);
    t->req = *in;
    t->channel = (uint32_t)cs_scheme_channel(m->issued[in->src_id]++);
    m->unscheduled[m->n_unscheduled++] = in->request_id;
    return CS_OK;
  }
  if (in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: math engine: request %llu: only req and rsp may be injected",
                      (unsigned long long)in->request_id);
  if (in->request_id >= m->cap_txns || !m->txns[in->request_id].scheduled)
    return cs_err_set(err, CS_EINVAL, "math engine: rsp for unknown request %llu",
                      (unsigned long long)in->request_id);
  math_txn *t = &m->txns[in->request_id];
  t->rsp_seen = true;
  t->rsp_inject_ns = (double)m->now / m->f_driver;
  double bytes = (double)t->req.burst_length * m->job.adapter.bw_bytes;
  t->final_ns = t->rsp_inject_ns + bytes / t->bw_bytes_per_ns + t->path_ns;
  if (heap_push(m, tick_of(m, t->final_ns), in->request_id, CS_PHASE_FINAL))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  return CS_OK;
}

static int math_advance(void *engine, uint64_t max_ticks, cs_err *err) {
  math_engine *m = engine;
  if (m->n_unscheduled) {
    int rc = price_batch(m, err);
    if (rc) return rc;
  }
  if (m->n_ready) return CS_OK;
  uint64_t limit = m->now + max_ticks;
  if (!m->n_heap || m->heap[0].tick > limit) {
    m->now = limit;
    return CS_OK;
  }
  m->now = m->heap[0].tick;
  while (m->n_heap && m->heap[0].tick == m->now) {
    event e = heap_pop(m);
    if (!grow((void **)&m->ready, &m->cap_ready, m->ready_head + m->n_ready + 1, sizeof *m->ready))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    m->ready[m->ready_head + m->n_ready++] = (cs_completion){e.request_id, e.tick, e.phase};
  }
  return CS_OK;
}

static size_t math_poll(void *engine, cs_completion *out, size_t cap) {
  math_engine *m = engine;
  size_t n = m->n_ready < cap ? m->n_ready : cap;
  if (!n) return 0;
  memcpy(out, m->ready + m->ready_head, n * sizeof *out);
  m->ready_head += n;
  m->n_ready -= n;
  if (!m->n_ready) m->ready_head = 0;
  return n;
}

static uint64_t math_now(const void *engine) { return ((const math_engine *)engine)->now; }

static void math_describe(const void *engine, uint64_t id, cs_txn_record *rec) {
  const math_engine *m = engine;
  if (id >= m->cap_txns) return;
  const math_txn *t = &m->txns[id];
  cs_endpoint s = cs_scheme_locate(&m->die, t->req.src_id);
  cs_endpoint d = cs_scheme_locate(&m->die, t->req.dst_id);
  rec->src_die = (int16_t)s.die, rec->src_node = (int16_t)s.node;
  rec->dst_die = (int16_t)d.die, rec->dst_node = (int16_t)d.node;
  rec->src_channel = rec->dst_channel = (int16_t)t->channel;
  rec->d2d_src_node = rec->d2d_dst_node = -1;
  double f = m->job.adapter.noc_frequency_ghz; /* NoC cycles per ns */
  rec->req_inject_cycle = (uint64_t)llround(t->req_inject_ns * f);
  rec->req_complete_cycle = (uint64_t)llround(t->req_done_ns * f);
  rec->rsp_inject_cycle = (uint64_t)llround(t->rsp_inject_ns * f);
  rec->rsp_complete_cycle = (uint64_t)llround(t->final_ns * f);
  rec->wdata_gen_cycle = t->req.is_read ? 0 : rec->rsp_inject_cycle;
  rec->wdata_complete_cycle = t->req.is_read ? 0 : rec->rsp_complete_cycle;
}

static void math_where(const void *engine, uint64_t id, char *buf, size_t cap) {
  const math_engine *m = engine;
  const char *state = id >= m->cap_txns ? "unknown"
                      : !m->txns[id].scheduled ? "not yet priced"
                      : !m->txns[id].rsp_seen ? "waiting for its req phase"
                                              : "waiting for final completion";
  snprintf(buf, cap, "%s", state);
}

static void math_stats(const void *engine, cs_engine_stats *out) {
  (void)engine;
  memset(out, 0, sizeof *out);
}

static int math_validate(const cs_job *job, cs_err *err) {
  return cs_topo_check_adapter(&job->adapter, err); /* C2, C3: the model reads the same files */
}

/* Pricing is linear in transactions, plus a fixed cost per step and per job. */
static double math_cost(const cs_job *job, uint64_t num_txns, uint32_t num_steps) {
  (void)job;
  return (double)num_txns + 16.0 + 4.0 * num_steps;
}

const cs_engine_ops cs_math_ops = {
    .name = "math",
    .summary = "closed-form alpha-beta model (docs/math-engine.md)",
    .model_version = "1",
    .options = cs_topo_math_fields,
    .options_size = sizeof(cs_math_params),
    .options_doc = "absent: the die topology file's calibrated \"math\" values",
    .validate = math_validate,
    .cost = math_cost,
    .create = math_create,
    .inject = math_inject,
    .advance = math_advance,
    .poll = math_poll,
    .now = math_now,
    .describe = math_describe,
    .where = math_where,
    .stats = math_stats,
    .destroy = math_destroy,
};
