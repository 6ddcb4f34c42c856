/* Benchmark (not a test): the cost of a cache key, from the job's binary fields (the sweep's hot
 * path: every job of every sweep computes one).  Prints microseconds per key for a small and a
 * large participant set. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commsweep/cachekey.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void job_of(cs_job *j, int n, bool shuffled) {
  memset(j, 0, sizeof *j);
  cs_adapter_config *a = &j->adapter;
  snprintf(a->mode, sizeof a->mode, "dcin");
  snprintf(a->topology, sizeof a->topology, "5x4");
  snprintf(a->dcin_layout, sizeof a->dcin_layout, "4die");
  snprintf(a->endpoint_id_scheme, sizeof a->endpoint_id_scheme, "mvp");
  snprintf(a->transaction_log_path, sizeof a->transaction_log_path, "txlog_{key}.jsonl");
  a->num_dies = 4, a->num_initiators = a->num_targets = 80;
  a->driver_cycle_frequency_ghz = a->ip_frequency_ghz = 1.0, a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = a->slv_rd_outstanding = a->slv_wr_outstanding = 64;
  a->burst_length = 4, a->bw_bytes = 128, a->enable_transaction_log = true;
  cs_spec *s = &j->spec;
  s->primitive = CS_PRIM_ALLREDUCE, s->algorithm = CS_ALGO_RING, s->msg_size_bytes = 1 << 20;
  s->num_participants = n;
  for (int i = 0; i < n; i++) s->participants[i] = shuffled ? (i * 7) % 80 : i;
  snprintf(s->dtype, sizeof s->dtype, "bf16");
  snprintf(s->chip_spec_summary, sizeof s->chip_spec_summary,
           "{\"chip\":\"4-die 5x4\",\"noc_frequency_ghz\":2}");
  snprintf(j->engine.name, sizeof j->engine.name, "dcin");
  j->engine.deadlock_guard_ticks = 1000000;
}

int main(void) {
  const int sizes[] = {8, 80, 80};
  const bool shuffled[] = {false, false, true};
  printf("cache key cost (binary fields, SHA-256), best of 5 rounds of 200000 keys\n");
  for (int k = 0; k < 3; k++) {
    cs_job job;
    job_of(&job, sizes[k], shuffled[k]);
    uint8_t buf[16384];
    size_t bytes = cs_cachekey_serialize(&job, CS_ADAPTER_VERSION, buf, sizeof buf);
    double best = 1e9;
    char key[CS_KEY_HEX];
    unsigned sink = 0;
    for (int round = 0; round < 5; round++) {
      double t0 = now_s();
      for (int i = 0; i < 200000; i++) {
        job.spec.msg_size_bytes = (uint64_t)(i + 1);
        cs_cachekey(&job, key, NULL);
        sink += (unsigned)key[0];
      }
      double us = (now_s() - t0) / 200000 * 1e6;
      if (us < best) best = us;
    }
    printf("  %2d participants%s: %zu bytes hashed, %.3f us per key (%u)\n", sizes[k],
           shuffled[k] ? " (unsorted: the key sorts them)" : "", bytes, best, sink % 10);
  }
  return 0;
}
