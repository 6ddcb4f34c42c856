/* L2 closed loop.  Per step: inject every req at the step's first tick; on each req-phase
 * completion inject the rsp at once (same tick, reversed src/dst, same id); the step ends when
 * every transaction of the step has completed finally.  Steps never overlap (seed: the next
 * chunk depends on the previous transfer).  An engine that already knows how a step ends (one
 * it replays) may finish it right after the reqs are injected (cs_engine_ops.finish_step), with
 * the records this loop would have made. */
#include "commsweep/drive.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/validate.h"

enum { WAIT_REQ = 1, WAIT_FINAL = 2, DONE = 3 };

#define POLL_BATCH 256

/* What the deadlock guard measured over a stretch without any completion. */
typedef struct silence {
  uint64_t since_tick;    /* driver tick of the last completion (or of the step's injection) */
  uint64_t ticks;         /* driver ticks since then */
  uint64_t worked_cycles; /* engine cycles simulated in that stretch, skipped ones excluded */
} silence;

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
static int report_deadlock(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                           void *engine, uint32_t step, const uint8_t *state, const silence *quiet,
                           cs_err *err) {
  char list[CS_ERR_MSG_MAX / 2];
  size_t used = 0, stuck = 0;
  list[0] = '\0';
  for (uint64_t i = plan->step_txn_begin[step]; i < plan->step_txn_begin[step + 1]; i++) {
    uint8_t st = state[i - plan->step_txn_begin[step]];
    if (st == DONE) continue;
    if (stuck++ < 8 && used < sizeof list) {
      char where[128] = "";
      if (ops->where) ops->where(engine, i, where, sizeof where);
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
             (unsigned long long)quiet->ticks, (unsigned long long)job->engine.deadlock_guard_ticks,
             (unsigned long long)quiet->worked_cycles);
  else
    snprintf(measured, sizeof measured,
             "no completion for %llu consecutive ticks and the engine simulated no cycle in them: "
             "nothing it holds will ever move (idle limit %llu ticks)",
             (unsigned long long)quiet->ticks, (unsigned long long)CS_DRIVE_IDLE_LIMIT_TICKS);
  return cs_err_set(err, CS_EDEADLOCK, "step %u: %s, from tick %llu to %llu; %zu request(s) stuck: %s%s",
                    step, measured, (unsigned long long)quiet->since_tick,
                    (unsigned long long)ops->now(engine), stuck, list, stuck > 8 ? ", ..." : "");
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

/* The step's rest handed to an engine that knows it (cs_engine_ops.finish_step), after the
 * checks the per-transaction loop makes of every rsp it would inject. */
static int finish_step(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                       void *engine, uint32_t step, uint64_t now, size_t extra_slots,
                       cs_txn_record *step_records, bool *finished, cs_err *err) {
  uint64_t begin = plan->step_txn_begin[step], end = plan->step_txn_begin[step + 1];
  for (uint64_t i = begin; i < end; i++) {
    cs_inject rsp = rsp_of(&plan->txns[i]);
    int rc = cs_validate_rsp(&plan->txns[i], &rsp, err);
    if (rc) return rc;
  }
  cs_engine_step at = {.reqs = plan->txns + begin,
                       .n = end - begin,
                       .step = step,
                       .now = now,
                       .guard_ticks = job->engine.deadlock_guard_ticks
                                          ? job->engine.deadlock_guard_ticks
                                          : 1,
                       .extra_slots = extra_slots};
  int rc = ops->finish_step(engine, &at, step_records, finished, err);
  return rc ? cs_err_prefix(err, "step %u", step) : CS_OK;
}

/* Records of the step's transactions go to step_records[id - first id of the step]. */
static int run_step(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
                    uint32_t step, uint8_t *state, cs_txn_record *step_records, cs_err *err) {
  uint64_t begin = plan->step_txn_begin[step], end = plan->step_txn_begin[step + 1];
  int rc = cs_validate_step_injects(plan->txns + begin, plan->txn_flow + begin, end - begin, step,
                                    err);
  if (rc) return rc;
  uint64_t now = ops->now(engine);
  size_t extra_slots = cs_engine_record_slots(); /* -1 until the job's engine fills its own */
  if (ops->inject_step) {
    size_t injected = 0;
    if ((rc = ops->inject_step(engine, plan->txns + begin, end - begin, &injected, err)))
      return cs_err_prefix(err, "step %u req %llu", step, (unsigned long long)(begin + injected));
  } else {
    for (uint64_t i = begin; i < end; i++)
      if ((rc = ops->inject(engine, &plan->txns[i], err)))
        return cs_err_prefix(err, "step %u req %llu", step, (unsigned long long)i);
  }
  if (ops->finish_step) {
    bool finished = false;
    if ((rc = finish_step(job, plan, ops, engine, step, now, extra_slots, step_records, &finished,
                          err)))
      return rc;
    if (finished) return CS_OK;
  }
  for (uint64_t i = begin; i < end; i++) {
    cs_engine_record_begin(&step_records[i - begin], &plan->txns[i], step, now, extra_slots);
    state[i - begin] = WAIT_REQ;
  }
  uint64_t remaining = end - begin;
  cs_completion done[POLL_BATCH];
  while (remaining) {
    size_t n = ops->poll(engine, done, POLL_BATCH);
    if (n == 0) {
      silence quiet;
      n = await_completions(job, ops, engine, done, &quiet, &rc, err);
      if (rc) return cs_err_prefix(err, "step %u", step);
      if (n == 0) return report_deadlock(job, plan, ops, engine, step, state, &quiet, err);
    }
    for (size_t k = 0; k < n; k++) {
      uint64_t id = done[k].request_id;
      if (id < begin || id >= end)
        return cs_err_set(err, CS_EINTERNAL, "step %u: engine completed request %llu outside the step",
                          step, (unsigned long long)id);
      uint8_t *st = &state[id - begin];
      cs_txn_record *r = &step_records[id - begin];
      if (done[k].phase == CS_PHASE_REQ && *st == WAIT_REQ) {
        const cs_inject *req = &plan->txns[id];
        cs_inject rsp = rsp_of(req);
        if ((rc = cs_validate_rsp(req, &rsp, err))) return rc;
        r->req_complete_tick = done[k].tick;
        r->rsp_inject_tick = ops->now(engine);
        if ((rc = ops->inject(engine, &rsp, err)))
          return cs_err_prefix(err, "step %u rsp %llu", step, (unsigned long long)id);
        *st = WAIT_FINAL;
      } else if (done[k].phase == CS_PHASE_FINAL && *st == WAIT_FINAL) {
        r->rsp_complete_tick = done[k].tick;
        ops->describe(engine, id, r);
        *st = DONE;
        remaining--;
      } else {
        return cs_err_set(err, CS_EINTERNAL, "step %u: request %llu completed phase %u out of order",
                          step, (unsigned long long)id, done[k].phase);
      }
    }
  }
  return CS_OK;
}

uint64_t cs_drive_widest_step(const cs_plan *plan) {
  uint64_t widest = 0;
  for (uint32_t s = 0; s < plan->num_steps; s++) {
    uint64_t w = plan->step_txn_begin[s + 1] - plan->step_txn_begin[s];
    widest = w > widest ? w : widest;
  }
  return widest;
}

/* window NULL: records for the whole plan; else room for the widest step, reused per step. */
static int drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
                 cs_txn_record *records, cs_txn_record *window, cs_drive_sink sink, void *ctx,
                 cs_err *err) {
  uint64_t widest = cs_drive_widest_step(plan);
  uint8_t *state = calloc(widest ? widest : 1, 1);
  if (!state) return cs_err_set(err, CS_ENOMEM, "drive: out of memory");
  int rc = CS_OK;
  for (uint32_t s = 0; s < plan->num_steps && !rc; s++) {
    uint64_t begin = plan->step_txn_begin[s], n = plan->step_txn_begin[s + 1] - begin;
    cs_txn_record *step_records = window ? window : records + begin;
    rc = run_step(job, plan, ops, engine, s, state, step_records, err);
    if (!rc && sink) rc = sink(ctx, s, step_records, n, err);
  }
  free(state);
  return rc;
}

int cs_drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
             cs_txn_record *records, cs_err *err) {
  return drive(job, plan, ops, engine, records, NULL, NULL, NULL, err);
}

int cs_drive_streamed(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                      void *engine, cs_txn_record *window, cs_drive_sink sink, void *ctx,
                      cs_err *err) {
  return drive(job, plan, ops, engine, NULL, window, sink, ctx, err);
}
