/* A ring's cycle and its ejects: the flits due at their exit CP_IN try to enter their eject FIFO
 * (ring-bridge inputs of the first dimension, EQ inputs of the second) under the E-Tag entry pools,
 * with the priority upgrade on a failed eject and the T0 round-robin over ring slots; then the ring
 * moves.  Invariants: entries in use + entries pending release never exceed
 * a level's capacity, and an entry is returned one cycle after its flit left the FIFO; an eject
 * needs a free pre register and an E-Tag entry of a level the flit may use, and a failed eject
 * leaves the flit on the ring.
 */
#include <string.h>

#include "transport.h"

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
  DCIN_COUNT(s, moved_eject);
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
  DCIN_COUNT(s, moved_eject);
  fl->lane = (uint8_t)lane;
  return true;
}

/* The eject attempt of the flit at frame index i, which the caller took out of its bucket: it
 * leaves the ring, or it is filed under its next eject CP_IN (a failure upgrades its E-Tag). */
DCIN_INLINE void eject_due(dcin_sim *s, dcin_die *d, int net, dcin_ring *g, int i) {
  int p = i + g->off;
  if (p >= g->len) p -= g->len;
  uint32_t f = g->slot[i];
  g->dkey[i] = DCIN_NO_KEY;
  dcin_flit *fl = &s->flits[f];
  if (g->ej[p] == fl->ecoord) {
    const dcin_ejsite *e = &g->ejs[p];
    /* nearly every attempt: a flit that has not failed on this ring (E-Tag T2, no T0
     * registration) outside validation runs; it needs the FIFO's pre register and a T2 entry */
    if (fl->etag == DCIN_T2 && !fl->in_t0_table && !d->slow) {
      dcin_node *nd = &d->nodes[net][e->node];
      dcin_q *q = (dcin_q *)((char *)nd + e->qoff);
      int16_t *ue = &nd->ue[e->fifo][DCIN_T2];
      uint64_t now = s->cyc;
      if (dcin_q_pre_free_ej(q, now) && *ue < e->t2cap) {
        ++*ue;
        fl->used_entry = DCIN_T2;
        fl->lane = e->lane;
        dcin_node_put(d, net, e->node, nd, q, e->bit, f, now);
        DCIN_COUNT(s, moved_eject);
        g->slot[i] = DCIN_NIL;
        g->count--;
        return;
      }
      dcin_etag_fail(s, d, net, e->node, e->fifo, e->lane, f);
    } else if (dcin_eject_slow(s, d, net, e->node, e->lane, f)) {
      g->slot[i] = DCIN_NIL;
      g->count--;
      return;
    }
  }
  dcin_ring_key(g, i, p, 1); /* still riding: filed under its next eject CP_IN */
}

/* The flits standing on their eject CP_IN now (bucket[off], which holds `due` first), visited
 * from the highest position down as the reference's scan does.  Each leaves or is filed again
 * (possibly in this same bucket, one rotation ahead), so the bucket is detached whole instead of
 * unlinking flit by flit. */
static void eject_bucket(dcin_sim *s, dcin_die *d, int net, dcin_ring *g, int due) {
  uint16_t due_i[512], due_p[512];
  int nd = 0, len = g->len;
  for (int i = due; i != DCIN_NO_KEY; i = g->dnext[i]) {
    int p = i + g->off, k = nd++;
    if (p >= len) p -= len;
    while (k > 0 && due_p[k - 1] < p) due_p[k] = due_p[k - 1], due_i[k] = due_i[k - 1], k--;
    due_p[k] = (uint16_t)p, due_i[k] = (uint16_t)i;
  }
  for (int k = 0; k < nd; k++) eject_due(s, d, net, g, due_i[k]);
}
/* The same, with a lone due flit handled inline (the common case). */
DCIN_INLINE void eject_all_due(dcin_sim *s, dcin_die *d, int net, dcin_ring *g) {
  uint16_t due = g->dhead[g->off];
  if (due == DCIN_NO_KEY) return;
  g->dhead[g->off] = DCIN_NO_KEY;
  if (g->dnext[due] == DCIN_NO_KEY)
    eject_due(s, d, net, g, due);
  else
    eject_bucket(s, d, net, g, due);
}

/* The eject attempt at a CP_IN: true when the flit left the ring (failures upgrade its E-Tag). */
static bool try_eject(dcin_sim *s, dcin_die *d, int net, dcin_ring *g, int p, uint32_t f) {
  if (!dcin_eject_try(s, d, net, g->node[p], g->lane[p], f)) return false;
  dcin_ring_take(g, p);
  return true;
}


/* One cycle of one ring, equivalent to visiting the slices from the last down to 0 and moving each
 * flit into the next slice if that slice is empty at that moment:
 *   1. flits at CP_IN slices whose route ends or turns here try to eject;
 *   2. everything moves one slice (the frame rotates), except that when both the last slice and
 *      slice 0 were occupied at the start, the train of flits ending at the last slice stays put
 *      (it is shifted back in the frame);
 *   3. compat only: a flit that wrapped into slice 0 is visited again (eject check, then one more
 *      slice), as the reference's scan does. */
static void ring_cycle(dcin_sim *s, dcin_die *d, int net, dcin_ring *g) {
  int len = g->len, last = len - 1;
  bool stall = dcin_ring_at(g, last) != DCIN_NIL && dcin_ring_at(g, 0) != DCIN_NIL;
  bool wraps = !stall && dcin_ring_at(g, last) != DCIN_NIL;
  eject_all_due(s, d, net, g);
  /* A ring with every slice occupied rotates as a whole: the slots of a slotted ring advance
   * every cycle (the rotating slot ids of I-Tag and T0 assume it).  The reference's downward scan
   * would leave such a ring frozen for good, each flit waiting behind the next (compat keeps
   * that). */
  if (stall && g->count == (uint32_t)len && !d->cfg->crossring_compat) {
    stall = false;
    s->st.full_ring_cycles++;
  }
  uint32_t stalled[512];
  int run = 0;
  int lo = last;
  bool refile_after = false;
  if (stall) {
    /* the stalled train: contiguous occupied positions ending at the last slice (after the
     * ejects above, which the reference does before reaching lower slices) */
    while (lo > 0 && dcin_ring_at(g, lo - 1) != DCIN_NIL) lo--;
    if (lo > 0) {
      dcin_ring_shift_back(g, lo, stalled);
      run = len - lo;
    } else {
      /* a frozen full ring (compat): lift the whole train first, then place it, so that it
       * cannot overwrite itself; each flit is filed again below, once the frame has rotated */
      for (int p = lo; p <= last; p++) {
        int i = dcin_ring_idx(g, p);
        stalled[run++] = g->slot[i];
        dcin_ring_unkey(g, i);
        g->slot[i] = DCIN_NIL;
      }
      for (int r = 0; r < run; r++) {
        int i = dcin_ring_idx(g, lo + r), k = i == 0 ? len - 1 : i - 1;
        g->slot[k] = stalled[r];
        g->dkey[k] = DCIN_NO_KEY;
      }
      refile_after = true;
    }
  }
  s->st.flit_hops += g->count - (uint32_t)run;
  g->off = (uint16_t)(g->off + 1 == len ? 0 : g->off + 1);
  /* The lifted flits stand where they stood: file each under its next eject CP_IN from its own
   * position, which is this one when it stands on a CP_IN where it may leave (a flit whose eject
   * just failed there tries again next cycle, as the slice-by-slice scan does). */
  if (refile_after)
    for (int r = 0; r < run; r++) dcin_ring_key(g, dcin_ring_idx(g, lo + r), lo + r, 0);
  if (wraps && d->cfg->crossring_compat) {
    uint32_t f = dcin_ring_at(g, 0);
    if (s->trace) DCIN_TRACE(s, f, "CP_IN", g->node[0], g->lane[0]);
    if (!(g->ej[0] == s->flits[f].ecoord && try_eject(s, d, net, g, 0, f)) &&
        dcin_ring_at(g, 1) == DCIN_NIL) {
      dcin_ring_take(g, 0);
      dcin_ring_put(g, 1, f);
      s->st.flit_hops++;
    }
  }
  if (s->trace) {
    for (int p = 0; p < len; p++) {
      uint32_t f = dcin_ring_at(g, p);
      if (f == DCIN_NIL || g->kind[p] == DCIN_SL_LINK) continue;
      if (wraps && d->cfg->crossring_compat && p == 0) continue; /* traced above */
      bool st = false;
      for (int k = 0; k < run && !st; k++) st = stalled[k] == f;
      if (!st)
        DCIN_TRACE(s, f, g->kind[p] == DCIN_SL_CP_IN ? "CP_IN" : "CP_OUT", g->node[p], g->lane[p]);
    }
  }
}

void dcin_rings_move(dcin_sim *s, dcin_die *d, int net) {
  dcin_ring *rings = d->rings[net];
  int nrings = d->nrings; /* locals: the stores into the rings could alias the die's fields */
  if (d->cfg->crossring_compat || s->trace) {
    for (int r = 0; r < nrings; r++)
      if (rings[r].count) ring_cycle(s, d, net, &rings[r]);
    return;
  }
  /* the common case without a call: no train at the wrap waiting behind slice 0, so after the
   * ejects every flit moves (what ring_cycle does then) */
  for (int r = 0; r < nrings; r++) {
    dcin_ring *g = &rings[r];
    if (!g->count) continue;
    int off = g->off, len = g->len;
    if (g->slot[len - 1 - off] == DCIN_NIL || g->slot[off ? len - off : 0] == DCIN_NIL) {
      eject_all_due(s, d, net, g);
      s->st.flit_hops += g->count;
      g->off = (uint16_t)(off + 1 == len ? 0 : off + 1);
      continue;
    }
    ring_cycle(s, d, net, g);
  }
}
