/* L1 expansion: a CommPrimitiveSpec becomes steps of concurrent flows, each flow a run of write
 * (or, for p2p read, read) transactions from a participant's GDMA to a peer's DDR.
 *
 * Rules (docs/expansion.md): the message of M bytes is split into N chunks, the first M mod N of
 * floor(M/N)+1 bytes and the rest of floor(M/N); chunk flits = ceil(bytes / bw_bytes);
 * transactions = ceil(flits / burst_length), the last one carrying the remaining flits.  Ring and
 * pairwise algorithms order participants ascending, so results do not depend on list order.
 * Request ids are 0 .. num_txns-1 in inject order.
 */
#ifndef COMMSWEEP_EXPAND_H
#define COMMSWEEP_EXPAND_H

#include "commsweep/err.h"
#include "commsweep/model.h"

/* Above this many transactions a job is refused (memory: about 200 bytes each). */
#define CS_MAX_TXNS_PER_JOB (16u * 1024u * 1024u)

typedef struct cs_flow {
  uint32_t step;
  int32_t src;         /* logical GDMA id of the sender */
  int32_t dst;         /* logical DDR id of the receiver */
  uint8_t is_read;
  uint64_t bytes;      /* chunk bytes carried by the flow */
  uint64_t flits;      /* ceil(bytes / bw_bytes) */
  uint64_t first_txn;  /* index of its first transaction in cs_plan.txns */
  uint64_t num_txns;   /* ceil(flits / burst_length) */
} cs_flow;

typedef struct cs_plan {
  uint32_t num_steps;      /* T_steps of tbl-cr-05 */
  uint32_t flows_per_step; /* concurrent flows in every step */
  uint32_t num_flows;      /* num_steps * flows_per_step */
  cs_flow *flows;          /* step-major */
  uint64_t num_txns;
  cs_inject *txns;         /* req injects, step-major then flow-major; txns[i].request_id == i */
  uint32_t *txn_flow;      /* flow index of each transaction */
  uint64_t *step_txn_begin; /* num_steps + 1 entries: step s owns [begin[s], begin[s+1]) */
  uint64_t total_comm_bytes; /* tbl-cr-06, floor of the exact value when N does not divide */
} cs_plan;

/* Counts transactions without allocating (for --dry-run and storage sizing). */
int cs_expand_count(const cs_job *job, uint64_t *num_txns, uint32_t *num_steps, cs_err *err);

/* Expands the job into *plan (zeroed first).  On failure the plan holds nothing to free. */
int cs_expand(const cs_job *job, cs_plan *plan, cs_err *err);
void cs_plan_free(cs_plan *plan); /* accepts NULL and a zeroed plan */

/* tbl-cr-06 total bytes and tbl-cr-05 step count, from the spec alone. */
uint64_t cs_expand_total_bytes(cs_primitive p, uint64_t msg_bytes, int n);
uint32_t cs_expand_num_steps(cs_primitive p, int n);

#endif
