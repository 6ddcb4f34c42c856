#!/usr/bin/env bash
# An engine's model version is part of every cache key: after a bump (simulated with the test
# hook COMMSWEEP_TEST_MODEL_VERSION_<engine>) the next sweep reruns exactly that engine's jobs
# and reuses the others.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

$PY "$HERE/sweep_make.py" "$DEMO" version.json version math \
  '[{"field":"engine.name","values":["dcin","math"]},
    {"field":"spec.msg_size_bytes","values":[4096,16384,65536]}]'
timeout 300 "$CS_BIN" sweep version.json --out v.h5 --quiet | tee run1.txt
expect run1.txt "ran 6 (0 failed)" v.h5
COMMSWEEP_TEST_MODEL_VERSION_math=bumped timeout 300 "$CS_BIN" sweep version.json --out v.h5 --quiet \
  | tee run2.txt
expect run2.txt "ran 3 (0 failed) .*cached 3 (0 failed)" v.h5
# the rerun rows are the math jobs (new keys), the cached ones the dcin jobs
"$CS_BIN" show v.h5 --csv > all.csv
$PY - <<'PY'
import csv
rows = list(csv.DictReader(open("all.csv")))
math = [r for r in rows if r["engine"] == "math"]
dcin = [r for r in rows if r["engine"] == "dcin"]
assert len(dcin) == 3 and len(math) == 6, (len(dcin), len(math))
keys = {r["key"] for r in math}
assert len(keys) == 6, "a bumped model version must give new keys"
PY
# back at the compiled version, everything is cached again
timeout 300 "$CS_BIN" sweep version.json --out v.h5 --quiet | tee run3.txt
expect run3.txt "ran 0 (0 failed) .*cached 6"
echo "test_sweep_version: ok"
