/* Matrix expansion: the cartesian product of the axes (first axis slowest), each combination
 * written into copies of the base objects and then loaded by the strict loaders, validated,
 * counted (cs_expand_count) and keyed.  A combination that fails any of those becomes a job
 * with load_code and error set; its key hashes the raw inputs, so it has a stable row too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/expand.h"
#include "commsweep/hash.h"
#include "commsweep/engine.h"
#include "commsweep/job.h"
#include "sweep_int.h"

/* Sets section.path = value (duplicated) in sec[], creating intermediate objects. */
static int set_path(cJSON *sec[3], const char *path, const cJSON *value) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  char *save = NULL, *seg = strtok_r(buf, ".", &save);
  cJSON *node = NULL;
  for (int s = 0; s < 3; s++)
    if (strcmp(seg, cs_sweep_sections[s]) == 0) node = sec[s];
  char *key = strtok_r(NULL, ".", &save);
  for (char *next = strtok_r(NULL, ".", &save); next; next = strtok_r(NULL, ".", &save)) {
    cJSON *child = cJSON_GetObjectItemCaseSensitive(node, key);
    if (!cJSON_IsObject(child)) {
      child = cJSON_CreateObject();
      if (!child) return CS_ENOMEM;
      cJSON_DeleteItemFromObjectCaseSensitive(node, key);
      cJSON_AddItemToObject(node, key, child);
    }
    node = child;
    key = next;
  }
  cJSON *copy = cJSON_Duplicate(value, true);
  if (!copy) return CS_ENOMEM;
  if (cJSON_GetObjectItemCaseSensitive(node, key))
    cJSON_ReplaceItemInObjectCaseSensitive(node, key, copy);
  else
    cJSON_AddItemToObject(node, key, copy);
  return CS_OK;
}

/* "spec.msg_size_bytes=1024, adapter.burst_length=4" for messages. */
static void describe_combo(const cs_sweep_def *def, const size_t *digit, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < def->num_axes; a++) {
    const cs_sweep_axis *ax = &def->axes[a];
    const cJSON *v = cJSON_GetArrayItem(ax->values, (int)digit[a]);
    for (size_t f = 0; f < ax->num_fields; f++) {
      const cJSON *fv = ax->coupled ? cJSON_GetArrayItem(v, (int)f) : v;
      char val[48];
      size_t n = cs_json_canonical(fv, val, sizeof val);
      if (n >= sizeof val) memcpy(val + sizeof val - 4, "...", 4);
      used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%s=%s",
                               used ? ", " : "", ax->paths[f], val);
    }
  }
}

/* The engine's share group, told apart from other engines' by the engine's name; 0 for none. */
static uint64_t share_group(const cs_engine_ops *ops, const cs_job *job) {
  uint64_t g = ops && ops->share_group ? ops->share_group(job) : 0;
  if (!g) return 0;
  g = cs_fnv1a_text(g, ops->name);
  return g ? g : 1;
}

/* The strict loaders over the three sections. */
static int load_sections(const cJSON *const sec[3], const char *source, cs_job *job, cs_err *err) {
  if (cs_config_spec_from_json(sec[CS_SEC_SPEC], source, &job->spec, err) ||
      cs_config_adapter_from_json(sec[CS_SEC_ADAPTER], source, &job->adapter, err) ||
      cs_engine_options_from_json(sec[CS_SEC_ENGINE], source, &job->engine, err))
    return err->code;
  return CS_OK;
}

int cs_sweep_job_from_json(const char *json, cs_job *job, cs_err *err) {
  memset(job, 0, sizeof *job);
  cJSON *doc = cJSON_Parse(json);
  if (!cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    return cs_err_set(err, CS_EPARSE, "the job's JSON is not an object");
  }
  const cJSON *sec[3];
  for (int s = 0; s < 3; s++) sec[s] = cJSON_GetObjectItemCaseSensitive(doc, cs_sweep_sections[s]);
  int rc = load_sections(sec, "job", job, err);
  cJSON_Delete(doc);
  return rc;
}

static int load_job(cJSON *sec[3], const char *source, cs_job *job, cs_sweep_job *j,
                    cs_err *err) {
  if (load_sections((const cJSON *const *)sec, source, job, err)) return err->code;
  if (cs_job_validate(job, err) || cs_expand_count(job, &j->num_txns, &j->num_steps, err))
    return cs_err_prefix(err, "%s", source);
  char key[CS_KEY_HEX];
  if (cs_cachekey(job, key, err)) return cs_err_prefix(err, "%s", source);
  memcpy(j->key, key, CS_KEY_HEX);
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  j->cost = ops && ops->cost ? ops->cost(job, j->num_txns, j->num_steps) : (double)j->num_txns;
  j->group = share_group(ops, job);
  unsigned char packed[CS_JOB_PACKED_MAX];
  size_t len = cs_job_pack(job, packed);
  if (!(j->packed = malloc(len))) return cs_err_set(err, CS_ENOMEM, "%s: out of memory", source);
  memcpy(j->packed, packed, len);
  j->packed_len = (uint32_t)len;
  return CS_OK;
}

int cs_sweep_job_get(const cs_sweep_job *j, cs_job *out, cs_err *err) {
  if (j->load_code || !j->packed)
    return cs_err_set(err, CS_EINVAL, "the job was not loaded: %s", j->error ? j->error : "?");
  return cs_job_unpack(j->packed, j->packed_len, out, err);
}

cs_engine_set cs_sweep_engines(const cs_sweep *sw) {
  cs_engine_set engines = 0;
  cs_job *job = malloc(sizeof *job); /* a few KiB: not on the stack */
  cs_err err;
  for (size_t i = 0; job && i < sw->num_jobs; i++)
    if (!cs_sweep_job_get(&sw->jobs[i], job, &err))
      engines |= cs_engine_set_of(cs_engine_find(job->engine.name));
  free(job);
  return engines;
}

static int expand_one(const cs_sweep_def *def, size_t index, const size_t *digit,
                      cs_sweep_zip *zip, cs_sweep_job *j, cs_err *err) {
  cJSON *sec[3] = {NULL, NULL, NULL};
  cJSON *doc = cJSON_CreateObject();
  int rc = doc ? CS_OK : CS_ENOMEM;
  for (int s = 0; s < 3 && !rc; s++) {
    sec[s] = cJSON_Duplicate(def->base[s], true);
    if (!sec[s]) rc = CS_ENOMEM;
    else cJSON_AddItemToObject(doc, cs_sweep_sections[s], sec[s]);
  }
  for (size_t a = 0; a < def->num_axes && !rc; a++) {
    const cs_sweep_axis *ax = &def->axes[a];
    const cJSON *v = cJSON_GetArrayItem(ax->values, (int)digit[a]);
    for (size_t f = 0; f < ax->num_fields && !rc; f++)
      rc = set_path(sec, ax->paths[f], ax->coupled ? cJSON_GetArrayItem(v, (int)f) : v);
  }
  char *json = rc ? NULL : cs_sweep_canonical_text(doc);
  if (!json || cs_sweep_zip_put(zip, json, j)) {
    free(json);
    cJSON_Delete(doc);
    return cs_err_set(err, CS_ENOMEM, "job %zu: out of memory", index);
  }
  char combo[512], source[700];
  describe_combo(def, digit, combo, sizeof combo);
  snprintf(source, sizeof source, "sweep '%s' job %zu%s%s%s", def->name, index,
           combo[0] ? " [" : "", combo, combo[0] ? "]" : "");
  cs_err jerr;
  cs_err_clear(&jerr);
  cs_job job;
  memset(&job, 0, sizeof job);
  j->load_code = load_job(sec, source, &job, j, &jerr);
  if (j->load_code && cs_err_is_transient(j->load_code)) { /* says nothing about the job */
    free(json);
    cJSON_Delete(doc);
    cs_err_set(err, j->load_code, "%s", jerr.msg);
    return j->load_code;
  }
  if (j->load_code) {
    j->error = strdup(jerr.msg);
    j->num_txns = 0;
    j->num_steps = 0;
    j->cost = 0;
    j->group = 0;
    free(j->packed);
    j->packed = NULL;
    j->packed_len = 0;
    size_t n = strlen(json) + 64;
    char *text = malloc(n);
    if (!text || !j->error) {
      free(text);
      free(json);
      cJSON_Delete(doc);
      return cs_err_set(err, CS_ENOMEM, "job %zu: out of memory", index);
    }
    snprintf(text, n, "commsweep unloadable job %s\n%s", CS_ADAPTER_VERSION, json);
    cs_sha256_hex(text, strlen(text), j->key);
    free(text);
  }
  free(json);
  cJSON_Delete(doc);
  return CS_OK;
}

int cs_sweep_check_base(const cs_sweep_def *def, const cs_sweep *sw, cs_err *err) {
  for (size_t i = 0; i < sw->num_jobs; i++)
    if (sw->jobs[i].load_code == CS_OK) return CS_OK;
  /* Every job failed: did they inherit it from the base, or did every combination fail on its
   * own values?  Load the base alone, as the job of an empty matrix. */
  cJSON *sec[3] = {NULL, NULL, NULL};
  cs_sweep_job *alone = calloc(1, sizeof *alone);
  cs_job *job = calloc(1, sizeof *job);
  int rc = alone && job ? CS_OK : CS_ENOMEM;
  for (int s = 0; s < 3 && !rc; s++)
    if (!(sec[s] = cJSON_Duplicate(def->base[s], true))) rc = CS_ENOMEM;
  cs_err berr;
  cs_err_clear(&berr);
  if (rc) {
    cs_err_set(err, rc, "checking the base: out of memory");
  } else if ((rc = load_job(sec, "base", job, alone, &berr))) {
    rc = cs_err_set(err, rc, "%s (the base fails on its own and so do all %zu jobs of the matrix)",
                    berr.msg, sw->num_jobs);
  }
  for (int s = 0; s < 3; s++) cJSON_Delete(sec[s]);
  if (alone) free(alone->packed);
  free(alone);
  free(job);
  return rc;
}

int cs_sweep_alloc(const cs_sweep_def *def, cs_sweep *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", def->name);
  out->num_axes = def->num_axes;
  out->jobs = calloc(def->num_jobs ? def->num_jobs : 1, sizeof *out->jobs);
  out->base_json = cs_sweep_base_json(def);
  out->warnings = def->warnings ? strdup(def->warnings) : NULL;
  if (!out->jobs || !out->base_json || (def->warnings && !out->warnings)) {
    cs_sweep_free(out);
    return cs_err_set(err, CS_ENOMEM, "%zu jobs: out of memory", def->num_jobs);
  }
  out->num_jobs = def->num_jobs;
  return CS_OK;
}

int cs_sweep_expand_range(const cs_sweep_def *def, size_t lo, size_t hi, cs_sweep *out,
                          cs_err *err) {
  return cs_sweep_expand_into(def, lo, hi, out->jobs + lo, err);
}

int cs_sweep_expand_into(const cs_sweep_def *def, size_t lo, size_t hi, cs_sweep_job *into,
                         cs_err *err) {
  size_t *digit = calloc(def->num_axes + 1, sizeof *digit);
  char *dict = cs_sweep_base_json(def);
  cs_sweep_zip zip = {0};
  if (!digit || !dict || cs_sweep_zip_init(&zip, dict)) {
    free(digit);
    free(dict);
    return cs_err_set(err, CS_ENOMEM, "%zu jobs: out of memory", hi - lo);
  }
  /* digits of job lo: mixed radix, the last axis least significant */
  for (size_t a = def->num_axes, rest = lo; a-- > 0;) {
    digit[a] = rest % def->axes[a].num_values;
    rest /= def->axes[a].num_values;
  }
  int rc = CS_OK;
  for (size_t i = lo; i < hi && !rc; i++) {
    rc = expand_one(def, i, digit, &zip, &into[i - lo], err);
    for (size_t a = def->num_axes; a-- > 0;) { /* odometer: the last axis moves fastest */
      if (++digit[a] < def->axes[a].num_values) break;
      digit[a] = 0;
    }
  }
  cs_sweep_zip_end(&zip);
  free(dict);
  free(digit);
  return rc;
}

int cs_sweep_expand(const cs_sweep_def *def, cs_sweep *out, cs_err *err) {
  if (cs_sweep_alloc(def, out, err)) return err->code;
  int rc = cs_sweep_expand_range(def, 0, def->num_jobs, out, err);
  if (rc) cs_sweep_free(out);
  return rc;
}

void cs_sweep_free(cs_sweep *sw) {
  if (!sw) return;
  for (size_t i = 0; sw->jobs && i < sw->num_jobs; i++) {
    free(sw->jobs[i].packed);
    free(sw->jobs[i].json_z);
    free(sw->jobs[i].error);
  }
  free(sw->jobs);
  free(sw->base_json);
  free(sw->warnings);
  memset(sw, 0, sizeof *sw);
}
