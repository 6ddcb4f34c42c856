/* `commsweep show FILE.h5`: the results as a table in the style of nccl-tests (one line per
 * job: primitive, participants, size, count, type, time, algbw, busbw, ...), with filters, or
 * as CSV with every column at full precision.  Reads the file serially; needs no MPI. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commsweep/engine.h"
#include "commsweep/store.h"

#define BLOCK 2048

typedef struct filters {
  const char *primitive, *engine, *topology, *sweep, *dtype;
  int status; /* -1 any */
  int participants; /* 0 any */
  uint64_t min_size, max_size;
  bool csv, verify;
  long limit;
} filters;

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep show FILE.h5 [filters] [--csv] [--verify]\n"
          "\n"
          "Prints one line per job, nccl-tests style: size and count, time, algorithm bandwidth\n"
          "(size / time) and bus bandwidth (EngineResult bus_bw_gb_per_s, tbl-cr-06).\n"
          "GB/s = 1e9 bytes per second; time in microseconds.\n"
          "\n"
          "filters:\n"
          "  --primitive P        allreduce | allgather | reducescatter | alltoall | p2p\n"
          "  --participants N     participant count\n"
          "  --size N             message size in bytes (--min-size N, --max-size N for a range)\n"
          "  --engine E           ");
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    fprintf(f, "%s%s", e == cs_engine_list() ? "" : " | ", (*e)->name);
  fprintf(f,
          "\n"
          "  --topology T         die topology\n"
          "  --dtype D            element type\n"
          "  --sweep NAME         rows added by this sweep\n"
          "  --status S           done | failed | pending\n"
          "  --limit N            at most N lines\n"
          "output:\n"
          "  --csv                every column of /jobs and /results, full precision\n"
          "  --verify             check each row's checksums (reads /txlog and /steplog); corrupt rows\n"
          "                       show status 'corrupt'\n");
}

static int dtype_bytes(const char *d) {
  static const struct { const char *name; int bytes; } t[] = {
      {"fp64", 8}, {"float64", 8}, {"int64", 8}, {"fp32", 4}, {"float32", 4}, {"int32", 4},
      {"tf32", 4}, {"bf16", 2}, {"fp16", 2}, {"float16", 2}, {"half", 2}, {"int16", 2},
      {"fp8", 1}, {"int8", 1}, {"uint8", 1}, {NULL, 0}};
  for (int i = 0; t[i].name; i++)
    if (!strcmp(t[i].name, d)) return t[i].bytes;
  return 0;
}

#define TXT(dst, src) cs_store_get_text((src), sizeof(src), (dst), sizeof(dst))

static bool wanted(const filters *f, const cs_store_job_row *j, int status) {
  char s[CS_STORE_JSON_LEN];
  if (f->primitive && (TXT(s, j->primitive), strcmp(s, f->primitive))) return false;
  if (f->engine && (TXT(s, j->engine), strcmp(s, f->engine))) return false;
  if (f->topology && (TXT(s, j->topology), strcmp(s, f->topology))) return false;
  if (f->sweep && (TXT(s, j->sweep), strcmp(s, f->sweep))) return false;
  if (f->dtype && (TXT(s, j->dtype), strcmp(s, f->dtype))) return false;
  if (f->participants && j->num_participants != f->participants) return false;
  if (j->msg_size_bytes < f->min_size || j->msg_size_bytes > f->max_size) return false;
  if (f->status >= 0 && status != f->status) return false;
  return true;
}

static double algbw(const cs_store_job_row *j, const cs_store_result_row *r) {
  return r->result.total_time_us > 0
             ? (double)j->msg_size_bytes / (r->result.total_time_us * 1e3)
             : 0;
}

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
  cs_store_result_columns(c->result, CS_STORE_MAX_COLUMNS);
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
  TXT(error, r->error);
  printf("%" PRIu64 ",", row);
  cs_cols_csv_values(c->job, j, stdout);
  printf(",%s,", status);
  cs_cols_csv_values(c->result, r, stdout);
  printf(",%.17g,", algbw(j, r));
  csv_text(error);
  putchar('\n');
}

static void table_header(const char *path, uint64_t rows) {
  printf("# commsweep results: %s (%" PRIu64 " rows)\n#\n", path, rows);
  printf("# %6s  %-13s %-8s %4s %-18s %12s %10s %-5s %-6s %-9s %4s %-15s %5s %12s %10s %10s "
         "%7s %5s %s\n",
         "row", "primitive", "algo", "N", "participants", "size", "count", "type", "engine",
         "topology", "dies", "outst rd/wr", "burst", "time", "algbw", "busbw", "strag", "steps",
         "status");
  printf("# %6s  %-13s %-8s %4s %-18s %12s %10s %-5s %-6s %-9s %4s %-15s %5s %12s %10s %10s "
         "%7s %5s %s\n",
         "", "", "", "", "", "(B)", "(elem)", "", "", "", "", "mst / slv", "", "(us)", "(GB/s)",
         "(GB/s)", "", "", "");
}

static void table_row(uint64_t row, const cs_store_job_row *j, const cs_store_result_row *r,
                      const char *status) {
  char prim[20], algo[20], dtype[20], eng[20], topo[40], outst[40], count[24], error[120];
  char parts[19];
  TXT(prim, j->primitive), TXT(algo, j->algorithm), TXT(dtype, j->dtype), TXT(eng, j->engine);
  TXT(topo, j->topology), TXT(error, r->error), TXT(parts, j->participants);
  if (strnlen(j->participants, sizeof j->participants) >= sizeof parts)
    memcpy(parts + sizeof parts - 4, "...", 4); /* cut visibly */
  snprintf(outst, sizeof outst, "%d/%d %d/%d", j->mst_rd_outstanding, j->mst_wr_outstanding,
           j->slv_rd_outstanding, j->slv_wr_outstanding);
  int eb = dtype_bytes(dtype);
  if (eb) snprintf(count, sizeof count, "%" PRIu64, j->msg_size_bytes / (uint64_t)eb);
  else snprintf(count, sizeof count, "-");
  printf("  %6" PRIu64 "  %-13s %-8s %4d %-18s %12" PRIu64 " %10s %-5s %-6s %-9s %4d %-15s %5d ",
         row, prim[0] ? prim : "?", algo, j->num_participants, parts, j->msg_size_bytes, count,
         dtype, eng, topo, j->num_dies, outst, j->burst_length);
  if (r->status == CS_STORE_DONE && !strcmp(status, "done"))
    printf("%12.3f %10.3f %10.3f %7.3f %5u %s\n", r->result.total_time_us, algbw(j, r),
           r->result.bus_bw_gb_per_s, r->result.straggler_ratio, r->result.algorithm_steps,
           status);
  else
    printf("%12s %10s %10s %7s %5s %s%s%s\n", "-", "-", "-", "-", "-", status,
           error[0] ? ": " : "", error);
}

/* The row's checksum holds (reads its /txlog and /steplog slices). */
static bool row_ok(cs_store *st, uint64_t row, const cs_store_job_row *j,
                   const cs_store_result_row *r) {
  return cs_store_row_verifies(st, row, j->key, r);
}

static bool takes_value(const char *opt) {
  static const char *const valued[] = {"--primitive", "--engine",   "--topology", "--sweep",
                                       "--dtype",     "--participants", "--size", "--min-size",
                                       "--max-size",  "--limit",    "--status",   NULL};
  for (const char *const *v = valued; *v; v++)
    if (!strcmp(*v, opt)) return true;
  return false;
}

static int parse(int argc, char **argv, const char **path, filters *f) {
  memset(f, 0, sizeof *f);
  f->status = -1;
  f->max_size = UINT64_MAX;
  f->limit = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (!strcmp(a, "--csv")) f->csv = true;
    else if (!strcmp(a, "--verify")) f->verify = true;
    else if (a[0] == '-' && !takes_value(a)) {
      fprintf(stderr, "commsweep show: unknown option '%s'\n", a);
      return 2;
    } else if (a[0] == '-' && !v) {
      fprintf(stderr, "commsweep show: option '%s' needs a value\n", a);
      return 2;
    } else if (!strcmp(a, "--primitive")) f->primitive = argv[++i];
    else if (!strcmp(a, "--engine")) f->engine = argv[++i];
    else if (!strcmp(a, "--topology")) f->topology = argv[++i];
    else if (!strcmp(a, "--sweep")) f->sweep = argv[++i];
    else if (!strcmp(a, "--dtype")) f->dtype = argv[++i];
    else if (!strcmp(a, "--participants")) f->participants = atoi(argv[++i]);
    else if (!strcmp(a, "--size")) f->min_size = f->max_size = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--min-size")) f->min_size = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--max-size")) f->max_size = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--limit")) f->limit = atol(argv[++i]);
    else if (!strcmp(a, "--status")) {
      const char *s = argv[++i];
      f->status = !strcmp(s, "pending") ? 0 : !strcmp(s, "done") ? 1 : !strcmp(s, "failed") ? 2 : -2;
      if (f->status == -2) {
        fprintf(stderr, "commsweep show: --status wants done, failed or pending\n");
        return 2;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "commsweep show: unknown option '%s'\n", a);
      return 2;
    } else if (!*path) *path = a;
    else {
      fprintf(stderr, "commsweep show: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (!*path) {
    fprintf(stderr, "commsweep show: which file?\n");
    return 2;
  }
  return 0;
}

int cs_cli_show(int argc, char **argv) {
  const char *path = NULL;
  filters f;
  int urc = parse(argc, argv, &path, &f);
  if (urc) {
    usage(urc == 1 ? stdout : stderr);
    return urc == 1 ? 0 : 2;
  }
  cs_err err;
  cs_store *st = NULL;
  if (cs_store_open(path, CS_STORE_READ, &st, &err)) {
    fprintf(stderr, "commsweep show: %s\n", err.msg);
    return 1;
  }
  uint64_t rows = cs_store_num_rows(st);
  cs_store_job_row *jobs = malloc(BLOCK * sizeof *jobs);
  cs_store_result_row *res = malloc(BLOCK * sizeof *res);
  uint8_t *ok = malloc(BLOCK);
  csv_cols *cols = f.csv ? malloc(sizeof *cols) : NULL;
  int rc = jobs && res && ok && (cols || !f.csv) ? 0 : 1;
  if (rc) fprintf(stderr, "commsweep show: out of memory\n");
  if (!rc) {
    if (f.csv) csv_columns(cols);
    if (f.csv) csv_header(cols);
    else table_header(path, rows);
  }
  uint64_t counts[4] = {0, 0, 0, 0};
  long shown = 0;
  for (uint64_t first = 0; !rc && first < rows; first += BLOCK) {
    uint64_t n = rows - first < BLOCK ? rows - first : BLOCK;
    /* The tables only: /job_json is never printed, /errors only for the failed rows shown
     * (read for those alone); --verify reads whole rows, whose checksum covers the errors. */
    static const char *const no_json[] = {"job_json", NULL}, *const no_error[] = {"error", NULL};
    if (cs_store_read_rows_without(st, true, no_json, first, n, jobs, &err) ||
        cs_store_read_rows_without(st, false, f.verify ? NULL : no_error, first, n, res, &err)) {
      fprintf(stderr, "commsweep show: %s\n", err.msg);
      rc = 1;
      break;
    }
    for (uint64_t k = 0; f.verify && k < n; k++) ok[k] = row_ok(st, first + k, &jobs[k], &res[k]);
    for (uint64_t k = 0; k < n; k++) {
      int s = res[k].status;
      const char *sname = cs_store_status_name(s);
      if (f.verify && s != CS_STORE_PENDING && !ok[k]) sname = "corrupt";
      counts[s >= 0 && s <= 2 && strcmp(sname, "corrupt") ? s : 3]++;
      if (!wanted(&f, &jobs[k], s)) continue;
      if (f.limit >= 0 && shown >= f.limit) continue;
      shown++;
      if (!f.verify) res[k].error[0] = '\0'; /* not read: only a failed row has one */
      if (!f.verify && s != CS_STORE_PENDING && s != CS_STORE_DONE &&
          cs_store_read_results(st, first + k, 1, &res[k], &err)) {
        fprintf(stderr, "commsweep show: %s\n", err.msg);
        rc = 1;
        break;
      }
      if (f.csv) csv_row(cols, first + k, &jobs[k], &res[k], sname);
      else table_row(first + k, &jobs[k], &res[k], sname);
    }
  }
  if (!rc && !f.csv) {
    char holder[512];
    printf("#\n# %" PRIu64 " rows: %" PRIu64 " done, %" PRIu64 " failed, %" PRIu64 " pending",
           rows, counts[1], counts[2], counts[0]);
    if (f.verify) printf(", %" PRIu64 " corrupt", counts[3]);
    printf("; %ld shown; %" PRIu64 " txlog records\n", shown, cs_store_txlog_len(st));
    if (cs_store_lock_holder(path, holder, sizeof holder))
      printf("# note: a sweep is writing this file (%s)\n", holder);
  }
  free(jobs);
  free(res);
  free(ok);
  free(cols);
  cs_store_close(st, NULL);
  return rc;
}
