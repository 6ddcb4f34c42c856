/* The DCIN cycle-level engine: a native re-implementation of the CrossRing KCIN ring NoC per die
 * (v1 nodes: IQ / ring bridge / EQ, E-Tag, I-Tag, REQ_RSP protocol) plus D2D AXI links between
 * dies.  It sits behind the engine ops table (engine.h); docs/dcin-model.md describes the model,
 * every recorded tick and cycle, the block counters and the deviations from CrossRing.
 */
#ifndef COMMSWEEP_DCIN_H
#define COMMSWEEP_DCIN_H

#include "commsweep/engine.h"

extern const cs_engine_ops cs_dcin_ops;

#endif
