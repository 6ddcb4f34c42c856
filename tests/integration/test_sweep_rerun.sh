#!/usr/bin/env bash
# A job the state shared across a rank's jobs cannot carry runs again without it, says so in the
# sweep summary, and stores the results and log of running alone.  The pair is check_pipeline's:
# an AllReduce over 14 participants of 2 dies (768 KiB, burst 8) whose steps all end with write
# data in flight, then the all-to-all of that configuration, which replays the AllReduce's first
# step and finds no second one (check_dcin, the chain test).  One process runs the AllReduce
# first: the sweep's cost order puts its 26 steps before the all-to-all's 13.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

P14='[0,3,6,9,12,15,18,21,24,27,30,33,36,39]'
CHAIN="{\"fields\":[\"adapter.topology\",\"spec.participants\",\"spec.msg_size_bytes\",
  \"adapter.burst_length\",\"adapter.mst_rd_outstanding\",\"adapter.mst_wr_outstanding\"],
  \"values\":[[\"2261_5x4\",$P14,786432,8,128,128]]}"
make() { # OUT.json PRIMITIVES: the chain configuration with these [primitive, algorithm] pairs
  $PY "$HERE/sweep_make.py" "$DEMO" "$1" rerun dcin \
    "[{\"fields\":[\"spec.primitive\",\"spec.algorithm\"],\"values\":$2}, $CHAIN]"
}
make pair.json '[["allreduce","ring"],["alltoall","pairwise"]]'
make a2a.json '[["alltoall","pairwise"]]'

timeout 600 "$CS_BIN" sweep pair.json --out pair.h5 --quiet | tee pair.txt
expect pair.txt "ran 2 (0 failed)" pair.h5
expect pair.txt "ran twice: 1 (" pair.h5
# the summary points to the page that explains it, and the page does
expect pair.txt 'docs/sweep-files.md, "Ran twice"' pair.h5
grep -q '^### Ran twice' "$CS_SOURCE_DIR/docs/sweep-files.md"
timeout 600 "$CS_BIN" sweep a2a.json --out a2a.h5 --quiet | tee a2a.txt
expect a2a.txt "ran 1 (0 failed)" a2a.h5
if grep -q "ran twice" a2a.txt; then echo "a job run alone was run twice"; exit 1; fi

# the all-to-all run twice stored what it stores run alone: every result column but the wall
# time, and its whole transaction log
$PY - <<'PY'
import h5py
with h5py.File("pair.h5", "r") as p, h5py.File("a2a.h5", "r") as a:
    prim = [j.decode() for j in p["jobs"]["primitive"]]
    row = prim.index("alltoall")
    rp, ra = p["results"][row], a["results"][0]
    for col in p["results"].dtype.names:
        # where the slices stand, and the checksums covering the row number, differ
        if col in ("wall_time_s", "txlog_offset", "steplog_offset") or "checksum" in col:
            continue
        assert rp[col] == ra[col], (col, rp[col], ra[col])
    n = int(rp["txlog_count"])
    assert n > 0
    lp = p["txlog"][int(rp["txlog_offset"]):int(rp["txlog_offset"]) + n]
    la = a["txlog"][int(ra["txlog_offset"]):int(ra["txlog_offset"]) + n]
    for col in lp.dtype.names:
        if col != "job":
            assert (lp[col] == la[col]).all(), col
print("rerun: the all-to-all run twice equals it run alone, result and %d records" % n)
PY
echo "test_sweep_rerun: OK"
