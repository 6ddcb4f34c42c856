/* Golden results: a few jobs per engine (tests/golden/NAME.json, each with its origin) whose
 * results must not change while the engine's model_version stays the same.  A change of
 * results is either a bug or a model change; a model change bumps model_version (so every
 * cached row of the engine reruns) and regenerates the files with scripts/golden-update. */
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/backfill.h"
#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "commsweep/job.h"
#include "test_support.h"

#define GOLDEN_DIR CS_SOURCE_DIR "/tests/golden"

/* SHA-256 over the records, one canonical JSON object (sorted keys) per line: the definition
 * scripts/golden-update uses, independent of the order of fields in the JSON-lines log. */
static void records_sha256(const cs_engine_ops *ops, const cs_txn_record *recs, uint64_t n,
                           char out[CS_KEY_HEX]) {
  cs_sha256 h;
  cs_sha256_init(&h);
  char line[4096], canon[4096];
  for (uint64_t i = 0; i < n; i++) {
    cs_backfill_record_json(ops, &recs[i], line, sizeof line);
    cJSON *o = cJSON_Parse(line);
    ck_assert_ptr_nonnull(o);
    size_t len = cs_json_canonical(o, canon, sizeof canon - 1);
    ck_assert_uint_lt(len, sizeof canon - 1);
    cJSON_Delete(o);
    canon[len++] = '\n';
    cs_sha256_update(&h, canon, len);
  }
  uint8_t d[32];
  cs_sha256_final(&h, d);
  for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static uint64_t expect_u64(const cJSON *expect, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(expect, key);
  ck_assert_msg(cJSON_IsNumber(v), "golden: expect.%s missing", key);
  return (uint64_t)v->valuedouble;
}

static void check_file(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, name);
  cJSON *g = NULL;
  cs_err err;
  ck_assert_msg(cs_config_parse_file(path, &g, &err) == CS_OK, "%s", err.msg);
  const cJSON *job_json = cJSON_GetObjectItemCaseSensitive(g, "job");
  cs_job job;
  memset(&job, 0, sizeof job);
  ck_assert_msg(cs_config_spec_from_json(cJSON_GetObjectItemCaseSensitive(job_json, "spec"), name,
                                         &job.spec, &err) == CS_OK &&
                    cs_config_adapter_from_json(cJSON_GetObjectItemCaseSensitive(job_json, "adapter"),
                                                name, &job.adapter, &err) == CS_OK &&
                    cs_engine_options_from_json(cJSON_GetObjectItemCaseSensitive(job_json, "engine"),
                                                name, &job.engine, &err) == CS_OK,
                "%s", err.msg);
  const cs_engine_ops *ops = cs_engine_find(job.engine.name);
  ck_assert_ptr_nonnull(ops);
  const char *version = cJSON_GetObjectItemCaseSensitive(g, "model_version")->valuestring;
  cs_job_output out;
  ck_assert_msg(cs_job_run(&job, true, &out, &err) == CS_OK, "%s: %s", name, err.msg);
  char sha[CS_KEY_HEX];
  records_sha256(ops, out.records, out.num_records, sha);
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(g, "expect");
  const char *want_sha = cJSON_GetObjectItemCaseSensitive(expect, "records_sha256")->valuestring;
  bool same = out.result.total_ticks == expect_u64(expect, "total_ticks") &&
              out.result.sim_cycles == expect_u64(expect, "sim_cycles") &&
              out.result.flit_hops == expect_u64(expect, "flit_hops") &&
              out.num_records == expect_u64(expect, "num_transactions") && !strcmp(sha, want_sha);
  ck_assert_msg(strcmp(version, ops->model_version) == 0,
                "%s was made at %s model version %s, the engine is at %s: regenerate the golden "
                "files (scripts/golden-update)", name, ops->name, version, ops->model_version);
  ck_assert_msg(same,
                "%s: the results of engine %s changed (total_ticks %llu, sim_cycles %llu, "
                "flit_hops %llu, records %s) but its model_version is still \"%s\": bump it in "
                "src/engine/%s/ so cached rows rerun, then run scripts/golden-update",
                name, ops->name, (unsigned long long)out.result.total_ticks,
                (unsigned long long)out.result.sim_cycles, (unsigned long long)out.result.flit_hops,
                sha, version, ops->name);
  cs_job_output_free(&out);
  cJSON_Delete(g);
}

START_TEST(golden_results_should_hold_at_the_same_model_version) {
  DIR *d = opendir(GOLDEN_DIR);
  ck_assert_ptr_nonnull(d);
  int checked = 0, per_engine[8] = {0};
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    check_file(e->d_name);
    for (int i = 0; cs_engine_list()[i]; i++)
      per_engine[i] += !strncmp(e->d_name, cs_engine_list()[i]->name, strlen(cs_engine_list()[i]->name));
    checked++;
  }
  closedir(d);
  ck_assert_int_ge(checked, 4);
  for (int i = 0; cs_engine_list()[i]; i++)
    ck_assert_msg(per_engine[i] >= 2, "engine %s has %d golden jobs, expected at least 2",
                  cs_engine_list()[i]->name, per_engine[i]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("golden");
  TCase *tc = tcase_create("golden");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, golden_results_should_hold_at_the_same_model_version);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
