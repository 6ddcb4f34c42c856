#!/usr/bin/env bash
# The pod study (sweeps/pod-study.json) in a reduced form on 2 ranks: its torus:4x4x4 rows with
# 4 VCs of 8 flits at 64 KiB and 1 MiB, every algorithm of the study, the participants given as
# {"first", "count"}, the full transaction log; plus one job (2 MiB) over its memory bound
# (engine.memory_limit_bytes = 1 MiB), which fails alone with a message naming the estimate, the
# bound and the field while the rest completes.  Checked against what docs/vcnet.md derives:
# step counts, bytes per participant, the link-bandwidth bound of each algorithm, and that the
# decomposed algorithms beat the flat ring at 64 KiB (18 steps against 126).
set -euo pipefail
. "$(dirname "$0")/sweep_env.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$PY" - "$CS_SOURCE_DIR/sweeps/pod-study.json" pod.json <<'PY'
import json, sys
study = json.load(open(sys.argv[1]))
(axis,) = study["matrix"]  # one axis of explicit jobs
fields = axis["fields"]
assert fields[0] == "engine.vcnet.topology" and fields[-3:] == [
    "spec.primitive", "spec.algorithm", "spec.msg_size_bytes"], fields
jobs = [r + [4 << 30] for r in axis["values"]
        if r[0] == "torus:4x4x4" and r[2:4] == [4, 8] and r[-1] <= 1 << 20]
ALGS = [("allreduce", "ring"), ("allreduce", "dimring"), ("allreduce", "dimring_rsag"),
        ("allgather", "ring"), ("alltoall", "pairwise")]
assert sorted((r[-2], r[-4], r[-3]) for r in jobs) == sorted(
    (s,) + a for s in (65536, 1048576) for a in ALGS), jobs
assert len(jobs) == 10
# its own job (a bound is not part of the cache key: the same job under another bound is one row)
over = [r for r in jobs if r[-2] == 1 << 20][0][:-4] + ["allreduce", "dimring", 2 << 20, 1 << 20]
study["name"] = "pod-study-small"
study["matrix"] = [{"fields": fields + ["engine.memory_limit_bytes"], "values": jobs + [over]}]
json.dump(study, open(sys.argv[2], "w"), indent=1)
PY

mpirun -np 2 "$CS_BIN" sweep pod.json --out pod.h5 --quiet > summary.txt 2>&1 \
  || { cat summary.txt; fail "the reduced pod study"; }
"$PY" "$HERE/sweep_check.py" counts pod.h5 10 1 0 || fail "10 rows done, the over-bound one failed"
for text in "estimated to need" "over the bound of 1.0 MiB (engine.memory_limit_bytes = 1048576)" \
            "raise engine.memory_limit_bytes"; do
  "$PY" "$HERE/sweep_check.py" failed pod.h5 "$text" || fail "the over-bound message: $text"
done
"$CS_BIN" show pod.h5 --csv > show.csv
"$PY" "$HERE/sweep_check.py" show pod.h5 show.csv

"$PY" - show.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "done"]
assert len(rows) == 10
N, g, link = 64, 4, 128.0  # participants, ring length per dimension, GB/s per link and way
by = {}
for r in rows:
    prim, alg, size = r["primitive"], r["algorithm"], int(r["msg_size_bytes"])
    by[prim, alg, size] = r
    steps = {("allreduce", "ring"): 2 * (N - 1), ("allreduce", "dimring"): 2 * 3 * (g - 1),
             ("allreduce", "dimring_rsag"): 2 * 3 * (g - 1), ("allgather", "ring"): N - 1,
             ("alltoall", "pairwise"): N - 1}[prim, alg]
    assert int(r["algorithm_steps"]) == steps, (prim, alg, r["algorithm_steps"])
    # tbl-cr-06: 2 (N-1)/N M for an allreduce, (N-1)/N M for allgather and alltoall
    share = 2 * (N - 1) if prim == "allreduce" else N - 1
    assert int(r["total_comm_bytes"]) == share * size // N, (prim, alg, r["total_comm_bytes"])
    # the bound: a participant's sends leave through one link at a time (docs/vcnet.md); dimring
    # sends sum_d 2 (g-1)/g M = 4.5 M for the 2 (N-1)/N M it is credited with
    bound = link * (2 * (N - 1) / N) / (3 * 2 * (g - 1) / g) if alg == "dimring" else link
    assert float(r["bus_bw_gb_per_s"]) < bound, (prim, alg, size, r["bus_bw_gb_per_s"], bound)
    assert int(r["num_transactions"]) > 0 and r["engine"] == "vcnet"
t = lambda a: float(by["allreduce", a, 65536]["total_time_us"])
assert t("dimring") < t("ring") and t("dimring_rsag") < t("ring"), "64 KiB: fewer steps win"
PY
echo "pod study (reduced): ok"
