/* L3 back-fill (seed tbl-cr-09): time metrics from the four driver ticks of every record,
 * back-pressure and cross-die summaries for trace_meta.  Ticks are converted with the driver
 * frequency: tick / f_driver[GHz] = ns. */
#include "commsweep/backfill.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Position of id in the ascending array, or -1. */
static int sender_index(const int32_t *ids, int n, int32_t id) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (ids[mid] == id) return mid;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

uint64_t cs_backfill_bytes(int n) {
  return sizeof(cs_backfill_acc) + (uint64_t)(n > 0 ? n : 0) * (sizeof(int32_t) + sizeof(double));
}

int cs_backfill_begin(cs_backfill_acc *acc, const cs_job *job, cs_err *err) {
  memset(acc, 0, sizeof *acc);
  int n = job->spec.num_participants;
  acc->num_participants = n;
  acc->bw_bytes = job->adapter.bw_bytes;
  acc->sorted_ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *acc->sorted_ids);
  acc->last = malloc((size_t)(n > 0 ? n : 1) * sizeof *acc->last);
  if (!acc->sorted_ids || !acc->last) {
    cs_backfill_acc_free(acc);
    return cs_err_set(err, CS_ENOMEM, "backfill: out of memory for %d participants", n);
  }
  for (int i = 0; i < n; i++) acc->last[i] = -1;
  /* T_i is indexed by the participant's rank in ascending id order: one binary search per
   * record instead of a scan of the participant list (none for a run of consecutive ids). */
  cs_spec_participant_order(&job->spec, acc->sorted_ids);
  if (job->spec.primitive == CS_PRIM_P2P)
    qsort(acc->sorted_ids, (size_t)n, sizeof *acc->sorted_ids, cmp_i32);
  acc->contiguous = n > 0 && acc->sorted_ids[n - 1] - acc->sorted_ids[0] == n - 1;
  return CS_OK;
}

void cs_backfill_acc_free(cs_backfill_acc *acc) {
  free(acc->sorted_ids);
  free(acc->last);
  acc->sorted_ids = NULL;
  acc->last = NULL;
}

void cs_backfill_add(cs_backfill_acc *acc, const cs_txn_record *records, uint64_t n) {
  cs_result *out = &acc->sums;
  for (uint64_t i = 0; i < n; i++) {
    const cs_txn_record *r = &records[i];
    if (r->rsp_complete_tick > acc->max_tick) acc->max_tick = r->rsp_complete_tick;
    acc->req_ticks += r->req_complete_tick - r->req_inject_tick;
    acc->rsp_ticks += r->rsp_complete_tick - r->rsp_inject_tick;
    int p = acc->contiguous
                ? (r->src - acc->sorted_ids[0] >= 0 && r->src - acc->sorted_ids[0] < acc->num_participants
                       ? r->src - acc->sorted_ids[0]
                       : -1)
                : sender_index(acc->sorted_ids, acc->num_participants, r->src);
    if (p >= 0 && (double)r->rsp_complete_tick > acc->last[p])
      acc->last[p] = (double)r->rsp_complete_tick;
    out->retries += r->retry_count;
    out->block_rn += (uint64_t)r->rn_rd_block + r->rn_wr_block + r->rn_rdb_block + r->rn_wdb_block;
    out->block_sn += (uint64_t)r->sn_ro_block + r->sn_share_block + r->sn_wdb_block;
    out->block_d2d += (uint64_t)r->d2d_ro_block + r->d2d_share_block + r->d2d_wdb_block;
    if (r->src_die != r->dst_die) {
      out->cross_die_transactions++;
      out->cross_die_bytes += (uint64_t)r->burst_length * (uint64_t)acc->bw_bytes;
    }
  }
}

void cs_backfill_end(cs_backfill_acc *acc, const cs_job *job, const cs_plan *plan,
                     const cs_engine_stats *engine_stats, const char *engine_name, cs_result *out) {
  *out = acc->sums;
  double ns_per_tick = 1.0 / job->adapter.driver_cycle_frequency_ghz;
  /* Straggler ratio over the participants that send: max T_i / median T_i. */
  double *last = acc->last;
  int senders = 0;
  for (int p = 0; p < acc->num_participants; p++)
    if (last[p] >= 0) last[senders++] = last[p];
  qsort(last, (size_t)senders, sizeof *last, cmp_double);
  double median = 0, top = 0;
  if (senders) {
    median = senders % 2 ? last[senders / 2] : (last[senders / 2 - 1] + last[senders / 2]) / 2;
    top = last[senders - 1];
  }
  uint64_t max_tick = acc->max_tick;
  out->total_time_us = (double)max_tick * ns_per_tick / 1000.0;
  out->req_phase_us = (double)acc->req_ticks * ns_per_tick / 1000.0;
  out->rsp_phase_us = (double)acc->rsp_ticks * ns_per_tick / 1000.0;
  out->max_chip_latency_us = top * ns_per_tick / 1000.0;
  out->straggler_ratio = median > 0 ? top / median : 1.0;
  out->total_comm_bytes = plan->total_comm_bytes;
  out->bus_bw_gb_per_s = max_tick ? (double)plan->total_comm_bytes / ((double)max_tick * ns_per_tick) : 0;
  out->algorithm_steps = plan->num_steps;
  out->num_transactions = plan->num_txns;
  out->total_ticks = max_tick;
  snprintf(out->engine, sizeof out->engine, "%s", engine_name);
  if (engine_stats) {
    out->sim_cycles = engine_stats->sim_cycles;
    out->flit_hops = engine_stats->flit_hops;
    const cs_engine_ops *ops = cs_engine_find(engine_name);
    size_t slot = ops ? cs_engine_extra_slot(ops) : CS_RESULT_EXTRA_SLOTS;
    for (size_t i = 0; ops && ops->result_columns && ops->result_columns[i].name; i++)
      if (i < CS_ENGINE_EXTRA_MAX && slot + i < CS_RESULT_EXTRA_SLOTS)
        out->engine_extra[slot + i] = engine_stats->extra[i];
  }
  cs_backfill_acc_free(acc);
}

int cs_backfill(const cs_job *job, const cs_plan *plan, const cs_txn_record *records,
                const cs_engine_stats *engine_stats, const char *engine_name, cs_result *out,
                cs_err *err) {
  cs_backfill_acc acc;
  int rc = cs_backfill_begin(&acc, job, err);
  if (rc) return rc;
  cs_backfill_add(&acc, records, plan->num_txns);
  cs_backfill_end(&acc, job, plan, engine_stats, engine_name, out);
  return CS_OK;
}

void cs_backfill_trace_meta(const cs_txn_record *records, size_t n, int bw_bytes,
                            cs_trace_meta *out) {
  memset(out, 0, sizeof *out);
  cs_backfill_trace_meta_add(records, n, bw_bytes, out);
}

void cs_backfill_trace_meta_add(const cs_txn_record *records, size_t n, int bw_bytes,
                                cs_trace_meta *out) {
  const cs_col *counters[CS_TRACE_MAX_COUNTERS];
  size_t nc = 0;
  for (const cs_col *c = cs_txn_record_cols; c->name && nc < CS_TRACE_MAX_COUNTERS; c++)
    if (c->flags & CS_COL_COUNTER) counters[nc++] = c;
  for (size_t i = 0; i < n; i++) {
    const cs_txn_record *r = &records[i];
    for (size_t k = 0; k < nc; k++) out->counter[k] += (uint64_t)cs_col_number(counters[k], r);
    if (r->src_die >= 0 && r->src_die < CS_TRACE_MAX_DIES && r->dst_die >= 0 &&
        r->dst_die < CS_TRACE_MAX_DIES) {
      out->pair_txns[r->src_die][r->dst_die]++;
      out->pair_bytes[r->src_die][r->dst_die] += (uint64_t)r->burst_length * (uint64_t)bw_bytes;
    }
  }
}

void cs_backfill_trace_meta_json(const cs_trace_meta *t, cJSON *meta) {
  cJSON *bp = cJSON_AddObjectToObject(meta, "back_pressure");
  size_t k = 0;
  for (const cs_col *c = cs_txn_record_cols; c->name && k < CS_TRACE_MAX_COUNTERS; c++)
    if (c->flags & CS_COL_COUNTER) cJSON_AddNumberToObject(bp, c->name, (double)t->counter[k++]);
  cJSON *arr = cJSON_AddArrayToObject(meta, "die_pairs");
  for (int a = 0; a < CS_TRACE_MAX_DIES; a++)
    for (int b = 0; b < CS_TRACE_MAX_DIES; b++) {
      if (!t->pair_txns[a][b]) continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "src_die", a);
      cJSON_AddNumberToObject(o, "dst_die", b);
      cJSON_AddNumberToObject(o, "transactions", (double)t->pair_txns[a][b]);
      cJSON_AddNumberToObject(o, "bytes", (double)t->pair_bytes[a][b]);
      cJSON_AddItemToArray(arr, o);
    }
}

void cs_backfill_result_json(const cs_result *r, cJSON *agg, cJSON *meta) {
  cs_cols_to_json(cs_result_cols, r, CS_COL_AGGREGATE, 0, agg);
  cs_cols_to_json(cs_result_cols, r, 0, CS_COL_AGGREGATE, meta);
  cs_col extra[CS_RESULT_EXTRA_SLOTS + 1];
  const cs_engine_ops *ops = cs_engine_find(r->engine);
  if (ops && cs_engine_result_columns(cs_engine_set_of(ops), 0, extra, sizeof extra / sizeof extra[0]))
    cs_cols_to_json(extra, r, 0, 0, meta);
}

/* The record's columns as a job of `engine` fills them: the common ones, then the engine's. */
static void record_columns(const cs_engine_ops *engine, cs_col *out, size_t cap) {
  size_t n = 0;
  for (const cs_col *c = cs_txn_record_cols; c->name && n + 1 < cap; c++) out[n++] = *c;
  out[n] = (cs_col){NULL, 0, 0, 0, NULL, NULL, 0};
  if (engine) cs_engine_record_columns(cs_engine_set_of(engine), 0, out + n, cap - n);
}

#define RECORD_COLUMNS_MAX 64

size_t cs_backfill_record_json(const cs_engine_ops *engine, const cs_txn_record *r, char *buf,
                               size_t cap) {
  cs_col cols[RECORD_COLUMNS_MAX];
  record_columns(engine, cols, RECORD_COLUMNS_MAX);
  return cs_cols_json_line(cols, r, buf, cap);
}

int cs_backfill_write_jsonl(FILE *f, const cs_engine_ops *engine, const cs_txn_record *records,
                            size_t n, cs_err *err) {
  cs_col cols[RECORD_COLUMNS_MAX];
  record_columns(engine, cols, RECORD_COLUMNS_MAX);
  char line[4096];
  for (size_t i = 0; i < n; i++) {
    cs_cols_json_line(cols, &records[i], line, sizeof line);
    if (fputs(line, f) == EOF || fputc('\n', f) == EOF)
      return cs_err_set(err, CS_EIO, "transaction log: write failed at record %zu", i);
  }
  return CS_OK;
}
