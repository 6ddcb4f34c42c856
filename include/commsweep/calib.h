/* Calibration of a cheap engine against the rows of an expensive one (docs/math-engine.md,
 * "Calibration"): the cheap engine's fittable options (CS_FIELD_FIT rows of its table) are
 * chosen to minimise its relative error on a sample of the reference rows, and its error on the
 * rows left out says how far it can be trusted: the band a refinement allows it.
 *
 * Nothing here names an engine: the reference is any engine's rows, the cheap engine any engine
 * whose option table has fittable rows. */
#ifndef COMMSWEEP_CALIB_H
#define COMMSWEEP_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsweep/err.h"
#include "commsweep/model.h"

/* A reference row: the job as it ran and what it took. */
typedef struct cs_calib_row {
  cs_job job;
  double time_us;   /* the reference engine's total_time_us */
  double cheap_us;  /* the cheap engine's, after cs_calib_fit (or cs_calib_evaluate) */
  uint64_t row;     /* its row in the file (cs_calib_choose_jobs: its index) */
  char key[64];     /* its cache key, as /jobs holds it */
  bool in_sample;   /* fitted on; the others are held out */
} cs_calib_row;

typedef struct cs_calib_set {
  cs_calib_row *rows;
  size_t n;
} cs_calib_set;

/* Reads the done rows of engine `reference` from a commsweep file (their jobs from /job_json).
 * CS_ENOTFOUND when there are none. */
int cs_calib_load(const char *path, const char *reference, cs_calib_set *out, cs_err *err);
void cs_calib_free(cs_calib_set *set); /* accepts a zeroed set */

/* Marks in_sample on `fraction` of the rows (at least one) per primitive, topology and layout:
 * the rows sorted by their design (size, participants, outstanding settings, burst), taken at
 * the golden-ratio sequence's positions in that order, so the sample spreads over every axis
 * without falling in step with one.  Deterministic.  CS_ENOMEM leaves the marks as they were. */
int cs_calib_choose(cs_calib_set *set, double fraction);
/* The same choice over the jobs of an expanded sweep that loaded: their indices, ascending, into
 * pick (room for sw->num_jobs) and *n_pick. */
struct cs_sweep;
int cs_calib_choose_jobs(const struct cs_sweep *sw, double fraction, size_t *pick, size_t *n_pick,
                         cs_err *err);

/* Error statistics of the cheap engine over a subset of rows, per primitive. */
typedef struct cs_calib_stats {
  size_t n[CS_PRIM_COUNT];
  double rmspe[CS_PRIM_COUNT];   /* root mean square relative error */
  double max_abs[CS_PRIM_COUNT]; /* largest |relative error| */
  size_t over_5pct[CS_PRIM_COUNT];
} cs_calib_stats;

typedef struct cs_calib_options {
  const char *cheap;   /* the engine to fit, e.g. "math" */
  cs_engine_options start; /* its options to start from (has_options false: its defaults) */
  int max_evals;       /* evaluations of the sample the fit may spend */
  bool verbose;        /* progress on stderr */
} cs_calib_options;

typedef struct cs_calib_result {
  cs_engine_options fitted;  /* the cheap engine with the fitted options */
  cs_calib_stats sample, held;
  double band[CS_PRIM_COUNT]; /* relative error band per primitive (0: no rows of it) */
  double start_rmspe, fit_rmspe; /* over the sample, before and after */
  int evals;
} cs_calib_result;

/* Fits the cheap engine's fittable options on the sample, then evaluates every row (cheap_us)
 * and fills the statistics and bands.  A job the cheap engine cannot run is an error naming it. */
int cs_calib_fit(cs_calib_set *set, const cs_calib_options *opt, cs_calib_result *out,
                 cs_err *err);

/* Runs the cheap engine with options `eng` on every row (cheap_us) and computes statistics over
 * the sample and the held-out rows. */
int cs_calib_evaluate(cs_calib_set *set, const cs_engine_options *eng, cs_calib_stats *sample,
                      cs_calib_stats *held, cs_err *err);

/* The band of a primitive from its held-out rows (its sample's when none are held out): the
 * largest relative error seen, with a margin of a quarter. */
#define CS_CALIB_BAND_MARGIN 1.25

/* Writes the calibration file: {"engine": {...}, "band": {...}, "fit": {...}} (docs). */
int cs_calib_write(const char *path, const cs_calib_set *set, const cs_calib_result *res,
                   const char *source, cs_err *err);

#endif
