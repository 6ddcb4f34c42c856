/* Converts the die file, the layout file and the adapter configuration into the engine's cycle
 * parameters.  Invariant: every latency is int(ns * CYCLES_PER_NS) sim cycles, every rate is in
 * flits per sim cycle, and every tracker count is derived from the adapter (buffers = trackers x
 * burst), so two engines built from the same job hold identical numbers.
 */
#include <math.h>
#include <string.h>

#include "commsweep/hash.h"
#include "model.h"

uint32_t dcin_ns_to_cycles(const dcin_cfg *c, double ns) {
  double v = ns * c->cycles_per_ns;
  return v <= 0 ? 0u : (uint32_t)(v + 1e-9);
}

double dcin_cycles_to_ns(const dcin_cfg *c, uint64_t cycles) {
  return nearbyint((double)cycles / c->cycles_per_ns); /* default rounding mode: half to even */
}

static int freq16(double ghz, const char *what, long *out, cs_err *err) {
  double v = ghz * 16.0;
  long r = lround(v);
  if (!(ghz > 0) || fabs(v - (double)r) > 1e-6 || r <= 0)
    return cs_err_set(err, CS_EINVAL, "%s %g GHz is not a positive multiple of 1/16 GHz", what,
                      ghz);
  *out = r;
  return 0;
}

/* T2/T1/T0 split of an eject FIFO of depth D for one lane (crossring-model.md 1.5). */
static void etag_split(int depth, int t2, int t1, bool t1_on, bool negative, int cap[3]) {
  if (t2 > depth) t2 = depth;
  if (t1 > depth) t1 = depth;
  if (negative) {
    cap[DCIN_T2] = t2;
    cap[DCIN_T1] = t1_on ? t1 - t2 : 0;
    cap[DCIN_T0] = t1_on ? depth - t1 : depth - t2;
  } else {
    cap[DCIN_T2] = t2;
    cap[DCIN_T1] = t1_on ? depth - t2 : 0;
    cap[DCIN_T0] = 0;
  }
  for (int i = 0; i < 3; i++)
    if (cap[i] < 0) cap[i] = 0;
}

int dcin_cfg_build(const cs_die_params *p, const cs_adapter_config *ad, dcin_cfg *c, cs_err *err) {
  memset(c, 0, sizeof *c);
  long a = 1, b = 1;
  int rc;
  if ((rc = freq16(ad->noc_frequency_ghz, "noc_frequency_ghz", &a, err))) return rc;
  if ((rc = freq16(ad->ip_frequency_ghz, "ip_frequency_ghz", &b, err))) return rc;
  long sim16 = a / (long)cs_gcd_u64((uint64_t)a, (uint64_t)b) * b; /* a, b > 0 */
  c->net_scale = (int)(sim16 / a);
  c->ip_scale = (int)(sim16 / b);
  c->cycles_per_ns = (double)sim16 / 16.0;
  c->cycles_per_ns_int = (int)c->cycles_per_ns;
  if (p->rows < 1 || p->cols < 1 || p->rows * p->cols > 4096)
    return cs_err_set(err, CS_EINVAL, "die '%s': %dx%d nodes out of range", p->name, p->rows,
                      p->cols);
  c->rows = p->rows;
  c->cols = p->cols;
  c->nodes = p->rows * p->cols;
  c->s_h = p->slice_per_link_h;
  c->s_v = p->slice_per_link_v;
  if (c->s_h < 1 || c->s_v < 1 || c->s_h > 64 || c->s_v > 64)
    return cs_err_set(err, CS_EINVAL, "die '%s': slice_per_link must be 1..64", p->name);
  if (p->cp_slice_count != 2)
    return cs_err_set(err, CS_EINVAL, "die '%s': cp_slice_count %d unsupported (only 2)", p->name,
                      p->cp_slice_count);
  c->flit_bytes = ad->bw_bytes;
  c->burst = ad->burst_length;
  if (c->burst < 1 || c->burst > 255)
    return cs_err_set(err, CS_EINVAL, "burst_length %d out of range 1..255", c->burst);
  c->iq_ch = p->iq_ch_fifo_depth;
  c->eq_ch = p->eq_ch_fifo_depth;
  c->l2h = p->ip_l2h_fifo_depth;
  c->h2l_h = p->ip_h2l_h_fifo_depth;
  c->h2l_l = p->ip_h2l_l_fifo_depth;
  c->arb_in = 2;
  c->iq_out[DCIN_TR] = c->iq_out[DCIN_TL] = p->iq_out_fifo_depth_h;
  c->iq_out[DCIN_TD] = c->iq_out[DCIN_TU] = p->iq_out_fifo_depth_v;
  c->iq_out[DCIN_IQ_EQ] = p->iq_out_fifo_depth_eq;
  c->rb_in = p->rb_in_fifo_depth;
  c->rb_out = p->rb_out_fifo_depth;
  c->eq_in = p->eq_in_fifo_depth;
  int depths[] = {c->iq_ch,  c->eq_ch, c->l2h,       c->h2l_h,     c->h2l_l,    c->rb_in,
                  c->rb_out, c->eq_in, c->iq_out[0], c->iq_out[2], c->iq_out[4]};
  for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++)
    if (depths[i] < 1 || depths[i] > 255)
      return cs_err_set(err, CS_EINVAL, "die '%s': FIFO depth %d out of range 1..255", p->name,
                        depths[i]);
  c->etag_t1 = p->etag_t1_enabled;
  c->etag_bothside = p->etag_bothside_upgrade;
  c->yx = p->routing_yx;
  /* the lanes that eject into the ring bridge (first dimension) vs the EQ (second) */
  int dep_first = c->rb_in, dep_second = c->eq_in;
  int dep_h = c->yx ? dep_second : dep_first, dep_v = c->yx ? dep_first : dep_second;
  etag_split(dep_h, p->tl_etag_t2, p->tl_etag_t1, c->etag_t1, true, c->etag_cap[DCIN_TL]);
  etag_split(dep_h, p->tr_etag_t2, 0, c->etag_t1, false, c->etag_cap[DCIN_TR]);
  etag_split(dep_v, p->tu_etag_t2, p->tu_etag_t1, c->etag_t1, true, c->etag_cap[DCIN_TU]);
  etag_split(dep_v, p->td_etag_t2, 0, c->etag_t1, false, c->etag_cap[DCIN_TD]);
  c->itag_th[0] = p->itag_trigger_th_h;
  c->itag_th[1] = p->itag_trigger_th_v;
  c->itag_max[0] = p->itag_max_num_h;
  c->itag_max[1] = p->itag_max_num_v;
  c->ddr_r_lat = dcin_ns_to_cycles(c, p->ddr_r_latency_ns);
  c->ddr_r_var = dcin_ns_to_cycles(c, p->ddr_r_latency_var_ns);
  c->ddr_w_lat = dcin_ns_to_cycles(c, p->ddr_w_latency_ns);
  c->l2m_r_lat = dcin_ns_to_cycles(c, p->l2m_r_latency_ns);
  c->l2m_w_lat = dcin_ns_to_cycles(c, p->l2m_w_latency_ns);
  c->sn_release = dcin_ns_to_cycles(c, p->sn_tracker_release_latency_ns);
  c->sn_proc = dcin_ns_to_cycles(c, p->sn_processing_latency_ns);
  c->rn_proc = dcin_ns_to_cycles(c, p->rn_processing_latency_ns);
  /* Both DMA and DDR buckets: GB/s / CYCLES_PER_NS / flit bytes flits per cycle, the bucket holds
   * as many flits as the GB/s figure (CrossRing's sizing), and starts full. */
  c->dma_rate = p->gdma_bw_limit_gb_per_s / c->cycles_per_ns / c->flit_bytes;
  c->dma_cap = p->gdma_bw_limit_gb_per_s;
  c->ddr_rate = p->ddr_bw_limit_gb_per_s / c->cycles_per_ns / c->flit_bytes;
  c->ddr_cap = p->ddr_bw_limit_gb_per_s;
  if (ad->mst_rd_outstanding < 2 || ad->mst_wr_outstanding < 2 || ad->slv_rd_outstanding < 1 ||
      ad->slv_wr_outstanding < 1)
    return cs_err_set(err, CS_EINVAL, "outstanding settings must be >= 2 (mst) and >= 1 (slv)");
  c->rn_rd_trk = ad->mst_rd_outstanding / 2;
  c->rn_wr_trk = ad->mst_wr_outstanding / 2;
  c->rn_rdb = c->rn_rd_trk * c->burst;
  c->rn_wdb = c->rn_wr_trk * c->burst;
  c->sn_ro_trk = ad->slv_rd_outstanding;
  c->sn_share_trk = ad->slv_wr_outstanding;
  c->sn_wdb = c->sn_share_trk * c->burst;
  return 0;
}

int dcin_lcfg_build(const cs_layout *l, const dcin_cfg *c, dcin_lcfg *lc, cs_err *err) {
  memset(lc, 0, sizeof *lc);
  lc->axi_lat[DCIN_AR] = dcin_ns_to_cycles(c, l->ar_latency_ns);
  lc->axi_lat[DCIN_R] = dcin_ns_to_cycles(c, l->r_latency_ns);
  lc->axi_lat[DCIN_AW] = dcin_ns_to_cycles(c, l->aw_latency_ns);
  lc->axi_lat[DCIN_W] = dcin_ns_to_cycles(c, l->w_latency_ns);
  lc->axi_lat[DCIN_B] = dcin_ns_to_cycles(c, l->b_latency_ns);
  double per = c->cycles_per_ns * c->flit_bytes;
  lc->axi_rate = l->axi_bw_gb_per_s / per;
  lc->axi_cap = l->axi_bw_gb_per_s;
  lc->rn_rate = l->d2d_rn_bw_gb_per_s / per;
  lc->rn_cap = l->d2d_rn_bw_gb_per_s;
  lc->sn_rate = l->d2d_sn_bw_gb_per_s / per;
  lc->sn_cap = l->d2d_sn_bw_gb_per_s;
  if (l->num_links > 0 && (lc->axi_rate <= 0 || lc->rn_rate <= 0 || lc->sn_rate <= 0))
    return cs_err_set(err, CS_EINVAL, "layout '%s': D2D bandwidths must be positive", l->name);
  /* D2D trackers: buffer / burst (CrossRing's "auto"), buffers as configured */
  lc->rn_rdb = l->d2d_rn_rdb_size;
  lc->rn_wdb = l->d2d_rn_wdb_size;
  lc->sn_rdb = l->d2d_sn_rdb_size;
  lc->sn_wdb = l->d2d_sn_wdb_size;
  lc->rn_rd_trk = lc->rn_rdb / c->burst;
  lc->rn_wr_trk = lc->rn_wdb / c->burst;
  lc->sn_ro_trk = lc->sn_rdb / c->burst;
  lc->sn_share_trk = lc->sn_wdb / c->burst;
  if (l->num_links > 0 &&
      (lc->rn_rd_trk < 1 || lc->rn_wr_trk < 1 || lc->sn_ro_trk < 1 || lc->sn_share_trk < 1))
    return cs_err_set(err, CS_EINVAL, "layout '%s': D2D buffers smaller than one burst", l->name);
  lc->select = (int)l->select;
  return 0;
}
