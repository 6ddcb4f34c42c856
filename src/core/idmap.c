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
  free(m->cells);
  cs_idmap_init(m);
}

uint64_t cs_idmap_bytes(uint64_t n) {
  uint64_t cells = 64;
  while (cells < 2 * n) cells *= 2;
  return cells * sizeof(cs_idmap_cell);
}

static void place(cs_idmap_cell *cells, uint32_t mask, uint64_t id, uint32_t v) {
  uint32_t h = home(id, mask);
  while (cells[h].val != CS_IDMAP_NONE) h = (h + 1) & mask;
  cells[h].key = id;
  cells[h].val = v;
}

/* Doubles the cells (64 at first), keeping every id. */
static int grow(cs_idmap *m) {
  uint32_t n = m->cells ? 2 * (m->mask + 1) : 64;
  cs_idmap_cell *cells = malloc((size_t)n * sizeof *cells);
  if (!cells) return CS_ENOMEM;
  memset(cells, 0xff, (size_t)n * sizeof *cells);
  for (uint32_t i = 0; m->cells && i <= m->mask; i++)
    if (m->cells[i].val != CS_IDMAP_NONE) place(cells, n - 1, m->cells[i].key, m->cells[i].val);
  free(m->cells);
  m->cells = cells;
  m->mask = n - 1;
  return 0;
}

int cs_idmap_put(cs_idmap *m, uint64_t id, uint32_t v) {
  if ((!m->cells || 2 * ((uint64_t)m->n + 1) > (uint64_t)m->mask + 1) && grow(m)) return CS_ENOMEM;
  place(m->cells, m->mask, id, v);
  m->n++;
  return 0;
}

uint32_t cs_idmap_get(const cs_idmap *m, uint64_t id) {
  if (!m->cells) return CS_IDMAP_NONE;
  for (uint32_t h = home(id, m->mask);; h = (h + 1) & m->mask) {
    if (m->cells[h].val == CS_IDMAP_NONE) return CS_IDMAP_NONE;
    if (m->cells[h].key == id) return m->cells[h].val;
  }
}

uint32_t cs_idmap_del(cs_idmap *m, uint64_t id) {
  if (!m->cells) return CS_IDMAP_NONE;
  cs_idmap_cell *c = m->cells;
  uint32_t mask = m->mask, h = home(id, mask);
  while (c[h].val != CS_IDMAP_NONE && c[h].key != id) h = (h + 1) & mask;
  uint32_t v = c[h].val;
  if (v == CS_IDMAP_NONE) return v;
  m->n--;
  uint32_t hole = h;
  for (uint32_t j = (hole + 1) & mask; c[j].val != CS_IDMAP_NONE; j = (j + 1) & mask) {
    uint32_t at = home(c[j].key, mask);
    bool stays = hole <= j ? (at > hole && at <= j) : (at > hole || at <= j);
    if (stays) continue;
    c[hole] = c[j];
    hole = j;
  }
  c[hole].val = CS_IDMAP_NONE;
  return v;
}
