/* `commsweep route`, `commsweep deadlock-check` and `commsweep netbench`: network tools on the
 * router-network model of the vcnet engine (docs/vcnet.md). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_tools.h"
#include "commsweep/cli_opts.h"
#include "commsweep/vcnet.h"

#define INTEGER(kind, name, arg, field, help_text)                                          \
  {kind, name, NULL, arg, offsetof(ARGS, field), 0, 2147483647.0, "a non-negative integer",      \
   .help = help_text}
#define COUNT64(name, arg, field, help_text)                                                   \
  {CS_CLI_U64, name, NULL, arg, offsetof(ARGS, field), 0, 18446744073709551615.0,               \
   "a non-negative integer", .help = help_text}
#define NUMBER(name, arg, field, help_text)                                                    \
  {CS_CLI_DOUBLE, name, NULL, arg, offsetof(ARGS, field), 0, 1e300, "a non-negative number",   \
   .help = help_text}
#define TEXT(name, arg, field, help_text)                                                      \
  {CS_CLI_STR, name, NULL, arg, offsetof(ARGS, field), .help = help_text}

typedef struct route_args {
  const char *topo, *routing, *src, *dst, *faults;
  int vcs;
} route_args;

#define ARGS route_args
static const cs_cli_opt route_options[] = {
    TEXT("--topology", "T", topo, "torus:4x4x4, mesh:8x8, fattree2d:RxC (required)"),
    TEXT("--routing", "R", routing, "dor | dor_dateline; vtftr | vtftr_novc | alg_a | xy on fattree2d"),
    INTEGER(CS_CLI_INT, "--vcs", "N", vcs, "VCs per port, for the VC numbers printed (2)"),
    TEXT("--src", "ROUTER", src, "X,Y,Z coordinates (dimension 0 first) or a router id (required)"),
    TEXT("--dst", "ROUTER", dst, "the destination, as --src (required)"),
    TEXT("--faults", "\"r,c;!r,c\"", faults, "fattree2d only: faulty leaves (\"!\": not yet in the tables)"),
    {.kind = CS_CLI_END}};
#undef ARGS
static const cs_cli_cmd route_command = {"route", route_options, 0, {0}};

int vcn_cli_route(int argc, char **argv) {
  route_args a = {.vcs = 2};
  int urc = cs_cli_parse(&route_command, argc, argv, &a);
  if (urc == 1) {
    printf("usage: commsweep route --topology torus:4x4x4 [--routing dor|dor_dateline] [--vcs N]\n"
           "                      --src X,Y,Z --dst X,Y,Z\n"
           "\nPrints the dimension-order route hop by hop: router, output port, VC class and its VCs.\n"
           "Routers are coordinates (dimension 0 first) or router ids.  The routing defaults to\n"
           "dor_dateline on a torus and dor on a mesh; --vcs (default 2) only labels VC numbers.\n"
           "On fattree2d:RxC routers are leaves \"r,c\", the routing vtftr (default), vtftr_novc,\n"
           "alg_a or xy, --faults \"r,c;!r,c\" lists faulty leaves (\"!\": not yet in the tables),\n"
           "and the VTFTR case of the route is printed (docs/vtftr.md).\n\n");
    cs_cli_print_options(&route_command, stdout);
  }
  if (urc) return urc == 1 ? 0 : 2;
  const char *topo = a.topo, *routing = a.routing, *src = a.src, *dst = a.dst, *faults = a.faults;
  int vcs = a.vcs;
  if (!topo || !src || !dst) {
    fprintf(stderr, "commsweep route: --topology, --src and --dst are required (see --help)\n");
    return 2;
  }
  cs_err err;
  cs_err_clear(&err);
  int hops;
  if (cs_vcnet_route_faults(topo, routing, vcs, faults, src, dst, stdout, &hops, &err)) {
    fprintf(stderr, "commsweep route: %s\n", err.msg);
    return 1;
  }
  return 0;
}

typedef struct deadlock_args {
  const char *topo, *routing;
} deadlock_args;

#define ARGS deadlock_args
static const cs_cli_opt deadlock_options[] = {
    TEXT("--topology", "T", topo, "torus:16x16x16, mesh:8x8, fattree2d:RxC (required)"),
    TEXT("--routing", "R", routing, "dor_dateline on a torus, vtftr on fattree2d, dor otherwise (default)"),
    {.kind = CS_CLI_END}};
#undef ARGS
static const cs_cli_cmd deadlock_command = {"deadlock-check", deadlock_options, 0, {0}};

int vcn_cli_deadlock_check(int argc, char **argv) {
  deadlock_args a = {0};
  int urc = cs_cli_parse(&deadlock_command, argc, argv, &a);
  if (urc == 1) {
    printf("usage: commsweep deadlock-check --topology torus:16x16x16 [--routing dor|dor_dateline]\n"
           "\nBuilds the channel dependency graph (channel = link x VC class) of the routing function\n"
           "over every source/destination pair and prints \"acyclic\" or one cycle, channel by\n"
           "channel.  Exit status 0 when acyclic, 3 when a cycle exists.\n\n");
    cs_cli_print_options(&deadlock_command, stdout);
  }
  if (urc) return urc == 1 ? 0 : 2;
  const char *topo = a.topo, *routing = a.routing;
  if (!topo) {
    fprintf(stderr, "commsweep deadlock-check: --topology is required (see --help)\n");
    return 2;
  }
  if (!routing)
    routing = !strncmp(topo, "torus:", 6) ? "dor_dateline" : !strncmp(topo, "fattree2d:", 10) ? "vtftr" : "dor";
  cs_err err;
  cs_err_clear(&err);
  int acyclic;
  if (cs_vcnet_deadlock_check(topo, routing, stdout, &acyclic, &err)) {
    fprintf(stderr, "commsweep deadlock-check: %s\n", err.msg);
    return 1;
  }
  return acyclic ? 0 : 3;
}

typedef struct netbench_args {
  const char *topo, *routing, *opt_file, *rates, *faults;
  int vcs, depth, link, epr, d[4];
  cs_vcnet_bench b;
} netbench_args;

static int set_delays(void *args, const char *option, const char *v) {
  int *d = ((netbench_args *)args)->d, n = 0;
  if (sscanf(v, "%d,%d,%d,%d%n", &d[0], &d[1], &d[2], &d[3], &n) != 4 || v[n]) {
    fprintf(stderr, "commsweep netbench: %s wants four stage delays RC,VA,SA,ST, got '%s'\n",
            option, v);
    return 2;
  }
  return 0;
}

#define ARGS netbench_args
static const cs_cli_opt netbench_options[] = {
    {CS_CLI_TEXT, .help = "network options (or --options FILE.json with the engine's option object):"},
    TEXT("--options", "FILE.json", opt_file, "the vcnet engine's option object (the network options below\n"
                                             "are then ignored)"),
    TEXT("--topology", "T", topo, "torus:8x8 (default), mesh:8x8, torus:4x4x4 ..."),
    TEXT("--routing", "R", routing, "dor_dateline on a torus, dor on a mesh (default)"),
    INTEGER(CS_CLI_INT, "--vcs", "N", vcs, "VCs per port (2)"),
    INTEGER(CS_CLI_INT, "--depth", "N", depth, "flits per VC (8)"),
    {CS_CLI_FN, "--delays", NULL, "RC,VA,SA,ST", .set = set_delays, .help = "stage delays (1,1,1,1)"},
    INTEGER(CS_CLI_INT, "--link", "N", link, "link latency (1)"),
    INTEGER(CS_CLI_INT, "--epr", "N", epr, "endpoints per router (1)"),
    TEXT("--faults", "\"r,c;..\"", faults, "fattree2d:RxC only: faulty leaves (routing vtftr by default;\n"
                                          "docs/vtftr.md)"),
    {CS_CLI_TEXT, .help = "traffic options:"},
    TEXT("--pattern", "P", b.pattern, "uniform | transpose | bitcomp | tornado | hotspot (uniform)"),
    NUMBER("--rate", "R", b.rate, "offered flits/endpoint/cycle (0.1)"),
    TEXT("--rates", "R1,R2,...", rates, "sweep these rates, CSV out"),
    INTEGER(CS_CLI_INT, "--packet", "N", b.packet_flits, "flits per packet (1)"),
    NUMBER("--hotspot", "F", b.hotspot_fraction, "share sent to endpoint 0 (0.1)"),
    COUNT64("--warmup", "N", b.warmup_cycles, "warm-up cycles (1000)"),
    COUNT64("--measure", "N", b.measure_cycles, "measured cycles (10000)"),
    COUNT64("--drain", "N", b.drain_limit, "cycles the measured packets may take to drain (50000)"),
    COUNT64("--seed", "N", b.seed, "random seed (1)"),
    {.kind = CS_CLI_END}};
#undef ARGS
static const cs_cli_cmd netbench_command = {"netbench", netbench_options, 0, {0}};

int vcn_cli_netbench(int argc, char **argv) {
  netbench_args a = {.topo = "torus:8x8", .faults = "", .vcs = 2, .depth = 8, .link = 1, .epr = 1,
                     .d = {1, 1, 1, 1},
                     .b = {.pattern = "uniform", .rate = 0.1, .packet_flits = 1,
                           .warmup_cycles = 1000, .measure_cycles = 10000, .drain_limit = 50000,
                           .seed = 1, .hotspot_fraction = 0.1}};
  int urc = cs_cli_parse(&netbench_command, argc, argv, &a);
  if (urc == 1) {
    printf("usage: commsweep netbench [network options] [traffic options]\n"
           "\nSynthetic traffic on the vcnet router network: Bernoulli injection, one destination\n"
           "pattern; prints average and 99th-percentile packet latency (cycles, creation to tail\n"
           "delivery) and accepted throughput (flits/endpoint/cycle).  With --rates it sweeps the\n"
           "rate and prints one CSV row per rate (scripts/netbench_curve draws the PNG).\n\n");
    cs_cli_print_options(&netbench_command, stdout);
  }
  if (urc) return urc == 1 ? 0 : 2;
  const char *topo = a.topo, *routing = a.routing, *opt_file = a.opt_file, *rates = a.rates;
  const char *faults = a.faults;
  int vcs = a.vcs, depth = a.depth, link = a.link, epr = a.epr, *d = a.d;
  cs_vcnet_bench b = a.b;
  if (!b.measure_cycles) {
    fprintf(stderr, "commsweep netbench: --measure must be positive\n");
    return 2;
  }
  char opts[1024];
  char *file_text = NULL;
  if (opt_file) {
    FILE *f = fopen(opt_file, "rb");
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (file_text = calloc((size_t)len + 1, 1)) && fread(file_text, 1, (size_t)len, f) == (size_t)len) {
      b.options_json = file_text;
    }
    if (f) fclose(f);
    if (!b.options_json) {
      fprintf(stderr, "commsweep netbench: cannot read %s\n", opt_file);
      free(file_text);
      return 1;
    }
  } else {
    if (!routing)
      routing = !strncmp(topo, "torus:", 6) ? "dor_dateline" : !strncmp(topo, "fattree2d:", 10) ? "vtftr" : "dor";
    snprintf(opts, sizeof opts,
             "{\"topology\":\"%s\",\"routing\":\"%s\",\"endpoints_per_router\":%d,\"num_vcs\":%d,"
             "\"vc_depth\":%d,\"rc_delay\":%d,\"va_delay\":%d,\"sa_delay\":%d,\"st_delay\":%d,"
             "\"link_latency\":%d,\"flit_bytes\":32,\"frequency_ghz\":1.0,\"faults\":\"%s\"}",
             topo, routing, epr, vcs, depth, d[0], d[1], d[2], d[3], link, faults);
    b.options_json = opts;
  }
  int rc = 0;
  const char *p = rates;
  if (rates) printf("rate,accepted,avg_latency,p99_latency,packets,saturated,cycles,flit_hops,wall_s\n");
  for (;;) {
    if (rates) {
      char *end;
      b.rate = strtod(p, &end);
      if (end == p) {
        fprintf(stderr, "commsweep netbench: bad --rates list\n");
        rc = 2;
        break;
      }
      p = *end == ',' ? end + 1 : end;
    }
    cs_vcnet_bench_result r;
    cs_err err;
    cs_err_clear(&err);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (cs_vcnet_netbench(&b, &r, &err)) {
      fprintf(stderr, "commsweep netbench: %s\n", err.msg);
      rc = 1;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rates) {
      printf("%g,%.6f,%.3f,%.0f,%llu,%d,%llu,%llu,%.3f\n", b.rate, r.accepted, r.avg_latency,
             r.p99_latency, (unsigned long long)r.packets_measured, r.saturated,
             (unsigned long long)r.cycles, (unsigned long long)r.flit_hops, wall);
      fflush(stdout);
      if (!*p) break;
    } else {
      printf("pattern %s, packet %d flit(s), offered %.4f flits/endpoint/cycle\n"
             "accepted throughput  %.4f flits/endpoint/cycle\n"
             "average latency      %.2f cycles\n"
             "p99 latency          %.0f cycles\n"
             "min / max latency    %.0f / %.0f cycles\n"
             "measured packets     %llu%s\n"
             "simulated            %llu cycles (%llu skipped), %llu flit-hops, %.3f s: %.0f cycles/s, %.0f flit-hops/s\n",
             b.pattern, b.packet_flits, b.rate, r.accepted, r.avg_latency, r.p99_latency, r.min_latency, r.max_latency,
             (unsigned long long)r.packets_measured, r.saturated ? " (saturated: did not drain)" : "",
             (unsigned long long)r.cycles, (unsigned long long)r.skipped_cycles,
             (unsigned long long)r.flit_hops, wall, (double)r.cycles / wall,
             (double)r.flit_hops / wall);
      break;
    }
  }
  free(file_text);
  return rc;
}

const cs_engine_tool vcn_cli_tools[] = {
    {"route", vcn_cli_route, "print a mesh/torus route hop by hop with ports and VCs"},
    {"deadlock-check", vcn_cli_deadlock_check, "channel dependency graph of a routing function: acyclic or a cycle"},
    {"netbench", vcn_cli_netbench, "synthetic traffic on the router network: latency and throughput"},
    {"faults", vcn_cli_faults, "2-D fat tree leaf faults: reachability, VC use, deadlock, probability"},
    {NULL, NULL, NULL}};
