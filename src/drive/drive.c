/* L2 closed loop.  Per step: inject every req at the step's first tick; on each req-phase
 * completion inject the rsp at once (same tick, reversed src/dst, same id); the step ends when
 * every transaction of the step has completed finally.  Steps never overlap (seed: the next
 * chunk depends on the previous transfer).
 *
 * The reqs of a step go to the engine as its flows (inject_flows) or made one by one from them;
 * an engine that already knows how a step ends (one it replays) may finish it right after the
 * reqs are injected (cs_engine_ops.finish_step), with the records this loop would have made.
 * A record lives where the caller wants it (the whole job's array, a step's window) or, when
 * records are folded as they finish, in a map of the transactions in flight. */
#include "commsweep/drive.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/validate.h"
#include "drive_int.h"

enum { WAIT_REQ = 1, WAIT_FINAL = 2, DONE = 3 };

#define POLL_BATCH 256
/* Records a fold receives at a time (CS_DRIVE_AS_DONE with an engine that takes flows). */
#define FOLD_BATCH 1024

/* What the deadlock guard measured over a stretch without any completion. */
typedef struct silence {
  uint64_t since_tick;    /* driver tick of the last completion (or of the step's injection) */
  uint64_t ticks;         /* driver ticks since then */
  uint64_t worked_cycles; /* engine cycles simulated in that stretch, skipped ones excluded */
} silence;

/* One drive: where its records go and what it holds for the running step. */
typedef struct drive {
  const cs_job *job;
  const cs_plan *plan;
  const cs_engine_ops *ops;
  void *engine;
  cs_txn_record *records; /* every record of the job (cs_drive), or NULL */
  cs_txn_record *window;  /* cs_drive_window records of the streamed drive, or NULL */
  cs_drive_order order;
  cs_drive_sink sink;
  void *ctx;
  bool by_flow;    /* the engine takes flows (inject_flows) */
  bool mapped;     /* records in flight live in `inflight`, finished ones batch in window */
  uint64_t batched; /* records in window waiting for the sink (mapped) */
  cs_inflight inflight;
  uint32_t *slot;  /* mapped: per transaction of the step, its record's slot in `inflight` */
  cs_flow *flows;  /* the running step's flows */
  cs_inject *reqs; /* its reqs, for an engine that takes them one by one */
  uint8_t *state;  /* per transaction of the step: WAIT_REQ, WAIT_FINAL or DONE */
  uint32_t step;
  uint64_t begin, end, now; /* the step's request ids [begin, end), its first tick */
  size_t extra_slots;       /* cs_engine_record_slots() */
} drive;

/* Cycles the engine has simulated so far, not counting those it jumped over (0 for an engine
 * without a cycle clock, such as math). */
static uint64_t worked_cycles(const cs_engine_ops *ops, const void *engine) {
  if (!ops->stats) return 0;
  cs_engine_stats st;
  ops->stats(engine, &st);
  return st.sim_cycles > st.skipped_cycles ? st.sim_cycles - st.skipped_cycles : 0;
}

/* Lists up to 8 stuck requests of the step with their state and the engine's location, after
 * what the guard measured. */
static int report_deadlock(const drive *d, const silence *quiet, cs_err *err) {
  char list[CS_ERR_MSG_MAX / 2];
  size_t used = 0, stuck = 0;
  list[0] = '\0';
  for (uint64_t i = d->begin; i < d->end; i++) {
    uint8_t st = d->state[i - d->begin];
    if (st == DONE) continue;
    if (stuck++ < 8 && used < sizeof list) {
      char where[128] = "";
      if (d->ops->where) d->ops->where(d->engine, i, where, sizeof where);
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%llu (%s; %s)", used ? ", " : "",
                               (unsigned long long)i,
                               st == WAIT_REQ ? "awaiting req phase" : "awaiting final completion",
                               where);
    }
  }
  char measured[256];
  if (quiet->worked_cycles)
    snprintf(measured, sizeof measured,
             "no completion for %llu consecutive ticks (deadlock_guard_ticks = %llu) while the "
             "engine simulated %llu cycles",
             (unsigned long long)quiet->ticks,
             (unsigned long long)d->job->engine.deadlock_guard_ticks,
             (unsigned long long)quiet->worked_cycles);
  else
    snprintf(measured, sizeof measured,
             "no completion for %llu consecutive ticks and the engine simulated no cycle in them: "
             "nothing it holds will ever move (idle limit %llu ticks)",
             (unsigned long long)quiet->ticks, (unsigned long long)CS_DRIVE_IDLE_LIMIT_TICKS);
  return cs_err_set(err, CS_EDEADLOCK, "step %u: %s, from tick %llu to %llu; %zu request(s) stuck: %s%s",
                    d->step, measured, (unsigned long long)quiet->since_tick,
                    (unsigned long long)d->ops->now(d->engine), stuck, list, stuck > 8 ? ", ..." : "");
}

/* Advances until completions are pending and polls them into done; returns how many, or 0 with
 * *quiet filled when the guard fires.  The guard: deadlock_guard_ticks ticks without a
 * completion in which the engine simulated cycles is a deadlock (or a livelock).  Ticks an
 * engine jumps over without simulating (a closed-form engine always does: a math transaction
 * may legally take 1e9 ns) are not evidence of one, since the engine knows its next event; the
 * stretch then grows geometrically, and only CS_DRIVE_IDLE_LIMIT_TICKS of it, with still
 * nothing simulated, is taken as an engine that holds requests nothing will ever move. */
static size_t await_completions(const cs_job *job, const cs_engine_ops *ops, void *engine,
                                cs_completion *done, silence *quiet, int *rc, cs_err *err) {
  uint64_t guard = job->engine.deadlock_guard_ticks ? job->engine.deadlock_guard_ticks : 1;
  uint64_t idle_limit = guard > CS_DRIVE_IDLE_LIMIT_TICKS ? guard : CS_DRIVE_IDLE_LIMIT_TICKS;
  uint64_t start_work = worked_cycles(ops, engine);
  quiet->since_tick = ops->now(engine);
  quiet->ticks = quiet->worked_cycles = 0;
  uint64_t window = guard, before = quiet->since_tick;
  for (;;) {
    if ((*rc = ops->advance(engine, window, err))) return 0;
    size_t n = ops->poll(engine, done, POLL_BATCH);
    if (n) return n;
    uint64_t now = ops->now(engine);
    quiet->ticks = now - quiet->since_tick;
    quiet->worked_cycles = worked_cycles(ops, engine) - start_work;
    if (quiet->worked_cycles ? quiet->ticks >= guard : quiet->ticks >= idle_limit) return 0;
    if (now == before) return 0; /* neither time nor a completion: the engine cannot go on */
    before = now;
    /* nothing simulated yet: double the stretch; once the engine works, go on in guard steps */
    window = quiet->worked_cycles ? guard : quiet->ticks > guard ? quiet->ticks : guard;
    if (!quiet->worked_cycles && window > idle_limit - quiet->ticks)
      window = idle_limit - quiet->ticks;
  }
}

/* The rsp of a req: same id, reversed src/dst (C10). */
static cs_inject rsp_of(const cs_inject *req) {
  return (cs_inject){.request_id = req->request_id,
                     .src_id = req->dst_id,
                     .dst_id = req->src_id,
                     .is_read = req->is_read,
                     .packet_type = CS_PKT_RSP,
                     .burst_length = req->burst_length};
}

/* The req of id in the running step: from the step's reqs, or from its flow (found by binary
 * search over the flows' first ids). */
static cs_inject req_of(const drive *d, uint64_t id) {
  if (d->reqs) return d->reqs[id - d->begin];
  uint32_t lo = 0, hi = d->plan->flows_per_step - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (d->flows[mid].first_txn <= id) lo = mid;
    else hi = mid - 1;
  }
  return cs_flow_req(&d->flows[lo], id - d->flows[lo].first_txn);
}

/* Where the record of id goes while the step runs (NULL: out of memory, mapped only). */
static cs_txn_record *record_of(drive *d, uint64_t id, bool fresh) {
  if (d->records) return &d->records[id];
  if (!d->mapped) return &d->window[id - d->begin];
  uint32_t *slot = &d->slot[id - d->begin];
  return fresh ? cs_inflight_take(&d->inflight, slot) : cs_inflight_at(&d->inflight, *slot);
}

/* Hands the batched records to the sink (mapped drives). */
static int flush_batch(drive *d, cs_err *err) {
  if (!d->batched) return CS_OK;
  uint64_t n = d->batched;
  d->batched = 0;
  return d->sink ? d->sink(d->ctx, d->step, d->window, n, err) : CS_OK;
}

/* The step's rest handed to an engine that knows it (cs_engine_ops.finish_step), after the
 * checks the per-transaction loop makes of every rsp it would inject. */
static int finish_step(drive *d, bool *finished, cs_err *err) {
  for (uint64_t i = d->begin; i < d->end; i++) {
    cs_inject rsp = rsp_of(&d->reqs[i - d->begin]);
    int rc = cs_validate_rsp(&d->reqs[i - d->begin], &rsp, err);
    if (rc) return rc;
  }
  cs_engine_step at = {.reqs = d->reqs,
                       .n = d->end - d->begin,
                       .step = d->step,
                       .now = d->now,
                       .guard_ticks = d->job->engine.deadlock_guard_ticks
                                          ? d->job->engine.deadlock_guard_ticks
                                          : 1,
                       .extra_slots = d->extra_slots};
  cs_txn_record *recs = d->records ? d->records + d->begin : d->window;
  int rc = d->ops->finish_step(d->engine, &at, recs, finished, err);
  return rc ? cs_err_prefix(err, "step %u", d->step) : CS_OK;
}

/* Gives the engine the step's reqs: as flows, or one by one (then *finished when the engine
 * took the whole step at once). */
static int inject_reqs(drive *d, bool *finished, cs_err *err) {
  const cs_engine_ops *ops = d->ops;
  uint64_t n = d->end - d->begin;
  int rc;
  *finished = false;
  if (d->by_flow) {
    if ((rc = ops->inject_flows(d->engine, d->flows, d->plan->flows_per_step, err)))
      return cs_err_prefix(err, "step %u", d->step);
    return CS_OK;
  }
  cs_plan_step_reqs(d->plan, d->flows, d->reqs);
  if (ops->inject_step) {
    size_t injected = 0;
    if ((rc = ops->inject_step(d->engine, d->reqs, n, &injected, err)))
      return cs_err_prefix(err, "step %u req %llu", d->step,
                           (unsigned long long)(d->begin + injected));
  } else {
    for (uint64_t i = 0; i < n; i++)
      if ((rc = ops->inject(d->engine, &d->reqs[i], err)))
        return cs_err_prefix(err, "step %u req %llu", d->step, (unsigned long long)(d->begin + i));
  }
  return ops->finish_step ? finish_step(d, finished, err) : CS_OK;
}

/* A completion of the running step: the rsp after a req phase, the record after the final. */
static int complete(drive *d, const cs_completion *c, uint64_t *remaining, cs_err *err) {
  uint64_t id = c->request_id;
  if (id < d->begin || id >= d->end)
    return cs_err_set(err, CS_EINTERNAL, "step %u: engine completed request %llu outside the step",
                      d->step, (unsigned long long)id);
  uint8_t *st = &d->state[id - d->begin];
  int rc;
  if (c->phase == CS_PHASE_REQ && *st == WAIT_REQ) {
    cs_inject req = req_of(d, id), rsp = rsp_of(&req);
    if ((rc = cs_validate_rsp(&req, &rsp, err))) return rc;
    cs_txn_record *r = record_of(d, id, true);
    if (!r) return cs_err_set(err, CS_ENOMEM, "step %u: out of memory for the records in flight", d->step);
    cs_engine_record_begin(r, &req, d->step, d->now, d->extra_slots);
    r->req_complete_tick = c->tick;
    r->rsp_inject_tick = d->ops->now(d->engine);
    if ((rc = d->ops->inject(d->engine, &rsp, err)))
      return cs_err_prefix(err, "step %u rsp %llu", d->step, (unsigned long long)id);
    *st = WAIT_FINAL;
    return CS_OK;
  }
  if (c->phase == CS_PHASE_FINAL && *st == WAIT_FINAL) {
    cs_txn_record *r = record_of(d, id, false);
    r->rsp_complete_tick = c->tick;
    d->ops->describe(d->engine, id, r);
    *st = DONE;
    (*remaining)--;
    if (!d->mapped) return CS_OK;
    d->window[d->batched++] = *r;
    cs_inflight_give(&d->inflight, d->slot[id - d->begin]);
    return d->batched == FOLD_BATCH ? flush_batch(d, err) : CS_OK;
  }
  return cs_err_set(err, CS_EINTERNAL, "step %u: request %llu completed phase %u out of order",
                    d->step, (unsigned long long)id, c->phase);
}

static int run_step(drive *d, uint32_t step, cs_err *err) {
  d->step = step;
  d->begin = d->plan->step_txn_begin[step];
  d->end = d->plan->step_txn_begin[step + 1];
  cs_plan_step_flows(d->plan, step, d->flows);
  int rc = cs_plan_check_step_flows(d->flows, d->plan->flows_per_step, step, err);
  if (rc) return rc;
  d->now = d->ops->now(d->engine);
  bool finished;
  if ((rc = inject_reqs(d, &finished, err))) return rc;
  if (finished) return CS_OK;
  uint64_t remaining = d->end - d->begin;
  memset(d->state, WAIT_REQ, remaining);
  cs_completion done[POLL_BATCH];
  while (remaining) {
    size_t n = d->ops->poll(d->engine, done, POLL_BATCH);
    if (n == 0) {
      silence quiet;
      n = await_completions(d->job, d->ops, d->engine, done, &quiet, &rc, err);
      if (rc) return cs_err_prefix(err, "step %u", step);
      if (n == 0) return report_deadlock(d, &quiet, err);
    }
    for (size_t k = 0; k < n; k++)
      if ((rc = complete(d, &done[k], &remaining, err))) return rc;
  }
  return CS_OK;
}

uint64_t cs_drive_window(const cs_plan *plan, const cs_engine_ops *ops, cs_drive_order order) {
  if (order == CS_DRIVE_AS_DONE && ops->inject_flows)
    return plan->widest_step < FOLD_BATCH ? (plan->widest_step ? plan->widest_step : 1) : FOLD_BATCH;
  return plan->widest_step ? plan->widest_step : 1;
}

uint64_t cs_drive_bytes(const cs_plan *plan, const cs_engine_ops *ops, cs_drive_order order,
                        uint64_t inflight) {
  uint64_t w = plan->widest_step;
  uint64_t bytes = (uint64_t)plan->flows_per_step * sizeof(cs_flow) + w; /* flows, state */
  if (!ops->inject_flows) bytes += w * sizeof(cs_inject);
  if (order == CS_DRIVE_AS_DONE && ops->inject_flows) /* slots, records in flight */
    bytes += w * sizeof(uint32_t) + cs_inflight_bytes(inflight < w ? inflight : w);
  return bytes;
}

/* records: every record of the job, or NULL for a streamed drive through window into sink. */
static int drive_job(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                     void *engine, cs_txn_record *records, cs_drive_order order,
                     cs_txn_record *window, cs_drive_sink sink, void *ctx, cs_err *err) {
  drive d = {.job = job, .plan = plan, .ops = ops, .engine = engine, .records = records,
             .window = window, .order = order, .sink = sink, .ctx = ctx,
             .by_flow = ops->inject_flows != NULL,
             .extra_slots = cs_engine_record_slots()}; /* -1 until the engine fills its own */
  d.mapped = !records && order == CS_DRIVE_AS_DONE && d.by_flow;
  cs_inflight_init(&d.inflight);
  uint64_t widest = plan->widest_step ? plan->widest_step : 1;
  d.flows = malloc((plan->flows_per_step ? plan->flows_per_step : 1) * sizeof *d.flows);
  d.state = malloc(widest);
  d.reqs = d.by_flow ? NULL : malloc(widest * sizeof *d.reqs);
  d.slot = d.mapped ? malloc(widest * sizeof *d.slot) : NULL;
  int rc = CS_OK;
  if (!d.flows || !d.state || (!d.by_flow && !d.reqs) || (d.mapped && !d.slot))
    rc = cs_err_set(err, CS_ENOMEM, "drive: out of memory for a step of %llu transactions",
                    (unsigned long long)widest);
  for (uint32_t s = 0; s < plan->num_steps && !rc; s++) {
    rc = run_step(&d, s, err);
    if (rc || !sink) continue;
    if (d.mapped) rc = flush_batch(&d, err);
    else rc = sink(ctx, s, window, d.end - d.begin, err);
  }
  cs_inflight_free(&d.inflight);
  free(d.flows);
  free(d.state);
  free(d.reqs);
  free(d.slot);
  return rc;
}

int cs_drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
             cs_txn_record *records, cs_err *err) {
  return drive_job(job, plan, ops, engine, records, CS_DRIVE_BY_STEP, NULL, NULL, NULL, err);
}

int cs_drive_streamed(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                      void *engine, cs_drive_order order, cs_txn_record *window,
                      cs_drive_sink sink, void *ctx, cs_err *err) {
  return drive_job(job, plan, ops, engine, NULL, order, window, sink, ctx, err);
}
