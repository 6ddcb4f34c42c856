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

#include "vcnet_int.h"

void vcn_cdg_result_free(vcn_cdg_result *r) {
  if (!r) return;
  free(r->cycle);
  r->cycle = NULL;
  r->cycle_len = 0;
}

/* Depth-first search for a cycle; fills out->cycle with the first one found. */
static int find_cycle(const vcn_topo *t, const int32_t *nbr, const uint16_t *mask, int classes,
                      size_t nch, vcn_cdg_result *out, cs_err *err) {
  const int L = 2 * t->ndims, P = t->ports;
  uint8_t *color = calloc(nch, 1); /* 0 new, 1 on stack, 2 done */
  uint32_t *stack = malloc(nch * sizeof *stack);
  uint8_t *next_bit = calloc(nch, 1);
  if (!color || !stack || !next_bit) {
    free(color), free(stack), free(next_bit);
    return cs_err_set(err, CS_ENOMEM, "deadlock check: out of memory");
  }
  out->acyclic = true;
  for (size_t root = 0; root < nch && out->acyclic; root++) {
    if (color[root] || !mask[root]) continue;
    size_t sp = 0;
    stack[sp++] = (uint32_t)root;
    color[root] = 1;
    while (sp && out->acyclic) {
      uint32_t c = stack[sp - 1];
      uint16_t m = (uint16_t)(mask[c] >> next_bit[c]);
      if (!m) {
        color[c] = 2;
        sp--;
        continue;
      }
      int bit = next_bit[c] + __builtin_ctz(m);
      next_bit[c] = (uint8_t)(bit + 1);
      uint32_t r = c / (uint32_t)(L * classes), o = (c / (uint32_t)classes) % (uint32_t)L;
      uint32_t nb = (uint32_t)nbr[(size_t)r * P + o];
      uint32_t d = (nb * (uint32_t)L + (uint32_t)(bit / classes)) * (uint32_t)classes +
                   (uint32_t)(bit % classes);
      if (color[d] == 0) {
        color[d] = 1;
        stack[sp++] = d;
      } else if (color[d] == 1) {
        size_t from = 0;
        while (stack[from] != d) from++;
        out->cycle_len = (int)(sp - from);
        out->cycle = malloc((size_t)out->cycle_len * sizeof *out->cycle);
        if (!out->cycle) {
          free(color), free(stack), free(next_bit);
          return cs_err_set(err, CS_ENOMEM, "deadlock check: out of memory");
        }
        for (size_t i = from; i < sp; i++) {
          uint32_t ch = stack[i];
          out->cycle[i - from] = (vcn_channel){(int)(ch / (uint32_t)(L * classes)),
                                               (int)((ch / (uint32_t)classes) % (uint32_t)L),
                                               (int)(ch % (uint32_t)classes)};
        }
        out->acyclic = false;
      }
    }
  }
  free(color), free(stack), free(next_bit);
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
  int rc = find_cycle(t, nbr, mask, C, nch, out, err);
  free(mask), free(seen), free(nbr);
  return rc;
}
