/* The subcommands the vcnet engine brings to the commsweep binary (cs_engine_ops.tools):
 * route, deadlock-check and netbench (cli_net.c), faults (cli_faults.c).  Each takes the
 * subcommand's argv (argv[0] its name) and returns the process exit status. */
#ifndef CS_VCNET_CLI_TOOLS_H
#define CS_VCNET_CLI_TOOLS_H

#include "commsweep/engine.h"

int vcn_cli_route(int argc, char **argv);
int vcn_cli_deadlock_check(int argc, char **argv);
int vcn_cli_netbench(int argc, char **argv);
int vcn_cli_faults(int argc, char **argv);

extern const cs_engine_tool vcn_cli_tools[]; /* the four, in `commsweep --help` order */

#endif
