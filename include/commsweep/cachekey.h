/* The cache key of a job: SHA-256 over a binary serialisation of every adapter field, the
 * spec (participants in expansion order: cs_spec_participant_order), the engine's name, model
 * version and result-changing options, and CS_ADAPTER_VERSION.  Field order in the input never
 * changes it; any value change does.  There is no fallback key: a key that cannot be computed
 * is an error, and the job fails instead of sharing a cache entry.
 */
#ifndef COMMSWEEP_CACHEKEY_H
#define COMMSWEEP_CACHEKEY_H

#include <stdbool.h>

#include "commsweep/err.h"
#include "commsweep/hash.h"
#include "commsweep/model.h"

#define CS_KEY_HEX CS_SHA256_HEX /* 64 hex digits + NUL */

/* The bytes the key hashes (src/job/cachekey.c describes the form), with the adapter version
 * given (tests vary it); returns their length, which may exceed cap (then buf holds a prefix). */
size_t cs_cachekey_serialize(const cs_job *job, const char *adapter_version, uint8_t *buf,
                             size_t cap);
/* 64 lowercase hex digits; an error (out untouched) when the key cannot be computed. */
int cs_cachekey(const cs_job *job, char out[CS_KEY_HEX], cs_err *err);

#endif
