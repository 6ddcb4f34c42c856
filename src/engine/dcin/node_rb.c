/* Ring bridge.  A flit leaving a first-dimension lane (turn or arrival) enters the RB input FIFO
 * of its lane (dcin_eject_to_node, in etag.c with the E-Tag check it depends on); the RB
 * arbitrates {RB in neg, RB in pos, IQ second-dim neg, IQ second-dim pos} onto {EQ, second-dim
 * pos, second-dim neg}.  A flit leaving a second-dimension lane enters the EQ input FIFO.
 */
#include "dcin_int.h"

/* The arbitration of a node with at least one input head. */
__attribute__((noinline)) static void rb_arbitrate(dcin_sim *s, dcin_die *d, dcin_node *nd,
                                                   int node, int lane_p, int lane_n) {
  const dcin_cfg *c = d->cfg;
  dcin_q *in[4] = {&nd->rb_in[1], &nd->rb_in[0], &nd->iq_out[lane_n], &nd->iq_out[lane_p]};
  unsigned want[DCIN_NUM_RB_OUT] = {0}; /* per output: the inputs whose head requests it */
  int a = d->scoord[node]; /* second-dimension coordinate of this node */
  DCIN_UNROLL(4)
  for (int i = 0; i < 4; i++) {
    if (!in[i]->n) continue;
    const dcin_flit *fl = &s->flits[dcin_q_front(in[i])];
    int o = fl->dst_node == node ? DCIN_RB_EQ : d->scoord[fl->dst_node] > a ? DCIN_RB_P : DCIN_RB_N;
    want[o] |= 1u << i;
  }
  /* reference quirk: one set of RB pointers per node, shared by the three networks */
  uint8_t *rr = c->crossring_compat ? d->nodes[0][node].rb_rr : nd->rb_rr;
  DCIN_UNROLL(3)
  for (int o = 0; o < DCIN_NUM_RB_OUT; o++) {
    dcin_q *out = &nd->rb_out[o];
    if (!want[o] || !dcin_q_can_put(out)) continue;
    int i = dcin_rr_pick(want[o], rr[o]);
    uint32_t f = dcin_q_pop(in[i]);
    dcin_flit *fl = &s->flits[f];
    if (i < 2) {
      dcin_etag_release(d, nd, dcin_etag_fifo(c, fl->lane), fl->used_entry);
      fl->used_entry = DCIN_T_NONE;
    }
    fl->etag = DCIN_T2;
    dcin_put(d, out, f);
    nd->rb_n--;
    if (o == DCIN_RB_EQ)
      nd->eq_n++;
    else
      nd->cp_n++;
    rr[o] = (uint8_t)((i + 1) & 3);
  }
}

void dcin_rb_step(dcin_sim *s, dcin_die *d, int net, int node) {
  int lane_p = d->cfg->yx ? DCIN_TR : DCIN_TD, lane_n = d->cfg->yx ? DCIN_TL : DCIN_TU;
  dcin_node *nd = &d->nodes[net][node];
  /* About one call in three finds the node's ring-bridge flits still in pre registers (they
   * entered this cycle): with no input head there is nothing to arbitrate, and this test spares
   * those calls the arbiter's set-up. */
  if (nd->rb_in[0].n | nd->rb_in[1].n | nd->iq_out[lane_n].n | nd->iq_out[lane_p].n)
    rb_arbitrate(s, d, nd, node, lane_p, lane_n);
}
