#!/usr/bin/env bash
# `show` tells every design of a sweep apart: the /jobs network column (from each engine's
# network op) separates 2die from 2die_spread and names vcnet's own topology; the columns that
# vary are shown and the others printed once; an input outside /jobs (an engine option) that
# alone tells rows apart becomes a column; --where filters on any /jobs column; "0 shown" says
# which filter matched nothing and what exists; --verify checks the rows shown only; CSV and h5py
# carry the network; a file of schema version 5 is read, and `repair` converts it.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
failures=0
fail() { # CS_TEST_KEEP_GOING=1: count the failed checks instead of stopping at the first
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
  [ -n "${CS_TEST_KEEP_GOING:-}" ] || exit 1
}
has() { grep -qF -- "$2" "$1" || fail "expected '$2' in $1: $(cat "$1")"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "did not expect '$2' in $1: $(cat "$1")"; }

# four networks, two of them the same dies in two layouts, and two burst lengths
$PY - "$DEMO" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "designs"
d.pop("description", None)
d["base"]["engine"]["vcnet"]["topology"] = "torus:4x4x4"
d["matrix"] = [
    {"fields": ["engine.name", "adapter.topology", "adapter.num_dies", "adapter.dcin_layout",
                "adapter.num_initiators", "adapter.num_targets", "spec.participants",
                "engine.vcnet.topology"],
     "values": [["math", "2261_5x4", 2, "2die", 40, 40, [0, 5, 10, 15, 20, 25, 30, 35], "torus:4x4x4"],
                ["math", "5x4", 2, "2die_spread", 40, 40, [0, 5, 10, 15, 20, 25, 30, 35], "torus:4x4x4"],
                ["math", "5x4", 4, "4die", 80, 80, [0, 10, 20, 30, 40, 50, 60, 70], "torus:4x4x4"],
                ["vcnet", "5x4", 2, "2die", 16, 16, [0, 2, 4, 6, 8, 10, 12, 14], "torus:4x4"]]},
    {"fields": ["spec.primitive", "spec.algorithm"], "values": [["allreduce", "ring"], ["alltoall", "pairwise"]]},
    {"field": "spec.msg_size_bytes", "values": [65536]},
    {"field": "adapter.burst_length", "values": [2, 8]}]
json.dump(d, open("designs.json", "w"), indent=1)
d["matrix"][-1]["values"] = [2, 4, 8]
json.dump(d, open("designs3.json", "w"), indent=1)
d["name"] = "depths"
d["base"]["engine"]["name"] = "vcnet"
d["matrix"] = [{"field": "engine.vcnet.vc_depth", "values": [4, 8]},
               {"field": "spec.msg_size_bytes", "values": [4096, 65536]}]
json.dump(d, open("depths.json", "w"), indent=1)
PY
"$CS_BIN" sweep designs.json --out d.h5 --quiet > run.txt
expect run.txt "ran 16 (0 failed)" d.h5

# the designs are told apart: network and burst vary, so both are columns
"$CS_BIN" show d.h5 > all.txt
has all.txt "2die (2261_5x4)"
has all.txt "2die_spread (5x4)"
has all.txt "4die (5x4)"
has all.txt "torus:4x4 (dor_dateline)"
head -8 all.txt | grep -q "burst" || fail "burst_length varies but is no column: $(cat all.txt)"
has all.txt "every row shown has dtype=bf16"
hasnt all.txt "topology" # the adapter's die topology: the network names it
# no two rows shown are alike: the rows' input cells (all but the row number and the results)
sed -n '/^  /p' all.txt | awk '{ $1 = ""; NF -= 6; print }' | sort | uniq -d > same.txt
[ ! -s same.txt ] || fail "rows that look alike: $(cat same.txt)"

# --topology names a network by any of its words; the die topology selects the chip engines' rows
"$CS_BIN" show d.h5 --topology torus:4x4 > t.txt
has t.txt "; 4 shown;"
has t.txt "network=\"torus:4x4 (dor_dateline)\""
"$CS_BIN" show d.h5 --topology 2die_spread > t.txt
has t.txt "; 4 shown;"
"$CS_BIN" show d.h5 --topology 5x4 > t.txt
has t.txt "; 8 shown;"
# --where on any /jobs column, repeated values are alternatives
"$CS_BIN" show d.h5 --where burst_length=8 --where primitive=alltoall > w.txt
has w.txt "; 4 shown;"
"$CS_BIN" show d.h5 --where "network=4die (5x4)" --where "network=2die (2261_5x4)" --where burst_length=2 > w.txt
has w.txt "; 4 shown;"
rc=0; "$CS_BIN" show d.h5 --where burst=8 2> e.txt || rc=$?
[ $rc = 2 ] || fail "--where on an unknown column: rc $rc"
has e.txt "--where burst=8: no /jobs column 'burst' (columns: msg_size_bytes,"

# 0 shown says why
"$CS_BIN" show d.h5 --topology torus:8x8 > z.txt
has z.txt "; 0 shown;"
has z.txt "# no row matches --topology torus:8x8; the file's network values: 2die (2261_5x4), 2die_spread (5x4), 4die (5x4), torus:4x4 (dor_dateline)"
"$CS_BIN" show d.h5 --where burst_length=4 > z.txt
has z.txt "# no row matches --where burst_length=4; the file's burst_length values: 2, 8"
"$CS_BIN" show d.h5 --topology torus:4x4 --engine math > z.txt
has z.txt "# each filter matches rows (--topology torus:4x4: 4, --engine math: 12), but no row matches all of them"

# an engine option alone tells rows apart: it becomes a column, named by its path
"$CS_BIN" sweep depths.json --out h.h5 --quiet > run.txt
expect run.txt "ran 4 (0 failed)" h.h5
"$CS_BIN" show h.h5 > x.txt
has x.txt "engine.vcnet.vc_depth"
sed -n '/^  /p' x.txt | awk '{ $1 = ""; NF -= 6; print }' | sort | uniq -d > same.txt
[ ! -s same.txt ] || fail "rows that look alike: $(cat same.txt)"

# the study's picture from the same file (a reduced docs/layout-study.md): one line per design
$PY "$CS_SOURCE_DIR/scripts/analyze.py" d.h5 --out an > an.txt
has an.txt "layouts.png"
[ -s an/layouts.png ] || fail "no layouts.png"
$PY "$CS_SOURCE_DIR/scripts/analyze.py" d.h5 --out an5 --topology 2die_spread > an5.txt
has an5.txt "d.h5: 4 finished jobs"

# the network is a column of the file and of the CSV
"$CS_BIN" show d.h5 --csv > d.csv
$PY - <<'PY'
import csv, h5py
rows = list(csv.DictReader(open("d.csv")))
with h5py.File("d.h5", "r") as f:
    assert int(f.attrs["schema_version"]) == 6
    net = [n.decode() for n in f["jobs"]["network"]]
    assert f["jobs"].attrs["network.description"].startswith("the network the job runs on")
assert [r["network"] for r in rows] == net, (rows[0], net)
assert sorted(set(net)) == ["2die (2261_5x4)", "2die_spread (5x4)", "4die (5x4)", "torus:4x4 (dor_dateline)"], set(net)
PY

# --verify checks the rows shown: a corrupt row outside --limit is not read
$PY - <<'PY'
import h5py
with h5py.File("d.h5", "a") as f:
    r = f["results"][5]
    r["total_time_us"] += 1.0
    f["results"][5] = r
PY
"$CS_BIN" show d.h5 --verify --limit 1 > v.txt
has v.txt "16 rows: 16 done, 0 failed, 0 pending, 0 corrupt; 1 shown;"
has v.txt "# verified: the 1 rows shown"
"$CS_BIN" show d.h5 --verify > v.txt
has v.txt "16 rows: 15 done, 0 failed, 0 pending, 1 corrupt; 16 shown;"

# a file of schema version 5 (the same file without the network column) is read; writing it
# needs `repair`, which converts it and gives every row its network
"$CS_BIN" sweep designs.json --out d6.h5 --quiet > /dev/null
cp d6.h5 d5.h5
$PY - <<'PY'
import h5py, numpy as np
with h5py.File("d5.h5", "a") as f:
    old = f["jobs"]
    attrs = {k: v for k, v in old.attrs.items() if not k.startswith("network.")}
    data = old[()]
    names = [n for n in data.dtype.names if n != "network"]
    d5 = np.empty(data.shape, np.dtype({"names": names, "formats": [data.dtype.fields[n][0] for n in names]}))
    for n in names:
        d5[n] = data[n]
    del f["jobs"]
    new = f.create_dataset("jobs", data=d5, maxshape=(None,), chunks=(512,), compression="gzip")
    for k, v in attrs.items():
        new.attrs[k] = v
    f.attrs["schema_version"] = 5
PY
"$CS_BIN" show d5.h5 --topology 2die_spread > s5.txt
has s5.txt "; 4 shown;"
has s5.txt "# note: a file of schema version 5 has no network column; \`commsweep repair d5.h5\` converts it"
rc=0; "$CS_BIN" sweep designs3.json --out d5.h5 --quiet > o.txt 2> e.txt || rc=$?
[ $rc = 1 ] || fail "a sweep that must write a version 5 file: rc $rc"
has e.txt "schema version 5, which this commsweep reads but does not write (it writes version 6, with /jobs.network): \`commsweep repair\` converts the file, keeping every row"
"$CS_BIN" repair d5.h5 > r.txt
has r.txt "16 kept (verified)"
has r.txt "converted from schema version 5 to 6: 16 /jobs rows given their network column"
"$CS_BIN" show d5.h5 --csv > d5.csv
"$CS_BIN" show d6.h5 --csv > d6.csv
cmp d5.csv d6.csv || fail "the converted file differs from the one written as version 6"
"$CS_BIN" sweep designs.json --out d5.h5 --quiet > o.txt
has o.txt "ran 0 (0 failed)"
[ $failures = 0 ] || exit 1
echo "test_show: every design told apart"
