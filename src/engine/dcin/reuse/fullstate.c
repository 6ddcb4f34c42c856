/* The whole engine state at a step boundary with flits in flight, as one byte string: two
 * boundaries with equal strings have equal futures, shifted in time.  Every flit and transaction
 * appears by its ordinal in one fixed walk over the places that hold them (ring slices by
 * position, queues and lists in order, D2D channels), its fields after the walk; every time is
 * relative to now; ring slot ids, I-Tag reservations and T0 tables are relative to the slot
 * numbering, which rotates with the NoC clock.  Left out is what is derived from the rest
 * (counters of the queues' contents, eject buckets, caches), bookkeeping with no effect on the
 * simulation (request ids, the reuse recorder's step indices), and the T0 pointers: relative to
 * the slots they move at every boundary even where nothing reads them, so reuse.c checks those a
 * recorded step read, as for every step it replays.  reuse.c compares the strings of a job's
 * boundaries to find a step that starts where an earlier one started.
 */
#include <stdlib.h>
#include <string.h>

#include "../model/rings/ring.h"
#include "reuse.h"

typedef struct fs_walk {
  const dcin_sim *s;
  dcin_bytes *out;
  uint64_t now, netcyc1;
  uint32_t *flit_ord;  /* flit index -> ordinal + 1, 0 when not met */
  uint16_t *slot_len;  /* flit index -> length of the ring its slot id counts on, 0: none */
  uint8_t *timed;      /* flit index -> FS_DEPART / FS_ARRIVE: the stamp its place reads */
  uint32_t *flit_at;   /* ordinal -> flit index */
  uint32_t nflit;
  uint32_t *txn_ord;   /* transaction index -> ordinal + 1 */
  uint32_t *txn_at;    /* ordinal -> transaction index */
  uint32_t ntxn;
} fs_walk;

enum { FS_DEPART = 1, FS_ARRIVE = 2 };

static void fs_grow(dcin_bytes *b, size_t n) {
  if (b->failed) return;
  size_t c = b->cap ? b->cap : 65536;
  while (c < b->len + n) c *= 2;
  uint8_t *q = realloc(b->p, c);
  if (!q) {
    b->failed = true;
    return;
  }
  b->p = q;
  b->cap = c;
}

static inline void fs_put(fs_walk *w, const void *p, size_t n) {
  dcin_bytes *b = w->out;
  if (b->len + n > b->cap) {
    fs_grow(b, n);
    if (b->failed) return;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
}
#define FS_PUT(w, v) fs_put(w, &(v), sizeof(v))

static void fs_time(fs_walk *w, uint64_t t) {
  int64_t rel = t == DCIN_NO_CYCLE ? INT64_MIN : (int64_t)(t - w->now);
  FS_PUT(w, rel);
}

/* A slot id of a ring of length len, relative to the rotating numbering. */
static uint32_t fs_slot(const fs_walk *w, uint32_t slot, uint32_t len) {
  return (uint32_t)((slot % len + w->netcyc1) % len);
}

/* The slot id that stands at relative position k of a ring of length len. */
static uint32_t fs_slot_at(const fs_walk *w, uint32_t k, uint32_t len) {
  return (uint32_t)((k + len - w->netcyc1 % len) % len);
}

/* Pool entry i (DCIN_NIL: none) by its ordinal, numbering it when first met. */
static void fs_ordinal(fs_walk *w, uint32_t *ord, uint32_t *at, uint32_t *n, uint32_t i) {
  uint32_t v = DCIN_NIL;
  if (i != DCIN_NIL) {
    if (!ord[i]) {
      at[(*n)++] = i;
      ord[i] = *n;
    }
    v = ord[i] - 1;
  }
  FS_PUT(w, v);
}
static void fs_flit(fs_walk *w, uint32_t f) { fs_ordinal(w, w->flit_ord, w->flit_at, &w->nflit, f); }
static void fs_txn(fs_walk *w, uint32_t t) { fs_ordinal(w, w->txn_ord, w->txn_at, &w->ntxn, t); }

static void fs_queue(fs_walk *w, const dcin_q *q) {
  uint16_t n = (uint16_t)dcin_q_len(q);
  FS_PUT(w, n);
  for (unsigned i = 0; i < n; i++) fs_flit(w, dcin_q_at(q, i));
  fs_flit(w, dcin_q_pre(q));
}

/* A list of flits; timed: the stamp the place reads of them (0: none). */
static void fs_list(fs_walk *w, const dcin_list *l, uint8_t timed) {
  FS_PUT(w, l->n);
  uint32_t k = 0;
  for (uint32_t f = l->n ? l->head : DCIN_NIL; f != DCIN_NIL && k < l->n;
       f = w->s->flits[f].next, k++) {
    fs_flit(w, f);
    w->timed[f] = timed;
  }
}

static void fs_txn_list(fs_walk *w, const dcin_list *l) {
  FS_PUT(w, l->n);
  uint32_t k = 0;
  for (uint32_t t = l->n ? l->head : DCIN_NIL; t != DCIN_NIL && k < l->n;
       t = w->s->txns[t].next_wait, k++)
    fs_txn(w, t);
}

/* As reuse.c's state string: full (the level reaches the size by now), else level and stamp. */
static void fs_bucket(fs_walk *w, double tok, uint64_t last, double rate, double cap) {
  uint8_t full = dcin_bucket_full(tok, last, rate, cap, w->now);
  FS_PUT(w, full);
  if (!full) {
    FS_PUT(w, tok);
    fs_time(w, last);
  }
}

static void fs_die(fs_walk *w, const dcin_die *d) {
  const dcin_cfg *c = d->cfg;
  fs_txn_list(w, &d->sn_release);
  for (int net = 0; net < DCIN_NUM_NETS; net++)
    for (int r = 0; r < d->nrings; r++) {
      const dcin_ring *g = &d->rings[net][r];
      /* occupied slices by position (the frame is a detail), then the reserved slots,
       * relative; each list ends with UINT16_MAX */
      const uint16_t end = UINT16_MAX;
      for (int p = 0; g->count && p < g->len; p++) {
        uint32_t f = dcin_ring_at(g, p);
        if (f == DCIN_NIL) continue;
        uint16_t at = (uint16_t)p;
        FS_PUT(w, at);
        fs_flit(w, f);
        w->slot_len[f] = g->len;
      }
      FS_PUT(w, end);
      for (uint32_t k = 0; k < g->len; k++) {
        uint32_t id = fs_slot_at(w, k, g->len);
        if (g->itag[id] < 0) continue;
        uint16_t at = (uint16_t)k;
        FS_PUT(w, at);
        FS_PUT(w, g->itag[id]);
      }
      FS_PUT(w, end);
    }
  for (int net = 0; net < DCIN_NUM_NETS; net++)
    for (int node = 0; node < c->nodes; node++) {
      const dcin_node *nd = &d->nodes[net][node];
      uint32_t busy = dcin_node_held(nd);
      FS_PUT(w, busy); /* flits in all its queues: none, and the queues are left out */
      for (int i = 0; busy && i < DCIN_NUM_IPS; i++) {
        fs_queue(w, &nd->iq_ch[i]);
        fs_queue(w, &nd->iq_arb[i]);
        fs_queue(w, &nd->eq_ch[i]);
      }
      for (int i = 0; busy && i < DCIN_NUM_IQ_DIRS; i++) fs_queue(w, &nd->iq_out[i]);
      for (int i = 0; busy && i < 2; i++) fs_queue(w, &nd->rb_in[i]), fs_queue(w, &nd->eq_in[i]);
      for (int i = 0; busy && i < DCIN_NUM_RB_OUT; i++) fs_queue(w, &nd->rb_out[i]);
      for (int i = 0; busy && i < DCIN_NUM_EQ_PORTS; i++) fs_queue(w, &nd->eq_arb[i]);
      /* a tagged head waiting to inject holds a slot id of its lane's ring */
      for (int lane = 0; busy && lane < DCIN_NUM_LANES; lane++) {
        const dcin_q *q = (const dcin_q *)((const char *)nd + d->cp_src[lane]);
        uint32_t f = dcin_q_len(q) ? dcin_q_front(q) : DCIN_NIL;
        if (f != DCIN_NIL && w->s->flits[f].itag)
          w->slot_len[f] = d->rings[net][d->ring_of[node * 4 + lane]].len;
      }
      FS_PUT(w, nd->iq_rr), FS_PUT(w, nd->rb_rr), FS_PUT(w, nd->eq_rr), FS_PUT(w, nd->ue);
      uint8_t rel_now[4][3], rel_pending[4][3];
      dcin_etag_pending(d, nd, rel_now, rel_pending);
      FS_PUT(w, rel_pending), FS_PUT(w, rel_now), FS_PUT(w, nd->itag_out);
      FS_PUT(w, nd->itag_req);
      for (int dim = 0; dim < 2; dim++) {
        uint32_t len = d->rings[0][d->ring_of[node * 4 + (dim ? DCIN_TD : DCIN_TR)]].len;
        /* the T0 table: its slots, relative, in relative order */
        const uint64_t *tb =
            d->t0_bits + ((size_t)(net * c->nodes + node) * 2 + dim) * (size_t)d->t0_words;
        for (uint32_t k = 0; k < len; k++) {
          uint32_t id = fs_slot_at(w, k, len);
          if (tb[id / 64] >> (id % 64) & 1) FS_PUT(w, k);
        }
        uint32_t end = UINT32_MAX;
        FS_PUT(w, end);
      }
    }
  for (int k = 0; k < c->nodes * DCIN_NUM_IPS; k++) {
    const dcin_ip *ip = &d->ips[k];
    FS_PUT(w, ip->busy); /* items in its lists and queues: none, and they are left out */
    for (int net = 0; ip->busy && net < DCIN_NUM_NETS; net++) {
      fs_list(w, &ip->inj[net], FS_DEPART);
      fs_queue(w, &ip->l2h[net]);
      fs_queue(w, &ip->h2l_h[net]);
      fs_queue(w, &ip->h2l_l[net]);
    }
    for (int p = 0; ip->busy && p < DCIN_NUM_RSP_PRIO; p++) fs_list(w, &ip->rsp_q[p], FS_DEPART);
    fs_txn_list(w, &ip->rd_wait);
    fs_txn_list(w, &ip->wr_wait);
    int trk[8] = {ip->rd_trk, ip->wr_trk,    ip->rdb,    ip->wdb,
                  ip->ro_trk, ip->share_trk, ip->sn_wdb, ip->sn_rdb};
    FS_PUT(w, trk);
    fs_bucket(w, ip->tx_tok, ip->tx_last, ip->rate, ip->cap);
    fs_bucket(w, ip->rx_tok, ip->rx_last, ip->rate, ip->cap);
    unsigned b = (unsigned)((k / DCIN_NUM_IPS) * DCIN_IP_BITS + k % DCIN_NUM_IPS);
    uint8_t in_work = d->ip_inj[b >> 6] >> (b & 63) & 1; /* not parked */
    FS_PUT(w, in_work);
  }
}

static void fs_flit_body(fs_walk *w, uint32_t f) {
  const dcin_flit *fl = &w->s->flits[f];
  fs_txn(w, fl->txn);
  /* a stamp is read only where the flit is (an inject FIFO, a D2D channel); elsewhere it is an
   * old one */
  fs_time(w, w->timed[f] == FS_DEPART ? fl->depart : DCIN_NO_CYCLE);
  fs_time(w, w->timed[f] == FS_ARRIVE ? fl->arrive : DCIN_NO_CYCLE);
  const int16_t nodes[3] = {fl->src_node, fl->dst_node, fl->ecoord};
  const uint8_t b[14] = {fl->die,  fl->src_ip, fl->dst_ip,     fl->net,         fl->kind,
                         fl->flit_id, fl->last, fl->etag,   fl->used_entry, fl->in_t0_table,
                         fl->itag != 0, fl->axi, fl->lane,  fl->old};
  const uint32_t waits[3] = {fl->wait_h, fl->wait_v, fl->eject_fail};
  uint32_t slot = w->slot_len[f] ? fs_slot(w, fl->slot, w->slot_len[f]) : 0;
  FS_PUT(w, nodes), FS_PUT(w, b), FS_PUT(w, waits), FS_PUT(w, slot);
}

static void fs_txn_body(fs_walk *w, uint32_t t) {
  const dcin_txn *x = &w->s->txns[t];
  const int32_t ids[2] = {x->src_id, x->dst_id};
  const int16_t nodes[4] = {x->src_node, x->dst_node, x->link, x->wait_node};
  const uint8_t b[20] = {x->is_read,    x->cross,     x->src_die,   x->dst_die,     x->src_ip,
                         x->dst_ip,     x->link_dir,  x->state,     x->attr_old,    x->gate,
                         x->gate_kind,  x->rn_released, x->done_req, x->done_final,
                         x->d2d_sn_old, x->described, x->in_release, x->wait_ip,    x->aw_ok,
                         x->addr_waited};
  const uint16_t n[6] = {x->burst, x->data_rx_rn, x->data_rx_sn, x->data_rx_d2d, x->w_rx, x->live};
  FS_PUT(w, ids), FS_PUT(w, nodes), FS_PUT(w, b), FS_PUT(w, n);
  fs_put(w, &x->retries, DCIN_COUNTERS * sizeof(uint32_t));
  const uint64_t st[] = {x->gate_base,  x->t_inject,    x->t_reserve,   x->t_req_noc,
                         x->t_sn_req,   x->t_req_done,  x->t_rsp_inject, x->t_dbid_rn,
                         x->t_data_noc, x->t_wdata_gen, x->t_data_done, x->t_wdata_d2d,
                         x->t_final,    x->t_cmd_end,
                         x->in_release ? x->release_at : DCIN_NO_CYCLE}; /* else an old one */
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) fs_time(w, st[i]);
}

bool dcin_full_state(const dcin_sim *s, uint64_t phase, dcin_bytes *out) {
  out->len = 0;
  out->failed = false;
  if (s->comp_n) return false; /* completions the driver has not taken: not a boundary */
  fs_walk w = {.s = s, .out = out, .now = s->cyc,
               .netcyc1 = s->cyc / (uint64_t)s->cfg.net_scale + 1};
  w.flit_ord = calloc(s->cap_flits ? s->cap_flits : 1, sizeof *w.flit_ord);
  w.slot_len = calloc(s->cap_flits ? s->cap_flits : 1, sizeof *w.slot_len);
  w.timed = calloc(s->cap_flits ? s->cap_flits : 1, sizeof *w.timed);
  w.flit_at = malloc(sizeof *w.flit_at * (s->cap_flits ? s->cap_flits : 1));
  w.txn_ord = calloc(s->cap_txns ? s->cap_txns : 1, sizeof *w.txn_ord);
  w.txn_at = malloc(sizeof *w.txn_at * (s->cap_txns ? s->cap_txns : 1));
  bool ok = w.flit_ord && w.slot_len && w.timed && w.flit_at && w.txn_ord && w.txn_at;
  if (ok) {
    FS_PUT(&w, phase), FS_PUT(&w, s->rng), FS_PUT(&w, s->active_txns);
    for (int i = 0; i < 2 * s->layout.num_links; i++) {
      const dcin_axi *a = &s->axi[i];
      for (int ch = 0; ch < DCIN_NUM_AXI; ch++) {
        fs_list(&w, &a->pend[ch], 0);
        fs_list(&w, &a->chan[ch], FS_ARRIVE);
        fs_list(&w, &a->rx[ch], 0);
        fs_bucket(&w, a->tok[ch], a->last[ch], s->lcfg.axi_rate, s->lcfg.axi_cap);
      }
    }
    for (int di = 0; di < s->ndies; di++) fs_die(&w, &s->dies[di]);
    /* every live flit is held somewhere the walk went (dcin_check's places) */
    ok = w.nflit == s->nflits;
    for (uint32_t i = 0; ok && i < w.nflit; i++) fs_flit_body(&w, w.flit_at[i]);
    for (uint32_t i = 0; ok && i < w.ntxn; i++) fs_txn_body(&w, w.txn_at[i]);
  }
  free(w.flit_ord);
  free(w.slot_len);
  free(w.timed);
  free(w.flit_at);
  free(w.txn_ord);
  free(w.txn_at);
  return ok && !out->failed;
}
