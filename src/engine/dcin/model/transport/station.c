/* The cross stations of one network of a die in one NoC cycle, after its rings moved: for every
 * node holding flits, in node order, its IPs' l2h into the IQ channel buffers, IQ arbitration
 * (arbiter inputs onto the inject queues), the ring bridge, EQ arbitration, CP injection (with the
 * I-Tag check) and the EQ channel buffers into their IPs' h2l, each visiting only the queues its
 * node's occ bits mark.  Invariant: a stage reads a queue's entries as they were at the
 * start of the cycle (dcin_q_vis) and puts only into queues that took nothing this cycle, so the
 * order of the nodes matters only where the reference's does (I-Tags of one ring).
 *
 * The pass is compiled four times, for XY or YX routing and for the plain or the slow case
 * (crossring_compat or a trace), so that lanes, queues and mask bits are constants and the plain
 * case carries no validation test; an arbitration with one requester takes it without building
 * request masks.
 */
#include "transport.h"

/* The node's IP interfaces on this network: each l2h's head enters its IQ channel buffer. */
DCIN_INLINE uint64_t l2h_in(dcin_sim *s, dcin_flit *flits, dcin_die *d, int net, int node,
                            dcin_node *nd, uint64_t occ, uint64_t now) {
  for (unsigned b = (unsigned)(occ >> DCIN_B_L2H) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    dcin_ip *ip = dcin_ipp(d, node, ipi);
    dcin_q *l2h = &ip->l2h[net], *ch = &nd->iq_ch[ipi];
    if (!dcin_q_vis(l2h, now) || !dcin_q_can_put(ch, now)) continue;
    uint32_t f = dcin_q_pop(l2h);
    if (!l2h->n) occ &= ~DCIN_BIT(DCIN_B_L2H + ipi);
    dcin_q_put(ch, f, now);
    occ |= DCIN_BIT(DCIN_B_IQCH + ipi);
    dcin_ip_inj_del(d, node, ipi, ip);
    dcin_flit *fl = &flits[f];
    fl->route = d->route[fl->src_node * d->cfg->nodes + fl->dst_node];
    if (net == DCIN_NET_REQ) {
      dcin_txn *t = &s->txns[fl->txn];
      if (t->t_req_noc == DCIN_NO_CYCLE) t->t_req_noc = now;
    } else if (net == DCIN_NET_DATA && fl->flit_id == 0) {
      dcin_txn *t = &s->txns[fl->txn];
      if (t->is_read || t->t_data_noc == DCIN_NO_CYCLE) t->t_data_noc = now;
    }
    s->st.flits_injected++;
  }
  return occ;
}

/* IQ: channel buffers -> arbiter inputs, then per direction a round robin over the IPs whose
 * arbiter head goes that way. */
DCIN_INLINE uint64_t iq(const dcin_flit *flits, dcin_node *nd, uint64_t occ, uint64_t now) {
  for (unsigned b = (unsigned)(occ >> DCIN_B_IQCH) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    dcin_q *ch = &nd->iq_ch[ipi], *arb = &nd->iq_arb[ipi];
    if (!dcin_q_vis(ch, now) || !dcin_q_can_put(arb, now)) continue;
    dcin_q_put(arb, dcin_q_pop(ch), now);
    occ |= DCIN_BIT(DCIN_B_IQARB + ipi);
    if (!ch->n) occ &= ~DCIN_BIT(DCIN_B_IQCH + ipi);
  }
  unsigned cand = 0; /* IPs whose arbiter head is visible */
  for (unsigned b = (unsigned)(occ >> DCIN_B_IQARB) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    if (dcin_q_vis(&nd->iq_arb[ipi], now)) cand |= 1u << ipi;
  }
  if (!cand) return occ;
  if (!(cand & (cand - 1))) { /* one requester: it wins its direction if the queue has room */
    int ipi = __builtin_ctz(cand);
    dcin_q *arb = &nd->iq_arb[ipi];
    int dir = flits[dcin_q_front(arb)].route & DCIN_ROUTE_DIR;
    dcin_q *out = &nd->iq_out[dir];
    if (!dcin_q_can_put(out, now)) return occ;
    dcin_q_put(out, dcin_q_pop(arb), now);
    occ |= DCIN_BIT(DCIN_B_IQOUT + dir);
    if (!arb->n) occ &= ~DCIN_BIT(DCIN_B_IQARB + ipi);
    nd->iq_rr[dir] = (uint8_t)(ipi + 1 == DCIN_NUM_IPS ? 0 : ipi + 1);
    return occ;
  }
  unsigned want[DCIN_NUM_IQ_DIRS] = {0}; /* per direction: the IPs whose head requests it */
  unsigned dirs = 0;                     /* directions somebody requests */
  for (unsigned b = cand; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    int dir = flits[dcin_q_front(&nd->iq_arb[ipi])].route & DCIN_ROUTE_DIR;
    want[dir] |= 1u << ipi;
    dirs |= 1u << dir;
  }
  for (; dirs; dirs &= dirs - 1) {
    int dir = __builtin_ctz(dirs);
    dcin_q *out = &nd->iq_out[dir];
    if (!dcin_q_can_put(out, now)) continue;
    int ipi = dcin_rr_pick(want[dir], nd->iq_rr[dir]);
    dcin_q *arb = &nd->iq_arb[ipi];
    dcin_q_put(out, dcin_q_pop(arb), now);
    occ |= DCIN_BIT(DCIN_B_IQOUT + dir);
    if (!arb->n) occ &= ~DCIN_BIT(DCIN_B_IQARB + ipi);
    nd->iq_rr[dir] = (uint8_t)(ipi + 1 == DCIN_NUM_IPS ? 0 : ipi + 1);
  }
  return occ;
}

/* Ring bridge input i (arbiter order: RB in neg, RB in pos, IQ second-dim neg, IQ second-dim
 * pos), its queue and occ bit. */
DCIN_INLINE dcin_q *rb_in(dcin_node *nd, int i, const bool yx) {
  const int lane_p = yx ? DCIN_TR : DCIN_TD, lane_n = yx ? DCIN_TL : DCIN_TU;
  return i == 0 ? &nd->rb_in[1] : i == 1 ? &nd->rb_in[0] : &nd->iq_out[i == 2 ? lane_n : lane_p];
}
DCIN_INLINE int rb_bit(int i, const bool yx) {
  const int lane_p = yx ? DCIN_TR : DCIN_TD, lane_n = yx ? DCIN_TL : DCIN_TU;
  return i == 0 ? DCIN_B_RBIN + 1 : i == 1 ? DCIN_B_RBIN : DCIN_B_IQOUT + (i == 2 ? lane_n : lane_p);
}

/* The flit at the head of ring-bridge input i leaves it for output o: an RB input returns its
 * E-Tag entry. */
DCIN_INLINE uint64_t rb_move(dcin_sim *s, dcin_flit *flits, dcin_die *d, dcin_node *nd,
                             uint64_t occ, uint64_t now, int i, int o, uint8_t *rr, const bool yx) {
  DCIN_COUNT(s, moved_rb);
  dcin_q *in = rb_in(nd, i, yx);
  uint32_t f = i < 2 ? dcin_q_pop_ej(in, now) : dcin_q_pop(in);
  if (!in->n) occ &= ~DCIN_BIT(rb_bit(i, yx));
  dcin_flit *fl = &flits[f];
  if (i < 2) {
    /* the RB input FIFOs: E-Tag rows 0 / 1 of the positive / negative first-dimension lane */
    dcin_etag_release(d, nd, fl->lane & 1, fl->used_entry);
    fl->used_entry = DCIN_T_NONE;
  }
  fl->etag = DCIN_T2;
  dcin_q_put(&nd->rb_out[o], f, now);
  rr[o] = (uint8_t)((i + 1) & 3);
  return occ | DCIN_BIT(DCIN_B_RBOUT + o);
}

/* Ring bridge: the four inputs onto {EQ, second-dim pos, second-dim neg}, a round robin per
 * output over the inputs whose head requests it. */
DCIN_INLINE uint64_t rb(dcin_sim *s, dcin_flit *flits, dcin_die *d, int node, dcin_node *nd,
                        uint64_t occ, uint64_t now, const bool yx, const bool slow) {
  unsigned cand = 0; /* inputs whose head is visible, by arbiter order */
  DCIN_UNROLL(4)
  for (int i = 0; i < 4; i++) {
    const dcin_q *q = rb_in(nd, i, yx);
    if ((occ & DCIN_BIT(rb_bit(i, yx))) && (i < 2 ? dcin_q_vis_ej(q, now) : dcin_q_vis(q, now)))
      cand |= 1u << i;
  }
  if (!cand) return occ;
  /* reference quirk: one set of RB pointers per node, shared by the three networks */
  uint8_t *rr = slow && d->cfg->crossring_compat ? d->nodes[0][node].rb_rr : nd->rb_rr;
  if (!(cand & (cand - 1))) {
    int i = __builtin_ctz(cand);
    int o = flits[dcin_q_front(rb_in(nd, i, yx))].route >> DCIN_ROUTE_RB_SHIFT;
    if (!dcin_q_can_put(&nd->rb_out[o], now)) return occ;
    return rb_move(s, flits, d, nd, occ, now, i, o, rr, yx);
  }
  unsigned want[DCIN_NUM_RB_OUT] = {0}; /* per output: the inputs whose head requests it */
  for (unsigned b = cand; b; b &= b - 1) {
    int i = __builtin_ctz(b);
    want[flits[dcin_q_front(rb_in(nd, i, yx))].route >> DCIN_ROUTE_RB_SHIFT] |= 1u << i;
  }
  DCIN_UNROLL(3)
  for (int o = 0; o < DCIN_NUM_RB_OUT; o++) {
    if (!want[o] || !dcin_q_can_put(&nd->rb_out[o], now)) continue;
    int i = dcin_rr_pick(want[o], rr[o]);
    switch (i) { /* the input as a constant */
      case 0:
        occ = rb_move(s, flits, d, nd, occ, now, 0, o, rr, yx);
        break;
      case 1:
        occ = rb_move(s, flits, d, nd, occ, now, 1, o, rr, yx);
        break;
      case 2:
        occ = rb_move(s, flits, d, nd, occ, now, 2, o, rr, yx);
        break;
      default:
        occ = rb_move(s, flits, d, nd, occ, now, 3, o, rr, yx);
    }
  }
  return occ;
}

/* EQ: its four inputs (second-dim pos / neg, IQ loop-back, RB to EQ) into their arbiter inputs,
 * then per IP channel a round robin over the ports whose head goes there. */
DCIN_INLINE uint64_t eq(dcin_sim *s, dcin_flit *flits, dcin_die *d, int node, dcin_node *nd,
                        uint64_t occ, uint64_t now, const bool slow) {
  /* the EQ input FIFOs: E-Tag rows 2 / 3 of the positive / negative second-dimension lane */
  static const int bit[DCIN_NUM_EQ_PORTS] = {DCIN_B_EQIN, DCIN_B_EQIN + 1,
                                             DCIN_B_IQOUT + DCIN_IQ_EQ, DCIN_B_RBOUT + DCIN_RB_EQ};
  /* port order of the arbiter: second-dim neg, pos, IQ, RB */
  static const int port_of[DCIN_NUM_EQ_PORTS] = {DCIN_EQP_P, DCIN_EQP_N, DCIN_EQP_IQ, DCIN_EQP_RB};
  DCIN_UNROLL(4)
  for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++) {
    if (!(occ & DCIN_BIT(bit[i]))) continue;
    dcin_q *src = i == 0   ? &nd->eq_in[0]
                  : i == 1 ? &nd->eq_in[1]
                  : i == 2 ? &nd->iq_out[DCIN_IQ_EQ]
                           : &nd->rb_out[DCIN_RB_EQ];
    dcin_q *a = &nd->eq_arb[port_of[i]];
    if (!(i < 2 ? dcin_q_vis_ej(src, now) : dcin_q_vis(src, now)) || !dcin_q_can_put(a, now))
      continue;
    uint32_t f = i < 2 ? dcin_q_pop_ej(src, now) : dcin_q_pop(src);
    if (!src->n) occ &= ~DCIN_BIT(bit[i]);
    if (i < 2) {
      dcin_flit *fl = &flits[f];
      dcin_etag_release(d, nd, 2 + i, fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
      fl->etag = DCIN_T2;
    }
    dcin_q_put(a, f, now);
    occ |= DCIN_BIT(DCIN_B_EQARB + port_of[i]);
  }
  unsigned cand = 0; /* ports whose head is visible */
  for (unsigned b = (unsigned)(occ >> DCIN_B_EQARB) & 0xf; b; b &= b - 1) {
    int p = __builtin_ctz(b);
    if (dcin_q_vis(&nd->eq_arb[p], now)) cand |= 1u << p;
  }
  if (!cand) return occ;
  /* reference quirk: one set of EQ pointers per node, shared by the three networks */
  uint8_t *rr = slow && d->cfg->crossring_compat ? d->nodes[0][node].eq_rr : nd->eq_rr;
  unsigned want[DCIN_NUM_IPS]; /* per IP channel: the ports whose head requests it */
  unsigned ips = 0;            /* IP channels somebody requests */
  if (!(cand & (cand - 1))) {
    int p = __builtin_ctz(cand);
    int ip = flits[dcin_q_front(&nd->eq_arb[p])].dst_ip;
    want[ip] = cand;
    ips = 1u << ip;
  } else {
    for (int k = 0; k < DCIN_NUM_IPS; k++) want[k] = 0;
    for (unsigned b = cand; b; b &= b - 1) {
      int p = __builtin_ctz(b);
      int ip = flits[dcin_q_front(&nd->eq_arb[p])].dst_ip;
      want[ip] |= 1u << p;
      ips |= 1u << ip;
    }
  }
  for (; ips; ips &= ips - 1) {
    int ipi = __builtin_ctz(ips);
    dcin_q *out = &nd->eq_ch[ipi];
    if (!dcin_q_can_put(out, now)) continue;
    int p = dcin_rr_pick(want[ipi], rr[ipi]);
    dcin_q *arb = &nd->eq_arb[p];
    uint32_t g = dcin_q_pop(arb);
    if (!arb->n) occ &= ~DCIN_BIT(DCIN_B_EQARB + p);
    dcin_q_put(out, g, now);
    occ |= DCIN_BIT(DCIN_B_EQCH + ipi);
    if (slow) DCIN_TRACE(s, g, "EQ_CH", node, -1);
    rr[ipi] = (uint8_t)((p + 1) & 3);
  }
  return occ;
}

/* The node's IP interfaces on this network, after the EQ: each EQ channel buffer's head enters
 * its IP's h2l_h, each h2l_h's head its h2l_l (there the IP takes it at its clock, ip_eject.c). */
DCIN_INLINE uint64_t eq_out(dcin_die *d, int net, int node, dcin_node *nd, uint64_t occ,
                            uint64_t now) {
  for (unsigned b = (unsigned)((occ >> DCIN_B_EQCH) | (occ >> DCIN_B_H2LH)) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    dcin_ip *ip = dcin_ipp(d, node, ipi);
    dcin_q *ch = &nd->eq_ch[ipi], *h = &ip->h2l_h[net], *l = &ip->h2l_l[net];
    if ((occ & DCIN_BIT(DCIN_B_EQCH + ipi)) && dcin_q_vis(ch, now) && dcin_q_can_put(h, now)) {
      dcin_q_put(h, dcin_q_pop(ch), now);
      if (!ch->n) occ &= ~DCIN_BIT(DCIN_B_EQCH + ipi);
      occ |= DCIN_BIT(DCIN_B_H2LH + ipi);
      ip->h2l_n++;
      ip->busy++;
    }
    if ((occ & DCIN_BIT(DCIN_B_H2LH + ipi)) && dcin_q_vis(h, now) && dcin_q_can_put(l, now)) {
      dcin_q_put(l, dcin_q_pop(h), now);
      if (!h->n) occ &= ~DCIN_BIT(DCIN_B_H2LH + ipi);
      if (!ip->rx_n++) dcin_ipset_add(d->ip_ej, node, ipi);
    }
  }
  return occ;
}

/* CP injection of one lane: the head of its source queue enters the lane's CP_OUT slice if the
 * slice is empty and its slot is not reserved by another node's I-Tag; otherwise every flit of the
 * queue counts a wait cycle, and a head that has waited past the trigger reserves the passing
 * slot.  Slot ids equal frame indices while a ring holds flits (dcin_ring_rebase).  Returns true
 * when the head left. */
DCIN_INLINE bool cp_lane(dcin_sim *s, dcin_flit *flits, dcin_die *d, int node, dcin_node *nd,
                         const dcin_cp_site *site, dcin_q *q, int lane, const int pdim,
                         uint64_t now, const bool slow) {
  unsigned n = dcin_q_vis(q, now);
  if (!n) return false;
  const dcin_cfg *c = d->cfg;
  const bool compat = slow && c->crossring_compat;
  uint32_t f = dcin_q_front(q);
  dcin_flit *fl = &flits[f];
  uint32_t wait = pdim == 0 ? fl->wait_h : fl->wait_v;
  if (compat && wait == (uint32_t)c->itag_th[pdim] && nd->itag_req[lane] < 255)
    nd->itag_req[lane]++;
  int me = node * 4 + lane;
  dcin_ring *g = site->g;
  dcin_ring_rebase(g, now, c->net_scale);
  int sl = site->idx - g->off;            /* the slot id: the frame index at CP_OUT */
  if (sl < 0) sl += g->len;
  int16_t *tag = &g->itag[sl];
  if (g->slot[sl] != DCIN_NIL) {
    if (*tag < 0 && wait > (uint32_t)c->itag_th[pdim] && nd->itag_out[lane] < c->itag_max[pdim] &&
        !(compat && nd->itag_req[lane])) {
      *tag = (int16_t)me;
      nd->itag_out[lane]++;
      fl->itag = (uint8_t)(1 + (sl & 0x7f)); /* remembers the slot loosely; see below */
      fl->slot = (uint16_t)sl;
      if (pdim == 0)
        s->st.itag_h++;
      else
        s->st.itag_v++;
    }
  } else if (*tag < 0 || *tag == me) {
    if (*tag == me) {
      *tag = -1;
      nd->itag_out[lane]--;
    } else if (fl->itag) {
      /* the tagged flit found another free slot: drop its reservation */
      int16_t *old = &g->itag[fl->slot];
      if (*old == me) {
        *old = -1;
        nd->itag_out[lane]--;
      }
    }
    fl->itag = 0;
    fl->slot = (uint16_t)sl;
    fl->etag = DCIN_T2;
    fl->lane = (uint8_t)lane;
    fl->ecoord = d->ekey[fl->dst_node * 2 + g->dim];
    g->slot[sl] = f;
    g->count++;
    DCIN_COUNT(s, moved_ring);
    /* filed under the off value at which it stands on its exit CP_IN (dcin_ring_key) */
    uint16_t k = site->key[fl->dst_node];
    if (k != DCIN_NO_KEY) {
      int v = g->off + k;
      if (v >= g->len) v -= g->len;
      g->dkey[sl] = (uint16_t)v;
      g->dnext[sl] = g->dhead[v];
      g->dhead[v] = (uint16_t)sl;
    } else {
      g->dkey[sl] = DCIN_NO_KEY;
    }
    if (slow) DCIN_TRACE(s, f, "CP_OUT", node, lane);
    dcin_q_pop(q);
    return true;
  }
  for (unsigned i = 0; i < n; i++) {
    dcin_flit *w = &flits[dcin_q_at(q, i)];
    if (pdim == 0)
      w->wait_h++;
    else
      w->wait_v++;
  }
  return false;
}

/* The lanes in the reference's order, TL TR (horizontal) then TU TD (vertical), each only when its
 * source queue holds a flit: first-dimension lanes inject from their IQ queue, second-dimension
 * ones from the ring bridge's output of their direction. */
DCIN_INLINE uint64_t cp(dcin_sim *s, dcin_flit *flits, dcin_die *d, int net, int node,
                        dcin_node *nd, uint64_t occ, uint64_t now, const bool yx,
                        const bool slow) {
  static const int lanes[4] = {DCIN_TL, DCIN_TR, DCIN_TU, DCIN_TD};
  const dcin_cp_site *sites = &d->cp_site[net][node * 4];
  DCIN_UNROLL(4)
  for (int k = 0; k < 4; k++) {
    int lane = lanes[k];
    bool first = (lane == DCIN_TR || lane == DCIN_TL) != yx;
    int b = first ? DCIN_B_IQOUT + lane : DCIN_B_RBOUT + ((lane & 1) ? DCIN_RB_N : DCIN_RB_P);
    dcin_q *q = first ? &nd->iq_out[lane] : &nd->rb_out[(lane & 1) ? DCIN_RB_N : DCIN_RB_P];
    if ((occ & DCIN_BIT(b)) &&
        cp_lane(s, flits, d, node, nd, &sites[lane], q, lane, k >> 1, now, slow) && !q->n)
      occ &= ~DCIN_BIT(b);
  }
  return occ;
}

void dcin_cp_inject(dcin_sim *s, dcin_die *d, int net, int node) {
  dcin_node *nd = &d->nodes[net][node];
  nd->occ = d->cfg->yx ? cp(s, s->flits, d, net, node, nd, nd->occ, s->cyc, true, true)
                       : cp(s, s->flits, d, net, node, nd, nd->occ, s->cyc, false, true);
}

/* The pass, with the routing and the plain / slow case as constants. */
DCIN_INLINE void stations(dcin_sim *s, dcin_die *d, int net, const bool yx, const bool slow) {
  const uint64_t now = s->cyc;
  dcin_flit *const flits = s->flits; /* a local: byte stores could alias s->flits */
  const int lane_p = yx ? DCIN_TR : DCIN_TD, lane_n = yx ? DCIN_TL : DCIN_TU;
  const int first_p = yx ? DCIN_TD : DCIN_TR, first_n = yx ? DCIN_TU : DCIN_TL;
  const uint64_t m_rb = DCIN_BIT(DCIN_B_RBIN) | DCIN_BIT(DCIN_B_RBIN + 1) |
                        DCIN_BIT(DCIN_B_IQOUT + lane_p) | DCIN_BIT(DCIN_B_IQOUT + lane_n);
  const uint64_t m_eq = DCIN_BIT(DCIN_B_EQIN) | DCIN_BIT(DCIN_B_EQIN + 1) |
                        DCIN_BIT(DCIN_B_IQOUT + DCIN_IQ_EQ) | DCIN_BIT(DCIN_B_RBOUT + DCIN_RB_EQ) |
                        0xfull << DCIN_B_EQARB;
  const uint64_t m_cp = DCIN_BIT(DCIN_B_IQOUT + first_p) | DCIN_BIT(DCIN_B_IQOUT + first_n) |
                        DCIN_BIT(DCIN_B_RBOUT + DCIN_RB_P) | DCIN_BIT(DCIN_B_RBOUT + DCIN_RB_N);
  dcin_node *nodes = d->nodes[net];
  uint64_t *busy = d->busym[net];
  for (int w = 0, nw = d->mwords; w < nw; w++)
    for (uint64_t m = busy[w]; m; m &= m - 1) { /* nodes holding flits, in order */
      int node = w * 64 + __builtin_ctzll(m);
      dcin_node *nd = &nodes[node];
      uint64_t occ = nd->occ; /* a local: the queues' stamps could alias it */
      if (occ & 0x3full << DCIN_B_L2H) occ = l2h_in(s, flits, d, net, node, nd, occ, now);
      if (occ & DCIN_M_IQ) occ = iq(flits, nd, occ, now);
      if (occ & m_rb) occ = rb(s, flits, d, node, nd, occ, now, yx, slow);
      if (occ & m_eq) occ = eq(s, flits, d, node, nd, occ, now, slow);
      if (occ & m_cp) occ = cp(s, flits, d, net, node, nd, occ, now, yx, slow);
      if (occ & DCIN_M_OUT) occ = eq_out(d, net, node, nd, occ, now);
      nd->occ = occ;
      if (!occ) {
        busy[w] &= ~(1ull << (node & 63));
        d->nact[net]--;
      }
    }
}

void dcin_stations_step(dcin_sim *s, dcin_die *d, int net) {
  if (d->slow) {
    if (d->cfg->yx)
      stations(s, d, net, true, true);
    else
      stations(s, d, net, false, true);
  } else if (d->cfg->yx) {
    stations(s, d, net, true, false);
  } else {
    stations(s, d, net, false, false);
  }
}
