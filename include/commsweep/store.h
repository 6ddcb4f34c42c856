/* The sweep store: one HDF5 file that is both the output data set and the cache.
 *
 *   /jobs     one row per job: cache key, the job's inputs as columns, and the /txlog slice
 *             reserved for it.  Written only in the structural step.
 *   /job_json one string per job, same index: the job's canonical JSON (deflated, written with
 *             /jobs).
 *   /results  one row per job, same index as /jobs: status, EngineResult columns, the slice of
 *             /txlog actually written, and two checksums (row, slice).
 *   /errors   one string per job, same index: the error message of a failed row, written in
 *             place with its row (before it) and covered by its checksum.
 *   /txlog    the transaction records of every job, each job's records contiguous; shuffled
 *             and deflated.  Written only in structural steps.
 *   /steplog  per-step summaries of the records (backfill.h), one per job and algorithm step,
 *             each job's contiguous; shuffled, deflated and written as /txlog is.
 *
 * Crash safety rests on one invariant: the file's structure (datasets, extents, chunk index,
 * attributes) changes only in a structural step, which one process performs on a staged copy
 * (CS_STORE_STAGE) that replaces the file by one rename once complete.  While jobs run, every
 * rank writes raw bytes of its own result rows with independent MPI-IO and appends each row
 * with its records to its own log spool, and nothing else, so killing any rank at any time
 * cannot damage the structure: unfinished rows stay `pending` (the fill value), a torn row
 * fails its checksum, and the spooled logs reach /txlog in the structural step that ends the
 * sweep (or begins the next one).  A row is spooled first, written to the file last.
 *
 * The row structs below are the in-memory rows; the bytes before their last member (job_json,
 * error) are the on-disk rows of /jobs and /results (the HDF5 compound types map them field for
 * field, so no conversion runs), and that last member is the row of /job_json or /errors.  The
 * wide text lives in datasets of its own so that reading the tables (show, the cache lookup)
 * moves neither.  Build rows on zeroed memory: the checksum covers every byte of the row except
 * `checksum` and `wall_time_s` (and `error` unless the row failed).
 *
 * The module reads one way, each layer calling only those below it: the format (schema.c,
 * h5util.c, checksum.c, rows.c, code.c, planez.c: store_format.h); the file and its handle
 * (file.c: open, read, write rows; verify.c: store_file.h); the write path of a row and the log
 * spool (spool.c: store_spool.h); the structural steps and the merge of the spools (structure.c,
 * merge.c).  The writer lock (lock.c) stands apart.
 */
#ifndef COMMSWEEP_STORE_H
#define COMMSWEEP_STORE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsweep/backfill.h"
#include "commsweep/engine.h"
#include "commsweep/err.h"
#include "commsweep/model.h"

#define CS_STORE_SCHEMA_VERSION 6
/* The oldest version read (show, export, repair's source): version 5 has no /jobs.network
 * (it reads as empty); `commsweep repair` converts such a file. */
#define CS_STORE_SCHEMA_VERSION_READ 5
#define CS_STORE_KEY_LEN 64     /* hex digits, no NUL in the file (NULLPAD string) */
#define CS_STORE_JSON_LEN 4096  /* canonical job JSON column; longer text is cut with "..." */
#define CS_STORE_ERROR_LEN 1024 /* error message column */
#define CS_STORE_PARTS_LEN 256  /* participants column, "0,1,2,3"; longer lists cut with "..." */
#define CS_STORE_NETWORK_LEN 64 /* network column (cs_engine_network); longer names cut with "..." */

/* What a row's /txlog slice holds (the row's txlog_detail column), from least to most. */
typedef enum cs_store_detail {
  CS_STORE_LOG_NONE = 0,  /* no log: results only */
  CS_STORE_LOG_STEPS = 1, /* the per-step summaries (/steplog) */
  CS_STORE_LOG_FULL = 2,  /* every transaction record, and the per-step summaries */
} cs_store_detail;

typedef enum cs_store_status {
  CS_STORE_PENDING = 0, /* fill value: reserved, not finished */
  CS_STORE_DONE = 1,
  CS_STORE_FAILED = 2
} cs_store_status;

/* /jobs: what was asked.  Fixed at the structural step.  X(ctype, name, dim, kind, unit, flags,
 * doc), as the model's tables (columns.h); ordered so the struct has no implicit padding.  The
 * adapter's columns come from its table (model.h: CS_ADAPTER_JOB_COLUMNS, by the group named in
 * its rows) and are copied from the job by that table (cs_store_job_from).  dcin_layout and
 * topology are the CrossRing chip's (model.h says why every adapter carries them); `network` is
 * the engine-neutral name of what a job runs on. */
#define CS_STORE_JOB_COLUMNS(X)                                                                   \
  X(uint64_t, msg_size_bytes, , U64, "B", 0, "message size M")                                    \
  X(uint64_t, expected_transactions, , U64, NULL, 0,                                              \
    "transactions of the job (from L1 expansion; 0 when it could not be loaded)")                 \
  X(uint64_t, txlog_reserved_offset, , U64, "record", 0, "first /txlog record reserved for the job") \
  X(uint64_t, txlog_reserved_count, , U64, "record", 0,                                           \
    "records reserved (0 when the sweep keeps no records: --txlog steps or none)")                \
  X(uint64_t, steplog_reserved_offset, , U64, "summary", 0,                                       \
    "first /steplog summary reserved for the job")                                                \
  X(uint64_t, steplog_reserved_count, , U64, "summary", 0,                                        \
    "summaries reserved (num_steps; 0 when the sweep keeps no log)")                              \
  CS_ADAPTER_JOB_COLUMNS(X, CLOCKS)                                                               \
  X(int32_t, num_participants, , I32, NULL, 0, "participant count N")                             \
  CS_ADAPTER_JOB_COLUMNS(X, DIES)                                                                 \
  X(int32_t, num_steps, , I32, NULL, 0, "algorithm steps (from L1 expansion)")                    \
  CS_ADAPTER_JOB_COLUMNS(X, LIMITS)                                                               \
  X(char, key, [CS_STORE_KEY_LEN], KEY, NULL, 0,                                                  \
    "cache key: SHA-256 (hex) of the job's canonical inputs, adapter and model versions")         \
  X(char, sweep, [32], STR, NULL, 0, "name of the sweep that added this row")                     \
  X(char, primitive, [16], STR, NULL, 0, "allreduce | allgather | reducescatter | alltoall | p2p") \
  X(char, algorithm, [16], STR, NULL, 0, "the spec's algorithm")                                  \
  X(char, dtype, [16], STR, NULL, 0, "element type (metadata only)")                              \
  X(char, p2p_op, [8], STR, NULL, 0, "read | write for p2p, empty otherwise")                     \
  CS_ADAPTER_JOB_COLUMNS(X, CHIP)                                                                 \
  X(char, network, [CS_STORE_NETWORK_LEN], STR, NULL, 0,                                          \
    "the network the job runs on, named by its engine: a dcin/math layout and die topology, "     \
    "2die_spread (5x4); a vcnet topology, routing and fault set, torus:4x4 (dor_dateline)")       \
  X(char, engine, [16], STR, NULL, 0, "engine (cs_engine_names)")                                 \
  X(char, participants, [CS_STORE_PARTS_LEN], STR, NULL, 0, "logical GDMA ids, comma separated")

typedef struct cs_store_job_row {
  CS_STORE_JOB_COLUMNS(CS_COL_MEMBER)
  char job_json[CS_STORE_JSON_LEN]; /* the row of /job_json, not a /jobs column */
  char pad_[4]; /* explicit, always zero */
} cs_store_job_row;

/* /results: what came out: the EngineResult (model.h's table, plus the engines' extra columns)
 * with the row's status, error and log slice. */
typedef struct cs_store_result_row {
  uint64_t checksum;       /* cs_store_row_checksum; 0 while pending */
  uint64_t txlog_checksum; /* XXH64 of the row's /txlog slice (seed: row); 0 when empty */
  uint64_t txlog_offset, txlog_count; /* records written; count 0 in results-only mode */
  uint64_t steplog_checksum;           /* XXH64 of the row's /steplog slice (seed: row) */
  uint64_t steplog_offset, steplog_count; /* per-step summaries written (num_steps or 0) */
  cs_result result;
  int8_t status;                  /* cs_store_status */
  uint8_t txlog_detail;           /* cs_store_detail: what the row's slice holds */
  char pad_[6];                   /* explicit, always zero */
  char error[CS_STORE_ERROR_LEN]; /* the row of /errors, not a /results column; empty unless
                                   * failed (reads as empty then) */
} cs_store_result_row;

/* /txlog: one transaction record (model.h, with the engines' extra columns) plus its job's row
 * index. */
typedef struct cs_store_txn_row {
  uint64_t job;
  cs_txn_record rec;
} cs_store_txn_row;

/* /steplog: one per-step summary (backfill.h) plus its job's row index. */
typedef struct cs_store_step_row {
  uint64_t job;
  cs_step_summary sum;
} cs_store_step_row;

/* The columns of each dataset, in file order (NULL-name terminated, into out[cap]); the HDF5
 * compound types, their attributes, docs/hdf5-schema.md and `show --csv` follow them.  /results
 * and /txlog name the extra columns of the engines in `engines` (a file's: cs_store_engines;
 * every engine's: CS_ENGINE_SET_ALL); an engine's slots not named stay in the rows, unnamed. */
size_t cs_store_job_columns(cs_col *out, size_t cap);
size_t cs_store_result_columns(cs_engine_set engines, cs_col *out, size_t cap);
size_t cs_store_txn_columns(cs_engine_set engines, cs_col *out, size_t cap);
size_t cs_store_step_columns(cs_col *out, size_t cap);
#define CS_STORE_MAX_COLUMNS 96
/* The string datasets /job_json and /errors as one-column lists (the member of the job or
 * result row that holds each). */
size_t cs_store_job_json_columns(cs_col *out, size_t cap);
size_t cs_store_error_columns(cs_col *out, size_t cap);

typedef struct cs_store cs_store;

typedef enum cs_store_mode {
  CS_STORE_READ,  /* serial, read-only: show, export, dry runs */
  CS_STORE_WRITE, /* serial, read-write in place (created when absent, not atomically) */
  CS_STORE_STAGE, /* the structural step: a private copy of the file (a new file when absent
                   * or empty) under "<path>.staged"; cs_store_commit renames it over the
                   * file, cs_store_close discards it */
  CS_STORE_REBUILD, /* as CS_STORE_STAGE, but an empty layout (to rebuild an existing file into:
                     * commsweep repair) */
} cs_store_mode;

/* ---- opening ------------------------------------------------------------------------------ */

/* Starts HDF5 without its exit handlers (every store is closed explicitly).  Call it before
 * MPI_Init: HDF5 started after MPI hooks its shutdown to MPI_Finalize, and after a close that
 * failed (a full disk at its last write) HDF5 1.10 crashes there on the dangling file. */
void cs_store_library_init(void);

/* Serial open.  A file that exists but is not a commsweep store (or has another schema version,
 * or columns that differ from it) is CS_EINVAL naming what is wrong; so is a path that is not a
 * regular file.  A 0-byte file counts as absent for CS_STORE_STAGE. */
int cs_store_open(const char *path, cs_store_mode mode, cs_store **out, cs_err *err);
/* As cs_store_open; a file it lays out (a new one, CS_STORE_REBUILD) names the extra columns
 * of `engines` and of the engines in every file (cs_engine_set_in_every_file).  cs_store_open
 * lays out files for the engines in every file alone. */
int cs_store_open_for(const char *path, cs_store_mode mode, cs_engine_set engines,
                      cs_store **out, cs_err *err);
/* The engines whose extra columns the file names in /results and /txlog (an engine without
 * extra columns is always in the set). */
cs_engine_set cs_store_engines(const cs_store *st);
/* The file's schema version: CS_STORE_SCHEMA_VERSION, or an older one a CS_STORE_READ store
 * reads (CS_STORE_SCHEMA_VERSION_READ and up); the other modes open the current one only. */
int cs_store_schema_version(const cs_store *st);
/* Ends a CS_STORE_STAGE store: flush, close, fsync, rename over the file, fsync the directory.
 * On failure the staged copy is removed and the file is as it was.  Frees st either way; on
 * any other store it is cs_store_close. */
int cs_store_commit(cs_store *st, cs_err *err);
/* Parallel open for the work phase, collective over comm.  Only row writes are allowed. */
int cs_store_open_mpi(const char *path, MPI_Comm comm, cs_store **out, cs_err *err);
/* Flushes and closes (collective for a parallel store).  Accepts NULL. */
int cs_store_close(cs_store *st, cs_err *err);

uint64_t cs_store_num_rows(const cs_store *st);
uint64_t cs_store_txlog_len(const cs_store *st);
uint64_t cs_store_steplog_len(const cs_store *st);

/* ---- reading ------------------------------------------------------------------------------ */

/* Whole rows: /jobs with /job_json; /results with the /errors text of its failed rows (the
 * error of any other row reads as empty). */
int cs_store_read_jobs(cs_store *st, uint64_t first, uint64_t n, cs_store_job_row *out,
                       cs_err *err);
int cs_store_read_results(cs_store *st, uint64_t first, uint64_t n, cs_store_result_row *out,
                          cs_err *err);
int cs_store_read_txlog(cs_store *st, uint64_t offset, uint64_t n, cs_store_txn_row *out,
                        cs_err *err);
int cs_store_read_steplog(cs_store *st, uint64_t offset, uint64_t n, cs_store_step_row *out,
                          cs_err *err);

/* Only the /job_json rows, into out[].job_json (the rest of out is left untouched). */
int cs_store_read_job_json(cs_store *st, uint64_t first, uint64_t n, cs_store_job_row *out,
                           cs_err *err);

/* Rows of /jobs (jobs = true, into cs_store_job_row) or /results (into cs_store_result_row)
 * without the text of /job_json or /errors when skip (NULL-terminated) names "job_json" or
 * "error": those members of out are then left untouched, and only the table is read (a
 * fraction of the bytes). */
int cs_store_read_rows_without(cs_store *st, bool jobs, const char *const *skip, uint64_t first,
                               uint64_t n, void *out, cs_err *err);

/* The columns the cache lookup needs from /jobs. */
typedef struct cs_store_index_row {
  char key[CS_STORE_KEY_LEN];
  uint64_t txlog_reserved_offset, txlog_reserved_count;
  uint64_t steplog_reserved_offset, steplog_reserved_count;
} cs_store_index_row;
int cs_store_read_index(cs_store *st, uint64_t first, uint64_t n, cs_store_index_row *out,
                        cs_err *err);

/* Verifies the given rows: ok[i] = 1 when rows[i] is done or failed, its slices lie inside
 * /txlog and /steplog and its checksum holds (res and index are indexed by row).  with_log also
 * hashes each slice against txlog_checksum and steplog_checksum, reading /txlog and /steplog in
 * large sequential blocks; without it only the rows are read (a slice is always written before
 * its row, so a torn write never leaves a valid row; with_log catches later damage to the log
 * itself). */
int cs_store_verify_rows(cs_store *st, const uint64_t *rows, size_t n,
                         const cs_store_index_row *index, const cs_store_result_row *res,
                         bool with_log, uint8_t *ok, cs_err *err);

/* ---- the structural step (CS_STORE_WRITE only) --------------------------------------------- */

/* Extends /jobs and /results to `rows` and /txlog to `txlog_len` (never shrinks).  New result
 * rows read as pending. */
int cs_store_grow(cs_store *st, uint64_t rows, uint64_t txlog_len, cs_err *err);
/* Extends /steplog to `len` summaries (never shrinks). */
int cs_store_grow_steplog(cs_store *st, uint64_t len, cs_err *err);
/* Writes n consecutive /jobs rows starting at `first`, with their /job_json rows. */
int cs_store_write_jobs(cs_store *st, uint64_t first, uint64_t n, const cs_store_job_row *rows,
                        cs_err *err);
/* The same without /job_json (rows[].job_json is ignored; the stored JSON stays). */
int cs_store_write_jobs_without_json(cs_store *st, uint64_t first, uint64_t n,
                                     const cs_store_job_row *rows, cs_err *err);
/* Resets a result row to pending (all zero, its /errors row too). */
int cs_store_clear_result(cs_store *st, uint64_t row, cs_err *err);
/* Records the sweep on the file: attributes last_sweep, last_sweep_utc, sweeps (count). */
int cs_store_note_sweep(cs_store *st, const char *sweep_name, cs_err *err);
/* H5Fflush(GLOBAL). */
int cs_store_flush(cs_store *st, cs_err *err);

/* ---- rows (any writable store; independent I/O when parallel) ------------------------------- */

/* Writes txns (n records, may be 0) at res->txlog_offset, then the result row with txlog_count
 * and both checksums filled in.  `key` is the row's /jobs key.  A parallel store writes no
 * records: after cs_store_spool_log it spools row and records, then writes the row without its
 * log (res is left as written); without a spool, n must be 0. */
int cs_store_put_result(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                        cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                        cs_err *err);
/* As cs_store_put_result, with the row's per-step summaries too (nsteps, may be 0) at
 * res->steplog_offset: steplog_count and steplog_checksum are filled in, spooled and merged as
 * the records are. */
int cs_store_put_result_steps(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                              cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                              const cs_store_step_row *steps, uint64_t nsteps, cs_err *err);

/* A row's transaction records written while its job runs, instead of handed over whole: begin
 * with the row's reserved slice, append every record in request-id order, then
 * cs_store_put_result_log writes the row (and frees the log); cs_store_log_abort drops what was
 * written.  A parallel store's log goes to its spool as cs_store_put_result's would, made as the
 * records come: the records before the slice's first whole /txlog chunk, each whole chunk
 * (shuffled and deflated as /txlog stores it) as soon as it is complete, then the rest, so the
 * log holds one chunk of records at most (all of them when /txlog's layout takes no whole
 * chunks: cs_store_txlog_direct).  A serial store writes them into /txlog as they come. */
typedef struct cs_store_log cs_store_log;
int cs_store_log_begin(cs_store *st, uint64_t row, uint64_t offset, uint64_t count,
                       cs_store_log **out, cs_err *err);
int cs_store_log_append(cs_store_log *lg, const cs_txn_record *recs, uint64_t n, cs_err *err);
/* The job runs again from its start: what was appended is dropped. */
int cs_store_log_restart(cs_store_log *lg, cs_err *err);
/* As cs_store_put_result_steps, the records being those appended (every one of the slice's);
 * frees lg, whatever it returns. */
int cs_store_put_result_log(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                            cs_store_result_row *res, cs_store_log *lg,
                            const cs_store_step_row *steps, uint64_t nsteps, cs_err *err);
void cs_store_log_abort(cs_store_log *lg); /* accepts NULL */

/* Holds back up to cap result rows written by cs_store_put_result and writes them with one
 * H5Dwrite when cap are held, at cs_store_flush_rows and at close (0: write each at once).
 * Slices are still written at once, before their rows.  A process killed while rows are held
 * loses those rows (they stay pending and the next run redoes them). */
int cs_store_batch_rows(cs_store *st, size_t cap, cs_err *err);
/* Writes the held rows; *lost = how many could not be written (all of them, on an error). */
int cs_store_flush_rows(cs_store *st, uint64_t *lost, cs_err *err);

/* ---- the log spool (the work phase of a sweep) --------------------------------------------- */

/* /txlog is compressed (shuffle + deflate), and HDF5 1.10 writes filtered data only collectively
 * and changes the chunk index with every chunk written: no raw in-place write, so ranks do not
 * write it while jobs run.  After cs_store_spool_log, cs_store_put_result on a parallel store
 * appends the row with its records (compressed; the /txlog chunks its slice fills whole already
 * as /txlog stores them) to the rank's spool, "<path>.spool.<rank>", an append-only file, then
 * writes the row itself without its log (txlog_detail none, as a results-only row).
 * cs_store_spool_merge, in a structural step, writes the spooled slices and rows into the file.
 * A spool entry cut short by a kill fails its checksums and is dropped. */
int cs_store_spool_log(cs_store *st, int rank, cs_err *err);
/* True when spool files of `path` exist (a sweep wrote them and has not merged them yet). */
bool cs_store_spool_exists(const char *path);
/* Merges every spool of `path` into st (a writable serial store of that file, normally
 * CS_STORE_STAGE): each entry whose checksums hold, whose key is its row's /jobs key and whose
 * slice is its row's reserved slice, in /txlog order (one whose whole chunks were made for
 * another chunk length or pipeline is dropped).  *merged and *dropped count the entries. */
int cs_store_spool_merge(cs_store *st, const char *path, uint64_t *merged, uint64_t *dropped,
                         cs_err *err);
/* A spooled row that cs_store_spool_merge would write (cs_store_spool_peek): its row and what
 * the row would say once merged. */
typedef struct cs_store_spooled {
  uint64_t row;
  uint64_t txlog_count, steplog_count;
  int8_t status;        /* cs_store_status */
  uint8_t txlog_detail; /* cs_store_detail */
} cs_store_spooled;
/* Reads the spools of `path` as cs_store_spool_merge would merge them into st (a serial store of
 * that file, read-only is enough) and writes nothing: *out (n entries, malloc'ed; NULL when
 * none) lists the entries the merge would write, *dropped counts those it would drop. */
int cs_store_spool_peek(cs_store *st, const char *path, cs_store_spooled **out, size_t *n,
                        uint64_t *dropped, cs_err *err);
/* Removes the spool files of `path`. */
void cs_store_spool_remove(const char *path);

/* ---- checksums ---------------------------------------------------------------------------- */

/* XXH64 of a buffer. */
uint64_t cs_store_xxh64(const void *data, size_t len, uint64_t seed);
/* The slice hash stored in txlog_checksum (0 for an empty slice). */
uint64_t cs_store_txlog_checksum(uint64_t row, const cs_store_txn_row *txns, uint64_t n);
/* The slice hash stored in steplog_checksum (0 for an empty slice). */
uint64_t cs_store_steplog_checksum(uint64_t row, const cs_store_step_row *steps, uint64_t n);
/* The whole check of one finished row as `show --verify` and `export` make it: status done or
 * failed, slices inside the logs, row checksum with key, and both slices hashed. */
bool cs_store_row_verifies(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                           const cs_store_result_row *res);
/* The row checksum: binds the row index, the key and every result byte except checksum and
 * wall_time_s -- txlog_checksum included, so the row vouches for its slice too -- and the error
 * text of a failed row (that of any other row counts as empty). */
uint64_t cs_store_row_checksum(uint64_t row, const char key[CS_STORE_KEY_LEN],
                               const cs_store_result_row *res);

/* ---- conversions -------------------------------------------------------------------------- */

/* Fills the typed input columns of a zeroed job row from a loaded job. */
void cs_store_job_from(const cs_job *job, cs_store_job_row *row);
/* Copies text into a fixed column, zero-padded; a cut is marked with "..." at the end. */
void cs_store_set_text(char *dst, size_t cap, const char *src);
/* Reads a fixed column (possibly without NUL) into a NUL-terminated buffer of cap bytes. */
void cs_store_get_text(const char *src, size_t len, char *dst, size_t cap);
const char *cs_store_status_name(int status);

/* ---- the writer lock ---------------------------------------------------------------------- */

/* The lock file of a store: its canonical path (symlinks and relative paths resolved) plus
 * ".lock".  cap should be at least 2 * PATH_MAX. */
void cs_store_lock_path(const char *path, char *buf, size_t cap);
/* Takes the lock file (O_EXCL), holding "pid host start sweep", and the host-wide lock of the
 * file's device and inode (cs_store_lock_inode).  A lock left by a dead process on this host is
 * taken over; any other held lock is CS_EBUSY naming its holder.  break_lock removes an
 * existing lock first, unless its holder is a live process of this host (CS_EBUSY). */
int cs_store_lock(const char *path, const char *sweep_name, bool break_lock, cs_err *err);
/* True when the lock file of path cannot be created because its directory is read-only (a
 * read-only file system, or no write permission): a sweep that writes nothing needs no lock
 * file then (the host-wide lock of the file's inode keeps writers of this host out). */
bool cs_store_lock_cannot_write(const char *path);
/* Removes the locks of path that this process holds (never another's). */
void cs_store_unlock(const char *path);
/* The lock of the file's device and inode alone (a file replaced by a rename has a new inode:
 * unlock the old one before, lock the new one after).  CS_OK when the file does not exist. */
int cs_store_lock_inode(const char *path, const char *sweep_name, cs_err *err);
void cs_store_unlock_inode(const char *path);
/* Describes the current holder into buf ("" when unlocked); returns true when locked. */
bool cs_store_lock_holder(const char *path, char *buf, size_t cap);

#endif
