/* The DCIN engine behind cs_engine_ops, the top of the engine: creation from a job, driver ticks
 * <-> sim cycles, req/rsp injection per the adapter contract with exact step reuse around the
 * cycle model (reuse/), completions, and the per-transaction record.  Invariant: tick(c) = floor(c * tick_num / tick_den); a completion
 * found in cycle c is reported at tick(c) and advance() returns right after that cycle, so a
 * driver that injects the rsp at once reproduces the native flow's timing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/hash.h"
#include "reuse/reuse.h"

static uint64_t tick_of(const dcin_sim *s, uint64_t c) { return c * s->tick_num / s->tick_den; }

/* ---- cs_engine_ops ------------------------------------------------------------------------- */

typedef struct dcin_engine {
  dcin_sim *sim;
  uint64_t now_tick;
} dcin_engine;

dcin_sim *dcin_engine_sim(void *engine) { return ((dcin_engine *)engine)->sim; }

int cs_dcin_reuse_attach(void *engine, cs_dcin_reuse *ctx) {
  return dcin_reuse_attach(((dcin_engine *)engine)->sim, ctx);
}

static int op_create(const cs_job *job, void **engine, cs_err *err) {
  const cs_adapter_config *ad = &job->adapter;
  cs_die_params die;
  cs_layout lay;
  int rc = cs_topo_die(ad->topology, &die, err);
  if (rc) return cs_err_prefix(err, "dcin: topology");
  rc = cs_topo_layout(ad->dcin_layout, &lay, err);
  if (rc) return cs_err_prefix(err, "dcin: dcin_layout");
  if (lay.num_dies != ad->num_dies)
    return cs_err_set(err, CS_ECONSTRAINT, "dcin: num_dies %d but layout '%s' has %d dies",
                      ad->num_dies, lay.name, lay.num_dies);
  int endpoints = cs_scheme_endpoints(&die, lay.num_dies);
  if (ad->num_initiators != endpoints || ad->num_targets != endpoints)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "dcin: num_initiators %d / num_targets %d, scheme defines %d of each",
                      ad->num_initiators, ad->num_targets, endpoints);
  dcin_engine *e = calloc(1, sizeof *e);
  if (!e) return cs_err_set(err, CS_ENOMEM, "dcin engine");
  rc = dcin_sim_create(&die, &lay, ad, &e->sim, err);
  if (rc) {
    free(e);
    return cs_err_prefix(err, "dcin");
  }
  /* DDR latency variance draws from a generator seeded by the job (FNV-1a of what defines it) */
  uint64_t h = CS_FNV1A_BASIS;
  const char *parts[] = {ad->topology, ad->dcin_layout, job->spec.chip_spec_summary};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) h = cs_fnv1a_text(h, parts[i]);
  h = cs_fnv1a_word(h, job->spec.msg_size_bytes);
  for (int i = 0; i < job->spec.num_participants; i++)
    h = cs_fnv1a_word(h, (uint64_t)(uint32_t)job->spec.participants[i]);
  e->sim->rng = h ? h : 1;
  *engine = e;
  return 0;
}

/* A stale engine (dcin_reuse_stale) was asked to simulate. */
static int stale_error(cs_err *err) {
  return cs_err_set(err, CS_ERETRY, "dcin: a replayed chain of steps broke off before a quiet end");
}

/* A req (or a packet that is neither req nor rsp, refused): located, checked, and collected for
 * step reuse or injected at once. */
DCIN_INLINE int inject_req(dcin_sim *s, const cs_inject *in, cs_err *err) {
  if (in->packet_type != CS_PKT_REQ)
    return cs_err_set(err, CS_ECONSTRAINT, "C9: request %llu: packet type %d is not req/rsp",
                      (unsigned long long)in->request_id, in->packet_type);
  if (in->src_id < 0 || in->src_id >= s->num_endpoints || in->dst_id < 0 ||
      in->dst_id >= s->num_endpoints)
    return cs_err_set(err, CS_EINVAL, "request %llu: endpoint %d->%d outside 0..%d",
                      (unsigned long long)in->request_id, in->src_id, in->dst_id,
                      s->num_endpoints - 1);
  cs_endpoint src = cs_scheme_locate(&s->die_params, in->src_id);
  cs_endpoint dst = cs_scheme_locate(&s->die_params, in->dst_id);
  int ch = (int)(s->gdma_count[in->src_id] % 2);
  dcin_place p = {src.die, src.node, DCIN_IP_GDMA0 + ch, dst.die,
                  dst.node, DCIN_IP_DDR0 + ch, in->is_read, in->burst_length};
  /* endpoints in range are inside the chip (num_endpoints = dies x nodes), from GDMA to DDR */
  int rc = dcin_inject_check_request(s, in->request_id, &p, err);
  if (rc) return rc;
  /* an id waiting in the step being collected, or of the step being replayed, is taken too */
  if (s->ids_taken && in->request_id <= s->max_id_taken && dcin_reuse_has(s, in->request_id))
    return cs_err_set(err, CS_EINVAL, "request id %llu injected twice",
                      (unsigned long long)in->request_id);
  /* a step's requests arriving at a quiet network are collected, then replayed or simulated */
  if (!dcin_reuse_take(s, in->request_id, in->src_id, in->dst_id, &p)) {
    if ((rc = dcin_reuse_flush(s, err))) return rc;
    if (dcin_reuse_stale(s)) return stale_error(err);
    rc = dcin_inject_place(s, in->request_id, &p, err);
    if (rc < 0) return rc;
    s->txns[rc].src_id = in->src_id;
    s->txns[rc].dst_id = in->dst_id;
  } else {
    dcin_note_id_taken(s, in->request_id);
  }
  s->gdma_count[in->src_id]++;
  return 0;
}

static int op_inject(void *engine, const cs_inject *in, cs_err *err) {
  dcin_engine *e = engine;
  dcin_sim *s = e->sim;
  if (in->packet_type == CS_PKT_RSP) {
    bool replayed;
    int rc = dcin_reuse_flush(s, err);
    if (rc) return rc;
    rc = dcin_reuse_rsp(s, in->request_id, in->src_id, in->dst_id, &replayed, err);
    if (rc || replayed) return rc;
    uint32_t t = dcin_txn_find(s, in->request_id);
    if (t == DCIN_NIL)
      return cs_err_set(err, CS_EINVAL, "rsp for unknown request %llu",
                        (unsigned long long)in->request_id);
    const dcin_txn *x = &s->txns[t];
    if (in->src_id != x->dst_id || in->dst_id != x->src_id)
      return cs_err_set(
          err, CS_ECONSTRAINT, "C10: rsp of request %llu goes %d->%d, the req went %d->%d",
          (unsigned long long)in->request_id, in->src_id, in->dst_id, x->src_id, x->dst_id);
    rc = dcin_rsp(s, t, err);
    if (!rc) dcin_reuse_note_rsp(s, t);
    return rc;
  }
  return inject_req(s, in, err);
}

/* A step's reqs in one call: the per-request work without a call through the ops table each. */
static int op_inject_step(void *engine, const cs_inject *reqs, size_t n, size_t *injected,
                          cs_err *err) {
  dcin_sim *s = ((dcin_engine *)engine)->sim;
  for (size_t i = 0; i < n; i++) {
    int rc = inject_req(s, &reqs[i], err);
    if (rc) {
      *injected = i;
      return rc;
    }
  }
  *injected = n;
  return 0;
}

static int op_advance(void *engine, uint64_t max_ticks, cs_err *err) {
  dcin_engine *e = engine;
  dcin_sim *s = e->sim;
  int rc = dcin_reuse_flush(s, err);
  if (rc) return rc;
  if (s->comp_n) return 0;
  if (dcin_reuse_stale(s) && !dcin_reuse_playing(s)) return stale_error(err);
  uint64_t target, end = cs_engine_advance_end(e->now_tick, max_ticks, s->tick_num, s->tick_den,
                                               &target);
  if (dcin_reuse_playing(s)) { /* a replayed step: its completions at their recorded cycles */
    uint64_t c = dcin_reuse_next(s);
    if (c < end) {
      dcin_reuse_deliver(s, c);
      if (s->fault[0]) return cs_err_set(err, CS_EINTERNAL, "dcin: %s", s->fault);
      e->now_tick = tick_of(s, c);
      return 0;
    }
    if (s->cyc < end) s->cyc = end;
    e->now_tick = target;
    return 0;
  }
  while (s->cyc < end) {
    dcin_skip_idle(s, end);
    if (s->cyc >= end) break;
    dcin_cycle(s);
    if (s->fault[0]) return cs_err_set(err, CS_EINTERNAL, "dcin: %s", s->fault);
    if (s->comp_n) {
      e->now_tick = tick_of(s, s->cyc - 1);
      dcin_reuse_note_completions(s, s->cyc - 1);
      return 0;
    }
  }
  e->now_tick = target;
  return 0;
}

/* The collected step, injected from an op that cannot return its error: the failure is kept
 * as a fault, which the next advance reports. */
static void flush_keeping_fault(dcin_sim *s) {
  cs_err err;
  if (dcin_reuse_flush(s, &err) && !s->fault[0])
    snprintf(s->fault, sizeof s->fault, "%.200s", err.msg);
}

static size_t op_poll(void *engine, cs_completion *out, size_t cap) {
  dcin_sim *s = ((dcin_engine *)engine)->sim;
  flush_keeping_fault(s);
  size_t n = 0;
  while (n < cap && s->comp_n) {
    out[n++] = s->comp[s->comp_head];
    s->comp_head = (s->comp_head + 1) & (s->comp_cap - 1); /* a power of two */
    s->comp_n--;
  }
  return n;
}

static uint64_t op_now(const void *engine) { return ((const dcin_engine *)engine)->now_tick; }

void dcin_describe_txn(const dcin_sim *s, uint32_t t, cs_txn_record *rec);
void dcin_describe_txn(const dcin_sim *s, uint32_t t, cs_txn_record *rec) {
  dcin_describe_from(s, &s->txns[t], rec);
}

/* The record of a finished transaction is its last use by the driver: afterwards the engine
 * recycles its slot as soon as no flit, wait list or tracker release refers to it any more, so
 * memory follows the transactions in flight, not the job's size. */
static void op_describe(const void *engine, uint64_t id, cs_txn_record *rec) {
  dcin_sim *s = ((const dcin_engine *)engine)->sim;
  if (dcin_reuse_describe(s, id, rec)) return;
  uint32_t t = dcin_txn_find(s, id);
  if (t == DCIN_NIL) return;
  dcin_describe_txn(s, t, rec);
  dcin_reuse_note_describe(s, t);
  if (s->txns[t].done_final) {
    s->txns[t].described = 1;
    dcin_txn_try_free(s, t);
  }
}

/* A replayed step at once; the flush is the one the driver's next poll would make. */
static int op_finish_step(void *engine, const cs_engine_step *step, cs_txn_record *records,
                          bool *finished, cs_err *err) {
  dcin_engine *e = engine;
  *finished = false;
  flush_keeping_fault(e->sim);
  if (e->sim->fault[0] || !dcin_reuse_playing(e->sim) || step->now != e->now_tick) return CS_OK;
  return dcin_reuse_finish(e->sim, &e->now_tick, step, records, finished, err);
}

static void op_where(const void *engine, uint64_t id, char *buf, size_t cap) {
  dcin_sim *s = ((const dcin_engine *)engine)->sim;
  flush_keeping_fault(s);
  uint32_t t = dcin_txn_find(s, id);
  if (t == DCIN_NIL) {
    snprintf(buf, cap, "unknown request %llu", (unsigned long long)id);
    return;
  }
  const dcin_txn *x = &s->txns[t];
  const char *what;
  if (x->done_final)
    what = "complete";
  else if (x->gate == 1)
    what = "req phase done, waiting for the driver's rsp";
  else if (x->state == DCIN_TS_RETRIED)
    what = "refused (Retry), waiting for Pcredit";
  else if (x->t_reserve == DCIN_NO_CYCLE)
    what = "waiting in the GDMA inject FIFO for a tracker";
  else if (!x->done_req)
    what = "request in flight";
  else
    what = "data / completion in flight";
  /* a flit of it caught in a resource cycle: say so first (the report has little room) */
  char chain[1024];
  int cyc = x->done_final ? 0 : dcin_wait_chain(s, t, chain, sizeof chain);
  char lead[48] = "";
  if (cyc) snprintf(lead, sizeof lead, "in a wait-for cycle of %d flits; ", cyc);
  snprintf(buf, cap, "%s%s: %s die%d:node%d gdma_%d -> die%d:node%d ddr_%d%s", lead, what,
           x->is_read ? "read" : "write", x->src_die, x->src_node, x->src_ip - DCIN_IP_GDMA0,
           x->dst_die, x->dst_node, x->dst_ip - DCIN_IP_DDR0, x->cross ? " (cross-die)" : "");
  if (!x->done_final) dcin_locate(s, t, buf, cap);
}

static void op_stats(const void *engine, cs_engine_stats *out) {
  const dcin_sim *s = ((const dcin_engine *)engine)->sim;
  memset(out, 0, sizeof *out);
  out->sim_cycles = s->cyc;
  out->skipped_cycles = s->st.skipped_cycles;
  out->flit_hops = s->st.flit_hops;
  out->flits_injected = s->st.flits_injected;
  out->flits_ejected = s->st.flits_ejected;
  const uint64_t extra[] = {s->st.itag_h, s->st.itag_v, s->st.etag_t1, s->st.etag_t0};
  memcpy(out->extra, extra, sizeof extra);
}

/* In the order of op_stats' extra[]. */
static const cs_engine_column result_columns[] = {
    {"dcin_itag_h", NULL, "I-Tags placed on horizontal rings (an inject waited past its threshold)"},
    {"dcin_itag_v", NULL, "I-Tags placed on vertical rings"},
    {"dcin_etag_t1_ejects", "flit", "flits ejected holding E-Tag priority T1 (upgraded once)"},
    {"dcin_etag_t0_ejects", "flit", "flits ejected holding E-Tag priority T0 (upgraded twice)"},
    {NULL, NULL, NULL}};

/* C1 (the adapter's mode) and C2, C3 (the shipped chip files and the endpoint scheme). */
static int op_validate(const cs_job *job, cs_err *err) {
  if (strcmp(job->adapter.mode, "dcin") != 0)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C1: mode = \"%s\": the adapter runs only in mode \"dcin\"", job->adapter.mode);
  return cs_topo_check_adapter(&job->adapter, err);
}

/* Host microseconds, fitted to wall_time_s of the C2 study and of the full stress sweeps: the
 * larger of the work of the transactions and the work of the cycles they need.
 *
 * Work of the transactions: a simulated one costs about (1 + burst_length / 2) x (1 + 0.7 (dies
 * - 1)) us, a replayed one 0.2 us.  Exact step reuse (reuse.c) simulates two steps of a ring
 * algorithm and replays the others, but only from quiet boundaries: with more than 1024 write
 * trackers over the participants of a multi-die chip, cross-die write data is still in flight
 * when a step ends (the stress sweep's ring jobs above that bound replayed little or nothing;
 * below it, all but two steps), so those steps count as simulated.  Pairwise and direct steps are
 * each a flow pattern of their own, and the dimring algorithms change pattern with the
 * dimension: simulated too.
 *
 * Work of the cycles, for the latency-bound jobs (few trackers: a P2P read at outstanding 2 takes
 * 100-330 cycles per transaction): each flow keeps its outstanding transactions in flight, one
 * round trip of about 200 + 150 (dies - 1) + 2 burst_length sim cycles each, and such a sparse
 * cycle costs about 0.1 x dies us (dcin-stress-p2p: 0.085 us on 1 die, 0.18 on 2, 0.31-0.41 on
 * 4; round trips 156-234 cycles on 1 die, 290-650 on 2, 360-540 on 4). */
static double op_cost(const cs_job *job, uint64_t num_txns, uint32_t num_steps) {
  const cs_adapter_config *a = &job->adapter;
  const cs_spec *sp = &job->spec;
  bool quiet_ends = a->num_dies == 1 || sp->num_participants * a->mst_wr_outstanding <= 1024;
  double txns = (double)num_txns, per_step = num_steps ? txns / num_steps : txns;
  uint32_t simulated =
      sp->algorithm == CS_ALGO_RING && quiet_ends && num_steps > 2 ? 2 : num_steps;
  double sim_txns = num_steps ? per_step * simulated : txns;
  double us_per_txn = (1.0 + 0.5 * a->burst_length) * (1.0 + 0.7 * (a->num_dies - 1));
  double txn_work = us_per_txn * sim_txns + 0.2 * (txns - sim_txns);

  bool p2p = sp->primitive == CS_PRIM_P2P;
  int flows = p2p || sp->num_participants < 1 ? 1 : sp->num_participants;
  int outstanding =
      p2p && sp->p2p_op == CS_P2P_READ ? a->mst_rd_outstanding : a->mst_wr_outstanding;
  double rounds = ceil(sim_txns / flows / (outstanding > 0 ? outstanding : 1));
  double round_trip = 200.0 + 150.0 * (a->num_dies - 1) + 2.0 * a->burst_length;
  double cycle_work = rounds * round_trip * 0.1 * a->num_dies;
  return 50.0 + 4.0 * num_steps + (txn_work > cycle_work ? txn_work : cycle_work);
}

/* Steps one job records and another replays (reuse.c) need the same chip and resources and the
 * same injects: the adapter fields the engine and the expansion read, the message size and the
 * participants.  The primitive is left out: a ring AllReduce, AllGather and ReduceScatter of a
 * size run the same steps, and a pairwise all-to-all's first step is theirs. */
static uint64_t op_share_group(const cs_job *job) {
  const cs_adapter_config *a = &job->adapter;
  const cs_spec *sp = &job->spec;
  cs_sha256 h;
  cs_sha256_init(&h);
  const char *names[] = {a->topology, a->dcin_layout, a->endpoint_id_scheme};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    cs_sha256_update(&h, names[i], strlen(names[i]) + 1);
  const int ints[] = {a->num_dies,           a->num_initiators,     a->num_targets,
                      a->mst_rd_outstanding, a->mst_wr_outstanding, a->slv_rd_outstanding,
                      a->slv_wr_outstanding, a->burst_length,       a->bw_bytes,
                      sp->num_participants};
  const double clocks[] = {a->driver_cycle_frequency_ghz, a->ip_frequency_ghz,
                           a->noc_frequency_ghz};
  const uint64_t size = sp->msg_size_bytes;
  cs_sha256_update(&h, ints, sizeof ints);
  cs_sha256_update(&h, clocks, sizeof clocks);
  cs_sha256_update(&h, &size, sizeof size);
  cs_sha256_update(&h, sp->participants, sizeof sp->participants[0] * (size_t)sp->num_participants);
  uint8_t digest[32];
  cs_sha256_final(&h, digest);
  uint64_t group;
  memcpy(&group, digest, sizeof group);
  return group ? group : 1;
}

static void op_destroy(void *engine) {
  if (!engine) return;
  dcin_reuse_free(((dcin_engine *)engine)->sim);
  dcin_sim_destroy(((dcin_engine *)engine)->sim);
  free(engine);
}

static void *op_shared_new(void) { return cs_dcin_reuse_new(); }
static void op_shared_free(void *shared) { cs_dcin_reuse_free(shared); }
static int op_shared_attach(void *engine, void *shared, cs_err *err) {
  if (cs_dcin_reuse_attach(engine, shared))
    return cs_err_set(err, CS_EINTERNAL, "dcin: reuse context attached after the first inject");
  return CS_OK;
}

const cs_engine_ops cs_dcin_ops = {
    .name = "dcin",
    .summary = "cycle-level CrossRing model: KCIN ring NoC per die plus D2D AXI links",
    .model_version = "2",
    .options = NULL,
    .options_size = 0,
    .options_doc = "no options: the chip comes from the adapter's topology and dcin_layout",
    .validate = op_validate,
    .cost = op_cost,
    .share_group = op_share_group,
    .result_columns = result_columns,
    .shared_new = op_shared_new,
    .shared_free = op_shared_free,
    .shared_attach = op_shared_attach,
    .create = op_create,
    .inject = op_inject,
    .inject_step = op_inject_step,
    .advance = op_advance,
    .poll = op_poll,
    .now = op_now,
    .describe = op_describe,
    .finish_step = op_finish_step,
    .where = op_where,
    .stats = op_stats,
    .destroy = op_destroy,
};
