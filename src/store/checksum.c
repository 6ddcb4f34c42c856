/* Row checksums: XXH64 (Yann Collet's algorithm, re-implemented) over the bytes that define a
 * finished row: the slice hash (txlog_checksum) goes into the row, and the row checksum covers
 * the row.  The row's bytes are hashed as laid out in memory, which is the file layout
 * (store.h), so a row read back from the file hashes to the value written with it.
 * wall_time_s is left out so that the checksum is as deterministic as the results. */
#include <string.h>

#include "store_format.h"

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

void cs_store_xxh64_begin(cs_store_xxh64_state *x, uint64_t seed) {
  memset(x, 0, sizeof *x);
  x->seed = seed;
  x->v[0] = seed + P1 + P2, x->v[1] = seed + P2, x->v[2] = seed, x->v[3] = seed - P1;
}

/* The 32-byte stripes of p[0 .. len) into the four lanes; returns the bytes taken. */
static size_t stripes(uint64_t v[4], const unsigned char *p, size_t len) {
  size_t done = 0;
  for (; done + 32 <= len; done += 32) {
    v[0] = round64(v[0], rd64(p + done));
    v[1] = round64(v[1], rd64(p + done + 8));
    v[2] = round64(v[2], rd64(p + done + 16));
    v[3] = round64(v[3], rd64(p + done + 24));
  }
  return done;
}

void cs_store_xxh64_update(cs_store_xxh64_state *x, const void *data, size_t len) {
  const unsigned char *p = data;
  if (!len) return; /* data may then be NULL (an empty piece), which memcpy must not see */
  x->len += len;
  if (x->fill) { /* complete the stripe held back */
    size_t k = 32 - x->fill < len ? 32 - x->fill : len;
    memcpy(x->buf + x->fill, p, k);
    x->fill += k, p += k, len -= k;
    if (x->fill < 32) return;
    stripes(x->v, x->buf, 32);
    x->fill = 0;
  }
  size_t done = stripes(x->v, p, len);
  memcpy(x->buf, p + done, len - done);
  x->fill = len - done;
}

uint64_t cs_store_xxh64_end(const cs_store_xxh64_state *x) {
  uint64_t h;
  if (x->len >= 32) {
    const uint64_t *v = x->v;
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (int i = 0; i < 4; i++) h = merge64(h, v[i]);
  } else {
    h = x->seed + P5;
  }
  h += x->len;
  const unsigned char *p = x->buf, *end = p + x->fill;
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

uint64_t cs_store_xxh64(const void *data, size_t len, uint64_t seed) {
  cs_store_xxh64_state x;
  cs_store_xxh64_begin(&x, seed);
  cs_store_xxh64_update(&x, data, len);
  return cs_store_xxh64_end(&x);
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
