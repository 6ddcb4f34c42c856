/* Part of an expanded sweep as a sweep of its own: what a refinement round runs.  The jobs keep
 * their keys and JSON (deflated against the same base), so their rows are the rows the whole
 * sweep would have. */
#include <stdlib.h>
#include <string.h>

#include "sweep_int.h"

static void *copy(const void *p, size_t n, bool *ok) {
  if (!p) return NULL;
  void *c = malloc(n ? n : 1);
  if (!c) *ok = false;
  else memcpy(c, p, n);
  return c;
}

int cs_sweep_subset(const cs_sweep *sw, const size_t *pick, size_t n, cs_sweep *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  memcpy(out->name, sw->name, sizeof out->name);
  out->num_axes = sw->num_axes;
  bool ok = true;
  out->jobs = calloc(n ? n : 1, sizeof *out->jobs);
  out->base_json = copy(sw->base_json, strlen(sw->base_json) + 1, &ok);
  ok = ok && out->jobs;
  for (size_t i = 0; ok && i < n; i++) {
    const cs_sweep_job *from = &sw->jobs[pick[i]];
    cs_sweep_job *to = &out->jobs[i];
    *to = *from;
    to->packed = copy(from->packed, from->packed_len, &ok);
    to->json_z = copy(from->json_z, from->json_z_len, &ok);
    to->error = from->error ? copy(from->error, strlen(from->error) + 1, &ok) : NULL;
    out->num_jobs = i + 1;
  }
  if (!ok) {
    cs_sweep_free(out);
    return cs_err_set(err, CS_ENOMEM, "%zu jobs: out of memory", n);
  }
  return CS_OK;
}
