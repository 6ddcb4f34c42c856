/* Invariant checker for tests: every live flit is in exactly one place of the model (ring slot,
 * queue, pre register, IP list, D2D link), queue counters agree with their contents, node/IP busy
 * counters equal what they hold, and resource counters stay within their configured bounds.
 * O(size of the model); tests call it every cycle, the engine never does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct seen {
  uint8_t *mark;
  uint32_t cap, count;
  const char *dup_where;
} seen;

static int see(seen *v, uint32_t f, const char *where, cs_err *err) {
  if (f >= v->cap) return cs_err_set(err, CS_EINTERNAL, "flit %u out of range in %s", f, where);
  if (v->mark[f])
    return cs_err_set(err, CS_EINTERNAL, "flit %u held twice (again in %s)", f, where);
  v->mark[f] = 1;
  v->count++;
  return 0;
}

static int see_q(seen *v, const dcin_q *q, const char *where, uint32_t *held, cs_err *err) {
  if (q->n > q->cap + 1)
    return cs_err_set(err, CS_EINTERNAL, "%s: %u flits in depth %u", where, q->n, q->cap);
  for (int i = 0; i < q->n; i++) {
    int rc = see(v, dcin_q_at(q, (unsigned)i), where, err);
    if (rc) return rc;
  }
  *held += q->n;
  return 0;
}

static int see_list(seen *v, const dcin_sim *s, const dcin_list *l, const char *where,
                    uint32_t *held, cs_err *err) {
  uint32_t n = 0;
  for (uint32_t f = l->n ? l->head : DCIN_NIL; f != DCIN_NIL; f = s->flits[f].next) {
    int rc = see(v, f, where, err);
    if (rc) return rc;
    if (++n > l->n) break;
  }
  if (n != l->n)
    return cs_err_set(err, CS_EINTERNAL, "%s: list holds %u, counter says %u", where, n, l->n);
  *held += n;
  return 0;
}

/* An IP out of the inject work set with items on its inject side must be parked: only REQs
 * waiting, the first of them refused its tracker or buffer, which no release has freed since. */
static bool parked_rightly(const dcin_sim *s, const dcin_ip *ip, int ipi) {
  if (!dcin_ip_parkable(ip) || ipi == DCIN_IP_D2D_RN) return false;
  const dcin_flit *fl = &s->flits[ip->inj[DCIN_NET_REQ].head];
  const dcin_txn *t = &s->txns[fl->txn];
  if (fl->old) return false;
  return t->is_read ? ip->rd_trk <= 0 || ip->rdb < t->burst
                    : ip->wr_trk <= 0 || ip->wdb < t->burst;
}

int dcin_check(const dcin_sim *s, cs_err *err) {
  seen v = {calloc(s->cap_flits ? s->cap_flits : 1, 1), s->cap_flits, 0, NULL};
  if (!v.mark) return cs_err_set(err, CS_ENOMEM, "checker");
  int rc = 0;
  const dcin_cfg *c = &s->cfg;
  for (int di = 0; di < s->ndies && !rc; di++) {
    const dcin_die *d = &s->dies[di];
    for (int net = 0; net < DCIN_NUM_NETS && !rc; net++) {
      for (int r = 0; r < d->nrings && !rc; r++) {
        const dcin_ring *g = &d->rings[net][r];
        uint32_t n = 0;
        for (int i = 0; i < g->len && !rc; i++) {
          if (g->slot[i] != DCIN_NIL) {
            n++;
            rc = see(&v, g->slot[i], "ring", err);
          }
        }
        if (!rc && n != g->count)
          rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d ring %d: %u flits, count %u", di, net,
                          r, n, g->count);
        /* eject buckets: every keyed occupied frame index once, in the bucket of its key */
        uint32_t keyed = 0, filed = 0;
        for (int i = 0; i < g->len && !rc; i++) {
          if (g->slot[i] == DCIN_NIL && g->dkey[i] != DCIN_NO_KEY)
            rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d ring %d: empty index %d keyed", di,
                            net, r, i);
          keyed += g->dkey[i] != DCIN_NO_KEY;
          for (int j = g->dhead[i]; j != DCIN_NO_KEY && !rc; j = g->dnext[j], filed++)
            if (g->dkey[j] != i || filed > (uint32_t)g->len)
              rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d ring %d: index %d in bucket %d", di,
                              net, r, j, i);
        }
        if (!rc && keyed != filed)
          rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d ring %d: %u keyed, %u filed", di, net,
                          r, keyed, filed);
      }
      uint32_t nact = 0;
      for (int node = 0; node < c->nodes; node++) {
        const dcin_node *nd = &d->nodes[net][node];
        nact += nd->occ != 0;
        if (!rc && (d->busym[net][node >> 6] >> (node & 63) & 1) != (nd->occ != 0))
          rc =
              cs_err_set(err, CS_EINTERNAL, "die %d net %d node %d: busy bit wrong", di, net, node);
      }
      if (!rc && nact != d->nact[net])
        rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d: %u busy nodes, nact %u", di, net, nact,
                        d->nact[net]);
      for (int node = 0; node < c->nodes && !rc; node++) {
        const dcin_node *nd = &d->nodes[net][node];
        uint32_t held = 0;
        for (int i = 0; i < DCIN_NUM_IPS && !rc; i++) {
          rc = see_q(&v, &nd->iq_ch[i], "iq_ch", &held, err);
          if (!rc) rc = see_q(&v, &nd->iq_arb[i], "iq_arb", &held, err);
          if (!rc) rc = see_q(&v, &nd->eq_ch[i], "eq_ch", &held, err);
        }
        for (int i = 0; i < DCIN_NUM_IQ_DIRS && !rc; i++)
          rc = see_q(&v, &nd->iq_out[i], "iq_out", &held, err);
        for (int i = 0; i < 2 && !rc; i++) {
          rc = see_q(&v, &nd->rb_in[i], "rb_in", &held, err);
          if (!rc) rc = see_q(&v, &nd->eq_in[i], "eq_in", &held, err);
        }
        for (int i = 0; i < DCIN_NUM_RB_OUT && !rc; i++)
          rc = see_q(&v, &nd->rb_out[i], "rb_out", &held, err);
        for (int i = 0; i < DCIN_NUM_EQ_PORTS && !rc; i++)
          rc = see_q(&v, &nd->eq_arb[i], "eq_arb", &held, err);
        /* occ: one bit per queue, set exactly when it holds a flit */
        const struct { const dcin_q *q; int n, bit; } qs[] = {
            {nd->iq_ch, DCIN_NUM_IPS, DCIN_B_IQCH},       {nd->iq_arb, DCIN_NUM_IPS, DCIN_B_IQARB},
            {nd->iq_out, DCIN_NUM_IQ_DIRS, DCIN_B_IQOUT}, {nd->rb_in, 2, DCIN_B_RBIN},
            {nd->rb_out, DCIN_NUM_RB_OUT, DCIN_B_RBOUT},  {nd->eq_in, 2, DCIN_B_EQIN},
            {nd->eq_arb, DCIN_NUM_EQ_PORTS, DCIN_B_EQARB}, {nd->eq_ch, DCIN_NUM_IPS, DCIN_B_EQCH}};
        uint64_t occ = 0;
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++)
          for (int i = 0; i < qs[k].n; i++)
            if (qs[k].q[i].n) occ |= DCIN_BIT(qs[k].bit + i);
        for (int i = 0; i < DCIN_NUM_IPS; i++) { /* and its IPs' l2h and h2l_h on this network */
          const dcin_ip *ip = &d->ips[node * DCIN_NUM_IPS + i];
          if (ip->l2h[net].n) occ |= DCIN_BIT(DCIN_B_L2H + i);
          if (ip->h2l_h[net].n) occ |= DCIN_BIT(DCIN_B_H2LH + i);
        }
        if (!rc && occ != nd->occ)
          rc = cs_err_set(err, CS_EINTERNAL, "die %d net %d node %d: occ %llx, queues %llx", di,
                          net, node, (unsigned long long)nd->occ, (unsigned long long)occ);
        for (int f = 0; f < 4 && !rc; f++)
          for (int l = 0; l < 3 && !rc; l++)
            if ((nd->ue[f][l] < 0 && !c->crossring_compat) ||
                nd->ue[f][l] > c->etag_cap[0][0] + 256)
              rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d: E-Tag counter %d out of range",
                              di, node, nd->ue[f][l]);
      }
    }
    for (int k = 0; k < c->nodes * DCIN_NUM_IPS && !rc; k++) {
      const dcin_ip *ip = &d->ips[k];
      uint32_t held = 0;
      for (int net = 0; net < DCIN_NUM_NETS && !rc; net++) {
        rc = see_list(&v, s, &ip->inj[net], "inject FIFO", &held, err);
        if (!rc) rc = see_q(&v, &ip->l2h[net], "l2h", &held, err);
        if (!rc) rc = see_q(&v, &ip->h2l_h[net], "h2l_h", &held, err);
        if (!rc) rc = see_q(&v, &ip->h2l_l[net], "h2l_l", &held, err);
      }
      for (int p = 0; p < DCIN_NUM_RSP_PRIO && !rc; p++)
        rc = see_list(&v, s, &ip->rsp_q[p], "rsp queue", &held, err);
      if (!rc && held != ip->busy)
        rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d ip %d: holds %u, busy %u", di,
                        k / DCIN_NUM_IPS, k % DCIN_NUM_IPS, held, ip->busy);
      if (!rc && (ip->rd_trk < 0 || ip->wr_trk < 0 || ip->rdb < 0 || ip->wdb < 0 ||
                  ip->ro_trk < 0 || ip->share_trk < 0 || ip->sn_wdb < 0))
        rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d ip %d: negative resource", di,
                        k / DCIN_NUM_IPS, k % DCIN_NUM_IPS);
    }
  }
  for (int di = 0; di < s->ndies && !rc; di++) {
    const dcin_die *d = &s->dies[di];
    for (int node = 0; node < c->nodes && !rc; node++) {
      for (int i = 0; i < DCIN_NUM_IPS && !rc; i++) {
        const dcin_ip *ip = &d->ips[node * DCIN_NUM_IPS + i];
        uint32_t h = 0, l = 0;
        for (int net = 0; net < DCIN_NUM_NETS; net++) {
          h += ip->h2l_h[net].n + ip->h2l_l[net].n;
          l += ip->h2l_l[net].n;
        }
        if (!rc && (h != ip->h2l_n || l != ip->rx_n))
          rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d ip %d: h2l %u/%u, h2l_l %u/%u", di,
                          node, i, h, ip->h2l_n, l, ip->rx_n);
        unsigned b = (unsigned)(node * DCIN_IP_BITS + i);
        bool inj = d->ip_inj[b >> 6] >> (b & 63) & 1, ej = d->ip_ej[b >> 6] >> (b & 63) & 1;
        if (!rc && ((inj && ip->busy == ip->h2l_n) || ej != (ip->rx_n > 0)))
          rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d ip %d: work sets inject %d eject %d",
                          di, node, i, inj, ej);
        if (!rc && !inj && ip->busy > ip->h2l_n && !parked_rightly(s, ip, i))
          rc = cs_err_set(err, CS_EINTERNAL, "die %d node %d ip %d: parked with work to do", di,
                          node, i);
      }
    }
  }
  for (int i = 0; i < 2 * s->layout.num_links && !rc; i++) {
    const dcin_axi *a = &s->axi[i];
    uint32_t held = 0;
    for (int ch = 0; ch < DCIN_NUM_AXI && !rc; ch++) {
      rc = see_list(&v, s, &a->pend[ch], "axi pending", &held, err);
      if (!rc) rc = see_list(&v, s, &a->chan[ch], "axi channel", &held, err);
      if (!rc) rc = see_list(&v, s, &a->rx[ch], "axi receive", &held, err);
    }
    if (!rc && held != a->busy)
      rc = cs_err_set(err, CS_EINTERNAL, "link %d: holds %u, busy %u", i, held, a->busy);
  }
  if (!rc && v.count != s->nflits)
    rc = cs_err_set(err, CS_EINTERNAL, "%u live flits but %u found in the model (lost or leaked)",
                    s->nflits, v.count);
  free(v.mark);
  return rc;
}
