/* `commsweep faults`: what leaf faults do to the 2-D fat tree under VTFTR or algorithm A
 * (docs/vtftr.md): reachability, route cases, link counts, VC use, deadlock verdicts; the
 * probability of an unreachable pair for k random faults; the paper's single-pair latencies. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_tools.h"
#include "commsweep/cli_opts.h"
#include "commsweep/vcnet.h"

typedef struct faults_args {
  cs_vcnet_faults_query q;
  const char *probability;
  int latency, trials_given;
  double sw, link, ep;
} faults_args;

static int set_trials(void *args, const char *option, const char *v) {
  faults_args *a = args;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (!*v || *end || errno || v[0] == '-') {
    fprintf(stderr, "commsweep faults: %s wants a non-negative integer, got '%s'\n", option, v);
    return 2;
  }
  a->q.trials = n;
  a->trials_given = 1;
  return 0;
}

#define A(field) offsetof(faults_args, field)
#define NS(name, field, help_text)                                                              \
  {CS_CLI_DOUBLE, name, NULL, "NS", A(field), 0, 1e300, "a non-negative number", .help = help_text}
static const cs_cli_opt options[] = {
    {CS_CLI_STR, "--topology", NULL, "T", A(q.topology), .help = "fattree2d:RxC (fattree2d:16x16)"},
    {CS_CLI_STR, "--routing", NULL, "R", A(q.routing), .help = "vtftr (default) | vtftr_novc | alg_a | xy"},
    {CS_CLI_INT, "--epl", NULL, "N", A(q.endpoints_per_leaf), 0, 2147483647.0, "a non-negative integer",
     .help = "endpoints per leaf (1)"},
    {CS_CLI_STR, "--faults", NULL, "\"r,c;!r,c\"", A(q.faults),
     .help = "faulty leaves (\"!\": a fresh fault, not yet in the tables)"},
    {CS_CLI_INT, "--random", NULL, "K", A(q.random_count), 0, 2147483647.0, "a non-negative integer",
     .help = "K random known faults per trial"},
    {CS_CLI_U64, "--seed", NULL, "S", A(q.seed), 0, 18446744073709551615.0, "a non-negative integer",
     .help = "trial t draws from S + t (1)"},
    {CS_CLI_FN, "--trials", NULL, "N", .set = set_trials,
     .help = "trials (1; --probability: 100000)"},
    {CS_CLI_CONST, "--cdg", NULL, NULL, A(q.cdg), 1,
     .help = "also the channel-dependency verdicts, with and without the VC switch"},
    {CS_CLI_STR, "--probability", NULL, "K1,K2,...", A(probability),
     .help = "probability that K random faults leave a healthy pair unreachable"},
    {CS_CLI_CONST, "--latency-figures", NULL, NULL, A(latency), 1,
     .help = "the paper's single-pair latencies on 8x8"},
    NS("--switch-ns", sw, "switch delay (25)"),
    NS("--link-ns", link, "link delay (10)"),
    NS("--endpoint-ns", ep, "endpoint delay (36)"),
    {.kind = CS_CLI_END}};
#undef NS
#undef A

static const cs_cli_cmd command = {"faults", options, 0, {0}};

static void usage(FILE *f) {
  fprintf(f,
          "usage: commsweep faults [--topology fattree2d:RxC] [--routing vtftr|vtftr_novc|alg_a|xy]\n"
          "                        [--epl N] [--faults \"r,c;!r,c\"] [--random K --seed S --trials N] [--cdg]\n"
          "       commsweep faults --probability K1,K2,... [--topology T] [--trials N] [--seed S]\n"
          "       commsweep faults --latency-figures [--switch-ns 25] [--link-ns 10] [--endpoint-ns 36]\n"
          "\nFault sets: a list of leaves (\"!\" marks a fresh fault, one the candidate tables do not\n"
          "know yet) and/or K random known faults, drawn anew in each of N trials from seed + trial.\n"
          "Prints which healthy pairs stay reachable, the route cases, links per route, the use of\n"
          "the fault-tolerant VC class and, with --cdg, the channel-dependency verdict of the\n"
          "routing and of VTFTR without its VC switch.  Exit status 0 when every pair stayed\n"
          "reachable (and every CDG acyclic), 3 otherwise.\n"
          "--probability: exact and Monte Carlo probability that K random faults leave some healthy\n"
          "pair unreachable (default topology fattree2d:16x16, 100000 trials).\n"
          "--latency-figures: the paper's 237/307/237/377 ns single-pair latencies on 8x8.\n\n");
  cs_cli_print_options(&command, f);
}

int vcn_cli_faults(int argc, char **argv) {
  faults_args a = {.q = {.topology = "fattree2d:16x16", .endpoints_per_leaf = 1, .seed = 1, .trials = 1},
                   .sw = 25, .link = 10, .ep = 36};
  int urc = cs_cli_parse(&command, argc, argv, &a);
  if (urc == 1) usage(stdout);
  if (urc) return urc == 1 ? 0 : 2;
  cs_vcnet_faults_query q = a.q;
  const char *probability = a.probability;
  int latency = a.latency, trials_given = a.trials_given;
  double sw = a.sw, link = a.link, ep = a.ep;
  cs_err err;
  cs_err_clear(&err);
  if (latency) {
    double fig[4];
    if (cs_vcnet_vtftr_latency(sw, link, ep, stdout, fig, &err)) {
      fprintf(stderr, "commsweep faults: %s\n", err.msg);
      return 1;
    }
    return 0;
  }
  if (probability) {
    const char *p = probability;
    while (*p) {
      char *end;
      long k = strtol(p, &end, 10);
      if (end == p) {
        fprintf(stderr, "commsweep faults: bad --probability list '%s'\n", probability);
        return 2;
      }
      if (cs_vcnet_vtftr_probability(q.topology, (int)k, trials_given ? q.trials : 100000, q.seed, stdout, &err)) {
        fprintf(stderr, "commsweep faults: %s\n", err.msg);
        return 1;
      }
      p = *end == ',' ? end + 1 : end;
    }
    return 0;
  }
  int reach, acyclic;
  if (cs_vcnet_faults(&q, stdout, &reach, &acyclic, &err)) {
    fprintf(stderr, "commsweep faults: %s\n", err.msg);
    return 1;
  }
  return reach && acyclic ? 0 : 3;
}
