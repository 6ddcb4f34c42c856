/* cs_sweep_refine: a multi-fidelity refinement of a sweep file's Pareto fronts (docs/pareto.md).
 * Round 0 runs the whole matrix on the cheap rung (the calibration's engine); each later round
 * selects, workload by workload, the points not certainly dominated given the cheap rung's
 * error band, and runs those not run yet on the expensive rung (the sweep's own engine), until
 * nothing new is selected, the job budget is spent or max_rounds is reached.
 *
 * Every round is an ordinary sweep of a subset of the matrix into the same file, so every job
 * is a cached row.  A round's selection depends only on the cheap rows and on the expensive rows
 * of the points earlier rounds selected, never on other rows of the file, so a resumed or
 * repeated refinement selects exactly what the first one did (and reruns nothing done).  Rank 0
 * decides; every rank takes part in every round's sweep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/hash.h"
#include "commsweep/store.h"
#include "keymap.h"
#include "sweep_int.h"

#define BLOCK 1024

typedef struct refiner {
  const cs_sweep_options *opt;
  FILE *out;
  cs_sweep_study study;
  cs_sweep exp, cheap;     /* rank 0: both rungs, matrix order */
  size_t n;                /* matrix points */
  cs_pareto_rpoint *pts;   /* rank 0 */
  size_t num_workloads;
  char (*workload)[512];   /* workload texts by id */
  size_t *slot, slots;     /* workload_id's table */
  double band[CS_PRIM_COUNT];
  uint8_t *front;          /* the expensive front at the last read */
  char cheap_engine[16], exp_engine[16];
  unsigned rounds;         /* expensive rounds run */
  uint64_t ran, cached;    /* expensive jobs over the rounds */
} refiner;

/* ---- the points ----------------------------------------------------------------------------- */

/* Point i's inputs as the columns read them: the expensive job (both rungs share the design). */
static int point_job(const refiner *r, size_t i, cs_job *job, cs_store_job_row *row, cs_err *err) {
  if (cs_sweep_job_get(&r->exp.jobs[i], job, err)) return err->code;
  memset(row, 0, sizeof *row);
  cs_store_job_from(job, row);
  row->expected_transactions = r->exp.jobs[i].num_txns;
  row->num_steps = (int32_t)r->exp.jobs[i].num_steps;
  return CS_OK;
}

/* FNV-1a from a basis of its own (the ids it gives are internal to a refinement) */
static uint64_t text_hash(const char *text) { return cs_fnv1a_text(1469598103934665603ULL, text); }

/* The id of a workload text, a new one for a text not seen yet: an open-addressing table of
 * ids (id + 1; 0 empty) by text hash, grown at half full.  SIZE_MAX when out of memory. */
static size_t workload_id(refiner *r, const char *text) {
  if (2 * (r->num_workloads + 1) > r->slots) {
    size_t cap = r->slots ? 2 * r->slots : 64;
    size_t *slot = calloc(cap, sizeof *slot);
    char(*names)[512] = realloc(r->workload, cap / 2 * sizeof *names);
    if (!slot || !names) {
      free(slot);
      if (names) r->workload = names;
      return SIZE_MAX;
    }
    r->workload = names;
    free(r->slot);
    r->slot = slot;
    r->slots = cap;
    for (size_t w = 0; w < r->num_workloads; w++) { /* rehash */
      size_t at = text_hash(r->workload[w]) & (cap - 1);
      while (slot[at]) at = (at + 1) & (cap - 1);
      slot[at] = w + 1;
    }
  }
  size_t at = text_hash(text) & (r->slots - 1);
  for (; r->slot[at]; at = (at + 1) & (r->slots - 1))
    if (!strcmp(r->workload[r->slot[at] - 1], text)) return r->slot[at] - 1;
  snprintf(r->workload[r->num_workloads], sizeof r->workload[0], "%s", text);
  r->slot[at] = r->num_workloads + 1;
  return r->num_workloads++;
}

/* The static part of every point: workload, primitive, design values, whether it is in the
 * study; and the bands every primitive of the study needs. */
static int setup_points(refiner *r, cs_err *err) {
  const cs_pareto_spec *s = &r->study.pareto;
  r->n = r->exp.num_jobs;
  if (r->cheap.num_jobs != r->n)
    return cs_err_set(err, CS_EINTERNAL, "the rungs have %zu and %zu jobs", r->n, r->cheap.num_jobs);
  r->pts = calloc(r->n ? r->n : 1, sizeof *r->pts);
  r->front = calloc(r->n ? r->n : 1, 1);
  cs_job *job = malloc(sizeof *job);
  cs_store_job_row *row = malloc(sizeof *row);
  int rc = r->pts && r->front && job && row
               ? CS_OK
               : cs_err_set(err, CS_ENOMEM, "%zu points: out of memory", r->n);
  for (size_t i = 0; !rc && i < r->n; i++) {
    cs_pareto_rpoint *p = &r->pts[i];
    p->primitive = -1;
    if (r->exp.jobs[i].load_code) continue; /* a failed row on both rungs: out of the study */
    if ((rc = point_job(r, i, job, row, err))) break;
    if (!r->exp_engine[0]) snprintf(r->exp_engine, sizeof r->exp_engine, "%s", job->engine.name);
    char text[512];
    cs_pareto_row pr = {row, NULL, job};
    cs_pareto_workload_text(s, &pr, '\0', text, sizeof text);
    if ((p->workload = workload_id(r, text)) == SIZE_MAX) {
      rc = cs_err_set(err, CS_ENOMEM, "%zu workloads: out of memory", r->num_workloads);
      break;
    }
    p->primitive = (int)job->spec.primitive;
    p->in_study = true;
    for (size_t k = 0; k < s->num_objectives; k++) {
      p->cheap_v[k] = p->exact_v[k] = NAN;
      if (s->objective[k].measured) continue;
      p->cheap_v[k] = p->exact_v[k] = cs_pareto_value(&s->objective[k], &pr);
      if (isnan(p->cheap_v[k])) p->in_study = false;
    }
    if (p->in_study && r->study.refine.band[p->primitive] < 0)
      rc = cs_err_set(err, CS_EINVAL, "%s: band: no value for primitive '%s' (the sweep has %s "
                      "jobs)", r->study.refine.source, cs_primitive_name(job->spec.primitive),
                      cs_primitive_name(job->spec.primitive));
  }
  free(job);
  free(row);
  memcpy(r->band, r->study.refine.band, sizeof r->band);
  return rc;
}

/* ---- reading the file ------------------------------------------------------------------------ */

typedef struct want {
  uint64_t row;
  size_t point;
  bool exact; /* the expensive rung's row */
} want;

static int by_row(const void *a, const void *b) {
  const want *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* One row into its point: status and measured values (a row whose checksum fails counts as not
 * there: the next sweep of it reruns it). */
static int take_row(refiner *r, const want *w, const cs_store_index_row *index,
                    const cs_store_result_row *res, cs_job *job, cs_store_job_row *row,
                    cs_err *err) {
  cs_pareto_rpoint *p = &r->pts[w->point];
  uint8_t *status = w->exact ? &p->exact : &p->cheap;
  double *v = w->exact ? p->exact_v : p->cheap_v;
  *status = CS_PARETO_ROW_NONE;
  if (res->status == CS_STORE_FAILED) *status = CS_PARETO_ROW_FAILED;
  if (res->status != CS_STORE_DONE ||
      res->checksum != cs_store_row_checksum(w->row, index[w->row].key, res))
    return CS_OK;
  if (point_job(r, w->point, job, row, err)) return err->code;
  cs_pareto_row pr = {row, res, job};
  const cs_pareto_spec *s = &r->study.pareto;
  *status = CS_PARETO_ROW_DONE;
  for (size_t k = 0; k < s->num_objectives; k++)
    if (s->objective[k].measured) {
      v[k] = cs_pareto_value(&s->objective[k], &pr);
      if (isnan(v[k])) *status = CS_PARETO_ROW_FAILED; /* done, but without a value: no point */
    }
  return CS_OK;
}

static int read_rows(refiner *r, cs_store *st, want *wants, size_t nw, cs_store_index_row *index,
                     cs_err *err) {
  cs_store_result_row *res = malloc(BLOCK * sizeof *res);
  cs_job *job = malloc(sizeof *job);
  cs_store_job_row *row = malloc(sizeof *row);
  int rc = res && job && row ? CS_OK : cs_err_set(err, CS_ENOMEM, "out of memory");
  static const char *const no_error[] = {"error", NULL};
  for (size_t a = 0; !rc && a < nw;) {
    uint64_t first = wants[a].row, rows = cs_store_num_rows(st);
    uint64_t b = rows - first < BLOCK ? rows - first : BLOCK;
    memset(res, 0, b * sizeof *res);
    if ((rc = cs_store_read_rows_without(st, false, no_error, first, b, res, err))) break;
    for (; !rc && a < nw && wants[a].row < first + b; a++)
      rc = take_row(r, &wants[a], index, &res[wants[a].row - first], job, row, err);
  }
  free(res);
  free(job);
  free(row);
  return rc;
}

/* The rows of every point: its cheap row, and its expensive row when it was selected. */
static int read_state(refiner *r, cs_err *err) {
  cs_store *st = NULL;
  int rc = cs_store_open(r->opt->out_path, CS_STORE_READ, &st, err);
  uint64_t rows = rc ? 0 : cs_store_num_rows(st);
  cs_store_index_row *index = rc ? NULL : malloc((rows ? rows : 1) * sizeof *index);
  want *wants = rc ? NULL : malloc((2 * r->n + 1) * sizeof *wants);
  cs_keymap map = {0};
  if (!rc && (!index || !wants || cs_keymap_init(&map, rows, index)))
    rc = cs_err_set(err, CS_ENOMEM, "reading %llu rows: out of memory", (unsigned long long)rows);
  if (!rc) rc = cs_store_read_index(st, 0, rows, index, err);
  size_t nw = 0;
  for (uint64_t i = 0; !rc && i < rows; i++) cs_keymap_add(&map, i);
  for (size_t i = 0; !rc && i < r->n; i++) {
    cs_pareto_rpoint *p = &r->pts[i];
    p->cheap = p->exact = CS_PARETO_ROW_NONE;
    uint64_t c = cs_keymap_find(&map, r->cheap.jobs[i].key);
    uint64_t e = p->run ? cs_keymap_find(&map, r->exp.jobs[i].key) : UINT64_MAX;
    if (p->in_study && c != UINT64_MAX) wants[nw++] = (want){c, i, false};
    if (p->in_study && e != UINT64_MAX) wants[nw++] = (want){e, i, true};
  }
  if (!rc) {
    qsort(wants, nw, sizeof *wants, by_row);
    rc = read_rows(r, st, wants, nw, index, err);
  }
  cs_keymap_free(&map);
  free(index);
  free(wants);
  cs_store_close(st, NULL);
  return rc ? cs_err_prefix(err, "refine: reading '%s'", r->opt->out_path) : CS_OK;
}

/* ---- one round's decision --------------------------------------------------------------------- */

/* The expensive jobs' keys as a set: point i stands for its expensive key. */
typedef struct key_set {
  cs_store_index_row *keys; /* keys[i].key: point i's expensive key */
  cs_keymap map;
  size_t distinct;
} key_set;

static int key_set_init(key_set *k, const refiner *r) {
  memset(k, 0, sizeof *k);
  k->keys = calloc(r->n ? r->n : 1, sizeof *k->keys);
  if (!k->keys || cs_keymap_init(&k->map, r->n, k->keys)) {
    free(k->keys);
    return CS_ENOMEM;
  }
  for (size_t i = 0; i < r->n; i++) memcpy(k->keys[i].key, r->exp.jobs[i].key, CS_STORE_KEY_LEN);
  return CS_OK;
}

/* Adds point i's key; true when it was not in the set yet. */
static bool key_set_add(key_set *k, size_t i) {
  bool fresh = cs_keymap_add(&k->map, i) == i;
  k->distinct += fresh;
  return fresh;
}

static bool key_set_has(const key_set *k, size_t i) {
  return cs_keymap_find(&k->map, k->keys[i].key) != UINT64_MAX;
}

static void key_set_free(key_set *k) {
  cs_keymap_free(&k->map);
  free(k->keys);
}

/* Distinct expensive jobs of the points run so far (SIZE_MAX when out of memory). */
static size_t distinct_run(const refiner *r) {
  key_set k;
  if (key_set_init(&k, r)) return SIZE_MAX;
  for (size_t i = 0; i < r->n; i++)
    if (r->pts[i].run) key_set_add(&k, i);
  size_t d = k.distinct;
  key_set_free(&k);
  return d;
}

/* A point selected to run, in the order a budget takes them: cheap layer, workload, index. */
typedef struct cand {
  uint32_t layer;
  size_t workload, index;
} cand;

static int by_priority(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->layer != y->layer) return x->layer < y->layer ? -1 : 1;
  if (x->workload != y->workload) return x->workload < y->workload ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Keeps the selected points, in priority order, while the distinct expensive jobs (of the points
 * run so far and those kept) stay within max_jobs; a point whose job is already counted costs
 * nothing.  Returns how many were dropped. */
static size_t apply_budget(const refiner *r, uint8_t *select, const uint32_t *priority) {
  uint64_t max = r->study.refine.max_jobs;
  if (!max) return 0;
  size_t nc = 0, dropped = 0;
  cand *c = malloc((r->n ? r->n : 1) * sizeof *c);
  key_set k;
  bool ok = c && !key_set_init(&k, r);
  for (size_t i = 0; ok && i < r->n; i++) {
    if (r->pts[i].run) key_set_add(&k, i);
    if (select[i]) c[nc++] = (cand){priority[i], r->pts[i].workload, i};
  }
  if (ok) qsort(c, nc, sizeof *c, by_priority);
  for (size_t a = 0; ok && a < nc; a++) {
    size_t i = c[a].index;
    if (key_set_has(&k, i) || k.distinct < max) key_set_add(&k, i);
    else {
      select[i] = 0;
      dropped++;
    }
  }
  if (ok) key_set_free(&k);
  for (size_t i = 0; !ok && i < r->n; i++) { /* out of memory: run nothing new, never overspend */
    dropped += select[i];
    select[i] = 0;
  }
  free(c);
  return dropped;
}

static void print_band(FILE *out, const char *what, const double *band, const refiner *r) {
  bool used[CS_PRIM_COUNT] = {false};
  for (size_t i = 0; i < r->n; i++)
    if (r->pts[i].in_study) used[r->pts[i].primitive] = true;
  fprintf(out, "  %s:", what);
  for (int p = 0; p < CS_PRIM_COUNT; p++)
    if (used[p]) {
      if (band[p] < 0) fprintf(out, " %s -", cs_primitive_name((cs_primitive)p));
      else fprintf(out, " %s %.2f%%", cs_primitive_name((cs_primitive)p), 100 * band[p]);
    }
  fputc('\n', out);
}

/* How the expensive front moved since the last read. */
static void report_front(refiner *r, unsigned round) {
  uint8_t *now = malloc(r->n ? r->n : 1);
  if (!now) return;
  cs_pareto_refine_fronts(&r->study.pareto, r->pts, r->n, now, NULL);
  size_t size = 0, added = 0, removed = 0;
  for (size_t i = 0; i < r->n; i++) {
    size += now[i];
    added += now[i] && !r->front[i];
    removed += r->front[i] && !now[i];
  }
  fprintf(r->out, "refine round %u: the %s front holds %zu points (%zu new, %zu dropped)\n", round,
          r->exp_engine, size, added, removed);
  memcpy(r->front, now, r->n);
  free(now);
}

/* Rank 0: the points to run in round `round` into pick (matrix order); *n_pick their count, 0
 * when the refinement ends (*why says why). */
static int decide(refiner *r, unsigned round, size_t *pick, size_t *n_pick, const char **why,
                  cs_err *err) {
  *n_pick = 0;
  if (read_state(r, err)) return err->code;
  if (round > 1) report_front(r, round - 1);
  if (r->study.refine.widen_band) {
    double seen[CS_PRIM_COUNT];
    cs_pareto_refine_observed(&r->study.pareto, r->pts, r->n, seen);
    for (int p = 0; p < CS_PRIM_COUNT; p++)
      if (seen[p] > r->band[p] && r->band[p] >= 0) r->band[p] = seen[p];
    if (round > 1) print_band(r->out, "largest error observed so far", seen, r);
  }
  uint8_t *select = malloc(r->n ? r->n : 1);
  uint32_t *priority = malloc((r->n ? r->n : 1) * sizeof *priority);
  if (!select || !priority) {
    free(select);
    free(priority);
    return cs_err_set(err, CS_ENOMEM, "refine: out of memory");
  }
  size_t may = cs_pareto_refine_select(&r->study.pareto, r->pts, r->n, r->band, select, priority);
  size_t dropped = apply_budget(r, select, priority);
  size_t in_study = 0;
  for (size_t i = 0; i < r->n; i++) in_study += r->pts[i].in_study;
  for (size_t i = 0; i < r->n; i++)
    if (select[i]) pick[(*n_pick)++] = i;
  if (round > r->study.refine.max_rounds && *n_pick) {
    *why = "max_rounds reached";
    *n_pick = 0;
  } else if (!*n_pick) {
    *why = may ? "the budget of expensive jobs is spent" : "converged: nothing new can be on the front";
  } else {
    fprintf(r->out, "refine round %u: %zu points not run may be on the front (of %zu in the "
            "study); running %zu on %s\n", round, may, in_study, *n_pick, r->exp_engine);
    print_band(r->out, "band", r->band, r);
    if (dropped)
      fprintf(r->out, "  budget: %zu of them left out (max_jobs %llu)\n", dropped,
              (unsigned long long)r->study.refine.max_jobs);
    for (size_t a = 0; a < *n_pick; a++) r->pts[pick[a]].run = true;
  }
  free(select);
  free(priority);
  return CS_OK;
}

/* ---- the closing report ---------------------------------------------------------------------- */

static void report_end(refiner *r, const char *why) {
  const cs_pareto_spec *s = &r->study.pareto;
  uint8_t *exact = malloc(r->n ? r->n : 1), *cheap = malloc(r->n ? r->n : 1);
  if (!exact || !cheap) {
    free(exact);
    free(cheap);
    return;
  }
  cs_pareto_refine_fronts(s, r->pts, r->n, exact, cheap);
  size_t in_study = 0, run = 0;
  for (size_t i = 0; i < r->n; i++) {
    in_study += r->pts[i].in_study;
    run += r->pts[i].run;
  }
  size_t distinct = distinct_run(r);
  fprintf(r->out, "refine '%s': %s after %u round%s\n", r->exp.name, why, r->rounds,
          r->rounds == 1 ? "" : "s");
  fprintf(r->out, "  %s (expensive): %zu distinct jobs for %zu of %zu points in the study "
          "(%.1f%%); %llu ran, %llu were cached\n", r->exp_engine, distinct, run, in_study,
          in_study ? 100.0 * (double)run / (double)in_study : 0.0, (unsigned long long)r->ran,
          (unsigned long long)r->cached);
  fprintf(r->out, "  %s (cheap): the whole matrix, %zu points\n", r->cheap_engine, r->n);
  fprintf(r->out, "  %-4s %6s %7s %7s %5s %5s %5s %7s  workload\n", "", "points", "cheap", r->exp_engine,
          "held", "fell", "new", "unrun");
  fprintf(r->out, "  %-4s %6s %7s %7s %5s %5s %5s %7s\n", "", "", "front", "front", "", "", "", "");
  /* per workload: points, cheap front, expensive front, held, fell, new, cheap front not run */
  size_t tot[7] = {0}, (*c)[7] = calloc(r->num_workloads ? r->num_workloads : 1, sizeof *c);
  for (size_t i = 0; c && i < r->n; i++) {
    const cs_pareto_rpoint *p = &r->pts[i];
    if (!p->in_study) continue;
    size_t *w = c[p->workload];
    w[0]++;
    w[1] += cheap[i];
    w[2] += exact[i];
    w[3] += cheap[i] && exact[i];
    w[4] += cheap[i] && !exact[i] && p->run;
    w[5] += exact[i] && !cheap[i];
    w[6] += cheap[i] && !p->run;
  }
  for (size_t w = 0; c && w < r->num_workloads; w++) {
    for (int k = 0; k < 7; k++) tot[k] += c[w][k];
    fprintf(r->out, "  %-4zu %6zu %7zu %7zu %5zu %5zu %5zu %7zu  %s\n", w, c[w][0], c[w][1],
            c[w][2], c[w][3], c[w][4], c[w][5], c[w][6], r->workload[w]);
  }
  free(c);
  fprintf(r->out, "  cheap-front points: %zu; held under %s: %zu; fell: %zu; not run (dominated "
          "by a validated point): %zu; %s front points the cheap front missed: %zu\n",
          tot[1], r->exp_engine, tot[3], tot[4], tot[6], r->exp_engine, tot[5]);
  double margin[CS_PRIM_COUNT], all = cs_pareto_refine_margin(s, r->pts, r->n, margin);
  print_band(r->out, "band at the end", r->band, r);
  if (isinf(all) && all > 0)
    fprintf(r->out, "  certificate: every point of the study ran on %s\n", r->exp_engine);
  else if (isinf(all))
    fprintf(r->out, "  certificate: none: some point not run is dominated by no validated point "
            "(the budget or max_rounds stopped the refinement)\n");
  else {
    fprintf(r->out, "  certificate: the %s front is the whole matrix's while the cheap rung's "
            "error on the points not run stays below %.2f%%; by primitive:", r->exp_engine,
            100 * all);
    for (int p = 0; p < CS_PRIM_COUNT; p++)
      if (!isinf(margin[p])) fprintf(r->out, " %s %.2f%%", cs_primitive_name((cs_primitive)p), 100 * margin[p]);
    fputc('\n', r->out);
  }
  fflush(r->out);
  free(exact);
  free(cheap);
}

/* ---- the run ---------------------------------------------------------------------------------- */

/* One round's sweep on every rank (rank 0 passes the jobs). */
static int sweep_round(refiner *r, const cs_sweep *sw, MPI_Comm comm, unsigned round,
                       cs_sweep_summary *sum, cs_err *err) {
  cs_sweep none = {0};
  cs_sweep_options o = *r->opt;
  o.sweep = sw ? sw : &none;
  o.out = r->out;
  /* the stop fault of a single round (cs_sweep_faults.stop_one_round) */
  if (o.faults.stop_one_round && o.faults.stop_round != round) o.faults.stop_after_rows = 0;
  return cs_sweep_run(&o, comm, sum, err);
}

/* Every rank reads the same files, but a rank that could not must not leave the others in a
 * collective: the worst code on every rank (MPI_COMM_NULL: rc itself). */
static int agree(MPI_Comm comm, int rc, cs_err *err) {
  if (comm == MPI_COMM_NULL) return rc;
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
  if (worst && !rc) rc = cs_err_set(err, worst, "another rank could not read the sweep file");
  return rc;
}

/* Both rungs expanded (rank 0 holds them). */
static int expand(refiner *r, MPI_Comm comm, cs_err *err) {
  cJSON *doc = NULL;
  int rc = cs_sweep_cheap_doc(r->opt->sweep_path, r->study.refine.engine, &doc, err);
  bool lazy = comm == MPI_COMM_NULL;
  int size = 1;
  if (!lazy) MPI_Comm_size(comm, &size);
  rc = agree(comm, rc, err);
  if (rc) {
    cJSON_Delete(doc);
    return rc;
  }
  char source[600];
  snprintf(source, sizeof source, "%s (cheap rung: engine from %s)", r->opt->sweep_path,
           r->study.refine.source);
  if (lazy || size == 1) {
    if ((rc = cs_sweep_load(r->opt->sweep_path, &r->exp, err))) {
      cJSON_Delete(doc);
      return rc;
    }
    return cs_sweep_load_doc(doc, source, &r->cheap, err);
  }
  if ((rc = cs_sweep_load_mpi(r->opt->sweep_path, comm, &r->exp, err))) {
    cJSON_Delete(doc);
    return rc;
  }
  return cs_sweep_load_doc_mpi(doc, source, comm, &r->cheap, err);
}

static void refiner_free(refiner *r) {
  cs_sweep_study_free(&r->study);
  cs_sweep_free(&r->exp);
  cs_sweep_free(&r->cheap);
  free(r->pts);
  free(r->workload);
  free(r->slot);
  free(r->front);
}

int cs_sweep_refine(const cs_sweep_options *opt, const char *calibration, MPI_Comm comm,
                    cs_err *err) {
  refiner r;
  memset(&r, 0, sizeof r);
  r.opt = opt;
  r.out = opt->out ? opt->out : stdout;
  bool lazy = comm == MPI_COMM_NULL;
  int rank = 0;
  if (!lazy) MPI_Comm_rank(comm, &rank);
  int rc = cs_sweep_study_load(opt->sweep_path, calibration, &r.study, err);
  if (!rc && !r.study.has_refine)
    rc = cs_err_set(err, CS_EINVAL, "sweep file '%s' has no 'refine' section: give "
                    "--calibration FILE", opt->sweep_path);
  if (!rc && !r.study.has_pareto)
    rc = cs_err_set(err, CS_EINVAL, "sweep file '%s' has no 'pareto' section: a refinement needs "
                    "the objectives whose front it refines", opt->sweep_path);
  if (!rc && !cs_pareto_spec_measured(&r.study.pareto))
    rc = cs_err_set(err, CS_EINVAL, "sweep file '%s': pareto: no objective is a result, so the "
                    "cheap rung has nothing to estimate", opt->sweep_path);
  rc = agree(comm, rc, err);
  if (!rc) {
    snprintf(r.cheap_engine, sizeof r.cheap_engine, "%s",
             cJSON_GetObjectItemCaseSensitive(r.study.refine.engine, "name")->valuestring);
    rc = expand(&r, comm, err);
  }
  if (!rc && rank == 0) rc = setup_points(&r, err);
  if (!lazy) rc = cs_sweep_share(comm, rc, err);
  size_t *pick = rank == 0 && !rc ? malloc((r.n ? r.n : 1) * sizeof *pick) : NULL;
  if (!rc && rank == 0 && !pick) rc = cs_err_set(err, CS_ENOMEM, "refine: out of memory");
  if (!lazy) rc = cs_sweep_share(comm, rc, err);
  cs_sweep_summary sum;
  if (!rc) {
    if (rank == 0)
      fprintf(r.out, "refine round 0: the whole matrix (%zu jobs) on the cheap rung, engine %s "
              "from %s\n", r.cheap.num_jobs, r.cheap_engine, r.study.refine.source);
    rc = sweep_round(&r, rank == 0 ? &r.cheap : NULL, comm, 0, &sum, err);
  }
  const char *why = "stopped";
  for (unsigned round = 1; !rc && !opt->dry_run; round++) {
    unsigned long long count = 0;
    if (rank == 0) {
      size_t n_pick = 0;
      rc = decide(&r, round, pick, &n_pick, &why, err);
      count = n_pick;
    }
    if (!lazy) rc = cs_sweep_share(comm, rc, err);
    if (!lazy && !rc) MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    if (rc || !count) break;
    cs_sweep subset = {0};
    if (rank == 0) rc = cs_sweep_subset(&r.exp, pick, count, &subset, err);
    if (!lazy) rc = cs_sweep_share(comm, rc, err);
    if (!rc) rc = sweep_round(&r, rank == 0 ? &subset : NULL, comm, round, &sum, err);
    cs_sweep_free(&subset);
    if (!rc && rank == 0) {
      r.rounds = round;
      r.ran += sum.ran;
      r.cached += sum.plan_counts.cached_done + sum.plan_counts.cached_failed +
                  sum.plan_counts.duplicates;
    }
  }
  if (!rc && rank == 0 && opt->dry_run)
    fprintf(r.out, "refine: after round 0, rounds of the points that may be on the front run on "
            "%s (at most %u rounds%s)\n", r.exp_engine, r.study.refine.max_rounds,
            r.study.refine.max_jobs ? ", within max_jobs" : "");
  else if (!rc && rank == 0)
    report_end(&r, why);
  free(pick);
  refiner_free(&r);
  return rc;
}
