/* The engine registry: ops tables by name.  Resolved once per job; the hot loop then makes one
 * indirect call per operation. */
#include "commsweep/engine.h"

#include <string.h>

#include "commsweep/dcin.h"
#include "commsweep/math_engine.h"

static const cs_engine_ops *const registry[] = {&cs_dcin_ops, &cs_math_ops, NULL};

const cs_engine_ops *cs_engine_find(const char *name) {
  for (int i = 0; registry[i]; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const cs_engine_ops *const *cs_engine_list(void) { return registry; }

const char *cs_engine_names(void) { return "dcin, math"; }
