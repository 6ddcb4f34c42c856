/* Exact step reuse.  Steps never overlap; when a step's requests arrive the network is quiet (no
 * flit anywhere, no completion pending, no waiting request).  What can still shape the future then
 * is small: the clock phase, round-robin pointers, E-Tag counters and pending entry releases, the
 * T0 pointers (relative to the rotating slot ids), token-bucket levels, free trackers, pending
 * share-tracker releases and the RNG when it is used.  reuse_sig() writes all of it, times taken
 * relative to now, followed by the step's injects at their physical places, into one byte string.
 * Two steps with equal strings evolve identically, shifted in time.
 *
 * The first step with a given string is simulated and recorded: the cycle of every completion the
 * driver sees, the cycle of every rsp it injects, each transaction as the driver described it, the
 * statistics it added and the state string at its end (the next boundary).  A later step with the
 * same string is replayed: completions are handed out at the recorded cycles shifted, records come
 * from the copies, and at its end the recorded end state is written into the engine, which then
 * holds exactly what simulating the step would have left.  A driver that answers at other
 * moments than recorded is simply not reused.
 *
 * A step whose end is not quiet (write data still in flight) is recorded too, as the head of a
 * chain: the step simulated after it is keyed by that record (its serial), the time since its
 * start and the new injects, since the engine state between them is exactly what the recorded
 * step left.  A replay of such a step leaves the engine stale (it holds the state of the chain's
 * quiet start, plus the T0 pointers the replayed steps moved), so the next step must replay too,
 * down the chain, until a replayed step ends quiet and its end state makes the engine whole
 * again.  A next step that finds no record cannot be simulated from a stale engine: the engine
 * fails the job with CS_ERETRY, and the job runs again without the shared context.  An engine
 * without a caller's context therefore never replays a step that ends in flight.
 *
 * Inside one job the steps of a chain are simulated one after the other, each from the last one's
 * end.  At each boundary with flits in flight the engine takes its whole state (fullstate.c); a
 * step whose whole state and injects equal those of an earlier step of the job will do what that
 * step did, so it replays that step's record (a copy keyed as this step, with that step's serial:
 * the states after them are the same, so the chain goes on from there).  Ring steps that end in
 * flight settle into such a cycle after a few steps, like the quiet ones.
 *
 * A driver may also take a replayed step whole (cs_engine_ops.finish_step, dcin_reuse_finish):
 * the records are filled straight from the copies, with the ticks the driver would have noted,
 * and the end state is written, as its rounds of advance, poll, rsp and describe would leave
 * them.  Where those rounds would stop (the deadlock guard, an rsp at another moment) the step is
 * left to them.  Plans number a step's requests consecutively, so the maps by request id are
 * built only for steps that do not.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/bigmem.h"
#include "commsweep/hash.h"
#include "reuse.h"

typedef struct reuse_ev {
  uint32_t rel;  /* completion cycle - step start */
  uint32_t idx;  /* transaction in step order */
  uint8_t phase; /* CS_PHASE_* */
} reuse_ev;

typedef struct reuse_rel {
  uint32_t idx; /* transaction of the step whose share-tracker release is pending at the end */
  uint64_t rel; /* release cycle - step start */
  dcin_txn txn; /* the transaction then, stamps relative to the start */
} reuse_rel;

/* What the record of a transaction needs besides its place (the step's injects, equal in every
 * step that matches, give that): its counters, its D2D link, the record's six NoC cycles relative
 * to the step's start, ready to be added (reuse_noc), and the driver ticks of its two completions
 * relative to the start's, once worked out (play_through).  84 bytes against a dcin_txn's 240:
 * with its rsp cycle and completions, about 116 bytes per transaction instead of 280. */
#define REUSE_NO_STAMP UINT32_MAX
enum { RC_INJECT, RC_WDATA_GEN, RC_REQ_DONE, RC_RSP_INJECT, RC_WDATA_DONE, RC_FINAL, RC_NUM };
typedef struct reuse_txn {
  uint32_t noc[RC_NUM];
  uint32_t counters[DCIN_COUNTERS]; /* dcin_txn.retries .. dcin_txn.eject_fail */
  uint32_t tick_req, tick_final;
  int16_t link;
  uint8_t link_dir;
} reuse_txn;

/* A stamp (sim cycle, DCIN_NO_CYCLE: not reached) as the record's NoC cycle relative to a step
 * starting at `start`: 0 when not reached, else 1 + (start % net_scale + stamp - start) /
 * net_scale, so that the NoC cycle of a step starting at s' is s' / net_scale + value - 1.  Exact
 * for every start in the same phase: steps match only in the same clock phase (reuse_sig), which
 * is a multiple of net_scale.  REUSE_NO_STAMP when it does not fit. */
static uint32_t reuse_noc(const dcin_sim *s, uint64_t stamp, uint64_t start) {
  if (stamp == DCIN_NO_CYCLE) return 0;
  if (stamp < start || stamp - start >= REUSE_NO_STAMP) return REUSE_NO_STAMP;
  uint64_t ns = (uint64_t)s->cfg.net_scale, v = 1 + (start % ns + stamp - start) / ns;
  return v < REUSE_NO_STAMP ? (uint32_t)v : REUSE_NO_STAMP;
}

typedef struct reuse_t0 reuse_t0;

typedef struct reuse_step {
  uint8_t *key;
  size_t key_len;
  uint64_t hash;
  uint32_t n;     /* transactions */
  reuse_txn *txn; /* as described */
  uint64_t *rsp; /* rsp inject cycle - start */
  reuse_ev *ev;
  uint32_t nev, cap_ev;
  uint64_t len; /* end (next boundary) - start */
  uint8_t *end; /* state string at the end (without injects) */
  size_t end_len;
  reuse_rel *rel;
  uint32_t nrel;
  reuse_t0 *t0; /* the T0 pointers it consulted */
  uint32_t nt0;
  dcin_stats delta;
  uint64_t serial; /* unique in its cache: what the next step of a chain is keyed by */
  bool chain;      /* keyed by its predecessor (chain_key), not by a state string */
  bool open_end;   /* its end is not quiet: no end state, the engine stays stale after it */
  /* Whole-step replay (play_through), worked out at the step's first: whether the driver's
   * rounds run through it given a guard that lets them (0: not yet known, 1: yes, 2: never), and
   * the longest stretch of ticks between consecutive completions.  Like txn[].tick_*, the same at
   * every replay: a step matches only in the same phase of the driver tick (reuse_sig). */
  uint8_t through;
  uint32_t last_tick; /* of the last completion, relative to the start's */
  uint64_t through_residue; /* start % tick_den they were worked out for */
  uint64_t max_gap_ticks;
  size_t bytes;                          /* what it counts against the budget */
  struct reuse_step *next;               /* hash chain */
  struct reuse_step *lru_prev, *lru_next; /* most recently used first */
} reuse_step;

typedef struct reuse_inj {
  uint64_t id;
  int32_t src_id, dst_id;
  uint8_t src_die, dst_die, src_ip, dst_ip, is_read, burst;
  int16_t src_node, dst_node;
} reuse_inj;

enum { INJ_KEY = 8 + 2 * sizeof(int16_t) }; /* a collected request's place in the key */

#define REUSE_BUCKETS 1024
#define REUSE_MAX_BYTES ((size_t)256 << 20) /* recorded steps kept per engine */
#define REUSE_SEEN 8 /* boundaries with flits in flight a job remembers (periods up to 8 steps) */

/* A boundary with flits in flight whose step was simulated and recorded: its whole state and the
 * key of its step (the injects follow the first state_part bytes). */
typedef struct reuse_seen {
  dcin_bytes state;
  uint8_t *key;
  size_t key_len, state_part;
} reuse_seen;

/* The recorded steps: per engine, or shared by the engines of one caller (cs_dcin_reuse_new);
 * every key starts with the engine's configuration, so engines of other configurations share a
 * cache without ever matching each other's steps.  When a new step would pass the budget, the
 * least recently used steps make room (a sweep running its costliest jobs first would otherwise
 * fill it with the first few jobs' steps and simulate every step of the later ones). */
struct cs_dcin_reuse {
  reuse_step *tab[REUSE_BUCKETS];
  size_t bytes, budget;
  uint64_t steps, evicted, next_serial;
  reuse_step *lru_head, *lru_tail;
};

struct dcin_reuse {
  cs_dcin_reuse *cache;
  bool own_cache;
  /* boundary being collected */
  bool buffering;
  uint8_t *sig;
  size_t sig_len, sig_cap, sig_state_len; /* state part, then injects */
  reuse_inj *inj;
  uint32_t ninj, cap_inj;
  bool inj_consecutive; /* inj[i].id == inj[0].id + i (as plans number them): no inj_map */
  uint32_t *inj_map;    /* otherwise, open addressing over inj by request id: index or DCIN_NIL */
  uint32_t inj_mask;
  /* step being recorded (simulated) */
  reuse_step *rec;
  uint64_t rec_start;
  dcin_stats rec_stats;
  uint32_t *rec_slot; /* transaction slot per step index */
  uint32_t *rec_t0;   /* slot-relative T0 pointers at the start of the recorded step */
  uint32_t nt0_all;   /* T0 pointers of the engine: dies x nets x nodes x 2 */
  uint32_t rec_described;
  bool rec_ok;
  /* step being replayed */
  reuse_step *play;
  uint64_t play_start;
  uint32_t play_cursor;
  bool play_open;     /* its end state is not yet applied */
  /* its request ids are inj[i].id, kept until the next step is collected */
  bool play_consecutive; /* inj[i].id == inj[0].id + i: no play_map */
  uint32_t *play_map;    /* otherwise, open addressing: step index or DCIN_NIL */
  uint32_t play_mask;
  uint8_t *play_state; /* dcin_reuse_finish: the driver's view of each transaction */
  uint32_t cap_play_state;
  /* chain: the step just recorded or replayed ended with flits in flight (its serial and start),
   * 0 when it did not; stale while a replayed chain has not reached a quiet end */
  uint64_t chain_serial, chain_start;
  bool stale;
  /* the whole state at the boundary being collected (full_ok), and the job's last such ones */
  dcin_bytes full;
  bool full_ok;
  reuse_seen seen[REUSE_SEEN];
  uint32_t seen_next;
  uint64_t steps_cycled; /* replayed from an earlier step of the job with the same whole state */
  /* figures */
  uint64_t steps_seen, steps_replayed, steps_recorded;
};

/* ---- byte strings ------------------------------------------------------------------------ */

/* Room for n more bytes. */
static bool sig_reserve(dcin_reuse *r, size_t n) {
  if (r->sig_len + n > r->sig_cap) {
    size_t c = r->sig_cap ? r->sig_cap * 2 : 65536;
    while (c < r->sig_len + n) c *= 2;
    uint8_t *b = realloc(r->sig, c);
    if (!b) return false;
    r->sig = b;
    r->sig_cap = c;
  }
  return true;
}

static bool sig_put(dcin_reuse *r, const void *p, size_t n) {
  if (!sig_reserve(r, n)) return false;
  memcpy(r->sig + r->sig_len, p, n);
  r->sig_len += n;
  return true;
}
#define PUT(r, v) sig_put(r, &(v), sizeof(v))

/* A token bucket as its future sees it: full (the level reaches the size by now, so the next
 * refill caps it whatever its stamp), else the exact level and its stamp relative to now. */
static bool put_bucket(dcin_reuse *r, double tok, uint64_t last, double rate, double cap,
                       uint64_t now) {
  uint8_t full = dcin_bucket_full(tok, last, rate, cap, now);
  bool ok = PUT(r, full);
  if (!full) {
    int64_t rel = (int64_t)last - (int64_t)now;
    ok = ok && PUT(r, tok) && PUT(r, rel);
  }
  return ok;
}

static uint64_t phase_period(const dcin_sim *s) {
  uint64_t p = (uint64_t)s->cfg.ip_scale * (uint64_t)s->cfg.net_scale;
  uint64_t a = p, b = s->tick_den;
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return p / a * s->tick_den;
}

static uint32_t t0_len(const dcin_die *d, int node, int dim) {
  return d->rings[0][d->ring_of[node * 4 + (dim ? DCIN_TD : DCIN_TR)]].len;
}

/* The state string of the engine now, or false if the network is not quiet. */
static bool reuse_sig(dcin_sim *s, dcin_reuse *r) {
  r->sig_len = 0;
  if (s->nflits || s->comp_n || s->active_txns) return false;
  const dcin_cfg *c = &s->cfg;
  uint64_t now = s->cyc, phase = now % phase_period(s);
  /* the configuration first: a shared cache holds steps of other configurations too */
  int shape[2] = {s->ndies, s->layout.num_links};
  uint64_t ticks[2] = {s->tick_num, s->tick_den};
  bool ok = PUT(r, s->cfg) && PUT(r, s->lcfg) && PUT(r, shape) && PUT(r, ticks) &&
            sig_put(r, s->layout.links, sizeof s->layout.links[0] * (size_t)s->layout.num_links) && PUT(r, phase);
  if (c->ddr_r_var) ok = ok && PUT(r, s->rng);
  for (int i = 0; i < 2 * s->layout.num_links; i++) {
    const dcin_axi *a = &s->axi[i];
    if (a->busy) return false;
    for (int ch = 0; ch < DCIN_NUM_AXI; ch++)
      ok = ok && put_bucket(r, a->tok[ch], a->last[ch], s->lcfg.axi_rate, s->lcfg.axi_cap, now);
  }
  for (int di = 0; di < s->ndies && ok; di++) {
    const dcin_die *d = &s->dies[di];
    uint32_t n = d->sn_release.n;
    ok = ok && PUT(r, n);
    uint32_t k = 0;
    for (uint32_t t = n ? d->sn_release.head : DCIN_NIL; t != DCIN_NIL && k < n;
         t = s->txns[t].next_wait, k++) {
      const dcin_txn *x = &s->txns[t];
      int64_t rel = (int64_t)x->release_at - (int64_t)now;
      ok = ok && PUT(r, rel) && PUT(r, x->dst_node) && PUT(r, x->dst_ip) && PUT(r, x->burst);
    }
    for (size_t w = 0; w < (size_t)DCIN_NUM_NETS * c->nodes * 2 * d->t0_words; w++)
      if (d->t0_bits[w]) return false;
    for (int net = 0; net < DCIN_NUM_NETS && ok; net++)
      for (int node = 0; node < c->nodes && ok; node++) {
        const dcin_node *nd = &d->nodes[net][node];
        for (int l = 0; l < 4; l++)
          if (nd->itag_out[l]) return false;
        /* the T0 pointers are not here: see reuse_t0 */
        uint8_t rel_now[4][3], rel_pending[4][3];
        dcin_etag_pending(d, nd, rel_now, rel_pending);
        ok = PUT(r, nd->iq_rr) && PUT(r, nd->rb_rr) && PUT(r, nd->eq_rr) && PUT(r, nd->ue) &&
             PUT(r, rel_pending) && PUT(r, rel_now) && PUT(r, nd->itag_req);
      }
    for (int k2 = 0; k2 < c->nodes * DCIN_NUM_IPS && ok; k2++) {
      const dcin_ip *ip = &d->ips[k2];
      if (ip->rd_wait.n || ip->wr_wait.n || ip->busy) return false;
      int trk[8] = {ip->rd_trk, ip->wr_trk,    ip->rdb,    ip->wdb,
                    ip->ro_trk, ip->share_trk, ip->sn_wdb, ip->sn_rdb};
      ok = PUT(r, trk) && put_bucket(r, ip->tx_tok, ip->tx_last, ip->rate, ip->cap, now) &&
           put_bucket(r, ip->rx_tok, ip->rx_last, ip->rate, ip->cap, now);
    }
  }
  return ok;
}

/* Writes a state string made by reuse_sig (at another time) into the engine at cycle now. */
#define GET(p, v) (memcpy(&(v), p, sizeof(v)), p += sizeof(v))
static void get_bucket(const uint8_t **pp, double *tok, uint64_t *last, double cap, uint64_t now) {
  const uint8_t *p = *pp;
  uint8_t full;
  GET(p, full);
  if (full) {
    *tok = cap;
    *last = now;
  } else {
    int64_t rel;
    GET(p, *tok);
    GET(p, rel);
    *last = (uint64_t)((int64_t)now + rel);
  }
  *pp = p;
}

static void reuse_apply(dcin_sim *s, const uint8_t *p, uint64_t now) {
  const dcin_cfg *c = &s->cfg;
  uint64_t phase;
  p += sizeof s->cfg + sizeof s->lcfg + 2 * sizeof(int) + 2 * sizeof(uint64_t) +
       sizeof s->layout.links[0] * (size_t)s->layout.num_links;
  GET(p, phase);
  if (c->ddr_r_var) GET(p, s->rng);
  for (int i = 0; i < 2 * s->layout.num_links; i++) {
    dcin_axi *a = &s->axi[i];
    for (int ch = 0; ch < DCIN_NUM_AXI; ch++)
      get_bucket(&p, &a->tok[ch], &a->last[ch], s->lcfg.axi_cap, now);
  }
  for (int di = 0; di < s->ndies; di++) {
    dcin_die *d = &s->dies[di];
    uint32_t n;
    GET(p, n);
    /* the releases themselves are rebuilt from the step record; skip their key form */
    p += (size_t)n * (sizeof(int64_t) + sizeof(int16_t) + sizeof(uint8_t) + sizeof(uint16_t));
    d->nrel[0] = d->nrel[1] = 0;
    for (int net = 0; net < DCIN_NUM_NETS; net++)
      for (int node = 0; node < c->nodes; node++) {
        dcin_node *nd = &d->nodes[net][node];
        uint8_t rel_now[4][3], rel_pending[4][3];
        GET(p, nd->iq_rr);
        GET(p, nd->rb_rr);
        GET(p, nd->eq_rr);
        GET(p, nd->ue);
        GET(p, rel_pending);
        GET(p, rel_now);
        GET(p, nd->itag_req);
        /* as dcin_etag_pending reads them: rel_now returned at the end of the next step */
        for (int e = 0; e < 12; e++) {
          for (int n = 0; n < (&rel_now[0][0])[e]; n++) {
            int k = (int)((d->relgen + 1) & 1);
            d->rel[k][d->nrel[k]++] = &nd->ue[0][0] + e;
          }
          for (int n = 0; n < (&rel_pending[0][0])[e]; n++) {
            int k = (int)(d->relgen & 1);
            d->rel[k][d->nrel[k]++] = &nd->ue[0][0] + e;
          }
        }
      }
    for (int k = 0; k < c->nodes * DCIN_NUM_IPS; k++) {
      dcin_ip *ip = &d->ips[k];
      int trk[8];
      GET(p, trk);
      ip->rd_trk = trk[0], ip->wr_trk = trk[1], ip->rdb = trk[2], ip->wdb = trk[3];
      ip->ro_trk = trk[4], ip->share_trk = trk[5], ip->sn_wdb = trk[6], ip->sn_rdb = trk[7];
      get_bucket(&p, &ip->tx_tok, &ip->tx_last, ip->cap, now);
      get_bucket(&p, &ip->rx_tok, &ip->rx_last, ip->cap, now);
    }
  }
}

/* T0 pointers index ring slots, whose ids rotate with the clock, so their value relative to the
 * slots differs from step to step even when nothing uses them.  They matter only where a T0 flit
 * is arbitrated, which the engine notes (dcin_die.t0_read).  A recorded step keeps the pointers it
 * consulted, in slot-relative form, at its start and end: a later step matches only if those are
 * equal now, and gets their end values; the others are left alone, as simulating would. */
struct reuse_t0 {
  uint32_t at;         /* die * (nets * nodes * 2) + (net * nodes + node) * 2 + dim */
  uint32_t start, end; /* (pointer + NoC cycle + 1) mod ring length */
};

static uint32_t t0_canon(const dcin_sim *s, uint32_t at, uint64_t now) {
  uint32_t per = DCIN_NUM_NETS * (uint32_t)s->cfg.nodes * 2, k = at % per;
  const dcin_die *d = &s->dies[at / per];
  int node = (int)(k / 2 % (uint32_t)s->cfg.nodes), dim = (int)(k % 2);
  const dcin_node *nd = &d->nodes[k / 2 / (uint32_t)s->cfg.nodes][node];
  uint32_t len = t0_len(d, node, dim);
  uint64_t netcyc1 = now / (uint64_t)s->cfg.net_scale + 1;
  return (uint32_t)((nd->t0_ptr[dim] % len + netcyc1) % len);
}

static void t0_set(dcin_sim *s, uint32_t at, uint32_t canon, uint64_t now) {
  uint32_t per = DCIN_NUM_NETS * (uint32_t)s->cfg.nodes * 2, k = at % per;
  dcin_die *d = &s->dies[at / per];
  int node = (int)(k / 2 % (uint32_t)s->cfg.nodes), dim = (int)(k % 2);
  dcin_node *nd = &d->nodes[k / 2 / (uint32_t)s->cfg.nodes][node];
  uint32_t len = t0_len(d, node, dim);
  uint64_t netcyc1 = now / (uint64_t)s->cfg.net_scale + 1;
  nd->t0_ptr[dim] = (uint32_t)((canon + len - netcyc1 % len) % len);
}

/* ---- the cache ------------------------------------------------------------------------------ */

/* Hash of a state string, eight bytes at a time (equal strings are confirmed with memcmp). */
static uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = CS_FNV1A_BASIS;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = cs_fnv1a_word(h, w);
    h ^= h >> 29;
  }
  return cs_fnv1a_bytes(h, p + i, n - i);
}

static void step_free(reuse_step *x) {
  if (!x) return;
  free(x->key);
  free(x->txn);
  free(x->rsp);
  free(x->ev);
  free(x->end);
  free(x->rel);
  free(x->t0);
  free(x);
}

cs_dcin_reuse *cs_dcin_reuse_new(void) {
  cs_dcin_reuse *c = calloc(1, sizeof(cs_dcin_reuse));
  if (c) c->budget = REUSE_MAX_BYTES, c->next_serial = 1;
  return c;
}

void dcin_reuse_set_budget(cs_dcin_reuse *c, size_t bytes) { c->budget = bytes; }

void dcin_reuse_cache_figures(const cs_dcin_reuse *c, size_t *bytes, uint64_t *steps,
                              uint64_t *evicted) {
  *bytes = c->bytes, *steps = c->steps, *evicted = c->evicted;
}

static void lru_unlink(cs_dcin_reuse *c, reuse_step *x) {
  if (x->lru_prev) x->lru_prev->lru_next = x->lru_next;
  else c->lru_head = x->lru_next;
  if (x->lru_next) x->lru_next->lru_prev = x->lru_prev;
  else c->lru_tail = x->lru_prev;
  x->lru_prev = x->lru_next = NULL;
}

static void lru_front(cs_dcin_reuse *c, reuse_step *x) {
  x->lru_prev = NULL;
  x->lru_next = c->lru_head;
  if (c->lru_head) c->lru_head->lru_prev = x;
  else c->lru_tail = x;
  c->lru_head = x;
}

/* Drops least recently used steps until `need` more bytes fit the budget. */
static void make_room(cs_dcin_reuse *c, size_t need) {
  while (c->lru_tail && c->bytes + need > c->budget) {
    reuse_step *x = c->lru_tail, **pp = &c->tab[x->hash % REUSE_BUCKETS];
    while (*pp != x) pp = &(*pp)->next;
    *pp = x->next;
    lru_unlink(c, x);
    c->bytes -= x->bytes;
    c->steps--;
    c->evicted++;
    step_free(x);
  }
}

/* Files x, making room for it first. */
static void cache_insert(cs_dcin_reuse *c, reuse_step *x) {
  make_room(c, x->bytes);
  size_t b = x->hash % REUSE_BUCKETS;
  x->next = c->tab[b];
  c->tab[b] = x;
  lru_front(c, x);
  c->bytes += x->bytes;
  c->steps++;
}

/* A copy of step a keyed by key (a chain key): the same record, serial and end. */
static reuse_step *step_copy(const reuse_step *a, const uint8_t *key, size_t key_len, uint64_t h) {
  reuse_step *x = malloc(sizeof *x);
  if (!x) return NULL;
  *x = *a;
  x->key = malloc(key_len ? key_len : 1);
  x->txn = cs_big_malloc(sizeof *x->txn * (a->n ? a->n : 1));
  x->rsp = cs_big_malloc(sizeof *x->rsp * (a->n ? a->n : 1));
  x->ev = cs_big_malloc(sizeof *x->ev * (a->nev ? a->nev : 1));
  x->end = a->end ? malloc(a->end_len ? a->end_len : 1) : NULL;
  x->rel = a->rel ? malloc(sizeof *x->rel * a->nrel) : NULL;
  x->t0 = a->t0 ? malloc(sizeof *x->t0 * a->nt0) : NULL;
  x->next = x->lru_prev = x->lru_next = NULL;
  if (!x->key || !x->txn || !x->rsp || !x->ev || (a->end && !x->end) || (a->rel && !x->rel) ||
      (a->t0 && !x->t0)) {
    step_free(x);
    return NULL;
  }
  memcpy(x->key, key, key_len);
  memcpy(x->txn, a->txn, sizeof *x->txn * a->n);
  memcpy(x->rsp, a->rsp, sizeof *x->rsp * a->n);
  memcpy(x->ev, a->ev, sizeof *x->ev * a->nev);
  if (a->end) memcpy(x->end, a->end, a->end_len);
  if (a->rel) memcpy(x->rel, a->rel, sizeof *x->rel * a->nrel);
  if (a->t0) memcpy(x->t0, a->t0, sizeof *x->t0 * a->nt0);
  x->cap_ev = a->nev;
  x->key_len = key_len;
  x->hash = h;
  x->chain = true;
  x->bytes = a->bytes - a->key_len + key_len;
  return x;
}

void cs_dcin_reuse_free(cs_dcin_reuse *c) {
  if (!c) return;
  for (int b = 0; b < REUSE_BUCKETS; b++)
    for (reuse_step *x = c->tab[b], *nx; x; x = nx) nx = x->next, step_free(x);
  free(c);
}

void dcin_reuse_free(dcin_sim *s) {
  dcin_reuse *r = s->reuse;
  if (!r) return;
  if (r->own_cache) cs_dcin_reuse_free(r->cache);
  step_free(r->rec); /* being recorded: not in the cache yet */
  free(r->sig);
  free(r->inj);
  free(r->inj_map);
  free(r->rec_slot);
  free(r->rec_t0);
  free(r->play_map);
  free(r->play_state);
  free(r->full.p);
  for (int i = 0; i < REUSE_SEEN; i++) free(r->seen[i].state.p), free(r->seen[i].key);
  free(r);
  s->reuse = NULL;
}

void dcin_reuse_figures(const dcin_sim *s, uint64_t *seen, uint64_t *replayed, uint64_t *recorded) {
  const dcin_reuse *r = s->reuse;
  *seen = r ? r->steps_seen : 0;
  *replayed = r ? r->steps_replayed : 0;
  *recorded = r ? r->steps_recorded : 0;
}

static void stats_sub(dcin_stats *out, const dcin_stats *a, const dcin_stats *b) {
  const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
  uint64_t *po = (uint64_t *)out;
  for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++) po[i] = pa[i] - pb[i];
}
static void stats_add(dcin_stats *io, const dcin_stats *d) {
  const uint64_t *pd = (const uint64_t *)d;
  uint64_t *po = (uint64_t *)io;
  for (size_t i = 0; i < sizeof *io / sizeof(uint64_t); i++) po[i] += pd[i];
}
_Static_assert(sizeof(dcin_stats) % sizeof(uint64_t) == 0, "dcin_stats holds only uint64_t");

static void shift_stamps(dcin_txn *x, int64_t by) {
  uint64_t *st[] = {&x->t_inject,    &x->t_reserve,    &x->t_req_noc,   &x->t_sn_req,
                    &x->t_req_done,  &x->t_rsp_inject, &x->t_dbid_rn,   &x->t_data_noc,
                    &x->t_wdata_gen, &x->t_data_done,  &x->t_wdata_d2d, &x->t_final,
                    &x->t_cmd_end,   &x->gate_base,    &x->release_at};
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
    if (*st[i] != DCIN_NO_CYCLE) *st[i] = (uint64_t)((int64_t)*st[i] + by);
}

/* Ends the recording at a boundary whose state string (r->sig, state part) was just taken, if
 * quiet: stores the step if everything it needs was seen; a step whose end is not quiet is
 * stored with an open end, as the head of a chain (r->chain_serial). */
static void rec_finish(dcin_sim *s, dcin_reuse *r, bool quiet) {
  reuse_step *x = r->rec;
  r->rec = NULL;
  if (!x) return;
  bool ok = r->rec_ok && r->rec_described == x->n;
  x->open_end = !quiet;
  for (uint32_t i = 0; ok && i < x->n; i++) ok = x->rsp[i] != DCIN_NO_CYCLE;
  /* pending releases at a quiet end must all belong to this step (an open end keeps the whole
   * engine state for the chain instead) */
  uint32_t nrel = 0;
  for (int di = 0; ok && quiet && di < s->ndies; di++) nrel += s->dies[di].sn_release.n;
  if (ok && nrel) {
    x->rel = malloc(sizeof *x->rel * nrel);
    ok = x->rel != NULL;
    for (int di = 0; ok && di < s->ndies; di++) {
      const dcin_die *d = &s->dies[di];
      uint32_t k = 0;
      for (uint32_t t = d->sn_release.n ? d->sn_release.head : DCIN_NIL;
           ok && t != DCIN_NIL && k < d->sn_release.n; t = s->txns[t].next_wait, k++) {
        uint32_t idx = s->txns[t].step_idx;
        ok = idx < x->n && r->rec_slot[idx] == t;
        if (!ok) break;
        reuse_rel *e = &x->rel[x->nrel++];
        e->idx = idx;
        e->rel = s->txns[t].release_at - r->rec_start;
        e->txn = s->txns[t];
        shift_stamps(&e->txn, -(int64_t)r->rec_start);
        e->txn.step_idx = DCIN_NIL;
      }
    }
  }
  uint32_t per = DCIN_NUM_NETS * (uint32_t)s->cfg.nodes * 2;
  for (uint32_t a = 0; ok && a < r->nt0_all; a++)
    if (s->dies[a / per].t0_read[a % per]) {
      if (x->nt0 % 64 == 0) {
        reuse_t0 *n = realloc(x->t0, sizeof *n * (x->nt0 + 64));
        if (!n) {
          ok = false;
          break;
        }
        x->t0 = n;
      }
      x->t0[x->nt0++] = (reuse_t0){a, r->rec_t0[a], t0_canon(s, a, s->cyc)};
    }
  if (ok && quiet) {
    x->end = malloc(r->sig_len ? r->sig_len : 1);
    ok = x->end != NULL;
    if (ok) memcpy(x->end, r->sig, r->sig_len), x->end_len = r->sig_len;
  }
  for (uint32_t i = 0; i < x->n; i++) /* forget the step indices of the slots */
    if (r->rec_slot[i] != DCIN_NIL && s->txns[r->rec_slot[i]].step_idx == i)
      s->txns[r->rec_slot[i]].step_idx = DCIN_NIL;
  if (!ok) {
    step_free(x);
    return;
  }
  x->len = s->cyc - r->rec_start;
  stats_sub(&x->delta, &s->st, &r->rec_stats);
  x->bytes = sizeof *x + x->key_len + x->end_len +
             (size_t)x->n * (sizeof *x->txn + sizeof *x->rsp) + (size_t)x->nev * sizeof *x->ev +
             (size_t)x->nrel * sizeof *x->rel + (size_t)x->nt0 * sizeof *x->t0;
  cache_insert(r->cache, x);
  r->steps_recorded++;
  x->serial = r->cache->next_serial++;
  if (x->open_end) r->chain_serial = x->serial, r->chain_start = r->rec_start;
}

/* The key of a step that follows a step ending in flight (r->chain_serial): that step and the
 * time since its start, the state part of the key; the injects follow as in a state string. */
static bool chain_key(dcin_sim *s, dcin_reuse *r) {
  const uint8_t marker = 0xc7;
  uint64_t since = s->cyc - r->chain_start;
  r->sig_len = 0;
  return PUT(r, marker) && PUT(r, r->chain_serial) && PUT(r, since);
}

/* ---- the hooks ---------------------------------------------------------------------------- */

static uint32_t play_find(const dcin_reuse *r, uint64_t id);
#define play_find_c play_find

static dcin_reuse *reuse_new(cs_dcin_reuse *cache) {
  dcin_reuse *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->cache = cache ? cache : cs_dcin_reuse_new();
  r->own_cache = cache == NULL;
  if (!r->cache) {
    free(r);
    return NULL;
  }
  return r;
}

static dcin_reuse *reuse_of(dcin_sim *s) {
  if (!s->reuse) s->reuse = reuse_new(NULL);
  return s->reuse;
}

int dcin_reuse_attach(dcin_sim *s, cs_dcin_reuse *c) {
  if (s->reuse) return -1; /* only before the first request */
  s->reuse = reuse_new(c);
  return s->reuse ? 0 : -1;
}

static uint32_t id_hash(uint64_t id, uint32_t mask) {
  return (uint32_t)(id * 0x9e3779b97f4a7c15ULL >> 32) & mask;
}

/* The request is waiting in the step being collected or belongs to the step being replayed. */
bool dcin_reuse_has(const dcin_sim *s, uint64_t id) {
  const dcin_reuse *r = s->reuse;
  if (!r) return false;
  if (r->buffering && r->inj_consecutive) {
    if (r->ninj && id - r->inj[0].id < r->ninj) return true;
  } else if (r->buffering) {
    for (uint32_t h = id_hash(id, r->inj_mask);; h = (h + 1) & r->inj_mask) {
      if (r->inj_map[h] == DCIN_NIL) break;
      if (r->inj[r->inj_map[h]].id == id) return true;
    }
  }
  return r->play && r->play_open && play_find_c(r, id) != DCIN_NIL;
}

/* The map over the buffered requests, for cap_inj of them. */
static bool inj_map_build(dcin_reuse *r) {
  uint32_t *m = realloc(r->inj_map, sizeof *m * 2 * r->cap_inj);
  if (!m) return false;
  r->inj_map = m;
  r->inj_mask = 2 * r->cap_inj - 1;
  memset(m, 0xff, sizeof *m * 2 * r->cap_inj);
  for (uint32_t i = 0; i < r->ninj; i++) {
    uint32_t h = id_hash(r->inj[i].id, r->inj_mask);
    while (m[h] != DCIN_NIL) h = (h + 1) & r->inj_mask;
    m[h] = i;
  }
  return true;
}

/* op_inject, for a request: true when the request was taken into the step being collected (the
 * caller then does nothing else); false to inject it at once (reuse off or network not quiet). */
bool dcin_reuse_take(dcin_sim *s, uint64_t id, int src_id, int dst_id, const dcin_place *p) {
  if (s->reuse_off || s->check_each_cycle || s->trace) return false;
  dcin_reuse *r = reuse_of(s);
  if (!r) return false;
  if (!r->buffering) {
    if (r->play && r->play_open) return false; /* cannot happen: the step is not over */
    r->play = NULL;
    r->full_ok = false;
    if (!r->stale) { /* a stale engine's state is the chain's, not its own */
      r->chain_serial = 0;
      bool quiet = reuse_sig(s, r);
      rec_finish(s, r, quiet); /* an open end sets chain_serial */
      if (!quiet && !r->chain_serial) return false;
      if (!quiet && !chain_key(s, r)) r->sig_len = 0; /* simulated, unrecorded */
      /* a job whose states have not repeated over three memories' worth of steps is taken not
       * to settle (many flows under round robin): it stops paying for the strings */
      r->full_ok = !quiet && r->sig_len && !r->own_cache &&
                   (r->steps_cycled || r->seen_next < 3 * REUSE_SEEN) &&
                   dcin_full_state(s, s->cyc % phase_period(s), &r->full);
    } else if (!chain_key(s, r)) {
      return false; /* the flush that follows fails the job for a rerun */
    }
    r->sig_state_len = r->sig_len;
    r->buffering = true;
    r->ninj = 0;
    r->inj_consecutive = true;
    r->steps_seen++;
  }
  /* the buffered ones are flushed first when this fails: order is kept */
  if (r->ninj == r->cap_inj) {
    uint32_t c = r->cap_inj ? r->cap_inj * 2 : 1024;
    reuse_inj *n = cs_big_realloc(r->inj, sizeof *n * c);
    if (!n) return false;
    r->inj = n;
    r->cap_inj = c;
    if (!r->inj_consecutive && !inj_map_build(r)) return false;
  }
  if (r->inj_consecutive && r->ninj && id != r->inj[0].id + r->ninj) {
    r->inj_consecutive = false;
    if (!inj_map_build(r)) return false;
  }
  if (!r->inj_consecutive) {
    uint32_t h = id_hash(id, r->inj_mask);
    while (r->inj_map[h] != DCIN_NIL) h = (h + 1) & r->inj_mask;
    r->inj_map[h] = r->ninj;
  }
  r->inj[r->ninj++] = (reuse_inj){id,
                                  src_id,
                                  dst_id,
                                  (uint8_t)p->src_die,
                                  (uint8_t)p->dst_die,
                                  (uint8_t)p->src_ip,
                                  (uint8_t)p->dst_ip,
                                  (uint8_t)p->is_read,
                                  (uint8_t)p->burst,
                                  (int16_t)p->src_node,
                                  (int16_t)p->dst_node};
  /* its place follows the state in the key, 12 bytes (none: the step is simulated, unrecorded) */
  if (r->sig_len && sig_reserve(r, INJ_KEY)) {
    uint8_t *b = r->sig + r->sig_len;
    const uint8_t head[8] = {(uint8_t)p->src_die, (uint8_t)p->dst_die, (uint8_t)p->src_ip,
                             (uint8_t)p->dst_ip,  (uint8_t)p->is_read, (uint8_t)p->burst};
    const int16_t nodes[2] = {(int16_t)p->src_node, (int16_t)p->dst_node};
    memcpy(b, head, sizeof head);
    memcpy(b + sizeof head, nodes, sizeof nodes);
    r->sig_len += INJ_KEY;
  } else {
    r->sig_len = 0;
  }
  return true;
}

/* The T0 pointers step x read stand now where they stood at its start. */
static bool t0_match(const dcin_sim *s, const reuse_step *x) {
  for (uint32_t i = 0; i < x->nt0; i++)
    if (t0_canon(s, x->t0[i].at, s->cyc) != x->t0[i].start) return false;
  return true;
}

/* The recorded step with this key (hash h) whose T0 pointers stand as at its start. */
static reuse_step *lookup(const dcin_sim *s, dcin_reuse *r, const uint8_t *key, size_t len,
                          uint64_t h, bool chain) {
  for (reuse_step *x = r->cache->tab[h % REUSE_BUCKETS]; x; x = x->next) {
    if (x->hash != h || x->chain != chain || x->key_len != len || memcmp(x->key, key, len))
      continue;
    if (t0_match(s, x)) {
      lru_unlink(r->cache, x);
      lru_front(r->cache, x);
      return x;
    }
  }
  return NULL;
}

static uint32_t play_find(const dcin_reuse *r, uint64_t id);
static uint32_t play_find(const dcin_reuse *r, uint64_t id) {
  if (!r->play) return DCIN_NIL;
  if (r->play_consecutive)
    return r->play->n && id - r->inj[0].id < r->play->n ? (uint32_t)(id - r->inj[0].id)
                                                          : DCIN_NIL;
  for (uint32_t h = (uint32_t)(id * 0x9e3779b97f4a7c15ULL >> 32) & r->play_mask;;
       h = (h + 1) & r->play_mask) {
    uint32_t v = r->play_map[h];
    if (v == DCIN_NIL) return DCIN_NIL;
    if (r->inj[v].id == id) return v;
  }
}

static bool play_begin(dcin_sim *s, dcin_reuse *r, reuse_step *x) {
  r->play_consecutive = r->inj_consecutive;
  if (!r->play_consecutive) {
    uint32_t cap = 1;
    while (cap < 2 * x->n) cap *= 2;
    uint32_t *map = realloc(r->play_map, sizeof *map * cap);
    if (!map) return false;
    r->play_map = map;
    memset(map, 0xff, sizeof *map * cap);
    r->play_mask = cap - 1;
  }
  r->play = x;
  /* dcin_inject_check refused repeated ids as they were taken, and nothing was injected since;
   * the map is built with a second look all the same */
  for (uint32_t i = 0; !r->play_consecutive && i < x->n; i++) {
    uint64_t id = r->inj[i].id;
    if (dcin_txn_find(s, id) != DCIN_NIL || play_find(r, id) != DCIN_NIL) {
      r->play = NULL;
      return false; /* a repeated id: let the normal path report it */
    }
    uint32_t h = (uint32_t)(id * 0x9e3779b97f4a7c15ULL >> 32) & r->play_mask;
    while (r->play_map[h] != DCIN_NIL) h = (h + 1) & r->play_mask;
    r->play_map[h] = i;
  }
  r->play_start = s->cyc;
  r->play_cursor = 0;
  r->play_open = true;
  s->active_txns += x->n;
  r->steps_replayed++;
  return true;
}

/* An earlier boundary of the job whose whole state and injects equal the one being collected
 * (r->full, r->sig): the recorded step that started there, if the cache still holds it. */
static reuse_step *seen_match(const dcin_sim *s, dcin_reuse *r) {
  size_t inj_len = r->sig_len - r->sig_state_len;
  for (int i = 0; i < REUSE_SEEN; i++) {
    const reuse_seen *e = &r->seen[i];
    if (!e->key || e->state.len != r->full.len || e->key_len - e->state_part != inj_len ||
        memcmp(e->state.p, r->full.p, r->full.len) ||
        memcmp(e->key + e->state_part, r->sig + r->sig_state_len, inj_len))
      continue;
    reuse_step *x = lookup(s, r, e->key, e->key_len, fnv(e->key, e->key_len), true);
    if (x) return x;
  }
  return NULL;
}

/* Remembers the boundary being collected, whose step is about to be simulated and recorded. */
static void seen_add(dcin_reuse *r) {
  reuse_seen *e = &r->seen[r->seen_next++ % REUSE_SEEN];
  dcin_bytes spare = e->state;
  e->state = r->full;
  r->full = spare;
  free(e->key);
  e->key = malloc(r->sig_len ? r->sig_len : 1);
  if (e->key) memcpy(e->key, r->sig, r->sig_len);
  e->key_len = r->sig_len;
  e->state_part = r->sig_state_len;
  r->full_ok = false;
}

/* Before any other operation: the collected step is either replayed or injected for real (and
 * recorded).  Returns non-zero with err set if a real injection fails. */
int dcin_reuse_flush(dcin_sim *s, cs_err *err) {
  dcin_reuse *r = s->reuse;
  if (!r || !r->buffering) return 0;
  r->buffering = false;
  bool chain = r->chain_serial != 0;
  uint64_t h = fnv(r->sig, r->sig_len);
  reuse_step *hit = r->sig_len ? lookup(s, r, r->sig, r->sig_len, h, chain) : NULL;
  /* a step that ends in flight makes the engine stale, from which only a caller's context lets
   * the job run again alone (CS_ERETRY); an engine on its own simulates it */
  if (hit && hit->open_end && r->own_cache) hit = NULL;
  if (hit && hit->n == r->ninj && play_begin(s, r, hit)) return 0;
  if (r->stale)
    return cs_err_set(err, CS_ERETRY,
                      "dcin: no recorded step continues the replayed chain (serial %llu)",
                      (unsigned long long)r->chain_serial);
  if (r->full_ok) { /* the job has been here before: replay that step as this one */
    reuse_step *same = seen_match(s, r);
    reuse_step *copy = same ? step_copy(same, r->sig, r->sig_len, h) : NULL;
    if (copy) {
      cache_insert(r->cache, copy);
      if (copy->n == r->ninj && play_begin(s, r, copy)) {
        r->steps_cycled++;
        r->full_ok = false;
        return 0;
      }
    }
  }
  /* simulate, recording */
  /* a step whose record alone would pass a quarter of the budget is simulated without one */
  size_t need = (size_t)r->ninj * (sizeof(reuse_txn) + sizeof(uint64_t) + 2 * sizeof(reuse_ev));
  bool room = need <= r->cache->budget / 4;
  reuse_step *x = r->sig_len && room ? calloc(1, sizeof *x) : NULL;
  if (x) {
    x->key = malloc(r->sig_len);
    x->txn = cs_big_malloc(sizeof *x->txn * (r->ninj ? r->ninj : 1));
    x->rsp = cs_big_malloc(sizeof *x->rsp * (r->ninj ? r->ninj : 1));
    x->ev = cs_big_malloc(sizeof *x->ev * 2 * (r->ninj ? r->ninj : 1)); /* req and final each */
    x->cap_ev = x->ev ? 2 * (r->ninj ? r->ninj : 1) : 0;
    uint32_t *slot = realloc(r->rec_slot, sizeof *slot * (r->ninj ? r->ninj : 1));
    if (slot) r->rec_slot = slot;
    if (!x->key || !x->txn || !x->rsp || !x->ev || !slot) {
      step_free(x);
      x = NULL;
    } else {
      memcpy(x->key, r->sig, r->sig_len);
      x->key_len = r->sig_len;
      x->hash = h;
      x->chain = chain;
      x->n = r->ninj;
      for (uint32_t i = 0; i < x->n; i++) x->rsp[i] = DCIN_NO_CYCLE, slot[i] = DCIN_NIL;
    }
  }
  if (x && !r->rec_t0) {
    r->nt0_all = (uint32_t)s->ndies * DCIN_NUM_NETS * (uint32_t)s->cfg.nodes * 2;
    r->rec_t0 = malloc(sizeof *r->rec_t0 * r->nt0_all);
    for (int di = 0; di < s->ndies; di++)
      if (!s->dies[di].t0_read) s->dies[di].t0_read = calloc(r->nt0_all / (uint32_t)s->ndies, 1);
  }
  for (int di = 0; x && r->rec_t0 && di < s->ndies; di++)
    if (!s->dies[di].t0_read) {
      step_free(x);
      x = NULL;
    }
  if (x && !r->rec_t0) {
    step_free(x);
    x = NULL;
  }
  if (x) {
    uint32_t per = r->nt0_all / (uint32_t)s->ndies;
    for (uint32_t a = 0; a < r->nt0_all; a++) r->rec_t0[a] = t0_canon(s, a, s->cyc);
    for (int di = 0; di < s->ndies; di++) memset(s->dies[di].t0_read, 0, per);
  }
  r->rec = x;
  if (x && r->full_ok) seen_add(r);
  r->rec_start = s->cyc;
  r->rec_stats = s->st;
  r->rec_described = 0;
  r->rec_ok = x != NULL;
  for (uint32_t i = 0; i < r->ninj; i++) {
    const reuse_inj *q = &r->inj[i];
    /* checked as it was collected (op_inject), and nothing was injected since */
    dcin_place p = {q->src_die,  q->src_node, q->src_ip,  q->dst_die,
                    q->dst_node, q->dst_ip,   q->is_read, q->burst};
    int t = dcin_inject_place(s, q->id, &p, err);
    if (t < 0) {
      r->rec_ok = false;
      return t;
    }
    s->txns[t].src_id = q->src_id;
    s->txns[t].dst_id = q->dst_id;
    if (x) {
      s->txns[t].step_idx = i;
      r->rec_slot[i] = (uint32_t)t;
    }
  }
  return 0;
}

bool dcin_reuse_playing(const dcin_sim *s) { return s->reuse && s->reuse->play_open; }

bool dcin_reuse_stale(const dcin_sim *s) { return s->reuse && s->reuse->stale; }

/* Replay: the next completion cycle, DCIN_NO_CYCLE when the step is over. */
uint64_t dcin_reuse_next(const dcin_sim *s) {
  const dcin_reuse *r = s->reuse;
  if (!r->play_open || r->play_cursor >= r->play->nev) return DCIN_NO_CYCLE;
  return r->play_start + r->play->ev[r->play_cursor].rel;
}

void dcin_comp_push(dcin_sim *s, uint64_t id, uint8_t phase);
static void play_end(dcin_sim *s, dcin_reuse *r);

/* Replay: hands out every completion of cycle c and leaves the clock right after it; after the
 * last one, writes the step's end state into the engine. */
void dcin_reuse_deliver(dcin_sim *s, uint64_t c) {
  dcin_reuse *r = s->reuse;
  reuse_step *x = r->play;
  s->cyc = c;
  while (r->play_cursor < x->nev && r->play_start + x->ev[r->play_cursor].rel == c) {
    const reuse_ev *e = &x->ev[r->play_cursor++];
    dcin_comp_push(s, r->inj[e->idx].id, e->phase);
    if (e->phase == CS_PHASE_FINAL && s->active_txns) s->active_txns--;
  }
  s->cyc = c + 1;
  if (r->play_cursor == x->nev) play_end(s, r);
}

/* Replay, after the last completion: releases of earlier steps are all due inside the step
 * (recorded that way), this step's pending ones are rebuilt, then the recorded state is
 * written. */
static void play_end(dcin_sim *s, dcin_reuse *r) {
  const reuse_step *x = r->play;
  uint64_t end = r->play_start + x->len;
  r->chain_serial = 0;
  if (x->open_end) { /* the engine goes stale: the next step must follow down the chain */
    for (uint32_t i = 0; i < x->nt0; i++) t0_set(s, x->t0[i].at, x->t0[i].end, end);
    stats_add(&s->st, &x->delta);
    s->cyc = end;
    r->play_open = false;
    r->stale = true;
    r->chain_serial = x->serial;
    r->chain_start = r->play_start;
    return;
  }
  r->stale = false;
  for (int di = 0; di < s->ndies; di++) {
    dcin_die *d = &s->dies[di];
    while (d->sn_release.n) {
      uint32_t t = dcin_wait_pop(s, &d->sn_release);
      s->txns[t].in_release = 0;
      dcin_txn_try_free(s, t);
    }
  }
  for (uint32_t i = 0; i < x->nrel; i++) {
    const dcin_txn *src = &x->rel[i].txn;
    uint32_t t;
    cs_err e;
    if (dcin_txn_new(s, r->inj[x->rel[i].idx].id, &t, &e)) {
      if (!s->fault[0]) snprintf(s->fault, sizeof s->fault, "step replay: %.200s", e.msg);
      break;
    }
    uint64_t id = s->txns[t].request_id;
    s->txns[t] = *src;
    s->txns[t].request_id = id;
    shift_stamps(&s->txns[t], (int64_t)r->play_start);
    s->txns[t].in_release = 1;
    s->txns[t].described = 1;
    s->txns[t].live = 0;
    s->txns[t].step_idx = DCIN_NIL;
    s->txns[t].release_at = r->play_start + x->rel[i].rel;
    dcin_wait_push(s, &s->dies[src->dst_die].sn_release, t);
  }
  reuse_apply(s, x->end, end);
  for (uint32_t i = 0; i < x->nt0; i++) t0_set(s, x->t0[i].at, x->t0[i].end, end);
  stats_add(&s->st, &x->delta);
  s->cyc = end;
  r->play_open = false;
}

/* Replay: the driver's rsp for request id; it must come when it came in the recorded run. */
int dcin_reuse_rsp(dcin_sim *s, uint64_t id, int src_id, int dst_id, bool *handled, cs_err *err) {
  dcin_reuse *r = s->reuse;
  *handled = false;
  uint32_t i = r ? play_find(r, id) : DCIN_NIL;
  if (i == DCIN_NIL) return 0;
  *handled = true;
  const reuse_inj *q = &r->inj[i];
  if (src_id != q->dst_id || dst_id != q->src_id)
    return cs_err_set(err, CS_ECONSTRAINT,
                      "C10: rsp of request %llu goes %d->%d, the req went %d->%d",
                      (unsigned long long)id, src_id, dst_id, q->src_id, q->dst_id);
  if (s->cyc - r->play_start != r->play->rsp[i])
    return cs_err_set(err, CS_EINTERNAL,
                      "request %llu: rsp injected at another time than in the step it replays",
                      (unsigned long long)id);
  return 0;
}

/* A record cycle of a replayed transaction (reuse_noc), for a step starting at NoC cycle base. */
static inline uint64_t play_noc(uint32_t v, uint64_t base) { return v ? base + v - 1 : 0; }

/* The record of transaction i of the step being replayed, shifted. */
DCIN_INLINE void play_describe(const dcin_sim *s, const dcin_reuse *r, uint32_t i,
                               cs_txn_record *rec) {
  const reuse_inj *q = &r->inj[i];
  const reuse_txn *m = &r->play->txn[i];
  bool cross = q->src_die != q->dst_die;
  dcin_describe_place(s, q->src_die, q->src_node, q->src_ip, q->dst_die, q->dst_node, q->dst_ip,
                      q->is_read, q->burst, cross, m->link, m->link_dir, rec);
  dcin_describe_counters(m->counters, rec);
  uint64_t base = r->play_start / (uint64_t)s->cfg.net_scale;
  rec->req_inject_cycle = play_noc(m->noc[RC_INJECT], base);
  rec->wdata_gen_cycle = play_noc(m->noc[RC_WDATA_GEN], base);
  rec->req_complete_cycle = play_noc(m->noc[RC_REQ_DONE], base);
  rec->rsp_inject_cycle = play_noc(m->noc[RC_RSP_INJECT], base);
  rec->wdata_complete_cycle = play_noc(m->noc[RC_WDATA_DONE], base);
  rec->rsp_complete_cycle = play_noc(m->noc[RC_FINAL], base);
}

/* describe(): the recorded transaction of a replayed step, shifted; false if id is not one. */
bool dcin_reuse_describe(const dcin_sim *s, uint64_t id, cs_txn_record *rec) {
  const dcin_reuse *r = s->reuse;
  uint32_t i = r ? play_find(r, id) : DCIN_NIL;
  if (i == DCIN_NIL) return false;
  play_describe(s, r, i, rec);
  return true;
}

enum { PLAY_WAIT_REQ, PLAY_WAIT_FINAL, PLAY_DONE };

/* Works out once per recorded step what play_runs_through needs (reuse_step.through): whether
 * the driver, going transaction by transaction, would inject every rsp when the recorded run did
 * and see each transaction's req phase, then its final completion, once; the longest stretch of
 * ticks between the cycles of consecutive completions; each completion's tick relative to the
 * step's (reuse_txn.tick_req, tick_final, reuse_step.last_tick). */
static void play_through(const dcin_sim *s, dcin_reuse *r, reuse_step *x, uint64_t residue) {
  x->through = 2;
  x->through_residue = residue;
  x->max_gap_ticks = 0;
  if (!x->n || x->nev != 2 * (uint64_t)x->n) return;
  if (r->cap_play_state < x->n) {
    uint8_t *st = realloc(r->play_state, x->n);
    if (!st) {
      x->through = 0; /* try again at the next replay */
      return;
    }
    r->play_state = st;
    r->cap_play_state = x->n;
  }
  memset(r->play_state, PLAY_WAIT_REQ, x->n);
  /* with start = q tick_den + residue: tick(start + rel) - tick(start) = tick_rel(rel) */
  uint64_t num = s->tick_num, den = s->tick_den, tick0 = residue * num / den, prev = 0;
  for (uint32_t k = 0; k < x->nev;) {
    uint32_t rel = x->ev[k].rel;
    uint64_t tick = (residue + rel) * num / den - tick0;
    if (tick >= UINT32_MAX) return;
    if (k && tick - prev > x->max_gap_ticks) x->max_gap_ticks = tick - prev;
    prev = tick;
    uint32_t g = k; /* the completions of cycle start + rel: ev[k .. g) */
    while (g < x->nev && x->ev[g].rel == rel) g++;
    /* where the clock stands when the driver answers: after the cycle, or at the step's end */
    uint64_t answer = g < x->nev ? (uint64_t)rel + 1 : x->len;
    for (; k < g; k++) {
      const reuse_ev *e = &x->ev[k];
      if (e->idx >= x->n) return;
      uint8_t *st = &r->play_state[e->idx];
      if (e->phase == CS_PHASE_REQ && *st == PLAY_WAIT_REQ && x->rsp[e->idx] == answer) {
        *st = PLAY_WAIT_FINAL;
        x->txn[e->idx].tick_req = (uint32_t)tick;
      } else if (e->phase == CS_PHASE_FINAL && *st == PLAY_WAIT_FINAL) {
        *st = PLAY_DONE;
        x->txn[e->idx].tick_final = (uint32_t)tick;
      } else {
        return;
      }
    }
  }
  x->last_tick = (uint32_t)prev;
  x->through = 1;
}

/* Whether the driver, going transaction by transaction through the step being replayed from
 * tick `now`, would take every completion on the first advance of its deadlock guard (the next
 * one comes before guard_ticks ticks), inject every rsp when the recorded run did, and see each
 * transaction's req phase, then its final completion, once.  After the first completion, an
 * advance from tick(c) stops before cycle c' exactly when tick(c') - tick(c) < guard_ticks
 * (cs_engine_advance_end: its end is the first cycle of tick(c) + guard_ticks, for cycles far
 * below UINT64_MAX / tick_num). */
static bool play_runs_through(const dcin_sim *s, dcin_reuse *r, uint64_t now,
                              uint64_t guard_ticks) {
  reuse_step *x = r->play;
  uint64_t residue = r->play_start % s->tick_den, target;
  if (!x->through || x->through_residue != residue) play_through(s, r, x, residue);
  if (x->through != 1) return false;
  uint64_t first = r->play_start + x->ev[0].rel;
  if (first >= cs_engine_advance_end(now, guard_ticks, s->tick_num, s->tick_den, &target))
    return false;
  return x->max_gap_ticks < guard_ticks;
}

/* cs_engine_ops.finish_step for the step being replayed, untouched since play_begin: what the
 * driver's rounds of advance, poll, rsp inject and describe would give, at once.  When they
 * would not run through (play_runs_through), nothing changes and *finished stays false. */
int dcin_reuse_finish(dcin_sim *s, uint64_t *now_tick, const cs_engine_step *step,
                      cs_txn_record *rec, bool *finished, cs_err *err) {
  dcin_reuse *r = s->reuse;
  *finished = false;
  size_t n = step->n;
  if (!r || !r->play_open || r->play_cursor || s->comp_n || !n || n != r->play->n) return CS_OK;
  for (size_t i = 0; i < n; i++)
    if (step->reqs[i].request_id != r->inj[i].id) return CS_OK;
  if (!play_runs_through(s, r, *now_tick, step->guard_ticks)) return CS_OK;
  const reuse_step *x = r->play;
  uint64_t base = r->play_start * s->tick_num / s->tick_den; /* tick(start) */
  for (uint32_t i = 0; i < x->n; i++) { /* in record order: each record is written once, whole */
    const reuse_txn *m = &x->txn[i];
    cs_engine_record_begin(&rec[i], &step->reqs[i], step->step, step->now, step->extra_slots);
    rec[i].req_complete_tick = base + m->tick_req;
    rec[i].rsp_inject_tick = base + m->tick_req; /* the driver answers at once */
    rec[i].rsp_complete_tick = base + m->tick_final;
    play_describe(s, r, i, &rec[i]);
  }
  const reuse_ev *last = &x->ev[x->nev - 1];
  s->active_txns = s->active_txns > x->n ? s->active_txns - x->n : 0; /* one per final */
  *now_tick = base + x->last_tick;
  r->play_cursor = x->nev;
  s->cyc = r->play_start + last->rel + 1; /* as after delivering the last completions */
  play_end(s, r);
  *finished = true;
  if (s->fault[0]) return cs_err_set(err, CS_EINTERNAL, "dcin: %s", s->fault);
  return CS_OK;
}

/* Recording: completions found in cycle c, the rsp of a transaction, its description. */
void dcin_reuse_note_completions(dcin_sim *s, uint64_t c) {
  dcin_reuse *r = s->reuse;
  if (!r || !r->rec || !r->rec_ok) return;
  reuse_step *x = r->rec;
  for (size_t k = 0; k < s->comp_n; k++) {
    const cs_completion *cp = &s->comp[(s->comp_head + k) % s->comp_cap];
    uint32_t t = dcin_txn_find(s, cp->request_id);
    uint32_t idx = t == DCIN_NIL ? DCIN_NIL : s->txns[t].step_idx;
    if (idx >= x->n) {
      r->rec_ok = false;
      return;
    }
    if (x->nev == x->cap_ev) {
      uint32_t cap = x->cap_ev ? 2 * x->cap_ev : 1024;
      reuse_ev *n = cs_big_realloc(x->ev, sizeof *n * cap);
      if (!n) {
        r->rec_ok = false;
        return;
      }
      x->ev = n;
      x->cap_ev = cap;
    }
    if (c - r->rec_start >= UINT32_MAX) { /* cannot happen: stamps of a step fit 32 bits */
      r->rec_ok = false;
      return;
    }
    x->ev[x->nev++] = (reuse_ev){(uint32_t)(c - r->rec_start), idx, cp->phase};
  }
}

void dcin_reuse_note_rsp(dcin_sim *s, uint32_t t) {
  dcin_reuse *r = s->reuse;
  if (!r || !r->rec) return;
  uint32_t idx = s->txns[t].step_idx;
  if (idx < r->rec->n && r->rec_slot[idx] == t) r->rec->rsp[idx] = s->cyc - r->rec_start;
}

void dcin_reuse_note_describe(dcin_sim *s, uint32_t t) {
  dcin_reuse *r = s->reuse;
  if (!r || !r->rec) return;
  uint32_t idx = s->txns[t].step_idx;
  if (idx >= r->rec->n || r->rec_slot[idx] != t) return;
  if (!s->txns[t].done_final) {
    r->rec_ok = false; /* described before its end: a stop report, not a step to keep */
    return;
  }
  const dcin_txn *x = &s->txns[t];
  reuse_txn *m = &r->rec->txn[idx];
  const uint64_t st[RC_NUM] = {x->t_inject,     x->t_wdata_gen,         x->t_req_done,
                               x->t_rsp_inject, dcin_txn_wdata_done(x), x->t_final};
  for (int k = 0; k < RC_NUM; k++) {
    m->noc[k] = reuse_noc(s, st[k], r->rec_start);
    if (m->noc[k] == REUSE_NO_STAMP) {
      r->rec_ok = false; /* cannot happen: every stamp falls inside its step */
      return;
    }
  }
  memcpy(m->counters, &x->retries, sizeof m->counters);
  m->link = x->link, m->link_dir = x->link_dir;
  r->rec_described++;
}
