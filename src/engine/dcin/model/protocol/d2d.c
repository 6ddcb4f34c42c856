/* D2D interfaces.  D2D_SN (source die) takes requests bound for another die: an RO tracker
 * forwards a read on AR; a share tracker + write buffer answers DBID, collects the burst and sends
 * AW + W.  D2D_RN (target die) replays AR/AW as local requests into its die, returns read data on
 * R and Comp on B (sent when the target DDR grants DBID).  Invariant: a D2D_RN without a free
 * tracker leaves the AR/AW at the head of its receive queue (back-pressure); nothing is dropped.
 */
#include <stdio.h>

#include "protocol.h"


static void send_axi(dcin_sim *s, int die, uint32_t ti, int chan, uint32_t f) {
  dcin_axi_send(s, dcin_axi_of(s, s->txns[ti].link, die), chan, f);
}

void dcin_d2d_sn_receive(dcin_sim *s, dcin_die *d, int node, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  uint32_t ti = fl->txn;
  dcin_txn *t = &s->txns[ti];
  dcin_ip *ip = dcin_ipp(d, node, DCIN_IP_D2D_SN);
  if (fl->kind == DCIN_K_REQ_RD) {
    t->wait_node = fl->src_node;
    t->wait_ip = fl->src_ip;
    if (fl->old || ip->ro_trk > 0) {
      if (!fl->old) ip->ro_trk--;
      fl->old = 0;
      send_axi(s, d->id, ti, DCIN_AR, f);
      return;
    }
    dcin_send_rsp(s, d, node, DCIN_IP_D2D_SN, ti, DCIN_K_RSP_RETRY, fl->src_node, fl->src_ip);
    t->d2d_ro_block++;
    dcin_wait_push(s, &ip->rd_wait, ti);
  } else if (fl->kind == DCIN_K_REQ_WR) {
    t->wait_node = fl->src_node;
    t->wait_ip = fl->src_ip;
    bool trk = ip->share_trk > 0, buf = ip->sn_wdb >= t->burst;
    if (fl->old || (trk && buf)) {
      if (!fl->old) {
        ip->share_trk--;
        ip->sn_wdb -= t->burst;
      }
      t->gate_kind = DCIN_GATE_D2D_DBID;
      t->gate_base = s->cyc;
      dcin_req_done(s, ti);
    } else {
      dcin_send_rsp(s, d, node, DCIN_IP_D2D_SN, ti, DCIN_K_RSP_RETRY, fl->src_node, fl->src_ip);
      if (!trk) t->d2d_share_block++;
      if (!buf) t->d2d_wdb_block++;
      dcin_wait_push(s, &ip->wr_wait, ti);
    }
  } else if (fl->kind == DCIN_K_DATA) {
    if (++t->data_rx_d2d == t->burst) {
      t->t_wdata_d2d = s->cyc;
      uint32_t aw = dcin_make_flit(s, ti, d->id, DCIN_NET_REQ, DCIN_K_REQ_WR, node, DCIN_IP_D2D_SN,
                                   0, DCIN_IP_D2D_RN);
      if (aw != DCIN_NIL) send_axi(s, d->id, ti, DCIN_AW, aw);
      for (int i = 0; i < t->burst; i++) {
        uint32_t w = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, node, DCIN_IP_D2D_SN,
                                    0, DCIN_IP_D2D_RN);
        if (w == DCIN_NIL) break;
        s->flits[w].flit_id = (uint8_t)i;
        s->flits[w].last = (uint8_t)(i == t->burst - 1);
        send_axi(s, d->id, ti, DCIN_W, w);
      }
    }
  } else if (!s->fault[0]) {
    snprintf(s->fault, sizeof s->fault, "request %llu: D2D_SN got unexpected flit kind %d",
             (unsigned long long)t->request_id, fl->kind);
  }
  dcin_flit_free(s, f);
}

/* D2D_RN replays a request into its die (resources already held). */
static void rn_issue(dcin_sim *s, dcin_die *d, int node, uint32_t ti, int kind) {
  dcin_txn *t = &s->txns[ti];
  uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_REQ, kind, node, DCIN_IP_D2D_RN, t->dst_node,
                              t->dst_ip);
  if (g == DCIN_NIL) return;
  dcin_enqueue(s, d, node, DCIN_IP_D2D_RN, g);
}

void dcin_d2d_rn_receive(dcin_sim *s, dcin_die *d, int node, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  uint32_t ti = fl->txn;
  dcin_txn *t = &s->txns[ti];
  dcin_ip *ip = dcin_ipp(d, node, DCIN_IP_D2D_RN);
  switch (fl->kind) {
    case DCIN_K_RSP_RETRY:
      t->retries++;
      if (t->is_read)
        s->st.retries_rd++;
      else
        s->st.retries_wr++;
      break;
    case DCIN_K_RSP_PCREDIT: {
      uint32_t g =
          dcin_make_flit(s, ti, d->id, DCIN_NET_REQ, t->is_read ? DCIN_K_REQ_RD : DCIN_K_REQ_WR,
                         node, DCIN_IP_D2D_RN, t->dst_node, t->dst_ip);
      if (g == DCIN_NIL) break;
      s->flits[g].old = 1;
      dcin_list_push_front(s, &ip->inj[DCIN_NET_REQ], g);
      dcin_ip_inj_add(d, node, DCIN_IP_D2D_RN, ip);
      break;
    }
    case DCIN_K_RSP_DBID: {
      for (int i = 0; i < t->burst; i++) {
        uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, node, DCIN_IP_D2D_RN,
                                    t->dst_node, t->dst_ip);
        if (g == DCIN_NIL) break;
        s->flits[g].flit_id = (uint8_t)i;
        s->flits[g].last = (uint8_t)(i == t->burst - 1);
        s->flits[g].depart = s->cyc + (uint64_t)i * d->cfg->ip_scale;
        dcin_enqueue(s, d, node, DCIN_IP_D2D_RN, g);
      }
      uint32_t b = dcin_make_flit(s, ti, d->id, DCIN_NET_RSP, DCIN_K_RSP_COMP, node, DCIN_IP_D2D_RN,
                                  0, DCIN_IP_D2D_SN);
      if (b != DCIN_NIL) send_axi(s, d->id, ti, DCIN_B, b);
      ip->wr_trk++;
      ip->wdb += t->burst;
      break;
    }
    case DCIN_K_DATA:
      if (++t->data_rx_d2d == t->burst) {
        for (int i = 0; i < t->burst; i++) {
          uint32_t r = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, node,
                                      DCIN_IP_D2D_RN, 0, DCIN_IP_D2D_SN);
          if (r == DCIN_NIL) break;
          s->flits[r].flit_id = (uint8_t)i;
          s->flits[r].last = (uint8_t)(i == t->burst - 1);
          send_axi(s, d->id, ti, DCIN_R, r);
        }
        ip->rd_trk++;
        ip->rdb += t->burst;
      }
      break;
    default:
      if (!s->fault[0])
        snprintf(s->fault, sizeof s->fault, "request %llu: D2D_RN got unexpected flit kind %d",
                 (unsigned long long)t->request_id, fl->kind);
  }
  dcin_flit_free(s, f);
}

/* Deliveries of one link direction to the interfaces of its destination node. */
void dcin_d2d_rx(dcin_sim *s, dcin_axi *a) {
  dcin_die *d = &s->dies[a->dst_die];
  int node = a->dst_node;
  dcin_ip *rn = dcin_ipp(d, node, DCIN_IP_D2D_RN);
  dcin_ip *sn = dcin_ipp(d, node, DCIN_IP_D2D_SN);
  /* AR: the D2D_RN takes a read tracker and RDB, or the AR waits (back-pressure) */
  while (a->rx[DCIN_AR].n) {
    uint32_t f = a->rx[DCIN_AR].head;
    dcin_txn *t = &s->txns[s->flits[f].txn];
    if (rn->rd_trk <= 0 || rn->rdb < t->burst) {
      if (!t->addr_waited) t->addr_waited = 1, t->d2d_ro_block++;
      break;
    }
    rn->rd_trk--;
    rn->rdb -= t->burst;
    dcin_list_pop(s, &a->rx[DCIN_AR]);
    a->busy--;
    uint32_t ti = s->flits[f].txn;
    dcin_flit_free(s, f);
    rn_issue(s, d, node, ti, DCIN_K_REQ_RD);
  }
  /* AW: write tracker and WDB, or wait */
  while (a->rx[DCIN_AW].n) {
    uint32_t f = a->rx[DCIN_AW].head;
    uint32_t ti = s->flits[f].txn;
    dcin_txn *t = &s->txns[ti];
    if (rn->wr_trk <= 0 || rn->wdb < t->burst) {
      if (!t->addr_waited) t->addr_waited = 1, t->d2d_share_block++;
      break;
    }
    rn->wr_trk--;
    rn->wdb -= t->burst;
    t->aw_ok = 1;
    dcin_list_pop(s, &a->rx[DCIN_AW]);
    a->busy--;
    dcin_flit_free(s, f);
    if (t->w_rx == t->burst) rn_issue(s, d, node, ti, DCIN_K_REQ_WR);
  }
  while (a->rx[DCIN_W].n) {
    uint32_t f = dcin_list_pop(s, &a->rx[DCIN_W]);
    a->busy--;
    uint32_t ti = s->flits[f].txn;
    dcin_txn *t = &s->txns[ti];
    dcin_flit_free(s, f);
    if (++t->w_rx == t->burst && t->aw_ok) rn_issue(s, d, node, ti, DCIN_K_REQ_WR);
  }
  /* R: collect the burst, then forward it to the requester inside this die */
  while (a->rx[DCIN_R].n) {
    uint32_t f = dcin_list_pop(s, &a->rx[DCIN_R]);
    a->busy--;
    dcin_flit *fl = &s->flits[f];
    dcin_txn *t = &s->txns[fl->txn];
    dcin_flit_free(s, f);
    if (++t->data_rx_d2d < 2 * t->burst) continue; /* counts D2D_RN then D2D_SN receipts */
    uint32_t ti = (uint32_t)(t - s->txns);
    for (int i = 0; i < t->burst; i++) {
      uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, node, DCIN_IP_D2D_SN,
                                  t->src_node, t->src_ip);
      if (g == DCIN_NIL) break;
      s->flits[g].flit_id = (uint8_t)i;
      s->flits[g].last = (uint8_t)(i == t->burst - 1);
      s->flits[g].depart = s->cyc;
      dcin_enqueue(s, d, node, DCIN_IP_D2D_SN, g);
    }
  }
  /* B: the write is complete on the far die; free the D2D_SN resources and send Comp */
  while (a->rx[DCIN_B].n) {
    uint32_t f = dcin_list_pop(s, &a->rx[DCIN_B]);
    a->busy--;
    uint32_t ti = s->flits[f].txn;
    dcin_txn *t = &s->txns[ti];
    dcin_flit_free(s, f);
    sn->share_trk++;
    sn->sn_wdb += t->burst;
    /* Comp is forwarded at once (no SN processing delay: the far SN already did its work) */
    uint32_t c = dcin_make_flit(s, ti, d->id, DCIN_NET_RSP, DCIN_K_RSP_COMP, node, DCIN_IP_D2D_SN,
                                t->src_node, t->src_ip);
    if (c != DCIN_NIL) {
      s->flits[c].depart = s->cyc;
      dcin_enqueue(s, d, node, DCIN_IP_D2D_SN, c);
    }
    dcin_sn_wake_write(s, d, node, DCIN_IP_D2D_SN);
  }
}
