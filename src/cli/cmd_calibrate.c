/* `commsweep calibrate FILE.h5 --out CALIB.json`: fits a cheap engine (math) to the rows of a
 * reference engine (dcin) in a result file, on a sample of them, and says how well it does on
 * the rows left out.  The calibration file holds the fitted engine options and the error band
 * per primitive that a refinement (commsweep sweep --refine) allows the cheap engine. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/calib.h"
#include "commsweep/config.h"
#include "commsweep/engine.h"
#include "commsweep/store.h"
#include "commsweep/sweep.h"

typedef struct calibrate_args {
  const char *file, *out, *ref, *start, *sweep;
  cs_calib_options opt;
  double fraction;
  long worst;
} calibrate_args;

static int set_sample(void *args, const char *option, const char *v) {
  char *end;
  double x = strtod(v, &end);
  if (!*v || *end || !(x > 0 && x <= 1)) {
    fprintf(stderr, "commsweep calibrate: %s %s: want a fraction in (0, 1]\n", option, v);
    return 2;
  }
  ((calibrate_args *)args)->fraction = x;
  return 0;
}

#define A(field) offsetof(calibrate_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_STR, "--out", NULL, "F", A(out), .help = "the calibration file to write"},
    {CS_CLI_STR, "--sweep", NULL, "S", A(sweep),
     .help = "run the sample of sweep file S (on its engine) into FILE.h5 first"},
    {CS_CLI_STR, "--reference", NULL, "NAME", A(ref),
     .help = "the engine whose rows are fitted to (default dcin)"},
    {CS_CLI_STR, "--engine", NULL, "NAME", A(opt.cheap), .help = "the engine to fit (default math)"},
    {CS_CLI_STR, "--start", NULL, "F", A(start),
     .help = "options to start from: a calibration file or an engine file\n"
             "(default: the engine's defaults)"},
    {CS_CLI_FN, "--sample", NULL, "FRACTION", .set = set_sample,
     .help = "share of the reference rows fitted on, 0 < FRACTION <= 1\n"
             "(default 0.2); the others are held out"},
    {CS_CLI_INT, "--max-evals", NULL, "N", A(opt.max_evals), 0, 1000000, "an integer in 0..1000000",
     .help = "runs of the sample the fit may spend (default 400); 0: no fit,\n"
             "only the starting options' errors"},
    {CS_CLI_LONG, "--worst", NULL, "N", A(worst), 0, 1000000, "an integer in 0..1000000",
     .help = "held-out jobs with the largest errors to list (default 10)"},
    {CS_CLI_CLEAR, "--quiet", "-q", NULL, A(opt.verbose), .help = "no progress on stderr"},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"calibrate", options, 1, {offsetof(calibrate_args, file)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep calibrate FILE.h5 --out CALIB.json [options]\n"
          "       [mpirun -np N] commsweep calibrate FILE.h5 --sweep STUDY.json --out CALIB.json\n"
          "\n"
          "Fits the cheap engine's model constants to the reference engine's rows of FILE.h5:\n"
          "a sample of the rows is fitted on, the rest judge the fit (held-out error per\n"
          "primitive).  With --sweep the sample is a share of STUDY.json's jobs, chosen by the\n"
          "same rule and run into FILE.h5 as a sweep of them would (cached rows: a later sweep\n"
          "or --refine of STUDY.json into FILE.h5 reuses them); rows FILE.h5 held before are\n"
          "held out.  CALIB.json holds the fitted engine options (\"engine\": usable as an\n"
          "engine file or in a sweep's base), the error band per primitive (\"band\") and the\n"
          "fit's figures (\"fit\").  docs/math-engine.md describes the model and the fit.\n"
          "\n");
  cs_cli_print_options(&command, f);
}

static int cmp_err(const void *a, const void *b) {
  const cs_calib_row *x = *(const cs_calib_row *const *)a, *y = *(const cs_calib_row *const *)b;
  double ex = x->cheap_us / x->time_us - 1, ey = y->cheap_us / y->time_us - 1;
  ex = ex < 0 ? -ex : ex;
  ey = ey < 0 ? -ey : ey;
  return ex < ey ? 1 : ex > ey ? -1 : (x->row > y->row) - (x->row < y->row);
}

static void report(const cs_calib_set *set, const cs_calib_result *res, const char *ref,
                   const char *cheap, size_t worst) {
  printf("calibrated %s on %s: sample RMSPE %.2f%% -> %.2f%% in %d evaluations\n", cheap, ref,
         100 * res->start_rmspe, 100 * res->fit_rmspe, res->evals);
  printf("%-14s %7s %7s %12s %10s %8s %8s\n", "primitive", "sample", "held", "held RMSPE",
         "held max", ">5%", "band");
  for (int p = 0; p < CS_PRIM_COUNT; p++) {
    if (!res->sample.n[p] && !res->held.n[p]) continue;
    printf("%-14s %7zu %7zu %11.2f%% %9.1f%% %8zu %7.1f%%\n", cs_primitive_name((cs_primitive)p),
           res->sample.n[p], res->held.n[p], 100 * res->held.rmspe[p], 100 * res->held.max_abs[p],
           res->held.over_5pct[p], 100 * res->band[p]);
  }
  const cs_calib_row **held = malloc((set->n ? set->n : 1) * sizeof *held);
  size_t n = 0;
  for (size_t i = 0; held && i < set->n; i++)
    if (!set->rows[i].in_sample) held[n++] = &set->rows[i];
  if (!held || !n || !worst) {
    free(held);
    return;
  }
  qsort(held, n, sizeof *held, cmp_err);
  printf("worst held-out jobs (row: primitive, bytes, layout, participants, mst, slv, burst: %s "
         "us, %s us, error):\n", ref, cheap);
  for (size_t i = 0; i < n && i < worst; i++) {
    const cs_calib_row *r = held[i];
    const cs_job *j = &r->job;
    printf("  %6llu: %s %llu %s/%s n=%d %d/%d %d/%d %d: %.3f %.3f %+.1f%%\n",
           (unsigned long long)r->row, cs_primitive_name(j->spec.primitive),
           (unsigned long long)j->spec.msg_size_bytes, j->adapter.topology, j->adapter.dcin_layout,
           j->spec.num_participants, j->adapter.mst_rd_outstanding, j->adapter.mst_wr_outstanding,
           j->adapter.slv_rd_outstanding, j->adapter.slv_wr_outstanding, j->adapter.burst_length,
           r->time_us, r->cheap_us, 100 * (r->cheap_us / r->time_us - 1));
  }
  free(held);
}

/* --sweep: the sample of the sweep's jobs run into `file`, over MPI when launched so (every rank
 * takes part; rank 0 keeps the sample's keys, *n_keys of them, CS_KEY_HEX bytes each). */
static int run_sample(const char *sweep, const char *file, double fraction, char **keys,
                      size_t *n_keys, int *rank, cs_err *err) {
  int inited = 0;
  MPI_Initialized(&inited);
  bool launched = inited || cs_cli_launched_by_mpi();
  if (launched && !inited) MPI_Init(NULL, NULL);
  MPI_Comm comm = launched ? MPI_COMM_WORLD : MPI_COMM_NULL;
  if (launched) MPI_Comm_rank(comm, rank);
  cs_sweep all = {0}, part = {0};
  int rc = launched ? cs_sweep_load_mpi(sweep, comm, &all, err) : cs_sweep_load(sweep, &all, err);
  size_t *pick = NULL, n = 0;
  if (!rc && *rank == 0) {
    pick = malloc((all.num_jobs ? all.num_jobs : 1) * sizeof *pick);
    rc = pick ? cs_calib_choose_jobs(&all, fraction, pick, &n, err)
              : cs_err_set(err, CS_ENOMEM, "out of memory");
    if (!rc) rc = cs_sweep_subset(&all, pick, n, &part, err);
    if (!rc && !(*keys = malloc((n ? n : 1) * CS_KEY_HEX)))
      rc = cs_err_set(err, CS_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) memcpy(*keys + i * CS_KEY_HEX, part.jobs[i].key, CS_KEY_HEX);
    *n_keys = n;
    if (!rc) printf("calibrate: the sample: %zu of the %zu jobs of '%s'\n", n, all.num_jobs, sweep);
  }
  if (launched) rc = cs_sweep_share(comm, rc, err);
  if (!rc) {
    cs_sweep none = {0};
    cs_sweep_options o = {.sweep_path = sweep, .out_path = file, .results_only = true,
                          .sweep = *rank == 0 ? &part : &none};
    cs_sweep_summary sum;
    rc = cs_sweep_run(&o, comm, &sum, err);
  }
  free(pick);
  cs_sweep_free(&part);
  cs_sweep_free(&all);
  int finalized = 0, now = 0;
  MPI_Initialized(&now);
  MPI_Finalized(&finalized);
  if (!inited && now && !finalized) MPI_Finalize();
  return rc;
}

/* The rows of the sample's keys are fitted on, every other reference row is held out. */
static int cmp_key(const void *a, const void *b) { return memcmp(a, b, CS_KEY_HEX); }

static int mark_sample(cs_calib_set *set, char *keys, size_t n, cs_err *err) {
  qsort(keys, n, CS_KEY_HEX, cmp_key);
  size_t in = 0;
  for (size_t i = 0; i < set->n; i++) {
    set->rows[i].in_sample = bsearch(set->rows[i].key, keys, n, CS_KEY_HEX, cmp_key) != NULL;
    in += set->rows[i].in_sample;
  }
  return in ? CS_OK : cs_err_set(err, CS_ENOTFOUND, "none of the sample's %zu rows is a done row "
                                 "of the reference engine (is --reference the sweep's engine?)", n);
}

int cs_cli_calibrate(int argc, char **argv) {
  calibrate_args a = {.ref = "dcin", .fraction = 0.2, .worst = 10,
                      .opt = {.cheap = "math", .max_evals = 400, .verbose = true}};
  int urc = cs_cli_parse(&command, argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  if (!a.file || !a.out) {
    fprintf(stderr, "commsweep calibrate: need FILE.h5 and --out CALIB.json\n\n");
    usage(stderr);
    return 2;
  }
  const char *file = a.file, *out = a.out, *ref = a.ref, *start = a.start, *sweep = a.sweep;
  cs_calib_options opt = a.opt;
  double fraction = a.fraction;
  long worst = a.worst;
  cs_err err;
  cs_err_clear(&err);
  if (start && cs_engine_options_load(start, &opt.start, &err)) {
    fprintf(stderr, "commsweep calibrate: %s\n", err.msg);
    return 1;
  }
  cs_store_library_init();
  char *keys = NULL; /* --sweep: the sample's cache keys */
  size_t n_keys = 0;
  if (sweep) {
    int rank = 0, rc = run_sample(sweep, file, fraction, &keys, &n_keys, &rank, &err);
    if (rc && rank == 0) fprintf(stderr, "commsweep calibrate: %s\n", err.msg);
    if (rc || rank != 0) {
      free(keys);
      return rc ? 1 : 0;
    }
  }
  cs_calib_set set;
  if (cs_calib_load(file, ref, &set, &err) ||
      (sweep ? mark_sample(&set, keys, n_keys, &err) : cs_calib_choose(&set, fraction))) {
    if (!err.msg[0]) cs_err_set(&err, CS_ENOMEM, "out of memory");
    fprintf(stderr, "commsweep calibrate: %s\n", err.msg);
    free(keys);
    return 1;
  }
  free(keys);
  cs_calib_result res;
  int rc = cs_calib_fit(&set, &opt, &res, &err);
  if (!rc) rc = cs_calib_write(out, &set, &res, file, &err);
  if (rc) {
    fprintf(stderr, "commsweep calibrate: %s\n", err.msg);
    cs_calib_free(&set);
    return 1;
  }
  report(&set, &res, ref, opt.cheap, (size_t)worst);
  printf("wrote %s\n", out);
  cs_calib_free(&set);
  return 0;
}
