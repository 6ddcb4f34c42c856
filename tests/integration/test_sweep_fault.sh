#!/usr/bin/env bash
# Faults: while a sweep is alive (stopped at a chosen row by the --test-stop-* options), a
# second sweep, --break-lock and a sweep through a hard link are refused with clear errors; kill
# -9 of that sweep or of one rank of three leaves a file that opens with every finished row
# intact, and the rerun finishes only what is missing (taking over the stale lock) with results
# equal to a clean run's; bytes flipped in a finished row are detected by its checksum and the
# row recomputed.
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

# a live sweep: one process stopped (SIGSTOP, test hook) right after writing its 2nd row
"$CS_BIN" sweep fault.json --out killed.h5 --quiet --test-stop-after-rows 2 \
  --test-stop-signal STOP > live.out 2> live.err &  # killed below
LIVE=$!
for _ in $(seq 3000); do  # up to 60 s: ASan start-up on a busy host
  grep -q ') T' "/proc/$LIVE/stat" 2>/dev/null && break
  kill -0 "$LIVE" 2>/dev/null || break; sleep 0.02
done
grep -q ') T' "/proc/$LIVE/stat" || { cat live.err; echo "the sweep did not stop at its 2nd row"; exit 1; }

# a second sweep on the same file, now, is refused
if timeout 60 "$CS_BIN" sweep fault.json --out killed.h5 --quiet 2> second.err; then
  echo "a concurrent sweep was not refused"; exit 1
fi
grep -q "is being written by another sweep (pid=$LIVE " second.err
cat second.err
# --break-lock does not break the lock of a live sweep of this host
if timeout 60 "$CS_BIN" sweep fault.json --out killed.h5 --quiet --break-lock 2> break.err; then
  echo "--break-lock broke a live sweep's lock"; exit 1
fi
grep -q -- "--break-lock refused: the sweep holding .* is alive on this host" break.err
cat break.err
# nor does a second name of the same file (a hard link): same device and inode
ln killed.h5 hardlink.h5
if timeout 60 "$CS_BIN" sweep fault.json --out hardlink.h5 --quiet 2> hard.err; then
  echo "a sweep through a hard link was not refused"; exit 1
fi
grep -q "is being written by another sweep under another name, a hard link (pid=$LIVE " hard.err
cat hard.err
rm hardlink.h5
test -e killed.h5.lock  # the refused sweeps removed no lock but their own

# what is finished now, then kill -9 (no chance to clean up): the lock stays, stale
"$CS_BIN" show killed.h5 --csv > before.csv
kill -9 "$LIVE"; wait "$LIVE" || true
test -e killed.h5.lock
$PY "$HERE/sweep_check.py" kept killed.h5 before.csv
$PY "$HERE/sweep_check.py" counts killed.h5 2 0 $((JOBS - 2))
# the rerun takes over the stale lock and runs only what is missing
timeout 600 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > lone.txt 2> lone.err
grep -q "taking over stale lock" lone.err
expect lone.txt "ran $((JOBS - 2)) (0 failed) .*cached 2 " killed.h5
test ! -e killed.h5.lock
$PY "$HERE/sweep_compare.py" clean.h5 killed.h5

# kill -9 of rank 1 of 3 right after its 2nd row (test hook): mpirun ends the others
rm -f killed.h5
rc=0
timeout 600 mpirun -np 3 "$CS_BIN" sweep fault.json --out killed.h5 --quiet \
  --test-stop-after-rows 2 --test-stop-rank 1 > killed.out 2> killed.err || rc=$?
echo "mpirun exit status after rank 1 was killed: $rc"
[ "$rc" != 0 ]
# mpirun ends the other ranks with SIGTERM, on which rank 0 releases its lock
stale=0; [ -e killed.h5.lock ] && stale=1
echo "lock left behind: $stale"
read -r done_after failed_after pending_after < <($PY "$HERE/sweep_check.py" summary killed.h5)
echo "after the kill: $done_after done, $failed_after failed, $pending_after pending"
[ "$done_after" -ge 2 ] && [ "$failed_after" = 0 ] && [ "$pending_after" -gt 0 ]
"$CS_BIN" show killed.h5 --csv > before.csv
timeout 600 mpirun -np 2 "$CS_BIN" sweep fault.json --out killed.h5 --quiet > rerun.txt 2> rerun.err
cat rerun.txt
[ $stale = 0 ] || grep -q "taking over stale lock" rerun.err
# every row the file showed done is reused; rows whose result the killed ranks had spooled
# with their log but not yet written to the file are reused too (merged from the spools)
read -r ran cached < <(sed -n 's/.*ran \([0-9]*\) (0 failed).*cached \([0-9]*\) .*/\1 \2/p' rerun.txt)
echo "rerun: ran $ran, cached $cached (the file showed $done_after done)"
[ $((ran + cached)) = $JOBS ] && [ "$cached" -ge "$done_after" ]
test ! -e killed.h5.lock
$PY "$HERE/sweep_check.py" kept killed.h5 before.csv
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

echo "test_sweep_fault: OK"
