/* The 2-D fat tree and VTFTR (docs/vtftr.md): path shapes and link counts of the paper's Fig. 3
 * and Fig. 5 cases, candidate-table masking (Fig. 4), one VC switch at most and only at a
 * column->row turn, full reachability with up to R-1 faults, the claim about fault sets that do
 * not cover every row and column (enumeration on small trees, random sets on 16x16), acyclic
 * channel dependencies under VTFTR and cycles without its VC switch, the exact unreachability
 * probability against integer inclusion-exclusion and against Monte Carlo, and the paper's
 * 237/307/237/377 ns latencies. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/job.h"
#include "commsweep/vcnet.h"
#include "engine/vcnet/fattree.h"
#include "engine/vcnet/vcnet_int.h"
#include "test_support.h"

/* Check records every passing ck_assert (a write per call); loops over millions of routes test
 * with this instead and report only a failure. */
#define REQUIRE(c)                                                        \
  do {                                                                    \
    if (!(c)) ck_abort_msg("%s:%d: %s failed", __FILE__, __LINE__, #c); \
  } while (0)

static vtf_net tree(const char *topo, const char *faults) {
  vtf_net n;
  cs_err err;
  ck_assert_int_eq(vtf_parse(topo, 1, &n, &err), CS_OK);
  if (faults) ck_assert_int_eq(vtf_faults_parse(&n, faults, &err), CS_OK);
  return n;
}

static vtf_path route(const vtf_net *n, int sr, int sc, int dr, int dc) {
  vtf_path p;
  vtf_route(n, vtf_leaf(n, sr, sc), vtf_leaf(n, dr, dc), &p);
  return p;
}

/* A route is well formed: contiguous from src to dst, alternating leaf/switch, through live
 * leaves only, classes never falling, at most one class change and that one at a column->row
 * turn (arrived from a column switch, leaving to a row switch).  Returns the link count. */
static int check_path(const vtf_net *n, int src, int dst, const vtf_path *p) {
  REQUIRE((p->kind) != (VTF_UNREACHABLE));
  if (p->kind == VTF_LOCAL) {
    REQUIRE((src) == (dst));
    REQUIRE((p->n) == (0));
    return 0;
  }
  REQUIRE((p->hop[0].from) == (src));
  REQUIRE((p->hop[p->n - 1].to) == (dst));
  REQUIRE(((int)strlen(p->legs) * 2) == (p->n));
  int changes = 0;
  for (int i = 0; i < p->n; i++) {
    const vtf_hop *h = &p->hop[i];
    if (i) REQUIRE((h->from) == (p->hop[i - 1].to));
    bool up = i % 2 == 0;
    REQUIRE(up ? h->from < n->leaves && h->to >= n->leaves : h->from >= n->leaves && h->to < n->leaves);
    if (!up) REQUIRE(!vtf_dead(n, h->to));
    if (i && h->cls != p->hop[i - 1].cls) {
      changes++;
      REQUIRE((p->hop[i - 1].cls) == (0));
      REQUIRE(p->hop[i - 1].from >= n->leaves + n->rows); /* came down a column switch */
      REQUIRE(h->to >= n->leaves && h->to < n->leaves + n->rows); /* goes up a row switch */
    }
    if (i >= 2 && up) REQUIRE((p->hop[i - 1].from) != (h->to)); /* no U-turn through a switch */
  }
  REQUIRE((changes) <= (1));
  REQUIRE((changes) == (p->vc_switches));
  return p->n;
}

/* ---- topology and the fault-free base ------------------------------------------------------ */

START_TEST(parse_should_accept_rxc_and_reject_the_rest) {
  vtf_net n;
  cs_err err;
  ck_assert_int_eq(vtf_parse("fattree2d:16x8", 4, &n, &err), CS_OK);
  ck_assert_int_eq(n.rows, 16);
  ck_assert_int_eq(n.cols, 8);
  ck_assert_int_eq(n.leaves, 128);
  ck_assert_int_eq(vtf_row_switch(&n, 0), 128);
  ck_assert_int_eq(vtf_col_switch(&n, 0), 144);
  const char *bad[] = {"fattree2d:16", "fattree2d:1x4", "fattree2d:4x65", "fattree2d:4x4x4", "mesh:4x4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq(vtf_parse(bad[i], 1, &n, &err), CS_EINVAL);
  n = tree("fattree2d:4x4", NULL);
  ck_assert_int_eq(vtf_faults_parse(&n, "1,4", &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "outside"));
  ck_assert_int_eq(vtf_faults_parse(&n, "1;2", &err), CS_EINVAL);
}
END_TEST

START_TEST(fault_free_routes_should_be_xy_with_0_2_or_4_links) {
  /* XY: a row leg when the columns differ, a column leg when the rows differ; a leg is two
   * links (up to the row/column switch, down to the leaf).  So 4 links, 5 switches, for a pair
   * differing in both coordinates, 2 when one agrees, 0 on one leaf. */
  vtf_net n = tree("fattree2d:8x6", NULL);
  for (int s = 0; s < n.leaves; s++)
    for (int d = 0; d < n.leaves; d++) {
      vtf_path p;
      vtf_route(&n, s, d, &p);
      int want = 2 * ((s / 6 != d / 6) + (s % 6 != d % 6));
      REQUIRE((check_path(&n, s, d, &p)) == (want));
      REQUIRE((p.vc_switches) == (0));
      if (want == 4) ck_assert_str_eq(p.legs, "RC");
      if (want) REQUIRE((p.kind) == (VTF_XY));
      for (int i = 0; i < p.n; i++) REQUIRE((p.hop[i].cls) == (0));
    }
}
END_TEST

/* ---- the paper's path cases ------------------------------------------------------------------ */

START_TEST(fig3_known_fault_on_xy_intermediate_should_route_yx_with_one_vc_switch) {
  /* S = (0,0), D = (2,2): XY intermediate (0,2) faulty, YX intermediate (2,0) healthy:
   * C0 down to (2,0), switch class, R2 to D.  4 links like XY: the paper's "yx adds no hop". */
  vtf_net n = tree("fattree2d:4x4", "0,2");
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 4);
  ck_assert_int_eq(p.kind, VTF_YX);
  ck_assert_str_eq(p.legs, "CR");
  ck_assert_int_eq(p.hop[1].to, vtf_leaf(&n, 2, 0));
  ck_assert_int_eq(p.hop[1].cls, 0);
  ck_assert_int_eq(p.hop[2].cls, 1);
  ck_assert_int_eq(p.vc_switches, 1);
}
END_TEST

START_TEST(fig3_fresh_fault_on_xy_intermediate_should_misroute_row_col_row) {
  /* The row switch finds (0,2) dead before the tables know it: it sends the packet to another
   * leaf of row 0 (not the source's column 0), column leg down to row 2, class switch, row leg
   * to D: 6 links, 7 switches, two more than XY. */
  vtf_net n = tree("fattree2d:4x4", "!0,2");
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 6);
  ck_assert_int_eq(p.kind, VTF_MISROUTE_3);
  ck_assert_str_eq(p.legs, "RCR");
  int mid = p.hop[1].to % 4;
  ck_assert(mid == 1 || mid == 3);
  ck_assert_int_eq(p.hop[1].to / 4, 0);
  ck_assert_int_eq(p.hop[3].to, vtf_leaf(&n, 2, mid));
  ck_assert_int_eq(p.hop[3].cls, 0);
  ck_assert_int_eq(p.hop[4].cls, 1);
}
END_TEST

START_TEST(fig5_paths_should_be_misroute_yx_and_xy) {
  /* Fig. 5 on 4x4 with leaves 02 and 20 faulty: S1 (0,0) -> D1 (2,2) has both intermediates
   * faulty and misroutes through a fault-free column (1 or 3; columns 0 and 2 are masked) then
   * goes column-then-row; S2 (0,1) -> D2 (1,2) meets (0,2) on XY and goes yx through 11;
   * S3 (3,3) -> D3 (1,1) meets nothing and stays XY. */
  vtf_net n = tree("fattree2d:4x4", "0,2;2,0");
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 6);
  ck_assert_int_eq(p.kind, VTF_MISROUTE_3);
  ck_assert_str_eq(p.legs, "RCR");
  ck_assert(p.hop[1].to == vtf_leaf(&n, 0, 1) || p.hop[1].to == vtf_leaf(&n, 0, 3));
  p = route(&n, 0, 1, 1, 2);
  ck_assert_int_eq(check_path(&n, 1, vtf_leaf(&n, 1, 2), &p), 4);
  ck_assert_int_eq(p.kind, VTF_YX);
  ck_assert_int_eq(p.hop[1].to, vtf_leaf(&n, 1, 1));
  p = route(&n, 3, 3, 1, 1);
  ck_assert_int_eq(check_path(&n, vtf_leaf(&n, 3, 3), vtf_leaf(&n, 1, 1), &p), 4);
  ck_assert_int_eq(p.kind, VTF_XY);
  ck_assert_int_eq(p.vc_switches, 0);
}
END_TEST

START_TEST(fresh_fault_on_yx_path_should_misroute_col_row_col) {
  /* (0,2) known, (2,0) fresh: the source goes yx; column switch 0 finds (2,0) dead and sends the
   * packet to a row holding no known fault (1 or 3), whose row leg and then column 2 bring it
   * to D: column-row-column, 6 links, one switch at the first column->row turn. */
  vtf_net n = tree("fattree2d:4x4", "0,2;!2,0");
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 6);
  ck_assert_int_eq(p.kind, VTF_MISROUTE_3);
  ck_assert_str_eq(p.legs, "CRC");
  int r = p.hop[1].to / 4;
  ck_assert(r == 1 || r == 3);
  ck_assert_int_eq(p.hop[2].cls, 1);
}
END_TEST

START_TEST(fresh_fault_on_misroute_column_should_give_row_col_row_col) {
  /* Known (0,2), (2,0); the misroute picks column m; make (2,m) fail fresh: column switch m
   * cannot go down to row 2 and sends the packet to a candidate row r (not 0, not 2), from
   * which XY on class 1 reaches D: row-col-row-col, 8 links, still one VC switch. */
  vtf_net n = tree("fattree2d:4x4", "0,2;2,0");
  vtf_path p = route(&n, 0, 0, 2, 2);
  int m = p.hop[1].to % 4;
  vtf_set_leaf(&n, 2, m, VTF_FRESH);
  p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 8);
  ck_assert_int_eq(p.kind, VTF_MISROUTE_4);
  ck_assert_str_eq(p.legs, "RCRC");
  ck_assert_int_eq(p.hop[1].to, vtf_leaf(&n, 0, m));
  int r = p.hop[3].to / 4;
  ck_assert(r == 1 || r == 3);
  ck_assert_int_eq(p.vc_switches, 1);
}
END_TEST

START_TEST(all_columns_masked_should_misroute_through_a_fault_free_row) {
  /* Faults in every column but not in row 3: no row switch has a candidate column, the column
   * switch of the source misroutes to row 3: C0 -> (3,0), R3 -> (3,2), C2 -> (2,2). */
  vtf_net n = tree("fattree2d:4x4", "0,2;2,0;1,1;1,3");
  int cand[4];
  ck_assert_int_eq(vtf_row_candidates(&n, 2, cand), 0);
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 6);
  ck_assert_str_eq(p.legs, "CRC");
  ck_assert_int_eq(p.hop[1].to, vtf_leaf(&n, 3, 0));
  ck_assert_int_eq(p.hop[3].to, vtf_leaf(&n, 3, 2));
}
END_TEST

START_TEST(alg_a_should_detour_four_links_more_without_vc_switch) {
  /* Algorithm A around faulty (0,2) for (0,0) -> (2,2): (0,3), (1,3), (1,2), down column 2:
   * 8 links, 9 switches, class 0 throughout.  With its detour leaf (0,3) also dead it has no
   * route, where VTFTR still has one. */
  vtf_net n = tree("fattree2d:4x4", "0,2");
  n.algo = VTF_ALG_A;
  vtf_path p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(check_path(&n, 0, vtf_leaf(&n, 2, 2), &p), 8);
  ck_assert_int_eq(p.kind, VTF_DETOUR);
  ck_assert_str_eq(p.legs, "RCRC");
  ck_assert_int_eq(p.hop[1].to, vtf_leaf(&n, 0, 3));
  ck_assert_int_eq(p.hop[3].to, vtf_leaf(&n, 1, 3));
  ck_assert_int_eq(p.hop[5].to, vtf_leaf(&n, 1, 2));
  ck_assert_int_eq(p.vc_switches, 0);
  vtf_set_leaf(&n, 0, 3, VTF_KNOWN);
  p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(p.kind, VTF_UNREACHABLE);
  ck_assert_int_eq(p.dead_leaf, vtf_leaf(&n, 0, 3));
  n.algo = VTF_VTFTR;
  p = route(&n, 0, 0, 2, 2);
  ck_assert_int_eq(p.kind, VTF_YX);
}
END_TEST

START_TEST(endpoint_on_faulty_leaf_should_be_unreachable) {
  vtf_net n = tree("fattree2d:4x4", "1,1");
  vtf_path p = route(&n, 1, 1, 2, 2);
  ck_assert_int_eq(p.kind, VTF_UNREACHABLE);
  ck_assert_int_eq(p.dead_leaf, vtf_leaf(&n, 1, 1));
  p = route(&n, 0, 0, 1, 1);
  ck_assert_int_eq(p.kind, VTF_UNREACHABLE);
}
END_TEST

/* ---- candidate tables ------------------------------------------------------------------------ */

START_TEST(candidate_tables_should_mask_faulty_columns_and_rows) {
  /* Fig. 4: leaves 12 and 21 fail; every row switch drops columns 1 and 2 from the candidates
   * of every other destination column, the entries for column 1 and 2 keep the rest.
   * Fault-free every entry lists the R-1 / C-1 other lines. */
  vtf_net n = tree("fattree2d:4x5", NULL);
  int c[8];
  for (int col = 0; col < 5; col++) ck_assert_int_eq(vtf_row_candidates(&n, col, c), 4);
  for (int row = 0; row < 4; row++) ck_assert_int_eq(vtf_col_candidates(&n, row, c), 3);
  n = tree("fattree2d:4x4", "1,2;2,1");
  int want0[] = {3}, want1[] = {0, 3}, want3[] = {0};
  ck_assert_int_eq(vtf_row_candidates(&n, 0, c), 1);
  ck_assert_int_eq(c[0], want0[0]);
  ck_assert_int_eq(vtf_row_candidates(&n, 1, c), 2);
  ck_assert_int_eq(c[0], want1[0]);
  ck_assert_int_eq(c[1], want1[1]);
  ck_assert_int_eq(vtf_row_candidates(&n, 2, c), 2);
  ck_assert_int_eq(vtf_row_candidates(&n, 3, c), 1);
  ck_assert_int_eq(c[0], want3[0]);
  ck_assert_int_eq(vtf_col_candidates(&n, 0, c), 1); /* rows 1, 2 masked */
  ck_assert_int_eq(c[0], 3);
  /* a fresh fault is not in the tables yet */
  vtf_set_leaf(&n, 3, 3, VTF_FRESH);
  ck_assert_int_eq(vtf_row_candidates(&n, 0, c), 1);
  vtf_set_leaf(&n, 3, 3, VTF_KNOWN);
  ck_assert_int_eq(vtf_row_candidates(&n, 0, c), 0);
}
END_TEST

START_TEST(misroutes_should_use_only_candidate_columns) {
  /* Every misroute of a random 12-fault set on 16x16 passes only through columns and rows the
   * tables keep (the whole point of masking: no second fault on the detour). */
  vtf_net n = tree("fattree2d:16x16", NULL);
  cs_err err;
  ck_assert_int_eq(vtf_faults_random(&n, 12, 77, &err), CS_OK);
  int seen = 0;
  for (int s = 0; s < n.leaves; s++)
    for (int d = 0; d < n.leaves; d++) {
      if (vtf_dead(&n, s) || vtf_dead(&n, d) || s == d) continue;
      vtf_path p;
      vtf_route(&n, s, d, &p);
      if (p.kind != VTF_MISROUTE_3) continue;
      seen++;
      int via = p.hop[1].to;
      if (p.legs[0] == 'R') ck_assert(!n.col_masked[via % 16]);
      else ck_assert(!n.row_masked[via / 16]);
    }
  ck_assert_int_gt(seen, 0);
}
END_TEST

/* ---- VC switches and reachability over many fault sets -------------------------------------- */

START_TEST(every_route_should_switch_vc_at_most_once_under_random_faults) {
  /* 60 random sets on 8x8 and 16x16, 1..20 known faults plus 0..2 fresh ones: every reachable
   * route passes check_path (one class change at most, at a column->row turn). */
  cs_err err;
  uint64_t routes = 0;
  int sets = cs_test_quick() ? 10 : 60;
  for (int t = 0; t < sets; t++) {
    vtf_net n = tree(t % 2 ? "fattree2d:16x16" : "fattree2d:8x8", NULL);
    ck_assert_int_eq(vtf_faults_random(&n, 1 + t % 20, 1000 + (uint64_t)t, &err), CS_OK);
    uint64_t s = 5000 + (uint64_t)t;
    for (int f = 0; f < t % 3; f++) {
      int l = (int)(vtf_rand(&s) % (uint64_t)n.leaves);
      if (!n.state[l]) n.state[l] = VTF_FRESH;
    }
    vtf_rebuild(&n);
    for (int a = 0; a < n.leaves; a++)
      for (int b = 0; b < n.leaves; b++) {
        vtf_path p;
        vtf_route(&n, a, b, &p);
        if (p.kind == VTF_UNREACHABLE) continue;
        check_path(&n, a, b, &p);
        routes++;
      }
  }
  ck_assert_uint_gt(routes, cs_test_quick() ? 100000 : 1000000);
}
END_TEST

START_TEST(fifteen_faults_on_16x16_should_leave_every_pair_reachable) {
  /* R - 1 = 15 faults cannot cover all 16 rows, so some row is fault-free (docs/vtftr.md):
   * random sets and the adversarial shapes (a diagonal, a row, a column, a cross). */
  cs_err err;
  vtf_reach r;
  int sets = cs_test_quick() ? 20 : 150;
  for (int t = 0; t < sets; t++) {
    vtf_net n = tree("fattree2d:16x16", NULL);
    REQUIRE((vtf_faults_random(&n, 15, 42 + (uint64_t)t, &err)) == (CS_OK));
    REQUIRE((n.n_known) == (15));
    REQUIRE(!vtf_some_unreachable(&n));
    if (t < 20) {
      vtf_reach_all(&n, &r);
      REQUIRE(r.unreachable == 0);
      REQUIRE(r.leaf_pairs == 241 * 240);
    }
  }
  char diag[256] = "", row[256] = "", col[256] = "", cross[256] = "";
  for (int i = 0; i < 15; i++) {
    char x[16];
    snprintf(x, sizeof x, "%d,%d;", i, (i + 1) % 16);
    strcat(diag, x);
    snprintf(x, sizeof x, "5,%d;", i);
    strcat(row, x);
    snprintf(x, sizeof x, "%d,9;", i);
    strcat(col, x);
    snprintf(x, sizeof x, i < 8 ? "%d,%d;" : "%d,%d;", i < 8 ? 7 : i, i < 8 ? i : 3);
    strcat(cross, x);
  }
  const char *shapes[] = {diag, row, col, cross};
  for (int i = 0; i < 4; i++) {
    vtf_net n = tree("fattree2d:16x16", shapes[i]);
    ck_assert_int_eq(n.n_known, 15);
    vtf_reach_all(&n, &r);
    ck_assert_uint_eq(r.unreachable, 0);
    ck_assert_int_le(r.max_vc_switches, 1);
  }
}
END_TEST

/* The claim checked: with known faults only, some healthy pair is unreachable exactly when the
 * faults hit every row and every column and the rows' fault sets are not nested. */
static void enumerate_claim(const char *topo) {
  vtf_net n = tree(topo, NULL);
  const int L = n.leaves;
  uint64_t unreachable_by_k[32] = {0}, sets_by_k[32] = {0};
  for (uint32_t m = 0; m < (1u << L); m++) {
    for (int l = 0; l < L; l++) n.state[l] = (uint8_t)(m >> l & 1);
    vtf_rebuild(&n);
    bool bad = vtf_some_unreachable(&n);
    bool cover = vtf_faults_cover(&n), nested = vtf_faults_nested(&n);
    if (bad != (cover && !nested))
      ck_abort_msg("%s set %#x: unreachable %d cover %d nested %d", topo, m, bad, cover, nested);
    if (!cover) REQUIRE(!bad); /* the paper's claim */
    if ((m & 7) == 0) {
      vtf_reach r;
      vtf_reach_all(&n, &r);
      REQUIRE((r.unreachable > 0) == (bad));
    }
    int k = __builtin_popcount(m);
    sets_by_k[k]++;
    unreachable_by_k[k] += bad;
  }
  /* the exact formula against the enumeration, for every k it covers */
  for (int k = 0; k <= n.rows + n.cols - 2; k++) {
    double want = (double)unreachable_by_k[k] / (double)sets_by_k[k];
    ck_assert_double_eq_tol(vtf_unreach_probability(n.rows, n.cols, k), want, 1e-12);
  }
}

START_TEST(claim_should_hold_for_every_fault_set_of_4x4_and_3x5) {
  /* valgrind runs (CS_TEST_QUICK) enumerate the 4096 sets of 3x4 only */
  if (cs_test_quick()) {
    enumerate_claim("fattree2d:3x4");
    return;
  }
  enumerate_claim("fattree2d:4x4");
  enumerate_claim("fattree2d:3x5");
}
END_TEST

START_TEST(claim_should_hold_for_random_sets_on_16x16) {
  /* 3000 uniform sets of 16..40 faults, plus sets built to cover every row and column: a random
   * transversal and extra faults (k <= 30: must leave a pair unreachable), and row 0 full plus
   * column 0 full (31 faults, nested: must not). */
  cs_err err;
  int covered = 0;
  int sets = cs_test_quick() ? 200 : 3000;
  for (int t = 0; t < sets; t++) {
    vtf_net n = tree("fattree2d:16x16", NULL);
    REQUIRE((vtf_faults_random(&n, 16 + t % 25, 9000 + (uint64_t)t, &err)) == (CS_OK));
    bool cover = vtf_faults_cover(&n);
    covered += cover;
    REQUIRE((vtf_some_unreachable(&n)) == (cover && !vtf_faults_nested(&n)));
  }
  ck_assert_int_gt(covered, 0);
  for (int t = 0; t < 40; t++) {
    vtf_net n = tree("fattree2d:16x16", NULL);
    int perm[16];
    uint64_t s = 300 + (uint64_t)t;
    for (int i = 0; i < 16; i++) perm[i] = i;
    for (int i = 15; i > 0; i--) {
      int j = (int)(vtf_rand(&s) % (uint64_t)(i + 1)), x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    for (int i = 0; i < 16; i++) n.state[vtf_leaf(&n, i, perm[i])] = VTF_KNOWN;
    vtf_rebuild(&n);
    ck_assert_int_eq(vtf_faults_random(&n, t % 15, s, &err), CS_OK);
    ck_assert(vtf_faults_cover(&n));
    ck_assert(vtf_some_unreachable(&n));
  }
  vtf_net n = tree("fattree2d:16x16", NULL);
  for (int i = 0; i < 16; i++) n.state[vtf_leaf(&n, 0, i)] = n.state[vtf_leaf(&n, i, 0)] = VTF_KNOWN;
  vtf_rebuild(&n);
  ck_assert_int_eq(n.n_known, 31);
  vtf_reach r;
  vtf_reach_all(&n, &r);
  ck_assert_uint_eq(r.unreachable, 0);
}
END_TEST

/* ---- deadlock ------------------------------------------------------------------------------- */

START_TEST(cdg_should_be_acyclic_under_vtftr_for_random_fault_sets) {
  /* 120 random sets on 16x16 and 8x8, 1..30 known faults and up to 2 fresh ones. */
  cs_err err;
  int sets = cs_test_quick() ? 20 : 120;
  for (int t = 0; t < sets; t++) {
    vtf_net n = tree(t % 3 ? "fattree2d:16x16" : "fattree2d:8x8", NULL);
    ck_assert_int_eq(vtf_faults_random(&n, 1 + t % 30, 700 + (uint64_t)t, &err), CS_OK);
    uint64_t s = 123 + (uint64_t)t;
    for (int f = 0; f < t % 3; f++) {
      int l = (int)(vtf_rand(&s) % (uint64_t)n.leaves);
      if (!n.state[l]) n.state[l] = VTF_FRESH;
    }
    vtf_rebuild(&n);
    vtf_cdg g;
    ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
    ck_assert_msg(g.acyclic, "set %d: cycle of %d channels", t, g.cycle_len);
    ck_assert_uint_gt(g.dependencies, 0);
  }
}
END_TEST

START_TEST(cdg_should_have_cycles_without_the_vc_switch) {
  /* Fault-free XY turns only row->column: acyclic.  One fault makes yx routes turn
   * column->row at many leaves; in one class that closes R a -> (a,c) -> C c -> (b,c) -> R b ->
   * (b,d) -> C d -> (a,d) -> R a: a cycle of 8 channels.  Algorithm A with one fault turns
   * column->row at one leaf only, (fr+1, fc+1): no cycle; with two faults in different rows
   * and columns it has two such leaves and a cycle. */
  cs_err err;
  vtf_cdg g;
  vtf_net n = tree("fattree2d:16x16", NULL);
  n.algo = VTF_VTFTR_NOVC;
  ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
  ck_assert(g.acyclic);
  vtf_set_leaf(&n, 4, 9, VTF_KNOWN);
  ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
  ck_assert(!g.acyclic);
  ck_assert_int_eq(g.cycle_len % 4, 0);
  n.algo = VTF_VTFTR;
  ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
  ck_assert(g.acyclic);
  n.algo = VTF_ALG_A;
  ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
  ck_assert(g.acyclic);
  vtf_set_leaf(&n, 11, 2, VTF_KNOWN);
  ck_assert_int_eq(vtf_cdg_check(&n, &g, &err), CS_OK);
  ck_assert(!g.acyclic);
}
END_TEST

/* ---- probability ------------------------------------------------------------------------------ */

START_TEST(exact_probability_should_match_integer_inclusion_exclusion) {
  /* k = 16 on 16x16: covering every row and column with 16 faults is a permutation matrix, so
   * P = 16! / C(256,16).  k = 20, 30: the number of covering 20- and 30-subsets by integer
   * inclusion-exclusion sum_{i,j} (-1)^{i+j} C(16,i) C(16,j) C((16-i)(16-j), k) (computed with
   * Python's exact integers): 80688512364809584435200 and
   * 5002860175428974296732364256969826816, over C(256,k). */
  double inv_c = 1; /* 1 / C(256,16) */
  for (int i = 1; i <= 16; i++) inv_c *= (double)i / (double)(256 - 16 + i);
  double p16 = 20922789888000.0 * inv_c; /* 16! = 20922789888000 */
  ck_assert_double_eq_tol(vtf_unreach_probability(16, 16, 16) / p16, 1, 1e-9);
  double lc20 = lgamma(257) - lgamma(21) - lgamma(237), lc30 = lgamma(257) - lgamma(31) - lgamma(227);
  ck_assert_double_eq_tol(vtf_unreach_probability(16, 16, 20) / (8.0688512364809584435200e22 / exp(lc20)), 1, 1e-9);
  ck_assert_double_eq_tol(vtf_unreach_probability(16, 16, 30) / (5.002860175428974296732364256969826816e36 / exp(lc30)), 1,
                          1e-9);
  ck_assert_double_eq_tol(vtf_unreach_probability(16, 16, 20), 2.877236e-7, 1e-12);
  /* fewer faults than rows: nothing is unreachable; beyond R + C - 2 not derived */
  ck_assert_double_eq(vtf_unreach_probability(16, 16, 15), 0);
  ck_assert(isnan(vtf_unreach_probability(16, 16, 31)));
  /* the paper's 4.807e-22 for 20 faults is C(20,16)/C(256,16): the chance that one given
   * 16-leaf transversal is among the faults (docs/vtftr.md) */
  double paper = 4845.0 * inv_c; /* C(20,16) = 4845 */
  ck_assert_double_eq_tol(paper, 4.807e-22, 1e-25);
}
END_TEST

START_TEST(monte_carlo_should_agree_with_the_exact_probability) {
  /* Deterministic seeds; the exact value must lie in the 95% interval of each estimate. */
  cs_err err;
  vtf_mc m;
  struct {
    int r, c, k;
  } cases[] = {{4, 4, 5}, {6, 6, 9}, {8, 8, 12}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double exact = vtf_unreach_probability(cases[i].r, cases[i].c, cases[i].k);
    ck_assert(exact > 0);
    ck_assert_int_eq(vtf_mc_plain(cases[i].r, cases[i].c, cases[i].k, 20000, 11 + i, &m, &err), CS_OK);
    ck_assert_msg(m.lo <= exact && exact <= m.hi, "plain %dx%d k=%d: %g not in [%g, %g]", cases[i].r,
                  cases[i].c, cases[i].k, exact, m.lo, m.hi);
    ck_assert_int_eq(vtf_mc_rows_covered(cases[i].r, cases[i].c, cases[i].k, 20000, 21 + i, &m, &err), CS_OK);
    ck_assert_double_eq_tol(m.factor, vtf_rows_covered_probability(cases[i].r, cases[i].c, cases[i].k), 1e-15);
    ck_assert_msg(m.lo <= exact && exact <= m.hi, "conditional %dx%d k=%d: %g not in [%g, %g]", cases[i].r,
                  cases[i].c, cases[i].k, exact, m.lo, m.hi);
  }
  /* 16x16 with 30 faults, p = 4.40e-3 */
  ck_assert_int_eq(vtf_mc_rows_covered(16, 16, 30, 4000, 5, &m, &err), CS_OK);
  double exact = vtf_unreach_probability(16, 16, 30);
  ck_assert_msg(m.lo <= exact && exact <= m.hi, "16x16 k=30: %g not in [%g, %g]", exact, m.lo, m.hi);
}
END_TEST

START_TEST(rows_covered_probability_should_match_inclusion_exclusion) {
  /* P(all R rows hit) = sum_i (-1)^i C(R,i) C((R-i)C, k) / C(RC, k); on 4x4 with k = 5:
   * (C(16,5) - 4 C(12,5) + 6 C(8,5) - 4 C(4,5)) / C(16,5) = (4368 - 3168 + 336) / 4368. */
  ck_assert_double_eq_tol(vtf_rows_covered_probability(4, 4, 5), 1536.0 / 4368.0, 1e-14);
}
END_TEST

/* ---- latency ---------------------------------------------------------------------------------- */

START_TEST(latency_figures_should_be_237_307_237_377_ns) {
  /* Switch 25 ns, link 10 ns, endpoint link 36 ns: XY crosses 5 switches and 4 links plus two
   * endpoint links, 125 + 40 + 72 = 237; each extra switch with its link costs 35: the misroute
   * adds 2 (307), yx none (237), algorithm A 4 (377) — the paper's Sec. 3.2 figures. */
  double f[4];
  cs_err err;
  ck_assert_int_eq(cs_vcnet_vtftr_latency(25, 10, 36, NULL, f, &err), CS_OK);
  ck_assert_double_eq(f[0], 237);
  ck_assert_double_eq(f[1], 307);
  ck_assert_double_eq(f[2], 237);
  ck_assert_double_eq(f[3], 377);
}
END_TEST

START_TEST(faults_query_should_report_reachability_and_cdg) {
  cs_err err;
  int reach = 0, acyclic = 0;
  cs_vcnet_faults_query q = {.topology = "fattree2d:8x8", .endpoints_per_leaf = 2, .faults = "0,0;1,1;2,2;3,3;4,4;5,5;6,6;7,7",
                             .trials = 1, .cdg = 1};
  /* the diagonal covers every row and column: (0,1) -> (1,0) has both intermediates dead */
  ck_assert_int_eq(cs_vcnet_faults(&q, NULL, &reach, &acyclic, &err), CS_OK);
  ck_assert(!reach);
  ck_assert(acyclic);
  q.faults = "0,0";
  q.random_count = 6;
  q.trials = 5;
  ck_assert_int_eq(cs_vcnet_faults(&q, NULL, &reach, &acyclic, &err), CS_OK);
  ck_assert(reach);
  ck_assert(acyclic);
  q.routing = "nope";
  ck_assert_int_eq(cs_vcnet_faults(&q, NULL, &reach, &acyclic, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "vtftr"));
}
END_TEST


/* ---- on the cycle-level router network -------------------------------------------------------- */

static vcn_params ft_params(const char *topo, const char *routing, const char *faults, int epl) {
  vcn_params p;
  memset(&p, 0, sizeof p);
  snprintf(p.topology, sizeof p.topology, "%s", topo);
  snprintf(p.routing, sizeof p.routing, "%s", routing);
  snprintf(p.faults, sizeof p.faults, "%s", faults);
  p.endpoints_per_router = epl;
  p.num_vcs = 2;
  p.vc_depth = 4;
  p.rc_delay = p.va_delay = p.sa_delay = p.st_delay = 1;
  p.link_latency = 2;
  p.flit_bytes = 32;
  p.frequency_ghz = 1.0;
  return p;
}

typedef struct ft_sink {
  uint64_t delivered, at;
  uint64_t flits; /* flits of the delivered packets */
  int bad;
  int hops;
} ft_sink;

static void ft_deliver(void *ctx, vcn_net *net, uint32_t pi) {
  ft_sink *s = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  s->delivered++;
  s->at = net->now;
  s->hops = (int)p->hops;
  s->flits += p->size;
  if ((uint64_t)p->dst_ep != p->tag) s->bad = 1;
}

/* One packet alone: latency and links crossed, checked against vcn_zero_load_latency (the
 * pipeline formula of docs/vcnet.md) with the link count of the VTFTR route. */
static void one_packet(const vcn_params *p, int src_ep, int dst_ep, int want_links) {
  vcn_net *n;
  cs_err err;
  ck_assert_msg(vcn_net_create(p, &n, &err) == CS_OK, "%s", err.msg);
  ft_sink s = {0};
  n->ctx = &s;
  n->on_deliver = ft_deliver;
  ck_assert_uint_ne(vcn_net_send(n, src_ep, dst_ep, 3, (uint64_t)dst_ep), VCN_NIL);
  while (!s.delivered && n->now < 10000) {
    vcn_net_skip_idle(n, 10000);
    vcn_net_cycle(n);
    ck_assert_int_eq(vcn_net_check(n, &err), CS_OK);
  }
  ck_assert_uint_eq(s.delivered, 1);
  ck_assert(!s.bad);
  ck_assert_uint_eq(n->st.flits_ejected, s.flits);
  ck_assert_int_eq(s.hops, want_links);
  ck_assert_uint_eq(s.at, vcn_zero_load_latency(p, want_links, 3));
  vcn_net_destroy(n);
}

START_TEST(router_network_should_take_the_vtftr_routes) {
  /* 8x8, 2 endpoints per leaf; the pair L(3,1) -> L(6,4), endpoints 2 (3*8+1) and 2 (6*8+4):
   * fault-free XY 4 links; (3,4) known: yx, 4; (3,4) fresh: misroute, 6; algorithm A: 8. */
  int s = 2 * (3 * 8 + 1), d = 2 * (6 * 8 + 4) + 1;
  vcn_params p = ft_params("fattree2d:8x8", "vtftr", "", 2);
  one_packet(&p, s, d, 4);
  one_packet(&p, s, s + 1, 0); /* two endpoints of one leaf */
  p = ft_params("fattree2d:8x8", "vtftr", "3,4", 2);
  one_packet(&p, s, d, 4);
  p = ft_params("fattree2d:8x8", "vtftr", "!3,4", 2);
  one_packet(&p, s, d, 6);
  p = ft_params("fattree2d:8x8", "alg_a", "3,4", 2);
  one_packet(&p, s, d, 8);
  /* the misroute costs two switches and two links more than XY */
  vcn_params q = ft_params("fattree2d:8x8", "vtftr", "", 2);
  ck_assert_uint_eq(vcn_zero_load_latency(&q, 6, 3) - vcn_zero_load_latency(&q, 4, 3),
                    2 * (4 + (uint64_t)q.link_latency));
}
END_TEST

START_TEST(router_network_should_deliver_everything_under_load_with_faults) {
  /* Past saturation on 8x8 with 8 random known faults and one fresh one under VTFTR: every
   * packet between live, routable endpoints arrives, credits balance every few cycles, and the
   * network drains (no deadlock). */
  vcn_params p = ft_params("fattree2d:8x8", "vtftr", "!7,7", 2);
  p.fault_count = 8;
  p.fault_seed = 3;
  vcn_net *n;
  cs_err err;
  ck_assert_msg(vcn_net_create(&p, &n, &err) == CS_OK, "%s", err.msg);
  ck_assert_int_eq(n->t.ft.n_known, 8);
  ft_sink s = {0};
  n->ctx = &s;
  n->on_deliver = ft_deliver;
  uint64_t rng = 99, sent = 0;
  int cycles = cs_test_quick() ? 300 : 1500;
  for (int c = 0; c < cycles; c++) {
    for (int e = 0; e < n->t.endpoints; e++) {
      if (vtf_rand(&rng) % 3) continue;
      int d = (int)(vtf_rand(&rng) % (uint64_t)n->t.endpoints);
      if (vcn_pair_problem(&n->t, e, d, NULL, 0)) continue;
      ck_assert_uint_ne(vcn_net_send(n, e, d, 1 + (int)(vtf_rand(&rng) % 4), (uint64_t)d), VCN_NIL);
      sent++;
    }
    vcn_net_cycle(n);
    if (c % 11 == 0) ck_assert_msg(vcn_net_check(n, &err) == CS_OK, "%s", err.msg);
  }
  for (int c = 0; c < 400000 && !vcn_net_quiet(n); c++) vcn_net_cycle(n);
  ck_assert(vcn_net_quiet(n));
  ck_assert_int_eq(vcn_net_check(n, &err), CS_OK);
  ck_assert(!s.bad);
  ck_assert_uint_eq(s.delivered, sent);
  ck_assert_uint_eq(n->st.flits_ejected, s.flits); /* every flit of every packet, once */
  vcn_net_destroy(n);
}
END_TEST

START_TEST(options_should_take_faults_only_on_a_fat_tree) {
  cs_err err;
  vcn_params p = ft_params("fattree2d:8x8", "dor", "", 1);
  vcn_net *n;
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "mesh and torus"));
  p = ft_params("torus:4x4", "dor_dateline", "1,1", 1);
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "fattree2d"));
  p = ft_params("fattree2d:8x8", "vtftr", "8,1", 1);
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_EINVAL);
  p = ft_params("fattree2d:8x8", "vtftr", "1,1", 1);
  ck_assert_int_eq(vcn_net_create(&p, &n, &err), CS_OK);
  char why[96];
  ck_assert(vcn_pair_problem(&n->t, 9, 0, why, sizeof why)); /* endpoint 9 is on leaf (1,1) */
  ck_assert_ptr_nonnull(strstr(why, "faulty leaf L(1,1)"));
  ck_assert(!vcn_pair_problem(&n->t, 0, 63, why, sizeof why));
  vcn_net_destroy(n);
}
END_TEST


START_TEST(job_with_a_participant_on_a_faulty_leaf_should_fail_validation_alone) {
  /* fattree2d:4x4, one endpoint per leaf: participant 5 is leaf (1,1).  The job with (1,1)
   * faulty is refused naming the leaf; with (2,3) faulty instead it validates and runs. */
  vcn_params p = ft_params("fattree2d:4x4", "vtftr", "1,1", 1);
  p.vc_depth = 8;
  int parts[16];
  for (int i = 0; i < 16; i++) parts[i] = i;
  cs_job job;
  cs_test_job(&job, "vcnet", CS_PRIM_ALLREDUCE, 16 * 1024, parts, 16);
  job.spec.algorithm = CS_ALGO_RING;
  job.adapter.num_initiators = job.adapter.num_targets = 16;
  job.adapter.bw_bytes = 32;
  memcpy(job.engine.params.bytes, &p, sizeof p);
  job.engine.has_options = true;
  cs_err err;
  ck_assert_int_eq(cs_job_validate(&job, &err), CS_ECONSTRAINT);
  ck_assert_ptr_nonnull(strstr(err.msg, "participant 5 sits on faulty leaf L(1,1)"));
  int healthy[8] = {0, 1, 2, 3, 4, 6, 8, 15};
  cs_test_job(&job, "vcnet", CS_PRIM_ALLREDUCE, 16 * 1024, healthy, 8);
  job.spec.algorithm = CS_ALGO_RING;
  job.adapter.num_initiators = job.adapter.num_targets = 16;
  job.adapter.bw_bytes = 32;
  p = ft_params("fattree2d:4x4", "vtftr", "2,3;1,1", 1);
  memcpy(job.engine.params.bytes, &p, sizeof p);
  job.engine.has_options = true;
  ck_assert_msg(cs_job_validate(&job, &err) == CS_OK, "%s", err.msg);
  cs_job_output out;
  ck_assert_msg(cs_job_run(&job, false, &out, &err) == CS_OK, "%s", err.msg);
  ck_assert_uint_gt(out.result.flit_hops, 0);
  cs_job_output_free(&out);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("vtftr");
  TCase *paths = tcase_create("paths");
  tcase_add_test(paths, parse_should_accept_rxc_and_reject_the_rest);
  tcase_add_test(paths, fault_free_routes_should_be_xy_with_0_2_or_4_links);
  tcase_add_test(paths, fig3_known_fault_on_xy_intermediate_should_route_yx_with_one_vc_switch);
  tcase_add_test(paths, fig3_fresh_fault_on_xy_intermediate_should_misroute_row_col_row);
  tcase_add_test(paths, fig5_paths_should_be_misroute_yx_and_xy);
  tcase_add_test(paths, fresh_fault_on_yx_path_should_misroute_col_row_col);
  tcase_add_test(paths, fresh_fault_on_misroute_column_should_give_row_col_row_col);
  tcase_add_test(paths, all_columns_masked_should_misroute_through_a_fault_free_row);
  tcase_add_test(paths, alg_a_should_detour_four_links_more_without_vc_switch);
  tcase_add_test(paths, endpoint_on_faulty_leaf_should_be_unreachable);
  tcase_add_test(paths, latency_figures_should_be_237_307_237_377_ns);
  suite_add_tcase(s, paths);
  TCase *tables = tcase_create("tables");
  tcase_add_test(tables, candidate_tables_should_mask_faulty_columns_and_rows);
  tcase_add_test(tables, misroutes_should_use_only_candidate_columns);
  suite_add_tcase(s, tables);
  TCase *faults = tcase_create("faults");
  tcase_set_timeout(faults, 120);
  tcase_add_test(faults, every_route_should_switch_vc_at_most_once_under_random_faults);
  tcase_add_test(faults, fifteen_faults_on_16x16_should_leave_every_pair_reachable);
  tcase_add_test(faults, claim_should_hold_for_every_fault_set_of_4x4_and_3x5);
  tcase_add_test(faults, claim_should_hold_for_random_sets_on_16x16);
  tcase_add_test(faults, cdg_should_be_acyclic_under_vtftr_for_random_fault_sets);
  tcase_add_test(faults, cdg_should_have_cycles_without_the_vc_switch);
  tcase_add_test(faults, faults_query_should_report_reachability_and_cdg);
  suite_add_tcase(s, faults);
  TCase *prob = tcase_create("probability");
  tcase_set_timeout(prob, 120);
  tcase_add_test(prob, exact_probability_should_match_integer_inclusion_exclusion);
  tcase_add_test(prob, rows_covered_probability_should_match_inclusion_exclusion);
  tcase_add_test(prob, monte_carlo_should_agree_with_the_exact_probability);
  suite_add_tcase(s, prob);
  TCase *net = tcase_create("network");
  tcase_set_timeout(net, 120);
  tcase_add_test(net, router_network_should_take_the_vtftr_routes);
  tcase_add_test(net, router_network_should_deliver_everything_under_load_with_faults);
  tcase_add_test(net, options_should_take_faults_only_on_a_fat_tree);
  tcase_add_test(net, job_with_a_participant_on_a_faulty_leaf_should_fail_validation_alone);
  suite_add_tcase(s, net);
  return s;
}

int main(void) { return cs_test_run(suite()); }
