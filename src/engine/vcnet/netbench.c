/* Synthetic traffic on the router network (commsweep netbench): Bernoulli packet creation at a
 * given rate in flits per endpoint per cycle, a destination pattern, and latency and throughput
 * measured over a window after a warm-up, in the manner of BookSim's traffic manager.
 *
 * Each endpoint draws from its own random stream and keeps its own clock of creation times
 * (BookSim's qtime): while its previous packet still has flits to send it creates nothing; once
 * it has sent them, it tries the cycles from its clock up to now, one Bernoulli trial each, until
 * one creates a packet (created at that trial's cycle, so source queueing counts in the latency)
 * or the clock reaches now.  An endpoint so holds one packet at most, whatever the load, and
 * saturation costs what the network carries, not what was offered.  Packets created inside the
 * measure window are the measured ones; their latency runs from creation to the delivery of
 * their tail.  Accepted throughput counts flits delivered during the window.  After the window
 * traffic continues until every endpoint's clock has passed it and every measured packet is
 * delivered, or drain_limit cycles pass (then the run is saturated). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/vcnet.h"
#include "vcnet_int.h"

typedef enum { PAT_UNIFORM, PAT_TRANSPOSE, PAT_BITCOMP, PAT_TORNADO, PAT_HOTSPOT } pattern;

typedef struct bench {
  vcn_net *net;
  uint64_t win_begin, win_end;
  uint64_t measured_out, measured_done;
  uint64_t flits_in_window;
  uint64_t *hist;      /* packets by latency in cycles */
  size_t cap_hist;     /* entries of hist */
  uint64_t n_lat;      /* measured packets delivered */
  double sum_lat;
  int oom;
} bench;

static uint64_t next_rand(uint64_t *s) {
  /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

static double uniform01(uint64_t *s) { return (double)(next_rand(s) >> 11) * (1.0 / 9007199254740992.0); }

static void on_deliver(void *ctx, vcn_net *net, uint32_t pi) {
  bench *b = ctx;
  const vcn_pkt *p = &net->pkt[pi];
  if (!p->tag) return;
  b->measured_done++;
  uint64_t lat = net->now - p->t_created;
  if (lat >= b->cap_hist) {
    size_t cap = b->cap_hist ? b->cap_hist : 1024;
    while (cap <= lat) cap *= 2;
    uint64_t *h = realloc(b->hist, cap * sizeof *h);
    if (!h) {
      b->oom = 1;
      return;
    }
    memset(h + b->cap_hist, 0, (cap - b->cap_hist) * sizeof *h);
    b->hist = h;
    b->cap_hist = cap;
  }
  b->hist[lat]++;
  b->n_lat++;
  b->sum_lat += (double)lat;
}

static int parse_pattern(const char *name, const vcn_topo *t, pattern *out, cs_err *err) {
  static const char *const names[] = {"uniform", "transpose", "bitcomp", "tornado", "hotspot"};
  for (int i = 0; i < 5; i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (pattern)i;
      if (*out == PAT_TRANSPOSE) {
        for (int d = 1; d < t->ndims; d++)
          if (t->radix[d] != t->radix[0])
            return cs_err_set(err, CS_EINVAL, "pattern transpose needs equal radix in every dimension");
        if (t->ndims < 2) return cs_err_set(err, CS_EINVAL, "pattern transpose needs 2 or 3 dimensions");
      }
      return CS_OK;
    }
  return cs_err_set(err, CS_EINVAL,
                    "pattern '%s' unknown; valid: uniform, transpose, bitcomp, tornado, hotspot", name);
}

/* Destination endpoint of a packet from endpoint src. */
static int destination(const vcn_topo *t, pattern pat, int src, double hot, uint64_t *rng) {
  if (pat == PAT_HOTSPOT && uniform01(rng) < hot) return 0;
  if (pat == PAT_HOTSPOT || pat == PAT_UNIFORM) return (int)(next_rand(rng) % (uint64_t)t->endpoints);
  int r = src / t->epr, local = src % t->epr, c[VCN_MAX_DIMS], o[VCN_MAX_DIMS];
  vcn_topo_coords(t, r, c);
  memcpy(o, c, sizeof o);
  switch (pat) {
    case PAT_HOTSPOT:
    case PAT_UNIFORM: break;
    case PAT_TRANSPOSE:
      for (int d = 0; d < t->ndims; d++) o[d] = c[t->ndims - 1 - d];
      break;
    case PAT_BITCOMP:
      for (int d = 0; d < t->ndims; d++) o[d] = t->radix[d] - 1 - c[d];
      break;
    case PAT_TORNADO:
      for (int d = 0; d < t->ndims; d++) o[d] = (c[d] + (t->radix[d] + 1) / 2 - 1) % t->radix[d];
      break;
  }
  return vcn_topo_router(t, o) * t->epr + local;
}


int cs_vcnet_netbench(const cs_vcnet_bench *cfg, cs_vcnet_bench_result *out, cs_err *err) {
  memset(out, 0, sizeof *out);
  cJSON *json = cJSON_Parse(cfg->options_json);
  if (!json) return cs_err_set(err, CS_EPARSE, "netbench: network options are not valid JSON");
  vcn_params p;
  int rc = vcn_params_from_json(json, "netbench network options", &p, err);
  cJSON_Delete(json);
  if (rc) return rc;
  if (!(cfg->rate > 0 && cfg->rate <= 1) || cfg->packet_flits < 1 || cfg->packet_flits > 4096)
    return cs_err_set(err, CS_EINVAL, "netbench: rate %g must be in (0, 1] and packet size %d in [1, 4096]",
                      cfg->rate, cfg->packet_flits);
  bench b;
  memset(&b, 0, sizeof b);
  if ((rc = vcn_net_create(&p, &b.net, err))) return rc;
  const vcn_topo *t = &b.net->t;
  pattern pat;
  if ((rc = parse_pattern(cfg->pattern, t, &pat, err))) {
    vcn_net_destroy(b.net);
    return rc;
  }
  b.net->ctx = &b;
  b.net->on_deliver = on_deliver;
  /* one stream and one creation clock per endpoint, the streams seeded apart (splitmix64) */
  typedef struct source {
    uint64_t rng, qtime;
  } source;
  source *src = calloc((size_t)t->endpoints, sizeof *src);
  if (!src) {
    vcn_net_destroy(b.net);
    return cs_err_set(err, CS_ENOMEM, "netbench: out of memory");
  }
  for (int e = 0; e < t->endpoints; e++) {
    uint64_t z = (cfg->seed + (uint64_t)(e + 1) * 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    src[e].rng = (z ^ (z >> 31)) | 1;
  }
  double pkt_rate = cfg->rate / cfg->packet_flits;
  b.win_begin = cfg->warmup_cycles;
  b.win_end = cfg->warmup_cycles + cfg->measure_cycles;
  uint64_t stop = b.win_end + cfg->drain_limit, ejected_at_begin = 0;
  bool window_counted = false;
  vcn_net *n = b.net;
  int lagging = t->endpoints; /* endpoints whose clock has not passed the window */
  while (n->now < stop) {
    if (n->now == b.win_begin) ejected_at_begin = n->st.flits_ejected;
    if (n->now == b.win_end) {
      b.flits_in_window = n->st.flits_ejected - ejected_at_begin;
      window_counted = true;
    }
    if (n->now >= b.win_end && !lagging && b.measured_done == b.measured_out) break;
    lagging = 0;
    for (int e = 0; e < t->endpoints; e++) {
      source *so = &src[e];
      /* a fat tree with faults: endpoints on faulty leaves stay silent */
      if (t->fattree && vtf_dead(&t->ft, e / t->epr)) continue;
      if (n->ep[e].q_head == VCN_NIL && n->ep[e].pkt == VCN_NIL)
        while (so->qtime <= n->now) {
          uint64_t created = so->qtime++;
          if (uniform01(&so->rng) >= pkt_rate) continue;
          int d = destination(t, pat, e, cfg->hotspot_fraction, &so->rng);
          /* a destination without a route is drawn again (uniform over the reachable ones), or
           * the trial creates nothing */
          if (t->fattree) {
            for (int tries = 0; vcn_pair_problem(t, e, d, NULL, 0) && tries < 64; tries++) {
              if (pat != PAT_UNIFORM) break;
              d = destination(t, pat, e, cfg->hotspot_fraction, &so->rng);
            }
            if (vcn_pair_problem(t, e, d, NULL, 0)) continue;
          }
          bool measured = created >= b.win_begin && created < b.win_end;
          uint32_t q = vcn_net_send(n, e, d, cfg->packet_flits, measured);
          if (q == VCN_NIL) b.oom = 1;
          else n->queued[q].t_created = created;
          b.measured_out += measured;
          break;
        }
      lagging += so->qtime < b.win_end;
    }
    if (n->pkts_live > out->peak_packets) out->peak_packets = n->pkts_live;
    vcn_net_cycle(n);
    if (b.oom || n->oom) {
      rc = cs_err_set(err, CS_ENOMEM, "netbench: out of memory");
      break;
    }
  }
  free(src);
  if (!rc && !window_counted) b.flits_in_window = n->st.flits_ejected - ejected_at_begin;
  if (!rc) {
    out->saturated = b.measured_done < b.measured_out;
    out->packets_measured = b.measured_done;
    out->offered = cfg->rate;
    int live = t->endpoints;
    if (t->fattree) live -= (t->ft.n_known + t->ft.n_fresh) * t->epr;
    out->accepted = (double)b.flits_in_window / ((double)live * (double)cfg->measure_cycles);
    if (b.n_lat) {
      /* the 99th percentile is the latency of the packet of rank round(0.99 (n - 1)), 0-based */
      out->avg_latency = b.sum_lat / (double)b.n_lat;
      uint64_t k = (uint64_t)(0.99 * (double)(b.n_lat - 1) + 0.5), seen = 0;
      bool have_min = false;
      for (size_t l = 0; l < b.cap_hist; l++) {
        if (!b.hist[l]) continue;
        if (!have_min) out->min_latency = (double)l, have_min = true;
        if (seen <= k && k < seen + b.hist[l]) out->p99_latency = (double)l;
        seen += b.hist[l];
        out->max_latency = (double)l;
      }
    }
    out->cycles = n->st.cycles;
    out->skipped_cycles = n->st.skipped_cycles;
    out->flit_hops = n->st.flit_hops;
  }
  free(b.hist);
  vcn_net_destroy(b.net);
  return rc;
}
