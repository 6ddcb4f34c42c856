#!/usr/bin/env bash
# Failures that say nothing about the job are never cached: a job failed by an (injected)
# out-of-memory error leaves its row pending and the next run reruns it.  Failures that are the
# job's own (bad input, a deadlock) are cached like results and rerun only with --retry-failed.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# six math jobs; the one with mst_rd_outstanding 15 breaks C4 (bad input, fails at load) and the
# dcin one with a 5-tick deadlock guard fails while it runs (EDEADLOCK: the job's own limit)
$PY "$HERE/sweep_make.py" "$DEMO" retry.json retry math \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536]},
    {"field":"adapter.mst_rd_outstanding","values":[16,64,15]}]'
$PY - <<'PY'
import json
d = json.load(open("retry.json"))
d["matrix"].append({"fields": ["engine.name", "engine.deadlock_guard_ticks"],
                    "values": [["math", 1000000], ["dcin", 5]]})
json.dump(d, open("retry.json", "w"), indent=1)
PY
# 12 jobs: 2 sizes x 3 outstanding x 2 engines; row 0 is (4096, 16, math)
timeout 300 "$CS_BIN" sweep retry.json --out retry.h5 --quiet --test-fail-row 0 \
  > run1.txt 2> err1.txt
cat run1.txt err1.txt
grep -q "job row 0 not stored, the next run retries it: out of memory" err1.txt
# row 0 pending (transient), 2 load failures (C4, both engines x 2 sizes = 4), dcin guard failures
$PY "$HERE/sweep_check.py" summary retry.h5 | tee s1.txt
read -r done1 failed1 pending1 < s1.txt
[ "$pending1" = 1 ] || { echo "expected the injected failure to leave 1 row pending"; exit 1; }
[ "$failed1" -ge 5 ] || { echo "expected the 4 C4 rows and dcin deadlocks to fail"; exit 1; }

# the next run reruns exactly the pending row; the failed rows stay cached
timeout 300 "$CS_BIN" sweep retry.json --out retry.h5 --quiet | tee run2.txt
expect run2.txt "ran 1 (0 failed)" retry.h5
$PY "$HERE/sweep_check.py" counts retry.h5 $((done1 + 1)) "$failed1" 0
timeout 300 "$CS_BIN" sweep retry.json --out retry.h5 --quiet | tee run3.txt
expect run3.txt "ran 0 (0 failed)"

# --retry-failed reruns every failed row, and they fail again the same way
"$CS_BIN" sweep retry.json --out retry.h5 --retry-failed --dry-run | tee dry.txt
grep -q "failed rows to retry (--retry-failed): $failed1" dry.txt
"$CS_BIN" show retry.h5 --csv > before.csv
timeout 300 "$CS_BIN" sweep retry.json --out retry.h5 --quiet --retry-failed | tee run4.txt
$PY "$HERE/sweep_check.py" counts retry.h5 $((done1 + 1)) "$failed1" 0
"$CS_BIN" show retry.h5 --csv > after.csv
$PY - <<'PY'
import csv
def rows(p):
    return [{k: v for k, v in r.items() if k != "wall_time_s"} for r in csv.DictReader(open(p))]
a, b = rows("before.csv"), rows("after.csv")
assert a == b, "a retried failure must fail the same way"
print(f"{len(a)} rows identical after --retry-failed")
PY
echo "test_sweep_retry: ok"
