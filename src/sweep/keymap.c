/* Cache-key map: linear probing over a power-of-two table at most half full.  The key is a hex
 * SHA-256, so its first 16 digits are already a uniform hash. */
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *key) {
  uint64_t h = 0;
  for (int i = 0; i < 16; i++) {
    char c = key[i];
    uint64_t nibble = (uint64_t)(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
    h = (h << 4) | (nibble & 15u);
  }
  return h ^ (h >> 29);
}

int cs_keymap_init(cs_keymap *m, uint64_t capacity, const cs_store_index_row *keys) {
  uint64_t size = 16;
  while (size < 2 * capacity + 2) size <<= 1;
  m->slot = calloc(size, sizeof *m->slot);
  m->mask = size - 1;
  m->keys = keys;
  return m->slot ? 0 : -1;
}

void cs_keymap_free(cs_keymap *m) {
  free(m->slot);
  m->slot = NULL;
}

uint64_t cs_keymap_find(const cs_keymap *m, const char key[CS_STORE_KEY_LEN]) {
  for (uint64_t i = hash(key) & m->mask;; i = (i + 1) & m->mask) {
    uint64_t s = m->slot[i];
    if (!s) return UINT64_MAX;
    if (memcmp(m->keys[s - 1].key, key, CS_STORE_KEY_LEN) == 0) return s - 1;
  }
}

uint64_t cs_keymap_add(cs_keymap *m, uint64_t row) {
  const char *key = m->keys[row].key;
  for (uint64_t i = hash(key) & m->mask;; i = (i + 1) & m->mask) {
    uint64_t s = m->slot[i];
    if (!s) {
      m->slot[i] = row + 1;
      return row;
    }
    if (memcmp(m->keys[s - 1].key, key, CS_STORE_KEY_LEN) == 0) return s - 1;
  }
}
