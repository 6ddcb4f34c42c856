/* Internals of the driver shared by its files: the records of the transactions in flight. */
#ifndef CS_DRIVE_INT_H
#define CS_DRIVE_INT_H

#include <stdint.h>

#include "commsweep/model.h"

#define CS_INFLIGHT_NONE UINT32_MAX

/* Records of the transactions between their req and final completions: a pool of records
 * (doubling, with a free list), named by slot; the driver keeps each transaction's slot. */
typedef struct cs_inflight {
  cs_txn_record *pool;
  uint32_t *next_free; /* free-list links of the pool */
  uint32_t pool_cap, free_head;
} cs_inflight;

void cs_inflight_init(cs_inflight *m);
void cs_inflight_free(cs_inflight *m);
/* A free record and its slot; NULL when out of memory. */
cs_txn_record *cs_inflight_take(cs_inflight *m, uint32_t *slot);
static inline cs_txn_record *cs_inflight_at(const cs_inflight *m, uint32_t slot) {
  return &m->pool[slot];
}
/* Gives slot back (its record may be reused by the next take). */
void cs_inflight_give(cs_inflight *m, uint32_t slot);
/* Bytes the records in flight take with n of them at most. */
uint64_t cs_inflight_bytes(uint64_t n);

#endif
