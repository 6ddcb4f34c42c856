/* The math engine: a step's requests are priced together when the step has been injected (the
 * driver injects a whole step in one tick).  Each flow-channel of the step (a flow's requests on
 * one physical channel) gets its latencies and own rate from flows.c, the fluid max-min solve
 * (fluid.c) shares the chip's resources among them, and request k of a flow-channel issues when
 * its share has carried the bytes of the requests before it (the first at once):
 *
 *   req phase ends   step start + issue_k + grant_f
 *   final completion req phase end + (final_f - grant_f) - (flits short of a full burst) * flit_f
 *
 * (docs/math-engine.md).  State is kept only for requests in flight: a request's slot is taken
 * back when the next step is priced after its final completion was polled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "math_int.h"

typedef struct math_txn {
  cs_inject req;
  double req_done_ns, rest_ns, final_ns; /* rest: final completion after the req phase */
  double wdata_gen_ns, wdata_done_ns;
  double inject_ns, rsp_inject_ns;
  uint32_t fc;      /* its flow-channel in the batch it was priced with */
  uint8_t channel;  /* cs_scheme_channel at inject */
  uint8_t scheduled, rsp_seen, delivered;
  int16_t d2d_src, d2d_dst;
} math_txn;

/* The arrays a job fills and empties, with their capacities.  The jobs of one process hand them
 * on (cs_engine_ops.shared_*): a sweep then allocates and faults in this memory once instead of
 * once per job.  Their contents never carry over: every element is written before it is read. */
typedef struct math_buffers {
  math_txn *txns; /* slots */
  size_t cap_txns;
  uint32_t *free_slots; /* slots not in use (a stack) */
  size_t cap_free;
  uint32_t *live; /* slots in use, in inject order */
  size_t cap_live;
  cs_completion *ready; /* completions due, not yet polled (FIFO) */
  size_t cap_ready;
  mfc *fcs; /* the flow-channels of the batch being priced */
  size_t cap_fcs;
  double *thresh; /* per unscheduled request: bytes of its flow-channel before it, past the first */
  size_t cap_thresh;
  size_t *cursor; /* per flow-channel: where the walk along its curve stands */
  size_t cap_cursor;
  mres res;
  mfluid fluid;
  midmap map;
  mqueue queue;
} math_buffers;

typedef struct math_engine {
  cs_job job;
  cs_math_params params; /* the job's options, or the defaults */
  mchip chip;
  uint64_t *issued; /* requests issued so far per logical GDMA (the channel rule) */
  double f_driver;  /* ticks per ns */
  uint64_t now;     /* driver tick */
  math_buffers buf;
  math_buffers *pool; /* where buf goes back when the job ends (NULL: freed) */
  size_t n_slots;     /* slots handed out so far: txns[0 .. n_slots) */
  size_t n_free, n_live;
  size_t first_unscheduled; /* live[first_unscheduled ..) wait to be priced */
  size_t batch_first, batch_n; /* the last priced batch: live[batch_first .. + batch_n) */
  bool batch_queued;           /* its req-phase completions are in the queue */
  size_t ready_head, n_ready;
} math_engine;

static void buffers_free(math_buffers *b) {
  free(b->txns);
  free(b->free_slots);
  free(b->live);
  free(b->ready);
  free(b->fcs);
  free(b->thresh);
  free(b->cursor);
  free(b->res.ids);
  mfluid_free(&b->fluid);
  free(b->map.keys);
  free(b->map.slots);
  mqueue_free(&b->queue);
  memset(b, 0, sizeof *b);
}

/* Empties the buffers for a new job, keeping their memory. */
static void buffers_reset(math_buffers *b) {
  mqueue_reset(&b->queue);
  if (b->map.cap) memset(b->map.keys, 0, b->map.cap * sizeof *b->map.keys);
  b->map.n = 0;
  b->res.n = 0;
}

static uint64_t tick_at(const math_engine *m, double ns, uint64_t floor) {
  double r = ceil(ns * m->f_driver - 1e-9); /* forgive float noise just above an integer */
  return r < (double)floor ? floor : (uint64_t)r;
}

static void math_options_default(void *params) {
  cs_math_params p = cs_math_default_params();
  memcpy(params, &p, sizeof p);
}

static int math_create(const cs_job *job, void **out, cs_err *err) {
  math_engine *m = calloc(1, sizeof *m);
  if (!m) return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  m->job = *job;
  if (job->engine.has_options)
    memcpy(&m->params, job->engine.params.bytes, sizeof m->params);
  else
    math_options_default(&m->params);
  int rc = mchip_init(&m->chip, &job->adapter, &m->params, err);
  if (rc) {
    free(m);
    return cs_err_prefix(err, "math engine");
  }
  m->issued = calloc((size_t)m->chip.endpoints, sizeof *m->issued);
  if (!m->issued) {
    mchip_free(&m->chip);
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
  mchip_free(&m->chip);
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
  if (m->n_slots || m->pool)
    return cs_err_set(err, CS_EINTERNAL, "math engine: buffers attached after the first inject");
  buffers_free(&m->buf);
  m->buf = *(math_buffers *)shared;
  memset(shared, 0, sizeof(math_buffers));
  buffers_reset(&m->buf);
  m->pool = shared;
  return CS_OK;
}

/* Gives back the slots of requests whose final completion has been polled (the driver has
 * described them: it injects nothing before its step's records are made). */
static void reclaim(math_engine *m) {
  math_buffers *b = &m->buf;
  size_t kept = 0;
  for (size_t k = 0; k < m->n_live; k++) {
    uint32_t s = b->live[k];
    if (b->txns[s].delivered) {
      midmap_remove(&b->map, b->txns[s].req.request_id);
      b->free_slots[m->n_free++] = s;
    } else {
      b->live[kept++] = s;
    }
  }
  if (m->first_unscheduled > kept) m->first_unscheduled = kept;
  m->batch_first = m->batch_n = 0;
  m->n_live = kept;
}

/* The flow-channel of a request in the batch, added if new; `hint` remembers the last two (a
 * flow's requests come together and alternate channels). */
static int fc_of(math_engine *m, const math_txn *t, size_t *n_fcs, size_t hint[2], cs_err *err) {
  math_buffers *b = &m->buf;
  for (int h = 0; h < 2; h++) {
    size_t i = hint[h];
    if (i < *n_fcs && b->fcs[i].src == t->req.src_id && b->fcs[i].dst == t->req.dst_id &&
        b->fcs[i].ch == t->channel && b->fcs[i].is_read == t->req.is_read)
      return (int)i;
  }
  for (size_t i = 0; i < *n_fcs; i++)
    if (b->fcs[i].src == t->req.src_id && b->fcs[i].dst == t->req.dst_id &&
        b->fcs[i].ch == t->channel && b->fcs[i].is_read == t->req.is_read) {
      hint[1] = hint[0];
      hint[0] = i;
      return (int)i;
    }
  if (!math_grow((void **)&b->fcs, &b->cap_fcs, *n_fcs + 1, sizeof *b->fcs)) {
    cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    return -1;
  }
  mfc *f = &b->fcs[*n_fcs];
  memset(f, 0, sizeof *f);
  f->src = t->req.src_id;
  f->dst = t->req.dst_id;
  f->ch = t->channel;
  f->is_read = t->req.is_read;
  hint[1] = hint[0];
  hint[0] = *n_fcs;
  return (int)(*n_fcs)++;
}

/* Prices every request injected since the last call (docs/math-engine.md). */
static int price_batch(math_engine *m, cs_err *err) {
  math_buffers *b = &m->buf;
  size_t first = m->first_unscheduled, n = m->n_live - first;
  if (!n) return CS_OK;
  if (!math_grow((void **)&b->thresh, &b->cap_thresh, n, sizeof *b->thresh))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  size_t n_fcs = 0, hint[2] = {SIZE_MAX, SIZE_MAX};
  /* group into flow-channels; a flow-channel's burst is its longest request's */
  for (size_t k = 0; k < n; k++) {
    math_txn *t = &b->txns[b->live[first + k]];
    int i = fc_of(m, t, &n_fcs, hint, err);
    if (i < 0) return CS_ENOMEM;
    mfc *f = &b->fcs[i];
    double bytes = (double)t->req.burst_length * m->job.adapter.bw_bytes;
    t->fc = (uint32_t)i;
    b->thresh[k] = f->n_txns ? f->bytes - f->first_bytes + bytes : 0;
    if (!f->n_txns) f->first_bytes = bytes;
    f->bytes += bytes;
    f->n_txns++;
    if (t->req.burst_length > f->burst) f->burst = t->req.burst_length;
  }
  b->res.n = 0;
  for (size_t i = 0; i < n_fcs; i++) {
    int rc = mfc_price(&m->chip, &m->params, &m->job.adapter, &b->fcs[i], &b->res, err);
    if (rc) return rc;
  }
  int rc = mfluid_solve(&b->fluid, &m->chip, b->fcs, n_fcs, &b->res, err);
  if (rc) return rc;
  if (!math_grow((void **)&b->cursor, &b->cap_cursor, n_fcs, sizeof *b->cursor))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  memset(b->cursor, 0, n_fcs * sizeof *b->cursor);
  double now_ns = (double)m->now / m->f_driver;
  for (size_t k = 0; k < n && !rc; k++) {
    math_txn *t = &b->txns[b->live[first + k]];
    const mfc *f = &b->fcs[t->fc];
    double issue = mfluid_time_at(&b->fluid, t->fc, b->thresh[k], &b->cursor[t->fc]) - f->start_ns;
    if (issue < 0) issue = 0;
    t->inject_ns = now_ns;
    t->req_done_ns = now_ns + issue + f->grant_ns;
    t->rest_ns = f->final_ns - f->grant_ns - f->flit_ns * (f->burst - t->req.burst_length);
    t->wdata_gen_ns = t->req.is_read ? 0 : now_ns + issue + f->wdata_gen_ns;
    t->wdata_done_ns = t->req.is_read ? 0 : now_ns + issue + f->wdata_done_ns;
    t->d2d_src = (int16_t)f->d2d_src;
    t->d2d_dst = (int16_t)f->d2d_dst;
    t->scheduled = 1;
  }
  m->first_unscheduled = m->n_live;
  m->batch_first = first;
  m->batch_n = n;
  m->batch_queued = false;
  return rc;
}

/* Queues the req-phase completions of the last priced batch (for the per-transaction protocol;
 * finish_step needs no queue). */
static int queue_batch(math_engine *m, cs_err *err) {
  if (m->batch_queued) return CS_OK;
  math_buffers *b = &m->buf;
  for (size_t k = 0; k < m->batch_n; k++) {
    const math_txn *t = &b->txns[b->live[m->batch_first + k]];
    if (mqueue_push(&b->queue, m->now, tick_at(m, t->req_done_ns, m->now), t->req.request_id, CS_PHASE_REQ))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  }
  m->batch_queued = true;
  return CS_OK;
}
/* llround of a record's time in cycles, without the library call: for 0 <= x < 2^63 the
 * fraction x - trunc(x) is exact (x and its truncation are both doubles, and from 2^53 on x is
 * an integer), so halves round up exactly as llround rounds them away from zero. */
static uint64_t cycles_of(double x) {
  if (!(x >= 0 && x < 9.2e18)) return (uint64_t)llround(x);
  uint64_t t = (uint64_t)x;
  return t + (x - (double)t >= 0.5);
}


/* Room for n more requests in flight: slots, the live list and the map. */
static int reserve_reqs(math_engine *m, size_t n, cs_err *err) {
  math_buffers *b = &m->buf;
  size_t fresh = n > m->n_free ? n - m->n_free : 0;
  if (m->n_slots + fresh >= UINT32_MAX ||
      !math_grow((void **)&b->txns, &b->cap_txns, m->n_slots + fresh, sizeof *b->txns) ||
      !math_grow((void **)&b->free_slots, &b->cap_free, m->n_slots + fresh, sizeof *b->free_slots) ||
      !math_grow((void **)&b->live, &b->cap_live, m->n_live + n, sizeof *b->live) ||
      !midmap_reserve(&b->map, n))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  return CS_OK;
}

/* Takes a req (room reserved). */
static int take_req(math_engine *m, const cs_inject *in, cs_err *err) {
  math_buffers *b = &m->buf;
  uint64_t id = in->request_id;
  if (in->src_id < 0 || in->src_id >= m->chip.endpoints || in->dst_id < 0 ||
      in->dst_id >= m->chip.endpoints)
    return cs_err_set(err, CS_EINVAL, "math engine: request %llu: endpoint %d->%d outside 0..%d",
                      (unsigned long long)id, in->src_id, in->dst_id, m->chip.endpoints - 1);
  uint32_t s = m->n_free ? b->free_slots[m->n_free - 1] : (uint32_t)m->n_slots;
  if (!midmap_insert(&b->map, id, s))
    return cs_err_set(err, CS_EINVAL, "math engine: request %llu is already in flight",
                      (unsigned long long)id);
  if (m->n_free)
    m->n_free--;
  else
    m->n_slots++;
  b->txns[s] = (math_txn){.req = *in, .channel = (uint8_t)cs_scheme_channel(m->issued[in->src_id]++)};
  b->live[m->n_live++] = s;
  return CS_OK;
}

static int math_inject_step(void *engine, const cs_inject *reqs, size_t n, size_t *injected,
                            cs_err *err) {
  math_engine *m = engine;
  *injected = 0;
  if (m->first_unscheduled == m->n_live) reclaim(m); /* a new batch: the last one is described */
  int rc = reserve_reqs(m, n, err);
  for (size_t i = 0; i < n && !rc; i++) {
    if (reqs[i].packet_type != CS_PKT_REQ)
      return cs_err_set(err, CS_EINVAL, "math engine: request %llu of a step is not a req",
                        (unsigned long long)reqs[i].request_id);
    if (!(rc = take_req(m, &reqs[i], err))) *injected = i + 1;
  }
  return rc;
}

static int math_inject(void *engine, const cs_inject *in, cs_err *err) {
  math_engine *m = engine;
  math_buffers *b = &m->buf;
  uint64_t id = in->request_id;
  if (in->packet_type == CS_PKT_REQ) {
    if (m->first_unscheduled == m->n_live) reclaim(m); /* a new batch: the last one is described */
    int rc = reserve_reqs(m, 1, err);
    return rc ? rc : take_req(m, in, err);
  }
  if (in->packet_type != CS_PKT_RSP)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: math engine: request %llu: only req and rsp may be injected",
                      (unsigned long long)id);
  uint32_t s = midmap_find(&b->map, id);
  if (s == UINT32_MAX || !b->txns[s].scheduled)
    return cs_err_set(err, CS_EINVAL, "math engine: rsp for unknown request %llu",
                      (unsigned long long)id);
  math_txn *t = &b->txns[s];
  t->rsp_seen = 1;
  t->rsp_inject_ns = (double)m->now / m->f_driver;
  /* the rest runs from the grant; an rsp later than the grant's tick delays it by as much */
  double late = t->rsp_inject_ns - (double)tick_at(m, t->req_done_ns, 0) / m->f_driver;
  t->final_ns = t->req_done_ns + t->rest_ns + (late > 0 ? late : 0);
  if (mqueue_push(&b->queue, m->now, tick_at(m, t->final_ns, m->now), id, CS_PHASE_FINAL))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  return CS_OK;
}

static int math_advance(void *engine, uint64_t max_ticks, cs_err *err) {
  math_engine *m = engine;
  int rc = price_batch(m, err);
  if (!rc) rc = queue_batch(m, err);
  if (rc) return rc;
  if (m->n_ready) return CS_OK;
  uint64_t limit = cs_engine_advance_limit(m->now, max_ticks), front = 0;
  mqueue *q = &m->buf.queue;
  if (q->count && mqueue_front(q, &front))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  if (!q->count || front > limit) {
    m->now = limit;
    return CS_OK;
  }
  m->now = front;
  /* bucket 0 holds exactly the events due now */
  while (q->head < q->bucket[0].n) {
    mevent e = mqueue_pop(q);
    if (!math_grow((void **)&m->buf.ready, &m->buf.cap_ready, m->ready_head + m->n_ready + 1,
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
  for (size_t k = 0; k < n; k++)
    if (out[k].phase == CS_PHASE_FINAL) {
      uint32_t s = midmap_find(&m->buf.map, out[k].request_id);
      if (s != UINT32_MAX) m->buf.txns[s].delivered = 1;
    }
  m->ready_head += n;
  m->n_ready -= n;
  if (!m->n_ready) m->ready_head = 0;
  return n;
}

static uint64_t math_now(const void *engine) { return ((const math_engine *)engine)->now; }

/* The engine's fields of a record (physical metadata and internal cycles) from its slot. */
static void fill_record(const math_engine *m, const math_txn *t, cs_txn_record *rec) {
  cs_endpoint s = cs_scheme_locate(&m->chip.die, t->req.src_id);
  cs_endpoint d = cs_scheme_locate(&m->chip.die, t->req.dst_id);
  rec->src_die = (int16_t)s.die, rec->src_node = (int16_t)s.node;
  rec->dst_die = (int16_t)d.die, rec->dst_node = (int16_t)d.node;
  rec->src_channel = rec->dst_channel = (int16_t)t->channel;
  rec->d2d_src_node = t->d2d_src;
  rec->d2d_dst_node = t->d2d_dst;
  double f = m->job.adapter.noc_frequency_ghz; /* NoC cycles per ns */
  rec->req_inject_cycle = cycles_of(t->inject_ns * f);
  rec->req_complete_cycle = cycles_of(t->req_done_ns * f);
  rec->rsp_inject_cycle = cycles_of(t->rsp_inject_ns * f);
  rec->rsp_complete_cycle = cycles_of(t->final_ns * f);
  rec->wdata_gen_cycle = t->req.is_read ? 0 : cycles_of(t->wdata_gen_ns * f);
  rec->wdata_complete_cycle = t->req.is_read ? 0 : cycles_of(t->wdata_done_ns * f);
}

static void math_describe(const void *engine, uint64_t id, cs_txn_record *rec) {
  const math_engine *m = engine;
  uint32_t s = midmap_find(&m->buf.map, id);
  if (s != UINT32_MAX) fill_record(m, &m->buf.txns[s], rec);
}

/* The driver's protocol run out in one go: every rsp injected in the tick its req phase ends.
 * Declined (nothing changed but the step's pricing, which the protocol would do the same) when
 * the step takes guard_ticks or more, where the protocol's guard might have spoken. */
static int math_finish_step(void *engine, const cs_engine_step *step, cs_txn_record *records,
                            bool *finished, cs_err *err) {
  math_engine *m = engine;
  *finished = false;
  int rc = price_batch(m, err);
  if (rc) return rc;
  math_buffers *b = &m->buf;
  if (m->n_ready || m->batch_queued || b->queue.count || m->batch_n != step->n) return CS_OK;
  const uint32_t *slot = b->live + m->batch_first;
  uint64_t end = m->now;
  for (size_t i = 0; i < step->n; i++) {
    const math_txn *t = &b->txns[slot[i]];
    if (t->req.request_id != step->reqs[i].request_id) return CS_OK;
    uint64_t req_tick = tick_at(m, t->req_done_ns, m->now);
    uint64_t fin = tick_at(m, t->req_done_ns + t->rest_ns, req_tick);
    if (fin > end) end = fin;
  }
  if (end - m->now >= step->guard_ticks) return CS_OK;
  for (size_t i = 0; i < step->n; i++) {
    math_txn *t = &b->txns[slot[i]];
    cs_txn_record *rec = &records[i];
    cs_engine_record_begin(rec, &step->reqs[i], step->step, step->now, step->extra_slots);
    rec->req_complete_tick = tick_at(m, t->req_done_ns, m->now);
    rec->rsp_inject_tick = rec->req_complete_tick;
    t->rsp_inject_ns = (double)rec->rsp_inject_tick / m->f_driver;
    t->final_ns = t->req_done_ns + t->rest_ns;
    rec->rsp_complete_tick = tick_at(m, t->final_ns, rec->req_complete_tick);
    t->rsp_seen = t->delivered = 1;
    fill_record(m, t, rec);
  }
  m->now = end;
  *finished = true;
  return CS_OK;
}

static void math_where(const void *engine, uint64_t id, char *buf, size_t cap) {
  const math_engine *m = engine;
  uint32_t s = midmap_find(&m->buf.map, id);
  const math_txn *t = s == UINT32_MAX ? NULL : &m->buf.txns[s];
  snprintf(buf, cap, "%s",
           !t ? "unknown" : !t->scheduled ? "not yet priced"
           : !t->rsp_seen ? "waiting for its req phase" : "waiting for final completion");
}

static void math_stats(const void *engine, cs_engine_stats *out) {
  (void)engine;
  memset(out, 0, sizeof *out);
}

static int math_validate(const cs_job *job, cs_err *err) {
  return cs_topo_check_adapter(&job->adapter, err); /* C2, C3: the model reads the same files */
}

/* Pricing is linear in transactions, plus a fluid solve per step and a fixed cost per job. */
static double math_cost(const cs_job *job, uint64_t num_txns, uint32_t num_steps) {
  return 0.3 * (double)num_txns + 20.0 + (2.0 + 0.5 * job->spec.num_participants) * num_steps;
}

const cs_engine_ops cs_math_ops = {
    .name = "math",
    .summary = "flow-level model of the CrossRing chip, calibrated from dcin (docs/math-engine.md)",
    .model_version = "2",
    .options = cs_math_option_fields,
    .options_size = sizeof(cs_math_params),
    .options_doc = "absent: the constants fitted to the C2 study's dcin rows",
    .options_default = math_options_default,
    .validate = math_validate,
    .cost = math_cost,
    .create = math_create,
    .inject = math_inject,
    .inject_step = math_inject_step,
    .advance = math_advance,
    .poll = math_poll,
    .now = math_now,
    .describe = math_describe,
    .finish_step = math_finish_step,
    .where = math_where,
    .stats = math_stats,
    .shared_new = math_shared_new,
    .shared_free = math_shared_free,
    .shared_attach = math_shared_attach,
    .destroy = math_destroy,
};
