/* L2: the closed loop that drives an engine through a plan, step by step (seed "tick-driven
 * loop"): inject every req of a step; as each req phase completes, inject its rsp in the same tick
 * (reversed src/dst, same id: C10); the step ends when every transaction has completed finally;
 * no overlap across steps.
 *
 * The deadlock guard ends a job with CS_EDEADLOCK, naming what it measured, the stuck request
 * ids and where they are, after either
 *   - deadlock_guard_ticks ticks without any completion during which the engine simulated cycles
 *     (engine stats: sim_cycles - skipped_cycles grew): it works but nothing finishes; or
 *   - CS_DRIVE_IDLE_LIMIT_TICKS ticks without any completion during which it simulated none.
 * Time an engine jumps over is not progress lost: a closed-form engine (math) simulates no cycle
 * and may legally take 1e9 ns for one transaction, so only its idle limit applies.
 */
#ifndef COMMSWEEP_DRIVE_H
#define COMMSWEEP_DRIVE_H

#include "commsweep/engine.h"
#include "commsweep/expand.h"

/* 2^44 ticks (4.9 hours at a 1 GHz driver clock): the longest silence an engine that simulates
 * nothing may keep before it counts as stuck. */
#define CS_DRIVE_IDLE_LIMIT_TICKS (1ull << 44)

/* records has plan->num_txns entries; each is filled with the driver ticks, the step and the
 * engine's describe() fields.  On error the records filled so far stay valid. */
int cs_drive(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops, void *engine,
             cs_txn_record *records, cs_err *err);

/* Receives a step's records once the step has ended, steps in order; a non-zero return (a
 * CS_E* code, message in err) ends the drive with it. */
typedef int (*cs_drive_sink)(void *ctx, uint32_t step, const cs_txn_record *records, uint64_t n,
                             cs_err *err);

/* Transactions of the plan's widest step: the room cs_drive_streamed needs. */
uint64_t cs_drive_widest_step(const cs_plan *plan);

/* As cs_drive, but the records of each step are filled in window (cs_drive_widest_step
 * entries) and handed to sink before the next step reuses it: memory follows a step, not the
 * job (back-fill without keeping the records: cs_backfill_add in the sink). */
int cs_drive_streamed(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                      void *engine, cs_txn_record *window, cs_drive_sink sink, void *ctx,
                      cs_err *err);

#endif
