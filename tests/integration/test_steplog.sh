#!/usr/bin/env bash
# Per-step summaries (`sweep --txlog steps`, /steplog): every summary of the demo equals what
# Python computes from the job's own records (those of `commsweep run --txlog` for a sample of
# every engine and collective, those of a `--txlog full` sweep for all jobs); the detail rules
# none -> steps -> full rerun and full -> steps reuses; a sweep killed after some rows leaves its
# summaries in the spool, which the next sweep merges; show --verify, export --steps and
# --verify-log check the summary slice checksum.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# 1. the demo (3 engines x 4 collectives x 3 sizes x 2 participant sets x 2 tracker settings =
#    144 jobs) with summaries only, and with every record, on 2 ranks
timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out steps.h5 --quiet --txlog steps > s.txt
expect s.txt "ran 144 (0 failed)" steps.h5
timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out full.h5 --quiet --txlog full > f.txt
expect f.txt "ran 144 (0 failed)" full.h5

#    every fifth job (29: each engine has 9 or 10 of them, each collective of each engine 2 or
#    3) once more on its own through `commsweep run`, its records as JSON lines
$PY - steps.h5 <<'PY'
import json, sys, h5py
jobs = h5py.File(sys.argv[1], "r")["job_json"]
for row in range(0, len(jobs), 5):
    job = json.loads(jobs[row].decode())
    for part, name in (("spec", "s"), ("adapter", "a"), ("engine", "e")):
        json.dump(job[part], open(f"{name}{row}.json", "w"))
PY
SAMPLE=$(seq 0 5 143)
for row in $SAMPLE; do
  "$CS_BIN" run --spec "s$row.json" --config "a$row.json" --engine-config "e$row.json" \
    --txlog "run$row.jsonl" > /dev/null
done

#    the summaries, computed here from the records with the definitions of docs/hdf5-schema.md
#    (/steplog), against the file's: the run sample from JSON lines, every job from full.h5
$PY - steps.h5 full.h5 $SAMPLE <<'PY'  # word splitting intended
import json, os, sys
import h5py, numpy as np
steps_path, full_path, sample = sys.argv[1], sys.argv[2], [int(r) for r in sys.argv[3:]]
RN = ("rn_rd_block", "rn_wr_block", "rn_rdb_block", "rn_wdb_block")
SN = ("sn_ro_block", "sn_share_block", "sn_wdb_block")
D2D = ("d2d_ro_block", "d2d_share_block", "d2d_wdb_block")

def summarize(cols, num_steps, bw):
    """cols: record column name -> integer array of one job's records.  Exact: int64 sums of
    values far below 2^63, compared as Python integers."""
    c = {n: np.asarray(v, dtype=np.int64) for n, v in cols.items()}
    out = []
    for t in range(num_steps):
        m = c["step"] == t
        k = int(m.sum())
        g = lambda name: c[name][m]
        bytes_ = g("burst_length") * bw
        cross = g("src_die") != g("dst_die")
        s = {"step": t, "transactions": k, "bytes": int(bytes_.sum()),
             "reads": int((g("is_read") != 0).sum()), "writes": int((g("is_read") == 0).sum()),
             "first_req_inject_tick": int(g("req_inject_tick").min()) if k else 0,
             "last_rsp_complete_tick": int(g("rsp_complete_tick").max()) if k else 0,
             "req_phase_ticks": int((g("req_complete_tick") - g("req_inject_tick")).sum()),
             "rsp_phase_ticks": int((g("rsp_complete_tick") - g("rsp_inject_tick")).sum()),
             "max_latency_ticks": int((g("rsp_complete_tick") - g("req_inject_tick")).max()) if k else 0,
             "cross_die_transactions": int(cross.sum()), "cross_die_bytes": int(bytes_[cross].sum()),
             "retries": int(g("retry_count").sum()), "eject_retries": int(g("eject_retries").sum()),
             "block_rn": int(sum(g(n).sum() for n in RN)),
             "block_sn": int(sum(g(n).sum() for n in SN)),
             "block_d2d": int(sum(g(n).sum() for n in D2D))}
        s["span_ticks"] = s["last_rsp_complete_tick"] - s["first_req_inject_tick"] if k else 0
        out.append(s)
    return out

NEEDED = ("step", "burst_length", "is_read", "src_die", "dst_die", "req_inject_tick",
          "req_complete_tick", "rsp_inject_tick", "rsp_complete_tick", "retry_count",
          "eject_retries") + RN + SN + D2D

with h5py.File(steps_path, "r") as f:
    sl, res, jobs = f["steplog"], f["results"][()], f["jobs"][()]
    assert sl.compression == "gzip" and sl.shuffle, (sl.compression, sl.shuffle)
    log, stored = sl[()], sl.id.get_storage_size()
    assert len(f["txlog"]) == 0, "a steps sweep stores no records"
with h5py.File(full_path, "r") as f:
    full_log, full_res, txlog = f["steplog"][()], f["results"][()], f["txlog"][()]

def slice_of(r, row):
    off, cnt = int(r["steplog_offset"][row]), int(r["steplog_count"][row])
    return off, cnt

def compare(row, got, want, what):
    assert len(got) == len(want), (what, row, len(got), len(want))
    for t, w in enumerate(want):
        for name, value in w.items():
            assert int(got[t][name]) == value, (what, row, t, name, int(got[t][name]), value)

engines_primitives = set()
for row in range(len(res)):
    n_steps, bw = int(jobs["num_steps"][row]), int(jobs["bw_bytes"][row])
    assert res["status"][row] == 1 and res["txlog_detail"][row] == 1, row
    assert int(res["txlog_count"][row]) == 0, row
    off, cnt = slice_of(res, row)
    assert cnt == n_steps > 0, (row, cnt, n_steps)
    mine = log[off:off + cnt]
    assert (mine["job"] == row).all() and list(mine["step"]) == list(range(n_steps)), row
    # the summaries account for the whole job
    assert int(mine["transactions"].sum()) == int(res["num_transactions"][row]), row
    assert int(mine["last_rsp_complete_tick"].max()) == int(res["total_ticks"][row]), row
    # the full sweep holds the same summaries, and its records give them
    foff, fcnt = slice_of(full_res, row)
    assert full_res["txlog_detail"][row] == 2 and fcnt == cnt, row
    assert full_log[foff:foff + fcnt].tobytes() == mine.tobytes(), row
    toff, tcnt = int(full_res["txlog_offset"][row]), int(full_res["txlog_count"][row])
    recs = txlog[toff:toff + tcnt]
    compare(row, mine, summarize({n: recs[n] for n in NEEDED}, n_steps, bw), "full.h5")
    if row in sample:
        lines = [json.loads(l) for l in open(f"run{row}.jsonl")]
        assert len(lines) == tcnt, (row, len(lines), tcnt)
        cols = {n: [int(l[n]) for l in lines] for n in NEEDED}
        compare(row, mine, summarize(cols, n_steps, bw), "run --txlog")
        engines_primitives.add((jobs["engine"][row].decode(), jobs["primitive"][row].decode()))
assert len(engines_primitives) == 12, sorted(engines_primitives)  # 3 engines x 4 collectives
per_summary, per_file = stored / len(log), os.path.getsize(steps_path) / len(log)
print(f"{steps_path}: {len(log)} summaries of {len(res)} jobs equal Python's sums of their "
      f"records (all from full.h5, {len(sample)} also from `run --txlog`); "
      f"{per_summary:.2f} B per summary on disk (/steplog, 152 B in memory), "
      f"{per_file:.1f} B per summary for the whole file ({os.path.getsize(steps_path)} B; "
      f"full.h5: {os.path.getsize(full_path)} B)")
assert per_summary < 152 / 4, per_summary
PY

#    export --steps prints the row's summaries as h5py reads them; show --verify holds
"$CS_BIN" export steps.h5 --job 7 --steps -o steps7.jsonl
$PY - steps.h5 <<'PY'
import json, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["results"][7]
    want = f["steplog"][int(r["steplog_offset"]):int(r["steplog_offset"]) + int(r["steplog_count"])]
got = [json.loads(l) for l in open("steps7.jsonl")]
assert len(got) == len(want) > 0
for g, w in zip(got, want):
    assert set(g) == set(w.dtype.names), sorted(g)
    assert all(int(g[n]) == int(w[n]) for n in w.dtype.names), (g, w)
print(f"export --steps: {len(got)} summaries of row 7 equal h5py's")
PY
rc=0; "$CS_BIN" export steps.h5 --job 7 > /dev/null 2> norec.err || rc=$?
[ $rc = 1 ] && grep -q "was run with --txlog steps: it has per-step summaries" norec.err
"$CS_BIN" show steps.h5 --verify | tail -1 | grep -q "144 done, 0 failed, 0 pending, 0 corrupt"

#    a changed summary: show --verify and export name the row corrupt, --verify-log reruns it
cp steps.h5 changed.h5
$PY - changed.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    at = int(f["results"]["steplog_offset"][11]) + 1
    s = f["steplog"][at]
    s["span_ticks"] += 1
    f["steplog"][at] = s
PY
"$CS_BIN" show changed.h5 --verify | tail -1 | grep -q "143 done, 0 failed, 0 pending, 1 corrupt"
rc=0; "$CS_BIN" export changed.h5 --job 11 --steps > /dev/null 2> corrupt.err || rc=$?
[ $rc = 1 ] && grep -q "job 11 is corrupt (checksum mismatch)" corrupt.err
"$CS_BIN" sweep "$DEMO" --out changed.h5 --quiet --txlog steps --verify-log > v.txt
expect v.txt "ran 1 (0 failed) .*cached 143 "
$PY "$HERE/sweep_compare.py" steps.h5 changed.h5

# 2. the detail rules: none -> steps -> full rerun (the row holds less than asked), full ->
#    steps and none reuse (it holds more); the file ends as a clean full sweep's
$PY "$HERE/sweep_make.py" "$DEMO" detail.json detail math \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536]},
    {"field":"spec.participants","values":[[0,1,2,3],[0,5,20,25]]}]'
detail() { $PY - "$1" <<'PY'
import sys, h5py
res = h5py.File(sys.argv[1], "r")["results"][()]
print(" ".join(sorted({f"{int(d)}:{int(c > 0)}:{int(s > 0)}" for d, c, s in
                       zip(res["txlog_detail"], res["txlog_count"], res["steplog_count"])})))
PY
}
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog none > d1.txt
expect d1.txt "ran 4 (0 failed)"
[ "$(detail detail.h5)" = "0:0:0" ]
"$CS_BIN" sweep detail.json --out detail.h5 --dry-run --txlog steps > d2n.txt
grep -q "step summaries: 24 to write" d2n.txt  # 4 jobs x 6 ring allreduce steps: 2 (N - 1), N = 4
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog steps > d2.txt
expect d2.txt "ran 4 (0 failed)"
grep -q "rerun: 0 pending, 0 corrupt, 4 without log" d2.txt
[ "$(detail detail.h5)" = "1:0:1" ]
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog full > d3.txt
expect d3.txt "ran 4 (0 failed)"
grep -q "rerun: 0 pending, 0 corrupt, 4 without log" d3.txt
[ "$(detail detail.h5)" = "2:1:1" ]
for asked in steps none full; do
  "$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog "$asked" > d4.txt
  expect d4.txt "ran 0 (0 failed) .*cached 4 "
done
"$CS_BIN" sweep detail.json --out clean.h5 --quiet > /dev/null
$PY "$HERE/sweep_compare.py" clean.h5 detail.h5

# 3. a steps sweep killed after its 3rd row: the rows are done without their summaries in the
#    file, the spool holds them; a torn last entry is dropped; the next sweep merges the rest
#    and runs only what is missing, ending as a clean steps sweep
"$CS_BIN" sweep detail.json --out clean_steps.h5 --quiet --txlog steps > /dev/null
"$CS_BIN" sweep detail.json --out torn.h5 --quiet --txlog steps --test-stop-after-rows 3 \
  > /dev/null 2>&1 || true
read -r done_n failed_n pending_n < <($PY "$HERE/sweep_check.py" summary torn.h5)
[ "$done_n" = 3 ] && [ "$failed_n" = 0 ] && [ "$pending_n" = 1 ]
[ "$(detail torn.h5)" = "0:0:0" ]
done_row=$($PY -c "import h5py; print(list(h5py.File('torn.h5', 'r')['results']['status']).index(1))")
rc=0; "$CS_BIN" export torn.h5 --job "$done_row" --steps > /dev/null 2> spooled.err || rc=$?
[ $rc = 1 ] && grep -q "has no step summaries in the file yet: they may be in the log spool" spooled.err
truncate -s -20 torn.h5.spool.0
"$CS_BIN" sweep detail.json --out torn.h5 --quiet --txlog steps > torn.txt 2> torn.err
cat torn.txt
grep -q "log: 2 rows of an earlier sweep moved from its spools into the file, 1 torn" torn.txt
expect torn.txt "ran 2 (0 failed) .*cached 2 "
! ls torn.h5.spool.* 2> /dev/null
$PY "$HERE/sweep_compare.py" clean_steps.h5 torn.h5

#    and on 2 ranks: killed after its 2nd row on rank 1, the demo resumes to the clean file
timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out killed.h5 --quiet --txlog steps \
  --test-stop-after-rows 2 --test-stop-rank 1 > /dev/null 2>&1 || true
timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out killed.h5 --quiet --txlog steps > k.txt
cat k.txt
expect k.txt "ran [0-9]* (0 failed)"
$PY "$HERE/sweep_compare.py" steps.h5 killed.h5

rc=0; "$CS_BIN" sweep detail.json --out detail.h5 --txlog some 2> bad.err || rc=$?
[ $rc = 2 ] && grep -q -- "--txlog wants full, steps or none, got 'some'" bad.err
echo "test_steplog: OK"
