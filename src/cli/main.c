/* The commsweep command: dispatch to subcommands.  Exit codes: 0 success, 1 a job or file
 * error (message on stderr), 2 a usage error, 3 a sweep stopped by a signal (cmd_sweep.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commsweep/engine.h"
#include "commsweep/model.h"

/* The commands of the binary; the subcommands an engine brings (cs_engine_ops.tools) are
 * found through the engine registry, and --help lists them where the ENGINE_TOOLS row stands. */
#define ENGINE_TOOLS ""

typedef struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"run", cs_cli_run, "run one job (spec + adapter config) and print its EngineResult"},
    {"sweep", cs_cli_sweep, "run a sweep file over MPI ranks into one HDF5 file (cache + output)"},
    {"show", cs_cli_show, "print the results of an HDF5 file as a table, with filters"},
    {"export", cs_cli_export, "export a job's transaction records as JSON lines"},
    {"schema", cs_cli_schema, "print the columns of the HDF5 file (units, meanings)"},
    {ENGINE_TOOLS, NULL, NULL}, /* here --help lists the engines' tools (cs_engine_ops.tools) */
    {"calibrate", cs_cli_calibrate, "fit the math engine's constants to dcin rows of a file; held-out error, bands"},
    {"repair", cs_cli_repair, "rebuild a damaged HDF5 file, keeping every row that verifies"},
    {"pareto", cs_cli_pareto, "Pareto fronts per workload and engine of an HDF5 file"},
    {"report", cs_cli_report, "an HTML page of an HDF5 file: fronts, engine against engine, bandwidth"},
    {NULL, NULL, NULL}};

static void usage(FILE *f) {
  fprintf(f,
          "commsweep %s: collective communication on chip interconnects, swept over MPI ranks\n"
          "\n"
          "usage: commsweep COMMAND [options]   (commsweep COMMAND --help for details)\n"
          "\n"
          "commands:\n",
          CS_ADAPTER_VERSION);
  for (const command *c = commands; c->name; c++) {
    if (c->fn) fprintf(f, "  %-15s %s\n", c->name, c->summary);
    else
      for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
        for (const cs_engine_tool *t = (*e)->tools; t && t->name; t++)
          fprintf(f, "  %-15s %s\n", t->name, t->summary);
  }
  fprintf(f, "\nengines:\n");
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    fprintf(f, "  %-8s %s\n", (*e)->name, (*e)->summary);
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const command *c = commands; c->name; c++)
    if (c->fn && !strcmp(argv[1], c->name)) return c->fn(argc - 1, argv + 1);
  for (const cs_engine_ops *const *e = cs_engine_list(); *e; e++)
    for (const cs_engine_tool *t = (*e)->tools; t && t->name; t++)
      if (!strcmp(argv[1], t->name)) return t->run(argc - 1, argv + 1);
  fprintf(stderr, "commsweep: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
