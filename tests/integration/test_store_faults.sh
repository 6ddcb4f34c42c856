#!/usr/bin/env bash
# The store against a hostile world: SIGKILL and a full disk at every write of the structural
# step (strace fault injection) lose no row and every rerun equals a clean run; damaged or
# foreign files, wrong output paths and odd arguments get clear errors and change nothing.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# math-engine sweeps (fast reruns): 8 jobs, then the same plus 4 more (a third size)
matrix() {
  echo "[{\"field\":\"spec.msg_size_bytes\",\"values\":$1},
    {\"fields\":[\"spec.primitive\",\"spec.algorithm\"],\"values\":[[\"allreduce\",\"ring\"],[\"alltoall\",\"pairwise\"]]},
    {\"field\":\"spec.participants\",\"values\":[[0,1,2,3],[0,5,20,25,30,35,10,15]]}]"
}
$PY "$HERE/sweep_make.py" "$DEMO" small.json faults math "$(matrix '[4096,65536]')"
$PY "$HERE/sweep_make.py" "$DEMO" big.json faults math "$(matrix '[4096,65536,262144]')"
"$CS_BIN" sweep small.json --out base.h5 --quiet > /dev/null
cp base.h5 clean.h5
"$CS_BIN" sweep big.json --out clean.h5 --quiet > /dev/null
"$CS_BIN" sweep big.json --out cleannew.h5 --quiet > /dev/null

# 1. kill and ENOSPC at every write of the structural step of an extension, at writes spread
#    over the closing one (the merge of the log spools), and at random
#    writes of the whole sweep; then the same, sampled, for a sweep that creates the file
#    (an ASan build starts each process ~10x slower: a sample of the writes there)
if ldd "$CS_BIN" | grep -q libasan; then every="--sample 4 --merge 2"; else every="--every --merge 8 --random 4"; fi
$PY "$HERE/fault_inject.py" "$CS_BIN" big.json base.h5 clean.h5 $every  # word splitting intended
$PY "$HERE/fault_inject.py" "$CS_BIN" big.json - cleannew.h5 --sample 4 --merge 2 --random 2

# 2. array-valued root attributes (h5py writes lists as arrays): an error, not a crash
$PY -c "import h5py;f=h5py.File('arr.h5','w');f.attrs['format']=['commsweep']*2000;f.attrs['schema_version']=1"
rc=0; "$CS_BIN" show arr.h5 2> arr.err || rc=$?
[ $rc = 1 ] && grep -q "attribute 'format' is not a scalar string" arr.err
$PY -c "import h5py;f=h5py.File('arr2.h5','w');f.attrs['format']='commsweep';f.attrs['schema_version']=[1]*64"
rc=0; "$CS_BIN" show arr2.h5 2> arr2.err || rc=$?
[ $rc = 1 ] && grep -q "attribute 'schema_version' is not a scalar integer" arr2.err

# 3. a renamed column: named on open, by show and by a sweep (which changes nothing)
cp base.h5 renamed.h5
$PY - <<'EOF'
import h5py, numpy as np
with h5py.File("renamed.h5", "a") as f:
    d = f["results"][()]
    names = [("bus_bw" if n == "bus_bw_gb_per_s" else n) for n in d.dtype.names]
    d2 = np.empty(d.shape, np.dtype({"names": names, "formats": [d.dtype.fields[n][0] for n in d.dtype.names]}))
    for old, new in zip(d.dtype.names, names):
        d2[new] = d[old]
    del f["results"]
    f.create_dataset("results", data=d2, maxshape=(None,), chunks=(256,))
EOF
cp renamed.h5 renamed.before
for cmd in "show renamed.h5" "sweep small.json --out renamed.h5 --quiet"; do
  rc=0; $CS_BIN $cmd 2> schema.err || rc=$?  # word splitting intended
  [ $rc = 1 ] && grep -q "column /results.bus_bw_gb_per_s is missing (schema version 6)" schema.err
done
cmp renamed.h5 renamed.before

# 4. one flipped byte in the compressed /jobs data: the error says what failed
flip_chunk() {  # FILE DATASET: flips a byte in the middle of the dataset's first chunk
  $PY - "$1" "$2" <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    info = f[sys.argv[2]].id.get_chunk_info(0)
with open(sys.argv[1], "r+b") as f:
    f.seek(info.byte_offset + info.size // 2)
    b = f.read(1)
    f.seek(info.byte_offset + info.size // 2)
    f.write(bytes([b[0] ^ 0xFF]))
EOF
}
cp base.h5 flipped.h5
flip_chunk flipped.h5 jobs
rc=0; "$CS_BIN" show flipped.h5 > /dev/null 2> flip.err || rc=$?
[ $rc = 1 ] && grep -q "reading /jobs rows 0\.\.7: HDF5: inflate() failed" flip.err
cat flip.err
cp flipped.h5 flipped2.h5
rc=0; "$CS_BIN" sweep small.json --out flipped.h5 --quiet 2> flip.err || rc=$?
[ $rc = 1 ] && grep -q "inflate() failed.*nothing was changed: .commsweep repair flipped.h5" flip.err
cmp flipped.h5 flipped2.h5
#    repair rebuilds the /jobs rows from the sweep file: every row kept, equal to the original
"$CS_BIN" repair flipped.h5 --sweep small.json | tee repair.txt
grep -q "8 kept (verified), 0 corrupt and 0 pending .* 8 unreadable, 8 rebuilt" repair.txt
$PY "$HERE/sweep_compare.py" base.h5 flipped.h5
#    without it the rows cannot be matched to jobs any more: kept as pending under an empty
#    key, and the next sweep runs its jobs into new rows
"$CS_BIN" repair flipped2.h5 | tee repair2.txt
grep -q "0 kept (verified), 8 corrupt" repair2.txt
expect <("$CS_BIN" sweep small.json --out flipped2.h5 --quiet) "ran 8 (0 failed)"

# 4b. /job_json: h5py reads a row's canonical JSON equal to `export --result`'s; one flipped
#     byte in its compressed data: show still works (it reads no JSON), export says what
#     failed, and repair rebuilds the text from the sweep file
"$CS_BIN" export base.h5 --job 3 --result > r3.json
$PY - base.h5 r3.json <<'EOF'
import json, sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert len(f["job_json"]) == len(f["jobs"]) == len(f["errors"]) == len(f["results"]) == 8
    stored = json.loads(f["job_json"][3].decode())
assert stored == json.load(open(sys.argv[2]))["job"], "/job_json row 3 differs from export's"
print("h5py: /job_json row 3 equals the job of `export --result`")
EOF
cp base.h5 jflip.h5
flip_chunk jflip.h5 job_json
"$CS_BIN" show jflip.h5 | grep -q "8 rows: 8 done"
rc=0; "$CS_BIN" export jflip.h5 --job 3 --result > /dev/null 2> jflip.err || rc=$?
[ $rc = 1 ] && grep -q "reading /job_json rows 3\.\.3: HDF5: inflate() failed" jflip.err
cat jflip.err
"$CS_BIN" repair jflip.h5 --sweep small.json | tee jrepair.txt
grep -q "8 kept (verified), 0 corrupt and 0 pending" jrepair.txt
grep -q "/job_json rows: 8 unreadable, 8 rebuilt from the sweep file" jrepair.txt
$PY "$HERE/sweep_compare.py" base.h5 jflip.h5

# 5. an --out file name too long for Open MPI's MPI-IO: refused before anything is written
long=$(printf 'n%.0s' $(seq 245)).h5
rc=0; "$CS_BIN" sweep small.json --out "$long" --quiet 2> long.err || rc=$?
[ $rc = 1 ] && grep -q "the file name is 248 characters, at most 200" long.err
[ -z "$(ls | grep -c nnnnnnnn | grep -v '^0$' || true)" ]

# 6. output to the wrong file
size=$(stat -c %s base.h5)
rc=0; "$CS_BIN" export base.h5 --job 3 -o base.h5 2> self.err || rc=$?
[ $rc = 1 ] && grep -q "is the input file itself; refusing to overwrite it" self.err
[ "$(stat -c %s base.h5)" = "$size" ]
"$CS_BIN" show base.h5 > /dev/null
echo "keep me" > kept.txt
rc=0; "$CS_BIN" export base.h5 --job 99 -o kept.txt 2> /dev/null || rc=$?
[ $rc = 1 ] && [ "$(cat kept.txt)" = "keep me" ]
"$CS_BIN" export base.h5 --job 3 -o kept.txt
[ "$(wc -l < kept.txt)" -gt 0 ] && ! ls kept.txt.tmp* 2> /dev/null
longlog=$(printf 'l%.0s' $(seq 330)).jsonl
rc=0; "$CS_BIN" run --spec "$CS_SOURCE_DIR/docs/examples/spec_allreduce.json" \
  --config "$CS_SOURCE_DIR/docs/examples/adapter_2die.json" --engine math --txlog "$longlog" \
  > /dev/null 2> txlog.err || rc=$?
[ $rc = 1 ] && grep -q "transaction log path .* is too long: 336 characters" txlog.err

# 7. messages
rc=0; "$CS_BIN" show base.h5 --bogus 2> bogus.err || rc=$?
[ $rc = 2 ] && grep -q "unknown option '--bogus'" bogus.err
cp base.h5 empty_rows.h5
$PY -c "import h5py;f=h5py.File('empty_rows.h5','a');[f[n].resize((0,)) for n in ('jobs','job_json','results','errors','txlog')]"
rc=0; "$CS_BIN" export empty_rows.h5 --job 0 2> norows.err || rc=$?
[ $rc = 1 ] && grep -q "the file has no rows yet" norows.err
mkfifo fifo.h5
rc=0; timeout 20 "$CS_BIN" show fifo.h5 2> fifo.err || rc=$?
[ $rc = 1 ] && grep -q "not a regular file (a FIFO)" fifo.err
: > zero.h5
rc=0; "$CS_BIN" show zero.h5 2> zero.err || rc=$?
[ $rc = 1 ] && grep -q "empty (0 bytes), not a commsweep store" zero.err
"$CS_BIN" sweep small.json --out zero.h5 --quiet > zero.txt
$PY "$HERE/sweep_compare.py" base.h5 zero.h5
# a fully cached sweep only reads the file: never opened for writing
chmod 444 base.h5
ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 strace -f -qq -e trace=openat -o cached.strace "$CS_BIN" sweep small.json --out base.h5 --quiet > cached.txt
expect cached.txt "ran 0 (0 failed) .*cached 8 "
grep '"base.h5"' cached.strace
! grep '"base.h5", O_RDWR\|"base.h5", O_WRONLY' cached.strace
chmod 644 base.h5
echo "test_store_faults: OK"
