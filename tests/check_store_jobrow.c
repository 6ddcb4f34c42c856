/* The /jobs row of a job: the adapter fields that are /jobs columns (model.h's adapter table)
 * arrive in them with the values the adapter file gave, and no other adapter field is one.
 * Expected values come from the JSON text below, read back by name, never from the store. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"
#include "commsweep/store.h"
#include "test_support.h"

/* Every value told apart from every other, so a field copied into another's column shows. */
static const char adapter_text[] =
    "{\"mode\": \"dcin\", \"topology\": \"topo_a\", \"num_dies\": 3, \"dcin_layout\": \"lay_b\","
    " \"endpoint_id_scheme\": \"mvp\", \"num_initiators\": 60, \"num_targets\": 61,"
    " \"driver_cycle_frequency_ghz\": 1.25, \"ip_frequency_ghz\": 1.5, \"noc_frequency_ghz\": 2.75,"
    " \"mst_rd_outstanding\": 10, \"mst_wr_outstanding\": 12, \"slv_rd_outstanding\": 14,"
    " \"slv_wr_outstanding\": 16, \"burst_length\": 5, \"bw_bytes\": 96,"
    " \"enable_transaction_log\": true, \"transaction_log_path\": \"t.jsonl\"}";

/* The adapter fields among the /jobs columns of schema version 6 (docs/hdf5-schema.md). */
static const char *const mirrored[] = {
    "driver_cycle_frequency_ghz", "ip_frequency_ghz", "noc_frequency_ghz", "num_dies",
    "mst_rd_outstanding", "mst_wr_outstanding", "slv_rd_outstanding", "slv_wr_outstanding",
    "burst_length", "bw_bytes", "topology", "dcin_layout", NULL};

static bool is_mirrored(const char *key) {
  for (const char *const *m = mirrored; *m; m++)
    if (!strcmp(*m, key)) return true;
  return false;
}

START_TEST(adapter_columns_should_hold_the_adapter_values) {
  cJSON *json = cJSON_Parse(adapter_text);
  ck_assert_ptr_nonnull(json);
  cs_job job;
  memset(&job, 0, sizeof job);
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(json, "test", &job.adapter, &err), CS_OK);
  snprintf(job.engine.name, sizeof job.engine.name, "dcin");
  cs_store_job_row *row = calloc(1, sizeof *row);
  ck_assert_ptr_nonnull(row);
  cs_store_job_from(&job, row);
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);

  int seen = 0;
  for (const cJSON *v = json->child; v; v = v->next) {
    const cs_col *c = cs_cols_find(cols, v->string);
    ck_assert_msg((c != NULL) == is_mirrored(v->string), "%s: a /jobs column: %d", v->string,
                  c != NULL);
    if (!c) continue;
    seen++;
    if (cJSON_IsString(v)) {
      char text[64];
      cs_col_format(c, row, text, sizeof text);
      ck_assert_str_eq(text, v->valuestring);
    } else {
      ck_assert_msg(cs_col_number(c, row) == v->valuedouble, "%s: %g, the file says %g",
                    v->string, cs_col_number(c, row), v->valuedouble);
    }
  }
  ck_assert_int_eq(seen, 12);
  free(row);
  cJSON_Delete(json);
}
END_TEST

static Suite *jobrow_suite(void) {
  Suite *s = suite_create("store_jobrow");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, adapter_columns_should_hold_the_adapter_values);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cs_test_run(jobrow_suite()); }
