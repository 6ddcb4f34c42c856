/* The study sections of a sweep file: a bad "pareto" or "refine" section is an error of the
 * whole file naming the field, the value and the rule (as `commsweep sweep` reports it); the
 * calibration file, relative to the sweep file or given on the command line; the cheap rung's
 * document (engine replaced, other engines' options kept, axes that would undo it refused). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsweep/config.h"
#include "commsweep/sweep.h"
#include "sweep/sweep_int.h"
#include "test_support.h"

#define DEMO CS_SOURCE_DIR "/sweeps/demo.json"

static char dir[256], sweep_path[512], calib_path[512];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cs_check_study_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(sweep_path, sizeof sweep_path, "%s/s.json", dir);
  snprintf(calib_path, sizeof calib_path, "%s/calib.json", dir);
}

static void teardown(void) {
  unlink(sweep_path);
  unlink(calib_path);
  rmdir(dir);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* The demo sweep with extra top-level keys (a JSON object's members) and, when given, its matrix
 * replaced, written to sweep_path. */
static void write_sweep(const char *extra, const char *matrix) {
  cJSON *doc = NULL;
  cs_err err;
  ck_assert_int_eq(cs_config_parse_file(DEMO, &doc, &err), 0);
  cJSON *more = cJSON_Parse(extra);
  ck_assert_ptr_nonnull(more);
  for (cJSON *it = more->child; it; it = it->next)
    cJSON_AddItemToObject(doc, it->string, cJSON_Duplicate(it, true));
  cJSON_Delete(more);
  if (matrix) cJSON_ReplaceItemInObjectCaseSensitive(doc, "matrix", cJSON_Parse(matrix));
  char *text = cJSON_PrintUnformatted(doc);
  write_file(sweep_path, text);
  free(text);
  cJSON_Delete(doc);
}

/* The sweep file fails to load, as `commsweep sweep` would load it, with this message part. */
static void expect_file_error(const char *extra, const char *needle) {
  write_sweep(extra, NULL);
  cs_sweep sw;
  cs_err err;
  cs_err_clear(&err);
  ck_assert_int_eq(cs_sweep_load(sweep_path, &sw, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, needle), "%s: got '%s', want '%s'", extra, err.msg, needle);
  ck_assert_msg(strstr(err.msg, "sweep file '"), "the file is not named: %s", err.msg);
}

#define PARETO_OK "\"pareto\": {\"minimize\": [\"total_time_us\", \"outstanding_sum\"]}"

START_TEST(bad_pareto_section_is_an_error_of_the_file) {
  expect_file_error("{\"pareto\": {\"minimize\": [\"total_time\"]}}",
                    "pareto.minimize[0]: unknown column 'total_time'");
  expect_file_error("{\"pareto\": {\"minimize\": [\"topology\"]}}",
                    "pareto.minimize[0]: column 'topology' is text, not numeric");
  expect_file_error("{\"pareto\": {\"maximize\": []}}", "pareto.maximize: empty list");
  expect_file_error("{\"pareto\": {\"minimize\": [\"num_dies\", \"num_dies\"]}}",
                    "pareto.minimize[1]: column 'num_dies' is named twice");
  expect_file_error("{\"pareto\": 3}", "pareto: expected an object");
  /* a good one loads, and the sweep runs as before */
  write_sweep("{" PARETO_OK "}", NULL);
  cs_sweep sw;
  cs_err err;
  ck_assert_int_eq(cs_sweep_load(sweep_path, &sw, &err), 0);
  ck_assert_int_eq(sw.num_jobs, 144);
  cs_sweep_free(&sw);
}
END_TEST

START_TEST(bad_refine_section_is_an_error_of_the_file) {
  expect_file_error("{" PARETO_OK ", \"refine\": {\"calibration\": \"c.json\", \"band\": 0.1}}",
                    "refine: give either 'calibration' (a file) or 'engine' and 'band', not both");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}}}",
                    "refine: give 'calibration' (a file) or both 'engine' and 'band'");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"maths\"}, \"band\": 0.1}}",
                    "refine.engine");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}, "
                    "\"band\": {\"allreduse\": 0.1}}}",
                    "refine.band: unknown primitive 'allreduse'");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}, \"band\": -0.1}}",
                    "refine.band: expected a relative error from 0 to 10");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}, \"band\": 0.1, "
                    "\"max_jobs\": 0}}", "refine.max_jobs: expected an integer from 1");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}, \"band\": 0.1, "
                    "\"max_rounds\": 2.5}}", "refine.max_rounds: expected an integer");
  expect_file_error("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"math\"}, \"band\": 0.1, "
                    "\"rounds\": 2}}", "refine: unknown key 'rounds'");
  expect_file_error("{\"refine\": {\"engine\": {\"name\": \"math\"}, \"band\": 0.1}}",
                    "refine: a refinement needs a 'pareto' section");
}
END_TEST

START_TEST(calibration_file_relative_to_the_sweep_file) {
  write_file(calib_path, "{\"engine\": {\"name\": \"math\"}, \"band\": {\"allreduce\": 0.04, "
                         "\"alltoall\": 0.06}, \"fit\": {\"rows\": 12}}");
  write_sweep("{" PARETO_OK ", \"refine\": {\"calibration\": \"calib.json\", \"max_jobs\": 7}}",
              NULL);
  cs_sweep_study st;
  cs_err err;
  char *cwd = getcwd(NULL, 0);
  ck_assert_int_eq(chdir("/"), 0); /* relative to the sweep file, not to the working directory */
  ck_assert_msg(cs_sweep_study_load(sweep_path, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(chdir(cwd), 0);
  free(cwd);
  ck_assert(st.has_pareto && st.has_refine);
  ck_assert_int_eq(st.refine.max_jobs, 7);
  ck_assert_int_eq(st.refine.max_rounds, CS_SWEEP_REFINE_ROUNDS);
  ck_assert(st.refine.widen_band);
  ck_assert(st.refine.band[CS_PRIM_ALLREDUCE] == 0.04 && st.refine.band[CS_PRIM_ALLTOALL] == 0.06);
  ck_assert(st.refine.band[CS_PRIM_P2P] < 0); /* not given */
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(st.refine.engine, "name")->valuestring, "math");
  cs_sweep_study_free(&st);
  /* the command line's calibration replaces the section's engine and band, keeps its limits */
  write_file(calib_path, "{\"engine\": {\"name\": \"math\"}, \"band\": 0.5}");
  write_sweep("{" PARETO_OK ", \"refine\": {\"engine\": {\"name\": \"dcin\"}, \"band\": 0.01, "
              "\"max_rounds\": 3}}", NULL);
  ck_assert_int_eq(cs_sweep_study_load(sweep_path, calib_path, &st, &err), 0);
  ck_assert(st.refine.band[CS_PRIM_P2P] == 0.5 && st.refine.max_rounds == 3);
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(st.refine.engine, "name")->valuestring, "math");
  cs_sweep_study_free(&st);
  /* faults of the calibration file name it */
  const char *bad[][2] = {
      {"{\"engine\": {\"name\": \"math\"}}", "missing 'band'"},
      {"{\"engine\": {\"name\": \"math\"}, \"band\": 0.1, \"bands\": 1}", "unknown key 'bands'"},
      {"{\"engine\": {\"name\": \"nope\"}, \"band\": 0.1}", "engine"},
      {"{\"engine\": {\"name\": \"math\"}, \"band\": \"5%\"}", "band: expected a number or an object"}};
  for (int i = 0; i < 4; i++) {
    write_file(calib_path, bad[i][0]);
    cs_err_clear(&err);
    ck_assert_int_eq(cs_sweep_study_load(sweep_path, calib_path, &st, &err), CS_EINVAL);
    ck_assert_msg(strstr(err.msg, "calibration '") && strstr(err.msg, bad[i][1]), "%s", err.msg);
  }
}
END_TEST

START_TEST(cheap_rung_replaces_the_engine_only) {
  /* the demo's base engine is math with its options object; make it dcin, with a vcnet object */
  write_sweep("{" PARETO_OK "}", "[{\"field\": \"spec.msg_size_bytes\", \"values\": [4096, 8192]},"
              "{\"field\": \"engine.vcnet.num_vcs\", \"values\": [2, 4]}]");
  cJSON *doc = NULL, *engine = cJSON_Parse("{\"name\": \"math\", \"deadlock_guard_ticks\": 99}");
  cs_err err;
  char *text = NULL;
  {
    cJSON *d = NULL;
    ck_assert_int_eq(cs_config_parse_file(sweep_path, &d, &err), 0);
    cJSON *base_engine = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "base"),
                                                          "engine");
    cJSON_ReplaceItemInObjectCaseSensitive(base_engine, "name", cJSON_CreateString("dcin"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(base_engine, "vcnet"));
    text = cJSON_PrintUnformatted(d);
    write_file(sweep_path, text);
    free(text);
    cJSON_Delete(d);
  }
  ck_assert_msg(cs_sweep_cheap_doc(sweep_path, engine, &doc, &err) == 0, "%s", err.msg);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "base"),
                                                    "engine");
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, "math");
  ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(e, "deadlock_guard_ticks")->valueint, 99);
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(e, "vcnet")); /* the axis still applies */
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(e, "math")); /* the base's math options are
                                                                     * not the calibration's */
  ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(doc, "pareto"));
  cs_sweep cheap;
  ck_assert_msg(cs_sweep_load_doc(doc, "cheap", &cheap, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(cheap.num_jobs, 4);
  cs_job job;
  ck_assert_int_eq(cs_sweep_job_get(&cheap.jobs[3], &job, &err), 0);
  ck_assert_str_eq(job.engine.name, "math");
  ck_assert(!job.engine.has_options);
  ck_assert_int_eq(job.spec.msg_size_bytes, 8192); /* same matrix order as the sweep's */
  cs_sweep_free(&cheap);
  /* axes that would undo the replacement */
  write_sweep("{" PARETO_OK "}", "[{\"field\": \"engine.name\", \"values\": [\"math\", \"dcin\"]}]");
  ck_assert_int_eq(cs_sweep_cheap_doc(sweep_path, engine, &doc, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "matrix[0]: a refinement runs the matrix on two engines"), "%s", err.msg);
  write_sweep("{" PARETO_OK "}", "[{\"fields\": [\"spec.msg_size_bytes\", \"engine.math.dbid_cycles\"],"
              " \"values\": [[4096, 1.5]]}]");
  ck_assert_int_eq(cs_sweep_cheap_doc(sweep_path, engine, &doc, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "'engine.math.dbid_cycles' sets an option of the cheap engine"),
                "%s", err.msg);
  cJSON_Delete(engine);
}
END_TEST

/* The shipped study: at least 2,000 points on dcin, every one loads, in workloads of at least 48
 * designs each, with its pareto and refine sections. */
START_TEST(shipped_study_has_its_size) {
  const char *path = CS_SOURCE_DIR "/sweeps/pareto-study.json";
  cs_sweep sw;
  cs_sweep_study st;
  cs_err err;
  ck_assert_msg(cs_sweep_load(path, &sw, &err) == 0, "%s", err.msg);
  ck_assert_msg(cs_sweep_study_load(path, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert(st.has_pareto && st.has_refine);
  ck_assert_int_ge(sw.num_jobs, 2000);
  char (*names)[512] = calloc(sw.num_jobs, sizeof *names);
  size_t *count = calloc(sw.num_jobs, sizeof *count), workloads = 0;
  cs_store_job_row *row = malloc(sizeof *row);
  for (size_t i = 0; i < sw.num_jobs; i++) {
    cs_job job;
    ck_assert_msg(sw.jobs[i].load_code == 0, "job %zu: %s", i, sw.jobs[i].error);
    ck_assert_int_eq(cs_sweep_job_get(&sw.jobs[i], &job, &err), 0);
    ck_assert_str_eq(job.engine.name, "dcin");
    memset(row, 0, sizeof *row);
    cs_store_job_from(&job, row);
    cs_pareto_row r = {row, NULL, &job};
    char w[512];
    cs_pareto_workload_text(&st.pareto, &r, '\0', w, sizeof w);
    size_t k = 0;
    while (k < workloads && strcmp(names[k], w)) k++;
    if (k == workloads) snprintf(names[workloads++], sizeof names[0], "%s", w);
    count[k]++;
  }
  for (size_t k = 0; k < workloads; k++) ck_assert_msg(count[k] >= 48, "%s: %zu", names[k], count[k]);
  ck_assert_int_ge(workloads, 2);
  free(names);
  free(count);
  free(row);
  cs_sweep_study_free(&st);
  cs_sweep_free(&sw);
}
END_TEST

static Suite *study_suite(void) {
  Suite *s = suite_create("sweep_study");
  TCase *t = tcase_create("sections");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, bad_pareto_section_is_an_error_of_the_file);
  tcase_add_test(t, bad_refine_section_is_an_error_of_the_file);
  tcase_add_test(t, calibration_file_relative_to_the_sweep_file);
  tcase_add_test(t, cheap_rung_replaces_the_engine_only);
  tcase_add_test(t, shipped_study_has_its_size);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return cs_test_run(study_suite()); }
