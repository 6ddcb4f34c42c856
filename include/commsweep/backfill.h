/* L3: transaction records back-filled into an EngineResult per tbl-cr-09, with the trace_meta
 * summaries (back-pressure totals, cross-die traffic).  Also the JSON-lines export of records.
 */
#ifndef COMMSWEEP_BACKFILL_H
#define COMMSWEEP_BACKFILL_H

#include <stdio.h>

#include "commsweep/engine.h"
#include "commsweep/expand.h"

/* Fills every field of *out except wall_time_s.  engine_stats may be NULL (closed-form engines). */
int cs_backfill(const cs_job *job, const cs_plan *plan, const cs_txn_record *records,
                const cs_engine_stats *engine_stats, const char *engine_name, cs_result *out,
                cs_err *err);

/* The same back-fill over records that arrive in pieces (a step at a time, or as they finish:
 * cs_drive_streamed), so a job need not keep them all: begin, add the pieces in any order, end.
 * Every sum is exact (integers; the tick sums become doubles at the end), so the result is
 * bit-identical to cs_backfill's whatever the order. */
typedef struct cs_backfill_acc {
  cs_result sums; /* retries, block and cross-die counters */
  uint64_t max_tick;
  uint64_t req_ticks, rsp_ticks;
  int num_participants, bw_bytes;
  int32_t *sorted_ids; /* the participants ascending; a run first_id.. needs no search */
  bool contiguous;     /* sorted_ids[i] == sorted_ids[0] + i */
  double *last; /* T_i in ticks per sorted participant; < 0: sends nothing */
} cs_backfill_acc;

/* CS_ENOMEM (acc holds nothing) or CS_OK. */
int cs_backfill_begin(cs_backfill_acc *acc, const cs_job *job, cs_err *err);
void cs_backfill_add(cs_backfill_acc *acc, const cs_txn_record *records, uint64_t n);
/* Fills *out as cs_backfill does (every field but wall_time_s); acc is spent (freed). */
void cs_backfill_end(cs_backfill_acc *acc, const cs_job *job, const cs_plan *plan,
                     const cs_engine_stats *engine_stats, const char *engine_name, cs_result *out);
/* Frees an accumulator that will not reach cs_backfill_end.  Accepts a spent one. */
void cs_backfill_acc_free(cs_backfill_acc *acc);
/* Bytes an accumulator holds for n participants. */
uint64_t cs_backfill_bytes(int n);

/* trace_meta detail beyond the EngineResult columns: every back-pressure counter of the record
 * (the CS_COL_COUNTER columns of cs_txn_record_cols, in table order) summed over the job's
 * transactions, and the traffic between each ordered pair of dies. */
#define CS_TRACE_MAX_DIES 8
#define CS_TRACE_MAX_COUNTERS 16
typedef struct cs_trace_meta {
  uint64_t counter[CS_TRACE_MAX_COUNTERS];
  uint64_t pair_txns[CS_TRACE_MAX_DIES][CS_TRACE_MAX_DIES];  /* [src_die][dst_die] */
  uint64_t pair_bytes[CS_TRACE_MAX_DIES][CS_TRACE_MAX_DIES]; /* burst_length * bw_bytes */
} cs_trace_meta;

void cs_backfill_trace_meta(const cs_txn_record *records, size_t n, int bw_bytes,
                            cs_trace_meta *out);
/* The same, adding records that arrive in pieces to *out (zeroed before the first). */
void cs_backfill_trace_meta_add(const cs_txn_record *records, size_t n, int bw_bytes,
                                cs_trace_meta *out);
struct cJSON;
/* Adds "back_pressure" {counter: sum} and "die_pairs" [{src_die, dst_die, transactions, bytes}]
 * (non-zero pairs) to trace_meta. */
void cs_backfill_trace_meta_json(const cs_trace_meta *t, struct cJSON *trace_meta);

/* The EngineResult as JSON, from its column table: the tbl-cr-09 aggregates into `aggregates`,
 * every other column (and the engine's extra columns) into `trace_meta`.  Used by `run` and
 * `export` so both print the same shape. */
void cs_backfill_result_json(const cs_result *r, struct cJSON *aggregates, struct cJSON *trace_meta);

/* One JSON object per line: the record's columns (cs_txn_record_cols), then the extra record
 * columns of `engine` (the engine that ran the job; NULL: none); CS_EIO on a write error. */
int cs_backfill_write_jsonl(FILE *f, const cs_engine_ops *engine, const cs_txn_record *records,
                            size_t n, cs_err *err);
/* One record as a JSON object (no newline) into buf, columns as above; returns bytes needed. */
size_t cs_backfill_record_json(const cs_engine_ops *engine, const cs_txn_record *rec, char *buf,
                               size_t cap);

/* ---- per-step summaries (src/backfill/steps.c) ------------------------------------------- */

/* One algorithm step of a job, summed over its transaction records: where the job's time goes
 * step by step without keeping every record.  X(ctype, name, dim, kind, unit, flags, doc), as
 * the record's table (model.h); the HDF5 columns of /steplog, their attributes, `commsweep
 * schema` and export follow it.  Ordered so the struct has no implicit padding. */
#define CS_STEP_SUMMARY_COLUMNS(X)                                                                \
  X(uint64_t, transactions, , U64, NULL, 0, "transactions of the step")                          \
  X(uint64_t, bytes, , U64, "B", 0, "bytes moved: sum of burst_length * bw_bytes")                \
  X(uint64_t, reads, , U64, NULL, 0, "read transactions (is_read 1)")                             \
  X(uint64_t, writes, , U64, NULL, 0, "write transactions (is_read 0)")                           \
  X(uint64_t, first_req_inject_tick, , U64, "tick",                                               \
    0, "earliest req_inject_tick of the step (0 when it has no transactions)")                    \
  X(uint64_t, last_rsp_complete_tick, , U64, "tick", 0, "latest rsp_complete_tick of the step")  \
  X(uint64_t, span_ticks, , U64, "tick", 0,                                                       \
    "last_rsp_complete_tick - first_req_inject_tick (0 when it has no transactions)")             \
  X(uint64_t, req_phase_ticks, , U64, "tick", 0, "sum of req_complete - req_inject")             \
  X(uint64_t, rsp_phase_ticks, , U64, "tick", 0, "sum of rsp_complete - rsp_inject")             \
  X(uint64_t, max_latency_ticks, , U64, "tick", 0,                                                \
    "largest rsp_complete - req_inject of one transaction")                                       \
  X(uint64_t, cross_die_transactions, , U64, NULL, 0, "transactions with src_die != dst_die")    \
  X(uint64_t, cross_die_bytes, , U64, "B", 0, "bytes of the cross-die transactions")              \
  X(uint64_t, retries, , U64, NULL, 0, "sum of retry_count")                                     \
  X(uint64_t, eject_retries, , U64, NULL, 0, "sum of eject_retries")                             \
  X(uint64_t, block_rn, , U64, NULL, 0, "sum of the RN block counters (rn_*_block)")             \
  X(uint64_t, block_sn, , U64, NULL, 0, "sum of the SN block counters (sn_*_block)")             \
  X(uint64_t, block_d2d, , U64, NULL, 0, "sum of the D2D block counters (d2d_*_block)")          \
  X(uint32_t, step, , U32, NULL, 0, "algorithm step, 0 .. num_steps - 1")

typedef struct cs_step_summary {
  CS_STEP_SUMMARY_COLUMNS(CS_COL_MEMBER)
  uint32_t pad_; /* explicit, always zero */
} cs_step_summary;

/* The column table of cs_step_summary (NULL-name terminated). */
extern const cs_col cs_step_summary_cols[];

/* Sums n records into out[0 .. num_steps - 1] (every step gets a summary, an empty step all
 * zeros but its number): exact integer sums, independent of the records' order.  bw_bytes is
 * the adapter's bytes per flit.  A record whose step is num_steps or more is CS_EINTERNAL. */
int cs_backfill_steps(const cs_txn_record *records, size_t n, uint32_t num_steps, int bw_bytes,
                      cs_step_summary *out, cs_err *err);
/* The same over records that arrive in pieces (a step at a time): begin, add each piece, end. */
void cs_backfill_steps_begin(cs_step_summary *out, uint32_t num_steps);
int cs_backfill_steps_add(const cs_txn_record *records, size_t n, uint32_t num_steps,
                          int bw_bytes, cs_step_summary *out, cs_err *err);
void cs_backfill_steps_end(cs_step_summary *out, uint32_t num_steps);

#endif
