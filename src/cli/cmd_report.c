/* `commsweep report FILE.h5 --out DIR`: a page a person reads.  The fronts are computed here,
 * in C (the same as `commsweep pareto --json`, written to DIR/fronts.json); scripts/report.py
 * draws them, with the file's rows, into PNGs and writes DIR/index.html, self-contained (no
 * network, the PNGs next to it). */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "commsweep/pareto.h"

extern char **environ;

#ifndef CS_SCRIPTS_DIR
#define CS_SCRIPTS_DIR "scripts"
#endif

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
          "$COMMSWEEP_REPORT_SCRIPT (default %s/report.py).\n",
          CS_SCRIPTS_DIR);
}

typedef struct report_args {
  cs_cli_objectives obj;
  cs_pareto_filter filter;
  const char *dir;
} report_args;

static int parse(int argc, char **argv, report_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    const char **slot = !strcmp(o, "--out") || !strcmp(o, "-o") ? &a->dir
                        : !strcmp(o, "--sweep")                 ? &a->obj.sweep
                        : !strcmp(o, "--minimize")              ? &a->obj.minimize
                        : !strcmp(o, "--maximize")              ? &a->obj.maximize
                        : !strcmp(o, "--workload")              ? &a->obj.workload
                        : !strcmp(o, "--engine")                ? &a->filter.engine
                        : !strcmp(o, "--primitive")             ? &a->filter.primitive
                                                                : NULL;
    if (!strcmp(o, "-h") || !strcmp(o, "--help")) return 1;
    if (slot && !v) {
      fprintf(stderr, "commsweep report: option '%s' needs a value\n", o);
      return 2;
    }
    if (slot) {
      *slot = argv[++i];
    } else if (o[0] == '-') {
      fprintf(stderr, "commsweep report: unknown option '%s'\n", o);
      return 2;
    } else if (!a->obj.path) {
      a->obj.path = o;
    } else {
      fprintf(stderr, "commsweep report: unexpected argument '%s'\n", o);
      return 2;
    }
  }
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
  if (urc) {
    if (urc == 2) fputc('\n', stderr);
    usage(urc == 1 ? stdout : stderr);
    return urc == 1 ? 0 : 2;
  }
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
