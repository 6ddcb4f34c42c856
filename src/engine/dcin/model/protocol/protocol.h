/* The REQ_RSP protocol above the transport: requesters (rn.c), targets (sn.c) and the D2D
 * interfaces (d2d.c) take the flits the transport delivers and answer with new ones; completions
 * go to the driver.  Every call goes down, into the transport and the pool.
 */
#ifndef CS_DCIN_PROTOCOL_H
#define CS_DCIN_PROTOCOL_H

#include "../transport/transport.h"

/* The flits the die's IPs took this cycle (d->arr), in IP order, each to its IP. */
void dcin_protocol_arrivals(dcin_sim *s, dcin_die *d);
/* The last flits of read bursts that entered an l2h this cycle (d->txdone): each frees the RO
 * tracker of its target. */
void dcin_protocol_txdone(dcin_sim *s, dcin_die *d);
void dcin_rn_receive(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t f);
void dcin_sn_receive(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t f);
void dcin_sn_release_due(dcin_sim *s, dcin_die *d);
void dcin_sn_gate_open(dcin_sim *s, uint32_t t);
void dcin_sn_wake_write(dcin_sim *s, dcin_die *d, int node, int ipi);
/* An RSP departing 1 ns + SN processing after `base` (dcin_send_rsp: after now). */
void dcin_send_rsp(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind, int dst_node,
                   int dst_ip);
void dcin_send_rsp_at(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t t, int kind,
                      int dst_node, int dst_ip, uint64_t base);
void dcin_req_done(dcin_sim *s, uint32_t t);
void dcin_final_done(dcin_sim *s, uint32_t t);
/* Queues a completion of the current cycle for the driver. */
void dcin_comp_push(dcin_sim *s, uint64_t id, uint8_t phase);
uint64_t dcin_rand(dcin_sim *s);
void dcin_d2d_sn_receive(dcin_sim *s, dcin_die *d, int node, uint32_t f);
void dcin_d2d_rn_receive(dcin_sim *s, dcin_die *d, int node, uint32_t f);
/* The deliveries of one link direction to the D2D interfaces of its far end. */
void dcin_d2d_rx(dcin_sim *s, dcin_axi *a);

#endif
