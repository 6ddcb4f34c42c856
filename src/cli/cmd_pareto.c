/* `commsweep pareto FILE.h5`: the Pareto front of every workload and engine in a result file,
 * computed from the file's rows (done rows whose checksum holds), as a table, CSV or JSON.  The
 * objectives come from a sweep file's "pareto" section or from the command line.  Serial; needs
 * no MPI. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/pareto.h"
#include "commsweep/sweep.h"

typedef struct pareto_args {
  cs_cli_objectives obj;
  cs_pareto_filter filter;
  bool csv, json, all, columns;
} pareto_args;

#define A(field) offsetof(pareto_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_TEXT, .help = "objectives:"},
    {CS_CLI_STR, "--sweep", NULL, "SWEEP.json", A(obj.sweep), .help = "the sweep file's \"pareto\" section"},
    {CS_CLI_STR, "--minimize", NULL, "COLS", A(obj.minimize), .help = "comma-separated columns to minimise"},
    {CS_CLI_STR, "--maximize", NULL, "COLS", A(obj.maximize), .help = "comma-separated columns to maximise"},
    {CS_CLI_STR, "--workload", NULL, "COLS", A(obj.workload),
     .help = "the job columns whose values make a workload\n(default " CS_PARETO_DEFAULT_WORKLOAD ")"},
    {CS_CLI_FLAG, "--columns", NULL, NULL, A(columns),
     .help = "list every column an objective or a workload can name"},
    {CS_CLI_TEXT, .help = "filters:"},
    {CS_CLI_STR, "--engine", NULL, "E", A(filter.engine), .help = "rows of this engine"},
    {CS_CLI_STR, "--primitive", NULL, "P", A(filter.primitive), .help = "rows of this primitive"},
    {CS_CLI_STR, "--sweep-name", NULL, "NAME", A(filter.sweep), .help = "rows added by that sweep"},
    {CS_CLI_TEXT, .help = "output:"},
    {CS_CLI_FLAG, "--all", NULL, NULL, A(all), .help = "the dominated points too (the table marks the front)"},
    {CS_CLI_FLAG, "--csv", NULL, NULL, A(csv), .help = "one line per point (every point, on_front 1 or 0)"},
    {CS_CLI_FLAG, "--json", NULL, NULL, A(json),
     .help = "every group with every point: the objectives' values, the front\n"
             "flag, the row, key, design id and design (`commsweep report`\n"
             "reads this)"},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"pareto", options, 1, {offsetof(pareto_args, obj.path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep pareto FILE.h5 [--sweep SWEEP.json | --minimize COLS [--maximize COLS]\n"
          "                        [--workload COLS]] [--engine E] [--primitive P] [--all]\n"
          "                        [--csv | --json]\n"
          "       commsweep pareto --columns\n"
          "\n"
          "Prints the Pareto front of each workload and engine of FILE.h5: the points no other\n"
          "point of the same workload and engine beats in every objective (no worse in each, better\n"
          "in one; two points equal in every objective are both on the front), with their objective\n"
          "values and the design columns that vary within the workload, and how many points the\n"
          "front dominates.  Only done rows whose checksum holds take part (docs/pareto.md).\n"
          "\n");
  cs_cli_print_options(&command, f);
}

/* 0 to go on, 1 for --help, 2 for a usage error (printed). */
static int parse(int argc, char **argv, pareto_args *a) {
  memset(a, 0, sizeof *a);
  int rc = cs_cli_parse(&command, argc, argv, a);
  if (rc || a->columns) return rc;
  const char *why = a->csv && a->json ? "give --csv or --json, not both"
                                      : cs_cli_objectives_missing(&a->obj);
  if (why) {
    fprintf(stderr, "commsweep pareto: %s\n", why);
    return 2;
  }
  return 0;
}

const char *cs_cli_objectives_missing(const cs_cli_objectives *o) {
  if (!o->path) return "which file?";
  if (o->sweep && (o->minimize || o->maximize || o->workload))
    return "give the objectives by --sweep or on the command line, not both";
  if (!o->sweep && !o->minimize && !o->maximize)
    return "which objectives? (--sweep SWEEP.json, or --minimize / --maximize)";
  return NULL;
}

int cs_cli_pareto_load(const cs_cli_objectives *o, const cs_pareto_filter *f, cs_pareto_set *set,
                       cs_err *err) {
  cs_pareto_spec spec;
  memset(set, 0, sizeof *set);
  if (!o->sweep) {
    if (cs_pareto_spec_from_lists(o->minimize, o->maximize, o->workload, &spec, err)) return err->code;
  } else {
    cs_sweep_study study;
    if (cs_sweep_study_load(o->sweep, NULL, &study, err)) return err->code;
    int rc = study.has_pareto ? CS_OK
                              : cs_err_set(err, CS_EINVAL, "sweep file '%s' has no 'pareto' section",
                                           o->sweep);
    spec = study.pareto;
    cs_sweep_study_free(&study);
    if (rc) return rc;
  }
  cs_store *st = NULL;
  int rc = cs_store_open(o->path, CS_STORE_READ, &st, err);
  if (!rc) rc = cs_pareto_load(st, &spec, f, set, err);
  cs_store_close(st, NULL);
  return rc;
}

/* ---- table ------------------------------------------------------------------------------------- */

static void print_design(const cs_pareto_set *set, const cs_pareto_group *g,
                         const cs_pareto_point *p, FILE *f) {
  bool first = true;
  for (size_t c = 0; c < set->num_design; c++) {
    if (!(g->varying >> c & 1)) continue;
    char v[CS_STORE_PARTS_LEN + 1];
    cs_pareto_point_design(p, c, v, sizeof v);
    fprintf(f, "%s%s=%s", first ? "" : " ", set->design_col[c].name, v);
    first = false;
  }
  if (first) fputs("-", f);
}

static void print_table(const pareto_args *a, const cs_pareto_set *set, FILE *f) {
  char desc[1024];
  cs_pareto_spec_describe(&set->spec, desc, sizeof desc);
  fprintf(f, "# pareto fronts of %s: %s\n", a->obj.path, desc);
  fprintf(f, "# %llu rows: %zu points in %zu groups; left out %llu not done, %llu corrupt, %llu "
          "without a value for an objective, %llu filtered\n",
          (unsigned long long)set->rows, set->num_points, set->num_groups,
          (unsigned long long)set->not_done, (unsigned long long)set->corrupt,
          (unsigned long long)set->missing, (unsigned long long)set->filtered);
  size_t m = set->spec.num_objectives;
  for (size_t g = 0; g < set->num_groups; g++) {
    const cs_pareto_group *gr = &set->groups[g];
    fprintf(f, "\n%s | engine %s: %zu points, %zu on the front, %zu dominated\n", gr->workload,
            gr->engine, gr->count, gr->on_front, gr->count - gr->on_front);
    fprintf(f, "  %8s %s", "row", a->all ? "front " : "");
    for (size_t k = 0; k < m; k++) fprintf(f, " %16s", set->spec.objective[k].name);
    fprintf(f, "  design\n");
    for (size_t i = 0; i < gr->count; i++) {
      const cs_pareto_point *p = &set->points[gr->first + i];
      if (!p->on_front && !a->all) continue;
      fprintf(f, "  %8llu %s", (unsigned long long)p->row, a->all ? (p->on_front ? "  *   " : "      ") : "");
      for (size_t k = 0; k < m; k++) fprintf(f, " %16.8g", p->value[k]);
      fputs("  ", f);
      print_design(set, gr, p, f);
      fputc('\n', f);
    }
  }
}

/* ---- CSV --------------------------------------------------------------------------------------- */

static void csv_text(const char *s, FILE *f) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void print_csv(const cs_pareto_set *set, FILE *f) {
  size_t m = set->spec.num_objectives;
  fputs("workload,engine,row,key,design_id,on_front", f);
  for (size_t k = 0; k < m; k++) fprintf(f, ",%s", set->spec.objective[k].name);
  for (size_t c = 0; c < set->num_design; c++) fprintf(f, ",%s", set->design_col[c].name);
  fputc('\n', f);
  for (size_t i = 0; i < set->num_points; i++) {
    const cs_pareto_point *p = &set->points[i];
    const cs_pareto_group *g = &set->groups[p->group];
    csv_text(g->workload, f);
    fprintf(f, ",%s,%llu,%s,%s,%d", g->engine, (unsigned long long)p->row, p->key, p->design_id,
            p->on_front);
    for (size_t k = 0; k < m; k++) fprintf(f, ",%.17g", p->value[k]);
    for (size_t c = 0; c < set->num_design; c++) {
      char v[CS_STORE_PARTS_LEN + 1];
      cs_pareto_point_design(p, c, v, sizeof v);
      fputc(',', f);
      if (set->design_col[c].numeric) fputs(v, f);
      else csv_text(v, f);
    }
    fputc('\n', f);
  }
}

/* ---- JSON -------------------------------------------------------------------------------------- */

static const char *kind_name(const cs_pareto_column *c) {
  return c->measured ? "result" : c->numeric ? "design" : "text";
}

static cJSON *column_json(const cs_pareto_column *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "column", c->name);
  cJSON_AddStringToObject(o, "kind", kind_name(c));
  if (c->unit) cJSON_AddStringToObject(o, "unit", c->unit);
  if (c->doc) cJSON_AddStringToObject(o, "doc", c->doc);
  return o;
}

static cJSON *point_json(const cs_pareto_set *set, const cs_pareto_group *g,
                         const cs_pareto_point *p) {
  cJSON *o = cJSON_CreateObject(), *values = cJSON_CreateObject(), *design = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "row", (double)p->row);
  cJSON_AddStringToObject(o, "key", p->key);
  cJSON_AddStringToObject(o, "design_id", p->design_id);
  cJSON_AddBoolToObject(o, "on_front", p->on_front);
  for (size_t k = 0; k < set->spec.num_objectives; k++)
    cJSON_AddNumberToObject(values, set->spec.objective[k].name, p->value[k]);
  for (size_t c = 0; c < set->num_design; c++) {
    if (!(g->varying >> c & 1)) continue;
    char v[CS_STORE_PARTS_LEN + 1];
    cs_pareto_point_design(p, c, v, sizeof v);
    if (set->design_col[c].numeric && v[0]) cJSON_AddNumberToObject(design, set->design_col[c].name, strtod(v, NULL));
    else cJSON_AddStringToObject(design, set->design_col[c].name, v);
  }
  cJSON_AddItemToObject(o, "values", values);
  cJSON_AddItemToObject(o, "design", design);
  return o;
}

/* The workload's fields with their values. */
static cJSON *workload_json(const cs_pareto_set *set, const cs_pareto_group *g) {
  cJSON *o = cJSON_CreateObject();
  for (size_t k = 0; k < set->spec.num_workload; k++) {
    const cs_pareto_column *c = &set->spec.workload[k];
    char v[CS_STORE_PARTS_LEN + 1];
    cs_pareto_field(g->values, k, v, sizeof v);
    if (c->numeric) cJSON_AddNumberToObject(o, c->name, strtod(v, NULL));
    else cJSON_AddStringToObject(o, c->name, v);
  }
  return o;
}

int cs_cli_pareto_json(const char *path, const cs_pareto_set *set, FILE *f) {
  cJSON *doc = cJSON_CreateObject(), *objs = cJSON_CreateArray(), *wl = cJSON_CreateArray();
  cJSON *groups = cJSON_CreateArray();
  cJSON_AddStringToObject(doc, "file", path);
  for (size_t k = 0; k < set->spec.num_objectives; k++) {
    cJSON *o = column_json(&set->spec.objective[k]);
    cJSON_AddStringToObject(o, "goal", set->spec.maximize[k] ? "max" : "min");
    cJSON_AddItemToArray(objs, o);
  }
  for (size_t k = 0; k < set->spec.num_workload; k++)
    cJSON_AddItemToArray(wl, column_json(&set->spec.workload[k]));
  cJSON_AddItemToObject(doc, "objectives", objs);
  cJSON_AddItemToObject(doc, "workload", wl);
  cJSON *left = cJSON_CreateObject();
  cJSON_AddNumberToObject(left, "rows", (double)set->rows);
  cJSON_AddNumberToObject(left, "not_done", (double)set->not_done);
  cJSON_AddNumberToObject(left, "corrupt", (double)set->corrupt);
  cJSON_AddNumberToObject(left, "missing", (double)set->missing);
  cJSON_AddNumberToObject(left, "filtered", (double)set->filtered);
  cJSON_AddItemToObject(doc, "rows", left);
  for (size_t g = 0; g < set->num_groups; g++) {
    const cs_pareto_group *gr = &set->groups[g];
    cJSON *o = cJSON_CreateObject(), *pts = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "workload_text", gr->workload);
    cJSON_AddItemToObject(o, "workload", workload_json(set, gr));
    cJSON_AddStringToObject(o, "engine", gr->engine);
    cJSON_AddNumberToObject(o, "points", (double)gr->count);
    cJSON_AddNumberToObject(o, "on_front", (double)gr->on_front);
    cJSON_AddNumberToObject(o, "dominated", (double)(gr->count - gr->on_front));
    for (size_t i = 0; i < gr->count; i++)
      cJSON_AddItemToArray(pts, point_json(set, gr, &set->points[gr->first + i]));
    cJSON_AddItemToObject(o, "point", pts);
    cJSON_AddItemToArray(groups, o);
  }
  cJSON_AddItemToObject(doc, "groups", groups);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  if (!text) return 1;
  fputs(text, f);
  fputc('\n', f);
  free(text);
  return 0;
}

int cs_cli_pareto(int argc, char **argv) {
  pareto_args a;
  int urc = parse(argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  if (a.columns) {
    cs_pareto_print_columns(stdout);
    return 0;
  }
  cs_err err;
  cs_err_clear(&err);
  cs_pareto_set set;
  int rc = cs_cli_pareto_load(&a.obj, &a.filter, &set, &err);
  if (rc) {
    fprintf(stderr, "commsweep pareto: %s\n", err.msg);
    return 1;
  }
  if (a.json) rc = cs_cli_pareto_json(a.obj.path, &set, stdout);
  else if (a.csv) print_csv(&set, stdout);
  else print_table(&a, &set, stdout);
  cs_pareto_set_free(&set);
  if (rc) fprintf(stderr, "commsweep pareto: out of memory\n");
  return rc;
}
