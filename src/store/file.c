/* The store file and its handle: opening (a new layout, a staged copy, the checks of an existing
 * file), reading rows and logs, and writing rows with their slices, held back in batches or not.
 *
 * Invariant (store.h): structure changes (create, extend, /jobs rows, attributes, /txlog
 * chunks) happen only through a serial writable handle and end with a flush; a parallel handle
 * opens /results only, fully allocated (H5D_ALLOC_TIME_EARLY), and writes raw rows
 * independently (its log goes to the spool, one layer up: spool.c).
 */
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stddef.h>

#include "commsweep/model.h"
#include "commsweep/engine.h"
#include "store_file.h"

/* The tables hold only narrow columns, so that a filter over every row (show, the cache lookup)
 * reads few bytes; the wide text of each row is in /job_json and /errors.  Chunks of a few
 * hundred KiB: few chunks to visit at a million rows, each inflated (or read) whole. */
#define JOBS_CHUNK 512     /* rows of 660 B; deflated, written only in structural steps */
#define JOB_JSON_CHUNK 64  /* strings of 4 KiB; deflated, written with /jobs */
#define RESULTS_CHUNK 1024 /* rows of 336 B */
#define ERRORS_CHUNK 256   /* strings of 1 KiB, written in place like /results */
#define JOB_ROW_BYTES offsetof(cs_store_job_row, job_json)
#define RESULT_ROW_BYTES offsetof(cs_store_result_row, error)
#define IO_BLOCK 4096 /* rows moved between the row structs and the file rows at a time */
/* records; 1.4 MiB before compression.  /txlog is shuffled and deflated: the high bytes of
 * every integer column are mostly zero and its values repeat, so a record takes ~3 B of its
 * 176 (docs/hdf5-schema.md, "Size").  Larger chunks compress a little better but make every
 * read of one job's slice inflate more. */
#define TXLOG_CHUNK 8192
#define TXLOG_DEFLATE 4
/* The chunk cache of /txlog: slices are written through it (partial chunks), so it holds
 * enough chunks that each is compressed once, when complete or evicted. */
#define TXLOG_CACHE_BYTES (64u << 20)
/* summaries; 0.6 MiB before compression, stored as /txlog is */
#define STEPLOG_CHUNK 4096

/* The row types name every engine's extra columns; check_columns narrows them to a file's own,
 * create_layout to the engines it lays the file out for. */
static cs_store *store_new(cs_engine_set engines) {
  cs_store *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->file = st->jobs = st->results = st->txlog = st->steplog = H5I_INVALID_HID;
  st->job_json = st->errors = H5I_INVALID_HID;
  st->spool_fd = -1;
  st->engines = engines;
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
  st->t_job = cs_store_type_create(cols, JOB_ROW_BYTES);
  cs_store_result_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  st->t_result = cs_store_type_create(cols, RESULT_ROW_BYTES);
  st->t_json = cs_store_text_type(CS_STORE_JSON_LEN);
  st->t_error = cs_store_text_type(CS_STORE_ERROR_LEN);
  cs_store_txn_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  st->t_txn = cs_store_type_create(cols, sizeof(cs_store_txn_row));
  cs_store_step_columns(cols, CS_STORE_MAX_COLUMNS);
  st->t_step = cs_store_type_create(cols, sizeof(cs_store_step_row));
  st->dxpl = H5P_DEFAULT;
  return st;
}

static void store_free(cs_store *st) {
  free(st->batch);
  free(st->batch_at);
  hid_t dsets[] = {st->jobs, st->results, st->txlog, st->steplog, st->job_json, st->errors};
  for (int i = 0; i < 6; i++)
    if (dsets[i] >= 0) H5Dclose(dsets[i]);
  hid_t types[] = {st->t_job, st->t_result, st->t_txn, st->t_step, st->t_json, st->t_error};
  for (int i = 0; i < 6; i++)
    if (types[i] >= 0) H5Tclose(types[i]);
  if (st->dxpl != H5P_DEFAULT) H5Pclose(st->dxpl);
  if (st->file >= 0) H5Fclose(st->file);
  if (st->spool_fd >= 0) close(st->spool_fd);
  free(st->spool_plane.p);
  free(st->spool_z.p);
  cs_store_planez_end(&st->spool_pz);
  free(st);
}

static uint64_t extent_of(hid_t dset) {
  hsize_t dim = 0;
  hid_t s = H5Dget_space(dset);
  H5Sget_simple_extent_dims(s, &dim, NULL);
  H5Sclose(s);
  return (uint64_t)dim;
}

/* The access properties of /txlog: a chunk cache of TXLOG_CACHE_BYTES. */
static hid_t txlog_access(void) {
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 1021, TXLOG_CACHE_BYTES, 1.0);
  return dapl;
}

/* Whether the fill value of dcpl (of type `type`, the row struct's) is all zero bytes. */
static bool fill_is_zero(hid_t dcpl, hid_t type) {
  static const cs_store_txn_row zero;
  cs_store_txn_row fill;
  H5D_fill_value_t defined;
  return H5Pfill_value_defined(dcpl, &defined) >= 0 && defined == H5D_FILL_VALUE_USER_DEFINED &&
         H5Pget_fill_value(dcpl, type, &fill) >= 0 && !memcmp(&fill, &zero, sizeof fill);
}

bool cs_store_txlog_direct(cs_store *st, hid_t txlog, uint64_t *len, unsigned *level) {
  hid_t dcpl = H5Dget_create_plist(txlog), ftype = H5Dget_type(txlog);
  hsize_t dim = 0;
  unsigned flags, cd[8];
  size_t ncd = 8;
  bool direct = dcpl >= 0 && ftype >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
                H5Pget_chunk(dcpl, 1, &dim) == 1 && dim > 0 && H5Pget_nfilters(dcpl) == 2 &&
                H5Pget_filter2(dcpl, 0, &flags, &(size_t){0}, NULL, 0, NULL, NULL) ==
                    H5Z_FILTER_SHUFFLE &&
                H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE &&
                ncd == 1 && cd[0] <= 9 && H5Tequal(ftype, st->t_txn) > 0 &&
                H5Tget_size(ftype) == sizeof(cs_store_txn_row) && fill_is_zero(dcpl, st->t_txn);
  *len = direct ? dim : 0;
  *level = direct ? cd[0] : 0;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (ftype >= 0) H5Tclose(ftype);
  return direct;
}

/* A 1-D unlimited chunked dataset of `type`, compressed at level `deflate` (0: not) after the
 * shuffle filter when `shuffle`. */
static hid_t create_table(hid_t file, const char *name, hid_t type, hsize_t chunk, int deflate,
                          bool shuffle, bool early, const void *fill) {
  hsize_t dim = 0, maxdim = H5S_UNLIMITED;
  hid_t space = H5Screate_simple(1, &dim, &maxdim);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  if (shuffle) H5Pset_shuffle(dcpl);
  if (deflate) H5Pset_deflate(dcpl, (unsigned)deflate);
  if (early) H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  if (fill) H5Pset_fill_value(dcpl, type, fill);
  else H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  hid_t dapl = shuffle ? txlog_access() : H5P_DEFAULT;
  hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, dapl);
  if (dapl != H5P_DEFAULT) H5Pclose(dapl);
  H5Pclose(dcpl);
  H5Sclose(space);
  return d;
}

/* /steplog: per-step summaries, stored and written as /txlog is (shuffled, deflated, chunks
 * allocated when written, serial handles only). */
static int create_steplog(cs_store *st, cs_err *err) {
  static const cs_store_step_row empty_step;
  st->steplog = create_table(st->file, "steplog", st->t_step, STEPLOG_CHUNK, TXLOG_DEFLATE, true,
                             false, &empty_step);
  if (st->steplog < 0) return cs_store_h5_error(err, CS_EIO, "creating /steplog");
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_step_columns(cols, CS_STORE_MAX_COLUMNS);
  return cs_store_type_describe(st->steplog, cols,
                                "per-step summaries of the transaction records; job j owns rows "
                                "[steplog_offset, steplog_offset + steplog_count) of /results "
                                "row j, one per algorithm step",
                                err);
}

static int create_layout(cs_store *st, cs_err *err) {
  static const cs_store_result_row pending; /* all zero: status pending */
  static const cs_store_job_row empty_job;
  static const cs_store_txn_row empty_txn; /* the unwritten records of a chunk: zeros */
  static const char no_text[CS_STORE_JSON_LEN]; /* empty strings, the fill of both text sets */
  cs_col job_cols[CS_STORE_MAX_COLUMNS], result_cols[CS_STORE_MAX_COLUMNS],
      txn_cols[CS_STORE_MAX_COLUMNS], json_col[2], error_col[2];
  cs_store_job_json_columns(json_col, 2);
  cs_store_error_columns(error_col, 2);
  cs_store_job_columns(job_cols, CS_STORE_MAX_COLUMNS);
  cs_store_result_columns(st->engines, result_cols, CS_STORE_MAX_COLUMNS);
  cs_store_txn_columns(st->engines, txn_cols, CS_STORE_MAX_COLUMNS);
  H5Tclose(st->t_result);
  H5Tclose(st->t_txn);
  st->t_result = cs_store_type_create(result_cols, RESULT_ROW_BYTES);
  st->t_txn = cs_store_type_create(txn_cols, sizeof(cs_store_txn_row));
  if (st->t_result < 0 || st->t_txn < 0)
    return cs_store_h5_error(err, CS_EIO, "building the row types");
  st->jobs = create_table(st->file, "jobs", st->t_job, JOBS_CHUNK, 1, false, false, &empty_job);
  st->job_json = create_table(st->file, "job_json", st->t_json, JOB_JSON_CHUNK, 1, false, false,
                              no_text);
  st->results = create_table(st->file, "results", st->t_result, RESULTS_CHUNK, 0, false, true,
                             &pending);
  st->errors = create_table(st->file, "errors", st->t_error, ERRORS_CHUNK, 0, false, true,
                            no_text);
  /* chunks are allocated when written (only serial handles write /txlog): space reserved for
   * jobs not yet run takes none */
  st->txlog = create_table(st->file, "txlog", st->t_txn, TXLOG_CHUNK, TXLOG_DEFLATE, true, false,
                           &empty_txn);
  if (st->jobs < 0 || st->results < 0 || st->txlog < 0 || st->job_json < 0 || st->errors < 0)
    return cs_store_h5_error(err, CS_EIO, "creating datasets");
  if (cs_store_attr_text(st->file, "format", "commsweep", err) ||
      cs_store_attr_int(st->file, "schema_version", CS_STORE_SCHEMA_VERSION, err) ||
      cs_store_attr_text(st->file, "adapter_version", CS_ADAPTER_VERSION, err) ||
      cs_store_attr_utc_now(st->file, "created_utc", err) ||
      cs_store_attr_text(st->file, "description",
                         "commsweep sweep results: /jobs (inputs), /job_json (their canonical "
                         "JSON), /results (EngineResult), /errors (error of a failed job), one "
                         "row per job in each, same index; /txlog (transaction records); see "
                         "docs/hdf5-schema.md",
                         err) ||
      cs_store_type_describe(st->jobs, job_cols, "one row per job: cache key and inputs", err) ||
      cs_store_type_describe(st->job_json, json_col, "one string per job (row i of /jobs)", err) ||
      cs_store_type_describe(st->errors, error_col,
                             "one string per job (row i of /results): why it failed", err) ||
      cs_store_type_describe(st->results, result_cols,
                             "one row per job (row i describes /jobs row i): status and "
                             "EngineResult",
                             err) ||
      cs_store_type_describe(st->txlog, txn_cols,
                             "transaction records; job j owns rows [txlog_offset, "
                             "txlog_offset + txlog_count) of /results row j",
                             err) ||
      create_steplog(st, err))
    return err->code;
  if (H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0)
    return cs_store_h5_error(err, CS_EIO, "flushing the new file");
  return CS_OK;
}

static int check_format(cs_store *st, cs_err *err) {
  char format[64];
  long long version = 0;
  int rc = cs_store_attr_read_text(st->file, "format", format, sizeof format, err);
  if (rc == CS_ENOTFOUND || (!rc && strcmp(format, "commsweep") != 0))
    return cs_err_set(err, CS_EINVAL, "not a commsweep store (attribute 'format' is missing)");
  if (rc) return rc;
  if (cs_store_attr_read_int(st->file, "schema_version", &version, err)) return err->code;
  bool readable = version >= CS_STORE_SCHEMA_VERSION_READ && version < CS_STORE_SCHEMA_VERSION;
  if (readable && st->writable)
    return cs_err_set(err, CS_EINVAL,
                      "schema version %lld, which this commsweep reads but does not write (it "
                      "writes version %d, with /jobs.network): `commsweep repair` converts the "
                      "file, keeping every row",
                      version, CS_STORE_SCHEMA_VERSION);
  if (version != CS_STORE_SCHEMA_VERSION && !readable)
    return cs_err_set(err, CS_EINVAL, "schema version %lld, this commsweep reads versions %d to %d",
                      version, CS_STORE_SCHEMA_VERSION_READ, CS_STORE_SCHEMA_VERSION);
  st->version = (int)version;
  if (version < CS_STORE_SCHEMA_VERSION) { /* /jobs without the network column */
    cs_col cols[CS_STORE_MAX_COLUMNS];
    size_t n = 0;
    cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
    for (cs_col *c = cols; c->name; c++)
      if (strcmp(c->name, "network")) cols[n++] = *c;
    cols[n] = (cs_col){NULL, 0, 0, 0, NULL, NULL, 0};
    H5Tclose(st->t_job);
    if ((st->t_job = cs_store_type_create(cols, JOB_ROW_BYTES)) < 0)
      return cs_store_h5_error(err, CS_EIO, "building the /jobs type of schema version %lld",
                               version);
  }
  return CS_OK;
}

int cs_store_schema_version(const cs_store *st) { return st->version; }

static const char *class_name(H5T_class_t c) {
  switch (c) {
  case H5T_INTEGER: return "integer";
  case H5T_FLOAT: return "float";
  case H5T_STRING: return "string";
  case H5T_ENUM: return "enum";
  case H5T_COMPOUND: return "compound";
  default: return "other";
  }
}

/* Whether `col` of table `name` is an engine's extra column (engine.h), which a file written
 * before its engine had it lacks. */
static bool engine_extra(const char *name, const char *col) {
  cs_col cols[CS_STORE_MAX_COLUMNS];
  size_t n = !strcmp(name, "txlog")
                 ? cs_engine_record_columns(CS_ENGINE_SET_ALL, 0, cols, CS_STORE_MAX_COLUMNS)
             : !strcmp(name, "results")
                 ? cs_engine_result_columns(CS_ENGINE_SET_ALL, 0, cols, CS_STORE_MAX_COLUMNS)
                 : 0;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(cols[i].name, col)) return true;
  return false;
}

/* Whether every member of `have` sits where `want` has it, in rows of the same size: then the
 * file's type is the row struct's with some members unnamed, and serves as the memory type. */
static bool same_places(hid_t have, hid_t want) {
  if (H5Tget_size(have) != H5Tget_size(want)) return false;
  int nhave = H5Tget_nmembers(have);
  bool same = true;
  for (int i = 0; i < nhave && same; i++) {
    char *col = H5Tget_member_name(have, (unsigned)i);
    int at = H5Tget_member_index(want, col);
    same = at >= 0 && H5Tget_member_offset(want, (unsigned)at) ==
                          H5Tget_member_offset(have, (unsigned)i);
    H5free_memory(col);
  }
  return same;
}

/* The dataset's columns are exactly the expected ones (name, class, size; order free, since
 * HDF5 converts by name): a renamed, missing, extra or retyped column would otherwise read as
 * zeros and every row as corrupt.  One difference is taken: a file without some engines' extra
 * columns (written before their engine had them) whose other columns sit where the row struct
 * has them.  *type then becomes the file's own type, so rows move without conversion and keep
 * every byte (an unnamed slot's too: the checksums cover them). */
static int check_columns(hid_t dset, const char *name, hid_t *type, int version, cs_err *err) {
  hid_t want = *type;
  hid_t have = H5Dget_type(dset);
  if (have < 0) return cs_store_h5_error(err, CS_EINVAL, "reading the type of /%s", name);
  int rc = CS_OK;
  if (H5Tget_class(have) != H5T_COMPOUND) {
    rc = cs_err_set(err, CS_EINVAL, "/%s is not a table (compound type); schema version %d",
                    name, version);
    H5Tclose(have);
    return rc;
  }
  int nwant = H5Tget_nmembers(want), nhave = H5Tget_nmembers(have);
  char *lacking = NULL; /* the first engine extra column the file lacks */
  for (int i = 0; i < nwant && !rc; i++) {
    char *col = H5Tget_member_name(want, (unsigned)i);
    int at = H5Tget_member_index(have, col);
    if (at < 0 && engine_extra(name, col)) {
      if (!lacking) {
        lacking = col;
        continue;
      }
    } else if (at < 0) {
      rc = cs_err_set(err, CS_EINVAL, "column /%s.%s is missing (schema version %d)", name, col,
                      version);
    } else {
      hid_t wt = H5Tget_member_type(want, (unsigned)i), ht = H5Tget_member_type(have, (unsigned)at);
      H5T_class_t wc = H5Tget_class(wt), hc = H5Tget_class(ht);
      size_t ws = H5Tget_size(wt), hs = H5Tget_size(ht);
      if (wc != hc || ws != hs)
        rc = cs_err_set(err, CS_EINVAL, "column /%s.%s is %s of %zu bytes, schema version %d has %s "
                        "of %zu bytes", name, col, class_name(hc), hs, version,
                        class_name(wc), ws);
      H5Tclose(wt);
      H5Tclose(ht);
    }
    H5free_memory(col);
  }
  for (int i = 0; i < nhave && !rc; i++) {
    char *col = H5Tget_member_name(have, (unsigned)i);
    if (H5Tget_member_index(want, col) < 0)
      rc = cs_err_set(err, CS_EINVAL, "column /%s.%s is not in schema version %d", name, col,
                      version);
    H5free_memory(col);
  }
  if (!rc && lacking && !same_places(have, want))
    rc = cs_err_set(err, CS_EINVAL, "column /%s.%s is missing and the other columns of /%s are "
                    "not where schema version %d has them", name, lacking, name, version);
  if (lacking) H5free_memory(lacking);
  if (!rc && lacking) {
    H5Tclose(want);
    *type = have;
    return CS_OK;
  }
  H5Tclose(have);
  return rc;
}

/* A one-column string dataset has the expected string size. */
static int check_text(hid_t dset, const char *name, size_t size, cs_err *err) {
  hid_t have = H5Dget_type(dset);
  if (have < 0) return cs_store_h5_error(err, CS_EINVAL, "reading the type of /%s", name);
  H5T_class_t c = H5Tget_class(have);
  size_t hs = H5Tget_size(have);
  bool variable = c == H5T_STRING && H5Tis_variable_str(have) > 0;
  H5Tclose(have);
  if (c != H5T_STRING || variable || hs != size)
    return cs_err_set(err, CS_EINVAL, "/%s is %s of %zu bytes, schema version %d has string of "
                      "%zu bytes", name, class_name(c), hs, CS_STORE_SCHEMA_VERSION, size);
  return CS_OK;
}

/* Opens a dataset that schema version CS_STORE_SCHEMA_VERSION has. */
static hid_t open_dataset(cs_store *st, const char *name, hid_t dapl, cs_err *err) {
  hid_t d = H5Lexists(st->file, name, H5P_DEFAULT) > 0 ? H5Dopen2(st->file, name, dapl) : -1;
  if (d < 0) cs_store_h5_error(err, CS_EINVAL, "opening /%s (schema version %d has it)", name,
                               CS_STORE_SCHEMA_VERSION);
  return d;
}

/* A serial handle opens every dataset.  A parallel one opens /results and /errors only
 * (both allocated early, written in place): opening a dataset whose chunks are not all
 * allocated for writing through MPI-IO allocates them (HDF5 1.10 does that on open), which for
 * the compressed /txlog would be a change of structure outside the structural step; the
 * parallel handle spools the log instead. */
static int open_tables(cs_store *st, bool serial, cs_err *err) {
  if (serial && (st->jobs = H5Dopen2(st->file, "jobs", H5P_DEFAULT)) < 0)
    return cs_store_h5_error(err, CS_EINVAL, "opening /jobs");
  if ((st->results = H5Dopen2(st->file, "results", H5P_DEFAULT)) < 0)
    return cs_store_h5_error(err, CS_EINVAL, "opening /results");
  if ((serial && (st->job_json = open_dataset(st, "job_json", H5P_DEFAULT, err)) < 0) ||
      (st->errors = open_dataset(st, "errors", H5P_DEFAULT, err)) < 0 ||
      (serial && check_text(st->job_json, "job_json", CS_STORE_JSON_LEN, err)) ||
      check_text(st->errors, "errors", CS_STORE_ERROR_LEN, err))
    return err->code;
  hid_t dapl = txlog_access();
  if (serial && (st->txlog = H5Dopen2(st->file, "txlog", dapl)) < 0) {
    H5Pclose(dapl);
    return cs_store_h5_error(err, CS_EINVAL, "opening /txlog");
  }
  if (serial && (st->steplog = H5Dopen2(st->file, "steplog", dapl)) < 0) {
    H5Pclose(dapl);
    return cs_store_h5_error(err, CS_EINVAL, "opening /steplog");
  }
  H5Pclose(dapl);
  /* a spooling rank deflates the chunks its jobs fill whole, as /txlog is laid out */
  if (!serial) { /* against the file's own record type (check_columns) */
    hid_t txlog = H5Dopen2(st->file, "txlog", H5P_DEFAULT);
    if (txlog < 0) return cs_store_h5_error(err, CS_EINVAL, "opening /txlog");
    int rc = check_columns(txlog, "txlog", &st->t_txn, st->version, err);
    if (!rc && !cs_store_txlog_direct(st, txlog, &st->txlog_chunk_len, &st->txlog_level))
      st->txlog_chunk_len = 0;
    H5Dclose(txlog);
    if (rc) return rc;
  }
  if ((serial && check_columns(st->jobs, "jobs", &st->t_job, st->version, err)) ||
      check_columns(st->results, "results", &st->t_result, st->version, err) ||
      (serial && check_columns(st->txlog, "txlog", &st->t_txn, st->version, err)) ||
      (serial && check_columns(st->steplog, "steplog", &st->t_step, st->version, err)))
    return err->code;
  st->steplog_len = serial ? extent_of(st->steplog) : UINT64_MAX; /* checked by the merge */
  st->rows = extent_of(st->results);
  st->txlog_len = serial ? extent_of(st->txlog) : UINT64_MAX; /* checked by the merge */
  hid_t beside[] = {serial ? st->jobs : -1, serial ? st->job_json : -1, st->errors};
  const char *names[] = {"jobs", "job_json", "errors"};
  for (int i = 0; i < 3; i++)
    if (beside[i] >= 0 && extent_of(beside[i]) != st->rows)
      return cs_err_set(err, CS_ECORRUPT, "/%s has %llu rows but /results has %llu", names[i],
                        (unsigned long long)extent_of(beside[i]), (unsigned long long)st->rows);
  return CS_OK;
}

/* Copies src into a new file dst (mode 0600 until done, then src's mode), region by region
 * so holes stay holes (/txlog space is allocated but not written until jobs run), and syncs
 * it.  ENOSPC and every other failure come back with the system's reason. */
static int copy_file(const char *src, const char *dst, cs_err *err) {
  int in = open(src, O_RDONLY);
  if (in < 0) return cs_err_set(err, CS_EIO, "cannot read it: %s", strerror(errno));
  struct stat sb;
  int out = fstat(in, &sb) == 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600) : -1;
  if (out < 0) {
    int e = errno;
    close(in);
    return cs_err_set(err, CS_EIO, "cannot create '%s': %s", dst, strerror(e));
  }
  int rc = CS_OK;
  off_t size = sb.st_size, at = 0;
  char *buf = NULL;
  while (at < size && !rc) {
    off_t data = lseek(in, at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break; /* only a hole remains */
    off_t hole = data < 0 ? size : lseek(in, data, SEEK_HOLE);
    if (data < 0) data = at;
    if (hole < 0) hole = size;
    for (off_t pos = data; pos < hole && !rc;) {
      size_t want = (size_t)(hole - pos < (1 << 22) ? hole - pos : (1 << 22));
      if (!buf && !(buf = malloc(1 << 22))) {
        rc = cs_err_set(err, CS_ENOMEM, "copying: out of memory");
        break;
      }
      ssize_t got = pread(in, buf, want, pos);
      if (got <= 0) {
        rc = cs_err_set(err, CS_EIO, "reading it at byte %lld: %s", (long long)pos,
                        got < 0 ? strerror(errno) : "unexpected end of file");
        break;
      }
      for (ssize_t done = 0; done < got && !rc;) {
        ssize_t put = pwrite(out, buf + done, (size_t)(got - done), pos + done);
        if (put < 0)
          rc = cs_err_set(err, CS_EIO, "writing the copy '%s': %s",
                          dst, strerror(errno));
        else done += put;
      }
      pos += got;
    }
    at = hole;
  }
  free(buf);
  if (!rc && ftruncate(out, size) != 0)
    rc = cs_err_set(err, CS_EIO, "sizing the copy '%s': %s", dst, strerror(errno));
  if (!rc && fsync(out) != 0)
    rc = cs_err_set(err, CS_EIO, "syncing the copy '%s': %s", dst,
                    strerror(errno));
  if (!rc && fchmod(out, sb.st_mode & 07777) != 0)
    rc = cs_err_set(err, CS_EIO, "setting the mode of '%s': %s", dst, strerror(errno));
  close(out);
  close(in);
  return rc;
}

/* The file must be a regular file (a FIFO would block the open forever, a directory or device
 * is a mistake).  *size is 0 when absent. */
static int check_kind(const char *path, bool *exists, off_t *size, cs_err *err) {
  struct stat sb;
  *exists = stat(path, &sb) == 0;
  *size = *exists ? sb.st_size : 0;
  if (*exists && !S_ISREG(sb.st_mode))
    return cs_err_set(err, CS_EINVAL, "not a regular file (%s)",
                      S_ISFIFO(sb.st_mode)  ? "a FIFO"
                      : S_ISDIR(sb.st_mode) ? "a directory"
                                            : "a device or socket");
  return CS_OK;
}

int cs_store_stage_path(const char *path, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s.staged", path);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int cs_store_open(const char *path, cs_store_mode mode, cs_store **out, cs_err *err) {
  return cs_store_open_for(path, mode, 0, out, err);
}

/* Whether every column of `cols` is a member of `type`. */
static bool names_all(hid_t type, const cs_col *cols) {
  for (; cols->name; cols++)
    if (H5Tget_member_index(type, cols->name) < 0) return false;
  return true;
}

cs_engine_set cs_store_engines(const cs_store *st) {
  cs_engine_set named = 0;
  cs_col result[CS_ENGINE_EXTRA_MAX + 1], record[CS_TXN_EXTRA_SLOTS + 1];
  for (size_t i = 0; cs_engine_list()[i]; i++) {
    cs_engine_set one = cs_engine_set_of(cs_engine_list()[i]);
    cs_engine_result_columns(one, 0, result, CS_ENGINE_EXTRA_MAX + 1);
    cs_engine_record_columns(one, 0, record, CS_TXN_EXTRA_SLOTS + 1);
    if (names_all(st->t_result, result) && names_all(st->t_txn, record)) named |= one;
  }
  return named;
}

int cs_store_open_for(const char *path, cs_store_mode mode, cs_engine_set engines,
                      cs_store **out, cs_err *err) {
  cs_store_h5_quiet();
  *out = NULL;
  bool exists;
  off_t size;
  if (check_kind(path, &exists, &size, err)) return cs_err_prefix(err, "file '%s'", path);
  if (exists && size == 0 && mode == CS_STORE_READ)
    return cs_err_set(err, CS_EINVAL, "file '%s': empty (0 bytes), not a commsweep store", path);
  if (exists && size == 0) exists = false; /* nothing to keep: laid out anew */
  struct stat link;
  if (!exists && (mode == CS_STORE_READ || mode == CS_STORE_REBUILD))
    return cs_err_set(err, CS_ENOTFOUND, "file '%s': no such file", path);
  if (!exists && lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
    return cs_err_set(err, CS_EINVAL, "file '%s': a symbolic link to a missing file", path);
  cs_store *st = store_new(engines | cs_engine_set_in_every_file());
  if (!st) return cs_err_set(err, CS_ENOMEM, "file '%s': out of memory", path);
  st->writable = mode != CS_STORE_READ;
  int rc = CS_OK;
  /* Writers exclude each other with the store's own lock file (cs_store_lock), which also
   * works across nodes; HDF5's flock would only make a sweep fail while some reader (an open
   * h5py session) has the file open, so the writer does not take it. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (st->writable) H5Pset_file_locking(fapl, false, true);
  const char *target = path;
  if (mode == CS_STORE_REBUILD) exists = false; /* a new layout under the staged name */
  if (mode == CS_STORE_STAGE || mode == CS_STORE_REBUILD) {
    /* The structural step works on a private copy (or a new file) that replaces the file by
     * one rename once complete: a kill or a full disk at any moment before leaves the file as
     * it was.  The caller holds the lock, so a leftover copy is a dead sweep's. */
    if (cs_store_stage_path(path, st->stage_path, sizeof st->stage_path) ||
        strlen(path) >= sizeof st->final_path)
      rc = cs_err_set(err, CS_EINVAL, "path too long");
    else {
      snprintf(st->final_path, sizeof st->final_path, "%s", path);
      target = st->stage_path;
      unlink(target);
      if (exists) rc = copy_file(path, target, err);
      if (!rc) st->staged = true;
    }
  }
  if (rc) {
  } else if (!exists) {
    st->file = H5Fcreate(target, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    rc = st->file < 0 ? cs_store_h5_error(err, CS_EIO, "cannot create '%s'", target)
                      : create_layout(st, err);
    st->version = CS_STORE_SCHEMA_VERSION;
  } else {
    st->file = H5Fopen(target, st->writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
    if (st->file < 0) rc = cs_store_h5_error(err, CS_EIO, "cannot open it as HDF5");
    else if (!(rc = check_format(st, err))) rc = open_tables(st, true, err);
  }
  H5Pclose(fapl);
  if (rc) {
    cs_store_close(st, NULL);
    return cs_err_prefix(err, "file '%s'", path);
  }
  *out = st;
  return CS_OK;
}

int cs_store_commit(cs_store *st, cs_err *err) {
  if (!st->staged) return cs_store_close(st, err);
  int rc = CS_OK;
  if (H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0)
    rc = cs_store_h5_error(err, CS_EIO, "flushing the staged file");
  hid_t file = st->file;
  st->file = H5I_INVALID_HID;
  char stage[sizeof st->stage_path], final[sizeof st->final_path];
  memcpy(stage, st->stage_path, sizeof stage);
  memcpy(final, st->final_path, sizeof final);
  store_free(st); /* datasets and types first, then the file itself */
  if (H5Fclose(file) < 0 && !rc) rc = cs_store_h5_error(err, CS_EIO, "closing the staged file");
  int fd = rc ? -1 : open(stage, O_RDONLY);
  if (!rc && (fd < 0 || fsync(fd) != 0))
    rc = cs_err_set(err, CS_EIO, "syncing '%s': %s", stage,
                    strerror(errno));
  if (fd >= 0) close(fd);
  if (!rc && rename(stage, final) != 0)
    rc = cs_err_set(err, CS_EIO, "renaming '%s' into place: %s", stage, strerror(errno));
  if (rc) {
    unlink(stage);
    return cs_err_prefix(err, "file '%s'", final);
  }
  /* the rename itself reaches the disk with the directory */
  char dir[sizeof st->final_path];
  snprintf(dir, sizeof dir, "%s", final);
  char *slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return CS_OK;
}

int cs_store_open_mpi(const char *path, MPI_Comm comm, cs_store **out, cs_err *err) {
  cs_store_h5_quiet();
  *out = NULL;
  cs_store *st = store_new(cs_engine_set_in_every_file()); /* lays nothing out */
  if (!st) return cs_err_set(err, CS_ENOMEM, "file '%s': out of memory", path);
  st->parallel = st->writable = true;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  st->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  st->dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(st->dxpl, H5FD_MPIO_INDEPENDENT);
  int rc = CS_OK;
  snprintf(st->final_path, sizeof st->final_path, "%s", path);
  if (st->file < 0) rc = cs_store_h5_error(err, CS_EIO, "cannot open it with MPI-IO");
  else if (!(rc = check_format(st, err)) && !(rc = open_tables(st, false, err)) &&
           H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0)
    rc = cs_store_h5_error(err, CS_EIO, "flushing after the parallel open");
  if (rc) {
    store_free(st);
    return cs_err_prefix(err, "file '%s'", path);
  }
  *out = st;
  return CS_OK;
}

int cs_store_close(cs_store *st, cs_err *err) {
  if (!st) return CS_OK;
  int rc = CS_OK;
  if (st->staged) {
    char stage[sizeof st->stage_path];
    memcpy(stage, st->stage_path, sizeof stage);
    store_free(st);
    unlink(stage);
    return CS_OK;
  }
  uint64_t lost = 0;
  if (st->batch_n) rc = cs_store_flush_rows(st, &lost, err);
  if (st->writable && st->file >= 0 && H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0 && !rc)
    rc = cs_store_h5_error(err, CS_EIO, "flushing the store");
  store_free(st);
  return rc;
}

uint64_t cs_store_num_rows(const cs_store *st) { return st->rows; }
uint64_t cs_store_txlog_len(const cs_store *st) { return st->txlog_len; }
uint64_t cs_store_steplog_len(const cs_store *st) { return st->steplog_len; }

/* Reads or writes n elements of a 1-D dataset starting at first. */
herr_t cs_store_slab_io(cs_store *st, hid_t dset, hid_t type, uint64_t first, uint64_t n,
                        void *buf, bool write) {
  if (n == 0) return 0;
  hsize_t start = first, count = n;
  hid_t fs = H5Dget_space(dset);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
  hid_t ms = H5Screate_simple(1, &count, NULL);
  herr_t rc = write ? H5Dwrite(dset, type, ms, fs, st->dxpl, buf)
                    : H5Dread(dset, type, ms, fs, st->dxpl, buf);
  /* the closes below would clear the error stack that says why (e.g. "inflate() failed") */
  hid_t why = rc < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
  H5Sclose(ms);
  H5Sclose(fs);
  if (why >= 0) H5Eset_current_stack(why);
  return rc;
}

int cs_store_check_range(const char *what, uint64_t first, uint64_t n, uint64_t len, cs_err *err) {
  if (first > len || n > len - first)
    return cs_err_set(err, CS_EINVAL, "%s [%llu, %llu) is outside [0, %llu)", what,
                      (unsigned long long)first, (unsigned long long)(first + n),
                      (unsigned long long)len);
  return CS_OK;
}

/* Rows [first, first + n) of a dataset of `bytes`-byte file rows, moved from or to member
 * bytes [at, at + bytes) of row structs of `stride` bytes, IO_BLOCK rows per H5Dread or H5Dwrite
 * through a buffer of file rows (the memory type is the file type: HDF5 converts nothing).
 * A write stores zeros for the rows whose struct `keep` (when set) rejects. */
typedef struct row_io {
  hid_t dset, type;
  size_t bytes, at, stride;
  const char *what;
  bool (*keep)(const void *row);
} row_io;

static int move_rows(cs_store *st, const row_io *io, uint64_t first, uint64_t n, void *rows,
                     bool write, cs_err *err) {
  if (n == 0) return CS_OK;
  size_t block = n < IO_BLOCK ? (size_t)n : IO_BLOCK;
  unsigned char *buf = malloc(block * io->bytes);
  if (!buf) return cs_err_set(err, CS_ENOMEM, "%s %s: out of memory", write ? "writing" : "reading",
                              io->what);
  int rc = CS_OK;
  for (uint64_t done = 0; done < n && !rc; done += block) {
    size_t k = n - done < block ? (size_t)(n - done) : block;
    unsigned char *row = (unsigned char *)rows + done * io->stride + io->at;
    for (size_t i = 0; write && i < k; i++) {
      bool kept = !io->keep || io->keep(row + i * io->stride - io->at);
      if (kept) memcpy(buf + i * io->bytes, row + i * io->stride, io->bytes);
      else memset(buf + i * io->bytes, 0, io->bytes);
    }
    if (cs_store_slab_io(st, io->dset, io->type, first + done, k, buf, write) < 0) {
      rc = cs_store_h5_error(err, CS_EIO, "%s %s rows %llu..%llu", write ? "writing" : "reading",
                             io->what, (unsigned long long)(first + done),
                             (unsigned long long)(first + done + k - 1));
      break;
    }
    for (size_t i = 0; !write && i < k; i++)
      memcpy(row + i * io->stride, buf + i * io->bytes, io->bytes);
  }
  free(buf);
  return rc;
}

static row_io jobs_io(const cs_store *st) {
  return (row_io){st->jobs, st->t_job, JOB_ROW_BYTES, 0, sizeof(cs_store_job_row), "/jobs", NULL};
}
static row_io json_io(const cs_store *st) {
  return (row_io){st->job_json, st->t_json, CS_STORE_JSON_LEN, JOB_ROW_BYTES,
                  sizeof(cs_store_job_row), "/job_json", NULL};
}
static row_io results_io(const cs_store *st) {
  return (row_io){st->results, st->t_result, RESULT_ROW_BYTES, 0, sizeof(cs_store_result_row),
                  "/results", NULL};
}
static bool failed_row(const void *row) {
  return ((const cs_store_result_row *)row)->status == CS_STORE_FAILED;
}
static row_io errors_io(const cs_store *st) {
  return (row_io){st->errors, st->t_error, CS_STORE_ERROR_LEN, RESULT_ROW_BYTES,
                  sizeof(cs_store_result_row), "/errors", failed_row};
}

/* The /errors text of the failed rows among out[0..n) (rows first..), read in runs of nearby
 * failed rows; every other row's error reads as empty. */
#define ERROR_RUN_GAP 32 /* rows between two failed rows read along rather than in two reads */
static int read_errors(cs_store *st, uint64_t first, uint64_t n, cs_store_result_row *out,
                       cs_err *err) {
  row_io io = errors_io(st);
  io.keep = NULL;
  for (uint64_t k = 0; k < n;) {
    if (out[k].status != CS_STORE_FAILED) {
      memset(out[k++].error, 0, CS_STORE_ERROR_LEN);
      continue;
    }
    uint64_t end = k + 1, last = k;
    while (end < n && end - last <= ERROR_RUN_GAP) {
      if (out[end].status == CS_STORE_FAILED) last = end;
      end++;
    }
    if (move_rows(st, &io, first + k, last + 1 - k, out + k, false, err)) return err->code;
    for (uint64_t i = k; i <= last; i++)
      if (out[i].status != CS_STORE_FAILED) memset(out[i].error, 0, CS_STORE_ERROR_LEN);
    k = last + 1;
  }
  return CS_OK;
}

static bool skips(const char *const *skip, const char *name) {
  for (; skip && *skip; skip++)
    if (!strcmp(*skip, name)) return true;
  return false;
}

int cs_store_read_rows_without(cs_store *st, bool jobs, const char *const *skip, uint64_t first,
                               uint64_t n, void *out, cs_err *err) {
  if (jobs && st->jobs < 0) return cs_err_set(err, CS_EINVAL, "/jobs is not open in a parallel store");
  if (cs_store_check_range(jobs ? "/jobs rows" : "/results rows", first, n, st->rows, err)) return err->code;
  row_io table = jobs ? jobs_io(st) : results_io(st);
  if (move_rows(st, &table, first, n, out, false, err)) return err->code;
  for (uint64_t k = 0; jobs && st->version < CS_STORE_SCHEMA_VERSION && k < n; k++)
    memset(((cs_store_job_row *)out)[k].network, 0, CS_STORE_NETWORK_LEN); /* not in the file */
  if (jobs && !skips(skip, "job_json")) return cs_store_read_job_json(st, first, n, out, err);
  if (!jobs && !skips(skip, "error")) return read_errors(st, first, n, out, err);
  return CS_OK;
}

int cs_store_read_job_json(cs_store *st, uint64_t first, uint64_t n, cs_store_job_row *out,
                           cs_err *err) {
  if (st->job_json < 0) return cs_err_set(err, CS_EINVAL, "/job_json is not open in a parallel store");
  if (cs_store_check_range("/job_json rows", first, n, st->rows, err)) return err->code;
  row_io io = json_io(st);
  return move_rows(st, &io, first, n, out, false, err);
}

int cs_store_read_jobs(cs_store *st, uint64_t first, uint64_t n, cs_store_job_row *out,
                       cs_err *err) {
  return cs_store_read_rows_without(st, true, NULL, first, n, out, err);
}

int cs_store_read_results(cs_store *st, uint64_t first, uint64_t n, cs_store_result_row *out,
                          cs_err *err) {
  return cs_store_read_rows_without(st, false, NULL, first, n, out, err);
}

/* Entries [offset, offset + n) of a log (/txlog or /steplog) of len entries of `size` bytes. */
static int read_log(cs_store *st, hid_t dset, hid_t type, uint64_t len, const char *what,
                    uint64_t offset, uint64_t n, size_t size, void *out, cs_err *err) {
  if (cs_store_check_range(what, offset, n, len, err)) return err->code;
  memset(out, 0, n * size);
  if (cs_store_slab_io(st, dset, type, offset, n, out, false) < 0)
    return cs_store_h5_error(err, CS_EIO, "reading %s %llu..%llu", what,
                             (unsigned long long)offset, (unsigned long long)(offset + n - 1));
  return CS_OK;
}

int cs_store_read_txlog(cs_store *st, uint64_t offset, uint64_t n, cs_store_txn_row *out,
                        cs_err *err) {
  return read_log(st, st->txlog, st->t_txn, st->txlog_len, "/txlog records", offset, n,
                  sizeof *out, out, err);
}

int cs_store_read_steplog(cs_store *st, uint64_t offset, uint64_t n, cs_store_step_row *out,
                          cs_err *err) {
  return read_log(st, st->steplog, st->t_step, st->steplog_len, "/steplog summaries", offset, n,
                  sizeof *out, out, err);
}

/* Reads rows [first, first + n) of dset into out (rows of row_size bytes) through a memory type
 * of the given columns only; the others stay zero. */
static int read_columns(cs_store *st, hid_t dset, const char *what, const cs_col *cols,
                        size_t row_size, uint64_t first, uint64_t n, void *out, cs_err *err) {
  if (dset < 0) return cs_err_set(err, CS_EINVAL, "%s is not open in a parallel store", what);
  if (cs_store_check_range(what, first, n, st->rows, err)) return err->code;
  hid_t t = cs_store_type_create(cols, row_size);
  memset(out, 0, n * row_size);
  herr_t rc = t < 0 ? -1 : cs_store_slab_io(st, dset, t, first, n, out, false);
  hid_t why = rc < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
  if (t >= 0) H5Tclose(t);
  if (why >= 0) H5Eset_current_stack(why);
  if (rc < 0)
    return cs_store_h5_error(err, CS_EIO, "reading %s %llu..%llu", what,
                             (unsigned long long)first, (unsigned long long)(first + n - 1));
  return CS_OK;
}

int cs_store_read_index(cs_store *st, uint64_t first, uint64_t n, cs_store_index_row *out,
                        cs_err *err) {
  static const cs_col cols[] = {
      {"key", offsetof(cs_store_index_row, key), CS_COL_KEY, CS_STORE_KEY_LEN, NULL, "", 0},
      {"txlog_reserved_offset", offsetof(cs_store_index_row, txlog_reserved_offset), CS_COL_U64,
       0, NULL, "", 0},
      {"txlog_reserved_count", offsetof(cs_store_index_row, txlog_reserved_count), CS_COL_U64, 0,
       NULL, "", 0},
      {"steplog_reserved_offset", offsetof(cs_store_index_row, steplog_reserved_offset),
       CS_COL_U64, 0, NULL, "", 0},
      {"steplog_reserved_count", offsetof(cs_store_index_row, steplog_reserved_count),
       CS_COL_U64, 0, NULL, "", 0},
      {NULL, 0, 0, 0, NULL, NULL, 0}};
  return read_columns(st, st->jobs, "/jobs keys", cols, sizeof(cs_store_index_row), first, n, out,
                      err);
}
/* Result rows [first, first + n): the /errors rows first (the error of a failed row, empty for
 * any other), then the rows, whose checksums vouch for both: a kill between the two leaves the
 * old row, which the new error does not match if it failed. */
int cs_store_write_result_rows(cs_store *st, uint64_t first, uint64_t n,
                               const cs_store_result_row *rows, cs_err *err) {
  row_io errors = errors_io(st), results = results_io(st);
  if (move_rows(st, &errors, first, n, (void *)rows, true, err) ||
      move_rows(st, &results, first, n, (void *)rows, true, err))
    return err->code;
  return CS_OK;
}

int cs_store_write_job_rows(cs_store *st, uint64_t first, uint64_t n, const cs_store_job_row *rows,
                            bool with_json, cs_err *err) {
  if (cs_store_check_range("/jobs rows", first, n, st->rows, err)) return err->code;
  row_io jobs = jobs_io(st), json = json_io(st);
  if (move_rows(st, &jobs, first, n, (void *)rows, true, err) ||
      (with_json && move_rows(st, &json, first, n, (void *)rows, true, err)))
    return err->code;
  return CS_OK;
}

int cs_store_write_row(cs_store *st, uint64_t row, const cs_store_result_row *res,
                       const cs_store_txn_row *txns, uint64_t n, const cs_store_step_row *steps,
                       uint64_t nsteps, bool records_written, cs_err *err) {
  if (!st->writable) return cs_err_set(err, CS_EINTERNAL, "writing a row of a read-only store");
  if (cs_store_check_range("/results row", row, 1, st->rows, err) ||
      cs_store_check_range("/txlog slice", res->txlog_offset, n, st->txlog_len, err) ||
      cs_store_check_range("/steplog slice", res->steplog_offset, nsteps, st->steplog_len, err))
    return err->code;
  if ((n && st->txlog < 0) || (nsteps && st->steplog < 0))
    return cs_err_set(err, CS_EINTERNAL, "a parallel store writes the log through its spool");
  if (n && !records_written &&
      cs_store_slab_io(st, st->txlog, st->t_txn, res->txlog_offset, n, (void *)txns, true) < 0)
    return cs_store_h5_error(err, CS_EIO, "writing /txlog records %llu..%llu",
                             (unsigned long long)res->txlog_offset,
                             (unsigned long long)(res->txlog_offset + n));
  if (nsteps && cs_store_slab_io(st, st->steplog, st->t_step, res->steplog_offset, nsteps,
                                 (void *)steps, true) < 0)
    return cs_store_h5_error(err, CS_EIO, "writing /steplog summaries %llu..%llu",
                             (unsigned long long)res->steplog_offset,
                             (unsigned long long)(res->steplog_offset + nsteps));
  if (st->batch_cap) {
    st->batch[st->batch_n] = *res;
    st->batch_at[st->batch_n++] = row;
    if (st->batch_n == st->batch_cap) {
      uint64_t lost = 0;
      return cs_store_flush_rows(st, &lost, err);
    }
    return CS_OK;
  }
  return cs_store_write_result_rows(st, row, 1, res, err);
}

int cs_store_batch_rows(cs_store *st, size_t cap, cs_err *err) {
  cs_store_result_row *rows = cap ? malloc(cap * sizeof *rows) : NULL;
  hsize_t *at = cap ? malloc(cap * sizeof *at) : NULL;
  if (cap && (!rows || !at)) {
    free(rows);
    free(at);
    return cs_err_set(err, CS_ENOMEM, "a batch of %zu rows: out of memory", cap);
  }
  uint64_t lost = 0;
  int rc = cs_store_flush_rows(st, &lost, err);
  free(st->batch);
  free(st->batch_at);
  st->batch = rows;
  st->batch_at = at;
  st->batch_cap = cap;
  return rc;
}

static int cmp_held(const void *a, const void *b) {
  const hsize_t x = *(const hsize_t *)a, y = *(const hsize_t *)b;
  return (x > y) - (x < y);
}

/* The held rows, sorted by row, each run of consecutive rows written as one hyperslab: HDF5 1.10
 * maps a selection to chunks by visiting every chunk of its bounding box, so one selection of
 * rows scattered over the file would cost a visit of every chunk of /results per write. */
int cs_store_flush_rows(cs_store *st, uint64_t *lost, cs_err *err) {
  *lost = 0;
  size_t n = st->batch_n;
  if (!n) return CS_OK;
  st->batch_n = 0;
  /* sort (row, slot) pairs; rows are distinct */
  hsize_t *order = malloc(2 * n * sizeof *order);
  cs_store_result_row *sorted = malloc(n * sizeof *sorted);
  int rc = CS_OK;
  if (!order || !sorted) rc = cs_err_set(err, CS_ENOMEM, "writing %zu rows: out of memory", n);
  for (size_t i = 0; !rc && i < n; i++) {
    order[2 * i] = st->batch_at[i];
    order[2 * i + 1] = i;
  }
  if (!rc) qsort(order, n, 2 * sizeof *order, cmp_held);
  for (size_t i = 0; !rc && i < n; i++) sorted[i] = st->batch[order[2 * i + 1]];
  for (size_t first = 0; !rc && first < n;) {
    size_t k = 1;
    while (first + k < n && order[2 * (first + k)] == order[2 * first] + k) k++;
    if ((rc = cs_store_write_result_rows(st, order[2 * first], k, &sorted[first], err))) break;
    first += k;
  }
  if (rc) *lost = n; /* which of them reached the file is unknown: all count as lost */
  free(order);
  free(sorted);
  return rc;
}
