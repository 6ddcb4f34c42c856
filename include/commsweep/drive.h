/* L2: the closed loop that drives an engine through a plan, step by step (seed "tick-driven
 * loop"): inject every req of a step; as each req phase completes, inject its rsp in the same tick
 * (reversed src/dst, same id: C10); the step ends when every transaction has completed finally;
 * no overlap across steps.
 *
 * A step's reqs reach an engine as its flows (cs_engine_ops.inject_flows), or one by one.  The
 * driver holds, per transaction of the running step, one byte of state; a record for each
 * transaction between its req completion and its final one; and whatever the caller keeps.
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

/* Receives records as the drive finishes them (see cs_drive_streamed); a non-zero return (a
 * CS_E* code, message in err) ends the drive with it. */
typedef int (*cs_drive_sink)(void *ctx, uint32_t step, const cs_txn_record *records, uint64_t n,
                             cs_err *err);

/* How cs_drive_streamed hands records over. */
typedef enum cs_drive_order {
  CS_DRIVE_BY_STEP = 0, /* each step's records whole, in request-id order, once the step ended */
  CS_DRIVE_AS_DONE = 1, /* in batches, as transactions complete finally (each step's records
                         * before the next step's); what a fold into sums needs, and the order
                         * the fewest records wait in */
} cs_drive_order;

/* Records cs_drive_streamed needs as its window (the widest step by step, or a batch). */
uint64_t cs_drive_window(const cs_plan *plan, const cs_engine_ops *ops, cs_drive_order order);

/* As cs_drive, but the records pass through window (cs_drive_window entries) into sink, reused
 * from piece to piece: memory follows a step or what is in flight, not the job (back-fill
 * without keeping the records: cs_backfill_add in the sink). */
int cs_drive_streamed(const cs_job *job, const cs_plan *plan, const cs_engine_ops *ops,
                      void *engine, cs_drive_order order, cs_txn_record *window,
                      cs_drive_sink sink, void *ctx, cs_err *err);

/* Bytes the drive holds besides its window, for a job of `plan`'s shape on ops, when `inflight`
 * transactions at most are between their req and final completions. */
uint64_t cs_drive_bytes(const cs_plan *plan, const cs_engine_ops *ops, cs_drive_order order,
                        uint64_t inflight);

#endif
