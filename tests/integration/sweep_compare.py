#!/usr/bin/python3
"""Compares commsweep store files bit for bit.

usage: sweep_compare.py A.h5 B.h5 [C.h5 ...]

Every dataset (/jobs, /job_json, /results, /errors, /txlog, /steplog) must have the same shape
and dtype, and every column must be byte-identical, except /results.wall_time_s (host time, not
deterministic).  Rows are compared by index: the row layout is fixed by the sweep, not by the
ranks.  Exits 1 with the first difference named.
"""
import sys

import h5py
import numpy as np

SKIP = {("results", "wall_time_s")}


def columns(ds):
    data = ds[()]
    if ds.dtype.names is None:  # a dataset of strings (/job_json, /errors): one column
        return {None: data}
    return {name: data[name] for name in ds.dtype.names}


def compare(a_path, b_path):
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        for name in ("jobs", "job_json", "results", "errors", "txlog", "steplog"):
            da, db = a[name], b[name]
            if da.shape != db.shape:
                return f"/{name}: shape {da.shape} vs {db.shape}"
            if da.dtype != db.dtype:
                return f"/{name}: dtype differs"
            ca, cb = columns(da), columns(db)
            for col in ca:
                if (name, col) in SKIP:
                    continue
                x, y = np.ascontiguousarray(ca[col]), np.ascontiguousarray(cb[col])
                if x.tobytes() != y.tobytes():
                    bad = np.nonzero(x != y)[0] if x.shape == y.shape else []
                    first = int(bad[0]) if len(bad) else -1
                    where = name if col is None else f"{name}.{col}"
                    return f"/{where}: differs (first at row {first}: {x[first] if first >= 0 else '?'} vs {y[first] if first >= 0 else '?'})"
    return None


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    ref = sys.argv[1]
    for other in sys.argv[2:]:
        diff = compare(ref, other)
        if diff:
            print(f"{ref} vs {other}: {diff}")
            return 1
        print(f"{ref} == {other} (every column but wall_time_s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
