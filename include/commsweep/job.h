/* One job end to end: validate, L1 expand, estimate its memory, create the engine, L2 drive,
 * L3 back-fill.
 *
 * Memory: a job holds its plan (steps and participants), the engine's state for the
 * transactions in flight, the driver's byte per transaction of the running step, and the
 * records the caller asked for: none (each is folded into the result as it finishes), a step's
 * (the transaction log, handed over step by step in request-id order) or all of them.  Before
 * anything runs the job is estimated (cs_job_memory); one over its bound fails with CS_ELIMIT,
 * naming the estimate, the bound and the fields that change it. */
#ifndef COMMSWEEP_JOB_H
#define COMMSWEEP_JOB_H

#include "commsweep/backfill.h"
#include "commsweep/err.h"
#include "commsweep/model.h"

typedef struct cs_job_output {
  cs_result result;
  cs_txn_record *records; /* num_records entries, owned unless lent; NULL when not kept */
  uint64_t num_records;
  bool records_lent;      /* records belong to the shared state (CS_JOB_LEND_RECORDS) */
  cs_step_summary *steps; /* num_steps per-step summaries, owned; NULL when not asked for */
  uint32_t num_steps;
  bool ran_again_alone; /* the shared state could not carry the job (CS_ERETRY): it ran a
                         * second time without it, and this is that run's output */
} cs_job_output;

/* What a run keeps besides its result (cs_job_run_keeping): every transaction record, the
 * per-step summaries, both or neither.  Without the records a job holds one step's at a time.
 * CS_JOB_LEND_RECORDS with CS_JOB_KEEP_RECORDS and shared state: the records are written into a
 * buffer the shared state keeps from job to job (no fresh, zeroed block per job) and stay valid
 * until the next run on that state. */
enum { CS_JOB_KEEP_RECORDS = 1, CS_JOB_KEEP_STEPS = 2, CS_JOB_LEND_RECORDS = 4,
       CS_JOB_LOG_STEPS = 8 /* (cs_job_memory only) a step's records go to a log */ };

/* The checks a job must pass before it runs: an engine that exists, the generic constraints of
 * validate.h, a positive deadlock guard, then the engine's own validation (C1-C3 for the
 * CrossRing engines).  The message names the part (adapter, spec, engine NAME). */
int cs_job_validate(const cs_job *job, cs_err *err);

/* The memory bound of a job whose engine options give none (memory_limit_bytes 0): 4 GiB. */
#define CS_JOB_MEMORY_DEFAULT (4ull << 30)

/* What a job is estimated to hold at most, in bytes, by part (cs_job_memory). */
typedef struct cs_job_memory_estimate {
  uint64_t plan;    /* L1: the steps and the participants */
  uint64_t drive;   /* L2: a step's flows and state, the records between req and final */
  uint64_t engine;  /* the engine (cs_engine_memory) */
  uint64_t records; /* records kept: a step's for the log, all when kept, a batch otherwise */
  uint64_t backfill; /* L3: per participant, and the step summaries */
  uint64_t total;
  uint64_t bound;   /* engine.memory_limit_bytes, or CS_JOB_MEMORY_DEFAULT */
} cs_job_memory_estimate;

/* Estimates the job as cs_job_run_keeping runs it with `keep` (a log counts as
 * CS_JOB_LOG_STEPS).  The job must be valid. */
int cs_job_memory(const cs_job *job, unsigned keep, cs_job_memory_estimate *out, cs_err *err);

/* Receives a job's transaction log while it runs: records(step, its records in request-id
 * order) once a step ended, steps in order; restart() when the job runs again from the start
 * (the shared state could not carry it: cs_job_output.ran_again_alone), before the first step
 * comes again.  A non-zero return (a CS_E* code, message in err) fails the job with it. */
typedef struct cs_job_log {
  int (*records)(void *ctx, uint32_t step, const cs_txn_record *records, uint64_t n, cs_err *err);
  int (*restart)(void *ctx, cs_err *err);
  void *ctx;
} cs_job_log;

/* State the engines share across the jobs one process runs one after the other (recorded steps
 * a later job can replay: cs_engine_ops.shared_*).  Results are bit-identical with or without
 * it; it only saves time.  Not for two jobs at once. */
typedef struct cs_job_shared cs_job_shared;
cs_job_shared *cs_job_shared_new(void); /* NULL when out of memory */
void cs_job_shared_free(cs_job_shared *sh); /* accepts NULL */
/* cs_job_run with shared state (sh may be NULL). */
int cs_job_run_shared(cs_job_shared *sh, const cs_job *job, bool keep_records,
                      cs_job_output *out, cs_err *err);
/* The same, keeping what `keep` (CS_JOB_KEEP_* bits) names. */
int cs_job_run_keeping(cs_job_shared *sh, const cs_job *job, unsigned keep, cs_job_output *out,
                       cs_err *err);

/* The same, with the transaction log streamed into log (not NULL) step by step: the job keeps
 * one step's records, not all (keep without CS_JOB_KEEP_RECORDS). */
int cs_job_run_logged(cs_job_shared *sh, const cs_job *job, unsigned keep, const cs_job_log *log,
                      cs_job_output *out, cs_err *err);

/* Runs the job (on shared state of its own).  keep_records=false: the records pass a step at a
 * time into the back-fill and are not returned.  On error *out holds nothing to free and err
 * carries the full context. */
int cs_job_run(const cs_job *job, bool keep_records, cs_job_output *out, cs_err *err);
void cs_job_output_free(cs_job_output *out); /* accepts NULL */

/* A job packed for holding and sending: its runs of zero bytes left out (typically ~5% of
 * sizeof(cs_job)).  cs_job_pack writes at most CS_JOB_PACKED_MAX bytes into buf and returns how
 * many; cs_job_unpack restores the job byte for byte (CS_EINVAL when buf is not a packed job). */
#define CS_JOB_PACKED_MAX (sizeof(cs_job) + 8)
size_t cs_job_pack(const cs_job *job, unsigned char *buf);
int cs_job_unpack(const unsigned char *buf, size_t len, cs_job *job, cs_err *err);

#endif
