/* `commsweep sweep FILE --out FILE.h5`: runs a sweep file over the ranks of MPI_COMM_WORLD
 * (mpirun -np N, or a single process without mpirun).  MPI is initialised here, only for this
 * subcommand; rank 0 alone prints the report and any error. */
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/sweep.h"

typedef struct sweep_args {
  cs_sweep_options o;
  bool refine;             /* --refine */
  const char *calibration; /* --calibration */
  /* the fault options (-1: not given), into o.faults once parsed */
  int stop_rank, stop_round;
  long fail_row;
} sweep_args;

static int set_txlog(void *args, const char *option, const char *v) {
  cs_sweep_options *o = &((sweep_args *)args)->o;
  if (strcmp(v, "full") && strcmp(v, "steps") && strcmp(v, "none")) {
    fprintf(stderr, "commsweep sweep: %s wants full, steps or none, got '%s'\n", option, v);
    return 2;
  }
  o->results_only = !strcmp(v, "none");
  o->steps_only = !strcmp(v, "steps");
  return 0;
}

static int set_stop_signal(void *args, const char *option, const char *v) {
  static const struct { const char *name; int sig; } sigs[] = {
      {"KILL", SIGKILL}, {"STOP", SIGSTOP}, {"TERM", SIGTERM}, {"INT", SIGINT}};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
    if (!strcmp(v, sigs[i].name)) {
      ((sweep_args *)args)->o.faults.stop_signal = sigs[i].sig;
      return 0;
    }
  fprintf(stderr, "commsweep sweep: %s wants KILL, STOP, TERM or INT, got '%s'\n", option, v);
  return 2;
}

static int set_quiet(void *args, const char *option, const char *v) {
  (void)option, (void)v;
  ((sweep_args *)args)->o.progress_s = 0;
  return 0;
}

#define A(field) offsetof(sweep_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_TEXT, .help = "options:"},
    {CS_CLI_STR, "--out", "-o", "FILE.h5", A(o.out_path),
     .help = "output file, also the cache (created when absent)"},
    {CS_CLI_FLAG, "--dry-run", "-n", NULL, A(o.dry_run),
     .help = "print job count, cache hits and log size; run nothing"},
    {CS_CLI_FN, "--txlog", NULL, "DETAIL", .set = set_txlog,
     .help = "what each row's transaction log holds: full (every record in\n"
             "/txlog and one summary per algorithm step in /steplog, the\n"
             "default), steps (the per-step summaries alone: transactions,\n"
             "bytes, span, phase ticks, latency, cross-die traffic and\n"
             "back-pressure of each step) or none (results only); a row\n"
             "holding less than asked is rerun to fill it, one holding more\n"
             "is reused; the detail is not part of the cache key"},
    {CS_CLI_FLAG, "--results-only", "-r", NULL, A(o.results_only), .help = "same as --txlog none"},
    {CS_CLI_DOUBLE, "--progress", "-p", "SEC", A(o.progress_s), 0, 1e300, "seconds",
     .help = "seconds between progress lines on stderr (default 1; 0: off)"},
    {CS_CLI_FN, "--quiet", "-q", NULL, .set = set_quiet, .help = "same as --progress 0"},
    {CS_CLI_FLAG, "--verify-log", NULL, NULL, A(o.verify_log),
     .help = "also verify the transaction log of every reused row (reads\n"
             "the whole log; rows themselves are always verified)"},
    {CS_CLI_FLAG, "--retry-failed", NULL, NULL, A(o.retry_failed),
     .help = "rerun the jobs whose rows say failed (a failed row is otherwise\n"
             "a cached result, like a done one)"},
    {CS_CLI_FLAG, "--break-lock", NULL, NULL, A(o.break_lock),
     .help = "remove FILE.h5.lock left by a sweep that is known to be dead\n"
             "(refused while its holder runs on this host)"},
    {CS_CLI_FLAG, "--refine", NULL, NULL, A(refine),
     .help = "refine the sweep file's Pareto fronts instead of running the\n"
             "whole matrix: the matrix on the cheap engine of its refine\n"
             "section, then rounds of the points that may be on the front\n"
             "on the sweep's own engine (docs/pareto.md)"},
    {CS_CLI_STR, "--calibration", NULL, "F", A(calibration),
     .help = "with --refine: the cheap engine and its error band from the\n"
             "calibration file F instead of the refine section's"},
    /* faults for the tests (cs_sweep_faults; docs/hdf5-schema.md, "Fault options") */
    {CS_CLI_U64, "--test-stop-after-rows", NULL, "N", A(o.faults.stop_after_rows), 0, 1e15,
     "a count", .help = "a rank signals itself right after writing its N-th row", .hidden = true},
    {CS_CLI_INT, "--test-stop-rank", NULL, "R", A(stop_rank), 0, 1e6, "a rank",
     .help = "only rank R stops", .hidden = true},
    {CS_CLI_FN, "--test-stop-signal", NULL, "SIG", .set = set_stop_signal,
     .help = "the signal: KILL (the default), STOP, TERM or INT", .hidden = true},
    {CS_CLI_INT, "--test-stop-round", NULL, "R", A(stop_round), 0, 1e6, "a round",
     .help = "with --refine: only round R's sweep stops", .hidden = true},
    {CS_CLI_LONG, "--test-fail-row", NULL, "N", A(fail_row), 0, 1e15, "a row",
     .help = "row N fails as if memory ran out", .hidden = true},
    {CS_CLI_FLAG, "--test-rank0-runs-none", NULL, NULL, A(o.faults.rank0_runs_none),
     .help = "rank 0 only hands jobs out (with workers), running none itself", .hidden = true},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"sweep", options, 1, {offsetof(sweep_args, o.sweep_path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep sweep SWEEP.json --out FILE.h5 [options]\n"
          "       mpirun -np N commsweep sweep SWEEP.json --out FILE.h5 [options]\n"
          "\n"
          "Expands the sweep file into jobs, skips every job whose result FILE.h5 already holds\n"
          "(by cache key, checksum verified), runs the rest over the MPI ranks and writes each\n"
          "EngineResult and transaction log into FILE.h5 (docs/hdf5-schema.md).\n"
          "\n");
  cs_cli_print_options(&command, f);
  fprintf(f,
          "\n"
          "SIGINT or SIGTERM (Ctrl-C, a Slurm time limit, mpirun forwarding one) stops the sweep:\n"
          "no more jobs are handed out, each rank finishes the job in hand, every finished row\n"
          "and its log are kept, and the sweep says how far it got; rerun the same command to\n"
          "finish.  A second signal ends the process at once (docs/sweep-files.md, \"Stopping\").\n"
          "\n"
          "exit status: 0 every job has a row (done or failed), 1 sweep file or file error,\n"
          "2 usage error, 3 interrupted by a signal (rows kept; rerun to finish)\n");
}

/* 0 to go on, 1 for --help, 2 for a usage error (printed). */
static int parse(int argc, char **argv, sweep_args *a) {
  memset(a, 0, sizeof *a);
  a->o.progress_s = 1.0;
  a->stop_rank = a->stop_round = -1;
  a->fail_row = -1;
  int rc = cs_cli_parse(&command, argc, argv, a);
  if (rc) return rc;
  cs_sweep_faults *f = &a->o.faults;
  f->stop_one_rank = a->stop_rank >= 0;
  f->stop_rank = a->stop_rank;
  f->stop_one_round = a->stop_round >= 0;
  f->stop_round = (unsigned)(f->stop_one_round ? a->stop_round : 0);
  f->fail_row = a->fail_row >= 0;
  f->fail_row_at = (uint64_t)(f->fail_row ? a->fail_row : 0);
  if (!a->o.sweep_path || !a->o.out_path) {
    fprintf(stderr, "commsweep sweep: need a sweep file and --out FILE.h5\n");
    return 2;
  }
  if (a->calibration && !a->refine) {
    fprintf(stderr, "commsweep sweep: --calibration goes with --refine\n");
    return 2;
  }
  return 0;
}

/* SIGTERM/SIGINT (a Slurm time limit, mpirun forwarding Ctrl-C): the first one asks the sweep
 * to stop (cs_sweep_options.stop), which ends it cleanly with exit status 3; a second one
 * releases the writer lock if this process holds it, then kills the process with the signal as
 * usual.  Rows already written stay either way; the next run of the sweep finishes the rest.
 * The stop flag and the lock path are the process's only signal-time state, set once before the
 * sweep starts; the handler uses async-signal-safe calls only. */
static char lock_path_for_signal[8192];
static volatile sig_atomic_t stop_signal;

static void release_lock_and_die(int sig) {
  char want[32], got[32];
  size_t n = 0;
  char digits[24];
  long pid = (long)getpid();
  do digits[n++] = (char)('0' + pid % 10); while ((pid /= 10) && n < sizeof digits);
  size_t w = 0;
  for (const char *p = "pid="; *p; p++) want[w++] = *p;
  while (n) want[w++] = digits[--n];
  want[w++] = ' ';
  int fd = open(lock_path_for_signal, O_RDONLY);
  if (fd >= 0) {
    ssize_t r = read(fd, got, w);
    close(fd);
    if (r == (ssize_t)w && memcmp(got, want, w) == 0) unlink(lock_path_for_signal);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void stop_or_die(int sig) {
  if (stop_signal) release_lock_and_die(sig);
  stop_signal = sig;
}

static void stop_on_signal(const char *out_path) {
  cs_store_lock_path(out_path, lock_path_for_signal, sizeof lock_path_for_signal);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop_or_die;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

/* True when a launcher (mpirun, srun --mpi=pmix, hydra) started this process.  Otherwise the
 * sweep runs as one process and starts MPI only if some job must run. */
bool cs_cli_launched_by_mpi(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                     NULL};
  for (const char *const *v = vars; *v; v++)
    if (getenv(*v)) return true;
  return false;
}

int cs_cli_sweep(int argc, char **argv) {
  sweep_args a;
  int urc = parse(argc, argv, &a);
  if (urc) {
    /* Usage is decided before MPI starts, identically on every rank; print it once. */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (urc == 1 && (!r || !strcmp(r, "0"))) usage(stdout);
    return urc == 1 ? 0 : 2;
  }
  cs_sweep_options opt = a.o;
  int inited = 0, rank = 0;
  MPI_Initialized(&inited);
  bool launched = inited || cs_cli_launched_by_mpi();
  cs_store_library_init(); /* before MPI: see store.h */
  if (launched && !inited) MPI_Init(&argc, &argv);
  if (launched) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!opt.dry_run) {
    stop_on_signal(opt.out_path);
    opt.stop = &stop_signal;
  }
  cs_sweep_summary sum;
  cs_err err;
  cs_err_clear(&err);
  MPI_Comm comm = launched ? MPI_COMM_WORLD : MPI_COMM_NULL;
  int rc = a.refine ? cs_sweep_refine(&opt, a.calibration, comm, &err)
                     : cs_sweep_run(&opt, comm, &sum, &err);
  /* an interrupted sweep said so already, as soon as it stopped */
  if (rc && rc != CS_EINTR && rank == 0) fprintf(stderr, "commsweep sweep: %s\n", err.msg);
  int now_inited = 0, finalized = 0;
  MPI_Initialized(&now_inited);
  MPI_Finalized(&finalized);
  if (!inited && now_inited && !finalized) MPI_Finalize();
  return rc == CS_EINTR ? 3 : rc ? 1 : 0;
}
