#!/usr/bin/env bash
# The compressed transaction log: every record of the demo sweep reads back (h5py, export,
# h5dump) equal, column for column, to `commsweep run --txlog` of the same job, and takes at
# most 24 bytes on disk; --txlog full|none lands in each row's txlog_detail, a row holding less
# than asked is rerun and one holding more is reused; a spool entry torn by a kill is dropped
# and its row rerun; a job's whole /txlog chunks travel through the spool as stored, a damaged
# one rejects its entry and entries made for another /txlog layout are dropped, not written.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# 1. the demo sweep (3 engines x 4 collectives x 3 sizes x 2 participant sets x 2 tracker
#    settings = 144 jobs) on 2 ranks
timeout 900 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out demo.h5 --quiet > demo.txt
expect demo.txt "ran 144 (0 failed)" demo.h5

#    every third job (48: each engine, collective, size, participant set and tracker setting)
#    once more on its own through `commsweep run`, its records as JSON lines, and exported
#    from the file
$PY - demo.h5 <<'PY'
import json, sys, h5py
jobs = h5py.File(sys.argv[1], "r")["job_json"]
for row, text in enumerate(jobs):
    job = json.loads(text.decode())
    for part, name in (("spec", "s"), ("adapter", "a"), ("engine", "e")):
        json.dump(job[part], open(f"{name}{row}.json", "w"))
PY
ROWS=$(seq 0 3 143)
for row in $ROWS; do
  "$CS_BIN" run --spec "s$row.json" --config "a$row.json" --engine-config "e$row.json" \
    --txlog "run$row.jsonl" > /dev/null
  "$CS_BIN" export demo.h5 --job "$row" --jsonl -o "export$row.jsonl"
  cmp "run$row.jsonl" "export$row.jsonl"
done

#    h5py reads the compressed /txlog: every column of every record equals the JSON lines of
#    `run`; the filters are HDF5's own shuffle and deflate; at most 24 bytes a record on disk
#    (the file as a whole, and /txlog alone)
$PY - demo.h5 $ROWS <<'PY'  # word splitting intended
import json, os, sys, h5py
path, rows = sys.argv[1], [int(r) for r in sys.argv[2:]]
with h5py.File(path, "r") as f:
    tx, res, jobs = f["txlog"], f["results"][()], f["jobs"][()]
    assert tx.compression == "gzip" and tx.shuffle, (tx.compression, tx.shuffle)
    log = tx[()]
    stored = tx.id.get_storage_size()
names = [n for n in log.dtype.names if n != "job"]
assert len(log) == int(jobs["expected_transactions"].sum())
for row in range(len(res)):
    assert res["txlog_detail"][row] == 2, row
    off, cnt = int(res["txlog_offset"][row]), int(res["txlog_count"][row])
    assert cnt == int(jobs["expected_transactions"][row]) and cnt > 0, row
    assert (log["job"][off:off + cnt] == row).all(), row
    if row not in rows:
        continue
    engine = jobs["engine"][row].decode()
    lines = [json.loads(l) for l in open(f"run{row}.jsonl")]
    assert len(lines) == cnt, (row, len(lines), cnt)
    for k, rec in enumerate(lines):
        t = log[off + k]
        assert int(t["job"]) == row, (row, k)
        # every field of the JSON line is a column; a column it lacks is an extra record
        # column of another engine (named after it)
        assert set(rec) <= set(names), (row, sorted(set(rec) - set(names)))
        others = [e + "_" for e in ("dcin", "math", "vcnet") if e != engine]
        for n in names:
            if n in rec:
                assert int(t[n]) == int(rec[n]), (row, k, n, int(t[n]), rec[n])
            else:
                assert any(n.startswith(o) for o in others), (row, n)
per_file, per_log = os.path.getsize(path) / len(log), stored / len(log)
checked = sum(int(res["txlog_count"][r]) for r in rows)
print(f"{path}: the {checked} records of {len(rows)} jobs equal `run`'s; "
      f"{per_file:.2f} B per record (file), {per_log:.2f} B (/txlog)")
assert per_file <= 24 and per_log <= 24, (per_file, per_log)
PY

#    h5dump reads it too: the filters, and records from both ends of the log
h5dump -p -H -d /txlog demo.h5 > dump_h.txt
grep -q "SHUFFLE" dump_h.txt && grep -q "DEFLATE" dump_h.txt
h5dump -d /txlog -s 0 -c 2 demo.h5 > dump_first.txt
records=$($PY -c "import h5py; print(len(h5py.File('demo.h5', 'r')['txlog']))")
h5dump -d /txlog -s $((records - 2)) -c 2 demo.h5 > dump_last.txt
$PY - demo.h5 <<'PY'
import re, sys, h5py
log = h5py.File(sys.argv[1], "r")["txlog"]
for name, first in (("dump_first.txt", 0), ("dump_last.txt", len(log) - 2)):
    text = open(name).read()
    # each record prints as "{ job, request_id, ... }": the numbers in column order
    recs = re.findall(r"\{\s*([-0-9,\s]+?)\s*\}", text)
    assert len(recs) == 2, (name, len(recs))
    for k, rec in enumerate(recs):
        got = [int(v) for v in rec.replace("\n", " ").split(",")]
        want = [int(log[first + k][n]) for n in log.dtype.names]
        assert got == want, (name, k, got, want)
print("h5dump: records at both ends equal h5py's")
PY

# 2. the detail option: none, then full (rerun to fill the logs), then none and the default
#    again (reused: the rows hold more than asked)
$PY "$HERE/sweep_make.py" "$DEMO" detail.json detail math \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536]},
    {"field":"spec.participants","values":[[0,1,2,3],[0,5,20,25]]}]'
detail() { $PY - "$1" <<'PY'
import sys, h5py
res = h5py.File(sys.argv[1], "r")["results"][()]
print(" ".join(sorted({f"{int(d)}:{int(c > 0)}" for d, c in zip(res["txlog_detail"], res["txlog_count"])})))
PY
}
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog none > d1.txt
expect d1.txt "ran 4 (0 failed)"
[ "$(detail detail.h5)" = "0:0" ]
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog full > d2.txt
expect d2.txt "ran 4 (0 failed)"
grep -q "rerun: 0 pending, 0 corrupt, 4 without log" d2.txt
[ "$(detail detail.h5)" = "2:1" ]
"$CS_BIN" sweep detail.json --out detail.h5 --quiet --txlog none > d3.txt
expect d3.txt "ran 0 (0 failed) .*cached 4 "
"$CS_BIN" sweep detail.json --out detail.h5 --quiet > d4.txt
expect d4.txt "ran 0 (0 failed) .*cached 4 "
"$CS_BIN" sweep detail.json --out clean.h5 --quiet > /dev/null
$PY "$HERE/sweep_compare.py" clean.h5 detail.h5
rc=0; "$CS_BIN" sweep detail.json --out detail.h5 --txlog some 2> bad.err || rc=$?
[ $rc = 2 ] && grep -q -- "--txlog wants full, steps or none, got 'some'" bad.err

# 3. a kill after the 3rd row: the file shows 3 rows done without their log, the spool holds
#    them with it; a torn last spool entry is dropped and only its row runs again
"$CS_BIN" sweep detail.json --out torn.h5 --quiet --test-stop-after-rows 3 > /dev/null 2>&1 \
  || true
read -r done_n failed_n pending_n < <($PY "$HERE/sweep_check.py" summary torn.h5)
[ "$done_n" = 3 ] && [ "$failed_n" = 0 ] && [ "$pending_n" = 1 ]
[ "$(detail torn.h5)" = "0:0" ]
done_row=$($PY -c "import h5py; print(list(h5py.File('torn.h5', 'r')['results']['status']).index(1))")
rc=0; "$CS_BIN" export torn.h5 --job "$done_row" > /dev/null 2> spooled.err || rc=$?
[ $rc = 1 ] && grep -q "has no log in the file yet: it may be in the log spool" spooled.err
truncate -s -100 torn.h5.spool.0
"$CS_BIN" sweep detail.json --out torn.h5 --quiet > torn.txt 2> torn.err
cat torn.txt
grep -q "log: 2 rows of an earlier sweep moved from its spools into the file, 1 torn" torn.txt
expect torn.txt "ran 2 (0 failed) .*cached 2 "
! ls torn.h5.spool.* 2> /dev/null
$PY "$HERE/sweep_compare.py" clean.h5 torn.h5

# 4. whole chunks: three 4 MiB AllReduces over 4 participants (49,152 records each, so each
#    slice fills 5 or 6 of /txlog's 8,192-record chunks), killed after 2 rows.  The spool
#    holds those chunks as stored (an 8-byte length, then a zlib stream).
$PY "$HERE/sweep_make.py" "$DEMO" chunks.json chunks math \
  '[{"field":"spec.msg_size_bytes","values":[4194304]},
    {"field":"spec.participants","values":[[0,1,2,3],[0,5,20,25],[0,1,20,21]]}]'
"$CS_BIN" sweep chunks.json --out chunks-clean.h5 --quiet > /dev/null
kill_after_2() {
  rm -f "$1" "$1".*
  "$CS_BIN" sweep chunks.json --out "$1" --quiet --test-stop-after-rows 2 > /dev/null 2>&1 || true
}
#    a flipped byte inside a stored chunk (the merge does not inflate chunks, the checksum over
#    the entry's parts rejects it) or in a chunk's length (the chunks no longer add up to the
#    entry's part): the entry is dropped, that row runs again and the file equals a clean sweep's
damage_chunk() { # spool, what: body or length
  $PY - "$1" "$2" <<'PY'
import struct, sys
path, what = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
def stored_chunk(p):  # length n, then a zlib stream of n bytes, then another chunk or LZ4
    if p + 10 > len(data):
        return 0
    n = struct.unpack_from("<Q", data, p)[0]
    if not (64 < n < 1 << 21 and p + 8 + n + 4 <= len(data)):
        return 0
    if data[p + 8] != 0x78 or ((data[p + 8] << 8) | data[p + 9]) % 31:
        return 0
    after = p + 8 + n
    if data[after:after + 4] == b"\x04\x22\x4d\x18" or stored_chunk(after):
        return n
    return 0
for p in range(len(data)):
    n = stored_chunk(p)
    if n:
        data[p + 8 + n // 2 if what == "body" else p] ^= 0x40
        open(path, "wb").write(data)
        break
else:
    sys.exit("no stored chunk in the spool")
PY
}
for what in body length; do
  kill_after_2 damaged.h5
  damage_chunk damaged.h5.spool.0 $what
  "$CS_BIN" sweep chunks.json --out damaged.h5 --quiet > damaged.txt
  grep -q "log: 1 rows of an earlier sweep moved from its spools into the file, 1 torn" damaged.txt
  expect damaged.txt "ran 2 (0 failed) .*cached 1 "
  $PY "$HERE/sweep_compare.py" chunks-clean.h5 damaged.h5
done
#    /txlog rewritten by another tool between the kill and the next sweep (deflate alone): the
#    spooled chunks, made for shuffle and deflate, are dropped and their rows run again
kill_after_2 relaid.h5
h5repack -f /txlog:GZIP=4 relaid.h5 repacked.h5 && mv repacked.h5 relaid.h5
"$CS_BIN" sweep chunks.json --out relaid.h5 --quiet > relaid.txt
grep -q "log: 0 rows of an earlier sweep moved from its spools into the file, 2 torn" relaid.txt
expect relaid.txt "ran 3 (0 failed)"
"$CS_BIN" show relaid.h5 --verify | grep -q "3 done, 0 failed, 0 pending, 0 corrupt"
$PY "$HERE/sweep_compare.py" chunks-clean.h5 relaid.h5
echo "test_txlog_compressed: OK"
