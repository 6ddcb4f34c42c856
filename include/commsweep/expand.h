/* L1 expansion: a CommPrimitiveSpec becomes steps of concurrent flows, each flow a run of write
 * (or, for p2p read, read) transactions from a participant's GDMA to a peer's DDR.
 *
 * Rules (docs/expansion.md): the message of M bytes is split into N chunks, the first M mod N of
 * floor(M/N)+1 bytes and the rest of floor(M/N); chunk flits = ceil(bytes / bw_bytes);
 * transactions = ceil(flits / burst_length), the last one carrying the remaining flits.  Ring and
 * pairwise algorithms order participants ascending, so results do not depend on list order.
 * Request ids are 0 .. num_txns-1 in inject order.  A plan holds the steps' shapes, not their
 * transactions: the flows of a step are made when the step runs.
 */
#ifndef COMMSWEEP_EXPAND_H
#define COMMSWEEP_EXPAND_H

#include "commsweep/err.h"
#include "commsweep/model.h"

typedef struct cs_flow {
  uint32_t step;
  int32_t src;         /* logical GDMA id of the sender */
  int32_t dst;         /* logical DDR id of the receiver */
  uint8_t is_read;
  uint16_t burst;      /* burst_length: the flits of every transaction of the flow but its last */
  uint64_t bytes;      /* chunk bytes carried by the flow */
  uint64_t flits;      /* ceil(bytes / bw_bytes) */
  uint64_t first_txn;  /* request id of its first transaction */
  uint64_t num_txns;   /* ceil(flits / burst_length) */
} cs_flow;

/* Transaction k (0 <= k < num_txns) of a flow, as the req the driver injects: request id
 * first_txn + k, `burst` flits but the last, which carries the remaining ones. */
static inline cs_inject cs_flow_req(const cs_flow *f, uint64_t k) {
  uint64_t left = f->flits - k * f->burst;
  return (cs_inject){.request_id = f->first_txn + k,
                     .src_id = f->src,
                     .dst_id = f->dst,
                     .is_read = f->is_read,
                     .packet_type = CS_PKT_REQ,
                     .burst_length = (uint16_t)(left < f->burst ? left : f->burst)};
}

/* A job's plan: the shape of every step, its flows made on demand (cs_plan_step_flows), so a
 * plan holds O(steps + participants) memory whatever the job's transactions.  Request ids are
 * 0 .. num_txns-1, step-major, then flow-major, then the flow's transactions in order. */
typedef struct cs_plan {
  uint32_t num_steps;       /* T_steps of tbl-cr-05 */
  uint32_t flows_per_step;  /* concurrent flows in every step */
  uint64_t num_txns;
  uint64_t *step_txn_begin; /* num_steps + 1 entries: step s owns ids [begin[s], begin[s+1]) */
  uint64_t widest_step;     /* transactions of the plan's widest step */
  uint64_t total_comm_bytes; /* tbl-cr-06, floor of the exact value when N does not divide */
  int32_t *order;           /* the N participants in expansion order (cs_spec_participant_order) */
  cs_spec spec;             /* the job's spec and the adapter's sizes the flows are cut by */
  int bw_bytes, burst_length;
} cs_plan;

/* Counts transactions and steps without keeping anything (for --dry-run and storage sizing). */
int cs_expand_count(const cs_job *job, uint64_t *num_txns, uint32_t *num_steps, cs_err *err);

/* Plans the job into *plan (zeroed first).  On failure the plan holds nothing to free. */
int cs_expand(const cs_job *job, cs_plan *plan, cs_err *err);
void cs_plan_free(cs_plan *plan); /* accepts NULL and a zeroed plan */
/* The flows of step s (< num_steps) into out[0 .. flows_per_step), in flow order. */
void cs_plan_step_flows(const cs_plan *plan, uint32_t s, cs_flow *out);
/* The reqs of a step, from its flows (cs_plan_step_flows), into out[0 .. the step's
 * transactions), in request-id order. */
void cs_plan_step_reqs(const cs_plan *plan, const cs_flow *flows, cs_inject *out);
/* C6 at flow level (seed tbl-cr-10): the flows of one step that have transactions target
 * distinct DDR ids.  O(n log n); the message names the first requests of two flows that share
 * a target. */
int cs_plan_check_step_flows(const cs_flow *flows, size_t n, uint32_t step, cs_err *err);
/* Bytes a plan holds for a job of n participants and `steps` steps (the memory estimate). */
uint64_t cs_plan_bytes(int n, uint32_t steps);

/* tbl-cr-06 total bytes and tbl-cr-05 step count, from the spec alone. */
uint64_t cs_expand_total_bytes(cs_primitive p, uint64_t msg_bytes, int n);
uint32_t cs_expand_num_steps(cs_primitive p, int n);

#endif
