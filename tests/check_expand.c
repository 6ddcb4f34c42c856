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
    cs_plan plan;
    cs_err err;
    cs_test_job(&job, "math", p, (unsigned long long)CHUNK_K * (unsigned)n + (unsigned)r, parts, n);
    ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
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
    cs_plan_free(&plan);
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
      cs_plan plan;
      cs_err err;
      cs_test_job(&job, "math", CS_PRIM_P2P, 4099, pairs[k], 2);
      job.spec.p2p_op = op ? CS_P2P_READ : CS_P2P_WRITE;
      ck_assert_int_eq(cs_expand(&job, &plan, &err), CS_OK);
      ck_assert_uint_eq(plan.num_flows, 1);
      ck_assert_int_eq(plan.flows[0].src, pairs[k][0]);
      ck_assert_int_eq(plan.flows[0].dst, pairs[k][1]);
      ck_assert_uint_eq(plan.flows[0].bytes, 4099);
      for (uint64_t t = 0; t < plan.num_txns; t++) {
        ck_assert_int_eq(plan.txns[t].src_id, pairs[k][0]);
        ck_assert_int_eq(plan.txns[t].dst_id, pairs[k][1]);
        ck_assert_uint_eq(plan.txns[t].is_read, (unsigned)op);
      }
      cs_plan_free(&plan);
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
  tcase_add_test(tc, oversized_jobs_should_be_refused_with_the_count);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
