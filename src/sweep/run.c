/* cs_sweep_run: the whole sweep on every rank of a communicator (sweep.h has the phases).
 * Every failure before the work phase is decided on rank 0 and broadcast with its message, so
 * all ranks return the same code; a failing job is a row, never a failed sweep. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>

#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "commsweep/sweep.h"
#include "sweep_int.h"

#define LOAD_ERRORS_SHOWN 5

/* Broadcasts rank 0's code and message; returns the code.  The other ranks wait here while
 * rank 0 lays out the file or merges the logs (seconds on large sweeps): they sleep. */
int cs_sweep_share(MPI_Comm comm, int rc, cs_err *err) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Request req;
  MPI_Ibcast(&rc, 1, MPI_INT, 0, comm, &req);
  cs_sweep_wait_sleeping(&req, MPI_STATUS_IGNORE);
  if (rc) {
    if (rank != 0) cs_err_clear(err);
    MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, 0, comm);
    err->code = rc;
  }
  return rc;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static void report_load_errors(FILE *out, const cs_sweep *sw, const cs_sweep_plan *p) {
  size_t shown = 0;
  for (size_t i = 0; i < sw->num_jobs && shown < LOAD_ERRORS_SHOWN; i++)
    if (sw->jobs[i].load_code && !(p->action[i] & (CS_PLAN_HIT | CS_PLAN_DUP))) {
      fprintf(out, "  failed to load: %s\n", sw->jobs[i].error);
      shown++;
    }
  if (p->load_failed > shown)
    fprintf(out, "  ... and %llu more (see the error column of /results)\n",
            (unsigned long long)(p->load_failed - shown));
}

static void report_plan(FILE *out, const cs_sweep_options *opt, const cs_sweep *sw,
                        const cs_sweep_plan *p, bool exists) {
  fprintf(out, "sweep '%s' (%s): %llu jobs", sw->name, opt->sweep_path,
          (unsigned long long)p->jobs);
  if (p->duplicates) fprintf(out, ", %llu duplicates", (unsigned long long)p->duplicates);
  fprintf(out, "\n");
  if (exists)
    fprintf(out, "  file %s: %llu rows, %llu txlog records\n", opt->out_path,
            (unsigned long long)p->file_rows, (unsigned long long)p->txlog_before);
  else
    fprintf(out, "  file %s: does not exist yet\n", opt->out_path);
  fprintf(out, "  cache hits: %llu (%llu done, %llu failed)\n",
          (unsigned long long)(p->cached_done + p->cached_failed),
          (unsigned long long)p->cached_done, (unsigned long long)p->cached_failed);
  if (p->retried)
    fprintf(out, "  failed rows to retry (--retry-failed): %llu\n", (unsigned long long)p->retried);
  fprintf(out, "  to run: %zu (%llu new rows, %llu pending, %llu corrupt, %llu without log); "
          "%llu fail to load\n",
          p->num_items, (unsigned long long)p->new_rows, (unsigned long long)p->pending,
          (unsigned long long)p->corrupt, (unsigned long long)p->relog,
          (unsigned long long)p->load_failed);
  if (p->num_items)
    fprintf(out, "  estimated CPU: %.1f s (%.1f min) to run them, from the engines' cost "
            "estimates; shared by the ranks\n", p->cost * 1e-6, p->cost * 1e-6 / 60);
  /* the items hold each share group together (plan.c) */
  size_t groups = 0, grouped = 0, largest = 0;
  for (size_t i = 0, end; i < p->num_items; i = end) {
    end = cs_sweep_group_end(p->items, p->num_items, i);
    if (end - i < 2) continue;
    groups++;
    grouped += end - i;
    if (end - i > largest) largest = end - i;
  }
  if (groups)
    fprintf(out, "  share groups: %zu (%zu jobs, at most %zu a group), each run on one rank\n",
            groups, grouped, largest);
  uint64_t rec = sizeof(cs_store_txn_row), row = sizeof(cs_store_result_row);
  cs_store_detail detail = cs_sweep_detail(opt->results_only, opt->steps_only);
  if (detail == CS_STORE_LOG_NONE)
    fprintf(out, "  transaction log: none (results-only)\n");
  else if (detail == CS_STORE_LOG_STEPS)
    fprintf(out, "  transaction log: per-step summaries only (--txlog steps)\n");
  else
    fprintf(out, "  transaction log: %llu records to write, %.2f MiB before compression (%llu "
            "B per record; stored shuffled and deflated); file log %.2f MiB -> %.2f MiB before "
            "compression\n",
            (unsigned long long)p->txlog_to_write, mib(p->txlog_to_write * rec),
            (unsigned long long)rec, mib(p->txlog_before * rec), mib(p->txlog_after * rec));
  if (detail != CS_STORE_LOG_NONE)
    fprintf(out, "  step summaries: %llu to write, %.2f MiB before compression (%zu B each; "
            "stored shuffled and deflated)\n",
            (unsigned long long)p->steplog_to_write,
            mib(p->steplog_to_write * sizeof(cs_store_step_row)), sizeof(cs_store_step_row));
  fprintf(out, "  result rows: %llu new x %llu B\n", (unsigned long long)p->new_rows,
          (unsigned long long)row);
}

/* rank 0, holding the lock: merges the log spools of the file (those of this sweep's work
 * phase, or a killed sweep's) into it, in a structural step on a staged copy (store.h).  Spools
 * of a file that no longer exists are removed. */
static int merge_log(const char *path, const char *sweep_name, cs_sweep_summary *sum,
                     cs_err *err) {
  if (!cs_store_spool_exists(path)) return CS_OK;
  struct stat sb;
  if (stat(path, &sb) != 0 || sb.st_size == 0) {
    cs_store_spool_remove(path);
    return CS_OK;
  }
  double t0 = MPI_Wtime();
  cs_store *st = NULL;
  uint64_t merged = 0, dropped = 0;
  cs_store_unlock_inode(path); /* the file gets a new inode */
  int rc = cs_store_open(path, CS_STORE_STAGE, &st, err);
  if (!rc && (rc = cs_store_spool_merge(st, path, &merged, &dropped, err))) cs_store_close(st, NULL);
  else if (!rc) rc = cs_store_commit(st, err);
  if (!rc) cs_store_spool_remove(path);
  int lrc = cs_store_lock_inode(path, sweep_name, err);
  if (!rc) rc = lrc;
  if (sum) {
    sum->log_merged += merged;
    sum->log_dropped += dropped;
    sum->merge_s += MPI_Wtime() - t0;
  }
  return rc;
}

/* rank 0, when the lock file cannot be written: match only; CS_OK when the sweep writes nothing
 * (every job cached, no spools to merge), else an error saying what it would write.  why: the
 * lock's own error. */
static int prepare_read_only(const cs_sweep_options *opt, cs_sweep *sw, cs_sweep_plan *plan,
                             const cs_sweep_plan_options *popt, const cs_err *why, cs_err *err) {
  cs_store *st = NULL;
  int rc = cs_store_open(opt->out_path, CS_STORE_READ, &st, err);
  if (!rc) rc = cs_sweep_plan_make(sw, st, popt, plan, err);
  cs_store_close(st, NULL);
  if (rc) return cs_err_prefix(err, "file '%s'", opt->out_path);
  bool spools = cs_store_spool_exists(opt->out_path);
  if (!plan->num_items && !cs_sweep_plan_changes(sw, plan) && !spools) return CS_OK;
  return cs_err_set(err, CS_EIO,
                    "file '%s': %s; the sweep would write the file (%zu jobs to run, %llu new "
                    "rows%s), which needs a writable directory (a fully cached sweep writes "
                    "nothing and needs none)",
                    opt->out_path, why->msg, plan->num_items, (unsigned long long)plan->new_rows,
                    spools ? ", log spools to merge" : "");
}

/* A file laid out before the sweep brought jobs of an engine whose extra columns only the files
 * laid out for its jobs name (engine.h: CS_ENGINES_IN_EVERY_FILE) keeps its layout: the values
 * are stored in the rows, unnamed, and repair names them. */
static void note_unnamed_columns(FILE *out, const char *path, const cs_store *st,
                                 cs_engine_set engines) {
  cs_engine_set unnamed = engines & ~cs_store_engines(st);
  for (size_t i = 0; cs_engine_list()[i]; i++)
    if (unnamed & cs_engine_set_of(cs_engine_list()[i]))
      fprintf(out, "  note: '%s' does not name the extra columns of engine %s (it was laid out "
              "before it held %s jobs); their values are kept in the rows, unnamed, and "
              "`commsweep repair %s` names them\n", path, cs_engine_list()[i]->name,
              cs_engine_list()[i]->name, path);
}

/* rank 0: load, match, structural step (or the dry-run report). */
static int prepare(const cs_sweep_options *opt, FILE *out, cs_sweep *sw, cs_sweep_plan *plan,
                   bool *locked, cs_err *err) {
  const cs_sweep_plan_options popt = {opt->results_only, opt->verify_log, opt->retry_failed,
                                      opt->steps_only, NULL, 0};
  if (!sw->jobs && cs_sweep_load(opt->sweep_path, sw, err)) return err->code;
  for (const char *w = sw->warnings, *nl; w && *w; w = nl + 1) {
    nl = strchr(w, '\n');
    fprintf(stderr, "commsweep sweep: warning: sweep file '%s': %.*s\n", opt->sweep_path,
            (int)(nl - w), w);
  }
  cs_store *st = NULL;
  int rc;
  if (opt->dry_run) {
    rc = cs_store_open(opt->out_path, CS_STORE_READ, &st, err);
    bool exists = rc == CS_OK;
    if (rc == CS_ENOTFOUND) rc = CS_OK;
    /* the sweep first merges the spools of an unfinished one: judge their rows as it will */
    cs_sweep_plan_options dry = popt;
    cs_store_spooled *spooled = NULL;
    uint64_t torn = 0;
    bool spools = exists && cs_store_spool_exists(opt->out_path);
    if (!rc && spools)
      rc = cs_store_spool_peek(st, opt->out_path, &spooled, &dry.num_spooled, &torn, err);
    dry.spooled = spooled;
    if (!rc) rc = cs_sweep_plan_make(sw, st, &dry, plan, err);
    if (!rc) {
      report_plan(out, opt, sw, plan, exists);
      if (spools)
        fprintf(out, "  log spools of an unfinished sweep: %zu rows, which the sweep moves into "
                "the file first (%llu of them this sweep's jobs, counted above as they will be "
                "then); %llu torn or unusable entries dropped\n",
                dry.num_spooled, (unsigned long long)plan->spooled, (unsigned long long)torn);
      report_load_errors(out, sw, plan);
      char holder[512];
      if (cs_store_lock_holder(opt->out_path, holder, sizeof holder))
        fprintf(out, "  note: the file is locked by a sweep (%s)\n", holder);
    }
    free(spooled);
    cs_store_close(st, NULL);
    return rc;
  }
  /* A file in a read-only directory can still serve a fully cached sweep, which writes
   * nothing: without the lock file, under the host-wide lock of its inode, decided after the
   * lookup (and refused with what it would write otherwise). */
  if ((rc = cs_store_lock(opt->out_path, sw->name, opt->break_lock, err))) {
    if (rc != CS_EIO || !cs_store_lock_cannot_write(opt->out_path)) return rc;
    cs_err why = *err;
    if ((rc = cs_store_lock_inode(opt->out_path, sw->name, err))) return rc;
    *locked = true;
    return prepare_read_only(opt, sw, plan, &popt, &why, err);
  }
  *locked = true;
  /* Termination signals wait until the file is laid out (a SIGKILL cannot wait, which is why
   * the layout is built on a staged copy). */
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  sigprocmask(SIG_BLOCK, &stop, &old);
  /* Matching reads the file as it is; only what the plan changes is written, and a change of
   * layout goes through a staged copy renamed over the file once complete (store.h), so no
   * moment of the step leaves a file that has lost rows.  A fully cached sweep writes
   * nothing (a read-only file is fine). */
  /* a killed sweep's spooled rows first: they are finished rows */
  cs_sweep_summary earlier;
  memset(&earlier, 0, sizeof earlier);
  rc = merge_log(opt->out_path, sw->name, &earlier, err);
  if (earlier.log_merged || earlier.log_dropped) {
    fprintf(out, "  log: %llu rows of an earlier sweep moved from its spools into the file",
            (unsigned long long)earlier.log_merged);
    if (earlier.log_dropped)
      fprintf(out, ", %llu torn or unusable entries dropped (their rows are rerun)",
              (unsigned long long)earlier.log_dropped);
    fprintf(out, "\n");
  }
  struct stat sb;
  bool fresh = stat(opt->out_path, &sb) != 0 || sb.st_size == 0;
  cs_engine_set engines = cs_sweep_engines(sw);
  if (!rc && !fresh && !(rc = cs_store_open(opt->out_path, CS_STORE_READ, &st, err)))
    note_unnamed_columns(out, opt->out_path, st, engines);
  if (!rc) rc = cs_sweep_plan_make(sw, st, &popt, plan, err);
  if (rc == CS_EIO && st && strstr(err->msg, "reading /")) {
    char why[700];
    snprintf(why, sizeof why, "%.600s", err->msg);
    cs_err_set(err, rc, "%s; nothing was changed: `commsweep repair %.100s --sweep %.100s` "
               "rebuilds the file keeping every row that verifies", why, opt->out_path,
               opt->sweep_path);
  }
  cs_store_close(st, NULL);
  st = NULL;
  int changes = rc ? 0 : cs_sweep_plan_changes(sw, plan);
  if (!rc && (fresh || (changes & CS_PLAN_CHANGES_LAYOUT))) {
    cs_store_unlock_inode(opt->out_path); /* the file gets a new inode */
    if (!(rc = cs_store_open_for(opt->out_path, CS_STORE_STAGE, engines, &st, err))) {
      rc = cs_sweep_plan_apply(sw, st, plan, err);
      if (rc) cs_store_close(st, NULL);
      else rc = cs_store_commit(st, err);
    }
    if (!rc) rc = cs_store_lock_inode(opt->out_path, sw->name, err);
  } else if (!rc && (changes & CS_PLAN_CHANGES_ROWS)) {
    if (!(rc = cs_store_open(opt->out_path, CS_STORE_WRITE, &st, err))) {
      rc = cs_sweep_plan_apply_rows(sw, st, plan, err);
      cs_err cerr;
      int crc = cs_store_close(st, &cerr);
      if (!rc && crc) {
        *err = cerr;
        rc = crc;
      }
    }
  }
  if (rc && strncmp(err->msg, "file '", 6) != 0) cs_err_prefix(err, "file '%s'", opt->out_path);
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

typedef struct progress_ctx {
  FILE *out;
  const char *name;
  uint64_t total, settled; /* settled: cached + duplicates + load failures */
  double t0;
} progress_ctx;

/* The ETA scales the elapsed time by the estimated cost not yet done (jobs run costliest first,
 * so a job count would be far too optimistic early on; so would the cost handed out, since a
 * worker is granted its first two ranges, about a quarter of the sweep on two ranks, at once). */
static void print_progress(void *vctx, uint64_t ran, uint64_t failed, double done,
                           bool final) {
  progress_ctx *c = vctx;
  if (done < 0) { /* stopped, waiting for the jobs in hand: before mpirun's SIGKILL, if it comes */
    fprintf(c->out, "commsweep sweep: interrupted: %llu of %llu done so far, the other ranks are "
            "ending their jobs in hand; rerun the same command to finish\n",
            (unsigned long long)(c->settled + ran), (unsigned long long)c->total);
    fflush(c->out);
    return;
  }
  double dt = MPI_Wtime() - c->t0;
  double rate = dt > 0 ? (double)ran / dt : 0;
  double eta = done > 0 ? dt * (1.0 - done) / done : 0;
  fprintf(c->out, "[sweep %s] %llu/%llu done (cached %llu, ran %llu, failed %llu) %.1f jobs/s",
          c->name, (unsigned long long)(c->settled + ran), (unsigned long long)c->total,
          (unsigned long long)c->settled, (unsigned long long)ran, (unsigned long long)failed,
          rate);
  if (!final && done > 0) fprintf(c->out, " ETA %.1f s", eta);
  fprintf(c->out, "\n");
  fflush(c->out);
}

/* The closing report (rank 0). */
static void report_summary(FILE *out, const cs_sweep_options *opt, const cs_sweep *sw,
                           const cs_sweep_plan *plan, const cs_sweep_summary *sum,
                           const uint64_t *per_rank) {
  fprintf(out, "sweep '%s': %llu jobs -> %s\n", sw->name, (unsigned long long)plan->jobs,
          opt->out_path);
  fprintf(out, "  ran %llu (%llu failed) on %d rank%s in %.3f s (%.1f jobs/s); cached %llu "
          "(%llu failed); %llu failed to load; %llu duplicates\n",
          (unsigned long long)sum->ran, (unsigned long long)sum->ran_failed, sum->ranks,
          sum->ranks == 1 ? "" : "s", sum->work_s,
          sum->work_s > 0 ? (double)sum->ran / sum->work_s : 0,
          (unsigned long long)(plan->cached_done + plan->cached_failed),
          (unsigned long long)plan->cached_failed, (unsigned long long)plan->load_failed,
          (unsigned long long)plan->duplicates);
  if (sum->ran_again_alone)
    fprintf(out, "  ran twice: %llu (steps the engine recorded from other jobs of the rank could "
            "not carry them; each ran again alone and keeps exactly what it gives alone; costs "
            "time only: docs/sweep-files.md, \"Ran twice\")\n",
            (unsigned long long)sum->ran_again_alone);
  fprintf(out, "  time: %.3f s to expand, match and lay out %llu jobs (%.1f us/job), %.3f s running\n",
          sum->prep_s, (unsigned long long)plan->jobs,
          plan->jobs ? sum->prep_s / (double)plan->jobs * 1e6 : 0.0, sum->work_s);
  if (sum->log_merged || sum->log_dropped)
    fprintf(out, "  log: %llu rows with their logs moved from the spools into the file in "
            "%.3f s%s\n", (unsigned long long)sum->log_merged, sum->merge_s,
            sum->log_dropped ? " (torn entries dropped: their rows stay to rerun)" : "");
  if (plan->corrupt || plan->pending || plan->relog)
    fprintf(out, "  rerun: %llu pending, %llu corrupt, %llu without log\n",
            (unsigned long long)plan->pending, (unsigned long long)plan->corrupt,
            (unsigned long long)plan->relog);
  if (per_rank) {
    fprintf(out, "  jobs per rank:");
    for (int i = 0; i < sum->ranks; i++)
      fprintf(out, " %llu", (unsigned long long)per_rank[3 * i]);
    fprintf(out, "; busy s per rank:");
    for (int i = 0; i < sum->ranks; i++) fprintf(out, " %.2f", (double)per_rank[3 * i + 1] * 1e-6);
    fprintf(out, "; cpu s per rank:");
    for (int i = 0; i < sum->ranks; i++) fprintf(out, " %.2f", (double)per_rank[3 * i + 2] * 1e-6);
    fprintf(out, "\n");
  }
  report_load_errors(out, sw, plan);
  fprintf(out, "  file: %llu rows, %llu txlog records, %llu step summaries\n",
          (unsigned long long)(plan->file_rows + plan->new_rows),
          (unsigned long long)plan->txlog_after, (unsigned long long)plan->steplog_after);
  fflush(out);
}

/* rank 0, once: the summary and "interrupted: N of M done, rerun ..." on stderr, as soon as the
 * schedule has ended; err carries the same line (CS_EINTR) for the caller. */
static void stopped(FILE *out, const cs_sweep_options *opt, const cs_sweep *sw,
                    const cs_sweep_plan *plan, const cs_sweep_summary *sum,
                    const uint64_t *per_rank, cs_err *err) {
  if (err->code == CS_EINTR) return;
  report_summary(out, opt, sw, plan, sum, per_rank);
  uint64_t settled = plan->cached_done + plan->cached_failed + plan->duplicates + plan->load_failed;
  cs_err_set(err, CS_EINTR,
             "interrupted: %llu of %llu done, rerun the same command to finish (%s; every "
             "finished row and its log are kept)",
             (unsigned long long)(settled + sum->ran), (unsigned long long)plan->jobs,
             cs_sweep_signal_name(sum->stopped_by));
  fprintf(stderr, "commsweep sweep: %s\n", err->msg);
  fflush(stderr);
}

/* Every rank must see the file rank 0 laid out.  On a node-local path a rank on another node
 * would open another file (an old copy: its rows silently lost) or none; rank 0's lock file
 * (its pid, host and start time) stands for the file.  Collective; the same code on every
 * rank, the message on rank 0. */
static int check_shared(const char *path, MPI_Comm comm, cs_err *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char want[512] = "", seen[512] = "", node[64] = "";
  if (rank == 0) cs_store_lock_holder(path, want, sizeof want);
  MPI_Bcast(want, sizeof want, MPI_CHAR, 0, comm);
  cs_store_lock_holder(path, seen, sizeof seen);
  int ok = want[0] && strcmp(want, seen) == 0, len = 0;
  const char *slurm_node = getenv("SLURMD_NODENAME");
  if (slurm_node) snprintf(node, sizeof node, "%s", slurm_node);
  else MPI_Get_processor_name(node, &len);
  int *oks = rank == 0 ? malloc((size_t)size * sizeof *oks) : NULL;
  char *nodes = rank == 0 ? malloc((size_t)size * sizeof node) : NULL;
  MPI_Gather(&ok, 1, MPI_INT, oks, 1, MPI_INT, 0, comm);
  MPI_Gather(node, sizeof node, MPI_CHAR, nodes, sizeof node, MPI_CHAR, 0, comm);
  int bad = -1;
  for (int r = 0; rank == 0 && oks && r < size && bad < 0; r++)
    if (!oks[r]) bad = r;
  if (bad >= 0)
    cs_err_set(err, CS_EIO,
               "file '%s': rank %d (node %.63s) does not see the file rank 0 (node %.63s) laid "
               "out (its lock file is missing or another there): the output must be on a file "
               "system shared by every node (docs/slurm.md)",
               path, bad, nodes + (size_t)bad * sizeof node, nodes);
  free(oks);
  free(nodes);
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  return bad >= 0 ? CS_EIO : CS_OK;
}

/* The work phase: parallel open, schedule, close, totals on rank 0. */
static int work_phase(const cs_sweep_options *opt, MPI_Comm comm, const cs_sweep *sw,
                      const cs_sweep_plan *plan, cs_sweep_summary *sum, uint64_t **per_rank,
                      cs_err *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  cs_store *st = NULL;
  if (size > 1 && check_shared(opt->out_path, comm, err)) return CS_EIO;
  int orc = cs_store_open_mpi(opt->out_path, comm, &st, err), worst = 0;
  if (!orc && cs_sweep_detail(opt->results_only, opt->steps_only) != CS_STORE_LOG_NONE)
    orc = cs_store_spool_log(st, rank, err);
  MPI_Allreduce(&orc, &worst, 1, MPI_INT, MPI_MIN, comm);
  if (worst) {
    if (!orc) cs_err_set(err, worst, "file '%s': another rank could not open it", opt->out_path);
    cs_store_close(st, NULL);
    return worst;
  }
  uint64_t settled = plan->cached_done + plan->cached_failed + plan->duplicates + plan->load_failed;
  progress_ctx pc = {stderr, sw->name, plan->jobs, settled, 0};
  if (rank == 0 && opt->progress_s > 0)
    fprintf(stderr, "[sweep %s] %llu jobs: %llu cached, %zu to run on %d rank%s (estimated CPU "
            "%.1f s)\n", sw->name, (unsigned long long)plan->jobs, (unsigned long long)settled,
            plan->num_items, size, size == 1 ? "" : "s", plan->cost * 1e-6);
  double tw = MPI_Wtime();
  pc.t0 = tw;
  cs_sweep_sched_stats mine;
  memset(&mine, 0, sizeof mine);
  cs_err serr, cerr;
  cs_err_clear(&serr);
  cs_err_clear(&cerr);
  /* rank 0 holds the items; a worker receives each with its grant */
  cs_sweep_schedule(comm, st, rank == 0 ? sw : NULL, rank == 0 ? plan->items : NULL,
                    rank == 0 ? plan->num_items : 0, opt->results_only, opt->progress_s,
                    print_progress, &pc, opt->stop, &opt->faults, &sum->stopped_by, &mine,
                    &serr);
  int crc = cs_store_close(st, &cerr);
  sum->work_s = MPI_Wtime() - tw;
  uint64_t local[4] = {mine.ran, mine.failed, mine.io_errors + (crc != 0), mine.ran_again_alone};
  uint64_t total[4];
  MPI_Reduce(local, total, 4, MPI_UINT64_T, MPI_SUM, 0, comm);
  /* per rank: jobs run, microseconds busy running them, microseconds of CPU in the schedule */
  if (rank == 0) *per_rank = calloc(3 * (size_t)size, sizeof **per_rank);
  uint64_t triple[3] = {mine.ran, (uint64_t)(mine.busy_s * 1e6), (uint64_t)(mine.cpu_s * 1e6)};
  uint64_t dummy[3];
  MPI_Gather(triple, 3, MPI_UINT64_T, rank == 0 && *per_rank ? *per_rank : dummy, 3,
             MPI_UINT64_T, 0, comm);
  if (rank != 0) return CS_OK;
  sum->ran = total[0];
  sum->ran_failed = total[1];
  sum->io_errors = total[2];
  sum->ran_again_alone = total[3];
  if (opt->progress_s > 0) print_progress(&pc, total[0], total[1], 1.0, true);
  if (sum->io_errors)
    return cs_err_set(err, CS_EIO, "%llu rows could not be written (first: %s)",
                      (unsigned long long)sum->io_errors, serr.code ? serr.msg : cerr.msg);
  return CS_OK;
}

/* Open MPI's MPI-IO derives longer names from the file name (shared-file-pointer and
 * semaphore files: "<name>_cid-<n>-<pid>.sm", "OMPIO_<name>"): a name of 241 characters fails
 * to open and one of 245 aborts the process inside MPI_File_open.  Such a path is refused
 * before anything is written.  The same on every rank. */
#define OUT_NAME_MAX 200

static int check_out_path(const char *path, cs_err *err) {
  const char *slash = strrchr(path, '/');
  size_t name = strlen(slash ? slash + 1 : path), len = strlen(path);
  if (len == 0 || name == 0) return cs_err_set(err, CS_EINVAL, "--out: no file name");
  if (name > OUT_NAME_MAX)
    return cs_err_set(err, CS_EINVAL,
                      "--out: the file name is %zu characters, at most %d work with Open MPI's "
                      "MPI-IO; choose a shorter name",
                      name, OUT_NAME_MAX);
  if (len + 16 > PATH_MAX)
    return cs_err_set(err, CS_EINVAL, "--out: the path is %zu characters, at most %d fit", len,
                      PATH_MAX - 16);
  return CS_OK;
}

int cs_sweep_run(const cs_sweep_options *opt, MPI_Comm comm, cs_sweep_summary *sum, cs_err *err) {
  if (check_out_path(opt->out_path, err)) {
    memset(sum, 0, sizeof *sum);
    return err->code;
  }
  bool lazy = comm == MPI_COMM_NULL; /* one process, MPI started only if a job must run */
  int rank = 0, size = 1;
  if (!lazy) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  memset(sum, 0, sizeof *sum);
  sum->ranks = size;
  FILE *out = opt->out ? opt->out : stdout;
  struct timespec ts0;
  clock_gettime(CLOCK_MONOTONIC, &ts0);
  cs_sweep sw = {0};
  cs_sweep_plan plan = {0};
  uint64_t *per_rank = NULL;
  bool locked = false;
  int rc = CS_OK;
  if (opt->sweep && rank == 0) sw = *opt->sweep; /* borrowed: not freed below */
  if (!lazy && size > 1 && !opt->sweep) rc = cs_sweep_load_mpi(opt->sweep_path, comm, &sw, err);
  if (!rc && rank == 0) rc = prepare(opt, out, &sw, &plan, &locked, err);
  if (!lazy) rc = cs_sweep_share(comm, rc, err);
  struct timespec tp;
  clock_gettime(CLOCK_MONOTONIC, &tp);
  sum->prep_s = (double)(tp.tv_sec - ts0.tv_sec) + 1e-9 * (double)(tp.tv_nsec - ts0.tv_nsec);
  if (rc || opt->dry_run) goto done;
  unsigned long long to_run = plan.num_items;
  if (!lazy) MPI_Bcast(&to_run, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  /* a signal that came before the work phase (while the sweep was expanded or laid out) stops
   * it before any job: every rank must agree */
  int early = opt->stop ? *opt->stop : 0;
  if (!lazy) MPI_Allreduce(MPI_IN_PLACE, &early, 1, MPI_INT, MPI_MAX, comm);
  if (early) sum->stopped_by = early;
  if (to_run > 0 && !early) {
    if (lazy) {
      int inited = 0;
      MPI_Initialized(&inited);
      if (!inited) MPI_Init(NULL, NULL);
      comm = MPI_COMM_SELF;
    }
    rc = work_phase(opt, comm, &sw, &plan, sum, &per_rank, err);
    /* stopped: say so before the merge, which mpirun's SIGKILL may cut short (harmlessly: the
     * next sweep merges the spools) */
    if (rank == 0 && !rc && sum->stopped_by) stopped(out, opt, &sw, &plan, sum, per_rank, err);
    /* the rows finished before any failure are in the spools: merge them regardless */
    cs_err merr;
    int mrc = rank == 0 ? merge_log(opt->out_path, sw.name, sum, &merr) : CS_OK;
    if (mrc && !rc) {
      *err = merr;
      rc = mrc;
    } else if (mrc) {
      fprintf(stderr, "commsweep: %s\n", merr.msg);
    }
  }
  if (rank == 0 && !rc && sum->stopped_by) stopped(out, opt, &sw, &plan, sum, per_rank, err);
  if (rank == 0 && err->code == CS_EINTR && !rc) rc = CS_EINTR;
  else if (rank == 0 && rc != CS_EINTR) report_summary(out, opt, &sw, &plan, sum, per_rank);
  if (!lazy) rc = cs_sweep_share(comm, rc, err);
done:
  if (rank == 0) {
    sum->plan_counts = plan;
    sum->plan_counts.items = NULL;
    sum->plan_counts.job_rows = NULL;
    sum->plan_counts.action = NULL;
    sum->plan_counts.reserved_offset = sum->plan_counts.reserved_count = NULL;
    sum->plan_counts.step_reserved_offset = sum->plan_counts.step_reserved_count = NULL;
    if (locked) cs_store_unlock(opt->out_path);
  }
  struct timespec ts1;
  clock_gettime(CLOCK_MONOTONIC, &ts1);
  sum->wall_s = (double)(ts1.tv_sec - ts0.tv_sec) + 1e-9 * (double)(ts1.tv_nsec - ts0.tv_nsec);
  free(per_rank);
  cs_sweep_plan_free(&plan);
  if (!opt->sweep) cs_sweep_free(&sw);
  return rc;
}
