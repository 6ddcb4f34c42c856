/* Unit tests of the DCIN engine's components (rings, E-Tag, I-Tag, trackers with Retry/Pcredit,
 * token buckets, AXI channels, the invariant checker) and of its engine ops (tick conversion,
 * the req/rsp contract, determinism).  Small enough for valgrind.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/dcin.h"
#include "commsweep/drive.h"
#include "commsweep/expand.h"
#include "engine/dcin/dcin_int.h"
#include "test_dcin.h"
#include "test_support.h"

static dcin_sim *make_full(const char *die, const char *layout, int mst, int slv, bool yx) {
  return cs_test_dcin_sim(die, layout, mst, slv, yx, true);
}

static dcin_sim *make(const char *die, const char *layout) {
  return make_full(die, layout, 128, 64, false);
}

/* A flit of a fresh transaction, not placed anywhere yet. */
static uint32_t loose_flit(dcin_sim *s, int src, int dst) {
  uint32_t t;
  cs_err err;
  ck_assert_int_eq(dcin_txn_new(s, 1000 + s->ntxns, &t, &err), 0);
  s->txns[t].burst = 4;
  return dcin_make_flit(s, t, 0, DCIN_NET_REQ, DCIN_K_REQ_RD, src, DCIN_IP_GDMA0, dst,
                        DCIN_IP_DDR0);
}

/* ---- rings -------------------------------------------------------------------------------- */

START_TEST(ring_move_should_advance_one_slice_per_cycle_and_loop_back) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  ck_assert_int_eq(d->rings[0][0].len, 58);     /* 2 * (3 * 9 + 2) */
  ck_assert_int_eq(d->rings[0][5 + 0].len, 76); /* vertical: 2 * (4 * 9 + 2) */
  uint32_t f = loose_flit(s, 3, 0);             /* on TR at node 3, bound for column 0 */
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  int start = d->cp_out[3 * 4 + DCIN_TR];
  dcin_ring_put(g, start, f);
  dcin_rings_move(s, d, DCIN_NET_REQ);
  ck_assert_int_eq(d->cp_in[3 * 4 + DCIN_TL], start + 1); /* edge loop-back onto TL */
  ck_assert_uint_eq(dcin_ring_at(g, start + 1), f);
  for (int k = 0; k < 9; k++) dcin_rings_move(s, d, DCIN_NET_REQ);
  /* CP_IN(3,TL) -> CP_OUT(3,TL) -> 7 link slices -> CP_IN(2,TL): one hop is 9 cycles */
  ck_assert_uint_eq(dcin_ring_at(g, d->cp_in[2 * 4 + DCIN_TL]), f);
  ck_assert_uint_eq(s->st.flit_hops, 10);
  dcin_ring_take(g, d->cp_in[2 * 4 + DCIN_TL]);
  dcin_flit_free(s, f);
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(ring_move_should_stall_at_wrap_behind_slice_zero) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  uint32_t a = loose_flit(s, 0, 3), b = loose_flit(s, 0, 3);
  /* a sits in the last slice (CP_OUT(0,TL)); b in slice 0 (CP_IN(0,TR)) wants to go on */
  dcin_ring_put(g, g->len - 1, a);
  dcin_ring_put(g, 0, b);
  s->flits[a].ecoord = s->flits[b].ecoord = 3; /* column 3: no eject at column 0 */
  dcin_rings_move(s, d, DCIN_NET_REQ);
  ck_assert_uint_eq(dcin_ring_at(g, g->len - 1), a); /* waited: slice 0 was still occupied */
  ck_assert_uint_eq(dcin_ring_at(g, 1), b);
  dcin_rings_move(s, d, DCIN_NET_REQ);
  ck_assert_uint_eq(dcin_ring_at(g, 0), a);
  dcin_ring_take(g, 0);
  dcin_ring_take(g, 2);
  dcin_flit_free(s, a);
  dcin_flit_free(s, b);
  dcin_sim_destroy(s);
}
END_TEST

/* Fills ring 0 of the REQ network completely with flits that eject nowhere. */
static void fill_ring(dcin_sim *s, dcin_ring *g, uint32_t *f) {
  ck_assert_int_le(g->len, 64);
  for (int p = 0; p < g->len; p++) {
    f[p] = loose_flit(s, 0, 3);
    s->flits[f[p]].ecoord = -1; /* ejects nowhere: the ring stays full */
    dcin_ring_put(g, p, f[p]);
  }
}

/* A slotted ring advances every slot every cycle, so a ring with every slice taken rotates as a
 * whole: after k cycles the flit that stood at p stands at (p + k) mod len (by hand). */
START_TEST(ring_move_should_rotate_a_completely_full_ring) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  uint32_t f[64];
  fill_ring(s, g, f);
  for (int k = 1; k <= 3; k++) {
    dcin_rings_move(s, d, DCIN_NET_REQ);
    for (int p = 0; p < g->len; p++) ck_assert_uint_eq(dcin_ring_at(g, (p + k) % g->len), f[p]);
  }
  ck_assert_uint_eq(s->st.flit_hops, 3u * g->len);
  for (int p = 0; p < g->len; p++) dcin_flit_free(s, dcin_ring_take(g, p));
  dcin_sim_destroy(s);
}
END_TEST

/* The reference's downward scan (crossring_compat) leaves a full ring frozen: every flit waits for
 * the slice ahead, and the stop report names that cycle of len flits. */
START_TEST(ring_move_in_compat_should_freeze_a_full_ring_and_report_the_cycle) {
  dcin_sim *s = make("5x4", "1die");
  s->cfg.crossring_compat = true;
  dcin_die *d = &s->dies[0];
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  uint32_t f[64];
  fill_ring(s, g, f);
  for (int k = 0; k < 3; k++) {
    dcin_rings_move(s, d, DCIN_NET_REQ);
    for (int p = 0; p < g->len; p++) ck_assert_uint_eq(dcin_ring_at(g, p), f[p]);
  }
  char buf[2048];
  ck_assert_int_eq(dcin_find_cycle(s, buf, sizeof buf), g->len);
  ck_assert_ptr_nonnull(strstr(buf, "each waits for the slice ahead"));
  ck_assert_int_eq(dcin_wait_chain(s, s->flits[f[5]].txn, buf, sizeof buf), g->len);
  for (int p = 0; p < g->len; p++) dcin_flit_free(s, dcin_ring_take(g, p));
  dcin_sim_destroy(s);
}
END_TEST

/* Reference for ring movement: visit the slices from the last down to 0 and move a flit into the
 * next slice if that slice is empty at that moment, each flit once; a full ring rotates. */
static void scan_reference(uint32_t *sl, int len) {
  bool full = true;
  for (int p = 0; p < len; p++) full = full && sl[p] != DCIN_NIL;
  if (full) {
    uint32_t last = sl[len - 1];
    memmove(sl + 1, sl, sizeof *sl * (size_t)(len - 1));
    sl[0] = last;
    return;
  }
  bool wrapped = false; /* a flit that wrapped into slice 0 has moved this cycle (deviation 10) */
  for (int p = len - 1; p >= 0; p--) {
    int nx = p + 1 == len ? 0 : p + 1;
    if (p == 0 && wrapped) break;
    if (sl[p] != DCIN_NIL && sl[nx] == DCIN_NIL) {
      sl[nx] = sl[p], sl[p] = DCIN_NIL;
      if (p == len - 1) wrapped = true;
    }
  }
}

/* Random fill levels up to full, flits that eject nowhere: the rotating frame moves them exactly
 * as the slice scan does, cycle after cycle. */
START_TEST(ring_move_should_equal_the_slice_scan_at_any_fill) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  uint32_t ref[64];
  uint64_t rng = 0x2545f4914f6cdd1dULL;
  for (int trial = 0; trial < 40; trial++) {
    int fill = trial % 10 == 9 ? 100 : (int)(rng % 101); /* percent; some trials full */
    for (int p = 0; p < g->len; p++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      ref[p] = DCIN_NIL;
      if ((int)(rng % 100) < fill) {
        ref[p] = loose_flit(s, 0, 3);
        s->flits[ref[p]].ecoord = -1;
        dcin_ring_put(g, p, ref[p]);
      }
    }
    for (int k = 0; k < 2 * g->len; k++) {
      dcin_rings_move(s, d, DCIN_NET_REQ);
      scan_reference(ref, g->len);
      for (int p = 0; p < g->len; p++) ck_assert_uint_eq(dcin_ring_at(g, p), ref[p]);
    }
    for (int p = 0; p < g->len; p++)
      if (dcin_ring_at(g, p) != DCIN_NIL) dcin_flit_free(s, dcin_ring_take(g, p));
  }
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(first_lane_should_follow_xy_or_yx) {
  dcin_sim *s = make("5x4", "1die");
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 0, 19), DCIN_TR);
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 19, 0), DCIN_TL);
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 0, 16), DCIN_TD);
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 5, 5), DCIN_IQ_EQ);
  s->cfg.yx = true;
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 0, 19), DCIN_TD);
  ck_assert_int_eq(dcin_first_lane(&s->cfg, 19, 16), DCIN_TL);
  dcin_sim_destroy(s);
}
END_TEST

/* ---- E-Tag ------------------------------------------------------------------------------ */

START_TEST(etag_should_upgrade_t2_to_t0_on_tl_and_win_the_t0_entry) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TL][DCIN_T2], 15);
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TL][DCIN_T0], 1);
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TR][DCIN_T2], 16);
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TR][DCIN_T0], 0);
  dcin_node *nd = &d->nodes[DCIN_NET_REQ][1];
  int fifo = dcin_etag_fifo(&s->cfg, DCIN_TL);
  nd->ue[fifo][DCIN_T2] = 15; /* every T2 entry taken */
  uint32_t f = loose_flit(s, 3, 1);
  s->flits[f].slot = 7;
  ck_assert(!dcin_eject_to_node(s, d, DCIN_NET_REQ, 1, DCIN_TL, f));
  dcin_etag_fail(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, f);
  ck_assert_int_eq(s->flits[f].etag, DCIN_T0);
  ck_assert(s->flits[f].in_t0_table);
  ck_assert(dcin_eject_to_node(s, d, DCIN_NET_REQ, 1, DCIN_TL, f));
  ck_assert_int_eq(s->flits[f].used_entry, DCIN_T0);
  ck_assert(!s->flits[f].in_t0_table);
  ck_assert_uint_eq(nd->t0_ptr[0], 1);
  ck_assert_uint_eq(s->txns[s->flits[f].txn].eject_fail, 1);
  /* a TR flit never upgrades without T1 and both-side upgrade */
  uint32_t g = loose_flit(s, 0, 2);
  dcin_etag_fail(s, d, DCIN_NET_REQ, 2, dcin_etag_fifo(&s->cfg, DCIN_TR), DCIN_TR, g);
  ck_assert_int_eq(s->flits[g].etag, DCIN_T2);
  nd->rb_in[1].n = 0; /* the flit put there is freed below */
  nd->occ = 0;
  d->busym[DCIN_NET_REQ][0] = 0;
  d->nact[DCIN_NET_REQ] = 0;
  nd->ue[fifo][DCIN_T2] = 0;
  nd->ue[fifo][DCIN_T0] = 0;
  dcin_flit_free(s, f);
  dcin_flit_free(s, g);
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(etag_t0_should_go_to_the_round_robin_winner_only) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  int fifo = dcin_etag_fifo(&s->cfg, DCIN_TL);
  dcin_node *nd = &d->nodes[DCIN_NET_REQ][1];
  nd->ue[fifo][DCIN_T2] = 15;
  uint32_t a = loose_flit(s, 3, 1), b = loose_flit(s, 3, 1);
  s->flits[a].slot = 20;
  s->flits[b].slot = 5;
  dcin_etag_fail(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, a);
  dcin_etag_fail(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, b);
  nd->t0_ptr[0] = 10; /* slot 20 is the first registered slot at or after 10 */
  ck_assert(!dcin_etag_try(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, b));
  ck_assert(dcin_etag_try(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, a));
  ck_assert_int_eq(s->flits[a].used_entry, DCIN_T0);
  nd->ue[fifo][DCIN_T0] = 0;
  ck_assert(dcin_etag_try(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, b)); /* now alone in the table */
  nd->ue[fifo][DCIN_T2] = 0;
  nd->ue[fifo][DCIN_T0] = 0;
  dcin_flit_free(s, a);
  dcin_flit_free(s, b);
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(etag_with_t1_should_upgrade_in_two_steps) {
  dcin_sim *s = make("2261_5x4", "1die");
  dcin_die *d = &s->dies[0];
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TL][DCIN_T2], 8);
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TL][DCIN_T1], 7);
  ck_assert_int_eq(s->cfg.etag_cap[DCIN_TR][DCIN_T1], 4);
  uint32_t f = loose_flit(s, 3, 1);
  int fifo = dcin_etag_fifo(&s->cfg, DCIN_TL);
  dcin_etag_fail(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, f);
  ck_assert_int_eq(s->flits[f].etag, DCIN_T1);
  dcin_etag_fail(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, f);
  ck_assert_int_eq(s->flits[f].etag, DCIN_T0);
  ck_assert(dcin_etag_try(s, d, DCIN_NET_REQ, 1, fifo, DCIN_TL, f));
  d->nodes[DCIN_NET_REQ][1].ue[fifo][s->flits[f].used_entry] = 0;
  dcin_flit_free(s, f);
  dcin_sim_destroy(s);
}
END_TEST

/* ---- I-Tag ------------------------------------------------------------------------------- */

START_TEST(itag_should_reserve_a_slot_for_a_starved_head) {
  dcin_sim *s = make("5x4", "1die");
  dcin_die *d = &s->dies[0];
  dcin_ring *g = &d->rings[DCIN_NET_REQ][0];
  dcin_node *n1 = &d->nodes[DCIN_NET_REQ][1], *n2 = &d->nodes[DCIN_NET_REQ][2];
  uint32_t blocker = loose_flit(s, 0, 3), head = loose_flit(s, 1, 3), other = loose_flit(s, 2, 3);
  int idx = d->cp_out[1 * 4 + DCIN_TR], idx2 = d->cp_out[2 * 4 + DCIN_TR];
  /* node 1's head waits in its TR inject queue (put in the cycle before), its slot taken */
  dcin_node_put(d, DCIN_NET_REQ, 1, n1, &n1->iq_out[DCIN_TR], DCIN_B_IQOUT + DCIN_TR, head, 999);
  dcin_node_put(d, DCIN_NET_REQ, 2, n2, &n2->iq_out[DCIN_TR], DCIN_B_IQOUT + DCIN_TR, other, 999);
  s->cyc = 1000;
  dcin_ring_rebase(g, s->cyc, 1);
  dcin_ring_put(g, idx, blocker);
  s->flits[head].wait_h = 81; /* above the trigger of 80 */
  dcin_cp_inject(s, d, DCIN_NET_REQ, 1);
  ck_assert_int_eq(n1->itag_out[DCIN_TR], 1);
  ck_assert_uint_eq(s->st.itag_h, 1);
  ck_assert_uint_eq(s->flits[head].wait_h, 82); /* it waited one more cycle */
  /* one full ring turn later the reserved slot is back, now empty: usable by node 1 only */
  dcin_ring_take(g, idx);
  s->cyc = 1000 + g->len + (uint64_t)(idx2 - idx); /* the same slot passing node 2 */
  dcin_cp_inject(s, d, DCIN_NET_REQ, 2);
  ck_assert_uint_eq(g->count, 0);
  ck_assert_uint_eq(n2->iq_out[DCIN_TR].n, 1);
  s->cyc = 1000 + g->len;
  dcin_cp_inject(s, d, DCIN_NET_REQ, 1);
  ck_assert_int_eq(n1->itag_out[DCIN_TR], 0);
  ck_assert_uint_eq(dcin_ring_at(g, idx), head);
  ck_assert_uint_eq(n1->iq_out[DCIN_TR].n, 0);
  dcin_ring_take(g, idx);
  dcin_node_take(d, DCIN_NET_REQ, 2, n2, &n2->iq_out[DCIN_TR], DCIN_B_IQOUT + DCIN_TR);
  dcin_flit_free(s, blocker);
  dcin_flit_free(s, head);
  dcin_flit_free(s, other);
  dcin_sim_destroy(s);
}
END_TEST

/* ---- trackers, Retry, Pcredit -------------------------------------------------------------- */

static void run_all(dcin_sim *s) {
  dcin_run_native(s, 200000);
  ck_assert_msg(!s->fault[0], "%s", s->fault);
  ck_assert_uint_eq(s->active_txns, 0);
  ck_assert_uint_eq(s->nflits, 0);
  cs_err err;
  ck_assert_int_eq(dcin_check(s, &err), 0);
}

START_TEST(sn_should_retry_then_pcredit_when_trackers_run_out) {
  for (int rd = 0; rd < 2; rd++) {
    dcin_sim *s = make_full("5x4", "1die", 128, 1, false);
    cs_err err;
    for (int i = 0; i < 3; i++)
      ck_assert_int_ge(
          dcin_inject_phys(s, i, &(dcin_place){0, i, DCIN_IP_GDMA0, 0, 10, DCIN_IP_DDR0, rd, 4},
                           &err),
          0);
    run_all(s);
    uint32_t retries = 0, blocks = 0;
    for (uint32_t t = 0; t < s->ntxns; t++) {
      retries += s->txns[t].retries;
      blocks += rd ? s->txns[t].sn_ro_block : s->txns[t].sn_share_block;
    }
    ck_assert_uint_ge(retries, 2);
    ck_assert_uint_eq(retries, blocks);
    ck_assert_uint_eq(rd ? s->st.retries_rd : s->st.retries_wr, retries);
    dcin_sim_destroy(s);
  }
}
END_TEST

START_TEST(rn_should_hold_requests_without_a_tracker) {
  dcin_sim *s = make_full("5x4", "1die", 2, 64, false); /* one tracker per gdma channel */
  cs_err err;
  for (int i = 0; i < 3; i++)
    ck_assert_int_ge(
        dcin_inject_phys(s, i, &(dcin_place){0, 0, DCIN_IP_GDMA0, 0, 19, DCIN_IP_DDR0, true, 4},
                         &err),
        0);
  run_all(s);
  ck_assert_uint_eq(s->txns[0].rn_rd_block, 0);
  ck_assert_uint_eq(s->txns[1].rn_rd_block, 1);
  ck_assert_uint_ge(s->txns[1].t_reserve, s->txns[0].t_final);
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(d2d_rn_should_back_pressure_not_drop) {
  cs_die_params p;
  cs_layout l;
  cs_adapter_config a;
  cs_err err;
  ck_assert_int_eq(cs_topo_die("2261_5x4", &p, &err), 0);
  ck_assert_int_eq(cs_topo_layout("2die", &l, &err), 0);
  l.d2d_rn_rdb_size = l.d2d_rn_wdb_size = 4; /* one D2D_RN tracker each */
  cs_test_dcin_adapter(&a, 128, 64);
  dcin_sim *s = NULL;
  ck_assert_int_eq(dcin_sim_create(&p, &l, &a, &s, &err), 0);
  s->check_each_cycle = true;
  for (int i = 0; i < 6; i++)
    ck_assert_int_ge(
        dcin_inject_phys(s, i, &(dcin_place){0, i, DCIN_IP_GDMA0, 1, 19, DCIN_IP_DDR0, i % 2, 4},
                         &err),
        0);
  run_all(s);
  uint32_t blocked = 0;
  for (uint32_t t = 0; t < s->ntxns; t++) {
    ck_assert(s->txns[t].done_final);
    blocked += s->txns[t].d2d_ro_block + s->txns[t].d2d_share_block;
  }
  ck_assert_uint_ge(blocked, 1);
  dcin_sim_destroy(s);
}
END_TEST

/* ---- token buckets and AXI ------------------------------------------------------------------ */

START_TEST(token_bucket_should_refill_at_its_rate_up_to_its_size) {
  dcin_ip ip;
  memset(&ip, 0, sizeof ip);
  ip.rate = 0.25;
  ip.cap = 2;
  ip.rx_tok = 2; /* starts full */
  ck_assert(dcin_rx_bucket(&ip, 0));
  ck_assert(dcin_rx_bucket(&ip, 0));
  ck_assert(!dcin_rx_bucket(&ip, 0));
  ck_assert(!dcin_rx_bucket(&ip, 3));
  ck_assert(dcin_rx_bucket(&ip, 4));
  ck_assert(dcin_rx_bucket(&ip, 100));
  ck_assert(dcin_rx_bucket(&ip, 100));
  ck_assert(!dcin_rx_bucket(&ip, 100)); /* capped at 2 */
}
END_TEST

START_TEST(axi_channel_should_deliver_after_latency_at_configured_bandwidth) {
  dcin_sim *s = make("2261_5x4", "2die");
  ck_assert_uint_eq(s->lcfg.axi_lat[DCIN_AR], 40);
  ck_assert(s->lcfg.axi_rate > 0.749 && s->lcfg.axi_rate < 0.751); /* 192 GB/s */
  dcin_axi *a = &s->axi[0];
  uint32_t f = loose_flit(s, 0, 3);
  s->cyc = 100;
  dcin_axi_send(s, a, DCIN_AR, f);
  dcin_axi_step(s, a);
  for (s->cyc = 101; s->cyc < 140; s->cyc++) {
    dcin_axi_step(s, a);
    ck_assert_uint_eq(a->rx[DCIN_AR].n, 0);
  }
  dcin_axi_step(s, a);
  ck_assert_uint_eq(a->rx[DCIN_AR].n, 1);
  dcin_flit_free(s, dcin_list_pop(s, &a->rx[DCIN_AR]));
  a->busy = 0;
  /* with an empty bucket, 8 cycles carry 6 flits at 0.75 flit/cycle */
  a->tok[DCIN_W] = 0;
  a->last[DCIN_W] = s->cyc;
  for (int i = 0; i < 8; i++) dcin_axi_send(s, a, DCIN_W, loose_flit(s, 0, 3));
  for (int i = 0; i < 8; i++) {
    s->cyc++;
    dcin_axi_step(s, a);
  }
  ck_assert_uint_eq(a->chan[DCIN_W].n, 6);
  dcin_sim_destroy(s);
}
END_TEST

/* ---- checker --------------------------------------------------------------------------------- */

START_TEST(check_should_detect_a_lost_flit) {
  dcin_sim *s = make("5x4", "1die");
  cs_err err;
  ck_assert_int_ge(
      dcin_inject_phys(s, 1, &(dcin_place){0, 0, DCIN_IP_GDMA0, 0, 19, DCIN_IP_DDR0, true, 4},
                       &err),
      0);
  ck_assert_int_eq(dcin_check(s, &err), 0);
  dcin_ip *ip = dcin_ipp(&s->dies[0], 0, DCIN_IP_GDMA0);
  uint32_t f = dcin_list_pop(s, &ip->inj[DCIN_NET_REQ]); /* lose it */
  ck_assert_int_eq(dcin_check(s, &err), CS_EINTERNAL);
  dcin_list_push(s, &ip->inj[DCIN_NET_REQ], f);
  ck_assert_int_eq(dcin_check(s, &err), 0);
  dcin_sim_destroy(s);
}
END_TEST

START_TEST(many_transactions_should_all_complete_with_flits_conserved) {
  const char *layouts[] = {"1die", "2die", "4die"};
  for (int li = 0; li < 3; li++) {
    for (int yx = 0; yx < 2; yx++) {
      dcin_sim *s = make_full("2261_5x4", layouts[li], 8, 4, yx);
      cs_err err;
      int n = cs_test_quick() ? 40 : 200;
      for (int i = 0; i < n; i++) {
        int sd = i % s->ndies, dd = (i / 3) % s->ndies;
        ck_assert_int_ge(dcin_inject_phys(s, i,
                                          &(dcin_place){sd, (i * 7) % 20, DCIN_IP_GDMA0 + i % 2, dd,
                                                        (i * 13) % 20, DCIN_IP_DDR0 + (i / 2) % 2,
                                                        i % 3 != 0, 4},
                                          &err),
                         0);
      }
      run_all(s);
      for (uint32_t t = 0; t < s->ntxns; t++) ck_assert(s->txns[t].done_final);
      ck_assert_uint_eq(s->st.flits_injected, s->st.flits_ejected);
      dcin_sim_destroy(s);
    }
  }
}
END_TEST

/* ---- engine ops --------------------------------------------------------------------------------
 */

static void *ops_engine(const cs_job *job) {
  void *e = NULL;
  cs_err err;
  cs_err_clear(&err);
  int rc = cs_dcin_ops.create(job, &e, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  return e;
}

/* Drives reqs through the ops like the L2 driver: rsp in the tick its req phase completes. */
static void drive(void *e, const cs_inject *reqs, int n, uint64_t *req_tick, uint64_t *fin_tick) {
  cs_err err;
  for (int i = 0; i < n; i++) ck_assert_int_eq(cs_dcin_ops.inject(e, &reqs[i], &err), 0);
  int done = 0;
  for (int guard = 0; done < n && guard < 1000000; guard++) {
    ck_assert_int_eq(cs_dcin_ops.advance(e, 1000, &err), 0);
    cs_completion c[16];
    size_t k;
    while ((k = cs_dcin_ops.poll(e, c, 16)) > 0)
      for (size_t j = 0; j < k; j++) {
        int i = (int)c[j].request_id;
        if (c[j].phase == CS_PHASE_REQ) {
          req_tick[i] = c[j].tick;
          cs_inject r = reqs[i];
          r.packet_type = CS_PKT_RSP;
          r.src_id = reqs[i].dst_id;
          r.dst_id = reqs[i].src_id;
          ck_assert_int_eq(cs_dcin_ops.inject(e, &r, &err), 0);
        } else {
          fin_tick[i] = c[j].tick;
          done++;
        }
      }
  }
  ck_assert_int_eq(done, n);
}

/* The same read run by the engine's native flow (rsp injected in the cycle its req phase
 * completes): its req-phase and final cycles, the reference for the adapter path. */
static void native_read_d0n0_to_d1n19(uint64_t *req_done_cycle, uint64_t *final_cycle) {
  dcin_sim *s = cs_test_dcin_sim("2261_5x4", "2die", 128, 64, false, false);
  cs_err err;
  int t = dcin_inject_phys(s, 7, &(dcin_place){0, 0, DCIN_IP_GDMA0, 1, 19, DCIN_IP_DDR0, true, 4},
                           &err);
  ck_assert_int_ge(t, 0);
  dcin_run_native(s, 100000);
  ck_assert(s->txns[t].done_final);
  *req_done_cycle = s->txns[t].t_req_done;
  *final_cycle = s->txns[t].t_final;
  dcin_sim_destroy(s);
}

/* An engine for a 2-participant P2P job, and its one request: logical GDMA 0 (die 0 node 0)
 * reads logical DDR 39 (die 1 node 19). */
static void *cross_die_read(cs_inject *r) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  *r = (cs_inject){.request_id = 0,
                   .src_id = 0,
                   .dst_id = 39,
                   .is_read = 1,
                   .packet_type = CS_PKT_REQ,
                   .burst_length = 4};
  return ops_engine(&job);
}

START_TEST(ops_should_reproduce_native_timing_through_the_adapter) {
  cs_inject r;
  void *e = cross_die_read(&r);
  uint64_t rq = 0, fin = 0;
  drive(e, &r, 1, &rq, &fin);
  uint64_t native_req, native_final;
  native_read_d0n0_to_d1n19(&native_req, &native_final);
  /* 0.5 ns sim cycles, 1 GHz driver: a completion found in cycle c is reported at tick c / 2 */
  ck_assert_uint_eq(rq, native_req / 2);
  ck_assert_uint_eq(fin, native_final / 2);
  /* and the final completion is CrossRing's measured 264 ns for this read (crossring-model.md
   * 6.2, row "cross d0:0->d1:19 R") */
  ck_assert_uint_eq(fin, 264);
  char where[160];
  cs_dcin_ops.where(e, 0, where, sizeof where);
  ck_assert_ptr_nonnull(strstr(where, "complete"));
  cs_txn_record rec;
  memset(&rec, 0, sizeof rec);
  cs_dcin_ops.describe(e, 0, &rec);
  ck_assert_int_eq(rec.src_die, 0);
  ck_assert_int_eq(rec.dst_die, 1);
  ck_assert_int_eq(rec.dst_node, 19);
  ck_assert_int_eq(rec.d2d_src_node, 0);
  ck_assert_int_eq(rec.d2d_dst_node, 3);
  ck_assert_uint_eq(rec.rsp_complete_cycle, native_final); /* NoC cycles = sim cycles here */
  cs_engine_stats st;
  cs_dcin_ops.stats(e, &st);
  ck_assert_uint_gt(st.flit_hops, 0);
  ck_assert_uint_gt(st.skipped_cycles, 0);
  cs_dcin_ops.where(e, 0, where, sizeof where); /* described and finished: recycled */
  ck_assert_ptr_nonnull(strstr(where, "unknown"));
  cs_dcin_ops.destroy(e);
}
END_TEST

/* A flit pool that cannot grow stops the job: make_flit notes the fault, and the next advance
 * returns it as the engine's error instead of simulating on without the flit. */
START_TEST(pool_fault_should_stop_the_job_with_its_message) {
  cs_inject r;
  void *e = cross_die_read(&r);
  cs_err err;
  ck_assert_int_eq(cs_dcin_ops.inject(e, &r, &err), 0);
  dcin_pool_fault(dcin_engine_sim(e));
  ck_assert_int_eq(cs_dcin_ops.advance(e, 1000, &err), CS_EINTERNAL);
  ck_assert_str_eq(err.msg, "dcin: out of memory growing the flit pool");
  cs_dcin_ops.destroy(e);
}
END_TEST

START_TEST(ops_should_reject_rsp_before_req_phase_and_reversed_ids) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  void *e = ops_engine(&job);
  cs_err err;
  cs_inject r = {.request_id = 7,
                 .src_id = 3,
                 .dst_id = 4,
                 .is_read = 0,
                 .packet_type = CS_PKT_REQ,
                 .burst_length = 4};
  ck_assert_int_eq(cs_dcin_ops.inject(e, &r, &err), 0);
  ck_assert_int_eq(cs_dcin_ops.inject(e, &r, &err), CS_EINVAL); /* same id twice */
  cs_inject p = r;
  p.packet_type = CS_PKT_RSP;
  p.src_id = 4;
  p.dst_id = 3;
  ck_assert_int_eq(cs_dcin_ops.inject(e, &p, &err), CS_EINVAL); /* req phase not done */
  p.src_id = 3;
  p.dst_id = 4;
  ck_assert_int_eq(cs_dcin_ops.inject(e, &p, &err), CS_ECONSTRAINT); /* C10 */
  p.packet_type = CS_PKT_DATA;
  ck_assert_int_eq(cs_dcin_ops.inject(e, &p, &err), CS_ECONSTRAINT); /* C9 */
  char where[256];
  cs_dcin_ops.where(e, 7, where, sizeof where);
  ck_assert_ptr_nonnull(strstr(where, "write"));
  ck_assert_ptr_nonnull(strstr(where, "REQ in die0 node 3 gdma_0 inject FIFO"));
  cs_dcin_ops.destroy(e);
}
END_TEST

START_TEST(create_should_reject_inconsistent_adapter_fields) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_err err;
  void *e = NULL;
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  job.adapter.num_dies = 1; /* the 2die layout has two */
  ck_assert_int_eq(cs_dcin_ops.create(&job, &e, &err), CS_ECONSTRAINT);
  ck_assert_ptr_null(e);
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  job.adapter.num_targets = 20;
  ck_assert_int_eq(cs_dcin_ops.create(&job, &e, &err), CS_ECONSTRAINT);
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  snprintf(job.adapter.topology, sizeof job.adapter.topology, "nope");
  ck_assert_int_ne(cs_dcin_ops.create(&job, &e, &err), 0);
  ck_assert_ptr_nonnull(strstr(err.msg, "dcin"));
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  job.adapter.noc_frequency_ghz = 2.03; /* not a multiple of 1/16 GHz */
  ck_assert_int_eq(cs_dcin_ops.create(&job, &e, &err), CS_EINVAL);
  ck_assert_ptr_null(e);
  cs_dcin_ops.destroy(NULL);
}
END_TEST

START_TEST(same_job_twice_should_give_identical_bits) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  enum { N = 48 };
  cs_inject reqs[N];
  for (int i = 0; i < N; i++)
    reqs[i] = (cs_inject){.request_id = (uint64_t)i,
                          .src_id = i % 8,
                          .dst_id = 39 - i % 12,
                          .is_read = (uint8_t)(i % 2),
                          .packet_type = CS_PKT_REQ,
                          .burst_length = 4};
  cs_txn_record rec[2][N];
  uint64_t rq[2][N], fin[2][N];
  for (int run = 0; run < 2; run++) {
    void *e = ops_engine(&job);
    drive(e, reqs, N, rq[run], fin[run]);
    memset(rec[run], 0, sizeof rec[run]);
    for (int i = 0; i < N; i++) cs_dcin_ops.describe(e, (uint64_t)i, &rec[run][i]);
    cs_dcin_ops.destroy(e);
  }
  ck_assert_int_eq(memcmp(rec[0], rec[1], sizeof rec[0]), 0);
  ck_assert_int_eq(memcmp(fin[0], fin[1], sizeof fin[0]), 0);
  ck_assert_int_eq(memcmp(rq[0], rq[1], sizeof rq[0]), 0);
}
END_TEST

START_TEST(described_transactions_should_be_recycled) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  void *e = ops_engine(&job);
  enum { N = 64 };
  cs_inject reqs[N];
  uint64_t rq[N], fin[N];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++)
      reqs[i] = (cs_inject){.request_id = (uint64_t)(round * N + i),
                            .src_id = i % 20,
                            .dst_id = 20 + (i * 7) % 20,
                            .is_read = (uint8_t)(i % 2),
                            .packet_type = CS_PKT_REQ,
                            .burst_length = 4};
    /* drive() indexes by request id; shift ids back for its bookkeeping */
    cs_err err;
    for (int i = 0; i < N; i++) ck_assert_int_eq(cs_dcin_ops.inject(e, &reqs[i], &err), 0);
    int done = 0;
    while (done < N) {
      ck_assert_int_eq(cs_dcin_ops.advance(e, 100000, &err), 0);
      cs_completion c[16];
      size_t k;
      while ((k = cs_dcin_ops.poll(e, c, 16)) > 0)
        for (size_t j = 0; j < k; j++) {
          int i = (int)(c[j].request_id - (uint64_t)round * N);
          if (c[j].phase == CS_PHASE_REQ) {
            rq[i] = c[j].tick;
            cs_inject r = reqs[i];
            r.packet_type = CS_PKT_RSP;
            r.src_id = reqs[i].dst_id;
            r.dst_id = reqs[i].src_id;
            ck_assert_int_eq(cs_dcin_ops.inject(e, &r, &err), 0);
          } else {
            fin[i] = c[j].tick;
            cs_txn_record rec;
            cs_dcin_ops.describe(e, c[j].request_id, &rec);
            done++;
          }
        }
    }
    ck_assert_int_eq(cs_dcin_ops.advance(e, 1000, &err), 0); /* let tails and releases finish */
  }
  const dcin_sim *s = dcin_engine_sim(e);
  ck_assert_uint_le(s->ntxns, 2 * N); /* slots were reused across rounds */
  ck_assert_uint_eq(s->nflits, 0);
  (void)rq;
  (void)fin;
  cs_dcin_ops.destroy(e);
}
END_TEST

START_TEST(ticks_should_follow_the_driver_frequency) {
  cs_job job;
  int parts[2] = {0, 1};
  cs_test_job(&job, "dcin", CS_PRIM_P2P, 512, parts, 2);
  job.adapter.driver_cycle_frequency_ghz = 2.0; /* one tick per sim cycle */
  void *e = ops_engine(&job);
  cs_inject r = {.request_id = 0,
                 .src_id = 0,
                 .dst_id = 39,
                 .is_read = 1,
                 .packet_type = CS_PKT_REQ,
                 .burst_length = 4};
  uint64_t rq = 0, fin = 0;
  drive(e, &r, 1, &rq, &fin);
  uint64_t native_req, native_final;
  native_read_d0n0_to_d1n19(&native_req, &native_final);
  ck_assert_uint_eq(rq, native_req);
  ck_assert_uint_eq(fin, native_final);
  cs_err err;
  uint64_t t0 = cs_dcin_ops.now(e);
  ck_assert_int_eq(cs_dcin_ops.advance(e, 10, &err), 0);
  ck_assert_uint_eq(cs_dcin_ops.now(e), t0 + 10);
  cs_dcin_ops.destroy(e);
}
END_TEST

/* Runs a job through L1 and the L2 driver on the given ops (cs_dcin_ops, or a copy without
 * finish_step), with step reuse on or off, and attached to a shared reuse context if ctx is not
 * NULL; returns what cs_drive returned, with its message in err. */
static int run_job_ops(const cs_job *job, const cs_engine_ops *ops, bool reuse, cs_dcin_reuse *ctx,
                       cs_txn_record **rec, uint64_t *n, cs_engine_stats *st, dcin_stats *ist,
                       uint64_t *replayed, cs_err *err) {
  cs_plan plan;
  ck_assert_int_eq(cs_expand(job, &plan, err), 0);
  *rec = calloc(plan.num_txns, sizeof **rec);
  ck_assert_ptr_nonnull(*rec);
  void *e = ops_engine(job);
  dcin_engine_sim(e)->reuse_off = !reuse;
  if (ctx) ck_assert_int_eq(cs_dcin_reuse_attach(e, ctx), 0);
  int rc = cs_drive(job, &plan, ops, e, *rec, err);
  ops->stats(e, st);
  *ist = dcin_engine_sim(e)->st;
  uint64_t seen, recorded;
  dcin_reuse_figures(dcin_engine_sim(e), &seen, replayed, &recorded);
  *n = plan.num_txns;
  ops->destroy(e);
  cs_plan_free(&plan);
  return rc;
}

static void run_job_ctx(const cs_job *job, bool reuse, cs_dcin_reuse *ctx, cs_txn_record **rec,
                        uint64_t *n, cs_engine_stats *st, dcin_stats *ist, uint64_t *replayed) {
  cs_err err;
  int rc = run_job_ops(job, &cs_dcin_ops, reuse, ctx, rec, n, st, ist, replayed, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
}

static void run_job(const cs_job *job, bool reuse, cs_txn_record **rec, uint64_t *n,
                    cs_engine_stats *st, dcin_stats *ist, uint64_t *replayed) {
  run_job_ctx(job, reuse, NULL, rec, n, st, ist, replayed);
}

/* Two runs of job k gave the same bits (records, statistics, engine state); frees the records. */
static void assert_same_bits(cs_txn_record *rec[2], const uint64_t n[2],
                             const cs_engine_stats st[2], const dcin_stats ist[2], size_t k) {
  ck_assert_uint_eq(n[0], n[1]);
  ck_assert_msg(memcmp(rec[0], rec[1], n[0] * sizeof *rec[0]) == 0, "job %zu: records differ", k);
  ck_assert_int_eq(memcmp(&st[0], &st[1], sizeof st[0]), 0);
  ck_assert_int_eq(memcmp(&ist[0], &ist[1], sizeof ist[0]), 0);
  free(rec[0]);
  free(rec[1]);
}

/* Runs the job alone (every step simulated) and with the shared reuse context, checks that both
 * give the same bits (records, statistics, engine state) and returns the steps the shared run
 * replayed. */
static uint64_t run_alone_and_shared(const cs_job *job, cs_dcin_reuse *ctx, size_t k) {
  cs_txn_record *rec[2];
  uint64_t n[2], replayed[2];
  cs_engine_stats st[2];
  dcin_stats ist[2];
  run_job_ctx(job, false, NULL, &rec[0], &n[0], &st[0], &ist[0], &replayed[0]);
  run_job_ctx(job, true, ctx, &rec[1], &n[1], &st[1], &ist[1], &replayed[1]);
  assert_same_bits(rec, n, st, ist, k);
  return replayed[1];
}

/* Replayed steps must leave every record, every statistic and the engine state exactly as
 * simulating them does: each job runs with reuse off (every step simulated) and on, and the two
 * runs are compared byte for byte.  The ring collectives repeat their step, so they must replay. */
START_TEST(step_reuse_should_give_the_bits_of_simulating_every_step) {
  static const struct {
    cs_primitive prim;
    unsigned long long msg;
    const char *topo, *layout;
    int dies, out, burst, n, parts[8];
    bool must_replay;
  } jobs[] = {
      /* prim, msg, die, layout, dies, outstanding, burst, participants, must replay */
      {CS_PRIM_ALLREDUCE, 65536, "2261_5x4", "2die", 2, 128, 4, 8, {0, 5, 10, 15, 20, 25, 30, 35},
       true},
      {CS_PRIM_ALLGATHER, 65536, "2261_5x4", "2die", 2, 128, 4, 8, {0, 5, 10, 15, 20, 25, 30, 35},
       true},
      {CS_PRIM_REDUCESCATTER, 131072, "5x4", "2die_spread", 2, 16, 2, 8,
       {0, 5, 10, 15, 20, 25, 30, 35}, true},
      {CS_PRIM_ALLREDUCE, 65536, "5x4", "4die", 4, 16, 2, 8, {0, 10, 20, 30, 40, 50, 60, 70}, true},
      {CS_PRIM_ALLREDUCE, 16384, "5x4", "1die", 1, 64, 4, 4, {0, 1, 2, 3}, true},
      {CS_PRIM_ALLTOALL, 65536, "5x4", "1die", 1, 64, 4, 8, {0, 3, 5, 6, 9, 10, 12, 15}, false},
  };
  for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
    cs_job job;
    cs_test_job(&job, "dcin", jobs[k].prim, jobs[k].msg, jobs[k].parts, jobs[k].n);
    snprintf(job.adapter.topology, sizeof job.adapter.topology, "%s", jobs[k].topo);
    snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "%s", jobs[k].layout);
    job.adapter.num_dies = jobs[k].dies;
    job.adapter.num_initiators = job.adapter.num_targets = 20 * jobs[k].dies;
    job.adapter.mst_rd_outstanding = job.adapter.mst_wr_outstanding = jobs[k].out;
    job.adapter.burst_length = jobs[k].burst;
    cs_txn_record *rec[2];
    uint64_t n[2], replayed[2];
    cs_engine_stats st[2];
    dcin_stats ist[2];
    for (int on = 0; on < 2; on++)
      run_job(&job, on, &rec[on], &n[on], &st[on], &ist[on], &replayed[on]);
    ck_assert_uint_eq(replayed[0], 0);
    if (jobs[k].must_replay) ck_assert_msg(replayed[1] > 0, "job %zu replayed nothing", k);
    assert_same_bits(rec, n, st, ist, k);
  }
}
END_TEST

/* One reuse context across jobs: an AllGather and a ReduceScatter after an AllReduce of the same
 * size and configuration replay every step the AllReduce recorded (their steps are its steps), a
 * job of another configuration on the same context replays nothing of them, and every job's
 * records and statistics equal those of simulating it alone. */
START_TEST(shared_reuse_context_should_replay_across_jobs_with_the_same_bits) {
  static const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER,
                                       CS_PRIM_ALLGATHER};
  const int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_dcin_reuse *ctx = cs_dcin_reuse_new();
  ck_assert_ptr_nonnull(ctx);
  for (size_t k = 0; k < sizeof prims / sizeof prims[0]; k++) {
    cs_job job;
    cs_test_job(&job, "dcin", prims[k], 65536, parts, 8);
    if (k == 3) job.adapter.burst_length = 2; /* another configuration */
    uint64_t replayed = run_alone_and_shared(&job, ctx, k);
    if (k == 1 || k == 2) ck_assert_uint_eq(replayed, 7); /* all N - 1 steps */
    if (k == 3) ck_assert_uint_lt(replayed, 7);            /* its first step is new */
  }
  cs_dcin_reuse_free(ctx);
}
END_TEST

/* A full context makes room by dropping its least recently used steps: with a budget of about
 * four steps, AllReduces of three configurations (two steps each to record) still replay every
 * step after their second, and an AllGather of the first configuration, whose steps were dropped,
 * records them again and replays the rest; every job gives the bits of simulating it alone. */
START_TEST(full_reuse_context_should_drop_its_least_recently_used_steps) {
  const int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  static const struct {
    cs_primitive prim;
    int outstanding;
    uint64_t replayed; /* ring over 8: 14 steps (AllReduce) or 7 (AllGather), the first two new */
  } jobs[] = {{CS_PRIM_ALLREDUCE, 128, 12},
              {CS_PRIM_ALLREDUCE, 64, 12},
              {CS_PRIM_ALLREDUCE, 32, 12},
              {CS_PRIM_ALLGATHER, 128, 5}};
  cs_dcin_reuse *ctx = cs_dcin_reuse_new();
  ck_assert_ptr_nonnull(ctx);
  for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
    cs_job job;
    cs_test_job(&job, "dcin", jobs[k].prim, 65536, parts, 8);
    job.adapter.mst_rd_outstanding = job.adapter.mst_wr_outstanding = jobs[k].outstanding;
    uint64_t replayed = run_alone_and_shared(&job, ctx, k);
    size_t bytes;
    uint64_t steps, evicted;
    dcin_reuse_cache_figures(ctx, &bytes, &steps, &evicted);
    if (k == 0) { /* two steps recorded: room for about four */
      ck_assert_uint_eq(steps, 2);
      dcin_reuse_set_budget(ctx, bytes * 9 / 4);
    }
    ck_assert_uint_eq(replayed, jobs[k].replayed);
    ck_assert_uint_le(steps, 4);
    if (k == 2) ck_assert_uint_eq(evicted, 2); /* the first configuration's two steps */
  }
  cs_dcin_reuse_free(ctx);
}
END_TEST

/* The chain tests' group: a ring over 14 participants of 2 dies (0, 3, ..., 39), 768 KiB, burst
 * 8, outstanding 128, where every step of the AllReduce ends with cross-die write data still in
 * flight (found with `bench_dcin reuse`: before chains, it replayed none of its 26 steps). */
static void chain_job(cs_job *job, cs_primitive prim) {
  int parts[14];
  for (int i = 0; i < 14; i++) parts[i] = 3 * i;
  cs_test_job(job, "dcin", prim, 786432, parts, 14);
  job->adapter.burst_length = 8;
}

/* Inside one job a boundary whose whole state (flits in flight included) and injects equal an
 * earlier one's starts the step that started there again.  The chain AllReduce's transaction log
 * (`commsweep run --txlog`, compared step by step) repeats with a period of two steps from step 1
 * on: step 3 is the first to repeat an earlier step (step 1), so the boundary after it, before
 * step 4, is the first whose state can equal an earlier one (before step 2).  Steps 0-3 are
 * simulated and the 22 others replayed, with the bits of simulating all 26.  This takes a
 * caller's reuse context: a replay from a boundary in flight leaves the engine stale, which only
 * a run without the context can recover from, so an engine on its own simulates them all. */
START_TEST(a_step_that_starts_where_an_earlier_one_did_should_replay_it) {
  cs_job job;
  chain_job(&job, CS_PRIM_ALLREDUCE);
  cs_txn_record *rec[2];
  uint64_t n[2], replayed[2];
  cs_engine_stats st[2];
  dcin_stats ist[2];
  cs_dcin_reuse *ctx = cs_dcin_reuse_new(); /* an engine on its own never goes stale */
  ck_assert_ptr_nonnull(ctx);
  run_job_ctx(&job, false, NULL, &rec[0], &n[0], &st[0], &ist[0], &replayed[0]);
  run_job_ctx(&job, true, ctx, &rec[1], &n[1], &st[1], &ist[1], &replayed[1]);
  ck_assert_uint_eq(replayed[1], 22);
  assert_same_bits(rec, n, st, ist, 0);
  run_job(&job, true, &rec[1], &n[1], &st[1], &ist[1], &replayed[1]);
  ck_assert_uint_eq(replayed[1], 0);
  free(rec[1]);
  cs_dcin_reuse_free(ctx);
}
END_TEST

/* A step ending in flight heads a chain (docs/dcin-model.md, "Exact step reuse"): the steps an
 * AllReduce simulated after it are keyed by it, so an AllGather and a ReduceScatter of its group
 * replay all their 13 steps down the chain, with the bits of simulating them; an all-to-all of
 * the group replays its first step, which is the ring's, finds no second one in the chain and
 * fails with CS_ERETRY (cs_job_run_keeping then runs it alone, check_pipeline), as does a stale
 * engine asked to advance with no step to replay. */
START_TEST(chained_steps_should_replay_across_jobs_with_the_same_bits) {
  cs_dcin_reuse *ctx = cs_dcin_reuse_new();
  ck_assert_ptr_nonnull(ctx);
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER};
  for (size_t k = 0; k < 3; k++) {
    cs_job job;
    chain_job(&job, prims[k]);
    uint64_t replayed = run_alone_and_shared(&job, ctx, k);
    ck_assert_uint_eq(replayed, k == 0 ? 22 : 13);
  }
  cs_job a2a;
  chain_job(&a2a, CS_PRIM_ALLTOALL);
  cs_txn_record *rec;
  uint64_t n, replayed;
  cs_engine_stats st;
  dcin_stats ist;
  cs_err err;
  int rc = run_job_ops(&a2a, &cs_dcin_ops, true, ctx, &rec, &n, &st, &ist, &replayed, &err);
  ck_assert_msg(rc == CS_ERETRY, "rc %d: %s", rc, err.msg);
  ck_assert_uint_eq(replayed, 1);
  free(rec);
  /* a stale engine asked to simulate: the AllGather's first step only (replayed, it ends in
   * flight), then an advance with no next step to follow the chain with */
  cs_job ag;
  chain_job(&ag, CS_PRIM_ALLGATHER);
  cs_plan plan;
  ck_assert_int_eq(cs_expand(&ag, &plan, &err), 0);
  void *e = ops_engine(&ag);
  ck_assert_int_eq(cs_dcin_reuse_attach(e, ctx), 0);
  uint32_t steps = plan.num_steps;
  plan.num_steps = 1;
  rec = calloc(plan.step_txn_begin[1], sizeof *rec);
  ck_assert_ptr_nonnull(rec);
  ck_assert_msg(cs_drive(&ag, &plan, &cs_dcin_ops, e, rec, &err) == 0, "%s", err.msg);
  plan.num_steps = steps;
  ck_assert_int_eq(cs_dcin_ops.advance(e, 10, &err), CS_ERETRY);
  free(rec);
  cs_dcin_ops.destroy(e);
  cs_plan_free(&plan);
  cs_dcin_reuse_free(ctx);
}
END_TEST

/* The ring AllReduce of 64 KiB on 2 dies (14 steps, 12 of them replayed), and the dcin ops with
 * and without finish_step (the latter in *round_trips). */
static void finish_step_setup(cs_job *job, cs_engine_ops *round_trips,
                              const cs_engine_ops *ops[2]) {
  const int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_test_job(job, "dcin", CS_PRIM_ALLREDUCE, 65536, parts, 8);
  *round_trips = cs_dcin_ops;
  round_trips->finish_step = NULL;
  ops[0] = &cs_dcin_ops;
  ops[1] = round_trips;
}

/* Runs job k on both ops, each on its own engine, checks that they give the same bits and puts
 * the steps each replayed into replayed[]. */
static void run_job_both_ops(const cs_job *job, const cs_engine_ops *const ops[2], bool reuse,
                             uint64_t replayed[2], size_t k) {
  cs_txn_record *rec[2];
  uint64_t n[2];
  cs_engine_stats st[2];
  dcin_stats ist[2];
  for (int i = 0; i < 2; i++) {
    cs_err err;
    int rc =
        run_job_ops(job, ops[i], reuse, NULL, &rec[i], &n[i], &st[i], &ist[i], &replayed[i], &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
  }
  assert_same_bits(rec, n, st, ist, k);
}

/* A replayed step handed over whole (finish_step) must give the driver exactly what going
 * through it transaction by transaction gives: the same records (ticks included), statistics and
 * engine state. */
START_TEST(finish_step_should_give_the_bits_of_the_per_transaction_round_trips) {
  cs_job job;
  cs_engine_ops round_trips;
  const cs_engine_ops *ops[2];
  finish_step_setup(&job, &round_trips, ops);
  uint64_t replayed[2];
  run_job_both_ops(&job, ops, true, replayed, 0);
  ck_assert_uint_eq(replayed[0], 12); /* 2 (N - 1) steps, the first two recorded */
  ck_assert_uint_eq(replayed[1], 12);
}
END_TEST

/* A replayed step in which the deadlock guard fires (a guard of 8 ticks, shorter than a request's
 * round trip): finish_step leaves it to the per-transaction loop, so the job fails with the same
 * error as without finish_step.  Each run replays from its own context, filled by the same job
 * with the default guard, so that its first step is already a replay. */
START_TEST(finish_step_should_leave_a_step_the_guard_stops_to_the_round_trips) {
  cs_job job;
  cs_engine_ops round_trips;
  const cs_engine_ops *ops[2];
  finish_step_setup(&job, &round_trips, ops);
  cs_err err[2];
  int rc[2];
  for (int k = 0; k < 2; k++) {
    cs_dcin_reuse *ctx = cs_dcin_reuse_new();
    ck_assert_ptr_nonnull(ctx);
    cs_txn_record *rec;
    uint64_t n, replayed;
    cs_engine_stats st;
    dcin_stats ist;
    run_job_ctx(&job, true, ctx, &rec, &n, &st, &ist, &replayed);
    free(rec);
    cs_job quick = job;
    quick.engine.deadlock_guard_ticks = 8;
    rc[k] = run_job_ops(&quick, ops[k], true, ctx, &rec, &n, &st, &ist, &replayed, &err[k]);
    free(rec);
    cs_dcin_reuse_free(ctx);
  }
  ck_assert_int_eq(rc[0], CS_EDEADLOCK);
  ck_assert_int_eq(rc[1], CS_EDEADLOCK);
  ck_assert_str_eq(err[0].msg, err[1].msg);
  ck_assert_msg(strstr(err[0].msg, "step 0:") != NULL, "%s", err[0].msg);
}
END_TEST

/* A step's reqs handed over in one call (inject_step) must give exactly what injecting them one
 * by one gives: the same records, statistics and engine state, for replayed steps (the ring
 * AllReduce, 12 of 14 replayed, whole or round trip by round trip) and simulated ones (the
 * pairwise AllToAll; the AllReduce with reuse off). */
START_TEST(inject_step_should_give_the_bits_of_injecting_request_by_request) {
  const int ring[8] = {0, 5, 10, 15, 20, 25, 30, 35}, local[8] = {0, 3, 5, 6, 9, 10, 12, 15};
  static const struct {
    cs_primitive prim;
    bool reuse, finish;
  } jobs[] = {{CS_PRIM_ALLREDUCE, true, true},
              {CS_PRIM_ALLREDUCE, true, false},
              {CS_PRIM_ALLREDUCE, false, true},
              {CS_PRIM_ALLTOALL, true, true}};
  for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
    cs_job job;
    cs_test_job(&job, "dcin", jobs[k].prim, 65536, jobs[k].prim == CS_PRIM_ALLTOALL ? local : ring,
                8);
    if (jobs[k].prim == CS_PRIM_ALLTOALL) {
      snprintf(job.adapter.topology, sizeof job.adapter.topology, "5x4");
      snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "1die");
      job.adapter.num_dies = 1;
      job.adapter.num_initiators = job.adapter.num_targets = 20;
    }
    cs_engine_ops variant[2] = {cs_dcin_ops, cs_dcin_ops};
    variant[1].inject_step = NULL; /* request by request */
    for (int i = 0; i < 2; i++)
      if (!jobs[k].finish) variant[i].finish_step = NULL;
    const cs_engine_ops *const ops[2] = {&variant[0], &variant[1]};
    uint64_t replayed[2];
    run_job_both_ops(&job, ops, jobs[k].reuse, replayed, k);
    ck_assert_uint_eq(replayed[0], replayed[1]);
    if (jobs[k].reuse && jobs[k].prim == CS_PRIM_ALLREDUCE)
      ck_assert_uint_eq(replayed[0], 12); /* 2 (N - 1) steps, the first two recorded */
  }
}
END_TEST

/* The scheduler's estimate follows what the engine simulates (docs/dcin-model.md, "Exact step
 * reuse"): a ring algorithm simulates two steps and replays the rest when its steps end quiet, a
 * pairwise all-to-all simulates every step, and above 1024 write trackers over the participants
 * of a multi-die chip ring steps end with write data in flight and are all simulated. */
START_TEST(cost_should_follow_the_steps_the_engine_simulates) {
  int parts[40];
  for (int i = 0; i < 40; i++) parts[i] = i;
  cs_job ring, a2a;
  cs_test_job(&ring, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  cs_test_job(&a2a, "dcin", CS_PRIM_ALLTOALL, 1 << 20, parts, 8);
  /* 8 participants x 128 trackers: quiet ends; 1000 transactions per step */
  double ring14 = cs_dcin_ops.cost(&ring, 14000, 14), ring28 = cs_dcin_ops.cost(&ring, 28000, 28);
  double a2a7 = cs_dcin_ops.cost(&a2a, 7000, 7), a2a14 = cs_dcin_ops.cost(&a2a, 14000, 14);
  ck_assert(a2a7 > 2.5 * ring14);                     /* 7 steps simulated against 2 */
  ck_assert(ring28 < 1.5 * ring14);                   /* the 14 more are replayed */
  ck_assert(a2a14 > 1.9 * a2a7 && a2a14 < 2.1 * a2a7); /* each simulated */
  /* 40 participants x 128 trackers on 2 dies: every ring step simulated, like the all-to-all */
  ring.spec.num_participants = 40;
  double busy = cs_dcin_ops.cost(&ring, 14000, 14);
  ck_assert(busy > 5.0 * ring14);
  ring.adapter.mst_wr_outstanding = 16; /* 640 trackers: quiet again */
  ck_assert(cs_dcin_ops.cost(&ring, 14000, 14) == ring14);
  ring.adapter.mst_wr_outstanding = 128;
  ring.adapter.num_dies = 1; /* one die: no cross-die writes */
  ck_assert(cs_dcin_ops.cost(&ring, 14000, 14) < ring14);
}
END_TEST

/* A latency-bound job costs its cycles.  The default test job: 2 dies, burst 4.  A P2P of 1000
 * transactions in one step: the transactions' work is (1 + 4/2)(1 + 0.7) = 5.1 us each, 5100 us;
 * the cycles' work is ceil(1000 / outstanding) round trips of 200 + 150 + 2 x 4 = 358 cycles at
 * 0.1 x 2 us each.  Plus 50 + 4 x 1 steps. */
START_TEST(cost_should_count_the_round_trips_of_a_latency_bound_job) {
  const int pair[2] = {39, 0};
  cs_job p2p;
  cs_test_job(&p2p, "dcin", CS_PRIM_P2P, 1 << 20, pair, 2);
  p2p.spec.p2p_op = CS_P2P_READ;
  /* 128 outstanding: 8 rounds, 573 us of cycles, less than the 5100 us of transactions */
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&p2p, 1000, 1), 54.0 + 5100.0, 1e-6);
  p2p.adapter.mst_rd_outstanding = 2; /* 500 rounds: 35 800 us */
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&p2p, 1000, 1), 54.0 + 500 * 358 * 0.2, 1e-6);
  p2p.adapter.mst_rd_outstanding = 4; /* 250 rounds */
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&p2p, 1000, 1), 54.0 + 250 * 358 * 0.2, 1e-6);
  p2p.spec.p2p_op = CS_P2P_WRITE; /* a write is bound by the 128 write trackers */
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&p2p, 1000, 1), 54.0 + 5100.0, 1e-6);
  p2p.adapter.mst_wr_outstanding = 2;
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&p2p, 1000, 1), 54.0 + 500 * 358 * 0.2, 1e-6);
  /* a collective's flows run side by side: 8 participants at outstanding 2, two of 14 steps of
   * 1000 simulated: ceil(2000 / 8 / 2) = 125 rounds, 8 950 us, against 2000 x 5.1 + 12000 x 0.2 */
  int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_job ring;
  cs_test_job(&ring, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  ring.adapter.mst_wr_outstanding = 2;
  ck_assert_double_eq_tol(cs_dcin_ops.cost(&ring, 14000, 14), 50.0 + 56.0 + 10200.0 + 2400.0,
                          1e-6);
}
END_TEST

/* Jobs share recorded steps when chip, resources, size and participants agree, whatever the
 * collective (reuse.c): the same share group then, another one when any of those differs. */
START_TEST(share_group_should_join_the_collectives_of_one_setting) {
  const int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  const cs_primitive prims[] = {CS_PRIM_ALLREDUCE, CS_PRIM_ALLGATHER, CS_PRIM_REDUCESCATTER,
                                CS_PRIM_ALLTOALL};
  cs_job job;
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  uint64_t g = cs_dcin_ops.share_group(&job);
  ck_assert_uint_ne(g, 0);
  for (size_t i = 1; i < sizeof prims / sizeof prims[0]; i++) {
    cs_test_job(&job, "dcin", prims[i], 1 << 20, parts, 8);
    ck_assert_uint_eq(cs_dcin_ops.share_group(&job), g);
  }
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 21, parts, 8);
  ck_assert_uint_ne(cs_dcin_ops.share_group(&job), g);
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 4);
  ck_assert_uint_ne(cs_dcin_ops.share_group(&job), g);
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  job.spec.participants[7] = 36;
  ck_assert_uint_ne(cs_dcin_ops.share_group(&job), g);
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  job.adapter.mst_wr_outstanding = 16;
  ck_assert_uint_ne(cs_dcin_ops.share_group(&job), g);
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  snprintf(job.adapter.dcin_layout, sizeof job.adapter.dcin_layout, "2die_spread");
  ck_assert_uint_ne(cs_dcin_ops.share_group(&job), g);
  cs_test_job(&job, "dcin", CS_PRIM_ALLREDUCE, 1 << 20, parts, 8);
  snprintf(job.spec.dtype, sizeof job.spec.dtype, "fp32"); /* metadata only */
  ck_assert_uint_eq(cs_dcin_ops.share_group(&job), g);
}
END_TEST

/* A req refused inside a step's call: the same code and message as when it is injected alone,
 * and *injected names it (the fourth: its target is outside the chip's 40 endpoints). */
START_TEST(inject_step_should_refuse_a_req_as_inject_does) {
  cs_job job;
  const int parts[8] = {0, 5, 10, 15, 20, 25, 30, 35};
  cs_test_job(&job, "dcin", CS_PRIM_ALLTOALL, 65536, parts, 8);
  cs_inject reqs[5];
  for (int i = 0; i < 5; i++)
    reqs[i] = (cs_inject){.request_id = (uint64_t)i,
                          .src_id = 5 * i,
                          .dst_id = 5 * i + 1,
                          .is_read = 0,
                          .packet_type = CS_PKT_REQ,
                          .burst_length = 4};
  reqs[3].dst_id = 40;
  void *e[2] = {ops_engine(&job), ops_engine(&job)};
  cs_err err[2];
  size_t injected = 99;
  ck_assert_int_eq(cs_dcin_ops.inject_step(e[0], reqs, 5, &injected, &err[0]), CS_EINVAL);
  ck_assert_uint_eq(injected, 3);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(cs_dcin_ops.inject(e[1], &reqs[i], &err[1]), 0);
  ck_assert_int_eq(cs_dcin_ops.inject(e[1], &reqs[3], &err[1]), CS_EINVAL);
  ck_assert_str_eq(err[0].msg, err[1].msg);
  ck_assert_str_eq(err[0].msg, "request 3: endpoint 15->40 outside 0..39");
  for (int i = 0; i < 2; i++) cs_dcin_ops.destroy(e[i]);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dcin");
  TCase *tc = tcase_create("ring");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, ring_move_should_advance_one_slice_per_cycle_and_loop_back);
  tcase_add_test(tc, ring_move_should_stall_at_wrap_behind_slice_zero);
  tcase_add_test(tc, ring_move_should_rotate_a_completely_full_ring);
  tcase_add_test(tc, ring_move_in_compat_should_freeze_a_full_ring_and_report_the_cycle);
  tcase_add_test(tc, ring_move_should_equal_the_slice_scan_at_any_fill);
  tcase_add_test(tc, first_lane_should_follow_xy_or_yx);
  suite_add_tcase(s, tc);
  tc = tcase_create("tags");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, etag_should_upgrade_t2_to_t0_on_tl_and_win_the_t0_entry);
  tcase_add_test(tc, etag_t0_should_go_to_the_round_robin_winner_only);
  tcase_add_test(tc, etag_with_t1_should_upgrade_in_two_steps);
  tcase_add_test(tc, itag_should_reserve_a_slot_for_a_starved_head);
  suite_add_tcase(s, tc);
  tc = tcase_create("protocol");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, sn_should_retry_then_pcredit_when_trackers_run_out);
  tcase_add_test(tc, rn_should_hold_requests_without_a_tracker);
  tcase_add_test(tc, d2d_rn_should_back_pressure_not_drop);
  tcase_add_test(tc, token_bucket_should_refill_at_its_rate_up_to_its_size);
  tcase_add_test(tc, axi_channel_should_deliver_after_latency_at_configured_bandwidth);
  tcase_add_test(tc, check_should_detect_a_lost_flit);
  tcase_add_test(tc, many_transactions_should_all_complete_with_flits_conserved);
  suite_add_tcase(s, tc);
  tc = tcase_create("ops");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, ops_should_reproduce_native_timing_through_the_adapter);
  tcase_add_test(tc, pool_fault_should_stop_the_job_with_its_message);
  tcase_add_test(tc, ops_should_reject_rsp_before_req_phase_and_reversed_ids);
  tcase_add_test(tc, same_job_twice_should_give_identical_bits);
  tcase_add_test(tc, step_reuse_should_give_the_bits_of_simulating_every_step);
  tcase_add_test(tc, shared_reuse_context_should_replay_across_jobs_with_the_same_bits);
  tcase_add_test(tc, a_step_that_starts_where_an_earlier_one_did_should_replay_it);
  tcase_add_test(tc, chained_steps_should_replay_across_jobs_with_the_same_bits);
  tcase_add_test(tc, full_reuse_context_should_drop_its_least_recently_used_steps);
  tcase_add_test(tc, finish_step_should_give_the_bits_of_the_per_transaction_round_trips);
  tcase_add_test(tc, finish_step_should_leave_a_step_the_guard_stops_to_the_round_trips);
  tcase_add_test(tc, inject_step_should_give_the_bits_of_injecting_request_by_request);
  tcase_add_test(tc, inject_step_should_refuse_a_req_as_inject_does);
  tcase_add_test(tc, cost_should_follow_the_steps_the_engine_simulates);
  tcase_add_test(tc, cost_should_count_the_round_trips_of_a_latency_bound_job);
  tcase_add_test(tc, share_group_should_join_the_collectives_of_one_setting);
  tcase_add_test(tc, create_should_reject_inconsistent_adapter_fields);
  tcase_add_test(tc, ticks_should_follow_the_driver_frequency);
  tcase_add_test(tc, described_transactions_should_be_recycled);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cs_test_run(suite()); }
