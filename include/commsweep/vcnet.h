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
} cs_vcnet_bench_result;

int cs_vcnet_netbench(const cs_vcnet_bench *b, cs_vcnet_bench_result *out, cs_err *err);

#endif
