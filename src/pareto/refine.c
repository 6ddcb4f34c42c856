/* The decisions of a multi-fidelity refinement, workload by workload: which points could still
 * be on the expensive rung's front given the cheap rung's error band (the rest are certainly
 * dominated), the band observed so far, both fronts, and the margin that certifies the result.
 * Pure functions of the points: a refinement that reads the same rows decides the same. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/pareto.h"

/* Points grouped by workload: order[start[w] .. start[w + 1]) are workload w's, in index order. */
typedef struct by_workload {
  size_t count; /* workloads */
  size_t *order, *start;
} by_workload;

static int group(const cs_pareto_rpoint *pts, size_t n, by_workload *g) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++)
    if (pts[i].workload + 1 > w) w = pts[i].workload + 1;
  g->count = w;
  g->order = malloc((n ? n : 1) * sizeof *g->order);
  g->start = calloc(w + 2, sizeof *g->start);
  if (!g->order || !g->start) {
    free(g->order);
    free(g->start);
    return CS_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) g->start[pts[i].workload + 2]++;
  for (size_t k = 2; k < w + 2; k++) g->start[k] += g->start[k - 1];
  for (size_t i = 0; i < n; i++) g->order[g->start[pts[i].workload + 1]++] = i;
  return CS_OK; /* start[w] .. start[w + 1] now bound workload w */
}

static void ungroup(by_workload *g) {
  free(g->order);
  free(g->start);
}

static bool exact_done(const cs_pareto_rpoint *p) { return p->run && p->exact == CS_PARETO_ROW_DONE; }

/* Point p's interval of objective k in minimisation form. */
static void interval(const cs_pareto_spec *s, const cs_pareto_rpoint *p, size_t k, double band,
                     double *lo, double *hi) {
  double sign = s->maximize[k] ? -1 : 1;
  if (exact_done(p) || !s->objective[k].measured) {
    *lo = *hi = sign * (exact_done(p) ? p->exact_v[k] : p->cheap_v[k]);
    return;
  }
  if (p->cheap != CS_PARETO_ROW_DONE || isnan(p->cheap_v[k]) || !(band >= 0) || isinf(band)) {
    *lo = -INFINITY;
    *hi = INFINITY;
    return;
  }
  double u = sign * p->cheap_v[k];
  *lo = u - band * fabs(u);
  *hi = u + band * fabs(u);
}

void cs_pareto_refine_observed(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               double *observed) {
  for (int p = 0; p < CS_PRIM_COUNT; p++) observed[p] = -1;
  for (size_t i = 0; i < n; i++) {
    const cs_pareto_rpoint *p = &pts[i];
    if (!p->in_study || !exact_done(p) || p->cheap != CS_PARETO_ROW_DONE) continue;
    double worst = 0;
    for (size_t k = 0; k < s->num_objectives; k++) {
      if (!s->objective[k].measured) continue;
      double c = p->cheap_v[k], e = p->exact_v[k];
      double err = c == e ? 0 : c == 0 ? INFINITY : fabs(e - c) / fabs(c);
      if (err > worst) worst = err;
    }
    if (p->primitive >= 0 && p->primitive < CS_PRIM_COUNT && worst > observed[p->primitive])
      observed[p->primitive] = worst;
  }
}

size_t cs_pareto_refine_select(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               const double *band, uint8_t *select, uint32_t *priority) {
  size_t m = s->num_objectives, chosen = 0;
  memset(select, 0, n);
  if (priority) memset(priority, 0, n * sizeof *priority);
  by_workload g = {0, NULL, NULL};
  double *lo = malloc((n ? n : 1) * m * sizeof *lo), *hi = malloc((n ? n : 1) * m * sizeof *hi);
  double *cv = malloc((n ? n : 1) * m * sizeof *cv);
  uint8_t *usable = malloc(n ? n : 1), *certain = malloc(n ? n : 1);
  uint32_t *layer = malloc((n ? n : 1) * sizeof *layer);
  size_t *known = malloc((n ? n : 1) * sizeof *known);
  bool ok = lo && hi && cv && usable && certain && layer && known && !group(pts, n, &g);
  for (size_t w = 0; ok && w < g.count; w++) {
    size_t first = g.start[w], count = g.start[w + 1] - first, nk = 0;
    for (size_t a = 0; a < count; a++) {
      const cs_pareto_rpoint *p = &pts[g.order[first + a]];
      double b = p->primitive >= 0 && p->primitive < CS_PRIM_COUNT ? band[p->primitive] : -1;
      for (size_t k = 0; k < m; k++) interval(s, p, k, b, &lo[a * m + k], &hi[a * m + k]);
      usable[a] = p->in_study && !(p->run && p->exact == CS_PARETO_ROW_FAILED);
      if (priority && p->in_study && p->cheap == CS_PARETO_ROW_DONE) { /* the cheap values */
        for (size_t k = 0; k < m; k++)
          cv[nk * m + k] = (s->maximize[k] ? -1 : 1) * p->cheap_v[k];
        known[nk++] = a;
      }
    }
    cs_pareto_certainly_dominated(lo, hi, count, m, usable, certain);
    for (size_t a = 0; a < count; a++) {
      size_t i = g.order[first + a];
      if (pts[i].in_study && !pts[i].run && !certain[a]) {
        select[i] = 1;
        chosen++;
      }
    }
    if (!priority) continue;
    cs_pareto_layers(cv, nk, m, layer);
    for (size_t a = 0; a < nk; a++) priority[g.order[first + known[a]]] = layer[a];
  }
  if (ok) ungroup(&g);
  free(lo);
  free(hi);
  free(cv);
  free(usable);
  free(certain);
  free(layer);
  free(known);
  if (!ok) { /* out of memory: select every point not run, so nothing is missed */
    chosen = 0;
    for (size_t i = 0; i < n; i++) {
      select[i] = pts[i].in_study && !pts[i].run;
      chosen += select[i];
    }
  }
  return chosen;
}

void cs_pareto_refine_fronts(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                             uint8_t *exact, uint8_t *cheap) {
  size_t m = s->num_objectives;
  by_workload g;
  double *v = malloc((n ? n : 1) * m * sizeof *v);
  size_t *at = malloc((n ? n : 1) * sizeof *at);
  uint8_t *front = malloc(n ? n : 1);
  if (exact) memset(exact, 0, n);
  if (cheap) memset(cheap, 0, n);
  if (v && at && front && !group(pts, n, &g)) {
    for (int rung = 0; rung < 2; rung++) {
      uint8_t *out = rung ? cheap : exact;
      for (size_t w = 0; out && w < g.count; w++) {
        size_t k = 0;
        for (size_t a = g.start[w]; a < g.start[w + 1]; a++) {
          const cs_pareto_rpoint *p = &pts[g.order[a]];
          bool has = p->in_study && (rung ? p->cheap == CS_PARETO_ROW_DONE : exact_done(p));
          if (!has) continue;
          for (size_t j = 0; j < m; j++)
            v[k * m + j] = (s->maximize[j] ? -1 : 1) * (rung ? p->cheap_v[j] : p->exact_v[j]);
          at[k++] = g.order[a];
        }
        cs_pareto_front(v, k, m, front);
        for (size_t a = 0; a < k; a++) out[at[a]] = front[a];
      }
    }
    ungroup(&g);
  }
  free(v);
  free(at);
  free(front);
}

/* The largest error of q's cheap measured values under which validated point p still
 * dominates q (-inf when p does not dominate q at any error). */
static double margin_of(const cs_pareto_spec *s, const cs_pareto_rpoint *q,
                        const cs_pareto_rpoint *p) {
  double b = INFINITY;
  bool strict = false;
  for (size_t k = 0; k < s->num_objectives; k++) {
    double sign = s->maximize[k] ? -1 : 1, e = sign * p->exact_v[k];
    if (!s->objective[k].measured) {
      double u = sign * q->cheap_v[k];
      if (e > u) return -INFINITY;
      strict |= e < u;
      continue;
    }
    double u = sign * q->cheap_v[k];
    double room = u == 0 ? (e <= 0 ? INFINITY : -INFINITY) : (u - e) / fabs(u);
    if (room < 0) return -INFINITY;
    if (room > 0) strict = true;
    if (room < b) b = room;
  }
  return strict ? b : -INFINITY;
}

double cs_pareto_refine_margin(const cs_pareto_spec *s, const cs_pareto_rpoint *pts, size_t n,
                               double *margin) {
  for (int p = 0; p < CS_PRIM_COUNT; p++) margin[p] = INFINITY;
  double all = INFINITY;
  by_workload g;
  if (group(pts, n, &g)) return -INFINITY;
  for (size_t w = 0; w < g.count; w++)
    for (size_t a = g.start[w]; a < g.start[w + 1]; a++) {
      const cs_pareto_rpoint *q = &pts[g.order[a]];
      if (!q->in_study || q->run || q->cheap != CS_PARETO_ROW_DONE) continue;
      double best = -INFINITY;
      for (size_t c = g.start[w]; c < g.start[w + 1]; c++) {
        const cs_pareto_rpoint *p = &pts[g.order[c]];
        if (p != q && p->in_study && exact_done(p)) {
          double b = margin_of(s, q, p);
          if (b > best) best = b;
        }
      }
      if (q->primitive >= 0 && q->primitive < CS_PRIM_COUNT && best < margin[q->primitive])
        margin[q->primitive] = best;
      if (best < all) all = best;
    }
  ungroup(&g);
  return all;
}
