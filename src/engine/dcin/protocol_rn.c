/* Requester side of the REQ_RSP protocol (gdma channels): resource reservation before a request
 * leaves, DBID -> write data, Retry -> hold, Pcredit -> re-send at the front, read data and Comp
 * -> completion; plus the flit factory and the IP-side dispatch shared by every IP.
 * Invariant: an RN holds one tracker and `burst` buffer slots from reservation until completion
 * (die-local writes: until DBID), and a retried request keeps them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dcin_int.h"

void dcin_pool_fault(dcin_sim *s) {
  if (!s->fault[0]) snprintf(s->fault, sizeof s->fault, "out of memory growing the flit pool");
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

void dcin_send_rsp_at(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind,
                      int dst_node, int dst_ip, uint64_t base) {
  uint32_t f = dcin_make_flit(s, t, d->id, DCIN_NET_RSP, kind, node, ip, dst_node, dst_ip);
  if (f == DCIN_NIL) return;
  s->flits[f].depart = base + (uint64_t)d->cfg->cycles_per_ns_int + d->cfg->sn_proc;
  dcin_enqueue(s, d, node, ip, f);
}

void dcin_send_rsp(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind, int dst_node,
                   int dst_ip) {
  dcin_send_rsp_at(s, d, node, ip, t, kind, dst_node, dst_ip, s->cyc);
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

static void rn_release(dcin_die *d, int node, int ipi, dcin_txn *t, dcin_ip *ip) {
  if (t->rn_released) return;
  t->rn_released = 1;
  dcin_ip_unpark(d, node, ipi, ip); /* a refused head REQ may now get its tracker and buffer */
  if (t->is_read) {
    ip->rd_trk++;
    ip->rdb += t->burst;
  } else {
    ip->wr_trk++;
    ip->wdb += t->burst;
  }
}

/* First-leg target of a request from its GDMA: the DDR, or the local D2D_SN of its link. */
static void first_target(const dcin_sim *s, const dcin_txn *t, int *node, int *ip) {
  if (!t->cross) {
    *node = t->dst_node;
    *ip = t->dst_ip;
    return;
  }
  const cs_d2d_link *l = &s->links[t->link];
  *node = t->link_dir == 0 ? l->node_a : l->node_b;
  *ip = DCIN_IP_D2D_SN;
}

void dcin_rn_receive(dcin_sim *s, dcin_die *d, int node, int ipi, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  uint32_t ti = fl->txn;
  dcin_txn *t = &s->txns[ti];
  dcin_ip *ip = dcin_ipp(d, node, ipi);
  const dcin_cfg *c = d->cfg;
  switch (fl->kind) {
    case DCIN_K_RSP_DBID: {
      t->t_dbid_rn = s->cyc;
      t->t_cmd_end = s->cyc;
      t->t_wdata_gen = s->cyc;
      int tn, tip;
      first_target(s, t, &tn, &tip);
      for (int i = 0; i < t->burst; i++) {
        uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_DATA, DCIN_K_DATA, node, ipi, tn, tip);
        if (g == DCIN_NIL) break;
        s->flits[g].flit_id = (uint8_t)i;
        s->flits[g].last = (uint8_t)(i == t->burst - 1);
        s->flits[g].depart = s->cyc + c->ddr_w_lat + (uint64_t)i * c->ip_scale + c->rn_proc;
        dcin_enqueue(s, d, node, ipi, g);
      }
      if (!t->cross) rn_release(d, node, ipi, t, ip);
      break;
    }
    case DCIN_K_RSP_RETRY:
      t->retries++;
      t->state = DCIN_TS_RETRIED;
      if (t->is_read)
        s->st.retries_rd++;
      else
        s->st.retries_wr++;
      break;
    case DCIN_K_RSP_PCREDIT: {
      int tn, tip;
      first_target(s, t, &tn, &tip);
      uint32_t g = dcin_make_flit(s, ti, d->id, DCIN_NET_REQ,
                                  t->is_read ? DCIN_K_REQ_RD : DCIN_K_REQ_WR, node, ipi, tn, tip);
      if (g == DCIN_NIL) break;
      s->flits[g].old = 1;
      s->flits[g].depart = 0;
      dcin_ip *x = dcin_ipp(d, node, ipi);
      dcin_list_push_front(s, &x->inj[DCIN_NET_REQ], g);
      dcin_ip_inj_add(d, node, ipi, x);
      t->state = DCIN_TS_REQ;
      break;
    }
    case DCIN_K_RSP_COMP:
      rn_release(d, node, ipi, t, ip);
      dcin_final_done(s, ti);
      break;
    case DCIN_K_DATA:
      if (++t->data_rx_rn == t->burst) {
        t->t_data_done = s->cyc;
        rn_release(d, node, ipi, t, ip);
        dcin_final_done(s, ti);
      }
      break;
    default:
      if (!s->fault[0])
        snprintf(s->fault, sizeof s->fault, "request %llu: RN got unexpected flit kind %d",
                 (unsigned long long)t->request_id, fl->kind);
  }
  dcin_flit_free(s, f);
}

void dcin_ip_receive(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t f) {
  switch (ip) {
    case DCIN_IP_GDMA0:
    case DCIN_IP_GDMA1:
      dcin_rn_receive(s, d, node, ip, f);
      break;
    case DCIN_IP_DDR0:
    case DCIN_IP_DDR1:
      dcin_sn_receive(s, d, node, ip, f);
      break;
    case DCIN_IP_D2D_SN:
      dcin_d2d_sn_receive(s, d, node, f);
      break;
    default:
      dcin_d2d_rn_receive(s, d, node, f);
  }
}
