/* The DCIN cycle-level engine: a native re-implementation of the CrossRing KCIN ring NoC per die
 * (v1 nodes: IQ / ring bridge / EQ, E-Tag, I-Tag, REQ_RSP protocol) plus D2D AXI links between
 * dies.  It sits behind the engine ops table (engine.h); docs/dcin-model.md describes the model,
 * every recorded tick and cycle, the block counters and the deviations from CrossRing.
 */
#ifndef COMMSWEEP_DCIN_H
#define COMMSWEEP_DCIN_H

#include "commsweep/engine.h"

extern const cs_engine_ops cs_dcin_ops;

/* Exact step reuse across jobs.  Each engine replays the steps it has already simulated (see
 * docs/dcin-model.md); a reuse context owned by the caller lets the engines it is attached to,
 * one after the other (never two at a time), share their recorded steps, so that e.g. the steps of
 * an AllGather are those an AllReduce of the same size and configuration recorded before.  Results
 * are bit-identical with or without it.  Attach before the engine's first inject (0, else -1);
 * free the context after the last engine using it is destroyed. */
typedef struct cs_dcin_reuse cs_dcin_reuse;
cs_dcin_reuse *cs_dcin_reuse_new(void);
void cs_dcin_reuse_free(cs_dcin_reuse *ctx); /* accepts NULL */
int cs_dcin_reuse_attach(void *engine, cs_dcin_reuse *ctx);

#endif
