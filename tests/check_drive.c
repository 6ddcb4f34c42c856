/* The L2 driver against a scripted engine: step barrier, rsp in the completion tick with reversed
 * src/dst, and the deadlock guard naming the stuck requests. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/backfill.h"
#include "commsweep/drive.h"
#include "commsweep/job.h"
#include "test_support.h"

/* A scripted engine: req k completes 10 + k % 3 ticks after injection, its rsp 5 ticks later;
 * requests in `stuck` never complete. */
typedef struct fake {
  uint64_t now;
  struct {
    uint64_t due;
    uint8_t phase, live;
    cs_inject last;
  } t[4096];
  uint64_t stuck;          /* request id that never completes, or UINT64_MAX */
  uint64_t req_delay;      /* added to every req phase (a slow but live engine) */
  bool busy;               /* simulates every tick it advances (stats), like a cycle engine */
  bool frozen;             /* advance() moves nothing: a broken engine */
  uint64_t inject_tick[4096][2];
  uint32_t injects;
  uint32_t steps_finished; /* by f_finish_step */
  uint64_t guard_seen;     /* the guard f_finish_step was given */
  uint64_t refuse;         /* request id whose req inject fails, or 0 for none */
  uint32_t step_calls;     /* calls of f_inject_step */
} fake;

static int f_inject(void *e, const cs_inject *in, cs_err *err) {
  fake *f = e;
  if (f->refuse && in->request_id == f->refuse && in->packet_type == CS_PKT_REQ)
    return cs_err_set(err, CS_EINVAL, "request %llu refused", (unsigned long long)in->request_id);
  f->t[in->request_id].last = *in;
  f->t[in->request_id].live = 1;
  f->t[in->request_id].phase = in->packet_type == CS_PKT_REQ ? CS_PHASE_REQ : CS_PHASE_FINAL;
  f->t[in->request_id].due =
      f->now + (in->packet_type == CS_PKT_REQ ? 10 + in->request_id % 3 + f->req_delay : 5);
  f->inject_tick[in->request_id][in->packet_type] = f->now;
  f->injects++;
  return CS_OK;
}

static uint64_t next_due(const fake *f) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 4096; i++)
    if (f->t[i].live && (uint64_t)i != f->stuck && f->t[i].due < best) best = f->t[i].due;
  return best;
}

static int f_advance(void *e, uint64_t max, cs_err *err) {
  fake *f = e;
  (void)err;
  if (f->frozen) return CS_OK;
  uint64_t due = next_due(f);
  f->now = due <= f->now + max ? (due > f->now ? due : f->now) : f->now + max;
  return CS_OK;
}

static size_t f_poll(void *e, cs_completion *out, size_t cap) {
  fake *f = e;
  size_t n = 0;
  for (int i = 0; i < 4096 && n < cap; i++)
    if (f->t[i].live && (uint64_t)i != f->stuck && f->t[i].due <= f->now) {
      out[n++] = (cs_completion){(uint64_t)i, f->now, f->t[i].phase};
      f->t[i].live = 0;
    }
  return n;
}

static uint64_t f_now(const void *e) { return ((const fake *)e)->now; }
static void f_describe(const void *e, uint64_t id, cs_txn_record *r) {
  (void)e;
  r->retry_count = (uint32_t)(id % 2);
}
static void f_where(const void *e, uint64_t id, char *buf, size_t cap) {
  (void)e;
  snprintf(buf, cap, "parked at node %llu", (unsigned long long)id);
}
static void f_stats(const void *e, cs_engine_stats *s) {
  const fake *f = e;
  memset(s, 0, sizeof *s);
  s->sim_cycles = f->now;
  s->skipped_cycles = f->busy ? 0 : f->now;
}

/* inject_step of the scripted engine: its inject, request by request, counted per call. */
static int f_inject_step(void *e, const cs_inject *reqs, size_t n, size_t *injected, cs_err *err) {
  fake *f = e;
  f->step_calls++;
  for (*injected = 0; *injected < n; ++*injected) {
    int rc = f_inject(e, &reqs[*injected], err);
    if (rc) return rc;
  }
  return CS_OK;
}

static const cs_engine_ops fake_ops = {.name = "fake", .inject = f_inject, .advance = f_advance,
                                       .poll = f_poll, .now = f_now, .describe = f_describe,
                                       .where = f_where, .stats = f_stats};

/* finish_step of a scripted engine that knows how its odd steps end: it plays them as its
 * advance and poll would (every req was injected at `now`; req k completes 10 + k % 3 ticks
 * later, its rsp 5 ticks after that) and leaves the even steps to the driver. */
static int f_finish_step(void *e, const cs_engine_step *step, cs_txn_record *rec, bool *finished,
                         cs_err *err) {
  fake *f = e;
  (void)err;
  f->guard_seen = step->guard_ticks;
  ck_assert_uint_eq(step->extra_slots, cs_engine_record_slots());
  *finished = false;
  if (!step->n || step->step % 2 == 0) return CS_OK;
  ck_assert_uint_eq(step->now, f->now);
  for (size_t k = 0; k < step->n; k++) {
    uint64_t id = step->reqs[k].request_id;
    cs_engine_record_begin(&rec[k], &step->reqs[k], step->step, step->now, step->extra_slots);
    rec[k].req_complete_tick = rec[k].rsp_inject_tick = step->now + 10 + id % 3;
    rec[k].rsp_complete_tick = rec[k].req_complete_tick + 5;
    f_describe(e, id, &rec[k]);
    f->t[id].live = 0;
    if (rec[k].rsp_complete_tick > f->now) f->now = rec[k].rsp_complete_tick;
  }
  f->steps_finished++;
  *finished = true;
  return CS_OK;
}

/* inject_flows of the scripted engine: its inject, req by req in flow order, counted per call. */
static int f_inject_flows(void *e, const cs_flow *flows, size_t n, cs_err *err) {
  fake *f = e;
  f->step_calls++;
  for (size_t i = 0; i < n; i++)
    for (uint64_t k = 0; k < flows[i].num_txns; k++) {
      cs_inject req = cs_flow_req(&flows[i], k);
      int rc = f_inject(e, &req, err);
      if (rc) return rc;
    }
  return CS_OK;
}

static fake *engine;
static cs_job job;
static cs_plan plan;
static cs_txn_record *records;

/* The req of request id, from the plan's flows. */
static cs_inject plan_req(uint64_t id) {
  uint32_t s = 0;
  while (plan.step_txn_begin[s + 1] <= id) s++;
  cs_flow flows[64];
  ck_assert_uint_le(plan.flows_per_step, 64);
  cs_plan_step_flows(&plan, s, flows);
  uint32_t f = 0;
  while (id >= flows[f].first_txn + flows[f].num_txns) f++;
  return cs_flow_req(&flows[f], id - flows[f].first_txn);
}

static void setup(void) {
  const int parts[] = {0, 1, 2, 3};
  cs_test_job(&job, "fake", CS_PRIM_ALLREDUCE, 8192, parts, 4);
  cs_err err;
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  ck_assert_uint_le(plan.num_txns, 4096);
  engine = calloc(1, sizeof *engine);
  engine->stuck = UINT64_MAX;
  records = calloc(plan.num_txns, sizeof *records);
}

static void teardown(void) {
  cs_plan_free(&plan);
  free(engine);
  free(records);
}

START_TEST(drive_should_keep_steps_apart) {
  cs_err err;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_OK);
  for (uint32_t s = 0; s + 1 < plan.num_steps; s++) {
    uint64_t last_final = 0;
    for (uint64_t i = plan.step_txn_begin[s]; i < plan.step_txn_begin[s + 1]; i++)
      if (records[i].rsp_complete_tick > last_final) last_final = records[i].rsp_complete_tick;
    for (uint64_t i = plan.step_txn_begin[s + 1]; i < plan.step_txn_begin[s + 2]; i++)
      ck_assert_uint_ge(records[i].req_inject_tick, last_final);
  }
}
END_TEST

START_TEST(drive_should_inject_each_rsp_reversed_in_its_completion_tick) {
  cs_err err;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_OK);
  for (uint64_t i = 0; i < plan.num_txns; i++) {
    const cs_txn_record *r = &records[i];
    ck_assert_uint_eq(r->rsp_inject_tick, r->req_complete_tick);
    ck_assert_uint_eq(r->req_complete_tick - r->req_inject_tick, 10 + i % 3);
    ck_assert_uint_eq(r->rsp_complete_tick - r->rsp_inject_tick, 5);
    ck_assert_uint_eq(r->request_id, i);
    ck_assert_uint_eq(r->retry_count, i % 2); /* describe() was called */
    const cs_inject *rsp = &engine->t[i].last;
    ck_assert_int_eq(rsp->packet_type, CS_PKT_RSP);
    cs_inject req = plan_req(i);
    ck_assert_uint_eq(req.request_id, i);
    ck_assert_int_eq(rsp->src_id, req.dst_id);
    ck_assert_int_eq(rsp->dst_id, req.src_id);
    ck_assert_uint_eq(rsp->request_id, i);
  }
  ck_assert_uint_eq(engine->injects, 2 * plan.num_txns);
}
END_TEST

/* Drives the job on the fake engine with fake_ops, then on a fresh one with ops, and checks that
 * both gave the same records; returns the second engine (the caller frees it). */
static fake *drive_both(const cs_engine_ops *ops) {
  cs_err err;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_OK);
  cs_txn_record *other_records = calloc(plan.num_txns, sizeof *other_records);
  fake *other = calloc(1, sizeof *other);
  ck_assert_ptr_nonnull(other_records);
  ck_assert_ptr_nonnull(other);
  other->stuck = UINT64_MAX;
  ck_assert_msg(cs_drive(&job, &plan, ops, other, other_records, &err) == CS_OK, "%s", err.msg);
  ck_assert_int_eq(memcmp(records, other_records, plan.num_txns * sizeof *records), 0);
  free(other_records);
  return other;
}

/* Steps an engine finishes itself (finish_step) get the records the per-transaction loop gives,
 * the driver's own fields included; the steps it declines run through that loop. */
START_TEST(drive_should_give_the_same_records_when_the_engine_finishes_steps) {
  ck_assert_uint_ge(plan.num_steps, 2);
  cs_engine_ops ops = fake_ops;
  ops.finish_step = f_finish_step;
  fake *other = drive_both(&ops);
  ck_assert_uint_eq(other->steps_finished, plan.num_steps / 2); /* the odd ones */
  ck_assert_uint_eq(other->guard_seen, job.engine.deadlock_guard_ticks);
  free(other);
}
END_TEST

/* A step's reqs handed over in one call (inject_step) give the records of injecting them one by
 * one: one call per step, then the rsps through inject as before. */
START_TEST(drive_should_give_the_same_records_when_the_engine_takes_a_step_s_reqs_at_once) {
  cs_engine_ops ops = fake_ops;
  ops.inject_step = f_inject_step;
  fake *other = drive_both(&ops);
  ck_assert_uint_eq(other->step_calls, plan.num_steps);
  ck_assert_uint_eq(other->injects, 2 * plan.num_txns); /* each req once, each rsp once */
  ck_assert_int_eq(memcmp(engine->inject_tick, other->inject_tick, sizeof engine->inject_tick), 0);
  free(other);
}
END_TEST

/* A step's reqs handed over as its flows (inject_flows) give the records of injecting them one
 * by one: one call per step. */
START_TEST(drive_should_give_the_same_records_when_the_engine_takes_a_step_s_flows) {
  cs_engine_ops ops = fake_ops;
  ops.inject_flows = f_inject_flows;
  fake *other = drive_both(&ops);
  ck_assert_uint_eq(other->step_calls, plan.num_steps);
  ck_assert_uint_eq(other->injects, 2 * plan.num_txns);
  ck_assert_int_eq(memcmp(engine->inject_tick, other->inject_tick, sizeof engine->inject_tick), 0);
  free(other);
}
END_TEST

/* A req refused inside a step's call names the same step and request as the request-by-request
 * inject does: the third req of step 1. */
START_TEST(drive_should_name_the_req_an_engine_refuses_in_a_step_s_call) {
  cs_err err[2];
  uint64_t refused = plan.step_txn_begin[1] + 2;
  fake *other = calloc(1, sizeof *other);
  ck_assert_ptr_nonnull(other);
  engine->refuse = other->refuse = refused;
  other->stuck = UINT64_MAX;
  cs_engine_ops ops = fake_ops;
  ops.inject_step = f_inject_step;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err[0]), CS_EINVAL);
  ck_assert_int_eq(cs_drive(&job, &plan, &ops, other, records, &err[1]), CS_EINVAL);
  char want[96];
  snprintf(want, sizeof want, "step 1 req %llu: request %llu refused", (unsigned long long)refused,
           (unsigned long long)refused);
  ck_assert_str_eq(err[0].msg, want);
  ck_assert_str_eq(err[1].msg, want);
  ck_assert_uint_eq(other->step_calls, 2);
  free(other);
}
END_TEST

/* An engine that simulates every tick (a cycle engine whose flits are stuck or circling) and
 * completes nothing for deadlock_guard_ticks ticks is stopped then. */
START_TEST(deadlock_guard_should_name_stuck_requests) {
  cs_err err;
  uint64_t stuck = plan.step_txn_begin[1] + 2; /* in step 1 */
  engine->stuck = stuck;
  engine->busy = true;
  job.engine.deadlock_guard_ticks = 500;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_EDEADLOCK);
  char id[32];
  snprintf(id, sizeof id, "%llu (awaiting req phase", (unsigned long long)stuck);
  ck_assert_msg(strstr(err.msg, id) != NULL, "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(err.msg, "step 1"));
  /* what it measured: 500 silent ticks, all of them simulated */
  ck_assert_msg(strstr(err.msg, "no completion for 500 consecutive ticks (deadlock_guard_ticks = "
                                "500) while the engine simulated 500 cycles"),
                "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(err.msg, "parked at node"));
  /* step 0 finished and its records stay valid */
  ck_assert_uint_gt(records[0].rsp_complete_tick, 0);
}
END_TEST

/* An engine that jumps over time without simulating (closed form) is waiting for an event it
 * knows of: a req phase 10^10 ticks long is no deadlock, whatever the guard. */
START_TEST(deadlock_guard_should_wait_for_an_engine_that_simulates_nothing) {
  cs_err err;
  engine->req_delay = 10000000000ull;
  job.engine.deadlock_guard_ticks = 1000;
  ck_assert_msg(cs_drive(&job, &plan, &fake_ops, engine, records, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_eq(records[0].req_complete_tick, 10000000000ull + 10);
}
END_TEST

/* ...but one that holds a request nothing will ever move is stopped at the idle limit, and the
 * message says it simulated nothing. */
START_TEST(deadlock_guard_should_stop_an_idle_engine_at_the_idle_limit) {
  cs_err err;
  engine->stuck = 0;
  job.engine.deadlock_guard_ticks = 500;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_EDEADLOCK);
  char want[160];
  snprintf(want, sizeof want,
           "step 0: no completion for %llu consecutive ticks and the engine simulated no cycle",
           CS_DRIVE_IDLE_LIMIT_TICKS);
  ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
  ck_assert_ptr_nonnull(strstr(err.msg, "0 (awaiting req phase"));
}
END_TEST

/* An engine whose advance() moves neither its clock nor any request (against its contract) is
 * stopped at once instead of being waited for forever. */
START_TEST(deadlock_guard_should_stop_an_engine_whose_clock_does_not_move) {
  cs_err err;
  engine->frozen = true;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_EDEADLOCK);
  ck_assert_msg(strstr(err.msg, "no completion for 0 consecutive ticks"), "%s", err.msg);
}
END_TEST

/* A legal math request latency of 1e9 ns (req_cycles 2e9 at the NoC's 2 GHz; the other
 * constants the defaults): GDMA 0 -> DDR 19 on one 5x4 die is 7 hops and a turn, H = 64.26
 * cycles, so a 4-flit write ends (2e9 + 3 H + 15.2 + 14.2 + 2 x 3) / 2 = 1e9 + 114.09 ns after it issues
 * (docs/math-engine.md).  The 4096 B are 4 transactions a channel, issued 4 ns apart: the job
 * ends at 1e9 + 126.09 ns, tick 1000000127 at 1 GHz; the default guard is 1e6 ticks. */
START_TEST(math_engine_with_a_request_latency_of_1e9_ns_should_complete) {
  const int parts[] = {0, 19};
  cs_job j;
  cs_test_job(&j, "math", CS_PRIM_P2P, 4096, parts, 2);
  snprintf(j.adapter.topology, sizeof j.adapter.topology, "5x4");
  snprintf(j.adapter.dcin_layout, sizeof j.adapter.dcin_layout, "1die");
  j.adapter.num_dies = 1;
  j.adapter.num_initiators = j.adapter.num_targets = 20;
  cs_math_params slow = cs_math_default_params();
  slow.req_cycles = 2e9;
  cs_test_math_params(&j, slow);
  cs_job_output out;
  cs_err err;
  ck_assert_msg(cs_job_run(&j, false, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_double_eq_tol(out.result.total_time_us, 1000000.127, 1e-6);
  cs_job_output_free(&out);
}
END_TEST

/* A job whose estimate (cs_job_memory) passes engine.memory_limit_bytes fails before it runs
 * with CS_ELIMIT, naming the estimate, the bound and the field to change; at its estimate it
 * runs.  The estimate is the sum of its parts and grows with what the job keeps: every record
 * (the whole job's) over a step's for a log. */
START_TEST(job_over_its_memory_bound_should_fail_naming_the_estimate_bound_and_field) {
  const int parts[] = {0, 1, 2, 3, 4, 5, 6, 7};
  cs_job j;
  cs_test_job(&j, "math", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  cs_err err;
  cs_job_memory_estimate none, logged, kept;
  ck_assert_msg(cs_job_memory(&j, 0, &none, &err) == CS_OK, "%s", err.msg);
  ck_assert_int_eq(cs_job_memory(&j, CS_JOB_LOG_STEPS, &logged, &err), CS_OK);
  ck_assert_int_eq(cs_job_memory(&j, CS_JOB_KEEP_RECORDS, &kept, &err), CS_OK);
  ck_assert_uint_eq(none.total, none.plan + none.drive + none.engine + none.records + none.backfill);
  ck_assert_uint_eq(none.bound, CS_JOB_MEMORY_DEFAULT);
  ck_assert_uint_le(none.total, logged.total);
  ck_assert_uint_lt(logged.records, kept.records); /* 14 steps: a step's records, not all */
  cs_job_output out;
  j.engine.memory_limit_bytes = none.total - 1;
  ck_assert_int_eq(cs_job_run(&j, false, &out, &err), CS_ELIMIT);
  char bound[64];
  snprintf(bound, sizeof bound, "(engine.memory_limit_bytes = %llu)",
           (unsigned long long)none.total - 1);
  ck_assert_msg(strstr(err.msg, "estimated to need") && strstr(err.msg, bound) &&
                    strstr(err.msg, "raise engine.memory_limit_bytes"),
                "%s", err.msg);
  j.engine.memory_limit_bytes = none.total;
  ck_assert_msg(cs_job_run(&j, false, &out, &err) == CS_OK, "%s", err.msg);
  cs_job_output_free(&out);
}
END_TEST

/* The records the driver fills carry what back-fill needs: the aggregates follow from them by
 * tbl-cr-09's formulas (check_backfill checks back-fill itself on hand-made records). */
START_TEST(driven_records_should_backfill_per_table_cr09) {
  cs_err err;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_OK);
  cs_result r;
  job.adapter.driver_cycle_frequency_ghz = 2.0; /* 2 ticks per ns */
  ck_assert_int_eq(cs_backfill(&job, &plan, records, NULL, "fake", &r, &err), CS_OK);
  uint64_t max_tick = 0;
  double req = 0, rsp = 0;
  for (uint64_t i = 0; i < plan.num_txns; i++) {
    max_tick = records[i].rsp_complete_tick > max_tick ? records[i].rsp_complete_tick : max_tick;
    req += (double)(records[i].req_complete_tick - records[i].req_inject_tick);
    rsp += (double)(records[i].rsp_complete_tick - records[i].rsp_inject_tick);
  }
  ck_assert_double_eq_tol(r.total_time_us, (double)max_tick / 2.0 / 1000.0, 1e-15);
  ck_assert_double_eq_tol(r.req_phase_us, req / 2000.0, 1e-12);
  ck_assert_double_eq_tol(r.rsp_phase_us, rsp / 2000.0, 1e-12);
  ck_assert_double_eq_tol(r.bus_bw_gb_per_s, (double)plan.total_comm_bytes / ((double)max_tick / 2.0), 1e-9);
  ck_assert_uint_eq(r.total_comm_bytes, 2 * 3 * 8192 / 4);
  ck_assert_uint_eq(r.algorithm_steps, 6);
  ck_assert_uint_eq(r.retries, plan.num_txns / 2);
  ck_assert(r.straggler_ratio >= 1.0);
  ck_assert_str_eq(r.engine, "fake");
}
END_TEST

/* What a streamed drive hands its sink, in one reused window. */
typedef struct sink_log {
  cs_txn_record *copy; /* the records received, at their request ids */
  uint8_t *seen;       /* per request id: received */
  uint32_t next_step;  /* by step: the step expected next; as done: the step running */
  uint64_t received, in_step;
  bool by_step;
  const cs_txn_record *window;
  cs_backfill_acc acc;
} sink_log;

static int log_step(void *ctx, uint32_t step, const cs_txn_record *recs, uint64_t n, cs_err *err) {
  sink_log *l = ctx;
  ck_assert_ptr_eq(recs, l->window);
  if (l->by_step) {
    ck_assert_uint_eq(step, l->next_step++);
    ck_assert_uint_eq(n, plan.step_txn_begin[step + 1] - plan.step_txn_begin[step]);
  } else { /* steps in order, each whole before the next */
    if (step != l->next_step) {
      ck_assert_uint_eq(l->in_step, plan.step_txn_begin[l->next_step + 1] - plan.step_txn_begin[l->next_step]);
      ck_assert_uint_eq(step, l->next_step + 1);
      l->next_step = step;
      l->in_step = 0;
    }
    l->in_step += n;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t id = recs[i].request_id;
    ck_assert_uint_ge(id, plan.step_txn_begin[step]);
    ck_assert_uint_lt(id, plan.step_txn_begin[step + 1]);
    ck_assert(!l->seen[id]);
    l->seen[id] = 1;
    l->copy[id] = recs[i];
  }
  l->received += n;
  cs_backfill_add(&l->acc, recs, n);
  (void)err;
  return CS_OK;
}

/* The same engine script driven whole and streamed (ops, order): every record equal (the window
 * starts as garbage and is reused, so nothing of a piece leaks into the next), and the back-fill
 * folded piece by piece equal to cs_backfill's over the whole array, bit for bit. */
static void streamed_like_whole(const cs_engine_ops *ops, cs_drive_order order) {
  cs_err err;
  memset(engine, 0, sizeof *engine);
  engine->stuck = UINT64_MAX;
  ck_assert_int_eq(cs_drive(&job, &plan, &fake_ops, engine, records, &err), CS_OK);
  cs_result whole;
  ck_assert_int_eq(cs_backfill(&job, &plan, records, NULL, "fake", &whole, &err), CS_OK);

  fake *again = calloc(1, sizeof *again);
  again->stuck = UINT64_MAX;
  uint64_t room = cs_drive_window(&plan, ops, order);
  cs_txn_record *window = malloc(room * sizeof *window);
  memset(window, 0xab, room * sizeof *window); /* garbage the driver must clear */
  sink_log *l = calloc(1, sizeof *l);
  l->copy = calloc(plan.num_txns, sizeof *l->copy);
  l->seen = calloc(plan.num_txns, 1);
  l->window = window;
  l->by_step = order == CS_DRIVE_BY_STEP;
  ck_assert_int_eq(cs_backfill_begin(&l->acc, &job, &err), CS_OK);
  ck_assert_msg(cs_drive_streamed(&job, &plan, ops, again, order, window, log_step, l, &err) == 0,
                "%s", err.msg);
  ck_assert_uint_eq(l->next_step, l->by_step ? plan.num_steps : plan.num_steps - 1);
  ck_assert_uint_eq(l->received, plan.num_txns);
  ck_assert_int_eq(memcmp(l->copy, records, plan.num_txns * sizeof *records), 0);
  cs_result folded;
  cs_backfill_end(&l->acc, &job, &plan, NULL, "fake", &folded);
  ck_assert_int_eq(memcmp(&folded, &whole, sizeof whole), 0);
  free(l->copy);
  free(l->seen);
  free(l);
  free(window);
  free(again);
}

START_TEST(streamed_drive_should_give_each_step_the_records_of_a_whole_drive) {
  ck_assert_uint_eq(plan.widest_step, plan.num_txns / plan.num_steps); /* a ring: equal steps */
  streamed_like_whole(&fake_ops, CS_DRIVE_BY_STEP);
  cs_engine_ops ops = fake_ops;
  ops.inject_flows = f_inject_flows;
  streamed_like_whole(&ops, CS_DRIVE_BY_STEP);
}
END_TEST

/* Folded as they finish (an engine that takes flows), the records arrive in batches smaller
 * than a step, in completion order: the same records, the same back-fill. */
START_TEST(streamed_drive_should_fold_records_as_they_finish) {
  cs_engine_ops ops = fake_ops;
  ops.inject_flows = f_inject_flows;
  ck_assert_uint_ge(plan.widest_step, 2);
  streamed_like_whole(&ops, CS_DRIVE_AS_DONE);
  streamed_like_whole(&fake_ops, CS_DRIVE_AS_DONE); /* one by one: a step at a time */
}
END_TEST

static int fail_at_step_1(void *ctx, uint32_t step, const cs_txn_record *recs, uint64_t n,
                          cs_err *err) {
  (void)recs, (void)n;
  *(uint32_t *)ctx = step;
  return step == 1 ? cs_err_set(err, CS_EIO, "sink full at step %u", step) : CS_OK;
}

/* A sink's error ends the drive with its code and message: no later step is driven. */
START_TEST(streamed_drive_should_stop_at_a_failing_sink) {
  cs_err err;
  cs_txn_record *window = malloc(cs_drive_window(&plan, &fake_ops, CS_DRIVE_BY_STEP) * sizeof *window);
  uint32_t last_step = UINT32_MAX;
  ck_assert_int_eq(cs_drive_streamed(&job, &plan, &fake_ops, engine, CS_DRIVE_BY_STEP, window,
                                     fail_at_step_1, &last_step, &err),
                   CS_EIO);
  ck_assert_str_eq(err.msg, "sink full at step 1");
  ck_assert_uint_eq(last_step, 1);
  ck_assert_uint_eq(engine->injects, 2 * plan.step_txn_begin[2]); /* req and rsp of steps 0, 1 */
  free(window);
}
END_TEST

/* The end of an advance, by hand: tick(c) = floor(c num / den), so the first cycle of tick t is
 * ceil(t den / num); past 2^64 both saturate. */
START_TEST(advance_end_should_be_the_first_cycle_of_the_target_tick_and_saturate) {
  uint64_t target;
  ck_assert_uint_eq(cs_engine_advance_end(10, 5, 1, 2, &target), 30); /* 2 cycles a tick */
  ck_assert_uint_eq(target, 15);
  ck_assert_uint_eq(cs_engine_advance_end(10, 5, 2, 1, &target), 8); /* 2 ticks a cycle: ceil(7.5) */
  ck_assert_uint_eq(cs_engine_advance_end(0, 7, 3, 2, &target), 5);  /* ceil(14 / 3) */
  ck_assert_uint_eq(cs_engine_advance_end(UINT64_MAX - 1, 5, 1, 1, &target), UINT64_MAX);
  ck_assert_uint_eq(target, UINT64_MAX);
  ck_assert_uint_eq(cs_engine_advance_end(0, 1ull << 62, 1, 8, &target), UINT64_MAX);
  ck_assert_uint_eq(target, 1ull << 62);
}
END_TEST

int main(void) {
  Suite *s = suite_create("drive");
  TCase *tc = tcase_create("loop");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, drive_should_keep_steps_apart);
  tcase_add_test(tc, advance_end_should_be_the_first_cycle_of_the_target_tick_and_saturate);
  tcase_add_test(tc, drive_should_inject_each_rsp_reversed_in_its_completion_tick);
  tcase_add_test(tc, drive_should_give_the_same_records_when_the_engine_takes_a_step_s_reqs_at_once);
  tcase_add_test(tc, drive_should_name_the_req_an_engine_refuses_in_a_step_s_call);
  tcase_add_test(tc, drive_should_give_the_same_records_when_the_engine_finishes_steps);
  tcase_add_test(tc, deadlock_guard_should_name_stuck_requests);
  tcase_add_test(tc, deadlock_guard_should_wait_for_an_engine_that_simulates_nothing);
  tcase_add_test(tc, deadlock_guard_should_stop_an_idle_engine_at_the_idle_limit);
  tcase_add_test(tc, deadlock_guard_should_stop_an_engine_whose_clock_does_not_move);
  tcase_add_test(tc, math_engine_with_a_request_latency_of_1e9_ns_should_complete);
  tcase_add_test(tc, job_over_its_memory_bound_should_fail_naming_the_estimate_bound_and_field);
  tcase_add_test(tc, driven_records_should_backfill_per_table_cr09);
  tcase_add_test(tc, streamed_drive_should_give_each_step_the_records_of_a_whole_drive);
  tcase_add_test(tc, streamed_drive_should_fold_records_as_they_finish);
  tcase_add_test(tc, streamed_drive_should_stop_at_a_failing_sink);
  tcase_add_test(tc, drive_should_give_the_same_records_when_the_engine_takes_a_step_s_flows);
  suite_add_tcase(s, tc);
  tc = tcase_create("backfill");
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
