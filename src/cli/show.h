/* Internals of `commsweep show` shared by its files: the filters (show_filter.c) and the design
 * columns that tell the rows shown apart (show_columns.c); cmd_show.c reads the file and prints.
 * Invariant: a filter and a column name /jobs columns (cs_store_job_columns) by name, so a new
 * /jobs column can be filtered on and shown without a change here. */
#ifndef CS_CLI_SHOW_H
#define CS_CLI_SHOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "commsweep/columns.h"
#include "commsweep/store.h"

#define SHOW_MAX_FILTERS 32
#define SHOW_MAX_VALUES 16 /* values of one filter (repeated --where on one column: any of them) */
#define SHOW_SEEN 12       /* distinct values of a filter's column kept for the explanation */

/* The distinct values a column takes in the file, for "no row has ...: the values are ...". */
typedef struct show_seen {
  char value[SHOW_SEEN][72];
  size_t n;        /* kept */
  bool more;       /* some were not kept */
} show_seen;

typedef enum show_kind {
  SHOW_EQ,       /* the column equals one of values[] (text, or numerically) */
  SHOW_RANGE,    /* lo <= the column <= hi (numeric) */
  SHOW_TOPOLOGY, /* the network names it (its whole text or a word of it) */
  SHOW_STATUS,   /* the result's status */
} show_kind;

typedef struct show_filter {
  char label[192];  /* as given: "--primitive alltoall", "--where burst_length=8" */
  show_kind kind;
  const cs_col *col; /* SHOW_EQ, SHOW_RANGE: the /jobs column */
  const char *values[SHOW_MAX_VALUES];
  double numbers[SHOW_MAX_VALUES]; /* values[] as numbers, for a numeric column */
  size_t nvalues;
  double lo, hi;    /* SHOW_RANGE */
  int status;       /* SHOW_STATUS */
  uint64_t matched; /* rows of the file this filter alone lets through */
  show_seen seen;   /* values of its column in the file */
} show_filter;

typedef struct show_filters {
  cs_col cols[CS_STORE_MAX_COLUMNS]; /* /jobs columns, that filters point into */
  show_filter f[SHOW_MAX_FILTERS];
  size_t n;
} show_filters;

/* Parsing: each adds one filter or a value to an existing one; 2 (a usage error, printed) when
 * the option's value does not fit its column. */
void show_filters_init(show_filters *fs);
int show_filter_add(show_filters *fs, const char *option, const char *value);
/* True when the row passes every filter; counts, for each filter, whether it alone passes it
 * and notes the values its column takes (for show_filters_explain). */
bool show_filters_match(show_filters *fs, const cs_store_job_row *job, int status);
/* Why no row was shown: the filters that match no row of the file with the values their
 * columns take, or that each matches rows but not all of them together. */
void show_filters_explain(const show_filters *fs, uint64_t rows, FILE *out);

/* ---- columns -------------------------------------------------------------------------------- */

/* A /jobs value as the table shows it: text as stored, integers exact, doubles with %g. */
void show_value(const cs_col *c, const void *row, char *buf, size_t cap);
/* Bytes of an element of the dtype ("bf16": 2), 0 when unknown. */
int show_dtype_bytes(const char *dtype);

#define SHOW_MAX_DESIGN 20
#define SHOW_MAX_EXTRA 4 /* inputs outside /jobs that tell rows apart (a /job_json path each) */

typedef struct show_cols {
  cs_col jobs[CS_STORE_MAX_COLUMNS];
  const cs_col *member[SHOW_MAX_DESIGN][4]; /* the /jobs columns of each design column */
  bool chosen;                     /* --columns given: shown[] is the user's, not the variation */
  bool shown[SHOW_MAX_DESIGN];
  bool varies[SHOW_MAX_DESIGN];
  int width[SHOW_MAX_DESIGN];
  uint64_t rows;                   /* rows seen (show_cols_add) */
  bool all_networks;               /* every row seen has a network (schema 6) */
  cs_store_job_row *first;         /* the first row seen, to compare the others with */
  /* rows seen whose design columns are all equal but whose keys differ: they differ in an
   * input outside /jobs; show_cols_resolve reads their /job_json to find which */
  uint64_t *hash_row;              /* per row seen: hash of its design columns, key hash, row */
  size_t nhash, cap_hash;
  char extra[SHOW_MAX_EXTRA][96];  /* those inputs' /job_json paths ("engine.vcnet.routing") */
  int extra_width[SHOW_MAX_EXTRA];
  size_t nextra;
  bool more_extra;                 /* more differed than fit */
  bool key;                        /* rows differ in nothing but the key (a model version) */
} show_cols;

/* Fails (2, printed) for an unknown name in a --columns list ("all": every design column). */
int show_cols_init(show_cols *c, const char *list);
void show_cols_free(show_cols *c);
/* Notes one row that will be shown (variation, widths, collisions; a row whose job did not load
 * has no inputs and is left out).  false: out of memory. */
bool show_cols_add(show_cols *c, uint64_t row, const cs_store_job_row *job);
/* After the last row: decides the columns; reads the /job_json rows of colliding rows to find
 * the inputs that tell them apart.  CS_OK or the read's error. */
int show_cols_resolve(show_cols *c, cs_store *st, cs_err *err);
/* True when printing needs each row's /job_json (show_cols_row's json). */
bool show_cols_need_json(const show_cols *c);
/* "# every row shown has COLUMN=VALUE ..." for the design columns not shown (and notes on what
 * tells rows apart); then line 0 (names) or 1 (units) of the design part of the header; then one
 * row's design cells, json being the row's /job_json text (NULL unless show_cols_need_json). */
void show_cols_constants(const show_cols *c, FILE *out);
void show_cols_header(const show_cols *c, int line, FILE *out);
void show_cols_row(const show_cols *c, const cs_store_job_row *job, const char *json, FILE *out);

#endif
