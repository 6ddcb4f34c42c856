/* Internals shared by the files of the core module: the declarative field table that drives
 * strict JSON loading, help text and serialisation. */
#ifndef CS_CORE_INT_H
#define CS_CORE_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "commsweep/config.h"

typedef enum cs_ftype { CS_F_STRING, CS_F_INT, CS_F_U64, CS_F_DOUBLE, CS_F_BOOL } cs_ftype;

typedef struct cs_field {
  const char *key;
  cs_ftype type;
  size_t offset;      /* into the target struct */
  size_t size;        /* CS_F_STRING: buffer size including NUL */
  double min, max;    /* numeric bounds, inclusive */
  const char *meaning;
} cs_field;

/* Loads every field of the table from obj into target.  Keys listed in `extra` (NULL-terminated,
 * may be NULL) are skipped for the caller to handle; any other unknown key is an error, as is a
 * missing key unless `optional` lists it, and a key that appears twice (extras included). */
int cs_fields_load(const cs_field *table, const cJSON *obj, const char *source,
                   const char *const *extra, const char *const *optional, void *target,
                   cs_err *err);
/* Adds every field of the table from target to obj. */
void cs_fields_store(const cs_field *table, const void *target, cJSON *obj);
/* "a, b, c" of the table's keys plus extras, for messages. */
void cs_fields_list(const cs_field *table, const char *const *extra, char *buf, size_t cap);
/* Describes a JSON value's type for messages: "string", "number 1.5", "null", ... */
void cs_json_describe(const cJSON *v, char *buf, size_t cap);
/* Reads an integral JSON number in [min, max]; returns CS_EINVAL with a message naming key. */
int cs_json_integer(const cJSON *v, const char *key, double min, double max, double *out,
                    cs_err *err);

#endif
