/* Command-line tools on the network model: the route of one pair, and the deadlock check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commsweep/vcnet.h"
#include "vcnet_int.h"

/* "2,3,1" (coordinates, dimension 0 first) or "37" (router id) into a router id. */
static int parse_router(const vcn_topo *t, const char *text, int *router, cs_err *err) {
  int c[VCN_MAX_DIMS] = {0, 0, 0}, n = 0;
  const char *p = text;
  for (;;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || n == VCN_MAX_DIMS)
      return cs_err_set(err, CS_EINVAL, "router '%s': expected coordinates \"x,y,z\" or a router id", text);
    c[n++] = (int)v;
    if (*end == ',') p = end + 1;
    else if (*end == '\0') break;
    else return cs_err_set(err, CS_EINVAL, "router '%s': unexpected '%c'", text, *end);
  }
  if (n == 1 && t->ndims > 1) {
    if (c[0] < 0 || c[0] >= t->routers)
      return cs_err_set(err, CS_EINVAL, "router id %d outside [0, %d)", c[0], t->routers);
    *router = c[0];
    return CS_OK;
  }
  if (n != t->ndims)
    return cs_err_set(err, CS_EINVAL, "router '%s': %d coordinates for a %d-dimensional topology",
                      text, n, t->ndims);
  for (int d = 0; d < n; d++)
    if (c[d] < 0 || c[d] >= t->radix[d])
      return cs_err_set(err, CS_EINVAL, "router '%s': coordinate %d of dimension %d outside [0, %d)",
                        text, c[d], d, t->radix[d]);
  *router = vcn_topo_router(t, c);
  return CS_OK;
}

int cs_vcnet_route(const char *topology, const char *routing, int num_vcs, const char *src,
                   const char *dst, FILE *out, int *hops, cs_err *err) {
  vcn_topo t;
  int rc = vcn_topo_parse(topology, 1, &t, err);
  if (rc) return rc;
  const vcn_routing *r = vcn_routing_find(routing, &t, num_vcs, err);
  if (!r) return CS_EINVAL;
  int s, d;
  if ((rc = parse_router(&t, src, &s, err)) || (rc = parse_router(&t, dst, &d, err))) return rc;
  char a[32], b[32], port[8];
  vcn_coords_name(&t, s, a, sizeof a);
  vcn_coords_name(&t, d, b, sizeof b);
  if (out) fprintf(out, "%s, routing %s, %d VC(s) per port: %s -> %s\n", topology, routing, num_vcs, a, b);
  int per = num_vcs / r->classes, cur = s, n = 0, op, cls;
  vcn_route_state st = {-1, 0, s};
  for (;;) {
    r->fn(&t, cur, d, 0, &st, &op, &cls);
    vcn_coords_name(&t, cur, a, sizeof a);
    vcn_port_name(&t, op, port, sizeof port);
    if (op >= 2 * t.ndims) {
      if (out) fprintf(out, "  eject  at router %-10s port %-4s VCs 0-%d\n", a, port, num_vcs - 1);
      break;
    }
    int next = vcn_topo_neighbour(&t, cur, op);
    vcn_coords_name(&t, next, b, sizeof b);
    n++;
    if (out)
      fprintf(out, "  hop %-2d router %-10s port %-4s VC class %d (VCs %d-%d) -> %s\n", n, a, port,
              cls, cls * per, cls * per + per - 1, b);
    cur = next;
    if (n > t.routers) return cs_err_set(err, CS_EINTERNAL, "route does not reach its destination");
  }
  if (out) fprintf(out, "%d hop(s)\n", n);
  if (hops) *hops = n;
  return CS_OK;
}

/* The fat tree's graph (fault-free here; `commsweep faults --cdg` takes fault sets). */
static int fattree_deadlock_check(const char *topology, const char *routing, FILE *out, int *acyclic,
                                  cs_err *err) {
  vtf_net n;
  int rc = vtf_parse(topology, 1, &n, err);
  if (!rc) rc = vtf_algo_parse(routing, &n.algo, err);
  vtf_cdg g;
  if (rc || (rc = vtf_cdg_check(&n, &g, err))) return rc;
  if (out) {
    fprintf(out, "%s, routing %s: %llu channels used (link x VC class), %llu dependencies, %llu pairs\n",
            topology, routing, (unsigned long long)g.channels_used, (unsigned long long)g.dependencies,
            (unsigned long long)g.pairs);
    if (g.acyclic) fprintf(out, "acyclic\n");
    else fprintf(out, "cycle of %d channels\n", g.cycle_len);
  }
  if (acyclic) *acyclic = g.acyclic;
  return CS_OK;
}

int cs_vcnet_deadlock_check(const char *topology, const char *routing, FILE *out, int *acyclic,
                            cs_err *err) {
  if (vtf_is_fattree(topology)) return fattree_deadlock_check(topology, routing, out, acyclic, err);
  vcn_topo t;
  int rc = vcn_topo_parse(topology, 1, &t, err);
  if (rc) return rc;
  const vcn_routing *r = vcn_routing_find(routing, &t, 2, err);
  if (!r) return CS_EINVAL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  vcn_cdg_result res;
  if ((rc = vcn_cdg_check(&t, r, &res, err))) return rc;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (out) {
    fprintf(out, "%s, routing %s: %llu channels (link x VC class), %llu dependencies, %llu pairs, %.3f s\n",
            topology, routing, (unsigned long long)res.channels,
            (unsigned long long)res.dependencies, (unsigned long long)res.pairs, secs);
    if (res.acyclic) {
      fprintf(out, "acyclic\n");
    } else {
      fprintf(out, "cycle of %d channels:\n", res.cycle_len);
      for (int i = 0; i < res.cycle_len; i++) {
        char a[32], b[32], port[8];
        const vcn_channel *c = &res.cycle[i];
        vcn_coords_name(&t, c->router, a, sizeof a);
        vcn_coords_name(&t, vcn_topo_neighbour(&t, c->router, c->port), b, sizeof b);
        vcn_port_name(&t, c->port, port, sizeof port);
        fprintf(out, "  %s %s -> %s, VC class %d\n", a, port, b, c->cls);
      }
    }
  }
  if (acyclic) *acyclic = res.acyclic;
  vcn_cdg_result_free(&res);
  return CS_OK;
}
