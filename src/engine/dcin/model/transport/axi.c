/* D2D AXI links: one per direction per connection, five channels (AR R AW W B), each a delay line
 * with a token bucket at the configured bandwidth; at most one flit enters a channel per cycle.
 * Invariant: a flit is in exactly one of pend / chan (in flight, ordered by arrival) / rx of one
 * channel, and chan is FIFO because every flit of a channel has the same latency.
 */
#include "transport.h"

dcin_axi *dcin_axi_of(dcin_sim *s, int link, int from_die) {
  return &s->axi[2 * link + (s->layout.links[link].die_a == from_die ? 0 : 1)];
}

int dcin_d2d_pick(const dcin_sim *s, int src_die, int src_node, int dst_die, int dst_node,
                  int ddr_ch, uint8_t *dir) {
  bool from_a = true;
  int link = cs_topo_d2d_link(&s->layout, src_die, src_node, dst_die, dst_node, ddr_ch, &from_a);
  *dir = (uint8_t)(from_a ? 0 : 1);
  return link;
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
