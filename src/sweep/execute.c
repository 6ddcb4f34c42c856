/* One job on one rank: run it (cs_job_run_logged) and write its slices and row: the records when
 * the item's detail is full (streamed into the row's log step by step while the job runs), the
 * per-step summaries (backfill.h) when it is steps or full.  A job
 * that fails is a `failed` row with its message, cached like a result; a failure that says
 * nothing about the job (out of memory, I/O: cs_err_is_transient) writes nothing, so the row
 * stays pending and the next run tries again.  Only a row that cannot be written is an error. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "commsweep/backfill.h"
#include "commsweep/job.h"
#include "commsweep/sweep.h"
#include "run_int.h"

/* rows (room for *cap rows of `size` bytes) with room for n: itself when large enough, else
 * grown (*cap updated); NULL when out of memory, rows unchanged then. */
static void *room_for(void *rows, uint64_t *cap, uint64_t n, size_t size) {
  if (n <= *cap) return rows;
  void *grown = n > SIZE_MAX / size ? NULL : realloc(rows, (size_t)n * size);
  if (grown) *cap = n;
  return grown;
}

void cs_sweep_logbuf_free(cs_sweep_logbuf *b) {
  free(b->steps);
  memset(b, 0, sizeof *b);
}

/* The job's records go straight into its row's log as the job runs, step by step. */
static int log_records(void *ctx, uint32_t step, const cs_txn_record *recs, uint64_t n,
                       cs_err *err) {
  (void)step;
  return cs_store_log_append(ctx, recs, n, err);
}

static int log_restart(void *ctx, cs_err *err) { return cs_store_log_restart(ctx, err); }

/* Benchmark aid: COMMSWEEP_JOB_STATS=FILE appends "row cpu_s wall_s peak_kb" per job, its CPU
 * and wall seconds and the process's peak resident memory while it ran (Linux: the peak is
 * reset before the job through /proc/self/clear_refs; where that fails, peak_kb is the
 * process's peak so far).  One write per line (O_APPEND), so the ranks may share the file.
 * The environment, not an option, on purpose: it measures a user's command line as it stands
 * (scripts/bench_pod wraps any sweep command, under mpirun or srun, without rewriting it), and
 * it changes no row, no key and no byte of the output file. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void stats_begin(double *cpu) {
  int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd >= 0) {
    if (write(fd, "5", 1) != 1) { /* the peak is then the process's so far */
    }
    close(fd);
  }
  *cpu = cpu_seconds();
}

static void stats_end(const char *path, uint64_t row, double cpu0, double wall) {
  long peak_kb = -1;
  FILE *f = fopen("/proc/self/status", "r");
  char line[128];
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) peak_kb = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  char text[128];
  int len = snprintf(text, sizeof text, "%llu %.3f %.3f %ld\n", (unsigned long long)row,
                     cpu_seconds() - cpu0, wall, peak_kb);
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd >= 0) {
    if (write(fd, text, (size_t)len) != len) { /* a benchmark aid: a short write is its loss */
    }
    close(fd);
  }
}

int cs_sweep_execute(cs_store *st, cs_job_shared *shared, cs_sweep_logbuf *logbuf,
                     const cs_sweep_item *item, const cs_job *job, bool results_only,
                     const cs_sweep_faults *faults, cs_sweep_job_outcome *outcome, cs_err *err) {
  cs_sweep_logbuf own = {0};
  cs_sweep_logbuf *lb = logbuf ? logbuf : &own;
  cs_job_output out;
  cs_err jerr;
  cs_err_clear(&jerr);
  memset(&out, 0, sizeof out);
  cs_store_result_row row;
  memset(&row, 0, sizeof row);
  row.txlog_offset = item->txlog_offset;
  row.steplog_offset = item->steplog_offset;
  cs_store_detail detail = results_only ? CS_STORE_LOG_NONE : (cs_store_detail)item->detail;
  bool full = detail == CS_STORE_LOG_FULL, summaries = detail != CS_STORE_LOG_NONE;
  cs_store_step_row *steps = NULL;
  uint64_t nsteps = 0;
  /* the records stream into the row's log while the job runs (cs_store_log) */
  cs_store_log *lg = NULL;
  if (full && item->txlog_count &&
      cs_store_log_begin(st, item->row, item->txlog_offset, item->txlog_count, &lg, err))
    return cs_err_prefix(err, "job row %llu", (unsigned long long)item->row);
  cs_job_log log = {log_records, log_restart, lg};
  const char *stats = getenv("COMMSWEEP_JOB_STATS");
  double cpu0 = 0;
  if (stats) stats_begin(&cpu0);
  int rc = cs_job_run_logged(shared, job, summaries ? CS_JOB_KEEP_STEPS : 0, lg ? &log : NULL,
                             &out, &jerr);
  if (stats) stats_end(stats, item->row, cpu0, rc ? 0 : out.result.wall_time_s);
  if (!rc && faults && faults->fail_row && faults->fail_row_at == item->row) {
    cs_job_output_free(&out);
    rc = cs_err_set(&jerr, CS_ENOMEM, "out of memory (injected by --test-fail-row)");
  }
  if (!rc && full && out.num_records != item->txlog_count)
    rc = cs_err_set(&jerr, CS_EINTERNAL,
                    "the job produced %llu transaction records, L1 expansion counted %llu",
                    (unsigned long long)out.num_records, (unsigned long long)item->txlog_count);
  if (!rc && summaries && out.num_steps != item->steplog_count)
    rc = cs_err_set(&jerr, CS_EINTERNAL, "the job produced %u step summaries, L1 expansion counted %llu",
                    out.num_steps, (unsigned long long)item->steplog_count);
  /* the rows copy each summary byte for byte: the log checksums cover all of them */
  if (!rc && summaries && item->steplog_count) {
    steps = room_for(lb->steps, &lb->steps_cap, item->steplog_count, sizeof *steps);
    if (steps) lb->steps = steps;
    else rc = cs_err_set(&jerr, CS_ENOMEM, "%llu step summaries: out of memory",
                         (unsigned long long)item->steplog_count);
    for (uint64_t t = 0; steps && t < item->steplog_count; t++) {
      steps[t].job = item->row;
      memcpy(&steps[t].sum, &out.steps[t], sizeof steps[t].sum);
    }
    nsteps = steps ? item->steplog_count : 0;
  }
  if (!rc) {
    row.result = out.result;
    row.status = CS_STORE_DONE;
    row.txlog_detail = (uint8_t)detail;
  } else {
    nsteps = 0;
    row.status = CS_STORE_FAILED;
    cs_store_set_text(row.result.engine, sizeof row.result.engine, job->engine.name);
    cs_store_set_text(row.error, sizeof row.error, jerr.msg[0] ? jerr.msg : cs_strerror(rc));
  }
  outcome->failed = rc != 0;
  outcome->ran_again_alone = out.ran_again_alone;
  cs_job_output_free(&out);
  if (rc) {
    cs_store_log_abort(lg);
    lg = NULL;
  }
  if (rc && cs_err_is_transient(rc)) {
    fprintf(stderr, "commsweep: job row %llu not stored, the next run retries it: %s\n",
            (unsigned long long)item->row, jerr.msg);
    cs_sweep_logbuf_free(&own);
    return CS_OK;
  }
  int wrc = lg ? cs_store_put_result_log(st, item->row, item->key, &row, lg, steps, nsteps, err)
               : cs_store_put_result_steps(st, item->row, item->key, &row, NULL, 0, steps, nsteps,
                                           err);
  cs_sweep_logbuf_free(&own);
  if (wrc) return cs_err_prefix(err, "job row %llu", (unsigned long long)item->row);
  return CS_OK;
}
