/* The transaction layer of the vcnet engine (txn.c): adapter-contract transactions on a
 * vcn_net, completions in driver ticks.  Shared by the ops glue and the tests.
 *
 * State exists only for transactions in flight: a transaction gets a slot (a vcn_txn) when its
 * request is issued, and gives it back once described after its final completion.  Requests
 * waiting for a master tracker are runs of consecutive ids (a flow's rest, vcn_run), made into
 * transactions one at a time as trackers free up. */
#ifndef CS_VCNET_TXN_H
#define CS_VCNET_TXN_H

#include "commsweep/engine.h"
#include "commsweep/idmap.h"
#include "vcnet_int.h"

typedef struct vcn_queue {
  uint32_t head, tail; /* slot (or run) indices, VCN_NIL when empty */
} vcn_queue;

typedef struct vcn_ep {
  int mst_rd_used, mst_wr_used; /* master trackers held */
  int slv_rd_used, slv_wr_used; /* slave trackers held */
  uint64_t issued;              /* requests injected so far as a master (channel rule) */
  vcn_queue mst_rd_wait, mst_wr_wait; /* runs of requests waiting for a master tracker */
  vcn_queue slv_rd_wait, slv_wr_wait; /* transactions arrived, waiting for a slave tracker */
} vcn_ep;

/* Requests of one flow waiting for their master's tracker: ids first + k .. first + n - 1. */
typedef struct vcn_run {
  uint64_t first;        /* request id of the flow's transaction 0 */
  uint64_t k, n;         /* the next to start, and the flow's transactions */
  uint64_t issued_base;  /* the master's request count before the flow (channel rule) */
  uint64_t inject_cycle; /* network cycle the flow was injected at */
  uint64_t flits;        /* adapter flits of the flow (the last transaction carries the rest) */
  int32_t src_ep, dst_ep;
  uint32_t next;         /* queue / free-list link */
  uint16_t burst;        /* adapter flits of every transaction but the last */
  uint8_t is_read;
} vcn_run;

typedef struct vcn_txn {
  uint64_t id;            /* request id */
  int32_t src_ep, dst_ep; /* master (GDMA) and target (DDR) endpoints */
  uint32_t next;          /* link in a wait queue or the free list */
  uint16_t burst;         /* adapter flits */
  uint16_t flits;         /* network flits of the data burst */
  uint8_t is_read;
  uint8_t state;
  uint8_t channel;        /* cs_scheme_channel of the request */
  int16_t req_vc, rsp_vc; /* VCs the packets' heads took at their injection ports */
  uint32_t req_hops, rsp_hops; /* router-to-router links the packets' heads crossed */
  uint32_t mst_blocks, slv_blocks; /* 1 when it had to wait for a tracker */
  uint64_t req_inject_cycle, wdata_gen_cycle, wdata_done_cycle, req_complete_cycle;
  uint64_t rsp_inject_cycle, rsp_complete_cycle;
} vcn_txn;

/* How a request id finds its slot.  The driver answers the completions of a poll in the order
 * it returned them (the rsp inject after a req phase, describe() after the final one), so each
 * lookup first tries the slot of the next of them; only a lookup out of that order turns to the
 * map, which is built from the live slots then and kept from that moment on: at pod scale every
 * map operation is a cache miss, and in a sweep none is needed.  Apart from the engine because
 * describe() and where(), which take the engine const, move the cursor and may build the map. */
typedef struct vcn_lookup {
  uint32_t *polled;     /* slots of the last poll's completions, in its order (retire_cap) */
  size_t polled_n, polled_at; /* and the next the driver answers */
  cs_idmap by_id;       /* request id -> slot, while `kept` */
  bool kept;
} vcn_lookup;

/* A completion not yet polled, with the slot of its transaction. */
typedef struct vcn_completion {
  cs_completion c;
  uint32_t slot;
} vcn_completion;

typedef struct vcn_engine {
  vcn_net *net;
  vcn_ep *eps;
  vcn_txn *txns;  /* slots of the transactions in flight */
  uint32_t txn_cap, txn_free;
  vcn_lookup *look; /* request id -> slot */
  vcn_run *runs;  /* runs waiting for trackers */
  uint32_t run_cap, run_free;
  int mst_rd, mst_wr, slv_rd, slv_wr; /* trackers per endpoint */
  int bw_bytes;                       /* adapter bytes per flit */
  uint64_t tick_num, tick_den;        /* tick(c) = floor(c tick_num / tick_den) */
  uint64_t now_tick;
  uint64_t mst_blocks, slv_blocks; /* requests that waited for a tracker, whole job */
  vcn_completion *comp; /* ring of completions not yet polled */
  size_t comp_head, comp_n, comp_cap;
  uint32_t *retire;    /* slots whose final completion was polled: freed at the next call */
  size_t retire_n, retire_cap;
  char fault[128];
} vcn_engine;

int vcn_engine_create(const cs_adapter_config *ad, const vcn_params *p, vcn_engine **out,
                      cs_err *err);
void vcn_engine_destroy(vcn_engine *e);
int vcn_engine_inject(vcn_engine *e, const cs_inject *in, cs_err *err);
int vcn_engine_inject_flows(vcn_engine *e, const cs_flow *flows, size_t n, cs_err *err);
int vcn_engine_advance(vcn_engine *e, uint64_t max_ticks, cs_err *err);
size_t vcn_engine_poll(vcn_engine *e, cs_completion *out, size_t cap);
/* Fills the record of a request in flight (one whose final completion was polled stays until
 * the next poll or advance). */
void vcn_engine_describe(const vcn_engine *e, uint64_t id, cs_txn_record *rec);
void vcn_engine_where(const vcn_engine *e, uint64_t id, char *buf, size_t cap);
/* Bytes an engine of these options holds with `inflight` transactions in flight at most and
 * `runs` flows waiting. */
uint64_t vcn_engine_bytes(const vcn_params *p, uint64_t inflight, uint64_t runs);

#endif
