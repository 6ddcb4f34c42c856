/* `commsweep run`: one spec and one adapter configuration in, one EngineResult out (JSON or a
 * table), and the transaction log as JSON lines. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/backfill.h"
#include "commsweep/cachekey.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "commsweep/job.h"
#include "commsweep/topo.h"

typedef struct run_args {
  const char *spec_path, *config_path, *engine_name, *engine_path, *txlog;
  long deadlock;
  bool table, no_txlog;
} run_args;

#define A(field) offsetof(run_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_TEXT, .help = "options:"},
    {CS_CLI_STR, "--spec", NULL, "SPEC.json", A(spec_path), .help = "the collective (required)"},
    {CS_CLI_STR, "--config", NULL, "ADAPTER.json", A(config_path),
     .help = "the adapter configuration (required)"},
    {CS_CLI_STR, "--engine", NULL, "NAME", A(engine_name),
     .help = "engine (default: the first listed below)"},
    {CS_CLI_STR, "--engine-config", NULL, "FILE", A(engine_path),
     .help = "engine options JSON {name, deadlock_guard_ticks, NAME{...}};\n"
             "without it the engine runs with its default options"},
    {CS_CLI_LONG, "--deadlock-ticks", NULL, "N", A(deadlock), 1, 9007199254740992.0,
     "a positive integer",
     .help = "ticks without a completion, while the engine simulates,\n"
             "before the job fails (include/commsweep/drive.h)"},
    {CS_CLI_STR, "--txlog", NULL, "FILE.jsonl", A(txlog),
     .help = "write the transaction records here (default: the adapter's\n"
             "transaction_log_path, {key} replaced by the cache key,\n"
             "relative to the current directory; the path is printed)"},
    {CS_CLI_FLAG, "--no-txlog", NULL, NULL, A(no_txlog), .help = "do not write the transaction log"},
    {CS_CLI_FLAG, "--table", NULL, NULL, A(table), .help = "print a readable table instead of JSON"},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"run", options, 0, {0}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep run --spec SPEC.json --config ADAPTER.json [options]\n"
          "\n"
          "Runs one job (L1 expand, L2 drive, L3 back-fill) and prints its EngineResult.\n"
          "\n");
  cs_cli_print_options(&command, f);
  fprintf(f,
          "\n"
          "Spec fields:\n");
  for (const cs_field_doc *d = cs_config_spec_fields(); d->key; d++)
    fprintf(f, "  %-28s %-8s %s\n", d->key, d->type, d->meaning);
  fprintf(f, "\nAdapter fields (all required):\n");
  for (const cs_field_doc *d = cs_config_adapter_fields(); d->key; d++)
    fprintf(f, "  %-28s %-8s %s\n", d->key, d->type, d->meaning);
  /* From the files compiled in (src/topo/data), so a new file shows up here by itself. */
  char names[512];
  cs_topo_die_names(names, sizeof names);
  fprintf(f, "  shipped die topologies: %s\n", names);
  cs_topo_layout_names(names, sizeof names);
  fprintf(f, "  shipped dcin layouts:   %s\n", names);
  fprintf(f, "\nEngine options (--engine-config):\n");
  cs_engine_print_options(f);
}

/* "{key}" in the template becomes the cache key. */
/* -1 when the expanded path does not fit in cap (it is never cut). */
static int expand_log_path(const char *tmpl, const char *key, char *out, size_t cap) {
  const char *at = strstr(tmpl, "{key}");
  int n = at ? snprintf(out, cap, "%.*s%s%s", (int)(at - tmpl), tmpl, key, at + 5)
             : snprintf(out, cap, "%s", tmpl);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static cJSON *result_json(const cs_job *job, const cs_job_output *out, const char *key,
                          const char *log, const cs_trace_meta *trace) {
  const cs_result *r = &out->result;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "cache_key", key);
  cJSON_AddStringToObject(o, "engine", r->engine);
  const cs_engine_ops *ops = cs_engine_find(r->engine);
  if (ops) cJSON_AddStringToObject(o, "model_version", cs_engine_model_version(ops));
  cJSON_AddStringToObject(o, "primitive", cs_primitive_name(job->spec.primitive));
  cJSON_AddStringToObject(o, "algorithm", cs_algorithm_name(job->spec.algorithm));
  cJSON_AddNumberToObject(o, "msg_size_bytes", (double)job->spec.msg_size_bytes);
  cJSON_AddNumberToObject(o, "num_participants", job->spec.num_participants);
  cJSON *agg = cJSON_AddObjectToObject(o, "aggregates");
  cJSON *meta = cJSON_AddObjectToObject(o, "trace_meta");
  cs_backfill_result_json(r, agg, meta);
  cJSON_AddStringToObject(meta, "transaction_log_path", log ? log : "");
  if (trace) cs_backfill_trace_meta_json(trace, meta); /* every counter, the die-pair traffic */
  cJSON *parts = cJSON_AddArrayToObject(meta, "participants");
  for (int i = 0; i < job->spec.num_participants; i++)
    cJSON_AddItemToArray(parts, cJSON_CreateNumber(cs_spec_participant(&job->spec, i)));
  return o;
}

/* The transaction log as the job runs: each step's records as JSON lines, and their sums. */
typedef struct run_log {
  FILE *f;
  const cs_engine_ops *engine;
  int bw_bytes;
  cs_trace_meta trace;
  uint64_t written; /* records written */
} run_log;

static int log_records(void *ctx, uint32_t step, const cs_txn_record *recs, uint64_t n,
                       cs_err *err) {
  run_log *l = ctx;
  (void)step;
  cs_backfill_trace_meta_add(recs, (size_t)n, l->bw_bytes, &l->trace);
  l->written += n;
  return cs_backfill_write_jsonl(l->f, l->engine, recs, (size_t)n, err);
}

/* The job runs again from its start: so does the log. */
static int log_restart(void *ctx, cs_err *err) {
  run_log *l = ctx;
  memset(&l->trace, 0, sizeof l->trace);
  l->written = 0;
  if (fflush(l->f) || fseek(l->f, 0, SEEK_SET) || ftruncate(fileno(l->f), 0))
    return cs_err_set(err, CS_EIO, "transaction log: cannot start it again");
  return CS_OK;
}

static void print_table(const cs_job *job, const cs_result *r) {
  double algbw = r->total_time_us > 0 ? (double)job->spec.msg_size_bytes / (r->total_time_us * 1e3) : 0;
  printf("%-14s %12s %5s %6s %12s %10s %10s %9s %12s %10s\n", "primitive", "size(B)", "N", "steps",
         "time(us)", "algbw", "busbw", "straggler", "cycles", "engine");
  printf("%-14s %12llu %5d %6u %12.4f %10.2f %10.2f %9.4f %12llu %10s\n",
         cs_primitive_name(job->spec.primitive), (unsigned long long)job->spec.msg_size_bytes,
         job->spec.num_participants, r->algorithm_steps, r->total_time_us, algbw,
         r->bus_bw_gb_per_s, r->straggler_ratio, (unsigned long long)r->sim_cycles, r->engine);
  printf("(algbw, busbw in GB/s; %llu transactions, %llu retries, %llu cross-die)\n",
         (unsigned long long)r->num_transactions, (unsigned long long)r->retries,
         (unsigned long long)r->cross_die_transactions);
}

int cs_cli_run(int argc, char **argv) {
  run_args a = {.engine_name = cs_engine_list()[0]->name, .deadlock = -1};
  int urc = cs_cli_parse(&command, argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  const char *spec_path = a.spec_path, *config_path = a.config_path, *engine_name = a.engine_name;
  const char *engine_path = a.engine_path, *txlog = a.txlog;
  long long deadlock = a.deadlock;
  bool table = a.table, no_txlog = a.no_txlog;
  if (!spec_path || !config_path) {
    fprintf(stderr, "commsweep run: --spec and --config are required (see commsweep run --help)\n");
    return 2;
  }
  if (!engine_path && !cs_engine_find(engine_name)) {
    /* a path given to --engine would otherwise be cut to the name's 16 characters */
    char names[256];
    cs_engine_names(names, sizeof names);
    bool a_file = strchr(engine_name, '/') || strstr(engine_name, ".json");
    fprintf(stderr, "commsweep run: --engine '%s': unknown engine (engines: %s)%s%s\n",
            engine_name, names,
            a_file ? "; engine options from a file go with --engine-config " : "",
            a_file ? engine_name : "");
    return 2;
  }
  cs_err err;
  cs_err_clear(&err);
  cs_job job;
  memset(&job, 0, sizeof job);
  if (cs_config_spec_load(spec_path, &job.spec, &err) ||
      cs_config_adapter_load(config_path, &job.adapter, &err)) {
    fprintf(stderr, "commsweep run: %s\n", err.msg);
    return 1;
  }
  if (engine_path) {
    if (cs_engine_options_load(engine_path, &job.engine, &err)) {
      fprintf(stderr, "commsweep run: %s\n", err.msg);
      return 1;
    }
  } else {
    snprintf(job.engine.name, sizeof job.engine.name, "%s", engine_name);
    job.engine.deadlock_guard_ticks = CS_DEFAULT_DEADLOCK_GUARD;
  }
  if (deadlock > 0) job.engine.deadlock_guard_ticks = (uint64_t)deadlock;

  char key[CS_KEY_HEX];
  cs_job_output out;
  cs_err_clear(&err);
  if (cs_cachekey(&job, key, &err)) {
    fprintf(stderr, "commsweep run: %s\n", err.msg);
    return 1;
  }
  /* the log is written while the job runs, a step at a time */
  char log_path[CS_PATH_MAX + CS_KEY_HEX];
  cs_cli_out o;
  memset(&o, 0, sizeof o);
  run_log lg = {.engine = cs_engine_find(job.engine.name), .bw_bytes = job.adapter.bw_bytes};
  cs_job_log log = {log_records, log_restart, &lg};
  int rc = CS_OK;
  if (!no_txlog) {
    const char *tmpl = txlog ? txlog : job.adapter.transaction_log_path;
    rc = expand_log_path(tmpl, key, log_path, sizeof log_path)
             ? cs_err_set(&err, CS_EINVAL,
                          "transaction log path '%s' is too long: %zu characters after "
                          "{key} expansion, at most %zu fit",
                          tmpl, strlen(tmpl) + (strstr(tmpl, "{key}") ? CS_KEY_HEX - 6 : 0),
                          sizeof log_path - 1)
             : cs_cli_out_open(&o, log_path, NULL, &err);
    lg.f = o.f;
  }
  cs_job_shared *sh = rc ? NULL : cs_job_shared_new();
  if (!rc && !sh) rc = cs_err_set(&err, CS_ENOMEM, "out of memory");
  if (!rc) rc = cs_job_run_logged(sh, &job, 0, no_txlog ? NULL : &log, &out, &err);
  cs_job_shared_free(sh);
  if (!no_txlog && o.f) {
    cs_err cerr;
    int crc = cs_cli_out_close(&o, rc == CS_OK, &cerr);
    if (!rc && crc) {
      err = cerr;
      rc = crc;
    }
  }
  if (rc) {
    fprintf(stderr, "commsweep run: %s\n", err.msg);
    return 1;
  }
  if (!no_txlog) {
    /* the adapter's transaction_log_path is a required field, usually relative: say where the
     * records went */
    fprintf(stderr, "commsweep run: %llu transaction records written to '%s' (%s; --no-txlog "
            "writes none)\n", (unsigned long long)lg.written, log_path,
            txlog ? "--txlog" : "the adapter's transaction_log_path, --txlog FILE elsewhere");
  }
  if (table) {
    print_table(&job, &out.result);
  } else {
    cJSON *res = result_json(&job, &out, key, no_txlog ? NULL : log_path, no_txlog ? NULL : &lg.trace);
    char *text = cJSON_Print(res);
    if (text) puts(text);
    free(text);
    cJSON_Delete(res);
  }
  cs_job_output_free(&out);
  return 0;
}
