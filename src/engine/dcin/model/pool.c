/* Storage of the engine: the flit pool (free list threaded through dcin_flit.next), intrusive
 * lists, the transaction table with its request-id hash map, and the arena every bounded queue is
 * carved from.  Invariant: a flit index is either on the free list or in exactly one place of the
 * model; growth doubles, so the cycle loop reaches malloc only O(log n) times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/bigmem.h"
#include "pool.h"

static int arena_take(dcin_sim *s, dcin_q *q, int cap, size_t room) {
  if (s->arena_used + room > s->arena_cap) return CS_EINTERNAL;
  q->buf = s->arena + s->arena_used;
  s->arena_used += room;
  q->cap = (uint16_t)cap;
  q->mask = (uint16_t)(room - 1);
  q->head = q->n = 0;
  q->put = DCIN_NO_CYCLE;
  return 0;
}

int dcin_arena_take(dcin_sim *s, dcin_q *q, int cap) {
  return arena_take(s, q, cap, dcin_q_room((unsigned)cap));
}

int dcin_arena_take_ej(dcin_sim *s, dcin_q *q, int cap) {
  return arena_take(s, q, cap, dcin_q_room((unsigned)cap + 1));
}

/* Doubles the flit pool, threading the new flits onto the free list (CS_ENOMEM if it cannot). */
int dcin_pool_grow_flits(dcin_sim *s) {
  uint32_t ncap = s->cap_flits ? s->cap_flits * 2 : 4096;
  dcin_flit *nf = cs_big_realloc(s->flits, (size_t)ncap * sizeof *nf);
  if (!nf) return CS_ENOMEM;
  s->flits = nf;
  for (uint32_t i = ncap; i-- > s->cap_flits;) {
    nf[i].next = s->free_flit;
    nf[i].txn = DCIN_NIL;
    s->free_flit = i;
  }
  s->cap_flits = ncap;
  return 0;
}

void dcin_pool_fault(dcin_sim *s) {
  if (!s->fault[0]) snprintf(s->fault, sizeof s->fault, "out of memory growing the flit pool");
}

DCIN_HOT uint32_t dcin_flit_new(dcin_sim *s) {
  if (s->free_flit == DCIN_NIL && dcin_pool_grow_flits(s)) return DCIN_NIL;
  uint32_t f = s->free_flit;
  dcin_flit *fl = &s->flits[f];
  s->free_flit = fl->next;
  memset(fl, 0, sizeof *fl);
  fl->next = DCIN_NIL;
  fl->used_entry = DCIN_T_NONE;
  fl->etag = DCIN_T2;
  s->nflits++;
  return f;
}

DCIN_HOT uint32_t dcin_make_flit(dcin_sim *s, uint32_t t, int die, int net, int kind,
                                 int src_node, int src_ip, int dst_node, int dst_ip) {
  uint32_t f = dcin_flit_new(s);
  if (f == DCIN_NIL) {
    dcin_pool_fault(s);
    return DCIN_NIL;
  }
  dcin_flit *fl = &s->flits[f];
  fl->txn = t;
  s->txns[t].live++;
  fl->die = (uint8_t)die;
  fl->net = (uint8_t)net;
  fl->kind = (uint8_t)kind;
  fl->src_node = (int16_t)src_node;
  fl->src_ip = (uint8_t)src_ip;
  fl->dst_node = (int16_t)dst_node;
  fl->dst_ip = (uint8_t)dst_ip;
  return f;
}

DCIN_HOT void dcin_flit_free(dcin_sim *s, uint32_t f) {
  dcin_flit *fl = &s->flits[f];
  uint32_t t = fl->txn;
  if (t != DCIN_NIL && --s->txns[t].live == 0) dcin_txn_try_free(s, t);
  fl->txn = DCIN_NIL;
  fl->next = s->free_flit;
  s->free_flit = f;
  s->nflits--;
}

void dcin_list_push(dcin_sim *s, dcin_list *l, uint32_t f) {
  DCIN_COUNT(s, moved_list);
  s->flits[f].next = DCIN_NIL;
  if (l->tail == DCIN_NIL || l->n == 0)
    l->head = f;
  else
    s->flits[l->tail].next = f;
  l->tail = f;
  l->n++;
}

void dcin_list_push_front(dcin_sim *s, dcin_list *l, uint32_t f) {
  DCIN_COUNT(s, moved_list);
  s->flits[f].next = l->n ? l->head : DCIN_NIL;
  l->head = f;
  if (l->n == 0) l->tail = f;
  l->n++;
}

uint32_t dcin_list_pop(dcin_sim *s, dcin_list *l) {
  if (!l->n) return DCIN_NIL;
  uint32_t f = l->head;
  l->head = s->flits[f].next;
  l->n--;
  if (!l->n) l->head = l->tail = DCIN_NIL;
  s->flits[f].next = DCIN_NIL;
  return f;
}

void dcin_wait_push(dcin_sim *s, dcin_list *l, uint32_t t) {
  s->txns[t].next_wait = DCIN_NIL;
  if (l->n == 0)
    l->head = t;
  else
    s->txns[l->tail].next_wait = t;
  l->tail = t;
  l->n++;
}

uint32_t dcin_wait_pop(dcin_sim *s, dcin_list *l) {
  if (!l->n) return DCIN_NIL;
  uint32_t t = l->head;
  l->head = s->txns[t].next_wait;
  l->n--;
  if (!l->n) l->head = l->tail = DCIN_NIL;
  return t;
}

static uint32_t hash64(uint64_t k, uint32_t mask) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (uint32_t)k & mask;
}

uint32_t dcin_txn_find(const dcin_sim *s, uint64_t id) {
  /* plans number their requests 0..n-1 in inject order: try the direct slot first */
  if (id < s->ntxns && s->txns[id].request_id == id && id != UINT64_MAX) return (uint32_t)id;
  if (!s->map_cap) return DCIN_NIL;
  uint32_t mask = s->map_cap - 1;
  for (uint32_t h = hash64(id, mask);; h = (h + 1) & mask) {
    if (s->map_vals[h] == DCIN_NIL) return DCIN_NIL;
    if (s->map_keys[h] == id) return s->map_vals[h];
  }
}

static void map_put(dcin_sim *s, uint64_t id, uint32_t v) {
  uint32_t mask = s->map_cap - 1;
  uint32_t h = hash64(id, mask);
  while (s->map_vals[h] != DCIN_NIL) h = (h + 1) & mask;
  s->map_keys[h] = id;
  s->map_vals[h] = v;
}

/* Linear-probing deletion without tombstones: shift later members of the cluster back. */
static void map_del(dcin_sim *s, uint64_t id) {
  uint32_t mask = s->map_cap - 1;
  uint32_t h = hash64(id, mask);
  while (s->map_vals[h] != DCIN_NIL && s->map_keys[h] != id) h = (h + 1) & mask;
  if (s->map_vals[h] == DCIN_NIL) return;
  uint32_t hole = h;
  for (uint32_t j = (hole + 1) & mask; s->map_vals[j] != DCIN_NIL; j = (j + 1) & mask) {
    uint32_t home = hash64(s->map_keys[j], mask);
    /* move j into the hole unless its home lies cyclically in (hole, j] */
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    s->map_keys[hole] = s->map_keys[j];
    s->map_vals[hole] = s->map_vals[j];
    hole = j;
  }
  s->map_vals[hole] = DCIN_NIL;
}

void dcin_txn_try_free(dcin_sim *s, uint32_t t) {
  dcin_txn *x = &s->txns[t];
  if (!x->described || !x->done_final || x->live || x->in_release || x->request_id == UINT64_MAX)
    return;
  map_del(s, x->request_id);
  x->request_id = UINT64_MAX;
  x->next_wait = s->free_txn;
  s->free_txn = t;
}

int dcin_txn_new(dcin_sim *s, uint64_t id, uint32_t *out, cs_err *err) {
  if (id == UINT64_MAX)
    return cs_err_set(err, CS_EINVAL, "request id %llu is reserved", (unsigned long long)id);
  if (dcin_txn_find(s, id) != DCIN_NIL)
    return cs_err_set(err, CS_EINVAL, "request id %llu injected twice", (unsigned long long)id);
  if (s->free_txn == DCIN_NIL && s->ntxns == s->cap_txns) {
    uint32_t ncap = s->cap_txns ? s->cap_txns * 2 : 1024;
    dcin_txn *nt = cs_big_realloc(s->txns, (size_t)ncap * sizeof *nt);
    if (!nt) return cs_err_set(err, CS_ENOMEM, "transaction table of %u entries", ncap);
    s->txns = nt;
    s->cap_txns = ncap;
  }
  if ((uint64_t)(s->ntxns + 1) * 2 > s->map_cap) {
    uint32_t ncap = s->map_cap ? s->map_cap * 2 : 2048;
    uint64_t *k = cs_big_malloc((size_t)ncap * sizeof *k);
    uint32_t *v = cs_big_malloc((size_t)ncap * sizeof *v);
    if (!k || !v) {
      free(k);
      free(v);
      return cs_err_set(err, CS_ENOMEM, "request map of %u entries", ncap);
    }
    memset(v, 0xff, (size_t)ncap * sizeof *v);
    uint64_t *ok = s->map_keys;
    uint32_t *ov = s->map_vals, ocap = s->map_cap;
    s->map_keys = k;
    s->map_vals = v;
    s->map_cap = ncap;
    for (uint32_t i = 0; i < ocap; i++)
      if (ov[i] != DCIN_NIL) map_put(s, ok[i], ov[i]);
    free(ok);
    free(ov);
  }
  uint32_t t;
  if (s->free_txn != DCIN_NIL) {
    t = s->free_txn;
    s->free_txn = s->txns[t].next_wait;
  } else {
    t = s->ntxns++;
  }
  dcin_txn *x = &s->txns[t];
  memset(x, 0, sizeof *x);
  x->request_id = id;
  x->link = -1;
  x->step_idx = DCIN_NIL;
  uint64_t *stamps[] = {&x->t_inject,    &x->t_reserve,    &x->t_req_noc, &x->t_sn_req,
                        &x->t_req_done,  &x->t_rsp_inject, &x->t_dbid_rn, &x->t_data_noc,
                        &x->t_wdata_gen, &x->t_data_done,  &x->t_final,   &x->t_cmd_end,
                        &x->t_wdata_d2d};
  for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++) *stamps[i] = DCIN_NO_CYCLE;
  map_put(s, id, t);
  *out = t;
  return 0;
}
