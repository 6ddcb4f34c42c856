#!/usr/bin/python3
"""Compares the results of two runs of one sweep (engine before / after a change), job by job.

usage: bench_dcin_compare.py BEFORE.h5 AFTER.h5 [--list OUT.csv]

Rows are matched by cache key (/jobs.key), or, when the two files' keys differ (a build whose
cache key had another form or model version), by every /jobs column the two files share but the
key.  A job is identical when every /results column the two files share, but wall_time_s, is
byte-identical (columns found in one file only are named).  Prints the counts, the total job time (sum of wall_time_s) of each
file and their ratio, and one line per differing job (its axis values and the columns that
differ, with both values); --list writes the same as CSV.  Exit status 0 whether or not jobs
differ; 2 on a usage error or when the files do not hold the same jobs.
"""
import csv
import sys

import h5py
import numpy as np

SKIP = {"wall_time_s", "checksum"}  # host time, and the row checksum that covers it
AXES = ("primitive", "msg_size_bytes", "topology", "dcin_layout", "num_participants",
        "mst_rd_outstanding", "burst_length")


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def load(path):
    with h5py.File(path, "r") as f:
        jobs, res = f["jobs"][()], f["results"][()]
    return jobs, res


def index(jobs, res, fields):
    return {tuple(np.asarray(j[c]).tobytes() for c in fields): (j, r) for j, r in zip(jobs, res)}


def main():
    args = sys.argv[1:]
    out = None
    if "--list" in args:
        k = args.index("--list")
        out = args[k + 1]
        del args[k:k + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ajobs, ares = load(args[0])
    bjobs, bres = load(args[1])
    a, b = index(ajobs, ares, ["key"]), index(bjobs, bres, ["key"])
    if set(a) != set(b):
        shared = [c for c in ajobs.dtype.names
                  if c in bjobs.dtype.names and c not in ("key", "row", "sweep")]
        a, b = index(ajobs, ares, shared), index(bjobs, bres, shared)
        print(f"cache keys differ: jobs matched by {len(shared)} job columns")
    if set(a) != set(b) or len(a) != len(ajobs):
        print(f"the files hold different jobs ({len(set(a) ^ set(b))} in one only)")
        return 2
    only = sorted(set(ares.dtype.names) ^ set(bres.dtype.names))
    if only:
        print(f"result columns in one file only (not compared): {' '.join(only)}")
    cols = [c for c in ares.dtype.names if c not in SKIP and c in bres.dtype.names]
    diff = []
    for key in sorted(a, key=lambda k: tuple(str(text(a[k][0][x])) for x in AXES)):
        (ja, ra), (_, rb) = a[key], b[key]
        bad = [c for c in cols if np.asarray(ra[c]).tobytes() != np.asarray(rb[c]).tobytes()]
        if bad:
            diff.append((ja, ra, rb, bad))
    ta, tb = float(np.sum(ares["wall_time_s"])), float(np.sum(bres["wall_time_s"]))
    done = int(np.sum(bres["status"] == 1))
    print(f"{len(a)} jobs, {done} done in {args[1]}; identical {len(a) - len(diff)}, "
          f"different {len(diff)}")
    print(f"job time (sum of wall_time_s): {ta:.2f} s -> {tb:.2f} s, ratio {ta / tb if tb else 0:.2f}x")
    rows = []
    for ja, ra, rb, bad in diff:
        axes = " ".join(f"{x}={text(ja[x])}" for x in AXES)
        what = "; ".join(f"{c} {text(ra[c])} -> {text(rb[c])}" for c in bad if c != "txlog_checksum")
        print(f"  {axes}: {what}")
        rows.append([text(ja[x]) for x in AXES] + [" ".join(bad)] +
                    [text(ra["total_time_us"]), text(rb["total_time_us"])])
    if out:
        with open(out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(list(AXES) + ["columns", "total_time_us_before", "total_time_us_after"])
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
