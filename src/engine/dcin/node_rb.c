/* Ring bridge.  A flit leaving a first-dimension lane (turn or arrival) enters the RB input FIFO
 * of its lane (dcin_eject_to_node, in etag.c with the E-Tag check it depends on); the RB
 * arbitrates {RB in neg, RB in pos, IQ second-dim neg, IQ second-dim pos} onto {EQ, second-dim
 * pos, second-dim neg}.  A flit leaving a second-dimension lane enters the EQ input FIFO.
 */
#include "dcin_int.h"

void dcin_rb_step(dcin_sim *s, dcin_die *d, int net, int node) {
  const dcin_cfg *c = d->cfg;
  uint64_t now = s->cyc;
  int lane_p = c->yx ? DCIN_TR : DCIN_TD, lane_n = c->yx ? DCIN_TL : DCIN_TU;
  dcin_node *nd = &d->nodes[net][node];
  uint64_t occ = nd->occ; /* a local: the queues' stamps could alias it */
  dcin_q *in[4] = {&nd->rb_in[1], &nd->rb_in[0], &nd->iq_out[lane_n], &nd->iq_out[lane_p]};
  const int bit[4] = {DCIN_B_RBIN + 1, DCIN_B_RBIN, DCIN_B_IQOUT + lane_n, DCIN_B_IQOUT + lane_p};
  unsigned want[DCIN_NUM_RB_OUT] = {0}; /* per output: the inputs whose head requests it */
  int a = d->scoord[node];               /* second-dimension coordinate of this node */
  DCIN_UNROLL(4)
  for (int i = 0; i < 4; i++) {
    if (!(occ & DCIN_BIT(bit[i])) ||
        !(i < 2 ? dcin_q_vis_ej(in[i], now) : dcin_q_vis(in[i], now)))
      continue;
    const dcin_flit *fl = &s->flits[dcin_q_front(in[i])];
    int o = fl->dst_node == node ? DCIN_RB_EQ : d->scoord[fl->dst_node] > a ? DCIN_RB_P : DCIN_RB_N;
    want[o] |= 1u << i;
  }
  /* reference quirk: one set of RB pointers per node, shared by the three networks */
  uint8_t *rr = c->crossring_compat ? d->nodes[0][node].rb_rr : nd->rb_rr;
  DCIN_UNROLL(3)
  for (int o = 0; o < DCIN_NUM_RB_OUT; o++) {
    dcin_q *out = &nd->rb_out[o];
    if (!want[o] || !dcin_q_can_put(out, now)) continue;
    int i = dcin_rr_pick(want[o], rr[o]);
    uint32_t f = i < 2 ? dcin_q_pop_ej(in[i], now) : dcin_q_pop(in[i]);
    if (!in[i]->n) occ &= ~DCIN_BIT(bit[i]);
    dcin_flit *fl = &s->flits[f];
    if (i < 2) {
      dcin_etag_release(d, nd, dcin_etag_fifo(c, fl->lane), fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
    }
    fl->etag = DCIN_T2;
    dcin_q_put(out, f, now);
    occ |= DCIN_BIT(DCIN_B_RBOUT + o);
    rr[o] = (uint8_t)((i + 1) & 3);
  }
  nd->occ = occ;
}
