/* `commsweep report FILE.h5 --out DIR`: a page a person reads.  The fronts are computed here,
 * in C (the same as `commsweep pareto --json`, written to DIR/fronts.json); scripts/report.py
 * draws them, with the file's rows, into PNGs and writes DIR/index.html, self-contained (no
 * network, the PNGs next to it). */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/pareto.h"

extern char **environ;

#ifndef CS_SCRIPTS_DIR
#define CS_SCRIPTS_DIR "scripts"
#endif

typedef struct report_args {
  cs_cli_objectives obj;
  cs_pareto_filter filter;
  const char *dir;
} report_args;

#define A(field) offsetof(report_args, field)
static const cs_cli_opt options[] = {
    {CS_CLI_STR, "--out", "-o", "DIR", A(dir), .help = "the directory of index.html (required)"},
    {CS_CLI_STR, "--sweep", NULL, "SWEEP.json", A(obj.sweep),
     .help = "the objectives of the sweep file's \"pareto\" section"},
    {CS_CLI_STR, "--minimize", NULL, "COLS", A(obj.minimize), .help = "comma-separated columns to minimise"},
    {CS_CLI_STR, "--maximize", NULL, "COLS", A(obj.maximize), .help = "comma-separated columns to maximise"},
    {CS_CLI_STR, "--workload", NULL, "COLS", A(obj.workload),
     .help = "the job columns whose values make a workload"},
    {CS_CLI_STR, "--engine", NULL, "E", A(filter.engine), .help = "rows of this engine"},
    {CS_CLI_STR, "--primitive", NULL, "P", A(filter.primitive), .help = "rows of this primitive"},
    {.kind = CS_CLI_END}};
#undef A

static const cs_cli_cmd command = {"report", options, 1, {offsetof(report_args, obj.path)}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep report FILE.h5 --out DIR [--sweep SWEEP.json | --minimize COLS\n"
          "                        [--maximize COLS] [--workload COLS]] [--engine E] [--primitive P]\n"
          "\n"
          "Writes DIR/index.html, one self-contained page (no network; its PNGs next to it): each\n"
          "workload's front with its dominated points, one engine against another on the same\n"
          "designs with the +/-5%% band, bus bandwidth against message size per engine, and a table\n"
          "of each front.  The objectives are those of `commsweep pareto` (docs/pareto.md); the\n"
          "fronts are computed from the file (DIR/fronts.json holds them).\n"
          "\n"
          "Draws with matplotlib: $COMMSWEEP_PYTHON (default /usr/bin/python3) runs\n"
          "$COMMSWEEP_REPORT_SCRIPT (default %s/report.py).\n"
          "\n",
          CS_SCRIPTS_DIR);
  cs_cli_print_options(&command, f);
}

/* 0 to go on, 1 for --help, 2 for a usage error (printed). */
static int parse(int argc, char **argv, report_args *a) {
  memset(a, 0, sizeof *a);
  int rc = cs_cli_parse(&command, argc, argv, a);
  if (rc) return rc;
  const char *why = a->obj.path && !a->dir ? "--out DIR is required"
                                          : cs_cli_objectives_missing(&a->obj);
  if (why) {
    fprintf(stderr, "commsweep report: %s\n", why);
    return 2;
  }
  return 0;
}

/* Runs the drawing script and waits for it; its exit status, or -1 when it could not start. */
static int draw(const report_args *a, const char *fronts) {
  const char *py = getenv("COMMSWEEP_PYTHON"), *script = getenv("COMMSWEEP_REPORT_SCRIPT");
  char def[PATH_MAX];
  snprintf(def, sizeof def, "%s/report.py", CS_SCRIPTS_DIR);
  char *argv[] = {(char *)(py && *py ? py : "/usr/bin/python3"),
                  (char *)(script && *script ? script : def), (char *)a->obj.path,
                  (char *)fronts, (char *)a->dir, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
  if (rc) {
    fprintf(stderr, "commsweep report: cannot run %s: %s\n", argv[0], strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  fprintf(stderr, "commsweep report: %s %s died of signal %d\n", argv[0], argv[1],
          WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

int cs_cli_report(int argc, char **argv) {
  report_args a;
  int urc = parse(argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  cs_err err;
  cs_err_clear(&err);
  char fronts[PATH_MAX];
  if (cs_cli_check_path("--out", a.dir, strlen("/fronts.json"), &err)) {
    fprintf(stderr, "commsweep report: %s\n", err.msg);
    return 2;
  }
  snprintf(fronts, sizeof fronts, "%s/fronts.json", a.dir);
  if (mkdir(a.dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "commsweep report: --out '%s': %s\n", a.dir, strerror(errno));
    return 1;
  }
  cs_pareto_set set;
  if (cs_cli_pareto_load(&a.obj, &a.filter, &set, &err)) {
    fprintf(stderr, "commsweep report: %s\n", err.msg);
    return 1;
  }
  FILE *f = fopen(fronts, "w");
  int rc = f ? cs_cli_pareto_json(a.obj.path, &set, f) : 1;
  if (f && fclose(f) != 0) rc = 1;
  cs_pareto_set_free(&set);
  if (rc) {
    fprintf(stderr, "commsweep report: cannot write '%s': %s\n", fronts, strerror(errno));
    return 1;
  }
  int drc = draw(&a, fronts);
  if (drc) {
    if (drc > 0) fprintf(stderr, "commsweep report: the drawing script failed (exit %d)\n", drc);
    return 1;
  }
  printf("report: %s/index.html\n", a.dir);
  return 0;
}
