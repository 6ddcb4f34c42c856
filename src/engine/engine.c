/* The engine registry and the engine options.  The registry is the one place that lists the
 * engines; everything else asks it (by name) and reads the answer from the engine's ops table:
 * its options, validation, cost, model version and extra columns. */
#include "commsweep/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"

#define CS_ENGINE(name) extern const cs_engine_ops cs_##name##_ops;
#include "registry.def"
#undef CS_ENGINE

static const cs_engine_ops *const registry[] = {
#define CS_ENGINE(name) &cs_##name##_ops,
#include "registry.def"
#undef CS_ENGINE
    NULL};

const cs_engine_ops *cs_engine_find(const char *name) {
  for (int i = 0; registry[i]; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const cs_engine_ops *const *cs_engine_list(void) { return registry; }

uint64_t cs_engine_memory(const cs_engine_ops *ops, const cs_job *job, uint64_t widest_step) {
  return ops->memory ? ops->memory(job, widest_step) : CS_ENGINE_TXN_BYTES * widest_step;
}

void cs_engine_names(char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; registry[i] && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", registry[i]->name);
}

void cs_engine_network(const cs_job *job, char *buf, size_t cap) {
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  if (!cap) return;
  buf[0] = '\0';
  if (ops && ops->network) ops->network(job, buf, cap);
  /* layout and die topology are fields of the adapter specification that every job has (and
   * every key and /jobs row holds), not one engine's state: the chip the job describes */
  else if (ops) snprintf(buf, cap, "%s (%s)", job->adapter.dcin_layout, job->adapter.topology);
}

/* The environment, not an option: a model version belongs to the build, and every command that
 * computes a cache key (sweep, run, repair, calibrate) must see the same one, so the test hook
 * stands for a rebuilt binary as a whole; an option would have to reach each of those commands,
 * and one that missed it would compute other keys for the same file.  Unset, as in every
 * ordinary run, the compiled version stands. */
const char *cs_engine_model_version(const cs_engine_ops *ops) {
  char var[64];
  snprintf(var, sizeof var, "COMMSWEEP_TEST_MODEL_VERSION_%s", ops->name);
  const char *v = getenv(var);
  return v && *v ? v : ops->model_version;
}

/* ---- extra columns ----------------------------------------------------------------------------- */

static const cs_engine_column *result_table(const cs_engine_ops *ops) {
  return ops->result_columns;
}
static const cs_engine_column *record_table(const cs_engine_ops *ops) {
  return ops->record_columns;
}

/* The two kinds of extra column differ only in their table, and where and how wide the slots
 * are. */
typedef struct extra_kind {
  const cs_engine_column *(*table)(const cs_engine_ops *ops);
  size_t slots_at;   /* offsetof the engine_extra array in its record */
  size_t slot_size;  /* bytes of a slot */
  size_t slots;      /* slots of the array */
  cs_col_kind kind;  /* the column kind of a slot */
} extra_kind;

static const extra_kind result_extra = {result_table,
                                        offsetof(cs_result, engine_extra), 8,
                                        CS_RESULT_EXTRA_SLOTS, CS_COL_U64};
static const extra_kind record_extra = {record_table,
                                        offsetof(cs_txn_record, engine_extra), 4,
                                        CS_TXN_EXTRA_SLOTS, CS_COL_I32};

static size_t extra_slot(const cs_engine_ops *ops, const extra_kind *k) {
  size_t slot = 0;
  for (int i = 0; registry[i] && registry[i] != ops; i++)
    for (const cs_engine_column *c = k->table(registry[i]); c && c->name; c++) slot++;
  return slot;
}

static size_t extra_columns(cs_engine_set engines, const extra_kind *k, size_t offset,
                            cs_col *out, size_t cap) {
  size_t n = 0, slot = 0;
  for (int i = 0; registry[i]; i++) {
    for (const cs_engine_column *c = k->table(registry[i]); c && c->name; c++, slot++) {
      if (!(engines >> i & 1) || n + 1 >= cap || slot >= k->slots) continue;
      out[n++] = (cs_col){c->name, offset + k->slots_at + k->slot_size * slot, k->kind,
                          k->slot_size, c->unit, c->doc, 0};
    }
  }
  if (cap) out[n] = (cs_col){NULL, 0, 0, 0, NULL, NULL, 0};
  return n;
}

size_t cs_engine_extra_slot(const cs_engine_ops *ops) { return extra_slot(ops, &result_extra); }
size_t cs_engine_record_slot(const cs_engine_ops *ops) { return extra_slot(ops, &record_extra); }

size_t cs_engine_record_slots(void) {
  size_t n = extra_slot(registry[CS_ENGINES_IN_EVERY_FILE], &record_extra);
  return n < CS_TXN_EXTRA_SLOTS ? n : CS_TXN_EXTRA_SLOTS;
}

_Static_assert(sizeof registry / sizeof registry[0] - 1 <= 32,
               "cs_engine_set has a bit for each of at most 32 engines");
_Static_assert(sizeof registry / sizeof registry[0] - 1 >= CS_ENGINES_IN_EVERY_FILE,
               "the engines in every file are registered");

cs_engine_set cs_engine_set_in_every_file(void) {
  return ((cs_engine_set)1 << CS_ENGINES_IN_EVERY_FILE) - 1;
}

cs_engine_set cs_engine_set_of(const cs_engine_ops *ops) {
  for (int i = 0; registry[i]; i++)
    if (registry[i] == ops) return (cs_engine_set)1 << i;
  return 0;
}

size_t cs_engine_result_columns(cs_engine_set engines, size_t offset, cs_col *out, size_t cap) {
  return extra_columns(engines, &result_extra, offset, out, cap);
}

size_t cs_engine_record_columns(cs_engine_set engines, size_t offset, cs_col *out, size_t cap) {
  return extra_columns(engines, &record_extra, offset, out, cap);
}

/* ---- options -------------------------------------------------------------------------------- */

#define ENGINE_KEYS "name, deadlock_guard_ticks, memory_limit_bytes, or an engine's options object"

static int load_engine_object(const cs_engine_ops *ops, const cJSON *v, const char *source,
                              void *params, cs_err *err) {
  char where[CS_ERR_MSG_MAX / 2];
  snprintf(where, sizeof where, "%s: field '%s'", source, ops->name);
  if (!ops->options) {
    if (cJSON_IsObject(v) && !v->child) return CS_OK;
    return cs_err_set(err, CS_EINVAL, "%s: engine %s takes no options (expected {})", where,
                      ops->name);
  }
  return cs_fields_load(ops->options, v, where, NULL, NULL, params, err);
}

int cs_engine_options_from_json(const cJSON *obj, const char *source, cs_engine_options *out,
                                cs_err *err) {
  if (!cJSON_IsObject(obj))
    return cs_err_set(err, CS_EINVAL, "%s: expected a JSON object with " ENGINE_KEYS, source);
  cs_engine_options eng;
  memset(&eng, 0, sizeof eng);
  eng.deadlock_guard_ticks = CS_DEFAULT_DEADLOCK_GUARD;
  static const cs_field common[] = {
      {"name", CS_F_STRING, offsetof(cs_engine_options, name), sizeof eng.name, 0, 0, "engine", 0},
      {"deadlock_guard_ticks", CS_F_U64, offsetof(cs_engine_options, deadlock_guard_ticks), 0, 1,
       1e15, "ticks without a completion before a job fails", CS_FIELD_OPTIONAL},
      {"memory_limit_bytes", CS_F_U64, offsetof(cs_engine_options, memory_limit_bytes), 0, 1,
       1e18, "the most memory a job may be estimated to need", CS_FIELD_OPTIONAL},
      {NULL, 0, 0, 0, 0, 0, NULL, 0}};
  const char *engine_keys[sizeof registry / sizeof registry[0]];
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    engine_keys[i] = registry[i] ? registry[i]->name : NULL;
  int rc = cs_fields_load(common, obj, source, engine_keys, NULL, &eng, err);
  if (rc) return rc;
  const cs_engine_ops *ops = cs_engine_find(eng.name);
  if (!ops) {
    char valid[256];
    cs_engine_names(valid, sizeof valid);
    return cs_err_set(err, CS_EINVAL, "%s: field 'name': unknown engine \"%s\" (valid: %s)", source,
                      eng.name, valid);
  }
  for (int i = 0; registry[i]; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, registry[i]->name);
    if (!v) continue;
    if (registry[i] == ops) {
      if ((rc = load_engine_object(ops, v, source, eng.params.bytes, err))) return rc;
      eng.has_options = true;
    } else { /* another engine's options: checked, not kept */
      cs_engine_options scratch;
      if ((rc = load_engine_object(registry[i], v, source, scratch.params.bytes, err))) return rc;
    }
  }
  *out = eng;
  return CS_OK;
}

/* An engine file, or a calibration file (commsweep calibrate): its "engine" object. */
static int options_fn(const cJSON *j, const char *s, void *o, cs_err *e) {
  const cJSON *inner = cJSON_GetObjectItemCaseSensitive(j, "engine");
  if (cJSON_IsObject(inner) && !cJSON_GetObjectItemCaseSensitive(j, "name")) {
    char source[CS_ERR_MSG_MAX / 2];
    snprintf(source, sizeof source, "%s: field 'engine'", s);
    return cs_engine_options_from_json(inner, source, o, e);
  }
  return cs_engine_options_from_json(j, s, o, e);
}

int cs_engine_options_load(const char *path, cs_engine_options *out, cs_err *err) {
  return cs_config_load_file(path, options_fn, out, err);
}

cJSON *cs_engine_options_to_json(const cs_engine_options *eng, bool key_only) {
  cJSON *obj = cJSON_CreateObject();
  if (!obj) return NULL;
  const cs_engine_ops *ops = cs_engine_find(eng->name);
  if (!cJSON_AddStringToObject(obj, "name", eng->name) ||
      !cJSON_AddNumberToObject(obj, "deadlock_guard_ticks", (double)eng->deadlock_guard_ticks))
    goto fail;
  /* whether a job runs, not what it yields: no part of the key */
  if (!key_only && eng->memory_limit_bytes &&
      !cJSON_AddNumberToObject(obj, "memory_limit_bytes", (double)eng->memory_limit_bytes))
    goto fail;
  /* An unknown engine still gets a key (its jobs fail validation, as failed rows). */
  if (key_only && ops &&
      !cJSON_AddStringToObject(obj, "model_version", cs_engine_model_version(ops)))
    goto fail;
  if (ops && ops->options && eng->has_options) {
    cJSON *o = cJSON_AddObjectToObject(obj, ops->name);
    if (!o) goto fail;
    cs_fields_store(ops->options, eng->params.bytes, o, key_only);
  }
  return obj;
fail:
  cJSON_Delete(obj);
  return NULL;
}

size_t cs_engine_options_serialize(const cs_engine_options *eng, uint8_t *buf, size_t cap,
                                   size_t used) {
  const cs_engine_ops *ops = cs_engine_find(eng->name);
  cs_bytes_text(buf, cap, &used, eng->name, sizeof eng->name);
  cs_bytes_u64(buf, cap, &used, eng->deadlock_guard_ticks);
  cs_bytes_text(buf, cap, &used, ops ? cs_engine_model_version(ops) : "", 64);
  cs_bytes_u64(buf, cap, &used, ops && ops->options && eng->has_options);
  if (ops && ops->options && eng->has_options)
    used = cs_fields_serialize(ops->options, eng->params.bytes, true, buf, cap, used);
  return used;
}

void cs_engine_print_options(FILE *f) {
  fprintf(f, "  %-28s %-8s %s\n", "name", "string", "engine: one of the engines below");
  fprintf(f, "  %-28s %-8s %s\n", "deadlock_guard_ticks", "integer",
          "ticks without a completion, while the engine simulates, before the job fails\n"
          "                                        (optional, default 1000000; drive.h)");
  fprintf(f, "  %-28s %-8s %s\n", "memory_limit_bytes", "integer",
          "the most memory a job may be estimated to need before it runs\n"
          "                                        (optional, default 4 GiB; job.h)");
  for (int i = 0; registry[i]; i++) {
    const cs_engine_ops *ops = registry[i];
    fprintf(f, "  %-28s %-8s %s (model %s)\n", ops->name, "object", ops->summary,
            ops->model_version);
    if (ops->options_doc) fprintf(f, "  %-28s %-8s   %s\n", "", "", ops->options_doc);
    for (const cs_field *o = ops->options; o && o->key; o++) {
      char key[64];
      snprintf(key, sizeof key, "%s.%s", ops->name, o->key);
      fprintf(f, "    %-26s %-8s %s%s\n", key, cs_field_type_name(o->type), o->meaning,
              o->flags & CS_FIELD_OPTIONAL ? " (optional)" : "");
    }
  }
}
