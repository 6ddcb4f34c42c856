/* Subcommands of the commsweep binary; each returns the process exit status. */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "commsweep/err.h"

int cs_cli_run(int argc, char **argv);
int cs_cli_sweep(int argc, char **argv);
int cs_cli_show(int argc, char **argv);
int cs_cli_export(int argc, char **argv);
int cs_cli_schema(int argc, char **argv);
int cs_cli_repair(int argc, char **argv);
int cs_cli_calibrate(int argc, char **argv);
/* True when a launcher (mpirun, srun --mpi=pmix, hydra) started this process (cmd_sweep.c). */
bool cs_cli_launched_by_mpi(void);
int cs_cli_pareto(int argc, char **argv);
int cs_cli_report(int argc, char **argv);

/* Where `pareto` and `report` take their fronts from: a file, and the objectives of a sweep
 * file's "pareto" section or of comma-separated lists (cmd_pareto.c). */
typedef struct cs_cli_objectives {
  const char *path, *sweep, *minimize, *maximize, *workload;
} cs_cli_objectives;
/* What is missing or contradictory in o, for a usage error; NULL when nothing. */
const char *cs_cli_objectives_missing(const cs_cli_objectives *o);
struct cs_pareto_set;
struct cs_pareto_filter;
int cs_cli_pareto_load(const cs_cli_objectives *o, const struct cs_pareto_filter *f,
                       struct cs_pareto_set *set, cs_err *err);
/* The fronts as one JSON document (`pareto --json`, the report's input). */
int cs_cli_pareto_json(const char *path, const struct cs_pareto_set *set, FILE *f);

/* An output file written under a temporary name and renamed over `path` when complete
 * (outfile.c).  Non-regular targets (/dev/stdout, FIFOs) are written directly. */
typedef struct cs_cli_out {
  FILE *f;
  char path[PATH_MAX], tmp[PATH_MAX + 32];
} cs_cli_out;
/* Refuses `input` itself (same device and inode) and paths that do not fit. */
int cs_cli_out_open(cs_cli_out *o, const char *path, const char *input, cs_err *err);
/* Closes; keep: rename into place (unless the writes failed), else remove the temporary. */
int cs_cli_out_close(cs_cli_out *o, bool keep, cs_err *err);
/* CS_EINVAL naming the lengths when path plus `suffix` more characters would not fit. */
int cs_cli_check_path(const char *what, const char *path, size_t suffix, cs_err *err);

#endif
