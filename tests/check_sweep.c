/* Sweep files and the cache plan, without MPI: matrix expansion, sweep-file errors, invalid
 * combinations as failed jobs, the plan against empty and populated files, reruns, corrupt rows
 * and results-only rows.  Jobs run serially through cs_sweep_execute on a serial store. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "commsweep/config.h"
#include "commsweep/job.h"
#include "commsweep/store.h"
#include "test_support.h"
#include "commsweep/sweep.h"
#include "sweep/sweep_int.h"

#define DEMO CS_SOURCE_DIR "/sweeps/demo.json"

static char dir[256], path[512];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cs_check_sweep_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/s.h5", dir);
}

static void teardown(void) {
  unlink(path);
  rmdir(dir);
}

/* The demo sweep with its matrix replaced (and, when top is given, one extra top-level key). */
static char *sweep_text(const char *matrix, const char *top_key) {
  cJSON *doc = NULL;
  cs_err err;
  ck_assert_int_eq(cs_config_parse_file(DEMO, &doc, &err), 0);
  cJSON *m = cJSON_Parse(matrix);
  ck_assert_ptr_nonnull(m);
  cJSON_ReplaceItemInObjectCaseSensitive(doc, "matrix", m);
  if (top_key) cJSON_AddNumberToObject(doc, top_key, 1);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  return text;
}

/* The demo sweep with its matrix replaced and one field of its base set to a JSON value. */
static char *sweep_text_base(const char *matrix, const char *section, const char *key,
                             const char *value) {
  char *text = sweep_text(matrix, NULL);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  cJSON *sec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "base"),
                                                section);
  cJSON *v = cJSON_Parse(value);
  ck_assert_ptr_nonnull(sec);
  ck_assert_ptr_nonnull(v);
  if (cJSON_GetObjectItemCaseSensitive(sec, key))
    cJSON_ReplaceItemInObjectCaseSensitive(sec, key, v);
  else
    cJSON_AddItemToObject(sec, key, v);
  text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  return text;
}

static int parse_matrix(const char *matrix, cs_sweep *sw, cs_err *err) {
  char *text = sweep_text(matrix, NULL);
  int rc = cs_sweep_parse(text, "t.json", sw, err);
  free(text);
  return rc;
}

/* The job of sweep job i, unpacked. */
static cs_job job_of(const cs_sweep *sw, size_t i) {
  cs_job job;
  cs_err err;
  ck_assert_int_eq(cs_sweep_job_get(&sw->jobs[i], &job, &err), 0);
  return job;
}

/* Runs every item of a plan on a fresh serial store handle, with the log rows in lb (NULL:
 * fresh ones for each job). */
static void run_plan_with(cs_sweep *sw, cs_sweep_plan *plan, bool results_only,
                          cs_sweep_logbuf *lb) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_sweep_plan_apply(sw, st, plan, &err), 0);
  for (size_t i = 0; i < plan->num_items; i++) {
    cs_sweep_job_outcome done;
    cs_job job = job_of(sw, plan->items[i].job);
    ck_assert_int_eq(
        cs_sweep_execute(st, NULL, lb, &plan->items[i], &job, results_only, NULL, &done, &err), 0);
  }
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}

static void run_plan(cs_sweep *sw, cs_sweep_plan *plan, bool results_only) {
  run_plan_with(sw, plan, results_only, NULL);
}

static void plan_file(cs_sweep *sw, bool results_only, cs_sweep_plan *plan) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  ck_assert_int_eq(cs_sweep_plan_make(sw, st, &(cs_sweep_plan_options){results_only, true, false, false, NULL, 0}, plan, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}

START_TEST(demo_expands_to_the_cartesian_product) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(cs_sweep_load(DEMO, &sw, &err), 0);
  ck_assert_str_eq(sw.name, "demo");
  ck_assert_uint_eq(sw.num_jobs, 3 * 4 * 3 * 2 * 2);
  for (size_t i = 0; i < sw.num_jobs; i++) {
    ck_assert_int_eq(sw.jobs[i].load_code, 0);
    ck_assert_uint_gt(sw.jobs[i].num_txns, 0);
    for (size_t k = 0; k < i; k++) ck_assert_str_ne(sw.jobs[i].key, sw.jobs[k].key);
  }
  /* the first axis varies slowest, the last fastest */
  ck_assert_str_eq(job_of(&sw, 0).engine.name, "dcin");
  ck_assert_str_eq(job_of(&sw, 47).engine.name, "dcin");
  ck_assert_str_eq(job_of(&sw, 48).engine.name, "math");
  ck_assert_str_eq(job_of(&sw, 96).engine.name, "vcnet");
  ck_assert_int_eq(job_of(&sw, 0).spec.primitive, CS_PRIM_ALLREDUCE);
  ck_assert_int_eq(job_of(&sw, 11).spec.primitive, CS_PRIM_ALLREDUCE);
  ck_assert_int_eq(job_of(&sw, 12).spec.primitive, CS_PRIM_ALLGATHER);
  ck_assert_int_eq(job_of(&sw, 0).adapter.mst_wr_outstanding, 16);
  ck_assert_int_eq(job_of(&sw, 1).adapter.mst_wr_outstanding, 64);
  ck_assert_int_eq(job_of(&sw, 1).adapter.slv_wr_outstanding, 64);
  ck_assert_int_eq(job_of(&sw, 2).spec.num_participants, 8);
  ck_assert_uint_eq(job_of(&sw, 4).spec.msg_size_bytes, 65536);
  ck_assert_int_eq(job_of(&sw, 47).spec.algorithm, CS_ALGO_PAIRWISE);
  char *json = cs_sweep_job_json(&sw, &sw.jobs[0]);
  ck_assert_ptr_nonnull(strstr(json, "\"mst_wr_outstanding\":16"));
  ck_assert_uint_eq(strlen(json), sw.jobs[0].json_len);
  free(json);
  cs_sweep_free(&sw);
}
END_TEST

/* What every rank does in cs_sweep_load_mpi: expand a block; blocks together equal the whole. */
START_TEST(expansion_in_blocks_equals_the_whole) {
  cs_sweep whole, parts;
  cs_err err;
  ck_assert_int_eq(cs_sweep_load(DEMO, &whole, &err), 0);
  cJSON *doc = NULL;
  ck_assert_int_eq(cs_config_parse_file(DEMO, &doc, &err), 0);
  cs_sweep_def def;
  ck_assert_int_eq(cs_sweep_def_parse(doc, DEMO, &def, &err), 0);
  ck_assert_int_eq(cs_sweep_alloc(&def, &parts, &err), 0);
  size_t cut[] = {0, 7, 8, 29, def.num_jobs};
  for (int k = 0; k + 1 < 5; k++)
    ck_assert_int_eq(cs_sweep_expand_range(&def, cut[k], cut[k + 1], &parts, &err), 0);
  ck_assert_uint_eq(parts.num_jobs, whole.num_jobs);
  for (size_t i = 0; i < whole.num_jobs; i++) {
    ck_assert_str_eq(parts.jobs[i].key, whole.jobs[i].key);
    char *a_json = cs_sweep_job_json(&parts, &parts.jobs[i]);
    char *b_json = cs_sweep_job_json(&whole, &whole.jobs[i]);
    ck_assert_str_eq(a_json, b_json);
    free(a_json);
    free(b_json);
    ck_assert_uint_eq(parts.jobs[i].num_txns, whole.jobs[i].num_txns);
    cs_job a = job_of(&parts, i), b = job_of(&whole, i);
    ck_assert(memcmp(&a, &b, sizeof(cs_job)) == 0);
    ck_assert(parts.jobs[i].cost == whole.jobs[i].cost);
  }
  cs_sweep_def_free(&def);
  cs_sweep_free(&parts);
  cs_sweep_free(&whole);
}
END_TEST

/* A packed job unpacks to the same bytes, whatever their pattern: no zero, zeros everywhere,
 * zero runs just shorter and just as long as a segment break (8), a job of the demo. */
START_TEST(packed_jobs_unpack_byte_for_byte) {
  static unsigned char pattern[5][sizeof(cs_job)];
  memset(pattern[0], 0xab, sizeof(cs_job));
  for (size_t i = 0; i < sizeof(cs_job); i++) {
    pattern[2][i] = i % 15 < 7 ? 0 : (unsigned char)(i | 1);  /* 7 zeros, 8 non-zero */
    pattern[3][i] = i % 16 < 8 ? 0 : (unsigned char)(i | 1);  /* 8 zeros, 8 non-zero */
  }
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(cs_sweep_load(DEMO, &sw, &err), 0);
  cs_job demo = job_of(&sw, 100);
  memcpy(pattern[4], &demo, sizeof demo);
  cs_sweep_free(&sw);
  for (int p = 0; p < 5; p++) {
    unsigned char packed[CS_JOB_PACKED_MAX];
    cs_job back;
    size_t len = cs_job_pack((const cs_job *)pattern[p], packed);
    ck_assert_uint_le(len, CS_JOB_PACKED_MAX);
    ck_assert_int_eq(cs_job_unpack(packed, len, &back, &err), 0);
    ck_assert(memcmp(&back, pattern[p], sizeof back) == 0);
    if (p == 1) ck_assert_uint_le(len, 8); /* all zero: one segment header (+ none) */
    if (p == 4) ck_assert_uint_lt(len, sizeof(cs_job) / 8);
    /* one byte short, or a length pointing past the end: refused */
    if (len > 4) ck_assert_int_eq(cs_job_unpack(packed, len - 1, &back, &err), CS_EINVAL);
    packed[2] = 0xff, packed[3] = 0xff;
    ck_assert_int_eq(cs_job_unpack(packed, len, &back, &err), CS_EINVAL);
  }
}
END_TEST

START_TEST(empty_matrix_is_one_job) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[]", &sw, &err), 0);
  ck_assert_uint_eq(sw.num_jobs, 1);
  ck_assert_int_eq(sw.jobs[0].load_code, 0);
  cs_sweep_free(&sw);
}
END_TEST

static void expect_file_error(const char *matrix, const char *top, const char *needle) {
  cs_sweep sw;
  cs_err err;
  char *text = sweep_text(matrix, top);
  ck_assert_msg(cs_sweep_parse(text, "bad.json", &sw, &err) != 0, "accepted: %s", matrix);
  free(text);
  ck_assert_msg(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
  ck_assert_ptr_nonnull(strstr(err.msg, "bad.json"));
  ck_assert_ptr_null(sw.jobs);
}

START_TEST(sweep_file_errors_name_the_fault) {
  expect_file_error("[]", "colour", "unknown key 'colour'");
  expect_file_error("[{\"field\":\"adapter.burst_lenght\",\"values\":[1]}]", NULL,
                    "unknown field 'adapter.burst_lenght'");
  expect_file_error("[{\"field\":\"chip.burst_length\",\"values\":[1]}]", NULL,
                    "must start with spec., adapter. or engine.");
  expect_file_error("[{\"field\":\"engine.math.nope\",\"values\":[1]}]", NULL,
                    "unknown field 'engine.math.nope'");
  expect_file_error("[{\"field\":\"spec.msg_size_bytes\",\"values\":[]}]", NULL,
                    "'values' must be a non-empty array");
  expect_file_error("[{\"fields\":[\"adapter.topology\",\"adapter.num_dies\"],"
                    "\"values\":[[\"5x4\",2],[\"5x4\"]]}]",
                    NULL, "values[1] must be an array of 2 values");
  expect_file_error("[{\"field\":\"spec.dtype\",\"values\":[\"fp32\"]},"
                    "{\"fields\":[\"spec.dtype\"],\"values\":[[\"bf16\"]]}]",
                    NULL, "already an axis");
  expect_file_error("[{\"field\":\"spec.dtype\",\"fields\":[\"spec.dtype\"],\"values\":[1]}]",
                    NULL, "exactly one of 'field'");
  expect_file_error("[{\"field\":\"spec.dtype\",\"values\":[\"x\"],\"extra\":1}]", NULL,
                    "unknown key 'extra'");
}
END_TEST

/* A field given twice, inside one axis or by two axes (also through a path inside a field, or
 * a path with an empty component that would read as another), or a key repeated anywhere in the
 * file: one would silently override the other. */
START_TEST(sweep_file_errors_name_repeated_fields) {
  expect_file_error("[{\"fields\":[\"spec.dtype\",\"spec.dtype\"],\"values\":[[\"a\",\"b\"]]}]",
                    NULL, "matrix[0]: fields[1] 'spec.dtype' repeats fields[0] 'spec.dtype'");
  expect_file_error("[{\"field\":\"spec..msg_size_bytes\",\"values\":[64]}]", NULL,
                    "matrix[0]: field 'spec..msg_size_bytes' has an empty component");
  expect_file_error("[{\"field\":\"spec.msg_size_bytes\",\"values\":[128]},"
                    "{\"field\":\"spec..msg_size_bytes\",\"values\":[64]}]",
                    NULL, "matrix[1]: field 'spec..msg_size_bytes' has an empty component");
  expect_file_error("[{\"field\":\"spec.dtype.\",\"values\":[\"x\"]}]", NULL,
                    "has an empty component");
  expect_file_error("[{\"field\":\"spec.chip_spec_summary\",\"values\":[{\"chip\":\"a\"}]},"
                    "{\"field\":\"spec.chip_spec_summary.chip\",\"values\":[\"b\"]}]",
                    NULL, "matrix[1]: field 'spec.chip_spec_summary.chip' overlaps "
                          "'spec.chip_spec_summary' of matrix[0]");
  expect_file_error("[{\"fields\":[\"engine.math.dbid_cycles\",\"engine.math\"],"
                    "\"values\":[[1,{}]]}]",
                    NULL, "matrix[0]: fields[1] 'engine.math' overlaps fields[0]");
  /* a prefix that is not a whole component is another field */
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"adapter.mst_rd_outstanding\",\"values\":[16]},"
                                "{\"field\":\"adapter.mst_rd_outstanding_x\",\"values\":[1]}]",
                                &sw, &err),
                   CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "unknown field 'adapter.mst_rd_outstanding_x'"), "%s", err.msg);
  /* top-level and nested repeated keys name the key and the file */
  expect_file_error("[]", "name", "field 'name' appears twice");
  expect_file_error("[{\"field\":\"spec.chip_spec_summary\",\"values\":[{\"a\":1,\"a\":2}]}]",
                    NULL, "field 'matrix[0].values[0].a' appears twice");
  /* 1e400 as written in the file (cJSON would print a parsed infinity as null) */
  char *text = sweep_text("[{\"field\":\"spec.msg_size_bytes\",\"values\":[123456789]}]", NULL);
  memcpy(strstr(text, "123456789"), "1e400    ", 9);
  ck_assert_int_eq(cs_sweep_parse(text, "bad.json", &sw, &err), CS_EINVAL);
  free(text);
  ck_assert_msg(strstr(err.msg, "sweep file 'bad.json': field 'matrix[0].values[0]': the number "
                                "is out of the range of a double"),
                "%s", err.msg);
}
END_TEST

static int parse_text(char *text, cs_sweep *sw, cs_err *err) {
  int rc = cs_sweep_parse(text, "b.json", sw, err);
  free(text);
  return rc;
}

/* A base that fails on its own, whatever the axes set, is an error of the file (the sweep
 * stops before the store is touched), not one failed row per job. */
START_TEST(base_error_is_an_error_of_the_file) {
  cs_sweep sw;
  cs_err err;
  const char *sizes = "[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192]}]";
  ck_assert_int_eq(parse_text(sweep_text_base(sizes, "adapter", "mst_wr_outstanding", "7"), &sw, &err),
                   CS_ECONSTRAINT);
  ck_assert_msg(strstr(err.msg, "sweep file 'b.json': base: adapter: C4: mst_wr_outstanding = 7") &&
                    strstr(err.msg, "all 2 jobs"),
                "%s", err.msg);
  ck_assert_ptr_null(sw.jobs);
  /* ill-formed base fields too, and with the empty matrix (the base is then the one job) */
  ck_assert_int_eq(parse_text(sweep_text_base("[]", "spec", "participants", "\"all\""), &sw, &err),
                   CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "base: field 'participants'"), "%s", err.msg);
  ck_assert_int_eq(parse_text(sweep_text_base(sizes, "engine", "colour", "1"), &sw, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "base: unknown field 'colour'"), "%s", err.msg);
  /* an axis value failing first in some jobs does not hide the base's own fault */
  ck_assert_int_ne(parse_text(sweep_text_base("[{\"field\":\"spec.msg_size_bytes\",\"values\":[0,"
                                              "4096]}]",
                                              "adapter", "mst_wr_outstanding", "7"),
                              &sw, &err),
                   CS_OK);
  ck_assert_msg(strstr(err.msg, "base: adapter: C4"), "%s", err.msg);
}
END_TEST

/* What an axis sets is the combination's: a base repaired by every axis value is fine, and a
 * base that is valid alone keeps per-job failed rows even when every combination fails. */
START_TEST(axis_values_failing_stay_failed_rows) {
  cs_sweep sw;
  cs_err err;
  const char *outstanding = "[{\"field\":\"adapter.mst_rd_outstanding\",\"values\":[16,64]}]";
  ck_assert_int_eq(parse_text(sweep_text_base(outstanding, "adapter", "mst_rd_outstanding", "15"),
                              &sw, &err),
                   CS_OK);
  ck_assert_int_eq(sw.jobs[0].load_code, CS_OK);
  ck_assert_int_eq(sw.jobs[1].load_code, CS_OK);
  cs_sweep_free(&sw);
  ck_assert_int_eq(parse_matrix("[{\"field\":\"adapter.mst_rd_outstanding\",\"values\":[15,17]}]",
                                &sw, &err),
                   CS_OK);
  ck_assert_int_eq(sw.jobs[0].load_code, CS_ECONSTRAINT);
  ck_assert_int_eq(sw.jobs[1].load_code, CS_ECONSTRAINT);
  cs_sweep_free(&sw);
}
END_TEST

START_TEST(invalid_combination_is_a_failed_job_not_a_failed_sweep) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"adapter.mst_rd_outstanding\",\"values\":[16,15]},"
                                "{\"field\":\"spec.dtype\",\"values\":[\"bf16\",\"fp32\"]}]",
                                &sw, &err),
                   0);
  ck_assert_uint_eq(sw.num_jobs, 4);
  ck_assert_int_eq(sw.jobs[0].load_code, 0);
  ck_assert_int_eq(sw.jobs[1].load_code, 0);
  ck_assert_int_ne(sw.jobs[2].load_code, 0);
  ck_assert_ptr_nonnull(strstr(sw.jobs[2].error, "C4"));
  ck_assert_ptr_nonnull(strstr(sw.jobs[2].error, "adapter.mst_rd_outstanding=15"));
  ck_assert_str_ne(sw.jobs[2].key, sw.jobs[3].key); /* raw inputs differ: distinct rows */
  /* a wrongly typed value is a job error too */
  cs_sweep sw2;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[64,\"big\"]}]",
                                &sw2, &err),
                   0);
  ck_assert_int_eq(sw2.jobs[0].load_code, 0);
  ck_assert_int_ne(sw2.jobs[1].load_code, 0);
  ck_assert_ptr_nonnull(strstr(sw2.jobs[1].error, "msg_size_bytes"));
  cs_sweep_free(&sw);
  cs_sweep_free(&sw2);
}
END_TEST

START_TEST(plan_on_empty_file_dedups_equal_jobs) {
  cs_sweep sw;
  cs_err err;
  /* participant order does not change a ring allreduce: same key, one row */
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.participants\",\"values\":[[0,1,2,3],"
                                "[3,2,1,0],[0,1]]}]",
                                &sw, &err),
                   0);
  cs_sweep_plan plan;
  ck_assert_int_eq(cs_sweep_plan_make(&sw, NULL, &(cs_sweep_plan_options){0}, &plan, &err), 0);
  ck_assert_uint_eq(plan.jobs, 3);
  ck_assert_uint_eq(plan.duplicates, 1);
  ck_assert_uint_eq(plan.new_rows, 2);
  ck_assert_uint_eq(plan.num_items, 2);
  ck_assert_uint_eq(plan.job_rows[0], plan.job_rows[1]);
  ck_assert_uint_eq(plan.txlog_after, sw.jobs[0].num_txns + sw.jobs[2].num_txns);
  ck_assert(plan.items[0].cost >= plan.items[1].cost);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

/* Jobs that share work stay together, costliest group first: a dcin AllGather and all-to-all of
 * one size and participant set share their first step (one share group per size); the math
 * engine shares nothing (group 0: each job on its own). */
START_TEST(plan_keeps_share_groups_together) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(
      parse_matrix("[{\"field\":\"engine.name\",\"values\":[\"dcin\",\"math\"]},"
                   "{\"fields\":[\"spec.primitive\",\"spec.algorithm\"],"
                   "\"values\":[[\"allgather\",\"ring\"],[\"alltoall\",\"pairwise\"]]},"
                   "{\"field\":\"spec.msg_size_bytes\",\"values\":[1048576,2097152]},"
                   "{\"field\":\"spec.participants\",\"values\":[[0,5,10,15,20,25,30,35]]}]",
                   &sw, &err),
      0);
  /* matrix order: dcin AllGather 1 and 2 MiB (jobs 0, 1), all-to-all 1 and 2 MiB (2, 3), then
   * the same on math (4..7).  By cost alone the sizes would interleave: the 1 MiB all-to-all
   * simulates all its 7 steps, the 2 MiB AllGather 2 of its 7. */
  ck_assert(sw.jobs[2].cost > sw.jobs[1].cost);
  cs_sweep_plan plan;
  ck_assert_int_eq(cs_sweep_plan_make(&sw, NULL, &(cs_sweep_plan_options){0}, &plan, &err), 0);
  ck_assert_uint_eq(plan.num_items, 8);
  const cs_sweep_item *it = plan.items;
  size_t at = 0;
  while (it[at].job >= 4) at++; /* the math jobs that cost more than the dcin groups */
  ck_assert_uint_eq(it[at].job, 3);
  ck_assert_uint_eq(it[at + 1].job, 1);
  ck_assert_uint_eq(it[at + 2].job, 2);
  ck_assert_uint_eq(it[at + 3].job, 0);
  ck_assert_uint_ne(it[at].group, 0);
  ck_assert_uint_eq(it[at + 1].group, it[at].group);
  ck_assert_uint_eq(it[at + 3].group, it[at + 2].group);
  ck_assert_uint_ne(it[at + 2].group, it[at].group);
  ck_assert_double_eq(it[at].group_cost, sw.jobs[3].cost + sw.jobs[1].cost);
  ck_assert_double_eq(it[at + 2].group_cost, sw.jobs[2].cost + sw.jobs[0].cost);
  for (size_t i = 0; i < plan.num_items; i++) {
    if (it[i].job >= 4) {
      ck_assert_uint_eq(it[i].group, 0);
      ck_assert_double_eq(it[i].group_cost, it[i].cost);
    }
    if (i) ck_assert(it[i - 1].group_cost >= it[i].group_cost);
  }
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

/* A grant takes items while their cost fits the target (at least min_k), then the rest of the
 * last one's share group, never more than CS_SWEEP_MAX_GRANT. */
START_TEST(grant_never_ends_inside_a_share_group) {
  enum { N = CS_SWEEP_MAX_GRANT + 100 };
  static cs_sweep_item items[N];
  const double costs[] = {5, 4, 3, 2, 1, 1, 1};
  const uint64_t groups[] = {7, 7, 7, 0, 9, 9, 0};
  for (size_t i = 0; i < 7; i++) items[i] = (cs_sweep_item){.cost = costs[i], .group = groups[i]};
  double cost = 0;
  ck_assert_uint_eq(cs_sweep_grant_len(items, 7, 5, 1, &cost), 3); /* 5, then its group */
  ck_assert_double_eq(cost, 12);
  ck_assert_uint_eq(cs_sweep_grant_len(items + 3, 4, 2, 1, &cost), 1); /* no group */
  ck_assert_double_eq(cost, 2);
  ck_assert_uint_eq(cs_sweep_grant_len(items + 3, 4, 3, 1, &cost), 3); /* 2 + 1, then 1 */
  ck_assert_double_eq(cost, 4);
  ck_assert_uint_eq(cs_sweep_grant_len(items + 5, 2, 0.5, 1, &cost), 1); /* group's last */
  ck_assert_uint_eq(cs_sweep_grant_len(items + 3, 4, 0, 2, &cost), 3); /* min_k, its group */
  ck_assert_uint_eq(cs_sweep_grant_len(items, 0, 100, 1, &cost), 0);
  for (size_t i = 0; i < N; i++) items[i] = (cs_sweep_item){.cost = 1, .group = 3};
  ck_assert_uint_eq(cs_sweep_grant_len(items, N, 1, 1, &cost), CS_SWEEP_MAX_GRANT);
}
END_TEST

START_TEST(rerun_reuses_rows_and_new_values_append) {
  cs_sweep sw;
  cs_err err;
  const char *m1 = "[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192]},"
                   "{\"field\":\"adapter.mst_rd_outstanding\",\"values\":[16,15]}]";
  ck_assert_int_eq(parse_matrix(m1, &sw, &err), 0);
  cs_sweep_plan plan;
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.new_rows, 4);
  ck_assert_uint_eq(plan.load_failed, 2);
  ck_assert_uint_eq(plan.num_items, 2);
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.cached_done, 2);
  ck_assert_uint_eq(plan.cached_failed, 2);
  ck_assert_uint_eq(plan.num_items, 0);
  ck_assert_uint_eq(plan.new_rows, 0);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
  /* one more matrix value: only its jobs are new */
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192,"
                                "16384]},{\"field\":\"adapter.mst_rd_outstanding\","
                                "\"values\":[16,15]}]",
                                &sw, &err),
                   0);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.cached_done + plan.cached_failed, 4);
  ck_assert_uint_eq(plan.new_rows, 2);
  ck_assert_uint_eq(plan.num_items, 1);
  ck_assert_uint_eq(plan.items[0].row, 4);
  ck_assert_uint_eq(plan.items[0].txlog_offset, plan.txlog_before);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

/* Overwrites one byte of a dataset's raw data through HDF5 (as a disk fault would). */
static void flip(const char *dset, uint64_t index, size_t byte) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  size_t size = H5Tget_size(t);
  unsigned char *buf = calloc(1, size);
  hsize_t start = index, count = 1;
  hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
  ck_assert_int_ge(H5Dread(d, t, ms, fs, H5P_DEFAULT, buf), 0);
  buf[byte] ^= 0x5a;
  ck_assert_int_ge(H5Dwrite(d, t, ms, fs, H5P_DEFAULT, buf), 0);
  free(buf);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(f);
}

START_TEST(corrupt_rows_and_logs_are_rerun) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192,"
                                "16384]}]",
                                &sw, &err),
                   0);
  cs_sweep_plan plan;
  plan_file(&sw, false, &plan);
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  flip("results", 1, offsetof(cs_store_result_row, result.total_time_us) + 3);
  flip("txlog", sw.jobs[0].num_txns + sw.jobs[1].num_txns + 2, 20); /* inside row 2's slice */
  cs_store *st = NULL;
  /* without the log check only the row flip is seen */
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  ck_assert_int_eq(cs_sweep_plan_make(&sw, st, &(cs_sweep_plan_options){0}, &plan, &err), 0);
  ck_assert_uint_eq(plan.corrupt, 1);
  cs_sweep_plan_free(&plan);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.corrupt, 2);
  ck_assert_uint_eq(plan.cached_done, 1);
  ck_assert_uint_eq(plan.num_items, 2);
  ck_assert_uint_eq(plan.new_rows, 0);
  ck_assert_uint_eq(plan.txlog_after, plan.txlog_before); /* same slices reused */
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.cached_done, 3);
  ck_assert_uint_eq(plan.num_items, 0);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

START_TEST(results_only_rows_are_relogged_by_a_full_run) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192]}]",
                                &sw, &err),
                   0);
  cs_sweep_plan plan;
  plan_file(&sw, true, &plan);
  ck_assert_uint_eq(plan.txlog_after, 0);
  run_plan(&sw, &plan, true);
  cs_sweep_plan_free(&plan);
  plan_file(&sw, true, &plan);
  ck_assert_uint_eq(plan.cached_done, 2);
  cs_sweep_plan_free(&plan);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.relog, 2);
  ck_assert_uint_eq(plan.num_items, 2);
  ck_assert_uint_eq(plan.txlog_after, sw.jobs[0].num_txns + sw.jobs[1].num_txns);
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  plan_file(&sw, false, &plan);
  ck_assert_uint_eq(plan.cached_done, 2);
  ck_assert_uint_eq(plan.num_items, 0);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

/* Plans a file with the given detail options (results_only, steps_only). */
static void plan_detail(cs_sweep *sw, bool results_only, bool steps_only, cs_sweep_plan *plan) {
  cs_err err;
  cs_store *st = NULL;
  ck_assert_int_eq(cs_store_open(path, CS_STORE_WRITE, &st, &err), 0);
  cs_sweep_plan_options o = {results_only, true, false, steps_only, NULL, 0};
  ck_assert_int_eq(cs_sweep_plan_make(sw, st, &o, plan, &err), 0);
  ck_assert_int_eq(cs_store_close(st, &err), 0);
}

/* The three details in order none < steps < full: a row holding less than asked is rerun, one
 * holding more is reused; steps reserves num_steps summaries and no records. */
START_TEST(detail_levels_rerun_less_and_reuse_more) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[4096,8192]}]",
                                &sw, &err),
                   0);
  uint64_t steps = sw.jobs[0].num_steps + sw.jobs[1].num_steps;
  uint64_t txns = sw.jobs[0].num_txns + sw.jobs[1].num_txns;
  ck_assert_uint_eq(sw.jobs[0].num_steps, 6); /* ring allreduce on 4: 2 (N - 1) */
  cs_sweep_plan plan;
  plan_detail(&sw, true, false, &plan); /* none */
  ck_assert_uint_eq(plan.steplog_after, 0);
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  plan_detail(&sw, false, true, &plan); /* steps: none is less */
  ck_assert_uint_eq(plan.relog, 2);
  ck_assert_uint_eq(plan.steplog_to_write, steps);
  ck_assert_uint_eq(plan.txlog_to_write, 0);
  ck_assert_uint_eq(plan.items[0].detail, CS_STORE_LOG_STEPS);
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  cs_store *st = NULL;
  cs_store_result_row res[2];
  ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
  ck_assert_int_eq(cs_store_read_results(st, 0, 2, res, &err), 0);
  ck_assert_uint_eq(res[0].txlog_detail, CS_STORE_LOG_STEPS);
  ck_assert_uint_eq(res[0].steplog_count + res[1].steplog_count, steps);
  ck_assert_uint_eq(res[0].txlog_count + res[1].txlog_count, 0);
  cs_store_close(st, NULL);
  plan_detail(&sw, false, true, &plan); /* steps again: reused */
  ck_assert_uint_eq(plan.cached_done, 2);
  cs_sweep_plan_free(&plan);
  plan_detail(&sw, false, false, &plan); /* full: steps is less */
  ck_assert_uint_eq(plan.relog, 2);
  ck_assert_uint_eq(plan.txlog_to_write, txns);
  ck_assert_uint_eq(plan.steplog_after, steps); /* the summary slices are kept */
  run_plan(&sw, &plan, false);
  cs_sweep_plan_free(&plan);
  plan_detail(&sw, false, true, &plan); /* steps after full: reused */
  ck_assert_uint_eq(plan.cached_done, 2);
  ck_assert_uint_eq(plan.num_items, 0);
  cs_sweep_plan_free(&plan);
  plan_detail(&sw, true, false, &plan); /* none after full: reused */
  ck_assert_uint_eq(plan.cached_done, 2);
  cs_sweep_plan_free(&plan);
  cs_sweep_free(&sw);
}
END_TEST

/* Summary rows kept from job to job (a rank's cs_sweep_logbuf, here refilled by jobs of three
 * sizes, the largest first; the records stream into each row's log) store what fresh rows
 * store: every result row, record and summary the same bytes. */
START_TEST(kept_log_rows_store_what_fresh_ones_store) {
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(
      parse_matrix("[{\"field\":\"spec.msg_size_bytes\",\"values\":[16384,4096,8192]}]", &sw,
                   &err),
      0);
  uint64_t rows = 3, txns = 0, steps = 0;
  for (size_t i = 0; i < rows; i++) {
    txns += sw.jobs[i].num_txns;
    steps += sw.jobs[i].num_steps;
  }
  cs_store_result_row res[2][3];
  cs_store_txn_row *rec[2] = {calloc(txns, sizeof **rec), calloc(txns, sizeof **rec)};
  cs_store_step_row *sum[2] = {calloc(steps, sizeof **sum), calloc(steps, sizeof **sum)};
  cs_sweep_logbuf kept = {0};
  for (int pass = 0; pass < 2; pass++) {
    unlink(path);
    cs_sweep_plan plan;
    plan_file(&sw, false, &plan);
    ck_assert_uint_eq(plan.num_items, rows);
    run_plan_with(&sw, &plan, false, pass ? &kept : NULL);
    cs_sweep_plan_free(&plan);
    cs_store *st = NULL;
    ck_assert_int_eq(cs_store_open(path, CS_STORE_READ, &st, &err), 0);
    ck_assert_uint_eq(cs_store_txlog_len(st), txns);
    ck_assert_uint_eq(cs_store_steplog_len(st), steps);
    ck_assert_int_eq(cs_store_read_results(st, 0, rows, res[pass], &err), 0);
    ck_assert_int_eq(cs_store_read_txlog(st, 0, txns, rec[pass], &err), 0);
    ck_assert_int_eq(cs_store_read_steplog(st, 0, steps, sum[pass], &err), 0);
    cs_store_close(st, NULL);
  }
  ck_assert_uint_eq(kept.steps_cap, sw.jobs[0].num_steps); /* it holds the largest job's */
  for (size_t i = 0; i < rows; i++) {
    ck_assert_int_eq(res[1][i].status, CS_STORE_DONE);
    ck_assert_uint_eq(res[1][i].txlog_count, sw.jobs[i].num_txns);
    res[0][i].result.wall_time_s = res[1][i].result.wall_time_s = 0;
  }
  ck_assert_mem_eq(res[0], res[1], sizeof res[0]);
  ck_assert_mem_eq(rec[0], rec[1], txns * sizeof **rec);
  ck_assert_mem_eq(sum[0], sum[1], steps * sizeof **sum);
  cs_sweep_logbuf_free(&kept);
  for (int pass = 0; pass < 2; pass++) {
    free(rec[pass]);
    free(sum[pass]);
  }
  cs_sweep_free(&sw);
}
END_TEST

static Suite *sweep_suite(void) {
  Suite *s = suite_create("sweep");
  TCase *files = tcase_create("files");
  tcase_add_test(files, demo_expands_to_the_cartesian_product);
  tcase_add_test(files, empty_matrix_is_one_job);
  tcase_add_test(files, packed_jobs_unpack_byte_for_byte);
  tcase_add_test(files, expansion_in_blocks_equals_the_whole);
  tcase_add_test(files, sweep_file_errors_name_the_fault);
  tcase_add_test(files, sweep_file_errors_name_repeated_fields);
  tcase_add_test(files, base_error_is_an_error_of_the_file);
  tcase_add_test(files, axis_values_failing_stay_failed_rows);
  tcase_add_test(files, invalid_combination_is_a_failed_job_not_a_failed_sweep);
  suite_add_tcase(s, files);
  TCase *plan = tcase_create("plan");
  tcase_add_checked_fixture(plan, setup, teardown);
  tcase_set_timeout(plan, 60);
  tcase_add_test(plan, plan_on_empty_file_dedups_equal_jobs);
  tcase_add_test(plan, plan_keeps_share_groups_together);
  tcase_add_test(plan, grant_never_ends_inside_a_share_group);
  tcase_add_test(plan, rerun_reuses_rows_and_new_values_append);
  tcase_add_test(plan, corrupt_rows_and_logs_are_rerun);
  tcase_add_test(plan, results_only_rows_are_relogged_by_a_full_run);
  tcase_add_test(plan, detail_levels_rerun_less_and_reuse_more);
  tcase_add_test(plan, kept_log_rows_store_what_fresh_ones_store);
  suite_add_tcase(s, plan);
  return s;
}

int main(void) { return cs_test_run(sweep_suite()); }
