/* The math engine's options: the model's constants, one row each (docs/math-engine.md says
 * where each enters).  The defaults are the values `commsweep calibrate` fits on the C2 study's
 * dcin rows (scripts/bench_pareto reproduces the fit). */
#include <stddef.h>

#include "math_int.h"

#define P(member) CS_F_DOUBLE, offsetof(cs_math_params, member), 0
#define FIT CS_FIELD_FIT
const cs_field cs_math_option_fields[] = {
    {"req_cycles", P(req_cycles), 0, 1e12, "request to the target's grant beyond the hops, NoC cycles", FIT},
    {"dbid_cycles", P(dbid_cycles), 0, 1e12, "grant to the DBID at the GDMA beyond the hops, NoC cycles", FIT},
    {"data_cycles", P(data_cycles), 0, 1e6, "DBID to the write's last flit at the DDR beyond hops and burst, NoC cycles", FIT},
    {"read_cycles", P(read_cycles), 0, 1e12, "grant to a read's last flit beyond hops, DDR latency and burst, NoC cycles", FIT},
    {"turn_cycles", P(turn_cycles), 0, 1e12, "a traversal that turns through a ring bridge, NoC cycles", FIT},
    {"d2d_write_cycles", P(d2d_write_cycles), 0, 1e12, "a cross-die write's crossing beyond the AXI latencies, NoC cycles", FIT},
    {"d2d_read_cycles", P(d2d_read_cycles), 0, 1e12, "a cross-die read's crossing beyond the AXI latencies, NoC cycles", FIT},
    {"d2d_flit_cycles", P(d2d_flit_cycles), 0, 1e12, "each burst flit of a cross-die transaction beyond the IP's, NoC cycles", FIT},
    {"tracker_slack_cycles", P(tracker_slack_cycles), 0, 1e12, "a freed tracker's reuse by the next request, NoC cycles", FIT},
    {"retry_ns", P(retry_ns), 0, 1e12, "fixed cost of a Retry round (release, Pcredit, re-send), ns", FIT},
    {"retry_threshold", P(retry_threshold), 0.01, 10, "share of a DDR channel's trackers a source's demand may fill before Retry", 0},
    {"ring_efficiency", P(ring_efficiency), 0.01, 1, "usable share of a ring lane's flit per cycle", FIT},
    {"bucket_fraction", P(bucket_fraction), 0, 1, "share of a D2D token bucket full at a step's start", FIT},
    {NULL, 0, 0, 0, 0, 0, NULL, 0}};

cs_math_params cs_math_default_params(void) {
  return (cs_math_params){
      .req_cycles = 12.7,
      .dbid_cycles = 15.2,
      .data_cycles = 14.2,
      .read_cycles = 14.6,
      .turn_cycles = 1.26,
      .d2d_write_cycles = 9.11,
      .d2d_read_cycles = 11.0,
      .d2d_flit_cycles = 1.06,
      .tracker_slack_cycles = 2.03,
      .retry_ns = 70.0,
      .retry_threshold = 0.85,
      .ring_efficiency = 1.0,
      .bucket_fraction = 1.0,
  };
}
