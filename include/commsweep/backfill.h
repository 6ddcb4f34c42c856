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

#endif
