/* Strict JSON loading: every adapter field required, unknown and ill-typed fields rejected with
 * the field and the source named; bad files never crash. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "test_support.h"

#define EXAMPLES CS_SOURCE_DIR "/docs/examples/"

static const char *const adapter_keys[] = {
    "mode", "topology", "num_dies", "dcin_layout", "endpoint_id_scheme", "num_initiators",
    "num_targets", "driver_cycle_frequency_ghz", "ip_frequency_ghz", "noc_frequency_ghz",
    "mst_rd_outstanding", "mst_wr_outstanding", "slv_rd_outstanding", "slv_wr_outstanding",
    "burst_length", "bw_bytes", "enable_transaction_log", "transaction_log_path", NULL};

static cJSON *load_example(const char *name) {
  cJSON *j = NULL;
  cs_err err;
  char path[512];
  snprintf(path, sizeof path, EXAMPLES "%s", name);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_OK);
  return j;
}

START_TEST(adapter_load_should_read_every_field) {
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_load(EXAMPLES "adapter_2die.json", &cfg, &err), CS_OK);
  ck_assert_str_eq(cfg.mode, "dcin");
  ck_assert_str_eq(cfg.topology, "2261_5x4");
  ck_assert_int_eq(cfg.num_dies, 2);
  ck_assert_int_eq(cfg.num_initiators, 40);
  ck_assert_double_eq(cfg.noc_frequency_ghz, 2.0);
  ck_assert_int_eq(cfg.mst_wr_outstanding, 128);
  ck_assert_int_eq(cfg.burst_length, 4);
  ck_assert(cfg.enable_transaction_log);
  ck_assert_str_eq(cfg.transaction_log_path, "txlog_{key}.jsonl");
}
END_TEST

/* Each adapter field, removed in turn, gives an error naming it and the source. */
START_TEST(adapter_load_should_reject_each_missing_field) {
  const char *key = adapter_keys[_i];
  cJSON *j = load_example("adapter_2die.json");
  cJSON_DeleteItemFromObjectCaseSensitive(j, key);
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(j, "file 'x.json'", &cfg, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, key));
  ck_assert_ptr_nonnull(strstr(err.msg, "missing required field"));
  ck_assert_ptr_nonnull(strstr(err.msg, "x.json"));
  cJSON_Delete(j);
}
END_TEST

/* Each adapter field given an array (a wrong type for all of them) is rejected by name. */
START_TEST(adapter_load_should_reject_each_ill_typed_field) {
  const char *key = adapter_keys[_i];
  cJSON *j = load_example("adapter_2die.json");
  cJSON_ReplaceItemInObjectCaseSensitive(j, key, cJSON_CreateArray());
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(j, "file 'x.json'", &cfg, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, key) && strstr(err.msg, "expected"), "%s", err.msg);
  cJSON_Delete(j);
}
END_TEST

START_TEST(adapter_load_should_reject_unknown_field) {
  cJSON *j = load_example("adapter_2die.json");
  cJSON_AddNumberToObject(j, "num_dice", 2);
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(j, "file 'x.json'", &cfg, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown field 'num_dice'"));
  ck_assert_ptr_nonnull(strstr(err.msg, "num_dies")); /* lists the valid ones */
  cJSON_Delete(j);
}
END_TEST

START_TEST(adapter_load_should_reject_fractional_and_huge_integers) {
  const char *cases[][2] = {{"num_dies", "2.5"}, {"burst_length", "1e300"},
                            {"bw_bytes", "-128"}, {"num_dies", "0"},
                            {"mst_rd_outstanding", "9007199254740993"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *j = load_example("adapter_2die.json");
    cJSON_ReplaceItemInObjectCaseSensitive(j, cases[i][0], cJSON_Parse(cases[i][1]));
    cs_adapter_config cfg;
    cs_err err;
    ck_assert_int_eq(cs_config_adapter_from_json(j, "x", &cfg, &err), CS_EINVAL);
    ck_assert_msg(strstr(err.msg, cases[i][0]) != NULL, "%s", err.msg);
    cJSON_Delete(j);
  }
}
END_TEST

START_TEST(adapter_load_should_reject_duplicate_keys) {
  cJSON *j = cJSON_Parse("{\"mode\":\"dcin\",\"mode\":\"kcin\"}");
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(j, "x", &cfg, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "appears twice"));
  cJSON_Delete(j);
}
END_TEST

static int spec_error(const char *json, cs_err *err) {
  cJSON *j = cJSON_Parse(json);
  ck_assert_ptr_nonnull(j);
  cs_spec spec;
  int rc = cs_config_spec_from_json(j, "spec.json", &spec, err);
  cJSON_Delete(j);
  return rc;
}

#define SPEC_OK_BUT_CHIP "\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"dtype\":\"bf16\",\"msg_size_bytes\":64,\"participants\":[0,1]"
#define SPEC_OK "\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"dtype\":\"bf16\",\"chip_spec_summary\":{}"

/* Each adapter field given twice (with the same value even) is rejected by name: cJSON keeps both
 * and a lookup would see only the first. */
START_TEST(adapter_load_should_reject_each_duplicate_field) {
  const char *key = adapter_keys[_i];
  cJSON *j = load_example("adapter_2die.json");
  cJSON_AddItemToObject(j, key, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(j, key), 1));
  cs_adapter_config cfg;
  cs_err err;
  ck_assert_int_eq(cs_config_adapter_from_json(j, "file 'x.json'", &cfg, &err), CS_EINVAL);
  char want[96];
  snprintf(want, sizeof want, "file 'x.json': field '%s' appears twice", key);
  ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
  cJSON_Delete(j);
}
END_TEST

/* Every key of a spec, the structured ones (primitive, algorithm, participants,
 * chip_spec_summary, p2p_op) included. */
static const char *const spec_keys[] = {"primitive", "algorithm", "msg_size_bytes", "participants",
                                        "dtype", "p2p_op", "chip_spec_summary", NULL};

START_TEST(spec_load_should_reject_each_duplicate_field) {
  const char *key = spec_keys[_i];
  cJSON *j = load_example("spec_p2p_read.json");
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(j, key);
  ck_assert_ptr_nonnull(first);
  cJSON_AddItemToObject(j, key, cJSON_Duplicate(first, 1));
  cs_spec spec;
  cs_err err;
  ck_assert_int_eq(cs_config_spec_from_json(j, "file 's.json'", &spec, &err), CS_EINVAL);
  char want[96];
  snprintf(want, sizeof want, "file 's.json': field '%s' appears twice", key);
  ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
  cJSON_Delete(j);
}
END_TEST

static const char *const engine_keys[] = {"name", "deadlock_guard_ticks", "math", NULL};

START_TEST(engine_load_should_reject_each_duplicate_field) {
  const char *key = engine_keys[_i];
  cJSON *j = load_example("engine_math.json");
  cJSON_AddItemToObject(j, key, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(j, key), 1));
  cs_engine_options eng;
  cs_err err;
  ck_assert_int_eq(cs_engine_options_from_json(j, "file 'e.json'", &eng, &err), CS_EINVAL);
  char want[96];
  snprintf(want, sizeof want, "file 'e.json': field '%s' appears twice", key);
  ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
  cJSON_Delete(j);
  /* one level down, in the math parameters */
  j = load_example("engine_math.json");
  cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(j, "math"), "dbid_cycles", 9.0);
  ck_assert_int_eq(cs_engine_options_from_json(j, "file 'e.json'", &eng, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "field 'dbid_cycles' appears twice") != NULL, "%s", err.msg);
  cJSON_Delete(j);
}
END_TEST

/* 1e400 parses as infinity: 5.0 and 1e400 must both be caught, and two summaries that differ
 * only in an out-of-range number must never load (they would print alike and share a key). */
START_TEST(spec_load_should_reject_non_finite_numbers_in_chip_spec_summary) {
  cs_err err;
  const char *bad[] = {"{\"noc_frequency_ghz\": 1e400}", "{\"noc_frequency_ghz\": -1e400}",
                       "{\"chip\": {\"dies\": [1, 1e999]}}"};
  const char *field[] = {"chip_spec_summary.noc_frequency_ghz",
                         "chip_spec_summary.noc_frequency_ghz", "chip_spec_summary.chip.dies[1]"};
  for (int i = 0; i < 3; i++) {
    char json[512];
    snprintf(json, sizeof json,
             "{\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"dtype\":\"bf16\","
             "\"msg_size_bytes\":64,\"participants\":[0,1],\"chip_spec_summary\":%s}",
             bad[i]);
    ck_assert_int_eq(spec_error(json, &err), CS_EINVAL);
    ck_assert_msg(strstr(err.msg, field[i]) && strstr(err.msg, "spec.json"), "%s", err.msg);
  }
  /* a repeated key inside the summary is ambiguous too */
  ck_assert_int_eq(spec_error("{" SPEC_OK_BUT_CHIP ",\"chip_spec_summary\":{\"a\":1,\"a\":2}}", &err),
                   CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "field 'chip_spec_summary.a' appears twice"), "%s", err.msg);
}
END_TEST

START_TEST(parse_file_should_reject_repeated_keys_and_non_finite_numbers_anywhere) {
  char path[64];
  cJSON *j = NULL;
  cs_err err;
  cs_test_write_temp("{\"a\": {\"b\": [1, {\"c\": 1, \"c\": 2}]}}", path, sizeof path);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "field 'a.b[1].c' appears twice") && strstr(err.msg, path), "%s",
                err.msg);
  unlink(path);
  cs_test_write_temp("{\"name\": \"x\", \"name\": \"y\"}", path, sizeof path);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "field 'name' appears twice"), "%s", err.msg);
  unlink(path);
  cs_test_write_temp("{\"a\": [0, 2e308]}", path, sizeof path);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "field 'a[1]'") && strstr(err.msg, "finite"), "%s", err.msg);
  unlink(path);
  ck_assert_ptr_null(j);
}
END_TEST

/* cJSON refuses 1,000 levels with a bare "malformed JSON at byte 1000"; the message names the
 * limit and how deep the file goes (valid JSON 100,000 levels deep). */
START_TEST(parse_file_should_name_the_nesting_limit) {
  size_t deep = 100000;
  char *text = malloc(2 * deep + 1), path[64];
  for (size_t i = 0; i < deep; i++) text[i] = '[', text[2 * deep - 1 - i] = ']';
  text[2 * deep] = '\0';
  cs_test_write_temp(text, path, sizeof path);
  free(text);
  cJSON *j = NULL;
  cs_err err;
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EPARSE);
  ck_assert_msg(strstr(err.msg, "JSON nested 100000 levels deep") &&
                    strstr(err.msg, "at most 1000 levels are read") && strstr(err.msg, path),
                "%s", err.msg);
  unlink(path);
  /* 1000 levels are fine */
  text = malloc(2001);
  for (int i = 0; i < 1000; i++) text[i] = '[', text[1999 - i] = ']';
  text[2000] = '\0';
  ck_assert_int_eq(cs_json_parse_text(text, 2000, &j, &err), CS_OK);
  cJSON_Delete(j);
  free(text);
}
END_TEST

/* 2^53 + 1 reads as 2^53 and 1e-400 as 0: refused as written, with the field's path (2^53 itself
 * and a small normal number are accepted). */
START_TEST(parse_file_should_refuse_literals_a_double_cannot_hold) {
  static const struct { const char *text, *want; } cases[] = {
      {"{\"spec\": {\"msg_size_bytes\": 9007199254740993}}",
       "field 'spec.msg_size_bytes': 9007199254740993 is above 2^53 = 9007199254740992"},
      {"{\"a\": [1, -18446744073709551616]}", "field 'a[1]': -18446744073709551616 is above 2^53"},
      {"{\"x\": {\"y\": 1e-400}}", "field 'x.y': 1e-400 underflows"},
      {"{\"x\": 0.00000000000000000000000000000000000000000000000000000000000000000000000000000"
       "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
       "00000000000000000000000000000000000000000000000000000000000000000001}",
       NULL}, /* too long to quote: left to strict reading */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *j = NULL;
    cs_err err;
    int rc = cs_json_parse_text(cases[i].text, strlen(cases[i].text), &j, &err);
    if (!cases[i].want) {
      cJSON_Delete(j);
      continue;
    }
    ck_assert_int_eq(rc, CS_EINVAL);
    ck_assert_msg(strstr(err.msg, cases[i].want), "%s", err.msg);
    ck_assert_ptr_null(j);
  }
  const char *fine = "{\"a\": 9007199254740992, \"b\": -9007199254740992, \"c\": 1e-300, "
                     "\"d\": 0.0, \"e\": 0e-999, \"f\": 2.5e10}";
  cJSON *j = NULL;
  cs_err err;
  ck_assert_int_eq(cs_json_parse_text(fine, strlen(fine), &j, &err), CS_OK);
  cJSON_Delete(j);
}
END_TEST

START_TEST(parse_file_should_reject_empty_truncated_and_missing_files) {
  char path[64];
  cJSON *j = NULL;
  cs_err err;
  cs_test_write_temp("", path, sizeof path);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EPARSE);
  ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
  unlink(path);
  cs_test_write_temp("{\"mode\": \"dcin\",\n \"topology\": ", path, sizeof path);
  ck_assert_int_eq(cs_config_parse_file(path, &j, &err), CS_EPARSE);
  ck_assert_ptr_nonnull(strstr(err.msg, "line 2"));
  ck_assert_ptr_nonnull(strstr(err.msg, "truncated"));
  unlink(path);
  cs_test_write_temp("[1, 2, 3]", path, sizeof path);
  cs_adapter_config cfg;
  ck_assert_int_eq(cs_config_adapter_load(path, &cfg, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "expected a JSON object"));
  unlink(path);
  ck_assert_int_eq(cs_config_adapter_load("/nonexistent/a.json", &cfg, &err), CS_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/a.json"));
  ck_assert_ptr_null(j);
}
END_TEST

START_TEST(spec_load_should_read_structured_fields) {
  cs_spec spec;
  cs_err err;
  ck_assert_int_eq(cs_config_spec_load(EXAMPLES "spec_allreduce.json", &spec, &err), CS_OK);
  ck_assert_int_eq(spec.primitive, CS_PRIM_ALLREDUCE);
  ck_assert_int_eq(spec.algorithm, CS_ALGO_RING);
  ck_assert_int_eq(spec.num_participants, 8);
  ck_assert_int_eq(spec.participants[7], 35);
  ck_assert_str_eq(spec.chip_spec_summary, "{\"chip\":\"2-die 2261\",\"noc_frequency_ghz\":2}");
  ck_assert_int_eq(spec.p2p_op, CS_P2P_NONE);
  ck_assert_int_eq(cs_config_spec_load(EXAMPLES "spec_p2p_read.json", &spec, &err), CS_OK);
  ck_assert_int_eq(spec.p2p_op, CS_P2P_READ);
}
END_TEST

/* The spec of `ids` (n of them, JSON text into buf) and its cache key (under a fixed adapter
 * and engine: only the participants differ). */
static int long_spec(const char *parts, cs_spec *spec, char key[CS_KEY_HEX], cs_err *err) {
  size_t cap = strlen(parts) + 256;
  char *json = malloc(cap);
  snprintf(json, cap, "{" SPEC_OK ",\"msg_size_bytes\":1048576,\"participants\":%s}", parts);
  cJSON *j = cJSON_Parse(json);
  ck_assert_ptr_nonnull(j);
  int rc = cs_config_spec_from_json(j, "spec.json", spec, err);
  cJSON_Delete(j);
  free(json);
  if (rc) return rc;
  cs_job job;
  memset(&job, 0, sizeof job);
  job.spec = *spec;
  snprintf(job.engine.name, sizeof job.engine.name, "math");
  return cs_cachekey(&job, key, err);
}

/* "[a,b,...]" of the ids from..to-1 with every `stride`-th left out and, when shuffled, in an
 * order of its own; malloc'd. */
static char *id_list(int from, int to, int stride, bool shuffled) {
  int n = to - from;
  char *s = malloc((size_t)n * 8 + 4);
  size_t at = 0;
  s[at++] = '[';
  for (int k = 0; k < n; k++) {
    int i = shuffled ? (int)(((long)k * 7919) % n) : k; /* 7919 is prime to every n here */
    if (stride && (from + i) % stride == 0) continue;
    at += (size_t)sprintf(s + at, "%s%d", at > 1 ? "," : "", from + i);
  }
  s[at++] = ']';
  s[at] = 0;
  return s;
}

/* A list of more than 512 ids is kept as its sorted set in runs: the same job, and key, in any
 * order; {"first", "count"} names the same set; a repeated id is C5 with both positions; a set
 * of more than 256 runs is refused with its count. */
START_TEST(spec_load_should_keep_long_participant_lists_as_runs) {
  cs_spec a, b, c;
  char ka[CS_KEY_HEX], kb[CS_KEY_HEX], kc[CS_KEY_HEX];
  cs_err err;
  char *sorted = id_list(0, 4096, 0, false), *shuffled = id_list(0, 4096, 0, true);
  ck_assert_msg(long_spec(sorted, &a, ka, &err) == CS_OK, "%s", err.msg);
  ck_assert_msg(long_spec(shuffled, &b, kb, &err) == CS_OK, "%s", err.msg);
  ck_assert_msg(long_spec("{\"first\":0,\"count\":4096}", &c, kc, &err) == CS_OK, "%s", err.msg);
  ck_assert_int_eq(a.num_participants, 4096);
  ck_assert_int_eq(a.num_participant_runs, 1);
  ck_assert_int_eq(cs_spec_participant(&b, 4095), 4095);
  ck_assert_str_eq(ka, kb);
  ck_assert_str_eq(ka, kc);
  char *other = id_list(1, 4097, 0, false); /* another set: another key */
  ck_assert_int_eq(long_spec(other, &b, kb, &err), CS_OK);
  ck_assert_str_ne(ka, kb);
  /* 600 ids in runs of 4 (every 5th left out): 150 runs */
  char *holes = id_list(0, 750, 5, true);
  ck_assert_msg(long_spec(holes, &b, kb, &err) == CS_OK, "%s", err.msg);
  ck_assert_int_eq(b.num_participants, 600);
  ck_assert_int_eq(b.num_participant_runs, 150);
  ck_assert_int_eq(cs_spec_participant(&b, 4), 6);
  free(holes);
  /* 520 ids, every other one: 520 runs */
  holes = id_list(0, 1040, 2, false);
  ck_assert_int_eq(long_spec(holes, &b, kb, &err), CS_EINVAL);
  ck_assert_msg(strstr(err.msg, "520 ids in 520 runs") && strstr(err.msg, "at most 256 runs"), "%s", err.msg);
  /* id 7 twice, at positions 7 and 600 */
  char *dup = id_list(0, 600, 0, false);
  char *at600 = dup + strlen(dup) - 1;
  while (*at600 != ',') at600--;
  strcpy(at600, ",7]");
  ck_assert_int_eq(long_spec(dup, &b, kb, &err), CS_ECONSTRAINT);
  ck_assert_msg(strstr(err.msg, "C5: participants[599] = 7 repeats participants[7]"), "%s", err.msg);
  free(dup);
  free(holes);
  free(other);
  free(sorted);
  free(shuffled);
}
END_TEST

START_TEST(spec_load_should_name_bad_fields) {
  cs_err err;
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":1024}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "participants"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":\"1k\",\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "msg_size_bytes"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":-5,\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "msg_size_bytes"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":0,\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":1e30,\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "2^53"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":64,\"participants\":[0,\"a\"]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "participants[1]"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":64,\"participants\":[0,-1]}", &err), CS_EINVAL);
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":64,\"participants\":7}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "array"));
  ck_assert_int_eq(spec_error("{\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"dtype\":\"bf16\","
                              "\"chip_spec_summary\":[],\"msg_size_bytes\":64,\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "chip_spec_summary"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":64,\"participants\":[0,1],\"colour\":1}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown field 'colour'"));
  ck_assert_int_eq(spec_error("{\"primitive\":\"broadcast\",\"algorithm\":\"ring\",\"dtype\":\"bf16\","
                              "\"chip_spec_summary\":{},\"msg_size_bytes\":64,\"participants\":[0,1]}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "broadcast"));
  ck_assert_int_eq(spec_error("{" SPEC_OK ",\"msg_size_bytes\":64,\"participants\":[0,1],\"p2p_op\":\"read\"}", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "p2p_op"));
}
END_TEST

START_TEST(engine_options_should_load_strictly_from_the_engine_table) {
  cs_engine_options eng;
  cs_err err;
  /* no options object: the engine's defaults apply */
  cJSON *j = cJSON_Parse("{\"name\":\"math\"}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_OK);
  ck_assert(!eng.has_options);
  cJSON_Delete(j);
  j = cJSON_Parse("{\"name\":\"dcin\"}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_OK);
  ck_assert_uint_eq(eng.deadlock_guard_ticks, CS_DEFAULT_DEADLOCK_GUARD);
  cJSON_Delete(j);
  ck_assert_int_eq(cs_engine_options_load(EXAMPLES "engine_math.json", &eng, &err), CS_OK);
  ck_assert(eng.has_options);
  cs_math_params mp;
  memcpy(&mp, eng.params.bytes, sizeof mp);
  ck_assert_double_eq(mp.req_cycles, 12.7);
  /* an options object is complete or an error naming the missing field */
  j = cJSON_Parse("{\"name\":\"math\",\"math\":{\"req_cycles\":1}}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "dbid_cycles"));
  cJSON_Delete(j);
  /* another engine's options are checked too, so a typo there is not silently ignored */
  j = cJSON_Parse("{\"name\":\"dcin\",\"math\":{\"req_cycles\":1}}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "'math'"));
  cJSON_Delete(j);
  j = cJSON_Parse("{\"name\":\"warp\"}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "unknown engine \"warp\""));
  cJSON_Delete(j);
  j = cJSON_Parse("{\"name\":\"dcin\",\"dcin\":{\"x\":1}}");
  ck_assert_int_eq(cs_engine_options_from_json(j, "e", &eng, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "takes no options"));
  cJSON_Delete(j);
}
END_TEST

START_TEST(round_trip_should_preserve_every_field) {
  cs_job job, back;
  cs_err err;
  const int parts[] = {3, 1, 2};
  cs_test_job(&job, "math", CS_PRIM_ALLGATHER, 4096, parts, 3);
  cJSON *a = cs_config_adapter_to_json(&job.adapter), *s = cs_config_spec_to_json(&job.spec),
        *e = cs_engine_options_to_json(&job.engine, false);
  memset(&back, 0, sizeof back);
  ck_assert_int_eq(cs_config_adapter_from_json(a, "a", &back.adapter, &err), CS_OK);
  ck_assert_int_eq(cs_config_spec_from_json(s, "s", &back.spec, &err), CS_OK);
  ck_assert_int_eq(cs_engine_options_from_json(e, "e", &back.engine, &err), CS_OK);
  ck_assert_int_eq(memcmp(&job.adapter, &back.adapter, sizeof job.adapter), 0);
  ck_assert_int_eq(memcmp(&job.spec, &back.spec, sizeof job.spec), 0);
  ck_assert_int_eq(memcmp(&job.engine, &back.engine, sizeof job.engine), 0);
  cJSON_Delete(a);
  cJSON_Delete(s);
  cJSON_Delete(e);
}
END_TEST

START_TEST(canonical_json_should_ignore_key_order_and_spacing) {
  cJSON *a = cJSON_Parse("{\"b\": [1, 2.5, {\"y\":1,\"x\":2}], \"a\": \"q\\\"\"}");
  cJSON *b = cJSON_Parse("{\"a\":\"q\\\"\",\"b\":[1,2.5,{\"x\":2,\"y\":1}]}");
  char x[128], y[128];
  cs_json_canonical(a, x, sizeof x);
  cs_json_canonical(b, y, sizeof y);
  ck_assert_str_eq(x, y);
  ck_assert_str_eq(x, "{\"a\":\"q\\\"\",\"b\":[1,2.5,{\"x\":2,\"y\":1}]}");
  ck_assert_uint_eq(cs_json_canonical(a, x, 4), strlen(y)); /* reports the size needed */
  cJSON_Delete(a);
  cJSON_Delete(b);
}
END_TEST

/* An infinity (which the loaders reject) still prints as JSON that parses back to it, never as
 * "inf". */
START_TEST(canonical_json_should_print_infinities_as_json) {
  cJSON *a = cJSON_Parse("{\"x\":1e400,\"y\":-1e400}");
  char x[64];
  cs_json_canonical(a, x, sizeof x);
  ck_assert_str_eq(x, "{\"x\":1e999,\"y\":-1e999}");
  cJSON *back = cJSON_Parse(x);
  ck_assert_ptr_nonnull(back);
  cJSON_Delete(back);
  cJSON_Delete(a);
}
END_TEST

/* Integral numbers print as libc's "%.0f" prints them (the reference), at every magnitude up to
 * 2^53 and for -0. */
START_TEST(canonical_json_should_print_integers_as_printf_does) {
  const double values[] = {0.0, -0.0, 1, -1, 9, 10, 99, 100, 1024, 65536, -123456789, 1e15,
                           4294967296.0, 9007199254740991.0, -9007199254740991.0};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    cJSON *n = cJSON_CreateNumber(values[i]);
    char got[64], want[64];
    cs_json_canonical(n, got, sizeof got);
    snprintf(want, sizeof want, "%.0f", values[i]);
    ck_assert_str_eq(got, want);
    cJSON_Delete(n);
  }
}
END_TEST

/* Strings: quote and backslash escaped by a backslash, control characters as \u00XX, the rest
 * as is (JSON's rules, by hand). */
START_TEST(canonical_json_should_escape_strings) {
  cJSON *v = cJSON_CreateString("plain \"q\" a\\b\n\x01" "end");
  char got[128];
  cs_json_canonical(v, got, sizeof got);
  ck_assert_str_eq(got, "\"plain \\\"q\\\" a\\\\b\\u000a\\u0001end\"");
  cJSON_Delete(v);
}
END_TEST

/* docs/configuration.md's tables of the adapter and the spec list the fields of the loaders'
 * tables, in their order (the adapter's with their types): a field added to a table and not to
 * the docs, or the other way round, shows here. */
static void docs_table_fields(const char *heading, char names[][40], char types[][40], int cap,
                              int *n) {
  FILE *f = fopen(CS_SOURCE_DIR "/docs/configuration.md", "r");
  ck_assert_ptr_nonnull(f);
  char line[4096];
  bool in = false;
  *n = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "## ", 3)) in = strstr(line, heading) != NULL;
    char name[40], type[40];
    if (!in || sscanf(line, "| %39[^ |] | %39[^|]|", name, type) != 2) continue;
    if (!strcmp(name, "field") || name[0] == '-') continue; /* the head and its rule */
    ck_assert_int_lt(*n, cap);
    snprintf(names[*n], 40, "%s", name);
    snprintf(types[*n], 40, "%.*s", (int)strcspn(type, " "), type);
    (*n)++;
  }
  fclose(f);
}

START_TEST(docs_should_list_every_adapter_and_spec_field_in_table_order) {
  char names[32][40], types[32][40];
  int n;
  for (int part = 0; part < 2; part++) {
    const cs_field_doc *fields = part ? cs_config_spec_fields() : cs_config_adapter_fields();
    docs_table_fields(part ? "## Spec" : "## Adapter configuration", names, types, 32, &n);
    int k = 0;
    for (; fields[k].key; k++) {
      ck_assert_int_lt(k, n);
      ck_assert_str_eq(names[k], fields[k].key);
      if (!part) ck_assert_str_eq(types[k], fields[k].type);
    }
    ck_assert_int_eq(n, k);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("adapter");
  int n_keys = 0;
  while (adapter_keys[n_keys]) n_keys++;
  tcase_add_test(tc, adapter_load_should_read_every_field);
  tcase_add_test(tc, docs_should_list_every_adapter_and_spec_field_in_table_order);
  tcase_add_test(tc, spec_load_should_keep_long_participant_lists_as_runs);
  tcase_add_test(tc, canonical_json_should_print_integers_as_printf_does);
  tcase_add_test(tc, canonical_json_should_escape_strings);
  tcase_add_loop_test(tc, adapter_load_should_reject_each_missing_field, 0, n_keys);
  tcase_add_loop_test(tc, adapter_load_should_reject_each_ill_typed_field, 0, n_keys);
  tcase_add_test(tc, adapter_load_should_reject_unknown_field);
  tcase_add_test(tc, adapter_load_should_reject_fractional_and_huge_integers);
  tcase_add_test(tc, adapter_load_should_reject_duplicate_keys);
  tcase_add_loop_test(tc, adapter_load_should_reject_each_duplicate_field, 0, n_keys);
  tcase_add_test(tc, parse_file_should_reject_empty_truncated_and_missing_files);
  tcase_add_test(tc, parse_file_should_name_the_nesting_limit);
  tcase_add_test(tc, parse_file_should_refuse_literals_a_double_cannot_hold);
  tcase_add_test(tc, parse_file_should_reject_repeated_keys_and_non_finite_numbers_anywhere);
  suite_add_tcase(s, tc);
  tc = tcase_create("spec_engine");
  tcase_add_test(tc, spec_load_should_read_structured_fields);
  tcase_add_test(tc, spec_load_should_name_bad_fields);
  tcase_add_test(tc, engine_options_should_load_strictly_from_the_engine_table);
  tcase_add_loop_test(tc, spec_load_should_reject_each_duplicate_field, 0, 7);
  tcase_add_loop_test(tc, engine_load_should_reject_each_duplicate_field, 0, 3);
  tcase_add_test(tc, spec_load_should_reject_non_finite_numbers_in_chip_spec_summary);
  tcase_add_test(tc, round_trip_should_preserve_every_field);
  tcase_add_test(tc, canonical_json_should_ignore_key_order_and_spacing);
  tcase_add_test(tc, canonical_json_should_print_infinities_as_json);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
