/* What every protocol agent sends: RSP flits with their departure, the req-phase and final
 * completions the driver polls, and the generator of the DDR latency variance. */
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"

uint64_t dcin_rand(dcin_sim *s) {
  uint64_t x = s->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  s->rng = x;
  return x;
}

void dcin_comp_push(dcin_sim *s, uint64_t id, uint8_t phase) {
  if (s->comp_n == s->comp_cap) {
    size_t ncap = s->comp_cap ? s->comp_cap * 2 : 256;
    cs_completion *nc = malloc(ncap * sizeof *nc);
    if (!nc) {
      if (!s->fault[0]) snprintf(s->fault, sizeof s->fault, "out of memory (completions)");
      return;
    }
    for (size_t i = 0; i < s->comp_n; i++) nc[i] = s->comp[(s->comp_head + i) % s->comp_cap];
    free(s->comp);
    s->comp = nc;
    s->comp_head = 0;
    s->comp_cap = ncap;
  }
  cs_completion *c = &s->comp[(s->comp_head + s->comp_n++) & (s->comp_cap - 1)]; /* 2^k */
  c->request_id = id;
  c->tick = s->cyc * s->tick_num / s->tick_den;
  c->phase = phase;
}

void dcin_req_done(dcin_sim *s, uint32_t ti) {
  dcin_txn *t = &s->txns[ti];
  if (t->done_req) return;
  t->done_req = 1;
  t->t_req_done = s->cyc;
  t->gate = 1;
  dcin_comp_push(s, t->request_id, CS_PHASE_REQ);
}

void dcin_final_done(dcin_sim *s, uint32_t ti) {
  dcin_txn *t = &s->txns[ti];
  if (t->done_final) return;
  t->done_final = 1;
  t->t_final = s->cyc;
  t->state = DCIN_TS_DONE;
  if (s->active_txns) s->active_txns--;
  dcin_comp_push(s, t->request_id, CS_PHASE_FINAL);
}

void dcin_send_rsp_at(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind,
                      int dst_node, int dst_ip, uint64_t base) {
  uint32_t f = dcin_make_flit(s, t, d->id, DCIN_NET_RSP, kind, node, ip, dst_node, dst_ip);
  if (f == DCIN_NIL) return;
  s->flits[f].depart = base + (uint64_t)d->cfg->cycles_per_ns_int + d->cfg->sn_proc;
  dcin_enqueue(s, d, node, ip, f);
}

void dcin_send_rsp(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind, int dst_node,
                   int dst_ip) {
  dcin_send_rsp_at(s, d, node, ip, t, kind, dst_node, dst_ip, s->cyc);
}
