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
                            against the sweep's base_json (cs_sweep_job_json in
                            src/sweep/run_int.h); owned */
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
/* The engines of the sweep's jobs that loaded (the others run nothing). */
cs_engine_set cs_sweep_engines(const cs_sweep *sw);
/* Loads a job from its canonical JSON ({"adapter":...,"engine":...,"spec":...}, a /job_json row)
 * with the strict loaders; CS_EPARSE or the loader's error when it does not load. */
int cs_sweep_job_from_json(const char *json, cs_job *job, cs_err *err);

/* Parses and expands a sweep file.  Errors of the file itself (syntax, repeated or unknown
 * keys, unknown or overlapping axis fields, mismatched coupled values, a base that fails on its
 * own while every job fails) fail the whole load; an invalid combination only marks its job
 * (load_code, error). */
int cs_sweep_load(const char *path, cs_sweep *out, cs_err *err);
/* (cs_sweep_parse, src/sweep/run_int.h, does the same over a file's text.) */
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

/* What the match of a sweep against its file found (its counters are cs_sweep_summary's); the
 * plan's making and applying are the module's own (src/sweep/run_int.h). */

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
  struct cs_sweep_item *items; /* (sweep/run_int.h) */
  /* per sweep job, for cs_sweep_plan_apply and reports */
  uint64_t *job_rows;       /* sweep job index -> row */
  uint8_t *action;          /* CS_PLAN_* bits */
  uint64_t *reserved_offset, *reserved_count;
  uint64_t *step_reserved_offset, *step_reserved_count; /* the /steplog reservations */
} cs_sweep_plan;

/* The /jobs row of sweep job j with the given /txlog reservation and no /steplog one (the
 * caller sets steplog_reserved_offset/count; the structural step writes it, commsweep repair
 * rebuilds damaged rows with it). */
int cs_sweep_job_row(const cs_sweep *sw, const cs_sweep_job *j, uint64_t reserved_offset,
                     uint64_t reserved_count, cs_store_job_row *row); /* CS_ENOMEM */
/* Faults the tests inject into a sweep (the hidden --test-* options of `commsweep sweep`,
 * docs/hdf5-schema.md); all zero: none.  They stop a rank, or fail a row, at a chosen point of
 * an otherwise ordinary run, so the tests can show what a killed or failed sweep leaves. */
typedef struct cs_sweep_faults {
  uint64_t stop_after_rows; /* a rank raises stop_signal on itself right after writing its N-th
                               row; 0: never */
  int stop_signal;          /* 0: SIGKILL; SIGSTOP: raised again while no stop signal came */
  bool stop_one_rank;       /* only rank stop_rank stops (else every rank) */
  int stop_rank;
  bool stop_one_round;      /* with --refine: only the sweep of round stop_round stops */
  unsigned stop_round;      /* (0: the cheap round) */
  bool fail_row;            /* row fail_row_at fails as if memory ran out */
  uint64_t fail_row_at;
  bool rank0_runs_none;     /* rank 0 only hands jobs out (with workers): it is then never in a
                               job when a signal from outside comes */
} cs_sweep_faults;

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

#endif
