/* Sweeps: a sweep file (docs/sweep-files.md) expanded into jobs, matched against the store
 * (cache), and the misses run over MPI ranks with dynamic load balancing.
 *
 * Life of a sweep run (cs_sweep_run):
 *   all      parse the sweep file, each rank expanding a block of the matrix; rank 0 gathers.
 *   rank 0   take the writer lock, open the store serially, match every job's cache key
 *            against it (verifying checksums), then in one structural step grow the datasets
 *            to their final size, write the new /jobs rows and the rows of jobs that failed to
 *            load, and flush.
 *   all      receive the list of misses (costliest group first), open the store with MPI-IO; rank 0
 *            grants ranges of the list on request and runs the cheapest items itself; every
 *            rank writes its own rows.
 *   rank 0   summary; lock released.
 * Results never depend on which rank ran a job: rows, slices and record contents are fixed by
 * the sweep and the file before any job runs.
 */
#ifndef COMMSWEEP_SWEEP_H
#define COMMSWEEP_SWEEP_H

#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "commsweep/cachekey.h"
#include "commsweep/err.h"
#include "commsweep/model.h"
#include "commsweep/pareto.h"
#include "commsweep/store.h"

#define CS_SWEEP_MAX_JOBS 1000000u
#define CS_SWEEP_NAME_MAX 32

/* One job of the expanded matrix.  The job itself is held packed (cs_job_pack: ~250 bytes
 * instead of ~4.6 KB), so a million-job sweep fits rank 0's memory. */
typedef struct cs_sweep_job {
  int load_code;         /* CS_OK when the job loaded, validated and expanded; else the error */
  char key[CS_KEY_HEX];  /* cache key (of the raw inputs when the job could not be loaded) */
  uint64_t num_txns;     /* exact transaction count (cs_expand_count); 0 when not loaded */
  uint32_t num_steps;
  uint32_t packed_len;   /* bytes at packed */
  double cost;           /* the engine's cost estimate (scheduling order); 0 when not loaded */
  uint64_t group;        /* jobs that share work on one rank (cs_engine_ops.share_group); 0 none */
  unsigned char *packed; /* the cs_job, packed; owned; NULL when not loaded */
  uint32_t json_len;     /* characters of the canonical JSON */
  uint32_t json_z_len;   /* bytes at json_z */
  unsigned char *json_z; /* the canonical JSON {"adapter":...,"engine":...,"spec":...} deflated
                            against the sweep's base_json (cs_sweep_job_json); owned */
  char *error;           /* message when load_code != CS_OK; owned */
} cs_sweep_job;

typedef struct cs_sweep {
  char name[CS_SWEEP_NAME_MAX];
  size_t num_axes;
  size_t num_jobs;
  cs_sweep_job *jobs; /* matrix order: the first axis varies slowest */
  char *base_json;    /* canonical JSON of the base: what the jobs' JSON is deflated against */
  char *warnings;     /* lines (each ending in a newline) about the file that do not stop the
                       * sweep, e.g. repeated axis values; owned; NULL: none */
} cs_sweep;

/* Unpacks the job of j into *out; CS_EINVAL when j was not loaded. */
int cs_sweep_job_get(const cs_sweep_job *j, cs_job *out, cs_err *err);
/* Loads a job from its canonical JSON ({"adapter":...,"engine":...,"spec":...}, a /job_json row)
 * with the strict loaders; CS_EPARSE or the loader's error when it does not load. */
int cs_sweep_job_from_json(const char *json, cs_job *job, cs_err *err);
/* The canonical JSON of job j of sw, as a new string to free; NULL when out of memory. */
char *cs_sweep_job_json(const cs_sweep *sw, const cs_sweep_job *j);

/* Parses and expands a sweep file.  Errors of the file itself (syntax, repeated or unknown
 * keys, unknown or overlapping axis fields, mismatched coupled values, a base that fails on its
 * own while every job fails) fail the whole load; an invalid combination only marks its job
 * (load_code, error). */
int cs_sweep_load(const char *path, cs_sweep *out, cs_err *err);
int cs_sweep_parse(const char *text, const char *source, cs_sweep *out, cs_err *err);
/* Collective: every rank of comm expands a block of the matrix; rank 0 receives the whole
 * sweep (as cs_sweep_load builds it), the other ranks nothing.  Same code on every rank. */
int cs_sweep_load_mpi(const char *path, MPI_Comm comm, cs_sweep *out, cs_err *err);
void cs_sweep_free(cs_sweep *sw); /* accepts NULL and a zeroed sweep */

/* ---- the pareto and refine sections (docs/pareto.md) ------------------------------------- */

struct cJSON;

/* The refinement's cheap rung and its limits, as the sweep file's "refine" section (or
 * --calibration) gives them. */
typedef struct cs_sweep_refine_spec {
  struct cJSON *engine;        /* the cheap rung's engine section (owned) */
  double band[CS_PRIM_COUNT];  /* relative error of the cheap rung's results; < 0: not given */
  char source[512];            /* where engine and band come from, for messages */
  uint64_t max_jobs;           /* distinct expensive jobs at most; 0: no limit */
  unsigned max_rounds;         /* expensive rounds at most */
  bool widen_band;             /* widen each primitive's band to the largest error observed */
} cs_sweep_refine_spec;

#define CS_SWEEP_REFINE_ROUNDS 8 /* max_rounds when none is given */

typedef struct cs_sweep_study {
  bool has_pareto;
  cs_pareto_spec pareto;
  bool has_refine; /* the file has a refine section, or a calibration was given */
  cs_sweep_refine_spec refine;
} cs_sweep_study;

/* Reads the pareto and refine sections of a sweep file (the whole file is checked as
 * cs_sweep_load checks it, without expanding the matrix).  calibration (may be NULL) is a
 * calibration file given on the command line: it replaces the section's engine and band (a
 * section's "calibration" path is relative to the sweep file).  The calibration file holds
 * {"engine": {...}, "band": B, "fit": {...}, "description": "..."}; B is a number (every
 * primitive) or an object by primitive name. */
int cs_sweep_study_load(const char *path, const char *calibration, cs_sweep_study *out,
                           cs_err *err);
void cs_sweep_study_free(cs_sweep_study *s); /* accepts NULL and a zeroed struct */

/* ---- matching the sweep against the store (rank 0) -------------------------------------- */

/* A job to run: where its results go.  The job itself stays in the sweep (index `job`); the
 * scheduler sends it packed with the item. */
typedef struct cs_sweep_item {
  uint64_t job;          /* index of the job in the sweep (matrix order) */
  uint64_t row;          /* /results row */
  uint64_t txlog_offset; /* reserved slice */
  uint64_t txlog_count;  /* records expected (0 unless the detail is full) */
  uint64_t steplog_offset; /* reserved /steplog slice */
  uint64_t steplog_count;  /* per-step summaries expected: num_steps (0 without log) */
  double cost;           /* estimated relative cost, for ordering */
  uint64_t group;        /* the job's share group (cs_sweep_job.group) */
  double group_cost;     /* cost of the group's items to run (the item's own cost without one) */
  char key[CS_STORE_KEY_LEN];
  uint8_t detail;        /* cs_store_detail the row is written with */
} cs_sweep_item;

enum {
  CS_PLAN_HIT = 1,       /* verified row reused */
  CS_PLAN_DUP = 2,       /* an earlier job of the sweep has the same key */
  CS_PLAN_NEW_ROW = 4,   /* row appended: write its /jobs row */
  CS_PLAN_RESLICE = 8,   /* existing row gets a new /txlog slice: rewrite its reservation */
  CS_PLAN_CLEAR = 16,    /* corrupt row: reset to pending before the run */
  CS_PLAN_RUN = 32,      /* an item to run */
  CS_PLAN_FAIL_NOW = 64, /* could not be loaded: failed row written in the structural step */
};

typedef struct cs_sweep_plan {
  uint64_t jobs;            /* jobs in the sweep */
  uint64_t duplicates;      /* jobs whose key an earlier job of the sweep already has */
  uint64_t cached_done;     /* verified done rows reused */
  uint64_t cached_failed;   /* verified failed rows reused */
  uint64_t retried;         /* failed rows rerun on request (--retry-failed) */
  uint64_t corrupt;         /* rows whose checksum failed: rerun */
  uint64_t pending;         /* rows left pending by an earlier run: rerun */
  uint64_t relog;           /* done rows holding less log than asked (--txlog): rerun */
  uint64_t load_failed;     /* jobs that failed to load or validate: written in the plan step */
  uint64_t spooled;         /* rows of the sweep judged from the log spools (options.spooled) */
  double cost;              /* estimated cost of the items (engine.h: about 1 per microsecond) */
  uint64_t new_rows;        /* rows appended */
  uint64_t file_rows;       /* rows before the sweep */
  uint64_t txlog_before;    /* /txlog records before the sweep */
  uint64_t txlog_after;     /* /txlog records after the structural step */
  uint64_t txlog_to_write;  /* records the misses will write */
  uint64_t steplog_before, steplog_after, steplog_to_write; /* the same for /steplog */
  size_t num_items;         /* misses to run, costliest share group first (plan.c) */
  cs_sweep_item *items;
  /* per sweep job, for cs_sweep_plan_apply and reports */
  uint64_t *job_rows;       /* sweep job index -> row */
  uint8_t *action;          /* CS_PLAN_* bits */
  uint64_t *reserved_offset, *reserved_count;
  uint64_t *step_reserved_offset, *step_reserved_count; /* the /steplog reservations */
} cs_sweep_plan;

typedef struct cs_sweep_plan_options {
  bool results_only; /* rows need no /txlog slice */
  bool verify_log;   /* also check each reused row's /txlog slice (reads the whole log) */
  bool retry_failed; /* rerun verified failed rows instead of reusing them */
  bool steps_only;   /* per-step summaries without the records (unless results_only) */
  /* rows the log spools of an unfinished sweep hold (cs_store_spool_peek), judged as the merge
   * that starts the next sweep will leave them: a dry run counts what that sweep runs */
  const cs_store_spooled *spooled;
  size_t num_spooled;
} cs_sweep_plan_options;

/* The log detail a sweep asks for: none (results_only), steps (steps_only) or full. */
cs_store_detail cs_sweep_detail(bool results_only, bool steps_only);

/* Matches keys against st (NULL: an empty or absent file) and assigns rows and slices.
 * Reads only. */
int cs_sweep_plan_make(const cs_sweep *sw, cs_store *st, const cs_sweep_plan_options *opt,
                       cs_sweep_plan *plan, cs_err *err);
/* The structural step on a CS_STORE_WRITE store: grow, write /jobs rows, write the rows of jobs
 * that failed to load, clear rows to rerun, note the sweep, flush. */
int cs_sweep_plan_apply(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *plan, cs_err *err);
void cs_sweep_plan_free(cs_sweep_plan *plan);
/* The /jobs row of sweep job j with the given /txlog reservation and no /steplog one (the
 * caller sets steplog_reserved_offset/count; the structural step writes it, commsweep repair
 * rebuilds damaged rows with it). */
int cs_sweep_job_row(const cs_sweep *sw, const cs_sweep_job *j, uint64_t reserved_offset,
                     uint64_t reserved_count, cs_store_job_row *row); /* CS_ENOMEM */
/* What applying the plan changes in the file: CS_PLAN_CHANGES_LAYOUT (extents, /jobs rows,
 * reservations: done on a staged copy, cs_store_open CS_STORE_STAGE) and/or
 * CS_PLAN_CHANGES_ROWS (result rows rewritten in existing space: safe in place); 0 when nothing
 * (every job cached, or only pending rows to rerun). */
enum { CS_PLAN_CHANGES_LAYOUT = 1, CS_PLAN_CHANGES_ROWS = 2 };
int cs_sweep_plan_changes(const cs_sweep *sw, const cs_sweep_plan *plan);
/* The row part of cs_sweep_plan_apply only (no extents, no /jobs, no attributes), then flush. */
int cs_sweep_plan_apply_rows(const cs_sweep *sw, cs_store *st, const cs_sweep_plan *plan,
                             cs_err *err);

/* The step summary rows of one job, kept from job to job of a rank (a job's records stream
 * into its row's log while it runs: cs_store_log). */
typedef struct cs_sweep_logbuf {
  cs_store_step_row *steps;
  uint64_t steps_cap;
} cs_sweep_logbuf;
void cs_sweep_logbuf_free(cs_sweep_logbuf *b); /* leaves it empty, ready for use */

/* Faults the tests inject into a sweep (the hidden --test-* options of `commsweep sweep`,
 * docs/hdf5-schema.md); all zero: none.  They stop a rank, or fail a row, at a chosen point of
 * an otherwise ordinary run, so the tests can show what a killed or failed sweep leaves. */
typedef struct cs_sweep_faults {
  uint64_t stop_after_rows; /* a rank raises stop_signal on itself right after writing its N-th
                               row; 0: never */
  int stop_signal;          /* 0: SIGKILL */
  bool stop_one_rank;       /* only rank stop_rank stops (else every rank) */
  int stop_rank;
  bool stop_one_round;      /* with --refine: only the sweep of round stop_round stops */
  unsigned stop_round;      /* (0: the cheap round) */
  bool fail_row;            /* row fail_row_at fails as if memory ran out */
  uint64_t fail_row_at;
} cs_sweep_faults;

/* What became of a job cs_sweep_execute ran. */
typedef struct cs_sweep_job_outcome {
  bool failed;          /* its row is `failed`, with the job's message */
  bool ran_again_alone; /* it ran twice, the second time without the shared state (job.h) */
} cs_sweep_job_outcome;

/* Runs one item and writes its row (and slices, as item->detail says: records and per-step
 * summaries for full, summaries for steps).  A job error is a `failed` row, not an error
 * return; the return is non-zero only when the row could not be written. *outcome tells which. */
struct cs_job_shared;
/* shared: state the engines keep across this rank's jobs (cs_job_shared_new; may be NULL).
 * logbuf: the rows kept from job to job (NULL: allocated for this job alone).
 * results_only writes no log whatever item->detail says.  faults: NULL, or the row to fail. */
int cs_sweep_execute(cs_store *st, struct cs_job_shared *shared, cs_sweep_logbuf *logbuf,
                     const cs_sweep_item *item, const cs_job *job, bool results_only,
                     const cs_sweep_faults *faults, cs_sweep_job_outcome *outcome, cs_err *err);

/* ---- the whole run -------------------------------------------------------------------- */

typedef struct cs_sweep_options {
  const char *sweep_path;
  const char *out_path;
  bool dry_run;
  bool results_only;
  bool steps_only;   /* --txlog steps: per-step summaries, no records */
  bool break_lock;
  bool verify_log;   /* also verify the /txlog slices of reused rows */
  bool retry_failed; /* rerun failed rows (a failed row is otherwise a cached result) */
  double progress_s; /* seconds between progress lines on stderr; <= 0: none */
  FILE *out;         /* summary / dry-run report (rank 0); NULL: stdout */
  /* NULL: load sweep_path.  Else the expanded sweep to run instead (borrowed; a refinement's
   * round), sweep_path then only naming it: set on every rank alike, only rank 0's is read. */
  const cs_sweep *sweep;
  /* Set to a signal number (by a signal handler) to stop: no more jobs are handed out, each
   * rank finishes the job in hand, and the sweep ends as usual with every finished row and its
   * log kept, returning CS_EINTR.  NULL: never. */
  const volatile sig_atomic_t *stop;
  cs_sweep_faults faults; /* tests only; zero: none */
} cs_sweep_options;

typedef struct cs_sweep_summary {
  cs_sweep_plan plan_counts; /* counters of the plan (no arrays) */
  uint64_t ran, ran_failed;  /* jobs run in this sweep, and how many of them failed */
  uint64_t ran_again_alone;  /* jobs run twice, the second time without the shared state */
  uint64_t io_errors;        /* rows that could not be written */
  double wall_s, work_s;     /* whole run; scheduling phase only */
  double prep_s;             /* expansion, cache lookup and structural step (rank 0) */
  double merge_s;            /* moving the spooled log into the file (rank 0) */
  uint64_t log_merged, log_dropped; /* spool entries merged, and rejected (torn) */
  int ranks;
  int stopped_by;            /* the signal that stopped the sweep (CS_EINTR), else 0 */
} cs_sweep_summary;

/* Collective over comm.  Returns the same code on every rank.  comm == MPI_COMM_NULL runs a
 * single process that calls MPI_Init (then uses MPI_COMM_SELF) only when some job must run, so
 * a fully cached sweep never pays for MPI start-up; the caller finalizes MPI if it is
 * initialized. */
int cs_sweep_run(const cs_sweep_options *opt, MPI_Comm comm, cs_sweep_summary *sum, cs_err *err);

/* Broadcasts rank 0's code and message (run.c): the same code on every rank, which it returns;
 * the other ranks sleep while they wait. */
int cs_sweep_share(MPI_Comm comm, int rc, cs_err *err);

/* The jobs pick[0..n) of an expanded sweep as a sweep of their own (keys, rows and JSON as in the
 * whole sweep), for cs_sweep_options.sweep.  *out is freed with cs_sweep_free. */
int cs_sweep_subset(const cs_sweep *sw, const size_t *pick, size_t n, cs_sweep *out, cs_err *err);

/* A multi-fidelity refinement of the sweep file's Pareto fronts into opt->out_path
 * (docs/pareto.md): round 0 runs the whole matrix on the cheap rung (the calibration's engine),
 * each later round the points that may still be on the front on the sweep's own engine, each
 * round an ordinary sweep (cs_sweep_run) of part of the matrix.  calibration: a calibration
 * file that replaces the refine section's (NULL: the section's).  Collective over comm like
 * cs_sweep_run (MPI_COMM_NULL: one process); rank 0 prints the rounds and the fronts to
 * opt->out.  With opt->dry_run only round 0's plan. */
int cs_sweep_refine(const cs_sweep_options *opt, const char *calibration, MPI_Comm comm,
                    cs_err *err);

/* The MPI scheduler (collective): rank 0 passes the sweep and the items to run, the other ranks
 * NULL and 0; each worker receives the items of a range with its grant, their jobs packed, and
 * holds no others (memory per worker: two ranges of at most 512 items, whatever the sweep's
 * size). */
typedef struct cs_sweep_sched_stats {
  uint64_t ran, failed, io_errors;
  uint64_t ran_again_alone; /* jobs the shared state could not carry: run twice */
  double busy_s; /* wall time inside jobs (running them and writing their rows) */
  double cpu_s;  /* CPU time of the process over the whole schedule, waiting included */
} cs_sweep_sched_stats;
/* done: fraction of the total estimated cost done so far (for the ETA): the jobs finished, as
 * each worker last reported them (with each request, i.e. up to the range before the one it
 * runs), plus the part of each running range that its time so far covers at that worker's pace
 * (schedule.c); negative once the sweep was stopped and other ranks are still ending their jobs
 * in hand. */
typedef void (*cs_sweep_progress_fn)(void *ctx, uint64_t ran, uint64_t failed, double done,
                                     bool final);
/* stop (may be NULL) is the rank's own stop flag (cs_sweep_options.stop): once it is set on any
 * rank, rank 0 hands out no more work and tells every rank, and each rank leaves the schedule
 * after the job in hand; *stopped_by (every rank) is then the signal number, else 0.
 * faults: NULL, or the faults to inject (the same on every rank). */
int cs_sweep_schedule(MPI_Comm comm, cs_store *st, const cs_sweep *sw, const cs_sweep_item *items,
                      size_t n, bool results_only, double progress_s,
                      cs_sweep_progress_fn progress, void *progress_ctx,
                      const volatile sig_atomic_t *stop, const cs_sweep_faults *faults,
                      int *stopped_by, cs_sweep_sched_stats *mine, cs_err *err);

#endif
