/* E-Tag and ring ejection: entry pools of the four eject FIFOs of a node (ring-bridge inputs of
 * the first dimension, EQ inputs of the second), priority upgrade on a failed eject, and the T0
 * round-robin over ring slots.  Invariants: entries in use + entries pending release never exceed
 * a level's capacity, and an entry is returned one cycle after its flit left the FIFO; an eject
 * needs a free pre register and an E-Tag entry of a level the flit may use, and a failed eject
 * leaves the flit on the ring.
 */
#include <string.h>

#include "dcin_int.h"

_Static_assert(DCIN_TR == 0 && DCIN_TL == 1 && DCIN_TD == 2 && DCIN_TU == 3,
               "bit 0 of a lane marks the negative lanes");
static bool lane_negative(int lane) { return lane & 1; }
static int lane_phys_dim(int lane) { return (lane == DCIN_TR || lane == DCIN_TL) ? 0 : 1; }

static uint64_t *t0_table(dcin_die *d, int net, int node, int dim) {
  return d->t0_bits + ((size_t)(net * d->cfg->nodes + node) * 2 + dim) * d->t0_words;
}

static bool t0_winner(dcin_die *d, int net, int node, int lane, const dcin_flit *fl) {
  int dim = lane_phys_dim(lane);
  int len = d->rings[net][d->ring_of[node * 4 + lane]].len;
  uint64_t *tb = t0_table(d, net, node, dim);
  dcin_node *nd = &d->nodes[net][node];
  uint32_t p = nd->t0_ptr[dim] % (uint32_t)len;
  if (d->t0_read) d->t0_read[(net * d->cfg->nodes + node) * 2 + dim] = 1;
  for (int i = 0; i < len; i++) {
    uint32_t sl = (p + (uint32_t)i) % (uint32_t)len;
    if (tb[sl / 64] >> (sl % 64) & 1) return sl == fl->slot;
  }
  return false;
}

/* The entry level a flit that has failed before (E-Tag T1 or T0) may take, DCIN_T_NONE if none. */
static int etag_upgraded_level(dcin_die *d, int net, int node, int lane, const dcin_node *nd,
                               int fifo, const dcin_flit *fl) {
  const int *cap = d->cfg->etag_cap[lane];
  bool a0 = nd->ue[fifo][DCIN_T0] < cap[DCIN_T0];
  bool a1 = nd->ue[fifo][DCIN_T1] < cap[DCIN_T1];
  bool a2 = nd->ue[fifo][DCIN_T2] < cap[DCIN_T2];
  if (fl->etag == DCIN_T0 && a0 && t0_winner(d, net, node, lane, fl)) return DCIN_T0;
  return a1 ? DCIN_T1 : a2 ? DCIN_T2 : DCIN_T_NONE;
}

DCIN_INLINE bool etag_try(dcin_sim *s, dcin_die *d, int net, int node, int fifo, int lane,
                          uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  dcin_node *nd = &d->nodes[net][node];
  int use;
  if (fl->etag == DCIN_T2) { /* most ejects: the flit has not failed on this ring */
    if (nd->ue[fifo][DCIN_T2] >= d->cfg->etag_cap[lane][DCIN_T2]) return false;
    use = DCIN_T2;
  } else {
    use = etag_upgraded_level(d, net, node, lane, nd, fifo, fl);
    if (use == DCIN_T_NONE) return false;
    if (fl->etag == DCIN_T1) s->st.etag_t1++;
    if (fl->etag == DCIN_T0) s->st.etag_t0++;
  }
  /* the reference forgets the T0 registration when the flit leaves through a positive lane */
  if (fl->in_t0_table && d->cfg->crossring_compat && !lane_negative(lane)) fl->in_t0_table = 0;
  if (fl->in_t0_table) {
    int dim = lane_phys_dim(lane);
    uint64_t *tb = t0_table(d, net, node, dim);
    tb[fl->slot / 64] &= ~(1ull << (fl->slot % 64));
    fl->in_t0_table = 0;
    if (use == DCIN_T0) nd->t0_ptr[dim]++;
  }
  nd->ue[fifo][use]++;
  fl->used_entry = (uint8_t)use;
  return true;
}

bool dcin_etag_try(dcin_sim *s, dcin_die *d, int net, int node, int fifo, int lane, uint32_t f) {
  return etag_try(s, d, net, node, fifo, lane, f);
}

/* Flit f, which took its E-Tag entry, enters the eject FIFO q of (net, node) (dim: of its lane). */
DCIN_INLINE void enter_eject_fifo(dcin_die *d, int net, int node, dcin_node *nd, dcin_q *q,
                                  int dim, uint32_t f, uint64_t now) {
  int neg = q == &nd->rb_in[1] || q == &nd->eq_in[1];
  dcin_node_put(d, net, node, nd, q, (dim == 0 ? DCIN_B_RBIN : DCIN_B_EQIN) + neg, f, now);
}

DCIN_INLINE bool eject_to_node(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  const dcin_cfg *c = d->cfg;
  dcin_node *nd = &d->nodes[net][node];
  int neg = lane & 1; /* TL, TU */
  int dim = dcin_lane_dim(c, lane);
  dcin_q *q = dim == 0 ? &nd->rb_in[neg] : &nd->eq_in[neg];
  if (!dcin_q_pre_free_ej(q, s->cyc)) return false;
  int fifo = dim * 2 + neg; /* dcin_etag_fifo */
  if (!etag_try(s, d, net, node, fifo, lane, f)) return false;
  enter_eject_fifo(d, net, node, nd, q, dim, f, s->cyc);
  DCIN_TRACE(s, f, dim == 0 ? "RB" : "EQ", node, lane);
  if (c->crossring_compat) { /* the reference also frees the entry as the flit enters the FIFO */
    dcin_etag_release(d, nd, fifo, s->flits[f].used_entry);
  }
  s->flits[f].lane = (uint8_t)lane;
  return true;
}

bool dcin_eject_to_node(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  return eject_to_node(s, d, net, node, lane, f);
}

DCIN_INLINE void etag_fail(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  fl->eject_fail++;
  s->txns[fl->txn].eject_fail++;
  bool neg = lane_negative(lane);
  const dcin_cfg *c = d->cfg;
  int to = fl->etag;
  if (c->etag_t1) {
    if (fl->etag == DCIN_T2 && (neg || c->etag_bothside))
      to = DCIN_T1;
    else if (fl->etag == DCIN_T1 && neg)
      to = DCIN_T0;
  } else if (fl->etag == DCIN_T2 && neg) {
    to = DCIN_T0;
  }
  if (to == DCIN_T0 && fl->etag != DCIN_T0) {
    uint64_t *tb = t0_table(d, net, node, lane_phys_dim(lane));
    tb[fl->slot / 64] |= 1ull << (fl->slot % 64);
    fl->in_t0_table = 1;
  }
  fl->etag = (uint8_t)to;
}

void dcin_etag_fail(dcin_sim *s, dcin_die *d, int net, int node, int fifo, int lane, uint32_t f) {
  (void)fifo;
  etag_fail(s, d, net, node, lane, f);
}

/* The general eject attempt: any E-Tag level, compat and tracing (kept out of line so that the
 * common case below stays small). */
bool dcin_eject_slow(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  if (eject_to_node(s, d, net, node, lane, f)) return true;
  etag_fail(s, d, net, node, lane, f);
  return false;
}

/* The eject attempt of flit f at the CP_IN of (node, lane): true when it entered the node; a
 * failure upgrades its E-Tag.  Nearly every attempt is by a flit that has not failed on this ring
 * (E-Tag T2, no T0 registration) outside validation runs: that case is eject_to_node and
 * etag_try reduced to the one T2 entry check. */
bool dcin_eject_try(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  P_INC(ej_try);
  const dcin_cfg *c = d->cfg;
  dcin_flit *fl = &s->flits[f];
  if (fl->etag != DCIN_T2 || fl->in_t0_table || c->crossring_compat || s->trace)
    return dcin_eject_slow(s, d, net, node, lane, f);
  dcin_node *nd = &d->nodes[net][node];
  int neg = lane & 1, dim = dcin_lane_dim(c, lane);
  dcin_q *q = dim == 0 ? &nd->rb_in[neg] : &nd->eq_in[neg];
  int16_t *ue = &nd->ue[dim * 2 + neg][DCIN_T2]; /* fifo dcin_etag_fifo(c, lane) */
  if (!dcin_q_pre_free_ej(q, s->cyc) || *ue >= c->etag_cap[lane][DCIN_T2]) {
    dcin_etag_fail(s, d, net, node, dim * 2 + neg, lane, f);
    return false;
  }
  ++*ue;
  fl->used_entry = DCIN_T2;
  enter_eject_fifo(d, net, node, nd, q, dim, f, s->cyc);
  fl->lane = (uint8_t)lane;
  return true;
}
