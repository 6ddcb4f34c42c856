/* Wait-for chains for stop reports: starting from a flit, follows "cannot move because of" edges
 * (the slice ahead on a ring, the eject FIFO and its E-Tag entries at the flit's exit, the next
 * queue of the node pipeline, the CP_OUT slice an inject queue feeds) from flit to blocking flit
 * until the chain ends at something that is not a flit (a tracker, a free slot) or comes back to
 * a flit already seen: a resource cycle, the signature of a deadlock.  O(size of the model) per
 * call; only stop reports and tests call it, never the cycle loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rings/ring.h"

enum { W_NONE, W_RING, W_Q, W_LIST };
/* queue kinds of a node / IP */
enum { Q_IQCH, Q_IQARB, Q_IQOUT, Q_RBIN, Q_RBOUT, Q_EQIN, Q_EQARB, Q_EQCH, Q_L2H, Q_H2LH, Q_H2LL };

typedef struct wloc {
  uint8_t type, die, net, qk;
  int16_t node, idx; /* node (queues) or ring index (rings); idx: queue index or ring position */
  const dcin_q *q;
} wloc;

static const char *const w_net[DCIN_NUM_NETS] = {"REQ", "RSP", "DATA"};
static const char *const w_lane[DCIN_NUM_LANES] = {"TR", "TL", "TD", "TU"};
static const char *const w_kind[] = {"RD", "WR", "DBID", "Retry", "Comp", "Pcredit", "data"};
static const char *const w_qname[] = {"IQ channel buffer",
                                      "IQ arbiter input",
                                      "inject queue",
                                      "ring-bridge input",
                                      "ring-bridge output",
                                      "EQ input",
                                      "EQ arbiter input",
                                      "EQ channel buffer",
                                      "l2h",
                                      "h2l_h",
                                      "h2l_l"};

typedef struct wmap {
  wloc *at; /* by flit index */
  uint32_t cap;
} wmap;

static void w_q(wmap *m, const dcin_q *q, wloc l) {
  l.type = W_Q;
  l.q = q;
  for (int i = 0; i < q->n; i++) {
    uint32_t f = dcin_q_at(q, (unsigned)i);
    if (f < m->cap) m->at[f] = l;
  }
}

static int w_build(const dcin_sim *s, wmap *m) {
  m->cap = s->cap_flits;
  m->at = calloc(m->cap ? m->cap : 1, sizeof *m->at);
  if (!m->at) return -1;
  for (int di = 0; di < s->ndies; di++) {
    const dcin_die *d = &s->dies[di];
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      for (int r = 0; r < d->nrings; r++) {
        const dcin_ring *g = &d->rings[net][r];
        for (int p = 0; g->count && p < g->len; p++) {
          uint32_t f = dcin_ring_at(g, p);
          if (f != DCIN_NIL && f < m->cap)
            m->at[f] = (wloc){W_RING, (uint8_t)di, (uint8_t)net, 0, (int16_t)r, (int16_t)p, NULL};
        }
      }
      for (int n = 0; n < s->cfg.nodes; n++) {
        const dcin_node *nd = &d->nodes[net][n];
        wloc l = {W_Q, (uint8_t)di, (uint8_t)net, 0, (int16_t)n, 0, NULL};
        for (int i = 0; i < DCIN_NUM_IPS; i++) {
          l.idx = (int16_t)i;
          l.qk = Q_IQCH, w_q(m, &nd->iq_ch[i], l);
          l.qk = Q_IQARB, w_q(m, &nd->iq_arb[i], l);
          l.qk = Q_EQCH, w_q(m, &nd->eq_ch[i], l);
        }
        for (int i = 0; i < DCIN_NUM_IQ_DIRS; i++)
          l.idx = (int16_t)i, l.qk = Q_IQOUT, w_q(m, &nd->iq_out[i], l);
        for (int i = 0; i < 2; i++) {
          l.idx = (int16_t)i;
          l.qk = Q_RBIN, w_q(m, &nd->rb_in[i], l);
          l.qk = Q_EQIN, w_q(m, &nd->eq_in[i], l);
        }
        for (int i = 0; i < DCIN_NUM_RB_OUT; i++)
          l.idx = (int16_t)i, l.qk = Q_RBOUT, w_q(m, &nd->rb_out[i], l);
        for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++)
          l.idx = (int16_t)i, l.qk = Q_EQARB, w_q(m, &nd->eq_arb[i], l);
      }
    }
    for (int k = 0; k < s->cfg.nodes * DCIN_NUM_IPS; k++) {
      const dcin_ip *ip = &d->ips[k];
      if (!ip->busy) continue;
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        wloc l = {W_Q,
                  (uint8_t)di,
                  (uint8_t)net,
                  0,
                  (int16_t)(k / DCIN_NUM_IPS),
                  (int16_t)(k % DCIN_NUM_IPS),
                  NULL};
        l.qk = Q_L2H, w_q(m, &ip->l2h[net], l);
        l.qk = Q_H2LH, w_q(m, &ip->h2l_h[net], l);
        l.qk = Q_H2LL, w_q(m, &ip->h2l_l[net], l);
        l.type = W_LIST;
        uint32_t c = 0;
        for (uint32_t f = ip->inj[net].n ? ip->inj[net].head : DCIN_NIL;
             f != DCIN_NIL && c < ip->inj[net].n; f = s->flits[f].next, c++)
          if (f < m->cap) m->at[f] = l;
      }
      for (int p = 0; p < DCIN_NUM_RSP_PRIO; p++) {
        wloc l = {W_LIST,
                  (uint8_t)di,
                  DCIN_NET_RSP,
                  0,
                  (int16_t)(k / DCIN_NUM_IPS),
                  (int16_t)(k % DCIN_NUM_IPS),
                  NULL};
        uint32_t c = 0;
        for (uint32_t f = ip->rsp_q[p].n ? ip->rsp_q[p].head : DCIN_NIL;
             f != DCIN_NIL && c < ip->rsp_q[p].n; f = s->flits[f].next, c++)
          if (f < m->cap) m->at[f] = l;
      }
    }
  }
  return 0;
}

/* The flit that keeps q from taking a flit this cycle, DCIN_NIL if q has room. */
static uint32_t w_blocker(const dcin_q *q) {
  if (dcin_q_pre(q) != DCIN_NIL) return dcin_q_pre(q);
  if (q->n >= q->cap) return q->buf[q->head];
  return DCIN_NIL;
}

/* One edge: what flit f waits for (DCIN_NIL: not a flit; why says what instead). */
static uint32_t w_next(const dcin_sim *s, const wmap *m, uint32_t f, char *why, size_t cap) {
  const wloc *l = &m->at[f];
  const dcin_flit *fl = &s->flits[f];
  const dcin_cfg *c = &s->cfg;
  why[0] = '\0';
  if (l->type == W_NONE) {
    snprintf(why, cap, "not in the network");
    return DCIN_NIL;
  }
  const dcin_die *d = &s->dies[l->die];
  if (l->type == W_RING) {
    const dcin_ring *g = &d->rings[l->net][l->node];
    int p = l->idx;
    if (g->kind[p] == DCIN_SL_CP_IN && g->ej[p] == fl->ecoord) {
      int node = g->node[p], lane = g->lane[p];
      const dcin_node *nd = &d->nodes[l->net][node];
      bool neg = lane == DCIN_TL || lane == DCIN_TU;
      int dim = dcin_lane_dim(c, lane), fifo = dcin_etag_fifo(c, lane);
      const dcin_q *q = dim == 0 ? &nd->rb_in[neg] : &nd->eq_in[neg];
      const int *capl = c->etag_cap[lane];
      snprintf(why, cap, "its exit, the %s %s of node %d (E-Tag %s; T2 %d/%d T1 %d/%d T0 %d/%d)",
               w_qname[dim == 0 ? Q_RBIN : Q_EQIN], w_lane[lane], node,
               fl->etag == DCIN_T0   ? "T0"
               : fl->etag == DCIN_T1 ? "T1"
                                     : "T2",
               nd->ue[fifo][2], capl[2], nd->ue[fifo][1], capl[1], nd->ue[fifo][0], capl[0]);
      if (dcin_q_pre(q) != DCIN_NIL) return dcin_q_pre(q);
      return q->n ? q->buf[q->head] : DCIN_NIL; /* entries are held by the flits inside */
    }
    int nx = p + 1 == g->len ? 0 : p + 1;
    uint32_t b = dcin_ring_at(g, nx);
    snprintf(why, cap, b != DCIN_NIL ? "the slice ahead" : "nothing (the slice ahead is free)");
    return b;
  }
  if (l->type == W_LIST) {
    const dcin_ip *ip = dcin_ipp((dcin_die *)d, l->node, l->idx);
    if (fl->net == DCIN_NET_REQ && !fl->old && l->idx != DCIN_IP_D2D_RN &&
        s->txns[fl->txn].t_reserve == DCIN_NO_CYCLE) {
      const dcin_txn *t = &s->txns[fl->txn];
      snprintf(why, cap, "a %s tracker of its GDMA (free: %d trackers, %d buffer flits)",
               t->is_read ? "read" : "write", t->is_read ? ip->rd_trk : ip->wr_trk,
               t->is_read ? ip->rdb : ip->wdb);
      return DCIN_NIL;
    }
    snprintf(why, cap, "the IP's l2h");
    return w_blocker(&ip->l2h[l->net]);
  }
  /* bounded queue: a flit behind the head waits for the head */
  const dcin_q *q = l->q;
  uint32_t pre = dcin_q_pre(q);
  if (pre != f && q->buf[q->head] != f) {
    snprintf(why, cap, "the head of its queue");
    return q->buf[q->head];
  }
  if (pre == f) {
    snprintf(why, cap, "room in its FIFO");
    return q->n ? q->buf[q->head] : DCIN_NIL;
  }
  const dcin_node *nd = &d->nodes[l->net][l->node];
  int lane_p = c->yx ? DCIN_TR : DCIN_TD, lane_n = c->yx ? DCIN_TL : DCIN_TU;
  const dcin_q *to = NULL;
  int cp_lane = -1;
  switch (l->qk) {
    case Q_IQCH:
      to = &nd->iq_arb[l->idx];
      break;
    case Q_IQARB:
      to = &nd->iq_out[dcin_first_lane(c, fl->src_node, fl->dst_node)];
      break;
    case Q_IQOUT:
      if (l->idx == DCIN_IQ_EQ)
        to = &nd->eq_arb[DCIN_EQP_IQ];
      else if (dcin_lane_dim(c, l->idx) == 0)
        cp_lane = l->idx;
      else
        to = &nd->rb_out[fl->dst_node == l->node                        ? DCIN_RB_EQ
                         : d->scoord[fl->dst_node] > d->scoord[l->node] ? DCIN_RB_P
                                                                        : DCIN_RB_N];
      break;
    case Q_RBIN:
      to = &nd->rb_out[fl->dst_node == l->node                        ? DCIN_RB_EQ
                       : d->scoord[fl->dst_node] > d->scoord[l->node] ? DCIN_RB_P
                                                                      : DCIN_RB_N];
      break;
    case Q_RBOUT:
      if (l->idx == DCIN_RB_EQ)
        to = &nd->eq_arb[DCIN_EQP_RB];
      else
        cp_lane = l->idx == DCIN_RB_P ? lane_p : lane_n;
      break;
    case Q_EQIN:
      to = &nd->eq_arb[l->idx == 0 ? DCIN_EQP_P : DCIN_EQP_N];
      break;
    case Q_EQARB:
      to = &nd->eq_ch[fl->dst_ip];
      break;
    case Q_EQCH:
      to = &dcin_ipp((dcin_die *)d, l->node, l->idx)->h2l_h[l->net];
      break;
    case Q_H2LH:
      to = &dcin_ipp((dcin_die *)d, l->node, l->idx)->h2l_l[l->net];
      break;
    case Q_H2LL:
      snprintf(why, cap, "its IP to take it");
      return DCIN_NIL;
    case Q_L2H:
      to = &s->dies[l->die].nodes[l->net][l->node].iq_ch[l->idx];
      break;
    default:
      break;
  }
  if (cp_lane >= 0) {
    int me = l->node * 4 + cp_lane;
    const dcin_ring *g = &d->rings[l->net][d->ring_of[me]];
    uint32_t b = dcin_ring_at(g, d->cp_out[me]);
    snprintf(why, cap, "the CP_OUT slice of %s at node %d%s", w_lane[cp_lane], l->node,
             b == DCIN_NIL ? " (free or I-Tag reserved)" : "");
    return b;
  }
  if (!to) return DCIN_NIL;
  snprintf(why, cap, "room in the next queue");
  return w_blocker(to);
}

static void w_desc(const dcin_sim *s, const wmap *m, uint32_t f, char *buf, size_t cap) {
  const wloc *l = &m->at[f];
  const dcin_flit *fl = &s->flits[f];
  int n =
      snprintf(buf, cap, "%s %s of request %llu (node %d -> %d)", w_net[fl->net], w_kind[fl->kind],
               (unsigned long long)s->txns[fl->txn].request_id, fl->src_node, fl->dst_node);
  if (n < 0 || (size_t)n >= cap) return;
  if (l->type == W_RING) {
    const dcin_ring *g = &s->dies[l->die].rings[l->net][l->node];
    snprintf(buf + n, cap - (size_t)n, " on die%d ring %d slice %d (%s at node %d)", l->die,
             l->node, l->idx, w_lane[g->lane[l->idx]], g->node[l->idx]);
  } else if (l->type == W_Q) {
    snprintf(buf + n, cap - (size_t)n, " in die%d node %d %s %d", l->die, l->node, w_qname[l->qk],
             l->idx);
  } else if (l->type == W_LIST) {
    snprintf(buf + n, cap - (size_t)n, " in die%d node %d IP %d inject FIFO", l->die, l->node,
             l->idx);
  }
}

#define W_MAX_STEPS 4096

/* Follows the wait-for chain from flit f and writes it to buf: one line per link, consecutive
 * links along one ring folded into one line.  Returns the cycle length (0: the chain ends). */
static int w_chain(const dcin_sim *s, const wmap *m, uint32_t f, char *buf, size_t cap) {
  uint32_t *seen_at = calloc(m->cap ? m->cap : 1, sizeof *seen_at); /* step + 1 */
  uint32_t *path = malloc(sizeof *path * W_MAX_STEPS);
  char why[192], desc[192];
  size_t len = strlen(buf);
  int cycle = 0, steps = 0;
  if (!seen_at || !path) goto out;
  while (steps < W_MAX_STEPS) {
    seen_at[f] = (uint32_t)steps + 1;
    path[steps++] = f;
    uint32_t b = w_next(s, m, f, why, sizeof why);
    /* fold a run of flits on one ring each waiting for the slice ahead */
    const wloc *l = &m->at[f];
    int run = 0;
    while (b != DCIN_NIL && l->type == W_RING && m->at[b].type == W_RING &&
           m->at[b].node == l->node && m->at[b].die == l->die && m->at[b].net == l->net &&
           !seen_at[b] && !strcmp(why, "the slice ahead") && steps < W_MAX_STEPS) {
      seen_at[b] = (uint32_t)steps + 1;
      path[steps++] = b;
      run++;
      f = b;
      b = w_next(s, m, f, why, sizeof why);
    }
    w_desc(s, m, path[steps - 1 - run], desc, sizeof desc);
    if (len + 1 < cap) {
      int k = snprintf(buf + len, cap - len, "%s%s", len ? "\n" : "", desc);
      if (k > 0) len += (size_t)k < cap - len ? (size_t)k : cap - len - 1;
      if (run && len + 1 < cap) {
        k = snprintf(buf + len, cap - len, " and the %d flits after it on that ring, each", run);
        if (k > 0) len += (size_t)k < cap - len ? (size_t)k : cap - len - 1;
      }
      if (len + 1 < cap) {
        k = snprintf(buf + len, cap - len, " waits for %s", why);
        if (k > 0) len += (size_t)k < cap - len ? (size_t)k : cap - len - 1;
      }
    }
    if (b == DCIN_NIL) break;
    if (seen_at[b]) {
      cycle = steps - (int)seen_at[b] + 1;
      w_desc(s, m, b, desc, sizeof desc);
      if (len + 1 < cap) {
        int k = snprintf(buf + len, cap - len, "\n= %s: a cycle of %d flits", desc, cycle);
        if (k > 0) len += (size_t)k < cap - len ? (size_t)k : cap - len - 1;
      }
      break;
    }
    f = b;
  }
out:
  free(seen_at);
  free(path);
  return cycle;
}

/* The wait-for chain of the first flit of transaction t (see w_chain); 0 when none is held. */
int dcin_wait_chain(const dcin_sim *s, uint32_t t, char *buf, size_t cap) {
  wmap m;
  if (cap) buf[0] = '\0';
  if (w_build(s, &m)) return 0;
  int cycle = 0;
  for (uint32_t f = 0; f < m.cap; f++)
    if (m.at[f].type != W_NONE && s->flits[f].txn == t) {
      cycle = w_chain(s, &m, f, buf, cap);
      break;
    }
  free(m.at);
  return cycle;
}

/* The first resource cycle among all held flits, scanning flits in index order; 0 if none. */
int dcin_find_cycle(const dcin_sim *s, char *buf, size_t cap) {
  wmap m;
  if (cap) buf[0] = '\0';
  if (w_build(s, &m)) return 0;
  int cycle = 0;
  for (uint32_t f = 0; f < m.cap && !cycle; f++)
    if (m.at[f].type != W_NONE) {
      buf[0] = '\0';
      cycle = w_chain(s, &m, f, buf, cap);
    }
  if (!cycle && cap) buf[0] = '\0';
  free(m.at);
  return cycle;
}
