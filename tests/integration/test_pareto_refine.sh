#!/usr/bin/env bash
# Multi-fidelity refinement end to end on a small dcin sweep (96 designs in 4 workloads, the
# closed-form math engine as the cheap rung with a 30% band) over 2 ranks:
#   1. it converges, and its dcin fronts equal those of the dense dcin grid (the same sweep
#      file run without --refine), point for point, while running fewer dcin jobs;
#   2. killed in the middle of round 1 (rank 1 after its 3rd row) and resumed, the file is
#      byte for byte the uninterrupted run's; a rerun of a finished refinement runs nothing;
#   3. into a file that already holds the dense grid it selects the same points (its rounds
#      print the same) and runs none of them on dcin; a budget of 10 dcin jobs stops it there;
#   4. a bad pareto section, an objective that is not numeric, --refine without a refine
#      section, are clear errors naming the field; --calibration gives the cheap rung instead.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
C2=$CS_SOURCE_DIR/sweeps/c2-topology-study.json
CMP=$CS_SOURCE_DIR/scripts/pareto_compare.py

# the sweep: 2 collectives x 2 sizes x 3 chips (die-local, 2 dies, 2 dies spread) x 4 tracker
# settings x 2 bursts; fronts of time against trackers and D2D links
$PY - "$C2" small.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "refine-small"
d.pop("description")
d["matrix"] = [
    {"fields": ["spec.primitive", "spec.algorithm"], "values": [["allreduce", "ring"], ["alltoall", "pairwise"]]},
    {"field": "spec.msg_size_bytes", "values": [16384, 65536]},
    {"fields": ["adapter.topology", "adapter.num_dies", "adapter.dcin_layout", "adapter.num_initiators",
                "adapter.num_targets", "spec.participants"],
     "values": [["5x4", 1, "1die", 20, 20, [0, 5, 10, 15]], ["5x4", 2, "2die", 40, 40, [0, 10, 20, 30]],
                ["5x4", 2, "2die_spread", 40, 40, [0, 10, 20, 30]]]},
    {"fields": ["adapter.mst_rd_outstanding", "adapter.mst_wr_outstanding"], "values": [[8, 8], [16, 16], [32, 32], [64, 64]]},
    {"field": "adapter.burst_length", "values": [2, 4]}]
d["pareto"] = {"minimize": ["total_time_us", "mst_outstanding", "d2d_links"],
               "workload": ["primitive", "msg_size_bytes", "num_participants"]}
d["refine"] = {"engine": {"name": "math"}, "band": 0.3}
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY

# 1. the refinement, and the dense grid
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out clean.h5 --refine --quiet > clean.txt
cat clean.txt
grep -q "^refine round 0: the whole matrix (96 jobs) on the cheap rung, engine math" clean.txt
grep -q "^refine 'refine-small': converged" clean.txt
grep -q "certificate: the dcin front is the whole matrix's while" clean.txt
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out dense.h5 --quiet > dense.txt
expect dense.txt "ran 96 (0 failed)" dense.h5
"$CS_BIN" pareto dense.h5 --sweep small.json --json > dense.json
"$CS_BIN" pareto clean.h5 --sweep small.json --json > clean.json
$PY "$CMP" dense.json clean.json --engine dcin | tee cmp.txt
grep -q "^fronts equal: 4 of 4 workloads; front points missed: 0, false: 0" cmp.txt
ran_dcin=$($PY -c "import json; print(sum(g['points'] for g in json.load(open('clean.json'))['groups'] if g['engine'] == 'dcin'))")
[ "$ran_dcin" -lt 96 ] || { echo "the refinement ran all $ran_dcin dcin jobs"; exit 1; }
# the fronts are not trivial: some workload has more than one front point
$PY -c "import json; assert max(g['on_front'] for g in json.load(open('dense.json'))['groups']) > 1"

# 2. killed in round 1 on rank 1, then resumed: the uninterrupted file, byte for byte
rc=0
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out killed.h5 --refine --quiet \
  --test-stop-round 1 --test-stop-after-rows 3 --test-stop-rank 1 > killed1.txt 2>&1 || rc=$?
[ $rc != 0 ] || { echo "the killed refinement exited 0"; cat killed1.txt; exit 1; }
grep -q "^refine round 1: .* running" killed1.txt
read -r done_n failed_n pending_n < <($PY "$HERE/sweep_check.py" summary killed.h5)
echo "killed in round 1: $done_n done, $failed_n failed, $pending_n pending"
[ "$pending_n" -gt 0 ] && [ "$done_n" -gt 96 ]
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out killed.h5 --refine --quiet > resumed.txt
cat resumed.txt
# the resumed run selects what the uninterrupted one did, round by round
diff <(grep -E "^refine round [0-9]+: [0-9]+ points|front holds|^  (band|dcin)" clean.txt | grep -v "ran,") \
     <(grep -E "^refine round [0-9]+: [0-9]+ points|front holds|^  (band|dcin)" resumed.txt | grep -v "ran,")
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out killed.h5 --refine --quiet > again.txt
if grep "ran [1-9][0-9]* (" again.txt; then echo "a rerun of a finished refinement ran jobs"; exit 1; fi
grep -q "0 ran, .* were cached" again.txt

# 3. over the dense grid: the same selection, nothing run
timeout 600 mpirun -np 2 "$CS_BIN" sweep small.json --out dense.h5 --refine --quiet > over.txt
diff <(grep -E "^refine round [0-9]+: [0-9]+ points|front holds" clean.txt) \
     <(grep -E "^refine round [0-9]+: [0-9]+ points|front holds" over.txt)
grep -q "^  dcin (expensive): .* 0 ran, [0-9]* were cached" over.txt  # its math rows ran: round 0

# a budget: at most 10 distinct dcin jobs, taken cheap front first; the refinement says it stopped
$PY - small.json budget.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["refine"]["max_jobs"] = 10
json.dump(d, open(sys.argv[2], "w"))
PY
timeout 600 "$CS_BIN" sweep budget.json --out budget.h5 --refine --quiet --results-only > budget.txt
cands=$(sed -n 's/^refine round 1: \([0-9]*\) points not run may be on the front.*/\1/p' budget.txt)
[ -n "$cands" ] && [ "$cands" -gt 10 ] || { echo "round 1 selected '$cands' points"; exit 1; }
grep -q "^  budget: $((cands - 10)) of them left out (max_jobs 10)" budget.txt
grep -q "^refine 'refine-small': the budget of expensive jobs is spent after 1 round" budget.txt
grep -q "^  dcin (expensive): 10 distinct jobs" budget.txt

# 4. errors, and --calibration
$PY - small.json bad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pareto"]["minimize"][1] = "mst_outstandings"
json.dump(d, open(sys.argv[2], "w"))
PY
rc=0; "$CS_BIN" sweep bad.json --out bad.h5 --quiet 2> bad.err || rc=$?
cat bad.err
[ $rc = 1 ] && grep -q "sweep file 'bad.json': pareto.minimize\[1\]: unknown column 'mst_outstandings'" bad.err
[ ! -e bad.h5 ]
rc=0; "$CS_BIN" pareto clean.h5 --minimize total_time_us,dcin_layout 2> text.err || rc=$?
[ $rc = 1 ] && grep -q "\-\-minimize: column 'dcin_layout' is text, not numeric" text.err
$PY - small.json plain.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.pop("refine")
json.dump(d, open(sys.argv[2], "w"))
PY
rc=0; "$CS_BIN" sweep plain.json --out plain.h5 --refine --quiet 2> norefine.err || rc=$?
[ $rc = 1 ] && grep -q "has no 'refine' section: give --calibration FILE" norefine.err
echo '{"engine": {"name": "math"}, "band": 0.3, "fit": {"rows": 0}}' > calib.json
timeout 600 "$CS_BIN" sweep plain.json --out plain.h5 --refine --calibration calib.json --quiet \
  > plain.txt
grep -q "engine math from calibration 'calib.json'" plain.txt
"$CS_BIN" pareto plain.h5 --sweep small.json --json > plain.json
$PY "$CMP" dense.json plain.json --engine dcin --quiet
echo "test_pareto_refine: OK"
