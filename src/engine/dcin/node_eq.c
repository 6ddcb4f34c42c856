/* Eject path of a node: EQ inputs {second-dim neg, second-dim pos, IQ loop-back, RB to EQ} ->
 * arbiter inputs -> EQ arbitration onto the IP channel buffers -> h2l_h -> h2l_l (NoC clock) ->
 * the IP at the IP clock (D2D interfaces every sim cycle), plus the end-of-cycle commit of every
 * pre register.  Invariant: a flit handed to an IP has left every queue of the network.
 */
#include "dcin_int.h"

void dcin_eq_step(dcin_sim *s, dcin_die *d, int net, int node) {
  const dcin_cfg *c = d->cfg;
  int lane_p = c->yx ? DCIN_TR : DCIN_TD, lane_n = c->yx ? DCIN_TL : DCIN_TU;
  dcin_node *nd = &d->nodes[net][node];
  dcin_q *src[DCIN_NUM_EQ_PORTS] = {&nd->eq_in[0], &nd->eq_in[1], &nd->iq_out[DCIN_IQ_EQ],
                                    &nd->rb_out[DCIN_RB_EQ]};
  /* port order of the arbiter: second-dim neg, pos, IQ, RB */
  static const int port_of[DCIN_NUM_EQ_PORTS] = {DCIN_EQP_P, DCIN_EQP_N, DCIN_EQP_IQ, DCIN_EQP_RB};
  DCIN_UNROLL(4)
  for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++) {
    dcin_q *a = &nd->eq_arb[port_of[i]];
    if (!src[i]->n || !dcin_q_can_put(a)) continue;
    uint32_t f = dcin_q_pop(src[i]);
    dcin_flit *fl = &s->flits[f];
    if (i < 2) {
      dcin_etag_release(d, nd, dcin_etag_fifo(c, i == 0 ? lane_p : lane_n), fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
      fl->etag = DCIN_T2;
    }
    dcin_put(d, a, f);
  }
  unsigned want[DCIN_NUM_IPS] = {0}; /* per IP channel: the ports whose head requests it */
  unsigned ips = 0;                  /* IP channels somebody requests */
  DCIN_UNROLL(4)
  for (int p = 0; p < DCIN_NUM_EQ_PORTS; p++) {
    if (nd->eq_arb[p].n) {
      int ip = s->flits[dcin_q_front(&nd->eq_arb[p])].dst_ip;
      want[ip] |= 1u << p;
      ips |= 1u << ip;
    }
  }
  if (!ips) return;
  /* reference quirk: one set of EQ pointers per node, shared by the three networks */
  uint8_t *rr = c->crossring_compat ? d->nodes[0][node].eq_rr : nd->eq_rr;
  for (int ipi = 0; ips; ipi++) {
    if (!(ips >> ipi & 1)) continue;
    ips &= ~(1u << ipi);
    dcin_q *out = &nd->eq_ch[ipi];
    if (!dcin_q_can_put(out)) continue;
    int p = dcin_rr_pick(want[ipi], rr[ipi]);
    uint32_t g = dcin_q_pop(&nd->eq_arb[p]);
    dcin_put(d, out, g);
    nd->eq_n--;
    dcin_ip *to = dcin_ipp(d, node, ipi);
    if (!to->eqch++ && !to->h2l_n) dcin_ipset_add(d->ip_ej, node, ipi);
    to->eqch_net[net]++;
    DCIN_TRACE(s, g, "EQ_CH", node, -1);
    rr[ipi] = (uint8_t)((p + 1) & 3);
  }
}

void dcin_ip_eject(dcin_sim *s, dcin_die *d, bool ip_cycle, bool net_cycle) {
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
          if (ip->eqch_net[net] && ch->n && dcin_q_can_put(&ip->h2l_h[net])) {
            dcin_put(d, &ip->h2l_h[net], dcin_q_pop(ch));
            ip->eqch_net[net]--;
            dcin_node_release(d, net, node, nd);
            ip->eqch--;
            ip->h2l_n++; /* the flit stays in the IP's work set: eqch + h2l_n is unchanged */
            ip->busy++;
          }
          if (ip->h2l_h[net].n && dcin_q_can_put(&ip->h2l_l[net]))
            dcin_put(d, &ip->h2l_l[net], dcin_q_pop(&ip->h2l_h[net]));
        }
      }
      if (!ip->h2l_n || !(ip_cycle || dcin_ip_is_d2d(ipi))) continue;
      DCIN_UNROLL(3)
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        dcin_q *l = &ip->h2l_l[net];
        if (!l->n) continue;
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
  /* the count and the list are read into locals: the stores into the queues could otherwise
   * alias them, and they would be read again for every queue */
  dcin_q **pending = d->pending;
  uint32_t npending = d->npending, keep = 0;
  for (uint32_t i = 0; i < npending; i++) {
    dcin_q *q = pending[i];
    if (q->n < q->cap) {
      dcin_q_push(q, q->pre);
      q->pre = DCIN_NIL;
    } else {
      pending[keep++] = q; /* FIFO full: the flit stays in pre */
    }
  }
  d->npending = keep;
  keep = 0;
  for (uint32_t i = 0; i < d->nrel; i++) {
    dcin_node *nd = d->rel_list[i];
    dcin_etag_commit(nd);
    if (nd->rel_any) d->rel_list[keep++] = nd;
  }
  d->nrel = keep;
}
