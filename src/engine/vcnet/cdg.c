/* The channel dependency graph of a routing function (Dally and Seitz): a channel is a link
 * (router, output port) with a VC class, and channel a depends on channel b when some packet
 * holding a may next request b.  Routing is deadlock-free when the graph is acyclic.
 *
 * The graph is built from the routing function itself over every source/destination pair.  A
 * routing decision depends only on the channel a packet arrived on and its destination (the
 * route state is the last hop's dimension and class), so for one destination the walk from a
 * source stops at the first channel an earlier source's walk already took: every channel is
 * walked at most once per destination. */
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "vcnet_int.h"

void vcn_cdg_result_free(vcn_cdg_result *r) {
  if (!r) return;
  free(r->cycle);
  r->cycle = NULL;
  r->cycle_len = 0;
}

/* The dependency graph for the cycle search: channel c's edges are the bits of mask[c], bit
 * (port' C + class') naming that channel at the router the link leads to. */
typedef struct cdg_graph {
  const uint16_t *mask;
  const int32_t *nbr;
  int L, C, P;
} cdg_graph;

static int cdg_next(const void *graph, uint32_t c, int from, uint32_t *to) {
  const cdg_graph *g = graph;
  uint32_t m = from < 16 ? (uint32_t)g->mask[c] >> from : 0;
  if (!m) return -1;
  int bit = from + __builtin_ctz(m);
  uint32_t r = c / (uint32_t)(g->L * g->C), o = (c / (uint32_t)g->C) % (uint32_t)g->L;
  uint32_t nb = (uint32_t)g->nbr[(size_t)r * (size_t)g->P + o];
  *to = (nb * (uint32_t)g->L + (uint32_t)(bit / g->C)) * (uint32_t)g->C + (uint32_t)(bit % g->C);
  return bit;
}

/* Fills out->acyclic and, when there is one, out->cycle with the first cycle found. */
static int find_cycle(const cdg_graph *g, size_t nch, vcn_cdg_result *out, cs_err *err) {
  uint32_t *cycle;
  size_t len;
  int rc = cs_cycle_find(nch, cdg_next, g, &cycle, &len, err);
  if (rc) return cs_err_prefix(err, "deadlock check");
  out->acyclic = cycle == NULL;
  if (!cycle) return CS_OK;
  out->cycle = malloc(len * sizeof *out->cycle);
  if (!out->cycle) {
    free(cycle);
    return cs_err_set(err, CS_ENOMEM, "deadlock check: out of memory");
  }
  out->cycle_len = (int)len;
  for (size_t i = 0; i < len; i++)
    out->cycle[i] = (vcn_channel){(int)(cycle[i] / (uint32_t)(g->L * g->C)),
                                  (int)((cycle[i] / (uint32_t)g->C) % (uint32_t)g->L),
                                  (int)(cycle[i] % (uint32_t)g->C)};
  free(cycle);
  return CS_OK;
}

int vcn_cdg_check(const vcn_topo *t, const vcn_routing *r, vcn_cdg_result *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  const int L = 2 * t->ndims, C = r->classes, P = t->ports;
  const size_t R = (size_t)t->routers, nch = R * (size_t)L * (size_t)C;
  if (L * C > 16) return cs_err_set(err, CS_EINVAL, "deadlock check: more than 16 channels per router");
  uint16_t *mask = calloc(nch, sizeof *mask); /* dependencies: bit (port' C + class') at the next router */
  uint8_t *seen = calloc(nch, 1);              /* walked already for the current destination */
  int32_t *nbr = malloc(R * (size_t)P * sizeof *nbr);
  if (!mask || !seen || !nbr) {
    free(mask), free(seen), free(nbr);
    return cs_err_set(err, CS_ENOMEM, "deadlock check: out of memory for %zu channels", nch);
  }
  for (size_t x = 0; x < R; x++)
    for (int o = 0; o < P; o++) nbr[x * (size_t)P + (size_t)o] = vcn_topo_neighbour(t, (int)x, o);
  for (size_t d = 0; d < R; d++) {
    memset(seen, 0, nch);
    for (size_t s = 0; s < R; s++) {
      if (s == d) continue;
      out->pairs++;
      vcn_route_state st = {-1, 0, (int32_t)s};
      int cur = (int)s, op, cls;
      int64_t prev = -1;
      for (;;) {
        r->fn(t, cur, (int)d, 0, &st, &op, &cls);
        if (op >= L) break;
        size_t ch = ((size_t)cur * (size_t)L + (size_t)op) * (size_t)C + (size_t)cls;
        if (prev >= 0) mask[prev] |= (uint16_t)(1u << (op * C + cls));
        if (seen[ch]) break; /* the rest of this walk is known */
        seen[ch] = 1;
        prev = (int64_t)ch;
        cur = nbr[(size_t)cur * (size_t)P + (size_t)op];
      }
    }
  }
  for (size_t c = 0; c < nch; c++) {
    out->channels += nbr[(c / (size_t)(L * C)) * (size_t)P + (c / (size_t)C) % (size_t)L] >= 0;
    out->dependencies += (uint64_t)__builtin_popcount(mask[c]);
  }
  cdg_graph g = {mask, nbr, L, C, P};
  int rc = find_cycle(&g, nch, out, err);
  free(mask), free(seen), free(nbr);
  return rc;
}
