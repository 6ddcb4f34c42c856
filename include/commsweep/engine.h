/* The engine interface: every interconnect model sits behind one small ops table, so the L2
 * driver (drive.h) runs them all the same way and they all yield the same records.
 *
 * Time: the driver speaks in driver ticks (adapter.driver_cycle_frequency_ghz); an engine keeps
 * its own internal cycles and converts.  The protocol per transaction (seed "tick-driven loop"):
 *   inject(req) -> ... completion {id, CS_PHASE_REQ} -> inject(rsp, reversed src/dst, same id)
 *   -> ... completion {id, CS_PHASE_FINAL}.
 *
 * Memory: an engine holds state only for the transactions in flight: those of the current step
 * it was given and has not yet been asked to describe() after their final completion (the
 * driver hands it one step at a time), or, when it takes a step's reqs as flows (inject_flows),
 * only those it has started.  describe() of a finished request comes before the engine's next
 * poll or advance after the poll that returned its CS_PHASE_FINAL completion; from then on the
 * engine may have forgotten it.  cs_engine_ops.memory states what it will hold.
 *
 * Beyond the protocol the ops table answers every other question the program has about an
 * engine: its options, checks, cost, memory, network name, extra columns and the subcommands it
 * brings (tools); nothing outside src/engine/<name>/ and the registry names an engine
 * (docs/engines.md walks through adding one).
 */
#ifndef COMMSWEEP_ENGINE_H
#define COMMSWEEP_ENGINE_H

#include <stdio.h>

#include "commsweep/err.h"
#include "commsweep/fields.h"
#include "commsweep/expand.h"
#include "commsweep/model.h"

enum { CS_PHASE_REQ = 0, CS_PHASE_FINAL = 1 };

typedef struct cs_completion {
  uint64_t request_id;
  uint64_t tick;  /* driver tick at which the phase completed */
  uint8_t phase;  /* CS_PHASE_REQ or CS_PHASE_FINAL */
} cs_completion;

/* A step as the driver hands it to cs_engine_ops.finish_step: its reqs, just injected. */
typedef struct cs_engine_step {
  const cs_inject *reqs; /* reqs[0..n), in inject order; records[i] is reqs[i]'s */
  size_t n;
  uint32_t step;
  uint64_t now;         /* the tick they were injected at */
  uint64_t guard_ticks; /* the deadlock guard of the per-transaction protocol */
  size_t extra_slots;   /* cs_engine_record_slots(), for cs_engine_record_begin */
} cs_engine_step;

/* Extra EngineResult columns an engine fills beyond the common ones (cs_engine_ops
 * .result_columns): counters only, at most CS_ENGINE_EXTRA_MAX per engine. */
#define CS_ENGINE_EXTRA_MAX 8

typedef struct cs_engine_stats {
  uint64_t sim_cycles;     /* internal cycles advanced, skipped ones included */
  uint64_t skipped_cycles; /* cycles jumped over because nothing could move */
  uint64_t flit_hops;      /* flit moves between ring slices or links */
  uint64_t flits_injected, flits_ejected;
  uint64_t extra[CS_ENGINE_EXTRA_MAX]; /* the engine's result_columns, in table order */
} cs_engine_stats;

/* One extra column: a result counter the engine reports through stats().extra, or a
 * per-transaction value its describe() writes into the record. */
typedef struct cs_engine_column {
  const char *name; /* column name as stored: "<engine>_<what>", unique across engines */
  const char *unit; /* NULL when dimensionless */
  const char *doc;  /* one line */
} cs_engine_column;

/* Everything the rest of the program knows about an engine.  Only the registry (registry.def)
 * lists engines; no other file names one. */
/* A subcommand an engine brings to the commsweep binary (`commsweep route`): main.c lists it
 * in `commsweep --help` and dispatches to it by name.  run gets argv[0] = name and returns the
 * process exit status (0, 1 a file or job error, 2 a usage error). */
typedef struct cs_engine_tool {
  const char *name;    /* NULL ends a table */
  int (*run)(int argc, char **argv);
  const char *summary; /* one line for `commsweep --help` */
} cs_engine_tool;

typedef struct cs_engine_ops {
  const char *name;          /* matches cs_engine_options.name */
  const char *summary;       /* one line for --help */
  const char *model_version; /* enters every cache key: bump it whenever results change */

  /* ---- options: {"name": N, "deadlock_guard_ticks": G, N: {...options...}} ---------------- */
  const cs_field *options; /* rows into cs_engine_options.params; NULL-key terminated, or NULL */
  size_t options_size;     /* bytes of the engine's options struct, <= CS_ENGINE_PARAMS_MAX */
  const char *options_doc; /* one line: what an absent options object means, for --help */
  /* Optional: writes into params (options_size bytes) the options an absent object means, for
   * tools that start from them (commsweep calibrate).  NULL: none to state. */
  void (*options_default)(void *params);

  /* ---- what the engine asks of a job --------------------------------------------------------- */
  /* Engine-specific checks of the adapter configuration and spec (the generic ones are
   * validate.h's); a violation names the constraint, the field, the value and the rule. */
  int (*validate)(const cs_job *job, cs_err *err);
  /* Relative cost of the job for the scheduler (only the order matters; comparable across
   * engines: about 1 per microsecond of host time). */
  double (*cost)(const cs_job *job, uint64_t num_txns, uint32_t num_steps);
  /* Optional (NULL: no job shares work with another).  Jobs of the same engine with the same
   * non-zero group can share work when one process runs them (shared_new below: e.g. steps one
   * records and the others replay), so the scheduler keeps a group on one rank. */
  uint64_t (*share_group)(const cs_job *job);
  /* Names the network the job runs on, so that two networks the engine tells apart have two
   * names: its topology and what else changes it (routing, fault set): "torus:4x4
   * (dor_dateline)", "fattree2d:8x8 (vtftr) faults 1,1".  Error messages and the /jobs network
   * column (cs_engine_network) show it.  NULL: the adapter's layout and die topology. */
  void (*network)(const cs_job *job, char *buf, size_t cap);
  const cs_engine_column *result_columns; /* NULL-name terminated, or NULL */
  /* Optional: what a design costs on this engine beyond the adapter's columns (buffers, VCs),
   * for Pareto objectives (docs/pareto.md): design(job, out) writes column i into out[i] for a
   * job of this engine (its options, or the engine's defaults when it gave none); at most
   * CS_ENGINE_EXTRA_MAX columns, NULL-name terminated, or NULL. */
  const cs_engine_column *design_columns;
  void (*design)(const cs_job *job, double *out);
  /* Per-transaction columns: describe() writes column i into
   * rec->engine_extra[cs_engine_record_slot(ops) + i]; NULL-name terminated, or NULL. */
  const cs_engine_column *record_columns;

  /* ---- state shared by the jobs of one process (optional; NULL when the engine has none) ----- */
  /* E.g. recorded steps that later jobs replay.  A process runs its jobs one after the other, so
   * at most one engine uses it at a time; results must be bit-identical with or without it.  An
   * engine that finds the shared state cannot carry it through the job fails with CS_ERETRY, and
   * the job runs again on a new engine without it (cs_job_run_keeping). */
  void *(*shared_new)(void);
  void (*shared_free)(void *shared); /* accepts NULL */
  int (*shared_attach)(void *engine, void *shared, cs_err *err); /* before the first inject */

  /* Optional: the bytes the engine will hold at most while it runs the job, estimated before it
   * runs; widest_step is the transactions of the plan's widest step.  NULL: the engine holds
   * about CS_ENGINE_TXN_BYTES per transaction of the widest step (cs_engine_memory). */
  uint64_t (*memory)(const cs_job *job, uint64_t widest_step);

  /* ---- running ------------------------------------------------------------------------------- */
  /* Builds an engine for the job; on failure *engine is untouched and err says why. */
  int (*create)(const cs_job *job, void **engine, cs_err *err);
  /* Accepts a req or rsp inject at the current tick.  The record is copied. */
  int (*inject)(void *engine, const cs_inject *in, cs_err *err);
  /* Optional (NULL: the driver calls inject once per req).  Accepts a step's reqs, reqs[0..n),
   * in order at the current tick, exactly as n calls of inject would: *injected = n, or, when
   * one is refused, the index of that one (those before it are injected) with err saying why. */
  int (*inject_step)(void *engine, const cs_inject *reqs, size_t n, size_t *injected,
                     cs_err *err);
  /* Optional (NULL: the driver injects the step's reqs, through inject_step or inject).  Accepts
   * a step's reqs as its flows, flows[0..n): exactly as if cs_flow_req(&flows[f], k) were
   * injected for every flow f and every k, in that order, at the current tick; the engine makes
   * each req only when it starts it, so what waits for a tracker costs no memory. */
  int (*inject_flows)(void *engine, const cs_flow *flows, size_t n, cs_err *err);
  /* Advances until a completion is pending or max_ticks ticks have passed, whichever is first. */
  int (*advance)(void *engine, uint64_t max_ticks, cs_err *err);
  /* Moves up to cap pending completions, oldest first, into out; returns how many. */
  size_t (*poll)(void *engine, cs_completion *out, size_t cap);
  /* Current driver tick. */
  uint64_t (*now)(const void *engine);
  /* Fills the engine-owned fields of a finished (or stuck) request's record: physical metadata,
   * back-pressure counters, internal cycles, its record_columns.  Driver-owned fields (ticks,
   * step) are untouched. */
  void (*describe)(const void *engine, uint64_t request_id, cs_txn_record *rec);
  /* Optional (NULL: the driver always goes transaction by transaction).  Called right after the
   * driver injected a step's reqs (cs_engine_step), before it makes their records: when the
   * engine already knows how the step ends (e.g. it replays a recorded one), it runs the step to
   * its end exactly as the per-transaction protocol would, with every rsp injected at the tick
   * its req phase completed, and makes each record whole: the driver's fields as
   * cs_engine_record_begin sets them, then req_complete_tick, rsp_inject_tick,
   * rsp_complete_tick and what describe() fills; *finished = true.  Otherwise, and whenever that
   * protocol would stop the step (no completion within guard_ticks ticks, an rsp the engine
   * would refuse), it changes nothing, records included, and sets *finished = false: the driver
   * then runs the step transaction by transaction. */
  int (*finish_step)(void *engine, const cs_engine_step *step, cs_txn_record *records,
                     bool *finished, cs_err *err);
  /* Where a request is now ("waiting for DBID at SN die1:node3 ddr_0"), for deadlock reports. */
  void (*where)(const void *engine, uint64_t request_id, char *buf, size_t cap);
  void (*stats)(const void *engine, cs_engine_stats *out);
  void (*destroy)(void *engine); /* accepts NULL */

  /* ---- command-line tools (optional) ------------------------------------------------------ */
  const cs_engine_tool *tools; /* the subcommands the engine brings; NULL: none */
} cs_engine_ops;

/* The tick an advance of max_ticks from tick `now` may reach: now + max_ticks, saturating at
 * UINT64_MAX (a guard too large to reach means "never"). */
static inline uint64_t cs_engine_advance_limit(uint64_t now, uint64_t max_ticks) {
  return max_ticks > UINT64_MAX - now ? UINT64_MAX : now + max_ticks;
}

/* For an engine whose driver tick of cycle c is floor(c num / den): the tick an advance of
 * max_ticks from tick `now` stops at, into *target, and the first cycle of that tick.  Both
 * saturate at UINT64_MAX (a guard too large to reach means "never"). */
static inline uint64_t cs_engine_advance_end(uint64_t now, uint64_t max_ticks, uint64_t num,
                                             uint64_t den, uint64_t *target) {
  *target = cs_engine_advance_limit(now, max_ticks);
  if (*target > (UINT64_MAX - num) / den) return UINT64_MAX;
  return (*target * den + num - 1) / num;
}

/* A req's record as the driver starts it when it injects the req at tick `now` in step `step`:
 * zero but for its id, step, endpoints, direction, burst and inject tick, and the first
 * extra_slots (cs_engine_record_slots()) extra columns at -1. */
static inline void cs_engine_record_begin(cs_txn_record *rec, const cs_inject *req, uint32_t step,
                                          uint64_t now, size_t extra_slots) {
  *rec = (cs_txn_record){0}; /* a streamed window holds the previous step's records */
  rec->request_id = req->request_id;
  rec->step = step;
  rec->src = req->src_id;
  rec->dst = req->dst_id;
  rec->is_read = req->is_read;
  rec->burst_length = req->burst_length;
  rec->req_inject_tick = now;
  for (size_t x = 0; x < extra_slots; x++) rec->engine_extra[x] = -1;
}

/* What an engine without a memory op is taken to hold per transaction of its widest step. */
#define CS_ENGINE_TXN_BYTES 256
/* ops->memory(job, widest_step), or CS_ENGINE_TXN_BYTES per transaction of the widest step. */
uint64_t cs_engine_memory(const cs_engine_ops *ops, const cs_job *job, uint64_t widest_step);

/* The registry: engine ops by name.  Returns NULL for an unknown name. */
const cs_engine_ops *cs_engine_find(const char *name);
/* All registered engines, NULL-terminated, for listings and error messages. */
const cs_engine_ops *const *cs_engine_list(void);
/* ---- extra columns -------------------------------------------------------------------------- */

/* A set of registered engines, bit i for the engine at registry index i (cs_engine_list). */
typedef uint32_t cs_engine_set;
#define CS_ENGINE_SET_ALL UINT32_MAX
/* The engines whose extra columns every file names: those of the registry when the store's
 * schema version was laid down.  A later engine's columns are named only in a file laid out for
 * its jobs (cs_store_open_for), so they change no other engine's file types. */
#define CS_ENGINES_IN_EVERY_FILE 3
cs_engine_set cs_engine_set_in_every_file(void);
/* The set holding ops alone; 0 for an engine not in the registry. */
cs_engine_set cs_engine_set_of(const cs_engine_ops *ops);

/* The first slot of cs_result.engine_extra (cs_txn_record.engine_extra) that holds ops'
 * result_columns (record_columns).  Engines take slots in registry order, so no two share one;
 * check_backfill checks that every engine's columns fit. */
size_t cs_engine_extra_slot(const cs_engine_ops *ops);
size_t cs_engine_record_slot(const cs_engine_ops *ops);
/* The record slots of the engines in every file: the first n.  The driver sets them to -1, so
 * such a column reads -1 in the records of another engine's jobs; every other slot stays 0 (a
 * later engine's column reads 0 in other engines' records, which so keep their bytes; the
 * checksums cover every slot, named or not). */
size_t cs_engine_record_slots(void);
/* Write the extra columns of the engines in `engines` as column rows into out, for a row struct
 * that holds a cs_result (cs_txn_record) at byte `offset`; NULL-terminated.  Return the number
 * of rows (cap must leave room for the terminator). */
size_t cs_engine_result_columns(cs_engine_set engines, size_t offset, cs_col *out, size_t cap);
size_t cs_engine_record_columns(cs_engine_set engines, size_t offset, cs_col *out, size_t cap);

/* The model version that enters the cache key: ops->model_version, unless the test hook
 * COMMSWEEP_TEST_MODEL_VERSION_<name> is set (tests use it to show that a bump reruns exactly
 * that engine's rows; an environment variable rather than an option: engine.c says why). */
const char *cs_engine_model_version(const cs_engine_ops *ops);
/* The network of the job (cs_engine_ops.network, or "<dcin_layout> (<topology>)" for an engine
 * without that op: "2die_spread (5x4)") into buf; "" for an unknown engine. */
void cs_engine_network(const cs_job *job, char *buf, size_t cap);
/* Writes "dcin, math" (the registered names) into buf, for messages. */
void cs_engine_names(char *buf, size_t cap);

/* ---- engine options ------------------------------------------------------------------------ */

/* Strict loading of {"name", "deadlock_guard_ticks"?, "<engine>": {...}?}.  The named engine's
 * object is loaded with its option table (absent: has_options = false and the engine uses its
 * defaults).  An object named after another registered engine is checked against that engine's
 * table and otherwise ignored, so one base can serve an engine.name axis. */
int cs_engine_options_from_json(const struct cJSON *obj, const char *source,
                                cs_engine_options *out, cs_err *err);
/* From a file: an engine object, or a calibration file whose "engine" member is one. */
int cs_engine_options_load(const char *path, cs_engine_options *out, cs_err *err);
/* The options as JSON.  For the cache key (key_only) the options that never change results are
 * left out and the engine's model_version is added. */
struct cJSON *cs_engine_options_to_json(const cs_engine_options *eng, bool key_only);
/* Appends the options in the binary form of cs_fields_serialize, for the cache key: name, guard,
 * model version, whether options were given, and those that change results. */
size_t cs_engine_options_serialize(const cs_engine_options *eng, uint8_t *buf, size_t cap,
                                   size_t used);
/* Prints the engine options of every engine, from their tables, for --help. */
void cs_engine_print_options(FILE *f);

#endif
