/* One KCIN die: allocation of its nodes, IP interfaces and rings, and the order of work inside
 * one sim cycle (IP-clock work on IP cycles, network work on NoC cycles, then the commit of every
 * pre register).  Invariant: within a cycle every stage reads FIFO contents as they were at the
 * start of the cycle and writes only pre registers, so the visiting order of nodes never matters
 * for a flit's timing.
 */
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "rings/ring.h"

/* arena entries of a queue of depth cap (dcin_arena_take) */
static size_t room(int cap) { return dcin_q_room((unsigned)cap); }

static size_t node_queue_slots(const dcin_cfg *c) {
  size_t n = (size_t)DCIN_NUM_IPS * (room(c->iq_ch) + room(c->arb_in) + room(c->eq_ch));
  for (int i = 0; i < DCIN_NUM_IQ_DIRS; i++) n += room(c->iq_out[i]);
  n += 2u * (room(c->rb_in + 1) + room(c->eq_in + 1)) + (size_t)DCIN_NUM_RB_OUT * room(c->rb_out);
  n += (size_t)DCIN_NUM_EQ_PORTS * room(c->arb_in);
  return n;
}

size_t dcin_die_arena_slots(const dcin_cfg *c) {
  size_t per_ip = (size_t)DCIN_NUM_NETS * (room(c->l2h) + room(c->h2l_h) + room(c->h2l_l));
  return (size_t)c->nodes * (DCIN_NUM_NETS * node_queue_slots(c) + DCIN_NUM_IPS * per_ip);
}

int dcin_die_init(dcin_sim *s, dcin_die *d, int id, cs_err *err) {
  dcin_cfg *c = &s->cfg;
  d->id = id;
  d->cfg = c;
  d->sn_release.head = d->sn_release.tail = DCIN_NIL;
  int rc = dcin_ring_build(s, d, err);
  if (rc) return rc;
  for (int net = 0; net < DCIN_NUM_NETS; net++) {
    d->nodes[net] = calloc((size_t)c->nodes, sizeof(dcin_node));
    if (!d->nodes[net]) return cs_err_set(err, CS_ENOMEM, "die %d nodes", id);
    for (int n = 0; n < c->nodes; n++) {
      dcin_node *nd = &d->nodes[net][n];
      rc = 0;
      for (int i = 0; i < DCIN_NUM_IPS; i++) {
        rc |= dcin_arena_take(s, &nd->iq_ch[i], c->iq_ch);
        rc |= dcin_arena_take(s, &nd->iq_arb[i], c->arb_in);
        rc |= dcin_arena_take(s, &nd->eq_ch[i], c->eq_ch);
      }
      for (int i = 0; i < DCIN_NUM_IQ_DIRS; i++)
        rc |= dcin_arena_take(s, &nd->iq_out[i], c->iq_out[i]);
      for (int i = 0; i < 2; i++) {
        rc |= dcin_arena_take_ej(s, &nd->rb_in[i], c->rb_in);
        rc |= dcin_arena_take_ej(s, &nd->eq_in[i], c->eq_in);
      }
      for (int i = 0; i < DCIN_NUM_RB_OUT; i++) rc |= dcin_arena_take(s, &nd->rb_out[i], c->rb_out);
      for (int i = 0; i < DCIN_NUM_EQ_PORTS; i++)
        rc |= dcin_arena_take(s, &nd->eq_arb[i], c->arb_in);
      if (rc) return cs_err_set(err, CS_EINTERNAL, "queue arena too small");
    }
  }
  d->ips = calloc((size_t)c->nodes * DCIN_NUM_IPS, sizeof(dcin_ip));
  d->ipwords = (c->nodes * DCIN_IP_BITS + 63) / 64;
  d->ip_inj = calloc((size_t)d->ipwords * 2, sizeof(uint64_t));
  d->ip_ej = d->ip_inj ? d->ip_inj + d->ipwords : NULL;
  d->mwords = (c->nodes + 63) / 64;
  d->busym[0] = calloc((size_t)d->mwords * DCIN_NUM_NETS * 2, sizeof(uint64_t));
  if (!d->busym[0]) return cs_err_set(err, CS_ENOMEM, "die %d node sets", id);
  for (int net = 0; net < DCIN_NUM_NETS; net++) {
    d->busym[net] = d->busym[0] + net * d->mwords;
  }
  /* a FIFO returns at most one entry per step, two in compat mode (at entry and exit) */
  d->cap_rel = (uint32_t)c->nodes * DCIN_NUM_NETS * 4 * 2;
  d->rel[0] = malloc(sizeof *d->rel[0] * d->cap_rel * 2);
  d->rel[1] = d->rel[0] ? d->rel[0] + d->cap_rel : NULL;
  /* per step at most one arrival per IP and network, one burst leaving per IP */
  d->arr = malloc(sizeof *d->arr * (size_t)c->nodes * DCIN_NUM_IPS * (DCIN_NUM_NETS + 1));
  d->txdone = d->arr ? d->arr + (size_t)c->nodes * DCIN_NUM_IPS * DCIN_NUM_NETS : NULL;
  if (!d->ip_inj || !d->rel[0] || !d->arr)
    return cs_err_set(err, CS_ENOMEM, "die %d", id);
  if (!d->ips) return cs_err_set(err, CS_ENOMEM, "die %d IP interfaces", id);
  for (int n = 0; n < c->nodes; n++)
    for (int i = 0; i < DCIN_NUM_IPS; i++) {
      dcin_ip *ip = dcin_ipp(d, n, i);
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        ip->inj[net].head = ip->inj[net].tail = DCIN_NIL;
        if (dcin_arena_take(s, &ip->l2h[net], c->l2h) ||
            dcin_arena_take(s, &ip->h2l_h[net], c->h2l_h) ||
            dcin_arena_take(s, &ip->h2l_l[net], c->h2l_l))
          return cs_err_set(err, CS_EINTERNAL, "queue arena too small");
      }
      for (int p = 0; p < DCIN_NUM_RSP_PRIO; p++) ip->rsp_q[p].head = ip->rsp_q[p].tail = DCIN_NIL;
      ip->rd_wait.head = ip->rd_wait.tail = ip->wr_wait.head = ip->wr_wait.tail = DCIN_NIL;
      switch (i) {
        case DCIN_IP_GDMA0:
        case DCIN_IP_GDMA1:
          ip->rd_trk = c->rn_rd_trk, ip->wr_trk = c->rn_wr_trk, ip->rdb = c->rn_rdb,
          ip->wdb = c->rn_wdb;
          ip->rate = c->dma_rate, ip->cap = c->dma_cap;
          break;
        case DCIN_IP_DDR0:
        case DCIN_IP_DDR1:
          ip->ro_trk = c->sn_ro_trk, ip->share_trk = c->sn_share_trk, ip->sn_wdb = c->sn_wdb;
          ip->rate = c->ddr_rate, ip->cap = c->ddr_cap;
          break;
        case DCIN_IP_D2D_RN:
          ip->rd_trk = s->lcfg.rn_rd_trk, ip->wr_trk = s->lcfg.rn_wr_trk;
          ip->rdb = s->lcfg.rn_rdb, ip->wdb = s->lcfg.rn_wdb;
          ip->rate = s->lcfg.rn_rate, ip->cap = s->lcfg.rn_cap;
          break;
        default:
          ip->ro_trk = s->lcfg.sn_ro_trk, ip->share_trk = s->lcfg.sn_share_trk;
          ip->sn_wdb = s->lcfg.sn_wdb, ip->sn_rdb = s->lcfg.sn_rdb;
          ip->rate = s->lcfg.sn_rate, ip->cap = s->lcfg.sn_cap;
      }
      ip->tx_tok = ip->rx_tok = ip->cap;
    }
  return 0;
}

void dcin_die_free(dcin_die *d) {
  if (d->rings[0]) {
    for (int r = 0; r < d->nrings; r++) {
      free(d->rings[0][r].kind);
      free(d->rings[0][r].lane);
      free(d->rings[0][r].node);
      free(d->rings[0][r].ej);
      free(d->rings[0][r].ejs);
      free(d->rings[0][r].cp_in_pos);
      free(d->rings[0][r].ndist);
      free(d->rings[0][r].eidx);
    }
  }
  for (int net = 0; net < DCIN_NUM_NETS; net++) {
    if (d->rings[net])
      for (int r = 0; r < d->nrings; r++)
        free(d->rings[net][r].slot), free(d->rings[net][r].dkey);
    free(d->rings[net]);
    free(d->nodes[net]);
  }
  free(d->ips);
  free(d->ip_inj);
  free(d->busym[0]);
  free(d->rel[0]);
  free(d->arr);
  free(d->cp_in);
  free(d->cp_out);
  free(d->ring_of);
  free(d->route);
  free(d->ekey);
  free(d->scoord);
  free(d->t0_bits);
  free(d->t0_read);
  free(d->itag_slot);
  free(d->cp_site[0]);
  free(d->cp_key);
}
