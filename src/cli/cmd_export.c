/* `commsweep export FILE.h5 --job K --jsonl`: one job's transaction records as JSON lines
 * (CrossRing-log field names, via the back-fill module), its per-step summaries as JSON lines
 * (--steps), or its inputs and EngineResult as one JSON object (--result).  The row's checksums
 * are verified first; a pending, failed or corrupt row is an error, not an empty export. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/backfill.h"
#include "commsweep/store.h"

#define TXT(dst, src) cs_store_get_text((src), sizeof(src), (dst), sizeof(dst))

/* Finds the row whose key starts with prefix; CS_ENOTFOUND or CS_EINVAL (ambiguous). */
static int find_key(cs_store *st, const char *prefix, uint64_t *row, cs_err *err) {
  size_t len = strlen(prefix);
  if (len == 0 || len > CS_STORE_KEY_LEN)
    return cs_err_set(err, CS_EINVAL, "--key wants 1 to 64 hex digits");
  uint64_t rows = cs_store_num_rows(st), found = 0;
  cs_store_index_row idx[1024];
  for (uint64_t first = 0; first < rows; first += 1024) {
    uint64_t n = rows - first < 1024 ? rows - first : 1024;
    if (cs_store_read_index(st, first, n, idx, err)) return err->code;
    for (uint64_t k = 0; k < n; k++)
      if (!strncmp(idx[k].key, prefix, len)) {
        if (found++) return cs_err_set(err, CS_EINVAL, "key prefix '%s' is ambiguous", prefix);
        *row = first + k;
      }
  }
  return found ? CS_OK : cs_err_set(err, CS_ENOTFOUND, "no job has a key starting '%s'", prefix);
}

static void add_result(cJSON *o, uint64_t row, const cs_store_job_row *j,
                       const cs_store_result_row *r) {
  char text[CS_STORE_JSON_LEN + 1];
  cJSON_AddNumberToObject(o, "row", (double)row);
  TXT(text, j->key);
  cJSON_AddStringToObject(o, "cache_key", text);
  TXT(text, j->sweep);
  cJSON_AddStringToObject(o, "sweep", text);
  TXT(text, j->job_json);
  cJSON *inputs = cJSON_Parse(text);
  cJSON_AddItemToObject(o, "job", inputs ? inputs : cJSON_CreateString(text));
  cJSON_AddStringToObject(o, "status", cs_store_status_name(r->status));
  TXT(text, r->error);
  if (text[0]) cJSON_AddStringToObject(o, "error", text);
  cJSON *agg = cJSON_AddObjectToObject(o, "aggregates");
  cJSON *meta = cJSON_AddObjectToObject(o, "trace_meta");
  cs_backfill_result_json(&r->result, agg, meta);
  cJSON_AddNumberToObject(meta, "txlog_offset", (double)r->txlog_offset);
  cJSON_AddNumberToObject(meta, "txlog_count", (double)r->txlog_count);
  cJSON_AddNumberToObject(meta, "steplog_offset", (double)r->steplog_offset);
  cJSON_AddNumberToObject(meta, "steplog_count", (double)r->steplog_count);
}

typedef enum what { RECORDS, STEPS, RESULT } what;

/* The row's per-step summaries, verified against its steplog_checksum, as JSON lines. */
static int export_steps(cs_store *st, const char *path, uint64_t row,
                        const cs_store_result_row *res, bool write, FILE *out, cs_err *err) {
  uint64_t n = res->steplog_count;
  if (res->steplog_offset > cs_store_steplog_len(st) ||
      n > cs_store_steplog_len(st) - res->steplog_offset)
    return cs_err_set(err, CS_ECORRUPT, "job %" PRIu64 ": slice outside /steplog; rerun the sweep",
                      row);
  cs_store_step_row *s = calloc(n ? n : 1, sizeof *s);
  if (!s) return cs_err_set(err, CS_ENOMEM, "%" PRIu64 " step summaries", n);
  int rc = n ? cs_store_read_steplog(st, res->steplog_offset, n, s, err) : CS_OK;
  if (!rc && cs_store_steplog_checksum(row, s, n) != res->steplog_checksum)
    rc = cs_err_set(err, CS_ECORRUPT,
                    "job %" PRIu64 " is corrupt (checksum mismatch); rerun its sweep to recompute "
                    "it",
                    row);
  if (!rc && write && n == 0 && res->status == CS_STORE_DONE && cs_store_spool_exists(path))
    rc = cs_err_set(err, CS_ENOTFOUND,
                    "job %" PRIu64 " has no step summaries in the file yet: they may be in the log "
                    "spool of the sweep that ran it (%s.spool.*), which that sweep, or the next "
                    "one over the file, merges into it",
                    row, path);
  else if (!rc && write && n == 0 && res->status == CS_STORE_DONE)
    rc = cs_err_set(err, CS_ENOTFOUND,
                    "job %" PRIu64 " was run without log (--txlog none); rerun its sweep with "
                    "--txlog steps or full to summarize its steps",
                    row);
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_step_columns(cols, CS_STORE_MAX_COLUMNS);
  char line[4096];
  for (uint64_t i = 0; !rc && write && i < n; i++) {
    cs_cols_json_line(cols, &s[i], line, sizeof line);
    if (fputs(line, out) == EOF || fputc('\n', out) == EOF)
      rc = cs_err_set(err, CS_EIO, "step summaries: write failed at summary %" PRIu64, i);
  }
  free(s);
  return rc;
}

static int export_row(cs_store *st, const char *path, uint64_t row, what w, FILE *out,
                      cs_err *err) {
  bool result = w == RESULT;
  cs_store_job_row job;
  cs_store_result_row res;
  if (cs_store_read_jobs(st, row, 1, &job, err) || cs_store_read_results(st, row, 1, &res, err))
    return err->code;
  if (res.status == CS_STORE_PENDING)
    return cs_err_set(err, CS_ENOTFOUND, "job %" PRIu64 " is pending (not run yet)", row);
  if (res.status == CS_STORE_FAILED && w == STEPS) {
    char msg[CS_STORE_ERROR_LEN + 1];
    TXT(msg, res.error);
    return cs_err_set(err, CS_ENOTFOUND, "job %" PRIu64 " failed, it has no log: %s", row, msg);
  }
  if (cs_store_row_checksum(row, job.key, &res) != res.checksum)
    return cs_err_set(err, CS_ECORRUPT,
                      "job %" PRIu64 " is corrupt (checksum mismatch); rerun its sweep to "
                      "recompute it",
                      row);
  /* the summaries are verified in every mode; --steps reads no records */
  if (export_steps(st, path, row, &res, w == STEPS, out, err)) return err->code;
  if (w == STEPS) return CS_OK;
  uint64_t n = res.txlog_count;
  if (res.txlog_offset > cs_store_txlog_len(st) || n > cs_store_txlog_len(st) - res.txlog_offset)
    return cs_err_set(err, CS_ECORRUPT, "job %" PRIu64 ": slice outside /txlog; rerun the sweep",
                      row);
  cs_store_txn_row *t = calloc(n ? n : 1, sizeof *t);
  cs_txn_record *recs = calloc(n ? n : 1, sizeof *recs);
  int rc = t && recs ? CS_OK : cs_err_set(err, CS_ENOMEM, "%" PRIu64 " records", n);
  if (!rc && n) rc = cs_store_read_txlog(st, res.txlog_offset, n, t, err);
  if (!rc && (cs_store_row_checksum(row, job.key, &res) != res.checksum ||
              cs_store_txlog_checksum(row, t, n) != res.txlog_checksum))
    rc = cs_err_set(err, CS_ECORRUPT,
                    "job %" PRIu64 " is corrupt (checksum mismatch); rerun its sweep to recompute "
                    "it",
                    row);
  if (!rc && result) {
    cJSON *o = cJSON_CreateObject();
    add_result(o, row, &job, &res);
    char *text = cJSON_Print(o);
    fprintf(out, "%s\n", text ? text : "{}");
    free(text);
    cJSON_Delete(o);
  } else if (!rc && res.status == CS_STORE_FAILED) {
    char msg[CS_STORE_ERROR_LEN + 1];
    TXT(msg, res.error);
    rc = cs_err_set(err, CS_ENOTFOUND, "job %" PRIu64 " failed, it has no log: %s", row, msg);
  } else if (!rc && n == 0 && res.result.num_transactions > 0 && cs_store_spool_exists(path)) {
    rc = cs_err_set(err, CS_ENOTFOUND,
                    "job %" PRIu64 " has no log in the file yet: it may be in the log spool of "
                    "the sweep that ran it (%s.spool.*), which that sweep, or the next one over "
                    "the file, merges into it",
                    row, path);
  } else if (!rc && n == 0 && res.result.num_transactions > 0 &&
             res.txlog_detail == CS_STORE_LOG_STEPS) {
    rc = cs_err_set(err, CS_ENOTFOUND,
                    "job %" PRIu64 " was run with --txlog steps: it has per-step summaries "
                    "(export --steps) but no records; rerun its sweep with --txlog full to log "
                    "them",
                    row);
  } else if (!rc && n == 0 && res.result.num_transactions > 0) {
    rc = cs_err_set(err, CS_ENOTFOUND,
                    "job %" PRIu64 " was run in results-only mode; rerun its sweep without "
                    "--results-only to log it",
                    row);
  } else if (!rc) {
    char engine[sizeof res.result.engine + 1];
    TXT(engine, res.result.engine);
    for (uint64_t i = 0; i < n; i++) recs[i] = t[i].rec;
    rc = cs_backfill_write_jsonl(out, cs_engine_find(engine), recs, (size_t)n, err);
  }
  free(t);
  free(recs);
  return rc;
}

typedef struct export_args {
  const char *path, *key, *out_path;
  long job;
  int what; /* what */
} export_args;

#define A(field) offsetof(export_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_LONG, "--job", NULL, "ROW", A(job), 0, 9007199254740992.0, "a row number",
     .help = "row of /jobs and /results (as `commsweep show` prints it)"},
    {CS_CLI_STR, "--key", NULL, "HEX", A(key), .help = "the job's cache key, or a unique prefix of it"},
    {CS_CLI_CONST, "--jsonl", NULL, NULL, A(what), RECORDS,
     .help = "the transaction records as JSON lines (default)"},
    {CS_CLI_CONST, "--steps", NULL, NULL, A(what), STEPS,
     .help = "the per-step summaries (/steplog) as JSON lines, one per step"},
    {CS_CLI_CONST, "--result", NULL, NULL, A(what), RESULT,
     .help = "the job's inputs and EngineResult as one JSON object"},
    {CS_CLI_STR, "--out", "-o", "F", A(out_path), .help = "write to F instead of stdout"},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"export", options, 1, {offsetof(export_args, path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep export FILE.h5 (--job ROW | --key HEX) [--jsonl | --steps | --result] "
          "[-o OUT]\n"
          "\n");
  cs_cli_print_options(&command, f);
}

int cs_cli_export(int argc, char **argv) {
  export_args a = {.job = -1, .what = RECORDS};
  int urc = cs_cli_parse(&command, argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  const char *path = a.path, *key = a.key, *out_path = a.out_path;
  long long job = a.job;
  what w = (what)a.what;
  if (!path || (job < 0) == !key) {
    fprintf(stderr, "commsweep export: need FILE.h5 and one of --job ROW or --key HEX\n\n");
    usage(stderr);
    return 2;
  }
  cs_err err;
  cs_store *st = NULL;
  if (cs_store_open(path, CS_STORE_READ, &st, &err)) {
    fprintf(stderr, "commsweep export: %s\n", err.msg);
    return 1;
  }
  uint64_t row = (uint64_t)job, rows = cs_store_num_rows(st);
  int rc = key ? find_key(st, key, &row, &err) : CS_OK;
  if (!rc && rows == 0)
    rc = cs_err_set(&err, CS_ENOTFOUND, "--job %" PRIu64 ": the file has no rows yet", row);
  else if (!rc && row >= rows)
    rc = cs_err_set(&err, CS_EINVAL, "--job %" PRIu64 ": the file has rows 0 to %" PRIu64, row,
                    rows - 1);
  /* -o is written under a temporary name: a failed export leaves an existing file alone */
  cs_cli_out o;
  memset(&o, 0, sizeof o);
  if (!rc && out_path) rc = cs_cli_out_open(&o, out_path, path, &err);
  if (!rc) rc = export_row(st, path, row, w, out_path ? o.f : stdout, &err);
  if (out_path) {
    cs_err cerr;
    int crc = cs_cli_out_close(&o, rc == CS_OK, &cerr);
    if (!rc && crc) {
      err = cerr;
      rc = crc;
    }
  }
  cs_store_close(st, NULL);
  if (rc) fprintf(stderr, "commsweep export: %s: %s\n", path, err.msg);
  return rc ? 1 : 0;
}
