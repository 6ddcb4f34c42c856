/* Internals of the topology module: the parse cache of topology files, exposed for tests. */
#ifndef CS_TOPO_INT_H
#define CS_TOPO_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "commsweep/topo.h"

/* One topology file: name (without .json) and its JSON text; a table ends with a NULL name. */
typedef struct cs_topo_file {
  const char *name;
  const char *json;
} cs_topo_file;

typedef struct cs_topo_parsed {
  const char *name; /* borrowed from the table */
  bool is_layout;   /* its JSON has "num_dies" */
  int rc;           /* parse result; a file that fails is reported on every lookup */
  cs_err err;
  cs_die_params die;
  cs_layout layout;
} cs_topo_parsed;

/* Every file of a table, parsed: exactly one entry per file, however many there are. */
typedef struct cs_topo_cache {
  size_t count;
  cs_topo_parsed *files; /* owned */
} cs_topo_cache;

/* Parses every file of the table into out (CS_ENOMEM leaves out empty).  A file that does not
 * parse is kept with its error; the build itself fails only for want of memory. */
int cs_topo_cache_build(const cs_topo_file *table, cs_topo_cache *out, cs_err *err);
/* The entry of that name and kind, or NULL. */
const cs_topo_parsed *cs_topo_cache_find(const cs_topo_cache *c, const char *name, bool layout);
void cs_topo_cache_free(cs_topo_cache *c); /* accepts NULL */

#endif
