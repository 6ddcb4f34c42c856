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

/* A plan with every flow and transaction made (the small plans of these tests), under the
 * member names the checks read. */
typedef struct xplan {
  uint32_t num_steps, flows_per_step, num_flows;
  uint64_t num_txns, total_comm_bytes, *step_txn_begin;
  cs_flow *flows;     /* step-major */
  cs_inject *txns;    /* by request id */
  uint32_t *txn_flow; /* flow index of each transaction */
  cs_plan plan;
} xplan;

static int x_expand(const cs_job *job, xplan *x, cs_err *err) {
  memset(x, 0, sizeof *x);
  int rc = cs_expand(job, &x->plan, err);
  if (rc) return rc;
  cs_plan *p = &x->plan;
  x->num_steps = p->num_steps;
  x->flows_per_step = p->flows_per_step;
  x->num_flows = p->num_steps * p->flows_per_step;
  x->num_txns = p->num_txns;
  x->total_comm_bytes = p->total_comm_bytes;
  x->step_txn_begin = p->step_txn_begin;
  x->flows = calloc(x->num_flows + 1, sizeof *x->flows);
  x->txns = calloc(x->num_txns + 1, sizeof *x->txns);
  x->txn_flow = calloc(x->num_txns + 1, sizeof *x->txn_flow);
  ck_assert(x->flows && x->txns && x->txn_flow);
  for (uint32_t s = 0; s < p->num_steps; s++) {
    cs_flow *f = x->flows + (size_t)s * p->flows_per_step;
    cs_plan_step_flows(p, s, f);
    cs_plan_step_reqs(p, f, x->txns + p->step_txn_begin[s]);
    for (uint32_t k = 0; k < p->flows_per_step; k++)
      for (uint64_t t = 0; t < f[k].num_txns; t++) x->txn_flow[f[k].first_txn + t] = s * p->flows_per_step + k;
  }
  return CS_OK;
}

static void x_free(xplan *x) {
  cs_plan_free(&x->plan);
  free(x->flows);
  free(x->txns);
  free(x->txn_flow);
  memset(x, 0, sizeof *x);
}

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
    xplan plan;
    cs_err err;
    make(&job, cases[c].p, 64 * 1024, n);
    ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
    x_free(&plan);
  }
}
END_TEST

START_TEST(p2p_should_be_one_step_one_flow_of_m_bytes) {
  cs_job job;
  xplan plan;
  cs_err err;
  const int parts[] = {7, 3};
  cs_test_job(&job, "math", CS_PRIM_P2P, 1000, parts, 2);
  job.spec.p2p_op = CS_P2P_READ;
  ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
  x_free(&plan);
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
    xplan plan;
    cs_err err;
    make(&job, CS_PRIM_ALLREDUCE, 1000003, n);
    ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
    x_free(&plan);
  }
}
END_TEST

START_TEST(flits_and_transactions_should_round_up_with_a_short_last_burst) {
  cs_job job;
  xplan plan;
  cs_err err;
  /* M = 3*1000+2 over 3: chunks 1001, 1001, 1000 bytes; 128-byte flits: 8, 8, 8 flits;
   * burst 3: transactions of 3, 3, 2 flits. */
  make(&job, CS_PRIM_ALLGATHER, 3002, 3);
  job.adapter.burst_length = 3;
  ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
  x_free(&plan);
}
END_TEST

START_TEST(request_ids_should_be_unique_and_step_ordered) {
  cs_job job;
  xplan plan;
  cs_err err;
  make(&job, CS_PRIM_ALLREDUCE, 1 << 16, 4);
  ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
  x_free(&plan);
}
END_TEST

START_TEST(participant_order_should_not_change_a_ring_plan) {
  cs_job a, b;
  xplan pa, pb;
  cs_err err;
  const int x[] = {1, 9, 4, 22}, y[] = {22, 4, 1, 9};
  cs_test_job(&a, "math", CS_PRIM_ALLREDUCE, 5000, x, 4);
  cs_test_job(&b, "math", CS_PRIM_ALLREDUCE, 5000, y, 4);
  ck_assert_int_eq(x_expand(&a, &pa, &err), CS_OK);
  ck_assert_int_eq(x_expand(&b, &pb, &err), CS_OK);
  ck_assert_uint_eq(pa.num_txns, pb.num_txns);
  ck_assert_int_eq(memcmp(pa.flows, pb.flows, pa.num_flows * sizeof *pa.flows), 0);
  ck_assert_int_eq(memcmp(pa.txns, pb.txns, pa.num_txns * sizeof *pa.txns), 0);
  x_free(&pa);
  x_free(&pb);
}
END_TEST

/* A plan holds steps, not transactions: 2^40 bytes over 16 participants (a flow of 2^40 / 16 B
 * in 128-B flits, 4 a transaction: 2^27 transactions, 16 flows a step, 30 steps) plans in a few
 * hundred bytes. */
START_TEST(huge_jobs_should_plan_without_their_transactions) {
  cs_job job;
  cs_plan plan;
  cs_err err;
  make(&job, CS_PRIM_ALLREDUCE, 1ull << 40, 16);
  ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
  ck_assert_uint_eq(plan.num_steps, 30);
  ck_assert_uint_eq(plan.widest_step, 16ull << 27);
  ck_assert_uint_eq(plan.num_txns, 30ull * (16ull << 27));
  ck_assert_uint_lt(cs_plan_bytes(16, 30), sizeof plan + 400);
  cs_flow f[16];
  cs_plan_step_flows(&plan, 29, f);
  ck_assert_uint_eq(f[15].first_txn + f[15].num_txns, plan.num_txns);
  cs_plan_free(&plan);
}
END_TEST

/* 4096 participants (kept in runs) on a 16x16x16 grid: 90 steps of 4096 flows, each to the +1
 * neighbour of its row; participant 4095 (15,15,15) sends to 4080 (0,15,15) along X in step 0,
 * to 3855 (15,0,15) along Y in step 30. */
START_TEST(pod_sized_dimring_should_plan_every_participant) {
  static int32_t ids[4096];
  for (int i = 0; i < 4096; i++) ids[i] = 4095 - i;
  cs_job job;
  cs_test_job(&job, "math", CS_PRIM_ALLREDUCE, 16u << 20, (const int *)ids, 0);
  int64_t scratch[4096];
  int a, b;
  ck_assert_int_eq(cs_spec_set_participants(&job.spec, ids, 4096, scratch, &a, &b), 0);
  ck_assert_int_eq(job.spec.num_participant_runs, 1);
  job.spec.algorithm = CS_ALGO_DIMRING;
  job.spec.grid[0] = job.spec.grid[1] = job.spec.grid[2] = 16;
  cs_plan plan;
  cs_err err;
  ck_assert_msg(cs_expand(&job, &plan, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_eq(plan.num_steps, 90);
  ck_assert_uint_eq(plan.flows_per_step, 4096);
  static cs_flow f[4096];
  cs_plan_step_flows(&plan, 0, f);
  ck_assert_int_eq(f[4095].src, 4095);
  ck_assert_int_eq(f[4095].dst, 4080);
  ck_assert_uint_eq(f[4095].bytes, (16u << 20) / 16);
  cs_plan_step_flows(&plan, 30, f);
  ck_assert_int_eq(f[4095].dst, 3855);
  /* step 0 (X reduce-scatter) carries M/16 per flow: 2048 transactions of 4 flits of 128 B */
  ck_assert_uint_eq(plan.step_txn_begin[1], 4096ull * ((16u << 20) / 16 / 128 / 4));
  cs_plan_free(&plan);
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
  xplan plan;
  cs_err err;
  make_dim(&job, algo, m, grid, dims);
  ck_assert_int_eq(cs_validate_spec(&job.spec, &job.adapter, &err), CS_OK);
  ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
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
  x_free(&plan);
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
    xplan plan;
    cs_err err;
    make_dim(&job, a ? CS_ALGO_DIMRING_RSAG : CS_ALGO_DIMRING, 1000, grid, 2);
    ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
    for (uint32_t s = 0; s < plan.num_steps; s++) {
      uint64_t sum = 0;
      for (uint32_t f = 0; f < 16; f++) sum += plan.flows[s * 16 + f].bytes;
      bool y = a ? (s >= 3 && s < 9) : s >= 6;
      ck_assert_uint_eq(sum, y && a ? 1000 : 4000);
    }
    x_free(&plan);
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

/* ---- which chunk every participant sends in every step ----------------------------------
 *
 * A flow does not name its chunk, but its size does: with M = k N + r, chunk c holds k + 1 bytes
 * when c < r and k bytes otherwise (docs/expansion.md, Sizes).  Expanding the same job for
 * r = 1 .. N-1 and counting the r for which a flow is small gives its chunk index c.  Against
 * that observation the test checks (1) the formulas of docs/expansion.md (tbl-cr-05), and (2)
 * that the schedule does what the collective means, replayed step by step on ownership sets:
 * a participant sends only data it holds, no contribution is counted twice, and at the end every
 * participant holds what the primitive promises. */

#define CHUNK_K 1000 /* bytes of a small chunk */

typedef struct observed {
  int n;
  uint32_t steps;
  int src[64][16], dst[64][16]; /* participant indices (sorted order), by step and flow */
  int chunk[64][16];
} observed;

static int index_of(const int *sorted, int n, int32_t id) {
  for (int i = 0; i < n; i++)
    if (sorted[i] == id) return i;
  ck_abort_msg("id %d is not a participant", id);
  return -1;
}

static void observe(cs_primitive p, const int *parts, int n, observed *o) {
  int sorted[16];
  memcpy(sorted, parts, (size_t)n * sizeof *parts);
  for (int i = 0; i < n; i++) /* insertion sort: the ascending order the algorithms use */
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  memset(o, 0, sizeof *o);
  o->n = n;
  for (int r = 0; r < n; r++) {
    cs_job job;
    xplan plan;
    cs_err err;
    cs_test_job(&job, "math", p, (unsigned long long)CHUNK_K * (unsigned)n + (unsigned)r, parts, n);
    ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
    ck_assert_uint_eq(plan.flows_per_step, (uint32_t)n);
    ck_assert_uint_le(plan.num_steps, 64);
    o->steps = plan.num_steps;
    for (uint32_t t = 0; t < plan.num_steps; t++)
      for (int f = 0; f < n; f++) {
        const cs_flow *fl = &plan.flows[t * plan.flows_per_step + (uint32_t)f];
        int s = index_of(sorted, n, fl->src), d = index_of(sorted, n, fl->dst);
        ck_assert_uint_eq(fl->is_read, 0);
        ck_assert(fl->bytes == CHUNK_K || fl->bytes == CHUNK_K + 1);
        if (r == 0) {
          o->src[t][f] = s;
          o->dst[t][f] = d;
          ck_assert_uint_eq(fl->bytes, CHUNK_K);
        } else {
          ck_assert_int_eq(o->src[t][f], s); /* the same flow at every size */
          ck_assert_int_eq(o->dst[t][f], d);
          o->chunk[t][f] += fl->bytes == CHUNK_K; /* small at r: r <= c */
        }
      }
    x_free(&plan);
  }
}

static int mod_n(int a, int n) { return ((a % n) + n) % n; }

/* tbl-cr-05 with docs/expansion.md: the chunk sender i sends in step t, and to whom. */
static void expected(cs_primitive p, int n, int t, int i, int *chunk, int *to) {
  switch (p) {
    case CS_PRIM_ALLREDUCE:
      *to = mod_n(i + 1, n);
      *chunk = t < n - 1 ? mod_n(i - t, n) : mod_n(i + 1 - (t - (n - 1)), n);
      break;
    case CS_PRIM_ALLGATHER:
    case CS_PRIM_REDUCESCATTER:
      *to = mod_n(i + 1, n);
      *chunk = mod_n(i - t, n);
      break;
    default: /* alltoall, pairwise: to (i + t + 1) mod N, the block meant for that peer */
      *to = mod_n(i + t + 1, n);
      *chunk = *to;
      break;
  }
}

/* Replays the schedule.  part[q][c]: bit j set when participant q's copy of chunk c includes
 * participant j's contribution (all-gather: the chunk's owner). */
static void replay(cs_primitive p, const observed *o) {
  int n = o->n;
  uint32_t full = (1u << n) - 1;
  uint32_t part[16][16];
  for (int q = 0; q < n; q++)
    for (int c = 0; c < n; c++)
      part[q][c] = p == CS_PRIM_ALLGATHER ? (c == q ? full : 0) : 1u << q;
  bool delivered[16][16] = {{false}};
  for (uint32_t t = 0; t < o->steps; t++) {
    uint32_t next[16][16];
    memcpy(next, part, sizeof next);
    bool gather_phase = p == CS_PRIM_ALLGATHER || (p == CS_PRIM_ALLREDUCE && (int)t >= n - 1);
    for (int f = 0; f < n; f++) {
      int s = o->src[t][f], d = o->dst[t][f], c = o->chunk[t][f];
      if (p == CS_PRIM_ALLTOALL) {
        ck_assert_msg(!delivered[s][d], "alltoall %d -> %d sent twice", s, d);
        delivered[s][d] = true;
      } else if (gather_phase) {
        ck_assert_msg(part[s][c] == full, "N=%d step %u: %d sends chunk %d it does not hold", n, t,
                      s, c);
        next[d][c] = full;
      } else { /* reduce-scatter: the receiver adds the sender's partial sum to its own */
        ck_assert_msg((part[s][c] & part[d][c]) == 0, "N=%d step %u: chunk %d counted twice", n,
                      t, c);
        next[d][c] = part[d][c] | part[s][c];
      }
    }
    memcpy(part, next, sizeof part);
  }
  for (int q = 0; q < n; q++) {
    int full_chunks = 0;
    for (int c = 0; c < n; c++) {
      full_chunks += part[q][c] == full;
      if (p == CS_PRIM_ALLTOALL && c != q) ck_assert_msg(delivered[q][c], "%d -> %d never sent", q, c);
    }
    if (p == CS_PRIM_REDUCESCATTER) ck_assert_int_eq(full_chunks, 1); /* one reduced chunk each */
    if (p == CS_PRIM_ALLREDUCE || p == CS_PRIM_ALLGATHER) ck_assert_int_eq(full_chunks, n);
  }
  if (p == CS_PRIM_REDUCESCATTER)
    for (int c = 0; c < n; c++) { /* ... and every chunk reduced somewhere */
      int holders = 0;
      for (int q = 0; q < n; q++) holders += part[q][c] == full;
      ck_assert_int_eq(holders, 1);
    }
}

static const int chunk_ns[] = {2, 3, 4, 5, 8, 13};

START_TEST(every_participant_should_send_the_defined_chunk_in_every_step) {
  int n = chunk_ns[_i];
  int parts[16];
  for (int i = 0; i < n; i++) parts[i] = (i * 7 + 3) % 40; /* distinct, not in order */
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER,
                                CS_PRIM_ALLTOALL};
  for (int k = 0; k < 4; k++) {
    observed o;
    observe(prims[k], parts, n, &o);
    for (uint32_t t = 0; t < o.steps; t++)
      for (int f = 0; f < n; f++) {
        int chunk, to;
        expected(prims[k], n, (int)t, o.src[t][f], &chunk, &to);
        ck_assert_msg(o.chunk[t][f] == chunk && o.dst[t][f] == to,
                      "primitive %d N=%d step %u: participant %d sends chunk %d to %d, the "
                      "definition says chunk %d to %d",
                      k, n, t, o.src[t][f], o.chunk[t][f], o.dst[t][f], chunk, to);
      }
    replay(prims[k], &o);
  }
}
END_TEST

/* P2P: one step, one flow: all M bytes from participants[0] to participants[1] as given, writes
 * or reads as p2p_op says. */
START_TEST(p2p_should_send_the_whole_message_source_to_destination) {
  const int pairs[][2] = {{7, 3}, {3, 7}, {0, 39}};
  for (int k = 0; k < 3; k++)
    for (int op = 0; op < 2; op++) {
      cs_job job;
      xplan plan;
      cs_err err;
      cs_test_job(&job, "math", CS_PRIM_P2P, 4099, pairs[k], 2);
      job.spec.p2p_op = op ? CS_P2P_READ : CS_P2P_WRITE;
      ck_assert_int_eq(x_expand(&job, &plan, &err), CS_OK);
      ck_assert_uint_eq(plan.num_flows, 1);
      ck_assert_int_eq(plan.flows[0].src, pairs[k][0]);
      ck_assert_int_eq(plan.flows[0].dst, pairs[k][1]);
      ck_assert_uint_eq(plan.flows[0].bytes, 4099);
      for (uint64_t t = 0; t < plan.num_txns; t++) {
        ck_assert_int_eq(plan.txns[t].src_id, pairs[k][0]);
        ck_assert_int_eq(plan.txns[t].dst_id, pairs[k][1]);
        ck_assert_uint_eq(plan.txns[t].is_read, (unsigned)op);
      }
      x_free(&plan);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("expand");
  TCase *tc = tcase_create("steps");
  tcase_add_loop_test(tc, ring_primitives_should_have_table_steps_and_flows, 0, 5);
  tcase_add_test(tc, p2p_should_be_one_step_one_flow_of_m_bytes);
  tcase_add_test(tc, participant_order_should_not_change_a_ring_plan);
  tcase_add_loop_test(tc, every_participant_should_send_the_defined_chunk_in_every_step, 0, 6);
  tcase_add_test(tc, p2p_should_send_the_whole_message_source_to_destination);
  suite_add_tcase(s, tc);
  tc = tcase_create("sizes");
  tcase_add_test(tc, total_bytes_should_follow_table_cr06);
  tcase_add_test(tc, flows_of_a_step_should_conserve_the_message);
  tcase_add_test(tc, flits_and_transactions_should_round_up_with_a_short_last_burst);
  tcase_add_test(tc, request_ids_should_be_unique_and_step_ordered);
  tcase_add_test(tc, huge_jobs_should_plan_without_their_transactions);
  tcase_add_test(tc, pod_sized_dimring_should_plan_every_participant);
  tcase_add_test(tc, dimring_2d_should_ring_x_then_y);
  tcase_add_test(tc, dimring_rsag_2d_should_scatter_x_y_then_gather_y_x);
  tcase_add_test(tc, dimring_3d_should_take_2_sum_g_minus_1_steps);
  tcase_add_test(tc, dimring_steps_should_conserve_uneven_messages);
  tcase_add_test(tc, dimring_should_need_a_matching_grid);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
