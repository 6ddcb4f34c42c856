/* Heavy DCIN checks, excluded from valgrind: the 20-GDMA aggregate bandwidth of crossring-model.md
 * 6.3 (KCIN 5x4, gdma_0 at node i writes / reads ddr_0 at node 19-i, 64 KiB each, all offered at
 * t = 0) within 3%, and bit-identical results for the same job run twice.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "engine/dcin/dcin_int.h"
#include "test_dcin.h"
#include "test_support.h"

static dcin_sim *make(const char *die, const char *layout) {
  return cs_test_dcin_sim(die, layout, 128, 64, false, false);
}

typedef struct agg {
  double gbps, span_ns;
  uint64_t retries, end_cycle;
  double avg_ns, max_ns;
} agg;

/* 20 flows of 128 requests; bandwidth = bytes / (last end - first start) in ns. */
static agg run_aggregate(bool rd) {
  dcin_sim *s = make("5x4", "1die");
  cs_err err;
  uint64_t id = 0;
  for (int k = 0; k < 128; k++)
    for (int i = 0; i < 20; i++)
      ck_assert_int_ge(
          dcin_inject_phys(
              s, id++, &(dcin_place){0, i, DCIN_IP_GDMA0, 0, 19 - i, DCIN_IP_DDR0, rd, 4}, &err),
          0);
  dcin_run_native(s, 1000000);
  ck_assert_uint_eq(s->active_txns, 0);
  ck_assert_int_eq(dcin_check(s, &err), 0);
  uint64_t first = UINT64_MAX, last = 0, retries = 0;
  double sum = 0, mx = 0;
  for (uint32_t t = 0; t < s->ntxns; t++) {
    const dcin_txn *x = &s->txns[t];
    if (x->t_reserve < first) first = x->t_reserve;
    if (x->t_data_done > last) last = x->t_data_done;
    retries += x->retries;
    uint64_t end = x->t_final + (rd ? 0 : s->cfg.sn_release);
    double ns = (double)(end - x->t_reserve) / 2.0;
    sum += ns;
    if (ns > mx) mx = ns;
  }
  agg a;
  a.span_ns = dcin_cycles_to_ns(&s->cfg, last) - dcin_cycles_to_ns(&s->cfg, first);
  a.gbps = 20.0 * 128 * 512 / a.span_ns;
  a.retries = retries;
  a.end_cycle = s->cyc;
  a.avg_ns = sum / s->ntxns;
  a.max_ns = mx;
  if (getenv("CS_DCIN_VERBOSE"))
    printf("%s: %.1f GB/s span %.0f ns retries %llu end %llu trans avg %.0f max %.0f\n",
           rd ? "reads" : "writes", a.gbps, a.span_ns, (unsigned long long)a.retries,
           (unsigned long long)a.end_cycle, a.avg_ns, a.max_ns);
  dcin_sim_destroy(s);
  return a;
}

START_TEST(aggregate_writes_should_match_crossring_bandwidth) {
  agg a = run_aggregate(false);
  ck_assert_msg(a.gbps > 2093.8 * 0.97 && a.gbps < 2093.8 * 1.03, "write bandwidth %.1f GB/s",
                a.gbps);
}
END_TEST

START_TEST(aggregate_reads_should_match_crossring_bandwidth) {
  agg a = run_aggregate(true);
  ck_assert_msg(a.gbps > 2090.5 * 0.97 && a.gbps < 2090.5 * 1.03, "read bandwidth %.1f GB/s",
                a.gbps);
  ck_assert_uint_eq(a.retries, 0);
}
END_TEST

/* Randomised configurations (deterministic seed): dies, layouts, routing, trackers, bursts,
 * clock ratios; every transaction must complete with the checker passing every cycle. */
START_TEST(random_configurations_should_complete_with_invariants_held) {
  uint64_t seed = 0x1234567ULL + (uint64_t)_i * 7919;
  const char *dies[] = {"5x4", "2261_5x4"};
  const char *layouts[] = {"1die", "2die", "4die", "2die_spread"};
  for (int round = 0; round < 6; round++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    cs_die_params p;
    cs_layout l;
    cs_adapter_config a;
    cs_err err;
    ck_assert_int_eq(cs_topo_die(dies[(seed >> 33) % 2], &p, &err), 0);
    ck_assert_int_eq(cs_topo_layout(layouts[(seed >> 35) % 4], &l, &err), 0);
    p.routing_yx = (seed >> 37) & 1;
    memset(&a, 0, sizeof a);
    a.driver_cycle_frequency_ghz = ((seed >> 38) & 1) ? 1.0 : 0.75;
    a.noc_frequency_ghz = ((seed >> 39) & 1) ? 2.0 : 2.5;
    a.ip_frequency_ghz = 1.0;
    a.mst_rd_outstanding = a.mst_wr_outstanding = 2 + 2 * (int)((seed >> 40) % 8);
    a.slv_rd_outstanding = a.slv_wr_outstanding = 1 + (int)((seed >> 43) % 6);
    a.burst_length = 1 + (int)((seed >> 46) % 8);
    a.bw_bytes = 128;
    if ((seed >> 49) & 1) l.d2d_rn_rdb_size = l.d2d_rn_wdb_size = a.burst_length * 2;
    dcin_sim *s = NULL;
    int rc = dcin_sim_create(&p, &l, &a, &s, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    s->check_each_cycle = true;
    int n = 150;
    for (int i = 0; i < n; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      int sd = (int)((seed >> 20) % (uint64_t)s->ndies),
          dd = (int)((seed >> 24) % (uint64_t)s->ndies);
      int b = 1 + (int)((seed >> 28) % (uint64_t)a.burst_length);
      ck_assert_int_ge(
          dcin_inject_phys(
              s, (uint64_t)i,
              &(dcin_place){sd, (int)((seed >> 32) % 20), DCIN_IP_GDMA0 + (int)((seed >> 40) & 1),
                            dd, (int)((seed >> 44) % 20), DCIN_IP_DDR0 + (int)((seed >> 50) & 1),
                            (seed >> 55) & 1, b},
              &err),
          0);
    }
    dcin_run_native(s, 2000000);
    ck_assert_msg(!s->fault[0], "%s", s->fault);
    ck_assert_uint_eq(s->active_txns, 0);
    ck_assert_uint_eq(s->nflits, 0);
    dcin_sim_destroy(s);
  }
}
END_TEST

/* Pairwise all-to-all of 2 MiB over all 80 GDMAs of 4die: at step 10 the RSP ring of die 0's
 * last row fills with Retry/DBID/Pcredit flits that turn further on, every slice taken and no flit
 * at its exit.  The reference's downward scan froze such a ring for good (the job stopped there,
 * as the 8 MiB one did at step 6); a slotted ring rotates, and the job completes. */
START_TEST(alltoall_over_all_gdmas_of_4die_should_complete) {
  cs_job job;
  cs_job_output out;
  cs_err err;
  int parts[80];
  for (int i = 0; i < 80; i++) parts[i] = i;
  cs_test_job(&job, "dcin", CS_PRIM_ALLTOALL, 2u << 20, parts, 80);
  snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "4die");
  job.adapter.num_dies = 4;
  job.adapter.num_initiators = job.adapter.num_targets = 80;
  job.engine.deadlock_guard_ticks = 100000;
  ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_eq(out.result.algorithm_steps, 79); /* pairwise: N - 1 steps */
  cs_job_output_free(&out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dcin_slow");
  TCase *tc = tcase_create("bandwidth");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, aggregate_writes_should_match_crossring_bandwidth);
  tcase_add_test(tc, aggregate_reads_should_match_crossring_bandwidth);
  suite_add_tcase(s, tc);
  tc = tcase_create("stops");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, alltoall_over_all_gdmas_of_4die_should_complete);
  suite_add_tcase(s, tc);
  tc = tcase_create("random");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, random_configurations_should_complete_with_invariants_held, 0, 8);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cs_test_run(suite()); }
