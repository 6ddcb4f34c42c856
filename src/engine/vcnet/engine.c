/* The vcnet engine behind cs_engine_ops: the job's network options become a vcn_engine
 * (txn.c), and the ops forward to it.  Invariant (as dcin): tick(c) = floor(c * tick_num /
 * tick_den); a completion found in cycle c is reported at tick(c) and advance() returns right
 * after that cycle. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_tools.h"
#include "commsweep/fields.h"
#include "commsweep/vcnet.h"
#include "vcnet_int.h"
#include "vcnet_txn.h"

/* Logical ids name endpoints: every id the adapter declares must have one, and so must every
 * participant. */
static int op_validate(const cs_job *job, cs_err *err) {
  vcn_params p;
  int rc = vcn_job_params(job, &p, err);
  if (rc) return rc;
  vcn_topo t; /* left unset on failure: check before reading it */
  if ((rc = vcn_params_validate(&p, &t, err))) return rc;
  const cs_adapter_config *ad = &job->adapter;
  if (ad->num_initiators > t.endpoints || ad->num_targets > t.endpoints)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "vcnet: num_initiators = %d, num_targets = %d: %s with %d endpoint(s) per "
                      "router has %d endpoints (logical GDMA and DDR id i is endpoint i): both "
                      "must be at most %d (set them to %d, or choose a network with at least %d "
                      "endpoints)",
                      ad->num_initiators, ad->num_targets, p.topology, t.epr, t.endpoints,
                      t.endpoints, t.endpoints,
                      ad->num_initiators > ad->num_targets ? ad->num_initiators : ad->num_targets);
  int32_t top = cs_spec_max_participant(&job->spec);
  if (top >= t.endpoints)
    return cs_err_set(err, CS_ECONSTRAINT, "vcnet: participant %d has no endpoint on %s (%d endpoints)",
                      (int)top, p.topology, t.endpoints);
  /* fat tree: a participant on a faulty leaf fails this job alone, before it runs */
  for (int i = 0; i < job->spec.num_participants && t.fattree; i++) {
    int32_t id = cs_spec_participant(&job->spec, i);
    int leaf = id / t.epr;
    if (!vtf_dead(&t.ft, leaf)) continue;
    char name[16];
    vtf_node_name(&t.ft, leaf, name, sizeof name);
    return cs_err_set(err, CS_ECONSTRAINT, "vcnet: participant %d sits on faulty leaf %s of %s (faults \"%s\"%s)",
                      (int)id, name, p.topology, p.faults,
                      p.fault_count ? " and random ones" : "");
  }
  return CS_OK;
}

/* Host microseconds: about 0.1 per flit of a transaction plus four of header and tail, measured
 * (median wall_time_s per transaction) at 0.79 us for burst 4 (the demo), 2.2 us for burst 32
 * (torus-study) and 3.2 us for burst 16 (vtftr-faults); latency-bound jobs (one pair, as in
 * torus-study-p2p: 11.5 us) cost more per transaction. */
static double op_cost(const cs_job *job, uint64_t num_txns, uint32_t num_steps) {
  double per_txn = 0.1 * (double)(job->adapter.burst_length + 4);
  return per_txn * ((double)num_txns + 16.0) + 4.0 * num_steps;
}

/* The fault set is part of the network: two fat trees with other faults are other designs. */
static void op_network(const cs_job *job, char *buf, size_t cap) {
  vcn_params p;
  cs_err err;
  if (vcn_job_params(job, &p, &err) != CS_OK) {
    snprintf(buf, cap, "an invalid vcnet network");
    return;
  }
  int n = snprintf(buf, cap, "%s (%s)", p.topology, p.routing);
  size_t used = n < 0 ? 0 : (size_t)n;
  if (p.faults[0] && used < cap) used += (size_t)snprintf(buf + used, cap - used, " faults %s", p.faults);
  if (p.fault_count && used < cap)
    snprintf(buf + used, cap - used, "%s%d random (seed %llu)", p.faults[0] ? " + " : " faults ",
             p.fault_count, (unsigned long long)p.fault_seed);
}

static int op_create(const cs_job *job, void **engine, cs_err *err) {
  vcn_params p;
  int rc = vcn_job_params(job, &p, err);
  if (rc) return rc;
  vcn_engine *e;
  if ((rc = vcn_engine_create(&job->adapter, &p, &e, err))) return rc;
  *engine = e;
  return CS_OK;
}

static int op_inject(void *engine, const cs_inject *in, cs_err *err) {
  return vcn_engine_inject(engine, in, err);
}

static int op_inject_flows(void *engine, const cs_flow *flows, size_t n, cs_err *err) {
  return vcn_engine_inject_flows(engine, flows, n, err);
}

/* The network, and the transactions the trackers let be in flight at once. */
static uint64_t op_memory(const cs_job *job, uint64_t widest_step) {
  vcn_params p;
  cs_err err;
  if (vcn_job_params(job, &p, &err)) return 0;
  const cs_adapter_config *ad = &job->adapter;
  uint64_t trackers = (uint64_t)job->spec.num_participants *
                      (uint64_t)(ad->mst_rd_outstanding + ad->mst_wr_outstanding);
  uint64_t inflight = trackers < widest_step ? trackers : widest_step;
  return vcn_engine_bytes(&p, inflight, (uint64_t)job->spec.num_participants);
}

static int op_advance(void *engine, uint64_t max_ticks, cs_err *err) {
  return vcn_engine_advance(engine, max_ticks, err);
}

static size_t op_poll(void *engine, cs_completion *out, size_t cap) {
  return vcn_engine_poll(engine, out, cap);
}

static uint64_t op_now(const void *engine) { return ((const vcn_engine *)engine)->now_tick; }

static void op_describe(const void *engine, uint64_t id, cs_txn_record *rec) {
  vcn_engine_describe(engine, id, rec);
}

static void op_where(const void *engine, uint64_t id, char *buf, size_t cap) {
  vcn_engine_where(engine, id, buf, cap);
}

static void op_stats(const void *engine, cs_engine_stats *out) {
  const vcn_stats *s = &((const vcn_engine *)engine)->net->st;
  memset(out, 0, sizeof *out);
  out->sim_cycles = s->cycles;
  out->skipped_cycles = s->skipped_cycles;
  out->flit_hops = s->flit_hops;
  out->flits_injected = s->flits_injected;
  out->flits_ejected = s->flits_ejected;
  const vcn_engine *v = engine;
  out->extra[0] = s->packets_ejected;
  out->extra[1] = s->skipped_cycles;
  out->extra[2] = v->mst_blocks;
  out->extra[3] = v->slv_blocks;
}

/* In the order of op_stats' extra[]. */
static const cs_engine_column result_columns[] = {
    {"vcnet_packets", NULL, "packets delivered (requests, write data, responses, read data)"},
    {"vcnet_skipped_cycles", "cycle", "cycles the clock jumped because nothing could move"},
    {"vcnet_master_waits", NULL, "requests that waited for a master tracker"},
    {"vcnet_slave_waits", NULL, "requests that waited at their target for a slave tracker"},
    {NULL, NULL, NULL}};

/* In the order vcn_engine_describe writes them into the record. */
static const cs_engine_column record_columns[] = {
    {"vcnet_src_port", NULL, "router port of the GDMA endpoint (links first, then endpoints)"},
    {"vcnet_dst_port", NULL, "router port of the DDR endpoint"},
    {"vcnet_req_vc", NULL, "VC the request's head took at the GDMA's injection port"},
    {"vcnet_rsp_vc", NULL, "VC the response's head took at the DDR's injection port"},
    {"vcnet_req_hops", "hop", "router-to-router links the request crossed"},
    {"vcnet_rsp_hops", "hop", "router-to-router links the response crossed"},
    {NULL, NULL, NULL}};

/* In the order op_design writes them. */
static const cs_engine_column design_columns[] = {
    {"vcnet_num_vcs", NULL, "virtual channels per port"},
    {"vcnet_vc_depth", "flit", "flits per VC buffer"},
    {"vcnet_port_buffer_flits", "flit", "flits of buffer per router input port: num_vcs x vc_depth"},
    {NULL, NULL, NULL}};

static void op_design(const cs_job *job, double *out) {
  vcn_params p;
  cs_err err;
  bool ok = vcn_job_params(job, &p, &err) == CS_OK;
  out[0] = ok ? p.num_vcs : NAN; /* an invalid job has no done row to price */
  out[1] = ok ? p.vc_depth : NAN;
  out[2] = ok ? (double)p.num_vcs * p.vc_depth : NAN;
}

static void op_destroy(void *engine) { vcn_engine_destroy(engine); }

const cs_engine_ops cs_vcnet_ops = {
    .name = "vcnet",
    .summary = "cycle-level VC router network, mesh/torus with DOR (docs/vcnet.md)",
    .model_version = "2",
    .options = vcn_option_fields,
    .options_size = sizeof(vcn_params),
    .options_doc = vcn_options_doc,
    .validate = op_validate,
    .cost = op_cost,
    .memory = op_memory,
    .network = op_network,
    .result_columns = result_columns,
    .record_columns = record_columns,
    .design_columns = design_columns,
    .design = op_design,
    .create = op_create,
    .inject = op_inject,
    .inject_flows = op_inject_flows,
    .advance = op_advance,
    .poll = op_poll,
    .now = op_now,
    .describe = op_describe,
    .where = op_where,
    .stats = op_stats,
    .destroy = op_destroy,
    .tools = vcn_cli_tools,
};
