#!/usr/bin/python3
"""Fault injection into a sweep's writes: the file survives every kill and every full disk.

usage: fault_inject.py BIN SWEEP.json BASE.h5|- CLEAN.h5 [options]

  BIN        the commsweep binary
  SWEEP.json the sweep to run over a copy of BASE.h5 (`-`: into a new file)
  CLEAN.h5   the same sweep run without faults (the reference)

options:
  --faults kill,enospc   which faults (default both): SIGKILL at the N-th pwrite64, or that
                         write failing with ENOSPC (strace -e inject=pwrite64:...:when=N)
  --every                N = 1 .. every write of the structural step (default)
  --sample K             K values of N spread evenly over the structural step instead
  --merge K              also K values of N spread evenly over the writes of the closing
                         structural step (the merge of the log spools)
  --random K             also K values of N drawn at random over all the sweep's writes
                         (the work phase included), seed --seed (default 1)
  --timed K              also K kill -9 at random moments (0 .. the clean run's wall time)
  --ranks R              run the faulted sweep under mpirun -np R (default: one process)

For every fault: the faulted run must not succeed silently (a kill is rc != 0 unless it came
after the last write; ENOSPC must name "No space left on device"); the file must then open
with h5py and `commsweep show`, every row BASE.h5 had done must be there with identical
bytes; the rerun must exit 0, leave no lock and no staged copy, and equal CLEAN.h5 in every
column but wall_time_s.  Prints one line per fault and a total; exits 1 at the first failure.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# LeakSanitizer cannot run under ptrace (strace): off for the traced runs of an ASan build
TRACED_ENV = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
sys.path.insert(0, HERE)
from sweep_compare import compare  # noqa: E402


def descendants(root):
    """Every process below root, from /proc."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        todo += kids
    return found


def sweep_cmd(args, out, ranks):
    cmd = [args.bin, "sweep", args.sweep, "--out", out, "-q"]
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks)] + cmd
    return cmd


ROW_SETS = ("jobs", "job_json", "results", "errors")  # one row per job, same index


def done_rows(path):
    """The rows (/jobs, /job_json, /results, /errors) of every finished row, by index."""
    with h5py.File(path, "r") as f:
        sets = [f[name][()] for name in ROW_SETS]
    keep = np.nonzero(sets[2]["status"] != 0)[0]
    return keep, [s[keep] for s in sets]


def count_writes(args, work):
    """pwrite64 calls of a clean run over BASE: (structural step, (first, last) write of the
    merge of the log spools, total)."""
    out = os.path.join(work, "count.h5")
    prepare(args, out)
    trace = os.path.join(work, "count.strace")
    subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=pwrite64,rename,openat",
                    *sweep_cmd(args, out, 1)], check=True, stdout=subprocess.DEVNULL,
                   env=TRACED_ENV)
    structural = total = 0
    renames, staged_at = 0, 0
    merge = (0, 0)
    with open(trace) as f:
        for line in f:
            if "pwrite64(" in line:
                total += 1
                structural += renames == 0
            elif "openat(" in line and ".staged" in line and "O_CREAT" in line:
                staged_at = total
            elif "rename(" in line and ".staged" in line:
                renames += 1
                if renames > 1:
                    merge = (staged_at + 1, total)
    cleanup(out)
    return structural, merge, total


def prepare(args, out):
    cleanup(out)
    if args.base != "-":
        shutil.copyfile(args.base, out)


def spools(out):
    d, base = os.path.split(os.path.abspath(out))
    return [os.path.join(d, n) for n in os.listdir(d) if n.startswith(base + ".spool.")]


def cleanup(out):
    for path in [out + s for s in ("", ".staged", ".lock")] + spools(out):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def check_after(args, out, base_rows, what):
    """The faulted file opens and keeps every row BASE had finished."""
    if not os.path.exists(out):
        if args.base != "-":
            return f"{what}: the file is gone"
        return None
    r = subprocess.run([args.bin, "show", out], capture_output=True, text=True)
    if r.returncode != 0:
        return f"{what}: commsweep show fails: {r.stderr.strip()}"
    if base_rows is None:
        return None
    keep, before_sets = base_rows
    try:
        with h5py.File(out, "r") as f:
            if len(f["results"]) < (keep[-1] + 1 if len(keep) else 0):
                return f"{what}: {len(f['results'])} rows, fewer than before"
            now_sets = [f[name][()][keep] for name in ROW_SETS]
    except OSError as e:
        return f"{what}: h5py cannot read it: {e}"
    for name, before, now in zip(ROW_SETS, before_sets, now_sets):
        for col in before.dtype.names or (None,):  # by column: the dtype may have gaps
            b, n = (before, now) if col is None else (before[col], now[col])
            if np.ascontiguousarray(b).tobytes() != np.ascontiguousarray(n).tobytes():
                return f"{what}: /{name} {col or ''} of a row finished before the sweep changed"
    return None


def one(args, work, fault, n, base_rows, log):
    out = os.path.join(work, "victim.h5")
    prepare(args, out)
    what = f"{fault} at write {n}" if fault != "timed" else f"kill -9 after {n:.3f} s"
    env = dict(os.environ)
    if fault == "timed":
        p = subprocess.Popen(sweep_cmd(args, out, args.ranks), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True, env=env)
        time.sleep(n)
        # every process of the sweep at once (mpirun's ranks may sit in their own groups)
        for pid in [p.pid] + descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, err = p.communicate()
        rc = p.returncode
    else:
        inject = "signal=KILL" if fault == "kill" else "error=ENOSPC"
        r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64",
                            "-e", f"inject=pwrite64:{inject}:when={n}",
                            *sweep_cmd(args, out, args.ranks)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=TRACED_ENV)
        rc, err = r.returncode, r.stderr
    err = err.decode(errors="replace") if isinstance(err, bytes) else err
    if fault == "enospc" and rc != 0 and "No space left on device" not in err:
        return f"{what}: rc {rc} without 'No space left on device': {err.strip()[-400:]}"
    problem = check_after(args, out, base_rows, what)
    if problem:
        return problem
    r = subprocess.run(sweep_cmd(args, out, 1), capture_output=True, text=True)
    if r.returncode != 0:
        return f"{what}: the rerun fails (rc {r.returncode}): {r.stderr.strip()[-400:]}"
    for suffix in (".lock", ".staged"):
        if os.path.exists(out + suffix):
            return f"{what}: {out + suffix} left after the rerun"
    if spools(out):
        return f"{what}: log spools left after the rerun: {spools(out)}"
    diff = compare(args.clean, out)
    if diff:
        return f"{what}: the rerun differs from a clean run: {diff}"
    log.write(f"  {what}: faulted rc {rc}, file intact, rerun equals the clean run\n")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("sweep")
    ap.add_argument("base")
    ap.add_argument("clean")
    ap.add_argument("--faults", default="kill,enospc")
    ap.add_argument("--every", action="store_true")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--merge", type=int, default=0)
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--timed", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--work", default=".")
    args = ap.parse_args()
    work = args.work
    structural, merge, total = count_writes(args, work)
    if structural == 0:
        print("no write before the staged file is renamed: nothing to test")
        return 1
    if args.sample:
        ns = sorted({1 + (structural - 1) * k // max(args.sample - 1, 1)
                     for k in range(args.sample)})
    else:
        ns = list(range(1, structural + 1))
    if args.merge and merge[1] >= merge[0] > 0:
        ns += sorted({merge[0] + (merge[1] - merge[0]) * k // max(args.merge - 1, 1)
                      for k in range(args.merge)})
    rng = random.Random(args.seed)
    extra = sorted(rng.randint(1, total) for _ in range(args.random))
    base_rows = done_rows(args.base) if args.base != "-" else None
    t0 = time.time()
    subprocess.run(sweep_cmd(args, os.path.join(work, "timing.h5"), args.ranks), check=True,
                   stdout=subprocess.DEVNULL)
    clean_s = time.time() - t0
    cleanup(os.path.join(work, "timing.h5"))
    print(f"{args.sweep} over {args.base}: {structural} writes in the structural step, "
          f"writes {merge[0]}..{merge[1]} merge the log spools, {total} in all; "
          f"clean run {clean_s:.2f} s")
    faults = [f for f in args.faults.split(",") if f]
    runs = [(f, n) for f in faults for n in ns + extra]
    runs += [("timed", rng.uniform(0, clean_s)) for _ in range(args.timed)]
    for fault, n in runs:
        problem = one(args, work, fault, n, base_rows, sys.stdout)
        if problem:
            print("FAIL " + problem)
            return 1
    print(f"{len(runs)} faults: 0 files unreadable, 0 earlier rows lost, every rerun equal to "
          f"the clean run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
