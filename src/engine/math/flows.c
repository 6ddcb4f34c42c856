/* The terms of one flow-channel (a flow's requests on one physical channel, in one step):
 * where its data goes, how long one of its transactions takes alone, how long it holds the
 * trackers that limit it, and so the rate it could take alone.  docs/math-engine.md derives each
 * term; the latencies are NoC cycles until the end, where they become ns. */
#include <math.h>
#include <stdlib.h>

#include "math_int.h"

static int push_res(mres *r, int id) {
  if (!math_grow((void **)&r->ids, &r->cap, r->n + 1, sizeof *r->ids)) return CS_ENOMEM;
  r->ids[r->n++] = id;
  return CS_OK;
}

/* The ring links of a route, appended to r; returns the route's NoC cycles (or -1: no memory). */
static double route(const mchip *c, const cs_math_params *p, int die, int a, int b, mres *r) {
  if (!math_grow((void **)&r->ids, &r->cap, r->n + (size_t)(c->die.rows + c->die.cols), sizeof *r->ids))
    return -1;
  size_t n = 0;
  double cycles = mchip_path(c, p, die, a, b, r->ids + r->n, &n);
  r->n += n;
  return cycles;
}

/* Times of one transaction alone, in NoC cycles from its issue, for a full burst. */
typedef struct alone {
  double grant, wdata_gen, wdata_done, final;
  double hold;     /* the GDMA's tracker: until DBID (die-local write) or the final completion */
  double ddr_hold; /* the target's tracker, from the grant */
  double per_flit; /* the final completion per flit of the burst */
  double retry_hops; /* one way between GDMA and target, for a Retry round */
} alone;

static void local_write(const mchip *c, const cs_math_params *p, const cs_adapter_config *ad,
                        double h, int burst, alone *a) {
  double flit = c->f_noc / c->f_ip; /* the GDMA makes one data flit per IP cycle */
  a->grant = p->req_cycles + h;
  a->wdata_gen = a->grant + p->dbid_cycles + h;
  a->per_flit = flit;
  a->final = a->wdata_gen + p->data_cycles + h + flit * (burst - 1);
  a->wdata_done = a->final;
  a->hold = a->wdata_gen + p->tracker_slack_cycles;
  a->ddr_hold = a->final - a->grant + c->die.sn_tracker_release_latency_ns * c->f_noc;
  a->retry_hops = h;
  (void)ad;
}

static void local_read(const mchip *c, const cs_math_params *p, double h, int burst, alone *a) {
  double flit = c->f_noc / c->f_ip;
  a->grant = p->req_cycles + h;
  a->per_flit = flit;
  a->final = a->grant + c->die.ddr_r_latency_ns * c->f_noc + p->read_cycles + h +
             flit * (burst - 1);
  a->wdata_gen = a->wdata_done = 0;
  a->hold = a->final + p->tracker_slack_cycles;
  a->ddr_hold = c->die.ddr_r_latency_ns * c->f_noc + flit * burst; /* until the data leaves */
  a->retry_hops = h;
}

/* h1: source node to the link on the source die, h2: the link's far end to the target. */
static void cross_write(const mchip *c, const cs_math_params *p, double h1, double h2, int burst,
                        alone *a) {
  double flit = c->f_noc / c->f_ip;
  a->grant = p->req_cycles + h1; /* the local D2D_SN grants: the GDMA may send its data */
  a->wdata_gen = a->grant + p->dbid_cycles + h1;
  a->wdata_done = a->wdata_gen + p->data_cycles + h1 + flit * (burst - 1);
  double axi = (c->lay.aw_latency_ns + c->lay.b_latency_ns) * c->f_noc;
  /* AW + W over the link, the far D2D_RN's request and DBID, B back at once, Comp to the GDMA */
  a->per_flit = flit + p->d2d_flit_cycles;
  a->final = a->wdata_done + axi + p->req_cycles + p->dbid_cycles + 2 * h2 + p->d2d_write_cycles +
             h1 + p->d2d_flit_cycles * (burst - 1);
  a->hold = a->final + p->tracker_slack_cycles;
  a->ddr_hold = 0;
  a->retry_hops = h1;
}

static void cross_read(const mchip *c, const cs_math_params *p, double h1, double h2, int burst,
                       alone *a) {
  double flit = c->f_noc / c->f_ip;
  /* the far DDR grants the request the far D2D_RN forwards */
  a->grant = p->req_cycles + h1 + c->lay.ar_latency_ns * c->f_noc + p->req_cycles + h2;
  /* the D2D_SN collects the burst from R and forwards it at the IP clock */
  a->per_flit = 2 * flit + p->d2d_flit_cycles;
  a->final = a->grant + c->die.ddr_r_latency_ns * c->f_noc + p->read_cycles + h2 +
             c->lay.r_latency_ns * c->f_noc + p->d2d_read_cycles + h1 + a->per_flit * (burst - 1);
  a->wdata_gen = a->wdata_done = 0;
  a->hold = a->final + p->tracker_slack_cycles;
  a->ddr_hold = 0;
  a->retry_hops = h1;
}

/* The rate a channel of `trackers` trackers, each held `hold` ns, can push n transactions of
 * txn_bytes at, with one transaction every `tau` ns at most: the first issues at once, the rest
 * in rounds of `trackers`, each round taking max(hold, trackers * tau). */
static double tracker_rate(uint32_t n, int trackers, double hold, double tau, double bytes_after) {
  if (n <= 1 || bytes_after <= 0) return INFINITY;
  double round = hold > trackers * tau ? hold : trackers * tau;
  double span = (double)((n - 1) / (uint32_t)trackers) * round + (double)((n - 1) % (uint32_t)trackers) * tau;
  return bytes_after / span;
}

/* A die-local write's rate once its target's share trackers run short: every request retried
 * when the source holds as many trackers as the target (a Retry round per transaction, and three
 * RSP flits per transaction from the target's node, for both its channels), or, when the source's
 * steady demand fills more than retry_threshold of them, the target trackers held also while the
 * source's write buffer drains.  INFINITY: no limit. */
static double retry_rate(const mchip *c, const cs_math_params *p, const cs_adapter_config *ad,
                         const alone *a, uint32_t n, int trackers, double rate, double tau,
                         double txn_bytes, double ch_bw) {
  int slv = ad->slv_wr_outstanding;
  if (n <= (uint32_t)slv) return INFINITY;
  double ddr_hold = a->ddr_hold / c->f_noc;
  if (trackers >= slv) {
    double round = 4 * a->retry_hops / c->f_noc + p->retry_ns;
    double by_trackers = slv * txn_bytes / round;
    double by_rsp = c->f_noc / 3.0 / 2.0 * txn_bytes;
    return by_trackers < by_rsp ? by_trackers : by_rsp;
  }
  double per_ns = rate / txn_bytes;
  double demand = rate >= ch_bw * 0.999
                      ? per_ns * (trackers * tau + a->retry_hops / c->f_noc +
                                  c->die.sn_tracker_release_latency_ns)
                      : per_ns * ddr_hold;
  if (demand <= p->retry_threshold * slv) return INFINITY;
  return slv * txn_bytes / (ddr_hold + trackers * tau);
}

int mfc_price(const mchip *c, const cs_math_params *p, const cs_adapter_config *ad, mfc *f,
              mres *r, cs_err *err) {
  int burst = f->burst;
  cs_endpoint s = cs_scheme_locate(&c->die, f->src);
  cs_endpoint d = cs_scheme_locate(&c->die, f->dst);
  f->cross = s.die != d.die;
  f->link = f->link_dir = f->d2d_src = f->d2d_dst = -1;
  f->res_first = r->n;
  alone a;
  /* a cross-die write completes when the far D2D_RN has its DBID (B goes back at once): its
   * data's way from there to the DDR is off the step's path, buffered in the D2D_RN */
  bool far_data = !(f->cross && !f->is_read);
  if (push_res(r, mchip_gdma(c, f->src, f->ch)) ||
      (far_data && push_res(r, mchip_ddr(c, f->dst, f->ch))))
    return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
  double h1, h2 = 0;
  if (!f->cross) {
    /* write data runs GDMA -> DDR, read data DDR -> GDMA; the request the other way (the same
     * hops: XY routes between two nodes are as long both ways) */
    h1 = f->is_read ? route(c, p, d.die, d.node, s.node, r) : route(c, p, s.die, s.node, d.node, r);
    if (h1 < 0) return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    if (f->is_read)
      local_read(c, p, h1, burst, &a);
    else
      local_write(c, p, ad, h1, burst, &a);
  } else {
    bool from_a = false;
    int link = cs_topo_d2d_link(&c->lay, s.die, s.node, d.die, d.node, f->ch, &from_a);
    if (link < 0)
      return cs_err_set(err, CS_EINVAL, "math engine: no D2D link joins die %d and die %d in layout %s",
                        s.die, d.die, c->lay.name);
    const cs_d2d_link *l = &c->lay.links[link];
    f->link = link;
    f->link_dir = from_a ? 0 : 1;
    f->d2d_src = from_a ? l->node_a : l->node_b;
    f->d2d_dst = from_a ? l->node_b : l->node_a;
    int sn = c->base_sn + s.die * c->per_die + f->d2d_src;
    int rn = c->base_rn + d.die * c->per_die + f->d2d_dst;
    /* the link's direction data takes: towards the target for writes, back for reads */
    int axi = c->base_axi + 2 * link + (f->is_read ? 1 - f->link_dir : f->link_dir);
    if (f->is_read) {
      h2 = route(c, p, d.die, d.node, f->d2d_dst, r);
      h1 = h2 < 0 ? -1 : route(c, p, s.die, f->d2d_src, s.node, r);
    } else {
      h1 = route(c, p, s.die, s.node, f->d2d_src, r);
      h2 = mchip_path(c, p, d.die, f->d2d_dst, d.node, NULL, NULL);
    }
    if (h1 < 0 || h2 < 0 || push_res(r, axi) || push_res(r, sn) || (far_data && push_res(r, rn)))
      return cs_err_set(err, CS_ENOMEM, "math engine: out of memory");
    if (f->is_read)
      cross_read(c, p, h1, h2, burst, &a);
    else
      cross_write(c, p, h1, h2, burst, &a);
  }
  f->n_res = r->n - f->res_first;

  double ns = 1.0 / c->f_noc;
  f->grant_ns = a.grant * ns;
  f->wdata_gen_ns = a.wdata_gen * ns;
  f->wdata_done_ns = a.wdata_done * ns;
  f->final_ns = a.final * ns;
  f->flit_ns = a.per_flit * ns;

  /* the channel's own rate: its trackers (Little's law, in rounds), its IP, its target's Retry */
  double txn_bytes = (double)burst * ad->bw_bytes;
  int trackers = (f->is_read ? ad->mst_rd_outstanding : ad->mst_wr_outstanding) / CS_SCHEME_CHANNELS;
  if (trackers < 1) trackers = 1;
  double ch_bw = c->cap[mchip_gdma(c, f->src, f->ch)];
  double hold = a.hold * ns, tau = txn_bytes / ch_bw;
  double rate = trackers * txn_bytes / hold;
  if (rate > ch_bw) rate = ch_bw;
  if (!f->cross && !f->is_read) {
    double limit = retry_rate(c, p, ad, &a, f->n_txns, trackers, rate, tau, txn_bytes, ch_bw);
    if (txn_bytes / limit > tau) tau = txn_bytes / limit;
  }
  f->rate_cap = tracker_rate(f->n_txns, trackers, hold, tau, f->bytes - f->first_bytes);
  f->weight = trackers * txn_bytes / hold;
  /* its data meets the others: from the D2D_SN on for a cross-die write (its bottleneck is the
   * link), from its creation (DBID) for a local write, from the DDR's latency for a read */
  f->start_ns = (f->is_read ? a.grant + c->die.ddr_r_latency_ns * c->f_noc
                 : f->cross ? a.wdata_done : a.wdata_gen) * ns;
  return CS_OK;
}
