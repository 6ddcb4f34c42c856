/* The records of the transactions in flight, a pool of slots (drive_int.h). */
#include <stdlib.h>
#include <string.h>

#include "drive_int.h"

void cs_inflight_init(cs_inflight *m) {
  memset(m, 0, sizeof *m);
  m->free_head = CS_INFLIGHT_NONE;
}

void cs_inflight_free(cs_inflight *m) {
  free(m->pool);
  free(m->next_free);
  cs_inflight_init(m);
}

uint64_t cs_inflight_bytes(uint64_t n) {
  return n * (sizeof(cs_txn_record) + sizeof(uint32_t));
}

/* Doubles the pool (to 64 records at first), its new slots onto the free list. */
static int grow_pool(cs_inflight *m) {
  uint32_t cap = m->pool_cap ? 2 * m->pool_cap : 64;
  cs_txn_record *pool = realloc(m->pool, (size_t)cap * sizeof *pool);
  if (!pool) return -1;
  m->pool = pool;
  uint32_t *next = realloc(m->next_free, (size_t)cap * sizeof *next);
  if (!next) return -1;
  m->next_free = next;
  for (uint32_t i = cap; i-- > m->pool_cap;) {
    next[i] = m->free_head;
    m->free_head = i;
  }
  m->pool_cap = cap;
  return 0;
}

cs_txn_record *cs_inflight_take(cs_inflight *m, uint32_t *slot) {
  if (m->free_head == CS_INFLIGHT_NONE && grow_pool(m)) return NULL;
  *slot = m->free_head;
  m->free_head = m->next_free[*slot];
  return &m->pool[*slot];
}

void cs_inflight_give(cs_inflight *m, uint32_t slot) {
  m->next_free[slot] = m->free_head;
  m->free_head = slot;
}
