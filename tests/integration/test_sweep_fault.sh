#!/usr/bin/env bash
# Faults: a second sweep on a file being written is refused with a clear error; kill -9 of one
# rank mid-sweep leaves a file that opens with every finished row intact, and the rerun finishes
# only what is missing (taking over a stale lock if one was left) with results equal to a clean
# run's; bytes flipped in a finished row are detected by its checksum and the row recomputed;
# a stale lock of a process killed with -9 is taken over.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

$PY "$HERE/sweep_make.py" "$DEMO" fault.json fault dcin \
  '[{"field":"spec.msg_size_bytes","values":[131072,262144,524288,1048576]},
    {"field":"spec.participants","values":[[0,1,2,3],[0,5,20,25,30,35,10,15]]},
    {"field":"adapter.mst_wr_outstanding","values":[16,64]},
    {"field":"adapter.burst_length","values":[2,4]}]'
JOBS=32

# the reference: one clean run
timeout 600 "$CS_BIN" sweep fault.json --out clean.h5 --quiet > clean.txt
expect clean.txt "ran $JOBS (0 failed)" clean.h5

# the victim: 3 ranks, progress every 0.1 s
timeout 600 mpirun -np 3 "$CS_BIN" sweep fault.json --out killed.h5 --progress 0.1 \
  > killed.out 2> killed.err &
MPIRUN=$!
done_count() { { grep -o '\] [0-9]*/' killed.err 2>/dev/null || true; } | tail -1 | tr -dc 0-9; }
for _ in $(seq 2400); do
  d=$(done_count); [ -n "$d" ] && [ "$d" -ge 5 ] && break
  kill -0 "$MPIRUN" 2>/dev/null || break; sleep 0.05
done
d=$(done_count)
if ! { [ -n "$d" ] && [ "$d" -ge 5 ] && [ "$d" -lt "$JOBS" ]; }; then
  cat killed.err; echo "sweep not mid-way: '$d'"; exit 1
fi

# a second sweep on the same file, now, is refused
if timeout 60 "$CS_BIN" sweep fault.json --out killed.h5 --quiet 2> second.err; then
  echo "a concurrent sweep was not refused"; exit 1
fi
grep -q "is being written by another sweep (pid=" second.err
cat second.err

# snapshot what is finished, then kill -9 rank 1
"$CS_BIN" show killed.h5 --csv > before.csv
descendants() { local c; for c in $(pgrep -P "$1" || true); do echo "$c"; descendants "$c"; done; }
victim=""
ranks=$(descendants "$MPIRUN")
for pid in $ranks; do
  if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
    victim=$pid
  fi
done
[ -n "$victim" ] || { echo "rank 1 not found"; exit 1; }
kill -9 "$victim"
rc=0; wait "$MPIRUN" || rc=$?
echo "mpirun exit status after kill -9 of rank 1 (pid $victim): $rc"
[ "$rc" != 0 ]
for _ in $(seq 100); do  # mpirun may return while the other ranks are still exiting
  alive=0
  for pid in $ranks; do
    if [ -r "/proc/$pid/stat" ] && ! grep -q ') Z' "/proc/$pid/stat"; then alive=1; fi
  done
  [ $alive = 0 ] && break; sleep 0.1
done
# mpirun ends the other ranks with SIGTERM, on which rank 0 releases its lock; had rank 0
# been killed outright, its lock stays and the next run takes it over as stale
stale=0; [ -e killed.h5.lock ] && stale=1
echo "lock left behind: $stale"

# the file opens; nothing that was finished is lost
$PY "$HERE/sweep_check.py" kept killed.h5 before.csv
read -r done_after failed_after pending_after < <($PY "$HERE/sweep_check.py" summary killed.h5)
echo "after the kill: $done_after done, $failed_after failed, $pending_after pending"
[ "$pending_after" -gt 0 ]

# the rerun takes over the stale lock and runs only what is missing
timeout 600 mpirun -np 2 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > rerun.txt 2> rerun.err
cat rerun.txt
[ $stale = 0 ] || grep -q "taking over stale lock" rerun.err
expect rerun.txt "ran $((JOBS - done_after)) (0 failed) .*cached $done_after " killed.h5
test ! -e killed.h5.lock
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5

# flip bytes in a finished row: detected by its checksum and recomputed
$PY "$HERE/sweep_check.py" flip killed.h5 7
"$CS_BIN" show killed.h5 --verify | tail -1 | grep -q "1 corrupt"
timeout 600 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > flip.txt
cat flip.txt
grep -q "ran 1 (0 failed)" flip.txt
grep -q "1 corrupt" flip.txt
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5

# a changed transaction record: rows alone still verify; --verify-log finds and reruns it
$PY "$HERE/sweep_check.py" fliplog killed.h5 3
timeout 600 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > log1.txt
expect log1.txt "ran 0 (0 failed) .*cached $JOBS "
timeout 600 "$CS_BIN" sweep fault.json --out killed.h5 --quiet --verify-log > log2.txt
expect log2.txt "ran 1 (0 failed)"
grep -q "1 corrupt" log2.txt
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5

# kill -9 of a lone sweep (no SIGTERM, no chance to clean up): its lock is stale, taken over
rm -f killed.h5
"$CS_BIN" sweep fault.json --out killed.h5 --quiet > /dev/null 2>&1 &  # killed below
LONE=$!
for _ in $(seq 1500); do [ -e killed.h5.lock ] && break; sleep 0.02; done  # up to 30 s: ASan start-up on a busy host
sleep 0.05
kill -9 "$LONE"; wait "$LONE" || true
test -e killed.h5.lock
timeout 600 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > lone.txt 2> lone.err
grep -q "taking over stale lock" lone.err
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5
echo "test_sweep_fault: OK"
