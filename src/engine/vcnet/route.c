/* Dimension-order routing on mesh and torus, and the registry of routing functions.
 *
 * DOR corrects dimension 0 first, then 1, then 2.  On a torus each dimension goes the shorter
 * way by the seed's rule: +1 when (d - s + N) mod N <= N/2, so a tie at N/2 goes +1.  With the
 * dateline a packet uses VC class 0 in a dimension until it crosses that dimension's wrap-around
 * link (the link between coordinate N-1 and 0, either direction); that hop and the rest of the
 * dimension use class 1, and the class resets to 0 when the packet turns into the next one. */
#include <stdio.h>
#include <string.h>

#include "vcnet_int.h"

int vcn_torus_direction(int s, int d, int n) { return (d - s + n) % n <= n / 2 ? 1 : -1; }

static void dor(const vcn_topo *t, int router, int dst_router, int dst_ep, vcn_route_state *st,
                int *out_port, int *out_cls, int dateline) {
  /* the first dimension whose coordinate differs; coordinates peeled off dimension 0 first */
  int c = router, e = dst_router, d = 0, cur = 0, dst = 0;
  for (; d < t->ndims; d++) {
    int k = t->radix[d];
    cur = c % k, dst = e % k;
    if (cur != dst) break;
    c /= k, e /= k;
  }
  if (d == t->ndims) {
    *out_port = 2 * t->ndims + dst_ep;
    *out_cls = 0;
    return;
  }
  vcn_dor_hop(t, d, cur, dst, dateline, st, out_port, out_cls);
}

static void route_dor(const vcn_topo *t, int r, int dr, int de, vcn_route_state *st, int *op,
                      int *oc) {
  dor(t, r, dr, de, st, op, oc, VCN_DOR_PLAIN);
}

static void route_dor_dateline(const vcn_topo *t, int r, int dr, int de, vcn_route_state *st,
                               int *op, int *oc) {
  dor(t, r, dr, de, st, op, oc, VCN_DOR_DATELINE);
}

static void route_dor_dateline_segment(const vcn_topo *t, int r, int dr, int de,
                                       vcn_route_state *st, int *op, int *oc) {
  dor(t, r, dr, de, st, op, oc, VCN_DOR_SEGMENT);
}

void vcn_route_fattree(const vcn_topo *t, int router, int dst_router, int dst_ep,
                       vcn_route_state *st, int *out_port, int *out_cls);

static const vcn_routing routings[] = {
    {"dor", route_dor, 1, false, false,
     "dimension order, shorter way on a torus, any VC (deadlock-free on a mesh only)", VCN_DOR_PLAIN},
    {"dor_dateline", route_dor_dateline, 2, true, false,
     "dimension order on a torus with dateline VC classes (VCs split in two classes)", VCN_DOR_DATELINE},
    {"dor_dateline_segment", route_dor_dateline_segment, 2, true, false,
     "as dor_dateline, but a packet whose route wraps in a dimension takes class 1 for the whole "
     "dimension (BookSim's dim_order_torus)", VCN_DOR_SEGMENT},
    {"vtftr", vcn_route_fattree, 2, false, true,
     "fattree2d: XY, yx around a faulty intermediate leaf, misroutes through candidate columns/rows; "
     "class 1 after the column->row turn (docs/vtftr.md)", VCN_DOR_NONE},
    {"vtftr_novc", vcn_route_fattree, 1, false, true,
     "fattree2d: the VTFTR routes in one class (not deadlock-free; for comparison)", VCN_DOR_NONE},
    {"alg_a", vcn_route_fattree, 1, false, true,
     "fattree2d: XY, fixed four-link detour around a faulty intermediate leaf (the paper's algorithm A)", VCN_DOR_NONE},
    {"xy", vcn_route_fattree, 1, false, true, "fattree2d: XY only (row switch first)", VCN_DOR_NONE},
    {NULL, NULL, 0, false, false, NULL, VCN_DOR_NONE}};

const vcn_routing *vcn_routing_list(void) { return routings; }

const vcn_routing *vcn_routing_find(const char *name, const vcn_topo *t, int num_vcs, cs_err *err) {
  for (const vcn_routing *r = routings; r->name; r++) {
    if (strcmp(r->name, name) != 0) continue;
    if (r->fattree != t->fattree) {
      cs_err_set(err, CS_EINVAL, "routing '%s' is for %s topologies", name,
                 r->fattree ? "fattree2d" : "mesh and torus");
      return NULL;
    }
    if (r->torus_only && !t->torus) {
      cs_err_set(err, CS_EINVAL, "routing '%s' needs a torus topology", name);
      return NULL;
    }
    if (num_vcs < r->classes || num_vcs % r->classes) {
      cs_err_set(err, CS_EINVAL, "routing '%s': num_vcs %d must be a positive multiple of %d",
                 name, num_vcs, r->classes);
      return NULL;
    }
    return r;
  }
  cs_err_set(err, CS_EINVAL, "routing '%s' unknown; valid: dor, dor_dateline, dor_dateline_segment (mesh/torus), "
             "vtftr, vtftr_novc, alg_a, xy (fattree2d)", name);
  return NULL;
}
