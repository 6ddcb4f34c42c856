/* L3 back-fill (seed tbl-cr-09): time metrics from the four driver ticks of every record,
 * back-pressure and cross-die summaries for trace_meta.  Ticks are converted with the driver
 * frequency: tick / f_driver[GHz] = ns. */
#include "commsweep/backfill.h"

#include <inttypes.h>
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

int cs_backfill(const cs_job *job, const cs_plan *plan, const cs_txn_record *records,
                const cs_engine_stats *engine_stats, const char *engine_name, cs_result *out,
                cs_err *err) {
  memset(out, 0, sizeof *out);
  double ns_per_tick = 1.0 / job->adapter.driver_cycle_frequency_ghz;
  int n = job->spec.num_participants;
  double *last = calloc((size_t)n, sizeof *last); /* T_i in ticks; < 0: sends nothing */
  if (!last) return cs_err_set(err, CS_ENOMEM, "backfill: out of memory");
  for (int i = 0; i < n; i++) last[i] = -1;
  /* T_i is indexed by the participant's rank in ascending id order: one binary search per
   * record instead of a scan of the participant list. */
  int32_t sorted_ids[CS_MAX_PARTICIPANTS];
  memcpy(sorted_ids, job->spec.participants, (size_t)n * sizeof *sorted_ids);
  qsort(sorted_ids, (size_t)n, sizeof *sorted_ids, cmp_i32);

  uint64_t max_tick = 0;
  double req_ticks = 0, rsp_ticks = 0;
  for (uint64_t i = 0; i < plan->num_txns; i++) {
    const cs_txn_record *r = &records[i];
    if (r->rsp_complete_tick > max_tick) max_tick = r->rsp_complete_tick;
    req_ticks += (double)(r->req_complete_tick - r->req_inject_tick);
    rsp_ticks += (double)(r->rsp_complete_tick - r->rsp_inject_tick);
    int p = sender_index(sorted_ids, n, r->src);
    if (p >= 0 && (double)r->rsp_complete_tick > last[p]) last[p] = (double)r->rsp_complete_tick;
    out->retries += r->retry_count;
    out->block_rn += (uint64_t)r->rn_rd_block + r->rn_wr_block + r->rn_rdb_block + r->rn_wdb_block;
    out->block_sn += (uint64_t)r->sn_ro_block + r->sn_share_block + r->sn_wdb_block;
    out->block_d2d += (uint64_t)r->d2d_ro_block + r->d2d_share_block + r->d2d_wdb_block;
    if (r->src_die != r->dst_die) {
      out->cross_die_transactions++;
      out->cross_die_bytes += (uint64_t)r->burst_length * (uint64_t)job->adapter.bw_bytes;
    }
  }

  /* Straggler ratio over the participants that send: max T_i / median T_i. */
  int senders = 0;
  for (int p = 0; p < n; p++)
    if (last[p] >= 0) last[senders++] = last[p];
  qsort(last, (size_t)senders, sizeof *last, cmp_double);
  double median = 0, top = 0;
  if (senders) {
    median = senders % 2 ? last[senders / 2] : (last[senders / 2 - 1] + last[senders / 2]) / 2;
    top = last[senders - 1];
  }
  free(last);

  out->total_time_us = (double)max_tick * ns_per_tick / 1000.0;
  out->req_phase_us = req_ticks * ns_per_tick / 1000.0;
  out->rsp_phase_us = rsp_ticks * ns_per_tick / 1000.0;
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
  }
  return CS_OK;
}

void cs_backfill_trace_meta(const cs_txn_record *records, size_t n, int bw_bytes,
                            cs_trace_meta *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < n; i++) {
    const cs_txn_record *r = &records[i];
    out->retry_count += r->retry_count;
    out->rn_rd_block += r->rn_rd_block;
    out->rn_wr_block += r->rn_wr_block;
    out->rn_rdb_block += r->rn_rdb_block;
    out->rn_wdb_block += r->rn_wdb_block;
    out->sn_ro_block += r->sn_ro_block;
    out->sn_share_block += r->sn_share_block;
    out->sn_wdb_block += r->sn_wdb_block;
    out->d2d_ro_block += r->d2d_ro_block;
    out->d2d_share_block += r->d2d_share_block;
    out->d2d_wdb_block += r->d2d_wdb_block;
    out->eject_retries += r->eject_retries;
    if (r->src_die >= 0 && r->src_die < CS_TRACE_MAX_DIES && r->dst_die >= 0 &&
        r->dst_die < CS_TRACE_MAX_DIES) {
      out->pair_txns[r->src_die][r->dst_die]++;
      out->pair_bytes[r->src_die][r->dst_die] += (uint64_t)r->burst_length * (uint64_t)bw_bytes;
    }
  }
}

void cs_backfill_result_json(const cs_result *r, cJSON *agg, cJSON *meta) {
  cJSON_AddNumberToObject(agg, "total_time_us", r->total_time_us);
  cJSON_AddNumberToObject(agg, "req_phase_us", r->req_phase_us);
  cJSON_AddNumberToObject(agg, "rsp_phase_us", r->rsp_phase_us);
  cJSON_AddNumberToObject(agg, "max_chip_latency_us", r->max_chip_latency_us);
  cJSON_AddNumberToObject(agg, "straggler_ratio", r->straggler_ratio);
  cJSON_AddNumberToObject(agg, "bus_bw_gb_per_s", r->bus_bw_gb_per_s);
  cJSON_AddNumberToObject(agg, "total_comm_bytes", (double)r->total_comm_bytes);
  cJSON_AddNumberToObject(agg, "algorithm_steps", r->algorithm_steps);
  cJSON_AddStringToObject(meta, "engine", r->engine);
  cJSON_AddNumberToObject(meta, "num_transactions", (double)r->num_transactions);
  cJSON_AddNumberToObject(meta, "sim_cycles", (double)r->sim_cycles);
  cJSON_AddNumberToObject(meta, "total_ticks", (double)r->total_ticks);
  cJSON_AddNumberToObject(meta, "flit_hops", (double)r->flit_hops);
  cJSON_AddNumberToObject(meta, "wall_time_s", r->wall_time_s);
  cJSON *bp = cJSON_AddObjectToObject(meta, "back_pressure");
  cJSON_AddNumberToObject(bp, "retry_count", (double)r->retries);
  cJSON_AddNumberToObject(bp, "block_rn", (double)r->block_rn);
  cJSON_AddNumberToObject(bp, "block_sn", (double)r->block_sn);
  cJSON_AddNumberToObject(bp, "block_d2d", (double)r->block_d2d);
  cJSON *d2d = cJSON_AddObjectToObject(meta, "cross_die");
  cJSON_AddNumberToObject(d2d, "transactions", (double)r->cross_die_transactions);
  cJSON_AddNumberToObject(d2d, "bytes", (double)r->cross_die_bytes);
}

size_t cs_backfill_record_json(const cs_txn_record *r, char *buf, size_t cap) {
  int n = snprintf(
      buf, cap,
      "{\"request_id\":%" PRIu64 ",\"step\":%u,\"src\":%d,\"dst\":%d,\"src_die\":%d,\"dst_die\":%d,"
      "\"src_node\":%d,\"dst_node\":%d,\"src_channel\":%d,\"dst_channel\":%d,"
      "\"d2d_src_node\":%d,\"d2d_dst_node\":%d,\"is_read\":%s,\"burst_length\":%u,"
      "\"req_inject_tick\":%" PRIu64 ",\"req_complete_tick\":%" PRIu64 ",\"rsp_inject_tick\":%" PRIu64
      ",\"rsp_complete_tick\":%" PRIu64 ",\"retry_count\":%u,\"rn_rd_block\":%u,\"rn_wr_block\":%u,"
      "\"rn_rdb_block\":%u,\"rn_wdb_block\":%u,\"sn_ro_block\":%u,\"sn_share_block\":%u,"
      "\"sn_wdb_block\":%u,\"d2d_ro_block\":%u,\"d2d_share_block\":%u,\"d2d_wdb_block\":%u,"
      "\"eject_retries\":%u,\"req_inject_cycle\":%" PRIu64 ",\"wdata_gen_cycle\":%" PRIu64
      ",\"req_complete_cycle\":%" PRIu64 ",\"rsp_inject_cycle\":%" PRIu64
      ",\"wdata_complete_cycle\":%" PRIu64 ",\"rsp_complete_cycle\":%" PRIu64 "}",
      r->request_id, r->step, r->src, r->dst, r->src_die, r->dst_die, r->src_node, r->dst_node,
      r->src_channel, r->dst_channel, r->d2d_src_node, r->d2d_dst_node,
      r->is_read ? "true" : "false", r->burst_length, r->req_inject_tick, r->req_complete_tick,
      r->rsp_inject_tick, r->rsp_complete_tick, r->retry_count, r->rn_rd_block, r->rn_wr_block,
      r->rn_rdb_block, r->rn_wdb_block, r->sn_ro_block, r->sn_share_block, r->sn_wdb_block,
      r->d2d_ro_block, r->d2d_share_block, r->d2d_wdb_block, r->eject_retries, r->req_inject_cycle,
      r->wdata_gen_cycle, r->req_complete_cycle, r->rsp_inject_cycle, r->wdata_complete_cycle,
      r->rsp_complete_cycle);
  return n < 0 ? 0 : (size_t)n;
}

int cs_backfill_write_jsonl(FILE *f, const cs_txn_record *records, size_t n, cs_err *err) {
  char line[2048];
  for (size_t i = 0; i < n; i++) {
    cs_backfill_record_json(&records[i], line, sizeof line);
    if (fputs(line, f) == EOF || fputc('\n', f) == EOF)
      return cs_err_set(err, CS_EIO, "transaction log: write failed at record %zu", i);
  }
  return CS_OK;
}
