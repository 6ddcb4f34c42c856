#!/usr/bin/env bash
# Messages that say what to do, each quoted: a path given to `run --engine`, a vcnet network
# with too few endpoints, a matrix over the job limit (how many, how to split), an axis value
# given twice, JSON nested deeper than the reader's limit, number literals a double cannot hold
# as written (2^53 + 1, 1e-400), where `run` writes its log, and scripts/netbench_curve run from
# another directory.
set -euo pipefail
: "${CS_BIN:?}" "${CS_SOURCE_DIR:?}" "${CS_WORK:?}"
. "$CS_SOURCE_DIR/tests/integration/sweep_env.sh"
ex=$CS_SOURCE_DIR/docs/examples
# CS_TEST_KEEP_GOING=1 counts every failed check instead of stopping at the first (to see which
# of them an older build fails)
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
  [ -n "${CS_TEST_KEEP_GOING:-}" ] || exit 1
}
# expect_msg RC FILE TEXT: the command ended with RC and FILE holds TEXT
expect_msg() {
  [ "$rc" = "$1" ] || { fail "exit status $rc, expected $1: $(cat "$2")"; return 0; }
  grep -qF -- "$3" "$2" || fail "expected '$3' in: $(cat "$2")"
}

# run --engine with a file: named whole, pointed to --engine-config (a usage error)
rc=0; "$CS_BIN" run --spec "$ex/spec_dimring.json" --config "$ex/adapter_vcnet.json" \
  --engine "$ex/engine_vcnet.json" 2> e.txt || rc=$?
expect_msg 2 e.txt "--engine '$ex/engine_vcnet.json': unknown engine (engines: dcin, math, vcnet, ideal); engine options from a file go with --engine-config $ex/engine_vcnet.json"

# vcnet: 40 initiators on a 16-endpoint torus says what is allowed
sed 's/"torus:4x4x4"/"torus:4x4"/' "$ex/engine_vcnet.json" > torus16.json
sed 's/"num_initiators": 64/"num_initiators": 40/; s/"num_targets": 64/"num_targets": 40/' \
  "$ex/adapter_vcnet.json" > adapter40.json
rc=0; "$CS_BIN" run --spec "$ex/spec_vcnet_allreduce.json" --config adapter40.json \
  --engine-config torus16.json --no-txlog 2> e.txt || rc=$?
expect_msg 1 e.txt "has 16 endpoints (logical GDMA and DDR id i is endpoint i): both must be at most 16 (set them to 16, or choose a network with at least 40 endpoints)"

# run says where its transaction log went (the adapter's relative path: the current directory)
rc=0; "$CS_BIN" run --engine math --spec "$ex/spec_allreduce.json" --config "$ex/adapter_2die.json" \
  --table > /dev/null 2> e.txt || rc=$?
expect_msg 0 e.txt "transaction records written to 'txlog_"
log=$(sed -n "s/.*written to '\([^']*\)'.*/\1/p" e.txt)
[ -s "$log" ] || fail "the log named on stderr, '$log', is not there"

# sweep files: a matrix of 10^21 jobs, one of 2 x 10^6 (one axis splits it), a repeated value
"$PY" - "$DEMO" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["matrix"] = [{"field": f, "values": list(range(1, 1001))} for f in
               ["spec.msg_size_bytes", "adapter.burst_length", "adapter.bw_bytes",
                "adapter.slv_rd_outstanding", "adapter.slv_wr_outstanding", "spec.dtype",
                "adapter.transaction_log_path"]]
json.dump(d, open("huge.json", "w"))
d["matrix"] = d["matrix"][:2] + [{"field": "adapter.bw_bytes", "values": [64, 128]}]
json.dump(d, open("two_million.json", "w"))
d["matrix"] = [{"field": "spec.msg_size_bytes", "values": [4096, 8192, 4096, 4096]}]
json.dump(d, open("repeat.json", "w"))
d["matrix"] = [{"field": "spec.msg_size_bytes", "values": [9007199254740993]}]
json.dump(d, open("big_int.json", "w"))
d["base"]["spec"]["chip_spec_summary"]["scale"] = 0.123456
text = json.dumps(d).replace("0.123456", "1e-400")  # as written: json.dump would print 0.0
open("underflow.json", "w").write(text)
PY
rc=0; "$CS_BIN" sweep huge.json --out h.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 1 e.txt "the matrix has 1e+21 jobs, at most 1000000 fit one sweep file: split it into several sweep files (even one file per value of matrix[0] ('spec.msg_size_bytes', the longest axis, 1000 values) has 1e+18 jobs: split along several axes)"
rc=0; "$CS_BIN" sweep two_million.json --out h.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 1 e.txt "the matrix has 2000000 jobs, at most 1000000 fit one sweep file: split it into several sweep files (one file per value of matrix[2] ('adapter.bw_bytes', 2 values) has 1000000 jobs); they may all write the same --out file"
rc=0; "$CS_BIN" sweep repeat.json --out r.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 0 e.txt "warning: sweep file 'repeat.json': matrix[0] ('spec.msg_size_bytes'): 2 values repeat an earlier one (4096); each repeated job runs once"
grep -q "4 jobs, 2 duplicates" o.txt || fail "repeat.json: $(cat o.txt)"
rc=0; "$CS_BIN" sweep big_int.json --out r.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 1 e.txt "field 'matrix[0].values[0]': 9007199254740993 is above 2^53 = 9007199254740992"
rc=0; "$CS_BIN" sweep underflow.json --out r.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 1 e.txt "field 'base.spec.chip_spec_summary.scale': 1e-400 underflows"
[ ! -e r.h5 ] || fail "a refused sweep file wrote the output"

# valid JSON nested 100,000 deep: the limit is named
"$PY" -c "print('[' * 100000 + ']' * 100000)" > deep.json
rc=0; "$CS_BIN" sweep deep.json --out d.h5 --dry-run > o.txt 2> e.txt || rc=$?
expect_msg 1 e.txt "JSON nested 100000 levels deep"
grep -qF "at most 1000 levels are read" e.txt || fail "nesting: $(cat e.txt)"
rc=0; "$CS_BIN" run --spec deep.json --config "$ex/adapter_2die.json" 2> e.txt || rc=$?
expect_msg 1 e.txt "file 'deep.json': JSON nested 100000 levels deep"

# scripts/netbench_curve from another directory finds its build; a missing binary leaves no CSV
mkdir -p elsewhere && cd elsewhere
rc=0; CS_BIN=/nonexistent/commsweep "$CS_SOURCE_DIR/scripts/netbench_curve" c.png \
  --topology mesh:4x4 2> e.txt || rc=$?
expect_msg 1 e.txt "no commsweep binary at /nonexistent/commsweep"
[ ! -e c.csv ] || fail "netbench_curve left c.csv after a failure"
if [ -x "$CS_SOURCE_DIR/build/commsweep" ]; then
  env -u CS_BIN NETBENCH_RATES=0.05,0.1 NETBENCH_MEASURE=300 NETBENCH_DRAIN=2000 \
    "$CS_SOURCE_DIR/scripts/netbench_curve" c.png --topology mesh:4x4 > o.txt
  [ -s c.png ] && [ "$(wc -l < c.csv)" = 3 ] || fail "netbench_curve from $(pwd): $(cat o.txt)"
fi
[ $failures = 0 ] || exit 1
echo "test_messages: every message as quoted"
