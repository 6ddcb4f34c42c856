/* Helpers shared by the DCIN suites: the adapter fields the engine reads, and a simulator built
 * straight from shipped topology files (through the engine's internal header). */
#ifndef CS_TEST_DCIN_H
#define CS_TEST_DCIN_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/dcin/dcin_int.h"

/* 2 GHz NoC, 1 GHz IP and driver, bursts of 4 x 128 B, mst/slv outstanding as given. */
void cs_test_dcin_adapter(cs_adapter_config *a, int mst, int slv);

/* A simulator of the shipped die and layout; yx switches the die to YX routing and check runs the
 * invariant checker every cycle.  Fails the calling test on any error. */
dcin_sim *cs_test_dcin_sim(const char *die, const char *layout, int mst, int slv, bool yx,
                           bool check);

/* One line of the mixed-traffic files (tests/data/dcin/mixed_*.csv: t_ns, src die, node, gdma_k,
 * dst die, node, ddr_k, R or W, burst) as a request at its place issued at *t_ns; false for a
 * comment or any other line.  Inline: check_dcin_oracle is also built against older builds. */
static inline bool cs_test_dcin_csv_line(const char *line, int *t_ns, dcin_place *p) {
  int sd, sn, gi, dd, dn, di, burst;
  char rw;
  if (line[0] == '#' || sscanf(line, "%d,%d,%d,gdma_%d,%d,%d,ddr_%d,%c,%d", t_ns, &sd, &sn, &gi,
                               &dd, &dn, &di, &rw, &burst) != 9)
    return false;
  *p = (dcin_place){sd, sn, DCIN_IP_GDMA0 + gi, dd, dn, DCIN_IP_DDR0 + di, rw == 'R', burst};
  return true;
}

#endif
