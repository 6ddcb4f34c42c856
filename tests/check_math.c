/* The math engine through the full pipeline (L1, L2, L3) against hand-computed values.
 * docs/math-engine.md has the formulas; each test derives its numbers in its comment, with the
 * round constants of round_params() (NoC 2 GHz: two cycles a ns; IP and driver 1 GHz). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "commsweep/math_engine.h"
#include "test_support.h"

static cs_math_params round_params(void) {
  return (cs_math_params){.req_cycles = 10, .dbid_cycles = 16, .data_cycles = 12,
                          .read_cycles = 14, .turn_cycles = 1, .d2d_write_cycles = 8,
                          .d2d_read_cycles = 10, .d2d_flit_cycles = 1,
                          .tracker_slack_cycles = 2, .retry_ns = 70, .retry_threshold = 0.85,
                          .ring_efficiency = 1, .bucket_fraction = 1};
}

static void on_chip(cs_job *job, const char *topology, const char *layout, int dies) {
  snprintf(job->adapter.topology, sizeof job->adapter.topology, "%s", topology);
  snprintf(job->adapter.dcin_layout, sizeof job->adapter.dcin_layout, "%s", layout);
  job->adapter.num_dies = dies;
  job->adapter.num_initiators = job->adapter.num_targets = 20 * dies;
  cs_test_math_params(job, round_params());
}

/* One 5x4 die, GDMA 0 (row 0, column 0) writes M bytes to DDR 19 (row 4, column 3): 3 + 4
 * hops of 7 + 2 slices and one turn, H = 64 cycles.  A transaction of 4 flits alone: grant at
 * 10 + H = 74 cycles (37 ns), DBID at 74 + 16 + H = 154, last flit at the DDR at
 * 154 + 12 + H + 2 * 3 = 236 cycles (118 ns). */
static void one_die_p2p(cs_job *job, unsigned long long bytes) {
  const int parts[] = {0, 19};
  cs_test_job(job, "math", CS_PRIM_P2P, bytes, parts, 2);
  on_chip(job, "5x4", "1die", 1);
}

/* 4096 B = 8 transactions of 512 B, 4 per channel, 64 trackers a channel: one round, so each
 * channel moves its 3 later transactions at its IP's 128 B/ns (4 ns each).  The two channels'
 * 256 B/ns fill the ring lanes they share exactly.  Transaction k issues at 4 floor(k/2) ns:
 * req phase done at 37 + 4 floor(k/2), final at 118 + 4 floor(k/2); the job ends at 130. */
START_TEST(p2p_write_should_match_hand_computed_times) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  one_die_p2p(&job, 4096);
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.num_records, 8);
  for (uint64_t k = 0; k < 8; k++) {
    const cs_txn_record *r = &out.records[k];
    ck_assert_uint_eq(r->req_inject_tick, 0);
    ck_assert_uint_eq(r->req_complete_tick, 37 + 4 * (k / 2));
    ck_assert_uint_eq(r->rsp_inject_tick, 37 + 4 * (k / 2));
    ck_assert_uint_eq(r->rsp_complete_tick, 118 + 4 * (k / 2));
    ck_assert_uint_eq(r->wdata_gen_cycle, 154 + 8 * (k / 2));
    ck_assert_int_eq(r->src_node, 0);
    ck_assert_int_eq(r->dst_node, 19);
    ck_assert_int_eq(r->src_channel, (int)(k % 2));
    ck_assert_int_eq(r->d2d_src_node, -1);
  }
  const cs_result *res = &out.result;
  ck_assert_double_eq_tol(res->total_time_us, 0.130, 1e-12);
  ck_assert_double_eq_tol(res->req_phase_us, 0.344, 1e-12); /* 2 (37 + 41 + 45 + 49) */
  ck_assert_double_eq_tol(res->rsp_phase_us, 0.648, 1e-12); /* 8 transactions * 81 ns */
  ck_assert_double_eq_tol(res->bus_bw_gb_per_s, 4096.0 / 130.0, 1e-9);
  ck_assert_uint_eq(res->total_comm_bytes, 4096);
  ck_assert_uint_eq(res->algorithm_steps, 1);
  ck_assert_str_eq(res->engine, "math");
  cs_job_output_free(&out);
}
END_TEST

/* Two trackers a channel (mst_wr_outstanding 4), each held to the DBID plus the slack:
 * (154 + 2) / 2 = 78 ns.  A channel's 4 transactions issue in rounds of 2 every 78 ns, the
 * second of a round 4 ns after the first: the last at 78 + 4 = 82 ns, so the channel's 1536 B
 * after its first transaction take 82 ns.  Its last transaction ends at 82 + 118 = 200 ns, its
 * req phase at 82 + 37 = 119. */
START_TEST(outstanding_limit_should_cap_bandwidth_by_littles_law) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  one_die_p2p(&job, 4096);
  job.adapter.mst_wr_outstanding = 4;
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.records[7].req_complete_tick, 119);
  ck_assert_uint_eq(out.records[7].rsp_complete_tick, 200);
  ck_assert_double_eq_tol(out.result.total_time_us, 0.200, 1e-12);
  cs_job_output_free(&out);
}
END_TEST

/* 2die_spread (5x4 dies), GDMA 15 (die 0, row 3 column 3) writes 256 KiB to DDR 20 (die 1,
 * node 0).  spread picks link (15 + 0) mod 4 = 3: die 0 node 3 to die 1 node 0, for both
 * channels.  H1 = 3 hops = 27 cycles, H2 = 0.  A transaction alone: grant 10 + 27 = 37, DBID
 * 37 + 16 + 27 = 80, data at the D2D_SN 80 + 12 + 27 + 6 = 125, Comp at the GDMA
 * 125 + (20 + 20 ns) * 2 + 10 + 16 + 8 + 27 + 3 = 269 cycles = 134.5 ns.
 * 256 transactions a channel, 64 trackers held 135.5 ns: rounds of max(135.5, 64 * 4) = 256 ns,
 * so a channel alone moves at its 128 B/ns.  The two channels (256 B/ns) share the link's AXI,
 * D2D_SN and D2D_RN at 192 B/ns, whose buckets start with 192 flits = 24576 B: they drain at
 * 64 B/ns, empty at 384 ns, when each channel has moved 49152 B; the remaining
 * 130560 - 49152 = 81408 B go at 96 B/ns in 848 ns.  Served at 1232 ns, the last ends at
 * 1232 + 134.5 = 1366.5 ns: tick 1367. */
START_TEST(cross_die_flows_should_share_the_link_after_its_bucket_empties) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {15, 20};
  cs_test_job(&job, "math", CS_PRIM_P2P, 262144, parts, 2);
  on_chip(&job, "5x4", "2die_spread", 2);
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  ck_assert_uint_eq(out.num_records, 512);
  ck_assert_uint_eq(out.records[0].rsp_complete_tick, 135);
  ck_assert_uint_eq(out.records[511].rsp_complete_tick, 1367);
  ck_assert_double_eq_tol(out.result.total_time_us, 1.367, 1e-12);
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(out.records[k].d2d_src_node, 3);
    ck_assert_int_eq(out.records[k].d2d_dst_node, 0);
  }
  ck_assert_uint_eq(out.result.cross_die_transactions, 512);
  cs_job_output_free(&out);
}
END_TEST

/* 2die: ddr_index takes the candidates (die 0 nodes 0, 1, 2, 3, sorted) by DDR channel: channel
 * 0 crosses at die 0 node 0 to die 1 node 3, channel 1 at node 1 to node 2. */
START_TEST(ddr_index_should_pick_the_link_by_channel) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {15, 20};
  cs_test_job(&job, "math", CS_PRIM_P2P, 4096, parts, 2);
  cs_test_math_params(&job, round_params());
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  for (uint64_t k = 0; k < out.num_records; k++) {
    ck_assert_int_eq(out.records[k].d2d_src_node, k % 2 ? 1 : 0);
    ck_assert_int_eq(out.records[k].d2d_dst_node, k % 2 ? 2 : 3);
  }
  cs_job_output_free(&out);
}
END_TEST

/* Retry: GDMA 0 writes 64 KiB to DDR 1 (one hop, H = 9) in bursts of 2 with 32 trackers a
 * channel against 16 share trackers a DDR channel: every request is retried, and a DDR tracker
 * turns over once per Retry round, 4 H / 2 + 70 = 88 ns, so a channel moves at most
 * 16 * 256 / 88 B/ns: a transaction per 5.5 ns.  128 per channel: rounds of
 * max(23, 32 * 5.5) = 176 ns, the last issues at 3 * 176 + 31 * 5.5 = 698.5 ns and ends
 * (44 + 12 + 9 + 2) / 2 = 33.5 ns later: 732 ns. */
START_TEST(retry_should_cap_a_channel_at_the_targets_tracker_rounds) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {0, 1};
  cs_test_job(&job, "math", CS_PRIM_P2P, 65536, parts, 2);
  on_chip(&job, "5x4", "1die", 1);
  job.adapter.mst_wr_outstanding = 64;
  job.adapter.slv_wr_outstanding = 16;
  job.adapter.burst_length = 2;
  ck_assert_int_eq(cs_job_run(&job, false, &out, &err), CS_OK);
  ck_assert_double_eq_tol(out.result.total_time_us, 0.732, 1e-12);
  /* with 64 share trackers the 16 requests in flight per channel never run short */
  job.adapter.slv_wr_outstanding = 64;
  cs_job_output fast;
  ck_assert_int_eq(cs_job_run(&job, false, &fast, &err), CS_OK);
  ck_assert(fast.result.total_time_us < 0.3);
  cs_job_output_free(&out);
  cs_job_output_free(&fast);
}
END_TEST

/* The steps of a ring run back to back, each as long as its slowest flow: an allgather of N
 * participants takes N - 1 equal steps when every flow is alike.  Four participants in a row
 * of one die (0, 1, 2, 3): the slowest flow, 3 -> 0, is three hops. */
START_TEST(ring_steps_should_sum_to_the_total) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {0, 1, 2, 3};
  cs_test_job(&job, "math", CS_PRIM_ALLGATHER, 1 << 20, parts, 4);
  on_chip(&job, "5x4", "1die", 1);
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_OK);
  uint64_t end[3] = {0, 0, 0}, start[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  for (uint64_t k = 0; k < out.num_records; k++) {
    const cs_txn_record *r = &out.records[k];
    if (r->rsp_complete_tick > end[r->step]) end[r->step] = r->rsp_complete_tick;
    if (r->req_inject_tick < start[r->step]) start[r->step] = r->req_inject_tick;
  }
  ck_assert_uint_eq(start[0], 0);
  ck_assert_uint_eq(start[1], end[0]);
  ck_assert_uint_eq(start[2], end[1]);
  ck_assert_uint_eq(end[1] - start[1], end[0] - start[0]);
  ck_assert_double_eq_tol(out.result.total_time_us, (double)end[2] / 1000.0, 1e-12);
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
      /* a GDMA drives two channels of 128 GB/s */
      ck_assert(r->bus_bw_gb_per_s > 0 && r->bus_bw_gb_per_s <= 256.0);
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

/* Through the per-transaction protocol (no finish_step): completions leave in tick order, equal
 * ticks in injection order, also when a request comes in after the engine looked ahead to a
 * later completion.  GDMA 0 -> DDR 19 alone: req phase done 37 ns after injection; GDMA n ->
 * DDR n (no hop): 10 cycles, 5 ns.  Once a request's final completion has been polled, the
 * next request's pricing takes its slot back: it is unknown from then on. */
START_TEST(completions_should_leave_in_tick_then_injection_order) {
  cs_job job;
  cs_err err;
  void *e = NULL;
  cs_completion done[4];
  one_die_p2p(&job, 4096);
  ck_assert_int_eq(cs_math_ops.create(&job, &e, &err), CS_OK);
  cs_inject far = {.request_id = 0, .src_id = 0, .dst_id = 19, .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &far, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, 10, &err), CS_OK); /* looks at tick 37, stops at 10 */
  ck_assert_uint_eq(cs_math_ops.now(e), 10);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 4), 0);
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
  ck_assert_uint_eq(done[0].tick, 15);
  ck_assert_uint_eq(done[1].tick, 15);
  ck_assert_int_eq(done[0].phase, CS_PHASE_REQ);
  ck_assert_int_eq(cs_math_ops.advance(e, 1000, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 4), 1);
  ck_assert_uint_eq(done[0].request_id, 0);
  ck_assert_uint_eq(done[0].tick, 37);
  /* a rsp for a request never injected is refused */
  cs_inject rsp = {.request_id = 3, .src_id = 19, .dst_id = 0, .packet_type = CS_PKT_RSP,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &rsp, &err), CS_EINVAL);
  /* request 0 to its end: rsp at tick 37, final 118 - 37 = 81 ns later */
  rsp = (cs_inject){.request_id = 0, .src_id = 19, .dst_id = 0, .packet_type = CS_PKT_RSP,
                    .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &rsp, &err), CS_OK);
  do {
    ck_assert_int_eq(cs_math_ops.advance(e, 1000, &err), CS_OK);
  } while (!cs_math_ops.poll(e, done, 1));
  ck_assert_uint_eq(done[0].request_id, 0);
  ck_assert_uint_eq(done[0].tick, 118);
  char where[64];
  cs_math_ops.where(e, 0, where, sizeof where);
  ck_assert_str_eq(where, "waiting for final completion");
  cs_inject next = {.request_id = 4, .src_id = 3, .dst_id = 3, .packet_type = CS_PKT_REQ,
                    .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &next, &err), CS_OK);
  cs_math_ops.where(e, 0, where, sizeof where);
  ck_assert_str_eq(where, "unknown");
  cs_math_ops.where(e, 1, where, sizeof where);
  ck_assert_str_eq(where, "waiting for its req phase");
  cs_math_ops.destroy(e);
}
END_TEST

/* A guard too large to reach means "never": an advance of UINT64_MAX ticks from tick 10 still
 * delivers the completion of the request injected then (37 ticks later, as above: tick 47),
 * and with nothing left the clock stops at UINT64_MAX instead of wrapping below the present. */
START_TEST(huge_advance_should_saturate_not_wrap) {
  cs_job job;
  cs_err err;
  void *e = NULL;
  cs_completion done[2];
  one_die_p2p(&job, 4096);
  ck_assert_int_eq(cs_math_ops.create(&job, &e, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, 10, &err), CS_OK);
  cs_inject far = {.request_id = 0, .src_id = 0, .dst_id = 19, .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
  ck_assert_int_eq(cs_math_ops.inject(e, &far, &err), CS_OK);
  ck_assert_int_eq(cs_math_ops.advance(e, UINT64_MAX, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.poll(e, done, 2), 1);
  ck_assert_uint_eq(done[0].tick, 47);
  ck_assert_int_eq(cs_math_ops.advance(e, UINT64_MAX, &err), CS_OK);
  ck_assert_uint_eq(cs_math_ops.now(e), UINT64_MAX);
  cs_math_ops.destroy(e);
}
END_TEST

int main(void) {
  Suite *s = suite_create("math");
  TCase *tc = tcase_create("flow_model");
  tcase_add_test(tc, p2p_write_should_match_hand_computed_times);
  tcase_add_test(tc, outstanding_limit_should_cap_bandwidth_by_littles_law);
  tcase_add_test(tc, cross_die_flows_should_share_the_link_after_its_bucket_empties);
  tcase_add_test(tc, ddr_index_should_pick_the_link_by_channel);
  tcase_add_test(tc, retry_should_cap_a_channel_at_the_targets_tracker_rounds);
  tcase_add_test(tc, ring_steps_should_sum_to_the_total);
  tcase_add_test(tc, every_primitive_should_give_plausible_results);
  tcase_add_test(tc, same_job_twice_should_give_identical_bits);
  tcase_add_test(tc, invalid_job_should_fail_with_context);
  tcase_add_test(tc, jobs_sharing_buffers_should_give_the_bits_of_each_job_alone);
  tcase_add_test(tc, completions_should_leave_in_tick_then_injection_order);
  tcase_add_test(tc, huge_advance_should_saturate_not_wrap);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
