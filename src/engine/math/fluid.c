/* Fluid max-min sharing of a step's resources.  Between two events (a flow served in full, a
 * token bucket emptied) every flow runs at a constant rate: progressive filling raises the rates
 * of all unfrozen flows together until a flow reaches its own cap or a resource its capacity,
 * freezes those flows, and goes on with the rest.  A resource whose bucket still holds bytes is
 * not a limit; its bucket drains by whatever its users take beyond its capacity.  Deterministic:
 * flows and resources are visited in index order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "math_int.h"

#define REL_EPS 1e-12


void mfluid_free(mfluid *fl) {
  free(fl->rem);
  free(fl->rate);
  free(fl->resid);
  free(fl->credit);
  free(fl->load);
  free(fl->wsum);
  free(fl->touched);
  free(fl->live);
  free(fl->frozen);
  free(fl->is_touched);
  free(fl->pts);
  free(fl->evs);
  free(fl->served);
  free(fl->first);
  free(fl->npts);
  memset(fl, 0, sizeof *fl);
}

static bool resize(void **p, size_t n, size_t elem) {
  void *q = realloc(*p, n * elem);
  if (q) *p = q;
  return q != NULL;
}

/* Room for n flows and n_res resources (an array that grew before a failure stays grown). */
static int reserve(mfluid *fl, size_t n, int n_res) {
  if (n > fl->cap_flows) {
    size_t c = n > 2 * fl->cap_flows ? n : 2 * fl->cap_flows;
    if (!resize((void **)&fl->rem, c, sizeof *fl->rem) ||
        !resize((void **)&fl->served, c, sizeof *fl->served) ||
        !resize((void **)&fl->rate, c, sizeof *fl->rate) ||
        !resize((void **)&fl->live, c, sizeof *fl->live) ||
        !resize((void **)&fl->frozen, c, sizeof *fl->frozen) ||
        !resize((void **)&fl->first, c, sizeof *fl->first) ||
        !resize((void **)&fl->npts, c, sizeof *fl->npts))
      return CS_ENOMEM;
    fl->cap_flows = c;
  }
  if (n_res > fl->cap_res) {
    size_t c = (size_t)n_res;
    if (!resize((void **)&fl->resid, c, sizeof *fl->resid) ||
        !resize((void **)&fl->credit, c, sizeof *fl->credit) ||
        !resize((void **)&fl->load, c, sizeof *fl->load) ||
        !resize((void **)&fl->wsum, c, sizeof *fl->wsum) ||
        !resize((void **)&fl->touched, c, sizeof *fl->touched) ||
        !resize((void **)&fl->is_touched, c, sizeof *fl->is_touched))
      return CS_ENOMEM;
    memset(fl->is_touched, 0, c);
    fl->cap_res = n_res;
  }
  return CS_OK;
}

/* Progressive filling over the live flows, in proportion to their weights: rate[] of each. */
static void fill(mfluid *fl, const mchip *c, const mfc *flows, const mres *r, size_t n_live,
                 int n_touched) {
  const int *ids = r->ids;
  for (int k = 0; k < n_touched; k++) {
    int q = fl->touched[k];
    fl->resid[q] = fl->credit[q] > 0 ? INFINITY : c->cap[q];
    fl->wsum[q] = 0;
  }
  for (size_t k = 0; k < n_live; k++) {
    int i = fl->live[k];
    fl->rate[i] = 0;
    fl->frozen[i] = 0;
    for (size_t j = 0; j < flows[i].n_res; j++) fl->wsum[ids[flows[i].res_first + j]] += flows[i].weight;
  }
  size_t unfrozen = n_live;
  while (unfrozen) {
    double inc = INFINITY; /* of the fill level: flow i gains weight_i * inc */
    for (size_t k = 0; k < n_live; k++) {
      int i = fl->live[k];
      double room = (flows[i].rate_cap - fl->rate[i]) / flows[i].weight;
      if (!fl->frozen[i] && room < inc) inc = room;
    }
    for (int k = 0; k < n_touched; k++) {
      int q = fl->touched[k];
      if (fl->wsum[q] > 0 && fl->resid[q] / fl->wsum[q] < inc) inc = fl->resid[q] / fl->wsum[q];
    }
    if (!(inc < INFINITY)) inc = 0; /* nothing limits: cannot happen with finite caps */
    for (int k = 0; k < n_touched; k++) {
      int q = fl->touched[k];
      if (fl->wsum[q] > 0) fl->resid[q] -= inc * fl->wsum[q];
    }
    size_t before = unfrozen;
    for (size_t k = 0; k < n_live; k++) {
      int i = fl->live[k];
      if (fl->frozen[i]) continue;
      fl->rate[i] += inc * flows[i].weight;
      bool stop = flows[i].rate_cap - fl->rate[i] <= REL_EPS * flows[i].rate_cap;
      for (size_t j = 0; j < flows[i].n_res && !stop; j++) {
        int q = ids[flows[i].res_first + j];
        stop = fl->resid[q] <= REL_EPS * c->cap[q];
      }
      if (stop) {
        fl->frozen[i] = 1;
        unfrozen--;
      }
    }
    /* take the frozen flows' weights out only now, so every flow above saw the same residuals */
    if (unfrozen != before)
      for (size_t k = 0; k < n_live; k++) {
        int i = fl->live[k];
        if (fl->frozen[i] == 1) {
          fl->frozen[i] = 2;
          for (size_t j = 0; j < flows[i].n_res; j++)
            fl->wsum[ids[flows[i].res_first + j]] -= flows[i].weight;
        }
      }
    if (unfrozen == before && inc == 0) break;
  }
}

/* The events of a solve, in time order: flow `flow` reached `bytes` at `t`. */
typedef struct mfluid_ev {
  int flow;
  double t, bytes;
} mfluid_ev;

int mfluid_solve(mfluid *fl, const mchip *c, const mfc *flows, size_t n, const mres *r,
                 cs_err *err) {
  if (reserve(fl, n ? n : 1, c->n_res))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  int n_touched = 0;
  size_t n_live = 0, n_evs = 0, n_waiting = 0;
  for (size_t i = 0; i < n; i++) {
    fl->rem[i] = flows[i].bytes - flows[i].first_bytes;
    fl->served[i] = 0;
    fl->frozen[i] = fl->rem[i] > 0 && flows[i].start_ns > 0 ? 3 : 0; /* 3: not started */
    n_waiting += fl->frozen[i] == 3;
    if (fl->rem[i] > 0 && fl->frozen[i] != 3) fl->live[n_live++] = (int)i;
    for (size_t j = 0; j < flows[i].n_res; j++) {
      int q = r->ids[flows[i].res_first + j];
      if (!fl->is_touched[q]) {
        fl->is_touched[q] = 1;
        fl->touched[n_touched++] = q;
        fl->credit[q] = c->burst[q];
      }
    }
  }
  int rc = CS_OK;
  double t = 0;
  while (n_live || n_waiting) {
    /* the flows whose data reaches the network by now join */
    double next_start = INFINITY;
    for (size_t i = 0; i < n && n_waiting; i++) {
      if (fl->frozen[i] != 3) continue;
      if (flows[i].start_ns <= t * (1 + REL_EPS)) {
        fl->frozen[i] = 0;
        fl->live[n_live++] = (int)i;
        n_waiting--;
      } else if (flows[i].start_ns < next_start) {
        next_start = flows[i].start_ns;
      }
    }
    if (!n_live) {
      t = next_start;
      continue;
    }
    fill(fl, c, flows, r, n_live, n_touched);
    double dt = next_start - t;
    for (size_t k = 0; k < n_live; k++) {
      int i = fl->live[k];
      if (fl->rate[i] > 0 && fl->rem[i] / fl->rate[i] < dt) dt = fl->rem[i] / fl->rate[i];
    }
    for (int k = 0; k < n_touched; k++) fl->load[fl->touched[k]] = 0;
    for (size_t k = 0; k < n_live; k++) {
      int i = fl->live[k];
      for (size_t j = 0; j < flows[i].n_res; j++) fl->load[r->ids[flows[i].res_first + j]] += fl->rate[i];
    }
    for (int k = 0; k < n_touched; k++) {
      int q = fl->touched[k];
      double over = fl->load[q] - c->cap[q];
      if (fl->credit[q] > 0 && over > 0 && fl->credit[q] / over < dt) dt = fl->credit[q] / over;
    }
    if (!(dt < INFINITY)) {
      rc = cs_err_set(err, CS_EINTERNAL, "math engine: a flow got no rate (a zero capacity)");
      break;
    }
    for (int k = 0; k < n_touched; k++) {
      int q = fl->touched[k];
      double over = fl->load[q] - c->cap[q];
      if (fl->credit[q] > 0 && over > 0) {
        fl->credit[q] -= over * dt;
        if (fl->credit[q] <= REL_EPS * c->burst[q]) fl->credit[q] = 0;
      }
    }
    t += dt;
    if (!math_grow((void **)&fl->evs, &fl->cap_evs, n_evs + n_live, sizeof *fl->evs)) {
      rc = cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
      break;
    }
    size_t kept = 0;
    for (size_t k = 0; k < n_live; k++) {
      int i = fl->live[k];
      double moved = fl->rate[i] * dt;
      bool done = fl->rem[i] - moved <= REL_EPS * flows[i].bytes;
      fl->served[i] = done ? flows[i].bytes - flows[i].first_bytes : fl->served[i] + moved;
      fl->rem[i] = done ? 0 : fl->rem[i] - moved;
      fl->evs[n_evs++] = (mfluid_ev){i, t, fl->served[i]};
      if (!done) fl->live[kept++] = i;
    }
    n_live = kept;
  }
  for (int k = 0; k < n_touched; k++) fl->is_touched[fl->touched[k]] = 0;
  if (rc) return rc;
  /* each flow's curve: (0, 0), then its events in time order */
  if (!math_grow((void **)&fl->pts, &fl->cap_pts, n + n_evs, sizeof *fl->pts))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  for (size_t i = 0; i < n; i++) fl->npts[i] = 1;
  for (size_t e = 0; e < n_evs; e++) fl->npts[fl->evs[e].flow]++;
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    fl->first[i] = at;
    fl->pts[at] = (mcurve_pt){flows[i].start_ns, 0};
    at += fl->npts[i];
    fl->npts[i] = 1;
  }
  for (size_t e = 0; e < n_evs; e++) {
    size_t i = (size_t)fl->evs[e].flow;
    fl->pts[fl->first[i] + fl->npts[i]++] = (mcurve_pt){fl->evs[e].t, fl->evs[e].bytes};
  }
  fl->n_pts = at;
  return CS_OK;
}

double mfluid_time_at(const mfluid *fl, size_t i, double bytes, size_t *cursor) {
  const mcurve_pt *p = fl->pts + fl->first[i];
  size_t n = fl->npts[i], k = *cursor;
  if (bytes <= 0 || n < 2) return 0;
  while (k + 2 < n && p[k + 1].bytes < bytes) k++;
  *cursor = k;
  const mcurve_pt *a = &p[k], *b = &p[k + 1];
  if (b->bytes <= a->bytes) return b->t;
  double frac = (bytes - a->bytes) / (b->bytes - a->bytes);
  if (frac > 1) frac = 1;
  return a->t + frac * (b->t - a->t);
}
