/* The protocol's share of a die step: the flits the IPs took (in IP order, each to the agent of
 * its IP) and the read bursts whose last flit left for the network (each frees the RO tracker of
 * its target).  The transport lists both during the step; nothing it does afterwards in the step
 * reads what the protocol changes, so taking them after it is taking them in the stage. */
#include "protocol.h"

void dcin_protocol_arrivals(dcin_sim *s, dcin_die *d) {
  for (uint32_t i = 0; i < d->narr; i++) {
    int node = d->arr[i].node, ip = d->arr[i].ip;
    uint32_t f = d->arr[i].f;
    switch (ip) {
      case DCIN_IP_GDMA0:
      case DCIN_IP_GDMA1:
        dcin_rn_receive(s, d, node, ip, f);
        break;
      case DCIN_IP_DDR0:
      case DCIN_IP_DDR1:
        dcin_sn_receive(s, d, node, ip, f);
        break;
      case DCIN_IP_D2D_SN:
        dcin_d2d_sn_receive(s, d, node, f);
        break;
      default:
        dcin_d2d_rn_receive(s, d, node, f);
    }
  }
  d->narr = 0;
}
