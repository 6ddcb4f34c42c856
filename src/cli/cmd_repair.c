/* `commsweep repair FILE.h5 [--sweep SWEEP.json]`: rebuilds a damaged store into a new file
 * that keeps every row that verifies, and replaces the file with it by one rename.
 *
 * Read from the damaged file, in blocks, each block read again row by row when it fails: /jobs
 * and /job_json (compressed: one bad byte makes a whole chunk unreadable), /results with
 * /errors, and each finished row's /txlog and /steplog slices.  A finished row is kept when its
 * checksum holds with its key and its slices hash to txlog_checksum and steplog_checksum;
 * everything else becomes a pending row that the next sweep reruns.  A /jobs row that cannot
 * be read is rebuilt from the sweep file when given: the job whose key
 * makes the row's checksum hold is the row's job.  A row whose /jobs row is lost and cannot be
 * rebuilt stays, pending, under an empty key (no sweep matches it again).  A /job_json row that
 * cannot be read is rebuilt from the sweep file too (the job of the row's key), else left
 * empty: the row itself is intact. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "commsweep/sweep.h"

#define BLOCK 64

#define MAX_SWEEPS 16

typedef struct repair_args {
  const char *path, *sweep_paths[MAX_SWEEPS];
  size_t nsweeps;
  bool dry;
} repair_args;

static int add_sweep(void *args, const char *option, const char *value) {
  repair_args *a = args;
  if (a->nsweeps == MAX_SWEEPS) {
    fprintf(stderr, "commsweep repair: %s: at most %d sweep files\n", option, MAX_SWEEPS);
    return 2;
  }
  a->sweep_paths[a->nsweeps++] = value;
  return 0;
}

static const cs_cli_opt options[] = {
    {CS_CLI_FN, "--sweep", NULL, "S", .set = add_sweep,
     .help = "the sweep file(s) that wrote FILE.h5 (repeatable)"},
    {CS_CLI_FLAG, "--dry-run", "-n", NULL, offsetof(repair_args, dry),
     .help = "report what would be kept; write nothing"},
    {.kind = CS_CLI_END}};

static const cs_cli_cmd command = {"repair", options, 1, {offsetof(repair_args, path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep repair FILE.h5 [--sweep SWEEP.json] [--dry-run]\n"
          "\n"
          "Rebuilds a damaged sweep file: every row whose checksums verify is kept, every other\n"
          "row becomes pending (the next sweep reruns it).  /jobs rows that cannot be read are\n"
          "rebuilt from SWEEP.json when given.  The file is replaced by one rename once the new\n"
          "one is complete; nothing changes when the repair fails.\n"
          "\n");
  cs_cli_print_options(&command, f);
}

typedef struct tally {
  uint64_t kept, pending, corrupt, jobs_lost, jobs_rebuilt, results_lost, json_lost, json_rebuilt;
  uint64_t networks; /* /jobs rows of an older schema given their network column */
} tally;

/* A row of a file older than the network column gets it from its job's JSON (a job that did not
 * load has none, as in a new file). */
static void name_network(cs_store_job_row *row, tally *t) {
  cs_job job;
  cs_err err;
  char text[CS_STORE_JSON_LEN + 1], network[2 * CS_STORE_NETWORK_LEN];
  cs_store_get_text(row->job_json, sizeof row->job_json, text, sizeof text);
  if (row->network[0] || !row->primitive[0] || cs_sweep_job_from_json(text, &job, &err)) return;
  cs_engine_network(&job, network, sizeof network);
  cs_store_set_text(row->network, sizeof row->network, network);
  t->networks++;
}

typedef enum part { JOB_ROWS, JOB_JSON, RESULT_ROWS } part;

static int read_part(cs_store *st, part what, uint64_t first, uint64_t n, void *out, cs_err *err) {
  static const char *const no_json[] = {"job_json", NULL};
  switch (what) {
    case JOB_ROWS: return cs_store_read_rows_without(st, true, no_json, first, n, out, err);
    case JOB_JSON: return cs_store_read_job_json(st, first, n, out, err);
    default: return cs_store_read_results(st, first, n, out, err);
  }
}

/* Reads rows [first, first + n) of /jobs, /job_json (into the job rows' job_json) or /results,
 * row by row after a failed block; ok[k] = 0 for each row that cannot be read (its part of
 * the row is zeroed). */
static void read_block(cs_store *st, part what, uint64_t first, uint64_t n, void *out,
                       uint8_t *ok) {
  cs_err err;
  size_t size = what == RESULT_ROWS ? sizeof(cs_store_result_row) : sizeof(cs_store_job_row);
  memset(ok, 1, n);
  if (!read_part(st, what, first, n, out, &err)) return;
  for (uint64_t k = 0; k < n; k++) {
    char *row = (char *)out + k * size;
    if (!read_part(st, what, first + k, 1, row, &err)) continue;
    ok[k] = 0;
    if (what == JOB_JSON) memset(((cs_store_job_row *)row)->job_json, 0, CS_STORE_JSON_LEN);
    else if (what == JOB_ROWS) memset(row, 0, offsetof(cs_store_job_row, job_json));
    else memset(row, 0, size);
  }
}

/* The job of `key` in the sweep files, or NULL. */
static const cs_sweep_job *by_key(const cs_sweep *sweeps, size_t nsweeps, const char *key,
                                  const cs_sweep **owner) {
  for (size_t s = 0; s < nsweeps; s++)
    for (size_t i = 0; i < sweeps[s].num_jobs; i++)
      if (!memcmp(sweeps[s].jobs[i].key, key, CS_STORE_KEY_LEN)) {
        *owner = &sweeps[s];
        return &sweeps[s].jobs[i];
      }
  return NULL;
}

/* The sweep job whose key makes `res`'s checksum hold at `row`, or NULL. */
static const cs_sweep_job *identify(const cs_sweep *sweeps, size_t nsweeps, uint64_t row,
                                    const cs_store_result_row *res, const cs_sweep **owner) {
  for (size_t s = 0; s < nsweeps; s++)
    for (size_t i = 0; i < sweeps[s].num_jobs; i++) {
      char key[CS_STORE_KEY_LEN];
      memcpy(key, sweeps[s].jobs[i].key, CS_STORE_KEY_LEN);
      if (cs_store_row_checksum(row, key, res) == res->checksum) {
        *owner = &sweeps[s];
        return &sweeps[s].jobs[i];
      }
    }
  return NULL;
}

static int rebuild(cs_store *old, cs_store *st, const cs_sweep *sweeps, size_t nsweeps,
                   tally *t, cs_err *err) {
  uint64_t rows = cs_store_num_rows(old), log_len = cs_store_txlog_len(old);
  cs_store_job_row *jobs = malloc(BLOCK * sizeof *jobs);
  cs_store_result_row *res = malloc(BLOCK * sizeof *res);
  uint8_t jok[BLOCK], json_ok[BLOCK], rok[BLOCK];
  cs_store_txn_row *slice = NULL;
  uint64_t slice_cap = 0;
  int rc = jobs && res ? CS_OK : cs_err_set(err, CS_ENOMEM, "out of memory");
  if (!rc && st) rc = cs_store_grow(st, rows, log_len, err);
  if (!rc && st) rc = cs_store_grow_steplog(st, cs_store_steplog_len(old), err);
  for (uint64_t first = 0; !rc && first < rows; first += BLOCK) {
    uint64_t n = rows - first < BLOCK ? rows - first : BLOCK;
    read_block(old, JOB_ROWS, first, n, jobs, jok);
    read_block(old, JOB_JSON, first, n, jobs, json_ok);
    read_block(old, RESULT_ROWS, first, n, res, rok);
    for (uint64_t k = 0; k < n && !rc; k++) {
      uint64_t row = first + k;
      cs_store_result_row *r = &res[k];
      bool finished = rok[k] && (r->status == CS_STORE_DONE || r->status == CS_STORE_FAILED);
      t->results_lost += !rok[k];
      if (!jok[k]) {
        t->jobs_lost++;
        const cs_sweep *owner = NULL;
        const cs_sweep_job *j = finished ? identify(sweeps, nsweeps, row, r, &owner) : NULL;
        if (j && !cs_sweep_job_row(owner, j, r->txlog_count ? r->txlog_offset : 0,
                                   r->txlog_count, &jobs[k])) {
          jobs[k].steplog_reserved_offset = r->steplog_count ? r->steplog_offset : 0;
          jobs[k].steplog_reserved_count = r->steplog_count;
          jok[k] = json_ok[k] = 1;
          t->jobs_rebuilt++;
        }
      }
      if (jok[k] && !json_ok[k]) {
        t->json_lost++;
        const cs_sweep *owner = NULL;
        const cs_sweep_job *j = by_key(sweeps, nsweeps, jobs[k].key, &owner);
        cs_store_job_row *again = j ? malloc(sizeof *again) : NULL;
        if (again && !cs_sweep_job_row(owner, j, 0, 0, again)) {
          memcpy(jobs[k].job_json, again->job_json, CS_STORE_JSON_LEN);
          t->json_rebuilt++;
        }
        free(again);
      }
      if (jok[k] && json_ok[k] && cs_store_schema_version(old) < CS_STORE_SCHEMA_VERSION)
        name_network(&jobs[k], t);
      bool in_log = r->txlog_offset <= log_len && r->txlog_count <= log_len - r->txlog_offset;
      bool keep = finished && jok[k] && in_log &&
                  cs_store_row_checksum(row, jobs[k].key, r) == r->checksum;
      if (keep && r->txlog_count > slice_cap) {
        cs_store_txn_row *grown = realloc(slice, r->txlog_count * sizeof *slice);
        if (!grown) {
          rc = cs_err_set(err, CS_ENOMEM, "row %" PRIu64 ": out of memory", row);
          break;
        }
        slice = grown;
        slice_cap = r->txlog_count;
      }
      cs_err rerr;
      if (keep && r->txlog_count &&
          cs_store_read_txlog(old, r->txlog_offset, r->txlog_count, slice, &rerr))
        keep = false;
      if (keep && cs_store_txlog_checksum(row, slice, r->txlog_count) != r->txlog_checksum)
        keep = false;
      cs_store_step_row *steps = NULL;
      if (keep && r->steplog_count) {
        steps = malloc(r->steplog_count * sizeof *steps);
        keep = steps && !cs_store_read_steplog(old, r->steplog_offset, r->steplog_count, steps,
                                               &rerr);
      }
      if (keep && cs_store_steplog_checksum(row, steps, r->steplog_count) != r->steplog_checksum)
        keep = false;
      if (keep) t->kept++;
      else if (finished) t->corrupt++;
      else t->pending++;
      if (!st) {
        free(steps);
        continue;
      }
      if (!jok[k]) memset(&jobs[k], 0, sizeof jobs[k]); /* lost: pending under an empty key */
      if (keep) {
        char key[CS_STORE_KEY_LEN];
        memcpy(key, jobs[k].key, CS_STORE_KEY_LEN);
        rc = cs_store_put_result_steps(st, row, key, r, slice, r->txlog_count, steps,
                                       r->steplog_count, err);
      }
      free(steps);
    }
    if (!rc && st) rc = cs_store_write_jobs(st, first, n, jobs, err);
  }
  free(slice);
  free(jobs);
  free(res);
  return rc;
}

/* The engines whose extra columns the rebuilt file names: those the file names, those of its
 * /jobs rows and those of the sweep files' jobs (a file laid out before it held some engine's
 * jobs keeps that engine's values in its rows, unnamed: engine.h, CS_ENGINES_IN_EVERY_FILE). */
static cs_engine_set engines_to_name(cs_store *old, const cs_sweep *sweeps, size_t nsweeps) {
  cs_engine_set engines = cs_store_engines(old);
  for (size_t s = 0; s < nsweeps; s++) engines |= cs_sweep_engines(&sweeps[s]);
  cs_store_job_row *jobs = malloc(BLOCK * sizeof *jobs);
  uint8_t ok[BLOCK];
  uint64_t rows = cs_store_num_rows(old);
  for (uint64_t first = 0; jobs && first < rows; first += BLOCK) {
    uint64_t n = rows - first < BLOCK ? rows - first : BLOCK;
    read_block(old, JOB_ROWS, first, n, jobs, ok);
    for (uint64_t k = 0; k < n; k++) {
      char name[sizeof jobs[k].engine + 1];
      snprintf(name, sizeof name, "%.*s", (int)sizeof jobs[k].engine, jobs[k].engine);
      if (ok[k]) engines |= cs_engine_set_of(cs_engine_find(name));
    }
  }
  free(jobs);
  return engines;
}

int cs_cli_repair(int argc, char **argv) {
  repair_args a;
  memset(&a, 0, sizeof a);
  int urc = cs_cli_parse(&command, argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  const char *path = a.path, *const *sweep_paths = a.sweep_paths;
  size_t nsweeps = a.nsweeps;
  bool dry = a.dry;
  if (!path) {
    fprintf(stderr, "commsweep repair: which file?\n\n");
    usage(stderr);
    return 2;
  }
  cs_err err;
  cs_err_clear(&err);
  cs_sweep sweeps[MAX_SWEEPS];
  memset(sweeps, 0, sizeof sweeps);
  int rc = CS_OK;
  for (size_t s = 0; s < nsweeps && !rc; s++) rc = cs_sweep_load(sweep_paths[s], &sweeps[s], &err);
  cs_store *old = NULL, *st = NULL;
  bool locked = false;
  if (!rc && !dry && !(rc = cs_store_lock(path, "repair", false, &err))) locked = true;
  if (!rc) rc = cs_store_open(path, CS_STORE_READ, &old, &err);
  cs_engine_set named = old ? cs_store_engines(old) : 0;
  cs_engine_set naming = old ? engines_to_name(old, sweeps, nsweeps) : 0;
  if (!rc && !dry) rc = cs_store_open_for(path, CS_STORE_REBUILD, naming, &st, &err);
  if (st) naming = cs_store_engines(st);
  tally t = {0};
  int version = old ? cs_store_schema_version(old) : CS_STORE_SCHEMA_VERSION;
  if (!rc) rc = rebuild(old, st, sweeps, nsweeps, &t, &err);
  cs_store_close(old, NULL);
  if (st && rc) cs_store_close(st, NULL);
  else if (st) rc = cs_store_commit(st, &err);
  if (locked) cs_store_unlock(path);
  for (size_t s = 0; s < nsweeps; s++) cs_sweep_free(&sweeps[s]);
  if (rc) {
    fprintf(stderr, "commsweep repair: %s\n", err.msg);
    return 1;
  }
  printf("%s: %s %" PRIu64 " rows: %" PRIu64 " kept (verified), %" PRIu64
         " corrupt and %" PRIu64 " pending (rerun by the next sweep); /jobs rows: %" PRIu64
         " unreadable, %" PRIu64 " rebuilt from the sweep file%s\n",
         path, dry ? "would keep, of" : "repaired,", t.kept + t.corrupt + t.pending, t.kept,
         t.corrupt, t.pending, t.jobs_lost, t.jobs_rebuilt, nsweeps ? "" : " (none given)");
  if (version < CS_STORE_SCHEMA_VERSION)
    printf("  %s schema version %d to %d: %" PRIu64 " /jobs rows given their network column\n",
           dry ? "would convert from" : "converted from", version, CS_STORE_SCHEMA_VERSION,
           t.networks);
  for (size_t i = 0; cs_engine_list()[i]; i++)
    if (naming & ~named & cs_engine_set_of(cs_engine_list()[i]))
      printf("  the extra columns of engine %s %s named in /results and /txlog\n",
             cs_engine_list()[i]->name, dry ? "would be" : "are now");
  if (t.results_lost)
    printf("  %" PRIu64 " /results rows could not be read\n", t.results_lost);
  if (t.json_lost)
    printf("  /job_json rows: %" PRIu64 " unreadable, %" PRIu64 " rebuilt from the sweep file, "
           "the others left empty\n", t.json_lost, t.json_rebuilt);
  return 0;
}
