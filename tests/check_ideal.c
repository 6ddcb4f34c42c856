/* The ideal engine (docs/engines.md, "The ideal engine") against hand-derived values: a phase
 * of f flits injected at tick t completes at t + ceil(f * driver GHz / NoC GHz); the data is
 * burst_length flits, a phase without it one flit; nothing else takes time. */
#include <check.h>
#include <stdlib.h>

#include "commsweep/engine.h"
#include "commsweep/job.h"
#include "test_support.h"

static const cs_engine_ops *ideal(void) {
  const cs_engine_ops *ops = cs_engine_find("ideal");
  ck_assert_ptr_nonnull(ops);
  return ops;
}

/* Driver 1.5 GHz, NoC 2 GHz: 3/4 tick per NoC cycle.  Burst 5: the data phase takes
 * ceil(5 * 3/4) = 4 ticks, the header phase ceil(3/4) = 1.  A read (id 1) and a write (id 2)
 * injected at tick 0: the read's req at 1, the write's req at 4; each rsp injected when its req
 * completes: the read's at 1 + 4 = 5, the write's at 4 + 1 = 5, the read first (injected
 * first). */
START_TEST(phases_should_take_their_flits_at_one_per_noc_cycle) {
  cs_job job;
  const int parts[] = {0, 19};
  cs_test_job(&job, "ideal", CS_PRIM_P2P, 640, parts, 2);
  job.adapter.driver_cycle_frequency_ghz = 1.5;
  job.adapter.burst_length = 5;
  const cs_engine_ops *ops = ideal();
  void *e = NULL;
  cs_err err;
  ck_assert_int_eq(ops->create(&job, &e, &err), CS_OK);
  cs_inject rd = {1, 0, 19, 1, CS_PKT_REQ, 5}, wr = {2, 0, 19, 0, CS_PKT_REQ, 5};
  ck_assert_int_eq(ops->inject(e, &rd, &err), CS_OK);
  ck_assert_int_eq(ops->inject(e, &wr, &err), CS_OK);
  cs_completion c[4];
  ck_assert_int_eq(ops->advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(ops->now(e), 1);
  ck_assert_uint_eq(ops->poll(e, c, 4), 1);
  ck_assert(c[0].request_id == 1 && c[0].tick == 1 && c[0].phase == CS_PHASE_REQ);
  cs_inject rd_rsp = {1, 19, 0, 1, CS_PKT_RSP, 5};
  ck_assert_int_eq(ops->inject(e, &rd_rsp, &err), CS_OK);
  ck_assert_int_eq(ops->advance(e, 2, &err), CS_OK); /* nothing due by tick 3 */
  ck_assert_uint_eq(ops->now(e), 3);
  ck_assert_uint_eq(ops->poll(e, c, 4), 0);
  ck_assert_int_eq(ops->advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(ops->poll(e, c, 4), 1);
  ck_assert(c[0].request_id == 2 && c[0].tick == 4 && c[0].phase == CS_PHASE_REQ);
  cs_inject wr_rsp = {2, 19, 0, 0, CS_PKT_RSP, 5};
  ck_assert_int_eq(ops->inject(e, &wr_rsp, &err), CS_OK);
  ck_assert_int_eq(ops->advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(ops->poll(e, c, 4), 2);
  ck_assert(c[0].request_id == 1 && c[0].tick == 5 && c[0].phase == CS_PHASE_FINAL);
  ck_assert(c[1].request_id == 2 && c[1].tick == 5 && c[1].phase == CS_PHASE_FINAL);
  cs_inject data = {3, 0, 19, 0, CS_PKT_DATA, 5};
  ck_assert_int_eq(ops->inject(e, &data, &err), CS_ECONSTRAINT); /* C9 */
  ops->destroy(e);
}
END_TEST

/* The ring AllReduce of 1 MiB over 8 GDMAs, burst 4 x 128 B, driver 1 GHz, NoC 2 GHz (half a
 * tick per NoC cycle): 2 (8 - 1) = 14 steps, in each every GDMA moves 1 MiB / 8 = 256
 * transactions of 512 B, 14 * 8 * 256 = 28672 in all.  Every transaction takes
 * ceil(4 / 2) + ceil(1 / 2) = 3 ticks from its req to its final completion and all of a step's
 * start together, so a step lasts 3 ticks and the job 14 * 3 = 42 ticks = 42 ns. */
START_TEST(ring_allreduce_should_last_three_ticks_a_step) {
  cs_job job;
  const int parts[] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_test_job(&job, "ideal", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  cs_job_output out;
  cs_err err;
  ck_assert_msg(cs_job_run(&job, true, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_eq(out.result.algorithm_steps, 14);
  ck_assert_uint_eq(out.result.num_transactions, 28672);
  ck_assert_uint_eq(out.num_records, 28672);
  ck_assert_uint_eq(out.result.total_ticks, 42);
  ck_assert_double_eq_tol(out.result.total_time_us, 0.042, 1e-12);
  ck_assert_uint_eq(out.result.sim_cycles, 0);
  for (uint64_t i = 0; i < out.num_records; i++) {
    const cs_txn_record *r = &out.records[i];
    uint64_t req = r->is_read ? 1 : 2; /* a write's req carries the data */
    ck_assert_uint_eq(r->req_inject_tick, 3 * r->step);
    ck_assert_uint_eq(r->req_complete_tick - r->req_inject_tick, req);
    ck_assert_uint_eq(r->rsp_inject_tick, r->req_complete_tick);
    ck_assert_uint_eq(r->rsp_complete_tick, 3 * r->step + 3);
    ck_assert_int_eq(r->src_die, -1); /* no placement modelled */
  }
  cs_job_output_free(&out);
}
END_TEST

/* A lower bound: no engine finishes the same job sooner.  math (the cheapest other engine) on
 * the AllReduce above takes longer than its 42 ticks. */
START_TEST(ideal_should_bound_math_from_below) {
  cs_job job;
  const int parts[] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  cs_job_output out;
  cs_err err;
  ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_gt(out.result.total_ticks, 42);
  cs_job_output_free(&out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ideal");
  TCase *tc = tcase_create("fixed_latency");
  tcase_add_test(tc, phases_should_take_their_flits_at_one_per_noc_cycle);
  tcase_add_test(tc, ring_allreduce_should_last_three_ticks_a_step);
  tcase_add_test(tc, ideal_should_bound_math_from_below);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
