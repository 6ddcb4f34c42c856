/* The cache key of a job: SHA-256 over a canonical serialisation of every adapter field, the
 * spec (participants sorted unless order matters: p2p), the engine options, and
 * CS_ADAPTER_VERSION.  Field order in the input never changes it; any value change does.
 */
#ifndef COMMSWEEP_CACHEKEY_H
#define COMMSWEEP_CACHEKEY_H

#include "commsweep/model.h"

#define CS_KEY_HEX 65 /* 64 hex digits + NUL */

typedef struct cs_sha256 {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t fill;
} cs_sha256;

void cs_sha256_init(cs_sha256 *s);
void cs_sha256_update(cs_sha256 *s, const void *data, size_t n);
void cs_sha256_final(cs_sha256 *s, uint8_t out[32]);
void cs_sha256_hex(const void *data, size_t n, char out[CS_KEY_HEX]);

/* Writes the canonical text the key hashes (for inspection); returns bytes needed. */
size_t cs_cachekey_canonical(const cs_job *job, char *buf, size_t cap);
/* 64 lowercase hex digits. */
void cs_cachekey(const cs_job *job, char out[CS_KEY_HEX]);

#endif
