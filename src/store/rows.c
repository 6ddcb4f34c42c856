/* Conversions between the model's structs (cs_result, cs_txn_record, cs_job) and the store's
 * row structs.  Every function writes fields one by one into zeroed rows, so the padding the
 * checksum covers stays zero. */
#include <stdio.h>
#include <string.h>

#include "commsweep/store.h"

void cs_store_set_text(char *dst, size_t cap, const char *src) {
  memset(dst, 0, cap);
  size_t n = strlen(src);
  if (n < cap) {
    memcpy(dst, src, n);
    return;
  }
  memcpy(dst, src, cap - 1);
  if (cap > 4) memcpy(dst + cap - 4, "...", 3); /* keeps a NUL: NULLTERM columns */
}

void cs_store_get_text(const char *src, size_t len, char *dst, size_t cap) {
  size_t n = 0;
  while (n < len && src[n]) n++;
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

const char *cs_store_status_name(int status) {
  switch (status) {
    case CS_STORE_PENDING: return "pending";
    case CS_STORE_DONE: return "done";
    case CS_STORE_FAILED: return "failed";
  }
  return "corrupt";
}

void cs_store_result_from(const cs_result *r, cs_store_result_row *row) {
  row->total_time_us = r->total_time_us;
  row->req_phase_us = r->req_phase_us;
  row->rsp_phase_us = r->rsp_phase_us;
  row->max_chip_latency_us = r->max_chip_latency_us;
  row->straggler_ratio = r->straggler_ratio;
  row->bus_bw_gb_per_s = r->bus_bw_gb_per_s;
  row->total_comm_bytes = r->total_comm_bytes;
  row->algorithm_steps = r->algorithm_steps;
  cs_store_set_text(row->engine, sizeof row->engine, r->engine);
  row->sim_cycles = r->sim_cycles;
  row->total_ticks = r->total_ticks;
  row->wall_time_s = r->wall_time_s;
  row->num_transactions = r->num_transactions;
  row->retries = r->retries;
  row->block_rn = r->block_rn;
  row->block_sn = r->block_sn;
  row->block_d2d = r->block_d2d;
  row->cross_die_transactions = r->cross_die_transactions;
  row->cross_die_bytes = r->cross_die_bytes;
  row->flit_hops = r->flit_hops;
}

void cs_store_result_to(const cs_store_result_row *row, cs_result *r) {
  memset(r, 0, sizeof *r);
  r->total_time_us = row->total_time_us;
  r->req_phase_us = row->req_phase_us;
  r->rsp_phase_us = row->rsp_phase_us;
  r->max_chip_latency_us = row->max_chip_latency_us;
  r->straggler_ratio = row->straggler_ratio;
  r->bus_bw_gb_per_s = row->bus_bw_gb_per_s;
  r->total_comm_bytes = row->total_comm_bytes;
  r->algorithm_steps = row->algorithm_steps;
  cs_store_get_text(row->engine, sizeof row->engine, r->engine, sizeof r->engine);
  r->sim_cycles = row->sim_cycles;
  r->total_ticks = row->total_ticks;
  r->wall_time_s = row->wall_time_s;
  r->num_transactions = row->num_transactions;
  r->retries = row->retries;
  r->block_rn = row->block_rn;
  r->block_sn = row->block_sn;
  r->block_d2d = row->block_d2d;
  r->cross_die_transactions = row->cross_die_transactions;
  r->cross_die_bytes = row->cross_die_bytes;
  r->flit_hops = row->flit_hops;
}

/* The field list both directions share. */
#define TXN_FIELDS(X)                                                                          \
  X(request_id) X(step) X(src) X(dst) X(src_die) X(dst_die) X(src_node) X(dst_node)            \
  X(src_channel) X(dst_channel) X(d2d_src_node) X(d2d_dst_node) X(is_read) X(burst_length)     \
  X(req_inject_tick) X(req_complete_tick) X(rsp_inject_tick) X(rsp_complete_tick)              \
  X(retry_count) X(rn_rd_block) X(rn_wr_block) X(rn_rdb_block) X(rn_wdb_block) X(sn_ro_block)  \
  X(sn_share_block) X(sn_wdb_block) X(d2d_ro_block) X(d2d_share_block) X(d2d_wdb_block)        \
  X(eject_retries) X(req_inject_cycle) X(wdata_gen_cycle) X(req_complete_cycle)                \
  X(rsp_inject_cycle) X(wdata_complete_cycle) X(rsp_complete_cycle)

void cs_store_txn_from(uint64_t job, const cs_txn_record *rec, cs_store_txn_row *row) {
  row->job = job;
#define COPY_(f) row->f = rec->f;
  TXN_FIELDS(COPY_)
#undef COPY_
  row->pad_ = 0;
}

void cs_store_txn_to(const cs_store_txn_row *row, cs_txn_record *rec) {
  memset(rec, 0, sizeof *rec);
#define COPY_(f) rec->f = row->f;
  TXN_FIELDS(COPY_)
#undef COPY_
}

static void participants_text(const cs_spec *s, char *buf, size_t cap) {
  char tmp[CS_MAX_PARTICIPANTS * 12];
  size_t used = 0;
  tmp[0] = '\0';
  for (int i = 0; i < s->num_participants && used < sizeof tmp; i++)
    used += (size_t)snprintf(tmp + used, sizeof tmp - used, "%s%d", i ? "," : "",
                             (int)s->participants[i]);
  cs_store_set_text(buf, cap, tmp);
}

void cs_store_job_from(const cs_job *job, cs_store_job_row *row) {
  const cs_spec *s = &job->spec;
  const cs_adapter_config *a = &job->adapter;
  const char *prim = cs_primitive_name(s->primitive), *algo = cs_algorithm_name(s->algorithm);
  const char *op = s->p2p_op == CS_P2P_NONE ? "" : cs_p2p_op_name(s->p2p_op);
  cs_store_set_text(row->primitive, sizeof row->primitive, prim ? prim : "?");
  cs_store_set_text(row->algorithm, sizeof row->algorithm, algo ? algo : "?");
  cs_store_set_text(row->dtype, sizeof row->dtype, s->dtype);
  cs_store_set_text(row->p2p_op, sizeof row->p2p_op, op ? op : "?");
  row->msg_size_bytes = s->msg_size_bytes;
  row->num_participants = s->num_participants;
  participants_text(s, row->participants, sizeof row->participants);
  cs_store_set_text(row->topology, sizeof row->topology, a->topology);
  cs_store_set_text(row->dcin_layout, sizeof row->dcin_layout, a->dcin_layout);
  row->num_dies = a->num_dies;
  row->mst_rd_outstanding = a->mst_rd_outstanding;
  row->mst_wr_outstanding = a->mst_wr_outstanding;
  row->slv_rd_outstanding = a->slv_rd_outstanding;
  row->slv_wr_outstanding = a->slv_wr_outstanding;
  row->burst_length = a->burst_length;
  row->bw_bytes = a->bw_bytes;
  row->driver_cycle_frequency_ghz = a->driver_cycle_frequency_ghz;
  row->ip_frequency_ghz = a->ip_frequency_ghz;
  row->noc_frequency_ghz = a->noc_frequency_ghz;
  cs_store_set_text(row->engine, sizeof row->engine, job->engine.name);
}
