#!/usr/bin/python3
"""Compares the Pareto fronts of two result files, workload by workload: a dense grid's
against a refinement's (or any two), as `commsweep pareto --json` computed them.

usage: scripts/pareto_compare.py DENSE.json REFINED.json [--engine E] [--quiet]

For each workload of DENSE (the reference) on engine E (default: every engine of DENSE), prints
the front sizes, the points of DENSE's front that REFINED's misses and the points of REFINED's
front that are not on DENSE's (matched by cache key, so the same job on the same engine), and
the points each file holds.  Exit status 0 when every front is equal, 1 otherwise, 2 on a
usage error.
"""
import argparse
import json
import sys


def fronts(doc, engine):
    out = {}
    for g in doc["groups"]:
        if engine and g["engine"] != engine:
            continue
        key = (g["workload_text"], g["engine"])
        out[key] = ({p["key"] for p in g["point"] if p["on_front"]}, len(g["point"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dense")
    ap.add_argument("refined")
    ap.add_argument("--engine")
    ap.add_argument("--quiet", action="store_true", help="only the summary line")
    a = ap.parse_args()
    with open(a.dense) as f:
        dense = fronts(json.load(f), a.engine)
    with open(a.refined) as f:
        refined = fronts(json.load(f), a.engine)
    equal = missed = false = 0
    points_dense = points_refined = 0
    if not a.quiet:
        print(f"{'dense':>6} {'refined':>7} {'front':>5} {'front':>7} {'missed':>6} {'false':>5}"
              "  workload | engine")
    for key in sorted(dense):
        df, dn = dense[key]
        rf, rn = refined.get(key, (set(), 0))
        m, x = len(df - rf), len(rf - df)
        equal += m == 0 and x == 0
        missed += m
        false += x
        points_dense += dn
        points_refined += rn
        if not a.quiet:
            print(f"{dn:6d} {rn:7d} {len(df):5d} {len(rf):7d} {m:6d} {x:5d}  {key[0]} | {key[1]}")
    extra = sorted(set(refined) - set(dense))
    for key in extra:
        false += len(refined[key][0])
        if not a.quiet:
            print(f"{0:6d} {refined[key][1]:7d} {0:5d} {len(refined[key][0]):7d} {0:6d} "
                  f"{len(refined[key][0]):5d}  {key[0]} | {key[1]} (not in the dense file)")
    total = len(dense) + len(extra)
    share = 100.0 * points_refined / points_dense if points_dense else 0.0
    print(f"fronts equal: {equal} of {total} workloads; front points missed: {missed}, false: "
          f"{false}; points: {points_refined} refined against {points_dense} dense ({share:.1f}%)")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main())
