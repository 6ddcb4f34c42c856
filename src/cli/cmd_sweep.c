/* `commsweep sweep FILE --out FILE.h5`: runs a sweep file over the ranks of MPI_COMM_WORLD
 * (mpirun -np N, or a single process without mpirun).  MPI is initialised here, only for this
 * subcommand; rank 0 alone prints the report and any error. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "commsweep/sweep.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep sweep SWEEP.json --out FILE.h5 [options]\n"
          "       mpirun -np N commsweep sweep SWEEP.json --out FILE.h5 [options]\n"
          "\n"
          "Expands the sweep file into jobs, skips every job whose result FILE.h5 already holds\n"
          "(by cache key, checksum verified), runs the rest over the MPI ranks and writes each\n"
          "EngineResult and transaction log into FILE.h5 (docs/hdf5-schema.md).\n"
          "\n"
          "options:\n"
          "  -o, --out FILE.h5     output file, also the cache (created when absent)\n"
          "  -n, --dry-run         print job count, cache hits and log size; run nothing\n"
          "      --txlog DETAIL    what each row's transaction log holds: full (every record in\n"
          "                        /txlog and one summary per algorithm step in /steplog, the\n"
          "                        default), steps (the per-step summaries alone: transactions,\n"
          "                        bytes, span, phase ticks, latency, cross-die traffic and\n"
          "                        back-pressure of each step) or none (results only); a row\n"
          "                        holding less than asked is rerun to fill it, one holding more\n"
          "                        is reused; the detail is not part of the cache key\n"
          "  -r, --results-only    same as --txlog none\n"
          "  -p, --progress SEC    seconds between progress lines on stderr (default 1; 0: off)\n"
          "  -q, --quiet           same as --progress 0\n"
          "      --verify-log      also verify the transaction log of every reused row (reads\n"
          "                        the whole log; rows themselves are always verified)\n"
          "      --retry-failed    rerun the jobs whose rows say failed (a failed row is otherwise\n"
          "                        a cached result, like a done one)\n"
          "      --break-lock      remove FILE.h5.lock left by a sweep that is known to be dead\n"
          "                        (refused while its holder runs on this host)\n"
          "      --refine          refine the sweep file's Pareto fronts instead of running the\n"
          "                        whole matrix: the matrix on the cheap engine of its refine\n"
          "                        section, then rounds of the points that may be on the front\n"
          "                        on the sweep's own engine (docs/pareto.md)\n"
          "      --calibration F   with --refine: the cheap engine and its error band from the\n"
          "                        calibration file F instead of the refine section's\n"
          "  -h, --help            this text\n"
          "\n"
          "SIGINT or SIGTERM (Ctrl-C, a Slurm time limit, mpirun forwarding one) stops the sweep:\n"
          "no more jobs are handed out, each rank finishes the job in hand, every finished row\n"
          "and its log are kept, and the sweep says how far it got; rerun the same command to\n"
          "finish.  A second signal ends the process at once (docs/sweep-files.md, \"Stopping\").\n"
          "\n"
          "exit status: 0 every job has a row (done or failed), 1 sweep file or file error,\n"
          "2 usage error, 3 interrupted by a signal (rows kept; rerun to finish)\n");
}

/* --refine and --calibration */
typedef struct refine_args {
  bool refine;
  const char *calibration;
} refine_args;

static int parse(int argc, char **argv, cs_sweep_options *o, refine_args *ra, bool *help) {
  memset(o, 0, sizeof *o);
  memset(ra, 0, sizeof *ra);
  o->progress_s = 1.0;
  *help = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) *help = true;
    else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && i + 1 < argc) o->out_path = argv[++i];
    else if (!strncmp(a, "--out=", 6)) o->out_path = a + 6;
    else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run")) o->dry_run = true;
    else if (!strcmp(a, "-r") || !strcmp(a, "--results-only")) o->results_only = true;
    else if (!strcmp(a, "--txlog") && i + 1 < argc) {
      const char *detail = argv[++i];
      if (!strcmp(detail, "full") || !strcmp(detail, "steps") || !strcmp(detail, "none")) {
        o->results_only = !strcmp(detail, "none");
        o->steps_only = !strcmp(detail, "steps");
      } else {
        fprintf(stderr, "commsweep sweep: --txlog wants full, steps or none, got '%s'\n", detail);
        return 2;
      }
    }
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->progress_s = 0;
    else if (!strcmp(a, "--break-lock")) o->break_lock = true;
    else if (!strcmp(a, "--verify-log")) o->verify_log = true;
    else if (!strcmp(a, "--retry-failed")) o->retry_failed = true;
    else if (!strcmp(a, "--refine")) ra->refine = true;
    else if (!strcmp(a, "--calibration") && i + 1 < argc) ra->calibration = argv[++i];
    else if ((!strcmp(a, "-p") || !strcmp(a, "--progress")) && i + 1 < argc) {
      char *end;
      o->progress_s = strtod(argv[++i], &end);
      if (*end || o->progress_s < 0) {
        fprintf(stderr, "commsweep sweep: --progress wants seconds, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "commsweep sweep: unknown option '%s'\n", a);
      return 2;
    } else if (!o->sweep_path) {
      o->sweep_path = a;
    } else {
      fprintf(stderr, "commsweep sweep: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (*help) return 0;
  if (!o->sweep_path || !o->out_path) {
    fprintf(stderr, "commsweep sweep: need a sweep file and --out FILE.h5\n");
    return 2;
  }
  if (ra->calibration && !ra->refine) {
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
  cs_sweep_options opt;
  refine_args ra;
  bool help;
  int urc = parse(argc, argv, &opt, &ra, &help);
  if (help || urc) {
    /* Usage is decided before MPI starts, identically on every rank; print it once. */
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r || !strcmp(r, "0")) {
      if (urc) fputc('\n', stderr);
      usage(help ? stdout : stderr);
    }
    return urc;
  }
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
  int rc = ra.refine ? cs_sweep_refine(&opt, ra.calibration, comm, &err)
                     : cs_sweep_run(&opt, comm, &sum, &err);
  /* an interrupted sweep said so already, as soon as it stopped */
  if (rc && rc != CS_EINTR && rank == 0) fprintf(stderr, "commsweep sweep: %s\n", err.msg);
  int now_inited = 0, finalized = 0;
  MPI_Initialized(&now_inited);
  MPI_Finalized(&finalized);
  if (!inited && now_inited && !finalized) MPI_Finalize();
  return rc == CS_EINTR ? 3 : rc ? 1 : 0;
}
