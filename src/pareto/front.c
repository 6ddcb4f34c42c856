/* Dominance on vectors in minimisation form: the front, the layers of non-dominated sorting and
 * the interval test of a refinement.  Plain O(n^2 m) scans: a workload holds tens to a few
 * thousand points, and every answer is exact (no tolerance: equal values are equal). */
#include <stdlib.h>

#include "commsweep/pareto.h"

bool cs_pareto_dominates(const double *a, const double *b, size_t m) {
  bool better = false;
  for (size_t k = 0; k < m; k++) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) better = true;
  }
  return better;
}

void cs_pareto_front(const double *v, size_t n, size_t m, uint8_t *on_front) {
  for (size_t i = 0; i < n; i++) {
    on_front[i] = 1;
    for (size_t j = 0; j < n && on_front[i]; j++)
      if (j != i && cs_pareto_dominates(v + j * m, v + i * m, m)) on_front[i] = 0;
  }
}

void cs_pareto_layers(const double *v, size_t n, size_t m, uint32_t *layer) {
  /* pass l: the points still unranked that no other unranked point dominates get layer l;
   * they are marked during the pass and ranked after it, so they still count as dominators */
  const uint32_t unset = UINT32_MAX, mark = UINT32_MAX - 1;
  for (size_t i = 0; i < n; i++) layer[i] = unset;
  size_t left = n;
  for (uint32_t l = 0; left; l++) {
    for (size_t i = 0; i < n; i++) {
      if (layer[i] != unset) continue;
      bool free_ = true;
      for (size_t j = 0; j < n && free_; j++)
        if (j != i && layer[j] >= mark && cs_pareto_dominates(v + j * m, v + i * m, m))
          free_ = false;
      if (free_) layer[i] = mark;
    }
    size_t ranked = 0;
    for (size_t i = 0; i < n; i++)
      if (layer[i] == mark) {
        layer[i] = l;
        ranked++;
      }
    /* a strict order always leaves a front; values it cannot order (NaN) end the peeling */
    if (!ranked)
      for (size_t i = 0; i < n; i++)
        if (layer[i] == unset) {
          layer[i] = l;
          ranked++;
        }
    left -= ranked;
  }
}

void cs_pareto_certainly_dominated(const double *lo, const double *hi, size_t n, size_t m,
                                   const uint8_t *usable, uint8_t *certain) {
  for (size_t q = 0; q < n; q++) {
    certain[q] = 0;
    for (size_t p = 0; p < n && !certain[q]; p++)
      if (p != q && (!usable || usable[p]) && cs_pareto_dominates(hi + p * m, lo + q * m, m))
        certain[q] = 1;
  }
}
