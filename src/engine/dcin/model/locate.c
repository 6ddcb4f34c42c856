/* Locator for deadlock reports: finds every place holding a transaction's flits (ring slots,
 * node queues, IP interfaces, D2D links) and the tracker wait lists it sits in.  O(size of the
 * model); only where() calls it, never the cycle loop.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "rings/ring.h"

static const char *const net_name[DCIN_NUM_NETS] = {"REQ", "RSP", "DATA"};
static const char *const lane_name[DCIN_NUM_LANES] = {"TR", "TL", "TD", "TU"};
static const char *const ip_name[DCIN_NUM_IPS] = {"d2d_rn_0", "d2d_sn_0", "ddr_0",
                                                  "ddr_1",    "gdma_0",   "gdma_1"};
static const char *const axi_name[DCIN_NUM_AXI] = {"AR", "R", "AW", "W", "B"};

static bool q_has(const dcin_sim *s, const dcin_q *q, uint32_t t) {
  for (int i = 0; i < q->n; i++)
    if (s->flits[dcin_q_at(q, (unsigned)i)].txn == t) return true;
  return false;
}

static bool list_has(const dcin_sim *s, const dcin_list *l, uint32_t t) {
  uint32_t n = 0;
  for (uint32_t f = l->n ? l->head : DCIN_NIL; f != DCIN_NIL && n < l->n; f = s->flits[f].next, n++)
    if (s->flits[f].txn == t) return true;
  return false;
}

static bool wait_has(const dcin_sim *s, const dcin_list *l, uint32_t t) {
  uint32_t n = 0;
  for (uint32_t x = l->n ? l->head : DCIN_NIL; x != DCIN_NIL && n < l->n;
       x = s->txns[x].next_wait, n++)
    if (x == t) return true;
  return false;
}

/* Appends the places holding flits of transaction t ("DATA flit on die1 ring TU at node 7"). */
void dcin_locate(const dcin_sim *s, uint32_t t, char *buf, size_t cap) {
  size_t len = strlen(buf);
#define ADD(...)                                                              \
  do {                                                                        \
    if (len + 1 < cap) {                                                      \
      int k_ = snprintf(buf + len, cap - len, __VA_ARGS__);                   \
      if (k_ > 0) len += (size_t)k_ < cap - len ? (size_t)k_ : cap - len - 1; \
    }                                                                         \
  } while (0)
  for (int di = 0; di < s->ndies; di++) {
    const dcin_die *d = &s->dies[di];
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      for (int r = 0; r < d->nrings; r++) {
        const dcin_ring *g = &d->rings[net][r];
        if (!g->count) continue;
        for (int i = 0; i < g->len; i++)
          if (dcin_ring_at(g, i) != DCIN_NIL && s->flits[dcin_ring_at(g, i)].txn == t)
            ADD("; %s flit on die%d ring %s at node %d", net_name[net], di, lane_name[g->lane[i]],
                g->node[i]);
      }
      for (int node = 0; node < s->cfg.nodes; node++) {
        const dcin_node *nd = &d->nodes[net][node];
        if (!nd->occ) continue;
        for (int i = 0; i < DCIN_NUM_IPS; i++) {
          if (q_has(s, &nd->iq_ch[i], t) || q_has(s, &nd->iq_arb[i], t))
            ADD("; %s flit in die%d node %d inject queue of %s", net_name[net], di, node,
                ip_name[i]);
          if (q_has(s, &nd->eq_ch[i], t))
            ADD("; %s flit in die%d node %d eject buffer of %s", net_name[net], di, node,
                ip_name[i]);
        }
        for (int i = 0; i < DCIN_NUM_IQ_DIRS; i++)
          if (q_has(s, &nd->iq_out[i], t))
            ADD("; %s flit in die%d node %d IQ %s", net_name[net], di, node,
                i < 4 ? lane_name[i] : "EQ");
        for (int i = 0; i < 2; i++) {
          if (q_has(s, &nd->rb_in[i], t))
            ADD("; %s flit in die%d node %d ring-bridge input", net_name[net], di, node);
          if (q_has(s, &nd->eq_in[i], t))
            ADD("; %s flit in die%d node %d EQ input", net_name[net], di, node);
        }
        for (int i = 0; i < DCIN_NUM_RB_OUT; i++)
          if (q_has(s, &nd->rb_out[i], t))
            ADD("; %s flit in die%d node %d ring-bridge output", net_name[net], di, node);
        for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++)
          if (q_has(s, &nd->eq_arb[i], t))
            ADD("; %s flit in die%d node %d EQ arbiter", net_name[net], di, node);
      }
    }
    for (int k = 0; k < s->cfg.nodes * DCIN_NUM_IPS; k++) {
      const dcin_ip *ip = &d->ips[k];
      int node = k / DCIN_NUM_IPS, i = k % DCIN_NUM_IPS;
      if (wait_has(s, &ip->rd_wait, t) || wait_has(s, &ip->wr_wait, t))
        ADD("; waiting for a Pcredit from die%d node %d %s", di, node, ip_name[i]);
      if (!ip->busy) continue;
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        if (list_has(s, &ip->inj[net], t))
          ADD("; %s in die%d node %d %s inject FIFO", net_name[net], di, node, ip_name[i]);
        if (q_has(s, &ip->l2h[net], t) || q_has(s, &ip->h2l_h[net], t) ||
            q_has(s, &ip->h2l_l[net], t))
          ADD("; %s flit at die%d node %d %s interface", net_name[net], di, node, ip_name[i]);
      }
      for (int p = 0; p < DCIN_NUM_RSP_PRIO; p++)
        if (list_has(s, &ip->rsp_q[p], t))
          ADD("; RSP in die%d node %d %s inject FIFO", di, node, ip_name[i]);
    }
  }
  for (int i = 0; i < 2 * s->layout.num_links; i++) {
    const dcin_axi *a = &s->axi[i];
    if (!a->busy) continue;
    for (int ch = 0; ch < DCIN_NUM_AXI; ch++)
      if (list_has(s, &a->pend[ch], t) || list_has(s, &a->chan[ch], t) ||
          list_has(s, &a->rx[ch], t))
        ADD("; on D2D link die%d:%d->die%d:%d channel %s", a->src_die, a->src_node, a->dst_die,
            a->dst_node, axi_name[ch]);
  }
#undef ADD
}
