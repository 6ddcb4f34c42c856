/* Declarative field tables: one row per field (key, type, place in a struct, bounds, meaning)
 * drive strict JSON loading, --help listings and serialisation.  The core's adapter, spec and
 * topology files use them, and so does every engine for its own options (engine.h).
 *
 * Loading is strict: an unknown, duplicated, missing (unless optional), empty (unless optional), ill-typed or
 * out-of-range key is an error naming the source, the field and the value.
 */
#ifndef COMMSWEEP_FIELDS_H
#define COMMSWEEP_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsweep/err.h"

struct cJSON;

typedef enum cs_ftype { CS_F_STRING, CS_F_INT, CS_F_U64, CS_F_DOUBLE, CS_F_BOOL } cs_ftype;

enum {
  CS_FIELD_OPTIONAL = 1u << 0, /* may be absent: the target keeps the value it holds */
  CS_FIELD_NO_KEY = 1u << 1,   /* does not enter the cache key (never changes results) */
  CS_FIELD_FIT = 1u << 2       /* a model constant `commsweep calibrate` fits (numeric) */
};

typedef struct cs_field {
  const char *key;
  cs_ftype type;
  size_t offset;       /* into the target struct */
  size_t size;         /* CS_F_STRING: buffer size including NUL */
  double min, max;     /* numeric bounds, inclusive */
  const char *meaning; /* one line for --help and messages */
  unsigned flags;      /* CS_FIELD_* */
} cs_field;

/* Loads every field of the table from obj into target.  Keys listed in `extra` (NULL-terminated,
 * may be NULL) are skipped for the caller to handle; any other unknown key is an error, as is a
 * missing key unless the row is CS_FIELD_OPTIONAL or `optional` lists it. */
int cs_fields_load(const cs_field *table, const struct cJSON *obj, const char *source,
                   const char *const *extra, const char *const *optional, void *target,
                   cs_err *err);
/* Adds every field of the table from target to obj; with key_only, skips CS_FIELD_NO_KEY rows. */
void cs_fields_store(const cs_field *table, const void *target, struct cJSON *obj, bool key_only);
/* "a, b, c" of the table's keys plus extras, for messages. */
void cs_fields_list(const cs_field *table, const char *const *extra, char *buf, size_t cap);
/* Appends the table's values to buf[used..cap) in a fixed binary form (integers and booleans as
 * 8 little-endian bytes, doubles as their IEEE bits with -0 as 0, strings as length + bytes),
 * in table order; with key_only, skips CS_FIELD_NO_KEY rows.  Returns the new length, which may
 * exceed cap (then nothing past cap was written).  The cache key hashes this form. */
size_t cs_fields_serialize(const cs_field *table, const void *target, bool key_only, uint8_t *buf,
                           size_t cap, size_t used);
/* The same encodings, one value at a time (*used advances, even past cap). */
void cs_bytes_u64(uint8_t *buf, size_t cap, size_t *used, uint64_t v);
void cs_bytes_i32s(uint8_t *buf, size_t cap, size_t *used, const int32_t *v, size_t n); /* 4 bytes each */
void cs_bytes_double(uint8_t *buf, size_t cap, size_t *used, double v);
void cs_bytes_text(uint8_t *buf, size_t cap, size_t *used, const char *s, size_t max);
/* "string", "integer", "number", "boolean" */
const char *cs_field_type_name(cs_ftype type);

#endif
