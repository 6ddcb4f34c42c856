/* The closed-form engine (docs/math-engine.md): a flow-level model of the CrossRing chip, priced a
 * step at a time in microseconds per job, with the same records and EngineResult as the cycle
 * engines.  Its options are the model's calibrated constants (commsweep calibrate fits them from
 * dcin rows); everything else comes from the die and layout files. */
#ifndef COMMSWEEP_MATH_ENGINE_H
#define COMMSWEEP_MATH_ENGINE_H

#include "commsweep/engine.h"

/* The model's constants: latencies in NoC cycles beyond what the hops and the files give,
 * and the dimensionless factors of its bandwidth terms.  Every field is an engine option
 * (engine.math.<name>); the defaults are fitted to the C2 study's dcin rows. */
typedef struct cs_math_params {
  double req_cycles;           /* GDMA to the target's grant, beyond the hops */
  double dbid_cycles;          /* grant to the DBID at the GDMA, beyond the hops */
  double data_cycles;          /* DBID to the write's last flit at the DDR, beyond hops and burst */
  double read_cycles;          /* grant to a read's last flit at the GDMA, beyond hops, DDR, burst */
  double turn_cycles;          /* a traversal that turns through a ring bridge */
  double d2d_write_cycles;     /* a cross-die write's crossing, beyond the AXI latencies */
  double d2d_read_cycles;      /* a cross-die read's crossing, beyond the AXI latencies */
  double d2d_flit_cycles;      /* each burst flit of a cross-die transaction, beyond the IP's */
  double tracker_slack_cycles; /* a freed tracker's reuse by the next request */
  double retry_ns;             /* a Retry round's fixed cost: release, Pcredit and re-send */
  double retry_threshold;      /* share of a DDR channel's trackers a source may hold before Retry */
  double ring_efficiency;      /* usable share of a ring lane's flit per cycle */
  double bucket_fraction;      /* share of a D2D token bucket full at a step's start */
} cs_math_params;

/* The defaults (the options an absent engine.math object means). */
cs_math_params cs_math_default_params(void);

extern const cs_engine_ops cs_math_ops;

#endif
