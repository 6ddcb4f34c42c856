#!/usr/bin/env bash
# The dry run after a killed sweep predicts exactly what the next run does: the rows the killed
# ranks left in their log spools count as the merge that starts the next sweep will leave them
# (done, with their log), so "to run" and "cache hits" equal the next run's "ran" and "cached".
# Checked for a kill -9 of a worker and of rank 0 at a chosen row (the test hook), on 2 ranks.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

# dry_then_run FILE: the dry run's prediction, then the run, compared
dry_then_run() {
  "$CS_BIN" sweep "$DEMO" --out "$1" --dry-run > dry.txt
  local to_run hits ran cached
  to_run=$(sed -n 's/^  to run: \([0-9]*\) .*/\1/p' dry.txt)
  hits=$(sed -n 's/^  cache hits: \([0-9]*\) .*/\1/p' dry.txt)
  grep -q "estimated CPU: " dry.txt || [ "$to_run" = 0 ] || fail "no CPU estimate: $(cat dry.txt)"
  timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out "$1" --quiet > run.txt 2> run.err
  read -r ran cached < <(sed -n 's/.*ran \([0-9]*\) (0 failed).*cached \([0-9]*\) .*/\1 \2/p' run.txt)
  echo "$1: the dry run said to run $to_run (cache hits $hits); the run ran $ran (cached $cached)"
  grep "log spools\|to run" dry.txt
  [ "$to_run" = "$ran" ] && [ "$hits" = "$cached" ] || fail "dry run and run differ: $(cat dry.txt run.txt)"
}

# (rank 1 runs the costliest jobs first, rank 0 the cheapest: they finish rows at other rates;
# a sanitizer build, ten times slower, kills each rank once)
cases="1:2 1:4 0:3 0:30"
ldd "$CS_BIN" | grep -q libasan && cases="1:2 0:30"
for case in $cases; do
  kill_rank=${case%:*} after=${case#*:}
  {
    f=k${kill_rank}_$after.h5
    rm -f "$f"*
    rc=0
    timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out "$f" --quiet \
      --test-stop-after-rows "$after" --test-stop-rank "$kill_rank" > k.out 2> k.err || rc=$?
    [ $rc != 0 ] || fail "rank $kill_rank was not killed after $after rows"
    ls "$f".spool.* > /dev/null 2>&1 || fail "the killed sweep left no spool"
    dry_then_run "$f"
  }
done
# and a fully cached file: nothing to run
dry_then_run k1_2.h5
echo "test_sweep_dryrun: every prediction held"
