#!/usr/bin/env bash
# A later engine's extra columns change no other engine's files (docs/engines.md, "An engine
# with extra columns").  A second build gives the ideal engine a result column (ideal_flits) and
# a record column (ideal_data_flits), option CS_IDEAL_TEST_COLUMNS; then:
#   1. the demo sweep (dcin, math, vcnet) gives the same layout and the same bytes in both builds;
#   2. `commsweep schema` differs only by the two ideal rows;
#   3. a file laid out for ideal jobs names both columns, whose values follow ideal's model
#      (src/engine/ideal/ideal.c): a record's data phase has burst_length flits, the other phase
#      one, so ideal_data_flits = burst_length and ideal_flits = sum of (burst_length + 1);
#   4. ideal jobs added to a file laid out without them keep its layout (a note says so), verify,
#      and `commsweep repair` names their columns, with the values the jobs wrote.
set -euo pipefail
# shellcheck source=tests/integration/sweep_env.sh
. "$(dirname "$0")/sweep_env.sh"

# the second build, configured as CS_BIN's (build type, compiler, sanitizer)
cache=$(dirname "$CS_BIN")/CMakeCache.txt
setting() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
cols_build=$CS_WORK.build
cmake -S "$CS_SOURCE_DIR" -B "$cols_build" -DCS_IDEAL_TEST_COLUMNS=ON \
  -DCMAKE_BUILD_TYPE="$(setting CMAKE_BUILD_TYPE)" -DCMAKE_C_COMPILER="$(setting CMAKE_C_COMPILER)" \
  -DCS_SANITIZE="$(setting CS_SANITIZE)" > configure.txt
cmake --build "$cols_build" -j2 --target commsweep > build.txt
COLS_BIN=$cols_build/commsweep

# 1. the demo sweep in both builds
timeout 600 mpirun -np 2 "$CS_BIN" sweep "$DEMO" --out plain.h5 --quiet > plain.txt
timeout 600 mpirun -np 2 "$COLS_BIN" sweep "$DEMO" --out cols.h5 --quiet > cols.txt
expect plain.txt "ran 144 (0 failed)" plain.h5
expect cols.txt "ran 144 (0 failed)" cols.h5
$PY "$HERE/sweep_compare.py" plain.h5 cols.h5
$PY - <<'PY'
import h5py
# the layout: every dataset's type, shape, chunks, filters and attributes; the file's attributes
# but for the times
with h5py.File("plain.h5", "r") as a, h5py.File("cols.h5", "r") as b:
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for name in a:
        da, db = a[name], b[name]
        for what in ("dtype", "shape", "chunks", "compression", "compression_opts", "shuffle"):
            assert getattr(da, what) == getattr(db, what), (name, what)
        assert dict(da.attrs) == dict(db.attrs), name
    keep = lambda f: {k: v for k, v in f.attrs.items() if not k.endswith("_utc")}
    assert keep(a) == keep(b)
    assert not any(n.startswith("ideal_") for n in a["results"].dtype.names + a["txlog"].dtype.names)
PY

# 2. the schema
"$CS_BIN" schema > schema_plain.txt
"$COLS_BIN" schema > schema_cols.txt
diff schema_plain.txt schema_cols.txt | grep '^[<>]' > schema_diff.txt || true
grep -c '^> .*ideal_' schema_diff.txt | grep -qx 2 || { cat schema_diff.txt; exit 1; }
[ "$(wc -l < schema_diff.txt)" = 2 ] || { cat schema_diff.txt; exit 1; }

# 3. a file laid out for ideal jobs
$PY "$HERE/sweep_make.py" "$DEMO" ideal.json ideal ideal \
  '[{"field":"spec.msg_size_bytes","values":[4096,65536]},
    {"field":"spec.primitive","values":["allreduce","allgather"]}]'
timeout 300 "$COLS_BIN" sweep ideal.json --out ideal.h5 --quiet > ideal.txt
expect ideal.txt "ran 4 (0 failed)" ideal.h5
cat > check_ideal.py <<'PY'
import sys
import h5py
import numpy as np
# every ideal row's values as its model gives them; rows of other engines hold 0 in ideal's slots
path, jobs_of_ideal = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    res, tx, jobs = f["results"][()], f["txlog"][()], f["jobs"][()]
    engine = [e.decode() for e in jobs["engine"]]
    assert engine.count("ideal") == jobs_of_ideal, engine
    for row, name in enumerate(engine):
        r = res[row]
        recs = tx[r["txlog_offset"]:r["txlog_offset"] + r["txlog_count"]]
        assert r["status"] == 1 and len(recs) > 0, (row, r["status"])
        if name == "ideal":
            assert (recs["ideal_data_flits"] == recs["burst_length"]).all(), row
            assert r["ideal_flits"] == int((recs["burst_length"].astype(np.int64) + 1).sum()), row
        else:
            assert (recs["ideal_data_flits"] == 0).all() and r["ideal_flits"] == 0, row
print("check_ideal: %d rows, %d of ideal" % (len(engine), jobs_of_ideal))
PY
$PY check_ideal.py ideal.h5 4

# 4. ideal jobs into a dcin file laid out without them
$PY "$HERE/sweep_make.py" "$DEMO" dcin.json dcin dcin '[{"field":"spec.msg_size_bytes","values":[4096,65536]}]'
timeout 300 "$CS_BIN" sweep dcin.json --out mixed.h5 --quiet > dcin.txt
expect dcin.txt "ran 2 (0 failed)" mixed.h5
$PY -c "import h5py; f = h5py.File('mixed.h5'); print(f['results'].dtype, f['txlog'].dtype)" > before.txt
timeout 300 "$COLS_BIN" sweep ideal.json --out mixed.h5 > added.txt
expect added.txt "ran 4 (0 failed)" mixed.h5
expect added.txt "note: 'mixed.h5' does not name the extra columns of engine ideal"
$PY -c "import h5py; f = h5py.File('mixed.h5'); print(f['results'].dtype, f['txlog'].dtype)" > after.txt
cmp before.txt after.txt
"$COLS_BIN" show mixed.h5 --verify > verify.txt || { cat verify.txt; exit 1; }
timeout 300 "$COLS_BIN" repair mixed.h5 > repair.txt
expect repair.txt "6 rows: 6 kept (verified)"
expect repair.txt "the extra columns of engine ideal are now named in /results and /txlog"
$PY check_ideal.py mixed.h5 4
# named now: the next sweep says nothing and runs nothing
timeout 300 "$COLS_BIN" sweep ideal.json --out mixed.h5 > again.txt
expect again.txt "ran 0 (0 failed)"
if grep -q "does not name" again.txt; then cat again.txt; exit 1; fi
echo "test_engine_columns: ok"
