#!/usr/bin/python3
"""The time shape of a job's steps, from its transaction log (commsweep run --txlog FILE).

usage: scripts/step_shape.py FILE.jsonl [--step S] [--margin C] [--max-period P]

Prints per step its transactions and its span in NoC cycles (first req_inject_cycle to last
rsp_complete_cycle).  With --step, also whether that step's events -- every (cycle, source,
inject) and (cycle, source, completion), cycles relative to the step's start -- repeat with a
period: the smallest P <= --max-period (default 3000) such that every event in the middle of
the step (--margin cycles, default 2000, in from each end) recurs P cycles later.  A network
whose whole state repeats with period P repeats these events too, so "none" rules out skipping
whole periods of the step exactly.
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("txlog")
    ap.add_argument("--step", type=int)
    ap.add_argument("--margin", type=int, default=2000)
    ap.add_argument("--max-period", type=int, default=3000)
    a = ap.parse_args()
    steps = collections.defaultdict(list)
    with open(a.txlog) as f:
        for line in f:
            r = json.loads(line)
            steps[r["step"]].append((r["req_inject_cycle"], r["rsp_complete_cycle"], r["src"]))
    for s in sorted(steps):
        rs = steps[s]
        print(f"step {s}: {len(rs)} transactions, "
              f"{max(r[1] for r in rs) - min(r[0] for r in rs)} cycles")
    if a.step is None:
        return 0
    rs = steps[a.step]
    t0 = min(r[0] for r in rs)
    span = max(r[1] for r in rs) - t0
    events = {(r[0] - t0, r[2], "i") for r in rs} | {(r[1] - t0, r[2], "c") for r in rs}
    middle = [e for e in events if a.margin <= e[0] < span - a.margin]
    if not middle:
        print(f"step {a.step}: no events {a.margin} cycles in from both ends")
        return 0
    for p in range(1, a.max_period + 1):
        if all((c + p, src, k) in events for c, src, k in middle):
            print(f"step {a.step}: its events repeat with period {p} cycles "
                  f"over cycles {a.margin} .. {span - a.margin}")
            return 0
    print(f"step {a.step}: no period up to {a.max_period} cycles over cycles "
          f"{a.margin} .. {span - a.margin} ({len(middle)} events)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
