/* Eject path of an IP at its clock: h2l_l -> the IP (D2D interfaces every sim cycle), with the rx
 * token bucket for data (the NoC-clock moves EQ channel -> h2l_h -> h2l_l are the station pass's,
 * station.c), plus the end-of-cycle commit of the E-Tag entry releases.  Invariant: a flit handed
 * to an IP has left every queue of the network, and the IP is in d->ip_ej while its h2l_l hold a
 * flit.
 */
#include "transport.h"

/* Requesters (GDMAs, D2D_RN) receive RSP and DATA, targets (DDRs, D2D_SN) REQ and DATA: the
 * visit of each kind, with its two networks as constants. */
DCIN_INLINE void eject_ip(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip,
                          const int net0) {
  uint64_t now = s->cyc;
  const int nets[2] = {net0, DCIN_NET_DATA};
  DCIN_UNROLL(2)
  for (int k = 0; k < 2; k++) {
    int net = nets[k];
    dcin_q *l = &ip->h2l_l[net];
    if (!dcin_q_vis(l, now)) continue;
    if (net == DCIN_NET_DATA && !dcin_rx_bucket(ip, now)) continue;
    uint32_t f = dcin_q_pop(l);
    ip->busy--;
    ip->h2l_n--;
    if (!--ip->rx_n) dcin_ipset_del(d->ip_ej, node, ipi);
    s->st.flits_ejected++;
    DCIN_TRACE(s, f, "IP_RX", node, -1);
    d->arr[d->narr++] = (dcin_arrival){(int16_t)node, (uint8_t)ipi, f};
  }
}

/* Every IP with flits to take, in order: on IP cycles all of them, on the others the D2D
 * interfaces (bits 0 and 1 of each node's byte). */
void dcin_ip_eject(dcin_sim *s, dcin_die *d, bool ip_cycle) {
  const uint64_t only = ip_cycle ? ~0ull : 0x0303030303030303ull;
  for (int w = 0; w < d->ipwords; w++)
    for (uint64_t m = d->ip_ej[w] & only; m; m &= m - 1) {
      int b = w * 64 + __builtin_ctzll(m);
      int node = b / DCIN_IP_BITS, ipi = b % DCIN_IP_BITS;
      dcin_ip *ip = dcin_ipp(d, node, ipi);
      if (dcin_ip_is_rn(ipi))
        eject_ip(s, d, node, ipi, ip, DCIN_NET_RSP);
      else
        eject_ip(s, d, node, ipi, ip, DCIN_NET_REQ);
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
