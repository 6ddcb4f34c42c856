/* D2D AXI links: one per direction per connection, five channels (AR R AW W B), each a delay line
 * with a token bucket at the configured bandwidth; at most one flit enters a channel per cycle.
 * Invariant: a flit is in exactly one of pend / chan (in flight, ordered by arrival) / rx of one
 * channel, and chan is FIFO because every flit of a channel has the same latency.
 */
#include "transport.h"

dcin_axi *dcin_axi_of(dcin_sim *s, int link, int from_die) {
  return &s->axi[2 * link + (s->links[link].die_a == from_die ? 0 : 1)];
}

int dcin_d2d_pick(const dcin_sim *s, int src_die, int src_node, int dst_die, int dst_node,
                  int ddr_ch, uint8_t *dir) {
  int cand[CS_TOPO_MAX_LINKS], cnode[CS_TOPO_MAX_LINKS], n = 0;
  for (int i = 0; i < s->nlinks; i++) {
    const cs_d2d_link *l = &s->links[i];
    int mine;
    if (l->die_a == src_die && l->die_b == dst_die)
      mine = l->node_a;
    else if (l->die_b == src_die && l->die_a == dst_die)
      mine = l->node_b;
    else
      continue;
    /* insertion by source-die node: candidates are sorted */
    int k = n++;
    while (k > 0 && cnode[k - 1] > mine) {
      cand[k] = cand[k - 1];
      cnode[k] = cnode[k - 1];
      k--;
    }
    cand[k] = i;
    cnode[k] = mine;
  }
  if (!n) return -1;
  int pick = s->lcfg.select == CS_D2D_SELECT_SPREAD ? (src_node + dst_node) % n : ddr_ch % n;
  *dir = (uint8_t)(s->links[cand[pick]].die_a == src_die ? 0 : 1);
  return cand[pick];
}

void dcin_axi_send(dcin_sim *s, dcin_axi *a, int chan, uint32_t f) {
  s->flits[f].axi = (uint8_t)chan;
  dcin_list_push(s, &a->pend[chan], f);
  a->busy++;
}

void dcin_axi_step(dcin_sim *s, dcin_axi *a) {
  if (!a->busy) return;
  uint64_t now = s->cyc;
  DCIN_UNROLL(5)
  for (int ch = 0; ch < DCIN_NUM_AXI; ch++) {
    dcin_list *l = &a->chan[ch];
    while (l->n && s->flits[l->head].arrive <= now)
      dcin_list_push(s, &a->rx[ch], dcin_list_pop(s, l));
  }
  DCIN_UNROLL(5)
  for (int ch = 0; ch < DCIN_NUM_AXI; ch++) {
    dcin_list *p = &a->pend[ch];
    if (!p->n) continue;
    if (now > a->last[ch]) {
      a->tok[ch] += (double)(now - a->last[ch]) * s->lcfg.axi_rate;
      if (a->tok[ch] > s->lcfg.axi_cap) a->tok[ch] = s->lcfg.axi_cap;
      a->last[ch] = now;
    }
    if (a->tok[ch] + 1e-8 < 1.0) continue;
    a->tok[ch] -= 1.0;
    uint32_t f = dcin_list_pop(s, p);
    s->flits[f].arrive = now + s->lcfg.axi_lat[ch];
    dcin_list_push(s, &a->chan[ch], f);
    s->st.flit_hops++;
  }
}
