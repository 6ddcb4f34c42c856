/* The columns an objective or a workload field can name, and their values in one row: the
 * file's own columns (from the store's column tables), the derived columns of one table below,
 * and the engines' design columns (from their ops tables; no engine is named here).  A value
 * that a row does not have reads NaN, so a point without it never enters a front. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"
#include "commsweep/pareto.h"
#include "commsweep/topo.h"

typedef double (*derive_fn)(const cs_pareto_row *r);

static double outstanding_sum(const cs_pareto_row *r) {
  const cs_store_job_row *j = r->job;
  return (double)j->mst_rd_outstanding + j->mst_wr_outstanding + j->slv_rd_outstanding +
         j->slv_wr_outstanding;
}
static double mst_outstanding(const cs_pareto_row *r) {
  return (double)r->job->mst_rd_outstanding + r->job->mst_wr_outstanding;
}
static double slv_outstanding(const cs_pareto_row *r) {
  return (double)r->job->slv_rd_outstanding + r->job->slv_wr_outstanding;
}
static double burst_bytes(const cs_pareto_row *r) {
  return (double)r->job->burst_length * r->job->bw_bytes;
}
/* Bytes a GDMA can have in flight: its trackers times the bytes of a transaction (the
 * numerator of Little's law for one GDMA). */
static double inflight_bytes(const cs_pareto_row *r) {
  return mst_outstanding(r) * burst_bytes(r);
}
static double d2d_links(const cs_pareto_row *r) {
  char name[CS_NAME_MAX];
  cs_store_get_text(r->job->dcin_layout, sizeof r->job->dcin_layout, name, sizeof name);
  cs_layout layout;
  cs_err err;
  if (cs_topo_layout(name, &layout, &err)) return NAN;
  return layout.num_links;
}
static double algbw(const cs_pareto_row *r) {
  if (!r->res || !(r->res->result.total_time_us > 0)) return NAN;
  return (double)r->job->msg_size_bytes / (r->res->result.total_time_us * 1e3);
}

/* X(name, unit, measured, function, doc) */
#define DERIVED_COLUMNS(X)                                                                       \
  X(outstanding_sum, NULL, false, outstanding_sum,                                               \
    "mst_rd + mst_wr + slv_rd + slv_wr outstanding: trackers of a GDMA and of a DDR channel")    \
  X(mst_outstanding, NULL, false, mst_outstanding, "mst_rd + mst_wr outstanding (a GDMA's trackers)") \
  X(slv_outstanding, NULL, false, slv_outstanding,                                               \
    "slv_rd + slv_wr outstanding (a DDR channel's trackers)")                                    \
  X(burst_bytes, "B", false, burst_bytes, "burst_length x bw_bytes: bytes of one transaction")   \
  X(inflight_bytes, "B", false, inflight_bytes,                                                  \
    "mst_outstanding x burst_bytes: bytes one GDMA can have in flight")                          \
  X(d2d_links, "link", false, d2d_links, "D2D links of the layout (dcin_layout's links)")       \
  X(algbw_gb_per_s, "GB/s", true, algbw, "msg_size_bytes / total_time_us (GB = 1e9 B)")

typedef struct derived {
  const char *name, *unit;
  bool measured;
  derive_fn fn;
  const char *doc;
} derived;

#define DERIVED_ROW_(name, unit, measured, fn, doc) {#name, unit, measured, fn, doc},
static const derived derived_cols[] = {DERIVED_COLUMNS(DERIVED_ROW_){NULL, NULL, false, NULL, NULL}};
#undef DERIVED_ROW_

/* Columns of the file that describe the file, not a job. */
static const char *const bookkeeping[] = {
    "status",        "txlog_offset",          "txlog_count",          "steplog_offset",
    "steplog_count", "txlog_detail",          "txlog_checksum",       "steplog_checksum",
    "checksum",      "txlog_reserved_offset", "txlog_reserved_count", "steplog_reserved_offset",
    "steplog_reserved_count", NULL};

static bool is_bookkeeping(const char *name) {
  for (const char *const *b = bookkeeping; *b; b++)
    if (!strcmp(*b, name)) return true;
  return false;
}

static bool text_kind(cs_col_kind k) { return k == CS_COL_STR || k == CS_COL_KEY; }

static void set_name(cs_pareto_column *out, const char *name) {
  snprintf(out->name, sizeof out->name, "%s", name);
}

/* A column of one of the file's tables: /jobs first (the engine column is in both). */
static bool find_file_column(const char *name, cs_pareto_column *out) {
  cs_col cols[CS_STORE_MAX_COLUMNS];
  for (int t = 0; t < 2; t++) {
    if (t == 0) cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
    else cs_store_result_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
    const cs_col *c = cs_cols_find(cols, name);
    if (!c) continue;
    out->source = t == 0 ? CS_PARETO_JOB : CS_PARETO_RESULT;
    out->col = *c;
    out->numeric = !text_kind(c->kind);
    out->measured = t == 1;
    out->unit = c->unit;
    out->doc = c->doc;
    return true;
  }
  return false;
}

static bool find_engine_column(const char *name, cs_pareto_column *out) {
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    for (size_t i = 0; (*e)->design_columns && (*e)->design_columns[i].name; i++) {
      const cs_engine_column *c = &(*e)->design_columns[i];
      if (strcmp(c->name, name)) continue;
      out->source = CS_PARETO_ENGINE;
      out->engine = *e;
      out->index = i;
      out->numeric = true;
      out->unit = c->unit;
      out->doc = c->doc;
      return true;
    }
  return false;
}

int cs_pareto_column_find(const char *name, cs_pareto_column *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  if (strlen(name) >= sizeof out->name)
    return cs_err_set(err, CS_EINVAL, "unknown column '%.60s...' (too long for a column name)",
                      name);
  set_name(out, name);
  if (is_bookkeeping(name))
    return cs_err_set(err, CS_EINVAL, "column '%s' is bookkeeping of the file (its slices, "
                      "checksums or status), not a property of a job", name);
  if (find_file_column(name, out)) {
    if (out->col.flags & CS_COL_VOLATILE)
      return cs_err_set(err, CS_EINVAL, "column '%s' is host time, not deterministic: it cannot "
                        "rank designs", name);
    return CS_OK;
  }
  for (size_t i = 0; derived_cols[i].name; i++)
    if (!strcmp(derived_cols[i].name, name)) {
      out->source = CS_PARETO_DERIVED;
      out->index = i;
      out->numeric = true;
      out->measured = derived_cols[i].measured;
      out->unit = derived_cols[i].unit;
      out->doc = derived_cols[i].doc;
      return CS_OK;
    }
  if (find_engine_column(name, out)) return CS_OK;
  return cs_err_set(err, CS_EINVAL, "unknown column '%s' (`commsweep pareto --columns` lists "
                    "them: the /jobs and /results columns, %s, %s, ... and the engines' design "
                    "columns)", name, derived_cols[0].name, derived_cols[1].name);
}

static void print_one(FILE *f, const char *name, const char *kind, const char *unit,
                      const char *doc) {
  fprintf(f, "  %-26s %-9s %-6s %s\n", name, kind, unit ? unit : "", doc ? doc : "");
}

void cs_pareto_print_columns(FILE *f) {
  cs_col cols[CS_STORE_MAX_COLUMNS];
  fprintf(f, "  %-26s %-9s %-6s %s\n", "column", "kind", "unit", "meaning");
  for (int t = 0; t < 2; t++) {
    if (t == 0) cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
    else cs_store_result_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
    for (const cs_col *c = cols; c->name; c++) {
      if (is_bookkeeping(c->name) || (c->flags & CS_COL_VOLATILE)) continue;
      if (t == 1 && !strcmp(c->name, "engine")) continue; /* the /jobs column */
      const char *kind = text_kind(c->kind) ? "text" : t == 0 ? "design" : "result";
      print_one(f, c->name, kind, c->unit, c->doc);
    }
  }
  for (size_t i = 0; derived_cols[i].name; i++)
    print_one(f, derived_cols[i].name, derived_cols[i].measured ? "result" : "design",
              derived_cols[i].unit, derived_cols[i].doc);
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    for (const cs_engine_column *c = (*e)->design_columns; c && c->name; c++)
      print_one(f, c->name, "design", c->unit, c->doc);
}

/* ---- values ----------------------------------------------------------------------------------- */

/* The job of r with the options of engine e: the loaded job when it is e's, else loaded from the
 * stored JSON when the job is e's or carries an options object for e. */
static int job_for_engine(const cs_pareto_row *r, const cs_engine_ops *e, cs_job *job) {
  if (r->full && !strcmp(r->full->engine.name, e->name)) {
    *job = *r->full;
    return CS_OK;
  }
  char text[CS_STORE_JSON_LEN + 1];
  cs_store_get_text(r->job->job_json, sizeof r->job->job_json, text, sizeof text);
  cJSON *doc = cJSON_Parse(text);
  const cJSON *eng = cJSON_GetObjectItemCaseSensitive(doc, "engine");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(eng, "name");
  const cJSON *opts = cJSON_GetObjectItemCaseSensitive(eng, e->name);
  int rc = cJSON_IsString(name) && (opts || !strcmp(name->valuestring, e->name)) ? CS_OK
                                                                                  : CS_ENOTFOUND;
  cJSON *only = rc ? NULL : cJSON_CreateObject();
  if (!rc && (!only || !cJSON_AddStringToObject(only, "name", e->name) ||
              (opts && !cJSON_AddItemToObject(only, e->name, cJSON_Duplicate(opts, true)))))
    rc = CS_ENOMEM;
  cs_err err;
  memset(job, 0, sizeof *job);
  if (!rc)
    rc = cs_config_spec_from_json(cJSON_GetObjectItemCaseSensitive(doc, "spec"), "row", &job->spec,
                                  &err) ||
         cs_config_adapter_from_json(cJSON_GetObjectItemCaseSensitive(doc, "adapter"), "row",
                                     &job->adapter, &err) ||
         cs_engine_options_from_json(only, "row", &job->engine, &err);
  cJSON_Delete(only);
  cJSON_Delete(doc);
  return rc ? CS_EINVAL : CS_OK;
}

double cs_pareto_value(const cs_pareto_column *c, const cs_pareto_row *r) {
  if (!c->numeric) return 0;
  switch (c->source) {
    case CS_PARETO_JOB: return cs_col_number(&c->col, r->job);
    case CS_PARETO_RESULT: return r->res ? cs_col_number(&c->col, r->res) : NAN;
    case CS_PARETO_DERIVED: return derived_cols[c->index].fn(r);
    case CS_PARETO_ENGINE: {
      cs_job *job = malloc(sizeof *job);
      double out[CS_ENGINE_EXTRA_MAX], v = NAN;
      if (job && !job_for_engine(r, c->engine, job)) {
        c->engine->design(job, out);
        v = out[c->index];
      }
      free(job);
      return v;
    }
  }
  return NAN;
}

void cs_pareto_values(const cs_pareto_spec *s, const cs_pareto_row *r, double *out) {
  for (size_t i = 0; i < s->num_objectives; i++) out[i] = cs_pareto_value(&s->objective[i], r);
}

void cs_pareto_format(const cs_pareto_column *c, const cs_pareto_row *r, char *buf, size_t cap) {
  if (c->source == CS_PARETO_JOB || (c->source == CS_PARETO_RESULT && r->res)) {
    cs_col_format(&c->col, c->source == CS_PARETO_JOB ? (const void *)r->job : (const void *)r->res,
                  buf, cap);
    return;
  }
  double v = cs_pareto_value(c, r);
  if (v == floor(v) && fabs(v) < 9007199254740992.0) snprintf(buf, cap, "%.0f", v);
  else snprintf(buf, cap, "%.17g", v);
}

void cs_pareto_workload_text(const cs_pareto_spec *s, const cs_pareto_row *r, char sep, char *buf,
                             size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < s->num_workload && used < cap; i++) {
    char v[CS_STORE_PARTS_LEN + 1];
    cs_pareto_format(&s->workload[i], r, v, sizeof v);
    if (sep)
      used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? (char[2]){sep, 0} : "", v);
    else
      used += (size_t)snprintf(buf + used, cap - used, "%s%s=%s", i ? ", " : "",
                               s->workload[i].name, v);
  }
}

void cs_pareto_minimization(const cs_pareto_spec *s, const double *natural, double *out) {
  for (size_t i = 0; i < s->num_objectives; i++) out[i] = s->maximize[i] ? -natural[i] : natural[i];
}

size_t cs_pareto_design_columns(cs_pareto_column *out, size_t cap) {
  /* not a design: the key, the bookkeeping, what the expansion derives from the rest */
  static const char *const skip[] = {"key", "sweep", "engine", "expected_transactions",
                                     "num_steps", NULL};
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
  size_t n = 0;
  cs_err err;
  for (const cs_col *c = cols; c->name && n < cap; c++) {
    bool skipped = is_bookkeeping(c->name);
    for (const char *const *s = skip; *s && !skipped; s++) skipped = !strcmp(*s, c->name);
    if (!skipped && !cs_pareto_column_find(c->name, &out[n], &err)) n++;
  }
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    for (const cs_engine_column *c = (*e)->design_columns; c && c->name && n < cap; c++)
      if (!cs_pareto_column_find(c->name, &out[n], &err)) n++;
  return n;
}
