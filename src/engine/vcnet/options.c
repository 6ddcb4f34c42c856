/* The vcnet engine's options: one cs_field table drives strict loading (from the engine's
 * object in a job, or from netbench's JSON), --help and the cache key; the documented defaults
 * apply when a job gives no options object. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commsweep/fields.h"
#include "commsweep/model.h"
#include "commsweep/vcnet.h"
#include "vcnet_int.h"

#define S(m) offsetof(vcn_params, m), sizeof(((vcn_params *)0)->m)
#define N(m) offsetof(vcn_params, m), 0
const cs_field vcn_option_fields[] = {
    {"topology", CS_F_STRING, S(topology), 0, 0, "\"torus:4x4x4\", \"mesh:8x8\": kind and radix per dimension, dimension 0 first; \"fattree2d:16x16\": rows x columns of leaf switches (docs/vtftr.md)", 0},
    {"routing", CS_F_STRING, S(routing), 0, 0, "dor | dor_dateline | dor_dateline_segment; fattree2d: vtftr | vtftr_novc | alg_a | xy", 0},
    {"endpoints_per_router", CS_F_INT, N(endpoints_per_router), 1, VCN_MAX_EPR, "endpoints attached to each router", 0},
    {"num_vcs", CS_F_INT, N(num_vcs), 1, VCN_MAX_VCS, "virtual channels per port", 0},
    {"vc_depth", CS_F_INT, N(vc_depth), 1, 4096, "flits per VC buffer", 0},
    {"rc_delay", CS_F_INT, N(rc_delay), 0, 64, "route computation, cycles", 0},
    {"va_delay", CS_F_INT, N(va_delay), 0, 64, "VC allocation, cycles", 0},
    {"sa_delay", CS_F_INT, N(sa_delay), 0, 64, "switch allocation, cycles", 0},
    {"st_delay", CS_F_INT, N(st_delay), 0, 64, "switch traversal, cycles", 0},
    {"link_latency", CS_F_INT, N(link_latency), 1, 1024, "router-to-router link and credit latency, cycles", 0},
    {"flit_bytes", CS_F_INT, N(flit_bytes), 1, 65536, "bytes per network flit", 0},
    {"frequency_ghz", CS_F_DOUBLE, N(frequency_ghz), 1e-6, 1e3, "network clock, GHz", 0},
    {"faults", CS_F_STRING, S(faults), 0, 0, "fattree2d: faulty leaves \"r,c;r,c\" (\"!r,c\": failed after the tables were built); default none", CS_FIELD_OPTIONAL},
    {"fault_count", CS_F_INT, N(fault_count), 0, VTF_MAX_LEAVES, "fattree2d: random known faulty leaves added to 'faults'; default 0", CS_FIELD_OPTIONAL},
    {"fault_seed", CS_F_U64, N(fault_seed), 0, 1e15, "fattree2d: seed of the random faults; default 0", CS_FIELD_OPTIONAL},
    {NULL, 0, 0, 0, 0, 0, NULL, 0}};
#undef S
#undef N

_Static_assert(sizeof(vcn_params) <= CS_ENGINE_PARAMS_MAX, "vcnet options exceed the job's slot");

const char vcn_options_doc[] =
    "absent: torus:4x4x4, dor_dateline, 1 endpoint per router, 2 VCs of 8 flits, every stage 1 "
    "cycle, 1-cycle links, 32-byte flits, 1 GHz";

void vcn_params_default(vcn_params *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->topology, sizeof p->topology, "torus:4x4x4");
  snprintf(p->routing, sizeof p->routing, "dor_dateline");
  p->endpoints_per_router = 1;
  p->num_vcs = 2;
  p->vc_depth = 8;
  p->rc_delay = p->va_delay = p->sa_delay = p->st_delay = 1;
  p->link_latency = 1;
  p->flit_bytes = 32;
  p->frequency_ghz = 1.0;
}

int vcn_params_validate(const vcn_params *p, vcn_topo *topo, cs_err *err) {
  vcn_topo t;
  int rc = vcn_topo_parse(p->topology, p->endpoints_per_router, &t, err);
  if (!rc) rc = vcn_topo_faults(&t, p, err);
  const vcn_routing *r = rc ? NULL : vcn_routing_find(p->routing, &t, p->num_vcs, err);
  if (!rc && !r) rc = CS_EINVAL;
  if (!rc && t.fattree) vtf_algo_parse(r->name, &t.ft.algo, NULL);
  if (!rc) rc = vcn_params_check(p, err);
  if (!rc && topo) *topo = t;
  return rc;
}

int vcn_params_from_json(const void *json, const char *source, vcn_params *out, cs_err *err) {
  vcn_params p;
  memset(&p, 0, sizeof p);
  int rc = cs_fields_load(vcn_option_fields, json, source, NULL, NULL, &p, err);
  if (!rc && (rc = vcn_params_validate(&p, NULL, err))) cs_err_prefix(err, "%s", source);
  if (!rc) *out = p;
  return rc;
}

int vcn_job_params(const cs_job *job, vcn_params *p, cs_err *err) {
  if (job->engine.has_options) memcpy(p, job->engine.params.bytes, sizeof *p);
  else vcn_params_default(p);
  int rc = vcn_params_validate(p, NULL, err);
  return rc ? cs_err_prefix(err, "engine option 'vcnet'") : CS_OK;
}
