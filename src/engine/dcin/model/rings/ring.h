/* The rings of slices: positions in a rotating frame, the eject buckets that say which flits stand
 * on their exit CP_IN in a cycle, and the geometry built with the die (ring.c).  Invariant: slot[],
 * count and the buckets change only through the writers below.
 */
#ifndef CS_DCIN_RING_H
#define CS_DCIN_RING_H

#include "../state.h"

/* Frame index of position p. */
static inline int dcin_ring_idx(const dcin_ring *g, int p) {
  int k = p - g->off;
  return k < 0 ? k + g->len : k;
}
/* The flit at position p, or DCIN_NIL. */
static inline uint32_t dcin_ring_at(const dcin_ring *g, int p) {
  return g->slot[dcin_ring_idx(g, p)];
}
/* Files frame index i (whose flit stands at position p) under the off value at which it reaches
 * its next eject CP_IN at least `from` slices ahead (from is 0 or 1). */
static inline void dcin_ring_key(dcin_ring *g, int i, int p, int from) {
  int e = (*g->flits)[g->slot[i]].ecoord;
  int row = e >= 0 && e < g->necoord ? g->eidx[e] : -1;
  uint16_t key = DCIN_NO_KEY;
  if (row >= 0) {
    int q = p + from;
    if (q >= g->len) q -= g->len;
    uint16_t k = g->ndist[row * g->len + q];
    if (k != DCIN_NO_KEY) {
      int v = g->off + from + k; /* < 3 len */
      while (v >= g->len) v -= g->len;
      key = (uint16_t)v;
    }
  }
  g->dkey[i] = key;
  if (key != DCIN_NO_KEY) {
    g->dnext[i] = g->dhead[key];
    g->dhead[key] = (uint16_t)i;
  }
}
/* Takes frame index i out of its bucket. */
static inline void dcin_ring_unkey(dcin_ring *g, int i) {
  uint16_t key = g->dkey[i];
  if (key == DCIN_NO_KEY) return;
  uint16_t *pp = &g->dhead[key];
  while (*pp != i) pp = &g->dnext[*pp];
  *pp = g->dnext[i];
  g->dkey[i] = DCIN_NO_KEY;
}
/* Slot ids (I-Tag, T0) rotate one position per NoC cycle: after the movement of NoC cycle k the
 * slice at position p passes slot (p - k - 1) mod len.  A ring holding flits keeps its frame so
 * that the slot id of a position is its frame index: its off is (k + 1) mod len then (it rotates
 * once per NoC cycle), and an empty ring is rebased when a flit enters it.  Called after the
 * movement of the current NoC cycle. */
static inline void dcin_ring_rebase(dcin_ring *g, uint64_t cyc, int net_scale) {
  if (!g->count) g->off = (uint16_t)((cyc / (uint64_t)net_scale + 1) % g->len);
}
/* The only writers of ring slices (by position): they keep slot[], count and the eject
 * buckets consistent. */
static inline void dcin_ring_put(dcin_ring *g, int p, uint32_t f) {
  int i = dcin_ring_idx(g, p);
  g->slot[i] = f;
  g->count++;
  dcin_ring_key(g, i, p, 0);
}
/* CP injection at position p, after dcin_ring_rebase (so the frame index is the slot id). */
static inline void dcin_ring_put_cp(dcin_ring *g, int p, uint32_t f) {
  int i = dcin_ring_idx(g, p);
  g->slot[i] = f;
  g->count++;
  dcin_ring_key(g, i, p, 0);
}
static inline uint32_t dcin_ring_take(dcin_ring *g, int p) {
  int i = dcin_ring_idx(g, p);
  uint32_t f = g->slot[i];
  dcin_ring_unkey(g, i);
  g->slot[i] = DCIN_NIL;
  g->count--;
  return f;
}


/* ring.c */
/* Builds the die's rings and their geometry tables (CP_IN / CP_OUT per node and lane, exits,
 * routes, the I-Tag and T0 tables). */
int dcin_ring_build(dcin_sim *s, dcin_die *d, cs_err *err);
int dcin_first_lane(const dcin_cfg *c, int src, int dst); /* lane of the first hop, or IQ_EQ */
int dcin_eject_key(const dcin_cfg *c, int node, int dim);

/* The train at positions lo..len-1 of a ring whose wrap is blocked (lo > 0) is shifted back one
 * frame index so that it stays put when the frame rotates; its flits are listed in stalled[]. */
void dcin_ring_shift_back(dcin_ring *g, int lo, uint32_t *stalled);

#endif
