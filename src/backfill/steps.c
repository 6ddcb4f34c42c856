/* Per-step summaries of a job's transaction records (backfill.h): the time, traffic and
 * back-pressure of each algorithm step, so a sweep can keep where the time goes per step
 * without storing every record.  Integer sums only: the same records give the same bits in any
 * order, on any rank. */
#include <stddef.h>
#include <string.h>

#include "commsweep/backfill.h"

#define STEP_ROW_(ctype, name, dim, kind, unit, flags, doc) \
  CS_COL_ROW(cs_step_summary, name, kind, unit, flags, doc)
const cs_col cs_step_summary_cols[] = {
    CS_STEP_SUMMARY_COLUMNS(STEP_ROW_){NULL, 0, 0, 0, NULL, NULL, 0}};
#undef STEP_ROW_

void cs_backfill_steps_begin(cs_step_summary *out, uint32_t num_steps) {
  memset(out, 0, (size_t)num_steps * sizeof *out);
  for (uint32_t t = 0; t < num_steps; t++) out[t].step = t;
}

int cs_backfill_steps_add(const cs_txn_record *records, size_t n, uint32_t num_steps,
                          int bw_bytes, cs_step_summary *out, cs_err *err) {
  uint64_t bw = bw_bytes > 0 ? (uint64_t)bw_bytes : 0;
  for (size_t i = 0; i < n; i++) {
    const cs_txn_record *r = &records[i];
    if (r->step >= num_steps)
      return cs_err_set(err, CS_EINTERNAL,
                        "record %zu (request %llu) is of step %u, the job has %u steps", i,
                        (unsigned long long)r->request_id, r->step, num_steps);
    cs_step_summary *s = &out[r->step];
    uint64_t bytes = (uint64_t)r->burst_length * bw;
    if (s->transactions == 0 || r->req_inject_tick < s->first_req_inject_tick)
      s->first_req_inject_tick = r->req_inject_tick;
    if (r->rsp_complete_tick > s->last_rsp_complete_tick)
      s->last_rsp_complete_tick = r->rsp_complete_tick;
    uint64_t latency = r->rsp_complete_tick - r->req_inject_tick;
    if (latency > s->max_latency_ticks) s->max_latency_ticks = latency;
    s->transactions++;
    s->bytes += bytes;
    s->reads += r->is_read != 0;
    s->writes += r->is_read == 0;
    s->req_phase_ticks += r->req_complete_tick - r->req_inject_tick;
    s->rsp_phase_ticks += r->rsp_complete_tick - r->rsp_inject_tick;
    if (r->src_die != r->dst_die) {
      s->cross_die_transactions++;
      s->cross_die_bytes += bytes;
    }
    s->retries += r->retry_count;
    s->eject_retries += r->eject_retries;
    s->block_rn += (uint64_t)r->rn_rd_block + r->rn_wr_block + r->rn_rdb_block + r->rn_wdb_block;
    s->block_sn += (uint64_t)r->sn_ro_block + r->sn_share_block + r->sn_wdb_block;
    s->block_d2d += (uint64_t)r->d2d_ro_block + r->d2d_share_block + r->d2d_wdb_block;
  }
  return CS_OK;
}

void cs_backfill_steps_end(cs_step_summary *out, uint32_t num_steps) {
  for (uint32_t t = 0; t < num_steps; t++)
    if (out[t].transactions)
      out[t].span_ticks = out[t].last_rsp_complete_tick - out[t].first_req_inject_tick;
}

int cs_backfill_steps(const cs_txn_record *records, size_t n, uint32_t num_steps, int bw_bytes,
                      cs_step_summary *out, cs_err *err) {
  cs_backfill_steps_begin(out, num_steps);
  int rc = cs_backfill_steps_add(records, n, num_steps, bw_bytes, out, err);
  if (!rc) cs_backfill_steps_end(out, num_steps);
  return rc;
}
