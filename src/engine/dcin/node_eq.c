/* Eject path of a node: EQ inputs {second-dim neg, second-dim pos, IQ loop-back, RB to EQ} ->
 * arbiter inputs -> EQ arbitration onto the IP channel buffers -> h2l_h -> h2l_l (NoC clock) ->
 * the IP at the IP clock (D2D interfaces every sim cycle), plus the end-of-cycle commit of every
 * pre register.  Invariant: a flit handed to an IP has left every queue of the network.
 */
#include "dcin_int.h"

void dcin_eq_step(dcin_sim *s, dcin_die *d, int net, int node) {
  const dcin_cfg *c = d->cfg;
  uint64_t now = s->cyc;
  int lane_p = c->yx ? DCIN_TR : DCIN_TD, lane_n = c->yx ? DCIN_TL : DCIN_TU;
  dcin_node *nd = &d->nodes[net][node];
  uint64_t occ = nd->occ; /* a local: the queues' stamps could alias it */
  dcin_q *src[DCIN_NUM_EQ_PORTS] = {&nd->eq_in[0], &nd->eq_in[1], &nd->iq_out[DCIN_IQ_EQ],
                                    &nd->rb_out[DCIN_RB_EQ]};
  const int bit[DCIN_NUM_EQ_PORTS] = {DCIN_B_EQIN, DCIN_B_EQIN + 1, DCIN_B_IQOUT + DCIN_IQ_EQ,
                                      DCIN_B_RBOUT + DCIN_RB_EQ};
  /* port order of the arbiter: second-dim neg, pos, IQ, RB */
  static const int port_of[DCIN_NUM_EQ_PORTS] = {DCIN_EQP_P, DCIN_EQP_N, DCIN_EQP_IQ, DCIN_EQP_RB};
  DCIN_UNROLL(4)
  for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++) {
    dcin_q *a = &nd->eq_arb[port_of[i]];
    if (!(occ & DCIN_BIT(bit[i])) ||
        !(i < 2 ? dcin_q_vis_ej(src[i], now) : dcin_q_vis(src[i], now)) ||
        !dcin_q_can_put(a, now))
      continue;
    uint32_t f = i < 2 ? dcin_q_pop_ej(src[i], now) : dcin_q_pop(src[i]);
    if (!src[i]->n) occ &= ~DCIN_BIT(bit[i]);
    dcin_flit *fl = &s->flits[f];
    if (i < 2) {
      dcin_etag_release(d, nd, dcin_etag_fifo(c, i == 0 ? lane_p : lane_n), fl->used_entry);
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
  /* reference quirk: one set of EQ pointers per node, shared by the three networks */
  uint8_t *rr = c->crossring_compat ? d->nodes[0][node].eq_rr : nd->eq_rr;
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
  nd->occ = occ;
}

void dcin_ip_eject(dcin_sim *s, dcin_die *d, bool ip_cycle, bool net_cycle) {
  uint64_t now = s->cyc;
  for (int w = 0; w < d->ipwords; w++)
    for (uint64_t m = d->ip_ej[w]; m; m &= m - 1) { /* IPs with flits to take, in order */
      int b = w * 64 + __builtin_ctzll(m);
      int node = b / DCIN_IP_BITS, ipi = b % DCIN_IP_BITS;
      dcin_ip *ip = dcin_ipp(d, node, ipi);
      if (net_cycle) {
        DCIN_UNROLL(3)
        for (int net = 0; net < DCIN_NUM_NETS; net++) {
          dcin_node *nd = &d->nodes[net][node];
          dcin_q *ch = &nd->eq_ch[ipi];
          /* eqch_net first: it spares reading the node of a network with nothing for this IP */
          if (ip->eqch_net[net] && dcin_q_vis(ch, now) && dcin_q_can_put(&ip->h2l_h[net], now)) {
            dcin_q_put(&ip->h2l_h[net], dcin_node_take(d, net, node, nd, ch, DCIN_B_EQCH + ipi),
                       now);
            ip->eqch_net[net]--;
            ip->eqch--;
            ip->h2l_n++; /* the flit stays in the IP's work set: eqch + h2l_n is unchanged */
            ip->busy++;
          }
          if (dcin_q_vis(&ip->h2l_h[net], now) && dcin_q_can_put(&ip->h2l_l[net], now))
            dcin_q_put(&ip->h2l_l[net], dcin_q_pop(&ip->h2l_h[net]), now);
        }
      }
      if (!ip->h2l_n || !(ip_cycle || dcin_ip_is_d2d(ipi))) continue;
      DCIN_UNROLL(3)
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        dcin_q *l = &ip->h2l_l[net];
        if (!dcin_q_vis(l, now)) continue;
        if (net == DCIN_NET_DATA && !dcin_rx_bucket(ip, s->cyc)) continue;
        uint32_t f = dcin_q_pop(l);
        ip->busy--;
        if (!--ip->h2l_n && !ip->eqch) dcin_ipset_del(d->ip_ej, node, ipi);
        s->st.flits_ejected++;
        DCIN_TRACE(s, f, "IP_RX", node, -1);
        dcin_ip_receive(s, d, node, ipi, f);
      }
    }
}

void dcin_commit(dcin_sim *s, dcin_die *d) {
  (void)s;
  uint32_t keep = 0;
  for (uint32_t i = 0; i < d->nrel; i++) {
    dcin_node *nd = d->rel_list[i];
    dcin_etag_commit(nd);
    if (nd->rel_any) d->rel_list[keep++] = nd;
  }
  d->nrel = keep;
}
