/* Internals of the sweep module: the parsed (not yet expanded) sweep file. */
#ifndef CS_SWEEP_INT_H
#define CS_SWEEP_INT_H

#include <cjson/cJSON.h>

#include "commsweep/sweep.h"
#include "run_int.h"

/* a network with its size of pod (topology, routing, VCs, grid, participants, endpoint counts,
 * message size) is 9 */
#define CS_SWEEP_MAX_AXIS_FIELDS 12

/* One axis: one field, or several coupled fields set together from one tuple per value. */
typedef struct cs_sweep_axis {
  size_t num_fields;
  bool coupled;                          /* given as "fields": each value is a tuple */
  char *paths[CS_SWEEP_MAX_AXIS_FIELDS]; /* "adapter.num_dies", owned */
  const cJSON *values;                   /* array; borrowed from the document */
  size_t num_values;
} cs_sweep_axis;

typedef struct cs_sweep_def {
  cJSON *doc; /* the whole file, owned */
  char name[CS_SWEEP_NAME_MAX];
  const cJSON *base[3]; /* spec, adapter, engine: borrowed */
  size_t num_axes;
  cs_sweep_axis *axes;
  size_t num_jobs;
  char *warnings; /* lines about the file that do not stop it (repeated axis values); owned */
} cs_sweep_def;

enum { CS_SEC_SPEC, CS_SEC_ADAPTER, CS_SEC_ENGINE };
extern const char *const cs_sweep_sections[3];

int cs_sweep_def_parse(cJSON *doc, const char *source, cs_sweep_def *def, cs_err *err);
/* The "pareto" and "refine" sections of a parsed file, checked (sections.c): the objectives
 * resolved, the refine section's keys and types (its calibration file is read only when a
 * refinement runs).  Either section may be absent. */
int cs_sweep_study_check(const cJSON *doc, cs_err *err);
/* The study of a sweep file's document (its structure checked already): its "pareto" and
 * "refine" sections, the calibration (the command line's, or the section's, relative to path's
 * folder) read (cs_sweep_study_load). */
int cs_sweep_study_read(const cJSON *doc, const char *path, const char *calibration,
                        cs_sweep_study *out, cs_err *err);
void cs_sweep_def_free(cs_sweep_def *def);
/* cs_sweep_load from a parsed document (owned: freed whatever happens); `source` names it. */
int cs_sweep_load_doc(cJSON *doc, const char *source, cs_sweep *out, cs_err *err);
/* cs_sweep_load_mpi from a parsed document (owned), the same on every rank. */
int cs_sweep_load_doc_mpi(cJSON *doc, const char *source, MPI_Comm comm, cs_sweep *out,
                          cs_err *err);
/* The jobs pick[0 .. n) of sw (matrix indices, ascending) as a sweep of their own, with sw's
 * name and base (deep copies). */
/* Expands the matrix into jobs (the def stays owned by the caller). */
int cs_sweep_expand(const cs_sweep_def *def, cs_sweep *out, cs_err *err);
/* The same in parts: allocate every job slot (zeroed), then expand jobs [lo, hi) into it. */
int cs_sweep_alloc(const cs_sweep_def *def, cs_sweep *out, cs_err *err);
int cs_sweep_expand_range(const cs_sweep_def *def, size_t lo, size_t hi, cs_sweep *out,
                          cs_err *err);
/* The base's fault is the file's (docs/sweep-files.md, "Errors of the base"): CS_OK when some
 * job of the expanded sweep loaded or when the base, loaded and validated as a job on its own,
 * is valid (every job then fails because of its axis values: failed rows).  Otherwise the base's
 * own error, naming it, for the caller to report as an error of the file. */
int cs_sweep_check_base(const cs_sweep_def *def, const cs_sweep *sw, cs_err *err);
/* The same into a caller's array of hi - lo zeroed jobs: job i goes to into[i - lo]. */
int cs_sweep_expand_into(const cs_sweep_def *def, size_t lo, size_t hi, cs_sweep_job *into,
                         cs_err *err);

/* The canonical text of a cJSON value (malloc'ed; NULL when out of memory). */
char *cs_sweep_canonical_text(const cJSON *v);
/* The canonical JSON of the base, {"adapter":...,"engine":...,"spec":...}: the dictionary every
 * job's JSON is deflated against (malloc'ed; NULL when out of memory). */
char *cs_sweep_base_json(const cs_sweep_def *def);
/* Deflates job texts against a dictionary (the base's JSON, borrowed), one stream reused. */
typedef struct cs_sweep_zip {
  void *stream; /* z_stream */
  const char *dict;
  size_t dict_len;
} cs_sweep_zip;
int cs_sweep_zip_init(cs_sweep_zip *zp, const char *dict);
/* Sets j->json_z, json_z_len and json_len from json. */
int cs_sweep_zip_put(cs_sweep_zip *zp, const char *json, cs_sweep_job *j);
void cs_sweep_zip_end(cs_sweep_zip *zp);

/* A growing byte buffer (messages between ranks). */
typedef struct cs_sweep_buf {
  unsigned char *data;
  size_t len, cap;
} cs_sweep_buf;
/* Appends n bytes; CS_ENOMEM when it cannot grow. */
int cs_sweep_buf_put(cs_sweep_buf *b, const void *p, size_t n);

/* The end of the run of items[0 .. n) that share item i's share group (plan.c; items of a group
 * stand together): i + 1 when it has none. */
size_t cs_sweep_group_end(const cs_sweep_item *items, size_t n, size_t i);

/* Items per grant at most (schedule.c): cheap jobs (a closed-form engine: ~50 us) come in ranges
 * long enough that a worker never waits for rank 0's next look at its requests; a worker's
 * receive buffers are sized for it. */
#define CS_SWEEP_MAX_GRANT 512
/* The items of the next grant from items[0 .. n): at least min_k and while their cost stays
 * within target, then the rest of the last one's share group; at most CS_SWEEP_MAX_GRANT.  *cost
 * is their cost. */
size_t cs_sweep_grant_len(const cs_sweep_item *items, size_t n, double target, size_t min_k,
                          double *cost);

/* The cheap rung of a refinement (rung.c): the sweep file's document with base.engine replaced
 * by `engine` (a calibration's), the options objects of other engines kept (so axes into them
 * still apply), the pareto and refine sections dropped.  An axis over engine.name or into the
 * cheap engine's own options is CS_EINVAL naming the axis. */
int cs_sweep_cheap_doc(const char *path, const cJSON *engine, cJSON **out, cs_err *err);

/* "SIGINT", "SIGTERM", "SIGHUP" or "a signal", for messages. */
const char *cs_sweep_signal_name(int sig);

/* Waits for an MPI request, sleeping 0.2 ms between tests (schedule.c): a blocking MPI call
 * polls at full speed and burns a core while its rank only waits (e.g. for rank 0's layout). */
void cs_sweep_wait_sleeping(MPI_Request *req, MPI_Status *status);

#endif
