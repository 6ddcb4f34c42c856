/* The math engine through the full pipeline (L1, L2, L3) against hand-computed values.
 * docs/math-engine.md has the formulas these numbers come from. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "commsweep/math_engine.h"
#include "test_support.h"

/* One die of 5x4, GDMA 0 (node 0) writes 4096 B to DDR 19 (node 19): 7 hops.
 * base 8, hop 4.5 => path P = 31.5 ns, RTT = 8 + 3P = 102.5 ns; B = 128 B/ns.
 * 8 transactions of 512 B: req k done at 8 + 2P + 4k = 71 + 4k ns (ticks at 1 GHz),
 * final at req + 512/128 + P = 106.5 + 4k -> tick 107 + 4k.  Last: tick 135. */
static void one_die_p2p(cs_job *job) {
  const int parts[] = {0, 19};
  cs_test_job(job, "math", CS_PRIM_P2P, 4096, parts, 2);
  snprintf(job->adapter.topology, sizeof job->adapter.topology, "5x4");
  snprintf(job->adapter.dcin_layout, sizeof job->adapter.dcin_layout, "1die");
  job->adapter.num_dies = 1;
  job->adapter.num_initiators = job->adapter.num_targets = 20;
  cs_test_math_params(job, (cs_math_params){8.0, 4.5, 40.0, 128.0, 192.0});
}

START_TEST(p2p_write_should_match_hand_computed_times) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  one_die_p2p(&job);
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.num_records, 8);
  for (uint64_t k = 0; k < 8; k++) {
    const cs_txn_record *r = &out.records[k];
    ck_assert_uint_eq(r->req_inject_tick, 0);
    ck_assert_uint_eq(r->req_complete_tick, 71 + 4 * k);
    ck_assert_uint_eq(r->rsp_inject_tick, 71 + 4 * k);
    ck_assert_uint_eq(r->rsp_complete_tick, 107 + 4 * k);
    ck_assert_int_eq(r->src_node, 0);
    ck_assert_int_eq(r->dst_node, 19);
    ck_assert_int_eq(r->src_channel, (int)(k % 2));
  }
  const cs_result *res = &out.result;
  ck_assert_double_eq_tol(res->total_time_us, 0.135, 1e-12);
  ck_assert_double_eq_tol(res->req_phase_us, 0.680, 1e-12);  /* sum of 71 + 4k */
  ck_assert_double_eq_tol(res->rsp_phase_us, 0.288, 1e-12);  /* 8 transactions * 36 ns */
  ck_assert_double_eq_tol(res->bus_bw_gb_per_s, 4096.0 / 135.0, 1e-9);
  ck_assert_uint_eq(res->total_comm_bytes, 4096);
  ck_assert_uint_eq(res->algorithm_steps, 1);
  ck_assert_double_eq_tol(res->max_chip_latency_us, 0.135, 1e-12);
  ck_assert_double_eq(res->straggler_ratio, 1.0);
  ck_assert_str_eq(res->engine, "math");
  cs_job_output_free(&out);
}
END_TEST

/* Two outstanding writes: B = 2 * 512 / 102.5 = 9.9902 B/ns, 51.25 ns per transaction.
 * req 7 done at 71 + 7 * 51.25 = 429.75 -> tick 430; final 430 + 51.25 + 31.5 = 512.75 -> 513. */
START_TEST(outstanding_limit_should_cap_bandwidth_by_littles_law) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  one_die_p2p(&job);
  job.adapter.mst_wr_outstanding = 2;
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.records[7].req_complete_tick, 430);
  ck_assert_uint_eq(out.records[7].rsp_complete_tick, 513);
  ck_assert_double_eq_tol(out.result.total_time_us, 0.513, 1e-12);
  cs_job_output_free(&out);
}
END_TEST

/* Allgather over GDMA 0 (die 0) and 20 (die 1) on 2die: one step, two cross-die flows, one per
 * direction, each over 4 links of 10 GB/s => B = 40 B/ns.  M = 2048: 1024 B per flow = 2
 * transactions.  Path: hops(0, 0) = 0, P = d2d 40 ns; req k at 8 + 80 + 12.8k; final at
 * req + 12.8 + 40: 140.8 -> 141 and 153.6 -> 154 (the second req at 100.8 -> tick 101). */
START_TEST(cross_die_flows_should_share_d2d_bandwidth) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {20, 0};
  cs_test_job(&job, "math", CS_PRIM_ALLGATHER, 2048, parts, 2);
  cs_test_math_params(&job, (cs_math_params){8.0, 5.5, 40.0, 128.0, 10.0});
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.num_records, 4);
  ck_assert_uint_eq(out.records[0].req_complete_tick, 88);
  ck_assert_uint_eq(out.records[0].rsp_complete_tick, 141);
  ck_assert_uint_eq(out.records[1].req_complete_tick, 101);
  ck_assert_uint_eq(out.records[1].rsp_complete_tick, 154);
  ck_assert_uint_eq(out.result.cross_die_transactions, 4);
  ck_assert_uint_eq(out.result.cross_die_bytes, 4 * 512);
  ck_assert_uint_eq(out.result.total_comm_bytes, 1024);
  ck_assert_int_eq(out.records[0].src_die, 0);
  ck_assert_int_eq(out.records[0].dst_die, 1);
  cs_job_output_free(&out);
}
END_TEST

START_TEST(every_primitive_should_give_plausible_results) {
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER,
                                CS_PRIM_ALLTOALL, CS_PRIM_P2P};
  const int parts[] = {0, 5, 22, 37, 11, 30, 2, 19};
  for (int p = 0; p < 5; p++)
    for (int n = 2; n <= 8; n *= 2) {
      if (prims[p] == CS_PRIM_P2P && n != 2) continue;
      cs_job job;
      cs_job_output out;
      cs_err err;
      cs_test_job(&job, "math", prims[p], 1 << 20, parts, n);
      ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
      const cs_result *r = &out.result;
      ck_assert(r->total_time_us > 0);
      ck_assert(r->bus_bw_gb_per_s > 0 && r->bus_bw_gb_per_s <= 128.0);
      ck_assert(r->straggler_ratio >= 1.0);
      ck_assert(r->max_chip_latency_us <= r->total_time_us + 1e-12);
      ck_assert_ptr_null(out.records);
      cs_job_output_free(&out);
    }
}
END_TEST

START_TEST(same_job_twice_should_give_identical_bits) {
  cs_job job;
  cs_job_output a, b;
  cs_err err;
  const int parts[] = {3, 14, 25, 36};
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 1000001, parts, 4);
  ck_assert_int_eq(cs_job_run(&job, true, &a, &err), CS_OK);
  ck_assert_int_eq(cs_job_run(&job, true, &b, &err), CS_OK);
  a.result.wall_time_s = b.result.wall_time_s = 0;
  ck_assert_int_eq(memcmp(&a.result, &b.result, sizeof a.result), 0);
  ck_assert_int_eq(memcmp(a.records, b.records, a.num_records * sizeof *a.records), 0);
  cs_job_output_free(&a);
  cs_job_output_free(&b);
}
END_TEST

START_TEST(invalid_job_should_fail_with_context) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {0, 1};
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 4096, parts, 2);
  job.adapter.mst_wr_outstanding = 3;
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "C4"));
  ck_assert_ptr_nonnull(strstr(err.msg, "allreduce of 4096 bytes"));
  ck_assert_ptr_null(out.records);
  cs_test_job(&job, "booksim", CS_PRIM_ALLREDUCE, 4096, parts, 2);
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "\"booksim\""));
  ck_assert_ptr_nonnull(strstr(err.msg, "math"));
}
END_TEST

/* The jobs of a process hand the engine's arrays and the job's records on (cs_job_shared): a
 * job must give the bits it gives alone after any other job, bigger or smaller. */
START_TEST(jobs_sharing_buffers_should_give_the_bits_of_each_job_alone) {
  const int parts[] = {0, 5, 22, 37, 11, 30, 2, 19};
  const struct {
    cs_primitive prim;
    unsigned long long bytes;
    int n;
  } jobs[] = {{CS_PRIM_ALLREDUCE, 1 << 20, 8}, {CS_PRIM_ALLGATHER, 4096, 2},
              {CS_PRIM_ALLTOALL, 300001, 4},   {CS_PRIM_P2P, 65536, 2},
              {CS_PRIM_REDUCESCATTER, 9, 8},   {CS_PRIM_ALLREDUCE, 1 << 20, 8}};
  cs_job_shared *sh = cs_job_shared_new();
  ck_assert_ptr_nonnull(sh);
  for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
    cs_job job;
    cs_job_output alone, shared, summary;
    cs_err err;
    cs_test_job(&job, "math", jobs[i].prim, jobs[i].bytes, parts, jobs[i].n);
    ck_assert_msg(cs_job_run(&job, true, &alone, &err) == CS_OK, "%s", err.msg);
    ck_assert_msg(cs_job_run_shared(sh, &job, true, &shared, &err) == CS_OK, "%s", err.msg);
    ck_assert_msg(cs_job_run_shared(sh, &job, false, &summary, &err) == CS_OK, "%s", err.msg);
    alone.result.wall_time_s = shared.result.wall_time_s = summary.result.wall_time_s = 0;
    ck_assert_int_eq(memcmp(&alone.result, &shared.result, sizeof alone.result), 0);
    ck_assert_int_eq(memcmp(&alone.result, &summary.result, sizeof alone.result), 0);
    ck_assert_uint_eq(shared.num_records, alone.num_records);
    ck_assert_int_eq(memcmp(alone.records, shared.records, alone.num_records * sizeof *alone.records), 0);
    ck_assert_ptr_null(summary.records);
    cs_job_output_free(&alone);
    cs_job_output_free(&shared);
  }
  cs_job_shared_free(sh);
}
END_TEST

/* Completions leave in tick order, equal ticks in injection order, also when a request comes in
 * after the engine looked ahead to a later completion.  On one_die_p2p's die (base 8 ns, 4.5 ns
 * a hop, 1 GHz driver), GDMA 0 -> DDR 19 is 7 hops: req phase done at 8 + 2 * 31.5 = 71 ns;
 * GDMA n -> DDR n is 0 hops: done 8 ns after injection. */
START_TEST(completions_should_leave_in_tick_then_injection_order) {
  cs_job job;
  cs_err err;
  void *e = NULL;
  cs_completion done[4];
  one_die_p2p(&job);
  ck_assert_int_eq(cs_math_ops.create(&job, &e, &err), CS_OK);
  cs_inject far = {.request_id = 0, .src_id = 0, .dst_id = 19, .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &far, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, 10, &err), CS_OK); /* looks at tick 71, stops at 10 */
  ck_assert_uint_eq(cs_math_ops.now(e), 10);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 4), 0);
  /* two local requests at tick 10, done at 18; injected DDR 2 first, then DDR 1 */
  cs_inject near2 = {.request_id = 2, .src_id = 2, .dst_id = 2, .packet_type = CS_PKT_REQ,
                     .burst_length = 4};
  cs_inject near1 = {.request_id = 1, .src_id = 1, .dst_id = 1, .packet_type = CS_PKT_REQ,
                     .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &near2, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.inject(e, &near1, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 4), 2);
  ck_assert_uint_eq(done[0].request_id, 2);
  ck_assert_uint_eq(done[1].request_id, 1);
  ck_assert_uint_eq(done[0].tick, 18);
  ck_assert_uint_eq(done[1].tick, 18);
  ck_assert_int_eq(done[0].phase, CS_PHASE_REQ);
  ck_assert_int_eq(cs_math_ops.advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 4), 1);
  ck_assert_uint_eq(done[0].request_id, 0);
  ck_assert_uint_eq(done[0].tick, 71);
  /* a rsp for a request never injected (id 3, below the highest id seen) is refused */
  cs_inject rsp = {.request_id = 3, .src_id = 19, .dst_id = 0, .packet_type = CS_PKT_RSP,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &rsp, &err), CS_EINVAL);
  cs_math_ops.destroy(e);
}
END_TEST

/* A guard too large to reach means "never": an advance of UINT64_MAX ticks from tick 10 still
 * delivers the completion of the 7-hop request injected then (71 ticks later, as above: tick 81),
 * and with nothing left the clock stops at UINT64_MAX instead of wrapping below the present. */
START_TEST(huge_advance_should_saturate_not_wrap) {
  cs_job job;
  cs_err err;
  void *e = NULL;
  cs_completion done[2];
  one_die_p2p(&job);
  ck_assert_int_eq(cs_math_ops.create(&job, &e, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, 10, &err), CS_OK);
  cs_inject far = {.request_id = 0, .src_id = 0, .dst_id = 19, .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &far, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, UINT64_MAX, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 2), 1);
  ck_assert_uint_eq(done[0].tick, 81);
  ck_assert_int_eq(cs_math_ops.advance(e, UINT64_MAX, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.now(e), UINT64_MAX);
  cs_math_ops.destroy(e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("math");
  TCase *tc = tcase_create("closed_form");
  tcase_add_test(tc, p2p_write_should_match_hand_computed_times);
  tcase_add_test(tc, outstanding_limit_should_cap_bandwidth_by_littles_law);
  tcase_add_test(tc, cross_die_flows_should_share_d2d_bandwidth);
  tcase_add_test(tc, every_primitive_should_give_plausible_results);
  tcase_add_test(tc, same_job_twice_should_give_identical_bits);
  tcase_add_test(tc, invalid_job_should_fail_with_context);
  tcase_add_test(tc, jobs_sharing_buffers_should_give_the_bits_of_each_job_alone);
  tcase_add_test(tc, completions_should_leave_in_tick_then_injection_order);
  tcase_add_test(tc, huge_advance_should_saturate_not_wrap);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
