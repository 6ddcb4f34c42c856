/* Row checksums: XXH64 (Yann Collet's algorithm, re-implemented) over the bytes that define a
 * finished row: the slice hash (txlog_checksum) goes into the row, and the row checksum covers
 * the row.  The row's bytes are hashed as laid out in memory, which is the file layout
 * (store.h), so a row read back from the file hashes to the value written with it.
 * wall_time_s is left out so that the checksum is as deterministic as the results. */
#include <string.h>

#include "commsweep/store.h"

/* The row checksum's seed: the schema version whose result rows it was made for (5).  Version 6
 * added a /jobs column only, so the result rows of both are the same bytes with the same
 * checksums and a converted file keeps them. */
#define ROW_CHECKSUM_SEED 5

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8); /* little-endian hosts only, as the file layout */
  return v;
}
static uint32_t rd32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t round64(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static uint64_t merge64(uint64_t acc, uint64_t v) { return (acc ^ round64(0, v)) * P1 + P4; }

uint64_t cs_store_xxh64(const void *data, size_t len, uint64_t seed) {
  const unsigned char *p = data, *end = p + len;
  uint64_t h;
  if (len >= 32) {
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    for (; p + 32 <= end; p += 32) {
      v1 = round64(v1, rd64(p));
      v2 = round64(v2, rd64(p + 8));
      v3 = round64(v3, rd64(p + 16));
      v4 = round64(v4, rd64(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge64(h, v1);
    h = merge64(h, v2);
    h = merge64(h, v3);
    h = merge64(h, v4);
  } else {
    h = seed + P5;
  }
  h += (uint64_t)len;
  for (; p + 8 <= end; p += 8) h = rotl(h ^ round64(0, rd64(p)), 27) * P1 + P4;
  if (p + 4 <= end) {
    h = rotl(h ^ ((uint64_t)rd32(p) * P1), 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++) h = rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

uint64_t cs_store_txlog_checksum(uint64_t row, const cs_store_txn_row *txns, uint64_t n) {
  return n ? cs_store_xxh64(txns, n * sizeof *txns, row) : 0;
}

uint64_t cs_store_row_checksum(uint64_t row, const char key[CS_STORE_KEY_LEN],
                               const cs_store_result_row *res) {
  struct {
    uint64_t row;
    char key[CS_STORE_KEY_LEN];
    cs_store_result_row res;
  } bound;
  memset(&bound, 0, sizeof bound);
  bound.row = row;
  memcpy(bound.key, key, CS_STORE_KEY_LEN);
  bound.res = *res;
  bound.res.checksum = 0;
  bound.res.result.wall_time_s = 0;
  if (bound.res.status != CS_STORE_FAILED) memset(bound.res.error, 0, sizeof bound.res.error);
  uint64_t h = cs_store_xxh64(&bound, sizeof bound, ROW_CHECKSUM_SEED);
  return h ? h : 1; /* 0 is reserved for pending rows */
}

uint64_t cs_store_steplog_checksum(uint64_t row, const cs_store_step_row *steps, uint64_t n) {
  return n ? cs_store_xxh64(steps, n * sizeof *steps, row) : 0;
}
