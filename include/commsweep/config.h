/* Strict loading of adapter configurations, specs and engine options from JSON (cJSON).
 *
 * Every adapter field of tbl-cr-07 is required; a missing, ill-typed or unknown field is an
 * error naming the field and the source ("file 'a.json': field 'num_dies': expected an integer,
 * got string").  Nothing is defaulted.  The loaders check types and ranges only; constraints
 * C1-C11 are validate.h's.
 */
#ifndef COMMSWEEP_CONFIG_H
#define COMMSWEEP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "commsweep/err.h"
#include "commsweep/model.h"

struct cJSON;

/* One row of the declarative field tables, for --help and docs. */
typedef struct cs_field_doc {
  const char *key;
  const char *type;    /* "string", "integer", "number", "boolean", "object", "array" */
  const char *meaning;
} cs_field_doc;

/* From a parsed object; `source` names it in messages (a file name, "sweep.json: base"). */
int cs_config_adapter_from_json(const struct cJSON *obj, const char *source,
                                cs_adapter_config *out, cs_err *err);
int cs_config_spec_from_json(const struct cJSON *obj, const char *source, cs_spec *out,
                             cs_err *err);
/* Engine options are loaded by the engine registry (engine.h: cs_engine_options_from_json);
 * an omitted "deadlock_guard_ticks" takes this value. */
#define CS_DEFAULT_DEADLOCK_GUARD 1000000u

/* File variants: read, parse, load.  An empty or truncated file is a CS_EPARSE error. */
int cs_config_adapter_load(const char *path, cs_adapter_config *out, cs_err *err);
int cs_config_spec_load(const char *path, cs_spec *out, cs_err *err);
/* Reads, parses and loads a file with fn(json, "file 'PATH'", out, err). */
typedef int (*cs_from_json_fn)(const struct cJSON *obj, const char *source, void *out, cs_err *err);
int cs_config_load_file(const char *path, cs_from_json_fn fn, void *out, cs_err *err);

/* Reads a whole file and parses it; the caller frees with cJSON_Delete.  A repeated key or a
 * number out of a double's range anywhere in it is an error (cs_json_strict) naming the file. */
int cs_config_parse_file(const char *path, struct cJSON **out, cs_err *err);
/* Parses len bytes of JSON text (NUL-terminated at len) as cs_config_parse_file does, without
 * naming a source (callers prefix it): CS_EPARSE for malformed text, naming the line and byte,
 * or for nesting deeper than cJSON reads (naming the limit); CS_EINVAL for a number literal a
 * double cannot hold as written (an integer above 2^53, a nonzero literal that underflows:
 * quoted, with its field's path) and for what cs_json_strict refuses.  *out is NULL on failure. */
int cs_json_parse_text(const char *text, size_t len, struct cJSON **out, cs_err *err);

/* Field tables (NULL-key terminated). */
const cs_field_doc *cs_config_adapter_fields(void);
const cs_field_doc *cs_config_spec_fields(void);

/* Appends every adapter field in the binary form of cs_fields_serialize (for the cache key). */
size_t cs_config_adapter_serialize(const cs_adapter_config *cfg, uint8_t *buf, size_t cap,
                                   size_t used);

/* Serialises back to JSON (caller frees with cJSON_Delete); used by sweeps and the store. */
struct cJSON *cs_config_adapter_to_json(const cs_adapter_config *cfg);
struct cJSON *cs_config_spec_to_json(const cs_spec *spec);

/* Writes the canonical JSON of any cJSON value: keys sorted, numbers as integers when integral
 * and otherwise with 17 significant digits, no whitespace.  Returns bytes needed (excluding NUL);
 * writes at most cap bytes including the NUL. */
size_t cs_json_canonical(const struct cJSON *value, char *buf, size_t cap);

/* Checks that a JSON value has one meaning: no object anywhere in it repeats a key (cJSON would
 * keep both and lookups would see the first) and no number is out of a double's range (1e400
 * parses as infinity, so two different texts would read alike).  `path` names the value in
 * messages ("chip_spec_summary"; "" for a whole document); the message names the offending
 * field by its full path.  CS_EINVAL on the first fault found. */
int cs_json_strict(const struct cJSON *value, const char *path, cs_err *err);

/* Reads an integral JSON number in [min, max] into *out; CS_EINVAL with a message naming key
 * and the value otherwise (the topology files' integers too). */
int cs_json_integer(const struct cJSON *v, const char *key, double min, double max, double *out,
                    cs_err *err);

#endif
