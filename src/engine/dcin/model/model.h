/* The DCIN cycle model's face to the layers above it (the engine ops and step reuse) and to the
 * tests: building a simulator, placing requests, releasing their gates, stepping cycles, the
 * invariant checker and the stop reports, and the record fields a transaction fills.
 * The model never calls the layers above it.
 */
#ifndef CS_DCIN_MODEL_H
#define CS_DCIN_MODEL_H

#include "pool.h"

/* Builds an engine straight from parameters, without a cs_job (calibration tests). */
int dcin_sim_create(const cs_die_params *die, const cs_layout *layout, const cs_adapter_config *ad,
                    dcin_sim **out, cs_err *err);
void dcin_sim_destroy(dcin_sim *s);
/* Releases the gate of a transaction (the driver's rsp). */
int dcin_rsp(dcin_sim *s, uint32_t t, cs_err *err);
/* Simulates one sim cycle. */
void dcin_cycle(dcin_sim *s);
/* Runs until every injected transaction is final or max cycles pass, injecting each rsp in the
 * cycle its req phase completes (the native flow); returns cycles run. */
uint64_t dcin_run_native(dcin_sim *s, uint64_t max_cycles);
/* Next cycle at which something timed becomes due, or DCIN_NO_CYCLE. */
uint64_t dcin_next_event(const dcin_sim *s);
/* Checks conservation and queue invariants; 0 or CS_EINTERNAL with a message. */
int dcin_check(const dcin_sim *s, cs_err *err);
/* Stop reports (waitfor.c): the wait-for chain of transaction t's first held flit, one line per
 * link ("X waits for Y"), and the first resource cycle among all held flits; both return the
 * cycle's length in flits, 0 when the chain ends at something that is not a flit. */
int dcin_wait_chain(const dcin_sim *s, uint32_t t, char *buf, size_t cap);
int dcin_find_cycle(const dcin_sim *s, char *buf, size_t cap);
/* Appends to buf (NUL-terminated) every place holding the transaction's flits. */
void dcin_locate(const dcin_sim *s, uint32_t t, char *buf, size_t cap);


/* Checks an injection at an explicit physical place without making it (the errors of
 * dcin_inject_phys). */
int dcin_inject_check(const dcin_sim *s, uint64_t request_id, const dcin_place *p, cs_err *err);
/* Injects a request at an explicit physical place; returns the txn index or negative error. */
int dcin_inject_phys(dcin_sim *s, uint64_t request_id, const dcin_place *p, cs_err *err);
/* The same for a place dcin_inject_check has accepted, with no injection since. */
int dcin_inject_place(dcin_sim *s, uint64_t request_id, const dcin_place *p, cs_err *err);
/* The checks of dcin_inject_check for a place made from endpoints (a GDMA and a DDR inside the
 * chip): burst, buffers, link, and the id not in use by a transaction. */
int dcin_inject_check_request(const dcin_sim *s, uint64_t request_id, const dcin_place *p,
                              cs_err *err);
/* A request id is in use from now on (injected, or collected for step reuse). */
void dcin_note_id_taken(dcin_sim *s, uint64_t id);
/* Jumps the clock over cycles where nothing can move, up to (not past) limit. */
void dcin_skip_idle(dcin_sim *s, uint64_t limit);

/* The record fields the engine owns, in three parts, each from its sources: a simulated
 * transaction (dcin_describe_from) and a replayed one (reuse.c) keep them differently. */
/* Where it ran: its places, and the D2D link (index into layout.links) of a cross-die one. */
static inline void dcin_describe_place(const dcin_sim *s, int src_die, int src_node, int src_ip,
                                       int dst_die, int dst_node, int dst_ip, bool is_read,
                                       int burst, bool cross, int link, int link_dir,
                                       cs_txn_record *rec) {
  rec->src_die = (int16_t)src_die;
  rec->dst_die = (int16_t)dst_die;
  rec->src_node = (int16_t)src_node;
  rec->dst_node = (int16_t)dst_node;
  rec->src_channel = (int16_t)(src_ip - DCIN_IP_GDMA0);
  rec->dst_channel = (int16_t)(dst_ip - DCIN_IP_DDR0);
  rec->d2d_src_node = rec->d2d_dst_node = -1;
  if (cross) {
    const cs_d2d_link *l = &s->layout.links[link];
    rec->d2d_src_node = (int16_t)(link_dir == 0 ? l->node_a : l->node_b);
    rec->d2d_dst_node = (int16_t)(link_dir == 0 ? l->node_b : l->node_a);
  }
  rec->is_read = is_read;
  rec->burst_length = (uint16_t)burst;
}

/* Its back-pressure counters: dcin_txn.retries .. eject_fail, record.retry_count ..
 * eject_retries, the same twelve uint32_t in the same order. */
#define DCIN_COUNTERS 12
_Static_assert(offsetof(dcin_txn, eject_fail) - offsetof(dcin_txn, retries) ==
                   (DCIN_COUNTERS - 1) * sizeof(uint32_t),
               "dcin_txn: retries, ten block counters and eject_fail must be adjacent");
_Static_assert(offsetof(cs_txn_record, eject_retries) - offsetof(cs_txn_record, retry_count) ==
                   (DCIN_COUNTERS - 1) * sizeof(uint32_t),
               "cs_txn_record: retry_count, ten block counters and eject_retries must be adjacent");
static inline void dcin_describe_counters(const uint32_t *counters, cs_txn_record *rec) {
  memcpy(&rec->retry_count, counters, DCIN_COUNTERS * sizeof(uint32_t));
}

/* Record cycles are NoC cycles (model.h): sim cycles / NETWORK_SCALE; 0 = not reached. */
static inline uint64_t dcin_noc_cycle(const dcin_sim *s, uint64_t v) {
  return v == DCIN_NO_CYCLE ? 0 : v / (uint64_t)s->cfg.net_scale;
}

/* The stamp of the record's wdata_complete_cycle: the write data at its target (the D2D for a
 * cross-die write); DCIN_NO_CYCLE for a read. */
static inline uint64_t dcin_txn_wdata_done(const dcin_txn *x) {
  return x->is_read ? DCIN_NO_CYCLE : x->cross ? x->t_wdata_d2d : x->t_data_done;
}

/* The record fields the engine owns, from a simulated transaction. */
static inline void dcin_describe_from(const dcin_sim *s, const dcin_txn *x, cs_txn_record *rec) {
  dcin_describe_place(s, x->src_die, x->src_node, x->src_ip, x->dst_die, x->dst_node, x->dst_ip,
                      x->is_read, x->burst, x->cross, x->link, x->link_dir, rec);
  dcin_describe_counters(&x->retries, rec);
  rec->req_inject_cycle = dcin_noc_cycle(s, x->t_inject);
  rec->wdata_gen_cycle = dcin_noc_cycle(s, x->t_wdata_gen);
  rec->req_complete_cycle = dcin_noc_cycle(s, x->t_req_done);
  rec->rsp_inject_cycle = dcin_noc_cycle(s, x->t_rsp_inject);
  rec->wdata_complete_cycle = dcin_noc_cycle(s, dcin_txn_wdata_done(x));
  rec->rsp_complete_cycle = dcin_noc_cycle(s, x->t_final);
}

/* config.c */
int dcin_cfg_build(const cs_die_params *die, const cs_adapter_config *ad, dcin_cfg *c, cs_err *err);
int dcin_lcfg_build(const cs_layout *l, const dcin_cfg *c, dcin_lcfg *lc, cs_err *err);
uint32_t dcin_ns_to_cycles(const dcin_cfg *c, double ns);
/* round(cycles / CYCLES_PER_NS) with half to even, as the reported ns */
double dcin_cycles_to_ns(const dcin_cfg *c, uint64_t cycles);

#endif
