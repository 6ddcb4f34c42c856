/* The model's API: a simulator built from the die, layout and adapter parameters, requests placed
 * at their physical places, the driver's rsp releasing a transaction's gate, and the order of work
 * in a sim cycle (links, then die by die; idle stretches jumped over).  Invariant: a completion
 * found in cycle c is reported at tick(c) = floor(c * tick_num / tick_den).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/hash.h"
#include "die.h"
#include "protocol/protocol.h"

void dcin_sim_destroy(dcin_sim *s) {
  if (!s) return;
  for (int i = 0; i < s->ndies; i++) dcin_die_free(&s->dies[i]);
  free(s->axi);
  free(s->flits);
  free(s->txns);
  free(s->map_keys);
  free(s->map_vals);
  free(s->arena);
  free(s->gdma_count);
  free(s->comp);
  free(s);
}

int dcin_sim_create(const cs_die_params *die, const cs_layout *layout, const cs_adapter_config *ad,
                    dcin_sim **out, cs_err *err) {
  dcin_sim *s = calloc(1, sizeof *s);
  if (!s) return cs_err_set(err, CS_ENOMEM, "dcin engine");
  s->die_params = *die;
  s->layout = *layout;
  s->free_flit = DCIN_NIL;
  s->free_txn = DCIN_NIL;
  int rc = dcin_cfg_build(die, ad, &s->cfg, err);
  if (!rc) rc = dcin_lcfg_build(layout, &s->cfg, &s->lcfg, err);
  if (rc) goto fail;
  if (layout->num_dies < 1 || layout->num_dies > CS_TOPO_MAX_DIES) {
    rc = cs_err_set(err, CS_EINVAL, "layout '%s': %d dies", layout->name, layout->num_dies);
    goto fail;
  }
  s->ndies = layout->num_dies;
  for (int i = 0; i < s->layout.num_links; i++) {
    const cs_d2d_link *l = &layout->links[i];
    if (l->die_a < 0 || l->die_a >= s->ndies || l->die_b < 0 || l->die_b >= s->ndies ||
        l->die_a == l->die_b || l->node_a < 0 || l->node_a >= s->cfg.nodes || l->node_b < 0 ||
        l->node_b >= s->cfg.nodes) {
      rc = cs_err_set(err, CS_EINVAL, "layout '%s': link %d [%d,%d,%d,%d] outside the dies",
                      layout->name, i, l->die_a, l->node_a, l->die_b, l->node_b);
      goto fail;
    }
    s->linked_dies[l->die_a] |= 1u << l->die_b;
    s->linked_dies[l->die_b] |= 1u << l->die_a;
  }
  s->arena_cap = dcin_die_arena_slots(&s->cfg) * (size_t)s->ndies;
  s->arena = malloc(s->arena_cap * sizeof *s->arena);
  if (!s->arena) {
    rc = cs_err_set(err, CS_ENOMEM, "queue arena");
    goto fail;
  }
  for (int i = 0; i < s->ndies; i++) {
    s->dies[i].id = i;
    rc = dcin_die_init(s, &s->dies[i], i, err);
    if (rc) {
      s->ndies = i + 1;
      goto fail;
    }
  }
  if (s->layout.num_links) {
    s->axi = calloc((size_t)s->layout.num_links * 2, sizeof *s->axi);
    if (!s->axi) {
      rc = cs_err_set(err, CS_ENOMEM, "D2D links");
      goto fail;
    }
    for (int i = 0; i < s->layout.num_links; i++)
      for (int dir = 0; dir < 2; dir++) {
        dcin_axi *a = &s->axi[2 * i + dir];
        const cs_d2d_link *l = &s->layout.links[i];
        a->src_die = dir ? l->die_b : l->die_a;
        a->src_node = dir ? l->node_b : l->node_a;
        a->dst_die = dir ? l->die_a : l->die_b;
        a->dst_node = dir ? l->node_a : l->node_b;
        for (int ch = 0; ch < DCIN_NUM_AXI; ch++) {
          a->chan[ch].head = a->chan[ch].tail = DCIN_NIL;
          a->pend[ch].head = a->pend[ch].tail = DCIN_NIL;
          a->rx[ch].head = a->rx[ch].tail = DCIN_NIL;
          a->tok[ch] = s->lcfg.axi_cap;
        }
      }
    for (int k = 0; k < 2 * s->layout.num_links; k++) {
      const dcin_axi *a = &s->axi[k];
      s->axi_from[a->src_die][s->n_axi_from[a->src_die]++] = (uint8_t)k;
      s->axi_to[a->dst_die][s->n_axi_to[a->dst_die]++] = (uint8_t)k;
    }
  }
  s->num_endpoints = cs_scheme_endpoints(die, s->ndies);
  s->gdma_count = calloc((size_t)(s->num_endpoints > 0 ? s->num_endpoints : 1), sizeof(uint64_t));
  if (!s->gdma_count) {
    rc = cs_err_set(err, CS_ENOMEM, "endpoint counters");
    goto fail;
  }
  /* ticks: driver GHz / sim GHz as a reduced ratio of integers (in kHz) */
  uint64_t num = (uint64_t)(ad->driver_cycle_frequency_ghz * 1e6 + 0.5);
  uint64_t den = (uint64_t)(s->cfg.cycles_per_ns * 1e6 + 0.5);
  if (!num || !den) {
    rc = cs_err_set(err, CS_EINVAL, "driver_cycle_frequency_ghz %g must be positive",
                    ad->driver_cycle_frequency_ghz);
    goto fail;
  }
  uint64_t g = cs_gcd_u64(num, den);
  s->tick_num = num / g;
  s->tick_den = den / g;
  s->rng = 0x9e3779b97f4a7c15ULL; /* op_create reseeds from the job */
  *out = s;
  return 0;
fail:
  dcin_sim_destroy(s);
  return rc;
}


/* The checks of a request at a place inside the chip, from a GDMA to a DDR (as every place made
 * from endpoints is): its burst, the buffers it needs, the link it crosses, its id. */
int dcin_inject_check_request(const dcin_sim *s, uint64_t id, const dcin_place *p, cs_err *err) {
  const dcin_cfg *c = &s->cfg;
  int src_die = p->src_die, dst_die = p->dst_die, burst = p->burst;
  bool is_read = p->is_read;
  if (burst < 1 || burst > 255)
    return cs_err_set(err, CS_EINVAL, "request %llu: burst_length %d outside 1..255",
                      (unsigned long long)id, burst);
  /* a burst no buffer can hold would wait forever: refuse it up front */
  int cap = is_read ? c->rn_rdb : c->rn_wdb;
  if (!is_read && c->sn_wdb < cap) cap = c->sn_wdb;
  if (src_die != dst_die) {
    int d2d = is_read ? (s->lcfg.rn_rdb < s->lcfg.sn_rdb ? s->lcfg.rn_rdb : s->lcfg.sn_rdb)
                      : (s->lcfg.rn_wdb < s->lcfg.sn_wdb ? s->lcfg.rn_wdb : s->lcfg.sn_wdb);
    if (d2d < cap) cap = d2d;
  }
  if (burst > cap)
    return cs_err_set(err, CS_EINVAL,
                      "request %llu: burst_length %d exceeds the %d-flit data buffer it needs",
                      (unsigned long long)id, burst, cap);
  if (src_die != dst_die && !(s->linked_dies[src_die] & 1u << dst_die))
    return cs_err_set(err, CS_EINVAL, "request %llu: no D2D link between die %d and die %d",
                      (unsigned long long)id, src_die, dst_die);
  /* plans number their requests upwards: one above every id taken so far cannot repeat */
  bool fresh = !s->ids_taken || id > s->max_id_taken;
  if (!fresh && dcin_txn_find(s, id) != DCIN_NIL)
    return cs_err_set(err, CS_EINVAL, "request id %llu injected twice", (unsigned long long)id);
  return 0;
}

int dcin_inject_check(const dcin_sim *s, uint64_t id, const dcin_place *p, cs_err *err) {
  const dcin_cfg *c = &s->cfg;
  int src_die = p->src_die, src_node = p->src_node, src_ip = p->src_ip;
  int dst_die = p->dst_die, dst_node = p->dst_node, dst_ip = p->dst_ip;
  if (src_die < 0 || src_die >= s->ndies || dst_die < 0 || dst_die >= s->ndies || src_node < 0 ||
      src_node >= c->nodes || dst_node < 0 || dst_node >= c->nodes)
    return cs_err_set(err, CS_EINVAL, "request %llu: place die%d:%d -> die%d:%d outside the chip",
                      (unsigned long long)id, src_die, src_node, dst_die, dst_node);
  if ((src_ip != DCIN_IP_GDMA0 && src_ip != DCIN_IP_GDMA1) ||
      (dst_ip != DCIN_IP_DDR0 && dst_ip != DCIN_IP_DDR1))
    return cs_err_set(err, CS_EINVAL, "request %llu: source must be gdma_0/1, target ddr_0/1",
                      (unsigned long long)id);
  return dcin_inject_check_request(s, id, p, err);
}

/* A request id is in use from now on (injected, or collected for step reuse). */
void dcin_note_id_taken(dcin_sim *s, uint64_t id) {
  if (!s->ids_taken || id > s->max_id_taken) s->max_id_taken = id;
  s->ids_taken = true;
}

int dcin_inject_phys(dcin_sim *s, uint64_t id, const dcin_place *p, cs_err *err) {
  int rc = dcin_inject_check(s, id, p, err);
  return rc ? rc : dcin_inject_place(s, id, p, err);
}

int dcin_inject_place(dcin_sim *s, uint64_t id, const dcin_place *p, cs_err *err) {
  int link = -1;
  uint8_t dir = 0;
  if (p->src_die != p->dst_die)
    link = dcin_d2d_pick(s, p->src_die, p->src_node, p->dst_die, p->dst_node,
                         p->dst_ip - DCIN_IP_DDR0, &dir);
  uint32_t t;
  int rc = dcin_txn_new(s, id, &t, err);
  if (rc) return rc;
  dcin_note_id_taken(s, id);
  dcin_txn *x = &s->txns[t];
  x->src_id = x->dst_id = -1;
  x->is_read = p->is_read;
  x->burst = (uint16_t)p->burst;
  x->src_die = (uint8_t)p->src_die, x->src_node = (int16_t)p->src_node;
  x->src_ip = (uint8_t)p->src_ip;
  x->dst_die = (uint8_t)p->dst_die, x->dst_node = (int16_t)p->dst_node;
  x->dst_ip = (uint8_t)p->dst_ip;
  x->cross = p->src_die != p->dst_die;
  x->link = (int16_t)link;
  x->link_dir = dir;
  x->t_inject = s->cyc;
  int tn = p->dst_node, tip = p->dst_ip;
  if (x->cross) {
    tn = dir == 0 ? s->layout.links[link].node_a : s->layout.links[link].node_b;
    tip = DCIN_IP_D2D_SN;
  }
  uint32_t f =
      dcin_make_flit(s, t, p->src_die, DCIN_NET_REQ, p->is_read ? DCIN_K_REQ_RD : DCIN_K_REQ_WR,
                     p->src_node, p->src_ip, tn, tip);
  if (f == DCIN_NIL) return cs_err_set(err, CS_ENOMEM, "flit pool");
  dcin_enqueue(s, &s->dies[p->src_die], p->src_node, p->src_ip, f);
  s->active_txns++;
  return (int)t;
}

int dcin_rsp(dcin_sim *s, uint32_t t, cs_err *err) {
  dcin_txn *x = &s->txns[t];
  if (x->gate != 1)
    return cs_err_set(err, CS_EINVAL, "request %llu: rsp injected %s",
                      (unsigned long long)x->request_id,
                      x->gate ? "twice" : "before its req phase completed");
  x->gate = 2;
  x->t_rsp_inject = s->cyc;
  dcin_sn_gate_open(s, t);
  return 0;
}

static bool any_moving(const dcin_sim *s) {
  for (int i = 0; i < s->ndies; i++) {
    const dcin_die *d = &s->dies[i];
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      if (d->nact[net]) return true;
      for (int r = 0; r < d->nrings; r++)
        if (d->rings[net][r].count) return true;
    }
    if (d->nrel[0] | d->nrel[1]) return true; /* E-Tag entries still to return */
  }
  for (int i = 0; i < 2 * s->layout.num_links; i++) {
    const dcin_axi *a = &s->axi[i];
    for (int ch = 0; ch < DCIN_NUM_AXI; ch++)
      if (a->pend[ch].n || a->rx[ch].n) return true;
  }
  return false;
}

/* With nothing moving, the next cycle at which anything can happen. */
uint64_t dcin_next_event(const dcin_sim *s) {
  if (any_moving(s)) return s->cyc;
  uint64_t best = DCIN_NO_CYCLE;
  for (int i = 0; i < s->ndies; i++) {
    const dcin_die *d = &s->dies[i];
    if (d->sn_release.n) {
      uint64_t r = s->txns[d->sn_release.head].release_at;
      if (r < best) best = r;
    }
    for (int k = 0; k < s->cfg.nodes * DCIN_NUM_IPS; k++) {
      const dcin_ip *ip = &d->ips[k];
      if (!ip->busy) continue;
      for (int net = 0; net < DCIN_NUM_NETS; net++) {
        for (int q = 0; q < 3; q++) {
          const dcin_q *x = q == 0 ? &ip->l2h[net] : q == 1 ? &ip->h2l_h[net] : &ip->h2l_l[net];
          if (x->n) return s->cyc;
        }
        if (ip->inj[net].n) {
          uint64_t dep = s->flits[ip->inj[net].head].depart;
          if (dep < best) best = dep;
        }
      }
      for (int p = 0; p < DCIN_NUM_RSP_PRIO; p++)
        if (ip->rsp_q[p].n) {
          uint64_t dep = s->flits[ip->rsp_q[p].head].depart;
          if (dep < best) best = dep;
        }
    }
  }
  for (int i = 0; i < 2 * s->layout.num_links; i++)
    for (int ch = 0; ch < DCIN_NUM_AXI; ch++)
      if (s->axi[i].chan[ch].n) {
        uint64_t a = s->flits[s->axi[i].chan[ch].head].arrive;
        if (a < best) best = a;
      }
  if (best != DCIN_NO_CYCLE && best < s->cyc) best = s->cyc;
  return best;
}

/* One die in one sim cycle, in the reference's order: timed share-tracker releases (IP cycles),
 * the inject side of the IPs (IP clock), per network the rings then the stations with their IPs'
 * NoC-clock stages (NoC cycles), the IPs taking their flits (IP clock), the protocol's answers to
 * what they took, and the E-Tag returns. */
static void die_step(dcin_sim *s, dcin_die *d, bool ip_cycle, bool net_cycle) {
  if (!net_cycle && d->cfg->crossring_compat) return; /* the reference steps dies on NoC cycles */
  d->slow = d->cfg->crossring_compat || s->trace; /* the general eject path only */
  if (ip_cycle) dcin_sn_release_due(s, d);
  dcin_ip_inject(s, d, ip_cycle);
  dcin_protocol_txdone(s, d);
  if (net_cycle) {
    for (int net = 0; net < DCIN_NUM_NETS; net++) {
      dcin_rings_move(s, d, net);
      /* the stages of a station touch only the node's own queues, its IPs' l2h and h2l and the
       * slots at its own CP_OUTs (ejects, which come first, only fill its eject FIFOs), so one
       * pass per node gives the same result as one pass per stage */
      if (d->nact[net]) dcin_stations_step(s, d, net);
    }
  }
  dcin_ip_eject(s, d, ip_cycle);
  dcin_protocol_arrivals(s, d);
  dcin_commit(s, d);
}

void dcin_cycle(dcin_sim *s) {
  bool ip_cycle = s->cyc % (uint64_t)s->cfg.ip_scale == 0;
  bool net_cycle = s->cyc % (uint64_t)s->cfg.net_scale == 0;
  /* the reference does IP work only inside its NoC step, i.e. on cycles that are both */
  if (s->cfg.crossring_compat && !net_cycle) ip_cycle = false;
  /* Die by die, in id order: the links leaving a die move first (delivery into the far end's
   * receive queue, then injection), then the die steps; its D2D interfaces take their receive
   * queues at the start of the step.  A link towards a die with a lower id is therefore seen
   * one cycle later than one towards a higher id, as in the reference model's loop. */
  for (int i = 0; i < s->ndies; i++) {
    for (int k = 0; k < s->n_axi_from[i]; k++) {
      dcin_axi *a = &s->axi[s->axi_from[i][k]];
      if (a->busy) dcin_axi_step(s, a);
    }
    for (int k = 0; k < s->n_axi_to[i]; k++) {
      dcin_axi *a = &s->axi[s->axi_to[i][k]];
      if (a->busy) dcin_d2d_rx(s, a);
    }
    die_step(s, &s->dies[i], ip_cycle, net_cycle);
  }
  if (s->check_each_cycle && !s->fault[0]) {
    cs_err e;
    cs_err_clear(&e);
    if (dcin_check(s, &e))
      snprintf(s->fault, sizeof s->fault, "cycle %llu: %.200s", (unsigned long long)s->cyc, e.msg);
  }
  s->cyc++;
  s->cycles_stepped++;
}

/* Jumps the clock over cycles where nothing can move, up to (not past) limit. */
void dcin_skip_idle(dcin_sim *s, uint64_t limit) {
  uint64_t e = dcin_next_event(s);
  if (e == DCIN_NO_CYCLE || e > limit) e = limit;
  if (e > s->cyc) {
    s->st.skipped_cycles += e - s->cyc;
    s->cyc = e;
  }
}

uint64_t dcin_run_native(dcin_sim *s, uint64_t max_cycles) {
  uint64_t start = s->cyc, end = s->cyc + max_cycles;
  while ((s->active_txns || s->nflits) && s->cyc < end && !s->fault[0]) {
    dcin_skip_idle(s, end);
    if (s->cyc >= end) break;
    dcin_cycle(s);
    while (s->comp_n) {
      cs_completion c = s->comp[s->comp_head];
      s->comp_head = (s->comp_head + 1) % s->comp_cap;
      s->comp_n--;
      if (c.phase == CS_PHASE_REQ) dcin_rsp(s, dcin_txn_find(s, c.request_id), NULL);
    }
  }
  return s->cyc - start;
}
