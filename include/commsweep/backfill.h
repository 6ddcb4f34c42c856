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

/* trace_meta detail beyond the EngineResult columns: every back-pressure counter summed over
 * the job's transactions, and the traffic between each ordered pair of dies. */
#define CS_TRACE_MAX_DIES 8
typedef struct cs_trace_meta {
  uint64_t retry_count;
  uint64_t rn_rd_block, rn_wr_block, rn_rdb_block, rn_wdb_block;
  uint64_t sn_ro_block, sn_share_block, sn_wdb_block;
  uint64_t d2d_ro_block, d2d_share_block, d2d_wdb_block;
  uint64_t eject_retries;
  uint64_t pair_txns[CS_TRACE_MAX_DIES][CS_TRACE_MAX_DIES];  /* [src_die][dst_die] */
  uint64_t pair_bytes[CS_TRACE_MAX_DIES][CS_TRACE_MAX_DIES]; /* burst_length * bw_bytes */
} cs_trace_meta;

void cs_backfill_trace_meta(const cs_txn_record *records, size_t n, int bw_bytes,
                            cs_trace_meta *out);

/* The EngineResult as JSON: the tbl-cr-09 aggregates into `aggregates`, the engine identity and
 * the summary counters into `trace_meta` (back_pressure, cross_die).  Used by `run` and
 * `export` so both print the same shape. */
struct cJSON;
void cs_backfill_result_json(const cs_result *r, struct cJSON *aggregates, struct cJSON *trace_meta);

/* One JSON object per line, CrossRing-log style field names; returns CS_EIO on a write error. */
int cs_backfill_write_jsonl(FILE *f, const cs_txn_record *records, size_t n, cs_err *err);
/* One record as a JSON object (no newline) into buf; returns bytes needed. */
size_t cs_backfill_record_json(const cs_txn_record *rec, char *buf, size_t cap);

#endif
