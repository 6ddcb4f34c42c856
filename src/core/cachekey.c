/* Cache key: SHA-256 of a canonical JSON document built from the job.  Built from the loaded
 * structs (not the input text), so formatting and key order never matter; the participant list
 * is sorted for every primitive whose expansion sorts it (all but p2p, where order is
 * source/destination). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static cJSON *key_document(const cs_job *job) {
  cs_spec spec = job->spec;
  if (spec.primitive != CS_PRIM_P2P && spec.num_participants > 0)
    qsort(spec.participants, (size_t)spec.num_participants, sizeof spec.participants[0], cmp_i32);
  cs_engine_options eng = job->engine;
  if (strcmp(eng.name, "math") != 0) memset(&eng.math, 0, sizeof eng.math);

  cJSON *doc = cJSON_CreateObject();
  if (!doc) return NULL;
  cJSON_AddStringToObject(doc, "adapter_version", CS_ADAPTER_VERSION);
  cJSON_AddItemToObject(doc, "adapter", cs_config_adapter_to_json(&job->adapter));
  cJSON *s = cs_config_spec_to_json(&spec);
  if (s) cJSON_AddNumberToObject(s, "num_participants", spec.num_participants);
  cJSON_AddItemToObject(doc, "spec", s);
  cJSON_AddItemToObject(doc, "engine", cs_config_engine_to_json(&eng));
  return doc;
}

size_t cs_cachekey_canonical(const cs_job *job, char *buf, size_t cap) {
  cJSON *doc = key_document(job);
  if (!doc) {
    if (cap) buf[0] = '\0';
    return 0;
  }
  size_t n = cs_json_canonical(doc, buf, cap);
  cJSON_Delete(doc);
  return n;
}

void cs_cachekey(const cs_job *job, char out[CS_KEY_HEX]) {
  char stack[8192];
  size_t n = cs_cachekey_canonical(job, stack, sizeof stack);
  if (n < sizeof stack) {
    cs_sha256_hex(stack, n, out);
    return;
  }
  char *heap = malloc(n + 1);
  if (!heap) {
    memset(out, '0', CS_KEY_HEX - 1);
    out[CS_KEY_HEX - 1] = '\0';
    return;
  }
  cs_cachekey_canonical(job, heap, n + 1);
  cs_sha256_hex(heap, n, out);
  free(heap);
}
