/* Internals shared by the files of the core module: the declarative field table that drives
 * strict JSON loading, help text and serialisation. */
#ifndef CS_CORE_INT_H
#define CS_CORE_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "commsweep/config.h"
#include "commsweep/fields.h"

/* Describes a JSON value's type for messages: "string", "number 1.5", "null", ... */
void cs_json_describe(const cJSON *v, char *buf, size_t cap);
/* Reads an integral JSON number in [min, max]; returns CS_EINVAL with a message naming key. */
int cs_json_integer(const cJSON *v, const char *key, double min, double max, double *out,
                    cs_err *err);

#endif
