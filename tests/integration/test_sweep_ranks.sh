#!/usr/bin/env bash
# The demo sweep on 1 (no mpirun), and 1, 2, 3 ranks under mpirun: the dry run names the same
# share groups; the four files hold identical results (every column but wall_time_s, bit for
# bit); h5py reads every dataset and the values match `commsweep show --csv`; an exported job
# equals its /txlog slice; a results-only run writes no log.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
SWEEP=$DEMO

# the share groups, from the expansion of one process and of three ranks (whose blocks travel to
# rank 0; the dcin jobs last, so that they are not rank 0's own): the demo's 48 dcin jobs are 3
# sizes x 2 participant sets x 2 outstanding settings, each with its four collectives; math and
# vcnet jobs share nothing
$PY - "$SWEEP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["matrix"][0]["field"] == "engine.name"
d["matrix"][0]["values"] = ["math", "vcnet", "dcin"]
json.dump(d, open("groups.json", "w"))
PY
"$CS_BIN" sweep groups.json --out groups.h5 --dry-run > groups1.txt
timeout 300 mpirun -np 3 "$CS_BIN" sweep groups.json --out groups.h5 --dry-run > groups3.txt
for f in groups1.txt groups3.txt; do
  grep -q "share groups: 12 (48 jobs, at most 4 a group), each run on one rank" "$f"
done

timeout 300 "$CS_BIN" sweep "$SWEEP" --out single.h5 --quiet
for n in 1 2 3; do
  timeout 300 mpirun -np "$n" "$CS_BIN" sweep "$SWEEP" --out "np$n.h5" --quiet | tee "np$n.txt"
  expect "np$n.txt" "ran 144 (0 failed) on $n rank" "np$n.h5"
done
grep -q "jobs per rank:" np3.txt
$PY "$HERE/sweep_compare.py" np1.h5 np2.h5 np3.h5 single.h5

"$CS_BIN" show np3.h5 --csv > show.csv
$PY "$HERE/sweep_check.py" show np3.h5 show.csv
$PY "$HERE/sweep_check.py" counts np3.h5 144 0 0
"$CS_BIN" show np3.h5 --primitive alltoall --participants 8 > table.txt
test "$(grep -c ' alltoall ' table.txt)" = 18
"$CS_BIN" show np3.h5 --verify | tail -1 | grep -q "144 done, 0 failed, 0 pending, 0 corrupt"
"$CS_BIN" export np3.h5 --job 13 --jsonl -o job13.jsonl
$PY "$HERE/sweep_check.py" export np3.h5 13 job13.jsonl
"$CS_BIN" export np3.h5 --job 13 --result | grep -q '"status":	"done"'

# the analysis script reads the file: summary CSV and both plots
$PY "$CS_SOURCE_DIR/scripts/analyze.py" np3.h5 --out analysis
test "$(wc -l < analysis/summary.csv)" = 145
test -s analysis/busbw_vs_size.png && test -s analysis/pareto_outstanding.png

# results-only: same results, no log
timeout 300 mpirun -np 2 "$CS_BIN" sweep "$SWEEP" --out ro.h5 --results-only --quiet
$PY - <<'PY'
import h5py, numpy as np
a, b = h5py.File("np1.h5", "r"), h5py.File("ro.h5", "r")
assert len(b["txlog"]) == 0 and int(np.sum(b["results"]["txlog_count"])) == 0
for col in ("total_time_us", "bus_bw_gb_per_s", "num_transactions", "straggler_ratio"):
    assert (a["results"][col] == b["results"][col]).all(), col
print("results-only: same results, empty /txlog")
PY
if "$CS_BIN" export ro.h5 --job 0 > /dev/null 2> ro.err; then exit 1; fi
grep -q "results-only" ro.err
echo "test_sweep_ranks: OK"
