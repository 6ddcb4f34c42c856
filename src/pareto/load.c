/* A file's fronts: every done row whose checksum holds and that has a value for every
 * objective becomes a point of its (workload, engine) group; each group's front follows.  Rows
 * are read in blocks, so memory grows with the points (a few hundred bytes each), not with the
 * rows' JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/pareto.h"

#define BLOCK 512
#define SEP '\x1f'

static bool wanted(const cs_pareto_filter *f, const cs_store_job_row *j) {
  char s[CS_NAME_MAX];
  if (f->engine && (cs_store_get_text(j->engine, sizeof j->engine, s, sizeof s), strcmp(s, f->engine)))
    return false;
  if (f->primitive &&
      (cs_store_get_text(j->primitive, sizeof j->primitive, s, sizeof s), strcmp(s, f->primitive)))
    return false;
  if (f->sweep && (cs_store_get_text(j->sweep, sizeof j->sweep, s, sizeof s), strcmp(s, f->sweep)))
    return false;
  return true;
}

/* SHA-256 of the canonical {adapter, spec} of the stored JSON (of the raw text when it does not
 * parse: a JSON cut at the column's width). */
static void design_id(const cs_store_job_row *j, char out[17]) {
  char text[CS_STORE_JSON_LEN + 1], hex[CS_KEY_HEX];
  cs_store_get_text(j->job_json, sizeof j->job_json, text, sizeof text);
  cJSON *doc = cJSON_Parse(text);
  char *canon = NULL;
  if (doc) {
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "engine");
    size_t n = cs_json_canonical(doc, NULL, 0);
    if ((canon = malloc(n + 1))) cs_json_canonical(doc, canon, n + 1);
    cJSON_Delete(doc);
  }
  const char *what = canon ? canon : text;
  cs_sha256_hex(what, strlen(what), hex);
  memcpy(out, hex, 16);
  out[16] = '\0';
  free(canon);
}

static char *design_text(const cs_pareto_set *set, const cs_pareto_row *r) {
  size_t cap = 256, used = 0;
  char *s = malloc(cap);
  for (size_t i = 0; s && i < set->num_design; i++) {
    char v[CS_STORE_PARTS_LEN + 1] = "";
    const cs_pareto_column *c = &set->design_col[i];
    if (!c->numeric || !isnan(cs_pareto_value(c, r))) cs_pareto_format(c, r, v, sizeof v);
    size_t need = used + strlen(v) + 2;
    if (need > cap) {
      while (cap < need) cap *= 2;
      char *t = realloc(s, cap);
      if (!t) {
        free(s);
        return NULL;
      }
      s = t;
    }
    memcpy(s + used, v, strlen(v));
    used += strlen(v);
    s[used++] = i + 1 < set->num_design ? SEP : '\0';
  }
  if (s && !set->num_design) s[0] = '\0';
  return s;
}

void cs_pareto_field(const char *list, size_t i, char *buf, size_t cap) {
  const char *at = list;
  for (size_t k = 0; at && k < i; k++) {
    at = strchr(at, SEP);
    if (at) at++;
  }
  size_t n = 0;
  if (at) {
    const char *end = strchr(at, SEP);
    n = end ? (size_t)(end - at) : strlen(at);
  }
  if (n >= cap) n = cap - 1;
  if (at) memcpy(buf, at, n);
  buf[n] = '\0';
}

void cs_pareto_point_design(const cs_pareto_point *p, size_t i, char *buf, size_t cap) {
  cs_pareto_field(p->design, i, buf, cap);
}

/* A point on its way into the set: the group's name travels with it until the sort. */
typedef struct staged {
  cs_pareto_point p;
  char workload[512];
  char values[512];
  char engine[16];
} staged;

/* Workload order: field by field, numbers as numbers (4096 before 65536), then the engine,
 * then the row. */
static int by_group(const cs_pareto_spec *spec, const staged *x, const staged *y) {
  for (size_t k = 0; k < spec->num_workload; k++) {
    char a[CS_STORE_PARTS_LEN + 1], b[CS_STORE_PARTS_LEN + 1];
    cs_pareto_field(x->values, k, a, sizeof a);
    cs_pareto_field(y->values, k, b, sizeof b);
    int c;
    if (spec->workload[k].numeric) {
      double da = strtod(a, NULL), db = strtod(b, NULL);
      c = da < db ? -1 : da > db;
    } else {
      c = strcmp(a, b);
    }
    if (c) return c;
  }
  int c = strcmp(x->engine, y->engine);
  if (!c) c = x->p.row < y->p.row ? -1 : x->p.row > y->p.row;
  return c;
}

/* Merge sort of the indices order[0 .. n) by by_group (qsort has no context argument). */
static void sort_staged(const cs_pareto_spec *spec, const staged *st, size_t *order, size_t *tmp,
                        size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  sort_staged(spec, st, order, tmp, h);
  sort_staged(spec, st, order + h, tmp, n - h);
  size_t i = 0, j = h, k = 0;
  while (i < h || j < n)
    tmp[k++] = j >= n || (i < h && by_group(spec, &st[order[i]], &st[order[j]]) <= 0) ? order[i++]
                                                                                       : order[j++];
  memcpy(order, tmp, n * sizeof *order);
}

/* One done, verified row into stage[*n] (when it has every objective). */
static int stage_row(cs_pareto_set *set, uint64_t row, const cs_store_job_row *j,
                     const cs_store_result_row *res, staged *st) {
  cs_pareto_row r = {j, res, NULL};
  memset(st, 0, sizeof *st);
  cs_pareto_values(&set->spec, &r, st->p.value);
  for (size_t k = 0; k < set->spec.num_objectives; k++)
    if (isnan(st->p.value[k])) return CS_ENOTFOUND;
  st->p.row = row;
  cs_store_get_text(j->key, sizeof j->key, st->p.key, sizeof st->p.key);
  design_id(j, st->p.design_id);
  cs_pareto_workload_text(&set->spec, &r, '\0', st->workload, sizeof st->workload);
  cs_pareto_workload_text(&set->spec, &r, SEP, st->values, sizeof st->values);
  cs_store_get_text(j->engine, sizeof j->engine, st->engine, sizeof st->engine);
  if (!(st->p.design = design_text(set, &r))) return CS_ENOMEM;
  return CS_OK;
}

static int read_rows(cs_store *st, const cs_pareto_filter *f, cs_pareto_set *set, staged **out,
                     size_t *count, cs_err *err) {
  cs_store_job_row *jobs = malloc(BLOCK * sizeof *jobs);
  cs_store_result_row *res = malloc(BLOCK * sizeof *res);
  size_t n = 0, cap = 0;
  staged *stage = NULL;
  int rc = jobs && res ? CS_OK : cs_err_set(err, CS_ENOMEM, "out of memory");
  static const char *const no_error[] = {"error", NULL};
  for (uint64_t first = 0; !rc && first < set->rows; first += BLOCK) {
    uint64_t b = set->rows - first < BLOCK ? set->rows - first : BLOCK;
    memset(res, 0, b * sizeof *res); /* the error text is not read: a done row has none */
    if (cs_store_read_jobs(st, first, b, jobs, err) ||
        cs_store_read_rows_without(st, false, no_error, first, b, res, err)) {
      rc = err->code;
      break;
    }
    for (uint64_t k = 0; k < b && !rc; k++) {
      if (!wanted(f, &jobs[k])) {
        set->filtered++;
        continue;
      }
      if (res[k].status != CS_STORE_DONE) {
        set->not_done++;
        continue;
      }
      if (res[k].checksum != cs_store_row_checksum(first + k, jobs[k].key, &res[k])) {
        set->corrupt++;
        continue;
      }
      if (n == cap) {
        size_t nc = cap ? 2 * cap : 256;
        staged *t = realloc(stage, nc * sizeof *t);
        if (!t) {
          rc = cs_err_set(err, CS_ENOMEM, "%zu points: out of memory", n);
          break;
        }
        stage = t;
        cap = nc;
      }
      int src = stage_row(set, first + k, &jobs[k], &res[k], &stage[n]);
      if (src == CS_ENOMEM) rc = cs_err_set(err, CS_ENOMEM, "%zu points: out of memory", n);
      else if (src) set->missing++;
      else n++;
    }
  }
  free(jobs);
  free(res);
  *out = stage;
  *count = n;
  return rc;
}

/* Groups the sorted points and computes each group's front and varying design columns. */
static int build_groups(cs_pareto_set *set, staged *stage, size_t n, cs_err *err) {
  size_t *order = malloc((n ? n : 1) * sizeof *order), *tmp = malloc((n ? n : 1) * sizeof *tmp);
  set->points = calloc(n ? n : 1, sizeof *set->points);
  set->groups = calloc(n ? n : 1, sizeof *set->groups);
  size_t m = set->spec.num_objectives;
  double *v = malloc((n ? n : 1) * m * sizeof *v);
  uint8_t *front = malloc(n ? n : 1);
  if (!set->points || !set->groups || !v || !front || !order || !tmp) {
    free(v);
    free(front);
    free(order);
    free(tmp);
    return cs_err_set(err, CS_ENOMEM, "%zu points: out of memory", n);
  }
  for (size_t i = 0; i < n; i++) order[i] = i;
  sort_staged(&set->spec, stage, order, tmp, n);
  for (size_t i = 0; i < n; i++) {
    const staged *at = &stage[order[i]], *prev = i ? &stage[order[i - 1]] : NULL;
    set->points[i] = at->p;
    stage[order[i]].p.design = NULL; /* moved */
    if (!prev || strcmp(prev->values, at->values) || strcmp(prev->engine, at->engine)) {
      cs_pareto_group *g = &set->groups[set->num_groups++];
      snprintf(g->workload, sizeof g->workload, "%s", at->workload);
      snprintf(g->values, sizeof g->values, "%s", at->values);
      snprintf(g->engine, sizeof g->engine, "%s", at->engine);
      g->first = i;
    }
    set->points[i].group = set->num_groups - 1;
    set->groups[set->num_groups - 1].count++;
  }
  set->num_points = n;
  for (size_t g = 0; g < set->num_groups; g++) {
    cs_pareto_group *gr = &set->groups[g];
    cs_pareto_point *pts = set->points + gr->first;
    for (size_t i = 0; i < gr->count; i++) cs_pareto_minimization(&set->spec, pts[i].value, v + i * m);
    cs_pareto_front(v, gr->count, m, front);
    for (size_t i = 0; i < gr->count; i++) {
      pts[i].on_front = front[i];
      gr->on_front += front[i];
      for (size_t c = 0; c < set->num_design && c < 64; c++) {
        char a[CS_STORE_PARTS_LEN + 1], b[CS_STORE_PARTS_LEN + 1];
        cs_pareto_point_design(&pts[0], c, a, sizeof a);
        cs_pareto_point_design(&pts[i], c, b, sizeof b);
        if (strcmp(a, b)) gr->varying |= 1ull << c;
      }
    }
  }
  free(v);
  free(front);
  free(order);
  free(tmp);
  return CS_OK;
}

int cs_pareto_load(cs_store *st, const cs_pareto_spec *s, const cs_pareto_filter *f,
                   cs_pareto_set *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  out->spec = *s;
  out->num_design = cs_pareto_design_columns(out->design_col, CS_PARETO_MAX_DESIGN);
  out->rows = cs_store_num_rows(st);
  cs_pareto_filter none = {NULL, NULL, NULL};
  staged *stage = NULL;
  size_t n = 0;
  int rc = read_rows(st, f ? f : &none, out, &stage, &n, err);
  if (!rc) rc = build_groups(out, stage, n, err);
  for (size_t i = 0; i < n; i++) free(stage[i].p.design);
  free(stage);
  if (rc) cs_pareto_set_free(out);
  return rc;
}

void cs_pareto_set_free(cs_pareto_set *set) {
  if (!set) return;
  for (size_t i = 0; set->points && i < set->num_points; i++) free(set->points[i].design);
  free(set->points);
  free(set->groups);
  memset(set, 0, sizeof *set);
}
