/* Table-driven strict JSON loading: one row per field (key, type, bounds, meaning).  Unknown and
 * missing keys are errors by construction, and every message names the field and the value. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core_int.h"

/* Largest integer a JSON number (a double) holds exactly. */
#define CS_JSON_INT_MAX 9007199254740992.0

void cs_json_describe(const cJSON *v, char *buf, size_t cap) {
  if (!v) snprintf(buf, cap, "nothing");
  else if (cJSON_IsString(v)) snprintf(buf, cap, "string \"%.40s\"", v->valuestring);
  else if (cJSON_IsNumber(v)) snprintf(buf, cap, "number %.17g", v->valuedouble);
  else if (cJSON_IsBool(v)) snprintf(buf, cap, "boolean %s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsNull(v)) snprintf(buf, cap, "null");
  else if (cJSON_IsArray(v)) snprintf(buf, cap, "an array");
  else if (cJSON_IsObject(v)) snprintf(buf, cap, "an object");
  else snprintf(buf, cap, "an invalid value");
}

/* "field 'key': expected <what>, got <v described>".  Values are described only on this error
 * path: loading is on the hot path of every sweep's expansion. */
static int expected(const char *key, const char *what, const cJSON *v, cs_err *err) {
  char got[96];
  cs_json_describe(v, got, sizeof got);
  return cs_err_set(err, CS_EINVAL, "field '%s': expected %s, got %s", key, what, got);
}

int cs_json_integer(const cJSON *v, const char *key, double min, double max, double *out,
                    cs_err *err) {
  if (!cJSON_IsNumber(v)) return expected(key, "an integer", v, err);
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d)) return expected(key, "an integer", v, err);
  if (fabs(d) > CS_JSON_INT_MAX) {
    char got[96];
    cs_json_describe(v, got, sizeof got);
    return cs_err_set(err, CS_EINVAL, "field '%s': %s is too large to be exact (limit 2^53)",
                      key, got);
  }
  if (d < min || d > max)
    return cs_err_set(err, CS_EINVAL, "field '%s': %.0f is out of range [%.0f, %.0f]", key, d,
                      min, max);
  *out = d;
  return CS_OK;
}

static const char *const type_names[] = {"string", "integer", "integer", "number", "boolean"};

const char *cs_field_type_name(cs_ftype type) { return type_names[type]; }

static bool listed(const char *const *names, const char *key) {
  for (; names && *names; names++)
    if (strcmp(*names, key) == 0) return true;
  return false;
}

static const cs_field *find_field(const cs_field *table, const char *key) {
  for (; table->key; table++)
    if (strcmp(table->key, key) == 0) return table;
  return NULL;
}

void cs_fields_list(const cs_field *table, const char *const *extra, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (; table->key; table++)
    used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%s", used ? ", " : "",
                             table->key);
  for (; extra && *extra; extra++)
    used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%s", used ? ", " : "",
                             *extra);
}

static int load_one(const cs_field *f, const cJSON *v, void *target, cs_err *err) {
  char *slot = (char *)target + f->offset;
  double d;
  switch (f->type) {
    case CS_F_STRING: {
      if (!cJSON_IsString(v)) return expected(f->key, "a string", v, err);
      size_t n = strlen(v->valuestring);
      if (n == 0 && !(f->flags & CS_FIELD_OPTIONAL)) /* optional: "" is the same as absent */
        return cs_err_set(err, CS_EINVAL, "field '%s': must not be empty", f->key);
      if (n >= f->size)
        return cs_err_set(err, CS_EINVAL, "field '%s': \"%.40s...\" is %zu characters, the limit is %zu",
                          f->key, v->valuestring, n, f->size - 1);
      memcpy(slot, v->valuestring, n + 1);
      return CS_OK;
    }
    case CS_F_INT:
      if (cs_json_integer(v, f->key, f->min, f->max, &d, err)) return err ? err->code : CS_EINVAL;
      *(int *)slot = (int)d;
      return CS_OK;
    case CS_F_U64:
      if (cs_json_integer(v, f->key, f->min, f->max, &d, err)) return err ? err->code : CS_EINVAL;
      *(uint64_t *)slot = (uint64_t)d;
      return CS_OK;
    case CS_F_DOUBLE:
      if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return expected(f->key, "a number", v, err);
      if (v->valuedouble < f->min || v->valuedouble > f->max)
        return cs_err_set(err, CS_EINVAL, "field '%s': %.17g is out of range [%g, %g]", f->key,
                          v->valuedouble, f->min, f->max);
      *(double *)slot = v->valuedouble;
      return CS_OK;
    case CS_F_BOOL:
      if (!cJSON_IsBool(v)) return expected(f->key, "true or false", v, err);
      *(bool *)slot = cJSON_IsTrue(v);
      return CS_OK;
  }
  return cs_err_set(err, CS_EINTERNAL, "field '%s': unknown field type", f->key);
}

int cs_fields_load(const cs_field *table, const cJSON *obj, const char *source,
                   const char *const *extra, const char *const *optional, void *target,
                   cs_err *err) {
  if (!cJSON_IsObject(obj)) {
    char got[96];
    cs_json_describe(obj, got, sizeof got);
    return cs_err_set(err, CS_EINVAL, "%s: expected a JSON object, got %s", source, got);
  }
  for (const cJSON *item = obj->child; item; item = item->next) {
    /* Every key, the caller's extras included: lookups see only the first of two. */
    for (const cJSON *dup = item->next; dup; dup = dup->next)
      if (dup->string && strcmp(dup->string, item->string) == 0)
        return cs_err_set(err, CS_EINVAL, "%s: field '%s' appears twice", source, item->string);
    if (listed(extra, item->string)) continue;
    const cs_field *f = find_field(table, item->string);
    if (!f) {
      char valid[512];
      cs_fields_list(table, extra, valid, sizeof valid);
      return cs_err_set(err, CS_EINVAL, "%s: unknown field '%s' (valid fields: %s)", source,
                        item->string, valid);
    }
    if (load_one(f, item, target, err)) return cs_err_prefix(err, "%s", source);
  }
  for (const cs_field *f = table; f->key; f++)
    if (!cJSON_GetObjectItemCaseSensitive(obj, f->key) && !(f->flags & CS_FIELD_OPTIONAL) &&
        !listed(optional, f->key))
      return cs_err_set(err, CS_EINVAL, "%s: missing required field '%s' (%s: %s)", source,
                        f->key, type_names[f->type], f->meaning);
  return CS_OK;
}

void cs_fields_store(const cs_field *table, const void *target, cJSON *obj, bool key_only) {
  for (; table->key; table++) {
    if (key_only && (table->flags & CS_FIELD_NO_KEY)) continue;
    const char *slot = (const char *)target + table->offset;
    switch (table->type) {
      case CS_F_STRING: cJSON_AddStringToObject(obj, table->key, slot); break;
      case CS_F_INT: cJSON_AddNumberToObject(obj, table->key, *(const int *)slot); break;
      case CS_F_U64:
        cJSON_AddNumberToObject(obj, table->key, (double)*(const uint64_t *)slot);
        break;
      case CS_F_DOUBLE: cJSON_AddNumberToObject(obj, table->key, *(const double *)slot); break;
      case CS_F_BOOL: cJSON_AddBoolToObject(obj, table->key, *(const bool *)slot); break;
    }
  }
}

/* Appends n bytes to buf[*used..cap); past cap only counts. */
static void put(uint8_t *buf, size_t cap, size_t *used, const void *p, size_t n) {
  if (*used + n <= cap) memcpy(buf + *used, p, n);
  *used += n;
}

/* Little-endian bytes of v, whatever the host. */
static void put_u64(uint8_t *buf, size_t cap, size_t *used, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  put(buf, cap, used, b, 8);
}

void cs_bytes_u64(uint8_t *buf, size_t cap, size_t *used, uint64_t v) { put_u64(buf, cap, used, v); }

void cs_bytes_i32s(uint8_t *buf, size_t cap, size_t *used, const int32_t *v, size_t n) {
  if (*used + 4 * n <= cap)
    for (size_t i = 0; i < n; i++)
      for (int k = 0; k < 4; k++) buf[*used + 4 * i + (size_t)k] = (uint8_t)((uint32_t)v[i] >> (8 * k));
  *used += 4 * n;
}

void cs_bytes_double(uint8_t *buf, size_t cap, size_t *used, double v) {
  if (v == 0) v = 0; /* -0.0 and 0.0 are one value */
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_u64(buf, cap, used, bits);
}

void cs_bytes_text(uint8_t *buf, size_t cap, size_t *used, const char *s, size_t max) {
  size_t n = strnlen(s, max);
  put_u64(buf, cap, used, n);
  put(buf, cap, used, s, n);
}

size_t cs_fields_serialize(const cs_field *table, const void *target, bool key_only, uint8_t *buf,
                           size_t cap, size_t used) {
  for (; table->key; table++) {
    if (key_only && (table->flags & CS_FIELD_NO_KEY)) continue;
    const char *slot = (const char *)target + table->offset;
    switch (table->type) {
      case CS_F_STRING: cs_bytes_text(buf, cap, &used, slot, table->size); break;
      case CS_F_INT: put_u64(buf, cap, &used, (uint64_t)(int64_t) * (const int *)slot); break;
      case CS_F_U64: put_u64(buf, cap, &used, *(const uint64_t *)slot); break;
      case CS_F_DOUBLE: cs_bytes_double(buf, cap, &used, *(const double *)slot); break;
      case CS_F_BOOL: put_u64(buf, cap, &used, *(const bool *)slot); break;
    }
  }
  return used;
}
