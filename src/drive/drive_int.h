/* Internals of the driver shared by its files: the records of the transactions in flight. */
#ifndef CS_DRIVE_INT_H
#define CS_DRIVE_INT_H

#include <stdint.h>

#include "commsweep/idmap.h"
#include "commsweep/model.h"

/* Records by request id for the transactions between their req and final completions: a pool
 * of records (doubling, with a free list) and the map from id to pool slot. */
typedef struct cs_inflight {
  cs_idmap map;
  cs_txn_record *pool;
  uint32_t *next_free; /* free-list links of the pool */
  uint32_t pool_cap, free_head;
} cs_inflight;

void cs_inflight_init(cs_inflight *m);
void cs_inflight_free(cs_inflight *m);
/* A fresh record for id (which must not be held); NULL when out of memory. */
cs_txn_record *cs_inflight_add(cs_inflight *m, uint64_t id);
/* The record of id, or NULL. */
cs_txn_record *cs_inflight_get(const cs_inflight *m, uint64_t id);
/* Forgets id (its record may be reused by the next add). */
void cs_inflight_del(cs_inflight *m, uint64_t id);
/* Bytes the records in flight take with n of them at most. */
uint64_t cs_inflight_bytes(uint64_t n);

#endif
