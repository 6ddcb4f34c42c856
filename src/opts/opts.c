/* The option-table parser and --help printer of every subcommand (commsweep/cli_opts.h), those
 * of src/cli and the engines' tools alike.  Numbers are parsed whole (no trailing characters)
 * and checked against the row's bounds, so a value that is not what the option wants is a usage
 * error naming the option and the value, never a silent 0. */
#include "commsweep/cli_opts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A CS_CLI_FN row without an arg name takes none: set() gets NULL. */
static bool takes_value(const cs_cli_opt *o) {
  return o->kind >= CS_CLI_STR && (o->kind != CS_CLI_FN || o->arg);
}

/* The row whose name or alias is `a` (before any '='), or NULL. */
static const cs_cli_opt *find(const cs_cli_cmd *c, const char *a, size_t len) {
  for (const cs_cli_opt *o = c->opts; o->kind != CS_CLI_END; o++) {
    if (o->kind == CS_CLI_TEXT) continue;
    if ((strlen(o->name) == len && !strncmp(o->name, a, len)) ||
        (o->alias && strlen(o->alias) == len && !strncmp(o->alias, a, len)))
      return o;
  }
  return NULL;
}

static int bad_value(const cs_cli_cmd *c, const cs_cli_opt *o, const char *v) {
  fprintf(stderr, "commsweep %s: %s wants %s, got '%s'\n", c->name, o->name, o->want, v);
  return 2;
}

static int set_value(const cs_cli_cmd *c, const cs_cli_opt *o, const char *v, void *args) {
  char *at = (char *)args + o->off, *end = NULL;
  errno = 0;
  switch (o->kind) {
  case CS_CLI_STR:
    *(const char **)at = v;
    return 0;
  case CS_CLI_FN:
    return o->set(args, o->name, v);
  case CS_CLI_INT:
  case CS_CLI_LONG: {
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < o->min || n > o->max) return bad_value(c, o, v);
    if (o->kind == CS_CLI_INT) *(int *)at = (int)n;
    else *(long *)at = n;
    return 0;
  }
  case CS_CLI_U64: {
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || (double)n > o->max) return bad_value(c, o, v);
    *(uint64_t *)at = n;
    return 0;
  }
  case CS_CLI_DOUBLE: {
    double x = strtod(v, &end);
    if (!*v || *end || !(x >= o->min && x <= o->max)) return bad_value(c, o, v);
    *(double *)at = x;
    return 0;
  }
  default:
    return 2;
  }
}

static int parse(const cs_cli_cmd *c, int argc, char **argv, void *args) {
  size_t npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
    if (a[0] != '-' || !a[1]) { /* "-" alone is a path (stdin, stdout) */
      if (npos == c->npos) {
        fprintf(stderr, "commsweep %s: unexpected argument '%s'\n", c->name, a);
        return 2;
      }
      *(const char **)((char *)args + c->pos_off[npos++]) = a;
      continue;
    }
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    const cs_cli_opt *o = find(c, a, eq ? (size_t)(eq - a) : strlen(a));
    if (!o || (eq && !takes_value(o))) {
      fprintf(stderr, "commsweep %s: unknown option '%s'\n", c->name, a);
      return 2;
    }
    char *at = (char *)args + o->off;
    if (o->kind == CS_CLI_FLAG || o->kind == CS_CLI_CLEAR) {
      *(bool *)at = o->kind == CS_CLI_FLAG;
      continue;
    }
    if (o->kind == CS_CLI_CONST) {
      *(int *)at = (int)o->min;
      continue;
    }
    if (!takes_value(o)) {
      if (o->set(args, o->name, NULL)) return 2;
      continue;
    }
    if (!eq && i + 1 >= argc) {
      fprintf(stderr, "commsweep %s: option '%s' needs a value (%s)\n", c->name, a,
              o->arg ? o->arg : "see --help");
      return 2;
    }
    if (set_value(c, o, eq ? eq + 1 : argv[++i], args)) return 2;
  }
  return 0;
}

int cs_cli_parse(const cs_cli_cmd *c, int argc, char **argv, void *args) {
  int rc = parse(c, argc, argv, args);
  if (rc == 2) fprintf(stderr, "(commsweep %s --help lists the options)\n", c->name);
  return rc;
}

/* "-o, --out FILE.h5", or "    --txlog DETAIL" when other options have a short alias */
static int label(const cs_cli_opt *o, bool indent, char *buf, size_t cap) {
  return snprintf(buf, cap, "%s%s%s%s%s", o->alias ? o->alias : indent ? "    " : "",
                  o->alias ? ", " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void cs_cli_print_options(const cs_cli_cmd *c, FILE *f) {
  int width = 12;
  bool indent = false;
  char buf[96];
  for (const cs_cli_opt *o = c->opts; o->kind != CS_CLI_END; o++) indent |= o->alias != NULL;
  for (const cs_cli_opt *o = c->opts; o->kind != CS_CLI_END; o++) {
    int n = o->kind == CS_CLI_TEXT || o->hidden ? 0 : label(o, indent, buf, sizeof buf);
    if (n > width && n <= 26) width = n;
  }
  for (const cs_cli_opt *o = c->opts; o->kind != CS_CLI_END; o++) {
    if (o->hidden) continue;
    if (o->kind == CS_CLI_TEXT) {
      fprintf(f, "%s\n", o->help);
      continue;
    }
    int n = label(o, indent, buf, sizeof buf);
    fprintf(f, "  %-*s", width, buf);
    /* a label wider than the column gets its help on the next line */
    if (n > width) fprintf(f, "\n  %-*s", width, "");
    const char *h = o->help;
    for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
      fprintf(f, "  %.*s\n  %-*s", (int)(nl - h), h, width, "");
    fprintf(f, "  %s", h);
    if (o->help_more) o->help_more(f);
    fputc('\n', f);
  }
  fprintf(f, "  %-*s  %s\n", width, "-h, --help", "this text");
}
