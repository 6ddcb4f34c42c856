/* The fat tree's routes as the router network takes them hop by hop (docs/vtftr.md): each
 * router recomputes the pair's VTFTR / algorithm A route (vtf_route, a few dozen operations) and
 * takes the hop that leaves it.  A route visits a router at most once, so the hop is unique. */
#include <stdio.h>

#include "vcnet_int.h"

void vcn_route_fattree(const vcn_topo *t, int router, int dst_router, int dst_ep,
                       vcn_route_state *st, int *out_port, int *out_cls) {
  *out_cls = 0;
  if (router == dst_router) {
    *out_port = t->links + dst_ep;
    return;
  }
  const vtf_net *f = &t->ft;
  vtf_path p;
  vtf_route(f, st->src, dst_router, &p);
  for (int i = 0; i < p.n; i++) {
    if (p.hop[i].from != router) continue;
    int to = p.hop[i].to;
    if (router < f->leaves) *out_port = to < f->leaves + f->rows ? 0 : 1;
    else if (router < f->leaves + f->rows) *out_port = to % f->cols;
    else *out_port = to / f->cols;
    *out_cls = p.hop[i].cls;
    st->cls = p.hop[i].cls;
    return;
  }
  /* Not on the route: cannot happen, as routes are fixed for the run and every sender
   * (engine inject, netbench) refuses a pair vcn_pair_problem names; keep the port valid. */
  *out_port = router < f->leaves ? t->links + dst_ep : 0;
}

bool vcn_pair_problem(const vcn_topo *t, int src_ep, int dst_ep, char *buf, size_t cap) {
  if (!t->fattree) return false;
  const vtf_net *f = &t->ft;
  int s = src_ep / t->epr, d = dst_ep / t->epr;
  char a[16], b[16];
  vtf_node_name(f, s, a, sizeof a);
  vtf_node_name(f, d, b, sizeof b);
  if (vtf_dead(f, s) || vtf_dead(f, d)) {
    if (buf)
      snprintf(buf, cap, "endpoint %d sits on faulty leaf %s", vtf_dead(f, s) ? src_ep : dst_ep,
               vtf_dead(f, s) ? a : b);
    return true;
  }
  vtf_path p;
  vtf_route(f, s, d, &p);
  if (p.kind != VTF_UNREACHABLE) return false;
  if (buf) snprintf(buf, cap, "no %s route from leaf %s to leaf %s", vtf_algo_name(f->algo), a, b);
  return true;
}
