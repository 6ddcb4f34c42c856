/* Inject path of an IP: IP inject FIFO -> l2h (IP clock) -> IQ channel buffer (NoC clock), where
 * the flit enters its node's station (station.c) with its route.
 * Invariant: a flit moves at most one stage per cycle, always into a queue that took no flit this
 * cycle and was not full at its start, and nd->occ marks every queue of the node holding a flit.
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
  dcin_ip *x = dcin_ipp(d, node, ip); P_INC(enq);
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
  P_INC(l2h_put);
}

DCIN_INLINE void l2h_to_iq(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip, int net) {
  dcin_q *l2h = &ip->l2h[net];
  uint64_t now = s->cyc;
  if (!dcin_q_vis(l2h, now)) return;
  dcin_node *nd = &d->nodes[net][node];
  dcin_q *ch = &nd->iq_ch[ipi];
  if (!dcin_q_can_put(ch, now)) return;
  uint32_t f = dcin_q_pop(l2h);
  dcin_node_put(d, net, node, nd, ch, DCIN_B_IQCH + ipi, f, now);
  P_INC(l2h_iq);
  dcin_ip_inj_del(d, node, ipi, ip);
  dcin_flit *fl = &s->flits[f];
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

/* Requesters (GDMAs, D2D_RN) send REQ and DATA, targets (DDRs, D2D_SN) RSP and DATA: the visit
 * of each kind, with its two networks as constants. */
DCIN_INLINE void inject_ip(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip, bool ip_work,
                           bool net_cycle, const int net0) {
  if (ip_work) {
    inject_to_l2h(s, d, node, ipi, ip, net0);
    inject_to_l2h(s, d, node, ipi, ip, DCIN_NET_DATA);
  }
  if (net_cycle) {
    l2h_to_iq(s, d, node, ipi, ip, net0);
    l2h_to_iq(s, d, node, ipi, ip, DCIN_NET_DATA);
  }
}

void dcin_ip_inject(dcin_sim *s, dcin_die *d, bool ip_cycle, bool net_cycle) {
  for (int w = 0; w < d->ipwords; w++)
    for (uint64_t m = d->ip_inj[w]; m; m &= m - 1) { /* IPs with items to inject, in order */
      int b = w * 64 + __builtin_ctzll(m);
      int node = b / DCIN_IP_BITS, ipi = b % DCIN_IP_BITS;
      dcin_ip *ip = dcin_ipp(d, node, ipi);
      P_INC(ipi_visit);
      bool ip_work = ip_cycle || dcin_ip_is_d2d(ipi);
      if (dcin_ip_is_rn(ipi))
        inject_ip(s, d, node, ipi, ip, ip_work, net_cycle, DCIN_NET_REQ);
      else
        inject_ip(s, d, node, ipi, ip, ip_work, net_cycle, DCIN_NET_RSP);
    }
}
