#!/usr/bin/env bash
# commsweep calibrate recovers a model it can represent: the reference rows are the math engine's
# own, run with constants other than its defaults (the "truth" below), so a fit that works cuts
# an error of about 11% on the rows it holds out to a fraction of one (16 rows fitted on cannot
# pin all nine constants the rows feel, and the held-out times are whole ticks).  Then the calibration file
# drives `run` as an engine file, and bad input fails with a message that names it.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

$PY - "$DEMO" truth.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "calib-truth"
m = d["base"]["engine"]["math"]
m.update(req_cycles=18.0, dbid_cycles=24.0, data_cycles=8.0, turn_cycles=3.0,
         d2d_write_cycles=20.0, tracker_slack_cycles=6.0)
d["matrix"] = [
    {"fields": ["spec.primitive", "spec.algorithm"],
     "values": [["allgather", "ring"], ["alltoall", "pairwise"]]},
    {"field": "spec.msg_size_bytes", "values": [16384, 65536, 262144]},
    {"field": "spec.participants", "values": [[0, 3, 5, 6], [0, 5, 20, 25]]},
    {"fields": ["adapter.mst_rd_outstanding", "adapter.mst_wr_outstanding"],
     "values": [[16, 16], [64, 64]]},
    {"field": "adapter.burst_length", "values": [2, 4]}]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
"$CS_BIN" sweep truth.json --out truth.h5 --results-only --quiet > sweep.txt
expect sweep.txt "ran 48 (0 failed)" truth.h5

"$CS_BIN" calibrate truth.h5 --reference math --engine math --sample 0.5 --out calib.json \
  --quiet > calib.txt
cat calib.txt
$PY - <<'PY'
import json
c = json.load(open("calib.json"))
fit = c["fit"]
assert fit["reference_rows"] == 48 and fit["sample_rows"] == 24, fit
assert len(fit["sample_row_numbers"]) == 24
assert fit["sample_rmspe_before"] > 0.08, fit  # the defaults are clearly off the truth
assert fit["sample_rmspe_after"] < 0.01, fit
for prim in ("allgather", "alltoall"):
    held = fit["held_out"][prim]
    assert held["rows"] == 12 and held["rmspe"] < 0.015, (prim, held)
    assert 0 < c["band"][prim] < 0.05, c["band"]
assert c["engine"]["name"] == "math"
assert set(c["engine"]["math"]) >= {"req_cycles", "retry_threshold"}
PY
grep -q "^alltoall  *12  *12 " calib.txt || { echo "no per-primitive line in the report"; exit 1; }

# the file is an engine file too: the fitted options run a job
ex=$CS_SOURCE_DIR/docs/examples
"$CS_BIN" run --engine math --engine-config calib.json --spec "$ex/spec_allreduce.json" \
  --config "$ex/adapter_2die.json" --no-txlog > run.json
$PY -c 'import json; assert json.load(open("run.json"))["aggregates"]["total_time_us"] > 0'

# --max-evals 0 judges the starting options alone: those of the file just written
"$CS_BIN" calibrate truth.h5 --reference math --start calib.json --sample 0.5 --max-evals 0 \
  --out again.json --quiet > again.txt
$PY - <<'PY'
import json
a, c = json.load(open("again.json")), json.load(open("calib.json"))
assert a["fit"]["evaluations"] <= 2 and a["engine"] == c["engine"], a["fit"]
assert a["fit"]["held_out"] == c["fit"]["held_out"], (a["fit"], c["fit"])
PY

# --sweep: the sample is run first, into the file, over 2 ranks, as a sweep of those jobs would
timeout 300 mpirun -np 2 "$CS_BIN" calibrate sample.h5 --sweep truth.json --reference math \
  --engine math --sample 0.5 --out swept.json --quiet > swept.txt
cat swept.txt
grep -q "^calibrate: the sample: 24 of the 48 jobs of 'truth.json'" swept.txt
expect swept.txt "ran 24 (0 failed) on 2 ranks" sample.h5
$PY - <<'PY'
import json
s, c = json.load(open("swept.json")), json.load(open("calib.json"))
assert s["fit"]["reference_rows"] == 24 and s["fit"]["sample_rows"] == 24, s["fit"]
assert sorted(s["fit"]["held_out"]) == [], s["fit"]["held_out"]  # nothing else in the file
assert s["fit"]["sample_rmspe_after"] < 0.01, s["fit"]
PY
# the sample's rows are the study's: a sweep of it into the same file runs only the others
"$CS_BIN" sweep truth.json --out sample.h5 --results-only --quiet > rest.txt
expect rest.txt "ran 24 (0 failed) .*cached 24 (0 failed)" sample.h5
# and a second calibration of the study runs nothing, its rows now held out
"$CS_BIN" calibrate sample.h5 --sweep truth.json --reference math --sample 0.5 --max-evals 0 \
  --out again2.json --quiet > again2.txt
expect again2.txt "ran 0 (0 failed) .*cached 24"
$PY -c 'import json; f = json.load(open("again2.json"))["fit"]; assert f["held_out"]["alltoall"]["rows"] == 12, f'

# no rows of the reference engine; a fraction out of range; an unknown engine
if "$CS_BIN" calibrate truth.h5 --out x.json 2> e1.txt; then exit 1; fi
grep -q "has no done rows of engine 'dcin'" e1.txt || { cat e1.txt; exit 1; }
set +e
"$CS_BIN" calibrate truth.h5 --reference math --sample 1.5 --out x.json 2> e2.txt; rc=$?
set -e
[ $rc = 2 ] && grep -q -- "--sample 1.5: want a fraction in (0, 1]" e2.txt || { cat e2.txt; exit 1; }
if "$CS_BIN" calibrate truth.h5 --reference math --engine warp --out x.json 2> e3.txt; then exit 1; fi
grep -q "unknown engine 'warp'" e3.txt || { cat e3.txt; exit 1; }
echo "test_calibrate: ok"
