/* `commsweep show FILE.h5`: the results as a table in the style of nccl-tests (one line per
 * job), or as CSV with every column at full precision, for the rows that pass the filters.
 * Two passes over the file: the first filters every row and notes what the rows to show have in
 * common (show_columns.c), the second reads those rows again and prints them, so the table's
 * columns tell every row shown apart and nothing else.  Reads the file serially; needs no MPI. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "show.h"

#define BLOCK 2048
#define RUN_GAP 32 /* rows between two shown rows that the second pass reads along */

typedef struct options {
  const char *path, *columns;
  show_filters filters;
  bool csv, verify;
  long limit;
} options;

static int set_filter(void *args, const char *option, const char *value) {
  return show_filter_add(&((options *)args)->filters, option, value);
}

static void engine_names(FILE *f) {
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    fprintf(f, "%s%s", e == cs_engine_list() ? "" : " | ", (*e)->name);
}

#define FILTER(name, arg, ...) {CS_CLI_FN, name, NULL, arg, .set = set_filter, __VA_ARGS__}
static const cs_cli_opt option_table[] = {
    {CS_CLI_TEXT, .help = "filters (a row is shown when it passes all of them; values given twice "
                          "for one column\nare alternatives):"},
    FILTER("--where", "COLUMN=VALUE",
           .help = "any /jobs column (commsweep schema lists them), e.g.\n"
                   "--where network=\"2die_spread (5x4)\" --where burst_length=8"),
    FILTER("--primitive", "P", .help = "allreduce | allgather | reducescatter | alltoall | p2p"),
    FILTER("--participants", "N", .help = "participant count"),
    FILTER("--size", "N", .help = "message size in bytes (--min-size N, --max-size N for a range)"),
    FILTER("--min-size", "N", .help = "message size at least N bytes"),
    FILTER("--max-size", "N", .help = "message size at most N bytes"),
    FILTER("--engine", "E", .help = "", .help_more = engine_names),
    FILTER("--topology", "T",
           .help = "the network names T: its whole name or a word of it, e.g.\n"
                   "torus:4x4, 2die_spread, 5x4 (the die topology), dor_dateline"),
    FILTER("--dtype", "D", .help = "element type"),
    FILTER("--sweep", "NAME", .help = "rows added by this sweep"),
    FILTER("--status", "S", .help = "done | failed | pending"),
    {CS_CLI_LONG, "--limit", NULL, "N", offsetof(options, limit), 0, 9007199254740992.0, "a count",
     .help = "at most N lines"},
    {CS_CLI_TEXT, .help = "When no row passes, show says which filter matched nothing and which "
                          "values exist.\noutput:"},
    {CS_CLI_STR, "--columns", NULL, "LIST", offsetof(options, columns),
     .help = "these input columns, comma separated, or all: primitive,\n"
             "algorithm, engine, network, topology, num_dies, dcin_layout,\n"
             "num_participants, participants, msg_size_bytes, dtype, p2p_op,\n"
             "outstanding, burst_length, bw_bytes, frequencies"},
    {CS_CLI_FLAG, "--csv", NULL, NULL, offsetof(options, csv),
     .help = "every column of /jobs and /results, full precision"},
    {CS_CLI_FLAG, "--verify", NULL, NULL, offsetof(options, verify),
     .help = "check the checksums of the rows shown and of their /txlog and\n"
             "/steplog slices (reads them); corrupt rows show status\n"
             "'corrupt'.  Without filters and --limit: the whole file"},
    {.kind = CS_CLI_END}};
#undef FILTER

static const cs_cli_cmd command = {"show", option_table, 1, {offsetof(options, path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep show FILE.h5 [filters] [--columns LIST] [--csv] [--verify]\n"
          "\n"
          "Prints one line per job, nccl-tests style: the inputs that tell the rows shown apart,\n"
          "then time, algorithm bandwidth (size / time) and bus bandwidth (EngineResult\n"
          "bus_bw_gb_per_s, tbl-cr-06).  GB/s = 1e9 bytes per second; time in microseconds.\n"
          "An input column is shown when its value varies among the rows shown (primitive,\n"
          "participant count and size always); the others are printed once above the table as\n"
          "COLUMN=VALUE.  Rows that differ only in an input outside /jobs (an engine option)\n"
          "get a column for that input, named by its path in the job's JSON.\n"
          "\n");
  cs_cli_print_options(&command, f);
}

static double algbw(const cs_store_job_row *j, const cs_store_result_row *r) {
  return r->result.total_time_us > 0
             ? (double)j->msg_size_bytes / (r->result.total_time_us * 1e3)
             : 0;
}

/* ---- CSV ------------------------------------------------------------------------------------ */

/* The --csv columns, from the store's column lists: the row number, every /jobs column but the
 * slice reservation, the status as text, every /results column but the bookkeeping ones (the
 * engine is a /jobs column already), the derived algbw, the error (of failed rows: /errors). */
typedef struct csv_cols {
  cs_col job[CS_STORE_MAX_COLUMNS], result[CS_STORE_MAX_COLUMNS];
} csv_cols;

static void keep_columns(cs_col *cols, const char *const *drop) {
  size_t n = 0;
  for (cs_col *c = cols; c->name; c++) {
    bool dropped = false;
    for (const char *const *d = drop; *d && !dropped; d++) dropped = !strcmp(*d, c->name);
    if (!dropped) cols[n++] = *c;
  }
  cols[n] = (cs_col){NULL, 0, 0, 0, NULL, NULL, 0};
}

static void csv_columns(csv_cols *c) {
  static const char *const job_drop[] = {"txlog_reserved_offset", "txlog_reserved_count", NULL};
  static const char *const result_drop[] = {"status", "engine", "txlog_checksum", NULL};
  cs_store_job_columns(c->job, CS_STORE_MAX_COLUMNS);
  cs_store_result_columns(CS_ENGINE_SET_ALL, c->result, CS_STORE_MAX_COLUMNS);
  keep_columns(c->job, job_drop);
  keep_columns(c->result, result_drop);
}

static void csv_header(const csv_cols *c) {
  fputs("row,", stdout);
  cs_cols_csv_header(c->job, stdout);
  fputs(",status,", stdout);
  cs_cols_csv_header(c->result, stdout);
  fputs(",algbw_gb_per_s,error\n", stdout);
}

static void csv_text(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"') putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static void csv_row(const csv_cols *c, uint64_t row, const cs_store_job_row *j,
                    const cs_store_result_row *r, const char *status) {
  char error[CS_STORE_ERROR_LEN + 1];
  cs_store_get_text(r->error, sizeof r->error, error, sizeof error);
  printf("%" PRIu64 ",", row);
  cs_cols_csv_values(c->job, j, stdout);
  printf(",%s,", status);
  cs_cols_csv_values(c->result, r, stdout);
  printf(",%.17g,", algbw(j, r));
  csv_text(error);
  putchar('\n');
}

/* ---- the table ------------------------------------------------------------------------------ */

static void table_header(const char *path, uint64_t rows, const show_cols *cols) {
  printf("# commsweep results: %s (%" PRIu64 " rows)\n", path, rows);
  show_cols_constants(cols, stdout);
  printf("#\n");
  static const char *const heads[2][6] = {{"time", "algbw", "busbw", "strag", "steps", "status"},
                                          {"(us)", "(GB/s)", "(GB/s)", "", "", ""}};
  for (int line = 0; line < 2; line++) {
    show_cols_header(cols, line, stdout);
    printf(" %12s %10s %10s %7s %5s %s\n", heads[line][0], heads[line][1], heads[line][2],
           heads[line][3], heads[line][4], heads[line][5]);
  }
}

static void table_row(const show_cols *cols, uint64_t row, const cs_store_job_row *j,
                      const cs_store_result_row *r, const char *status) {
  char error[120], json[CS_STORE_JSON_LEN + 1];
  cs_store_get_text(r->error, sizeof r->error, error, sizeof error);
  if (show_cols_need_json(cols)) cs_store_get_text(j->job_json, sizeof j->job_json, json, sizeof json);
  printf("  %6" PRIu64 " ", row);
  show_cols_row(cols, j, show_cols_need_json(cols) ? json : NULL, stdout);
  if (r->status == CS_STORE_DONE && !strcmp(status, "done"))
    printf(" %12.3f %10.3f %10.3f %7.3f %5u %s\n", r->result.total_time_us, algbw(j, r),
           r->result.bus_bw_gb_per_s, r->result.straggler_ratio, r->result.algorithm_steps,
           status);
  else
    printf(" %12s %10s %10s %7s %5s %s%s%s\n", "-", "-", "-", "-", "-", status,
           error[0] ? ": " : "", error);
}

/* ---- options -------------------------------------------------------------------------------- */

/* 0 to go on, 1 for --help, 2 for a usage error (printed). */
static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  show_filters_init(&o->filters);
  o->limit = -1;
  int rc = cs_cli_parse(&command, argc, argv, o);
  if (!rc && !o->path) {
    fprintf(stderr, "commsweep show: which file?\n");
    return 2;
  }
  return rc;
}

/* ---- the two passes ------------------------------------------------------------------------- */

typedef struct shown {
  uint64_t *rows; /* the rows to print, in order */
  size_t n, cap;
} shown;

static bool keep_row(shown *s, uint64_t row) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    uint64_t *grown = realloc(s->rows, cap * sizeof *grown);
    if (!grown) return false;
    s->rows = grown;
    s->cap = cap;
  }
  s->rows[s->n++] = row;
  return true;
}

typedef struct buffers {
  cs_store_job_row *jobs;
  cs_store_result_row *res;
} buffers;

/* Pass 1: every row through the filters; the rows to show (up to --limit) into s, and into cols
 * for the table.  counts: rows per status. */
static int select_rows(cs_store *st, options *o, show_cols *cols, buffers *b, shown *s,
                       uint64_t counts[3], cs_err *err) {
  static const char *const no_json[] = {"job_json", NULL}, *const no_error[] = {"error", NULL};
  uint64_t rows = cs_store_num_rows(st);
  for (uint64_t first = 0; first < rows; first += BLOCK) {
    uint64_t n = rows - first < BLOCK ? rows - first : BLOCK;
    if (cs_store_read_rows_without(st, true, no_json, first, n, b->jobs, err) ||
        cs_store_read_rows_without(st, false, no_error, first, n, b->res, err))
      return err->code;
    for (uint64_t k = 0; k < n; k++) {
      int status = b->res[k].status;
      counts[status >= 0 && status <= 2 ? status : 0]++;
      if (!show_filters_match(&o->filters, &b->jobs[k], status)) continue;
      if (o->limit >= 0 && s->n >= (size_t)o->limit) continue;
      if (!keep_row(s, first + k) || (!o->csv && !show_cols_add(cols, first + k, &b->jobs[k])))
        return cs_err_set(err, CS_ENOMEM, "out of memory");
    }
  }
  return CS_OK;
}

/* Pass 2: the rows of s, read again in runs of nearby rows, printed; verified with --verify
 * (*corrupt counts those that fail; counts[] loses them). */
static int print_rows(cs_store *st, const options *o, const show_cols *cols, const csv_cols *csv,
                      buffers *b, const shown *s, uint64_t counts[3], uint64_t *corrupt,
                      cs_err *err) {
  static const char *const no_json[] = {"job_json", NULL}, *const no_error[] = {"error", NULL};
  bool json = !o->csv && show_cols_need_json(cols);
  for (size_t i = 0, end; i < s->n; i = end) {
    uint64_t first = s->rows[i];
    for (end = i + 1; end < s->n && s->rows[end] - s->rows[end - 1] <= RUN_GAP &&
                      s->rows[end] - first < BLOCK;
         end++) {
    }
    uint64_t n = s->rows[end - 1] - first + 1;
    /* the text of /errors only for the failed rows shown; --verify reads whole rows, whose
     * checksum covers the error */
    if (cs_store_read_rows_without(st, true, json ? NULL : no_json, first, n, b->jobs, err) ||
        cs_store_read_rows_without(st, false, o->verify ? NULL : no_error, first, n, b->res, err))
      return err->code;
    for (size_t k = i; k < end; k++) {
      uint64_t row = s->rows[k];
      cs_store_job_row *j = &b->jobs[row - first];
      cs_store_result_row *r = &b->res[row - first];
      const char *sname = cs_store_status_name(r->status);
      if (o->verify && r->status != CS_STORE_PENDING && !cs_store_row_verifies(st, row, j->key, r)) {
        sname = "corrupt";
        counts[r->status >= 0 && r->status <= 2 ? r->status : 0]--;
        (*corrupt)++;
      }
      if (!o->verify) r->error[0] = '\0'; /* not read: only a failed row has one */
      if (!o->verify && r->status == CS_STORE_FAILED &&
          cs_store_read_results(st, row, 1, r, err))
        return err->code;
      if (o->csv) csv_row(csv, row, j, r, sname);
      else table_row(cols, row, j, r, sname);
    }
  }
  return CS_OK;
}

static void summary(cs_store *st, const options *o, uint64_t rows, const uint64_t counts[3],
                    uint64_t corrupt, size_t nshown) {
  printf("#\n# %" PRIu64 " rows: %" PRIu64 " done, %" PRIu64 " failed, %" PRIu64 " pending", rows,
         counts[1], counts[2], counts[0]);
  if (o->verify) printf(", %" PRIu64 " corrupt", corrupt);
  printf("; %zu shown; %" PRIu64 " txlog records\n", nshown, cs_store_txlog_len(st));
  if (o->verify && nshown < rows)
    printf("# verified: the %zu rows shown (their checksums and log slices); --verify without "
           "filters and --limit checks every row\n", nshown);
  if (cs_store_schema_version(st) < CS_STORE_SCHEMA_VERSION)
    printf("# note: a file of schema version %d has no network column; `commsweep repair %s` "
           "converts it\n", cs_store_schema_version(st), o->path);
  char holder[512];
  if (cs_store_lock_holder(o->path, holder, sizeof holder))
    printf("# note: a sweep is writing this file (%s)\n", holder);
}

int cs_cli_show(int argc, char **argv) {
  options *o = malloc(sizeof *o);
  show_cols *cols = malloc(sizeof *cols);
  csv_cols *csv = malloc(sizeof *csv);
  buffers b = {malloc(BLOCK * sizeof *b.jobs), malloc(BLOCK * sizeof *b.res)};
  shown s = {NULL, 0, 0};
  cs_store *st = NULL;
  cs_err err;
  cs_err_clear(&err);
  int rc = o && cols && csv && b.jobs && b.res ? 0 : 1;
  if (rc) fprintf(stderr, "commsweep show: out of memory\n");
  int urc = rc ? 0 : parse(argc, argv, o);
  if (!rc && !urc && show_cols_init(cols, o->columns)) {
    urc = 2;
    fprintf(stderr, "(commsweep show --help lists the options)\n");
  } else if (urc && cols) memset(cols, 0, sizeof *cols);
  if (urc == 1) usage(stdout);
  rc = urc == 1 ? 0 : urc ? 2 : rc;
  if (!rc && !urc && cs_store_open(o->path, CS_STORE_READ, &st, &err)) {
    fprintf(stderr, "commsweep show: %s\n", err.msg);
    rc = 1;
  }
  uint64_t counts[3] = {0, 0, 0}, corrupt = 0, rows = st ? cs_store_num_rows(st) : 0;
  if (st && (select_rows(st, o, cols, &b, &s, counts, &err) ||
             (!o->csv && show_cols_resolve(cols, st, &err)))) {
    fprintf(stderr, "commsweep show: %s\n", err.msg);
    rc = 1;
  }
  if (st && !rc) {
    if (o->csv) csv_columns(csv), csv_header(csv);
    else table_header(o->path, rows, cols);
    if (print_rows(st, o, cols, csv, &b, &s, counts, &corrupt, &err)) {
      fprintf(stderr, "commsweep show: %s\n", err.msg);
      rc = 1;
    }
  }
  if (st && !rc && !o->csv) summary(st, o, rows, counts, corrupt, s.n);
  if (st && !rc && s.n == 0 && o->limit != 0)
    show_filters_explain(&o->filters, rows, o->csv ? stderr : stdout);
  cs_store_close(st, NULL);
  if (cols) show_cols_free(cols);
  free(s.rows);
  free(b.jobs);
  free(b.res);
  free(csv);
  free(cols);
  free(o);
  return rc;
}
