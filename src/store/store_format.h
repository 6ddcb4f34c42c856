/* The bottom layer of the store, below the handle: the HDF5 types and attributes the column
 * lists make (schema.c, h5util.c), the row checksums' incremental XXH64 (checksum.c), and the
 * coding of rows for the spool and for /txlog's whole chunks (code.c, planez.c).  Nothing here
 * knows a cs_store handle; the layers above (store_file.h, store_spool.h) include this one. */
#ifndef CS_STORE_FORMAT_H
#define CS_STORE_FORMAT_H

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
/* The current UTC time, "2026-01-31T12:00:00Z", as a text attribute. */
int cs_store_attr_utc_now(hid_t obj, const char *name, cs_err *err);

/* Sets err from the innermost HDF5 error on the stack, prefixed by the formatted context. */
int cs_store_h5_error(cs_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Silences HDF5's automatic error printing (errors reach the user through cs_err). */
void cs_store_h5_quiet(void);

/* XXH64 over bytes that come in pieces (cs_store_xxh64 over the whole): begin, update with each
 * piece in order, end. */
typedef struct cs_store_xxh64_state {
  uint64_t v[4], seed, len;
  unsigned char buf[32]; /* the bytes of a stripe not yet complete */
  size_t fill;
} cs_store_xxh64_state;
void cs_store_xxh64_begin(cs_store_xxh64_state *x, uint64_t seed);
void cs_store_xxh64_update(cs_store_xxh64_state *x, const void *data, size_t len);
uint64_t cs_store_xxh64_end(const cs_store_xxh64_state *x);

/* A scratch buffer grown as needed and kept: a sweep spools up to 100 MB of records per job,
 * and a fresh block of that size costs a page fault per 4 KiB on every job. */
typedef struct cs_store_buf {
  void *p;
  size_t cap;
} cs_store_buf;
/* False when len bytes cannot be had; b is unchanged then. */
bool cs_store_buf_grow(cs_store_buf *b, size_t len);

/* The spool's coding of n rows of `size` bytes (code.c).  cs_store_shuffle puts byte k of row i
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
  unsigned char *as_runs; /* per plane: coded as runs */
  uint32_t *first_run;    /* per plane: its first entry in runs */
  size_t planes_cap;
  struct cs_store_run *runs; /* the runs of the planes coded as runs, plane after plane */
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

#endif
