/* L2: the closed loop that drives an engine through a plan, step by step (seed "tick-driven
 * loop"): inject every req of a step; as each req phase completes, inject its rsp in the same tick
 * (reversed src/dst, same id: C10); the step ends when every transaction has completed finally;
 * no overlap across steps.  A stretch of deadlock_guard_ticks ticks without any completion ends
 * the job with CS_EDEADLOCK naming the stuck request ids and where they are.
 */
#ifndef COMMSWEEP_DRIVE_H
#define COMMSWEEP_DRIVE_H

#include "commsweep/engine.h"
#include "commsweep/expand.h"

/* records has plan->num_txns entries; each is filled with the driver ticks, the step and the
 * engine's describe() fields.  On error the records filled so far stay valid. */
int cs_drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
             cs_txn_record *records, cs_err *err);

#endif
