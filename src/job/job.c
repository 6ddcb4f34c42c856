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

/* What the back-fill folds a step at a time: the result, and the step summaries when asked. */
typedef struct folding {
  cs_backfill_acc result;
  cs_step_summary *steps; /* NULL: not asked for */
  uint32_t num_steps;
  int bw_bytes;
} folding;

static int fold_step(void *ctx, uint32_t step, const cs_txn_record *records, uint64_t n,
                     cs_err *err) {
  folding *f = ctx;
  (void)step;
  cs_backfill_add(&f->result, records, n);
  return f->steps ? cs_backfill_steps_add(records, (size_t)n, f->num_steps, f->bw_bytes,
                                          f->steps, err)
                  : CS_OK;
}

/* Drives the job and back-fills its result (and its step summaries into steps, when not NULL).
 * Without keep_records the records pass through a window of one step, streamed into the
 * back-fill, so a large job holds a step's records, not all of them; with it they all stay in
 * records for the caller. */
static int drive_and_backfill(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                              void *engine, bool keep_records, cs_txn_record *records,
                              cs_step_summary *steps, cs_result *result, cs_err *err) {
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
  folding *f = malloc(sizeof *f);
  if (!f) return cs_err_set(err, CS_ENOMEM, "backfill: out of memory");
  *f = (folding){.steps = steps, .num_steps = plan->num_steps, .bw_bytes = bw};
  cs_backfill_begin(&f->result, job);
  if (steps) cs_backfill_steps_begin(steps, plan->num_steps);
  int rc = cs_drive_streamed(job, plan, ops, engine, records, fold_step, f, err);
  if (!rc) {
    ops->stats(engine, &stats);
    cs_backfill_end(&f->result, job, plan, &stats, ops->name, result);
    if (steps) cs_backfill_steps_end(steps, plan->num_steps);
  }
  free(f);
  return rc;
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
  memset(out, 0, sizeof *out);
  double t0 = seconds_now();
  int rc = cs_job_validate(job, err);
  if (rc) return context(job, err);
  const cs_engine_ops *ops = cs_engine_find(job->engine.name);
  cs_plan plan;
  if ((rc = cs_expand(job, &plan, err))) return context(job, err);
  bool keep_records = keep & CS_JOB_KEEP_RECORDS;
  bool own_records = !sh || (keep_records && !(keep & CS_JOB_LEND_RECORDS));
  cs_txn_record *records =
      records_for(sh, own_records, keep_records ? plan.num_txns : cs_drive_widest_step(&plan));
  cs_step_summary *steps =
      keep & CS_JOB_KEEP_STEPS ? calloc(plan.num_steps ? plan.num_steps : 1, sizeof *steps) : NULL;
  if (!records || (keep & CS_JOB_KEEP_STEPS && !steps)) {
    if (own_records) free(records);
    free(steps);
    cs_plan_free(&plan);
    cs_err_set(err, CS_ENOMEM, "out of memory for %llu transaction records",
               (unsigned long long)plan.num_txns);
    return context(job, err);
  }
  /* on the shared state first; when it led the engine astray (CS_ERETRY), alone, once more */
  void *engine = NULL;
  bool again = false;
  for (void *shared = shared_of(sh, ops);; shared = NULL, again = true) {
    rc = ops->create(job, &engine, err);
    if (!rc && shared && ops->shared_attach) rc = ops->shared_attach(engine, shared, err);
    if (!rc)
      rc = drive_and_backfill(job, &plan, ops, engine, keep_records, records, steps,
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
