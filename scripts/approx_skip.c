/* Study of an approximate mode for long steps (not used by commsweep): how far off is a pairwise
 * AllToAll step's duration if K windows of W ticks in its middle are skipped instead of
 * simulated?  At tick `at` (a quarter into the step) each flow's requests completed during the
 * last W ticks are counted; K times that many of its not yet issued requests are dropped from the
 * tail of its GDMAs' inject lists, the rest of the step is simulated from the real state, and K*W
 * ticks are added to its end.  Printed per shift: the exact duration and the skipped ones' error.
 * Built and run by `scripts/bench_dcin BUILD approx-skip [LAYOUT OUTSTANDING BURST BYTES]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/dcin.h"
#include "engine/dcin/dcin_int.h"

enum { N = 8 }; /* participants */

static void job_init(cs_job *job, const char *layout, int outstanding, int burst) {
  memset(job, 0, sizeof *job);
  int dies = strcmp(layout, "4die") == 0 ? 4 : strcmp(layout, "1die") == 0 ? 1 : 2;
  cs_adapter_config *a = &job->adapter;
  snprintf(a->mode, sizeof a->mode, "dcin");
  snprintf(a->topology, sizeof a->topology, "%s", strcmp(layout, "2die") ? "5x4" : "2261_5x4");
  a->num_dies = dies;
  snprintf(a->dcin_layout, sizeof a->dcin_layout, "%s", layout);
  snprintf(a->endpoint_id_scheme, sizeof a->endpoint_id_scheme, "mvp");
  a->num_initiators = a->num_targets = 20 * dies;
  a->driver_cycle_frequency_ghz = 1.0;
  a->ip_frequency_ghz = 1.0;
  a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = outstanding;
  a->slv_rd_outstanding = a->slv_wr_outstanding = 64;
  a->burst_length = burst;
  a->bw_bytes = 128;
  snprintf(job->engine.name, sizeof job->engine.name, "dcin");
  job->engine.deadlock_guard_ticks = 10000000;
  snprintf(job->spec.dtype, sizeof job->spec.dtype, "bf16");
  snprintf(job->spec.chip_spec_summary, sizeof job->spec.chip_spec_summary, "{}");
}

/* Drops up to k requests (keeping a few) from the tail of an IP's inject list; returns how many. */
static int drop_tail(dcin_sim *s, cs_endpoint at, int ipi, int k) {
  dcin_die *d = &s->dies[at.die];
  dcin_ip *ip = dcin_ipp(d, at.node, ipi);
  dcin_list *l = &ip->inj[DCIN_NET_REQ];
  if ((int)l->n < k + 4) k = (int)l->n - 4;
  if (k <= 0) return 0;
  uint32_t keep = l->n - (uint32_t)k, f = l->head, prev = DCIN_NIL;
  for (uint32_t i = 0; i < keep; i++) prev = f, f = s->flits[f].next;
  while (f != DCIN_NIL) {
    uint32_t next = s->flits[f].next;
    s->txns[s->flits[f].txn].live--;
    dcin_flit_free(s, f);
    s->active_txns--;
    dcin_ip_busy(d, at.node, ip, -1);
    f = next;
  }
  if (prev != DCIN_NIL) s->flits[prev].next = DCIN_NIL;
  l->tail = prev;
  if (prev == DCIN_NIL) l->head = DCIN_NIL;
  l->n = keep;
  return k;
}

/* One step on a fresh engine, rsp injected in the tick its req phase completes; at = 0: whole.
 * Returns the end tick plus the skipped ticks, or -1. */
static double run_step(const cs_job *job, const cs_inject *reqs, size_t n, const int *parts,
                       uint64_t at, uint64_t w, int k) {
  void *e = NULL;
  cs_err err;
  if (cs_dcin_ops.create(job, &e, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
  dcin_sim *s = dcin_engine_sim(e);
  s->reuse_off = true;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = cs_dcin_ops.inject(e, &reqs[i], &err);
  size_t done = 0, need = n;
  uint64_t window[N] = {0}, skipped = 0;
  while (!rc && done < need) {
    rc = cs_dcin_ops.advance(e, 1, &err);
    cs_completion c[256];
    size_t got;
    while (!rc && (got = cs_dcin_ops.poll(e, c, 256)) > 0)
      for (size_t j = 0; j < got && !rc; j++) {
        const cs_inject *q = &reqs[c[j].request_id];
        if (c[j].phase == CS_PHASE_FINAL) {
          done++;
          if (at && c[j].tick + w >= at && c[j].tick < at) window[c[j].request_id % N]++;
          continue;
        }
        cs_inject r = *q;
        r.packet_type = CS_PKT_RSP, r.src_id = q->dst_id, r.dst_id = q->src_id;
        rc = cs_dcin_ops.inject(e, &r, &err);
      }
    if (at && !skipped && cs_dcin_ops.now(e) >= at) {
      for (int i = 0; i < N; i++) {
        cs_endpoint src = cs_scheme_locate(&s->die_params, parts[i]);
        int want = k * (int)window[i];
        need -= (size_t)drop_tail(s, src, DCIN_IP_GDMA0, want / 2);
        need -= (size_t)drop_tail(s, src, DCIN_IP_GDMA1, want - want / 2);
      }
      skipped = (uint64_t)k * w;
    }
  }
  double end = (double)(cs_dcin_ops.now(e) + skipped);
  cs_dcin_ops.destroy(e);
  if (rc) return fprintf(stderr, "%s\n", err.msg), -1;
  return end;
}

int main(int argc, char **argv) {
  const char *layout = argc > 1 ? argv[1] : "2die";
  int outstanding = argc > 2 ? atoi(argv[2]) : 64, burst = argc > 3 ? atoi(argv[3]) : 4;
  long bytes = argc > 4 ? atol(argv[4]) : 4194304;
  cs_job job;
  job_init(&job, layout, outstanding, burst);
  /* the C2 study's cross-die participant sets (die-local on 1die) */
  static const int p1[N] = {0, 3, 5, 6, 9, 10, 12, 15}, p2[N] = {0, 5, 10, 15, 20, 25, 30, 35},
                   p4[N] = {0, 10, 20, 30, 40, 50, 60, 70};
  const int *parts = job.adapter.num_dies == 4 ? p4 : job.adapter.num_dies == 1 ? p1 : p2;
  int per = (int)(bytes / N / (burst * 128));
  if (per < 1) return fprintf(stderr, "message too small\n"), 2;
  cs_inject *reqs = calloc((size_t)N * per, sizeof *reqs);
  if (!reqs) return 1;
  printf("pairwise AllToAll steps, %s, outstanding %d, burst %d, %ld B: duration in ticks\n",
         layout, outstanding, burst, bytes);
  for (int shift = 1; shift < N; shift++) {
    size_t n = 0;
    for (int r = 0; r < per; r++) /* request id % N is the flow */
      for (int i = 0; i < N; i++, n++)
        reqs[n] = (cs_inject){.request_id = n, .src_id = parts[i], .dst_id = parts[(i + shift) % N],
                              .packet_type = CS_PKT_REQ, .burst_length = burst};
    double exact = run_step(&job, reqs, n, parts, 0, 0, 0);
    if (exact < 0) return free(reqs), 1;
    printf("shift %d: %.0f;", shift, exact);
    static const uint64_t windows[] = {500, 1000, 2000};
    for (int i = 0; i < 3; i++) {
      uint64_t w = windows[i], at = (uint64_t)(exact / 4) & ~(uint64_t)1;
      int k = (int)(exact / 2 / (double)w);
      if (at < w || k < 1) continue;
      double approx = run_step(&job, reqs, n, parts, at, w, k);
      if (approx < 0) return free(reqs), 1;
      printf("  W %llu x %d: %+.2f%%", (unsigned long long)w, k, 100.0 * (approx - exact) / exact);
    }
    printf("\n");
    fflush(stdout);
  }
  free(reqs);
  return 0;
}
