/* Every primitive through the full adapter on the dcin engine, on 1 and 2 dies, for N = 2, 4, 8:
 * plausible results (bus bandwidth within the endpoints' physical limit, straggler ratio >= 1,
 * transaction records complete and ordered) and bit-identical repeats. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "test_support.h"

/* A logical GDMA drives two DMA channels of one flit (128 B) per 1 ns IP cycle each. */
#define PEAK_GB_PER_S 256.0

static void make(cs_job *job, cs_primitive p, int n, bool two_dies) {
  /* Spread the participants over the dies: 2-die sets mix both dies. */
  const int one_die[] = {0, 19, 5, 14, 2, 17, 8, 11};
  const int two_die[] = {0, 39, 22, 13, 5, 30, 18, 27};
  cs_test_job(job, "dcin", p, 16384, two_dies ? two_die : one_die, n);
  if (!two_dies) {
    snprintf(job->adapter.topology, sizeof job->adapter.topology, "5x4");
    snprintf(job->adapter.dcin_layout, sizeof job->adapter.dcin_layout, "1die");
    job->adapter.num_dies = 1;
    job->adapter.num_initiators = job->adapter.num_targets = 20;
  }
}

START_TEST(every_primitive_should_run_plausibly_on_dcin) {
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER,
                                CS_PRIM_ALLTOALL, CS_PRIM_P2P};
  bool two_dies = _i / 5;
  cs_primitive p = prims[_i % 5];
  for (int n = 2; n <= 8; n *= 2) {
    if (p == CS_PRIM_P2P && n != 2) continue;
    cs_job job;
    cs_job_output out;
    cs_err err;
    make(&job, p, n, two_dies);
    ck_assert_msg(cs_job_run(&job, true, &out, &err) == CS_OK, "%s", err.msg);
    const cs_result *r = &out.result;
    ck_assert_str_eq(r->engine, "dcin");
    ck_assert_uint_gt(r->sim_cycles, 0);
    ck_assert(r->total_time_us > 0);
    ck_assert_msg(r->bus_bw_gb_per_s > 0 && r->bus_bw_gb_per_s <= PEAK_GB_PER_S,
                  "%s N=%d busbw %.1f", cs_primitive_name(p), n, r->bus_bw_gb_per_s);
    ck_assert(r->straggler_ratio >= 1.0);
    uint64_t cross = 0;
    for (uint64_t i = 0; i < out.num_records; i++) {
      const cs_txn_record *t = &out.records[i];
      ck_assert_uint_le(t->req_inject_tick, t->req_complete_tick);
      ck_assert_uint_eq(t->rsp_inject_tick, t->req_complete_tick);
      ck_assert_uint_lt(t->rsp_inject_tick, t->rsp_complete_tick);
      ck_assert_uint_le(t->req_inject_cycle, t->req_complete_cycle);
      ck_assert_uint_le(t->rsp_inject_cycle, t->rsp_complete_cycle);
      cross += t->src_die != t->dst_die;
    }
    ck_assert_uint_eq(cross, r->cross_die_transactions);
    if (!two_dies) ck_assert_uint_eq(cross, 0);
    cs_job_output again;
    ck_assert_int_eq(cs_job_run(&job, true, &again, &err), CS_OK);
    again.result.wall_time_s = out.result.wall_time_s;
    ck_assert_int_eq(memcmp(&again.result, &out.result, sizeof out.result), 0);
    ck_assert_int_eq(memcmp(again.records, out.records, out.num_records * sizeof *out.records), 0);
    cs_job_output_free(&again);
    /* without kept records the back-fill and the step summaries are folded a step at a time:
     * the same result, and the summaries of the kept records */
    cs_job_output streamed;
    ck_assert_int_eq(cs_job_run_keeping(NULL, &job, CS_JOB_KEEP_STEPS, &streamed, &err), CS_OK);
    ck_assert_ptr_null(streamed.records);
    streamed.result.wall_time_s = out.result.wall_time_s;
    ck_assert_int_eq(memcmp(&streamed.result, &out.result, sizeof out.result), 0);
    ck_assert_uint_eq(streamed.num_steps, r->algorithm_steps);
    cs_step_summary *sums = calloc(streamed.num_steps, sizeof *sums);
    ck_assert_int_eq(cs_backfill_steps(out.records, out.num_records, streamed.num_steps,
                                       job.adapter.bw_bytes, sums, &err), CS_OK);
    ck_assert_int_eq(memcmp(sums, streamed.steps, streamed.num_steps * sizeof *sums), 0);
    free(sums);
    cs_job_output_free(&streamed);
    cs_job_output_free(&out);
  }
}
END_TEST

/* Pairwise all-to-all over 8 GDMAs on both dies with spread D2D links: flits stall at the ring
 * wrap while standing on their eject slice, and must retry there every cycle (this job once
 * stopped at step 4).  5087 cycles is what the slice-by-slice ring scan gives when a completely
 * full ring rotates as a whole (check_dcin compares the movement with that scan); a ring of this
 * job fills up for a moment, and the scan that froze full rings gave 5099.
 * Golden value (program output, labelled): no reference figure exists for this job (CrossRing
 * was not run on it). */
START_TEST(alltoall_with_wrap_stalls_should_complete) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  const int parts[] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_test_job(&job, "dcin", CS_PRIM_ALLTOALL, 262144, parts, 8);
  snprintf(job.adapter.topology, sizeof job.adapter.topology, "5x4");
  snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "2die_spread");
  job.adapter.mst_rd_outstanding = job.adapter.mst_wr_outstanding = 64;
  ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_eq(out.result.sim_cycles, 5087);
  cs_job_output_free(&out);
}
END_TEST

START_TEST(deadlock_guard_should_stop_a_starved_job) {
  /* A guard of one tick cannot cover the NoC latency of a single transaction. */
  cs_job job;
  cs_job_output out;
  cs_err err;
  make(&job, CS_PRIM_P2P, 2, true);
  job.engine.deadlock_guard_ticks = 1;
  ck_assert_int_eq(cs_job_run(&job, true, &out, &err), CS_EDEADLOCK);
  ck_assert_ptr_nonnull(strstr(err.msg, "stuck"));
  ck_assert_ptr_nonnull(strstr(err.msg, "dcin p2p of 16384 bytes"));
}
END_TEST

/* The endpoint scheme decides the physical placement of a transaction for every engine: the
 * die, node and channel columns of the same job agree between math and dcin.  Expected
 * channels by the rule (a logical GDMA alternates channels in its issue order over the job):
 * an AllGather of 3 participants, 3 transactions per flow, 2 steps: each GDMA issues 6
 * requests, channels 0,1,0 in step 0 and 1,0,1 in step 1. */
START_TEST(physical_columns_should_agree_between_engines) {
  const int parts[] = {0, 7, 33};
  cs_job job[2];
  cs_job_output out[2];
  cs_err err;
  const char *engines[] = {"math", "dcin"};
  for (int e = 0; e < 2; e++) {
    cs_test_job(&job[e], engines[e], CS_PRIM_ALLGATHER, 3 * 3 * 4 * 128, parts, 3);
    ck_assert_msg(cs_job_run(&job[e], true, &out[e], &err) == CS_OK, "%s", err.msg);
  }
  ck_assert_uint_eq(out[0].num_records, 18);
  ck_assert_uint_eq(out[1].num_records, 18);
  for (uint64_t i = 0; i < out[0].num_records; i++) {
    const cs_txn_record *a = &out[0].records[i], *b = &out[1].records[i];
    ck_assert_uint_eq(a->request_id, b->request_id);
    ck_assert_int_eq(a->src_die, b->src_die);
    ck_assert_int_eq(a->dst_die, b->dst_die);
    ck_assert_int_eq(a->src_node, b->src_node);
    ck_assert_int_eq(a->dst_node, b->dst_node);
    ck_assert_int_eq(a->src_channel, b->src_channel);
    ck_assert_int_eq(a->dst_channel, b->dst_channel);
    /* records are in plan order: step, flow, transaction k of 3 */
    int k = (int)(i % 3), step = (int)a->step;
    ck_assert_int_eq(a->src_channel, (step * 3 + k) % 2);
    ck_assert_int_eq(a->dst_channel, a->src_channel);
  }
  cs_job_output_free(&out[0]);
  cs_job_output_free(&out[1]);
}
END_TEST

/* The same records and result but the host time; frees both. */
static void assert_same_output(cs_job_output *alone, cs_job_output *shared) {
  ck_assert_uint_eq(alone->num_records, shared->num_records);
  ck_assert(memcmp(alone->records, shared->records, alone->num_records * sizeof *alone->records) ==
            0);
  alone->result.wall_time_s = shared->result.wall_time_s = 0;
  ck_assert(memcmp(&alone->result, &shared->result, sizeof alone->result) == 0);
  cs_job_output_free(alone);
  cs_job_output_free(shared);
}

/* Shared state across the jobs of one process (the dcin engine's recorded steps) saves time and
 * nothing else: an AllReduce, then an AllGather and an AllReduce of the same size and
 * configuration run with one cs_job_shared give the same bytes as each run alone.  Their records
 * are lent from the shared state (CS_JOB_LEND_RECORDS): the AllGather's fill the first half of
 * the buffer the AllReduce's filled, and must show nothing of them. */
START_TEST(shared_state_should_not_change_results) {
  const int parts[] = {0, 5, 22, 35};
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_ALLREDUCE};
  cs_job_shared *sh = cs_job_shared_new();
  ck_assert_ptr_nonnull(sh);
  for (int k = 0; k < 3; k++) {
    cs_job job;
    cs_test_job(&job, "dcin", prims[k], 65536, parts, 4);
    cs_job_output alone, shared;
    cs_err err;
    ck_assert_msg(cs_job_run(&job, true, &alone, &err) == CS_OK, "%s", err.msg);
    ck_assert_msg(cs_job_run_keeping(sh, &job, CS_JOB_KEEP_RECORDS | CS_JOB_LEND_RECORDS, &shared,
                                     &err) == CS_OK,
                  "%s", err.msg);
    ck_assert(shared.records_lent && !alone.records_lent);
    assert_same_output(&alone, &shared);
  }
  cs_job_shared_free(sh);
}
END_TEST

/* An engine that cannot carry the shared state through a job fails it with CS_ERETRY, and the job
 * runs again alone, with the bits of running it alone.  The dcin all-to-all after an AllReduce
 * whose steps end with write data in flight (14 participants of 2 dies, 768 KiB, burst 8, as in
 * check_dcin's chain test) replays the AllReduce's first step, finds no second one and does. */
START_TEST(a_job_the_shared_state_cannot_carry_should_run_again_alone) {
  int parts[14];
  for (int i = 0; i < 14; i++) parts[i] = 3 * i;
  cs_job_shared *sh = cs_job_shared_new();
  ck_assert_ptr_nonnull(sh);
  cs_job job;
  cs_err err;
  cs_job_output ring, alone, shared;
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 786432, parts, 14);
  job.adapter.burst_length = 8;
  ck_assert_msg(cs_job_run_keeping(sh, &job, 0, &ring, &err) == CS_OK, "%s", err.msg);
  job.spec.primitive = CS_PRIM_ALLTOALL;
  job.spec.algorithm = CS_ALGO_PAIRWISE;
  ck_assert_msg(cs_job_run(&job, true, &alone, &err) == CS_OK, "%s", err.msg);
  ck_assert_msg(cs_job_run_keeping(sh, &job, CS_JOB_KEEP_RECORDS, &shared, &err) == CS_OK, "%s",
                err.msg);
  /* check_dcin: the all-to-all's second step is not in the AllReduce's chain */
  ck_assert(shared.ran_again_alone);
  ck_assert(!ring.ran_again_alone && !alone.ran_again_alone);
  assert_same_output(&alone, &shared);
  cs_job_output_free(&ring);
  cs_job_shared_free(sh);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pipeline");
  TCase *tc = tcase_create("dcin");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, every_primitive_should_run_plausibly_on_dcin, 0, 10);
  tcase_add_test(tc, alltoall_with_wrap_stalls_should_complete);
  tcase_add_test(tc, physical_columns_should_agree_between_engines);
  tcase_add_test(tc, shared_state_should_not_change_results);
  tcase_add_test(tc, a_job_the_shared_state_cannot_carry_should_run_again_alone);
  tcase_add_test(tc, deadlock_guard_should_stop_a_starved_job);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
