/* The 2-D fat tree of leaf switches and its routing (docs/vtftr.md): R x C leaves, leaf (r,c)
 * wired to row switch r and column switch c, P endpoints per leaf.  Routing is XY (row switch
 * first) when nothing is broken, VTFTR around faulty leaves (yx, misroutes through candidate
 * columns/rows, one switch to the fault-tolerant VC class at the column->row turn), or the
 * paper's baseline "algorithm A" (fixed detour, no VC switch).
 *
 * Node numbering: leaf (r,c) is r C + c; row switch r is R C + r; column switch c is R C + R + c.
 * A route is computed whole at its source (vtf_route) but decided the way the switches would
 * decide hop by hop: a switch sees a dead leaf on its own port at once (fresh faults), while
 * the candidate tables only know the faults they were rebuilt for (known faults).
 */
#ifndef CS_VCNET_FATTREE_H
#define CS_VCNET_FATTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "commsweep/err.h"

#define VTF_MAX_SIDE 64
#define VTF_MAX_LEAVES (VTF_MAX_SIDE * VTF_MAX_SIDE)
#define VTF_MAX_HOPS 12

typedef enum { VTF_HEALTHY = 0, VTF_KNOWN = 1, VTF_FRESH = 2 } vtf_leaf_state;

typedef enum { VTF_VTFTR = 0, VTF_VTFTR_NOVC, VTF_ALG_A, VTF_XY_ONLY, VTF_ALGOS } vtf_algo;

/* The case of a route, named as `commsweep route` prints it.  The number in misroute-N is the
 * count of row/column legs, the paper's "2, 3 or 4 row/column routings" (yx is its 2). */
typedef enum {
  VTF_LOCAL = 0,   /* source and destination on one leaf */
  VTF_XY,          /* row leg then column leg (or one leg when a coordinate agrees) */
  VTF_YX,          /* column leg then row leg: the XY intermediate leaf is faulty */
  VTF_MISROUTE_3,  /* row-col-row through a candidate column, or col-row-col through a
                      candidate row */
  VTF_MISROUTE_4,  /* row-col-row-col: a fresh fault met on the misroute's column leg */
  VTF_DETOUR,      /* algorithm A's fixed detour */
  VTF_UNREACHABLE, /* no route: a leaf on the way is dead, or no candidate is left */
  VTF_CASES
} vtf_case;

/* A fat tree with its fault set and the candidate tables built from the known faults.  Plain
 * data (no pointers): copy it, change a fault, call vtf_rebuild. */
typedef struct vtf_net {
  int rows, cols;       /* leaves per column (R) and per row (C), 2..VTF_MAX_SIDE */
  int epl;              /* endpoints per leaf */
  int leaves;           /* R C */
  vtf_algo algo;
  uint8_t state[VTF_MAX_LEAVES];     /* vtf_leaf_state per leaf */
  /* candidate tables, rebuilt from the known faults (vtf_rebuild) */
  uint8_t col_masked[VTF_MAX_SIDE];  /* column holds a known fault: no row switch misroutes there */
  uint8_t row_masked[VTF_MAX_SIDE];  /* row holds a known fault: no column switch misroutes there */
  int n_known, n_fresh;
} vtf_net;

typedef struct vtf_hop {
  int16_t from, to;  /* node ids (see the numbering above) */
  uint8_t cls;       /* VC class: 0 fault-free, 1 fault-tolerant */
} vtf_hop;

typedef struct vtf_path {
  vtf_case kind;
  int n;                       /* switch-to-switch links */
  vtf_hop hop[VTF_MAX_HOPS];
  char legs[8];                /* "RC", "CR", "RCR", ...: row (R) and column (C) legs */
  int vc_switches;             /* changes of VC class along the way */
  int dead_leaf;               /* unreachable: the dead leaf met, or -1 (no candidate left) */
} vtf_path;

/* "fattree2d:16x16" (rows x columns of leaves); on success *net is fault-free, routed by VTFTR. */
int vtf_parse(const char *text, int epl, vtf_net *net, cs_err *err);
bool vtf_is_fattree(const char *topology);
/* "vtftr" | "vtftr_novc" | "alg_a" | "xy" */
int vtf_algo_parse(const char *name, vtf_algo *out, cs_err *err);
const char *vtf_algo_name(vtf_algo a);
const char *vtf_case_name(vtf_case k);

/* Faults: "r,c;r,c" (known) with an optional "!" before a leaf for a fresh one ("!r,c": failed
 * after the tables were last rebuilt).  Adds to the set; rebuilds the tables. */
int vtf_faults_parse(vtf_net *net, const char *text, cs_err *err);
/* Marks `count` distinct random healthy leaves as known faults, drawn from `seed`. */
int vtf_faults_random(vtf_net *net, int count, uint64_t seed, cs_err *err);
/* Sets one leaf's state and rebuilds the tables. */
void vtf_set_leaf(vtf_net *net, int r, int c, vtf_leaf_state s);
/* Recomputes the masks and counts from state[]. */
void vtf_rebuild(vtf_net *net);
/* Clears every fault. */
void vtf_clear(vtf_net *net);

/* The candidate table entry of every row switch for destination column `col`: the columns a
 * misroute may use (ascending), i.e. every column but `col` that holds no known fault.  Returns
 * the count.  Column switches likewise for destination row `row`. */
int vtf_row_candidates(const vtf_net *net, int col, int *out);
int vtf_col_candidates(const vtf_net *net, int row, int *out);

/* The route between two leaves as the switches would take it.  A dead source or destination
 * leaf gives VTF_UNREACHABLE with dead_leaf set. */
void vtf_route(const vtf_net *net, int src_leaf, int dst_leaf, vtf_path *out);

static inline int vtf_leaf(const vtf_net *n, int r, int c) { return r * n->cols + c; }
static inline int vtf_row_switch(const vtf_net *n, int r) { return n->leaves + r; }
static inline int vtf_col_switch(const vtf_net *n, int c) { return n->leaves + n->rows + c; }
static inline bool vtf_dead(const vtf_net *n, int leaf) { return n->state[leaf] != VTF_HEALTHY; }
/* "L(2,3)", "R2", "C3" */
void vtf_node_name(const vtf_net *n, int node, char *buf, int cap);

/* ---- analysis (vtftr_analysis.c) ----------------------------------------------------------- */

typedef struct vtf_reach {
  uint64_t leaf_pairs;            /* ordered pairs of distinct healthy leaves */
  uint64_t unreachable;           /* of them, without a route */
  uint64_t by_case[VTF_CASES];    /* leaf pairs per route case */
  uint64_t by_links[VTF_MAX_HOPS + 1]; /* routed leaf pairs per switch-to-switch link count */
  uint64_t vc1_pairs;             /* routes that use the fault-tolerant class */
  int max_vc_switches;
  uint64_t endpoint_pairs, endpoint_unreachable; /* the same over endpoints (epl per leaf) */
  int first_src, first_dst;       /* one unreachable pair, or -1 */
} vtf_reach;

/* Routes every ordered pair of distinct healthy leaves. */
void vtf_reach_all(const vtf_net *net, vtf_reach *out);
/* True when some healthy pair has no route, checking only the pairs that can lack one with no
 * fresh fault present: both intermediate leaves faulty.  Same verdict as vtf_reach_all then. */
bool vtf_some_unreachable(const vtf_net *net);

/* The channel dependency graph of the routing over every healthy leaf pair: a channel is a
 * directed switch-to-switch link with a VC class. */
typedef struct vtf_cdg {
  bool acyclic;
  uint64_t channels_used, dependencies, pairs;
  int cycle_len;
  int cycle[64];        /* channel ids: ((leaf 4 + dir) 2 + cls), dir 0 leaf->row, 1 row->leaf,
                           2 leaf->col, 3 col->leaf; the first 64 of a longer cycle */
} vtf_cdg;
int vtf_cdg_check(const vtf_net *net, vtf_cdg *out, cs_err *err);
/* "L(1,2)->R1 cls 0" */
void vtf_channel_name(const vtf_net *n, int ch, char *buf, int cap);

/* Faults covering every row and every column. */
bool vtf_faults_cover(const vtf_net *net);
/* Faults whose row neighbourhoods are nested (a chain graph): covering sets of this shape leave
 * every pair reachable. */
bool vtf_faults_nested(const vtf_net *net);

/* Exact probability that k leaf faults drawn uniformly (without replacement) leave some healthy
 * pair unreachable under VTFTR with every fault known: N_cover(k) / C(RC, k), valid for
 * k <= R + C - 2 (docs/vtftr.md); NAN beyond. */
double vtf_unreach_probability(int rows, int cols, int k);
/* Probability that k uniform faults hit every row (the conditioning of vtf_mc_rows_covered). */
double vtf_rows_covered_probability(int rows, int cols, int k);

typedef struct vtf_mc {
  uint64_t trials, hits;
  double p, lo, hi;     /* estimate and 95% Wilson interval, scaled by the conditioning factor */
  double factor;        /* probability of the conditioning event (1 for plain sampling) */
} vtf_mc;
/* Plain Monte Carlo: uniform k-subsets, VTFTR routes checked by vtf_some_unreachable. */
int vtf_mc_plain(int rows, int cols, int k, uint64_t trials, uint64_t seed, vtf_mc *out, cs_err *err);
/* Conditional Monte Carlo: k-subsets drawn uniformly among those hitting every row; the
 * estimate is P(rows hit) x the hit fraction. */
int vtf_mc_rows_covered(int rows, int cols, int k, uint64_t trials, uint64_t seed, vtf_mc *out,
                        cs_err *err);

/* Zero-load latency in ns of a route: switches x switch_ns + links x link_ns + 2 endpoint_ns. */
double vtf_path_latency_ns(const vtf_path *p, double switch_ns, double link_ns, double endpoint_ns);

/* Deterministic generator shared by the fault draws and the Monte Carlo. */
static inline uint64_t vtf_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL); /* splitmix64 */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

#endif
