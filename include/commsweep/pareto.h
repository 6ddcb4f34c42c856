/* Pareto fronts of a result file: which columns to minimise or maximise (objectives), which job
 * columns define a workload (one front per workload and engine), the front of a set of points,
 * and the interval test a refinement selects with (docs/pareto.md).
 *
 * A point p dominates q when p is no worse than q in every objective and better in at least
 * one; the front is the set of points no other point dominates.  Two points equal in every
 * objective dominate neither the other: both are on the front (or both off it).  Internally
 * every objective is minimised: a maximised column enters negated.
 */
#ifndef COMMSWEEP_PARETO_H
#define COMMSWEEP_PARETO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "commsweep/columns.h"
#include "commsweep/engine.h"
#include "commsweep/err.h"
#include "commsweep/model.h"
#include "commsweep/store.h"

struct cJSON;

#define CS_PARETO_MAX_OBJECTIVES 8
#define CS_PARETO_MAX_WORKLOAD 8
#define CS_PARETO_NAME_MAX 48

/* ---- columns --------------------------------------------------------------------------------- */

typedef enum cs_pareto_source {
  CS_PARETO_RESULT,  /* a /results column: what the engine measured */
  CS_PARETO_JOB,     /* a /jobs column: an input of the job */
  CS_PARETO_DERIVED, /* computed from a job's inputs, or from its result (columns.c's table) */
  CS_PARETO_ENGINE,  /* an engine's design column (cs_engine_ops.design_columns) */
} cs_pareto_source;

/* A column as an objective or a workload field resolved it. */
typedef struct cs_pareto_column {
  char name[CS_PARETO_NAME_MAX];
  cs_pareto_source source;
  bool numeric;  /* false: a text column (a workload field only) */
  bool measured; /* depends on the engine's result (a refinement bands it); false: an exact
                  * property of the design */
  const char *unit, *doc;
  cs_col col;                  /* RESULT, JOB: the store column (offset into its row struct) */
  size_t index;                /* DERIVED: row of the table; ENGINE: column of the engine */
  const cs_engine_ops *engine; /* ENGINE */
} cs_pareto_column;

/* Resolves a column by name: a /results column, a /jobs column, a derived column or an
 * engine's design column.  Unknown names, the file's bookkeeping columns (slices, checksums,
 * status) and host-time columns are CS_EINVAL naming the column and the rule. */
int cs_pareto_column_find(const char *name, cs_pareto_column *out, cs_err *err);
/* Every column that can be an objective or a workload field, with its kind and unit. */
void cs_pareto_print_columns(FILE *f);

/* ---- objectives and workloads ------------------------------------------------------------------ */

typedef struct cs_pareto_spec {
  size_t num_objectives;
  cs_pareto_column objective[CS_PARETO_MAX_OBJECTIVES];
  bool maximize[CS_PARETO_MAX_OBJECTIVES];
  size_t num_workload;
  cs_pareto_column workload[CS_PARETO_MAX_WORKLOAD];
} cs_pareto_spec;

/* The workload fields when none are given. */
#define CS_PARETO_DEFAULT_WORKLOAD "primitive,algorithm,msg_size_bytes,num_participants"

/* A sweep file's "pareto" section {"minimize": [...], "maximize": [...], "workload": [...]},
 * strictly: an unknown key, an empty list, a name that is not a string, an unknown or
 * non-numeric objective, a result column as a workload field, a column named twice (as
 * objectives, as workload fields, or as both) is CS_EINVAL naming `where`, the field, the value
 * and the rule.  At least one objective; workload absent: CS_PARETO_DEFAULT_WORKLOAD. */
int cs_pareto_spec_from_json(const struct cJSON *obj, const char *where, cs_pareto_spec *out,
                             cs_err *err);
/* The same from comma-separated lists (the command line); NULL or "" for a list not given. */
int cs_pareto_spec_from_lists(const char *minimize, const char *maximize, const char *workload,
                              cs_pareto_spec *out, cs_err *err);
/* "minimize total_time_us (us), outstanding_sum; workload primitive, msg_size_bytes" */
void cs_pareto_spec_describe(const cs_pareto_spec *s, char *buf, size_t cap);
/* True when some objective is measured (a result column or derived from one). */
bool cs_pareto_spec_measured(const cs_pareto_spec *s);

/* ---- the values of one row ---------------------------------------------------------------------- */

/* One job as the columns read it. */
typedef struct cs_pareto_row {
  const cs_store_job_row *job;    /* its inputs as stored */
  const cs_store_result_row *res; /* its result; NULL: not run (measured columns read NaN) */
  const cs_job *full;             /* the loaded job, or NULL: an engine's design columns load it
                                   * from job->job_json (with that engine's options object) */
} cs_pareto_row;

/* The objectives' values of a row in their natural units (out[num_objectives]); NaN where the
 * row has no value (no result, an engine column of another engine, a layout that is not a
 * shipped one). */
void cs_pareto_values(const cs_pareto_spec *s, const cs_pareto_row *r, double *out);
/* One column's value (NaN as above); for text columns 0. */
double cs_pareto_value(const cs_pareto_column *c, const cs_pareto_row *r);
/* The value as text (numbers with 17 significant digits, integers exact). */
void cs_pareto_format(const cs_pareto_column *c, const cs_pareto_row *r, char *buf, size_t cap);
/* "primitive=allreduce, msg_size_bytes=65536, num_participants=8", or with sep the values
 * alone joined by sep ('\0': the text above). */
void cs_pareto_workload_text(const cs_pareto_spec *s, const cs_pareto_row *r, char sep, char *buf,
                             size_t cap);
/* The minimisation form of natural values: maximised objectives negated. */
void cs_pareto_minimization(const cs_pareto_spec *s, const double *natural, double *out);

/* ---- fronts ------------------------------------------------------------------------------------- */

/* a dominates b (minimisation, m objectives): a <= b everywhere and a < b somewhere. */
bool cs_pareto_dominates(const double *a, const double *b, size_t m);
/* on_front[i] = 1 when no point of v[0 .. n) dominates point i (v: n rows of m values, row
 * major, minimisation form, no NaN). */
void cs_pareto_front(const double *v, size_t n, size_t m, uint8_t *on_front);
/* Non-dominated sorting: layer[i] = 0 for the front, 1 for the front of the rest, ... */
void cs_pareto_layers(const double *v, size_t n, size_t m, uint32_t *layer);
/* Points whose value lies in [lo, hi] (per objective; lo == hi for an exact value; -inf/+inf for
 * an unknown one): certain[q] = 1 when some other point's pessimistic vector hi[p] dominates
 * q's optimistic vector lo[q].  Whatever the true values inside the intervals, such a q is then
 * dominated.  Only points with usable[p] (NULL: all) act as dominators. */
void cs_pareto_certainly_dominated(const double *lo, const double *hi, size_t n, size_t m,
                                   const uint8_t *usable, uint8_t *certain);

/* ---- refinement (docs/pareto.md, "Refinement") ------------------------------------------------ */

/* What a rung's row of a point holds. */
enum { CS_PARETO_ROW_NONE = 0, CS_PARETO_ROW_DONE = 1, CS_PARETO_ROW_FAILED = 2 };

/* One point of the matrix on both rungs: the cheap one (every point) and the expensive one (the
 * points run on it so far).  Design objectives have the same value on both rungs. */
typedef struct cs_pareto_rpoint {
  size_t workload;  /* points of one workload share it */
  int primitive;    /* cs_primitive: the band that applies */
  bool in_study;    /* the expensive job loads and every design objective has a value */
  bool run;         /* selected in an earlier round (its expensive row is expected) */
  uint8_t cheap, exact; /* CS_PARETO_ROW_* of the cheap row and the expensive row */
  double cheap_v[CS_PARETO_MAX_OBJECTIVES], exact_v[CS_PARETO_MAX_OBJECTIVES]; /* natural units */
} cs_pareto_rpoint;

/* The largest relative error of the cheap rung on the points run so far, per primitive
 * (observed[p]; -1 where none was run): |exact - cheap| / |cheap| over the measured objectives
 * of the points done on both rungs (infinite where cheap is 0 and exact is not). */
void cs_pareto_refine_observed(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               double *observed);
/* The points to run next: select[i] = 1 when point i is in the study, not run yet and not
 * certainly dominated within its workload, with each cheap-only value of a measured objective
 * taken as the interval v +/- band[primitive] |v| (unbounded when the cheap row is not done),
 * every other value exact, and points whose expensive row failed acting as no dominator.
 * priority[i] (may be NULL): the layer of point i's cheap values in non-dominated sorting of
 * its workload (0 when it has none), the order a budget takes them in.  Returns the count. */
size_t cs_pareto_refine_select(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               const double *band, uint8_t *select, uint32_t *priority);
/* The expensive front (exact[i]: point i done on the expensive rung and on the front of its
 * workload's expensive rows) and the cheap front (cheap[i]: the same on the cheap rows of the
 * points in the study).  Either may be NULL. */
void cs_pareto_refine_fronts(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                             uint8_t *exact, uint8_t *cheap);
/* The certificate of the expensive front: the smallest, over the points in the study not run
 * (with a done cheap row), of the largest relative error of its cheap measured values under
 * which a point done on the expensive rung still dominates it; per primitive in margin[p]
 * (+inf where no such point), the minimum over all returned.  -inf: some unrun point is
 * dominated by no validated point at any error. */
double cs_pareto_refine_margin(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               double *margin);

/* ---- a file's fronts ---------------------------------------------------------------------------- */

/* Which rows take part (NULL members: any). */
typedef struct cs_pareto_filter {
  const char *engine, *primitive, *sweep;
} cs_pareto_filter;

typedef struct cs_pareto_point {
  uint64_t row;
  size_t group;
  bool on_front;
  double value[CS_PARETO_MAX_OBJECTIVES]; /* natural units */
  char key[CS_STORE_KEY_LEN + 1];
  char design_id[17]; /* the first 16 hex digits of SHA-256 over the job's adapter and spec:
                       * the same design on two engines has the same id */
  char *design;       /* the values of the set's design columns, joined by '\x1f'; owned */
} cs_pareto_point;

typedef struct cs_pareto_group {
  char workload[512];  /* cs_pareto_workload_text */
  char values[512];    /* the workload fields' values alone, joined by '\x1f' */
  char engine[16];
  size_t first, count; /* points[first .. first + count), matrix (row) order */
  size_t on_front;
  uint64_t varying;    /* bit i: design column i of the set differs within the group */
} cs_pareto_group;

#define CS_PARETO_MAX_DESIGN 64

typedef struct cs_pareto_set {
  cs_pareto_spec spec;
  size_t num_design; /* the columns that describe a design (printed where they vary) */
  cs_pareto_column design_col[CS_PARETO_MAX_DESIGN];
  size_t num_points, num_groups;
  cs_pareto_point *points; /* grouped: a group's points are contiguous */
  cs_pareto_group *groups; /* ordered by workload text, then engine */
  uint64_t rows;           /* rows of the file */
  uint64_t filtered;       /* rows the filter left out */
  uint64_t not_done;       /* pending or failed rows */
  uint64_t corrupt;        /* done rows whose checksum does not hold */
  uint64_t missing;        /* done rows without a value for some objective */
} cs_pareto_set;

/* Reads every row of st that passes f, computes the objectives and groups the points by
 * workload and engine, then each group's front. */
int cs_pareto_load(cs_store *st, const cs_pareto_spec *s, const cs_pareto_filter *f,
                   cs_pareto_set *out, cs_err *err);
void cs_pareto_set_free(cs_pareto_set *set); /* accepts NULL and a zeroed set */
/* The columns that describe a design: the /jobs inputs (not the workload's size or the file's
 * bookkeeping) and the engines' design columns; returns how many (at most cap). */
size_t cs_pareto_design_columns(cs_pareto_column *out, size_t cap);
/* Design column i of point p as text ("" when the point has no value for it). */
void cs_pareto_point_design(const cs_pareto_point *p, size_t i, char *buf, size_t cap);
/* Field i of a list joined by '\x1f' (cs_pareto_point.design, cs_pareto_group.values). */
void cs_pareto_field(const char *list, size_t i, char *buf, size_t cap);

#endif
