/* The data model every module shares: the CommPrimitiveSpec (seed tbl-cr-08), the adapter
 * configuration (tbl-cr-07), engine options, inject records (the input translation contract),
 * transaction records (the output translation contract) and the EngineResult (tbl-cr-09).
 *
 * All structs are plain values with fixed-size members: a job can be copied, hashed, sent over
 * MPI and written to HDF5 without owning any heap memory.
 */
#ifndef COMMSWEEP_MODEL_H
#define COMMSWEEP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsweep/columns.h"

/* The adapter specification version this implementation follows; part of every cache key so a
 * change of semantics invalidates old results. */
#define CS_ADAPTER_VERSION "1.0.0"

/* A spec lists up to CS_MAX_LISTED_PARTICIPANTS ids as given; a longer list (collectives only)
 * is kept as its sorted set, in runs of consecutive ids, at most CS_MAX_PARTICIPANT_RUNS of
 * them.  No other bound: a job's size is limited by the memory it needs (job.h). */
#define CS_MAX_LISTED_PARTICIPANTS 512
#define CS_MAX_PARTICIPANT_RUNS (CS_MAX_LISTED_PARTICIPANTS / 2)
#define CS_MAX_GRID_DIMS 3
#define CS_NAME_MAX 32
#define CS_PATH_MAX 256
#define CS_CHIP_SPEC_MAX 1024 /* canonical JSON of chip_spec_summary, NUL included */

/* ---- CommPrimitiveSpec (tbl-cr-08) --------------------------------------------------------- */

typedef enum cs_primitive {
  CS_PRIM_ALLREDUCE,
  CS_PRIM_ALLGATHER,
  CS_PRIM_REDUCESCATTER,
  CS_PRIM_ALLTOALL,
  CS_PRIM_P2P,
  CS_PRIM_COUNT
} cs_primitive;

typedef enum cs_algorithm {
  CS_ALGO_RING,     /* allreduce, allgather, reducescatter */
  CS_ALGO_PAIRWISE, /* alltoall */
  CS_ALGO_DIRECT,   /* p2p */
  CS_ALGO_DIMRING,      /* allreduce: ring allreduce along each grid dimension in turn */
  CS_ALGO_DIMRING_RSAG, /* allreduce: reduce-scatter along X, Y, Z, then all-gather Z, Y, X */
  CS_ALGO_COUNT
} cs_algorithm;

typedef enum cs_p2p_op { CS_P2P_NONE, CS_P2P_READ, CS_P2P_WRITE } cs_p2p_op;

typedef struct cs_spec {
  cs_primitive primitive;
  cs_algorithm algorithm;
  uint64_t msg_size_bytes;                    /* M, > 0 */
  int num_participants;                       /* N */
  int num_participant_runs;                   /* 0: participants[0..N) are the logical GDMA
                                                 ids as given (C5: distinct); > 0: the sorted
                                                 set, as (first id, count) pairs in
                                                 participants[0 .. 2 runs), ascending and
                                                 apart.  Read them with cs_spec_participant */
  int32_t participants[CS_MAX_LISTED_PARTICIPANTS];
  char dtype[16];                             /* metadata only: "fp32", "bf16", ... */
  cs_p2p_op p2p_op;                           /* p2p only: read or write; NONE otherwise */
  int32_t grid[CS_MAX_GRID_DIMS];             /* participant grid, dimension 0 first; 0 = absent.
                                                 The dimring algorithms need it (product = N) */
  char chip_spec_summary[CS_CHIP_SPEC_MAX];   /* canonical JSON (sorted keys) of the dict */
} cs_spec;

/* ---- adapter configuration (tbl-cr-07): every field required, no defaults ------------------ */

/* The adapter configuration, described once: X(name, type, dim, lo, hi, flags, job, unit, doc,
 * job_doc).  The struct, the strict loader and its messages, `run --help`, the cache key's
 * canonical JSON and bytes (in table order), and the /jobs columns that copy a field and their
 * copy come from this table; the constraints C1-C11 stay code (validate.c, the engines'
 * validate).  Adding a field is one row here plus its validation.
 *   type   the loader's (fields.h, cs_ftype without CS_F_): STRING (char[dim]), INT (int),
 *          DOUBLE, BOOL; the bounds lo, hi are inclusive, for the numbers
 *   flags  CS_FIELD_* (CS_FIELD_NO_KEY: left out of the cache key)
 *   job    where the field stands among the /jobs columns (store.h, CS_STORE_JOB_COLUMNS):
 *          NONE (not a column), CLOCKS, DIES, LIMITS or CHIP; as a column it keeps its name,
 *          has `unit` (NULL: none) and `job_doc` as its description, and is int32_t for INT
 *   doc    one line for --help and the missing-field message
 * mode, dcin_layout (and endpoint_id_scheme) name the CrossRing adapter's chip (C1-C3): seed
 * 004 makes every tbl-cr-07 field part of every adapter file, so they stand here for every
 * engine, and the engines that do not model that chip read only what they need of them. */
#define CS_ADAPTER_FIELDS(X) CS_ADAPTER_TABLE(CS_ADAPTER_ROW_, X, ~)
#define CS_ADAPTER_TABLE(R, X, G)                                                                  \
  R(X, G, mode, STRING, [16], 0, 0, 0, NONE, NULL, "simulation back-end mode; \"dcin\" (C1)",     \
    NULL)                                                                                         \
  R(X, G, topology, STRING, [CS_NAME_MAX], 0, 0, 0, CHIP, NULL,                                  \
    "die topology, a shipped die file (C2)", "die topology")                                      \
  R(X, G, num_dies, INT, , 1, 64, 0, DIES, NULL, "number of dies; equals the layout's (C2)",      \
    "number of dies")                                                                             \
  R(X, G, dcin_layout, STRING, [CS_NAME_MAX], 0, 0, 0, CHIP, NULL,                               \
    "multi-die layout, a shipped layout file (C2)", "multi-die layout")                           \
  R(X, G, endpoint_id_scheme, STRING, [CS_NAME_MAX], 0, 0, 0, NONE, NULL,                        \
    "logical id mapping; \"mvp\" (C3)", NULL)                                                     \
  R(X, G, num_initiators, INT, , 1, 1 << 20, 0, NONE, NULL,                                      \
    "logical GDMA count; the scheme's (C3)", NULL)                                                \
  R(X, G, num_targets, INT, , 1, 1 << 20, 0, NONE, NULL, "logical DDR count; the scheme's (C3)",  \
    NULL)                                                                                         \
  R(X, G, driver_cycle_frequency_ghz, DOUBLE, , 1e-6, 1e3, 0, CLOCKS, "GHz",                     \
    "external tick frequency, GHz (C7)", "driver tick frequency")                                 \
  R(X, G, ip_frequency_ghz, DOUBLE, , 1e-6, 1e3, 0, CLOCKS, "GHz", "IP clock domain, GHz (C7)",   \
    "IP clock")                                                                                   \
  R(X, G, noc_frequency_ghz, DOUBLE, , 1e-6, 1e3, 0, CLOCKS, "GHz",                              \
    "NoC clock domain, GHz (C7)", "NoC clock")                                                    \
  R(X, G, mst_rd_outstanding, INT, , 1, 1 << 16, 0, LIMITS, NULL,                                \
    "read trackers of a logical GDMA; even (C4)", "read trackers of a logical GDMA")              \
  R(X, G, mst_wr_outstanding, INT, , 1, 1 << 16, 0, LIMITS, NULL,                                \
    "write trackers of a logical GDMA; even (C4)", "write trackers of a logical GDMA")            \
  R(X, G, slv_rd_outstanding, INT, , 1, 1 << 16, 0, LIMITS, NULL,                                \
    "read trackers of a physical DDR channel", "read trackers of a physical DDR channel")         \
  R(X, G, slv_wr_outstanding, INT, , 1, 1 << 16, 0, LIMITS, NULL,                                \
    "write trackers of a physical DDR channel", "write trackers of a physical DDR channel")       \
  R(X, G, burst_length, INT, , 1, 256, 0, LIMITS, "flit", "flits per transaction",               \
    "flits per transaction")                                                                      \
  R(X, G, bw_bytes, INT, , 1, 1 << 16, 0, LIMITS, "B", "bytes per flit", "bytes per flit")        \
  R(X, G, enable_transaction_log, BOOL, , 0, 0, 0, NONE, NULL, "must be true (C8)", NULL)         \
  R(X, G, transaction_log_path, STRING, [CS_PATH_MAX], 0, 0, 0, NONE, NULL,                      \
    "JSON-lines log path; {key} expands to the cache key", NULL)

/* CS_ADAPTER_FIELDS hands X the row without the table's own first two arguments. */
#define CS_ADAPTER_ROW_(X, G, ...) X(__VA_ARGS__)
/* C types of the loader's types, in the struct and in a /jobs column. */
#define CS_ADAPTER_CTYPE_STRING char
#define CS_ADAPTER_CTYPE_INT int
#define CS_ADAPTER_CTYPE_DOUBLE double
#define CS_ADAPTER_CTYPE_BOOL bool
#define CS_ADAPTER_MEMBER_(name, type, dim, lo, hi, flags, job, unit, doc, job_doc) \
  CS_ADAPTER_CTYPE_##type name dim;

typedef struct cs_adapter_config {
  CS_ADAPTER_FIELDS(CS_ADAPTER_MEMBER_)
} cs_adapter_config;

/* The /jobs columns of the fields whose `job` is G, in table order, as X(ctype, name, dim, kind,
 * unit, flags, doc) rows (columns.h).  A row is kept when CS_ADAPTER_IN_<G>_<job> is defined:
 * it reads as two arguments, and the second, the emitter, is picked. */
#define CS_ADAPTER_JOB_COLUMNS(X, G) CS_ADAPTER_TABLE(CS_ADAPTER_JOB_ROW_, X, G)
#define CS_ADAPTER_JOB_ROW_(X, G, name, type, dim, lo, hi, flags, job, unit, doc, job_doc) \
  CS_ADAPTER_PICK_(CS_ADAPTER_IN_##G##_##job)                                             \
  (X, CS_ADAPTER_JOB_CTYPE_##type, name, dim, CS_ADAPTER_JOB_KIND_##type, unit, 0, job_doc)
/* All of them, group by group (for what does not depend on their place: the row copy). */
#define CS_ADAPTER_JOB_COLUMNS_ALL(X)                                                    \
  CS_ADAPTER_JOB_COLUMNS(X, CLOCKS) CS_ADAPTER_JOB_COLUMNS(X, DIES)                       \
  CS_ADAPTER_JOB_COLUMNS(X, LIMITS) CS_ADAPTER_JOB_COLUMNS(X, CHIP)
#define CS_ADAPTER_IN_CLOCKS_CLOCKS ~, CS_ADAPTER_EMIT_
#define CS_ADAPTER_IN_DIES_DIES ~, CS_ADAPTER_EMIT_
#define CS_ADAPTER_IN_LIMITS_LIMITS ~, CS_ADAPTER_EMIT_
#define CS_ADAPTER_IN_CHIP_CHIP ~, CS_ADAPTER_EMIT_
#define CS_ADAPTER_PICK_(...) CS_ADAPTER_SECOND_(__VA_ARGS__, CS_ADAPTER_SKIP_, ~)
#define CS_ADAPTER_SECOND_(a, b, ...) b
#define CS_ADAPTER_EMIT_(X, ...) X(__VA_ARGS__)
#define CS_ADAPTER_SKIP_(X, ...)
#define CS_ADAPTER_JOB_CTYPE_STRING char
#define CS_ADAPTER_JOB_CTYPE_INT int32_t
#define CS_ADAPTER_JOB_CTYPE_DOUBLE double
#define CS_ADAPTER_JOB_KIND_STRING STR
#define CS_ADAPTER_JOB_KIND_INT I32
#define CS_ADAPTER_JOB_KIND_DOUBLE F64

/* ---- engine selection and engine parameters ----------------------------------------------- */

/* An engine's own options live in `params`, laid out by the engine's options struct and
 * described by its option table (engine.h): the job stays a plain value of fixed size. */
#define CS_ENGINE_PARAMS_MAX 1024

typedef struct cs_engine_options {
  char name[16];                 /* a registered engine: cs_engine_names() */
  uint64_t deadlock_guard_ticks; /* consecutive driver ticks without a completion => error */
  uint64_t memory_limit_bytes;   /* the most a job may be estimated to hold (job.h), 0 for the
                                    default; not in the cache key: it decides whether a job
                                    runs, never what it yields */
  bool has_options;              /* false: the engine's documented defaults apply */
  union {
    double align_;
    uint64_t align64_;
    unsigned char bytes[CS_ENGINE_PARAMS_MAX];
  } params; /* read only by the engine named `name` */
} cs_engine_options;

/* One unit of work: what to run and on what. */
typedef struct cs_job {
  cs_spec spec;
  cs_adapter_config adapter;
  cs_engine_options engine;
} cs_job;

/* ---- input translation contract: inject records --------------------------------------------- */

typedef enum cs_packet_type { CS_PKT_REQ, CS_PKT_RSP, CS_PKT_DATA } cs_packet_type;

typedef struct cs_inject {
  uint64_t request_id;   /* unique within the job */
  int32_t src_id;        /* req: logical GDMA id; rsp: logical DDR id */
  int32_t dst_id;        /* req: logical DDR id; rsp: logical GDMA id */
  uint8_t is_read;       /* 1 read, 0 write */
  uint8_t packet_type;   /* cs_packet_type; C9 forbids DATA */
  uint16_t burst_length; /* flits carried by this transaction */
} cs_inject;

/* ---- output translation contract: one record per transaction ------------------------------ */

/* Extra per-transaction columns of the engines (cs_engine_ops.record_columns), each engine in
 * its own slots (the registry assigns them; engine.h says what an unfilled slot holds). */
#define CS_TXN_EXTRA_SLOTS 8

/* The transaction record, described once: X(ctype, name, dim, kind, unit, flags, doc).  The
 * struct, the /txlog columns, the JSON-lines log and every other output come from this table.
 * Ordered by size so the struct has no implicit padding (its bytes are checksummed).
 * Categories (seed): 1 driver ticks, 2 back-pressure counters, 3 physical metadata, 4 internal
 * cycles; docs/dcin-model.md defines every counter. */
#define CS_TXN_RECORD_COLUMNS(X)                                                                 \
  X(uint64_t, request_id, , U64, NULL, 0, "request id, unique within the job")                   \
  X(uint64_t, req_inject_tick, , U64, "tick", 0, "req injected")                                 \
  X(uint64_t, req_complete_tick, , U64, "tick", 0, "req phase completed")                        \
  X(uint64_t, rsp_inject_tick, , U64, "tick", 0, "rsp injected")                                 \
  X(uint64_t, rsp_complete_tick, , U64, "tick", 0, "rsp phase completed")                        \
  X(uint64_t, req_inject_cycle, , U64, "cycle", 0, "NoC cycle of req inject")                    \
  X(uint64_t, wdata_gen_cycle, , U64, "cycle", 0, "NoC cycle write data generated")              \
  X(uint64_t, req_complete_cycle, , U64, "cycle", 0, "NoC cycle req completed")                  \
  X(uint64_t, rsp_inject_cycle, , U64, "cycle", 0, "NoC cycle rsp injected")                     \
  X(uint64_t, wdata_complete_cycle, , U64, "cycle", 0, "NoC cycle write data completed")         \
  X(uint64_t, rsp_complete_cycle, , U64, "cycle", 0, "NoC cycle rsp completed")                  \
  X(uint32_t, step, , U32, NULL, 0, "algorithm step")                                             \
  X(int32_t, src, , I32, NULL, 0, "logical GDMA id (requester)")                                 \
  X(int32_t, dst, , I32, NULL, 0, "logical DDR id (target)")                                     \
  X(uint32_t, retry_count, , U32, NULL, CS_COL_COUNTER, "retries")                               \
  X(uint32_t, rn_rd_block, , U32, NULL, CS_COL_COUNTER, "RN read tracker blocks")                \
  X(uint32_t, rn_wr_block, , U32, NULL, CS_COL_COUNTER, "RN write tracker blocks")               \
  X(uint32_t, rn_rdb_block, , U32, NULL, CS_COL_COUNTER, "RN read data buffer blocks")           \
  X(uint32_t, rn_wdb_block, , U32, NULL, CS_COL_COUNTER, "RN write data buffer blocks")          \
  X(uint32_t, sn_ro_block, , U32, NULL, CS_COL_COUNTER, "SN read-only tracker blocks")           \
  X(uint32_t, sn_share_block, , U32, NULL, CS_COL_COUNTER, "SN shared tracker blocks")           \
  X(uint32_t, sn_wdb_block, , U32, NULL, CS_COL_COUNTER, "SN write data buffer blocks")          \
  X(uint32_t, d2d_ro_block, , U32, NULL, CS_COL_COUNTER, "D2D read-only tracker blocks")         \
  X(uint32_t, d2d_share_block, , U32, NULL, CS_COL_COUNTER, "D2D shared tracker blocks")         \
  X(uint32_t, d2d_wdb_block, , U32, NULL, CS_COL_COUNTER, "D2D write data buffer blocks")        \
  X(uint32_t, eject_retries, , U32, NULL, CS_COL_COUNTER,                                        \
    "failed eject attempts of the transaction's flits")                                          \
  X(int16_t, src_die, , I16, NULL, 0, "die of the source")                                       \
  X(int16_t, dst_die, , I16, NULL, 0, "die of the destination")                                  \
  X(int16_t, src_node, , I16, NULL, 0, "node of the source inside its die (row * cols + col)")   \
  X(int16_t, dst_node, , I16, NULL, 0, "node of the destination inside its die")                 \
  X(int16_t, src_channel, , I16, NULL, 0, "physical gdma channel (cs_scheme_channel)")           \
  X(int16_t, dst_channel, , I16, NULL, 0, "physical ddr channel")                                \
  X(int16_t, d2d_src_node, , I16, NULL, 0, "D2D link source node, -1 when die-local")            \
  X(int16_t, d2d_dst_node, , I16, NULL, 0, "D2D link destination node, -1 when die-local")       \
  X(uint16_t, burst_length, , U16, "flit", 0, "flits of the transaction")                        \
  X(uint8_t, is_read, , U8, NULL, CS_COL_BOOLEAN, "1 read, 0 write")

typedef struct cs_txn_record {
  int32_t engine_extra[CS_TXN_EXTRA_SLOTS]; /* engines' extra columns (engine.h) */
  CS_TXN_RECORD_COLUMNS(CS_COL_MEMBER)
  uint8_t pad_; /* explicit, always zero */
} cs_txn_record;

/* ---- EngineResult (tbl-cr-09) plus engine identity and trace_meta summaries ----------------- */

/* Extra result columns of the engines (cs_engine_ops.result_columns), each engine in its own
 * slots (the registry assigns them): no two engines share a column. */
#define CS_RESULT_EXTRA_SLOTS 16

/* X(ctype, name, dim, kind, unit, flags, doc), as above.  CS_COL_AGGREGATE marks the tbl-cr-09
 * aggregates; the rest are trace_meta summaries. */
#define CS_RESULT_COLUMNS(X)                                                                      \
  X(double, total_time_us, , F64, "us", CS_COL_AGGREGATE,                                         \
    "max rsp_complete_tick / f_driver (tbl-cr-09)")                                               \
  X(double, req_phase_us, , F64, "us", CS_COL_AGGREGATE,                                          \
    "sum of req_complete - req_inject over transactions")                                         \
  X(double, rsp_phase_us, , F64, "us", CS_COL_AGGREGATE,                                          \
    "sum of rsp_complete - rsp_inject over transactions")                                         \
  X(double, max_chip_latency_us, , F64, "us", CS_COL_AGGREGATE,                                   \
    "max over participants of their last rsp_complete")                                           \
  X(double, straggler_ratio, , F64, NULL, CS_COL_AGGREGATE, "max_i T_i / median_i T_i")           \
  X(double, bus_bw_gb_per_s, , F64, "GB/s", CS_COL_AGGREGATE,                                     \
    "total_comm_bytes / total_time (GB = 1e9 B)")                                                 \
  X(uint64_t, total_comm_bytes, , U64, "B", CS_COL_AGGREGATE,                                     \
    "bytes per participant (tbl-cr-06)")                                                          \
  X(uint64_t, sim_cycles, , U64, "cycle", 0, "internal cycles simulated (0 for closed-form engines)") \
  X(uint64_t, total_ticks, , U64, "tick", 0, "driver ticks at the end of the job")                \
  X(uint64_t, num_transactions, , U64, NULL, 0, "transactions simulated")                         \
  X(uint64_t, retries, , U64, NULL, 0, "sum of retry counts")                                     \
  X(uint64_t, block_rn, , U64, NULL, 0, "sum of RN block counters")                               \
  X(uint64_t, block_sn, , U64, NULL, 0, "sum of SN block counters")                               \
  X(uint64_t, block_d2d, , U64, NULL, 0, "sum of D2D block counters")                             \
  X(uint64_t, cross_die_transactions, , U64, NULL, 0, "transactions crossing a die boundary")     \
  X(uint64_t, cross_die_bytes, , U64, "B", 0, "bytes crossing a die boundary")                    \
  X(uint64_t, flit_hops, , U64, NULL, 0, "flit moves between ring slices or links")               \
  X(double, wall_time_s, , F64, "s", CS_COL_VOLATILE,                                             \
    "host time of the job (not deterministic, not in the checksum)")                              \
  X(uint32_t, algorithm_steps, , U32, NULL, CS_COL_AGGREGATE, "T_steps")                          \
  X(char, engine, [16], STR, NULL, 0, "engine that produced the result")

typedef struct cs_result {
  uint64_t engine_extra[CS_RESULT_EXTRA_SLOTS]; /* engines' extra columns (engine.h) */
  CS_RESULT_COLUMNS(CS_COL_MEMBER)
  char pad_[4]; /* explicit, always zero */
} cs_result;

/* The column tables of the two records (NULL-name terminated): the common columns;
 * cs_engine_record_columns and cs_engine_result_columns (engine.h) list the engines' extra ones. */
extern const cs_col cs_txn_record_cols[];
extern const cs_col cs_result_cols[];

/* Names used in files and messages; NULL for an out-of-range value. */
const char *cs_primitive_name(cs_primitive p);
const char *cs_algorithm_name(cs_algorithm a);
const char *cs_p2p_op_name(cs_p2p_op op);
/* Parse a name; returns 0 or CS_EINVAL (no message: the caller knows the field). */
int cs_primitive_parse(const char *name, cs_primitive *out);
int cs_algorithm_parse(const char *name, cs_algorithm *out);
/* True for the algorithms laid out on spec.grid (dimring, dimring_rsag). */
bool cs_algorithm_uses_grid(cs_algorithm a);

/* The participants in the order L1 expansion uses them, which is also the order the cache key
 * hashes: ascending ids for every collective (the ring and pairwise schedules are defined on the
 * sorted list, so two specs listing the same set are the same job), as given for p2p
 * ([source, destination]).  Writes num_participants ids into out. */
void cs_spec_participant_order(const cs_spec *spec, int32_t *out);
/* Participant i: as given for a listed spec, in ascending order for one kept in runs. */
int32_t cs_spec_participant(const cs_spec *spec, int i);
/* The largest participant id (-1 without participants). */
int32_t cs_spec_max_participant(const cs_spec *spec);
/* Sets the participants from n ids: listed when n <= CS_MAX_LISTED_PARTICIPANTS, else their
 * sorted set in runs.  Returns 0; or, for a long list, -1 with *a < *b the indices of two equal
 * ids (C5), or -2 when the set has more than CS_MAX_PARTICIPANT_RUNS runs (*a = the runs).
 * scratch holds n entries (a long list is sorted there); the spec is untouched on failure. */
int cs_spec_set_participants(cs_spec *spec, const int32_t *ids, int n, int64_t *scratch, int *a,
                             int *b);

#endif
