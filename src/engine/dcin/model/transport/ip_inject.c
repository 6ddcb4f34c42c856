/* Inject path of an IP at its clock: IP inject FIFO -> l2h, with the RN's tracker reservation for
 * a request and the token bucket for data (the NoC-clock move l2h -> IQ channel buffer is the
 * station pass's, station.c).  Invariant: at most one flit per network enters an l2h per IP cycle,
 * always into one that took no flit this cycle and was not full at its start, and the l2h's bit in
 * its node's occ is set while it holds a flit.
 */
#include "transport.h"

static bool bucket_take(dcin_ip *ip, double *tok, uint64_t *last, uint64_t now) {
  if (ip->rate <= 0) return true;
  if (now > *last) {
    *tok += (double)(now - *last) * ip->rate;
    if (*tok > ip->cap) *tok = ip->cap;
    *last = now;
  }
  if (*tok + 1e-8 >= 1.0) {
    *tok -= 1.0;
    return true;
  }
  return false;
}

bool dcin_rx_bucket(dcin_ip *ip, uint64_t now) {
  return bucket_take(ip, &ip->rx_tok, &ip->rx_last, now);
}

void dcin_enqueue(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t f) {
  if (f == DCIN_NIL) return;
  dcin_ip *x = dcin_ipp(d, node, ip);
  dcin_flit *fl = &s->flits[f];
  if (fl->net == DCIN_NET_RSP)
    dcin_list_push(s, &x->rsp_q[fl->kind - DCIN_K_RSP_DBID], f);
  else
    dcin_list_push(s, &x->inj[fl->net], f);
  dcin_ip_inj_add(d, node, ip, x);
}

bool dcin_rn_reserve(dcin_sim *s, dcin_ip *ip, dcin_txn *t) {
  (void)s;
  if (t->is_read) {
    bool trk = ip->rd_trk > 0, buf = ip->rdb >= t->burst;
    if (!trk || !buf) {
      if (!trk && !t->rn_rd_block) t->rn_rd_block = 1;
      if (!buf && !t->rn_rdb_block) t->rn_rdb_block = 1;
      return false;
    }
    ip->rd_trk--;
    ip->rdb -= t->burst;
  } else {
    bool trk = ip->wr_trk > 0, buf = ip->wdb >= t->burst;
    if (!trk || !buf) {
      if (!trk && !t->rn_wr_block) t->rn_wr_block = 1;
      if (!buf && !t->rn_wdb_block) t->rn_wdb_block = 1;
      return false;
    }
    ip->wr_trk--;
    ip->wdb -= t->burst;
  }
  return true;
}

_Static_assert(DCIN_NUM_RSP_PRIO == 4, "inject_to_l2h tests the four RSP queues by name");
_Static_assert(DCIN_NET_REQ == 0, "a refused REQ parks its IP before the other networks' turn");

DCIN_INLINE void inject_to_l2h(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip, int net) {
  dcin_q *l2h = &ip->l2h[net];
  if (net == DCIN_NET_RSP ? !(ip->rsp_q[0].n | ip->rsp_q[1].n | ip->rsp_q[2].n | ip->rsp_q[3].n)
                          : !ip->inj[net].n)
    return; /* nothing to send on this network */
  uint64_t now = s->cyc;
  if (!dcin_q_can_put(l2h, now)) return;
  uint32_t f = DCIN_NIL;
  if (net == DCIN_NET_RSP) {
    for (int p = 0; p < DCIN_NUM_RSP_PRIO; p++) {
      dcin_list *q = &ip->rsp_q[p];
      if (!q->n || s->flits[q->head].depart > now) continue;
      f = dcin_list_pop(s, q);
      break;
    }
    if (f == DCIN_NIL) return;
  } else if (net == DCIN_NET_REQ) {
    dcin_list *q = &ip->inj[net];
    if (!q->n) return;
    uint32_t h = q->head;
    dcin_flit *fl = &s->flits[h];
    if (fl->depart > now) return;
    if (!fl->old && ipi != DCIN_IP_D2D_RN) {
      dcin_txn *t = &s->txns[fl->txn];
      if (!dcin_rn_reserve(s, ip, t)) {
        /* the REQ network goes first: with nothing else queued this visit does nothing more,
         * and neither does any before a release or an enqueue */
        if (dcin_ip_parkable(ip)) dcin_ipset_del(d->ip_inj, node, ipi);
        return;
      }
      t->t_reserve = now;
    }
    f = dcin_list_pop(s, q);
  } else {
    dcin_list *q = &ip->inj[net];
    if (!q->n || s->flits[q->head].depart > now) return;
    if (!bucket_take(ip, &ip->tx_tok, &ip->tx_last, now)) return;
    f = dcin_list_pop(s, q);
    /* the last read-data flit of a target: its RO tracker frees (dcin_protocol_txdone) */
    const dcin_flit *fl = &s->flits[f];
    if (fl->last && !dcin_ip_is_rn(ipi) && s->txns[fl->txn].is_read)
      d->txdone[d->ntxdone++] = (dcin_arrival){(int16_t)node, (uint8_t)ipi, fl->txn};
  }
  dcin_q_put(l2h, f, now);
  dcin_node *nd = &d->nodes[net][node];
  if (!nd->occ) {
    d->busym[net][node >> 6] |= 1ull << (node & 63);
    d->nact[net]++;
  }
  nd->occ |= DCIN_BIT(DCIN_B_L2H + ipi);
}

/* Every IP with work on its inject side, in order: on IP cycles all of them, on the others the D2D
 * interfaces (bits 0 and 1 of each node's byte), which run at the sim clock.  Requesters (GDMAs,
 * D2D_RN) send REQ and DATA, targets (DDRs, D2D_SN) RSP and DATA. */
void dcin_ip_inject(dcin_sim *s, dcin_die *d, bool ip_cycle) {
  _Static_assert(DCIN_IP_D2D_RN == 0 && DCIN_IP_D2D_SN == 1 && DCIN_IP_BITS == 8,
                 "the D2D interfaces are the low two bits of each node's byte");
  const uint64_t only = ip_cycle ? ~0ull : 0x0303030303030303ull;
  for (int w = 0; w < d->ipwords; w++)
    for (uint64_t m = d->ip_inj[w] & only; m; m &= m - 1) { /* IPs with items, in order */
      int b = w * 64 + __builtin_ctzll(m);
      int node = b / DCIN_IP_BITS, ipi = b % DCIN_IP_BITS;
      dcin_ip *ip = dcin_ipp(d, node, ipi);
      int net0 = dcin_ip_is_rn(ipi) ? DCIN_NET_REQ : DCIN_NET_RSP;
      if (net0 == DCIN_NET_REQ)
        inject_to_l2h(s, d, node, ipi, ip, DCIN_NET_REQ);
      else
        inject_to_l2h(s, d, node, ipi, ip, DCIN_NET_RSP);
      inject_to_l2h(s, d, node, ipi, ip, DCIN_NET_DATA);
    }
}
