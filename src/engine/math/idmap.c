/* The math engine's request ids in flight: id -> slot (math_int.h describes the table). */
#include <stdlib.h>
#include <string.h>

#include "math_int.h"

static size_t map_hash(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

static bool map_grow(midmap *m) {
  size_t cap = m->cap ? 2 * m->cap : 1024;
  uint64_t *keys = calloc(cap, sizeof *keys);
  uint32_t *slots = malloc(cap * sizeof *slots);
  if (!keys || !slots) {
    free(keys);
    free(slots);
    return false;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t h = map_hash(m->keys[i], cap);
    while (keys[h]) h = (h + 1) & (cap - 1);
    keys[h] = m->keys[i];
    slots[h] = m->slots[i];
  }
  free(m->keys);
  free(m->slots);
  m->keys = keys;
  m->slots = slots;
  m->cap = cap;
  return true;
}

/* The slot of request id, or UINT32_MAX. */
uint32_t midmap_find(const midmap *m, uint64_t id) {
  if (!m->cap) return UINT32_MAX;
  for (size_t h = map_hash(id + 1, m->cap); m->keys[h]; h = (h + 1) & (m->cap - 1))
    if (m->keys[h] == id + 1) return m->slots[h];
  return UINT32_MAX;
}

/* Room for `more` entries beyond the present ones. */
bool midmap_reserve(midmap *m, size_t more) {
  while (2 * (m->n + more) > m->cap)
    if (!map_grow(m)) return false;
  return true;
}

/* Maps id to slot unless id is mapped already (false then); room must be reserved. */
bool midmap_insert(midmap *m, uint64_t id, uint32_t slot) {
  size_t h = map_hash(id + 1, m->cap);
  for (; m->keys[h]; h = (h + 1) & (m->cap - 1))
    if (m->keys[h] == id + 1) return false;
  m->n++;
  m->keys[h] = id + 1;
  m->slots[h] = slot;
  return true;
}

void midmap_remove(midmap *m, uint64_t id) {
  if (!m->cap) return;
  size_t h = map_hash(id + 1, m->cap);
  while (m->keys[h] && m->keys[h] != id + 1) h = (h + 1) & (m->cap - 1);
  if (!m->keys[h]) return;
  m->keys[h] = 0;
  m->n--;
  /* shift back the entries of the run after h that may not stay where they are */
  for (size_t j = (h + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
    size_t home = map_hash(m->keys[j], m->cap);
    bool movable = h <= j ? (home <= h || home > j) : (home <= h && home > j);
    if (!movable) continue;
    m->keys[h] = m->keys[j];
    m->slots[h] = m->slots[j];
    m->keys[j] = 0;
    h = j;
  }
}
