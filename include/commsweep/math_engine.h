/* The closed-form alpha-beta engine (docs/math-engine.md): microseconds per job, same records
 * and EngineResult as the cycle engines. */
#ifndef COMMSWEEP_MATH_ENGINE_H
#define COMMSWEEP_MATH_ENGINE_H

#include "commsweep/engine.h"

extern const cs_engine_ops cs_math_ops;

#endif
