/* Helpers shared by the DCIN suites: the adapter fields the engine reads, and a simulator built
 * straight from shipped topology files (through the engine's internal header). */
#ifndef CS_TEST_DCIN_H
#define CS_TEST_DCIN_H

#include <stdbool.h>

#include "engine/dcin/dcin_int.h"

/* 2 GHz NoC, 1 GHz IP and driver, bursts of 4 x 128 B, mst/slv outstanding as given. */
void cs_test_dcin_adapter(cs_adapter_config *a, int mst, int slv);

/* A simulator of the shipped die and layout; yx switches the die to YX routing and check runs the
 * invariant checker every cycle.  Fails the calling test on any error. */
dcin_sim *cs_test_dcin_sim(const char *die, const char *layout, int mst, int slv, bool yx,
                           bool check);

#endif
