/* The store's second layer: the handle over the file (file.c) and what the layers above it (the
 * spool, the structural steps, the merge, verification) do with it: raw slab I/O, range checks,
 * and writing a finished row with its slices into the file.  Above store_format.h; below
 * store_spool.h.  Nothing here calls up into the spool: a spooling handle's spool fields are
 * data the spool fills (spool.c) and file.c only frees. */
#ifndef CS_STORE_FILE_H
#define CS_STORE_FILE_H

#include "store_format.h"

struct cs_store {
  hid_t file;
  hid_t jobs, results, txlog; /* jobs is H5I_INVALID_HID in a parallel store */
  hid_t job_json, errors;     /* the text of each row (job_json not open in a parallel store) */
  hid_t t_job, t_result, t_txn, t_json, t_error;
  hid_t steplog, t_step;      /* /steplog (serial stores only) and its type */
  uint64_t steplog_len;
  hid_t dxpl;                 /* independent MPI-IO in a parallel store, else H5P_DEFAULT */
  bool parallel, writable;
  int version;                /* the file's schema version (check_format) */
  cs_engine_set engines;      /* whose extra columns a layout made by this handle names */
  bool staged;                /* CS_STORE_STAGE: a private copy, renamed over final_path */
  uint64_t rows, txlog_len;
  char stage_path[4096], final_path[4096];
  /* the log spool of a parallel store (cs_store_spool_log): its file, -1 when not spooling */
  int spool_fd;
  cs_store_buf spool_plane, spool_z; /* an entry transposed, then compressed */
  /* a parallel store's /txlog layout when its chunks can be written as stored
   * (cs_store_txlog_direct): records per chunk, 0 when they cannot, and deflate level.  A
   * spooled job's whole chunks go into the spool as stored, made by spool_pz. */
  uint64_t txlog_chunk_len;
  unsigned txlog_level;
  cs_store_planez spool_pz;
  /* result rows held back for one write (cs_store_batch_rows); none when batch_cap is 0 */
  size_t batch_cap, batch_n;
  cs_store_result_row *batch;
  hsize_t *batch_at;
};

/* "<path>.staged" into buf; -1 when it does not fit. */
int cs_store_stage_path(const char *path, char *buf, size_t cap);

/* /txlog's layout when its chunks can be written as stored: chunks of *len records, the filters
 * shuffle then deflate at *level and nothing else, the file type the row struct's, zeros the
 * fill.  False otherwise. */
bool cs_store_txlog_direct(cs_store *st, hid_t txlog, uint64_t *len, unsigned *level);

/* Rows [first, first + n) of dset read into or written from buf (memory type `type`). */
herr_t cs_store_slab_io(cs_store *st, hid_t dset, hid_t type, uint64_t first, uint64_t n,
                        void *buf, bool write);
/* CS_EINVAL naming `what` when [first, first + n) is not inside [0, len). */
int cs_store_check_range(const char *what, uint64_t first, uint64_t n, uint64_t len, cs_err *err);

/* /jobs rows [first, first + n), with their /job_json rows when with_json. */
int cs_store_write_job_rows(cs_store *st, uint64_t first, uint64_t n, const cs_store_job_row *rows,
                            bool with_json, cs_err *err);
/* Result rows [first, first + n) with their /errors rows (those first), at once. */
int cs_store_write_result_rows(cs_store *st, uint64_t first, uint64_t n,
                               const cs_store_result_row *rows, cs_err *err);
/* A finished row into the file as res gives it (counts and checksums filled in by the caller):
 * its n records at res->txlog_offset (unless records_written: the caller has put them into
 * /txlog itself) and its nsteps summaries at res->steplog_offset, then the row, held back when
 * the store batches rows (cs_store_batch_rows).  A parallel store takes no log here (n and
 * nsteps 0: it spools them, spool.c). */
int cs_store_write_row(cs_store *st, uint64_t row, const cs_store_result_row *res,
                       const cs_store_txn_row *txns, uint64_t n, const cs_store_step_row *steps,
                       uint64_t nsteps, bool records_written, cs_err *err);

#endif
