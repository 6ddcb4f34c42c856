/* The DCIN engine against its oracle, the engine of commit 2971b48 (the last before its per-cycle
 * path was reorganised): every scenario below, run on this build, must give the line that commit
 * gives, which tests/data/dcin/oracle-2971b48.txt holds (written by `scripts/bench_dcin
 * /work/ref/2971b48/build oracle`, which compiles this file against that build with
 * DCIN_ORACLE_MAIN).  A cycle scenario drives the simulator directly (contended random traffic on
 * every layout, XY and YX, crossring_compat on and off, hot spots that raise I-Tags and E-Tags,
 * pairwise all-to-all steps, fractional clocks, DDR latency variance, the mixed CSV traffic); its
 * line carries the statistics, a hash over every simulated cycle of the flit counters and of every
 * completion (id, phase, tick), and a hash of every transaction's stamps and block counters.  A
 * job scenario runs a collective through L1 and the L2 driver with one step-reuse context shared
 * by all of them (so later jobs replay steps of earlier ones); its line carries the engine
 * statistics and a hash of every column of every transaction record.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/dcin.h"
#include "commsweep/drive.h"
#include "commsweep/expand.h"
#include "engine/dcin/dcin_int.h"
#include "test_dcin.h"

static uint64_t fnv(uint64_t h, const void *v, size_t n) {
  const unsigned char *p = v;
  for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 0x100000001b3ULL;
  return h;
}
#define FNV0 0xcbf29ce484222325ULL
#define FOLD(h, v)               \
  do {                           \
    uint64_t v_ = (uint64_t)(v); \
    h = fnv(h, &v_, sizeof v_);  \
  } while (0)

/* ---- cycle scenarios ------------------------------------------------------------------------ */

typedef struct cyc_scenario {
  const char *name, *die, *layout;
  int mst, slv, yx, compat;
  const char *pattern; /* rand SEED N [SPREAD] | hot RD ROUNDS | a2a SHIFT N | csv FILE */
  int a, b, c;
  const char *csv;
  int burst_max;                 /* rand: bursts 1..burst_max (0: 4) */
  double noc_ghz, drv_ghz, axi_gbs, ddr_var_ns; /* 0: the default */
} cyc_scenario;

static const cyc_scenario cyc_scenarios[] = {
    {"rand1", "2261_5x4", "2die", 64, 64, 0, 0, "rand", 1, 3000, 0, NULL, 0, 0, 0, 0, 0},
    {"rand2s", "2261_5x4", "2die", 16, 16, 0, 0, "rand", 2, 4000, 3000, NULL, 0, 0, 0, 0, 0},
    {"rand3yx", "2261_5x4", "2die", 64, 64, 1, 0, "rand", 3, 3000, 0, NULL, 0, 0, 0, 0, 0},
    {"rand4_4d", "5x4", "4die", 16, 64, 0, 0, "rand", 4, 3000, 2000, NULL, 0, 0, 0, 0, 0},
    {"rand5_1d", "5x4", "1die", 64, 64, 0, 0, "rand", 5, 4000, 0, NULL, 8, 0, 0, 0, 0},
    {"rand6c", "2261_5x4", "2die", 64, 64, 0, 1, "rand", 6, 3000, 0, NULL, 0, 0, 0, 0, 0},
    {"rand7c4", "5x4", "4die", 64, 64, 0, 1, "rand", 7, 3000, 0, NULL, 0, 0, 0, 256, 0},
    {"rand8frac", "5x4", "1die", 64, 64, 0, 0, "rand", 8, 2000, 0, NULL, 0, 2.5, 0, 0, 0},
    {"rand9fc", "5x4", "1die", 64, 64, 0, 1, "rand", 9, 2000, 0, NULL, 0, 2.5, 0, 0, 0},
    {"rand10var", "2261_5x4", "2die", 32, 32, 0, 0, "rand", 10, 3000, 500, NULL, 0, 0, 1.5, 0, 20},
    {"rand11sp", "5x4", "2die_spread", 64, 64, 0, 0, "rand", 11, 4000, 0, NULL, 0, 0, 0, 0, 0},
    {"rand12yc", "5x4", "2die", 32, 64, 1, 1, "rand", 12, 3000, 0, NULL, 0, 0, 0, 0, 0},
    {"rand13y4", "5x4", "4die", 64, 64, 1, 0, "rand", 13, 3000, 1000, NULL, 0, 0, 0, 0, 0},
    {"hotw", "5x4", "1die", 128, 64, 0, 1, "hot", 0, 8, 0, NULL, 0, 0, 0, 0, 0},
    {"hotr", "5x4", "1die", 128, 64, 0, 1, "hot", 1, 8, 0, NULL, 0, 0, 0, 0, 0},
    {"hot2", "2261_5x4", "2die", 128, 64, 0, 0, "hot", 0, 16, 0, NULL, 0, 0, 0, 0, 0},
    {"hot2y", "2261_5x4", "2die", 128, 64, 1, 0, "hot", 1, 16, 0, NULL, 0, 0, 0, 0, 0},
    {"a2a1", "2261_5x4", "2die", 64, 64, 0, 0, "a2a", 1, 200, 0, NULL, 0, 0, 0, 0, 0},
    {"a2a3", "2261_5x4", "2die", 64, 64, 0, 0, "a2a", 3, 200, 0, NULL, 0, 0, 0, 0, 0},
    {"a2a4c", "2261_5x4", "2die", 64, 64, 0, 1, "a2a", 4, 200, 0, NULL, 0, 0, 0, 0, 0},
    {"mix2", "2261_5x4", "2die", 128, 64, 0, 1, "csv", 0, 0, 0, "mixed_2die.csv", 0, 0, 0, 256, 0},
    {"mix4", "2261_5x4", "4die", 128, 64, 0, 1, "csv", 0, 0, 0, "mixed_4die.csv", 0, 0, 0, 256, 0},
};
#define NUM_CYC (sizeof cyc_scenarios / sizeof cyc_scenarios[0])

typedef struct inj {
  uint64_t at;
  dcin_place p;
} inj;

static uint64_t xorshift(uint64_t *r) {
  *r ^= *r << 13;
  *r ^= *r >> 7;
  *r ^= *r << 17;
  return *r;
}

/* The requests of a scenario, by injection cycle (stable); NULL on a bad scenario. */
static inj *cyc_requests(const cyc_scenario *sc, const dcin_sim *s, const char *data_dir,
                         size_t *count) {
  int nodes = s->cfg.nodes, dies = s->ndies;
  size_t n = 0, cap = 1024;
  inj *in = malloc(cap * sizeof *in);
#define ADD(at_, ...)                                       \
  do {                                                      \
    if (n == cap) {                                         \
      inj *g = realloc(in, (cap *= 2) * sizeof *in);        \
      if (!g) return free(in), NULL;                        \
      in = g;                                               \
    }                                                       \
    in[n++] = (inj){(uint64_t)(at_), (dcin_place){__VA_ARGS__}}; \
  } while (0)
  if (!in) return NULL;
  if (!strcmp(sc->pattern, "rand")) {
    uint64_t r = 88172645463325252ULL + (uint64_t)sc->a * 0x9e3779b97f4a7c15ULL;
    int bmax = sc->burst_max ? sc->burst_max : 4;
    for (int i = 0; i < sc->b; i++) {
      int sd = (int)(xorshift(&r) % (unsigned)dies), dd = (int)(xorshift(&r) % (unsigned)dies);
      if (s->layout.num_links == 0) dd = sd;
      if (sd != dd && !(s->linked_dies[sd] & 1u << dd)) dd = sd;
      uint64_t at = sc->c ? xorshift(&r) % (uint64_t)sc->c : 0;
      int sn = (int)(xorshift(&r) % (unsigned)nodes), gi = (int)(xorshift(&r) % 2);
      int dn = (int)(xorshift(&r) % (unsigned)nodes), di = (int)(xorshift(&r) % 2);
      int rd = (int)(xorshift(&r) % 2), burst = 1 + (int)(xorshift(&r) % (unsigned)bmax);
      ADD(at, sd, sn, DCIN_IP_GDMA0 + gi, dd, dn, DCIN_IP_DDR0 + di, rd, burst);
    }
  } else if (!strcmp(sc->pattern, "hot")) {
    for (int k = 0; k < sc->b; k++)
      for (int i = 0; i < nodes; i++)
        ADD(0, 0, i, DCIN_IP_GDMA0, dies - 1, nodes - 1, DCIN_IP_DDR0, sc->a, 4);
  } else if (!strcmp(sc->pattern, "a2a")) {
    int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35}, np = dies >= 2 ? 8 : 4;
    uint64_t ch[64] = {0};
    for (int k = 0; k < sc->b; k++)
      for (int i = 0; i < np; i++) {
        int src = parts[i], dst = parts[(i + sc->a) % np], c = (int)(ch[src]++ % 2);
        ADD(0, src / nodes, src % nodes, DCIN_IP_GDMA0 + c, dst / nodes, dst % nodes,
            DCIN_IP_DDR0 + c, k % 3 == 0, 4);
      }
  } else if (!strcmp(sc->pattern, "csv")) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", data_dir, sc->csv);
    FILE *f = fopen(path, "r");
    if (!f) return free(in), NULL;
    char line[160];
    int t;
    dcin_place pl;
    while (fgets(line, sizeof line, f))
      if (cs_test_dcin_csv_line(line, &t, &pl)) {
        ADD((uint64_t)t * 2, pl.src_die, pl.src_node, pl.src_ip, pl.dst_die, pl.dst_node,
            pl.dst_ip, pl.is_read, pl.burst);
      }
    fclose(f);
  } else {
    free(in);
    return NULL;
  }
#undef ADD
  for (size_t i = 1; i < n; i++) { /* by time, stable */
    inj x = in[i];
    size_t k = i;
    while (k > 0 && in[k - 1].at > x.at) in[k] = in[k - 1], k--;
    in[k] = x;
  }
  *count = n;
  return in;
}

/* Runs a cycle scenario (each rsp injected in the cycle its req phase completes); its line into
 * out.  Returns 0, or -1 when the scenario cannot be built. */
static int run_cyc(const cyc_scenario *sc, const char *data_dir, char *out, size_t cap) {
  cs_die_params p;
  cs_layout l;
  cs_adapter_config a;
  cs_err err;
  memset(&a, 0, sizeof a);
  if (cs_topo_die(sc->die, &p, &err) || cs_topo_layout(sc->layout, &l, &err)) {
    snprintf(out, cap, "%s: %.400s", sc->name, err.msg);
    return -1;
  }
  a.driver_cycle_frequency_ghz = sc->drv_ghz ? sc->drv_ghz : 1.0;
  a.ip_frequency_ghz = 1.0;
  a.noc_frequency_ghz = sc->noc_ghz ? sc->noc_ghz : 2.0;
  a.mst_rd_outstanding = a.mst_wr_outstanding = sc->mst;
  a.slv_rd_outstanding = a.slv_wr_outstanding = sc->slv;
  a.burst_length = 8;
  a.bw_bytes = 128;
  if (sc->axi_gbs) l.axi_bw_gb_per_s = sc->axi_gbs;
  if (sc->ddr_var_ns) p.ddr_r_latency_var_ns = sc->ddr_var_ns;
  p.routing_yx = sc->yx;
  dcin_sim *s = NULL;
  if (dcin_sim_create(&p, &l, &a, &s, &err)) {
    snprintf(out, cap, "%s: %.400s", sc->name, err.msg);
    return -1;
  }
  s->cfg.crossring_compat = sc->compat != 0;
  size_t n = 0;
  inj *in = cyc_requests(sc, s, data_dir, &n);
  if (!in) {
    snprintf(out, cap, "%s: no requests", sc->name);
    dcin_sim_destroy(s);
    return -1;
  }
  size_t next = 0;
  uint64_t id = 0, trail = FNV0, limit = 2000000;
  while ((next < n || s->active_txns || s->nflits) && s->cyc < limit && !s->fault[0]) {
    while (next < n && in[next].at <= s->cyc) {
      if (dcin_inject_phys(s, id++, &in[next].p, &err) < 0) {
        snprintf(out, cap, "%s: inject %zu: %.400s", sc->name, next, err.msg);
        free(in);
        dcin_sim_destroy(s);
        return -1;
      }
      next++;
    }
    uint64_t e = dcin_next_event(s), bound = next < n ? in[next].at : limit;
    if (e == DCIN_NO_CYCLE || e > bound) e = bound;
    if (e > s->cyc) {
      s->st.skipped_cycles += e - s->cyc;
      s->cyc = e;
      continue;
    }
    dcin_cycle(s);
    FOLD(trail, s->cyc);
    FOLD(trail, s->st.flit_hops);
    FOLD(trail, s->st.flits_injected);
    FOLD(trail, s->st.flits_ejected);
    FOLD(trail, s->nflits);
    while (s->comp_n) {
      cs_completion c = s->comp[s->comp_head];
      s->comp_head = (s->comp_head + 1) % s->comp_cap;
      s->comp_n--;
      FOLD(trail, c.request_id);
      FOLD(trail, c.phase);
      FOLD(trail, c.tick);
      if (c.phase == CS_PHASE_REQ) dcin_rsp(s, dcin_txn_find(s, c.request_id), NULL);
    }
  }
  uint64_t txh = FNV0;
  for (uint64_t i = 0; i < id; i++) {
    uint32_t t = dcin_txn_find(s, i);
    if (t == DCIN_NIL) continue;
    const dcin_txn *x = &s->txns[t];
    const uint64_t stamps[13] = {x->t_inject,   x->t_reserve,    x->t_req_noc,  x->t_sn_req,
                                 x->t_req_done, x->t_rsp_inject, x->t_dbid_rn,  x->t_data_noc,
                                 x->t_wdata_gen, x->t_data_done, x->t_wdata_d2d, x->t_final,
                                 x->t_cmd_end};
    FOLD(txh, i);
    for (int k = 0; k < 13; k++) FOLD(txh, stamps[k]);
    const uint32_t *counters = &x->retries; /* retries, ten block counters, eject_fail */
    for (int k = 0; k < 12; k++) FOLD(txh, counters[k]);
  }
  const dcin_stats *st = &s->st;
  snprintf(out, cap,
           "%s cycles %llu fault '%s' txns %llu hops %llu inj %llu ej %llu skip %llu itag %llu %llu "
           "etag %llu %llu full %llu retries %llu %llu trail %016llx txns %016llx",
           sc->name, (unsigned long long)s->cyc, s->fault, (unsigned long long)id,
           (unsigned long long)st->flit_hops, (unsigned long long)st->flits_injected,
           (unsigned long long)st->flits_ejected, (unsigned long long)st->skipped_cycles,
           (unsigned long long)st->itag_h, (unsigned long long)st->itag_v,
           (unsigned long long)st->etag_t1, (unsigned long long)st->etag_t0,
           (unsigned long long)st->full_ring_cycles, (unsigned long long)st->retries_rd,
           (unsigned long long)st->retries_wr, (unsigned long long)trail,
           (unsigned long long)txh);
  free(in);
  dcin_sim_destroy(s);
  return 0;
}

/* ---- job scenarios -------------------------------------------------------------------------- */

typedef struct job_scenario {
  const char *name;
  cs_primitive prim;
  cs_algorithm algo;
  unsigned long long bytes;
  const char *topo, *layout;
  int dies, mst, burst, np;
  int parts[8];
} job_scenario;

static const job_scenario job_scenarios[] = {
    {"j_a2a_2die", CS_PRIM_ALLTOALL, CS_ALGO_PAIRWISE, 1u << 20, "2261_5x4", "2die", 2, 64, 4, 8,
     {0, 5, 10, 15, 20, 25, 30, 35}},
    {"j_ar_2die", CS_PRIM_ALLREDUCE, CS_ALGO_RING, 256u << 10, "2261_5x4", "2die", 2, 16, 2, 8,
     {0, 5, 10, 15, 20, 25, 30, 35}},
    {"j_ag_2die", CS_PRIM_ALLGATHER, CS_ALGO_RING, 256u << 10, "2261_5x4", "2die", 2, 16, 2, 8,
     {0, 5, 10, 15, 20, 25, 30, 35}},
    {"j_rs_2die", CS_PRIM_REDUCESCATTER, CS_ALGO_RING, 256u << 10, "2261_5x4", "2die", 2, 16, 2, 8,
     {0, 5, 10, 15, 20, 25, 30, 35}},
    {"j_a2a_4die", CS_PRIM_ALLTOALL, CS_ALGO_PAIRWISE, 256u << 10, "5x4", "4die", 4, 64, 4, 8,
     {0, 10, 20, 30, 40, 50, 60, 70}},
    {"j_ar_spread", CS_PRIM_ALLREDUCE, CS_ALGO_RING, 1u << 20, "5x4", "2die_spread", 2, 64, 4, 8,
     {0, 5, 10, 15, 20, 25, 30, 35}},
    {"j_ar_1die", CS_PRIM_ALLREDUCE, CS_ALGO_RING, 64u << 10, "5x4", "1die", 1, 16, 4, 8,
     {0, 3, 5, 6, 9, 10, 12, 15}},
    {"j_a2a_1die", CS_PRIM_ALLTOALL, CS_ALGO_PAIRWISE, 64u << 10, "5x4", "1die", 1, 16, 2, 4,
     {0, 1, 2, 3}},
};
#define NUM_JOB (sizeof job_scenarios / sizeof job_scenarios[0])

static void job_of(const job_scenario *sc, cs_job *job) {
  memset(job, 0, sizeof *job);
  cs_adapter_config *a = &job->adapter;
  snprintf(a->mode, sizeof a->mode, "dcin");
  snprintf(a->topology, sizeof a->topology, "%s", sc->topo);
  a->num_dies = sc->dies;
  snprintf(a->dcin_layout, sizeof a->dcin_layout, "%s", sc->layout);
  snprintf(a->endpoint_id_scheme, sizeof a->endpoint_id_scheme, "mvp");
  a->num_initiators = a->num_targets = 20 * sc->dies;
  a->driver_cycle_frequency_ghz = 1.0;
  a->ip_frequency_ghz = 1.0;
  a->noc_frequency_ghz = 2.0;
  a->mst_rd_outstanding = a->mst_wr_outstanding = sc->mst;
  a->slv_rd_outstanding = a->slv_wr_outstanding = 64;
  a->burst_length = sc->burst;
  a->bw_bytes = 128;
  snprintf(job->engine.name, sizeof job->engine.name, "dcin");
  job->engine.deadlock_guard_ticks = 10000000;
  cs_spec *sp = &job->spec;
  snprintf(sp->dtype, sizeof sp->dtype, "bf16");
  snprintf(sp->chip_spec_summary, sizeof sp->chip_spec_summary, "{}");
  sp->primitive = sc->prim;
  sp->algorithm = sc->algo;
  sp->msg_size_bytes = sc->bytes;
  sp->num_participants = sc->np;
  for (int i = 0; i < sc->np; i++) sp->participants[i] = sc->parts[i];
}

#define HASH_COLUMN(ctype, name, dim, kind, unit, flags, doc) \
  h = fnv(h, &rec[i].name, sizeof rec[i].name);
static uint64_t records_hash(const cs_txn_record *rec, uint64_t n) {
  uint64_t h = FNV0;
  for (uint64_t i = 0; i < n; i++) {
    CS_TXN_RECORD_COLUMNS(HASH_COLUMN)
  }
  return h;
}

/* Runs a job scenario through L1 and the L2 driver, attached to ctx; its line into out. */
static int run_job(const job_scenario *sc, cs_dcin_reuse *ctx, char *out, size_t cap) {
  cs_job job;
  job_of(sc, &job);
  cs_err err;
  cs_plan plan;
  if (cs_expand(&job, &plan, &err)) {
    snprintf(out, cap, "%s: expand: %.400s", sc->name, err.msg);
    return -1;
  }
  cs_txn_record *rec = calloc(plan.num_txns ? plan.num_txns : 1, sizeof *rec);
  void *e = NULL;
  int rc = !rec || cs_dcin_ops.create(&job, &e, &err) || cs_dcin_reuse_attach(e, ctx);
  if (!rc) rc = cs_drive(&job, &plan, &cs_dcin_ops, e, rec, &err);
  if (rc) {
    snprintf(out, cap, "%s: %.400s", sc->name, err.msg);
  } else {
    cs_engine_stats st;
    cs_dcin_ops.stats(e, &st);
    snprintf(out, cap, "%s cycles %llu skipped %llu hops %llu txns %llu records %016llx", sc->name,
             (unsigned long long)st.sim_cycles, (unsigned long long)st.skipped_cycles,
             (unsigned long long)st.flit_hops, (unsigned long long)plan.num_txns,
             (unsigned long long)records_hash(rec, plan.num_txns));
  }
  cs_dcin_ops.destroy(e);
  free(rec);
  cs_plan_free(&plan);
  return rc ? -1 : 0;
}

/* Every scenario's line, in order: the cycle scenarios, then the job scenarios (one reuse
 * context for all of them); quick: the first three of each. */
typedef void (*line_fn)(void *ctx, const char *line, int rc);
static void run_all(const char *data_dir, bool quick, line_fn fn, void *ctx) {
  char line[512];
  for (size_t i = 0; i < NUM_CYC && (!quick || i < 3); i++) {
    int rc = run_cyc(&cyc_scenarios[i], data_dir, line, sizeof line);
    fn(ctx, line, rc);
  }
  cs_dcin_reuse *reuse = cs_dcin_reuse_new();
  for (size_t i = 0; i < NUM_JOB && (!quick || i < 3); i++) {
    int rc = run_job(&job_scenarios[i], reuse, line, sizeof line);
    fn(ctx, line, rc);
  }
  cs_dcin_reuse_free(reuse);
}

#ifdef DCIN_ORACLE_MAIN
/* The expected file: every line of this build (compiled against the oracle's build). */
static void print_line(void *ctx, const char *line, int rc) {
  (void)ctx;
  (void)rc;
  puts(line);
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: dcin_oracle TEST-DATA-DIR\n"), 2;
  run_all(argv[1], false, print_line, NULL);
  return 0;
}
#else
#include <check.h>

#include "test_support.h"

typedef struct expect {
  char lines[64][512];
  int n, next;
  int differ;       /* scenarios whose line differs */
  char report[4096]; /* the first of them, expected and got */
} expect;

/* Compares a scenario's line with the next expected one; the test fails after the last scenario,
 * naming every scenario that differs. */
static void check_line(void *ctx, const char *line, int rc) {
  expect *x = ctx;
  ck_assert_msg(rc == 0, "scenario failed: %s", line);
  ck_assert_msg(x->next < x->n, "no expected line for: %s", line);
  const char *want = x->lines[x->next++];
  if (strcmp(line, want) && x->differ++ < 4) {
    size_t used = strlen(x->report);
    snprintf(x->report + used, sizeof x->report - used, "\n  expected %s\n  got      %s", want,
             line);
  }
}

START_TEST(test_oracle) {
  static expect x;
  memset(&x, 0, sizeof x);
  FILE *f = fopen(CS_TEST_DATA "/dcin/oracle-2971b48.txt", "r");
  ck_assert_msg(f != NULL, "tests/data/dcin/oracle-2971b48.txt missing");
  while (x.n < 64 && fgets(x.lines[x.n], sizeof x.lines[0], f)) {
    x.lines[x.n][strcspn(x.lines[x.n], "\n")] = '\0';
    x.n++;
  }
  fclose(f);
  ck_assert_int_eq(x.n, (int)(NUM_CYC + NUM_JOB));
  bool quick = cs_test_quick();
  if (!quick) {
    run_all(CS_TEST_DATA "/dcin", false, check_line, &x);
    ck_assert_int_eq(x.next, x.n);
    ck_assert_msg(!x.differ, "%d of %d scenarios differ from 2971b48 (the first four):%s",
                  x.differ, x.n, x.report);
    return;
  }
  /* quick (valgrind): the first three cycle and job scenarios, against their lines */
  expect q;
  memset(&q, 0, sizeof q);
  for (int i = 0; i < 3; i++) memcpy(q.lines[q.n++], x.lines[i], sizeof x.lines[0]);
  for (int i = 0; i < 3; i++) memcpy(q.lines[q.n++], x.lines[NUM_CYC + i], sizeof x.lines[0]);
  run_all(CS_TEST_DATA "/dcin", true, check_line, &q);
  ck_assert_int_eq(q.next, q.n);
  ck_assert_msg(!q.differ, "%d of %d scenarios differ from 2971b48:%s", q.differ, q.n, q.report);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dcin_oracle");
  TCase *tc = tcase_create("against 2971b48");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_oracle);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cs_test_run(suite()); }
#endif
