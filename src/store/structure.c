/* The structural steps a sweep takes on a serial writable store (normally a staged copy: the
 * merge of the spools, merge.c, is one more): the tables grown, /jobs rows written, result rows
 * cleared, the sweep noted on the file.  Only here, and at create, does the file's structure
 * change (store.h has why). */
#include "store_file.h"

static int need_structural(const cs_store *st, cs_err *err) {
  if (!st->writable || st->parallel)
    return cs_err_set(err, CS_EINTERNAL, "structural change on a %s store",
                      st->parallel ? "parallel" : "read-only");
  return CS_OK;
}

/* Extends dset from *len to `to` (never shrinks) and notes the new length. */
static int extend(hid_t dset, uint64_t *len, uint64_t to, const char *what, const char *unit,
                  cs_err *err) {
  if (to <= *len) return CS_OK;
  hsize_t dim = to;
  if (H5Dset_extent(dset, &dim) < 0)
    return cs_store_h5_error(err, CS_EIO, "extending %s to %llu %s", what,
                             (unsigned long long)to, unit);
  *len = to;
  return CS_OK;
}

int cs_store_grow(cs_store *st, uint64_t rows, uint64_t txlog_len, cs_err *err) {
  if (need_structural(st, err)) return err->code;
  if (rows > st->rows) {
    hsize_t dim = rows;
    if (H5Dset_extent(st->jobs, &dim) < 0 || H5Dset_extent(st->job_json, &dim) < 0 ||
        H5Dset_extent(st->results, &dim) < 0 || H5Dset_extent(st->errors, &dim) < 0)
      return cs_store_h5_error(err, CS_EIO, "extending the tables to %llu rows",
                               (unsigned long long)rows);
    st->rows = rows;
  }
  return extend(st->txlog, &st->txlog_len, txlog_len, "/txlog", "records", err);
}

int cs_store_grow_steplog(cs_store *st, uint64_t len, cs_err *err) {
  if (need_structural(st, err)) return err->code;
  return extend(st->steplog, &st->steplog_len, len, "/steplog", "summaries", err);
}

int cs_store_write_jobs_without_json(cs_store *st, uint64_t first, uint64_t n,
                                     const cs_store_job_row *rows, cs_err *err) {
  if (need_structural(st, err)) return err->code;
  return cs_store_write_job_rows(st, first, n, rows, false, err);
}

int cs_store_write_jobs(cs_store *st, uint64_t first, uint64_t n, const cs_store_job_row *rows,
                        cs_err *err) {
  if (need_structural(st, err)) return err->code;
  return cs_store_write_job_rows(st, first, n, rows, true, err);
}

int cs_store_clear_result(cs_store *st, uint64_t row, cs_err *err) {
  static const cs_store_result_row pending;
  if (need_structural(st, err) || cs_store_check_range("/results row", row, 1, st->rows, err))
    return err->code;
  if (cs_store_write_result_rows(st, row, 1, &pending, err))
    return cs_err_prefix(err, "clearing /results row %llu", (unsigned long long)row);
  return CS_OK;
}

int cs_store_note_sweep(cs_store *st, const char *sweep_name, cs_err *err) {
  if (need_structural(st, err)) return err->code;
  long long count = 0;
  cs_err ignore;
  if (cs_store_attr_read_int(st->file, "sweeps", &count, &ignore)) count = 0;
  if (cs_store_attr_text(st->file, "last_sweep", sweep_name, err) ||
      cs_store_attr_utc_now(st->file, "last_sweep_utc", err) ||
      cs_store_attr_int(st->file, "sweeps", count + 1, err))
    return err->code;
  return CS_OK;
}

int cs_store_flush(cs_store *st, cs_err *err) {
  if (H5Fflush(st->file, H5F_SCOPE_GLOBAL) < 0)
    return cs_store_h5_error(err, CS_EIO, "flushing the store");
  return CS_OK;
}