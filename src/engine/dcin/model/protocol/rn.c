/* Requester side of the REQ_RSP protocol (gdma channels; the reservation before a request leaves
 * is the IP interface's, ip_inject.c): DBID -> write data, Retry -> hold, Pcredit -> re-send at
 * the front, read data and Comp -> completion and the release of the tracker.
 * Invariant: an RN holds one tracker and `burst` buffer slots from reservation until completion
 * (die-local writes: until DBID), and a retried request keeps them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"






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
  const cs_d2d_link *l = &s->layout.links[t->link];
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

