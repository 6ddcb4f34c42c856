/* The vcnet engine (docs/vcnet.md): a cycle-level input-queued virtual-channel router network on
 * 1- to 3-D mesh and torus topologies with dimension-order routing (dateline VC classes on a
 * torus), behind cs_engine_ops like every engine; plus the tools built on the same network
 * model: hop-by-hop routes, the channel-dependency deadlock check and synthetic traffic. */
#ifndef COMMSWEEP_VCNET_H
#define COMMSWEEP_VCNET_H

#include <stdint.h>
#include <stdio.h>

#include "commsweep/engine.h"

extern const cs_engine_ops cs_vcnet_ops;

/* Prints the route of one pair hop by hop (router, output port, VC class and VCs) and returns
 * the hop count in *hops.  src/dst are router coordinates ("0,0,0") or router ids ("5").
 * Returns CS_EINVAL with a message on a bad topology, routing or coordinate. */
int cs_vcnet_route(const char *topology, const char *routing, int num_vcs, const char *src,
                   const char *dst, FILE *out, int *hops, cs_err *err);

/* Builds the channel dependency graph of a routing function on a topology over all pairs and
 * prints "acyclic" or one cycle, channel by channel.  *acyclic receives the verdict. */
int cs_vcnet_deadlock_check(const char *topology, const char *routing, FILE *out, int *acyclic,
                            cs_err *err);

/* Synthetic traffic (commsweep netbench). */
typedef struct cs_vcnet_bench {
  const char *options_json;  /* network options (the engine's option object), JSON text */
  const char *pattern;       /* uniform | transpose | bitcomp | tornado | hotspot */
  double rate;               /* offered load, flits per endpoint per cycle */
  int packet_flits;
  uint64_t warmup_cycles, measure_cycles, drain_limit;
  uint64_t seed;
  double hotspot_fraction;   /* hotspot: share of packets sent to endpoint 0 */
} cs_vcnet_bench;

typedef struct cs_vcnet_bench_result {
  double avg_latency, p99_latency; /* cycles, packets created in the measure window */
  double min_latency, max_latency;
  double offered, accepted;        /* flits per endpoint per cycle */
  uint64_t packets_measured;
  uint64_t cycles, skipped_cycles, flit_hops;
  int saturated;                   /* the measured packets did not drain within drain_limit */
  uint64_t peak_packets;           /* packets alive at once at most (queued or in the network):
                                      one queued per endpoint at most, whatever the load */
} cs_vcnet_bench_result;

int cs_vcnet_netbench(const cs_vcnet_bench *b, cs_vcnet_bench_result *out, cs_err *err);


/* ---- the 2-D fat tree with VTFTR fault-tolerant routing (docs/vtftr.md) ---------------------
 * Leaves are named "r,c"; a fault list is "r,c;r,c", a leading "!" marking a fresh fault (failed
 * after the candidate tables were last rebuilt).  Routings: vtftr, vtftr_novc (VTFTR with every
 * hop in one VC class, to show why the class switch is needed), alg_a (the paper's baseline),
 * xy.  Every function returns CS_EINVAL with a message on a bad argument. */

/* As cs_vcnet_route, on mesh/torus or fattree2d; `faults` (fat tree only) may be NULL and
 * `routing` NULL for the topology's default.  On the fat tree src/dst are leaves and the route
 * case (xy, yx, misroute-3, misroute-4, detour) is printed. */
int cs_vcnet_route_faults(const char *topology, const char *routing, int num_vcs, const char *faults,
                          const char *src, const char *dst, FILE *out, int *hops, cs_err *err);

typedef struct cs_vcnet_faults_query {
  const char *topology;    /* "fattree2d:16x16" */
  const char *routing;     /* NULL: vtftr */
  int endpoints_per_leaf;  /* >= 1 */
  const char *faults;      /* a fault list, or NULL */
  int random_count;        /* > 0: that many random known faults per trial (after `faults`) */
  uint64_t seed, trials;   /* trial t draws from seed + t; trials >= 1 */
  int cdg;                 /* also build the channel dependency graph, with and without the
                              VC switch */
} cs_vcnet_faults_query;

/* Reachability of the healthy pairs, route cases, link-count distribution, VC use and
 * (q->cdg) the CDG verdicts, printed; *all_reachable / *all_acyclic (either may be NULL) get
 * whether every trial kept every pair reachable and every CDG acyclic. */
int cs_vcnet_faults(const cs_vcnet_faults_query *q, FILE *out, int *all_reachable, int *all_acyclic,
                    cs_err *err);

/* The probability that k uniform random leaf faults leave some healthy pair unreachable:
 * exact (when k <= R + C - 2), plain and row-conditioned Monte Carlo with 95% intervals. */
int cs_vcnet_vtftr_probability(const char *topology, int k, uint64_t trials, uint64_t seed, FILE *out,
                               cs_err *err);

/* The paper's single-pair latencies on an 8x8 tree with one faulty leaf: fault-free XY, yx,
 * VTFTR misroute, algorithm A's detour, from per-switch, per-link and endpoint-link latencies in
 * ns.  figures[] gets them in that order. */
int cs_vcnet_vtftr_latency(double switch_ns, double link_ns, double endpoint_ns, FILE *out,
                           double figures[4], cs_err *err);

#endif
