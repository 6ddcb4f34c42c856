/* Command-line options as one declarative table per command: each row names an option, where
 * its value goes and what it means, and the same rows drive parsing, the options part of
 * --help and the errors for an unknown option, a missing value or a value out of its range.
 * Invariant: a command accepts exactly the options its table lists (plus -h/--help). */
#ifndef COMMSWEEP_CLI_OPTS_H
#define COMMSWEEP_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum cs_cli_kind {
  CS_CLI_END = 0, /* ends a table */
  CS_CLI_TEXT,    /* not an option: a line of --help (a heading, a note between options) */
  CS_CLI_FLAG,    /* bool at off becomes true */
  CS_CLI_CLEAR,   /* bool at off becomes false */
  CS_CLI_CONST,   /* int at off becomes (int)min */
  CS_CLI_STR,     /* const char * at off points at the value */
  CS_CLI_INT,     /* int at off, an integer in [min, max] */
  CS_CLI_LONG,    /* long at off, an integer in [min, max] */
  CS_CLI_U64,     /* uint64_t at off, an unsigned integer up to max (min is ignored) */
  CS_CLI_DOUBLE,  /* double at off, a number in [min, max] */
  CS_CLI_FN,      /* set() takes the value (a rule of its own, a repeatable option); without
                     an arg name the option takes no value and set() gets NULL */
} cs_cli_kind;

struct cs_cli_opt;
/* CS_CLI_FN: stores value into args; 0, or 2 after printing why on stderr. */
typedef int (*cs_cli_set_fn)(void *args, const char *option, const char *value);

typedef struct cs_cli_opt {
  cs_cli_kind kind;
  const char *name;    /* "--out" */
  const char *alias;   /* "-o", or NULL */
  const char *arg;     /* the value's name in --help ("FILE.h5"); NULL for an option without one */
  size_t off;          /* offsetof(the command's argument struct, the field) */
  double min, max;     /* numeric bounds (inclusive); CS_CLI_CONST: the value */
  const char *want;    /* numeric kinds: "a count", for "--limit wants a count, got 'x'" */
  cs_cli_set_fn set;   /* CS_CLI_FN */
  const char *help;    /* '\n' starts a continuation line; CS_CLI_TEXT: the line itself */
  void (*help_more)(FILE *f); /* optional: appended to help's last line (a list known at run time) */
  bool hidden;         /* accepted but left out of --help (the tests' fault options: docs say where) */
} cs_cli_opt;

typedef struct cs_cli_cmd {
  const char *name;       /* "sweep": every message starts "commsweep sweep: " */
  const cs_cli_opt *opts; /* ends with a CS_CLI_END row */
  size_t npos;            /* positional arguments taken, at most 2 */
  size_t pos_off[2];      /* the const char * fields they go to, in order */
} cs_cli_cmd;

/* Fills args from argv[1..argc) by the table ("--name VALUE", "--name=VALUE", "-a VALUE").
 * Fields the command line does not name keep the values the caller set.  Returns 0 to go on,
 * 1 when -h/--help was given, 2 after printing a usage error on stderr that names the command
 * and the option (an unknown option, a missing or bad value, an unexpected argument) and a
 * line saying that --help lists the options. */
int cs_cli_parse(const cs_cli_cmd *c, int argc, char **argv, void *args);
/* The options part of --help, from the table, ending with -h, --help. */
void cs_cli_print_options(const cs_cli_cmd *c, FILE *f);

#endif
