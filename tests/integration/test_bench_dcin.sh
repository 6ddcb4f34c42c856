#!/usr/bin/env bash
# The DCIN benchmark's measuring modes on the build under test (its figures in docs/dcin-model.md
# come from them): `reuse` over the demo's dcin jobs with one reuse context per job and with one
# for all of them (costliest first) gives every job the same statistics and record hash, steps
# fewer cycles with the shared context, and replays what docs/dcin-model.md ("Exact step reuse")
# says it replays; `compare` of the build with itself finds the 16 MiB AllReduce's results equal.
# Skipped in the sanitizer build: the script links the benchmark without the sanitizer runtime.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
build=$(dirname "$CS_BIN")
if grep -q '^CS_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "skipped: sanitizer build"
  exit 77
fi
bench=$CS_SOURCE_DIR/scripts/bench_dcin

# 1. the demo's 48 dcin jobs, one reuse context per job in matrix order, then one context for all
#    in the sweep's order
"$bench" "$build" reuse "$DEMO" --records own.txt > own.log
"$bench" "$build" reuse "$DEMO" --shared --cost-order --records shared.txt > shared.log
cat own.log shared.log
$PY - own.log shared.log own.txt shared.txt <<'PY'
import re, sys
own_log, shared_log, own_rec, shared_rec = sys.argv[1:]

def primitives(path):
    """primitive -> (jobs, steps, replayed, cycles stepped, cycles without reuse)"""
    out = {}
    for line in open(path):
        m = re.match(r"\s+(\w+)\s+(\d+) jobs,\s+(\d+) steps,\s+(\d+) replayed .*; (\d+) of (\d+) "
                     r"cycles stepped", line)
        if m:
            out[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    assert re.search(r": 48 jobs \(0 failed, 0 run again", open(path).read()), path
    return out

own, shared = primitives(own_log), primitives(shared_log)
assert set(own) == set(shared) == {"allreduce", "allgather", "reducescatter", "alltoall"}, own
for p in own:
    jobs, steps, rep, stepped, full = own[p]
    s_jobs, s_steps, s_rep, s_stepped, s_full = shared[p]
    assert jobs == 12 and (jobs, steps, full) == (s_jobs, s_steps, s_full), (p, own[p], shared[p])
    assert 0 < stepped <= full and s_stepped <= stepped and s_rep >= rep, (p, own[p], shared[p])
# each all-to-all step is another flow pattern: nothing to replay inside one job
assert own["alltoall"][2] == 0 and own["alltoall"][3] == own["alltoall"][4], own["alltoall"]
# with one context, an AllGather or ReduceScatter runs after the AllReduce of its configuration
# (it costs less) and every one of its steps is one of that AllReduce's steps
for p in ("allgather", "reducescatter"):
    assert shared[p][2] == shared[p][1] and shared[p][3] == 0, (p, shared[p])
# and the first all-to-all step (each participant to the next) is the ring collectives' first
# step: the all-to-all runs before the AllReduce of its configuration (every one of its steps is
# simulated, so it costs more) and each of the 12 AllReduces replays its first step from it
assert shared["alltoall"][2] == 0, shared["alltoall"]
assert shared["allreduce"][2] == own["allreduce"][2] + 12, (own["allreduce"], shared["allreduce"])
assert shared["allreduce"][3] < own["allreduce"][3], (own["allreduce"], shared["allreduce"])

# the same statistics and record hash for every job either way
def records(path):
    rows = {}
    for line in open(path):
        job, rest = line.split(" ", 1)
        rows[int(job)] = rest
    return rows

a, b = records(own_rec), records(shared_rec)
assert len(a) == 48 and a == b, [j for j in a if a[j] != b.get(j)]
print("reuse: 48 jobs with equal records either way; cycles stepped",
      {p: (own[p][3], shared[p][3], own[p][4]) for p in own})
PY

# 2. the side-by-side mode against the same build: the same job gives the same results
"$bench" compare "$build" "$build" --reps 1 --no-c2 > compare.log
cat compare.log
grep -q "results identical in every shared field" compare.log
echo "test_bench_dcin: ok"
