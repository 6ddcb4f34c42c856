#!/usr/bin/env bash
# The vcnet engine from the command line: route and deadlock-check verdicts (the seed's example,
# exit statuses), a netbench run, the example dimring job through `commsweep run`, and a plain-DOR
# torus job stopped by the deadlock guard with a message naming the stuck requests.
set -euo pipefail
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
rm -rf "$CS_WORK" && mkdir -p "$CS_WORK" && cd "$CS_WORK"
ex=$CS_SOURCE_DIR/docs/examples
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CS_BIN" route --topology torus:4x4x4 --src 0,0,0 --dst 2,3,1 > route_torus.txt
tail -1 route_torus.txt | grep -qx "4 hop(s)" || fail "torus:4x4x4 route is 4 hops"
grep -q "port -Y   VC class 1" route_torus.txt || fail "the Y hop over the wrap link takes class 1"
"$CS_BIN" route --topology mesh:4x4x4 --src 0,0,0 --dst 2,3,1 | tail -1 | grep -qx "6 hop(s)" \
  || fail "mesh:4x4x4 route is 6 hops"
"$CS_BIN" route --topology torus:4x4 --src 9,9 --dst 0,0 2> bad.txt && fail "bad coordinate accepted"
grep -q "outside" bad.txt || fail "bad coordinate message"

"$CS_BIN" deadlock-check --topology torus:4x4x4 | tail -1 | grep -qx acyclic || fail "dateline acyclic"
"$CS_BIN" deadlock-check --topology mesh:4x4x4 | tail -1 | grep -qx acyclic || fail "mesh acyclic"
set +e
"$CS_BIN" deadlock-check --topology torus:4x4x4 --routing dor > cycle.txt
rc=$?
set -e
test "$rc" = 3 || fail "a cycle exits with 3, got $rc"
grep -q "^cycle of 4 channels" cycle.txt || fail "plain DOR on a 4-ring: a cycle of 4 channels"

"$CS_BIN" netbench --topology mesh:4x4 --rate 0.1 --measure 2000 > nb.txt
grep -q "accepted throughput" nb.txt || fail "netbench prints throughput"
"$CS_BIN" netbench --topology mesh:4x4 --rates 0.05,0.1 --measure 1000 > nb.csv
test "$(wc -l < nb.csv)" = 3 || fail "netbench --rates prints a header and one row per rate"

"$CS_BIN" run --spec "$ex/spec_dimring.json" --config "$ex/adapter_vcnet.json" \
  --engine-config "$ex/engine_vcnet.json" --txlog log.jsonl > result.json
/usr/bin/python3 - <<'PY'
import json
r = json.load(open("result.json"))
a = r["aggregates"]
# 4x4x4 grid: 2 * (3 + 3 + 3) steps
assert r["engine"] == "vcnet" and a["algorithm_steps"] == 18, r
recs = [json.loads(l) for l in open("log.jsonl")]
assert len(recs) == r["trace_meta"]["num_transactions"]
assert all(x["req_inject_tick"] <= x["req_complete_tick"] <= x["rsp_inject_tick"] < x["rsp_complete_tick"] for x in recs)
assert all(x["src_node"] == x["src"] and x["dst_node"] == x["dst"] for x in recs)
# the engine's record columns: a 3-D torus router has 6 link ports, then the endpoint's; dimring
# sends to ring neighbours along one dimension (1 hop each way, the wrap link included); a packet
# starts on VC 0 (2 VCs in 2 dateline classes)
assert all(x["vcnet_src_port"] == 6 and x["vcnet_dst_port"] == 6 for x in recs)
assert all(x["vcnet_req_hops"] == 1 and x["vcnet_rsp_hops"] == 1 for x in recs)
assert all(x["vcnet_req_vc"] == 0 and x["vcnet_rsp_vc"] == 0 for x in recs)
PY

/usr/bin/python3 - "$ex" <<'PY'
import json, sys
ex = sys.argv[1]
e = json.load(open(f"{ex}/engine_vcnet.json"))
e["vcnet"].update(routing="dor", num_vcs=1, vc_depth=2, topology="torus:4x4")
e["deadlock_guard_ticks"] = 5000
json.dump(e, open("engine_dor.json", "w"))
s = json.load(open(f"{ex}/spec_dimring.json"))
s.update(primitive="alltoall", algorithm="pairwise", participants=list(range(16)), msg_size_bytes=262144)
del s["grid"]
json.dump(s, open("spec_a2a.json", "w"))
a = json.load(open(f"{ex}/adapter_vcnet.json"))
a.update(num_initiators=16, num_targets=16)
json.dump(a, open("adapter16.json", "w"))
PY
if "$CS_BIN" run --spec spec_a2a.json --config adapter16.json --engine-config engine_dor.json \
     --no-txlog 2> deadlock.txt; then
  fail "plain DOR all-to-all on a 1-VC torus should deadlock"
fi
grep -q "deadlock_guard_ticks" deadlock.txt && grep -q "request in the network" deadlock.txt \
  || fail "deadlock message names the guard and the stuck requests"
grep -q "over 16 participants on torus:4x4 (dor)" deadlock.txt \
  || fail "deadlock message names the job's network: $(cat deadlock.txt)"
echo "vcnet CLI: ok"
