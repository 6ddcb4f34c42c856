#!/usr/bin/env bash
# `commsweep run` end to end: valid jobs print an EngineResult (JSON read back by Python), the
# transaction log is written as JSON lines, and every kind of bad input fails with a message
# naming the problem (never a crash).
set -euo pipefail
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
rm -rf "$CS_WORK" && mkdir -p "$CS_WORK" && cd "$CS_WORK"
ex=$CS_SOURCE_DIR/docs/examples
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CS_BIN" --help | grep -q "run" || fail "top-level help"
# (into a file: grep -q stops reading at the first match, which under pipefail would fail the
# writer with SIGPIPE once the help outgrows one stdio buffer)
"$CS_BIN" run --help > help.txt
grep -q "mst_rd_outstanding" help.txt || fail "run help lists the adapter fields"
# every shipped die and layout file is named by --help (the list comes from the files)
for f in "$CS_SOURCE_DIR"/src/topo/data/*.json; do
  name=$(basename "$f" .json)
  if grep -q '"num_dies"' "$f"; then kind="shipped dcin layouts"; else kind="shipped die topologies"; fi
  grep "$kind" help.txt | grep -qw -- "$name" || fail "run --help does not list $name under $kind"
done

"$CS_BIN" run --engine math --spec "$ex/spec_allreduce.json" --config "$ex/adapter_2die.json" \
  --txlog log.jsonl > result.json
/usr/bin/python3 - <<'PY'
import json
r = json.load(open("result.json"))
a = r["aggregates"]
assert r["engine"] == "math" and a["algorithm_steps"] == 14, r
assert a["total_comm_bytes"] == 2 * 7 * 1048576 // 8, a
assert 0 < a["bus_bw_gb_per_s"] <= 256 and a["straggler_ratio"] >= 1, a
assert abs(a["bus_bw_gb_per_s"] - a["total_comm_bytes"] / (a["total_time_us"] * 1e3)) < 1e-6
lines = [json.loads(l) for l in open("log.jsonl")]
assert len(lines) == r["trace_meta"]["num_transactions"], len(lines)
assert all(l["rsp_complete_tick"] >= l["rsp_inject_tick"] >= l["req_complete_tick"] for l in lines)
assert len(r["cache_key"]) == 64
pairs = {(p["src_die"], p["dst_die"]): p for p in r["trace_meta"]["die_pairs"]}
assert sum(p["transactions"] for p in pairs.values()) == len(lines)
assert pairs[(0, 1)]["bytes"] == sum(l["burst_length"] * 128 for l in lines if l["src_die"] == 0 and l["dst_die"] == 1)
assert r["trace_meta"]["cross_die_transactions"] == sum(p["transactions"] for k, p in pairs.items() if k[0] != k[1])
assert "sn_share_block" in r["trace_meta"]["back_pressure"]
PY
"$CS_BIN" run --engine math --spec "$ex/spec_p2p_read.json" --config "$ex/adapter_2die.json" \
  --no-txlog --table | grep -q "p2p" || fail "table output"
# the cycle engine through the same command, twice: identical bits but for the wall time
for i in 1 2; do
  "$CS_BIN" run --engine dcin --spec "$ex/spec_p2p_read.json" --config "$ex/adapter_2die.json" \
    --txlog dcin$i.jsonl > dcin$i.json
done
cmp dcin1.jsonl dcin2.jsonl || fail "dcin transaction logs differ between two runs"
/usr/bin/python3 - <<'PY'
import json
a, b = (json.load(open(f"dcin{i}.json")) for i in (1, 2))
for r in (a, b):
    r["trace_meta"].pop("wall_time_s"); r["trace_meta"].pop("transaction_log_path")
assert a == b, "dcin results differ between two runs"
g = a["aggregates"]
assert a["engine"] == "dcin" and a["trace_meta"]["sim_cycles"] > 0, a
assert 0 < g["bus_bw_gb_per_s"] <= 256 and g["total_comm_bytes"] == 65536, g
assert a["trace_meta"]["cross_die_transactions"] == a["trace_meta"]["num_transactions"] == 128
PY
# a legal math request latency of 1e9 ns (2e9 NoC cycles) finishes (it is no deadlock): one 64 KiB read, above 1 s
sed 's/"req_cycles": 12.7/"req_cycles": 2e9/' "$ex/engine_math.json" > slow_math.json
"$CS_BIN" run --engine math --engine-config slow_math.json --spec "$ex/spec_p2p_read.json" \
  --config "$ex/adapter_2die.json" --no-txlog > slow.json || fail "math with req_cycles 2e9"
/usr/bin/python3 -c 'import json; a = json.load(open("slow.json"))["aggregates"]; assert a["total_time_us"] > 1e6, a'
# the log path template of the adapter config is used when --txlog is absent
"$CS_BIN" run --engine math --spec "$ex/spec_p2p_read.json" --config "$ex/adapter_2die.json" >/dev/null
ls txlog_*.jsonl >/dev/null || fail "default transaction_log_path"

expect_error() { # expect_error PATTERN -- args...
  local pattern=$1; shift
  set +e; "$CS_BIN" run "$@" > out.txt 2> err.txt; local rc=$?; set -e
  [ $rc = 1 ] || [ $rc = 2 ] || fail "exit $rc (want 1 or 2) for $*: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "expected '$pattern' for $*, got: $(cat err.txt)"
}
: > empty.json
printf '{"mode": "dcin", "topology": ' > truncated.json
sed 's/"num_dies": 2/"num_dies": "two"/' "$ex/adapter_2die.json" > wrongtype.json
sed 's/"mst_rd_outstanding": 128/"mst_rd_outstanding": 127/' "$ex/adapter_2die.json" > odd.json
sed 's/1048576/0/' "$ex/spec_allreduce.json" > zero.json
sed 's/1048576/-4096/' "$ex/spec_allreduce.json" > negative.json
sed 's/1048576/1e400/' "$ex/spec_allreduce.json" > huge.json
sed 's/\[0, 5, 10, 15, 20, 25, 30, 35\]/[3]/' "$ex/spec_allreduce.json" > one.json
sed 's/\[0, 5, 10, 15, 20, 25, 30, 35\]/[]/' "$ex/spec_allreduce.json" > none.json
sed 's/\[0, 5, 10, 15, 20, 25, 30, 35\]/[0, 5, 5]/' "$ex/spec_allreduce.json" > dup.json
sed 's/"ring"/"tree"/' "$ex/spec_allreduce.json" > tree.json
sed 's/"noc_frequency_ghz": 2.0/"noc_frequency_ghz": 1e400/' "$ex/spec_allreduce.json" > chipinf.json
sed 's/"algorithm": "ring",/"algorithm": "ring", "primitive": "allgather",/' "$ex/spec_allreduce.json" > twoprim.json
sed 's/"num_dies": 2,/"num_dies": 2, "num_dies": 4,/' "$ex/adapter_2die.json" > twodies.json
grep -q 1e400 chipinf.json && grep -c primitive twoprim.json | grep -q 2 || fail "test inputs"
A=(--engine math --config "$ex/adapter_2die.json")
expect_error "empty" --engine math --spec empty.json --config "$ex/adapter_2die.json"
expect_error "truncated" --engine math --spec "$ex/spec_allreduce.json" --config truncated.json
expect_error "field 'num_dies': expected an integer" --spec "$ex/spec_allreduce.json" --config wrongtype.json
expect_error "C4: mst_rd_outstanding = 127" --engine math --spec "$ex/spec_allreduce.json" --config odd.json
expect_error "msg_size_bytes" "${A[@]}" --spec zero.json
expect_error "msg_size_bytes" "${A[@]}" --spec negative.json
expect_error "msg_size_bytes" "${A[@]}" --spec huge.json
expect_error "at least 2 participants" "${A[@]}" --spec one.json
expect_error "at least 2 participants" "${A[@]}" --spec none.json
expect_error "C5" "${A[@]}" --spec dup.json
expect_error "C11" "${A[@]}" --spec tree.json
expect_error "cannot open" "${A[@]}" --spec missing.json
expect_error "chipinf.json': field 'chip_spec_summary.noc_frequency_ghz': the number is out of the range" "${A[@]}" --spec chipinf.json
expect_error "twoprim.json': field 'primitive' appears twice" "${A[@]}" --spec twoprim.json
expect_error "twodies.json': field 'num_dies' appears twice" --engine math --spec "$ex/spec_allreduce.json" --config twodies.json
expect_error "unknown engine" --engine nosuch --spec "$ex/spec_allreduce.json" --config "$ex/adapter_2die.json"
expect_error "unknown option '--bogus'" --bogus
# docs/hdf5-schema.md quotes `commsweep schema` verbatim: the documented columns are the file's
"$CS_BIN" schema > schema.md
/usr/bin/python3 - "$CS_SOURCE_DIR/docs/hdf5-schema.md" schema.md <<'PY'
import sys
doc, out = (open(p).read() for p in sys.argv[1:3])
assert out.strip() in doc, "docs/hdf5-schema.md's Columns section differs from `commsweep schema`"
PY

echo "test_run_cli: all checks passed"

