/* Command-line tools on the fat tree (docs/vtftr.md): the route of one leaf pair with its VTFTR
 * case, reachability / VC use / deadlock verdicts of fault sets, the unreachability probability,
 * and the paper's single-pair latency figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commsweep/vcnet.h"
#include "fattree.h"

static double seconds_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int parse_leaf(const vtf_net *n, const char *text, int *leaf, cs_err *err) {
  int r, c;
  char tail;
  if (sscanf(text, "%d,%d%c", &r, &c, &tail) != 2)
    return cs_err_set(err, CS_EINVAL, "leaf '%s': expected \"r,c\"", text);
  if (r < 0 || r >= n->rows || c < 0 || c >= n->cols)
    return cs_err_set(err, CS_EINVAL, "leaf '%s' outside the %dx%d tree", text, n->rows, n->cols);
  *leaf = vtf_leaf(n, r, c);
  return CS_OK;
}

static int setup(const char *topology, const char *routing, int epl, const char *faults, vtf_net *n,
                 cs_err *err) {
  int rc = vtf_parse(topology, epl, n, err);
  if (!rc && routing) rc = vtf_algo_parse(routing, &n->algo, err);
  if (!rc && faults) rc = vtf_faults_parse(n, faults, err);
  return rc;
}

static void print_path(const vtf_net *n, const vtf_path *p, FILE *out) {
  for (int i = 0; i < p->n; i++) {
    char a[16], b[16];
    vtf_node_name(n, p->hop[i].from, a, sizeof a);
    vtf_node_name(n, p->hop[i].to, b, sizeof b);
    bool turn = i && p->hop[i].cls != p->hop[i - 1].cls;
    fprintf(out, "  hop %-2d %-8s -> %-8s VC class %d%s\n", i + 1, a, b, p->hop[i].cls,
            turn ? "   <- switch to the fault-tolerant VC" : "");
  }
}

int cs_vcnet_route_faults(const char *topology, const char *routing, int num_vcs, const char *faults,
                          const char *src, const char *dst, FILE *out, int *hops, cs_err *err) {
  if (!vtf_is_fattree(topology)) {
    if (faults) return cs_err_set(err, CS_EINVAL, "faults are a fattree2d option; topology is '%s'", topology);
    if (!routing) routing = strncmp(topology, "torus:", 6) == 0 ? "dor_dateline" : "dor";
    return cs_vcnet_route(topology, routing, num_vcs, src, dst, out, hops, err);
  }
  vtf_net n;
  int s, d, rc = setup(topology, routing, 1, faults, &n, err);
  if (rc || (rc = parse_leaf(&n, src, &s, err)) || (rc = parse_leaf(&n, dst, &d, err))) return rc;
  vtf_path p;
  vtf_route(&n, s, d, &p);
  if (out) {
    char a[16], b[16];
    vtf_node_name(&n, s, a, sizeof a);
    vtf_node_name(&n, d, b, sizeof b);
    fprintf(out, "%s, routing %s, %d known + %d fresh fault(s): %s -> %s\n", topology,
            vtf_algo_name(n.algo), n.n_known, n.n_fresh, a, b);
    print_path(&n, &p, out);
    if (p.kind == VTF_UNREACHABLE) {
      if (p.dead_leaf >= 0) vtf_node_name(&n, p.dead_leaf, a, sizeof a);
      fprintf(out, "unreachable: %s\n", p.dead_leaf >= 0 ? a : "no candidate column or row left");
    } else {
      fprintf(out, "case %s, legs %s, %d link(s), %d switch(es) traversed, %d VC switch(es)\n",
              vtf_case_name(p.kind), p.legs[0] ? p.legs : "-", p.n, p.n + 1, p.vc_switches);
    }
  }
  if (hops) *hops = p.kind == VTF_UNREACHABLE ? -1 : p.n;
  return p.kind == VTF_UNREACHABLE ? cs_err_set(err, CS_ENOTFOUND, "no route from %s to %s", src, dst)
                                   : CS_OK;
}

int cs_vcnet_faults(const cs_vcnet_faults_query *q, FILE *out, int *all_reachable, int *all_acyclic,
                    cs_err *err) {
  vtf_net base;
  int rc = setup(q->topology, q->routing, q->endpoints_per_leaf, q->faults, &base, err);
  if (rc) return rc;
  if (q->trials < 1) return cs_err_set(err, CS_EINVAL, "trials must be at least 1");
  if (q->random_count < 0) return cs_err_set(err, CS_EINVAL, "random fault count must not be negative");
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  vtf_reach sum;
  memset(&sum, 0, sizeof sum);
  uint64_t full = 0, acyclic = 0, novc_cyclic = 0, cover = 0;
  int shortest_cycle = 0;
  bool ok_reach = true, ok_cdg = true;
  for (uint64_t t = 0; t < q->trials; t++) {
    vtf_net n = base;
    if (q->random_count && (rc = vtf_faults_random(&n, q->random_count, q->seed + t, err))) return rc;
    vtf_reach r;
    vtf_reach_all(&n, &r);
    full += r.unreachable == 0;
    ok_reach &= r.unreachable == 0;
    cover += vtf_faults_cover(&n);
    sum.leaf_pairs += r.leaf_pairs;
    sum.unreachable += r.unreachable;
    sum.endpoint_pairs += r.endpoint_pairs;
    sum.endpoint_unreachable += r.endpoint_unreachable;
    sum.vc1_pairs += r.vc1_pairs;
    for (int i = 0; i < VTF_CASES; i++) sum.by_case[i] += r.by_case[i];
    for (int i = 0; i <= VTF_MAX_HOPS; i++) sum.by_links[i] += r.by_links[i];
    if (r.max_vc_switches > sum.max_vc_switches) sum.max_vc_switches = r.max_vc_switches;
    if (q->trials == 1 && out && r.unreachable) {
      char a[16], b[16];
      vtf_node_name(&n, r.first_src, a, sizeof a);
      vtf_node_name(&n, r.first_dst, b, sizeof b);
      fprintf(out, "first unreachable pair: %s -> %s\n", a, b);
    }
    if (q->cdg) {
      vtf_cdg g;
      if ((rc = vtf_cdg_check(&n, &g, err))) return rc;
      acyclic += g.acyclic;
      ok_cdg &= g.acyclic;
      if (q->trials == 1 && out && !g.acyclic) {
        fprintf(out, "CDG under %s: cycle of %d channels:\n", vtf_algo_name(n.algo), g.cycle_len);
        for (int i = 0; i < g.cycle_len && i < 64; i++) {
          char c[48];
          vtf_channel_name(&n, g.cycle[i], c, sizeof c);
          fprintf(out, "  %s\n", c);
        }
      }
      if (n.algo == VTF_VTFTR) {
        vtf_net flat = n;
        flat.algo = VTF_VTFTR_NOVC;
        if ((rc = vtf_cdg_check(&flat, &g, err))) return rc;
        novc_cyclic += !g.acyclic;
        if (!g.acyclic && (!shortest_cycle || g.cycle_len < shortest_cycle)) shortest_cycle = g.cycle_len;
      }
    }
  }
  if (out) {
    fprintf(out, "%s, routing %s, %d endpoint(s) per leaf, %s%s%d random known fault(s), %llu trial(s)\n",
            q->topology, vtf_algo_name(base.algo), base.epl, q->faults ? q->faults : "",
            q->faults ? " + " : "", q->random_count, (unsigned long long)q->trials);
    fprintf(out, "trials with every healthy pair reachable: %llu of %llu (faults covering all rows and columns in %llu)\n",
            (unsigned long long)full, (unsigned long long)q->trials, (unsigned long long)cover);
    fprintf(out, "leaf pairs: %llu, unreachable %llu; endpoint pairs: %llu, unreachable %llu\n",
            (unsigned long long)sum.leaf_pairs, (unsigned long long)sum.unreachable,
            (unsigned long long)sum.endpoint_pairs, (unsigned long long)sum.endpoint_unreachable);
    fprintf(out, "route cases (leaf pairs):");
    for (int i = 1; i < VTF_CASES; i++)
      if (sum.by_case[i]) fprintf(out, " %s %llu", vtf_case_name((vtf_case)i), (unsigned long long)sum.by_case[i]);
    fprintf(out, "\nlinks per route (switch-to-switch; switches traversed = links + 1):");
    for (int i = 0; i <= VTF_MAX_HOPS; i++)
      if (sum.by_links[i]) fprintf(out, " %d:%llu", i, (unsigned long long)sum.by_links[i]);
    uint64_t routed = sum.leaf_pairs - sum.unreachable;
    fprintf(out, "\nVC use: %llu of %llu routes enter the fault-tolerant class (%.3f%%); at most %d VC switch(es) per route\n",
            (unsigned long long)sum.vc1_pairs, (unsigned long long)routed,
            routed ? 100.0 * (double)sum.vc1_pairs / (double)routed : 0.0, sum.max_vc_switches);
    if (q->cdg) {
      fprintf(out, "CDG under %s: acyclic in %llu of %llu trial(s)\n", vtf_algo_name(base.algo),
              (unsigned long long)acyclic, (unsigned long long)q->trials);
      if (base.algo == VTF_VTFTR)
        fprintf(out, "CDG without the VC switch (vtftr_novc): cyclic in %llu of %llu trial(s)%s%d\n",
                (unsigned long long)novc_cyclic, (unsigned long long)q->trials,
                shortest_cycle ? ", shortest cycle found " : "", shortest_cycle);
    }
    fprintf(out, "%.3f s\n", seconds_since(&t0));
  }
  if (all_reachable) *all_reachable = ok_reach;
  if (all_acyclic) *all_acyclic = ok_cdg;
  return CS_OK;
}

int cs_vcnet_vtftr_probability(const char *topology, int k, uint64_t trials, uint64_t seed, FILE *out,
                               cs_err *err) {
  vtf_net n;
  int rc = vtf_parse(topology, 1, &n, err);
  if (rc) return rc;
  if (k < 0 || k > n.leaves) return cs_err_set(err, CS_EINVAL, "fault count %d outside [0, %d]", k, n.leaves);
  double exact = vtf_unreach_probability(n.rows, n.cols, k);
  fprintf(out, "%s, %d random leaf faults, every one known to the tables:\n", topology, k);
  if (exact == exact)
    fprintf(out, "  exact              %.6e   (faults cover every row and column; k <= R + C - 2)\n", exact);
  else
    fprintf(out, "  exact              not derived for k > R + C - 2\n");
  struct timespec t0;
  vtf_mc m;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if ((rc = vtf_mc_plain(n.rows, n.cols, k, trials, seed, &m, err))) return rc;
  fprintf(out, "  plain MC           %.6e   95%% [%.6e, %.6e]  %llu of %llu trials  %.2f s\n", m.p, m.lo,
          m.hi, (unsigned long long)m.hits, (unsigned long long)m.trials, seconds_since(&t0));
  if (k >= n.rows) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((rc = vtf_mc_rows_covered(n.rows, n.cols, k, trials, seed + 1, &m, err))) return rc;
    fprintf(out, "  rows-covered MC    %.6e   95%% [%.6e, %.6e]  %llu of %llu trials x P(all rows hit) %.6e  %.2f s\n",
            m.p, m.lo, m.hi, (unsigned long long)m.hits, (unsigned long long)m.trials, m.factor,
            seconds_since(&t0));
  }
  return CS_OK;
}

int cs_vcnet_vtftr_latency(double switch_ns, double link_ns, double endpoint_ns, FILE *out,
                           double figures[4], cs_err *err) {
  /* 8x8 as in the paper's single-fault test; the faulty leaf is the XY intermediate of the pair */
  vtf_net n;
  int rc = vtf_parse("fattree2d:8x8", 1, &n, err);
  if (rc) return rc;
  const int fr = 3, fc = 4, s = vtf_leaf(&n, 3, 1), d = vtf_leaf(&n, 6, 4);
  static const char *const what[4] = {
      "fault-free, different row and column (xy)",
      "VTFTR, fault met at the row switch (misroute)",
      "VTFTR, fault in the tables (yx)",
      "algorithm A (fixed detour)"};
  vtf_path p[4];
  vtf_route(&n, s, d, &p[0]);
  vtf_set_leaf(&n, fr, fc, VTF_FRESH);
  vtf_route(&n, s, d, &p[1]);
  vtf_set_leaf(&n, fr, fc, VTF_KNOWN);
  vtf_route(&n, s, d, &p[2]);
  n.algo = VTF_ALG_A;
  vtf_route(&n, s, d, &p[3]);
  if (out)
    fprintf(out, "fattree2d:8x8, leaf (%d,%d) faulty, pair L(3,1) -> L(6,4); switch %g ns, link %g ns, endpoint link %g ns\n",
            fr, fc, switch_ns, link_ns, endpoint_ns);
  for (int i = 0; i < 4; i++) {
    if (p[i].kind == VTF_UNREACHABLE) return cs_err_set(err, CS_EINTERNAL, "latency figure %d: no route", i);
    figures[i] = vtf_path_latency_ns(&p[i], switch_ns, link_ns, endpoint_ns);
    if (out)
      fprintf(out, "  %-46s %-10s %d switches  %7.1f ns\n", what[i], vtf_case_name(p[i].kind), p[i].n + 1,
              figures[i]);
  }
  return CS_OK;
}
