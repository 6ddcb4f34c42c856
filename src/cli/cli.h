/* Subcommands of the commsweep binary; each returns the process exit status. */
#ifndef CS_CLI_H
#define CS_CLI_H

int cs_cli_run(int argc, char **argv);
int cs_cli_sweep(int argc, char **argv);
int cs_cli_show(int argc, char **argv);
int cs_cli_export(int argc, char **argv);
int cs_cli_schema(int argc, char **argv);
int cs_cli_route(int argc, char **argv);
int cs_cli_deadlock_check(int argc, char **argv);
int cs_cli_netbench(int argc, char **argv);
int cs_cli_faults(int argc, char **argv);

#endif
