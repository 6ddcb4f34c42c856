/* L1 expansion: steps and flows of every primitive per tbl-cr-05, total bytes per tbl-cr-06,
 * FLIT and transaction counts including sizes that do not divide. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/expand.h"
#include "test_support.h"

static const int sizes[] = {2, 3, 4, 8, 16};

static void make(cs_job *job, cs_primitive p, unsigned long long m, int n) {
  int parts[16];
  for (int i = 0; i < n; i++) parts[i] = (n - 1 - i) * 2; /* unsorted on purpose */
  cs_test_job(job, "math", p, m, parts, n);
}

START_TEST(ring_primitives_should_have_table_steps_and_flows) {
  int n = sizes[_i];
  const struct {
    cs_primitive p;
    uint32_t steps;
  } cases[] = {{CS_PRIM_ALLREDUCE, 2 * (uint32_t)(n - 1)},
               {CS_PRIM_ALLGATHER, (uint32_t)n - 1},
               {CS_PRIM_REDUCESCATTER, (uint32_t)n - 1},
               {CS_PRIM_ALLTOALL, (uint32_t)n - 1}};
  for (size_t c = 0; c < 4; c++) {
    cs_job job;
    cs_plan plan;
    cs_err err;
    make(&job, cases[c].p, 64 * 1024, n);
    ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
    ck_assert_uint_eq(plan.num_steps, cases[c].steps);
    ck_assert_uint_eq(plan.flows_per_step, (uint32_t)n);
    ck_assert_uint_eq(plan.num_flows, cases[c].steps * (uint32_t)n);
    for (uint32_t s = 0; s < plan.num_steps; s++) {
      /* every participant sends once and receives once per step: a permutation */
      int sent[64] = {0}, recv[64] = {0};
      for (uint32_t f = 0; f < plan.flows_per_step; f++) {
        const cs_flow *fl = &plan.flows[s * plan.flows_per_step + f];
        ck_assert_uint_eq(fl->step, s);
        ck_assert_int_ne(fl->src, fl->dst);
        ck_assert_uint_eq(fl->is_read, 0);
        sent[fl->src]++;
        recv[fl->dst]++;
        /* ring: the successor in ascending order; pairwise: (i + s + 1) mod n */
        int i = (int)f;
        int want = cases[c].p == CS_PRIM_ALLTOALL ? (i + (int)s + 1) % n : (i + 1) % n;
        ck_assert_int_eq(fl->src, 2 * i);
        ck_assert_int_eq(fl->dst, 2 * want);
      }
      for (int k = 0; k < 2 * n; k += 2) {
        ck_assert_int_eq(sent[k], 1);
        ck_assert_int_eq(recv[k], 1);
      }
    }
    cs_plan_free(&plan);
  }
}
END_TEST

START_TEST(p2p_should_be_one_step_one_flow_of_m_bytes) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  const int parts[] = {7, 3};
  cs_test_job(&job, "math", CS_PRIM_P2P, 1000, parts, 2);
  job.spec.p2p_op = CS_P2P_READ;
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  ck_assert_uint_eq(plan.num_steps, 1);
  ck_assert_uint_eq(plan.num_flows, 1);
  ck_assert_int_eq(plan.flows[0].src, 7); /* p2p keeps the given order */
  ck_assert_int_eq(plan.flows[0].dst, 3);
  ck_assert_uint_eq(plan.flows[0].bytes, 1000);
  ck_assert_uint_eq(plan.flows[0].is_read, 1);
  ck_assert_uint_eq(plan.flows[0].flits, 8);   /* ceil(1000/128) */
  ck_assert_uint_eq(plan.num_txns, 2);         /* bursts of 4 and 4 */
  ck_assert_uint_eq(plan.txns[1].is_read, 1);
  ck_assert_uint_eq(plan.total_comm_bytes, 1000);
  cs_plan_free(&plan);
}
END_TEST

START_TEST(total_bytes_should_follow_table_cr06) {
  /* M = 1 MiB divides by every N of the table. */
  uint64_t m = 1 << 20;
  for (size_t k = 0; k < 5; k++) {
    uint64_t n = (uint64_t)sizes[k];
    ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLREDUCE, m, (int)n), 2 * (n - 1) * m / n);
    ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLGATHER, m, (int)n), (n - 1) * m / n);
    ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_REDUCESCATTER, m, (int)n), (n - 1) * m / n);
    ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLTOALL, m, (int)n), (n - 1) * m / n);
    ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_P2P, m, 2), m);
  }
  /* Not divisible: the floor of the exact value, 2*2*1000/3 = 1333.33 */
  ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLREDUCE, 1000, 3), 1333);
  ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLGATHER, 1000, 3), 666);
  /* Large sizes do not overflow: (2^53 - 1) over 16 participants */
  uint64_t big = (1ull << 53) - 1;
  ck_assert_uint_eq(cs_expand_total_bytes(CS_PRIM_ALLREDUCE, big, 16),
                    30 * (big / 16) + 30 * (big % 16) / 16);
}
END_TEST

START_TEST(flows_of_a_step_should_conserve_the_message) {
  /* In every ring step the N chunks are all sent once: their bytes sum to M exactly. */
  for (size_t k = 0; k < 5; k++) {
    int n = sizes[k];
    cs_job job;
    cs_plan plan;
    cs_err err;
    make(&job, CS_PRIM_ALLREDUCE, 1000003, n);
    ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
    for (uint32_t s = 0; s < plan.num_steps; s++) {
      uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
      for (uint32_t f = 0; f < plan.flows_per_step; f++) {
        uint64_t b = plan.flows[s * plan.flows_per_step + f].bytes;
        sum += b;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
      }
      ck_assert_uint_eq(sum, 1000003);
      ck_assert_uint_le(hi - lo, 1); /* chunks differ by at most one byte */
    }
    cs_plan_free(&plan);
  }
}
END_TEST

START_TEST(flits_and_transactions_should_round_up_with_a_short_last_burst) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  /* M = 3*1000+2 over 3: chunks 1001, 1001, 1000 bytes; 128-byte flits: 8, 8, 8 flits;
   * burst 3: transactions of 3, 3, 2 flits. */
  make(&job, CS_PRIM_ALLGATHER, 3002, 3);
  job.adapter.burst_length = 3;
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  for (uint32_t f = 0; f < plan.num_flows; f++) {
    const cs_flow *fl = &plan.flows[f];
    ck_assert_uint_eq(fl->flits, (fl->bytes + 127) / 128);
    ck_assert_uint_eq(fl->num_txns, (fl->flits + 2) / 3);
    uint64_t flits = 0;
    for (uint64_t t = fl->first_txn; t < fl->first_txn + fl->num_txns; t++) {
      flits += plan.txns[t].burst_length;
      ck_assert_uint_eq(plan.txn_flow[t], f);
      ck_assert_int_eq(plan.txns[t].dst_id, fl->dst);
    }
    ck_assert_uint_eq(flits, fl->flits);
    ck_assert_uint_eq(plan.txns[fl->first_txn + fl->num_txns - 1].burst_length, 2);
  }
  /* 1 byte per flit, 1 flit per burst: one transaction per byte */
  make(&job, CS_PRIM_ALLGATHER, 10, 2);
  job.adapter.bw_bytes = 1;
  job.adapter.burst_length = 1;
  uint64_t n;
  uint32_t steps;
  ck_assert_int_eq(cs_expand_count(&job, &n, &steps, &err), CS_OK);
  ck_assert_uint_eq(n, 10);
  cs_plan_free(&plan);
}
END_TEST

START_TEST(request_ids_should_be_unique_and_step_ordered) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  make(&job, CS_PRIM_ALLREDUCE, 1 << 16, 4);
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  for (uint64_t i = 0; i < plan.num_txns; i++) ck_assert_uint_eq(plan.txns[i].request_id, i);
  for (uint32_t s = 0; s < plan.num_steps; s++)
    for (uint64_t i = plan.step_txn_begin[s]; i < plan.step_txn_begin[s + 1]; i++)
      ck_assert_uint_eq(plan.flows[plan.txn_flow[i]].step, s);
  ck_assert_uint_eq(plan.step_txn_begin[plan.num_steps], plan.num_txns);
  uint64_t n;
  uint32_t steps;
  ck_assert_int_eq(cs_expand_count(&job, &n, &steps, &err), CS_OK);
  ck_assert_uint_eq(n, plan.num_txns);
  ck_assert_uint_eq(steps, plan.num_steps);
  cs_plan_free(&plan);
}
END_TEST

START_TEST(participant_order_should_not_change_a_ring_plan) {
  cs_job a, b;
  cs_plan pa, pb;
  cs_err err;
  const int x[] = {1, 9, 4, 22}, y[] = {22, 4, 1, 9};
  cs_test_job(&a, "math", CS_PRIM_ALLREDUCE, 5000, x, 4);
  cs_test_job(&b, "math", CS_PRIM_ALLREDUCE, 5000, y, 4);
  ck_assert_int_eq(cs_expand(&a, &pa, &err), CS_OK);
  ck_assert_int_eq(cs_expand(&b, &pb, &err), CS_OK);
  ck_assert_uint_eq(pa.num_txns, pb.num_txns);
  ck_assert_int_eq(memcmp(pa.flows, pb.flows, pa.num_flows * sizeof *pa.flows), 0);
  ck_assert_int_eq(memcmp(pa.txns, pb.txns, pa.num_txns * sizeof *pa.txns), 0);
  cs_plan_free(&pa);
  cs_plan_free(&pb);
}
END_TEST

START_TEST(oversized_jobs_should_be_refused_with_the_count) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  make(&job, CS_PRIM_ALLREDUCE, 1ull << 40, 16);
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "per-job limit"));
  cs_plan_free(&plan); /* the zeroed plan is safe to free */
}
END_TEST

int main(void) {
  Suite *s = suite_create("expand");
  TCase *tc = tcase_create("steps");
  tcase_add_loop_test(tc, ring_primitives_should_have_table_steps_and_flows, 0, 5);
  tcase_add_test(tc, p2p_should_be_one_step_one_flow_of_m_bytes);
  tcase_add_test(tc, participant_order_should_not_change_a_ring_plan);
  suite_add_tcase(s, tc);
  tc = tcase_create("sizes");
  tcase_add_test(tc, total_bytes_should_follow_table_cr06);
  tcase_add_test(tc, flows_of_a_step_should_conserve_the_message);
  tcase_add_test(tc, flits_and_transactions_should_round_up_with_a_short_last_burst);
  tcase_add_test(tc, request_ids_should_be_unique_and_step_ordered);
  tcase_add_test(tc, oversized_jobs_should_be_refused_with_the_count);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
