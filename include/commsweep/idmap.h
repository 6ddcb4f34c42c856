/* A map from request ids to 32-bit slots, for state held only while a transaction is in flight:
 * open addressing with linear probing, deletion by backward shift (no tombstones), doubling when
 * half full.  Nothing shrinks, so its memory is the peak number of ids held. */
#ifndef COMMSWEEP_IDMAP_H
#define COMMSWEEP_IDMAP_H

#include <stdint.h>

#define CS_IDMAP_NONE UINT32_MAX

/* An id beside its slot, so a lookup reads one cache line: the maps of a pod-scale job hold
 * millions of ids and nearly every lookup misses the cache. */
typedef struct cs_idmap_cell {
  uint64_t key; /* an id, where val is not CS_IDMAP_NONE */
  uint32_t val; /* the slot of key, CS_IDMAP_NONE for an empty cell */
  uint32_t pad_;
} cs_idmap_cell;

typedef struct cs_idmap {
  cs_idmap_cell *cells;
  uint32_t mask;  /* cells - 1 (a power of two), 0 before the first put */
  uint32_t n;     /* ids held */
} cs_idmap;

void cs_idmap_init(cs_idmap *m);
void cs_idmap_free(cs_idmap *m); /* and init again */
/* Maps id (not held) to v; CS_ENOMEM (the map unchanged) or 0. */
int cs_idmap_put(cs_idmap *m, uint64_t id, uint32_t v);
/* The slot of id, or CS_IDMAP_NONE. */
uint32_t cs_idmap_get(const cs_idmap *m, uint64_t id);
/* Forgets id and returns its slot (CS_IDMAP_NONE when it was not held). */
uint32_t cs_idmap_del(cs_idmap *m, uint64_t id);
/* Bytes a map holding n ids at most takes. */
uint64_t cs_idmap_bytes(uint64_t n);

#endif
