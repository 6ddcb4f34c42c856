/* `commsweep schema`: the columns of /jobs, /job_json, /results, /errors, /txlog and /steplog as
 * Markdown tables, from the same column lists that build the file's HDF5 types
 * (docs/hdf5-schema.md quotes this output, and a test keeps the two equal). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commsweep/cli_opts.h"
#include "commsweep/store.h"

static const char *type_name(const cs_col *c, char *buf, size_t cap) {
  static const char *const names[] = {"uint64", "float64", "uint32", "int32", "int16",
                                      "uint16", "uint8",   "int8"};
  switch (c->kind) {
    case CS_COL_STR:
    case CS_COL_KEY: snprintf(buf, cap, "string[%zu]", c->size); return buf;
    case CS_COL_STATUS: return "int8 enum";
    default: return names[c->kind];
  }
}

static void table(const char *title, const cs_col *cols) {
  printf("### `%s`\n\n| column | type | unit | meaning |\n|---|---|---|---|\n", title);
  char type[32];
  for (const cs_col *c = cols; c->name; c++) {
    printf("| `%s` | %s | %s | ", c->name, type_name(c, type, sizeof type), c->unit ? c->unit : "");
    for (const char *s = c->doc; *s; s++) printf(*s == '|' ? "\\|" : "%c", *s);
    printf(" |\n");
  }
}

int cs_cli_schema(int argc, char **argv) {
  static const cs_cli_opt options[] = {{.kind = CS_CLI_END}};
  static const cs_cli_cmd command = {"schema", options, 0, {0}};
  char unused;
  int urc = cs_cli_parse(&command, argc, argv, &unused);
  if (urc == 1) {
    printf("usage: commsweep schema\n\nPrints the columns of /jobs, /job_json, /results, /errors, "
           "/txlog and /steplog as Markdown tables.\n\n");
    cs_cli_print_options(&command, stdout);
  }
  if (urc) return urc == 1 ? 0 : 2;
  cs_col cols[CS_STORE_MAX_COLUMNS];
  cs_store_job_columns(cols, CS_STORE_MAX_COLUMNS);
  table("/jobs", cols);
  printf("\n");
  cs_store_job_json_columns(cols, CS_STORE_MAX_COLUMNS);
  table("/job_json", cols);
  printf("\n");
  cs_store_result_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  table("/results", cols);
  printf("\n");
  cs_store_error_columns(cols, CS_STORE_MAX_COLUMNS);
  table("/errors", cols);
  printf("\n");
  cs_store_txn_columns(CS_ENGINE_SET_ALL, cols, CS_STORE_MAX_COLUMNS);
  table("/txlog", cols);
  printf("\n");
  cs_store_step_columns(cols, CS_STORE_MAX_COLUMNS);
  table("/steplog", cols);
  return 0;
}
