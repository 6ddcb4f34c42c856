#!/usr/bin/env bash
# The file is the cache: a second run of the same sweep simulates nothing (0 jobs run, every row
# and log record untouched); adding one matrix value runs only the new jobs; a second sweep into
# the same file appends its jobs and reuses the shared ones (also into a /txlog whose filters
# another tool changed); a sweep with one invalid job marks
# only that job failed; a fault of the sweep file or of its base is an error of the whole sweep.
# How much faster a cached rerun is, is a benchmark figure (scripts/bench_sweep), not a test.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

P4='[0,1,2,3]'
P8='[0,5,20,25,30,35,10,15]'
AXES_OUT='{"field":"adapter.mst_wr_outstanding","values":[16,64]}'
make_big() { # NAME.json EXTRA_SIZE...: 8 dcin jobs of 1 and 2 MiB (+ extra sizes)
  local out=$1; shift
  local sizes=1048576,2097152
  for extra in "$@"; do sizes=$sizes,$extra; done
  $PY "$HERE/sweep_make.py" "$DEMO" "$out" cache-dcin dcin \
    "[{\"field\":\"spec.msg_size_bytes\",\"values\":[$sizes]},
      {\"field\":\"spec.participants\",\"values\":[$P4,$P8]}, $AXES_OUT]"
}

make_big big.json
make_big big3.json 65536
rm -f cache.h5
timeout 900 "$CS_BIN" sweep big.json --out cache.h5 --quiet | tee run1.txt
expect run1.txt "ran 8 (0 failed)" cache.h5
"$CS_BIN" show cache.h5 --csv > before.csv
for row in 0 1 2 3 4 5 6 7; do "$CS_BIN" export cache.h5 --job $row --jsonl; done > before.jsonl
timeout 600 "$CS_BIN" sweep big.json --out cache.h5 --quiet | tee run2.txt
expect run2.txt "ran 0 (0 failed) .*cached 8" cache.h5
# the rerun simulated nothing and wrote nothing: results and log are the first run's
$PY "$HERE/sweep_check.py" kept cache.h5 before.csv
for row in 0 1 2 3 4 5 6 7; do "$CS_BIN" export cache.h5 --job $row --jsonl; done | cmp - before.jsonl

# the dry run of the extended sweep tells what will happen, without running anything
"$CS_BIN" sweep big3.json --out cache.h5 --dry-run | tee dry.txt
grep -q "cache hits: 8 (8 done, 0 failed)" dry.txt
grep -q "to run: 4 (4 new rows" dry.txt
grep -q "transaction log: .* records to write" dry.txt

# one more matrix value: only its 4 jobs run
timeout 600 "$CS_BIN" sweep big3.json --out cache.h5 --quiet | tee run3.txt
expect run3.txt "ran 4 (0 failed) .*cached 8" cache.h5
$PY "$HERE/sweep_check.py" counts cache.h5 12 0 0
# the new records went into the partly filled last chunk of /txlog, merged with the old ones
"$CS_BIN" show cache.h5 --verify | grep -q "12 done, 0 failed, 0 pending, 0 corrupt"
for row in 0 1 2 3 4 5 6 7; do "$CS_BIN" export cache.h5 --job $row --jsonl; done | cmp - before.jsonl

# a different sweep into the same file: shared jobs reused, new ones appended
$PY "$HERE/sweep_make.py" "$DEMO" other.json other-sweep dcin \
  "[{\"field\":\"spec.msg_size_bytes\",\"values\":[65536,131072]},
    {\"field\":\"spec.participants\",\"values\":[$P4]}, $AXES_OUT]"
timeout 600 mpirun -np 2 "$CS_BIN" sweep other.json --out cache.h5 --quiet | tee run4.txt
expect run4.txt "ran 2 (0 failed) .*cached 2" cache.h5
"$CS_BIN" show cache.h5 --sweep other-sweep | tail -1 | grep -q "14 rows: 14 done.* 2 shown"

# a file whose /txlog another tool rewrote (deflate alone, no shuffle) takes new records (whole
# chunks of them) through HDF5's own filters: the merge writes chunks itself only into its own
# pipeline
h5repack -f /txlog:GZIP=1 cache.h5 repacked.h5 && mv repacked.h5 cache.h5
if h5dump -pH -d /txlog cache.h5 | grep -q SHUFFLE; then echo "h5repack kept the shuffle"; exit 1; fi
$PY "$HERE/sweep_make.py" "$DEMO" repacked.json repacked-sweep dcin \
  "[{\"field\":\"spec.msg_size_bytes\",\"values\":[524288]},
    {\"field\":\"spec.participants\",\"values\":[$P4]}, $AXES_OUT]"
timeout 600 mpirun -np 2 "$CS_BIN" sweep repacked.json --out cache.h5 --quiet | tee run5.txt
expect run5.txt "ran 2 (0 failed)" cache.h5
"$CS_BIN" show cache.h5 --verify | grep -q "16 done, 0 failed, 0 pending, 0 corrupt"

# one invalid job (odd outstanding, C4) fails alone, with its message; reruns keep it failed
$PY "$HERE/sweep_make.py" "$DEMO" invalid.json invalid math \
  '[{"field":"adapter.mst_rd_outstanding","values":[16,15,64]},
    {"field":"spec.msg_size_bytes","values":[4096,65536]}]'
timeout 120 mpirun -np 2 "$CS_BIN" sweep invalid.json --out invalid.h5 --quiet > inv1.txt
grep -q "2 failed to load" inv1.txt
grep -q "failed to load: .*C4" inv1.txt
$PY "$HERE/sweep_make.py" "$DEMO" invalid1.json invalid math \
  '[{"field":"adapter.mst_rd_outstanding","values":[15]},
    {"field":"spec.msg_size_bytes","values":[4096]}]'
rm -f one.h5
timeout 120 "$CS_BIN" sweep invalid1.json --out one.h5 --quiet
$PY "$HERE/sweep_check.py" failed one.h5 "C4: mst_rd_outstanding = 15"
$PY "$HERE/sweep_check.py" counts invalid.h5 4 2 0
timeout 120 "$CS_BIN" sweep invalid.json --out invalid.h5 --quiet | grep -q "ran 0 .*cached 6 (2 failed)"
"$CS_BIN" show invalid.h5 --status failed | grep -q "failed: sweep 'invalid' job 2 \[adapter.mst_rd_outstanding=15"
#    a failed row's error lives in /errors, covered by the row's checksum: another text there
#    (a stale or torn write) makes the row corrupt, and the next sweep writes it again
cp invalid.h5 stale.h5
$PY - stale.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    row = list(f["results"]["status"]).index(2)
    f["errors"][row] = b"an older failure"
PY
"$CS_BIN" show stale.h5 --verify | grep -q "4 done, 1 failed, 0 pending, 1 corrupt"
timeout 120 "$CS_BIN" sweep invalid.json --out stale.h5 --quiet > /dev/null
"$CS_BIN" show stale.h5 --verify | grep -q "4 done, 2 failed, 0 pending, 0 corrupt"
$PY "$HERE/sweep_compare.py" invalid.h5 stale.h5

# a broken sweep file is an error of the whole sweep, with the field named
$PY "$HERE/sweep_make.py" "$DEMO" broken.json broken math \
  '[{"field":"adapter.burst_len","values":[4]}]'
if "$CS_BIN" sweep broken.json --out broken.h5 2> broken.err; then exit 1; fi
grep -q "unknown field 'adapter.burst_len'" broken.err
test ! -e broken.h5

# a base that fails on its own (C1 for every job) is an error of the file too, on one rank and
# on two, not one failed row per job: exit 1, the base named, nothing written
$PY - "$DEMO" badbase.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "badbase"
d["base"]["adapter"]["mst_wr_outstanding"] = 7
d["matrix"] = [{"field": "spec.msg_size_bytes", "values": [4096, 8192]}]
json.dump(d, open(sys.argv[2], "w"))
PY
for launch in "" "mpirun -np 2"; do
  rc=0; $launch "$CS_BIN" sweep badbase.json --out badbase.h5 --quiet 2> badbase.err || rc=$?
  test "$rc" = 1
  grep -q "sweep file 'badbase.json': base: adapter: C4: mst_wr_outstanding = 7" badbase.err
  test ! -e badbase.h5
done
echo "test_sweep_cache: OK"
