#!/usr/bin/env bash
# A fully cached sweep writes nothing, so it runs over a file on a read-only file system (a
# read-only bind mount): no lock file, no write, its summary as usual; a sweep that would write
# says so and changes nothing.  Needs root for the mount; skipped (77) otherwise, like the Slurm
# test.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "test_sweep_readonly: needs root for a read-only bind mount; skipped"; exit 77; }

mkdir -p data ro
$PY "$HERE/sweep_make.py" "$DEMO" small.json readonly math \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536]},{"field":"adapter.mst_wr_outstanding","values":[16,64]}]'
$PY "$HERE/sweep_make.py" "$DEMO" more.json readonly math \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536,262144]},{"field":"adapter.mst_wr_outstanding","values":[16,64]}]'
"$CS_BIN" sweep small.json --out data/r.h5 --quiet > first.txt
mount --bind data ro || { echo "test_sweep_readonly: mount --bind failed; skipped"; exit 77; }
trap 'umount "$CS_WORK/ro" 2> /dev/null || true' EXIT
mount -o remount,ro,bind ro || { echo "test_sweep_readonly: read-only remount failed; skipped"; exit 77; }
! touch ro/probe 2> /dev/null || fail "the mount is writable"
sum=$(md5sum < data/r.h5)

rc=0; "$CS_BIN" sweep small.json --out ro/r.h5 --quiet > cached.txt 2> cached.err || rc=$?
[ $rc = 0 ] || fail "fully cached sweep on a read-only file system: rc $rc: $(cat cached.err)"
grep -q "ran 0 (0 failed) .*cached 4 " cached.txt || fail "$(cat cached.txt)"
rc=0; timeout 300 mpirun -np 2 "$CS_BIN" sweep small.json --out ro/r.h5 --quiet > cached2.txt 2> cached2.err || rc=$?
[ $rc = 0 ] || fail "fully cached sweep on 2 ranks: rc $rc: $(cat cached2.err)"
"$CS_BIN" sweep small.json --out ro/r.h5 --dry-run | grep -q "cache hits: 4 (4 done" || fail "dry run"
"$CS_BIN" show ro/r.h5 | grep -q "4 rows: 4 done" || fail "show"

rc=0; "$CS_BIN" sweep more.json --out ro/r.h5 --quiet > more.txt 2> more.err || rc=$?
[ $rc = 1 ] || fail "a sweep that must write a read-only file: rc $rc"
grep -qF "file 'ro/r.h5': lock file '$CS_WORK/ro/r.h5.lock': Read-only file system; the sweep would write the file (2 jobs to run, 2 new rows), which needs a writable directory (a fully cached sweep writes nothing and needs none)" more.err ||
  fail "$(cat more.err)"
[ "$(md5sum < data/r.h5)" = "$sum" ] || fail "the file changed"
for l in /dev/shm/commsweep-*.lock; do
  [ ! -e "$l" ] || ! grep -q "sweep=readonly" "$l" || fail "an inode lock is left: $l"
done
echo "test_sweep_readonly: a fully cached sweep over a read-only file system"
