/* Strict loaders for the adapter configuration (tbl-cr-07), the CommPrimitiveSpec (tbl-cr-08)
 * and the engine options.  Each is a declarative table; the few structured fields (participants,
 * chip_spec_summary, enums) are handled beside it.  Loaders check types and ranges; the
 * constraints C1-C11 are validate.c's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

/* The adapter's loader rows and help rows, from its table (model.h). */
#define SIZE_STRING(m) sizeof(((cs_adapter_config *)0)->m)
#define SIZE_INT(m) 0
#define SIZE_DOUBLE(m) 0
#define SIZE_BOOL(m) 0
#define ADAPTER_ROW_(name, type, dim, lo, hi, flags, job, unit, doc, job_doc) \
  {#name, CS_F_##type, offsetof(cs_adapter_config, name), SIZE_##type(name), lo, hi, doc, flags},
static const cs_field adapter_fields[] = {CS_ADAPTER_FIELDS(ADAPTER_ROW_){NULL, 0, 0, 0, 0, 0, NULL, 0}};
#undef ADAPTER_ROW_

#define TYPE_NAME_STRING "string"
#define TYPE_NAME_INT "integer"
#define TYPE_NAME_DOUBLE "number"
#define TYPE_NAME_BOOL "boolean"
#define ADAPTER_DOC_(name, type, dim, lo, hi, flags, job, unit, doc, job_doc) \
  {#name, TYPE_NAME_##type, doc},
static const cs_field_doc adapter_docs[] = {CS_ADAPTER_FIELDS(ADAPTER_DOC_){NULL, NULL, NULL}};
#undef ADAPTER_DOC_

/* The spec's fields, described once: X(name, type, load, lo, hi, doc) with `type` as --help
 * names it and `load` the loader's row type (U64, STRING), or CODE for the structured fields
 * loaded below (participants, chip_spec_summary and the enums).  Table order is the order of
 * --help and of "valid fields" (the table's rows first, then the structured ones). */
#define SPEC_FIELDS(X)                                                                             \
  X(primitive, "string", CODE, 0, 0, "allreduce | allgather | reducescatter | alltoall | p2p")     \
  X(algorithm, "string", CODE, 0, 0,                                                               \
    "ring (allreduce/allgather/reducescatter), pairwise (alltoall), direct (p2p), dimring | "     \
    "dimring_rsag (allreduce) (C11)")                                                            \
  X(msg_size_bytes, "integer", U64, 1, 9007199254740992.0, "message size M in bytes, > 0")         \
  X(participants, "array", CODE, 0, 0,                                                             \
    "logical GDMA ids, distinct (C5); p2p: [source, destination]; or {\"first\": F, \"count\": " \
    "C}, the ids F .. F+C-1")                                                                    \
  X(dtype, "string", STRING, 0, 0, "element type, metadata only")                                 \
  X(chip_spec_summary, "object", CODE, 0, 0, "chip description; part of the cache key")           \
  X(p2p_op, "string", CODE, 0, 0, "p2p only: read | write")                                       \
  X(grid, "array", CODE, 0, 0,                                                                     \
    "participant grid [X, Y, Z], dimension 0 first; needed by dimring, dimring_rsag")

#define SPEC_SIZE_U64(m) 0
#define SPEC_SIZE_STRING(m) sizeof(((cs_spec *)0)->m)
#define SPEC_ROW_CODE(name, load, lo, hi, doc)
#define SPEC_ROW_U64(name, load, lo, hi, doc) SPEC_ROW_TABLE_(name, load, lo, hi, doc)
#define SPEC_ROW_STRING(name, load, lo, hi, doc) SPEC_ROW_TABLE_(name, load, lo, hi, doc)
#define SPEC_ROW_TABLE_(name, load, lo, hi, doc) \
  {#name, CS_F_##load, offsetof(cs_spec, name), SPEC_SIZE_##load(name), lo, hi, doc, 0},
#define SPEC_ROW_(name, type, load, lo, hi, doc) SPEC_ROW_##load(name, load, lo, hi, doc)
static const cs_field spec_fields[] = {SPEC_FIELDS(SPEC_ROW_){NULL, 0, 0, 0, 0, 0, NULL, 0}};
#define SPEC_EXTRA_CODE(name) #name,
#define SPEC_EXTRA_U64(name)
#define SPEC_EXTRA_STRING(name)
#define SPEC_EXTRA_(name, type, load, lo, hi, doc) SPEC_EXTRA_##load(name)
static const char *const spec_extra[] = {SPEC_FIELDS(SPEC_EXTRA_) NULL};
#define SPEC_DOC_(name, type, load, lo, hi, doc) {#name, type, doc},
static const cs_field_doc spec_docs[] = {SPEC_FIELDS(SPEC_DOC_){NULL, NULL, NULL}};

const cs_field_doc *cs_config_adapter_fields(void) { return adapter_docs; }
const cs_field_doc *cs_config_spec_fields(void) { return spec_docs; }

int cs_config_adapter_from_json(const cJSON *obj, const char *source, cs_adapter_config *out,
                                cs_err *err) {
  cs_adapter_config cfg;
  memset(&cfg, 0, sizeof cfg);
  int rc = cs_fields_load(adapter_fields, obj, source, NULL, NULL, &cfg, err);
  if (rc) return rc;
  *out = cfg;
  return CS_OK;
}

/* A list of at most CS_MAX_LISTED_PARTICIPANTS ids is kept as given; a longer one as its sorted
 * set in runs (model.h), so its duplicates (C5) are found here. */
/* {"first": F, "count": C}: the C consecutive ids from F. */
static int load_participant_run(const cJSON *obj, const char *source, cs_spec *spec, cs_err *err) {
  static const char *const keys[] = {"first", "count"};
  double v[2];
  for (const cJSON *c = obj->child; c; c = c->next)
    if (strcmp(c->string, "first") != 0 && strcmp(c->string, "count") != 0)
      return cs_err_set(err, CS_EINVAL,
                        "%s: field 'participants': unknown key '%.40s' (a run of ids is "
                        "{\"first\": F, \"count\": C})",
                        source, c->string);
  for (int k = 0; k < 2; k++) {
    char key[40];
    snprintf(key, sizeof key, "participants.%s", keys[k]);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, keys[k]);
    if (!x) return cs_err_set(err, CS_EINVAL, "%s: missing required field '%s'", source, key);
    if (cs_json_integer(x, key, k ? 1 : 0, INT_MAX, &v[k], err)) return cs_err_prefix(err, "%s", source);
  }
  if (v[0] + v[1] - 1 > INT_MAX)
    return cs_err_set(err, CS_EINVAL, "%s: field 'participants': ids %.0f..%.0f pass %d", source,
                      v[0], v[0] + v[1] - 1, INT_MAX);
  int count = (int)v[1];
  int32_t *ids = malloc((size_t)count * sizeof *ids);
  int64_t *scratch = count > CS_MAX_LISTED_PARTICIPANTS ? malloc((size_t)count * sizeof *scratch) : NULL;
  int rc = !ids || (count > CS_MAX_LISTED_PARTICIPANTS && !scratch)
               ? cs_err_set(err, CS_ENOMEM, "%s: field 'participants': out of memory for %d ids",
                            source, count)
               : CS_OK;
  for (int i = 0; !rc && i < count; i++) ids[i] = (int32_t)v[0] + i;
  int a, b;
  if (!rc) cs_spec_set_participants(spec, ids, count, scratch, &a, &b); /* one run: cannot fail */
  free(ids);
  free(scratch);
  return rc;
}

static int load_participants(const cJSON *arr, const char *source, cs_spec *spec, cs_err *err) {
  if (cJSON_IsObject(arr)) return load_participant_run(arr, source, spec, err);
  if (!cJSON_IsArray(arr)) {
    char got[96];
    cs_json_describe(arr, got, sizeof got);
    return cs_err_set(err, CS_EINVAL,
                      "%s: field 'participants': expected an array of integers or {\"first\", "
                      "\"count\"}, got %s",
                      source, got);
  }
  int n = cJSON_GetArraySize(arr);
  int32_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
  int64_t *scratch = n > CS_MAX_LISTED_PARTICIPANTS ? malloc((size_t)n * sizeof *scratch) : NULL;
  int rc = ids && (scratch || n <= CS_MAX_LISTED_PARTICIPANTS)
               ? CS_OK
               : cs_err_set(err, CS_ENOMEM, "%s: field 'participants': out of memory for %d ids",
                            source, n);
  int i = 0;
  for (const cJSON *v = arr->child; v && !rc; v = v->next, i++) {
    char key[48];
    snprintf(key, sizeof key, "participants[%d]", i);
    double d;
    if (cs_json_integer(v, key, 0, INT_MAX, &d, err)) rc = cs_err_prefix(err, "%s", source);
    else ids[i] = (int32_t)d;
  }
  int a = 0, b = 0, got = rc ? 0 : cs_spec_set_participants(spec, ids, n, scratch, &a, &b);
  if (got == -1)
    rc = cs_err_set(err, CS_ECONSTRAINT,
                    "%s: C5: participants[%d] = %d repeats participants[%d]: participants must be "
                    "distinct",
                    source, b, ids[b], a);
  else if (got == -2)
    rc = cs_err_set(err, CS_EINVAL,
                    "%s: field 'participants': %d ids in %d runs of consecutive ids; a list of more "
                    "than %d ids is kept as its sorted set in at most %d runs",
                    source, n, a, CS_MAX_LISTED_PARTICIPANTS, CS_MAX_PARTICIPANT_RUNS);
  free(ids);
  free(scratch);
  return rc;
}

int cs_config_spec_from_json(const cJSON *obj, const char *source, cs_spec *out, cs_err *err) {
  cs_spec spec;
  memset(&spec, 0, sizeof spec);
  int rc = cs_fields_load(spec_fields, obj, source, spec_extra, NULL, &spec, err);
  if (rc) return rc;

  const char *enum_keys[] = {"primitive", "algorithm"};
  for (int k = 0; k < 2; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, enum_keys[k]);
    if (!v)
      return cs_err_set(err, CS_EINVAL, "%s: missing required field '%s'", source, enum_keys[k]);
    char got[96];
    cs_json_describe(v, got, sizeof got);
    if (!cJSON_IsString(v))
      return cs_err_set(err, CS_EINVAL, "%s: field '%s': expected a string, got %s", source,
                        enum_keys[k], got);
    if (k == 0 && cs_primitive_parse(v->valuestring, &spec.primitive))
      return cs_err_set(err, CS_EINVAL,
                        "%s: field 'primitive': unknown primitive \"%.40s\" (valid: allreduce, "
                        "allgather, reducescatter, alltoall, p2p)",
                        source, v->valuestring);
    if (k == 1 && cs_algorithm_parse(v->valuestring, &spec.algorithm))
      return cs_err_set(err, CS_ECONSTRAINT,
                        "%s: C11: field 'algorithm' = \"%.40s\": only ring (allreduce, allgather, "
                        "reducescatter), pairwise (alltoall), direct (p2p), dimring and dimring_rsag "
                        "(allreduce) are supported",
                        source, v->valuestring);
  }

  const cJSON *parts = cJSON_GetObjectItemCaseSensitive(obj, "participants");
  if (!parts)
    return cs_err_set(err, CS_EINVAL, "%s: missing required field 'participants'", source);
  if ((rc = load_participants(parts, source, &spec, err))) return rc;

  const cJSON *chip = cJSON_GetObjectItemCaseSensitive(obj, "chip_spec_summary");
  if (!chip)
    return cs_err_set(err, CS_EINVAL, "%s: missing required field 'chip_spec_summary'", source);
  if (!cJSON_IsObject(chip)) {
    char got[96];
    cs_json_describe(chip, got, sizeof got);
    return cs_err_set(err, CS_EINVAL, "%s: field 'chip_spec_summary': expected an object, got %s",
                      source, got);
  }
  /* Free-form, but part of the cache key: it must have one meaning (C7 reads it too). */
  if (cs_json_strict(chip, "chip_spec_summary", err)) return cs_err_prefix(err, "%s", source);
  size_t need = cs_json_canonical(chip, spec.chip_spec_summary, sizeof spec.chip_spec_summary);
  if (need >= sizeof spec.chip_spec_summary)
    return cs_err_set(err, CS_EINVAL,
                      "%s: field 'chip_spec_summary': canonical form is %zu bytes, the limit is %zu",
                      source, need, sizeof spec.chip_spec_summary - 1);

  const cJSON *op = cJSON_GetObjectItemCaseSensitive(obj, "p2p_op");
  if (spec.primitive == CS_PRIM_P2P) {
    if (!op)
      return cs_err_set(err, CS_EINVAL, "%s: missing field 'p2p_op' (read | write), required for p2p",
                        source);
    if (!cJSON_IsString(op) ||
        (strcmp(op->valuestring, "read") != 0 && strcmp(op->valuestring, "write") != 0)) {
      char got[96];
      cs_json_describe(op, got, sizeof got);
      return cs_err_set(err, CS_EINVAL, "%s: field 'p2p_op': expected \"read\" or \"write\", got %s",
                        source, got);
    }
    spec.p2p_op = op->valuestring[0] == 'r' ? CS_P2P_READ : CS_P2P_WRITE;
  } else if (op) {
    return cs_err_set(err, CS_EINVAL, "%s: field 'p2p_op' applies only to primitive p2p, not %s",
                      source, cs_primitive_name(spec.primitive));
  }
  const cJSON *grid = cJSON_GetObjectItemCaseSensitive(obj, "grid");
  if (grid) {
    int dims = cJSON_IsArray(grid) ? cJSON_GetArraySize(grid) : 0;
    if (dims < 1 || dims > CS_MAX_GRID_DIMS)
      return cs_err_set(err, CS_EINVAL, "%s: field 'grid': expected an array of 1 to %d integers",
                        source, CS_MAX_GRID_DIMS);
    for (int d = 0; d < dims; d++) {
      double v;
      char key[16];
      snprintf(key, sizeof key, "grid[%d]", d);
      if (cs_json_integer(cJSON_GetArrayItem(grid, d), key, 1, INT_MAX, &v, err))
        return cs_err_prefix(err, "%s", source);
      spec.grid[d] = (int32_t)v;
    }
  }
  *out = spec;
  return CS_OK;
}

int cs_config_parse_file(const char *path, cJSON **out, cs_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return cs_err_set(err, CS_EIO, "file '%s': cannot open: %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *text = malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *bigger = realloc(text, cap *= 2);
    if (!bigger) free(text);
    text = bigger;
  }
  int read_error = ferror(f);
  fclose(f);
  if (!text) return cs_err_set(err, CS_ENOMEM, "file '%s': out of memory reading it", path);
  if (read_error) {
    free(text);
    return cs_err_set(err, CS_EIO, "file '%s': read error", path);
  }
  text[len] = '\0';
  size_t blank = strspn(text, " \t\r\n");
  if (blank == len) {
    free(text);
    return cs_err_set(err, CS_EPARSE, "file '%s': empty, expected a JSON object", path);
  }
  cJSON *json = NULL;
  int rc = cs_json_parse_text(text, len, &json, err);
  free(text);
  if (rc) return cs_err_prefix(err, "file '%s'", path);
  *out = json;
  return CS_OK;
}

int cs_config_load_file(const char *path, cs_from_json_fn fn, void *out, cs_err *err) {
  cJSON *json = NULL;
  int rc = cs_config_parse_file(path, &json, err);
  if (rc) return rc;
  char source[CS_PATH_MAX + 16];
  snprintf(source, sizeof source, "file '%s'", path);
  rc = fn(json, source, out, err);
  cJSON_Delete(json);
  return rc;
}

static int adapter_fn(const cJSON *j, const char *s, void *o, cs_err *e) {
  return cs_config_adapter_from_json(j, s, o, e);
}
static int spec_fn(const cJSON *j, const char *s, void *o, cs_err *e) {
  return cs_config_spec_from_json(j, s, o, e);
}

int cs_config_adapter_load(const char *path, cs_adapter_config *out, cs_err *err) {
  return cs_config_load_file(path, adapter_fn, out, err);
}
int cs_config_spec_load(const char *path, cs_spec *out, cs_err *err) {
  return cs_config_load_file(path, spec_fn, out, err);
}

size_t cs_config_adapter_serialize(const cs_adapter_config *cfg, uint8_t *buf, size_t cap,
                                   size_t used) {
  return cs_fields_serialize(adapter_fields, cfg, true, buf, cap, used);
}

cJSON *cs_config_adapter_to_json(const cs_adapter_config *cfg) {
  cJSON *obj = cJSON_CreateObject();
  if (obj) cs_fields_store(adapter_fields, cfg, obj, false);
  return obj;
}

cJSON *cs_config_spec_to_json(const cs_spec *spec) {
  cJSON *obj = cJSON_CreateObject();
  if (!obj) return NULL;
  cJSON_AddStringToObject(obj, "primitive", cs_primitive_name(spec->primitive));
  cJSON_AddStringToObject(obj, "algorithm", cs_algorithm_name(spec->algorithm));
  cs_fields_store(spec_fields, spec, obj, false);
  cJSON *parts = cJSON_AddArrayToObject(obj, "participants");
  for (int i = 0; parts && i < spec->num_participants; i++)
    cJSON_AddItemToArray(parts, cJSON_CreateNumber(cs_spec_participant(spec, i)));
  cJSON *chip = cJSON_Parse(spec->chip_spec_summary[0] ? spec->chip_spec_summary : "{}");
  if (chip) cJSON_AddItemToObject(obj, "chip_spec_summary", chip);
  if (spec->primitive == CS_PRIM_P2P)
    cJSON_AddStringToObject(obj, "p2p_op", cs_p2p_op_name(spec->p2p_op));
  /* the grid is part of the job (and its key) only for the algorithms that use it */
  if (spec->grid[0] && cs_algorithm_uses_grid(spec->algorithm)) {
    cJSON *g = cJSON_AddArrayToObject(obj, "grid");
    for (int d = 0; g && d < CS_MAX_GRID_DIMS && spec->grid[d]; d++)
      cJSON_AddItemToArray(g, cJSON_CreateNumber(spec->grid[d]));
  }
  return obj;
}
