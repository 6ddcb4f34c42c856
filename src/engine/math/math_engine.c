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

/* A pending completion: its tick, then request id << 8 | phase. */
typedef struct event {
  uint64_t tick;
  uint64_t id_phase;
} event;

/* Pending completions, taken out in (tick, insertion) order: a radix queue.  Every queued tick
 * is >= `last` (the tick last brought to the front, or the engine's clock when the queue ran
 * empty: the clock never goes back), and an event waits in bucket b = the bit length of
 * (tick XOR last): bucket 0 holds the ticks equal to last, in insertion order.  When bucket 0
 * runs dry, the lowest non-empty bucket holds the smallest tick; `last` moves up to it and that
 * bucket's events move, in order, to lower buckets.  Equal ticks always share a bucket and keep
 * their insertion order, so the order is exactly that of a (tick, sequence number) heap, while
 * an event is moved at most 64 times (a few, in practice) instead of sifted through log n
 * unpredictable comparisons per push and per pop. */
#define QUEUE_BUCKETS 65
typedef struct event_bucket {
  event *ev;
  size_t n, cap;
} event_bucket;

typedef struct event_queue {
  uint64_t last;
  size_t count;
  size_t head; /* next event of bucket 0 */
  event_bucket bucket[QUEUE_BUCKETS];
} event_queue;

typedef struct batch_flow {
  int32_t src, dst;
  double bytes_before; /* bytes of the flow's transactions priced so far in this batch */
  uint32_t count;
  int is_read;         /* direction path_ns and bw were priced for; -1: not yet priced */
  double path_ns, bw;  /* P_f and B_f */
} batch_flow;

/* The arrays a job fills and empties, with their capacities.  The jobs of one process hand
 * them on (cs_engine_ops.shared_*): a sweep then allocates and faults in this memory once
 * instead of once per job.  Their contents never carry over: every element is written before
 * it is read. */
typedef struct math_buffers {
  math_txn *txns; /* indexed by request id */
  size_t cap_txns;
  uint64_t *unscheduled; /* req ids injected since the last pricing */
  size_t cap_unscheduled;
  cs_completion *ready; /* completions due, not yet polled (FIFO) */
  size_t cap_ready;
  batch_flow *flows; /* the flows of the batch being priced */
  size_t cap_flows;
  event_queue queue;
} math_buffers;

typedef struct math_engine {
  cs_job job;
  cs_math_params params; /* the job's options, or the die file's defaults */
  uint64_t *issued;      /* requests issued so far per logical GDMA (the channel rule) */
  int num_endpoints;
  cs_die_params die;
  cs_layout layout;
  double f_driver; /* ticks per ns */
  uint64_t now;    /* driver tick */
  math_buffers buf;
  math_buffers *pool; /* where buf goes back when the job ends (NULL: freed) */
  uint64_t n_txns;    /* txns[0 .. n_txns) are injected or zeroed */
  size_t n_unscheduled;
  size_t ready_head, n_ready;
} math_engine;

/* Makes room for `need` elements; the new ones are left unset. */
static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q) return false;
  *p = q;
  *cap = n;
  return true;
}

static void buffers_free(math_buffers *b) {
  free(b->txns);
  free(b->unscheduled);
  free(b->ready);
  free(b->flows);
  for (int i = 0; i < QUEUE_BUCKETS; i++) free(b->queue.bucket[i].ev);
  memset(b, 0, sizeof *b);
}

/* Empties the buffers for a new job, keeping their memory. */
static void buffers_reset(math_buffers *b) {
  b->queue.last = 0;
  b->queue.count = b->queue.head = 0;
  for (int i = 0; i < QUEUE_BUCKETS; i++) b->queue.bucket[i].n = 0;
}

static int bucket_of(uint64_t last, uint64_t tick) {
  return tick == last ? 0 : 64 - __builtin_clzll(tick ^ last);
}

static inline bool bucket_append(event_bucket *b, event e) {
  if (b->n == b->cap && !grow((void **)&b->ev, &b->cap, b->n + 1, sizeof *b->ev)) return false;
  b->ev[b->n++] = e;
  return true;
}

/* Lowers `last` to `tick` by queueing every event again, in order.  Needed only when a request
 * comes in after the engine looked ahead to a later completion without reaching it (the driver
 * injects a step only once the previous one is complete, so it never does). */
static int queue_rebase(event_queue *q, uint64_t tick) {
  event *all = malloc((q->count ? q->count : 1) * sizeof *all);
  if (!all) return CS_ENOMEM;
  size_t n = 0;
  for (int i = 0; i < QUEUE_BUCKETS; i++) {
    event_bucket *b = &q->bucket[i];
    for (size_t k = i == 0 ? q->head : 0; k < b->n; k++) all[n++] = b->ev[k];
    b->n = 0;
  }
  q->head = 0;
  q->last = tick;
  int rc = CS_OK;
  for (size_t k = 0; k < n && !rc; k++)
    if (!bucket_append(&q->bucket[bucket_of(tick, all[k].tick)], all[k])) rc = CS_ENOMEM;
  free(all);
  return rc;
}

/* Queues the completion of request id in phase `phase` at `tick`; `floor` (<= tick, the
 * engine's clock) becomes `last` when the queue is empty, so the events of a new step start in
 * low buckets. */
static int queue_push(event_queue *q, uint64_t floor, uint64_t tick, uint64_t id, uint8_t phase) {
  if (!q->count) q->last = floor;
  if (tick < q->last) {
    int rc = queue_rebase(q, tick);
    if (rc) return rc;
  }
  if (!bucket_append(&q->bucket[bucket_of(q->last, tick)], (event){tick, id << 8 | phase}))
    return CS_ENOMEM;
  q->count++;
  return CS_OK;
}

/* The smallest queued tick (the queue is not empty) into *tick, filling bucket 0 if it ran
 * dry.  Out of memory (a lower bucket's first growth) leaves the queue unusable: the job fails. */
static int queue_front(event_queue *q, uint64_t *tick) {
  event_bucket *zero = &q->bucket[0];
  if (q->head < zero->n) {
    *tick = q->last;
    return CS_OK;
  }
  int i = 1;
  while (q->bucket[i].n == 0) i++;
  event_bucket *b = &q->bucket[i];
  uint64_t min = b->ev[0].tick;
  for (size_t k = 1; k < b->n; k++)
    if (b->ev[k].tick < min) min = b->ev[k].tick;
  q->last = min;
  for (size_t k = 0; k < b->n; k++) /* each lands in a lower bucket */
    if (!bucket_append(&q->bucket[bucket_of(min, b->ev[k].tick)], b->ev[k])) return CS_ENOMEM;
  b->n = 0;
  *tick = min;
  return CS_OK;
}

/* Takes the next event of bucket 0 (not empty). */
static event queue_pop(event_queue *q) {
  event_bucket *zero = &q->bucket[0];
  event e = zero->ev[q->head++];
  if (q->head == zero->n) zero->n = q->head = 0;
  q->count--;
  return e;
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
  if (m->pool) {
    buffers_free(m->pool); /* empty unless two engines shared it at once */
    *m->pool = m->buf;
  } else {
    buffers_free(&m->buf);
  }
  free(m->issued);
  free(m);
}

static void *math_shared_new(void) { return calloc(1, sizeof(math_buffers)); }

static void math_shared_free(void *shared) {
  if (!shared) return;
  buffers_free(shared);
  free(shared);
}

/* The engine takes the process's buffers for the job and gives them back when destroyed. */
static int math_shared_attach(void *engine, void *shared, cs_err *err) {
  math_engine *m = engine;
  if (m->n_txns || m->pool)
    return cs_err_set(err, CS_EINTERNAL, "math engine: buffers attached after the first inject");
  buffers_free(&m->buf);
  m->buf = *(math_buffers *)shared;
  memset(shared, 0, sizeof(math_buffers));
  buffers_reset(&m->buf);
  m->pool = shared;
  return CS_OK;
}

static int links_between(const cs_layout *lay, int a, int b) {
  int n = 0;
  for (int i = 0; i < lay->num_links; i++)
    n += (lay->links[i].die_a == a && lay->links[i].die_b == b) ||
         (lay->links[i].die_a == b && lay->links[i].die_b == a);
  return n;
}

/* The flow of (src, dst) in the batch, added if new; `hint` makes runs of one flow O(1). */
static batch_flow *flow_of(batch_flow *flows, size_t *n, size_t *hint, int32_t src, int32_t dst) {
  if (*n && flows[*hint].src == src && flows[*hint].dst == dst) return &flows[*hint];
  for (size_t i = 0; i < *n; i++)
    if (flows[i].src == src && flows[i].dst == dst) return &flows[*hint = i];
  flows[*n] = (batch_flow){src, dst, 0, 0, -1, 0, 0};
  *hint = *n;
  return &flows[(*n)++];
}

/* P_f and B_f of flow f for requests of direction is_read (they depend on nothing else of a
 * transaction, so a flow's transactions share one pricing). */
static int price_flow(const math_engine *m, batch_flow *f, int is_read, const int *pair_flows,
                      cs_err *err) {
  const cs_math_params *mp = &m->params;
  const cs_adapter_config *ad = &m->job.adapter;
  cs_endpoint s = cs_scheme_locate(&m->die, f->src);
  cs_endpoint d = cs_scheme_locate(&m->die, f->dst);
  bool cross = s.die != d.die;
  /* A cross-die path is approximated by the node distance plus the crossing. */
  double path = cs_topo_hops(&m->die, s.node, d.node) * mp->hop_latency_ns +
                (cross ? mp->d2d_latency_ns : 0.0);
  double rtt = mp->base_latency_ns + 3.0 * path;
  double txn_bytes = (double)ad->burst_length * ad->bw_bytes;
  int mst = is_read ? ad->mst_rd_outstanding : ad->mst_wr_outstanding;
  int slv = is_read ? ad->slv_rd_outstanding : ad->slv_wr_outstanding;
  double bw = mp->endpoint_bw_gb_per_s; /* GB/s == bytes/ns */
  if (rtt > 0) {
    bw = fmin(bw, mst * txn_bytes / rtt);
    bw = fmin(bw, 2.0 * slv * txn_bytes / rtt);
  }
  if (cross) {
    int links = links_between(&m->layout, s.die, d.die);
    if (links == 0)
      return cs_err_set(err, CS_EINVAL, "math engine: no D2D link joins die %d and die %d in layout %s",
                        s.die, d.die, m->layout.name);
    bw = fmin(bw, mp->d2d_bw_gb_per_s * links / pair_flows[s.die * m->layout.num_dies + d.die]);
  }
  f->is_read = is_read;
  f->path_ns = path;
  f->bw = bw;
  return CS_OK;
}

/* Prices every transaction injected since the last call: groups them into flows by (src, dst),
 * counts flows per directed die pair, and schedules each req-phase completion. */
static int price_batch(math_engine *m, cs_err *err) {
  const cs_math_params *mp = &m->params;
  const cs_adapter_config *ad = &m->job.adapter;
  int dies = m->layout.num_dies;
  int pair_flows[CS_TOPO_MAX_DIES * CS_TOPO_MAX_DIES] = {0};
  double now_ns = (double)m->now / m->f_driver;
  if (!grow((void **)&m->buf.flows, &m->buf.cap_flows, m->n_unscheduled, sizeof *m->buf.flows))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  batch_flow *flows = m->buf.flows;
  size_t n_flows = 0, hint = 0;

  for (size_t i = 0; i < m->n_unscheduled; i++) {
    const math_txn *t = &m->buf.txns[m->buf.unscheduled[i]];
    size_t before = n_flows;
    flow_of(flows, &n_flows, &hint, t->req.src_id, t->req.dst_id);
    if (n_flows == before) continue;
    cs_endpoint s = cs_scheme_locate(&m->die, t->req.src_id);
    cs_endpoint d = cs_scheme_locate(&m->die, t->req.dst_id);
    if (s.die != d.die) pair_flows[s.die * dies + d.die]++;
  }

  int rc = CS_OK;
  for (size_t i = 0; i < m->n_unscheduled && !rc; i++) {
    math_txn *t = &m->buf.txns[m->buf.unscheduled[i]];
    batch_flow *f = flow_of(flows, &n_flows, &hint, t->req.src_id, t->req.dst_id);
    if (f->is_read != t->req.is_read && (rc = price_flow(m, f, t->req.is_read, pair_flows, err)))
      break;
    double path = f->path_ns, bw = f->bw;
    t->path_ns = path;
    t->bw_bytes_per_ns = bw;
    t->req_inject_ns = now_ns;
    t->req_done_ns = now_ns + mp->base_latency_ns + 2.0 * path + f->bytes_before / bw;
    t->scheduled = true;
    f->bytes_before += (double)t->req.burst_length * ad->bw_bytes;
    f->count++;
    if (queue_push(&m->buf.queue, m->now, tick_of(m, t->req_done_ns), t->req.request_id,
                   CS_PHASE_REQ))
      rc = cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  }
  m->n_unscheduled = 0;
  return rc;
}

static int math_inject(void *engine, const cs_inject *in, cs_err *err) {
  math_engine *m = engine;
  math_buffers *b = &m->buf;
  uint64_t id = in->request_id;
  if (id > (uint64_t)1 << 40)
    return cs_err_set(err, CS_EINVAL, "math engine: request id %llu too large",
                      (unsigned long long)id);
  if (in->packet_type == CS_PKT_REQ) {
    if (!grow((void **)&b->txns, &b->cap_txns, id + 1, sizeof *b->txns) ||
        !grow((void **)&b->unscheduled, &b->cap_unscheduled, m->n_unscheduled + 1,
              sizeof *b->unscheduled))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    if (in->src_id < 0 || in->src_id >= m->num_endpoints || in->dst_id < 0 ||
        in->dst_id >= m->num_endpoints)
      return cs_err_set(err, CS_EINVAL, "math engine: request %llu: endpoint %d->%d outside 0..%d",
                        (unsigned long long)id, in->src_id, in->dst_id, m->num_endpoints - 1);
    if (id >= m->n_txns) { /* requests skipped over are unknown */
      memset(&b->txns[m->n_txns], 0, (id - m->n_txns) * sizeof *b->txns);
      m->n_txns = id + 1;
    }
    math_txn *t = &b->txns[id];
    memset(t, 0, sizeof *t);
    t->req = *in;
    t->channel = (uint32_t)cs_scheme_channel(m->issued[in->src_id]++);
    b->unscheduled[m->n_unscheduled++] = id;
    return CS_OK;
  }
  if (in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: math engine: request %llu: only req and rsp may be injected",
                      (unsigned long long)id);
  if (id >= m->n_txns || !b->txns[id].scheduled)
    return cs_err_set(err, CS_EINVAL, "math engine: rsp for unknown request %llu",
                      (unsigned long long)id);
  math_txn *t = &b->txns[id];
  t->rsp_seen = true;
  t->rsp_inject_ns = (double)m->now / m->f_driver;
  double bytes = (double)t->req.burst_length * m->job.adapter.bw_bytes;
  t->final_ns = t->rsp_inject_ns + bytes / t->bw_bytes_per_ns + t->path_ns;
  if (queue_push(&b->queue, m->now, tick_of(m, t->final_ns), id, CS_PHASE_FINAL))
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
  uint64_t limit = cs_engine_advance_limit(m->now, max_ticks), front = 0;
  event_queue *q = &m->buf.queue;
  if (q->count && queue_front(q, &front))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  if (!q->count || front > limit) {
    m->now = limit;
    return CS_OK;
  }
  m->now = front;
  /* bucket 0 holds exactly the events due now */
  while (q->head < q->bucket[0].n) {
    event e = queue_pop(q);
    if (!grow((void **)&m->buf.ready, &m->buf.cap_ready, m->ready_head + m->n_ready + 1,
              sizeof *m->buf.ready))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    m->buf.ready[m->ready_head + m->n_ready++] =
        (cs_completion){e.id_phase >> 8, e.tick, (uint8_t)(e.id_phase & 0xff)};
  }
  return CS_OK;
}

static size_t math_poll(void *engine, cs_completion *out, size_t cap) {
  math_engine *m = engine;
  size_t n = m->n_ready < cap ? m->n_ready : cap;
  if (!n) return 0;
  memcpy(out, m->buf.ready + m->ready_head, n * sizeof *out);
  m->ready_head += n;
  m->n_ready -= n;
  if (!m->n_ready) m->ready_head = 0;
  return n;
}

static uint64_t math_now(const void *engine) { return ((const math_engine *)engine)->now; }

/* llround of a record's time in cycles, without the library call: for 0 <= x < 2^63 the
 * fraction x - trunc(x) is exact (x and its truncation are both doubles, and from 2^53 on x is
 * an integer), so halves round up exactly as llround rounds them away from zero. */
static uint64_t cycles_of(double x) {
  if (!(x >= 0 && x < 9.2e18)) return (uint64_t)llround(x);
  uint64_t t = (uint64_t)x;
  return t + (x - (double)t >= 0.5);
}

static void math_describe(const void *engine, uint64_t id, cs_txn_record *rec) {
  const math_engine *m = engine;
  if (id >= m->n_txns) return;
  const math_txn *t = &m->buf.txns[id];
  cs_endpoint s = cs_scheme_locate(&m->die, t->req.src_id);
  cs_endpoint d = cs_scheme_locate(&m->die, t->req.dst_id);
  rec->src_die = (int16_t)s.die, rec->src_node = (int16_t)s.node;
  rec->dst_die = (int16_t)d.die, rec->dst_node = (int16_t)d.node;
  rec->src_channel = rec->dst_channel = (int16_t)t->channel;
  rec->d2d_src_node = rec->d2d_dst_node = -1;
  double f = m->job.adapter.noc_frequency_ghz; /* NoC cycles per ns */
  rec->req_inject_cycle = cycles_of(t->req_inject_ns * f);
  rec->req_complete_cycle = cycles_of(t->req_done_ns * f);
  rec->rsp_inject_cycle = cycles_of(t->rsp_inject_ns * f);
  rec->rsp_complete_cycle = cycles_of(t->final_ns * f);
  rec->wdata_gen_cycle = t->req.is_read ? 0 : rec->rsp_inject_cycle;
  rec->wdata_complete_cycle = t->req.is_read ? 0 : rec->rsp_complete_cycle;
}

static void math_where(const void *engine, uint64_t id, char *buf, size_t cap) {
  const math_engine *m = engine;
  const char *state = id >= m->n_txns ? "unknown"
                      : !m->buf.txns[id].scheduled ? "not yet priced"
                      : !m->buf.txns[id].rsp_seen ? "waiting for its req phase"
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
    .shared_new = math_shared_new,
    .shared_free = math_shared_free,
    .shared_attach = math_shared_attach,
    .destroy = math_destroy,
};
