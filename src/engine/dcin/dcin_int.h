/* Every internal header of the DCIN engine, for its tests and benchmarks (the engine's own files
 * include the headers of their layer only): the cycle model (model/), its transport and protocol
 * layers, and step reuse (reuse/).
 */
#ifndef CS_DCIN_INT_H
#define CS_DCIN_INT_H

#include "model/model.h"
#include "model/protocol/protocol.h"
#include "reuse/reuse.h"

/* The simulator behind an engine handle made by cs_dcin_ops.create (tests). */
dcin_sim *dcin_engine_sim(void *engine);

#endif
