/* The filters of `commsweep show`: each named option and every `--where COLUMN=VALUE` becomes a
 * test of one /jobs column (or of the network's words, or of the status); a row is shown when it
 * passes them all, and values given twice for one column are alternatives.  While the rows go
 * by, each filter also counts the rows it alone lets through and keeps the values its column
 * takes, so that "0 shown" can say which filter matched nothing and what there is instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "show.h"

void show_filters_init(show_filters *fs) {
  memset(fs, 0, sizeof *fs);
  cs_store_job_columns(fs->cols, CS_STORE_MAX_COLUMNS);
}

/* The named options and the column each tests. */
static const struct {
  const char *option, *column;
  show_kind kind;
} named[] = {{"--primitive", "primitive", SHOW_EQ},      {"--engine", "engine", SHOW_EQ},
             {"--dtype", "dtype", SHOW_EQ},              {"--sweep", "sweep", SHOW_EQ},
             {"--participants", "num_participants", SHOW_EQ},
             {"--size", "msg_size_bytes", SHOW_EQ},      {"--min-size", "msg_size_bytes", SHOW_RANGE},
             {"--max-size", "msg_size_bytes", SHOW_RANGE}, {"--topology", "network", SHOW_TOPOLOGY},
             {"--status", NULL, SHOW_STATUS},            {NULL, NULL, SHOW_EQ}};

static bool numeric(const cs_col *c) { return c->kind != CS_COL_STR && c->kind != CS_COL_KEY; }

static show_filter *find(show_filters *fs, show_kind kind, const cs_col *col) {
  for (size_t i = 0; i < fs->n; i++)
    if (fs->f[i].kind == kind && fs->f[i].col == col) return &fs->f[i];
  return NULL;
}

static show_filter *new_filter(show_filters *fs, show_kind kind, const cs_col *col,
                               const char *option, const char *value) {
  if (fs->n == SHOW_MAX_FILTERS) {
    fprintf(stderr, "commsweep show: at most %d filters\n", SHOW_MAX_FILTERS);
    return NULL;
  }
  show_filter *f = &fs->f[fs->n++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->col = col;
  f->lo = -1e308;
  f->hi = 1e308;
  snprintf(f->label, sizeof f->label, "%s %s", option, value);
  return f;
}

/* One more value for an equality filter on col (a new filter, or an alternative). */
static int add_value(show_filters *fs, show_kind kind, const cs_col *col, const char *option,
                     const char *label_value, const char *value) {
  double number = 0;
  if (col && numeric(col)) {
    char *end;
    number = strtod(value, &end);
    if (!*value || *end) {
      fprintf(stderr, "commsweep show: %s %s: column '%s' holds numbers\n", option, label_value,
              col->name);
      return 2;
    }
  }
  show_filter *f = find(fs, kind, col);
  if (f && f->nvalues == SHOW_MAX_VALUES) {
    fprintf(stderr, "commsweep show: %s: at most %d values for one column\n", option,
            SHOW_MAX_VALUES);
    return 2;
  }
  if (f) {
    size_t len = strlen(f->label);
    snprintf(f->label + len, sizeof f->label - len, " or %s", value);
  } else if (!(f = new_filter(fs, kind, col, option, label_value))) {
    return 2;
  }
  f->numbers[f->nvalues] = number;
  f->values[f->nvalues++] = value;
  return 0;
}

static void list_columns(const show_filters *fs, FILE *out) {
  for (const cs_col *c = fs->cols; c->name; c++)
    fprintf(out, "%s%s", c == fs->cols ? "" : ", ", c->name);
}

int show_filter_add(show_filters *fs, const char *option, const char *value) {
  if (!strcmp(option, "--where")) {
    const char *eq = strchr(value, '=');
    char column[64];
    size_t n = eq ? (size_t)(eq - value) : 0;
    if (!eq || n == 0 || n >= sizeof column) {
      fprintf(stderr, "commsweep show: --where wants COLUMN=VALUE, got '%s'\n", value);
      return 2;
    }
    memcpy(column, value, n);
    column[n] = '\0';
    const cs_col *col = cs_cols_find(fs->cols, column);
    if (!col) {
      fprintf(stderr, "commsweep show: --where %s: no /jobs column '%s' (columns: ", value, column);
      list_columns(fs, stderr);
      fprintf(stderr, ")\n");
      return 2;
    }
    return add_value(fs, SHOW_EQ, col, option, value, eq + 1);
  }
  for (int i = 0; named[i].option; i++) {
    if (strcmp(named[i].option, option)) continue;
    const cs_col *col = named[i].column ? cs_cols_find(fs->cols, named[i].column) : NULL;
    if (named[i].kind == SHOW_STATUS) {
      int s = !strcmp(value, "pending") ? CS_STORE_PENDING
              : !strcmp(value, "done")  ? CS_STORE_DONE
              : !strcmp(value, "failed") ? CS_STORE_FAILED
                                         : -1;
      if (s < 0) {
        fprintf(stderr, "commsweep show: --status wants done, failed or pending\n");
        return 2;
      }
      show_filter *f = new_filter(fs, SHOW_STATUS, NULL, option, value);
      if (!f) return 2;
      f->status = s;
      return 0;
    }
    if (named[i].kind != SHOW_RANGE) return add_value(fs, named[i].kind, col, option, value, value);
    char *end;
    double d = strtod(value, &end);
    if (!*value || *end) {
      fprintf(stderr, "commsweep show: %s wants a number of bytes, got '%s'\n", option, value);
      return 2;
    }
    show_filter *f = find(fs, SHOW_RANGE, col);
    if (f) {
      size_t len = strlen(f->label);
      snprintf(f->label + len, sizeof f->label - len, " %s %s", option, value);
    } else if (!(f = new_filter(fs, SHOW_RANGE, col, option, value))) {
      return 2;
    }
    if (!strcmp(option, "--min-size")) f->lo = d;
    else f->hi = d;
    return 0;
  }
  return 2;
}

/* The network names t: its whole text, or one of its words ("2die (5x4)": 2die, 5x4).  A row
 * without a network (a file of schema version 5) is matched on its topology and layout. */
static bool names_topology(const cs_store_job_row *j, const char *t) {
  char net[CS_STORE_NETWORK_LEN + 1], word[CS_STORE_NETWORK_LEN + 1];
  cs_store_get_text(j->network, sizeof j->network, net, sizeof net);
  if (!net[0]) {
    char topo[sizeof j->topology + 1], layout[sizeof j->dcin_layout + 1];
    cs_store_get_text(j->topology, sizeof j->topology, topo, sizeof topo);
    cs_store_get_text(j->dcin_layout, sizeof j->dcin_layout, layout, sizeof layout);
    return !strcmp(topo, t) || !strcmp(layout, t);
  }
  if (!strcmp(net, t)) return true;
  for (const char *p = net; *p;) {
    size_t n = strcspn(p, " ()");
    memcpy(word, p, n);
    word[n] = '\0';
    if (n && !strcmp(word, t)) return true;
    p += n;
    p += strspn(p, " ()");
  }
  return false;
}

/* What the filter looks at in this row, as shown in the explanation. */
static void seen_text(const show_filter *f, const cs_store_job_row *j, int status, char *buf,
                      size_t cap) {
  if (f->kind == SHOW_STATUS) {
    snprintf(buf, cap, "%s", cs_store_status_name(status));
  } else if (f->kind == SHOW_TOPOLOGY) {
    cs_store_get_text(j->network, sizeof j->network, buf, cap);
    if (!buf[0]) { /* schema version 5 */
      char topo[sizeof j->topology + 1], layout[sizeof j->dcin_layout + 1];
      cs_store_get_text(j->topology, sizeof j->topology, topo, sizeof topo);
      cs_store_get_text(j->dcin_layout, sizeof j->dcin_layout, layout, sizeof layout);
      snprintf(buf, cap, "%s %s", layout, topo);
    }
  } else {
    show_value(f->col, j, buf, cap);
  }
}

static void note_seen(show_seen *s, const char *v) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->value[i], v)) return;
  if (s->n == SHOW_SEEN) {
    s->more = true;
    return;
  }
  snprintf(s->value[s->n++], sizeof s->value[0], "%.*s", (int)sizeof s->value[0] - 1, v);
}

static bool passes(const show_filter *f, const cs_store_job_row *j, int status) {
  switch (f->kind) {
    case SHOW_STATUS: return status == f->status;
    case SHOW_RANGE: {
      double v = cs_col_number(f->col, j);
      return v >= f->lo && v <= f->hi;
    }
    case SHOW_TOPOLOGY:
      for (size_t i = 0; i < f->nvalues; i++)
        if (names_topology(j, f->values[i])) return true;
      return false;
    case SHOW_EQ: break;
  }
  if (numeric(f->col)) {
    double v = cs_col_number(f->col, j);
    for (size_t i = 0; i < f->nvalues; i++)
      if (v == f->numbers[i]) return true;
    return false;
  }
  char text[CS_STORE_PARTS_LEN + 1];
  cs_store_get_text((const char *)j + f->col->offset, f->col->size, text, sizeof text);
  for (size_t i = 0; i < f->nvalues; i++) {
    size_t n = strlen(f->values[i]);
    if (f->col->kind == CS_COL_KEY ? n && !strncmp(text, f->values[i], n) /* a key's prefix */
                                   : !strcmp(text, f->values[i]))
      return true;
  }
  return false;
}

bool show_filters_match(show_filters *fs, const cs_store_job_row *job, int status) {
  bool all = true;
  char v[CS_STORE_PARTS_LEN + 1];
  for (size_t i = 0; i < fs->n; i++) {
    show_filter *f = &fs->f[i];
    bool ok = passes(f, job, status);
    f->matched += ok;
    all = all && ok;
    if (!f->seen.more || f->seen.n < SHOW_SEEN) {
      seen_text(f, job, status, v, sizeof v);
      note_seen(&f->seen, v);
    }
  }
  return all;
}

void show_filters_explain(const show_filters *fs, uint64_t rows, FILE *out) {
  if (!rows) {
    fprintf(out, "# the file has no rows yet\n");
    return;
  }
  bool some_empty = false;
  for (size_t i = 0; i < fs->n; i++) {
    const show_filter *f = &fs->f[i];
    if (f->matched) continue;
    some_empty = true;
    const char *what = f->kind == SHOW_STATUS     ? "status"
                       : f->kind == SHOW_TOPOLOGY ? "network"
                                                  : f->col->name;
    fprintf(out, "# no row matches %s; the file's %s values: ", f->label, what);
    for (size_t k = 0; k < f->seen.n; k++)
      fprintf(out, "%s%s", k ? ", " : "", f->seen.value[k]);
    fprintf(out, "%s\n", f->seen.more ? ", ..." : "");
  }
  if (some_empty || !fs->n) return;
  fprintf(out, "# each filter matches rows (");
  for (size_t i = 0; i < fs->n; i++)
    fprintf(out, "%s%s: %llu", i ? ", " : "", fs->f[i].label,
            (unsigned long long)fs->f[i].matched);
  fprintf(out, "), but no row matches all of them\n");
}
