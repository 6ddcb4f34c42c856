/* Calibration of the DCIN engine against CrossRing's measured figures (crossring-model.md 6.1 and
 * 6.2): isolated single transactions on a KCIN 5x4 die and on the 2-die layout, run through the
 * native flow (each rsp injected in the cycle its req phase completes).  Latencies in ns are
 * round(cycles / 2) with half to even, as CrossRing reports them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dcin/dcin_int.h"
#include "test_dcin.h"
#include "test_support.h"

static void adapter(cs_adapter_config *a) { cs_test_dcin_adapter(a, 128, 64); }

static dcin_sim *make(const char *die, const char *layout) {
  return cs_test_dcin_sim(die, layout, 128, 64, false, true);
}

typedef struct one {
  double cmd_ns, data_ns, trans_ns;
  uint64_t req_noc, sn_req, dbid_rn, data_noc, data_done, final;
} one;

/* One isolated transaction, native flow. */
static one run_one_ch(const char *die, const char *layout, int sd, int sn, int dd, int dn, int ddr,
                      bool rd) {
  dcin_sim *s = make(die, layout);
  cs_err err;
  int t = dcin_inject_phys(
      s, 1, &(dcin_place){sd, sn, DCIN_IP_GDMA0, dd, dn, DCIN_IP_DDR0 + ddr, rd, 4}, &err);
  ck_assert_int_ge(t, 0);
  dcin_run_native(s, 100000);
  const dcin_txn *x = &s->txns[t];
  ck_assert_msg(!s->fault[0], "%s", s->fault);
  ck_assert_msg(x->done_final, "transaction did not complete");
  ck_assert_int_eq(s->nflits, 0);
  one o;
  o.req_noc = x->t_req_noc, o.sn_req = x->t_sn_req, o.dbid_rn = x->t_dbid_rn;
  o.data_noc = x->t_data_noc, o.data_done = x->t_data_done, o.final = x->t_final;
  o.cmd_ns = dcin_cycles_to_ns(&s->cfg, x->t_cmd_end - x->t_req_noc);
  o.data_ns = dcin_cycles_to_ns(&s->cfg, x->t_data_done - x->t_data_noc);
  uint64_t end = x->t_final + ((!rd && !x->cross) ? s->cfg.sn_release : 0);
  o.trans_ns = dcin_cycles_to_ns(&s->cfg, end - x->t_reserve);
  if (getenv("CS_DCIN_VERBOSE"))
    printf(
        "%s d%d:%d->d%d:%d %s: cmd %.0f data %.0f trans %.0f | noc %llu sn %llu dbid %lld "
        "data_noc %llu done %llu final %llu\n",
        die, sd, sn, dd, dn, rd ? "R" : "W", o.cmd_ns, o.data_ns, o.trans_ns,
        (unsigned long long)o.req_noc, (unsigned long long)o.sn_req,
        (long long)(o.dbid_rn == DCIN_NO_CYCLE ? -1 : (long long)o.dbid_rn),
        (unsigned long long)o.data_noc, (unsigned long long)o.data_done,
        (unsigned long long)o.final);
  dcin_sim_destroy(s);
  return o;
}

static one run_one(const char *die, const char *layout, int sd, int sn, int dd, int dn, bool rd) {
  return run_one_ch(die, layout, sd, sn, dd, dn, 0, rd);
}

typedef struct kcase {
  int src, dst;
  bool rd;
  double cmd, data, trans;
  uint64_t sn, dbid, data_noc, done;
} kcase;

/* crossring-model.md 6.1 */
static const kcase kcin[] = {
    {0, 0, true, 4, 6, 53, 8, 0, 93, 106},       {0, 1, true, 10, 12, 65, 20, 0, 105, 130},
    {5, 10, true, 14, 18, 75, 30, 0, 115, 150},  {0, 19, true, 36, 40, 119, 74, 0, 159, 238},
    {0, 0, false, 10, 6, 59, 8, 22, 25, 38},     {0, 1, false, 22, 12, 77, 20, 46, 49, 74},
    {5, 10, false, 32, 18, 92, 30, 66, 69, 104}, {0, 19, false, 76, 40, 158, 74, 154, 157, 236},
};

START_TEST(kcin_isolated_should_match_crossring_cycles) {
  const kcase *k = &kcin[_i];
  one o = run_one("5x4", "1die", 0, k->src, 0, k->dst, k->rd);
  ck_assert_uint_eq(o.req_noc, 1);
  ck_assert_uint_eq(o.sn_req, k->sn);
  if (!k->rd) ck_assert_uint_eq(o.dbid_rn, k->dbid);
  ck_assert_uint_eq(o.data_noc, k->data_noc);
  ck_assert_uint_eq(o.data_done, k->done);
  ck_assert_double_eq(o.cmd_ns, k->cmd);
  ck_assert_double_eq(o.data_ns, k->data);
  ck_assert_double_eq(o.trans_ns, k->trans);
}
END_TEST

typedef struct dcase {
  int sn, dd, dn;
  bool rd;
  double trans;
} dcase;

/* crossring-model.md 6.2: gdma at die0 node s -> ddr_0 at die d node t */
static const dcase dcin2[] = {
    {0, 0, 19, true, 243},  {0, 1, 19, true, 264},  {5, 1, 5, true, 278},  {19, 1, 19, true, 344},
    {0, 0, 19, false, 179}, {0, 1, 19, false, 123}, {5, 1, 5, false, 164}, {19, 1, 19, false, 283},
};

START_TEST(dcin_2die_isolated_should_match_crossring_latency) {
  const dcase *k = &dcin2[_i];
  one o = run_one("2261_5x4", "2die", 0, k->sn, k->dd, k->dn, k->rd);
  ck_assert_double_eq(o.trans_ns, k->trans);
}
END_TEST

/* 4-die layout, measured on CrossRing the same way (not in crossring-model.md): a read from die 0
 * node 0 to die 3 node 19 (ddr_0, link 0:1-3:12) takes 278 ns with the remote DDR receiving the
 * REQ at cycle 120 (CrossRing stamps are 2 cycles later than ours, its DCIN loop starts at 1); a
 * write from die 0 node 5 to die 2 node 10 on ddr_1 (link 0:8-2:4) takes 164 ns. */
START_TEST(dcin_4die_isolated_should_match_crossring_latency) {
  one r = run_one_ch("2261_5x4", "4die", 0, 0, 3, 19, 0, true);
  ck_assert_double_eq(r.trans_ns, 278);
  ck_assert_uint_eq(r.sn_req, 118);
  one w = run_one_ch("2261_5x4", "4die", 0, 5, 2, 10, 1, false);
  ck_assert_double_eq(w.trans_ns, 164);
}
END_TEST

/* Contended runs measured on CrossRing (not in crossring-model.md): every gdma_0 of the 5x4 die
 * sends `rounds` requests to ddr_0 at node 19, all at t = 0, in the order round-major.  With the
 * engine's crossring_compat switch (which reproduces the reference's scan and arbiter quirks) the
 * last completion, the Retry count and the sum of all completion cycles equal CrossRing's, i.e.
 * the runs agree flit for flit; the intended model (switch off) is listed in docs/dcin-model.md. */
typedef struct hot {
  int rounds;
  bool rd;
  uint64_t end, retries, sum;
} hot;

static const hot hots[] = {
    {4, false, 674, 12, 31798},
    {8, false, 1310, 92, 116612},
    {8, true, 1428, 89, 124240},
};

START_TEST(hotspot_in_compat_mode_should_match_crossring_flit_for_flit) {
  const hot *h = &hots[_i];
  dcin_sim *s = make("5x4", "1die");
  s->cfg.crossring_compat = true;
  s->check_each_cycle = !cs_test_quick();
  cs_err err;
  uint64_t id = 0;
  for (int k = 0; k < h->rounds; k++)
    for (int i = 0; i < 20; i++)
      ck_assert_int_ge(
          dcin_inject_phys(s, id++,
                           &(dcin_place){0, i, DCIN_IP_GDMA0, 0, 19, DCIN_IP_DDR0, h->rd, 4}, &err),
          0);
  dcin_run_native(s, 100000);
  ck_assert_msg(!s->fault[0], "%s", s->fault);
  uint64_t end = 0, sum = 0, retries = 0;
  for (uint32_t t = 0; t < s->ntxns; t++) {
    const dcin_txn *x = &s->txns[t];
    uint64_t e = h->rd ? x->t_final : x->t_data_done;
    sum += e;
    if (e > end) end = e;
    retries += x->retries;
  }
  ck_assert_uint_eq(end, h->end);
  ck_assert_uint_eq(retries, h->retries);
  ck_assert_uint_eq(sum, h->sum);
  dcin_sim_destroy(s);
}
END_TEST

/* The same on the 2-die layout, across the dies: every gdma_0 of die 0 sends 4 requests to ddr_0
 * at die 1 node 19 (all through the link 0:0-1:3).  CrossRing runs its AXI channels at 256 GB/s
 * whatever the layout says, so the comparison sets that; its stamps are 2 cycles later than ours
 * (its DCIN loop starts at cycle 1): last completion 1242 / 774, sums 70920 / 38526. */
START_TEST(cross_die_hotspot_in_compat_mode_should_match_crossring_flit_for_flit) {
  static const hot dh[] = {{4, true, 1240, 16, 70920 - 160}, {4, false, 772, 1, 38526 - 160}};
  const hot *h = &dh[_i];
  cs_die_params p;
  cs_layout l;
  cs_adapter_config a;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("2261_5x4", &p, &err), 0);
  ck_assert_int_eq(cs_topo_layout("2die", &l, &err), 0);
  l.axi_bw_gb_per_s = 256;
  adapter(&a);
  dcin_sim *s = NULL;
  ck_assert_int_eq(dcin_sim_create(&p, &l, &a, &s, &err), 0);
  s->cfg.crossring_compat = true;
  s->check_each_cycle = !cs_test_quick();
  uint64_t id = 0;
  for (int k = 0; k < h->rounds; k++)
    for (int i = 0; i < 20; i++)
      ck_assert_int_ge(
          dcin_inject_phys(s, id++,
                           &(dcin_place){0, i, DCIN_IP_GDMA0, 1, 19, DCIN_IP_DDR0, h->rd, 4}, &err),
          0);
  dcin_run_native(s, 100000);
  ck_assert_msg(!s->fault[0], "%s", s->fault);
  uint64_t end = 0, sum = 0, retries = 0;
  for (uint32_t t = 0; t < s->ntxns; t++) {
    sum += s->txns[t].t_final;
    if (s->txns[t].t_final > end) end = s->txns[t].t_final;
    retries += s->txns[t].retries;
  }
  ck_assert_uint_eq(end, h->end);
  ck_assert_uint_eq(retries, h->retries);
  ck_assert_uint_eq(sum, h->sum);
  dcin_sim_destroy(s);
}
END_TEST

/* NoC at 2.5 GHz, IP at 1 GHz: sim cycles of 0.2 ns, NoC every 2, IP every 5.  CrossRing does
 * its IP work only on cycles that are also NoC cycles (every 10: the IP side runs at 0.5 GHz);
 * with crossring_compat we match it (read done 540, write DBID 320 / data 332 / done 510:
 * measured on CrossRing), and the intended model runs the IP side at its own clock (525;
 * 315 / 322 / 485).  Those four are golden values, not derived: the engine's own output when
 * the deviation was introduced (docs/dcin-model.md, deviation 13), since no reference models an
 * IP clock apart from the NoC's. */
START_TEST(fractional_noc_clock_should_match_crossring_in_compat_mode) {
  for (int compat = 0; compat < 2; compat++)
    for (int rd = 0; rd < 2; rd++) {
      cs_die_params p;
      cs_layout l;
      cs_adapter_config a;
      cs_err err;
      ck_assert_int_eq(cs_topo_die("5x4", &p, &err), 0);
      ck_assert_int_eq(cs_topo_layout("1die", &l, &err), 0);
      adapter(&a);
      a.noc_frequency_ghz = 2.5;
      dcin_sim *s = NULL;
      ck_assert_int_eq(dcin_sim_create(&p, &l, &a, &s, &err), 0);
      ck_assert_int_eq(s->cfg.net_scale, 2);
      ck_assert_int_eq(s->cfg.ip_scale, 5);
      s->cfg.crossring_compat = compat;
      s->check_each_cycle = true;
      ck_assert_int_ge(
          dcin_inject_phys(s, 1, &(dcin_place){0, 0, DCIN_IP_GDMA0, 0, 19, DCIN_IP_DDR0, rd, 4},
                           &err),
          0);
      dcin_run_native(s, 100000);
      ck_assert_msg(!s->fault[0], "%s", s->fault);
      const dcin_txn *x = &s->txns[0];
      ck_assert_uint_eq(x->t_req_noc, 2);
      ck_assert_uint_eq(x->t_sn_req, 150);
      if (rd) {
        ck_assert_uint_eq(x->t_data_noc, 362);
        ck_assert_uint_eq(x->t_data_done, compat ? 540 : 525);
      } else {
        ck_assert_uint_eq(x->t_dbid_rn, compat ? 320 : 315);
        ck_assert_uint_eq(x->t_data_noc, compat ? 332 : 322);
        ck_assert_uint_eq(x->t_data_done, compat ? 510 : 485);
      }
      dcin_sim_destroy(s);
    }
}
END_TEST

/* Mixed reads and writes in CrossRing's traffic format (tests/data/dcin): 320 requests from all 40
 * GDMAs of the 2-die layout and 120 from every other GDMA of the 4-die layout, to a few hot nodes
 * on all dies.  In compat mode, with the AXI channels at CrossRing's effective 256 GB/s, the last
 * completion and the sum of all completion cycles equal CrossRing's (less its 2-cycle origin). */
typedef struct mixed {
  const char *file, *layout;
  uint64_t n, end, sum; /* CrossRing's own stamps */
} mixed;

static const mixed mixes[] = {
    {"mixed_2die.csv", "2die", 320, 742, 125428},
    {"mixed_4die.csv", "4die", 120, 692, 50944},
};

START_TEST(mixed_traffic_in_compat_mode_should_match_crossring) {
  const mixed *m = &mixes[_i];
  cs_die_params p;
  cs_layout l;
  cs_adapter_config a;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("2261_5x4", &p, &err), 0);
  ck_assert_int_eq(cs_topo_layout(m->layout, &l, &err), 0);
  l.axi_bw_gb_per_s = 256;
  adapter(&a);
  dcin_sim *s = NULL;
  ck_assert_int_eq(dcin_sim_create(&p, &l, &a, &s, &err), 0);
  s->cfg.crossring_compat = true;
  s->check_each_cycle = !cs_test_quick();
  char path[512];
  snprintf(path, sizeof path, "%s/dcin/%s", CS_TEST_DATA, m->file);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char line[160];
  uint64_t id = 0;
  int t_ns;
  dcin_place pl;
  while (fgets(line, sizeof line, f))
    if (cs_test_dcin_csv_line(line, &t_ns, &pl))
      ck_assert_int_ge(dcin_inject_phys(s, id++, &pl, &err), 0);
  fclose(f);
  ck_assert_uint_eq(id, m->n);
  dcin_run_native(s, 100000);
  ck_assert_msg(!s->fault[0], "%s", s->fault);
  uint64_t end = 0, sum = 0;
  for (uint32_t t = 0; t < s->ntxns; t++) {
    const dcin_txn *x = &s->txns[t];
    uint64_t e = (x->is_read || x->cross) ? x->t_final : x->t_data_done;
    sum += e;
    if (e > end) end = e;
  }
  ck_assert_uint_eq(end, m->end - 2);
  ck_assert_uint_eq(sum, m->sum - 2 * m->n);
  dcin_sim_destroy(s);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dcin_calib");
  TCase *tc = tcase_create("kcin");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, kcin_isolated_should_match_crossring_cycles, 0,
                      (int)(sizeof kcin / sizeof kcin[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("dcin_2die");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, dcin_2die_isolated_should_match_crossring_latency, 0,
                      (int)(sizeof dcin2 / sizeof dcin2[0]));
  tcase_add_test(tc, dcin_4die_isolated_should_match_crossring_latency);
  tcase_add_test(tc, fractional_noc_clock_should_match_crossring_in_compat_mode);
  suite_add_tcase(s, tc);
  tc = tcase_create("contended");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, hotspot_in_compat_mode_should_match_crossring_flit_for_flit, 0,
                      (int)(sizeof hots / sizeof hots[0]));
  tcase_add_loop_test(tc, cross_die_hotspot_in_compat_mode_should_match_crossring_flit_for_flit, 0,
                      2);
  tcase_add_loop_test(tc, mixed_traffic_in_compat_mode_should_match_crossring, 0,
                      (int)(sizeof mixes / sizeof mixes[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cs_test_run(suite()); }
