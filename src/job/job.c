/* One job end to end: validate (C1-C11, generic and the engine's), L1 expand, engine create, L2 drive, L3 back-fill.
 * Every failure carries the job's identity in its message and frees what the job allocated. */
#include "commsweep/job.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commsweep/backfill.h"
#include "commsweep/bigmem.h"
#include "commsweep/drive.h"
#include "commsweep/engine.h"
#include "commsweep/expand.h"
#include "commsweep/validate.h"

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cs_job_output_free(cs_job_output *out) {
  if (!out) return;
  if (!out->records_lent) free(out->records);
  free(out->steps);
  memset(out, 0, sizeof *out);
}

static int context(const cs_job *job, cs_err *err) {
  char network[128];
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  if (ops && ops->network)
    ops->network(job, network, sizeof network);
  else
    snprintf(network, sizeof network, "%s, %d die(s), layout %s", job->adapter.topology,
             job->adapter.num_dies, job->adapter.dcin_layout);
  const char *prim = cs_primitive_name(job->spec.primitive);
  return cs_err_prefix(err, "%s %s of %llu bytes over %d participants on %s", job->engine.name,
                       prim ? prim : "?", (unsigned long long)job->spec.msg_size_bytes,
                       job->spec.num_participants, network);
}

int cs_job_validate(const cs_job *job, cs_err *err) {
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  if (!ops) {
    char valid[256];
    cs_engine_names(valid, sizeof valid);
    return cs_err_set(err, CS_EINVAL, "engine: name = \"%s\": unknown engine (valid: %s)",
                      job->engine.name, valid);
  }
  if (cs_validate_adapter(&job->adapter, err)) return cs_err_prefix(err, "adapter");
  if (cs_validate_spec(&job->spec, &job->adapter, err)) return cs_err_prefix(err, "spec");
  if (job->engine.deadlock_guard_ticks == 0)
    return cs_err_set(err, CS_EINVAL, "engine: deadlock_guard_ticks = 0: must be positive");
  if (ops->validate && ops->validate(job, err)) return cs_err_prefix(err, "engine %s", ops->name);
  return CS_OK;
}

/* One slot per registered engine, created on the engine's first job; and the transaction
 * records of jobs that do not keep them, whose memory passes from one job to the next. */
#define SHARED_SLOTS 16
struct cs_job_shared {
  void *slot[SHARED_SLOTS];
  cs_txn_record *records;
  size_t cap_records;
};

cs_job_shared *cs_job_shared_new(void) { return calloc(1, sizeof(cs_job_shared)); }

void cs_job_shared_free(cs_job_shared *sh) {
  if (!sh) return;
  const cs_engine_ops *const *list = cs_engine_list();
  for (int i = 0; list[i] && i < SHARED_SLOTS; i++)
    if (sh->slot[i] && list[i]->shared_free) list[i]->shared_free(sh->slot[i]);
  free(sh->records);
  free(sh);
}

/* The engine's shared state, created on first use; NULL when it has none (or memory ran out:
 * the job then runs without it, as fast as alone). */
static void *shared_of(cs_job_shared *sh, const cs_engine_ops *ops) {
  if (!sh || !ops->shared_new) return NULL;
  const cs_engine_ops *const *list = cs_engine_list();
  for (int i = 0; list[i] && i < SHARED_SLOTS; i++)
    if (list[i] == ops) return sh->slot[i] ? sh->slot[i] : (sh->slot[i] = ops->shared_new());
  return NULL;
}

/* Room for n records: the shared buffer when the records are not kept or are lent, else their
 * own zeroed allocation; NULL when out of memory.  The driver writes every record of the buffer
 * whole (cs_engine_record_begin), so what it held before never shows. */
static cs_txn_record *records_for(cs_job_shared *sh, bool own, uint64_t n) {
  if (!n) n = 1;
  if (own) return cs_big_calloc(n, sizeof(cs_txn_record));
  if (n > sh->cap_records) {
    cs_txn_record *grown = cs_big_realloc(sh->records, n * sizeof *grown);
    if (!grown) return NULL;
    sh->records = grown;
    sh->cap_records = n;
  }
  return sh->records;
}

/* What the back-fill folds as records arrive: the result, the step summaries when asked, and
 * the log the records go on to. */
typedef struct folding {
  cs_backfill_acc result;
  cs_step_summary *steps; /* NULL: not asked for */
  uint32_t num_steps;
  int bw_bytes;
  const cs_job_log *log; /* NULL: none */
} folding;

static int fold(void *ctx, uint32_t step, const cs_txn_record *records, uint64_t n, cs_err *err) {
  folding *f = ctx;
  cs_backfill_add(&f->result, records, n);
  int rc = f->steps ? cs_backfill_steps_add(records, (size_t)n, f->num_steps, f->bw_bytes,
                                            f->steps, err)
                    : CS_OK;
  if (!rc && f->log) rc = f->log->records(f->log->ctx, step, records, n, err);
  return rc;
}

/* Drives the job and back-fills its result (and its step summaries into steps, when not NULL).
 * With keep_records every record stays in records for the caller; otherwise the records pass
 * through records (a window of cs_drive_window entries) into the back-fill and the log: a step
 * at a time in request-id order for a log, as they finish without one. */
static int drive_and_backfill(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                              void *engine, bool keep_records, const cs_job_log *log,
                              cs_txn_record *records, cs_step_summary *steps, cs_result *result,
                              cs_err *err) {
  cs_engine_stats stats;
  memset(&stats, 0, sizeof stats);
  int bw = job->adapter.bw_bytes;
  if (keep_records) {
    int rc = cs_drive(job, plan, ops, engine, records, err);
    if (!rc) ops->stats(engine, &stats);
    if (!rc) rc = cs_backfill(job, plan, records, &stats, ops->name, result, err);
    if (!rc && steps) rc = cs_backfill_steps(records, plan->num_txns, plan->num_steps, bw, steps, err);
    return rc;
  }
  folding f = {.steps = steps, .num_steps = plan->num_steps, .bw_bytes = bw, .log = log};
  int rc = cs_backfill_begin(&f.result, job, err);
  if (rc) return rc;
  if (steps) cs_backfill_steps_begin(steps, plan->num_steps);
  rc = cs_drive_streamed(job, plan, ops, engine, log ? CS_DRIVE_BY_STEP : CS_DRIVE_AS_DONE,
                         records, fold, &f, err);
  if (rc) {
    cs_backfill_acc_free(&f.result);
    return rc;
  }
  ops->stats(engine, &stats);
  cs_backfill_end(&f.result, job, plan, &stats, ops->name, result);
  if (steps) cs_backfill_steps_end(steps, plan->num_steps);
  return CS_OK;
}

int cs_job_run(const cs_job *job, bool keep_records, cs_job_output *out, cs_err *err) {
  /* state of its own: with it an engine may replay what only a second run alone could recover
   * from (cs_engine_ops.shared_attach), e.g. dcin steps that repeat with flits in flight */
  cs_job_shared *sh = cs_job_shared_new();
  int rc = cs_job_run_shared(sh, job, keep_records, out, err);
  cs_job_shared_free(sh);
  return rc;
}

int cs_job_run_shared(cs_job_shared *sh, const cs_job *job, bool keep_records,
                      cs_job_output *out, cs_err *err) {
  return cs_job_run_keeping(sh, job, keep_records ? CS_JOB_KEEP_RECORDS : 0, out, err);
}

int cs_job_run_keeping(cs_job_shared *sh, const cs_job *job, unsigned keep, cs_job_output *out,
                       cs_err *err) {
  return cs_job_run_logged(sh, job, keep, NULL, out, err);
}

/* The estimate of a planned job; the ops are the job's engine. */
static void estimate(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                     unsigned keep, cs_job_memory_estimate *m) {
  memset(m, 0, sizeof *m);
  bool keep_records = keep & CS_JOB_KEEP_RECORDS, logged = keep & CS_JOB_LOG_STEPS;
  cs_drive_order order = logged ? CS_DRIVE_BY_STEP : CS_DRIVE_AS_DONE;
  const cs_adapter_config *ad = &job->adapter;
  /* between its req and final completions a transaction holds a master tracker */
  uint64_t trackers = (uint64_t)job->spec.num_participants *
                      (uint64_t)(ad->mst_rd_outstanding + ad->mst_wr_outstanding);
  m->plan = cs_plan_bytes(job->spec.num_participants, plan->num_steps);
  m->drive = cs_drive_bytes(plan, ops, order, trackers);
  m->engine = cs_engine_memory(ops, job, plan->widest_step);
  m->records = (keep_records ? plan->num_txns : cs_drive_window(plan, ops, order)) *
               sizeof(cs_txn_record);
  m->backfill = cs_backfill_bytes(job->spec.num_participants) +
                (keep & CS_JOB_KEEP_STEPS ? plan->num_steps * sizeof(cs_step_summary) : 0);
  m->total = m->plan + m->drive + m->engine + m->records + m->backfill;
  m->bound = job->engine.memory_limit_bytes ? job->engine.memory_limit_bytes : CS_JOB_MEMORY_DEFAULT;
}

int cs_job_memory(const cs_job *job, unsigned keep, cs_job_memory_estimate *out, cs_err *err) {
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  if (!ops) return cs_err_set(err, CS_EINVAL, "memory estimate: unknown engine \"%s\"", job->engine.name);
  cs_plan plan;
  int rc = cs_expand(job, &plan, err);
  if (rc) return rc;
  estimate(job, &plan, ops, keep, out);
  cs_plan_free(&plan);
  return CS_OK;
}

/* "1.50 GiB", "12.0 MiB", "3.5 KiB", "100 B" */
static void bytes_text(uint64_t b, char *buf, size_t cap) {
  if (b >= 1ull << 30) snprintf(buf, cap, "%.2f GiB", (double)b / (double)(1ull << 30));
  else if (b >= 1ull << 20) snprintf(buf, cap, "%.1f MiB", (double)b / (double)(1ull << 20));
  else if (b >= 1024) snprintf(buf, cap, "%.1f KiB", (double)b / 1024.0);
  else snprintf(buf, cap, "%llu B", (unsigned long long)b);
}

/* The over-bound failure: the estimate by part, the bound, and what lowers the largest part. */
static int over_bound(const cs_job *job, const cs_plan *plan, const cs_job_memory_estimate *m,
                      unsigned keep, cs_err *err) {
  char total[32], bound[32], eng[32], rec[32];
  bytes_text(m->total, total, sizeof total);
  bytes_text(m->bound, bound, sizeof bound);
  bytes_text(m->engine, eng, sizeof eng);
  bytes_text(m->records, rec, sizeof rec);
  const char *change;
  if (m->records >= m->engine && keep & CS_JOB_KEEP_RECORDS)
    change = "keep fewer records (every record of the job is kept: stream the log instead)";
  else if (m->records >= m->engine && keep & CS_JOB_LOG_STEPS)
    change = "write a shorter log (the full log holds the widest step's records: --txlog steps, "
             "--no-txlog), or raise adapter.burst_length or lower spec.msg_size_bytes";
  else
    change = "lower spec.msg_size_bytes or raise adapter.burst_length (fewer transactions a "
             "step), or a smaller network";
  return cs_err_set(err, CS_ELIMIT,
                    "memory: the job is estimated to need %s (engine %s, records %s; widest step "
                    "%llu transactions of %llu), over the bound of %s (engine.memory_limit_bytes = "
                    "%llu%s): raise engine.memory_limit_bytes, or %s",
                    total, eng, rec, (unsigned long long)plan->widest_step,
                    (unsigned long long)plan->num_txns, bound,
                    (unsigned long long)m->bound,
                    job->engine.memory_limit_bytes ? "" : ", the default", change);
}

int cs_job_run_logged(cs_job_shared *sh, const cs_job *job, unsigned keep, const cs_job_log *log,
                      cs_job_output *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  double t0 = seconds_now();
  int rc = cs_job_validate(job, err);
  if (rc) return context(job, err);
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  cs_plan plan;
  if ((rc = cs_expand(job, &plan, err))) return context(job, err);
  bool keep_records = keep & CS_JOB_KEEP_RECORDS;
  if (keep_records) log = NULL; /* every record is kept: the caller writes them */
  cs_job_memory_estimate m;
  estimate(job, &plan, ops, keep | (log ? CS_JOB_LOG_STEPS : 0), &m);
  if (m.total > m.bound) {
    over_bound(job, &plan, &m, keep | (log ? CS_JOB_LOG_STEPS : 0), err);
    cs_plan_free(&plan);
    return context(job, err);
  }
  bool own_records = !sh || (keep_records && !(keep & CS_JOB_LEND_RECORDS));
  uint64_t room = keep_records
                      ? plan.num_txns
                      : cs_drive_window(&plan, ops, log ? CS_DRIVE_BY_STEP : CS_DRIVE_AS_DONE);
  cs_txn_record *records = records_for(sh, own_records, room);
  cs_step_summary *steps =
      keep & CS_JOB_KEEP_STEPS ? calloc(plan.num_steps ? plan.num_steps : 1, sizeof *steps) : NULL;
  if (!records || (keep & CS_JOB_KEEP_STEPS && !steps)) {
    if (own_records) free(records);
    free(steps);
    cs_err_set(err, CS_ENOMEM, "out of memory for %llu transaction records",
               (unsigned long long)room);
    cs_plan_free(&plan);
    return context(job, err);
  }
  /* on the shared state first; when it led the engine astray (CS_ERETRY), alone, once more */
  void *engine = NULL;
  bool again = false;
  for (void *shared = shared_of(sh, ops);; shared = NULL, again = true) {
    rc = again && log && log->restart ? log->restart(log->ctx, err) : CS_OK;
    if (!rc) rc = ops->create(job, &engine, err);
    if (!rc && shared && ops->shared_attach) rc = ops->shared_attach(engine, shared, err);
    if (!rc)
      rc = drive_and_backfill(job, &plan, ops, engine, keep_records, log, records, steps,
                              &out->result, err);
    if (rc != CS_ERETRY || !shared) break;
    ops->destroy(engine);
    engine = NULL;
    cs_err_clear(err);
  }
  ops->destroy(engine);
  if (!rc) {
    out->result.wall_time_s = seconds_now() - t0;
    out->ran_again_alone = again;
    out->num_records = plan.num_txns;
    if (keep_records) {
      out->records = records;
      out->records_lent = !own_records;
      records = NULL;
    }
    out->steps = steps;
    out->num_steps = steps ? plan.num_steps : 0;
    steps = NULL;
  }
  if (own_records) free(records);
  free(steps);
  cs_plan_free(&plan);
  if (rc) {
    memset(out, 0, sizeof *out);
    return context(job, err);
  }
  return CS_OK;
}
