/* Eject path of an IP: its EQ channel buffers (filled by its station, station.c) -> h2l_h ->
 * h2l_l (NoC clock) -> the IP at the IP clock (D2D interfaces every sim cycle), plus the
 * end-of-cycle commit of the E-Tag entry releases.  Invariant: a flit handed to an IP has left
 * every queue of the network.
 */
#include "transport.h"

/* Requesters (GDMAs, D2D_RN) receive RSP and DATA, targets (DDRs, D2D_SN) REQ and DATA: the
 * visit of each kind, with its two networks as constants. */
DCIN_INLINE void eject_ip(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip, bool ip_work,
                          bool net_cycle, const int net0) {
  uint64_t now = s->cyc;
  const int nets[2] = {net0, DCIN_NET_DATA};
  if (net_cycle) {
    DCIN_UNROLL(2)
    for (int k = 0; k < 2; k++) {
      int net = nets[k];
      dcin_node *nd = &d->nodes[net][node];
      dcin_q *ch = &nd->eq_ch[ipi];
      /* eqch_net first: it spares reading the node of a network with nothing for this IP */
      if (ip->eqch_net[net] && dcin_q_vis(ch, now) && dcin_q_can_put(&ip->h2l_h[net], now)) {
        dcin_q_put(&ip->h2l_h[net], dcin_node_take(d, net, node, nd, ch, DCIN_B_EQCH + ipi), now);
        ip->eqch_net[net]--;
        P_INC(ipe_h2lh);
        ip->eqch--;
        ip->h2l_n++; /* the flit stays in the IP's work set: eqch + h2l_n is unchanged */
        ip->busy++;
      }
      if (dcin_q_vis(&ip->h2l_h[net], now) && dcin_q_can_put(&ip->h2l_l[net], now))
        dcin_q_put(&ip->h2l_l[net], dcin_q_pop(&ip->h2l_h[net]), now), P_INC(ipe_h2ll);
    }
  }
  if (!ip->h2l_n || !ip_work) return;
  DCIN_UNROLL(2)
  for (int k = 0; k < 2; k++) {
    int net = nets[k];
    dcin_q *l = &ip->h2l_l[net];
    if (!dcin_q_vis(l, now)) continue;
    if (net == DCIN_NET_DATA && !dcin_rx_bucket(ip, s->cyc)) continue;
    uint32_t f = dcin_q_pop(l);
    ip->busy--;
    if (!--ip->h2l_n && !ip->eqch) dcin_ipset_del(d->ip_ej, node, ipi);
    s->st.flits_ejected++;
    P_INC(ipe_rx);
    DCIN_TRACE(s, f, "IP_RX", node, -1);
    d->arr[d->narr++] = (dcin_arrival){(int16_t)node, (uint8_t)ipi, f};
  }
}

void dcin_ip_eject(dcin_sim *s, dcin_die *d, bool ip_cycle, bool net_cycle) {
  for (int w = 0; w < d->ipwords; w++)
    for (uint64_t m = d->ip_ej[w]; m; m &= m - 1) { /* IPs with flits to take, in order */
      int b = w * 64 + __builtin_ctzll(m);
      int node = b / DCIN_IP_BITS, ipi = b % DCIN_IP_BITS;
      dcin_ip *ip = dcin_ipp(d, node, ipi);
      P_INC(ipe_visit);
      bool ip_work = ip_cycle || dcin_ip_is_d2d(ipi);
      if (dcin_ip_is_rn(ipi))
        eject_ip(s, d, node, ipi, ip, ip_work, net_cycle, DCIN_NET_RSP);
      else
        eject_ip(s, d, node, ipi, ip, ip_work, net_cycle, DCIN_NET_REQ);
    }
}

void dcin_commit(dcin_sim *s, dcin_die *d) {
  (void)s;
  /* the entries released in the step before are free from the next one on */
  int k = (int)((d->relgen + 1) & 1);
  int16_t **r = d->rel[k];
  for (uint32_t i = 0, n = d->nrel[k]; i < n; i++) --*r[i];
  d->nrel[k] = 0;
  d->relgen++;
}
