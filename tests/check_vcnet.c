/* The vcnet engine: topology and DOR routes (hop counts from the distance formulas), dateline
 * classes, the channel-dependency verdicts, zero-load latency against the pipeline formula of
 * docs/vcnet.md, flit conservation under saturation, and transactions through the engine. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/vcnet.h"
#include "engine/vcnet/vcnet_int.h"
#include "engine/vcnet/vcnet_txn.h"
#include "commsweep/job.h"
#include "test_support.h"

static vcn_params params(const char *topo, const char *routing, int vcs, int depth) {
  vcn_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.topology, sizeof p.topology, "%s", topo);
  snprintf(p.routing, sizeof p.routing, "%s", routing);
  p.endpoints_per_router = 1;
  p.num_vcs = vcs;
  p.vc_depth = depth;
  p.rc_delay = p.va_delay = p.sa_delay = p.st_delay = 1;
  p.link_latency = 1;
  p.flit_bytes = 32;
  p.frequency_ghz = 1.0;
  return p;
}

/* Walks the route from s to d; fills ports and classes (up to cap hops); returns the hops. */
static int walk(const vcn_topo *t, const char *routing, int s, int d, int *ports, int *classes,
                int cap) {
  cs_err err;
  const vcn_routing *r = vcn_routing_find(routing, t, 2, &err);
  ck_assert_ptr_nonnull(r);
  vcn_route_state st = {-1, 0, s};
  int cur = s, n = 0, op, cls;
  for (;;) {
    r->fn(t, cur, d, 0, &st, &op, &cls);
    if (op >= 2 * t->ndims) break;
    if (n < cap) ports[n] = op, classes[n] = cls;
    n++;
    cur = vcn_topo_neighbour(t, cur, op);
    ck_assert_int_ge(cur, 0);
    ck_assert_int_le(n, t->routers);
  }
  ck_assert_int_eq(cur, d);
  return n;
}

static vcn_topo topo(const char *text) {
  vcn_topo t;
  cs_err err;
  ck_assert_int_eq(vcn_topo_parse(text, 1, &t, &err), CS_OK);
  return t;
}

enum { PX = 0, MX = 1, PY = 2, MY = 3, PZ = 4, MZ = 5 };

START_TEST(seed_example_should_take_4_hops_on_torus_and_6_on_mesh) {
  /* seed: (0,0,0) -> (2,3,1) on 4x4x4.  Torus, by the seed's rule: X +2 (2 <= 4/2), Y: (3-0+4)
   * mod 4 = 3 > 2 so -1, one hop over the wrap; Z +1: 2+1+1 = 4.  Mesh: 2+3+1 = 6. */
  vcn_topo t = topo("torus:4x4x4"), m = topo("mesh:4x4x4");
  int s = vcn_topo_router(&t, (int[]){0, 0, 0}), d = vcn_topo_router(&t, (int[]){2, 3, 1});
  int ports[16], cls[16];
  ck_assert_int_eq(walk(&t, "dor_dateline", s, d, ports, cls, 16), 4);
  int want[] = {PX, PX, MY, PZ}, want_cls[] = {0, 0, 1, 0};
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(ports[i], want[i]);
    ck_assert_int_eq(cls[i], want_cls[i]);
  }
  ck_assert_int_eq(walk(&t, "dor", s, d, ports, cls, 16), 4);
  ck_assert_int_eq(walk(&m, "dor", s, d, ports, cls, 16), 6);
  int want_m[] = {PX, PX, PY, PY, PY, PZ};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(ports[i], want_m[i]);
  int hops;
  cs_err err;
  ck_assert_int_eq(cs_vcnet_route("torus:4x4x4", "dor_dateline", 2, "0,0,0", "2,3,1", NULL, &hops, &err), CS_OK);
  ck_assert_int_eq(hops, 4);
  ck_assert_int_eq(cs_vcnet_route("mesh:4x4x4", "dor", 2, "0,0,0", "2,3,1", NULL, &hops, &err), CS_OK);
  ck_assert_int_eq(hops, 6);
}
END_TEST

START_TEST(torus_tie_at_half_should_go_plus) {
  /* even radix 8: distance 4 either way, the rule sends it +1 */
  vcn_topo t = topo("torus:8");
  int ports[16], cls[16];
  ck_assert_int_eq(walk(&t, "dor", 0, 4, ports, cls, 16), 4);
  ck_assert_int_eq(ports[0], PX);
  ck_assert_int_eq(walk(&t, "dor", 5, 1, ports, cls, 16), 4); /* (1-5+8) mod 8 = 4 <= 4 */
  ck_assert_int_eq(ports[0], PX);
  ck_assert_int_eq(walk(&t, "dor", 0, 5, ports, cls, 16), 3); /* 5 > 4: -1, 3 hops */
  ck_assert_int_eq(ports[0], MX);
  /* odd radix 7: N/2 = 3; 3 goes +, 4 goes - (3 hops), no tie exists */
  vcn_topo o = topo("torus:7");
  ck_assert_int_eq(walk(&o, "dor", 0, 3, ports, cls, 16), 3);
  ck_assert_int_eq(ports[0], PX);
  ck_assert_int_eq(walk(&o, "dor", 0, 4, ports, cls, 16), 3);
  ck_assert_int_eq(ports[0], MX);
  ck_assert_int_eq(vcn_torus_direction(2, 0, 4), 1);  /* (0-2+4) mod 4 = 2 <= 2 */
  ck_assert_int_eq(vcn_torus_direction(0, 3, 4), -1); /* 3 > 2 */
}
END_TEST

/* The distance between routers s and d: sum |d-s| on a mesh, sum min(|d-s|, k-|d-s|) on a torus. */
static int distance(const vcn_topo *t, int s, int d) {
  int cs[3], cd[3], want = 0;
  vcn_topo_coords(t, s, cs);
  vcn_topo_coords(t, d, cd);
  for (int i = 0; i < t->ndims; i++) {
    int a = abs(cd[i] - cs[i]);
    want += t->torus && t->radix[i] - a < a ? t->radix[i] - a : a;
  }
  return want;
}

/* Every pair's hop count equals the distance (odd and even radix, 1 to 3 dimensions). */
START_TEST(hop_counts_should_equal_distance_for_every_pair) {
  const char *names[] = {"mesh:5", "torus:6", "mesh:3x4", "torus:5x4", "torus:3x4x5", "mesh:4x3x2"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    vcn_topo t = topo(names[k]);
    for (int s = 0; s < t.routers; s++)
      for (int d = 0; d < t.routers; d++) {
        int ports[64], cls[64];
        ck_assert_int_eq(walk(&t, t.torus ? "dor_dateline" : "dor", s, d, ports, cls, 64), distance(&t, s, d));
      }
  }
}
END_TEST

static void record_hops(void *ctx, vcn_net *net, uint32_t pi) {
  const vcn_pkt *p = &net->pkt[pi];
  int *hops = ctx;
  *hops = (int)p->hops;
}

/* The router network computes routes itself (on mesh and torus from its table of coordinates):
 * one packet at a time, every endpoint pair's packet crosses as many links as the distance and
 * ejects at its destination endpoint (2 endpoints a router, odd and even radix, each DOR routing). */
START_TEST(network_hops_should_equal_distance_for_every_pair) {
  struct {
    const char *topo, *routing;
  } nets[] = {{"torus:5x2", "dor_dateline_segment"}, {"torus:3x2x2", "dor_dateline"},
              {"mesh:4x3", "dor"}, {"torus:6", "dor"}};
  for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
    vcn_params p = params(nets[k].topo, nets[k].routing, 2, 4);
    p.endpoints_per_router = 2;
    vcn_net *n;
    cs_err err;
    ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_OK);
    int hops = -2;
    n->ctx = &hops;
    n->on_deliver = record_hops;
    for (int s = 0; s < n->t.endpoints; s++)
      for (int d = 0; d < n->t.endpoints; d++) {
        hops = -2;
        uint64_t ejected = n->st.flits_ejected;
        ck_assert_uint_ne(vcn_net_send(n, s, d, 2, 0), VCN_NIL);
        for (int c = 0; c < 1000 && !vcn_net_quiet(n); c++) {
          vcn_net_cycle(n);
          /* once the routers are empty the ejections are in flight: they must head for d */
          if (!n->n_active) ck_assert_msg(vcn_net_check(n, &err) == CS_OK, "%s", err.msg);
        }
        ck_assert(vcn_net_quiet(n));
        ck_assert_int_eq(hops, distance(&n->t, s / 2, d / 2));
        ck_assert_uint_eq(n->st.flits_ejected, ejected + 2); /* both flits, once each */
      }
    vcn_net_destroy(n);
  }
}
END_TEST

START_TEST(coordinates_should_vary_dimension_0_fastest) {
  vcn_topo t = topo("torus:4x3x2");
  int c[3];
  vcn_topo_coords(&t, 1, c);
  ck_assert(c[0] == 1 && c[1] == 0 && c[2] == 0);
  vcn_topo_coords(&t, 4, c);
  ck_assert(c[0] == 0 && c[1] == 1 && c[2] == 0);
  vcn_topo_coords(&t, 12, c);
  ck_assert(c[0] == 0 && c[1] == 0 && c[2] == 1);
  ck_assert_int_eq(vcn_topo_router(&t, (int[]){3, 2, 1}), 3 + 4 * (2 + 3 * 1));
  ck_assert_int_eq(t.routers, 24);
  cs_err err;
  ck_assert_int_ne(vcn_topo_parse("ring:4", 1, &t, &err), CS_OK);
  ck_assert_int_ne(vcn_topo_parse("torus:4x1", 1, &t, &err), CS_OK);
  ck_assert_int_ne(vcn_topo_parse("torus:2x2x2x2", 1, &t, &err), CS_OK);
  ck_assert_ptr_null(vcn_routing_find("dor_dateline", &(vcn_topo){.torus = false}, 2, &err));
  ck_assert_ptr_nonnull(strstr(err.msg, "torus"));
}
END_TEST

START_TEST(dateline_class_should_switch_on_wrap_and_reset_on_turn) {
  vcn_topo t = topo("torus:4x4");
  int ports[16], cls[16];
  /* (3,1) -> (1,2): X +1 (2 <= 2): 3->0 crosses the wrap (class 1), 0->1 stays 1; Y 1->2 +1 resets
   * to class 0. */
  int s = vcn_topo_router(&t, (int[]){3, 1, 0}), d = vcn_topo_router(&t, (int[]){1, 2, 0});
  ck_assert_int_eq(walk(&t, "dor_dateline", s, d, ports, cls, 16), 3);
  ck_assert(ports[0] == PX && ports[1] == PX && ports[2] == PY);
  ck_assert(cls[0] == 1 && cls[1] == 1 && cls[2] == 0);
  /* (1,0) -> (1,3): Y -1 from 0 is the wrap: class 1 at once */
  s = vcn_topo_router(&t, (int[]){1, 0, 0});
  d = vcn_topo_router(&t, (int[]){1, 3, 0});
  ck_assert_int_eq(walk(&t, "dor_dateline", s, d, ports, cls, 16), 1);
  ck_assert(ports[0] == MY && cls[0] == 1);
  /* (1,1) -> (2,0): X 1->2 class 0; Y 1->0 -1 does not wrap: class 0 */
  s = vcn_topo_router(&t, (int[]){1, 1, 0});
  d = vcn_topo_router(&t, (int[]){2, 0, 0});
  ck_assert_int_eq(walk(&t, "dor_dateline", s, d, ports, cls, 16), 2);
  ck_assert(cls[0] == 0 && cls[1] == 0);
  /* without the dateline everything is class 0 */
  s = vcn_topo_router(&t, (int[]){3, 1, 0});
  d = vcn_topo_router(&t, (int[]){1, 2, 0});
  walk(&t, "dor", s, d, ports, cls, 16);
  ck_assert(cls[0] == 0 && cls[1] == 0 && cls[2] == 0);
}
END_TEST

static int cdg(const char *topology, const char *routing, vcn_cdg_result *res) {
  vcn_topo t = topo(topology);
  cs_err err;
  const vcn_routing *r = vcn_routing_find(routing, &t, 2, &err);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(vcn_cdg_check(&t, r, res, &err), CS_OK);
  if (!res->acyclic) {
    /* the reported cycle is a real one: each channel leads to the router the next starts at */
    ck_assert_int_ge(res->cycle_len, 2);
    for (int i = 0; i < res->cycle_len; i++) {
      const vcn_channel *a = &res->cycle[i], *b = &res->cycle[(i + 1) % res->cycle_len];
      ck_assert_int_eq(vcn_topo_neighbour(&t, a->router, a->port), b->router);
    }
  }
  return res->acyclic;
}

START_TEST(deadlock_check_should_find_cycle_only_without_dateline) {
  vcn_cdg_result res;
  const char *torus[] = {"torus:4x4", "torus:5", "torus:3x4x5", "torus:8x8"};
  for (size_t i = 0; i < 4; i++) {
    ck_assert_msg(!cdg(torus[i], "dor", &res), "%s dor should have a cycle", torus[i]);
    vcn_cdg_result_free(&res);
    ck_assert_msg(cdg(torus[i], "dor_dateline", &res), "%s dateline should be acyclic", torus[i]);
    vcn_cdg_result_free(&res);
  }
  ck_assert(cdg("mesh:4x4x4", "dor", &res));
  ck_assert(cdg("mesh:7x3", "dor", &res));
  /* a radix-4 ring has 4 +X links; the cycle of plain DOR runs round one ring: 4 channels */
  ck_assert(!cdg("torus:4", "dor", &res));
  ck_assert_int_eq(res.cycle_len, 4);
  vcn_cdg_result_free(&res);
  int acyclic = -1;
  cs_err err;
  ck_assert_int_eq(cs_vcnet_deadlock_check("torus:4x4x4", "dor", NULL, &acyclic, &err), CS_OK);
  ck_assert_int_eq(acyclic, 0);
  ck_assert_int_eq(cs_vcnet_deadlock_check("torus:4x4x4", "dor_dateline", NULL, &acyclic, &err), CS_OK);
  ck_assert_int_eq(acyclic, 1);
}
END_TEST

typedef struct sink {
  uint64_t delivered_at;
  uint32_t delivered;
  uint8_t *seen; /* per tag: deliveries */
  uint32_t n_seen;
  uint64_t flits; /* flits of the delivered packets */
  int bad;
} sink;

static void count_delivery(void *ctx, vcn_net *net, uint32_t pi) {
  sink *s = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  s->delivered++;
  s->delivered_at = net->now;
  s->flits += p->size;
  if (s->seen) {
    if (p->tag >= s->n_seen) s->bad = 1;
    else s->seen[p->tag]++;
  }
}

/* One packet alone on the network: its latency from entering the source queue to its tail's
 * delivery.  Expected (docs/vcnet.md, derived from the pipeline by hand): one cycle on the
 * injection channel, rc+va+sa+st in each of the h+1 routers, L on each of the h links, one cycle
 * on the ejection channel, one to retire the flit at the endpoint, and F-1 cycles of body flits
 * behind the head:
 *   T0 = 3 + (h+1)(rc+va+sa+st) + h L + F - 1. */
static uint64_t measure_one(const vcn_params *p, int src, int dst, int flits) {
  vcn_net *n;
  cs_err err;
  ck_assert_int_eq(vcn_net_create(p, &n, &err), CS_OK);
  sink s = {0};
  n->ctx = &s;
  n->on_deliver = count_delivery;
  uint64_t t0 = n->now;
  ck_assert_uint_ne(vcn_net_send(n, src, dst, flits, 0), VCN_NIL);
  while (!s.delivered && n->now < 10000) {
    vcn_net_skip_idle(n, 10000);
    vcn_net_cycle(n);
    ck_assert_int_eq(vcn_net_check(n, &err), CS_OK);
  }
  ck_assert_int_eq(s.delivered, 1);
  ck_assert(!s.bad);
  ck_assert_uint_eq(n->st.flits_ejected, s.flits); /* every flit ejected once, the tail last */
  vcn_net_destroy(n);
  return s.delivered_at - t0;
}

START_TEST(zero_load_latency_should_match_formula) {
  struct {
    int rc, va, sa, st, link;
  } pipes[] = {{1, 1, 1, 1, 1}, {0, 0, 0, 0, 1}, {2, 1, 1, 1, 3}, {1, 2, 0, 1, 2}};
  for (size_t k = 0; k < sizeof pipes / sizeof pipes[0]; k++) {
    vcn_params p = params("torus:8x8", "dor_dateline", 2, 8);
    p.rc_delay = pipes[k].rc, p.va_delay = pipes[k].va, p.sa_delay = pipes[k].sa;
    p.st_delay = pipes[k].st, p.link_latency = pipes[k].link;
    int stages = pipes[k].rc + pipes[k].va + pipes[k].sa + pipes[k].st;
    /* destinations from router 0 = (0,0) at 0..8 hops: (0,0) (1,0) (2,0) (2,1) (3,2) (4,4) */
    int dst[][2] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 2}, {4, 4}};
    int hops[] = {0, 1, 2, 3, 5, 8};
    for (int i = 0; i < 6; i++)
      for (int flits = 1; flits <= 8; flits += 3) {
        int d = dst[i][0] + 8 * dst[i][1];
        uint64_t want = 3 + (uint64_t)((hops[i] + 1) * stages + hops[i] * pipes[k].link + flits - 1);
        ck_assert_uint_eq(measure_one(&p, 0, d, flits), want);
        ck_assert_uint_eq(vcn_zero_load_latency(&p, hops[i], flits), want);
      }
  }
  /* a mesh across its diameter: 3 + 3 hops on mesh:4x4 */
  vcn_params m = params("mesh:4x4", "dor", 2, 4);
  ck_assert_uint_eq(measure_one(&m, 0, 15, 4), 3 + 7 * 4 + 6 * 1 + 3);
}
END_TEST

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Saturating random traffic, then a drain: every packet arrives once with all its flits, the
 * credit invariant holds every cycle, and injected flits equal ejected flits. */
static void conservation_run(const char *topology, const char *routing, int vcs, int depth,
                             int epr) {
  vcn_params p = params(topology, routing, vcs, depth);
  p.endpoints_per_router = epr;
  vcn_net *n;
  cs_err err;
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_OK);
  int cycles = cs_test_quick() ? 300 : 1500;
  uint32_t cap = (uint32_t)(cycles * n->t.endpoints);
  sink s = {0};
  s.seen = calloc(cap, 1);
  s.n_seen = cap;
  n->ctx = &s;
  n->on_deliver = count_delivery;
  uint64_t rng = 88172645463325252ULL, sent = 0, flits = 0;
  for (int c = 0; c < cycles; c++) {
    for (int e = 0; e < n->t.endpoints; e++)
      if (rng_next(&rng) % 2 == 0) { /* 0.5 packets of 1-5 flits per endpoint per cycle: far past saturation */
        int size = 1 + (int)(rng_next(&rng) % 5);
        ck_assert_uint_ne(vcn_net_send(n, e, (int)(rng_next(&rng) % (uint64_t)n->t.endpoints), size, sent), VCN_NIL);
        sent++;
        flits += (uint64_t)size;
      }
    vcn_net_cycle(n);
    if (c % 7 == 0) ck_assert_msg(vcn_net_check(n, &err) == CS_OK, "%s", err.msg);
  }
  for (int c = 0; c < 400000 && !vcn_net_quiet(n); c++) {
    vcn_net_cycle(n);
    if (c % 97 == 0) ck_assert_msg(vcn_net_check(n, &err) == CS_OK, "%s", err.msg);
  }
  ck_assert(vcn_net_quiet(n));
  ck_assert_int_eq(vcn_net_check(n, &err), CS_OK);
  ck_assert(!s.bad);
  ck_assert_uint_eq(s.delivered, sent);
  for (uint64_t i = 0; i < sent; i++) ck_assert_int_eq(s.seen[i], 1);
  ck_assert_uint_eq(n->st.flits_injected, flits);
  ck_assert_uint_eq(n->st.flits_ejected, s.flits); /* every flit of every packet, once */
  ck_assert_uint_eq(n->st.flits_ejected, flits);
  ck_assert_uint_eq(n->pkts_live, 0);
  free(s.seen);
  vcn_net_destroy(n);
}

START_TEST(flits_should_be_conserved_under_saturation) {
  conservation_run("torus:4x4", "dor_dateline", 2, 4, 1);
  conservation_run("mesh:4x3", "dor", 3, 2, 2);
  conservation_run("torus:3x3x2", "dor_dateline", 4, 3, 1);
  /* 8 ports of 12 VCs: the per-router VC masks span two words, port 5's VCs straddle them */
  conservation_run("torus:3x3x2", "dor_dateline", 12, 2, 2);
}
END_TEST

/* Plain DOR on a torus under heavy load: the wrap-around cycle fills and nothing moves again. */
START_TEST(torus_without_dateline_should_deadlock_under_load) {
  vcn_params p = params("torus:8", "dor", 1, 2);
  vcn_net *n;
  cs_err err;
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_OK);
  /* every router sends 4-flit packets 4 hops ahead (+1 by the tie rule) */
  for (int k = 0; k < 4; k++)
    for (int e = 0; e < 8; e++) vcn_net_send(n, e, (e + 4) % 8, 4, 0);
  for (int c = 0; c < 2000; c++) vcn_net_cycle(n);
  uint64_t ejected = n->st.flits_ejected;
  for (int c = 0; c < 2000; c++) vcn_net_cycle(n);
  ck_assert_uint_eq(n->st.flits_ejected, ejected); /* frozen */
  ck_assert(!vcn_net_quiet(n));
  ck_assert_int_eq(vcn_net_check(n, &err), CS_OK);
  vcn_net_destroy(n);
  /* the same traffic with the dateline drains */
  p = params("torus:8", "dor_dateline", 2, 2);
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_OK);
  for (int k = 0; k < 4; k++)
    for (int e = 0; e < 8; e++) vcn_net_send(n, e, (e + 4) % 8, 4, 0);
  for (int c = 0; c < 4000 && !vcn_net_quiet(n); c++) vcn_net_cycle(n);
  ck_assert(vcn_net_quiet(n));
  ck_assert_uint_eq(n->st.flits_ejected, 4 * 8 * 4);
  vcn_net_destroy(n);
}
END_TEST

static cs_adapter_config adapter(int mst, int slv) {
  cs_adapter_config a;
  memset(&a, 0, sizeof a);
  a.driver_cycle_frequency_ghz = 1.0;
  a.mst_rd_outstanding = a.mst_wr_outstanding = mst;
  a.slv_rd_outstanding = a.slv_wr_outstanding = slv;
  a.burst_length = 4;
  a.bw_bytes = 32;
  return a;
}

/* A write and a read, each alone: req and rsp phases take the zero-load latency of their
 * packets (write: 4 data flits then a 1-flit response; read: 1-flit request then 4 flits). */
START_TEST(transaction_phases_should_take_zero_load_latency) {
  vcn_params p = params("torus:4x4", "dor_dateline", 2, 8);
  cs_adapter_config a = adapter(2, 2);
  for (int is_read = 0; is_read <= 1; is_read++) {
    vcn_engine *e;
    cs_err err;
    ck_assert_int_eq(vcn_engine_create(&a, &p, &e, &err), CS_OK);
    cs_inject req = {.request_id = 0, .src_id = 0, .dst_id = 5, .is_read = (uint8_t)is_read,
                     .packet_type = CS_PKT_REQ, .burst_length = 4};
    ck_assert_int_eq(vcn_engine_inject(e, &req, &err), CS_OK);
    cs_completion c;
    ck_assert_int_eq(vcn_engine_advance(e, 1000, &err), CS_OK);
    ck_assert_uint_eq(vcn_engine_poll(e, &c, 1), 1);
    ck_assert_int_eq(c.phase, CS_PHASE_REQ);
    /* router 0 -> router 5 = (1,1): 2 hops; one tick per cycle at 1 GHz / 1 GHz */
    ck_assert_uint_eq(c.tick, vcn_zero_load_latency(&p, 2, is_read ? 1 : 4));
    cs_inject rsp = req;
    rsp.src_id = 5, rsp.dst_id = 0, rsp.packet_type = CS_PKT_RSP;
    ck_assert_int_eq(vcn_engine_inject(e, &rsp, &err), CS_OK);
    uint64_t t_rsp = e->now_tick;
    ck_assert_int_eq(vcn_engine_advance(e, 1000, &err), CS_OK);
    ck_assert_uint_eq(vcn_engine_poll(e, &c, 1), 1);
    ck_assert_int_eq(c.phase, CS_PHASE_FINAL);
    /* the rsp enters the queue in the cycle after the req completion: tick t_rsp + 1 */
    ck_assert_uint_eq(c.tick, t_rsp + 1 + vcn_zero_load_latency(&p, 2, is_read ? 4 : 1));
    cs_txn_record rec;
    memset(&rec, 0, sizeof rec);
    vcn_engine_describe(e, 0, &rec);
    ck_assert_int_eq(rec.src_node, 0);
    ck_assert_int_eq(rec.dst_node, 5);
    ck_assert_int_eq(rec.src_channel, 0); /* the endpoint's first request: channel 0 */
    /* engine columns: a 2-D torus has 4 link ports, so the one endpoint is port 4; each packet
     * alone starts on VC 0 (class 0 of 2 classes of 1 VC); 2 hops each way */
    const int32_t *x = &rec.engine_extra[cs_engine_record_slot(&cs_vcnet_ops)];
    ck_assert_int_eq(x[0], 4);
    ck_assert_int_eq(x[1], 4);
    ck_assert_int_eq(x[2], 0);
    ck_assert_int_eq(x[3], 0);
    ck_assert_int_eq(x[4], 2);
    ck_assert_int_eq(x[5], 2);
    ck_assert_uint_le(rec.req_inject_cycle, rec.req_complete_cycle);
    ck_assert_uint_lt(rec.req_complete_cycle, rec.rsp_inject_cycle);
    ck_assert_uint_lt(rec.rsp_inject_cycle, rec.rsp_complete_cycle);
    vcn_engine_destroy(e);
  }
}
END_TEST

/* With one master write tracker, the second write of an endpoint waits for the first one's final
 * completion and records a block. */
START_TEST(master_tracker_should_serialise_writes) {
  vcn_params p = params("mesh:4", "dor", 2, 8);
  cs_adapter_config a = adapter(1, 4);
  vcn_engine *e;
  cs_err err;
  ck_assert_int_eq(vcn_engine_create(&a, &p, &e, &err), CS_OK);
  for (uint64_t i = 0; i < 2; i++) {
    cs_inject req = {.request_id = i, .src_id = 0, .dst_id = 3, .packet_type = CS_PKT_REQ, .burst_length = 4};
    ck_assert_int_eq(vcn_engine_inject(e, &req, &err), CS_OK);
  }
  uint64_t req_done[2] = {0}, final_done[2] = {0};
  cs_txn_record rec[2];
  int finals = 0;
  while (finals < 2) {
    ck_assert_int_eq(vcn_engine_advance(e, 10000, &err), CS_OK);
    cs_completion c[4];
    size_t n = vcn_engine_poll(e, c, 4);
    ck_assert_uint_gt(n, 0);
    for (size_t k = 0; k < n; k++) {
      if (c[k].phase == CS_PHASE_REQ) {
        req_done[c[k].request_id] = c[k].tick;
        cs_inject rsp = {.request_id = c[k].request_id, .src_id = 3, .dst_id = 0, .packet_type = CS_PKT_RSP, .burst_length = 4};
        ck_assert_int_eq(vcn_engine_inject(e, &rsp, &err), CS_OK);
      } else { /* described before the next poll or advance, as the engine contract says */
        final_done[c[k].request_id] = c[k].tick;
        memset(&rec[c[k].request_id], 0, sizeof rec[0]);
        vcn_engine_describe(e, c[k].request_id, &rec[c[k].request_id]);
        finals++;
      }
    }
  }
  ck_assert_uint_gt(req_done[1], final_done[0]);
  ck_assert_uint_eq(rec[1].rn_wr_block, 1);
  ck_assert_uint_eq(rec[0].rn_wr_block, 0);
  ck_assert_int_eq(rec[0].src_node, 0); /* described whole */
  ck_assert_int_eq(rec[0].dst_node, 3);
  vcn_engine_destroy(e);
}
END_TEST

/* Runs 32 flows of 6 transactions, a write flow and a read flow from each endpoint of torus:4x4
 * (2 trackers a side, so requests wait for both), answering each poll's completions in order, as the driver does, but describing the
 * final ones in reverse order when `reverse`; returns whether a lookup needed the id map. */
static bool run_flows_describing(bool reverse, cs_txn_record *rec) {
  vcn_params p = params("torus:4x4", "dor_dateline", 2, 8);
  cs_adapter_config a = adapter(2, 2);
  vcn_engine *e;
  cs_err err;
  ck_assert_int_eq(vcn_engine_create(&a, &p, &e, &err), CS_OK);
  cs_flow f[32];
  for (int i = 0; i < 32; i++)
    f[i] = (cs_flow){.src = i / 2, .dst = (i / 2 + 5) % 16, .is_read = (uint8_t)(i % 2), .burst = 4,
                     .flits = 24, .first_txn = (uint64_t)i * 6, .num_txns = 6};
  ck_assert_int_eq(vcn_engine_inject_flows(e, f, 32, &err), CS_OK);
  int finals = 0;
  while (finals < 192) {
    ck_assert_int_eq(vcn_engine_advance(e, 100000, &err), CS_OK);
    cs_completion c[16];
    size_t n = vcn_engine_poll(e, c, 16);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
      if (c[i].phase == CS_PHASE_REQ) {
        const cs_flow *fl = &f[c[i].request_id / 6];
        cs_inject rsp = {.request_id = c[i].request_id, .src_id = fl->dst, .dst_id = fl->src,
                         .is_read = fl->is_read, .packet_type = CS_PKT_RSP, .burst_length = 4};
        ck_assert_int_eq(vcn_engine_inject(e, &rsp, &err), CS_OK);
      } else if (!reverse) {
        vcn_engine_describe(e, c[i].request_id, &rec[c[i].request_id]);
      }
    }
    for (size_t i = 0; reverse && i < n; i++)
      if (c[n - 1 - i].phase == CS_PHASE_FINAL)
        vcn_engine_describe(e, c[n - 1 - i].request_id, &rec[c[n - 1 - i].request_id]);
    for (size_t i = 0; i < n; i++) finals += c[i].phase == CS_PHASE_FINAL;
  }
  bool kept = e->look->kept;
  vcn_engine_destroy(e);
  return kept;
}

/* A lookup finds its slot whatever the order the final completions are described in: the
 * records equal those of the driver's order, which needs no id map; a request id still in
 * flight is refused as a new request. */
START_TEST(records_should_not_depend_on_the_order_they_are_described_in) {
  static cs_txn_record in_order[192], reversed[192];
  memset(in_order, 0, sizeof in_order);
  memset(reversed, 0, sizeof reversed);
  ck_assert(!run_flows_describing(false, in_order));
  ck_assert(run_flows_describing(true, reversed));
  for (int i = 0; i < 192; i++) {
    ck_assert_int_gt(in_order[i].rsp_complete_cycle, 0); /* every one described */
    ck_assert_mem_eq(&in_order[i], &reversed[i], sizeof in_order[i]);
  }
  vcn_params p = params("torus:4x4", "dor_dateline", 2, 8);
  cs_adapter_config a = adapter(2, 2);
  vcn_engine *e;
  cs_err err;
  ck_assert_int_eq(vcn_engine_create(&a, &p, &e, &err), CS_OK);
  cs_flow f = {.src = 0, .dst = 5, .burst = 4, .flits = 8, .first_txn = 10, .num_txns = 2};
  ck_assert_int_eq(vcn_engine_inject_flows(e, &f, 1, &err), CS_OK);
  cs_inject again = {.request_id = 11, .src_id = 0, .dst_id = 5, .packet_type = CS_PKT_REQ, .burst_length = 4};
  ck_assert_int_eq(vcn_engine_inject(e, &again, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "request 11 injected twice"));
  vcn_engine_destroy(e);
}
END_TEST

/* Past saturation the sources create their packets only when the previous one has left
 * (BookSim's source model): on torus:8x8 at an offered 1.0 (4.3 times the saturation of about
 * 0.23) at most one packet per endpoint waits at its source, plus those inside the network, which
 * its buffers bound: 64 routers x 5 ports x 2 VCs x 8 flits of 1-flit packets, and the
 * injection and link pipelines (the old model, creating every drawn packet, held some 120,000
 * by the end).  The latency counts from creation, so source queueing shows:
 * it grows far past the zero-load latency.  Below saturation every packet is created the
 * cycle its trial succeeds (the queue is empty), so the zero-load minimum (7 cycles for
 * uniform's self-traffic, docs/vcnet.md) is met. */
START_TEST(netbench_sources_should_hold_one_packet_each_past_saturation) {
  const char *opts =
      "{\"topology\":\"torus:8x8\",\"routing\":\"dor_dateline_segment\",\"endpoints_per_router\":1,"
      "\"num_vcs\":2,\"vc_depth\":8,\"rc_delay\":1,\"va_delay\":1,\"sa_delay\":1,\"st_delay\":1,"
      "\"link_latency\":1,\"flit_bytes\":32,\"frequency_ghz\":1.0}";
  cs_vcnet_bench b = {.options_json = opts, .pattern = "uniform", .rate = 1.0, .packet_flits = 1,
                      .warmup_cycles = 500, .measure_cycles = 2000, .drain_limit = 0, .seed = 7};
  cs_vcnet_bench_result r;
  cs_err err;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_OK);
  uint64_t buffers = 64 * 5 * 2 * 8, pipelines = 64 * 5 * 4;
  ck_assert_uint_le(r.peak_packets, 64 + buffers + pipelines);
  ck_assert_double_lt(r.accepted, 0.3);
  ck_assert_double_gt(r.avg_latency, 100);
  b.rate = 0.05;
  b.drain_limit = 5000;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_OK);
  ck_assert(!r.saturated);
  ck_assert_double_eq(r.min_latency, 7);
}
END_TEST

START_TEST(options_should_load_strictly) {
  const char *good =
      "{\"topology\":\"torus:4x4\",\"routing\":\"dor_dateline\",\"endpoints_per_router\":1,"
      "\"num_vcs\":2,\"vc_depth\":4,\"rc_delay\":1,\"va_delay\":1,\"sa_delay\":1,\"st_delay\":1,"
      "\"link_latency\":1,\"flit_bytes\":32,\"frequency_ghz\":1.0}";
  cs_vcnet_bench b = {.options_json = good, .pattern = "uniform", .rate = 0.05, .packet_flits = 1,
                      .warmup_cycles = 100, .measure_cycles = 200, .drain_limit = 2000, .seed = 3};
  cs_vcnet_bench_result r;
  cs_err err;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_OK);
  ck_assert(!r.saturated);
  ck_assert_uint_gt(r.packets_measured, 0);
  /* below saturation every offered flit is accepted, within the noise of 3200 draws */
  ck_assert_double_lt(r.accepted, 0.05 * 1.3);
  ck_assert_double_gt(r.accepted, 0.05 * 0.7);
  char bad[600];
  snprintf(bad, sizeof bad, "%.*s,\"extra\":1}", (int)strlen(good) - 1, good);
  b.options_json = bad;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "extra"));
  /* tornado on torus:8x8 sends every packet (x+3, y+3): 6 hops, so at a light load the packets
   * take the zero-load time 3 + 7 * 4 + 6 = 37 cycles, bar a rare collision */
  char tor[600];
  snprintf(tor, sizeof tor, "%s", good);
  memcpy(strstr(tor, "torus:4x4"), "torus:8x8", 9);
  b.options_json = tor;
  b.pattern = "tornado";
  b.rate = 0.002;
  b.measure_cycles = 5000;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_OK);
  ck_assert_uint_gt(r.packets_measured, 300);
  ck_assert_double_le(r.p99_latency, 40);
  ck_assert_double_ge(r.avg_latency, 37);
  ck_assert_double_lt(r.avg_latency, 37.5);
  b.pattern = "nosuch";
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_EINVAL);
  b.pattern = "uniform";
  const char *missing = "{\"topology\":\"torus:4x4\"}";
  b.options_json = missing;
  ck_assert_int_eq(cs_vcnet_netbench(&b, &r, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
}
END_TEST


/* A vcnet job on torus:4x4 (16 endpoints): the cs_test_job adapter with 16 logical ids. */
static void vcnet_job(cs_job *job, cs_primitive prim, cs_algorithm algo, unsigned long long msg,
                      const vcn_params *p) {
  int parts[16];
  for (int i = 0; i < 16; i++) parts[i] = i;
  cs_test_job(job, "vcnet", prim, msg, parts, 16);
  job->spec.algorithm = algo;
  job->adapter.num_initiators = job->adapter.num_targets = 16;
  job->adapter.bw_bytes = 32;
  memcpy(job->engine.params.bytes, p, sizeof *p);
  job->engine.has_options = true;
}

/* Through validation, L1, the driver and back-fill: every record's phases in order, its routers
 * those of its endpoints, every transaction's ticks inside the job, the result consistent. */
START_TEST(driver_run_should_complete_with_consistent_records) {
  vcn_params p = params("torus:4x4", "dor_dateline", 2, 8);
  cs_algorithm algos[] = {CS_ALGO_RING, CS_ALGO_DIMRING, CS_ALGO_DIMRING_RSAG};
  uint32_t want_steps[] = {30, 12, 12}; /* 2(N-1); 2 sum (g_d - 1) on 4x4 */
  for (int a = 0; a < 3; a++) {
    cs_job job;
    vcnet_job(&job, CS_PRIM_ALLREDUCE, algos[a], 16 * 1024, &p);
    job.spec.grid[0] = job.spec.grid[1] = 4;
    cs_err err;
    ck_assert_msg(cs_job_validate(&job, &err) == CS_OK, "%s", err.msg);
    cs_job_output out;
    ck_assert_msg(cs_job_run(&job, true, &out, &err) == CS_OK, "%s", err.msg);
    ck_assert_uint_eq(out.result.algorithm_steps, want_steps[a]);
    ck_assert_uint_gt(out.num_records, 0);
    uint64_t last = 0;
    for (uint64_t i = 0; i < out.num_records; i++) {
      const cs_txn_record *r = &out.records[i];
      ck_assert_uint_le(r->req_inject_tick, r->req_complete_tick);
      ck_assert_uint_le(r->req_complete_tick, r->rsp_inject_tick);
      ck_assert_uint_lt(r->rsp_inject_tick, r->rsp_complete_tick);
      ck_assert_uint_lt(r->req_inject_cycle, r->req_complete_cycle);
      ck_assert_uint_le(r->wdata_gen_cycle, r->wdata_complete_cycle);
      ck_assert_int_eq(r->src_node, r->src); /* one endpoint per router: router id = endpoint id */
      ck_assert_int_eq(r->dst_node, r->dst);
      /* a write's req phase is at least the zero-load time of its burst over the hops */
      int cs_[3], cd[3], hops = 0;
      vcn_topo t = topo("torus:4x4");
      vcn_topo_coords(&t, r->src, cs_);
      vcn_topo_coords(&t, r->dst, cd);
      for (int d = 0; d < 2; d++) {
        int x = abs(cd[d] - cs_[d]);
        hops += x < 4 - x ? x : 4 - x;
      }
      ck_assert_uint_ge(r->req_complete_cycle - r->req_inject_cycle,
                        vcn_zero_load_latency(&p, hops, r->burst_length));
      /* the engine's record columns (engine.c's table): ports of the single endpoint (after the 4
       * link ports), injection VCs in class 0 (VC 0 of 2 VCs in 2 classes), DOR's minimal hops
       * both ways; every other engine's slot left at -1 by the driver */
      size_t slot = cs_engine_record_slot(&cs_vcnet_ops);
      const int32_t want[6] = {4, 4, 0, 0, hops, hops};
      for (size_t k = 0; k < CS_TXN_EXTRA_SLOTS; k++) {
        if (k >= slot && k < slot + 6) ck_assert_int_eq(r->engine_extra[k], want[k - slot]);
        else if (k < cs_engine_record_slots()) ck_assert_int_eq(r->engine_extra[k], -1);
        else ck_assert_int_eq(r->engine_extra[k], 0);
      }
      last = r->rsp_complete_tick > last ? r->rsp_complete_tick : last;
    }
    ck_assert_uint_eq(out.result.total_ticks, last);
    ck_assert_double_eq_tol(out.result.total_time_us, (double)last / 1000.0, 1e-9);
    ck_assert_uint_gt(out.result.flit_hops, 0);
    cs_job_output_free(&out);
  }
}
END_TEST

/* Plain DOR on a torus with one shallow VC: all-to-all traffic closes the wrap-around cycle and
 * the driver's deadlock guard fails the job; the dateline runs the same job to the end. */
START_TEST(deadlock_guard_should_stop_torus_dor_without_dateline) {
  vcn_params p = params("torus:4x4", "dor", 1, 2);
  cs_job job;
  vcnet_job(&job, CS_PRIM_ALLTOALL, CS_ALGO_PAIRWISE, 256 * 1024, &p);
  job.engine.deadlock_guard_ticks = 5000;
  cs_err err;
  cs_job_output out;
  ck_assert_int_eq(cs_job_run(&job, false, &out, &err), CS_EDEADLOCK);
  ck_assert_ptr_nonnull(strstr(err.msg, "request in the network"));
  p = params("torus:4x4", "dor_dateline", 2, 2);
  vcnet_job(&job, CS_PRIM_ALLTOALL, CS_ALGO_PAIRWISE, 256 * 1024, &p);
  job.engine.deadlock_guard_ticks = 5000;
  ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
  cs_job_output_free(&out);
}
END_TEST

START_TEST(validation_should_want_an_endpoint_per_id) {
  vcn_params p = params("torus:4x4", "dor_dateline", 2, 8);
  cs_job job;
  vcnet_job(&job, CS_PRIM_ALLREDUCE, CS_ALGO_RING, 4096, &p);
  job.adapter.num_initiators = job.adapter.num_targets = 17;
  cs_err err;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "16 endpoints"));
  snprintf(p.routing, sizeof p.routing, "dor_dateline");
  snprintf(p.topology, sizeof p.topology, "mesh:4x4");
  vcnet_job(&job, CS_PRIM_ALLREDUCE, CS_ALGO_RING, 4096, &p);
  ck_assert_int_ne(cs_job_validate(&job, &err), CS_OK);
  ck_assert_ptr_nonnull(strstr(err.msg, "torus"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("vcnet");
  TCase *tc = tcase_create("routing");
  tcase_add_test(tc, seed_example_should_take_4_hops_on_torus_and_6_on_mesh);
  tcase_add_test(tc, torus_tie_at_half_should_go_plus);
  tcase_add_test(tc, hop_counts_should_equal_distance_for_every_pair);
  tcase_add_test(tc, coordinates_should_vary_dimension_0_fastest);
  tcase_add_test(tc, dateline_class_should_switch_on_wrap_and_reset_on_turn);
  tcase_add_test(tc, deadlock_check_should_find_cycle_only_without_dateline);
  suite_add_tcase(s, tc);
  tc = tcase_create("network");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, zero_load_latency_should_match_formula);
  tcase_add_test(tc, flits_should_be_conserved_under_saturation);
  tcase_add_test(tc, network_hops_should_equal_distance_for_every_pair);
  tcase_add_test(tc, torus_without_dateline_should_deadlock_under_load);
  tcase_add_test(tc, options_should_load_strictly);
  tcase_add_test(tc, netbench_sources_should_hold_one_packet_each_past_saturation);
  suite_add_tcase(s, tc);
  tc = tcase_create("transactions");
  tcase_add_test(tc, transaction_phases_should_take_zero_load_latency);
  tcase_add_test(tc, master_tracker_should_serialise_writes);
  tcase_add_test(tc, records_should_not_depend_on_the_order_they_are_described_in);
  tcase_add_test(tc, driver_run_should_complete_with_consistent_records);
  tcase_add_test(tc, deadlock_guard_should_stop_torus_dor_without_dateline);
  tcase_add_test(tc, validation_should_want_an_endpoint_per_id);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return cs_test_run(s);
}
