/* The cross stations of one network of a die in one NoC cycle, after its rings moved: for every
 * node holding flits, in node order, IQ arbitration (arbiter inputs onto the inject queues), the
 * ring bridge, EQ arbitration and CP injection (with the I-Tag check), each visiting only the
 * queues its node's occ bits mark.  Invariant: a stage reads a queue's entries as they were at the
 * start of the cycle (dcin_q_vis) and puts only into queues that took nothing this cycle, so the
 * order of the nodes matters only where the reference's does (I-Tags of one ring).
 */
#include "transport.h"

/* IQ: channel buffers -> arbiter inputs, then per direction a round robin over the IPs whose
 * arbiter head goes that way. */
DCIN_INLINE uint64_t iq(const dcin_sim *s, dcin_node *nd, uint64_t occ, uint64_t now) {
  for (unsigned b = (unsigned)(occ >> DCIN_B_IQCH) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    dcin_q *ch = &nd->iq_ch[ipi], *arb = &nd->iq_arb[ipi];
    if (!dcin_q_vis(ch, now) || !dcin_q_can_put(arb, now)) continue;
    dcin_q_put(arb, dcin_q_pop(ch), now);
    occ |= DCIN_BIT(DCIN_B_IQARB + ipi);
    if (!ch->n) occ &= ~DCIN_BIT(DCIN_B_IQCH + ipi);
  }
  unsigned want[DCIN_NUM_IQ_DIRS] = {0}; /* per direction: the IPs whose head requests it */
  unsigned dirs = 0;                     /* directions somebody requests */
  for (unsigned b = (unsigned)(occ >> DCIN_B_IQARB) & 0x3f; b; b &= b - 1) {
    int ipi = __builtin_ctz(b);
    const dcin_q *arb = &nd->iq_arb[ipi];
    if (!dcin_q_vis(arb, now)) continue;
    int dir = s->flits[dcin_q_front(arb)].route & DCIN_ROUTE_DIR;
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

/* Ring bridge: {RB in neg, RB in pos, IQ second-dim neg, IQ second-dim pos} onto {EQ, second-dim
 * pos, second-dim neg}; a flit leaving an RB input returns its E-Tag entry. */
DCIN_INLINE uint64_t rb(dcin_sim *s, dcin_die *d, int node, dcin_node *nd, uint64_t occ,
                        uint64_t now, const bool yx) {
  const int lane_p = yx ? DCIN_TR : DCIN_TD, lane_n = yx ? DCIN_TL : DCIN_TU;
  dcin_q *in[4] = {&nd->rb_in[1], &nd->rb_in[0], &nd->iq_out[lane_n], &nd->iq_out[lane_p]};
  const int bit[4] = {DCIN_B_RBIN + 1, DCIN_B_RBIN, DCIN_B_IQOUT + lane_n, DCIN_B_IQOUT + lane_p};
  unsigned want[DCIN_NUM_RB_OUT] = {0}; /* per output: the inputs whose head requests it */
  DCIN_UNROLL(4)
  for (int i = 0; i < 4; i++) {
    if (!(occ & DCIN_BIT(bit[i])) || !(i < 2 ? dcin_q_vis_ej(in[i], now) : dcin_q_vis(in[i], now)))
      continue;
    want[s->flits[dcin_q_front(in[i])].route >> DCIN_ROUTE_RB_SHIFT] |= 1u << i;
  }
  if (!(want[0] | want[1] | want[2])) return occ;
  /* reference quirk: one set of RB pointers per node, shared by the three networks */
  uint8_t *rr = d->cfg->crossring_compat ? d->nodes[0][node].rb_rr : nd->rb_rr;
  DCIN_UNROLL(3)
  for (int o = 0; o < DCIN_NUM_RB_OUT; o++) {
    dcin_q *out = &nd->rb_out[o];
    if (!want[o] || !dcin_q_can_put(out, now)) continue;
    int i = dcin_rr_pick(want[o], rr[o]);
    uint32_t f = i < 2 ? dcin_q_pop_ej(in[i], now) : dcin_q_pop(in[i]);
    if (!in[i]->n) occ &= ~DCIN_BIT(bit[i]);
    dcin_flit *fl = &s->flits[f];
    if (i < 2) {
      /* the RB input FIFOs: E-Tag rows 0 / 1 of the positive / negative first-dimension lane */
      dcin_etag_release(d, nd, fl->lane & 1, fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
    }
    fl->etag = DCIN_T2;
    dcin_q_put(out, f, now);
    occ |= DCIN_BIT(DCIN_B_RBOUT + o);
    rr[o] = (uint8_t)((i + 1) & 3);
  }
  return occ;
}

/* EQ: its four inputs (second-dim pos / neg, IQ loop-back, RB to EQ) into their arbiter inputs,
 * then per IP channel a round robin over the ports whose head goes there. */
DCIN_INLINE uint64_t eq(dcin_sim *s, dcin_die *d, int net, int node, dcin_node *nd, uint64_t occ,
                        uint64_t now) {
  /* the EQ input FIFOs: E-Tag rows 2 / 3 of the positive / negative second-dimension lane */
  dcin_q *src[DCIN_NUM_EQ_PORTS] = {&nd->eq_in[0], &nd->eq_in[1], &nd->iq_out[DCIN_IQ_EQ],
                                    &nd->rb_out[DCIN_RB_EQ]};
  static const int bit[DCIN_NUM_EQ_PORTS] = {DCIN_B_EQIN, DCIN_B_EQIN + 1,
                                             DCIN_B_IQOUT + DCIN_IQ_EQ, DCIN_B_RBOUT + DCIN_RB_EQ};
  /* port order of the arbiter: second-dim neg, pos, IQ, RB */
  static const int port_of[DCIN_NUM_EQ_PORTS] = {DCIN_EQP_P, DCIN_EQP_N, DCIN_EQP_IQ, DCIN_EQP_RB};
  DCIN_UNROLL(4)
  for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++) {
    dcin_q *a = &nd->eq_arb[port_of[i]];
    if (!(occ & DCIN_BIT(bit[i])) ||
        !(i < 2 ? dcin_q_vis_ej(src[i], now) : dcin_q_vis(src[i], now)) || !dcin_q_can_put(a, now))
      continue;
    uint32_t f = i < 2 ? dcin_q_pop_ej(src[i], now) : dcin_q_pop(src[i]);
    if (!src[i]->n) occ &= ~DCIN_BIT(bit[i]);
    if (i < 2) {
      dcin_flit *fl = &s->flits[f];
      dcin_etag_release(d, nd, 2 + i, fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
      fl->etag = DCIN_T2;
    }
    dcin_q_put(a, f, now);
    occ |= DCIN_BIT(DCIN_B_EQARB + port_of[i]);
  }
  unsigned want[DCIN_NUM_IPS] = {0}; /* per IP channel: the ports whose head requests it */
  unsigned ips = 0;                  /* IP channels somebody requests */
  for (unsigned b = (unsigned)(occ >> DCIN_B_EQARB) & 0xf; b; b &= b - 1) {
    int p = __builtin_ctz(b);
    if (!dcin_q_vis(&nd->eq_arb[p], now)) continue;
    int ip = s->flits[dcin_q_front(&nd->eq_arb[p])].dst_ip;
    want[ip] |= 1u << p;
    ips |= 1u << ip;
  }
  if (!ips) return occ;
  /* reference quirk: one set of EQ pointers per node, shared by the three networks */
  uint8_t *rr = d->cfg->crossring_compat ? d->nodes[0][node].eq_rr : nd->eq_rr;
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
    dcin_ip *to = dcin_ipp(d, node, ipi);
    if (!to->eqch++ && !to->h2l_n) dcin_ipset_add(d->ip_ej, node, ipi);
    to->eqch_net[net]++;
    DCIN_TRACE(s, g, "EQ_CH", node, -1);
    rr[ipi] = (uint8_t)((p + 1) & 3);
  }
  return occ;
}

/* CP injection of one lane: the head of its source queue enters the lane's CP_OUT slice if the
 * slice is empty and its slot is not reserved by another node's I-Tag; otherwise every flit of the
 * queue counts a wait cycle, and a head that has waited past the trigger reserves the passing
 * slot.  Slot ids equal frame indices while a ring holds flits (dcin_ring_rebase).  Returns true
 * when the head left. */
DCIN_INLINE bool cp_lane(dcin_sim *s, dcin_die *d, int net, int node, dcin_node *nd, dcin_q *q,
                         int lane, int pdim, uint64_t now) {
  unsigned n = dcin_q_vis(q, now);
  if (!n) return false;
  const dcin_cfg *c = d->cfg;
  uint32_t f = dcin_q_front(q);
  dcin_flit *fl = &s->flits[f];
  uint32_t *wait = pdim == 0 ? &fl->wait_h : &fl->wait_v;
  if (c->crossring_compat && *wait == (uint32_t)c->itag_th[pdim] && nd->itag_req[lane] < 255)
    nd->itag_req[lane]++;
  int me = node * 4 + lane;
  const dcin_cp_site *site = &d->cp_site[net][me];
  dcin_ring *g = site->g;
  dcin_ring_rebase(g, now, c->net_scale);
  uint32_t sl = (uint32_t)dcin_ring_idx(g, site->idx); /* the slot id */
  int16_t *tag = &g->itag[sl];
  if (g->slot[sl] != DCIN_NIL) {
    if (*tag < 0 && *wait > (uint32_t)c->itag_th[pdim] && nd->itag_out[lane] < c->itag_max[pdim] &&
        !(c->crossring_compat && nd->itag_req[lane])) {
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
    dcin_ring_put_cp(g, site->idx, f);
    DCIN_TRACE(s, f, "CP_OUT", node, lane);
    dcin_q_pop(q);
    return true;
  }
  for (unsigned i = 0; i < n; i++) {
    dcin_flit *w = &s->flits[dcin_q_at(q, i)];
    if (pdim == 0)
      w->wait_h++;
    else
      w->wait_v++;
  }
  return false;
}

/* The lanes in the reference's order, TL TR (horizontal) then TU TD (vertical), each only when its
 * source queue holds a flit. */
DCIN_INLINE uint64_t cp(dcin_sim *s, dcin_die *d, int net, int node, dcin_node *nd, uint64_t occ,
                        uint64_t now, const bool yx) {
  static const int lanes[4] = {DCIN_TL, DCIN_TR, DCIN_TU, DCIN_TD};
  DCIN_UNROLL(4)
  for (int k = 0; k < 4; k++) {
    int lane = lanes[k];
    /* first-dimension lanes inject from their IQ queue, second-dimension ones from the ring
     * bridge's output of their direction */
    bool first = (lane == DCIN_TR || lane == DCIN_TL) != yx;
    int b = first ? DCIN_B_IQOUT + lane : DCIN_B_RBOUT + ((lane & 1) ? DCIN_RB_N : DCIN_RB_P);
    dcin_q *q = first ? &nd->iq_out[lane] : &nd->rb_out[(lane & 1) ? DCIN_RB_N : DCIN_RB_P];
    if ((occ & DCIN_BIT(b)) && cp_lane(s, d, net, node, nd, q, lane, k >> 1, now) && !q->n)
      occ &= ~DCIN_BIT(b);
  }
  return occ;
}

void dcin_cp_inject(dcin_sim *s, dcin_die *d, int net, int node) {
  dcin_node *nd = &d->nodes[net][node];
  nd->occ = d->cfg->yx ? cp(s, d, net, node, nd, nd->occ, s->cyc, true)
                       : cp(s, d, net, node, nd, nd->occ, s->cyc, false);
}

/* The pass, with XY or YX routing as a constant (lanes, queues and mask bits fold). */
DCIN_INLINE void stations(dcin_sim *s, dcin_die *d, int net, const bool yx) {
  uint64_t now = s->cyc;
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
  for (int w = 0; w < d->mwords; w++)
    for (uint64_t m = d->busym[net][w]; m; m &= m - 1) { /* nodes holding flits, in order */
      int node = w * 64 + __builtin_ctzll(m);
      dcin_node *nd = &nodes[node];
      uint64_t occ = nd->occ; /* a local: the queues' stamps could alias it */
      if (occ & DCIN_M_IQ) occ = iq(s, nd, occ, now);
      if (occ & m_rb) occ = rb(s, d, node, nd, occ, now, yx);
      if (occ & m_eq) occ = eq(s, d, net, node, nd, occ, now);
      if (occ & m_cp) occ = cp(s, d, net, node, nd, occ, now, yx);
      nd->occ = occ;
      if (!occ) {
        d->busym[net][w] &= ~(1ull << (node & 63));
        d->nact[net]--;
      }
    }
}

void dcin_stations_step(dcin_sim *s, dcin_die *d, int net) {
  if (d->cfg->yx)
    stations(s, d, net, true);
  else
    stations(s, d, net, false);
}
