/* `commsweep faults`: what leaf faults do to the 2-D fat tree under VTFTR or algorithm A
 * (docs/vtftr.md): reachability, route cases, link counts, VC use, deadlock verdicts; the
 * probability of an unreachable pair for k random faults; the paper's single-pair latencies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commsweep/vcnet.h"

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
          "--latency-figures: the paper's 237/307/237/377 ns single-pair latencies on 8x8.\n");
}

int cs_cli_faults(int argc, char **argv) {
  cs_vcnet_faults_query q = {.topology = "fattree2d:16x16", .endpoints_per_leaf = 1, .seed = 1, .trials = 1};
  const char *probability = NULL;
  int latency = 0, trials_given = 0;
  double sw = 25, link = 10, ep = 36;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--cdg")) {
      q.cdg = 1;
      continue;
    }
    if (!strcmp(a, "--latency-figures")) {
      latency = 1;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "commsweep faults: option %s needs a value (see --help)\n", a);
      return 2;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--topology")) q.topology = v;
    else if (!strcmp(a, "--routing")) q.routing = v;
    else if (!strcmp(a, "--epl")) q.endpoints_per_leaf = atoi(v);
    else if (!strcmp(a, "--faults")) q.faults = v;
    else if (!strcmp(a, "--random")) q.random_count = atoi(v);
    else if (!strcmp(a, "--seed")) q.seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--trials")) q.trials = strtoull(v, NULL, 10), trials_given = 1;
    else if (!strcmp(a, "--probability")) probability = v;
    else if (!strcmp(a, "--switch-ns")) sw = atof(v);
    else if (!strcmp(a, "--link-ns")) link = atof(v);
    else if (!strcmp(a, "--endpoint-ns")) ep = atof(v);
    else {
      fprintf(stderr, "commsweep faults: unknown option '%s' (see --help)\n", a);
      return 2;
    }
  }
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
