/* An open-addressing map from a 64-hex-digit cache key to a row index.  The keys live in the
 * caller's array (indexed by row); the map stores rows only. */
#ifndef CS_SWEEP_KEYMAP_H
#define CS_SWEEP_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "commsweep/store.h"

typedef struct cs_keymap {
  uint64_t mask;
  uint64_t *slot; /* row + 1; 0 = empty */
  const cs_store_index_row *keys; /* keys[row].key */
} cs_keymap;

int cs_keymap_init(cs_keymap *m, uint64_t capacity, const cs_store_index_row *keys);
void cs_keymap_free(cs_keymap *m);
/* The row holding key, or UINT64_MAX. */
uint64_t cs_keymap_find(const cs_keymap *m, const char key[CS_STORE_KEY_LEN]);
/* Adds row (whose key is keys[row].key) unless the key is present; returns the row now mapped. */
uint64_t cs_keymap_add(cs_keymap *m, uint64_t row);

#endif
