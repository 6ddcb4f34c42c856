/* The 2-D fat tree, its fault sets and candidate tables, and the routes of VTFTR and algorithm A
 * (docs/vtftr.md).
 *
 * Invariant of VTFTR: within one VC class every route turns only from a row leg into a column
 * leg; the one column->row turn a fault-tolerant route may need is where it moves from class 0
 * to class 1, and it never moves back.  That is what makes the channel dependency graph acyclic
 * (vtf_cdg_check verifies it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fattree.h"

static const char *const algo_names[VTF_ALGOS] = {"vtftr", "vtftr_novc", "alg_a", "xy"};
static const char *const case_names[VTF_CASES] = {"local", "xy", "yx", "misroute-3",
                                                  "misroute-4", "detour", "unreachable"};

const char *vtf_algo_name(vtf_algo a) { return a < VTF_ALGOS ? algo_names[a] : "?"; }
const char *vtf_case_name(vtf_case k) { return k < VTF_CASES ? case_names[k] : "?"; }

int vtf_algo_parse(const char *name, vtf_algo *out, cs_err *err) {
  for (int i = 0; i < VTF_ALGOS; i++)
    if (strcmp(name, algo_names[i]) == 0) {
      *out = (vtf_algo)i;
      return CS_OK;
    }
  return cs_err_set(err, CS_EINVAL, "fat-tree routing '%s' unknown; valid: vtftr, vtftr_novc, alg_a, xy",
                    name);
}

bool vtf_is_fattree(const char *topology) { return strncmp(topology, "fattree2d:", 10) == 0; }

int vtf_parse(const char *text, int epl, vtf_net *net, cs_err *err) {
  if (!vtf_is_fattree(text))
    return cs_err_set(err, CS_EINVAL, "topology '%s': expected \"fattree2d:RxC\"", text);
  char *end;
  long r = strtol(text + 10, &end, 10), c = -1;
  if (*end == 'x') c = strtol(end + 1, &end, 10);
  if (*end || r < 2 || r > VTF_MAX_SIDE || c < 2 || c > VTF_MAX_SIDE)
    return cs_err_set(err, CS_EINVAL,
                      "topology '%s': expected \"fattree2d:RxC\" with R and C in [2, %d]", text,
                      VTF_MAX_SIDE);
  if (epl < 1 || epl > 64)
    return cs_err_set(err, CS_EINVAL, "endpoints per leaf %d must be in [1, 64]", epl);
  memset(net, 0, sizeof *net);
  net->rows = (int)r;
  net->cols = (int)c;
  net->epl = epl;
  net->leaves = net->rows * net->cols;
  net->algo = VTF_VTFTR;
  return CS_OK;
}

void vtf_rebuild(vtf_net *n) {
  memset(n->col_masked, 0, sizeof n->col_masked);
  memset(n->row_masked, 0, sizeof n->row_masked);
  n->n_known = n->n_fresh = 0;
  for (int l = 0; l < n->leaves; l++) {
    if (n->state[l] == VTF_KNOWN) {
      n->row_masked[l / n->cols] = n->col_masked[l % n->cols] = 1;
      n->n_known++;
    } else if (n->state[l] == VTF_FRESH) {
      n->n_fresh++;
    }
  }
}

void vtf_clear(vtf_net *n) {
  memset(n->state, 0, sizeof n->state);
  vtf_rebuild(n);
}

void vtf_set_leaf(vtf_net *n, int r, int c, vtf_leaf_state s) {
  n->state[vtf_leaf(n, r, c)] = (uint8_t)s;
  vtf_rebuild(n);
}

int vtf_faults_parse(vtf_net *n, const char *text, cs_err *err) {
  const char *p = text;
  while (*p) {
    while (*p == ' ' || *p == ';') p++;
    if (!*p) break;
    vtf_leaf_state s = VTF_KNOWN;
    if (*p == '!') s = VTF_FRESH, p++;
    char *end;
    long r = strtol(p, &end, 10), c = -1;
    if (end == p || *end != ',')
      return cs_err_set(err, CS_EINVAL, "faults '%s': expected \"r,c;r,c\" (\"!r,c\" for a fresh fault)", text);
    p = end + 1;
    c = strtol(p, &end, 10);
    if (end == p || (*end && *end != ';' && *end != ' '))
      return cs_err_set(err, CS_EINVAL, "faults '%s': expected \"r,c;r,c\" (\"!r,c\" for a fresh fault)", text);
    if (r < 0 || r >= n->rows || c < 0 || c >= n->cols)
      return cs_err_set(err, CS_EINVAL, "faults '%s': leaf (%ld,%ld) outside the %dx%d tree", text, r,
                        c, n->rows, n->cols);
    n->state[vtf_leaf(n, (int)r, (int)c)] = (uint8_t)s;
    p = end;
  }
  vtf_rebuild(n);
  return CS_OK;
}

int vtf_faults_random(vtf_net *n, int count, uint64_t seed, cs_err *err) {
  int healthy = 0;
  for (int l = 0; l < n->leaves; l++) healthy += n->state[l] == VTF_HEALTHY;
  if (count < 0 || count > healthy)
    return cs_err_set(err, CS_EINVAL, "random faults: count %d outside [0, %d] (healthy leaves)", count,
                      healthy);
  uint64_t s = seed;
  for (int k = 0; k < count;) {
    int l = (int)(vtf_rand(&s) % (uint64_t)n->leaves);
    if (n->state[l] != VTF_HEALTHY) continue;
    n->state[l] = VTF_KNOWN;
    k++;
  }
  vtf_rebuild(n);
  return CS_OK;
}

int vtf_row_candidates(const vtf_net *n, int col, int *out) {
  int k = 0;
  for (int c = 0; c < n->cols; c++)
    if (c != col && !n->col_masked[c]) out[k++] = c;
  return k;
}

int vtf_col_candidates(const vtf_net *n, int row, int *out) {
  int k = 0;
  for (int r = 0; r < n->rows; r++)
    if (r != row && !n->row_masked[r]) out[k++] = r;
  return k;
}

void vtf_node_name(const vtf_net *n, int node, char *buf, int cap) {
  if (node < n->leaves) snprintf(buf, (size_t)cap, "L(%d,%d)", node / n->cols, node % n->cols);
  else if (node < n->leaves + n->rows) snprintf(buf, (size_t)cap, "R%d", node - n->leaves);
  else snprintf(buf, (size_t)cap, "C%d", node - n->leaves - n->rows);
}

/* ---- routes ------------------------------------------------------------------------------ */

typedef struct walk {
  const vtf_net *n;
  vtf_path *p;
  int leaf;      /* where the packet is */
  int src, dst;  /* leaves */
} walk;

static void hop(walk *w, int from, int to, int cls) {
  vtf_path *p = w->p;
  if (p->n && p->hop[p->n - 1].cls != cls) p->vc_switches++;
  p->hop[p->n++] = (vtf_hop){(int16_t)from, (int16_t)to, (uint8_t)cls};
}

/* A leg through the row switch (row) or column switch to leaf `to`; the class is forced to 0
 * when the routing has no fault-tolerant class. */
static void leg(walk *w, bool row, int to, int cls) {
  const vtf_net *n = w->n;
  if (n->algo == VTF_VTFTR_NOVC || n->algo == VTF_ALG_A) cls = 0;
  int sw = row ? vtf_row_switch(n, w->leaf / n->cols) : vtf_col_switch(n, w->leaf % n->cols);
  hop(w, w->leaf, sw, cls);
  hop(w, sw, to, cls);
  size_t k = strlen(w->p->legs);
  w->p->legs[k] = row ? 'R' : 'C';
  w->p->legs[k + 1] = '\0';
  w->leaf = to;
}

static void fail(walk *w, int dead_leaf) {
  w->p->kind = VTF_UNREACHABLE;
  w->p->dead_leaf = dead_leaf;
}

/* Spreads misroutes of different pairs over the candidates ("random" in the paper), the same
 * choice every time for one pair. */
static uint64_t pair_hash(int src, int dst) {
  uint64_t s = (uint64_t)src << 32 | (uint32_t)dst;
  return vtf_rand(&s);
}

/* The column switch of the packet's column misroutes it to a candidate row (not its own, not the
 * destination's, holding no known fault, live on this column), then XY on class 1.
 * kind: the case to report when it arrives. */
static void column_misroute(walk *w, vtf_case kind) {
  const vtf_net *n = w->n;
  int here_r = w->leaf / n->cols, c = w->leaf % n->cols;
  int dr = w->dst / n->cols, dc = w->dst % n->cols;
  int cand[VTF_MAX_SIDE], k = vtf_col_candidates(n, dr, cand), pick = -1;
  uint64_t h = pair_hash(w->src, w->dst);
  for (int i = 0; i < k && pick < 0; i++) {
    int r = cand[(h + (uint64_t)i) % (uint64_t)k];
    if (r != here_r && !vtf_dead(n, vtf_leaf(n, r, c))) pick = r;
  }
  if (pick < 0) {
    fail(w, -1);
    return;
  }
  leg(w, false, vtf_leaf(n, pick, c), 0);
  int turn = vtf_leaf(n, pick, dc);
  if (vtf_dead(n, turn)) {
    fail(w, turn);
    return;
  }
  leg(w, true, turn, 1);
  leg(w, false, w->dst, 1);
  w->p->kind = kind;
}

/* The source's row switch finds the XY intermediate dead (or the tables say so): it sends the
 * packet to a candidate column, whose column switch takes it to the destination row, where it
 * turns (class 1) to the destination.  A fresh fault on that column ends in a column misroute. */
static void row_misroute(walk *w) {
  const vtf_net *n = w->n;
  int sr = w->src / n->cols, sc = w->src % n->cols;
  int dr = w->dst / n->cols, dc = w->dst % n->cols;
  int cand[VTF_MAX_SIDE], k = vtf_row_candidates(n, dc, cand), pick = -1;
  uint64_t h = pair_hash(w->src, w->dst);
  for (int i = 0; i < k && pick < 0; i++) {
    int c = cand[(h + (uint64_t)i) % (uint64_t)k];
    if (c != sc && !vtf_dead(n, vtf_leaf(n, sr, c))) pick = c;
  }
  if (pick < 0) {
    fail(w, -1);
    return;
  }
  leg(w, true, vtf_leaf(n, sr, pick), 0);
  int down = vtf_leaf(n, dr, pick);
  if (vtf_dead(n, down)) {
    column_misroute(w, VTF_MISROUTE_4);
    return;
  }
  leg(w, false, down, 0);
  leg(w, true, w->dst, 1);
  w->p->kind = VTF_MISROUTE_3;
}

static void route_vtftr(walk *w) {
  const vtf_net *n = w->n;
  int sr = w->src / n->cols, sc = w->src % n->cols;
  int dr = w->dst / n->cols, dc = w->dst % n->cols;
  int ixy = vtf_leaf(n, sr, dc), iyx = vtf_leaf(n, dr, sc);
  /* the source's tables know the known faults only */
  if (n->state[ixy] != VTF_KNOWN) {
    if (vtf_dead(n, ixy)) { /* fresh: the row switch finds it */
      row_misroute(w);
      return;
    }
    leg(w, true, ixy, 0);
    leg(w, false, w->dst, 0);
    w->p->kind = VTF_XY;
  } else if (n->state[iyx] != VTF_KNOWN) {
    if (vtf_dead(n, iyx)) { /* fresh: the column switch finds it */
      column_misroute(w, VTF_MISROUTE_3);
      return;
    }
    leg(w, false, iyx, 0);
    leg(w, true, w->dst, 1);
    w->p->kind = VTF_YX;
  } else {
    int cand[VTF_MAX_SIDE];
    if (vtf_row_candidates(n, dc, cand) > 0) row_misroute(w);
    else column_misroute(w, VTF_MISROUTE_3);
  }
}

/* Algorithm A: around a dead XY intermediate (rs,cd) by a fixed detour through the next column
 * and the next row: (rs,cd+1) -> (rs+1,cd+1) -> (rs+1,cd) -> down column cd.  Four links more
 * than XY; one class; a dead leaf on the detour ends the route. */
static void route_alg_a(walk *w) {
  const vtf_net *n = w->n;
  int sr = w->src / n->cols, dc = w->dst % n->cols;
  int ixy = vtf_leaf(n, sr, dc);
  if (!vtf_dead(n, ixy)) {
    leg(w, true, ixy, 0);
    leg(w, false, w->dst, 0);
    w->p->kind = VTF_XY;
    return;
  }
  int c1 = (dc + 1) % n->cols, r1 = (sr + 1) % n->rows;
  int steps[3] = {vtf_leaf(n, sr, c1), vtf_leaf(n, r1, c1), vtf_leaf(n, r1, dc)};
  bool rows_leg[3] = {true, false, true};
  for (int i = 0; i < 3; i++) {
    if (steps[i] == w->leaf) continue; /* the detour column is the source's own */
    if (vtf_dead(n, steps[i])) {
      fail(w, steps[i]);
      return;
    }
    leg(w, rows_leg[i], steps[i], 0);
  }
  if (w->leaf != w->dst) leg(w, false, w->dst, 0);
  w->p->kind = VTF_DETOUR;
}

void vtf_route(const vtf_net *n, int src, int dst, vtf_path *out) {
  memset(out, 0, sizeof *out);
  out->dead_leaf = -1;
  walk w = {n, out, src, src, dst};
  if (vtf_dead(n, src)) {
    fail(&w, src);
    return;
  }
  if (vtf_dead(n, dst)) {
    fail(&w, dst);
    return;
  }
  if (src == dst) {
    out->kind = VTF_LOCAL;
    return;
  }
  int sr = src / n->cols, sc = src % n->cols, dr = dst / n->cols, dc = dst % n->cols;
  if (sr == dr || sc == dc) {
    leg(&w, sr == dr, dst, 0);
    out->kind = VTF_XY;
    return;
  }
  switch (n->algo) {
    case VTF_VTFTR:
    case VTF_VTFTR_NOVC: route_vtftr(&w); break;
    case VTF_ALG_A: route_alg_a(&w); break;
    default: {
      int ixy = vtf_leaf(n, sr, dc);
      if (vtf_dead(n, ixy)) {
        fail(&w, ixy);
        return;
      }
      leg(&w, true, ixy, 0);
      leg(&w, false, dst, 0);
      out->kind = VTF_XY;
    }
  }
}
