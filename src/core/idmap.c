/* Request id -> slot map (idmap.h).  Invariant: within a cluster of occupied cells, no empty
 * cell lies between an id's home cell and the cell that holds it, so a lookup stops at the
 * first empty cell; deletion keeps it by shifting later members back over the hole. */
#include "commsweep/idmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/err.h"

static uint32_t home(uint64_t k, uint32_t mask) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (uint32_t)k & mask;
}

void cs_idmap_init(cs_idmap *m) { memset(m, 0, sizeof *m); }

void cs_idmap_free(cs_idmap *m) {
  free(m->keys);
  free(m->vals);
  cs_idmap_init(m);
}

uint64_t cs_idmap_bytes(uint64_t n) {
  uint64_t cells = 64;
  while (cells < 2 * n) cells *= 2;
  return cells * (sizeof(uint64_t) + sizeof(uint32_t));
}

static void place(uint64_t *keys, uint32_t *vals, uint32_t mask, uint64_t id, uint32_t v) {
  uint32_t h = home(id, mask);
  while (vals[h] != CS_IDMAP_NONE) h = (h + 1) & mask;
  keys[h] = id;
  vals[h] = v;
}

/* Doubles the cells (64 at first), keeping every id. */
static int grow(cs_idmap *m) {
  uint32_t cells = m->vals ? 2 * (m->mask + 1) : 64;
  uint64_t *keys = malloc((size_t)cells * sizeof *keys);
  uint32_t *vals = malloc((size_t)cells * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return CS_ENOMEM;
  }
  memset(vals, 0xff, (size_t)cells * sizeof *vals);
  for (uint32_t i = 0; m->vals && i <= m->mask; i++)
    if (m->vals[i] != CS_IDMAP_NONE) place(keys, vals, cells - 1, m->keys[i], m->vals[i]);
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->mask = cells - 1;
  return 0;
}

int cs_idmap_put(cs_idmap *m, uint64_t id, uint32_t v) {
  if ((!m->vals || 2 * ((uint64_t)m->n + 1) > (uint64_t)m->mask + 1) && grow(m)) return CS_ENOMEM;
  place(m->keys, m->vals, m->mask, id, v);
  m->n++;
  return 0;
}

uint32_t cs_idmap_get(const cs_idmap *m, uint64_t id) {
  if (!m->vals) return CS_IDMAP_NONE;
  for (uint32_t h = home(id, m->mask);; h = (h + 1) & m->mask) {
    if (m->vals[h] == CS_IDMAP_NONE) return CS_IDMAP_NONE;
    if (m->keys[h] == id) return m->vals[h];
  }
}

uint32_t cs_idmap_del(cs_idmap *m, uint64_t id) {
  if (!m->vals) return CS_IDMAP_NONE;
  uint32_t mask = m->mask, h = home(id, mask);
  while (m->vals[h] != CS_IDMAP_NONE && m->keys[h] != id) h = (h + 1) & mask;
  uint32_t v = m->vals[h];
  if (v == CS_IDMAP_NONE) return v;
  m->n--;
  uint32_t hole = h;
  for (uint32_t j = (hole + 1) & mask; m->vals[j] != CS_IDMAP_NONE; j = (j + 1) & mask) {
    uint32_t at = home(m->keys[j], mask);
    bool stays = hole <= j ? (at > hole && at <= j) : (at > hole || at <= j);
    if (stays) continue;
    m->keys[hole] = m->keys[j];
    m->vals[hole] = m->vals[j];
    hole = j;
  }
  m->vals[hole] = CS_IDMAP_NONE;
  return v;
}
