/* Fitting a cheap engine's options to reference rows.  The objective is the mean squared
 * relative error of total_time_us over the sample; the fit is Nelder-Mead over the options the
 * engine marks fittable and the sample is sensitive to (a constant the sample's jobs never
 * meet, such as a read latency on writes only, is left as it is), each scaled by a fifth of its
 * starting value and kept within its table bounds, restarted from its best point while that
 * improves.  Nelder-Mead needs no derivatives, which the engines' tick rounding would make
 * useless at small steps. */
#include "commsweep/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "commsweep/hash.h"
#include "commsweep/job.h"
#include "commsweep/store.h"
#include "commsweep/sweep.h"

#define TXT(dst, src) cs_store_get_text((src), sizeof(src), (dst), sizeof(dst))
#define BLOCK 256
#define MAX_FIT 32

static int job_from_json(const char *text, const char *source, cs_job *job, cs_err *err) {
  cJSON *o = cJSON_Parse(text);
  if (!o) return cs_err_set(err, CS_EPARSE, "%s: /job_json is not JSON", source);
  memset(job, 0, sizeof *job);
  int rc = cs_config_spec_from_json(cJSON_GetObjectItemCaseSensitive(o, "spec"), source,
                                    &job->spec, err);
  if (!rc)
    rc = cs_config_adapter_from_json(cJSON_GetObjectItemCaseSensitive(o, "adapter"), source,
                                     &job->adapter, err);
  if (!rc)
    rc = cs_engine_options_from_json(cJSON_GetObjectItemCaseSensitive(o, "engine"), source,
                                     &job->engine, err);
  cJSON_Delete(o);
  return rc;
}

int cs_calib_load(const char *path, const char *reference, cs_calib_set *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  cs_store *st = NULL;
  int rc = cs_store_open(path, CS_STORE_READ, &st, err);
  if (rc) return rc;
  uint64_t rows = cs_store_num_rows(st);
  cs_store_job_row *jobs = malloc(BLOCK * sizeof *jobs);
  cs_store_result_row *res = malloc(BLOCK * sizeof *res);
  out->rows = malloc((rows ? rows : 1) * sizeof *out->rows);
  if (!jobs || !res || !out->rows) rc = cs_err_set(err, CS_ENOMEM, "calibrate: out of memory");
  static const char *const no_error[] = {"error", NULL};
  for (uint64_t first = 0; !rc && first < rows; first += BLOCK) {
    uint64_t n = rows - first < BLOCK ? rows - first : BLOCK;
    if ((rc = cs_store_read_rows_without(st, false, no_error, first, n, res, err))) break;
    if ((rc = cs_store_read_jobs(st, first, n, jobs, err))) break;
    for (uint64_t k = 0; k < n && !rc; k++) {
      char engine[sizeof jobs[k].engine + 1], text[CS_STORE_JSON_LEN + 1], source[96];
      TXT(engine, jobs[k].engine);
      if (res[k].status != CS_STORE_DONE || strcmp(engine, reference)) continue;
      TXT(text, jobs[k].job_json);
      snprintf(source, sizeof source, "file '%.48s' row %llu", path,
               (unsigned long long)(first + k));
      cs_calib_row *r = &out->rows[out->n];
      memset(r, 0, sizeof *r);
      if ((rc = job_from_json(text, source, &r->job, err))) break;
      r->time_us = res[k].result.total_time_us;
      r->row = first + k;
      memcpy(r->key, jobs[k].key, sizeof r->key);
      if (r->time_us > 0) out->n++;
    }
  }
  free(jobs);
  free(res);
  int crc = cs_store_close(st, rc ? NULL : err);
  if (!rc) rc = crc;
  if (!rc && !out->n)
    rc = cs_err_set(err, CS_ENOTFOUND, "file '%s' has no done rows of engine '%s'", path,
                    reference);
  if (rc) cs_calib_free(out);
  return rc;
}

void cs_calib_free(cs_calib_set *set) {
  free(set->rows);
  set->rows = NULL;
  set->n = 0;
}

/* ---- choosing the sample ------------------------------------------------------------------- */

/* What the sample is spread over: the stratum (primitive, topology, layout), then the design. */
typedef struct design {
  int prim;
  char topology[CS_NAME_MAX], layout[CS_NAME_MAX];
  uint64_t bytes, parts_hash;
  int parts, mst_wr, mst_rd, slv_wr, slv_rd, burst;
  size_t index; /* into the caller's rows or jobs */
} design;

static design design_of(const cs_job *j, size_t index) {
  design d = {.prim = j->spec.primitive, .bytes = j->spec.msg_size_bytes,
              .parts = j->spec.num_participants, .mst_wr = j->adapter.mst_wr_outstanding,
              .mst_rd = j->adapter.mst_rd_outstanding, .slv_wr = j->adapter.slv_wr_outstanding,
              .slv_rd = j->adapter.slv_rd_outstanding, .burst = j->adapter.burst_length,
              .index = index, .parts_hash = 1469598103934665603ULL};
  memcpy(d.topology, j->adapter.topology, sizeof d.topology);
  memcpy(d.layout, j->adapter.dcin_layout, sizeof d.layout);
  for (int i = 0; i < j->spec.num_participants; i++)
    d.parts_hash = cs_fnv1a_word(d.parts_hash, (uint32_t)cs_spec_participant(&j->spec, i));
  return d;
}

static int stratum_cmp(const design *a, const design *b) {
  if (a->prim != b->prim) return a->prim < b->prim ? -1 : 1;
  int c = strcmp(a->topology, b->topology);
  return c ? c : strcmp(a->layout, b->layout);
}

#define CMP(x, y) if ((x) != (y)) return (x) < (y) ? -1 : 1
static int design_cmp(const void *pa, const void *pb) {
  const design *a = pa, *b = pb;
  int c = stratum_cmp(a, b);
  if (c) return c;
  CMP(a->bytes, b->bytes);
  CMP(a->parts, b->parts);
  CMP(a->parts_hash, b->parts_hash);
  CMP(a->mst_wr, b->mst_wr);
  CMP(a->mst_rd, b->mst_rd);
  CMP(a->slv_wr, b->slv_wr);
  CMP(a->slv_rd, b->slv_rd);
  CMP(a->burst, b->burst);
  CMP(a->index, b->index);
  return 0;
}
#undef CMP

/* Marks in[d[k].index] for the sample of the designs d[0..n) (sorted here). */
static void choose(design *d, size_t n, double fraction, bool *in) {
  qsort(d, n, sizeof *d, design_cmp);
  for (size_t first = 0, end; first < n; first = end) {
    for (end = first + 1; end < n && !stratum_cmp(&d[end], &d[first]); end++) {
    }
    size_t m = end - first, want = (size_t)lround(fraction * (double)m);
    if (want < 1) want = 1;
    for (size_t i = first; i < end; i++) in[d[i].index] = false;
    /* positions frac(1/2 + j / phi) of the design order: spread over the whole range, and with
     * no period that a design axis (burst length, outstanding setting) could fall in step with */
    for (size_t j = 0; j < want; j++) {
      double u = 0.5 + (double)j * 0.6180339887498949;
      size_t pos = (size_t)((u - floor(u)) * (double)m);
      while (in[d[first + pos].index]) pos = (pos + 1) % m;
      in[d[first + pos].index] = true;
    }
  }
}

int cs_calib_choose(cs_calib_set *set, double fraction) {
  design *d = malloc((set->n ? set->n : 1) * sizeof *d);
  bool *in = malloc(set->n ? set->n : 1);
  if (!d || !in) {
    free(d);
    free(in);
    return CS_ENOMEM;
  }
  for (size_t i = 0; i < set->n; i++) d[i] = design_of(&set->rows[i].job, i);
  choose(d, set->n, fraction, in);
  for (size_t i = 0; i < set->n; i++) set->rows[i].in_sample = in[i];
  free(d);
  free(in);
  return CS_OK;
}

int cs_calib_choose_jobs(const cs_sweep *sw, double fraction, size_t *pick, size_t *n_pick,
                         cs_err *err) {
  size_t n = sw->num_jobs, m = 0;
  design *d = malloc((n ? n : 1) * sizeof *d);
  bool *in = calloc(n ? n : 1, 1);
  int rc = d && in ? CS_OK : cs_err_set(err, CS_ENOMEM, "calibrate: out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    cs_job job;
    if (sw->jobs[i].load_code) continue; /* a job that cannot load is no sample */
    if ((rc = cs_sweep_job_get(&sw->jobs[i], &job, err))) break;
    d[m++] = design_of(&job, i);
  }
  if (!rc) choose(d, m, fraction, in);
  *n_pick = 0;
  for (size_t i = 0; i < n && !rc; i++)
    if (in[i]) pick[(*n_pick)++] = i;
  free(d);
  free(in);
  return rc;
}

/* ---- evaluating ---------------------------------------------------------------------------- */

/* The fit compares times taken at a thousand driver ticks a ns (and a guard as long as the
 * job's): at the job's own ticks its objective moves in steps of a tick, flat in between, and
 * Nelder-Mead stalls on the steps.  A job whose spec pins the driver clock runs at its own. */
#define FINE_TICKS 1000.0

static int run_cheap_at(cs_job_shared *sh, const cs_engine_options *eng, cs_calib_row *r,
                        bool fine, cs_err *err) {
  cs_job job = r->job;
  job.engine = *eng;
  if (fine) {
    job.adapter.driver_cycle_frequency_ghz *= FINE_TICKS;
    job.engine.deadlock_guard_ticks *= (uint64_t)FINE_TICKS;
  }
  cs_job_output out;
  int rc = cs_job_run_shared(sh, &job, false, &out, err);
  if (rc == CS_ECONSTRAINT && fine) return run_cheap_at(sh, eng, r, false, err);
  if (rc) return cs_err_prefix(err, "calibrate: row %llu on %s", (unsigned long long)r->row,
                               eng->name);
  r->cheap_us = out.result.total_time_us;
  cs_job_output_free(&out);
  return CS_OK;
}

static int run_cheap(cs_job_shared *sh, const cs_engine_options *eng, cs_calib_row *r,
                     cs_err *err) {
  return run_cheap_at(sh, eng, r, false, err);
}

static void stats_of(const cs_calib_set *set, bool sample, cs_calib_stats *s) {
  memset(s, 0, sizeof *s);
  for (size_t i = 0; i < set->n; i++) {
    const cs_calib_row *r = &set->rows[i];
    if (r->in_sample != sample) continue;
    int p = r->job.spec.primitive;
    double e = r->cheap_us / r->time_us - 1.0;
    s->n[p]++;
    s->rmspe[p] += e * e;
    if (fabs(e) > s->max_abs[p]) s->max_abs[p] = fabs(e);
    if (fabs(e) > 0.05) s->over_5pct[p]++;
  }
  for (int p = 0; p < CS_PRIM_COUNT; p++)
    if (s->n[p]) s->rmspe[p] = sqrt(s->rmspe[p] / (double)s->n[p]);
}

int cs_calib_evaluate(cs_calib_set *set, const cs_engine_options *eng, cs_calib_stats *sample,
                      cs_calib_stats *held, cs_err *err) {
  cs_job_shared *sh = cs_job_shared_new();
  if (!sh) return cs_err_set(err, CS_ENOMEM, "calibrate: out of memory");
  int rc = CS_OK;
  for (size_t i = 0; i < set->n && !rc; i++) rc = run_cheap(sh, eng, &set->rows[i], err);
  cs_job_shared_free(sh);
  if (rc) return rc;
  stats_of(set, true, sample);
  stats_of(set, false, held);
  return CS_OK;
}

/* ---- fitting ------------------------------------------------------------------------------- */

/* The fit's view of the options: the fittable doubles, their bounds and scales. */
typedef struct fit {
  cs_calib_set *set;
  cs_job_shared *sh;
  cs_engine_options eng;
  const cs_field *field[MAX_FIT];
  double scale[MAX_FIT];
  int n;
  int evals, max_evals;
  bool verbose;
  double best;
} fit;

static double *slot(fit *f, int j) {
  return (double *)(void *)(f->eng.params.bytes + f->field[j]->offset);
}

/* Mean squared relative error on the sample with the fitted options at x (clamped). */
static int objective(fit *f, const double *x, double *out, cs_err *err) {
  for (int j = 0; j < f->n; j++) {
    double v = x[j];
    if (v < f->field[j]->min) v = f->field[j]->min;
    if (v > f->field[j]->max) v = f->field[j]->max;
    *slot(f, j) = v;
  }
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < f->set->n; i++) {
    cs_calib_row *r = &f->set->rows[i];
    if (!r->in_sample) continue;
    int rc = run_cheap_at(f->sh, &f->eng, r, true, err);
    if (rc) return rc;
    double e = r->cheap_us / r->time_us - 1.0;
    sum += e * e;
    n++;
  }
  *out = n ? sum / (double)n : 0;
  f->evals++;
  if (f->verbose && *out < f->best)
    fprintf(stderr, "calibrate: evaluation %d: sample RMSPE %.3f%%\n", f->evals, 100 * sqrt(*out));
  if (*out < f->best) f->best = *out;
  return CS_OK;
}

static void clamp_all(const fit *f, double *x) {
  for (int j = 0; j < f->n; j++) {
    if (x[j] < f->field[j]->min) x[j] = f->field[j]->min;
    if (x[j] > f->field[j]->max) x[j] = f->field[j]->max;
  }
}

/* Nelder-Mead from x (n coordinates), leaving the best point in x and its value in *fx. */
static int nelder_mead(fit *f, double *x, double *fx, cs_err *err) {
  int n = f->n;
  double pts[MAX_FIT + 1][MAX_FIT], val[MAX_FIT + 1], cen[MAX_FIT], xr[MAX_FIT], xe[MAX_FIT];
  memcpy(pts[0], x, (size_t)n * sizeof *x);
  val[0] = *fx;
  for (int i = 1; i <= n; i++) {
    memcpy(pts[i], x, (size_t)n * sizeof *x);
    pts[i][i - 1] += f->scale[i - 1];
    clamp_all(f, pts[i]);
    int rc = objective(f, pts[i], &val[i], err);
    if (rc) return rc;
  }
  while (f->evals < f->max_evals) {
    /* order: best first (insertion sort keeps equal values in place: deterministic) */
    for (int i = 1; i <= n; i++)
      for (int k = i; k > 0 && val[k] < val[k - 1]; k--) {
        double t = val[k];
        val[k] = val[k - 1];
        val[k - 1] = t;
        for (int j = 0; j < n; j++) {
          double u = pts[k][j];
          pts[k][j] = pts[k - 1][j];
          pts[k - 1][j] = u;
        }
      }
    if (val[n] - val[0] <= 1e-12 * (val[0] + 1e-12)) break;
    for (int j = 0; j < n; j++) {
      cen[j] = 0;
      for (int i = 0; i < n; i++) cen[j] += pts[i][j] / n;
    }
    double fr, fe;
    for (int j = 0; j < n; j++) xr[j] = cen[j] + (cen[j] - pts[n][j]);
    clamp_all(f, xr);
    int rc = objective(f, xr, &fr, err);
    if (rc) return rc;
    if (fr < val[0]) {
      for (int j = 0; j < n; j++) xe[j] = cen[j] + 2 * (cen[j] - pts[n][j]);
      clamp_all(f, xe);
      if ((rc = objective(f, xe, &fe, err))) return rc;
      bool expand = fe < fr;
      memcpy(pts[n], expand ? xe : xr, (size_t)n * sizeof *xr);
      val[n] = expand ? fe : fr;
    } else if (fr < val[n - 1]) {
      memcpy(pts[n], xr, (size_t)n * sizeof *xr);
      val[n] = fr;
    } else {
      bool outside = fr < val[n];
      for (int j = 0; j < n; j++)
        xe[j] = outside ? cen[j] + 0.5 * (xr[j] - cen[j]) : cen[j] + 0.5 * (pts[n][j] - cen[j]);
      if ((rc = objective(f, xe, &fe, err))) return rc;
      if (fe < (outside ? fr : val[n])) {
        memcpy(pts[n], xe, (size_t)n * sizeof *xe);
        val[n] = fe;
      } else { /* shrink towards the best */
        for (int i = 1; i <= n && f->evals < f->max_evals; i++) {
          for (int j = 0; j < n; j++) pts[i][j] = pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]);
          if ((rc = objective(f, pts[i], &val[i], err))) return rc;
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= n; i++)
    if (val[i] < val[best]) best = i;
  memcpy(x, pts[best], (size_t)n * sizeof *x);
  *fx = val[best];
  return CS_OK;
}

int cs_calib_fit(cs_calib_set *set, const cs_calib_options *opt, cs_calib_result *out,
                 cs_err *err) {
  memset(out, 0, sizeof *out);
  const cs_engine_ops *ops = cs_engine_find(opt->cheap);
  if (!ops) {
    char names[128];
    cs_engine_names(names, sizeof names);
    return cs_err_set(err, CS_EINVAL, "calibrate: unknown engine '%s' (engines: %s)", opt->cheap,
                      names);
  }
  fit f = {.set = set, .max_evals = opt->max_evals, .verbose = opt->verbose, .best = INFINITY};
  f.eng = opt->start;
  snprintf(f.eng.name, sizeof f.eng.name, "%s", ops->name);
  if (!f.eng.deadlock_guard_ticks) f.eng.deadlock_guard_ticks = 1000000;
  if (!f.eng.has_options) {
    if (!ops->options_default)
      return cs_err_set(err, CS_EINVAL, "calibrate: engine '%s' states no default options: give "
                        "the options to start from", ops->name);
    ops->options_default(f.eng.params.bytes);
    f.eng.has_options = true;
  }
  double x[MAX_FIT];
  for (const cs_field *fd = ops->options; fd && fd->key && f.n < MAX_FIT; fd++)
    if ((fd->flags & CS_FIELD_FIT) && fd->type == CS_F_DOUBLE) {
      f.field[f.n] = fd;
      x[f.n] = *slot(&f, f.n);
      f.scale[f.n] = fabs(x[f.n]) > 0 ? 0.2 * fabs(x[f.n]) : 1.0;
      f.n++;
    }
  if (!f.n)
    return cs_err_set(err, CS_EINVAL, "calibrate: engine '%s' has no fittable options", ops->name);
  f.sh = cs_job_shared_new();
  if (!f.sh) return cs_err_set(err, CS_ENOMEM, "calibrate: out of memory");
  double fx;
  int rc = objective(&f, x, &fx, err);
  out->start_rmspe = sqrt(fx);
  /* leave out the options the sample does not feel (none to fit with no evaluations to spend) */
  if (f.max_evals <= 0) f.n = 0;
  for (int j = 0; j < f.n && !rc; j++) {
    double save = x[j], fj;
    x[j] = save + 5 * f.scale[j]; /* doubled: a fifth may stay inside one tick */
    rc = objective(&f, x, &fj, err);
    x[j] = save;
    if (!rc && fj == fx) {
      *slot(&f, j) = save;
      f.field[j] = f.field[f.n - 1];
      f.scale[j] = f.scale[f.n - 1];
      x[j] = x[f.n - 1];
      f.n--;
      j--;
    }
  }
  /* restarts from the best point found: a collapsed simplex stalls short of the minimum in
   * this many dimensions; each restart starts on a simplex half the size of the last */
  for (int round = 0; !rc && f.n && f.evals < f.max_evals; round++) {
    double before = fx;
    rc = nelder_mead(&f, x, &fx, err);
    if (rc || fx >= before * (1 - 1e-6)) break;
    for (int j = 0; j < f.n; j++) f.scale[j] *= 0.5;
  }
  if (!rc) rc = objective(&f, x, &fx, err); /* leaves the best point in f.eng */
  cs_job_shared_free(f.sh);
  if (rc) return rc;
  out->fitted = f.eng;
  out->fitted.has_options = true;
  out->fit_rmspe = sqrt(fx);
  out->evals = f.evals;
  rc = cs_calib_evaluate(set, &out->fitted, &out->sample, &out->held, err);
  if (rc) return rc;
  for (int p = 0; p < CS_PRIM_COUNT; p++) {
    double seen = out->held.n[p] ? out->held.max_abs[p] : out->sample.max_abs[p];
    out->band[p] = (out->held.n[p] || out->sample.n[p]) ? CS_CALIB_BAND_MARGIN * seen : 0;
  }
  return CS_OK;
}

/* ---- the calibration file ------------------------------------------------------------------ */

static cJSON *stats_json(const cs_calib_stats *s) {
  cJSON *o = cJSON_CreateObject();
  for (int p = 0; p < CS_PRIM_COUNT; p++) {
    if (!s->n[p]) continue;
    cJSON *q = cJSON_AddObjectToObject(o, cs_primitive_name((cs_primitive)p));
    cJSON_AddNumberToObject(q, "rows", (double)s->n[p]);
    cJSON_AddNumberToObject(q, "rmspe", s->rmspe[p]);
    cJSON_AddNumberToObject(q, "max_abs_error", s->max_abs[p]);
    cJSON_AddNumberToObject(q, "over_5_percent", (double)s->over_5pct[p]);
  }
  return o;
}

int cs_calib_write(const char *path, const cs_calib_set *set, const cs_calib_result *res,
                   const char *source, cs_err *err) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "engine", cs_engine_options_to_json(&res->fitted, false));
  cJSON *band = cJSON_AddObjectToObject(o, "band");
  for (int p = 0; p < CS_PRIM_COUNT; p++)
    if (res->band[p] > 0) cJSON_AddNumberToObject(band, cs_primitive_name((cs_primitive)p), res->band[p]);
  cJSON *fitj = cJSON_AddObjectToObject(o, "fit");
  cJSON_AddStringToObject(fitj, "source", source);
  size_t sample = 0;
  for (size_t i = 0; i < set->n; i++) sample += set->rows[i].in_sample;
  cJSON_AddNumberToObject(fitj, "reference_rows", (double)set->n);
  cJSON_AddNumberToObject(fitj, "sample_rows", (double)sample);
  cJSON_AddNumberToObject(fitj, "evaluations", res->evals);
  cJSON_AddNumberToObject(fitj, "sample_rmspe_before", res->start_rmspe);
  cJSON_AddNumberToObject(fitj, "sample_rmspe_after", res->fit_rmspe);
  cJSON *rows = cJSON_AddArrayToObject(fitj, "sample_row_numbers");
  for (size_t i = 0; i < set->n; i++)
    if (set->rows[i].in_sample) cJSON_AddItemToArray(rows, cJSON_CreateNumber((double)set->rows[i].row));
  cJSON_AddItemToObject(fitj, "sample", stats_json(&res->sample));
  cJSON_AddItemToObject(fitj, "held_out", stats_json(&res->held));
  char *text = cJSON_Print(o);
  cJSON_Delete(o);
  if (!text) return cs_err_set(err, CS_ENOMEM, "calibrate: out of memory");
  FILE *fp = fopen(path, "w");
  int rc = CS_OK;
  if (!fp || fputs(text, fp) < 0 || fputc('\n', fp) < 0)
    rc = cs_err_set(err, CS_EIO, "calibrate: cannot write '%s'", path);
  if (fp && fclose(fp) && !rc) rc = cs_err_set(err, CS_EIO, "calibrate: cannot write '%s'", path);
  free(text);
  return rc;
}
