/* The design columns of `commsweep show`: the inputs that tell the rows shown apart.  Each design
 * column shows one or a few /jobs columns; by default a column is shown when its value varies
 * among the rows shown (primitive, participant count and size always), and the others are
 * printed once above the table as COLUMN=VALUE.  Rows whose design columns are all equal but
 * whose keys differ differ in an input that is not a /jobs column (an engine option such as
 * engine.vcnet.routing): their /job_json rows are compared, and the paths that differ become
 * extra columns.  So no two rows shown look alike unless they are the same job. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"
#include "show.h"

typedef struct design {
  const char *name;         /* for --columns */
  const char *head, *unit;  /* the two header lines */
  const char *cols[4];      /* its /jobs columns */
  const char *seps;         /* printed between the columns' values, one character each */
  bool right;               /* right-aligned (numbers) */
  bool always;              /* shown whether it varies or not */
  bool layout;              /* the adapter's chip: shown only when some row has no network */
  int max_width;            /* longer values are cut (0: none) */
} design;

static const design designs[] = {
    {"primitive", "primitive", "", {"primitive"}, NULL, false, true, false, 0},
    {"algorithm", "algo", "", {"algorithm"}, NULL, false, false, false, 0},
    {"engine", "engine", "", {"engine"}, NULL, false, false, false, 0},
    {"network", "network", "", {"network"}, NULL, false, false, false, 0},
    {"topology", "topology", "", {"topology"}, NULL, false, false, true, 0},
    {"num_dies", "dies", "", {"num_dies"}, NULL, true, false, true, 0},
    {"dcin_layout", "layout", "", {"dcin_layout"}, NULL, false, false, true, 0},
    {"num_participants", "N", "", {"num_participants"}, NULL, true, true, false, 0},
    {"participants", "participants", "", {"participants"}, NULL, false, false, false, 18},
    {"msg_size_bytes", "size", "(B)", {"msg_size_bytes"}, NULL, true, true, false, 0},
    {"dtype", "type", "", {"dtype"}, NULL, false, false, false, 0},
    {"p2p_op", "op", "", {"p2p_op"}, NULL, false, false, false, 0},
    {"outstanding", "outst rd/wr", "mst / slv",
     {"mst_rd_outstanding", "mst_wr_outstanding", "slv_rd_outstanding", "slv_wr_outstanding"},
     "/ /", false, false, false, 0},
    {"burst_length", "burst", "(flit)", {"burst_length"}, NULL, true, false, false, 0},
    {"bw_bytes", "flit", "(B)", {"bw_bytes"}, NULL, true, false, false, 0},
    {"frequencies", "GHz", "drv/ip/noc",
     {"driver_cycle_frequency_ghz", "ip_frequency_ghz", "noc_frequency_ghz"}, "//", false, false,
     false, 0},
};
#define NDESIGN (sizeof designs / sizeof designs[0])
_Static_assert(NDESIGN <= SHOW_MAX_DESIGN, "SHOW_MAX_DESIGN too small");

void show_value(const cs_col *c, const void *row, char *buf, size_t cap) {
  if (c->kind == CS_COL_F64) snprintf(buf, cap, "%g", cs_col_number(c, row));
  else cs_col_format(c, row, buf, cap);
}

int show_dtype_bytes(const char *d) {
  static const struct { const char *name; int bytes; } t[] = {
      {"fp64", 8}, {"float64", 8}, {"int64", 8}, {"fp32", 4}, {"float32", 4}, {"int32", 4},
      {"tf32", 4}, {"bf16", 2}, {"fp16", 2}, {"float16", 2}, {"half", 2}, {"int16", 2},
      {"fp8", 1}, {"int8", 1}, {"uint8", 1}, {NULL, 0}};
  for (int i = 0; t[i].name; i++)
    if (!strcmp(t[i].name, d)) return t[i].bytes;
  return 0;
}

/* The cell text of design column d. */
static void cell(const show_cols *c, size_t d, const cs_store_job_row *j, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int m = 0; m < 4 && c->member[d][m] && used + 1 < cap; m++) {
    if (m && designs[d].seps) buf[used++] = designs[d].seps[m - 1];
    show_value(c->member[d][m], j, buf + used, cap - used);
    used += strlen(buf + used);
  }
  int w = designs[d].max_width;
  if (w && strlen(buf) > (size_t)w && (size_t)w < cap) memcpy(buf + w - 3, "...", 4); /* cut visibly */
}

int show_cols_init(show_cols *c, const char *list) {
  memset(c, 0, sizeof *c);
  cs_store_job_columns(c->jobs, CS_STORE_MAX_COLUMNS);
  for (size_t d = 0; d < NDESIGN; d++) {
    for (int m = 0; m < 4 && designs[d].cols[m]; m++)
      c->member[d][m] = cs_cols_find(c->jobs, designs[d].cols[m]);
    int w = (int)strlen(designs[d].head), u = (int)strlen(designs[d].unit);
    c->width[d] = w > u ? w : u;
  }
  c->all_networks = true;
  if (!list) return 0;
  c->chosen = true;
  bool all = !strcmp(list, "all");
  for (const char *p = list; *p && !all;) {
    size_t n = strcspn(p, ",");
    size_t d = 0;
    while (d < NDESIGN && (strlen(designs[d].name) != n || strncmp(designs[d].name, p, n))) d++;
    if (d == NDESIGN) {
      fprintf(stderr, "commsweep show: --columns: no column '%.*s' (columns: all", (int)n, p);
      for (size_t k = 0; k < NDESIGN; k++) fprintf(stderr, ", %s", designs[k].name);
      fprintf(stderr, ")\n");
      return 2;
    }
    c->shown[d] = true;
    p += n;
    p += *p == ',';
  }
  for (size_t d = 0; all && d < NDESIGN; d++) c->shown[d] = true;
  return 0;
}

void show_cols_free(show_cols *c) {
  free(c->first);
  free(c->hash_row);
  c->first = NULL;
  c->hash_row = NULL;
}

bool show_cols_add(show_cols *c, uint64_t row, const cs_store_job_row *j) {
  if (!j->primitive[0]) return true; /* a job that did not load: no inputs, its error says why */
  if (!c->first && !(c->first = malloc(sizeof *c->first))) return false;
  if (!c->rows++) memcpy(c->first, j, sizeof *j);
  c->all_networks = c->all_networks && j->network[0];
  uint64_t h = 0;
  for (size_t d = 0; d < NDESIGN; d++) {
    for (int m = 0; m < 4 && c->member[d][m]; m++) {
      const cs_col *col = c->member[d][m];
      const char *mine = (const char *)j + col->offset, *theirs = (const char *)c->first + col->offset;
      c->varies[d] = c->varies[d] || memcmp(mine, theirs, col->size) != 0;
      h = cs_store_xxh64(mine, col->size, h);
    }
    char text[CS_STORE_PARTS_LEN + 8];
    cell(c, d, j, text, sizeof text);
    int w = (int)strlen(text);
    if (w > c->width[d]) c->width[d] = w;
  }
  if (c->nhash == c->cap_hash) {
    size_t cap = c->cap_hash ? 2 * c->cap_hash : 1024;
    uint64_t *grown = realloc(c->hash_row, 3 * cap * sizeof *grown);
    if (!grown) return false;
    c->hash_row = grown;
    c->cap_hash = cap;
  }
  uint64_t *t = &c->hash_row[3 * c->nhash++];
  t[0] = h;
  t[1] = cs_store_xxh64(j->key, sizeof j->key, 0);
  t[2] = row;
  return true;
}

static int cmp_triple(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  for (int i = 0; i < 3; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* ---- inputs outside /jobs ------------------------------------------------------------------- */

#define MAX_LEAVES 256
typedef struct leaves {
  char path[MAX_LEAVES][96];
  char value[MAX_LEAVES][96];
  size_t n;
} leaves;

/* The scalar leaves of a job's JSON as "adapter.x" = canonical text (arrays whole). */
static void flatten(const cJSON *v, const char *path, leaves *out) {
  if (cJSON_IsObject(v)) {
    for (const cJSON *k = v->child; k; k = k->next) {
      char sub[96];
      snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k->string);
      flatten(k, sub, out);
    }
    return;
  }
  if (out->n == MAX_LEAVES) return;
  snprintf(out->path[out->n], sizeof out->path[0], "%s", path);
  cs_json_canonical(v, out->value[out->n], sizeof out->value[0]);
  out->n++;
}

static const char *leaf(const leaves *l, const char *path) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->path[i], path)) return l->value[i];
  return NULL;
}

static int read_leaves(cs_store *st, uint64_t row, cs_store_job_row *scratch, leaves *out,
                       cs_err *err) {
  out->n = 0;
  if (cs_store_read_job_json(st, row, 1, scratch, err)) return err->code;
  char *text = malloc(CS_STORE_JSON_LEN + 1);
  if (!text) return cs_err_set(err, CS_ENOMEM, "out of memory");
  cs_store_get_text(scratch->job_json, CS_STORE_JSON_LEN, text, CS_STORE_JSON_LEN + 1);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  if (doc) flatten(doc, "", out);
  cJSON_Delete(doc);
  return CS_OK;
}

static void add_extra(show_cols *c, const char *path, const char *a, const char *b) {
  for (size_t i = 0; i < c->nextra; i++)
    if (!strcmp(c->extra[i], path)) return;
  if (c->nextra == SHOW_MAX_EXTRA) {
    c->more_extra = true;
    return;
  }
  snprintf(c->extra[c->nextra], sizeof c->extra[0], "%s", path);
  int w = (int)strlen(path), wa = a ? (int)strlen(a) : 1, wb = b ? (int)strlen(b) : 1;
  w = w > wa ? w : wa;
  w = w > wb ? w : wb;
  c->extra_width[c->nextra++] = w > 40 ? 40 : w;
}

/* The paths where job rows a and b differ (a leaf missing in one counts). */
static void differ(show_cols *c, const leaves *a, const leaves *b, bool *any) {
  for (int pass = 0; pass < 2; pass++) {
    const leaves *x = pass ? b : a, *y = pass ? a : b;
    for (size_t i = 0; i < x->n; i++) {
      const char *other = leaf(y, x->path[i]);
      if (other && !strcmp(other, x->value[i])) continue;
      *any = true;
      add_extra(c, x->path[i], x->value[i], other);
    }
  }
}

#define MAX_GROUPS 64 /* collision groups compared (each: its first row against the others) */

int show_cols_resolve(show_cols *c, cs_store *st, cs_err *err) {
  for (size_t d = 0; d < NDESIGN && !c->chosen; d++)
    c->shown[d] = (designs[d].always || c->varies[d]) && !(designs[d].layout && c->all_networks);
  if (c->nhash) qsort(c->hash_row, c->nhash, 3 * sizeof *c->hash_row, cmp_triple);
  leaves *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  cs_store_job_row *scratch = malloc(sizeof *scratch);
  int rc = a && b && scratch ? CS_OK : cs_err_set(err, CS_ENOMEM, "out of memory");
  size_t groups = 0;
  for (size_t i = 0; !rc && i < c->nhash && groups < MAX_GROUPS;) {
    size_t end = i + 1;
    while (end < c->nhash && c->hash_row[3 * end] == c->hash_row[3 * i]) end++;
    bool first_read = false, any = false;
    for (size_t k = i + 1; !rc && k < end && k < i + 8; k++) {
      if (c->hash_row[3 * k + 1] == c->hash_row[3 * (k - 1) + 1]) continue; /* the same job */
      if (!first_read && !(rc = read_leaves(st, c->hash_row[3 * i + 2], scratch, a, err)))
        first_read = true;
      if (!rc) rc = read_leaves(st, c->hash_row[3 * k + 2], scratch, b, err);
      if (!rc) differ(c, a, b, &any);
    }
    if (first_read) {
      groups++;
      c->key = c->key || !any; /* equal inputs, other keys: a model version changed */
    }
    i = end;
  }
  free(a);
  free(b);
  free(scratch);
  return rc;
}

bool show_cols_need_json(const show_cols *c) { return c->nextra > 0; }

void show_cols_constants(const show_cols *c, FILE *out) {
  if (!c->rows) return;
  int used = fprintf(out, "# every row shown has");
  for (size_t d = 0; d < NDESIGN; d++) {
    if (c->shown[d] || c->varies[d] || (designs[d].layout && c->all_networks)) continue;
    for (int m = 0; m < 4 && c->member[d][m]; m++) {
      char v[CS_STORE_PARTS_LEN + 1];
      show_value(c->member[d][m], c->first, v, sizeof v);
      if (!v[0] && c->member[d][m]->kind == CS_COL_STR) continue; /* empty: p2p_op of others */
      bool quote = strchr(v, ' ') != NULL;
      int len = (int)(strlen(c->member[d][m]->name) + strlen(v)) + (quote ? 4 : 2);
      if (used + len > 100) used = fprintf(out, "\n#  ");
      used += fprintf(out, " %s=%s%s%s", c->member[d][m]->name, quote ? "\"" : "", v,
                      quote ? "\"" : "");
    }
  }
  fprintf(out, "\n");
  if (c->key)
    fprintf(out, "# some rows have equal inputs but other keys (another model version of their "
            "engine): the key column tells them apart\n");
  if (c->more_extra)
    fprintf(out, "# more inputs outside /jobs tell rows apart than are shown here; "
            "`commsweep export FILE --job ROW` prints a row's whole job\n");
}

void show_cols_header(const show_cols *c, int line, FILE *out) {
  fprintf(out, "# %6s ", line ? "" : "row");
  if (c->key) fprintf(out, " %-12s", line ? "" : "key");
  for (size_t d = 0; d < NDESIGN; d++) {
    if (!c->shown[d]) continue;
    const char *t = line ? designs[d].unit : designs[d].head;
    fprintf(out, designs[d].right ? " %*s" : " %-*s", c->width[d], t);
    if (!strcmp(designs[d].name, "msg_size_bytes")) fprintf(out, " %10s", line ? "(elem)" : "count");
  }
  for (size_t e = 0; e < c->nextra; e++)
    fprintf(out, " %-*.*s", c->extra_width[e], c->extra_width[e], line ? "" : c->extra[e]);
}

/* The value at a dotted path of the parsed job, as canonical text. */
static void json_at(const cJSON *doc, const char *path, char *buf, size_t cap) {
  char part[96];
  const cJSON *v = doc;
  for (const char *p = path; v && *p;) {
    size_t n = strcspn(p, ".");
    snprintf(part, sizeof part, "%.*s", (int)n, p);
    v = cJSON_GetObjectItemCaseSensitive(v, part);
    p += n + (p[n] == '.');
  }
  if (v) cs_json_canonical(v, buf, cap);
  else snprintf(buf, cap, "-");
}

void show_cols_row(const show_cols *c, const cs_store_job_row *j, const char *json, FILE *out) {
  char text[CS_STORE_PARTS_LEN + 8];
  if (c->key) fprintf(out, " %-12.12s", j->key);
  for (size_t d = 0; d < NDESIGN; d++) {
    if (!c->shown[d]) continue;
    if (j->primitive[0]) cell(c, d, j, text, sizeof text);
    if (!j->primitive[0] || !text[0]) snprintf(text, sizeof text, "%s", d == 0 ? "?" : "-");
    fprintf(out, designs[d].right ? " %*s" : " %-*s", c->width[d], text);
    if (strcmp(designs[d].name, "msg_size_bytes")) continue;
    char dtype[sizeof j->dtype + 1];
    cs_store_get_text(j->dtype, sizeof j->dtype, dtype, sizeof dtype);
    int eb = j->primitive[0] ? show_dtype_bytes(dtype) : 0;
    if (eb) fprintf(out, " %10" PRIu64, j->msg_size_bytes / (uint64_t)eb);
    else fprintf(out, " %10s", "-");
  }
  cJSON *doc = json && c->nextra ? cJSON_Parse(json) : NULL;
  for (size_t e = 0; e < c->nextra; e++) {
    json_at(doc, c->extra[e], text, sizeof text);
    fprintf(out, " %-*.*s", c->extra_width[e], c->extra_width[e], text);
  }
  cJSON_Delete(doc);
}
