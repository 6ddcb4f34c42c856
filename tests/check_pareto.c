/* Pareto fronts: dominance and fronts on hand-made vectors (ties, equal points, one point,
 * maximised columns), layers, the interval test of a refinement, the strict "pareto" section,
 * the derived and engine columns, and a file's fronts from hand-made rows in a real store
 * (corrupt, pending and failed rows left out).  Every expected front is worked out by hand in
 * the comment beside it. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsweep/pareto.h"
#include "commsweep/store.h"
#include "test_support.h"

static char dir[256], path[512];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cs_check_pareto_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/p.h5", dir);
}

static void teardown(void) {
  unlink(path);
  rmdir(dir);
}

/* ---- fronts on vectors -------------------------------------------------------------------- */

START_TEST(dominance_needs_no_worse_everywhere_and_better_somewhere) {
  const double a[] = {1, 2}, b[] = {1, 3}, c[] = {1, 2}, d[] = {0, 9};
  ck_assert(cs_pareto_dominates(a, b, 2));   /* equal first, better second */
  ck_assert(!cs_pareto_dominates(b, a, 2));
  ck_assert(!cs_pareto_dominates(a, c, 2));  /* equal points: neither */
  ck_assert(!cs_pareto_dominates(c, a, 2));
  ck_assert(!cs_pareto_dominates(a, d, 2));  /* a trade-off: neither */
  ck_assert(!cs_pareto_dominates(d, a, 2));
}
END_TEST

/* (time, cost): A(1,4) B(2,2) C(2,2) D(3,2) E(4,1) F(1,5) G(4,1).
 * A beats F (same time, less cost); D loses to B and C (slower at equal cost); B and C are equal
 * and both stay; E and G are equal and both stay.  Front: A, B, C, E, G. */
START_TEST(front_keeps_equal_points_and_drops_tied_losers) {
  const double v[] = {1, 4, 2, 2, 2, 2, 3, 2, 4, 1, 1, 5, 4, 1};
  uint8_t f[7];
  cs_pareto_front(v, 7, 2, f);
  const uint8_t want[7] = {1, 1, 1, 0, 1, 0, 1};
  for (int i = 0; i < 7; i++) ck_assert_msg(f[i] == want[i], "point %d: %d", i, f[i]);
  /* one point is its own front; all points equal: all on it */
  cs_pareto_front(v, 1, 2, f);
  ck_assert_int_eq(f[0], 1);
  const double same[] = {5, 5, 5, 5, 5, 5};
  cs_pareto_front(same, 3, 2, f);
  ck_assert(f[0] && f[1] && f[2]);
}
END_TEST

/* Layers of the points above: front {A,B,C,E,G}; then D (B, C gone) and F (A gone): layer 1. */
START_TEST(layers_peel_fronts) {
  const double v[] = {1, 4, 2, 2, 2, 2, 3, 2, 4, 1, 1, 5, 4, 1};
  uint32_t l[7];
  cs_pareto_layers(v, 7, 2, l);
  const uint32_t want[7] = {0, 0, 0, 1, 0, 1, 0};
  for (int i = 0; i < 7; i++) ck_assert_msg(l[i] == want[i], "point %d: %u", i, l[i]);
  /* a chain 1 < 2 < 3 on one objective: layers 0, 1, 2 */
  const double chain[] = {3, 1, 2};
  cs_pareto_layers(chain, 3, 1, l);
  ck_assert(l[0] == 2 && l[1] == 0 && l[2] == 1);
}
END_TEST

/* Intervals (time in [lo, hi], cost exact): P time [10,12] cost 1; Q [13,15] cost 1; R [11.5,13]
 * cost 1; S [9,9] cost 2.  P's pessimistic 12 <= Q's optimistic 13 at equal cost: Q is certainly
 * dominated.  R's optimistic 11.5 < 12: R may beat P, so it stays.  S costs more but may be the
 * fastest: stays.  With P unusable (say it failed), nothing prunes Q: R's hi 13 <= 13 at equal
 * cost is no strict improvement, S costs more. */
START_TEST(interval_test_prunes_only_the_certainly_dominated) {
  const double lo[] = {10, 1, 13, 1, 11.5, 1, 9, 2}, hi[] = {12, 1, 15, 1, 13, 1, 9, 2};
  uint8_t c[4];
  cs_pareto_certainly_dominated(lo, hi, 4, 2, NULL, c);
  ck_assert(!c[0] && c[1] && !c[2] && !c[3]);
  const uint8_t usable[4] = {0, 1, 1, 1};
  cs_pareto_certainly_dominated(lo, hi, 4, 2, usable, c);
  ck_assert(!c[0] && !c[1] && !c[2] && !c[3]);
  /* an unknown value (-inf, +inf) is never pruned and prunes nothing */
  const double lo2[] = {10, 1, -INFINITY, 1}, hi2[] = {12, 1, INFINITY, 1};
  cs_pareto_certainly_dominated(lo2, hi2, 2, 2, NULL, c);
  ck_assert(!c[0] && !c[1]);
}
END_TEST

/* ---- refinement decisions ------------------------------------------------------------------ */

/* Objectives: minimise total_time_us (measured) and mst_outstanding (design). */
static void refine_spec(cs_pareto_spec *s) {
  cs_err err;
  ck_assert_int_eq(cs_pareto_spec_from_lists("total_time_us,mst_outstanding", NULL, "primitive", s,
                                             &err), 0);
}

static cs_pareto_rpoint rp(size_t w, uint8_t cheap, double time, double cost) {
  cs_pareto_rpoint p;
  memset(&p, 0, sizeof p);
  p.workload = w;
  p.primitive = CS_PRIM_ALLREDUCE;
  p.in_study = true;
  p.cheap = cheap;
  p.cheap_v[0] = time;
  p.cheap_v[1] = p.exact_v[1] = cost;
  p.exact_v[0] = NAN;
  return p;
}

/* Band 10%: P0 time 10 (cost 1) lies in [9, 11]; P1 13 in [11.7, 14.3]: P0's worst 11 beats P1's
 * best at equal cost, so P1 is certainly dominated.  P2 11.5 in [10.35, 12.65] may beat P0.  P3
 * (time 5, cost 3) may be the fastest.  P4's cheap row failed: unknown, so selected.  P5 is out
 * of the study.  P6 is alone in workload 1.  Priorities (cheap layers of workload 0): P0 and P3
 * 0, P2 1 (under P0), P1 2 (under P2). */
START_TEST(refine_selects_the_points_not_certainly_dominated) {
  cs_pareto_spec s;
  refine_spec(&s);
  cs_pareto_rpoint p[7] = {rp(0, 1, 10, 1), rp(0, 1, 13, 1), rp(0, 1, 11.5, 1), rp(0, 1, 5, 3),
                           rp(0, 2, NAN, 1), rp(0, 1, 1, 1),  rp(1, 1, 100, 1)};
  p[5].in_study = false;
  double band[CS_PRIM_COUNT] = {0.1, 0.1, 0.1, 0.1, 0.1};
  uint8_t sel[7];
  uint32_t pri[7];
  ck_assert_int_eq(cs_pareto_refine_select(&s, p, 7, band, sel, pri), 5);
  const uint8_t want[7] = {1, 0, 1, 1, 1, 0, 1};
  const uint32_t want_pri[4] = {0, 2, 1, 0};
  for (int i = 0; i < 7; i++) ck_assert_msg(sel[i] == want[i], "point %d: %d", i, sel[i]);
  for (int i = 0; i < 4; i++) ck_assert_msg(pri[i] == want_pri[i], "point %d: %u", i, pri[i]);
  /* P0 run: its exact time 11.6 is 16% above its cheap 10.  Band 10%: P1's best 11.7 still loses
   * to 11.6; widened to the 16% observed, P1's best is 10.92 and it may win: selected. */
  p[0].run = true;
  p[0].exact = CS_PARETO_ROW_DONE;
  p[0].exact_v[0] = 11.6;
  double seen[CS_PRIM_COUNT];
  cs_pareto_refine_observed(&s, p, 7, seen);
  ck_assert(fabs(seen[CS_PRIM_ALLREDUCE] - 0.16) < 1e-12 && seen[CS_PRIM_ALLTOALL] == -1);
  cs_pareto_refine_select(&s, p, 7, band, sel, NULL);
  ck_assert(!sel[0] && !sel[1]); /* P0 ran: never selected again */
  band[CS_PRIM_ALLREDUCE] = seen[CS_PRIM_ALLREDUCE];
  cs_pareto_refine_select(&s, p, 7, band, sel, NULL);
  ck_assert(sel[1]);
  /* P0's expensive row failed: it dominates nothing, and P1 is back in (P2's worst 12.65 at 10%
   * is above P1's best 11.7) */
  band[CS_PRIM_ALLREDUCE] = 0.1;
  p[0].exact = CS_PARETO_ROW_FAILED;
  cs_pareto_refine_select(&s, p, 7, band, sel, NULL);
  ck_assert(sel[1]);
}
END_TEST

/* Fronts and the certificate: P0 ran (exact 11.6, cost 1), P3 ran (exact 5, cost 3); P1 (cheap
 * 13, cost 1) and P2 (cheap 12, cost 2) did not.  Expensive front {P0, P3}; cheap front {P0, P3}
 * (cheap 10 and 5).  P1 stays dominated by P0 while its true time exceeds 11.6, i.e. its cheap
 * value is off by less than (13 - 11.6) / 13 = 10.77%; P2 by P0 while off by less than
 * (12 - 11.6) / 12 = 3.33% (P0 costs less too): the certificate is 3.33%. */
START_TEST(refine_fronts_and_certificate) {
  cs_pareto_spec s;
  refine_spec(&s);
  cs_pareto_rpoint p[4] = {rp(0, 1, 10, 1), rp(0, 1, 13, 1), rp(0, 1, 12, 2), rp(0, 1, 5, 3)};
  p[0].run = p[3].run = true;
  p[0].exact = p[3].exact = CS_PARETO_ROW_DONE;
  p[0].exact_v[0] = 11.6;
  p[3].exact_v[0] = 5;
  uint8_t ex[4], ch[4];
  cs_pareto_refine_fronts(&s, p, 4, ex, ch);
  ck_assert(ex[0] && !ex[1] && !ex[2] && ex[3]);
  ck_assert(ch[0] && !ch[1] && !ch[2] && ch[3]);
  double margin[CS_PRIM_COUNT];
  double all = cs_pareto_refine_margin(&s, p, 4, margin);
  ck_assert_msg(fabs(all - 0.4 / 12) < 1e-12, "%.17g", all);
  ck_assert(margin[CS_PRIM_ALLREDUCE] == all && isinf(margin[CS_PRIM_ALLTOALL]));
  /* a point no validated point dominates at any error: P2 cheaper than everything run */
  p[2].cheap_v[1] = p[2].exact_v[1] = 0;
  all = cs_pareto_refine_margin(&s, p, 4, margin);
  ck_assert(isinf(all) && all < 0);
}
END_TEST

/* ---- the pareto section ------------------------------------------------------------------- */

static int spec_of(const char *json, cs_pareto_spec *s, cs_err *err) {
  cJSON *doc = cJSON_Parse(json);
  ck_assert_ptr_nonnull(doc);
  int rc = cs_pareto_spec_from_json(doc, "pareto", s, err);
  cJSON_Delete(doc);
  return rc;
}

static void expect_error(const char *json, const char *needle) {
  cs_pareto_spec s;
  cs_err err;
  cs_err_clear(&err);
  ck_assert_int_eq(spec_of(json, &s, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, needle), "%s: got '%s', want '%s'", json, err.msg, needle);
}

START_TEST(section_errors_name_field_value_and_rule) {
  expect_error("{\"minimize\": [\"total_time\"]}",
               "pareto.minimize[0]: unknown column 'total_time'");
  expect_error("{\"minimize\": [\"total_time_us\", \"primitive\"]}",
               "pareto.minimize[1]: column 'primitive' is text, not numeric");
  expect_error("{\"minimize\": []}", "pareto.minimize: empty list");
  expect_error("{\"minimize\": [\"total_time_us\"], \"workload\": []}", "pareto.workload: empty list");
  expect_error("{\"minimize\": [\"total_time_us\"], \"maximize\": [\"total_time_us\"]}",
               "pareto.maximize[0]: column 'total_time_us' is named twice (also in 'minimize')");
  expect_error("{\"minimize\": [\"num_dies\"], \"workload\": [\"primitive\", \"num_dies\"]}",
               "pareto.workload[1]: column 'num_dies' is named twice");
  expect_error("{\"minimize\": [\"num_dies\"], \"workload\": [\"total_time_us\"]}",
               "pareto.workload[0]: column 'total_time_us' is a result");
  expect_error("{\"minimize\": [\"checksum\"]}", "column 'checksum' is bookkeeping of the file");
  expect_error("{\"minimize\": [\"wall_time_s\"]}", "column 'wall_time_s' is host time");
  expect_error("{\"minimize\": [3]}", "pareto.minimize[0]: expected a column name (a string)");
  expect_error("{\"minimise\": [\"total_time_us\"]}", "pareto: unknown key 'minimise'");
  expect_error("{\"minimize\": \"total_time_us\"}", "pareto.minimize: expected an array");
  expect_error("{\"workload\": [\"primitive\"]}", "pareto: no objective");
  expect_error("[]", "pareto: expected an object");
}
END_TEST

START_TEST(section_resolves_columns_and_default_workload) {
  cs_pareto_spec s;
  cs_err err;
  ck_assert_int_eq(spec_of("{\"minimize\": [\"total_time_us\", \"outstanding_sum\"], "
                           "\"maximize\": [\"bus_bw_gb_per_s\"]}", &s, &err), 0);
  ck_assert_int_eq(s.num_objectives, 3);
  ck_assert(s.objective[0].source == CS_PARETO_RESULT && s.objective[0].measured);
  ck_assert(s.objective[1].source == CS_PARETO_DERIVED && !s.objective[1].measured);
  ck_assert(s.maximize[2] && !s.maximize[0]);
  ck_assert_int_eq(s.num_workload, 4); /* CS_PARETO_DEFAULT_WORKLOAD */
  ck_assert_str_eq(s.workload[3].name, "num_participants");
  char d[256];
  cs_pareto_spec_describe(&s, d, sizeof d);
  ck_assert_str_eq(d, "minimize total_time_us (us), outstanding_sum; maximize bus_bw_gb_per_s "
                      "(GB/s); workload primitive, algorithm, msg_size_bytes, num_participants");
  /* the command-line form accepts and refuses the same */
  ck_assert_int_eq(cs_pareto_spec_from_lists("total_time_us,d2d_links", NULL, "primitive", &s, &err), 0);
  ck_assert(s.num_objectives == 2 && s.num_workload == 1);
  ck_assert_int_eq(cs_pareto_spec_from_lists("total_time_us,primitive", NULL, NULL, &s, &err),
                   CS_EINVAL);
  ck_assert(strstr(err.msg, "--minimize: column 'primitive' is text"));
  ck_assert_int_eq(cs_pareto_spec_from_lists(NULL, NULL, NULL, &s, &err), CS_EINVAL);
  /* an engine's design column comes from its ops table */
  cs_pareto_column c;
  ck_assert_int_eq(cs_pareto_column_find("vcnet_num_vcs", &c, &err), 0);
  ck_assert(c.source == CS_PARETO_ENGINE && c.numeric && !c.measured);
}
END_TEST

/* ---- values of rows ----------------------------------------------------------------------- */

static void job_row(cs_store_job_row *j, const char *layout, int mst, int slv, int burst,
                    const char *json) {
  memset(j, 0, sizeof *j);
  cs_store_set_text(j->primitive, sizeof j->primitive, "allreduce");
  cs_store_set_text(j->algorithm, sizeof j->algorithm, "ring");
  cs_store_set_text(j->engine, sizeof j->engine, "dcin");
  cs_store_set_text(j->dcin_layout, sizeof j->dcin_layout, layout);
  j->msg_size_bytes = 65536;
  j->num_participants = 4;
  j->mst_rd_outstanding = j->mst_wr_outstanding = mst;
  j->slv_rd_outstanding = j->slv_wr_outstanding = slv;
  j->burst_length = burst;
  j->bw_bytes = 128;
  cs_store_set_text(j->job_json, sizeof j->job_json, json ? json : "{}");
}

/* outstanding_sum = 16+16+64+64 = 160; burst_bytes = 4 x 128 = 512; inflight = 32 x 512 = 16384;
 * d2d_links: the layout files list 0 (1die), 4 (2die) and 12 (4die) links (docs/topologies.md);
 * algbw = 65536 B / 2 us = 32.768 GB/s. */
START_TEST(derived_columns_follow_their_definitions) {
  cs_store_job_row j;
  cs_store_result_row r;
  memset(&r, 0, sizeof r);
  r.result.total_time_us = 2.0;
  cs_pareto_row row = {&j, &r, NULL};
  const char *names[] = {"outstanding_sum", "mst_outstanding", "burst_bytes", "inflight_bytes",
                         "d2d_links", "algbw_gb_per_s"};
  const double want[] = {160, 32, 512, 16384, 4, 32.768};
  job_row(&j, "2die", 16, 64, 4, NULL);
  for (int i = 0; i < 6; i++) {
    cs_pareto_column c;
    cs_err err;
    ck_assert_int_eq(cs_pareto_column_find(names[i], &c, &err), 0);
    ck_assert_msg(fabs(cs_pareto_value(&c, &row) - want[i]) < 1e-12, "%s", names[i]);
  }
  cs_pareto_column links, algbw, time;
  cs_err err;
  cs_pareto_column_find("d2d_links", &links, &err);
  cs_pareto_column_find("algbw_gb_per_s", &algbw, &err);
  cs_pareto_column_find("total_time_us", &time, &err);
  job_row(&j, "1die", 16, 64, 4, NULL);
  ck_assert(cs_pareto_value(&links, &row) == 0);
  job_row(&j, "4die", 16, 64, 4, NULL);
  ck_assert(cs_pareto_value(&links, &row) == 12);
  job_row(&j, "no-such-layout", 16, 64, 4, NULL);
  ck_assert(isnan(cs_pareto_value(&links, &row)));
  row.res = NULL; /* not run: measured columns have no value */
  ck_assert(isnan(cs_pareto_value(&algbw, &row)) && isnan(cs_pareto_value(&time, &row)));
}
END_TEST

/* vcnet's design columns read the job's vcnet options: given (4 VCs of 16 flits: 64 flits a
 * port), or the engine's documented defaults when the job gives none (2 VCs of 8 flits), or from
 * the vcnet object of another engine's job; a job with neither has no value. */
START_TEST(engine_design_columns_come_from_the_stored_options) {
  static const char *const tail =
      "\"spec\":{\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"msg_size_bytes\":4096,"
      "\"participants\":[0,1],\"dtype\":\"bf16\",\"chip_spec_summary\":{}},"
      "\"adapter\":{\"mode\":\"dcin\",\"topology\":\"5x4\",\"num_dies\":1,\"dcin_layout\":\"1die\","
      "\"endpoint_id_scheme\":\"mvp\",\"num_initiators\":20,\"num_targets\":20,"
      "\"driver_cycle_frequency_ghz\":1,\"ip_frequency_ghz\":1,\"noc_frequency_ghz\":2,"
      "\"mst_rd_outstanding\":16,\"mst_wr_outstanding\":16,\"slv_rd_outstanding\":16,"
      "\"slv_wr_outstanding\":16,\"burst_length\":4,\"bw_bytes\":128,"
      "\"enable_transaction_log\":true,\"transaction_log_path\":\"x\"}}";
  const char *engines[] = {
      "{\"engine\":{\"name\":\"vcnet\",\"vcnet\":{\"topology\":\"mesh:4x4\",\"routing\":\"dor\","
      "\"endpoints_per_router\":2,\"num_vcs\":4,\"vc_depth\":16,\"rc_delay\":1,\"va_delay\":1,"
      "\"sa_delay\":1,\"st_delay\":1,\"link_latency\":1,\"flit_bytes\":32,\"frequency_ghz\":1}},",
      "{\"engine\":{\"name\":\"vcnet\"},",
      "{\"engine\":{\"name\":\"math\",\"vcnet\":{\"topology\":\"mesh:4x4\",\"routing\":\"dor\","
      "\"endpoints_per_router\":2,\"num_vcs\":4,\"vc_depth\":16,\"rc_delay\":1,\"va_delay\":1,"
      "\"sa_delay\":1,\"st_delay\":1,\"link_latency\":1,\"flit_bytes\":32,\"frequency_ghz\":1}},",
      "{\"engine\":{\"name\":\"dcin\"},"};
  const double want[] = {64, 16, 64, NAN};
  cs_pareto_column c;
  cs_err err;
  ck_assert_int_eq(cs_pareto_column_find("vcnet_port_buffer_flits", &c, &err), 0);
  for (int i = 0; i < 4; i++) {
    char json[4096];
    snprintf(json, sizeof json, "%s%s", engines[i], tail);
    cs_store_job_row j;
    job_row(&j, "1die", 16, 16, 4, json);
    cs_pareto_row row = {&j, NULL, NULL};
    double v = cs_pareto_value(&c, &row);
    if (isnan(want[i])) ck_assert_msg(isnan(v), "case %d: %g", i, v);
    else ck_assert_msg(v == want[i], "case %d: %g", i, v);
  }
}
END_TEST

/* Every engine's design columns fit out[CS_ENGINE_EXTRA_MAX] and resolve to themselves: no file
 * column, derived column or other engine's column shadows one. */
START_TEST(engine_design_columns_fit_and_are_unique) {
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++) {
    size_t n = 0;
    for (const cs_engine_column *c = (*e)->design_columns; c && c->name; c++, n++) {
      cs_pareto_column col;
      cs_err err;
      ck_assert_int_eq(cs_pareto_column_find(c->name, &col, &err), 0);
      ck_assert_msg(col.source == CS_PARETO_ENGINE && col.engine == *e && col.index == n, "%s",
                    c->name);
    }
    ck_assert_msg(n <= CS_ENGINE_EXTRA_MAX, "%s: %zu design columns", (*e)->name, n);
    ck_assert(!n || (*e)->design);
  }
}
END_TEST

/* ---- a file's fronts ---------------------------------------------------------------------- */

typedef struct hand_row {
  const char *primitive;
  int mst, burst;
  double time_us, busbw;
  int status; /* CS_STORE_*; 3: done, then its checksum broken */
} hand_row;

/* Writes rows into a fresh store: every row a dcin allreduce of 64 KiB over 4, its design the
 * trackers and the burst, its result the time and busbw given. */
static void write_rows(const hand_row *rows, size_t n) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_store_grow(st, n, 0, &err), 0);
  cs_store_job_row *jobs = calloc(n, sizeof *jobs);
  for (size_t i = 0; i < n; i++) {
    job_row(&jobs[i], "2die", rows[i].mst, 64, rows[i].burst, NULL);
    cs_store_set_text(jobs[i].primitive, sizeof jobs[i].primitive, rows[i].primitive);
    char key[CS_STORE_KEY_LEN + 1];
    snprintf(key, sizeof key, "%064zx", i + 1);
    memcpy(jobs[i].key, key, CS_STORE_KEY_LEN);
  }
  ck_assert_int_eq(cs_store_write_jobs(st, 0, n, jobs, &err), 0);
  for (size_t i = 0; i < n; i++) {
    if (rows[i].status == CS_STORE_PENDING) continue;
    cs_store_result_row r;
    memset(&r, 0, sizeof r);
    r.status = rows[i].status == CS_STORE_FAILED ? CS_STORE_FAILED : CS_STORE_DONE;
    r.result.total_time_us = rows[i].time_us;
    r.result.bus_bw_gb_per_s = rows[i].busbw;
    cs_store_set_text(r.result.engine, sizeof r.result.engine, "dcin");
    if (r.status == CS_STORE_FAILED) cs_store_set_text(r.error, sizeof r.error, "boom");
    ck_assert_int_eq(cs_store_put_result(st, i, jobs[i].key, &r, NULL, 0, &err), 0);
    if (rows[i].status == 3) { /* its /jobs key changes after: the row checksum binds it */
      jobs[i].key[0] ^= 1;
      ck_assert_int_eq(cs_store_write_jobs(st, i, 1, &jobs[i], &err), 0);
    }
  }
  free(jobs);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}

/* Two workloads (allreduce: rows 0-6; alltoall: row 7 alone), objectives minimise time and
 * mst_outstanding (32 = 16 + 16 or 128 = 64 + 64), maximise busbw.
 *   row mst time busbw
 *   0   16  10   5     front: cheapest trackers, and nothing is better at 32 (row 1 equals it)
 *   1   16  10   5     front: equal to row 0
 *   2   64   8   5     front: fastest
 *   3   64   9   6     front: best busbw (a trade-off against row 2)
 *   4   64   9   5     dominated by row 3 (busbw 5 < 6, the rest equal)
 *   5   64   1   9     failed: left out (its numbers would dominate everything)
 *   6   16   1   9     checksum broken (its key changed): left out
 *   7   16  50   1     alltoall, one point: its own front
 *   8   16   1   9     pending: left out */
START_TEST(file_fronts_from_hand_made_rows) {
  const hand_row rows[] = {
      {"allreduce", 16, 4, 10, 5, CS_STORE_DONE}, {"allreduce", 16, 8, 10, 5, CS_STORE_DONE},
      {"allreduce", 64, 4, 8, 5, CS_STORE_DONE},  {"allreduce", 64, 2, 9, 6, CS_STORE_DONE},
      {"allreduce", 64, 8, 9, 5, CS_STORE_DONE},  {"allreduce", 64, 4, 1, 9, CS_STORE_FAILED},
      {"allreduce", 16, 2, 1, 9, 3},              {"alltoall", 16, 4, 50, 1, CS_STORE_DONE},
      {"allreduce", 16, 4, 1, 9, CS_STORE_PENDING}};
  write_rows(rows, sizeof rows / sizeof *rows);
  cs_err err;
  cs_pareto_spec s;
  ck_assert_int_eq(cs_pareto_spec_from_lists("total_time_us,mst_outstanding", "bus_bw_gb_per_s",
                                             "primitive,msg_size_bytes", &s, &err), 0);
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  cs_pareto_set set;
  ck_assert_int_eq(cs_pareto_load(st, &s, NULL, &set, &err), 0);
  cs_store_close(st, NULL);
  ck_assert_int_eq(set.rows, 9);
  ck_assert_int_eq(set.not_done, 2);
  ck_assert_int_eq(set.corrupt, 1);
  ck_assert_int_eq(set.num_groups, 2);
  const cs_pareto_group *ar = &set.groups[0], *a2a = &set.groups[1];
  ck_assert_str_eq(ar->workload, "primitive=allreduce, msg_size_bytes=65536");
  ck_assert_str_eq(ar->engine, "dcin");
  ck_assert_int_eq(ar->count, 5);
  ck_assert_int_eq(ar->on_front, 4);
  const uint8_t want[5] = {1, 1, 1, 1, 0}; /* rows 0-4, in row order */
  for (size_t i = 0; i < 5; i++) {
    ck_assert_int_eq(set.points[ar->first + i].row, i);
    ck_assert_msg(set.points[ar->first + i].on_front == want[i], "row %zu", i);
  }
  ck_assert_int_eq(a2a->count, 1);
  ck_assert(set.points[a2a->first].on_front && set.points[a2a->first].row == 7);
  /* the design shown is what varies: trackers and burst within allreduce */
  size_t burst = 0;
  while (burst < set.num_design && strcmp(set.design_col[burst].name, "burst_length")) burst++;
  ck_assert(burst < set.num_design && (ar->varying >> burst & 1));
  char b[16];
  cs_pareto_point_design(&set.points[ar->first + 1], burst, b, sizeof b);
  ck_assert_str_eq(b, "8");
  ck_assert_int_eq(a2a->varying, 0);
  /* the same design under another engine has the same id; another design another */
  ck_assert_str_eq(set.points[0].design_id, set.points[1].design_id); /* "{}": both unparsed alike */
  cs_pareto_set_free(&set);
  /* a filter: only alltoall */
  cs_pareto_filter f = {NULL, "alltoall", NULL};
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  ck_assert_int_eq(cs_pareto_load(st, &s, &f, &set, &err), 0);
  cs_store_close(st, NULL);
  ck_assert_int_eq(set.num_groups, 1);
  ck_assert_int_eq(set.filtered, 8);
  cs_pareto_set_free(&set);
}
END_TEST

static Suite *pareto_suite(void) {
  Suite *s = suite_create("pareto");
  TCase *t = tcase_create("fronts");
  tcase_add_test(t, dominance_needs_no_worse_everywhere_and_better_somewhere);
  tcase_add_test(t, front_keeps_equal_points_and_drops_tied_losers);
  tcase_add_test(t, layers_peel_fronts);
  tcase_add_test(t, interval_test_prunes_only_the_certainly_dominated);
  suite_add_tcase(s, t);
  t = tcase_create("refine");
  tcase_add_test(t, refine_selects_the_points_not_certainly_dominated);
  tcase_add_test(t, refine_fronts_and_certificate);
  suite_add_tcase(s, t);
  t = tcase_create("section");
  tcase_add_test(t, section_errors_name_field_value_and_rule);
  tcase_add_test(t, section_resolves_columns_and_default_workload);
  suite_add_tcase(s, t);
  t = tcase_create("values");
  tcase_add_test(t, derived_columns_follow_their_definitions);
  tcase_add_test(t, engine_design_columns_come_from_the_stored_options);
  tcase_add_test(t, engine_design_columns_fit_and_are_unique);
  suite_add_tcase(s, t);
  t = tcase_create("file");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, file_fronts_from_hand_made_rows);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return cs_test_run(pareto_suite()); }
