/* Column tables: one row per column of a record (name, C place, kind, unit, meaning, flags).
 * Every record that leaves the program is described by one such table, and everything that
 * writes a record is generated from it: HDF5 compound types and their unit/description
 * attributes (store), JSON (run, export), JSON lines (transaction logs) and CSV (show).
 * The tables of the model's records are X-macros in model.h; the store's own in store.h. */
#ifndef COMMSWEEP_COLUMNS_H
#define COMMSWEEP_COLUMNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cs_col_kind {
  CS_COL_U64,
  CS_COL_F64,
  CS_COL_U32,
  CS_COL_I32,
  CS_COL_I16,
  CS_COL_U16,
  CS_COL_U8,
  CS_COL_I8,
  CS_COL_STR,    /* fixed-length char array, NUL-terminated unless full */
  CS_COL_KEY,    /* fixed-length 64 hex digits, NUL-padded */
  CS_COL_STATUS, /* int8 enum pending/done/failed (store) */
} cs_col_kind;

enum {
  CS_COL_AGGREGATE = 1u << 0, /* a tbl-cr-09 aggregate: the EngineResult's "aggregates" */
  CS_COL_COUNTER = 1u << 1,   /* a per-transaction back-pressure counter (summed in trace_meta) */
  CS_COL_BOOLEAN = 1u << 2,   /* 0 or 1, written false/true in JSON */
  CS_COL_VOLATILE = 1u << 3,  /* not deterministic (host time): outside checksums and compares */
};

typedef struct cs_col {
  const char *name;
  size_t offset; /* in the row struct */
  cs_col_kind kind;
  size_t size;      /* bytes of a STR/KEY column */
  const char *unit; /* NULL when dimensionless */
  const char *doc;  /* one line */
  unsigned flags;   /* CS_COL_* */
} cs_col;

/* X-macro row helpers: X(ctype, name, dim, kind, unit, flags, doc) becomes a struct member or a
 * table row of struct type S. */
#define CS_COL_MEMBER(ctype, name, dim, kind, unit, flags, doc) ctype name dim;
#define CS_COL_ROW(S, name, kind, unit, flags, doc) \
  {#name, offsetof(S, name), CS_COL_##kind, sizeof(((S *)0)->name), unit, doc, flags},

/* Number of rows of a NULL-name-terminated table. */
size_t cs_cols_count(const cs_col *cols);
/* The column named `name`, or NULL. */
const cs_col *cs_cols_find(const cs_col *cols, const char *name);
/* A numeric column's value as a double (integers above 2^53 round). */
double cs_col_number(const cs_col *c, const void *row);
/* The value as text: integers exact, doubles with 17 significant digits, strings as stored
 * (up to the NUL or the column's size).  Returns bytes needed, like snprintf. */
size_t cs_col_format(const cs_col *c, const void *row, char *buf, size_t cap);

struct cJSON;
/* Adds each column with all `want` flags and none of `skip` to obj, by name. */
void cs_cols_to_json(const cs_col *cols, const void *row, unsigned want, unsigned skip,
                     struct cJSON *obj);
/* One JSON object of every column, on one line without the newline; returns bytes needed. */
size_t cs_cols_json_line(const cs_col *cols, const void *row, char *buf, size_t cap);
/* CSV: the names, and one row's values (strings quoted), comma separated, no newline. */
void cs_cols_csv_header(const cs_col *cols, FILE *f);
void cs_cols_csv_values(const cs_col *cols, const void *row, FILE *f);

#endif
