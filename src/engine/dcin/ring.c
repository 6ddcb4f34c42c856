/* Rings of slices: geometry, routing of the first hop, and the per-cycle movement with the eject
 * check at CP_IN.  Slice order per ring (S = slices per link):
 *
 *   pos lane:  CP_IN(n0) CP_OUT(n0) L*S  CP_IN(n1) CP_OUT(n1) L*S ... CP_IN(nN-1) CP_OUT(nN-1)
 *   neg lane:  CP_IN(nN-1) CP_OUT(nN-1) L*S ... CP_IN(n0) CP_OUT(n0)   -> wraps to index 0
 *
 * Invariant: each cycle slices are visited from the highest index down to 0 and a flit moves only
 * into a slice that is empty at that moment, so a train advances together and a flit at the wrap
 * point waits behind an unmoved occupant of slice 0 (as in the reference model).
 */
#include <stdlib.h>
#include <string.h>

#include "dcin_int.h"

int dcin_first_lane(const dcin_cfg *c, int src, int dst) {
  if (src == dst) return DCIN_IQ_EQ;
  int sr = src / c->cols, sc = src % c->cols, dr = dst / c->cols, dc = dst % c->cols;
  if (!c->yx) {
    if (sc != dc) return dc > sc ? DCIN_TR : DCIN_TL;
    return dr > sr ? DCIN_TD : DCIN_TU;
  }
  if (sr != dr) return dr > sr ? DCIN_TD : DCIN_TU;
  return dc > sc ? DCIN_TR : DCIN_TL;
}

static void lay_lane(dcin_ring *g, int *idx, const int *nodes, int n, int s, int lane, bool rev,
                     dcin_die *d) {
  for (int k = 0; k < n; k++) {
    int node = nodes[rev ? n - 1 - k : k];
    d->cp_in[node * 4 + lane] = (uint16_t)*idx;
    g->kind[*idx] = DCIN_SL_CP_IN, g->lane[*idx] = (uint8_t)lane, g->node[(*idx)++] = (int16_t)node;
    d->cp_out[node * 4 + lane] = (uint16_t)*idx;
    g->kind[*idx] = DCIN_SL_CP_OUT, g->lane[*idx] = (uint8_t)lane, g->node[(*idx)++] = (int16_t)node;
    if (k < n - 1)
      for (int j = 0; j < s; j++)
        g->kind[*idx] = DCIN_SL_LINK, g->lane[*idx] = (uint8_t)lane, g->node[(*idx)++] = (int16_t)node;
  }
}

int dcin_ring_build(dcin_sim *s, dcin_die *d, cs_err *err) {
  const dcin_cfg *c = d->cfg;
  d->nrings = c->rows + c->cols;
  int nodes4 = c->nodes * 4;
  d->cp_in = calloc((size_t)nodes4, sizeof *d->cp_in);
  d->cp_out = calloc((size_t)nodes4, sizeof *d->cp_out);
  d->ring_of = calloc((size_t)nodes4, sizeof *d->ring_of);
  if (!d->cp_in || !d->cp_out || !d->ring_of) return cs_err_set(err, CS_ENOMEM, "ring geometry");
  int maxlen = 0;
  for (int net = 0; net < DCIN_NUM_NETS; net++) {
    d->rings[net] = calloc((size_t)d->nrings, sizeof(dcin_ring));
    if (!d->rings[net]) return cs_err_set(err, CS_ENOMEM, "rings");
  }
  int *nodes = malloc(sizeof(int) * (size_t)(c->rows > c->cols ? c->rows : c->cols));
  if (!nodes) return cs_err_set(err, CS_ENOMEM, "rings");
  for (int r = 0; r < d->nrings; r++) {
    bool horiz = r < c->rows;
    int n = horiz ? c->cols : c->rows, sl = horiz ? c->s_h : c->s_v;
    int len = 2 * ((n - 1) * (sl + 2) + 2);
    if (len > 512) {
      free(nodes);
      return cs_err_set(err, CS_EINVAL, "ring of %d slices too long (max 512)", len);
    }
    if (len > maxlen) maxlen = len;
    for (int k = 0; k < n; k++) nodes[k] = horiz ? r * c->cols + k : k * c->cols + (r - c->rows);
    dcin_ring *g = &d->rings[0][r];
    g->len = (uint16_t)len;
    g->kind = calloc((size_t)len, 1);
    g->lane = calloc((size_t)len, 1);
    g->node = calloc((size_t)len, sizeof(int16_t));
    g->ej = malloc((size_t)len * sizeof(int16_t));
    if (!g->kind || !g->lane || !g->node || !g->ej) {
      free(nodes);
      return cs_err_set(err, CS_ENOMEM, "rings");
    }
    int idx = 0;
    lay_lane(g, &idx, nodes, n, sl, horiz ? DCIN_TR : DCIN_TD, false, d);
    lay_lane(g, &idx, nodes, n, sl, horiz ? DCIN_TL : DCIN_TU, true, d);
    g->dim = (uint8_t)dcin_lane_dim(c, horiz ? DCIN_TR : DCIN_TD);
    for (int i = 0; i < len; i++)
      g->ej[i] = g->kind[i] != DCIN_SL_CP_IN ? -1
                 : g->dim == 1           ? g->node[i]
                                         : (int16_t)dcin_eject_key(c, g->node[i], 0);
    for (int k = 0; k < n; k++) {
      d->ring_of[nodes[k] * 4 + (horiz ? DCIN_TR : DCIN_TD)] = (int16_t)r;
      d->ring_of[nodes[k] * 4 + (horiz ? DCIN_TL : DCIN_TU)] = (int16_t)r;
    }
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      dcin_ring *x = &d->rings[net][r];
      x->len = g->len, x->kind = g->kind, x->lane = g->lane, x->node = g->node;
      x->ej = g->ej, x->dim = g->dim;
      x->slot = malloc(sizeof(uint32_t) * (size_t)len);
      x->occ = calloc((size_t)(len + 63) / 64, sizeof(uint64_t));
      if (!x->slot || !x->occ) {
        free(nodes);
        return cs_err_set(err, CS_ENOMEM, "rings");
      }
      for (int i = 0; i < len; i++) x->slot[i] = DCIN_NIL;
    }
  }
  free(nodes);
  d->t0_words = (maxlen + 63) / 64;
  d->t0_bits = calloc((size_t)DCIN_NUM_NETS * c->nodes * 2 * d->t0_words, sizeof(uint64_t));
  d->itag_stride = maxlen;
  d->itag_slot = malloc(sizeof(int16_t) * (size_t)DCIN_NUM_NETS * d->nrings * maxlen);
  if (!d->t0_bits || !d->itag_slot) return cs_err_set(err, CS_ENOMEM, "tag tables");
  for (size_t i = 0; i < (size_t)DCIN_NUM_NETS * d->nrings * maxlen; i++) d->itag_slot[i] = -1;
  (void)s;
  return 0;
}

/* Eject key of a node on a ring of dimension dim: a flit leaves a first-dimension ring where its
 * first-dimension coordinate matches (turn or arrival), a second-dimension ring at its node. */
int dcin_eject_key(const dcin_cfg *c, int node, int dim) {
  if (dim == 1) return node;
  return c->yx ? node / c->cols : node % c->cols;
}

/* The eject attempt at a CP_IN: true when the flit left the ring (failures upgrade its E-Tag). */
static bool try_eject(dcin_sim *s, dcin_die *d, int net, dcin_ring *g, int i, uint32_t f) {
  int node = g->node[i], lane = g->lane[i];
  if (dcin_eject_to_node(s, d, net, node, lane, f)) {
    dcin_ring_take(g, i);
    return true;
  }
  dcin_etag_fail(s, d, net, node, dcin_etag_fifo(d->cfg, lane), lane, f);
  return false;
}

/* One occupied slice: the eject check at CP_IN, then the move into the next slice if it is empty
 * now.  Returns true when the flit moved from the last slice into slice 0. */
__attribute__((always_inline)) static inline bool visit(dcin_sim *s, dcin_die *d, int net,
                                                      dcin_ring *g, int i) {
  uint32_t f = g->slot[i];
  if (g->ej[i] >= 0 && g->ej[i] == s->flits[f].ecoord && try_eject(s, d, net, g, i, f)) return false;
  int j = i + 1 == g->len ? 0 : i + 1;
  if (g->slot[j] != DCIN_NIL) return false;
  g->slot[j] = f;
  g->slot[i] = DCIN_NIL;
  if (j == i + 1 && (i & 63) != 63) {
    g->occ[i >> 6] ^= 3ull << (i & 63); /* bit i set -> clear, bit i+1 clear -> set */
  } else {
    g->occ[i >> 6] &= ~(1ull << (i & 63));
    g->occ[j >> 6] |= 1ull << (j & 63);
  }
  s->st.flit_hops++;
  if (s->trace && g->kind[j] != DCIN_SL_LINK)
    DCIN_TRACE(s, f, g->kind[j] == DCIN_SL_CP_IN ? "CP_IN" : "CP_OUT", g->node[j], g->lane[j]);
  return j == 0;
}

void dcin_rings_move(dcin_sim *s, dcin_die *d, int net) {
  uint64_t snap[8];
  for (int r = 0; r < d->nrings; r++) {
    dcin_ring *g = &d->rings[net][r];
    if (!g->count) continue;
    int words = (g->len + 63) / 64;
    /* visit the slices occupied at the start of the cycle, highest index first; a flit moved
     * this cycle is not visited again (the wrap into slice 0 included) */
    for (int w = 0; w < words; w++) snap[w] = g->occ[w];
    bool wrapped = false;
    for (int w = words - 1; w >= 0; w--) {
      uint64_t bits = snap[w];
      while (bits) {
        int b = 63 - __builtin_clzll(bits);
        bits &= ~(1ull << b);
        wrapped |= visit(s, d, net, g, w * 64 + b);
      }
    }
    /* the reference's scan reaches slice 0 after the wrap and moves that flit once more */
    if (wrapped && d->cfg->crossring_compat) visit(s, d, net, g, 0);
  }
}
