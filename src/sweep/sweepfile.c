/* The sweep file's own structure: top-level keys, the base objects and the matrix axes.  Every
 * fault here is an error of the whole file (naming the key or axis); faults of a combination are
 * left to the strict loaders, job by job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "sweep_int.h"

const char *const cs_sweep_sections[3] = {"spec", "adapter", "engine"};

/* The engine section's keys: the common ones plus one options object per registered engine. */
static void engine_section_fields(cs_field_doc *out, size_t cap) {
  size_t n = 0;
  out[n++] = (cs_field_doc){"name", "string", "engine"};
  out[n++] = (cs_field_doc){"deadlock_guard_ticks", "integer", "deadlock guard"};
  out[n++] = (cs_field_doc){"memory_limit_bytes", "integer", "a job's memory bound"};
  for (const cs_engine_ops *const *e = cs_engine_list(); *e && n + 1 < cap; e++)
    out[n++] = (cs_field_doc){(*e)->name, "object", (*e)->summary};
  out[n] = (cs_field_doc){NULL, NULL, NULL};
}

static const cs_field_doc *section_fields(int sec, cs_field_doc *scratch, size_t cap) {
  switch (sec) {
    case CS_SEC_SPEC: return cs_config_spec_fields();
    case CS_SEC_ADAPTER: return cs_config_adapter_fields();
    default: engine_section_fields(scratch, cap); return scratch;
  }
}

static int only_keys(const cJSON *obj, const char *const *allowed, const char *where, cs_err *err) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    bool ok = false;
    for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, it->string) == 0;
    if (ok) continue;
    char list[256] = "";
    size_t used = 0;
    for (const char *const *a = allowed; *a; a++)
      used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                               used ? ", " : "", *a);
    return cs_err_set(err, CS_EINVAL, "%s: unknown key '%s' (valid: %s)", where, it->string, list);
  }
  return CS_OK;
}

/* "section.key[.sub...]": the section and key must be known, deeper levels must exist in base. */
static int check_path(const cs_sweep_def *def, const char *path, const char *where, cs_err *err) {
  char buf[256];
  if (strlen(path) >= sizeof buf)
    return cs_err_set(err, CS_EINVAL, "%s: field path is too long", where);
  /* "spec..msg_size_bytes" would otherwise read as spec.msg_size_bytes and slip past the check
   * that no two axes set one field. */
  size_t len = strlen(path);
  if (len == 0 || path[0] == '.' || path[len - 1] == '.' || strstr(path, ".."))
    return cs_err_set(err, CS_EINVAL, "%s: field '%s' has an empty component", where, path);
  snprintf(buf, sizeof buf, "%s", path);
  char *save = NULL, *seg = strtok_r(buf, ".", &save);
  int sec = -1;
  for (int s = 0; s < 3 && seg; s++)
    if (strcmp(seg, cs_sweep_sections[s]) == 0) sec = s;
  if (sec < 0)
    return cs_err_set(err, CS_EINVAL,
                      "%s: field '%s' must start with spec., adapter. or engine.", where, path);
  char *key = strtok_r(NULL, ".", &save);
  if (!key) return cs_err_set(err, CS_EINVAL, "%s: field '%s' names no field", where, path);
  bool known = false;
  cs_field_doc scratch[16];
  const cs_field_doc *fields = section_fields(sec, scratch, sizeof scratch / sizeof scratch[0]);
  for (const cs_field_doc *f = fields; f->key && !known; f++)
    known = strcmp(f->key, key) == 0;
  if (!known) {
    char list[1024] = "";
    size_t used = 0;
    for (const cs_field_doc *f = fields; f->key; f++)
      used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                               used ? ", " : "", f->key);
    return cs_err_set(err, CS_EINVAL, "%s: unknown field '%s' (%s fields: %s)", where, path,
                      cs_sweep_sections[sec], list);
  }
  const cJSON *node = cJSON_GetObjectItemCaseSensitive(def->base[sec], key);
  for (char *sub = strtok_r(NULL, ".", &save); sub; sub = strtok_r(NULL, ".", &save)) {
    node = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, sub) : NULL;
    if (!node)
      return cs_err_set(err, CS_EINVAL,
                        "%s: unknown field '%s' (nested fields must exist in base.%s)", where, path,
                        cs_sweep_sections[sec]);
  }
  return CS_OK;
}

/* True when setting one path changes what the other sets: the same field, or one is a field
 * and the other a path inside it ("spec.chip_spec_summary" and "spec.chip_spec_summary.chip"). */
static bool paths_overlap(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;
  if (strncmp(a, b, n) != 0) return false;
  return la == lb || (la < lb ? b[n] : a[n]) == '.';
}

static int parse_axis(cs_sweep_def *def, const cJSON *a, size_t i, cs_sweep_axis *axis,
                      cs_err *err) {
  char where[64];
  snprintf(where, sizeof where, "matrix[%zu]", i);
  static const char *const keys[] = {"field", "fields", "values", NULL};
  if (!cJSON_IsObject(a)) return cs_err_set(err, CS_EINVAL, "%s: expected an object", where);
  if (only_keys(a, keys, where, err)) return err->code;
  const cJSON *field = cJSON_GetObjectItemCaseSensitive(a, "field");
  const cJSON *fields = cJSON_GetObjectItemCaseSensitive(a, "fields");
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(a, "values");
  if (!field == !fields)
    return cs_err_set(err, CS_EINVAL, "%s: give exactly one of 'field' (a string) or 'fields' "
                      "(an array of strings, coupled)", where);
  if (field) {
    if (!cJSON_IsString(field))
      return cs_err_set(err, CS_EINVAL, "%s: 'field' must be a string", where);
    axis->num_fields = 1;
    axis->paths[0] = strdup(field->valuestring);
  } else {
    axis->coupled = true;
    int n = cJSON_IsArray(fields) ? cJSON_GetArraySize(fields) : 0;
    if (n < 1 || n > CS_SWEEP_MAX_AXIS_FIELDS)
      return cs_err_set(err, CS_EINVAL, "%s: 'fields' must be an array of 1 to %d strings", where,
                        CS_SWEEP_MAX_AXIS_FIELDS);
    for (int k = 0; k < n; k++) {
      const cJSON *f = cJSON_GetArrayItem(fields, k);
      if (!cJSON_IsString(f))
        return cs_err_set(err, CS_EINVAL, "%s: fields[%d] must be a string", where, k);
      axis->paths[axis->num_fields++] = strdup(f->valuestring);
    }
  }
  for (size_t k = 0; k < axis->num_fields; k++) {
    if (!axis->paths[k]) return cs_err_set(err, CS_ENOMEM, "%s: out of memory", where);
    if (check_path(def, axis->paths[k], where, err)) return err->code;
    for (size_t e = 0; e < k; e++)
      if (paths_overlap(axis->paths[e], axis->paths[k]))
        return cs_err_set(err, CS_EINVAL, "%s: fields[%zu] '%s' %s fields[%zu] '%s'", where, k,
                          axis->paths[k],
                          strcmp(axis->paths[e], axis->paths[k]) ? "overlaps" : "repeats", e,
                          axis->paths[e]);
  }
  if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) < 1)
    return cs_err_set(err, CS_EINVAL, "%s: 'values' must be a non-empty array", where);
  axis->values = values;
  axis->num_values = (size_t)cJSON_GetArraySize(values);
  if (axis->coupled) {
    size_t k = 0;
    for (const cJSON *v = values->child; v; v = v->next, k++)
      if (!cJSON_IsArray(v) || (size_t)cJSON_GetArraySize(v) != axis->num_fields)
        return cs_err_set(err, CS_EINVAL,
                          "%s: values[%zu] must be an array of %zu values, one per field", where,
                          k, axis->num_fields);
  }
  return CS_OK;
}

/* The job count, or CS_EINVAL saying how many there are and how to split them: the axes'
 * product may be far beyond any integer (10^21), so it is counted as a double. */
static int count_jobs(cs_sweep_def *def, cs_err *err) {
  double total = 1;
  size_t widest = 0;
  for (size_t a = 0; a < def->num_axes; a++) {
    total *= (double)def->axes[a].num_values;
    if (def->axes[a].num_values > def->axes[widest].num_values) widest = a;
  }
  if (total <= CS_SWEEP_MAX_JOBS) {
    def->num_jobs = (size_t)total;
    return CS_OK;
  }
  /* the split into fewest files along one axis, when one is enough */
  size_t by = widest;
  for (size_t a = 0; a < def->num_axes; a++)
    if (total / (double)def->axes[a].num_values <= CS_SWEEP_MAX_JOBS &&
        def->axes[a].num_values < def->axes[by].num_values)
      by = a;
  const cs_sweep_axis *w = &def->axes[by];
  double each = total / (double)w->num_values;
  char how[256];
  if (each <= CS_SWEEP_MAX_JOBS)
    snprintf(how, sizeof how, "one file per value of matrix[%zu] ('%s', %zu values) has %.0f jobs",
             by, w->paths[0], w->num_values, each);
  else
    snprintf(how, sizeof how, "even one file per value of matrix[%zu] ('%s', the longest axis, "
             "%zu values) has %.4g jobs: split along several axes", by, w->paths[0],
             w->num_values, each);
  return cs_err_set(err, CS_EINVAL,
                    "the matrix has %.17g jobs, at most %u fit one sweep file: split it into "
                    "several sweep files (%s); they may all write the same --out file",
                    total, CS_SWEEP_MAX_JOBS, how);
}

static int cmp_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends a warning for each value of the axis that repeats an earlier one (its jobs would
 * repeat and run once: the sweep counts them as duplicates).  CS_ENOMEM or CS_OK. */
static int note_repeats(cs_sweep_def *def, const cs_sweep_axis *axis, size_t index) {
  size_t n = axis->num_values, k = 0;
  char **texts = calloc(n ? n : 1, sizeof *texts);
  int rc = texts ? CS_OK : CS_ENOMEM;
  for (const cJSON *v = axis->values->child; v && !rc; v = v->next, k++)
    if (!(texts[k] = cs_sweep_canonical_text(v))) rc = CS_ENOMEM;
  if (!rc) qsort(texts, n, sizeof *texts, cmp_text);
  size_t repeats = 0;
  const char *first = NULL;
  for (size_t i = 1; !rc && i < n; i++)
    if (!strcmp(texts[i], texts[i - 1]) && repeats++ == 0) first = texts[i];
  if (!rc && repeats) {
    char line[512];
    int len = snprintf(line, sizeof line,
                       "matrix[%zu] ('%s'%s): %zu value%s repeat%s an earlier one (%.60s%s); "
                       "each repeated job runs once\n",
                       index, axis->paths[0], axis->num_fields > 1 ? ", ..." : "", repeats,
                       repeats == 1 ? "" : "s", repeats == 1 ? "s" : "", first,
                       strlen(first) > 60 ? "..." : "");
    size_t old = def->warnings ? strlen(def->warnings) : 0;
    char *grown = len > 0 ? realloc(def->warnings, old + (size_t)len + 1) : NULL;
    if (!grown) rc = CS_ENOMEM;
    else memcpy((def->warnings = grown) + old, line, (size_t)len + 1);
  }
  for (size_t i = 0; texts && i < n; i++) free(texts[i]);
  free(texts);
  return rc;
}

static int parse_def(cs_sweep_def *def, cs_err *err) {
  static const char *const top[] = {"name", "description", "base", "matrix", "pareto", "refine",
                                    NULL};
  static const char *const base_keys[] = {"spec", "adapter", "engine", NULL};
  const cJSON *doc = def->doc;
  if (!cJSON_IsObject(doc)) return cs_err_set(err, CS_EINVAL, "expected a JSON object");
  if (only_keys(doc, top, "top level", err) || cs_sweep_study_check(doc, err)) return err->code;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(doc, "name");
  if (!cJSON_IsString(name) || !name->valuestring[0] ||
      strlen(name->valuestring) >= CS_SWEEP_NAME_MAX)
    return cs_err_set(err, CS_EINVAL, "'name' must be a string of 1 to %d characters",
                      CS_SWEEP_NAME_MAX - 1);
  snprintf(def->name, sizeof def->name, "%s", name->valuestring);
  const cJSON *desc = cJSON_GetObjectItemCaseSensitive(doc, "description");
  if (desc && !cJSON_IsString(desc))
    return cs_err_set(err, CS_EINVAL, "'description' must be a string");
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(doc, "base");
  if (!cJSON_IsObject(base)) return cs_err_set(err, CS_EINVAL, "missing object 'base'");
  if (only_keys(base, base_keys, "base", err)) return err->code;
  for (int s = 0; s < 3; s++) {
    def->base[s] = cJSON_GetObjectItemCaseSensitive(base, cs_sweep_sections[s]);
    if (!cJSON_IsObject(def->base[s]))
      return cs_err_set(err, CS_EINVAL, "missing object 'base.%s'", cs_sweep_sections[s]);
  }
  const cJSON *matrix = cJSON_GetObjectItemCaseSensitive(doc, "matrix");
  if (!cJSON_IsArray(matrix)) return cs_err_set(err, CS_EINVAL, "missing array 'matrix'");
  size_t n = (size_t)cJSON_GetArraySize(matrix);
  def->axes = calloc(n ? n : 1, sizeof *def->axes);
  if (!def->axes) return cs_err_set(err, CS_ENOMEM, "out of memory");
  for (const cJSON *a = matrix->child; a; a = a->next) {
    cs_sweep_axis *axis = &def->axes[def->num_axes];
    def->num_axes++;
    if (parse_axis(def, a, def->num_axes - 1, axis, err)) return err->code;
    for (size_t prev = 0; prev + 1 < def->num_axes; prev++)
      for (size_t p = 0; p < def->axes[prev].num_fields; p++)
        for (size_t q = 0; q < axis->num_fields; q++) {
          const char *mine = axis->paths[q], *theirs = def->axes[prev].paths[p];
          if (strcmp(theirs, mine) == 0)
            return cs_err_set(err, CS_EINVAL, "matrix[%zu]: field '%s' is already an axis "
                              "(matrix[%zu])", def->num_axes - 1, mine, prev);
          if (paths_overlap(theirs, mine))
            return cs_err_set(err, CS_EINVAL, "matrix[%zu]: field '%s' overlaps '%s' of "
                              "matrix[%zu]: two axes would set one field", def->num_axes - 1,
                              mine, theirs, prev);
        }
    if (note_repeats(def, axis, def->num_axes - 1)) return cs_err_set(err, CS_ENOMEM, "out of memory");
  }
  return count_jobs(def, err);
}

int cs_sweep_def_parse(cJSON *doc, const char *source, cs_sweep_def *def, cs_err *err) {
  memset(def, 0, sizeof *def);
  def->doc = doc;
  if (cs_json_strict(doc, "", err) || parse_def(def, err)) {
    cs_sweep_def_free(def);
    return cs_err_prefix(err, "sweep file '%s'", source);
  }
  return CS_OK;
}

void cs_sweep_def_free(cs_sweep_def *def) {
  if (!def) return;
  for (size_t i = 0; i < def->num_axes; i++)
    for (size_t k = 0; k < def->axes[i].num_fields; k++) free(def->axes[i].paths[k]);
  free(def->axes);
  free(def->warnings);
  cJSON_Delete(def->doc);
  memset(def, 0, sizeof *def);
}

int cs_sweep_study_load(const char *path, const char *calibration, cs_sweep_study *out,
                        cs_err *err) {
  memset(out, 0, sizeof *out);
  cJSON *doc = NULL;
  if (cs_config_parse_file(path, &doc, err)) return cs_err_prefix(err, "sweep file");
  cs_sweep_def def; /* the whole file as strictly as a sweep reads it, then its sections */
  if (cs_sweep_def_parse(doc, path, &def, err)) return err->code; /* frees doc */
  int rc = cs_sweep_study_read(def.doc, path, calibration, out, err);
  cs_sweep_def_free(&def);
  return rc;
}

int cs_sweep_load_doc(cJSON *doc, const char *source, cs_sweep *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  cs_sweep_def def;
  if (cs_sweep_def_parse(doc, source, &def, err)) return err->code;
  int rc = cs_sweep_expand(&def, out, err);
  if (!rc && (rc = cs_sweep_check_base(&def, out, err))) cs_sweep_free(out);
  cs_sweep_def_free(&def);
  if (rc) return cs_err_prefix(err, "sweep file '%s'", source);
  return CS_OK;
}

int cs_sweep_parse(const char *text, const char *source, cs_sweep *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  cJSON *doc = NULL;
  if (cs_json_parse_text(text, strlen(text), &doc, err))
    return cs_err_prefix(err, "sweep file '%s'", source);
  return cs_sweep_load_doc(doc, source, out, err);
}

int cs_sweep_load(const char *path, cs_sweep *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  cJSON *doc = NULL;
  if (cs_config_parse_file(path, &doc, err)) return cs_err_prefix(err, "sweep file");
  return cs_sweep_load_doc(doc, path, out, err);
}
