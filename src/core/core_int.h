/* Internals shared by the files of the core module: how a JSON value is described in messages
 * (the strict loaders of fields.c and config.c). */
#ifndef CS_CORE_INT_H
#define CS_CORE_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "commsweep/config.h"
#include "commsweep/fields.h"

/* Describes a JSON value's type for messages: "string", "number 1.5", "null", ... */
void cs_json_describe(const cJSON *v, char *buf, size_t cap);

#endif
