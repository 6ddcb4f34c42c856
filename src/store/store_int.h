/* Internals of the store module shared by its files: the column tables that define the HDF5
 * compound types, the store handle, and the HDF5 error translation. */
#ifndef CS_STORE_INT_H
#define CS_STORE_INT_H

#include <hdf5.h>
#include <zlib.h>

#include "commsweep/store.h"

/* A compound type over `cols` with the struct's size; H5Tclose it. */
hid_t cs_store_type_create(const cs_col *cols, size_t struct_size);
/* The fixed-length NUL-terminated string type of a one-column string dataset. */
hid_t cs_store_text_type(size_t size);
/* Writes "<col>.unit" and "<col>.description" attributes, and "description" on the dataset. */
int cs_store_type_describe(hid_t dset, const cs_col *cols, const char *what, cs_err *err);
/* Scalar variable-length UTF-8 string / int attributes (replace when present). */
int cs_store_attr_text(hid_t obj, const char *name, const char *value, cs_err *err);
int cs_store_attr_int(hid_t obj, const char *name, long long value, cs_err *err);
/* Reads a string attribute of any string type into buf; CS_ENOTFOUND when absent. */
int cs_store_attr_read_text(hid_t obj, const char *name, char *buf, size_t cap, cs_err *err);
int cs_store_attr_read_int(hid_t obj, const char *name, long long *out, cs_err *err);

/* Spooling: appends the finished row (checksums filled in), its n records and its nsteps
 * per-step summaries to the spool. */
int cs_store_spool_put(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                       const cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                       const cs_store_step_row *steps, uint64_t nsteps, cs_err *err);

/* Sets err from the innermost HDF5 error on the stack, prefixed by the formatted context. */
int cs_store_h5_error(cs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Silences HDF5's automatic error printing (errors reach the user through cs_err). */
void cs_store_h5_quiet(void);

/* A scratch buffer grown as needed and kept: a sweep spools up to 100 MB of records per job,
 * and a fresh block of that size costs a page fault per 4 KiB on every job. */
typedef struct cs_store_buf {
  void *p;
  size_t cap;
} cs_store_buf;
/* False when len bytes cannot be had; b is unchanged then. */
bool cs_store_buf_grow(cs_store_buf *b, size_t len);

/* The spool's coding of n rows of `size` bytes (spool.c).  cs_store_shuffle puts byte k of row i
 * at out[k * n + i], as HDF5's shuffle filter does (back: the inverse).  cs_store_compress packs
 * n bytes as one LZ4 frame into z from byte `at` on, growing z: *len bytes; CS_OK or CS_ENOMEM.
 * cs_store_decompress: false unless the n bytes at src are one whole frame of exactly cap
 * bytes; *ctx is its decoder, made on first use and kept for the next frames until
 * cs_store_decompress_end. */
void cs_store_shuffle(const unsigned char *in, unsigned char *out, uint64_t n, size_t size,
                      bool back);
int cs_store_compress(const unsigned char *src, size_t n, cs_store_buf *z, size_t at,
                      size_t *len);
struct LZ4F_dctx_s;
bool cs_store_decompress(struct LZ4F_dctx_s **ctx, const unsigned char *src, size_t n,
                         unsigned char *dst, size_t cap);
void cs_store_decompress_end(struct LZ4F_dctx_s *ctx); /* accepts NULL */

/* A zlib stream of nplanes byte planes of plane_len bytes each, as HDF5's deflate filter stores a
 * shuffled chunk (planez.c): planes of few long runs of one byte value coded as runs, the others
 * by zlib at the level given to cs_store_planez_init.  cs_store_planez_pack returns its length,
 * 0 when it does not fit in cap (cs_store_planez_bound always fits) or zlib fails;
 * cs_store_planez_pack_rows first shuffles n rows of `size` bytes (cs_store_shuffle) into the
 * compressor's own buffer, which makes a chunk as HDF5's shuffle and deflate filters store it:
 * its length in *len; CS_OK, CS_ENOMEM, or CS_EINTERNAL as when cs_store_planez_pack gives 0. */
typedef struct cs_store_planez {
  z_stream z;
  int level;
  bool ready;
  unsigned char *runs; /* per plane: coded as runs */
  size_t runs_cap;
  cs_store_buf plane; /* the rows shuffled */
} cs_store_planez;
int cs_store_planez_init(cs_store_planez *pz, int level); /* CS_OK or CS_ENOMEM */
void cs_store_planez_end(cs_store_planez *pz);             /* accepts a zeroed one */
size_t cs_store_planez_bound(size_t nplanes, size_t plane_len);
size_t cs_store_planez_pack(cs_store_planez *pz, const unsigned char *planes, size_t nplanes,
                            size_t plane_len, unsigned char *out, size_t cap);
int cs_store_planez_pack_rows(cs_store_planez *pz, const void *rows, uint64_t n, size_t size,
                              unsigned char *out, size_t cap, size_t *len);

/* /txlog's layout when its chunks can be written as stored (spool.c): chunks of *len records,
 * the filters shuffle then deflate at *level and nothing else, the file type the row struct's,
 * zeros the fill.  False otherwise. */
bool cs_store_txlog_direct(cs_store *st, hid_t txlog, uint64_t *len, unsigned *level);

/* cs_store_put_result_steps for the merge (flags CS_PUT_*): CS_PUT_RECORDS_WRITTEN, the caller
 * has written the records into /txlog itself; CS_PUT_SUMS_GIVEN, res carries counts and
 * checksums the caller has verified (txns may then be NULL). */
enum { CS_PUT_RECORDS_WRITTEN = 1, CS_PUT_SUMS_GIVEN = 2,
       CS_PUT_SPOOLED = 4 /* the row's spool entry is written (cs_store_log) */ };
int cs_store_put_row(cs_store *st, uint64_t row, const char key[CS_STORE_KEY_LEN],
                     cs_store_result_row *res, const cs_store_txn_row *txns, uint64_t n,
                     const cs_store_step_row *steps, uint64_t nsteps, unsigned flags,
                     cs_err *err);
/* Rows [first, first + n) of dset read into or written from buf (memory type `type`). */
herr_t cs_store_slab_io(cs_store *st, hid_t dset, hid_t type, uint64_t first, uint64_t n,
                        void *buf, bool write);

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

#endif
