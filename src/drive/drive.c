/* L2 closed loop.  Per step: inject every req at the step's first tick; on each req-phase
 * completion inject the rsp at once (same tick, reversed src/dst, same id); the step ends when
 * every transaction of the step has completed finally.  Steps never overlap (seed: the next
 * chunk depends on the previous transfer). */
#include "commsweep/drive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/validate.h"

enum { WAIT_REQ = 1, WAIT_FINAL = 2, DONE = 3 };

#define POLL_BATCH 256

/* Lists up to 8 stuck requests of the step with their state and the engine's location. */
static int report_deadlock(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                           void *engine, uint32_t step, const uint8_t *state, cs_err *err) {
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
  return cs_err_set(err, CS_EDEADLOCK,
                    "step %u: no completion for %llu consecutive ticks (deadlock_guard_ticks) at "
                    "tick %llu; %zu request(s) stuck: %s%s",
                    step, (unsigned long long)job->engine.deadlock_guard_ticks,
                    (unsigned long long)ops->now(engine), stuck, list, stuck > 8 ? ", ..." : "");
}

static int run_step(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
                    uint32_t step, uint8_t *state, cs_txn_record *records, cs_err *err) {
  uint64_t begin = plan->step_txn_begin[step], end = plan->step_txn_begin[step + 1];
  int rc = cs_validate_step_injects(plan->txns + begin, plan->txn_flow + begin, end - begin, step,
                                    err);
  if (rc) return rc;
  uint64_t now = ops->now(engine);
  for (uint64_t i = begin; i < end; i++) {
    const cs_inject *req = &plan->txns[i];
    if ((rc = ops->inject(engine, req, err))) return cs_err_prefix(err, "step %u req %llu", step,
                                                                    (unsigned long long)i);
    cs_txn_record *r = &records[i];
    r->request_id = req->request_id;
    r->step = step;
    r->src = req->src_id;
    r->dst = req->dst_id;
    r->is_read = req->is_read;
    r->burst_length = req->burst_length;
    r->req_inject_tick = now;
    state[i - begin] = WAIT_REQ;
  }
  uint64_t remaining = end - begin;
  cs_completion done[POLL_BATCH];
  while (remaining) {
    size_t n = ops->poll(engine, done, POLL_BATCH);
    if (n == 0) {
      if ((rc = ops->advance(engine, job->engine.deadlock_guard_ticks, err)))
        return cs_err_prefix(err, "step %u", step);
      n = ops->poll(engine, done, POLL_BATCH);
      if (n == 0) return report_deadlock(job, plan, ops, engine, step, state, err);
    }
    for (size_t k = 0; k < n; k++) {
      uint64_t id = done[k].request_id;
      if (id < begin || id >= end)
        return cs_err_set(err, CS_EINTERNAL, "step %u: engine completed request %llu outside the step",
                          step, (unsigned long long)id);
      uint8_t *st = &state[id - begin];
      cs_txn_record *r = &records[id];
      if (done[k].phase == CS_PHASE_REQ && *st == WAIT_REQ) {
        const cs_inject *req = &plan->txns[id];
        cs_inject rsp = {.request_id = id,
                         .src_id = req->dst_id,
                         .dst_id = req->src_id,
                         .is_read = req->is_read,
                         .packet_type = CS_PKT_RSP,
                         .burst_length = req->burst_length};
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

int cs_drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
             cs_txn_record *records, cs_err *err) {
  uint64_t widest = 0;
  for (uint32_t s = 0; s < plan->num_steps; s++) {
    uint64_t w = plan->step_txn_begin[s + 1] - plan->step_txn_begin[s];
    widest = w > widest ? w : widest;
  }
  uint8_t *state = calloc(widest ? widest : 1, 1);
  if (!state) return cs_err_set(err, CS_ENOMEM, "drive: out of memory");
  int rc = CS_OK;
  for (uint32_t s = 0; s < plan->num_steps && !rc; s++)
    rc = run_step(job, plan, ops, engine, s, state, records, err);
  free(state);
  return rc;
}
