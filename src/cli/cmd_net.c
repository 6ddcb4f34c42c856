/* `commsweep route`, `commsweep deadlock-check` and `commsweep netbench`: network tools on the
 * router-network model of the vcnet engine (docs/vcnet.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commsweep/vcnet.h"

static const char *arg_value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "commsweep: option %s needs a value\n", argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

int cs_cli_route(int argc, char **argv) {
  const char *topo = NULL, *routing = NULL, *src = NULL, *dst = NULL, *faults = NULL;
  int vcs = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      printf("usage: commsweep route --topology torus:4x4x4 [--routing dor|dor_dateline] [--vcs N]\n"
             "                      --src X,Y,Z --dst X,Y,Z\n"
             "\nPrints the dimension-order route hop by hop: router, output port, VC class and its VCs.\n"
             "Routers are coordinates (dimension 0 first) or router ids.  The routing defaults to\n"
             "dor_dateline on a torus and dor on a mesh; --vcs (default 2) only labels VC numbers.\n"
             "On fattree2d:RxC routers are leaves \"r,c\", the routing vtftr (default), vtftr_novc,\n"
             "alg_a or xy, --faults \"r,c;!r,c\" lists faulty leaves (\"!\": not yet in the tables),\n"
             "and the VTFTR case of the route is printed (docs/vtftr.md).\n");
      return 0;
    }
    if (!strcmp(a, "--topology") || !strcmp(a, "--routing") || !strcmp(a, "--src") ||
        !strcmp(a, "--dst") || !strcmp(a, "--vcs") || !strcmp(a, "--faults")) {
      if (!(v = arg_value(argc, argv, &i))) return 2;
      if (!strcmp(a, "--topology")) topo = v;
      else if (!strcmp(a, "--routing")) routing = v;
      else if (!strcmp(a, "--src")) src = v;
      else if (!strcmp(a, "--dst")) dst = v;
      else if (!strcmp(a, "--faults")) faults = v;
      else vcs = atoi(v);
      continue;
    }
    fprintf(stderr, "commsweep route: unknown option '%s' (see --help)\n", a);
    return 2;
  }
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

int cs_cli_deadlock_check(int argc, char **argv) {
  const char *topo = NULL, *routing = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      printf("usage: commsweep deadlock-check --topology torus:16x16x16 [--routing dor|dor_dateline]\n"
             "\nBuilds the channel dependency graph (channel = link x VC class) of the routing function\n"
             "over every source/destination pair and prints \"acyclic\" or one cycle, channel by\n"
             "channel.  Exit status 0 when acyclic, 3 when a cycle exists.\n");
      return 0;
    }
    if (!strcmp(a, "--topology") || !strcmp(a, "--routing")) {
      if (!(v = arg_value(argc, argv, &i))) return 2;
      if (!strcmp(a, "--topology")) topo = v;
      else routing = v;
      continue;
    }
    fprintf(stderr, "commsweep deadlock-check: unknown option '%s' (see --help)\n", a);
    return 2;
  }
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

static void netbench_usage(FILE *f) {
  fprintf(f,
          "usage: commsweep netbench [network options] [traffic options]\n"
          "\nSynthetic traffic on the vcnet router network: Bernoulli injection, one destination\n"
          "pattern; prints average and 99th-percentile packet latency (cycles, creation to tail\n"
          "delivery) and accepted throughput (flits/endpoint/cycle).  With --rates it sweeps the\n"
          "rate and prints one CSV row per rate (scripts/netbench_curve draws the PNG).\n"
          "\nnetwork options (or --options FILE.json with the engine's option object):\n"
          "  --topology T        torus:8x8 (default), mesh:8x8, torus:4x4x4 ...\n"
          "  --routing R         dor_dateline on a torus, dor on a mesh (default)\n"
          "  --vcs N             VCs per port (2)        --depth N   flits per VC (8)\n"
          "  --delays RC,VA,SA,ST  stage delays (1,1,1,1) --link N    link latency (1)\n"
          "  --epr N             endpoints per router (1)\n"
          "  --faults \"r,c;..\"   fattree2d:RxC only: faulty leaves (routing vtftr by default; docs/vtftr.md)\n"
          "traffic options:\n"
          "  --pattern P         uniform | transpose | bitcomp | tornado | hotspot (uniform)\n"
          "  --rate R            offered flits/endpoint/cycle (0.1)\n"
          "  --rates R1,R2,...   sweep these rates, CSV out\n"
          "  --packet N          flits per packet (1)    --hotspot F  share sent to endpoint 0 (0.1)\n"
          "  --warmup N (1000)  --measure N (10000)  --drain N (50000)  --seed N (1)\n");
}

int cs_cli_netbench(int argc, char **argv) {
  const char *topo = "torus:8x8", *routing = NULL, *opt_file = NULL, *rates = NULL, *faults = "";
  int vcs = 2, depth = 8, link = 1, epr = 1, d[4] = {1, 1, 1, 1};
  cs_vcnet_bench b = {.pattern = "uniform", .rate = 0.1, .packet_flits = 1, .warmup_cycles = 1000,
                      .measure_cycles = 10000, .drain_limit = 50000, .seed = 1,
                      .hotspot_fraction = 0.1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      netbench_usage(stdout);
      return 0;
    }
    if (a[0] != '-' || a[1] != '-' || !(v = arg_value(argc, argv, &i))) {
      fprintf(stderr, "commsweep netbench: bad argument '%s' (see --help)\n", a);
      return 2;
    }
    if (!strcmp(a, "--topology")) topo = v;
    else if (!strcmp(a, "--routing")) routing = v;
    else if (!strcmp(a, "--faults")) faults = v;
    else if (!strcmp(a, "--options")) opt_file = v;
    else if (!strcmp(a, "--vcs")) vcs = atoi(v);
    else if (!strcmp(a, "--depth")) depth = atoi(v);
    else if (!strcmp(a, "--link")) link = atoi(v);
    else if (!strcmp(a, "--epr")) epr = atoi(v);
    else if (!strcmp(a, "--delays") && sscanf(v, "%d,%d,%d,%d", &d[0], &d[1], &d[2], &d[3]) == 4) {}
    else if (!strcmp(a, "--pattern")) b.pattern = v;
    else if (!strcmp(a, "--rate")) b.rate = atof(v);
    else if (!strcmp(a, "--rates")) rates = v;
    else if (!strcmp(a, "--packet")) b.packet_flits = atoi(v);
    else if (!strcmp(a, "--hotspot")) b.hotspot_fraction = atof(v);
    else if (!strcmp(a, "--warmup")) b.warmup_cycles = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--measure")) b.measure_cycles = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--drain")) b.drain_limit = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--seed")) b.seed = strtoull(v, NULL, 10);
    else {
      fprintf(stderr, "commsweep netbench: unknown option '%s' (see --help)\n", a);
      return 2;
    }
  }
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
