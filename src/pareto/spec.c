/* Objectives and workload fields, from a sweep file's "pareto" section or from the command
 * line, checked as strictly as every other field: each fault names where it is, the value and
 * the rule, and nothing is guessed.  Both forms go through add_column, so they accept and refuse
 * exactly the same names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/pareto.h"

enum { AS_MIN, AS_MAX, AS_WORKLOAD };
static const char *const list_keys[] = {"minimize", "maximize", "workload"};

/* The list and position that already hold `name`, or -1. */
static int named_before(const cs_pareto_spec *s, const char *name, char *where, size_t cap) {
  for (size_t i = 0; i < s->num_objectives; i++)
    if (!strcmp(s->objective[i].name, name)) {
      snprintf(where, cap, "%s", s->maximize[i] ? "maximize" : "minimize");
      return 1;
    }
  for (size_t i = 0; i < s->num_workload; i++)
    if (!strcmp(s->workload[i].name, name)) {
      snprintf(where, cap, "workload");
      return 1;
    }
  return -1;
}

static int add_column(cs_pareto_spec *s, int as, const char *name, const char *where,
                      cs_err *err) {
  char other[16];
  if (named_before(s, name, other, sizeof other) > 0)
    return cs_err_set(err, CS_EINVAL, "%s: column '%s' is named twice (also in '%s'): a column "
                      "is one objective or one workload field", where, name, other);
  cs_pareto_column c;
  if (cs_pareto_column_find(name, &c, err)) return cs_err_prefix(err, "%s", where);
  if (as == AS_WORKLOAD) {
    if (c.measured)
      return cs_err_set(err, CS_EINVAL, "%s: column '%s' is a result: a workload is defined by "
                        "the job's inputs", where, name);
    if (s->num_workload == CS_PARETO_MAX_WORKLOAD)
      return cs_err_set(err, CS_EINVAL, "%s: at most %d workload fields", where,
                        CS_PARETO_MAX_WORKLOAD);
    s->workload[s->num_workload++] = c;
    return CS_OK;
  }
  if (!c.numeric)
    return cs_err_set(err, CS_EINVAL, "%s: column '%s' is text, not numeric: an objective must be "
                      "a number (a text column can be a workload field)", where, name);
  if (s->num_objectives == CS_PARETO_MAX_OBJECTIVES)
    return cs_err_set(err, CS_EINVAL, "%s: at most %d objectives", where, CS_PARETO_MAX_OBJECTIVES);
  s->maximize[s->num_objectives] = as == AS_MAX;
  s->objective[s->num_objectives++] = c;
  return CS_OK;
}

static int finish(cs_pareto_spec *s, const char *where, bool workload_given, cs_err *err) {
  if (!s->num_objectives)
    return cs_err_set(err, CS_EINVAL, "%s: no objective: name columns to minimize and/or to "
                      "maximize", where);
  if (workload_given) return CS_OK;
  char list[] = CS_PARETO_DEFAULT_WORKLOAD, *save = NULL;
  for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
    if (named_before(s, f, (char[16]){0}, 16) < 0 && add_column(s, AS_WORKLOAD, f, where, err))
      return err->code;
  return CS_OK;
}

int cs_pareto_spec_from_json(const cJSON *obj, const char *where, cs_pareto_spec *out,
                             cs_err *err) {
  memset(out, 0, sizeof *out);
  if (!cJSON_IsObject(obj)) return cs_err_set(err, CS_EINVAL, "%s: expected an object", where);
  for (const cJSON *it = obj->child; it; it = it->next) {
    int as = -1;
    for (int k = 0; k < 3; k++)
      if (!strcmp(it->string, list_keys[k])) as = k;
    if (as < 0)
      return cs_err_set(err, CS_EINVAL, "%s: unknown key '%s' (valid: minimize, maximize, "
                        "workload)", where, it->string);
    if (!cJSON_IsArray(it))
      return cs_err_set(err, CS_EINVAL, "%s.%s: expected an array of column names", where,
                        it->string);
    if (!it->child)
      return cs_err_set(err, CS_EINVAL, "%s.%s: empty list: name at least one column or leave "
                        "the key out", where, it->string);
    size_t k = 0;
    for (const cJSON *v = it->child; v; v = v->next, k++) {
      char at[160];
      snprintf(at, sizeof at, "%s.%s[%zu]", where, it->string, k);
      if (!cJSON_IsString(v))
        return cs_err_set(err, CS_EINVAL, "%s: expected a column name (a string)", at);
      if (add_column(out, as, v->valuestring, at, err)) return err->code;
    }
  }
  return finish(out, where, cJSON_GetObjectItemCaseSensitive(obj, "workload") != NULL, err);
}

static int add_list(cs_pareto_spec *s, int as, const char *list, cs_err *err) {
  if (!list || !*list) return CS_OK;
  char *copy = strdup(list), *save = NULL;
  if (!copy) return cs_err_set(err, CS_ENOMEM, "out of memory");
  int rc = CS_OK;
  for (char *f = strtok_r(copy, ",", &save); f && !rc; f = strtok_r(NULL, ",", &save)) {
    char at[32];
    snprintf(at, sizeof at, "--%s", list_keys[as]);
    rc = add_column(s, as, f, at, err);
  }
  free(copy);
  return rc;
}

int cs_pareto_spec_from_lists(const char *minimize, const char *maximize, const char *workload,
                              cs_pareto_spec *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  if (add_list(out, AS_MIN, minimize, err) || add_list(out, AS_MAX, maximize, err) ||
      add_list(out, AS_WORKLOAD, workload, err))
    return err->code;
  return finish(out, "objectives", workload && *workload, err);
}

void cs_pareto_spec_describe(const cs_pareto_spec *s, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int want = 0; want < 2; want++) {
    bool first = true;
    for (size_t i = 0; i < s->num_objectives && used < cap; i++) {
      if (s->maximize[i] != (want == 1)) continue;
      const cs_pareto_column *c = &s->objective[i];
      used += (size_t)snprintf(buf + used, cap - used, "%s%s%s%s%s%s", first && used ? "; " : "",
                               first ? (want ? "maximize " : "minimize ") : ", ", c->name,
                               c->unit ? " (" : "", c->unit ? c->unit : "", c->unit ? ")" : "");
      first = false;
    }
  }
  for (size_t i = 0; i < s->num_workload && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "; workload ",
                             s->workload[i].name);
}

bool cs_pareto_spec_measured(const cs_pareto_spec *s) {
  for (size_t i = 0; i < s->num_objectives; i++)
    if (s->objective[i].measured) return true;
  return false;
}
