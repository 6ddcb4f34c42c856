/* The transport of the model: what carries a flit from the IP that sends it to the IP that takes
 * it, in the order the flit meets the stages:
 *   ip_inject.c  IP inject FIFO -> l2h (IP clock, the RN's tracker reservation)
 *   station.c    l2h -> IQ channel, IQ arbitration, ring bridge, EQ arbitration, CP injection
 *                with the I-Tag check, EQ channel -> h2l_h -> h2l_l (NoC clock, node by node)
 *   eject.c      a ring's cycle: ejects at CP_IN (E-Tag entries, T0) and the ring's movement
 *   ip_eject.c   h2l_l -> the IP's arrivals (IP clock); E-Tag returns
 *   axi.c        D2D AXI channels between the dies
 * The protocol above hands flits to ip_inject.c and axi.c and takes what ip_eject.c and the
 * links deliver; the transport never calls it.
 */
#ifndef CS_DCIN_TRANSPORT_H
#define CS_DCIN_TRANSPORT_H

#include "../pool.h"
#include "../rings/ring.h"

/* ip_inject.c.  Puts a flit into the inject FIFO of IP ip of node (its network's list; RSP by
 * priority). */
void dcin_enqueue(dcin_sim *s, dcin_die *d, int node, int ip, uint32_t f);
/* The RN's reservation of one tracker and `burst` buffer slots before a request leaves; false
 * (with its block flags set) when they are not free. */
bool dcin_rn_reserve(dcin_sim *s, dcin_ip *ip, dcin_txn *t);
/* The inject side of every IP with work: inject FIFO -> l2h (IP cycles; D2D interfaces every
 * cycle).  The last flit of a read burst that enters an l2h is listed in d->txdone for the
 * protocol (dcin_protocol_txdone). */
void dcin_ip_inject(dcin_sim *s, dcin_die *d, bool ip_cycle);

/* station.c: l2h -> IQ, ring bridge, EQ, CP injection and EQ -> h2l of every busy node of one
 * network */
void dcin_stations_step(dcin_sim *s, dcin_die *d, int net);
/* CP injection of one node alone, in the current cycle (tests). */
void dcin_cp_inject(dcin_sim *s, dcin_die *d, int net, int node);

/* eject.c.  One NoC cycle of every ring of one network: the flits due at their exit CP_IN try to
 * eject, then the ring moves. */
void dcin_rings_move(dcin_sim *s, dcin_die *d, int net);
bool dcin_etag_try(dcin_sim *s, dcin_die *d, int net, int node, int fifo, int lane, uint32_t f);
void dcin_etag_fail(dcin_sim *s, dcin_die *d, int net, int node, int fifo, int lane, uint32_t f);
bool dcin_eject_to_node(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f);
/* dcin_eject_to_node, and dcin_etag_fail when it fails; true when the flit entered the node. */
bool dcin_eject_try(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f);
/* The same for a flit whose E-Tag is not T2 or that holds a T0 registration, in compat mode or
 * while tracing (dcin_rings_move handles the common case inline). */
bool dcin_eject_slow(dcin_sim *s, dcin_die *d, int net, int node, int lane, uint32_t f);

/* ip_eject.c.  The eject side of every IP with flits: h2l_l -> the die's arrivals (d->arr, in IP
 * order; IP cycles, D2D interfaces every cycle), which the protocol takes after the step. */
void dcin_ip_eject(dcin_sim *s, dcin_die *d, bool ip_cycle);
bool dcin_rx_bucket(dcin_ip *ip, uint64_t now); /* takes one rx token if available */
/* End of a die step: the E-Tag entries released the step before are free. */
void dcin_commit(dcin_sim *s, dcin_die *d);

/* axi.c */
void dcin_axi_step(dcin_sim *s, dcin_axi *a);
void dcin_axi_send(dcin_sim *s, dcin_axi *a, int chan, uint32_t f);
dcin_axi *dcin_axi_of(dcin_sim *s, int link, int from_die);
int dcin_d2d_pick(const dcin_sim *s, int src_die, int src_node, int dst_die, int dst_node,
                  int ddr_ch, uint8_t *dir);

#endif
