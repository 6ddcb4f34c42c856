/* Cache key: SHA-256 of a canonical JSON document built from the job.  Built from the loaded
 * structs (not the input text), so formatting and key order never matter.  The participants are
 * hashed in the order the expansion uses them (cs_spec_participant_order), and the engine part
 * carries the engine's model version and only the options that change results. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"

static cJSON *key_document(const cs_job *job) {
  cs_spec spec = job->spec;
  cs_spec_participant_order(&job->spec, spec.participants);
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return NULL;
  cJSON *adapter = cs_config_adapter_to_json(&job->adapter);
  cJSON *s = cs_config_spec_to_json(&spec);
  cJSON *engine = cs_engine_options_to_json(&job->engine, true);
  bool ok = cJSON_AddStringToObject(doc, "adapter_version", CS_ADAPTER_VERSION) && adapter && s &&
            engine && cJSON_AddNumberToObject(s, "num_participants", spec.num_participants);
  /* Ownership passes to doc even when a later step fails, so one delete frees everything. */
  if (adapter) cJSON_AddItemToObject(doc, "adapter", adapter);
  if (s) cJSON_AddItemToObject(doc, "spec", s);
  if (engine) cJSON_AddItemToObject(doc, "engine", engine);
  if (!ok) {
    cJSON_Delete(doc);
    return NULL;
  }
  return doc;
}

int cs_cachekey_canonical(const cs_job *job, char *buf, size_t cap, size_t *need, cs_err *err) {
  cJSON *doc = key_document(job);
  if (!doc) {
    if (cap) buf[0] = '\0';
    return cs_err_set(err, CS_ENOMEM, "cache key: out of memory building the canonical job");
  }
  *need = cs_json_canonical(doc, buf, cap);
  cJSON_Delete(doc);
  return CS_OK;
}

int cs_cachekey(const cs_job *job, char out[CS_KEY_HEX], cs_err *err) {
  char stack[8192];
  size_t n = 0;
  int rc = cs_cachekey_canonical(job, stack, sizeof stack, &n, err);
  if (rc) return rc;
  if (n < sizeof stack) {
    cs_sha256_hex(stack, n, out);
    return CS_OK;
  }
  char *heap = malloc(n + 1);
  if (!heap) return cs_err_set(err, CS_ENOMEM, "cache key: out of memory (%zu bytes)", n + 1);
  size_t again = 0;
  rc = cs_cachekey_canonical(job, heap, n + 1, &again, err);
  if (!rc) cs_sha256_hex(heap, again, out);
  free(heap);
  return rc;
}
