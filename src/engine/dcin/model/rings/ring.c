/* Rings of slices: geometry, routing of the first hop, and the frame shift of a train stalled at the
 * wrap (the cycle of a ring, ejects and movement, is the transport's: eject.c).  Slice order per ring (S = slices per link):
 *
 *   pos lane:  CP_IN(n0) CP_OUT(n0) L*S  CP_IN(n1) CP_OUT(n1) L*S ... CP_IN(nN-1) CP_OUT(nN-1)
 *   neg lane:  CP_IN(nN-1) CP_OUT(nN-1) L*S ... CP_IN(n0) CP_OUT(n0)   -> wraps to index 0
 *
 * Invariant: the result equals visiting the slices from the highest index down to 0 and moving a
 * flit only into a slice that is empty at that moment (a train advances together; a flit at the
 * wrap waits behind an unmoved occupant of slice 0, as in the reference model); the ring is kept
 * in a rotating frame so that the common case costs one eject check per CP_IN, not one per flit.
 */
#include <stdlib.h>
#include <string.h>

#include "ring.h"

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
    g->kind[*idx] = DCIN_SL_CP_OUT, g->lane[*idx] = (uint8_t)lane,
    g->node[(*idx)++] = (int16_t)node;
    if (k < n - 1)
      for (int j = 0; j < s; j++)
        g->kind[*idx] = DCIN_SL_LINK, g->lane[*idx] = (uint8_t)lane,
        g->node[(*idx)++] = (int16_t)node;
  }
}

int dcin_ring_build(dcin_sim *s, dcin_die *d, cs_err *err) {
  const dcin_cfg *c = d->cfg;
  d->nrings = c->rows + c->cols;
  int nodes4 = c->nodes * 4;
  d->route = malloc((size_t)c->nodes * c->nodes);
  d->ekey = malloc(sizeof *d->ekey * 2 * (size_t)c->nodes);
  d->scoord = malloc(sizeof *d->scoord * (size_t)c->nodes);
  if (!d->route || !d->ekey || !d->scoord) return cs_err_set(err, CS_ENOMEM, "routing tables");
  for (int a = 0; a < c->nodes; a++) {
    for (int dim = 0; dim < 2; dim++) d->ekey[a * 2 + dim] = (int16_t)dcin_eject_key(c, a, dim);
    d->scoord[a] = (int16_t)(c->yx ? a % c->cols : a / c->cols);
  }
  /* a flit reaches the ring bridge where it leaves its first-dimension ring (the node there with
   * its target's first-dimension coordinate) or, when its first lane is of the second dimension,
   * at its source; there it goes to the EQ if that node is its target, else up or down */
  for (int a = 0; a < c->nodes; a++)
    for (int b = 0; b < c->nodes; b++) {
      int dir = dcin_first_lane(c, a, b), t = a;
      if (dir != DCIN_IQ_EQ && dcin_lane_dim(c, dir) == 0)
        t = c->yx ? (b / c->cols) * c->cols + a % c->cols : (a / c->cols) * c->cols + b % c->cols;
      int o = b == t ? DCIN_RB_EQ : d->scoord[b] > d->scoord[t] ? DCIN_RB_P : DCIN_RB_N;
      d->route[a * c->nodes + b] = (uint8_t)(dir | o << DCIN_ROUTE_RB_SHIFT);
    }
  d->lane_p = c->yx ? DCIN_TR : DCIN_TD;
  d->lane_n = c->yx ? DCIN_TL : DCIN_TU;
  d->eq_fifo_p = (uint8_t)dcin_etag_fifo(c, d->lane_p);
  d->eq_fifo_n = (uint8_t)dcin_etag_fifo(c, d->lane_n);
  /* first-dimension lanes inject from the IQ, second-dimension ones from the ring bridge */
  for (int lane = 0; lane < DCIN_NUM_LANES; lane++)
    d->cp_src[lane] = dcin_lane_dim(c, lane) == 0
                          ? offsetof(dcin_node, iq_out) + (size_t)lane * sizeof(dcin_q)
                      : lane == DCIN_TL || lane == DCIN_TU
                          ? offsetof(dcin_node, rb_out) + DCIN_RB_N * sizeof(dcin_q)
                          : offsetof(dcin_node, rb_out) + DCIN_RB_P * sizeof(dcin_q);
  /* the stages' inputs as occ bits (lane_p / lane_n: the second-dimension lanes) */
  int lane_p = c->yx ? DCIN_TR : DCIN_TD, lane_n = c->yx ? DCIN_TL : DCIN_TU;
  d->m_rb = DCIN_BIT(DCIN_B_RBIN) | DCIN_BIT(DCIN_B_RBIN + 1) | DCIN_BIT(DCIN_B_IQOUT + lane_p) |
            DCIN_BIT(DCIN_B_IQOUT + lane_n);
  d->m_eq = DCIN_BIT(DCIN_B_EQIN) | DCIN_BIT(DCIN_B_EQIN + 1) |
            DCIN_BIT(DCIN_B_IQOUT + DCIN_IQ_EQ) | DCIN_BIT(DCIN_B_RBOUT + DCIN_RB_EQ) |
            0xfull << DCIN_B_EQARB;
  d->m_cp = 0;
  for (int lane = 0; lane < DCIN_NUM_LANES; lane++) {
    d->cp_bit[lane] = (uint8_t)(dcin_lane_dim(c, lane) == 0 ? DCIN_B_IQOUT + lane
                                : lane == DCIN_TL || lane == DCIN_TU ? DCIN_B_RBOUT + DCIN_RB_N
                                                                     : DCIN_B_RBOUT + DCIN_RB_P);
    d->m_cp |= DCIN_BIT(d->cp_bit[lane]);
  }
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
    g->ejs = calloc((size_t)len, sizeof *g->ejs);
    if (!g->kind || !g->lane || !g->node || !g->ej || !g->ejs) {
      free(nodes);
      return cs_err_set(err, CS_ENOMEM, "rings");
    }
    int idx = 0;
    lay_lane(g, &idx, nodes, n, sl, horiz ? DCIN_TR : DCIN_TD, false, d);
    lay_lane(g, &idx, nodes, n, sl, horiz ? DCIN_TL : DCIN_TU, true, d);
    g->dim = (uint8_t)dcin_lane_dim(c, horiz ? DCIN_TR : DCIN_TD);
    g->cp_in_pos = malloc(sizeof(uint16_t) * (size_t)len);
    if (!g->cp_in_pos) {
      free(nodes);
      return cs_err_set(err, CS_ENOMEM, "rings");
    }
    g->n_cp_in = 0;
    for (int i = len - 1; i >= 0; i--)
      if (g->kind[i] == DCIN_SL_CP_IN) g->cp_in_pos[g->n_cp_in++] = (uint16_t)i;
    for (int i = 0; i < len; i++) {
      if (g->kind[i] != DCIN_SL_CP_IN) continue;
      int lane = g->lane[i], neg = lane & 1, dim = dcin_lane_dim(c, lane);
      g->ejs[i] = (dcin_ejsite){
          .qoff = (uint16_t)(dim == 0 ? offsetof(dcin_node, rb_in) + (size_t)neg * sizeof(dcin_q)
                                      : offsetof(dcin_node, eq_in) + (size_t)neg * sizeof(dcin_q)),
          .bit = (uint8_t)((dim == 0 ? DCIN_B_RBIN : DCIN_B_EQIN) + neg),
          .fifo = (uint8_t)dcin_etag_fifo(c, lane),
          .lane = (uint8_t)lane,
          .node = g->node[i],
          .t2cap = (int16_t)c->etag_cap[lane][DCIN_T2]};
    }
    for (int i = 0; i < len; i++)
      g->ej[i] = g->kind[i] != DCIN_SL_CP_IN ? -1
                 : g->dim == 1               ? g->node[i]
                                             : (int16_t)dcin_eject_key(c, g->node[i], 0);
    /* eject geometry: distance to the next CP_IN of each ej value */
    int ne = 0, nrow = 0;
    for (int k = 0; k < g->n_cp_in; k++)
      if (g->ej[g->cp_in_pos[k]] + 1 > ne) ne = g->ej[g->cp_in_pos[k]] + 1;
    g->necoord = ne;
    g->eidx = malloc(sizeof(int16_t) * (size_t)(ne ? ne : 1));
    g->ndist = malloc(sizeof(uint16_t) * (size_t)len * (size_t)(n * 2));
    if (!g->eidx || !g->ndist) {
      free(nodes);
      return cs_err_set(err, CS_ENOMEM, "rings");
    }
    for (int e = 0; e < ne; e++) g->eidx[e] = -1;
    for (int k = g->n_cp_in - 1; k >= 0; k--) { /* ascending positions */
      int e = g->ej[g->cp_in_pos[k]];
      if (g->eidx[e] >= 0) continue;
      g->eidx[e] = (int16_t)nrow;
      uint16_t *row = &g->ndist[(size_t)nrow++ * len];
      /* walk down from the last slice; past the lowest match the next one is it plus len */
      int next = g->cp_in_pos[k] + len, hi = len - 1;
      for (int t = 0; t < g->n_cp_in; t++) {
        int q = g->cp_in_pos[t];
        for (int p = hi; p > q; p--) row[p] = (uint16_t)(next - p);
        if (g->ej[q] == e) next = q;
        row[q] = (uint16_t)(next - q);
        hi = q - 1;
      }
      for (int p = hi; p >= 0; p--) row[p] = (uint16_t)(next - p);
    }
    for (int k = 0; k < n; k++) {
      d->ring_of[nodes[k] * 4 + (horiz ? DCIN_TR : DCIN_TD)] = (int16_t)r;
      d->ring_of[nodes[k] * 4 + (horiz ? DCIN_TL : DCIN_TU)] = (int16_t)r;
    }
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      dcin_ring *x = &d->rings[net][r];
      x->len = g->len, x->kind = g->kind, x->lane = g->lane, x->node = g->node;
      x->ej = g->ej, x->ejs = g->ejs, x->dim = g->dim, x->cp_in_pos = g->cp_in_pos, x->n_cp_in = g->n_cp_in;
      x->ndist = g->ndist, x->eidx = g->eidx, x->necoord = g->necoord;
      x->flits = &s->flits;
      x->slot = malloc(sizeof(uint32_t) * (size_t)len);
      x->dkey = malloc(sizeof(uint16_t) * 3 * (size_t)len); /* dkey, dnext, dhead */
      if (!x->slot || !x->dkey) {
        free(nodes);
        return cs_err_set(err, CS_ENOMEM, "rings");
      }
      x->dnext = x->dkey + len, x->dhead = x->dkey + 2 * len;
      for (int i = 0; i < len; i++) x->slot[i] = DCIN_NIL;
      for (int i = 0; i < 3 * len; i++) x->dkey[i] = DCIN_NO_KEY;
    }
  }
  free(nodes);
  d->t0_words = (maxlen + 63) / 64;
  d->t0_bits = calloc((size_t)DCIN_NUM_NETS * c->nodes * 2 * d->t0_words, sizeof(uint64_t));
  d->itag_stride = maxlen;
  d->itag_slot = malloc(sizeof(int16_t) * (size_t)DCIN_NUM_NETS * d->nrings * maxlen);
  if (!d->t0_bits || !d->itag_slot) return cs_err_set(err, CS_ENOMEM, "tag tables");
  for (size_t i = 0; i < (size_t)DCIN_NUM_NETS * d->nrings * maxlen; i++) d->itag_slot[i] = -1;
  /* per network: each ring's slice of the I-Tag table, and each (node, lane)'s CP_OUT */
  d->cp_site[0] = malloc(sizeof(dcin_cp_site) * DCIN_NUM_NETS * (size_t)nodes4);
  if (!d->cp_site[0]) return cs_err_set(err, CS_ENOMEM, "tag tables");
  /* per CP_OUT and target node: the slices to the CP_IN where it leaves (dcin_ring_key from 0) */
  d->cp_key = malloc(sizeof *d->cp_key * (size_t)nodes4 * c->nodes);
  if (!d->cp_key) return cs_err_set(err, CS_ENOMEM, "eject keys");
  for (int k = 0; k < nodes4; k++) {
    const dcin_ring *g = &d->rings[0][d->ring_of[k]];
    for (int t = 0; t < c->nodes; t++) {
      int e = d->ekey[t * 2 + g->dim];
      int row = e >= 0 && e < g->necoord ? g->eidx[e] : -1;
      d->cp_key[(size_t)k * c->nodes + t] =
          row < 0 ? DCIN_NO_KEY : g->ndist[(size_t)row * g->len + d->cp_out[k]];
    }
  }
  for (int net = 0; net < DCIN_NUM_NETS; net++) {
    d->cp_site[net] = d->cp_site[0] + (size_t)net * nodes4;
    for (int r = 0; r < d->nrings; r++)
      d->rings[net][r].itag = &d->itag_slot[((size_t)net * d->nrings + r) * d->itag_stride];
    for (int k = 0; k < nodes4; k++)
      d->cp_site[net][k] = (dcin_cp_site){&d->rings[net][d->ring_of[k]], d->cp_out[k],
                                          &d->cp_key[(size_t)k * c->nodes]};
  }
  return 0;
}

/* Eject key of a node on a ring of dimension dim: a flit leaves a first-dimension ring where its
 * first-dimension coordinate matches (turn or arrival), a second-dimension ring at its node. */
int dcin_eject_key(const dcin_cfg *c, int node, int dim) {
  if (dim == 1) return node;
  return c->yx ? node / c->cols : node % c->cols;
}

/* The stalled train at positions lo..len-1 (lo > 0, so position lo - 1 is empty) is shifted back
 * by one frame index so that after the rotation it stays, lowest flit first (each moves into the
 * index its predecessor just left); its flits are listed in stalled[].  Each keeps its filing one
 * rotation later (its next eject CP_IN is reached one cycle later), except a flit standing on a
 * CP_IN where it may leave: its eject just failed there and it tries again next cycle, as the
 * slice-by-slice scan does.  This equals filing each anew from its position after the rotation. */
void dcin_ring_shift_back(dcin_ring *g, int lo, uint32_t *stalled) {
  int len = g->len, i = dcin_ring_idx(g, lo);
  for (int p = lo; p < len; p++) {
    int k = i == 0 ? len - 1 : i - 1, next = i + 1 == len ? 0 : i + 1;
    uint32_t f = g->slot[i];
    *stalled++ = f;
    int key = g->dkey[i];
    dcin_ring_unkey(g, i);
    g->slot[k] = f;
    g->slot[i] = DCIN_NIL;
    if (key != DCIN_NO_KEY) { /* a flit with no eject CP_IN on this ring has none */
      if (g->ej[p] == (*g->flits)[f].ecoord) key = g->off; /* due now, and failed */
      key = key + 1 == len ? 0 : key + 1;
      g->dnext[k] = g->dhead[key];
      g->dhead[key] = (uint16_t)k;
    }
    g->dkey[k] = (uint16_t)key;
    i = next;
  }
}
