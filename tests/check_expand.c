/* L1 expansion: steps and flows of every primitive per tbl-cr-05, total bytes per tbl-cr-06,
 * FLIT and transaction counts including sizes that do not divide. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/expand.h"
#include "commsweep/validate.h"
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


/* Dimension-decomposed allreduce on a grid; participants 0..N-1 in order. */
static void make_dim(cs_job *job, cs_algorithm algo, unsigned long long m, const int *grid, int dims) {
  int parts[64], n = 1;
  for (int d = 0; d < dims; d++) n *= grid[d];
  for (int i = 0; i < n; i++) parts[i] = i;
  cs_test_job(job, "math", CS_PRIM_ALLREDUCE, m, parts, n);
  job->spec.algorithm = algo;
  for (int d = 0; d < dims; d++) job->spec.grid[d] = grid[d];
}

/* Per step, every flow goes to the +1 neighbour along the step's dimension (wrapping inside the
 * row), so a step is a permutation; bytes sent per participant and per step are checked against
 * hand-derived sums (docs/expansion.md):
 *   dimring       sum_d 2 (g_d - 1) M / g_d
 *   dimring_rsag  2 (N - 1) M / N, like the flat ring. */
static void check_dim_plan(cs_algorithm algo, const int *grid, int dims, unsigned long long m,
                           uint32_t want_steps, uint64_t want_bytes_per_participant,
                           const int *step_dim, const uint64_t *step_flow_bytes) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  make_dim(&job, algo, m, grid, dims);
  ck_assert_int_eq(cs_validate_spec(&job.spec, &job.adapter, &err), CS_OK);
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  int n = job.spec.num_participants;
  ck_assert_uint_eq(plan.num_steps, want_steps);
  ck_assert_uint_eq(plan.flows_per_step, (uint32_t)n);
  uint64_t sent_by_0 = 0, txns = 0;
  for (uint32_t s = 0; s < plan.num_steps; s++) {
    int stride = 1;
    for (int d = 0; d < step_dim[s]; d++) stride *= grid[d];
    int g = grid[step_dim[s]];
    int recv[64] = {0};
    for (int f = 0; f < n; f++) {
      const cs_flow *fl = &plan.flows[s * (uint32_t)n + (uint32_t)f];
      int c = (f / stride) % g;
      ck_assert_int_eq(fl->src, f);
      ck_assert_int_eq(fl->dst, f + (((c + 1) % g) - c) * stride);
      recv[fl->dst]++;
      ck_assert_uint_eq(fl->bytes, step_flow_bytes[s]);
      if (f == 0) sent_by_0 += fl->bytes;
      /* 128-byte flits, bursts of 4 (cs_test_job) */
      ck_assert_uint_eq(fl->num_txns, (fl->bytes + 511) / 512);
      txns += fl->num_txns;
    }
    for (int k = 0; k < n; k++) ck_assert_int_eq(recv[k], 1);
  }
  ck_assert_uint_eq(sent_by_0, want_bytes_per_participant);
  ck_assert_uint_eq(plan.num_txns, txns);
  /* the bus-bandwidth convention stays the allreduce's: 2 (N-1)/N M */
  ck_assert_uint_eq(plan.total_comm_bytes, 2 * (uint64_t)(n - 1) * m / (uint64_t)n);
  cs_plan_free(&plan);
}

START_TEST(dimring_2d_should_ring_x_then_y) {
  /* 4x4, M = 1600: each phase cuts the whole message in 4 chunks of 400 bytes; X: 3 RS + 3 AG
   * steps, then Y the same: 12 steps, 12 x 400 = 4800 bytes per participant. */
  int grid[] = {4, 4}, dim[12];
  uint64_t bytes[12];
  for (int s = 0; s < 12; s++) dim[s] = s < 6 ? 0 : 1, bytes[s] = 400;
  check_dim_plan(CS_ALGO_DIMRING, grid, 2, 1600, 12, 4800, dim, bytes);
}
END_TEST

START_TEST(dimring_rsag_2d_should_scatter_x_y_then_gather_y_x) {
  /* 4x4, M = 1600: RS X on 1600 (chunks 400, 3 steps), RS Y on the 400-byte piece (chunks 100,
   * 3 steps), AG Y (100), AG X (400): 3000 bytes = 2 (15/16) 1600. */
  int grid[] = {4, 4}, dim[12];
  uint64_t bytes[12];
  for (int s = 0; s < 12; s++) {
    dim[s] = s < 3 || s >= 9 ? 0 : 1;
    bytes[s] = dim[s] == 0 ? 400 : 100;
  }
  check_dim_plan(CS_ALGO_DIMRING_RSAG, grid, 2, 1600, 12, 3000, dim, bytes);
}
END_TEST

START_TEST(dimring_3d_should_take_2_sum_g_minus_1_steps) {
  /* 4x2x3, M = 2400 (N = 24).  dimring: X 6 steps of 600, Y 2 of 1200, Z 4 of 800 = 12 steps,
   * 3600 + 2400 + 3200 = 9200 bytes.  rsag: RS X 3 x 600, RS Y on 600: 1 x 300, RS Z on 300:
   * 2 x 100, then AG Z, Y, X: 4600 bytes = 2 (23/24) 2400. */
  int grid[] = {4, 2, 3};
  int dim_a[12], dim_b[12];
  uint64_t bytes_a[12], bytes_b[12];
  for (int s = 0; s < 12; s++) {
    dim_a[s] = s < 6 ? 0 : s < 8 ? 1 : 2;
    bytes_a[s] = dim_a[s] == 0 ? 600 : dim_a[s] == 1 ? 1200 : 800;
    dim_b[s] = s < 3 ? 0 : s < 4 ? 1 : s < 8 ? 2 : s < 9 ? 1 : 0;
    bytes_b[s] = dim_b[s] == 0 ? 600 : dim_b[s] == 1 ? 300 : 100;
  }
  check_dim_plan(CS_ALGO_DIMRING, grid, 3, 2400, 12, 9200, dim_a, bytes_a);
  check_dim_plan(CS_ALGO_DIMRING_RSAG, grid, 3, 2400, 12, 4600, dim_b, bytes_b);
}
END_TEST

START_TEST(dimring_steps_should_conserve_uneven_messages) {
  /* M = 1000 on 4x4 does not divide: an X step of either algorithm moves M per row (4 rows);
   * a Y step of dimring moves M per column, of rsag the column pieces, which sum to M. */
  int grid[] = {4, 4};
  for (int a = 0; a < 2; a++) {
    cs_job job;
    cs_plan plan;
    cs_err err;
    make_dim(&job, a ? CS_ALGO_DIMRING_RSAG : CS_ALGO_DIMRING, 1000, grid, 2);
    ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
    for (uint32_t s = 0; s < plan.num_steps; s++) {
      uint64_t sum = 0;
      for (uint32_t f = 0; f < 16; f++) sum += plan.flows[s * 16 + f].bytes;
      bool y = a ? (s >= 3 && s < 9) : s >= 6;
      ck_assert_uint_eq(sum, y && a ? 1000 : 4000);
    }
    cs_plan_free(&plan);
  }
}
END_TEST

START_TEST(dimring_should_need_a_matching_grid) {
  cs_job job;
  cs_err err;
  int grid[] = {4, 4};
  make_dim(&job, CS_ALGO_DIMRING, 1600, grid, 2);
  job.spec.grid[1] = 3; /* 12 != 16 */
  ck_assert_int_eq(cs_validate_spec(&job.spec, &job.adapter, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "grid"));
  job.spec.grid[0] = job.spec.grid[1] = 0;
  ck_assert_int_eq(cs_validate_spec(&job.spec, &job.adapter, &err), CS_ECONSTRAINT);
  make_dim(&job, CS_ALGO_DIMRING, 1600, grid, 2);
  job.spec.primitive = CS_PRIM_ALLGATHER;
  ck_assert_int_eq(cs_validate_spec(&job.spec, &job.adapter, &err), CS_ECONSTRAINT);
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
  tcase_add_test(tc, dimring_2d_should_ring_x_then_y);
  tcase_add_test(tc, dimring_rsag_2d_should_scatter_x_y_then_gather_y_x);
  tcase_add_test(tc, dimring_3d_should_take_2_sum_g_minus_1_steps);
  tcase_add_test(tc, dimring_steps_should_conserve_uneven_messages);
  tcase_add_test(tc, dimring_should_need_a_matching_grid);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
