/* Internals of a sweep run, shared by the files of src/sweep (and its white-box suite): the
 * plan (the match against the file and the structural step), running one item into its row, and
 * the MPI scheduler.  The module's public face is include/commsweep/sweep.h: load a sweep, run
 * it (cs_sweep_run, cs_sweep_refine), and the pieces repair and calibrate reuse. */
#ifndef CS_SWEEP_RUN_INT_H
#define CS_SWEEP_RUN_INT_H

#include "commsweep/sweep.h"

/* The canonical JSON of job j of sw, as a new string to free; NULL when out of memory. */
char *cs_sweep_job_json(const cs_sweep *sw, const cs_sweep_job *j);

/* cs_sweep_load of the text of a file named `source` */
int cs_sweep_parse(const char *text, const char *source, cs_sweep *out, cs_err *err);

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
