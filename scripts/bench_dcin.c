/* Benchmark of the DCIN engine: prints simulated cycles per second and flit-hops per second for
 * (1) one isolated transaction, (2) one ring step of 8 GDMAs x 64 KiB on one die and on two dies,
 * (3) a 16 MiB ring AllReduce over 8 participants on two dies through the L1 expansion and the L2
 * driver.  Built and run by scripts/bench_dcin.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commsweep/config.h"
#include "commsweep/dcin.h"
#include "commsweep/drive.h"
#include "commsweep/expand.h"
#include "commsweep/sweep.h"
#include "engine/dcin/dcin_int.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the host is shared */
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void job_init(cs_job *job, const char *topo, const char *layout, int dies, int endpoints) {
  memset(job, 0, sizeof *job);
  cs_adapter_config *a = &job->adapter;
  snprintf(a->mode, sizeof a->mode, "dcin");
  snprintf(a->topology, sizeof a->topology, "%s", topo);
  a->num_dies = dies;
  snprintf(a->dcin_layout, sizeof a->dcin_layout, "%s", layout);
  snprintf(a->endpoint_id_scheme, sizeof a->endpoint_id_scheme, "mvp");
  a->num_initiators = a->num_targets = endpoints;
  a->driver_cycle_frequency_ghz = 1.0;
  a->ip_frequency_ghz = 1.0;
  a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = 128;
  a->slv_rd_outstanding = a->slv_wr_outstanding = 64;
  a->burst_length = 4;
  a->bw_bytes = 128;
  a->enable_transaction_log = true;
  snprintf(a->transaction_log_path, sizeof a->transaction_log_path, "/tmp/bench_{key}.jsonl");
  snprintf(job->engine.name, sizeof job->engine.name, "dcin");
  job->engine.deadlock_guard_ticks = 10000000;
  snprintf(job->spec.dtype, sizeof job->spec.dtype, "bf16");
  snprintf(job->spec.chip_spec_summary, sizeof job->spec.chip_spec_summary, "{}");
}

/* Runs reqs to completion, injecting each rsp in the tick its req phase completes. */
static int run_reqs(void *e, const cs_inject *reqs, size_t n) {
  cs_err err;
  for (size_t i = 0; i < n; i++)
    if (cs_dcin_ops.inject(e, &reqs[i], &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  size_t done = 0;
  cs_completion c[256];
  while (done < n) {
    if (cs_dcin_ops.advance(e, 1u << 20, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    size_t k;
    while ((k = cs_dcin_ops.poll(e, c, 256)) > 0)
      for (size_t j = 0; j < k; j++) {
        if (c[j].phase == CS_PHASE_FINAL) {
          done++;
          continue;
        }
        cs_inject r = reqs[c[j].request_id];
        r.packet_type = CS_PKT_RSP;
        r.src_id = reqs[c[j].request_id].dst_id;
        r.dst_id = reqs[c[j].request_id].src_id;
        if (cs_dcin_ops.inject(e, &r, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
      }
  }
  return 0;
}

static void report(const char *what, void *e, double wall, int reps) {
  cs_engine_stats st;
  cs_dcin_ops.stats(e, &st);
  double cyc = (double)st.sim_cycles * reps,
         stepped = (double)(st.sim_cycles - st.skipped_cycles) * reps;
  printf(
      "%-44s %10llu cycles (%5.1f%% stepped) %8.3f ms  %12.0f cycles/s  %12.0f stepped/s  %12.0f "
      "flit-hops/s\n",
      what, (unsigned long long)st.sim_cycles, 100.0 * stepped / (cyc > 0 ? cyc : 1),
      wall * 1e3 / reps, cyc / wall, stepped / wall, (double)st.flit_hops * reps / wall);
}

static int bench_isolated(void) {
  cs_job job;
  job_init(&job, "2261_5x4", "2die", 2, 40);
  const int reps = 2000;
  void *e = NULL;
  cs_err err;
  double t0 = now_s();
  for (int r = 0; r < reps; r++) {
    cs_dcin_ops.destroy(e);
    e = NULL;
    if (cs_dcin_ops.create(&job, &e, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    cs_inject q = {.request_id = 0,
                   .src_id = 0,
                   .dst_id = 39,
                   .is_read = 1,
                   .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
    if (run_reqs(e, &q, 1)) return 1;
  }
  double wall = now_s() - t0;
  report("isolated cross-die read (create incl.)", e, wall, reps);
  cs_dcin_ops.destroy(e);
  return 0;
}

/* One ring step: participant i writes 64 KiB to participant i+1's DDR.  Short, so it is run five
 * times on fresh engines and the fastest run is reported (the host is shared). */
static int bench_ring_step(const char *layout, int dies, const int *parts) {
  cs_job job;
  job_init(&job, "2261_5x4", layout, dies, 20 * dies);
  enum { N = 8, PER = 65536 / 512 };
  static cs_inject reqs[N * PER];
  size_t n = 0;
  for (int k = 0; k < PER; k++)
    for (int i = 0; i < N; i++)
      reqs[n] = (cs_inject){.request_id = n,
                            .src_id = parts[i],
                            .dst_id = parts[(i + 1) % N],
                            .is_read = 0,
                            .packet_type = CS_PKT_REQ,
                            .burst_length = 4},
      n++;
  double best = 1e30;
  void *keep = NULL;
  for (int rep = 0; rep < 5; rep++) {
    void *e = NULL;
    cs_err err;
    if (cs_dcin_ops.create(&job, &e, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double t0 = now_s();
    if (run_reqs(e, reqs, n)) return 1;
    double wall = now_s() - t0;
    if (wall < best) best = wall;
    cs_dcin_ops.destroy(keep);
    keep = e;
  }
  char what[80];
  snprintf(what, sizeof what, "ring step 8 x 64 KiB writes, %s", layout);
  report(what, keep, best, 1);
  printf("%-44s %10.1f ns simulated, %.1f GB/s aggregate\n", "", (double)cs_dcin_ops.now(keep),
         N * 65536.0 / (double)cs_dcin_ops.now(keep));
  cs_dcin_ops.destroy(keep);
  return 0;
}

static int bench_allreduce(void) {
  cs_job job;
  job_init(&job, "2261_5x4", "2die", 2, 40);
  cs_spec *sp = &job.spec;
  sp->primitive = CS_PRIM_ALLREDUCE;
  sp->algorithm = CS_ALGO_RING;
  sp->msg_size_bytes = 16u << 20;
  sp->num_participants = 8;
  int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  for (int i = 0; i < 8; i++) sp->participants[i] = parts[i];
  cs_err err;
  cs_plan plan;
  if (cs_expand(&job, &plan, &err)) return fprintf(stderr, "expand: %s\n", err.msg), 1;
  cs_txn_record *rec = calloc(plan.num_txns, sizeof *rec);
  void *e = NULL;
  if (!rec || cs_dcin_ops.create(&job, &e, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  double t0 = now_s();
  int rc = cs_drive(&job, &plan, &cs_dcin_ops, e, rec, &err);
  double wall = now_s() - t0;
  if (rc)
    fprintf(stderr, "drive: %s\n", err.msg);
  else {
    report("AllReduce 16 MiB, 8 participants, 2 dies", e, wall, 1);
    printf("%-44s %10llu transactions, %u steps, %.3f us simulated\n", "",
           (unsigned long long)plan.num_txns, plan.num_steps, (double)cs_dcin_ops.now(e) / 1e3);
  }
  cs_dcin_ops.destroy(e);
  free(rec);
  cs_plan_free(&plan);
  return rc ? 1 : 0;
}

/* Jobs of a sweep costliest first, as the sweep's scheduler hands them out to a worker: by the
 * cost of their share group, a group's jobs together, costliest first inside it (the build
 * script defines BENCH_SHARE_GROUP when the engine names share groups; without, each job is its
 * own group); ties: matrix order. */
typedef struct job_cost {
  double cost, group_cost;
  uint64_t group;
  size_t i;
} job_cost;
static int cmp_job_cost(const void *a, const void *b) {
  const job_cost *x = a, *y = b;
  if (x->group_cost != y->group_cost) return x->group_cost > y->group_cost ? -1 : 1;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* FNV-1a of a job's transaction records: every column of the common record table, by name, so
 * that builds whose record struct differs in layout or in engine slots still compare. */
static uint64_t fnv_bytes(uint64_t h, const void *v, size_t n) {
  const unsigned char *p = v;
  for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 0x100000001b3ULL;
  return h;
}
#define HASH_COLUMN(ctype, name, dim, kind, unit, flags, doc) \
  h = fnv_bytes(h, &rec[i].name, sizeof rec[i].name);
static uint64_t records_hash(const cs_txn_record *rec, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint64_t i = 0; i < n; i++) {
    CS_TXN_RECORD_COLUMNS(HASH_COLUMN)
  }
  return h;
}

/* bench_dcin reuse SWEEP.json [--shared] [--cost-order] [--records FILE]: every dcin job of the
 * sweep through L1 and the L2 driver, one engine per job as the sweep runs them (--shared: all
 * attached to one reuse context; in matrix order, or --cost-order costliest first as the sweep's
 * scheduler runs them); prints the steps, how many were replayed (exact step reuse), per
 * primitive too, the jobs in which some ring was completely full at some cycle (the rule that
 * changed with the full-ring fix), and the CPU time.  --records writes one line per job: its
 * index in the sweep, its engine statistics and a hash of its transaction records, to compare
 * two builds record for record (the records are bit-identical when the files are equal). */
/* The job of a sweep entry: unpacked where the sweep holds its jobs packed (the build script
 * defines BENCH_SWEEP_JOBS_PACKED when the build's sweep.h has cs_sweep_job_get), else the
 * copy an older build keeps whole. */
static int sweep_job(const cs_sweep_job *sj, cs_job *out, cs_err *err) {
#ifdef BENCH_SWEEP_JOBS_PACKED
  return cs_sweep_job_get(sj, out, err);
#else
  (void)err;
  *out = sj->job;
  return 0;
#endif
}

static int bench_reuse(const char *path, bool shared, bool cost_order, const char *records) {
  cs_sweep sw;
  cs_err err;
  if (cs_sweep_load(path, &sw, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  job_cost *order = calloc(sw.num_jobs ? sw.num_jobs : 1, sizeof *order);
  FILE *rf = records ? fopen(records, "w") : NULL;
  if (!order || (records && !rf)) return fprintf(stderr, "bench_dcin reuse: out of memory or %s\n",
                                                 records ? records : ""), 1;
  cs_job job;
  for (size_t i = 0; i < sw.num_jobs; i++) {
    bool loaded = !sw.jobs[i].load_code && !sweep_job(&sw.jobs[i], &job, &err);
    order[i].i = i;
    order[i].cost =
        loaded ? cs_dcin_ops.cost(&job, sw.jobs[i].num_txns, sw.jobs[i].num_steps) : 0;
#ifdef BENCH_SHARE_GROUP
    order[i].group = loaded ? cs_dcin_ops.share_group(&job) : 0;
#endif
  }
  for (size_t i = 0; i < sw.num_jobs; i++) { /* a few thousand jobs: quadratic is fine */
    order[i].group_cost = order[i].cost;
    for (size_t k = 0; order[i].group && k < sw.num_jobs; k++)
      if (k != i && order[k].group == order[i].group) order[i].group_cost += order[k].cost;
  }
  if (cost_order) qsort(order, sw.num_jobs, sizeof *order, cmp_job_cost);
  cs_dcin_reuse *ctx = shared ? cs_dcin_reuse_new() : NULL;
  uint64_t steps = 0, replayed = 0, jobs = 0, full_jobs = 0, failed = 0, reruns = 0;
  uint64_t pr_steps[8] = {0}, pr_rep[8] = {0}, pr_jobs[8] = {0};
  /* cycles the engine stepped, and those a run without reuse steps (all but the skipped ones);
   * the build script defines BENCH_CYCLES_STEPPED when the engine counts the former */
  uint64_t pr_stepped[8] = {0}, pr_unreused[8] = {0};
#ifdef BENCH_CYCLES_STEPPED
  const bool counts_stepped = true;
#else
  const bool counts_stepped = false;
#endif
  double pr_cpu[8] = {0};
  double t0 = now_s();
  for (size_t oi = 0; oi < sw.num_jobs; oi++) {
    size_t i = order[oi].i;
    const cs_sweep_job *sj = &sw.jobs[i];
    if (sj->load_code || sweep_job(sj, &job, &err) || strcmp(job.engine.name, "dcin")) continue;
    cs_plan plan;
    if (cs_expand(&job, &plan, &err)) {
      failed++;
      continue;
    }
    cs_txn_record *rec = calloc(plan.num_txns ? plan.num_txns : 1, sizeof *rec);
    void *e = NULL;
    double tj = now_s();
    int pr = (int)job.spec.primitive & 7;
    int rc = !rec || cs_dcin_ops.create(&job, &e, &err) || (ctx && cs_dcin_reuse_attach(e, ctx));
    if (!rc) rc = cs_drive(&job, &plan, &cs_dcin_ops, e, rec, &err);
#ifdef BENCH_RETRY
    if (rc == CS_ERETRY) { /* as cs_job_run_keeping: once more, without the shared context */
      reruns++;
      cs_dcin_ops.destroy(e);
      e = NULL;
      rc = cs_dcin_ops.create(&job, &e, &err);
      if (!rc) rc = cs_drive(&job, &plan, &cs_dcin_ops, e, rec, &err);
    }
#endif
    if (!rc) {
      uint64_t seen, rep, recd;
      dcin_sim *s = dcin_engine_sim(e);
      dcin_reuse_figures(s, &seen, &rep, &recd);
      steps += plan.num_steps;
      replayed += rep;
      jobs++;
      pr_steps[pr] += plan.num_steps, pr_rep[pr] += rep, pr_jobs[pr]++;
      pr_cpu[pr] += now_s() - tj;
      cs_engine_stats st;
      cs_dcin_ops.stats(e, &st);
#ifdef BENCH_CYCLES_STEPPED
      pr_stepped[pr] += s->cycles_stepped;
#endif
      pr_unreused[pr] += st.sim_cycles - st.skipped_cycles;
      if (rf) {
        fprintf(rf, "%zu %llu %llu %llu %016llx\n", i, (unsigned long long)st.sim_cycles,
                (unsigned long long)st.flit_hops, (unsigned long long)plan.num_txns,
                (unsigned long long)records_hash(rec, plan.num_txns));
      }
      if (s->st.full_ring_cycles) {
        full_jobs++;
        printf("  full ring in job %zu (%s, %llu B, %s, %s, %d participants): %llu ring-cycles\n",
               i, cs_primitive_name(job.spec.primitive),
               (unsigned long long)job.spec.msg_size_bytes, job.adapter.topology,
               job.adapter.dcin_layout, job.spec.num_participants,
               (unsigned long long)s->st.full_ring_cycles);
      }
    } else {
      failed++;
    }
    cs_dcin_ops.destroy(e);
    free(rec);
    cs_plan_free(&plan);
  }
  double cpu = now_s() - t0;
  cs_dcin_reuse_free(ctx);
  printf(
      "%s%s: %llu jobs (%llu failed, %llu run again without the context), %llu steps, %llu "
      "replayed (%.1f%%), %llu jobs with a full ring; %.2f s CPU\n",
      sw.name, shared ? " (one reuse context for all jobs)" : "", (unsigned long long)jobs,
      (unsigned long long)failed, (unsigned long long)reruns, (unsigned long long)steps,
      (unsigned long long)replayed, steps ? 100.0 * (double)replayed / (double)steps : 0.0,
      (unsigned long long)full_jobs, cpu);
  uint64_t stepped = 0, unreused = 0;
  for (int k = 0; k < 8; k++)
    if (pr_jobs[k]) {
      printf("  %-14s %4llu jobs, %6llu steps, %6llu replayed (%.1f%%), %.2f s CPU",
             cs_primitive_name((cs_primitive)k), (unsigned long long)pr_jobs[k],
             (unsigned long long)pr_steps[k], (unsigned long long)pr_rep[k],
             pr_steps[k] ? 100.0 * (double)pr_rep[k] / (double)pr_steps[k] : 0.0, pr_cpu[k]);
      if (counts_stepped)
        printf("; %llu of %llu cycles stepped", (unsigned long long)pr_stepped[k],
               (unsigned long long)pr_unreused[k]);
      printf("\n");
      stepped += pr_stepped[k], unreused += pr_unreused[k];
    }
  if (counts_stepped)
    printf("  cycles stepped: %llu of the %llu a run without reuse steps (%.2fx fewer)\n",
           (unsigned long long)stepped, (unsigned long long)unreused,
           (double)unreused / (double)(stepped ? stepped : 1));
  cs_sweep_free(&sw);
  free(order);
  if (rf) fclose(rf);
  return failed ? 1 : 0;
}

/* bench_dcin moves SPEC.json ADAPTER.json: the job as `commsweep run --engine dcin --no-txlog`
 * runs it (L1, L2 with the engine's own step reuse), and its flit movements: every entry of a
 * flit into each bounded FIFO of its path (l2h, IQ channel, IQ arbiter input, inject queue: once
 * per flit injected; eject FIFO and ring-bridge output where it passes them; EQ arbiter input,
 * EQ channel, h2l_h, h2l_l: once per flit ejected) and onto a ring (CP injection); entries into
 * the unbounded lists (inject FIFOs, RSP queues, D2D link channels) are printed apart.  The engine counts lists, rings, ejects and ring-bridge outputs
 * only when built with DCIN_COUNT_MOVES (the build script defines BENCH_COUNT_MOVES then). */
static int bench_moves(const char *spec, const char *adapter) {
  cs_job job;
  memset(&job, 0, sizeof job);
  cs_err err;
  if (cs_config_spec_load(spec, &job.spec, &err) || cs_config_adapter_load(adapter, &job.adapter, &err))
    return fprintf(stderr, "%s\n", err.msg), 1;
  snprintf(job.engine.name, sizeof job.engine.name, "dcin");
  job.engine.deadlock_guard_ticks = CS_DEFAULT_DEADLOCK_GUARD;
  cs_plan plan;
  if (cs_expand(&job, &plan, &err)) return fprintf(stderr, "expand: %s\n", err.msg), 1;
  cs_txn_record *rec = calloc(plan.num_txns ? plan.num_txns : 1, sizeof *rec);
  void *e = NULL;
  int rc = !rec || cs_dcin_ops.create(&job, &e, &err);
  if (!rc) rc = cs_drive(&job, &plan, &cs_dcin_ops, e, rec, &err);
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
  } else {
    const dcin_stats *st = &dcin_engine_sim(e)->st;
#ifdef BENCH_COUNT_MOVES
    uint64_t fifos = 4 * st->flits_injected + st->moved_eject + st->moved_rb +
                     4 * st->flits_ejected;
    printf("%llu flit movements: %llu FIFO entries, %llu ring entries (and %llu list entries); "
           "%llu sim cycles, %llu flit-hops, %llu flits injected\n",
           (unsigned long long)(fifos + st->moved_ring), (unsigned long long)fifos,
           (unsigned long long)st->moved_ring, (unsigned long long)st->moved_list,
           (unsigned long long)dcin_engine_sim(e)->cyc, (unsigned long long)st->flit_hops,
           (unsigned long long)st->flits_injected);
#else
    printf("this build does not count flit movements (DCIN_COUNT_MOVES); %llu flit-hops\n",
           (unsigned long long)st->flit_hops);
#endif
  }
  cs_dcin_ops.destroy(e);
  free(rec);
  cs_plan_free(&plan);
  return rc ? 1 : 0;
}

/* bench_dcin [isolated|ring1|ring2|allreduce ...]: the named workloads only (all by default),
 * e.g. to profile one of them under callgrind; bench_dcin reuse SWEEP.json (above). */
int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "moves")) return bench_moves(argv[2], argv[3]);
  if (argc >= 3 && !strcmp(argv[1], "reuse")) {
    bool shared = false, cost_order = false;
    const char *records = NULL;
    for (int i = 3; i < argc; i++) {
      if (!strcmp(argv[i], "--shared"))
        shared = true;
      else if (!strcmp(argv[i], "--cost-order"))
        cost_order = true;
      else if (!strcmp(argv[i], "--records") && i + 1 < argc)
        records = argv[++i];
      else
        return fprintf(stderr, "bench_dcin reuse: unknown option %s\n", argv[i]), 2;
    }
    return bench_reuse(argv[2], shared, cost_order, records);
  }
  int one_die[8] = {0, 2, 5, 7, 10, 12, 15, 17};
  int two_dies[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  bool all = argc < 2, want[4] = {all, all, all, all};
  static const char *names[4] = {"isolated", "ring1", "ring2", "allreduce"};
  for (int i = 1; i < argc; i++)
    for (int k = 0; k < 4; k++)
      if (!strcmp(argv[i], names[k])) want[k] = true;
  int rc = 0;
  if (want[0]) rc |= bench_isolated();
  if (want[1]) rc |= bench_ring_step("1die", 1, one_die);
  if (want[2]) rc |= bench_ring_step("2die", 2, two_dies);
  if (want[3]) rc |= bench_allreduce();
  return rc;
}
