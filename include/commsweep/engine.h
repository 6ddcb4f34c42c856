/* The engine interface: every interconnect model sits behind one small ops table, so the L2
 * driver (drive.h) runs them all the same way and they all yield the same records.
 *
 * Time: the driver speaks in driver ticks (adapter.driver_cycle_frequency_ghz); an engine keeps
 * its own internal cycles and converts.  The protocol per transaction (seed "tick-driven loop"):
 *   inject(req) -> ... completion {id, CS_PHASE_REQ} -> inject(rsp, reversed src/dst, same id)
 *   -> ... completion {id, CS_PHASE_FINAL}.
 */
#ifndef COMMSWEEP_ENGINE_H
#define COMMSWEEP_ENGINE_H

#include "commsweep/err.h"
#include "commsweep/model.h"

enum { CS_PHASE_REQ = 0, CS_PHASE_FINAL = 1 };

typedef struct cs_completion {
  uint64_t request_id;
  uint64_t tick;  /* driver tick at which the phase completed */
  uint8_t phase;  /* CS_PHASE_REQ or CS_PHASE_FINAL */
} cs_completion;

typedef struct cs_engine_stats {
  uint64_t sim_cycles;     /* internal cycles advanced, skipped ones included */
  uint64_t skipped_cycles; /* cycles jumped over because nothing could move */
  uint64_t flit_hops;      /* flit moves between ring slices or links */
  uint64_t flits_injected, flits_ejected;
} cs_engine_stats;

typedef struct cs_engine_ops {
  const char *name;    /* matches cs_engine_options.name */
  const char *summary; /* one line for --help */
  /* Builds an engine for the job; on failure *engine is untouched and err says why. */
  int (*create)(const cs_job *job, void **engine, cs_err *err);
  /* Accepts a req or rsp inject at the current tick.  The record is copied. */
  int (*inject)(void *engine, const cs_inject *in, cs_err *err);
  /* Advances until a completion is pending or max_ticks ticks have passed, whichever is first. */
  int (*advance)(void *engine, uint64_t max_ticks, cs_err *err);
  /* Moves up to cap pending completions, oldest first, into out; returns how many. */
  size_t (*poll)(void *engine, cs_completion *out, size_t cap);
  /* Current driver tick. */
  uint64_t (*now)(const void *engine);
  /* Fills the engine-owned fields of a finished (or stuck) request's record: physical metadata,
   * back-pressure counters, internal cycles.  Driver-owned fields (ticks, step) are untouched. */
  void (*describe)(const void *engine, uint64_t request_id, cs_txn_record *rec);
  /* Where a request is now ("waiting for DBID at SN die1:node3 ddr_0"), for deadlock reports. */
  void (*where)(const void *engine, uint64_t request_id, char *buf, size_t cap);
  void (*stats)(const void *engine, cs_engine_stats *out);
  void (*destroy)(void *engine); /* accepts NULL */
} cs_engine_ops;

/* The registry: engine ops by name.  Returns NULL for an unknown name. */
const cs_engine_ops *cs_engine_find(const char *name);
/* All registered engines, NULL-terminated, for listings and error messages. */
const cs_engine_ops *const *cs_engine_list(void);
/* "math, dcin": the valid names, for messages. */
const char *cs_engine_names(void);

#endif
