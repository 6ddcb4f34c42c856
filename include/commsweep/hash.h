/* Hashing and integer helpers of the core that every module shares: SHA-256 (the cache key,
 * the check sums of shared state; src/core/sha256.c), FNV-1a (hash tables and seeds: fast, not
 * for integrity) and the greatest common divisor (clock ratios).  FNV-1a takes the starting
 * value from the caller: a hash that files or results depend on keeps the basis it was made with. */
#ifndef COMMSWEEP_HASH_H
#define COMMSWEEP_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CS_SHA256_HEX 65 /* 64 hex digits + NUL */

typedef struct cs_sha256 {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t fill;
  bool portable; /* false: the CPU's SHA instructions when it has them (tests set true) */
} cs_sha256;

void cs_sha256_init(cs_sha256 *s);
void cs_sha256_update(cs_sha256 *s, const void *data, size_t n);
void cs_sha256_final(cs_sha256 *s, uint8_t out[32]);
void cs_sha256_hex(const void *data, size_t n, char out[CS_SHA256_HEX]);

#define CS_FNV1A_BASIS 0xcbf29ce484222325ULL /* the 64-bit FNV offset basis */
#define CS_FNV1A_PRIME 0x100000001b3ULL

/* h folded with one value at once (a byte, or a whole word for a hash of words) */
static inline uint64_t cs_fnv1a_word(uint64_t h, uint64_t w) { return (h ^ w) * CS_FNV1A_PRIME; }

/* h folded with the bytes p[0..n) */
static inline uint64_t cs_fnv1a_bytes(uint64_t h, const void *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = cs_fnv1a_word(h, ((const unsigned char *)p)[i]);
  return h;
}

/* h folded with the bytes of the NUL-terminated text s */
static inline uint64_t cs_fnv1a_text(uint64_t h, const char *s) {
  for (; *s; s++) h = cs_fnv1a_word(h, (unsigned char)*s);
  return h;
}

/* gcd(a, b); gcd(a, 0) = a */
static inline uint64_t cs_gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

#endif
