#!/usr/bin/env bash
# The 2-D fat tree from the command line (docs/vtftr.md): route cases, the faults report and its
# exit status, the paper's latency figures, the probability command, netbench with faults, and
# the sweep with fault sets as a matrix axis, where the job whose participant sits on a faulty
# leaf fails alone with the leaf named.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"  # the sweep at the end runs MPI (and its ASan suppressions)
fail() { echo "FAIL: $*" >&2; exit 1; }

# Fig. 5 on 4x4 with leaves 02 and 20 faulty
"$CS_BIN" route --topology fattree2d:4x4 --faults "0,2;2,0" --src 0,0 --dst 2,2 > r1.txt
grep -q "^case misroute-3, legs RCR, 6 link(s), 7 switch(es)" r1.txt || fail "S1->D1 misroutes row-col-row"
grep -q "VC class 1   <- switch to the fault-tolerant VC" r1.txt || fail "the VC switch is shown"
"$CS_BIN" route --topology fattree2d:4x4 --faults "0,2;2,0" --src 0,1 --dst 1,2 | grep -q "^case yx, legs CR, 4 link" \
  || fail "S2->D2 goes yx"
"$CS_BIN" route --topology fattree2d:4x4 --faults "0,2;!2,0" --src 0,0 --dst 2,2 | grep -q "^case misroute-3, legs CRC" \
  || fail "a fresh fault on the yx path: column misroute"
"$CS_BIN" route --topology fattree2d:4x4 --routing alg_a --faults "0,2" --src 0,0 --dst 2,2 | grep -q "^case detour, legs RCRC, 8 link" \
  || fail "algorithm A detours 4 links more"
if "$CS_BIN" route --topology fattree2d:4x4 --faults "1,1" --src 1,1 --dst 2,2 > r2.txt 2> r2.err; then
  fail "a route from a faulty leaf"
fi
grep -q "unreachable: L(1,1)" r2.txt || fail "the dead leaf is named"

# 15 faults on 16x16: every pair reachable, CDG acyclic, cyclic without the VC switch
"$CS_BIN" faults --topology fattree2d:16x16 --random 15 --trials 5 --cdg > f15.txt
grep -q "every healthy pair reachable: 5 of 5" f15.txt || fail "15 faults keep everything reachable"
grep -q "CDG under vtftr: acyclic in 5 of 5" f15.txt || fail "VTFTR acyclic"
grep -q "vtftr_novc): cyclic in 5 of 5" f15.txt || fail "no VC switch, cycles"
set +e
"$CS_BIN" faults --topology fattree2d:8x8 --faults "0,0;1,1;2,2;3,3;4,4;5,5;6,6;7,7" > diag.txt
rc=$?
set -e
test "$rc" = 3 || fail "a diagonal leaves pairs unreachable: exit 3, got $rc"
grep -q "first unreachable pair" diag.txt || fail "an unreachable pair is named"

"$CS_BIN" faults --latency-figures > lat.txt
for v in 237.0 307.0 377.0; do grep -q " $v ns" lat.txt || fail "latency figure $v"; done
test "$(grep -c ' 237.0 ns' lat.txt)" = 2 || fail "xy and yx both 237 ns"

"$CS_BIN" faults --topology fattree2d:4x4 --probability 5 --trials 20000 > prob.txt
# 432 covering 5-sets of the 4x4 grid (inclusion-exclusion) out of C(16,5) = 4368
grep -q "exact              9.890110e-02" prob.txt || fail "exact probability 432/4368"

"$CS_BIN" netbench --topology fattree2d:8x8 --faults "3,4;5,6" --rate 0.05 --measure 2000 > nb.txt
grep -q "accepted throughput  0.0[45]" nb.txt || fail "netbench on a faulty fat tree carries the offered load"

timeout 300 "$CS_BIN" sweep "$CS_SOURCE_DIR/sweeps/vtftr-faults.json" --out vt.h5 --quiet > sweep.txt
"$CS_BIN" show vt.h5 --status done | grep -q "^# 10 rows" || "$CS_BIN" show vt.h5 | tail -1 | grep -q "10 done, 2 failed" \
  || fail "10 jobs done, the 2 with participant 9 on faulty leaf (1,1) failed"
"$CS_BIN" show vt.h5 --csv --status failed | grep -q "participant 9 sits on faulty leaf L(1" || fail "the failure names the leaf"
echo "vtftr CLI: ok"
