/* The file's schema: the column lists of /jobs, /results and /txlog (and of the string datasets
 * /job_json and /errors), built from the one table of
 * each record (model.h: transaction record and EngineResult, with the engines' extra columns;
 * store.h: job row) plus the store's own bookkeeping columns.  The HDF5 compound types and the
 * unit/description attributes follow these lists; the memory layout of each row struct *is*
 * the file layout, so the write path never converts. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "commsweep/engine.h"
#include "store_format.h"

#define JOB_ROW_(ctype, name, dim, kind, unit, flags, doc) \
  CS_COL_ROW(cs_store_job_row, name, kind, unit, flags, doc)
static const cs_col job_cols[] = {CS_STORE_JOB_COLUMNS(JOB_ROW_){NULL, 0, 0, 0, NULL, NULL, 0}};
#undef JOB_ROW_

#define R cs_store_result_row
static const cs_col result_head[] = {
    {"status", offsetof(R, status), CS_COL_STATUS, 1, NULL, "pending | done | failed", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};
static const cs_col result_tail[] = {
    {"txlog_offset", offsetof(R, txlog_offset), CS_COL_U64, 8, "record", "first /txlog record of the job", 0},
    {"txlog_count", offsetof(R, txlog_count), CS_COL_U64, 8, "record",
     "records of the job in /txlog (0 unless its txlog_detail is 2)", 0},
    {"steplog_offset", offsetof(R, steplog_offset), CS_COL_U64, 8, "summary",
     "first /steplog summary of the job", 0},
    {"steplog_count", offsetof(R, steplog_count), CS_COL_U64, 8, "summary",
     "per-step summaries of the job in /steplog (num_steps; 0 without log)", 0},
    {"txlog_detail", offsetof(R, txlog_detail), CS_COL_U8, 1, NULL,
     "what the row's log holds: 0 nothing (results only), 1 per-step summaries (/steplog), "
     "2 every record (/txlog) and the summaries", 0},
    {"txlog_checksum", offsetof(R, txlog_checksum), CS_COL_U64, 8, NULL,
     "XXH64 of the job's /txlog slice (seed: row); 0 when empty", 0},
    {"steplog_checksum", offsetof(R, steplog_checksum), CS_COL_U64, 8, NULL,
     "XXH64 of the job's /steplog slice (seed: row); 0 when empty", 0},
    {"checksum", offsetof(R, checksum), CS_COL_U64, 8, NULL,
     "XXH64 over row index, key and every other column but wall_time_s", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};
#undef R

/* Appends the rows of `cols`, shifted by `offset`, to out[*n..cap-1]. */
static void append(cs_col *out, size_t *n, size_t cap, const cs_col *cols, size_t offset) {
  for (; cols->name && *n + 1 < cap; cols++) {
    out[*n] = *cols;
    out[(*n)++].offset += offset;
  }
  out[*n] = (cs_col){NULL, 0, 0, 0, NULL, NULL, 0};
}

size_t cs_store_job_columns(cs_col *out, size_t cap) {
  size_t n = 0;
  append(out, &n, cap, job_cols, 0);
  return n;
}

size_t cs_store_result_columns(cs_engine_set engines, cs_col *out, size_t cap) {
  size_t n = 0, base = offsetof(cs_store_result_row, result);
  append(out, &n, cap, result_head, 0);
  append(out, &n, cap, cs_result_cols, base);
  n += cs_engine_result_columns(engines, base, out + n, cap - n);
  append(out, &n, cap, result_tail, 0);
  return n;
}

static const cs_col job_json_col[] = {
    {"job_json", offsetof(cs_store_job_row, job_json), CS_COL_STR, CS_STORE_JSON_LEN, NULL,
     "canonical JSON of the job's inputs: {adapter, engine, spec}", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};
static const cs_col error_col[] = {
    {"error", offsetof(cs_store_result_row, error), CS_COL_STR, CS_STORE_ERROR_LEN, NULL,
     "error message of a failed job (empty in every other row)", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

size_t cs_store_job_json_columns(cs_col *out, size_t cap) {
  size_t n = 0;
  append(out, &n, cap, job_json_col, 0);
  return n;
}

size_t cs_store_error_columns(cs_col *out, size_t cap) {
  size_t n = 0;
  append(out, &n, cap, error_col, 0);
  return n;
}

size_t cs_store_txn_columns(cs_engine_set engines, cs_col *out, size_t cap) {
  static const cs_col job[] = {
      {"job", 0, CS_COL_U64, 8, NULL, "row of /jobs and /results the record belongs to", 0},
      {NULL, 0, 0, 0, NULL, NULL, 0}};
  size_t n = 0;
  append(out, &n, cap, job, 0);
  append(out, &n, cap, cs_txn_record_cols, offsetof(cs_store_txn_row, rec));
  n += cs_engine_record_columns(engines, offsetof(cs_store_txn_row, rec), out + n, cap - n);
  return n;
}

size_t cs_store_step_columns(cs_col *out, size_t cap) {
  static const cs_col job[] = {
      {"job", 0, CS_COL_U64, 8, NULL, "row of /jobs and /results the summary belongs to", 0},
      {NULL, 0, 0, 0, NULL, NULL, 0}};
  size_t n = 0;
  append(out, &n, cap, job, 0);
  append(out, &n, cap, cs_step_summary_cols, offsetof(cs_store_step_row, sum));
  return n;
}

/* Padding is explicit in every row struct, so the bytes the checksum covers are all defined. */
_Static_assert(sizeof(cs_store_result_row) == 1384, "result row layout changed");
_Static_assert(sizeof(cs_store_txn_row) == 208, "txlog row layout changed");
_Static_assert(sizeof(cs_store_step_row) == 152, "steplog row layout changed");
_Static_assert(sizeof(cs_store_job_row) == 4760, "job row layout changed");
/* the text that lives in /job_json and /errors comes last: the bytes before it are the table row */
_Static_assert(offsetof(cs_store_job_row, job_json) == 660, "job row layout changed");
_Static_assert(offsetof(cs_store_result_row, error) == 360, "result row layout changed");

static hid_t status_type(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
  const char *names[] = {"pending", "done", "failed"};
  for (int8_t v = 0; v < 3; v++) H5Tenum_insert(t, names[v], &v);
  return t;
}

static hid_t member_type(const cs_col *c) {
  switch (c->kind) {
    case CS_COL_I8: return H5Tcopy(H5T_NATIVE_INT8);
    case CS_COL_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case CS_COL_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case CS_COL_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case CS_COL_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case CS_COL_I16: return H5Tcopy(H5T_NATIVE_INT16);
    case CS_COL_U16: return H5Tcopy(H5T_NATIVE_UINT16);
    case CS_COL_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    case CS_COL_STATUS: return status_type();
    case CS_COL_STR:
    case CS_COL_KEY: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, c->size);
      H5Tset_strpad(t, c->kind == CS_COL_KEY ? H5T_STR_NULLPAD : H5T_STR_NULLTERM);
      return t;
    }
  }
  return H5I_INVALID_HID;
}

hid_t cs_store_text_type(size_t size) {
  const cs_col c = {"text", 0, CS_COL_STR, size, NULL, "", 0};
  return member_type(&c);
}

hid_t cs_store_type_create(const cs_col *cols, size_t struct_size) {
  hid_t t = H5Tcreate(H5T_COMPOUND, struct_size);
  if (t < 0) return t;
  for (const cs_col *c = cols; c->name; c++) {
    hid_t m = member_type(c);
    herr_t rc = m < 0 ? -1 : H5Tinsert(t, c->name, c->offset, m);
    if (m >= 0) H5Tclose(m);
    if (rc < 0) {
      H5Tclose(t);
      return H5I_INVALID_HID;
    }
  }
  return t;
}

int cs_store_type_describe(hid_t dset, const cs_col *cols, const char *what, cs_err *err) {
  if (cs_store_attr_text(dset, "description", what, err)) return err->code;
  char name[96];
  for (const cs_col *c = cols; c->name; c++) {
    snprintf(name, sizeof name, "%s.description", c->name);
    if (cs_store_attr_text(dset, name, c->doc, err)) return err->code;
    if (!c->unit) continue;
    snprintf(name, sizeof name, "%s.unit", c->name);
    if (cs_store_attr_text(dset, name, c->unit, err)) return err->code;
  }
  return CS_OK;
}
