/* The cache key: SHA-256 test vectors, independence of JSON field order and participant order,
 * and sensitivity to every input field and to the adapter version. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "test_support.h"

START_TEST(sha256_should_match_fips_vectors) {
  char hex[CS_KEY_HEX];
  cs_sha256_hex("", 0, hex);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  cs_sha256_hex("abc", 3, hex);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  cs_sha256_hex(two, strlen(two), hex);
  ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* one million 'a', fed in uneven pieces, with the CPU's SHA instructions (when it has them)
   * and with the portable code */
  for (int portable = 0; portable < 2; portable++) {
    cs_sha256 s;
    uint8_t d[32];
    char block[1001];
    memset(block, 'a', sizeof block);
    cs_sha256_init(&s);
    s.portable = portable;
    for (int i = 0; i < 1000; i++) cs_sha256_update(&s, block, i % 2 ? 999 : 1001);
    cs_sha256_final(&s, d);
    ck_assert_uint_eq(d[0], 0xcd);
    ck_assert_uint_eq(d[1], 0xc7);
    ck_assert_uint_eq(d[31], 0xd0);
  }
}
END_TEST

static void key_of_json(const char *adapter, const char *spec, char out[CS_KEY_HEX]) {
  cs_job job;
  cs_err err;
  memset(&job, 0, sizeof job);
  cJSON *a = cJSON_Parse(adapter), *s = cJSON_Parse(spec);
  ck_assert_int_eq(cs_config_adapter_from_json(a, "a", &job.adapter, &err), CS_OK);
  ck_assert_int_eq(cs_config_spec_from_json(s, "s", &job.spec, &err), CS_OK);
  snprintf(job.engine.name, sizeof job.engine.name, "dcin");
  job.engine.deadlock_guard_ticks = 1000;
  ck_assert_int_eq(cs_cachekey(&job, out, NULL), CS_OK);
  cJSON_Delete(a);
  cJSON_Delete(s);
}

#define ADAPTER_A                                                                              \
  "{\"mode\":\"dcin\",\"topology\":\"2261_5x4\",\"num_dies\":2,\"dcin_layout\":\"2die\","       \
  "\"endpoint_id_scheme\":\"mvp\",\"num_initiators\":40,\"num_targets\":40,"                    \
  "\"driver_cycle_frequency_ghz\":1,\"ip_frequency_ghz\":1,\"noc_frequency_ghz\":2,"            \
  "\"mst_rd_outstanding\":128,\"mst_wr_outstanding\":128,\"slv_rd_outstanding\":64,"            \
  "\"slv_wr_outstanding\":64,\"burst_length\":4,\"bw_bytes\":128,"                              \
  "\"enable_transaction_log\":true,\"transaction_log_path\":\"t_{key}.jsonl\"}"
/* the same adapter, keys reversed, spacing and number spelling changed */
#define ADAPTER_B                                                                              \
  "{ \"transaction_log_path\": \"t_{key}.jsonl\", \"enable_transaction_log\": true,"            \
  "  \"bw_bytes\": 128.0, \"burst_length\": 4, \"slv_wr_outstanding\": 64,"                     \
  "  \"slv_rd_outstanding\": 64, \"mst_wr_outstanding\": 128, \"mst_rd_outstanding\": 128,"     \
  "  \"noc_frequency_ghz\": 2.0, \"ip_frequency_ghz\": 1.0, \"driver_cycle_frequency_ghz\": 1e0," \
  "  \"num_targets\": 40, \"num_initiators\": 40, \"endpoint_id_scheme\": \"mvp\","             \
  "  \"dcin_layout\": \"2die\", \"num_dies\": 2, \"topology\": \"2261_5x4\", \"mode\": \"dcin\" }"

START_TEST(key_should_not_depend_on_field_order_or_formatting) {
  char a[CS_KEY_HEX], b[CS_KEY_HEX];
  key_of_json(ADAPTER_A,
              "{\"primitive\":\"allreduce\",\"algorithm\":\"ring\",\"msg_size_bytes\":4096,"
              "\"participants\":[0,1,2,3],\"dtype\":\"bf16\",\"chip_spec_summary\":{\"a\":1,\"b\":[2,3]}}",
              a);
  key_of_json(ADAPTER_B,
              "{\"chip_spec_summary\":{\"b\":[2,3],\"a\":1.0},\"dtype\":\"bf16\",\"participants\":[3,1,0,2],"
              "\"msg_size_bytes\":4096,\"algorithm\":\"ring\",\"primitive\":\"allreduce\"}",
              b);
  ck_assert_str_eq(a, b);
  ck_assert_uint_eq(strlen(a), 64);
}
END_TEST

START_TEST(key_should_keep_p2p_direction) {
  cs_job x, y;
  char kx[CS_KEY_HEX], ky[CS_KEY_HEX];
  const int fwd[] = {0, 9}, back[] = {9, 0};
  cs_test_job(&x, "dcin", CS_PRIM_P2P, 4096, fwd, 2);
  cs_test_job(&y, "dcin", CS_PRIM_P2P, 4096, back, 2);
  ck_assert_int_eq(cs_cachekey(&x, kx, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&y, ky, NULL), CS_OK);
  ck_assert_str_ne(kx, ky);
}
END_TEST

/* Every adapter and spec field of the loaders' tables, changed alone in the JSON, changes the
 * key (the field list comes from the tables, so a new field is covered without editing this). */
static void change_json_value(cJSON *obj, const char *key) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  ck_assert_msg(v != NULL, "field %s missing from the serialised job", key);
  cJSON *w;
  if (!strcmp(key, "primitive") || !strcmp(key, "algorithm")) { /* enums: another valid name */
    w = cJSON_CreateString(!strcmp(key, "primitive") ? "allgather" : "pairwise");
  } else if (cJSON_IsString(v)) {
    char text[300];
    snprintf(text, sizeof text, "%sX", v->valuestring);
    w = cJSON_CreateString(text);
  } else if (cJSON_IsBool(v)) {
    w = cJSON_CreateBool(!cJSON_IsTrue(v));
  } else if (cJSON_IsNumber(v)) {
    w = cJSON_CreateNumber(v->valuedouble + 2);
  } else if (cJSON_IsArray(v)) { /* participants: one more member */
    w = cJSON_Duplicate(v, true);
    cJSON_AddItemToArray(w, cJSON_CreateNumber(31));
  } else { /* chip_spec_summary */
    w = cJSON_Duplicate(v, true);
    cJSON_AddNumberToObject(w, "extra", 1);
  }
  cJSON_ReplaceItemInObjectCaseSensitive(obj, key, w);
}

START_TEST(key_should_change_with_every_field_of_the_tables) {
  cs_job base;
  const int parts[] = {0, 1, 2, 3};
  cs_test_job(&base, "math", CS_PRIM_ALLREDUCE, 4096, parts, 4);
  char kb[CS_KEY_HEX];
  ck_assert_int_eq(cs_cachekey(&base, kb, NULL), CS_OK);
  int checked = 0;
  for (int part = 0; part < 2; part++) {
    const cs_field_doc *docs = part ? cs_config_spec_fields() : cs_config_adapter_fields();
    for (const cs_field_doc *d = docs; d->key; d++) {
      if (!strcmp(d->key, "p2p_op")) continue; /* p2p only: the p2p test covers direction */
      if (!strcmp(d->key, "grid")) continue;   /* dimring only: covered by its own test */
      cs_job j = base;
      cs_err err;
      cJSON *o = part ? cs_config_spec_to_json(&j.spec) : cs_config_adapter_to_json(&j.adapter);
      change_json_value(o, d->key);
      int rc = part ? cs_config_spec_from_json(o, "s", &j.spec, &err)
                    : cs_config_adapter_from_json(o, "a", &j.adapter, &err);
      ck_assert_msg(rc == CS_OK, "%s: %s", d->key, err.msg);
      cJSON_Delete(o);
      char kc[CS_KEY_HEX];
      ck_assert_int_eq(cs_cachekey(&j, kc, NULL), CS_OK);
      ck_assert_msg(strcmp(kb, kc) != 0, "changing %s left the key unchanged", d->key);
      checked++;
    }
  }
  ck_assert_int_ge(checked, 18 + 6);
}
END_TEST

/* Fields outside the adapter and spec tables: engine options and the participant set. */
typedef void (*mutator)(cs_job *);
#define MUT(name, body) \
  static void name(cs_job *j) { body; }
MUT(m_count, j->spec.num_participants = 3)
MUT(m_member, j->spec.participants[2] = 30)
MUT(m_engine, j->engine.name[0] = 'd')
MUT(m_guard, j->engine.deadlock_guard_ticks = 5)
MUT(m_math, cs_test_math(j)->dbid_cycles = 9)
MUT(m_math_defaults, j->engine.has_options = false)
static const mutator mutators[] = {m_count, m_member, m_engine, m_guard, m_math, m_math_defaults};
#define N_MUTATORS ((int)(sizeof mutators / sizeof mutators[0]))

START_TEST(key_should_change_with_every_field) {
  cs_job base, changed;
  const int parts[] = {0, 1, 2, 3};
  cs_test_job(&base, "math", CS_PRIM_ALLREDUCE, 4096, parts, 4);
  changed = base;
  mutators[_i](&changed);
  char kb[CS_KEY_HEX], kc[CS_KEY_HEX];
  ck_assert_int_eq(cs_cachekey(&base, kb, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&changed, kc, NULL), CS_OK);
  ck_assert_msg(strcmp(kb, kc) != 0, "mutator %d left the key unchanged", _i);
}
END_TEST

START_TEST(key_should_include_the_adapter_version) {
  cs_job job;
  const int parts[] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 4096, parts, 2);
  uint8_t a[16384], b[16384];
  size_t na = cs_cachekey_serialize(&job, CS_ADAPTER_VERSION, a, sizeof a);
  size_t nb = cs_cachekey_serialize(&job, "9.9.9", b, sizeof b);
  ck_assert_uint_le(na, sizeof a);
  /* the key is the hash of exactly those bytes, so a version bump changes it */
  char k1[CS_KEY_HEX], k2[CS_KEY_HEX], k3[CS_KEY_HEX];
  ck_assert_int_eq(cs_cachekey(&job, k1, NULL), CS_OK);
  cs_sha256_hex(a, na, k2);
  ck_assert_str_eq(k1, k2);
  cs_sha256_hex(b, nb, k3);
  ck_assert_str_ne(k1, k3);
}
END_TEST

/* No two different values serialise alike: strings carry their length, so moving a character
 * across the boundary of two adjacent string fields (dcin_layout, endpoint_id_scheme) changes
 * the bytes, although the concatenated text is the same. */
START_TEST(key_should_tell_string_boundaries_apart) {
  cs_job x, y;
  const int parts[] = {0, 1};
  cs_test_job(&x, "dcin", CS_PRIM_ALLREDUCE, 4096, parts, 2);
  y = x;
  snprintf(x.adapter.dcin_layout, sizeof x.adapter.dcin_layout, "2die");
  snprintf(x.adapter.endpoint_id_scheme, sizeof x.adapter.endpoint_id_scheme, "mvp");
  snprintf(y.adapter.dcin_layout, sizeof y.adapter.dcin_layout, "2diem");
  snprintf(y.adapter.endpoint_id_scheme, sizeof y.adapter.endpoint_id_scheme, "vp");
  char kx[CS_KEY_HEX], ky[CS_KEY_HEX];
  ck_assert_int_eq(cs_cachekey(&x, kx, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&y, ky, NULL), CS_OK);
  ck_assert_str_ne(kx, ky);
}
END_TEST

START_TEST(math_parameters_should_not_split_keys_of_other_engines) {
  cs_job a, b;
  const int parts[] = {0, 1};
  cs_test_job(&a, "dcin", CS_PRIM_ALLREDUCE, 4096, parts, 2);
  b = a;
  cs_test_math(&b)->req_cycles = 99;
  char ka[CS_KEY_HEX], kb[CS_KEY_HEX];
  ck_assert_int_eq(cs_cachekey(&a, ka, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&b, kb, NULL), CS_OK);
  ck_assert_str_eq(ka, kb);
}
END_TEST

START_TEST(grid_should_enter_the_key_only_for_dimring) {
  int parts[] = {0, 1, 2, 3};
  cs_job a, b;
  char ka[CS_KEY_HEX], kb[CS_KEY_HEX];
  cs_test_job(&a, "math", CS_PRIM_ALLREDUCE, 4096, parts, 4);
  b = a;
  b.spec.grid[0] = 2, b.spec.grid[1] = 2; /* ring ignores the grid */
  ck_assert_int_eq(cs_cachekey(&a, ka, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&b, kb, NULL), CS_OK);
  ck_assert_str_eq(ka, kb);
  a.spec.algorithm = b.spec.algorithm = CS_ALGO_DIMRING;
  a.spec.grid[0] = 4;
  ck_assert_int_eq(cs_cachekey(&a, ka, NULL), CS_OK);
  ck_assert_int_eq(cs_cachekey(&b, kb, NULL), CS_OK);
  ck_assert_str_ne(ka, kb);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cachekey");
  TCase *tc = tcase_create("key");
  tcase_add_test(tc, sha256_should_match_fips_vectors);
  tcase_add_test(tc, grid_should_enter_the_key_only_for_dimring);
  tcase_add_test(tc, key_should_not_depend_on_field_order_or_formatting);
  tcase_add_test(tc, key_should_keep_p2p_direction);
  tcase_add_loop_test(tc, key_should_change_with_every_field, 0, N_MUTATORS);
  tcase_add_test(tc, key_should_change_with_every_field_of_the_tables);
  tcase_add_test(tc, key_should_include_the_adapter_version);
  tcase_add_test(tc, key_should_tell_string_boundaries_apart);
  tcase_add_test(tc, math_parameters_should_not_split_keys_of_other_engines);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
