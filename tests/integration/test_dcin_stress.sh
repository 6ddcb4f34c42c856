#!/usr/bin/env bash
# The reduced DCIN stress sweep on 2 ranks: sweeps/dcin-stress.json and its P2P companion with the
# matrix cut to the heaviest participant set of every shipped layout (all 20 / 40 / 40 / 80 GDMAs
# of 1die / 2die / 2die_spread / 4die; the farthest pair for P2P), every primitive, at three loads:
# 2 MiB with the shipped outstanding and burst (the load that stopped on 4die before full rings
# rotated), 2 MiB at outstanding 128 and burst 8, 256 KiB at outstanding 2 and burst 1.  Every
# job must be done (read back from /results with h5py): 48 + 24 jobs, none failed (fewer in a
# sanitizer build, below).
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# A sanitizer build runs ten times slower: there the loads are smaller (same coverage of layouts,
# primitives, participant sets and outstanding / burst extremes), 32 + 16 jobs.
sanitized=0; ldd "$CS_BIN" | grep -q libasan && sanitized=1
$PY - "$CS_SOURCE_DIR/sweeps" "$sanitized" <<'PY'
import json, sys
src = sys.argv[1]
loads = [[2097152, 4, 128, 128, 64, 64], [2097152, 8, 128, 128, 128, 128], [262144, 1, 2, 2, 2, 2]]
if sys.argv[2] == "1":
    loads = [[131072, 8, 128, 128, 128, 128], [32768, 1, 2, 2, 2, 2]]
load_fields = ["spec.msg_size_bytes", "adapter.burst_length", "adapter.mst_rd_outstanding",
               "adapter.mst_wr_outstanding", "adapter.slv_rd_outstanding", "adapter.slv_wr_outstanding"]
for name, out in (("dcin-stress", "stress.json"), ("dcin-stress-p2p", "stress_p2p.json")):
    d = json.load(open(f"{src}/{name}.json"))
    keep = []
    for axis in d["matrix"]:
        fields = axis.get("fields", [axis.get("field")])
        if "spec.participants" in fields:
            k = fields.index("spec.participants")
            heaviest = {}
            for v in axis["values"]:  # per layout the largest participant set
                lay = v[fields.index("adapter.dcin_layout")]
                if lay not in heaviest or len(v[k]) > len(heaviest[lay][k]):
                    heaviest[lay] = v
            assert sorted(heaviest) == ["1die", "2die", "2die_spread", "4die"], sorted(heaviest)
            keep.append({"fields": fields, "values": list(heaviest.values())})
        elif fields[0] in ("spec.primitive", "spec.p2p_op"):
            keep.append(axis)
    keep.append({"fields": load_fields, "values": loads})
    d["matrix"] = keep
    d["name"] = name + "-ci"
    json.dump(d, open(out, "w"), indent=1)
PY

for f in stress stress_p2p; do
  timeout 600 mpirun -np 2 "$CS_BIN" sweep "$f.json" --out "$f.h5" --results-only --quiet | tee "$f.txt"
done
loads=3; [ $sanitized = 1 ] && loads=2
expect stress.txt "ran $((16 * loads)) (0 failed) on 2 rank" stress.h5
expect stress_p2p.txt "ran $((8 * loads)) (0 failed) on 2 rank" stress_p2p.h5
$PY "$HERE/sweep_check.py" counts stress.h5 $((16 * loads)) 0 0
$PY "$HERE/sweep_check.py" counts stress_p2p.h5 $((8 * loads)) 0 0
$PY - <<'PY'
import h5py, numpy as np
# every (layout, primitive) pair at its largest participant set, each row done with traffic
full = {"1die": 20, "2die": 40, "2die_spread": 40, "4die": 80}
seen = set()
for name in ("stress.h5", "stress_p2p.h5"):
    with h5py.File(name, "r") as f:
        jobs, res = f["jobs"][()], f["results"][()]
        assert (res["status"] == 1).all(), name
        assert (res["num_transactions"] > 0).all() and (res["total_time_us"] > 0).all(), name
        for j in jobs:
            lay, prim = j["dcin_layout"].decode(), j["primitive"].decode()
            n = int(j["num_participants"])
            assert n == (2 if prim == "p2p" else full[lay]), (lay, prim, n)
            seen.add((lay, prim))
want = {(l, p) for l in full for p in ("allreduce", "allgather", "reducescatter", "alltoall", "p2p")}
assert seen == want, sorted(want - seen)
print("stress: every layout x primitive done at its heaviest participant set")
PY
echo "test_dcin_stress: OK"
