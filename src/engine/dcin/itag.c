/* I-Tag and CP injection: a node whose inject-queue head has waited longer than the trigger
 * reserves the passing slot of its CP_OUT; a reserved slot is usable only by its reserver, and
 * using it (or injecting the tagged flit elsewhere) releases the tag.  Invariant: per (node, lane)
 * at most itag_max tags are outstanding, and itag_slot[] names the reserver of every reserved slot.
 */
#include "dcin_int.h"

/* Slot ids rotate one position per NoC cycle; the ring has advanced netcyc + 1 times by the time
 * flits inject in NoC cycle netcyc (the reference advances first thing in every cycle). */
DCIN_INLINE uint32_t slot_id(dcin_sim *s, const dcin_die *d, dcin_ring *g, int idx) {
  if (s->netcyc_of != s->cyc) {
    s->netcyc1 = s->cyc / (uint64_t)d->cfg->net_scale + 1;
    s->netcyc_of = s->cyc;
  }
  if (g->slot_of != s->cyc) { /* one division per ring and cycle, not per injection attempt */
    g->slot_rot = (uint32_t)(s->netcyc1 % g->len);
    g->slot_of = s->cyc;
  }
  uint32_t k = (uint32_t)idx + g->len - g->slot_rot;
  return k >= g->len ? k - g->len : k;
}

/* The CP_OUT of (node, lane) in this cycle: its ring, slice, passing slot and that slot's tag. */
typedef struct cp_out_at {
  int idx, me;
  dcin_ring *g;
  uint32_t sl;
  int16_t *tag;
} cp_out_at;

DCIN_INLINE cp_out_at cp_out_of(dcin_sim *s, dcin_die *d, int net, int node, int lane) {
  cp_out_at a;
  a.me = node * 4 + lane;
  const dcin_cp_site *site = &d->cp_site[net][a.me];
  a.g = site->g;
  a.idx = site->idx;
  a.sl = slot_id(s, d, a.g, a.idx);
  a.tag = &a.g->itag[a.sl];
  return a;
}

DCIN_INLINE bool can_inject(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f,
                            const cp_out_at *a) {
  dcin_node *nd = &d->nodes[net][node];
  dcin_flit *fl = &s->flits[f];
  int dim = (lane == DCIN_TR || lane == DCIN_TL) ? 0 : 1;
  if (dcin_ring_at(a->g, a->idx) != DCIN_NIL) {
    uint32_t wait = dim == 0 ? fl->wait_h : fl->wait_v;
    if (*a->tag < 0 && wait > (uint32_t)d->cfg->itag_th[dim] &&
        nd->itag_out[lane] < d->cfg->itag_max[dim] &&
        !(d->cfg->crossring_compat && nd->itag_req[lane])) {
      *a->tag = (int16_t)a->me;
      nd->itag_out[lane]++;
      fl->itag = (uint8_t)(1 + (a->sl & 0x7f)); /* remembers the slot loosely; see on_inject */
      fl->slot = (uint16_t)a->sl;
      if (dim == 0)
        s->st.itag_h++;
      else
        s->st.itag_v++;
    }
    return false;
  }
  return *a->tag < 0 || *a->tag == a->me;
}

DCIN_INLINE void on_inject(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f,
                           const cp_out_at *a) {
  dcin_node *nd = &d->nodes[net][node];
  dcin_flit *fl = &s->flits[f];
  if (*a->tag == a->me) {
    *a->tag = -1;
    nd->itag_out[lane]--;
  } else if (fl->itag) {
    /* the tagged flit found another free slot: drop its reservation */
    int16_t *old = &a->g->itag[fl->slot];
    if (*old == a->me) {
      *old = -1;
      nd->itag_out[lane]--;
    }
  }
  fl->itag = 0;
  fl->slot = (uint16_t)a->sl;
  fl->etag = DCIN_T2;
  fl->lane = (uint8_t)lane;
  fl->ecoord = d->ekey[fl->dst_node * 2 + a->g->dim];
  dcin_ring_put(a->g, a->idx, f);
  DCIN_TRACE(s, f, "CP_OUT", node, lane);
}

bool dcin_itag_can_inject(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  cp_out_at a = cp_out_of(s, d, net, node, lane);
  return can_inject(s, d, net, node, lane, f, &a);
}

void dcin_itag_on_inject(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f) {
  cp_out_at a = cp_out_of(s, d, net, node, lane);
  on_inject(s, d, net, node, lane, f, &a);
}

/* CP injection of a node: the head of each lane's source queue (first-dimension lanes from the
 * IQ, second-dimension lanes from the ring-bridge outputs) enters its CP_OUT slice if the I-Tag
 * check lets it; otherwise every flit of that queue counts a wait cycle. */
DCIN_INLINE void cp_inject_lane(dcin_sim *s, dcin_die *d, int net, int node, dcin_node *nd,
                                int lane, int pdim) {
  if (!(nd->occ & DCIN_BIT(d->cp_bit[lane]))) return;
  dcin_q *q = (dcin_q *)((char *)nd + d->cp_src[lane]);
  unsigned n = dcin_q_vis(q, s->cyc);
  if (!n) return;
  const dcin_cfg *c = d->cfg;
  uint32_t f = dcin_q_front(q);
  if (c->crossring_compat &&
      (pdim == 0 ? s->flits[f].wait_h : s->flits[f].wait_v) == (uint32_t)c->itag_th[pdim] &&
      nd->itag_req[lane] < 255)
    nd->itag_req[lane]++;
  cp_out_at a = cp_out_of(s, d, net, node, lane);
  if (can_inject(s, d, net, node, lane, f, &a)) {
    on_inject(s, d, net, node, lane, f, &a); /* on the ring now */
    dcin_node_take(d, net, node, nd, q, d->cp_bit[lane]);
    return;
  }
  for (unsigned i = 0; i < n; i++) {
    dcin_flit *w = &s->flits[dcin_q_at(q, i)];
    if (pdim == 0)
      w->wait_h++;
    else
      w->wait_v++;
  }
}

/* The lanes in the reference's order, TL TR (horizontal) then TU TD (vertical), each expanded
 * with its lane and dimension as constants: most visits find most source queues empty. */
void dcin_cp_inject(dcin_sim *s, dcin_die *d, int net, int node) {
  dcin_node *nd = &d->nodes[net][node];
  cp_inject_lane(s, d, net, node, nd, DCIN_TL, 0);
  cp_inject_lane(s, d, net, node, nd, DCIN_TR, 0);
  cp_inject_lane(s, d, net, node, nd, DCIN_TU, 1);
  cp_inject_lane(s, d, net, node, nd, DCIN_TD, 1);
}
