/* Target side of the REQ_RSP protocol (ddr channels): RO trackers for reads, share trackers plus
 * write buffer for writes, Retry with a FIFO of waiting requests and Pcredit when a resource
 * frees, read data timed by the DDR latency, the delayed share-tracker release, and the adapter
 * gate (the driver's rsp releases the read data / the DBID).
 * Invariant: free + held + pre-allocated-for-Pcredit trackers == configured trackers.
 */
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"






static void sn_grant_read(dcin_sim *s, uint32_t ti) {
  dcin_txn *t = &s->txns[ti];
  t->gate_kind = DCIN_GATE_SN_READ;
  t->gate_base = s->cyc;
  dcin_req_done(s, ti);
}

static void sn_grant_write(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t ti) {
  dcin_txn *t = &s->txns[ti];
  if (!t->cross) {
    t->gate_kind = DCIN_GATE_SN_DBID;
    t->gate_base = s->cyc;
    dcin_req_done(s, ti);
  } else {
    dcin_send_rsp(s, d, node, ip, ti, DCIN_K_RSP_DBID, t->wait_node, t->wait_ip);
  }
}

/* The driver's rsp: perform what the grant was holding back, timed from the grant. */
void dcin_sn_gate_open(dcin_sim *s, uint32_t ti) {
  dcin_txn *t = &s->txns[ti];
  /* the gated action is timed from the grant, not from the rsp */
  if (t->gate_kind == DCIN_GATE_SN_READ) {
    dcin_die *d = &s->dies[t->dst_die];
    const dcin_cfg *c = d->cfg;
    uint64_t lat = c->ddr_r_lat;
    if (c->ddr_r_var) lat = lat - c->ddr_r_var + dcin_rand(s) % (2 * (uint64_t)c->ddr_r_var + 1);
    for (int i = 0; i < t->burst; i++) {
      uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, t->dst_node, t->dst_ip,
                                  t->wait_node, t->wait_ip);
      if (g == DCIN_NIL) break;
      s->flits[g].flit_id = (uint8_t)i;
      s->flits[g].last = (uint8_t)(i == t->burst - 1);
      s->flits[g].depart = t->gate_base + lat + (uint64_t)i * c->ip_scale + c->sn_proc;
      dcin_enqueue(s, d, t->dst_node, t->dst_ip, g);
    }
  } else if (t->gate_kind == DCIN_GATE_SN_DBID) {
    dcin_die *d = &s->dies[t->dst_die];
    dcin_send_rsp_at(s, d, t->dst_node, t->dst_ip, ti, DCIN_K_RSP_DBID, t->wait_node, t->wait_ip,
                     t->gate_base);
  } else if (t->gate_kind == DCIN_GATE_D2D_DBID) {
    dcin_die *d = &s->dies[t->src_die];
    const cs_d2d_link *l = &s->layout.links[t->link];
    int sn_node = t->link_dir == 0 ? l->node_a : l->node_b;
    dcin_send_rsp_at(s, d, sn_node, DCIN_IP_D2D_SN, ti, DCIN_K_RSP_DBID, t->src_node, t->src_ip,
                     t->gate_base);
  }
}

void dcin_sn_receive(dcin_sim *s, dcin_die *d, int node, int ipi, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  uint32_t ti = fl->txn;
  dcin_txn *t = &s->txns[ti];
  dcin_ip *ip = dcin_ipp(d, node, ipi);
  if (fl->kind == DCIN_K_REQ_RD || fl->kind == DCIN_K_REQ_WR) {
    if (t->t_sn_req == DCIN_NO_CYCLE) t->t_sn_req = s->cyc;
    t->wait_node = fl->src_node;
    t->wait_ip = fl->src_ip;
    if (fl->kind == DCIN_K_REQ_RD) {
      t->t_cmd_end = s->cyc;
      if (fl->old || ip->ro_trk > 0) {
        if (!fl->old) ip->ro_trk--;
        sn_grant_read(s, ti);
      } else {
        dcin_send_rsp(s, d, node, ipi, ti, DCIN_K_RSP_RETRY, fl->src_node, fl->src_ip);
        t->sn_ro_block++;
        dcin_wait_push(s, &ip->rd_wait, ti);
      }
    } else {
      bool trk = ip->share_trk > 0, buf = ip->sn_wdb >= t->burst;
      if (fl->old || (trk && buf)) {
        if (!fl->old) {
          ip->share_trk--;
          ip->sn_wdb -= t->burst;
        }
        sn_grant_write(s, d, node, ipi, ti);
      } else {
        dcin_send_rsp(s, d, node, ipi, ti, DCIN_K_RSP_RETRY, fl->src_node, fl->src_ip);
        if (!trk) t->sn_share_block++;
        if (!buf) t->sn_wdb_block++;
        dcin_wait_push(s, &ip->wr_wait, ti);
      }
    }
  } else if (fl->kind == DCIN_K_DATA) {
    if (++t->data_rx_sn == t->burst) {
      t->t_data_done = s->cyc;
      if (!t->cross) dcin_final_done(s, ti);
      t->release_at = s->cyc + d->cfg->sn_release;
      t->in_release = 1;
      dcin_wait_push(s, &d->sn_release, ti);
    }
  } else if (!s->fault[0]) {
    snprintf(s->fault, sizeof s->fault, "request %llu: SN got unexpected flit kind %d",
             (unsigned long long)t->request_id, fl->kind);
  }
  dcin_flit_free(s, f);
}

static void wake_write(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip, int *trk,
                       int *wdb) {
  while (ip->wr_wait.n && *trk > 0 && *wdb >= s->txns[ip->wr_wait.head].burst) {
    uint32_t w = dcin_wait_pop(s, &ip->wr_wait);
    (*trk)--;
    *wdb -= s->txns[w].burst;
    dcin_send_rsp(s, d, node, ipi, w, DCIN_K_RSP_PCREDIT, s->txns[w].wait_node, s->txns[w].wait_ip);
  }
}

static void wake_read(dcin_sim *s, dcin_die *d, int node, int ipi, dcin_ip *ip) {
  while (ip->rd_wait.n && ip->ro_trk > 0) {
    uint32_t w = dcin_wait_pop(s, &ip->rd_wait);
    ip->ro_trk--;
    dcin_send_rsp(s, d, node, ipi, w, DCIN_K_RSP_PCREDIT, s->txns[w].wait_node, s->txns[w].wait_ip);
  }
}

/* The last read-data flit of a burst entered the l2h FIFO of its target (a DDR or the D2D_SN):
 * the RO tracker is free. */
void dcin_protocol_txdone(dcin_sim *s, dcin_die *d) {
  for (uint32_t i = 0; i < d->ntxdone; i++) {
    int node = d->txdone[i].node, ipi = d->txdone[i].ip;
    dcin_ip *ip = dcin_ipp(d, node, ipi);
    ip->ro_trk++;
    if (ipi == DCIN_IP_D2D_SN) ip->sn_rdb += s->txns[d->txdone[i].f].burst;
    wake_read(s, d, node, ipi, ip);
  }
  d->ntxdone = 0;
}

void dcin_sn_release_due(dcin_sim *s, dcin_die *d) {
  while (d->sn_release.n && s->txns[d->sn_release.head].release_at <= s->cyc) {
    uint32_t ti = dcin_wait_pop(s, &d->sn_release);
    dcin_txn *t = &s->txns[ti];
    t->in_release = 0;
    dcin_ip *ip = dcin_ipp(d, t->dst_node, t->dst_ip);
    ip->share_trk++;
    ip->sn_wdb += t->burst;
    wake_write(s, d, t->dst_node, t->dst_ip, ip, &ip->share_trk, &ip->sn_wdb);
    dcin_txn_try_free(s, ti);
  }
}

/* Used by the D2D_SN, which shares the wait-and-Pcredit scheme. */
void dcin_sn_wake_write(dcin_sim *s, dcin_die *d, int node, int ipi) {
  dcin_ip *ip = dcin_ipp(d, node, ipi);
  wake_write(s, d, node, ipi, ip, &ip->share_trk, &ip->sn_wdb);
}
