#!/usr/bin/env bash
# SIGINT and SIGTERM stop a sweep cleanly, with real signals: no more jobs are handed out, each
# rank ends the job in hand, every finished row stays, and the sweep says "interrupted: N of M
# done, rerun the same command to finish" with exit status 3 (docs/sweep-files.md, "Stopping").
# N is what the file (and its spools) hold: the dry run that follows counts N cache hits, and the
# rerun finishes the rest.  Cases: SIGTERM on a worker and SIGINT on rank 0 at a chosen row (the
# test hook raises them), SIGINT to mpirun itself while a worker holds jobs (mpirun then stops
# the ranks with SIGTERM and kills them a second later; its own status is 1), kill -9 of a worker (mpirun stops the others;
# rank 0 still says how far it got), SIGTERM to a single process, and a second signal, which
# ends the process at once without leaving its lock.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

# 16 dcin jobs of 1 MiB (0.05-0.6 s each): long enough to be stopped from outside
$PY "$HERE/sweep_make.py" "$DEMO" long.json interrupt dcin \
  '[{"field":"spec.msg_size_bytes","values":[1048576]},
    {"fields":["spec.primitive","spec.algorithm"],"values":[["allreduce","ring"],["alltoall","pairwise"]]},
    {"field":"spec.participants","values":[[0,1,2,3],[0,5,20,25,30,35,10,15]]},
    {"field":"adapter.mst_wr_outstanding","values":[4,16,64,8]}]'
sweep=long.json JOBS=16 # the sweep file that check_stop reruns, and its job count

# check_stop FILE STDERR EXPECTED_RC RC [rerun]: the message, its N against the dry run, then
# (with "rerun") the rerun that finishes the sweep
check_stop() {
  local f=$1 err=$2 want=$3 rc=$4 n hits
  [ "$rc" = "$want" ] || fail "$f: exit status $rc, expected $want: $(cat "$err")"
  n=$(sed -n 's/.*interrupted: \([0-9]*\) of '$JOBS' done\(, rerun\| so far\).*/\1/p' "$err" | tail -1)
  [ -n "$n" ] || fail "$f: no 'interrupted: N of $JOBS done' in: $(cat "$err")"
  grep -q "rerun the same command to finish" "$err" || fail "$f: $(cat "$err")"
  "$CS_BIN" sweep "$sweep" --out "$f" --dry-run > dry.txt
  hits=$(sed -n 's/^  cache hits: \([0-9]*\) .*/\1/p' dry.txt)
  echo "$f: exit status $rc, said $n of $JOBS done; the dry run counts $hits cache hits"
  [ "$n" -le "$hits" ] && [ "$n" -lt $JOBS ] || fail "$f: said $n, the file holds $hits"
  if [ "$want" = 3 ]; then [ "$n" = "$hits" ] || fail "$f: said $n done, the file holds $hits"; fi
  [ "${5:-}" = rerun ] || return 0
  timeout 900 mpirun -np 2 "$CS_BIN" sweep "$sweep" --out "$f" --quiet > rerun.txt 2> rerun.err
  grep -q "ran $((JOBS - hits)) (0 failed).*cached $hits " rerun.txt || fail "$f rerun: $(cat rerun.txt)"
  [ ! -e "$f.lock" ] || fail "$f: the rerun left its lock"
}

# 1. SIGTERM on worker rank 1 after its 2nd row, SIGINT on rank 0 after its 3rd (the hook).
#    A worker's stop after the last grant prints no "no more jobs are handed out" (docs
#    "Stopping"), so there rank 0 runs no job: the worker's first two ranges leave jobs.
for case in TERM:1:2 INT:0:3; do
  IFS=: read -r sig rank after <<< "$case"
  f=hook_$sig.h5
  rc=0
  timeout 900 mpirun -np 2 "$CS_BIN" sweep long.json --out "$f" --quiet \
    --test-stop-after-rows "$after" --test-stop-rank "$rank" --test-stop-signal "$sig" \
    $([ "$rank" = 1 ] && echo --test-rank0-runs-none) > o.txt 2> e.txt || rc=$?
  grep -q "commsweep sweep: SIG$sig: no more jobs are handed out" e.txt || fail "$f: $(cat e.txt)"
  [ ! -e "$f.lock" ] || fail "$f: an interrupted sweep left its lock"
  check_stop "$f" e.txt 3 $rc $([ "$sig" = TERM ] && echo rerun)
done

# 2. SIGINT to mpirun while the worker still holds jobs: the STOP fault freezes the worker right
#    after its first row (it has asked for its second range only, so jobs remain to hand out)
#    and holds it until mpirun's SIGTERM (docs/hdf5-schema.md, "Fault options"); the worker,
#    continued, takes it.  Rank 0 runs no job itself (--test-rank0-runs-none): it is always
#    between jobs when mpirun's SIGTERM comes, and says how far the sweep got before mpirun kills
#    the ranks a second later, however fast jobs run
wait_for_stop() { # PID OUT: until a process of the sweep writing OUT has stopped itself; its pid
  local stopped
  for _ in $(seq 600); do
    stopped=$(ps -eo pid=,stat=,args= |
              awk -v out="--out $2 " '$2 ~ /^T/ && index($0 " ", out) && /commsweep sweep/ {print $1; exit}')
    [ -n "$stopped" ] && { echo "$stopped"; return 0; }
    kill -0 "$1" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}
rm -f mpi.h5*
mpirun -np 2 "$CS_BIN" sweep long.json --out mpi.h5 --quiet --test-rank0-runs-none \
  --test-stop-after-rows 1 --test-stop-rank 1 --test-stop-signal STOP > o.txt 2> e.txt &
pid=$!
worker=$(wait_for_stop $pid mpi.h5) || fail "the worker did not stop itself: $(cat e.txt)"
kill -INT $pid
# the worker continues once rank 0 has taken mpirun's SIGTERM (the worker's is then pending):
# continued before, it could finish the sweep's last jobs first, however long they are
for _ in $(seq 100); do grep -q "SIGTERM: no more jobs" e.txt && break; sleep 0.05; done
kill -CONT "$worker" 2> /dev/null || true # (mpirun may have killed it already)
rc=0; wait $pid || rc=$?
grep -q "commsweep sweep: SIGTERM: no more jobs are handed out" e.txt || fail "mpirun SIGINT: $(cat e.txt)"
check_stop mpi.h5 e.txt 1 $rc rerun

# 2b. kill -9 of a worker: mpirun stops the others with SIGTERM, and rank 0 says how far it got
#     before mpirun's kill (its status is then 137, Open MPI's for a rank killed by SIGKILL)
rc=0
timeout 900 mpirun -np 2 "$CS_BIN" sweep long.json --out k9.h5 --quiet --test-rank0-runs-none \
  --test-stop-after-rows 2 --test-stop-rank 1 > o.txt 2> e.txt || rc=$?
check_stop k9.h5 e.txt 137 $rc

# 3. SIGTERM to one process without mpirun
rm -f one.h5*
"$CS_BIN" sweep long.json --out one.h5 --quiet --test-stop-after-rows 1 --test-stop-signal STOP \
  > o.txt 2> e.txt &
pid=$!
wait_for_stop $pid one.h5 > /dev/null || fail "the single process did not stop itself: $(cat e.txt)"
kill -TERM $pid
kill -CONT $pid
rc=0; wait $pid || rc=$?
[ ! -e one.h5.lock ] || fail "one.h5: an interrupted sweep left its lock"
check_stop one.h5 e.txt 3 $rc

# 4. a second signal ends the process at once, in the middle of a job of ten seconds (64 MiB), and
#    its lock goes with it; the file keeps its pending row
$PY "$HERE/sweep_make.py" "$DEMO" one.json one dcin \
  '[{"field":"spec.msg_size_bytes","values":[67108864]},
    {"fields":["spec.primitive","spec.algorithm"],"values":[["alltoall","pairwise"]]},
    {"field":"spec.participants","values":[[0,5,20,25,30,35,10,15]]},
    {"field":"adapter.mst_wr_outstanding","values":[4]}]'
rm -f twice.h5*
"$CS_BIN" sweep one.json --out twice.h5 --quiet --results-only > o.txt 2> e.txt &
pid=$!
for _ in $(seq 300); do [ -s twice.h5 ] && break; sleep 0.1; done
sleep 0.5
kill -TERM $pid
sleep 0.2 # two signals pending at once are one
kill -TERM $pid
rc=0; wait $pid || rc=$?
echo "two signals: exit status $rc"
[ $rc = $((128 + 15)) ] || fail "two signals: exit status $rc: $(cat e.txt)"
[ ! -e twice.h5.lock ] || fail "twice.h5: the lock is left behind"
"$CS_BIN" show twice.h5 | grep -q "1 rows: 0 done, 0 failed, 1 pending" || fail "twice.h5: $("$CS_BIN" show twice.h5)"
echo "test_sweep_interrupt: every stop said how far it got"
