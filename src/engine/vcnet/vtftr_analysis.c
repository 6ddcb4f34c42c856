/* What a fault set does to the fat tree under a routing (docs/vtftr.md): reachability of every
 * healthy pair with the route cases, link counts and VC use; the channel dependency graph; the
 * exact probability that k random faults leave a pair unreachable, and two Monte Carlo
 * estimates of it that route every candidate pair instead of trusting the derivation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "fattree.h"

void vtf_reach_all(const vtf_net *n, vtf_reach *out) {
  memset(out, 0, sizeof *out);
  out->first_src = out->first_dst = -1;
  uint64_t healthy = 0;
  for (int s = 0; s < n->leaves; s++) {
    if (vtf_dead(n, s)) continue;
    healthy++;
    for (int d = 0; d < n->leaves; d++) {
      if (d == s || vtf_dead(n, d)) continue;
      vtf_path p;
      vtf_route(n, s, d, &p);
      out->leaf_pairs++;
      out->by_case[p.kind]++;
      if (p.kind == VTF_UNREACHABLE) {
        if (out->first_src < 0) out->first_src = s, out->first_dst = d;
        out->unreachable++;
        continue;
      }
      out->by_links[p.n]++;
      for (int i = 0; i < p.n; i++)
        if (p.hop[i].cls) {
          out->vc1_pairs++;
          break;
        }
      if (p.vc_switches > out->max_vc_switches) out->max_vc_switches = p.vc_switches;
    }
  }
  uint64_t e = healthy * (uint64_t)n->epl;
  out->endpoint_pairs = e ? e * (e - 1) : 0;
  out->endpoint_unreachable = out->unreachable * (uint64_t)n->epl * (uint64_t)n->epl;
}

bool vtf_some_unreachable(const vtf_net *n) {
  if (n->n_fresh) {
    vtf_reach r;
    vtf_reach_all(n, &r);
    return r.unreachable > 0;
  }
  /* With known faults only, xy or yx serves every pair one of whose intermediate leaves is
   * healthy; the others are exactly S = (a,b), D = (c,d) for faults (a,d) and (c,b). */
  int f[VTF_MAX_LEAVES], k = 0;
  for (int l = 0; l < n->leaves; l++)
    if (n->state[l]) f[k++] = l;
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) {
      int a = f[i] / n->cols, d = f[i] % n->cols, c = f[j] / n->cols, b = f[j] % n->cols;
      if (a == c || b == d) continue;
      int s = vtf_leaf(n, a, b), t = vtf_leaf(n, c, d);
      if (vtf_dead(n, s) || vtf_dead(n, t)) continue;
      vtf_path p;
      vtf_route(n, s, t, &p);
      if (p.kind == VTF_UNREACHABLE) return true;
    }
  return false;
}

/* ---- channel dependency graph --------------------------------------------------------------
 * Channel id ((leaf 4 + dir) 2 + cls).  A channel into a switch is followed by a channel out of
 * it to one of its leaves: successor bit (position of that leaf on the switch) 2 + cls.  A
 * channel into a leaf is followed by one up to its row (bit 0 + cls) or column (bit 2 + cls)
 * switch.  So 128 successor bits per channel cover sides up to 64. */

enum { DIR_UP_ROW = 0, DIR_DOWN_ROW = 1, DIR_UP_COL = 2, DIR_DOWN_COL = 3 };

static int channel_of(const vtf_net *n, const vtf_hop *h) {
  int leaf, dir;
  if (h->from < n->leaves) {
    leaf = h->from;
    dir = h->to < n->leaves + n->rows ? DIR_UP_ROW : DIR_UP_COL;
  } else {
    leaf = h->to;
    dir = h->from < n->leaves + n->rows ? DIR_DOWN_ROW : DIR_DOWN_COL;
  }
  return (leaf * 4 + dir) * 2 + h->cls;
}

static int successor_bit(const vtf_net *n, int ch, int next) {
  int dir = (ch / 2) % 4, nleaf = next / 8, ndir = (next / 2) % 4, ncls = next % 2;
  if (dir == DIR_UP_ROW) return (nleaf % n->cols) * 2 + ncls;
  if (dir == DIR_UP_COL) return (nleaf / n->cols) * 2 + ncls;
  return (ndir / 2) * 2 + ncls;
}

static int successor(const vtf_net *n, int ch, int bit) {
  int leaf = ch / 8, dir = (ch / 2) % 4, cls = bit % 2, pos = bit / 2;
  if (dir == DIR_UP_ROW) return (vtf_leaf(n, leaf / n->cols, pos) * 4 + DIR_DOWN_ROW) * 2 + cls;
  if (dir == DIR_UP_COL) return (vtf_leaf(n, pos, leaf % n->cols) * 4 + DIR_DOWN_COL) * 2 + cls;
  return (leaf * 4 + (pos ? DIR_UP_COL : DIR_UP_ROW)) * 2 + cls;
}

void vtf_channel_name(const vtf_net *n, int ch, char *buf, int cap) {
  int leaf = ch / 8, dir = (ch / 2) % 4, cls = ch % 2, r = leaf / n->cols, c = leaf % n->cols;
  static const char *const fmt[4] = {"L(%d,%d)->R%d cls %d", "R%d->L(%d,%d) cls %d",
                                     "L(%d,%d)->C%d cls %d", "C%d->L(%d,%d) cls %d"};
  switch (dir) {
    case DIR_UP_ROW: snprintf(buf, (size_t)cap, fmt[0], r, c, r, cls); break;
    case DIR_DOWN_ROW: snprintf(buf, (size_t)cap, fmt[1], r, r, c, cls); break;
    case DIR_UP_COL: snprintf(buf, (size_t)cap, fmt[2], r, c, c, cls); break;
    default: snprintf(buf, (size_t)cap, fmt[3], c, r, c, cls); break;
  }
}

/* The dependency graph for the cycle search: channel c's edges are its 128 successor bits. */
typedef struct vtf_graph {
  const vtf_net *net;
  const uint64_t *mask; /* 2 words per channel */
} vtf_graph;

static int vtf_next(const void *graph, uint32_t c, int from, uint32_t *to) {
  const vtf_graph *g = graph;
  for (int b = from; b < 128; b++)
    if (g->mask[(size_t)c * 2 + (size_t)(b / 64)] >> (b % 64) & 1) {
      *to = (uint32_t)successor(g->net, (int)c, b);
      return b;
    }
  return -1;
}

int vtf_cdg_check(const vtf_net *n, vtf_cdg *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  const size_t nch = (size_t)n->leaves * 8;
  uint64_t *mask = calloc(nch * 2, sizeof *mask);
  uint8_t *used = calloc(nch, 1);
  if (!mask || !used) {
    free(mask), free(used);
    return cs_err_set(err, CS_ENOMEM, "deadlock check: out of memory for %zu channels", nch);
  }
  for (int s = 0; s < n->leaves; s++)
    for (int d = 0; d < n->leaves; d++) {
      if (s == d || vtf_dead(n, s) || vtf_dead(n, d)) continue;
      vtf_path p;
      vtf_route(n, s, d, &p);
      out->pairs++;
      if (p.kind == VTF_UNREACHABLE) continue;
      int prev = -1;
      for (int i = 0; i < p.n; i++) {
        int ch = channel_of(n, &p.hop[i]);
        used[ch] = 1;
        if (prev >= 0) {
          int b = successor_bit(n, prev, ch);
          mask[(size_t)prev * 2 + (size_t)(b / 64)] |= 1ull << (b % 64);
        }
        prev = ch;
      }
    }
  for (size_t c = 0; c < nch; c++) {
    out->channels_used += used[c];
    out->dependencies += (uint64_t)__builtin_popcountll(mask[c * 2]) + (uint64_t)__builtin_popcountll(mask[c * 2 + 1]);
  }
  uint32_t *cycle;
  size_t len;
  vtf_graph g = {n, mask};
  int rc = cs_cycle_find(nch, vtf_next, &g, &cycle, &len, err);
  out->acyclic = !rc && cycle == NULL;
  out->cycle_len = (int)len;
  for (size_t i = 0; i < len && i < 64; i++) out->cycle[i] = (int)cycle[i];
  free(cycle);
  free(mask), free(used);
  return rc ? cs_err_prefix(err, "deadlock check") : CS_OK;
}

/* ---- shapes of fault sets ------------------------------------------------------------------ */

bool vtf_faults_cover(const vtf_net *n) {
  uint8_t row[VTF_MAX_SIDE] = {0}, col[VTF_MAX_SIDE] = {0};
  for (int l = 0; l < n->leaves; l++)
    if (n->state[l]) row[l / n->cols] = col[l % n->cols] = 1;
  for (int r = 0; r < n->rows; r++)
    if (!row[r]) return false;
  for (int c = 0; c < n->cols; c++)
    if (!col[c]) return false;
  return true;
}

bool vtf_faults_nested(const vtf_net *n) {
  /* every two rows' fault sets are comparable by inclusion */
  for (int a = 0; a < n->rows; a++)
    for (int b = a + 1; b < n->rows; b++) {
      bool a_only = false, b_only = false;
      for (int c = 0; c < n->cols; c++) {
        bool fa = vtf_dead(n, vtf_leaf(n, a, c)), fb = vtf_dead(n, vtf_leaf(n, b, c));
        a_only |= fa && !fb;
        b_only |= fb && !fa;
      }
      if (a_only && b_only) return false;
    }
  return true;
}

/* ---- exact probability ---------------------------------------------------------------------
 * The number of k-cell subsets of an R x C grid hitting every row and column, by a sum of
 * positive terms over rows: f[c][s] = ways for the rows so far to hold s cells covering a given
 * set of c columns, each row non-empty.  A row adds t cells in new columns and u in covered ones. */

static long double binom(int n, int k) {
  if (k < 0 || k > n) return 0;
  long double r = 1;
  for (int i = 1; i <= k; i++) r = r * (long double)(n - k + i) / (long double)i;
  return r;
}

static long double cover_count(int R, int C, int k) {
  long double *f = calloc((size_t)(C + 1) * (size_t)(k + 1), sizeof *f);
  long double *g = calloc((size_t)(C + 1) * (size_t)(k + 1), sizeof *g);
  if (!f || !g) {
    free(f), free(g);
    return NAN;
  }
#define AT(a, c, s) a[(size_t)(c) * (size_t)(k + 1) + (size_t)(s)]
  AT(f, 0, 0) = 1;
  for (int r = 0; r < R; r++) {
    memset(g, 0, (size_t)(C + 1) * (size_t)(k + 1) * sizeof *g);
    for (int c = 0; c <= C; c++)
      for (int s = 0; s <= k; s++) {
        long double v = AT(f, c, s);
        if (v == 0) continue;
        for (int t = 0; t <= C - c; t++)
          for (int u = 0; u <= c && s + t + u <= k; u++) {
            if (t + u == 0) continue;
            /* new columns are a chosen t of the C - c: the final set is labelled at the end */
            AT(g, c + t, s + t + u) += v * binom(C - c, t) * binom(c, u);
          }
      }
    long double *x = f;
    f = g;
    g = x;
  }
  long double res = AT(f, C, k);
#undef AT
  free(f), free(g);
  return res;
}

double vtf_unreach_probability(int R, int C, int k) {
  if (k < 0 || k > R * C) return NAN;
  if (k > R + C - 2) return NAN;
  return (double)(cover_count(R, C, k) / binom(R * C, k));
}

/* ways[i][s]: rows i..R-1 hold s cells, none empty */
static long double *rows_table(int R, int C, int k) {
  long double *w = calloc((size_t)(R + 1) * (size_t)(k + 1), sizeof *w);
  if (!w) return NULL;
  w[(size_t)R * (size_t)(k + 1)] = 1;
  for (int i = R - 1; i >= 0; i--)
    for (int s = 0; s <= k; s++) {
      long double v = 0;
      for (int j = 1; j <= C && j <= s; j++) v += binom(C, j) * w[(size_t)(i + 1) * (size_t)(k + 1) + (size_t)(s - j)];
      w[(size_t)i * (size_t)(k + 1) + (size_t)s] = v;
    }
  return w;
}

double vtf_rows_covered_probability(int R, int C, int k) {
  long double *w = rows_table(R, C, k);
  if (!w) return NAN;
  double p = (double)(w[k] / binom(R * C, k));
  free(w);
  return p;
}

/* ---- Monte Carlo ---------------------------------------------------------------------------- */

static void wilson(vtf_mc *m) {
  const double z = 1.959963984540054, n = (double)m->trials, ph = n ? (double)m->hits / n : 0;
  double den = 1 + z * z / n, mid = (ph + z * z / (2 * n)) / den;
  double half = z * sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den;
  m->p = ph * m->factor;
  m->lo = m->hits && mid - half > 0 ? (mid - half) * m->factor : 0;
  m->hi = (mid + half) * m->factor;
}

static int mc_setup(int R, int C, int k, uint64_t trials, vtf_net *net, cs_err *err) {
  char topo[48];
  snprintf(topo, sizeof topo, "fattree2d:%dx%d", R, C);
  int rc = vtf_parse(topo, 1, net, err);
  if (rc) return rc;
  if (k < 0 || k > R * C) return cs_err_set(err, CS_EINVAL, "fault count %d outside [0, %d]", k, R * C);
  if (trials == 0) return cs_err_set(err, CS_EINVAL, "trials must be positive");
  return CS_OK;
}

static bool trial_outcome(vtf_net *net, const int *cells, int k) {
  for (int i = 0; i < k; i++) net->state[cells[i]] = VTF_KNOWN;
  vtf_rebuild(net);
  bool bad = vtf_some_unreachable(net);
  for (int i = 0; i < k; i++) net->state[cells[i]] = VTF_HEALTHY;
  return bad;
}

int vtf_mc_plain(int R, int C, int k, uint64_t trials, uint64_t seed, vtf_mc *out, cs_err *err) {
  vtf_net net;
  int rc = mc_setup(R, C, k, trials, &net, err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  out->factor = 1;
  int perm[VTF_MAX_LEAVES];
  for (int i = 0; i < net.leaves; i++) perm[i] = i;
  uint64_t s = seed;
  for (uint64_t t = 0; t < trials; t++) {
    /* the first k of a partial Fisher-Yates shuffle: a uniform k-subset */
    for (int i = 0; i < k; i++) {
      int j = i + (int)(vtf_rand(&s) % (uint64_t)(net.leaves - i));
      int x = perm[i];
      perm[i] = perm[j];
      perm[j] = x;
    }
    out->hits += trial_outcome(&net, perm, k);
    out->trials++;
  }
  wilson(out);
  return CS_OK;
}

int vtf_mc_rows_covered(int R, int C, int k, uint64_t trials, uint64_t seed, vtf_mc *out, cs_err *err) {
  vtf_net net;
  int rc = mc_setup(R, C, k, trials, &net, err);
  if (rc) return rc;
  if (k < R) return cs_err_set(err, CS_EINVAL, "%d faults cannot hit all %d rows", k, R);
  long double *w = rows_table(R, C, k);
  if (!w) return cs_err_set(err, CS_ENOMEM, "Monte Carlo: out of memory");
  memset(out, 0, sizeof *out);
  out->factor = (double)(w[k] / binom(R * C, k));
  uint64_t s = seed;
  int cells[VTF_MAX_LEAVES], perm[VTF_MAX_SIDE];
  for (uint64_t t = 0; t < trials; t++) {
    int left = k, n = 0;
    for (int r = 0; r < R; r++) {
      /* row r holds j cells with probability C(C,j) ways[r+1][left-j] / ways[r][left] */
      long double u = (long double)(vtf_rand(&s) >> 11) * 0x1p-53L * w[(size_t)r * (size_t)(k + 1) + (size_t)left];
      int j = 0, last = 1;
      for (int x = 1; x <= C && x <= left && !j; x++) {
        long double v = binom(C, x) * w[(size_t)(r + 1) * (size_t)(k + 1) + (size_t)(left - x)];
        if (v > 0) last = x;
        if (u < v) j = x;
        u -= v;
      }
      if (!j) j = last; /* rounding left u past the end */
      for (int c = 0; c < C; c++) perm[c] = c;
      for (int i = 0; i < j; i++) {
        int x = i + (int)(vtf_rand(&s) % (uint64_t)(C - i)), y = perm[i];
        perm[i] = perm[x];
        perm[x] = y;
        cells[n++] = r * C + perm[i];
      }
      left -= j;
    }
    out->hits += trial_outcome(&net, cells, k);
    out->trials++;
  }
  free(w);
  wilson(out);
  return CS_OK;
}

double vtf_path_latency_ns(const vtf_path *p, double switch_ns, double link_ns, double endpoint_ns) {
  return (double)(p->n + 1) * switch_ns + (double)p->n * link_ns + 2 * endpoint_ns;
}
