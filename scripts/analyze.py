#!/usr/bin/python3
"""Summary CSV and plots of a commsweep result file.

usage: scripts/analyze.py FILE.h5 [--out DIR] [--topology T] [--engine E] [--size BYTES]

Writes into DIR (default: FILE's name without .h5, plus "-analysis"):
  summary.csv             one line per finished job: inputs, EngineResult, algbw
  busbw_vs_size.png       bus bandwidth against message size, one panel per primitive, one line
                          per participant count (the best configuration at each size)
  pareto_outstanding.png  total time against outstanding trackers (mst_rd + mst_wr + slv_rd +
                          slv_wr), one panel per primitive at one message size (--size, default
                          the largest), one colour per participant set: every configuration as a
                          dot and the Pareto front as a line -- the settings no other setting of
                          the same workload beats on both fewer trackers and less time
  allreduce_algorithms.png  (when the file holds allreduce by more than one algorithm) bus
                          bandwidth against message size, one panel per network, one line per
                          algorithm (ring, dimring, dimring_rsag), best outstanding setting each
  layouts.png             (when the file holds more than one network) bus bandwidth against the
                          GDMA trackers (mst_rd_outstanding), one panel per primitive and message
                          size, one line per design (engine and network), the best burst length
                          and other settings at each point: which layout for which collective

The network of a job is its /jobs network column ("2die_spread (5x4)", "torus:4x4 (dor_dateline)",
as its engine names it); in a file of schema version 5, which has none, the "topology" of its
engine's options when the engine has one, else the adapter's die topology.  --topology T keeps
the jobs whose network is T or names it as a word (2die_spread, 5x4, torus:4x4).

Needs Debian's python3-h5py, python3-numpy and python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import csv
import json
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

PRIMITIVES = ["allreduce", "allgather", "reducescatter", "alltoall", "p2p"]
JOB_COLS = ["key", "sweep", "primitive", "algorithm", "num_participants", "participants",
            "msg_size_bytes", "dtype", "engine", "topology", "num_dies", "dcin_layout",
            "mst_rd_outstanding", "mst_wr_outstanding", "slv_rd_outstanding",
            "slv_wr_outstanding", "burst_length", "bw_bytes"]
RES_COLS = ["total_time_us", "bus_bw_gb_per_s", "req_phase_us", "rsp_phase_us",
            "max_chip_latency_us", "straggler_ratio", "total_comm_bytes", "algorithm_steps",
            "sim_cycles", "num_transactions", "retries", "block_rn", "block_sn", "block_d2d",
            "cross_die_transactions", "cross_die_bytes", "wall_time_s"]


def text(a):
    return np.array([v.decode() for v in a])


def network_of(job_json):
    try:
        job = json.loads(job_json)
        eng = job["engine"]
        opts = eng.get(eng["name"], {})
        return opts.get("topology") or job["adapter"]["topology"]
    except (ValueError, KeyError, TypeError):
        return "?"


def load(path, topology=None, engine=None):
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") != "commsweep":
            sys.exit(f"{path}: not a commsweep file")
        jobs, res = f["jobs"][()], f["results"][()]
        job_json = None if "network" in jobs.dtype.names else f["job_json"][()]
    done = res["status"] == 1
    t = {c: (text(jobs[c]) if jobs.dtype[c].kind == "S" else jobs[c]) for c in JOB_COLS}
    t.update({c: res[c] for c in RES_COLS})
    t["row"] = np.arange(len(jobs))
    t["network"] = (text(jobs["network"]) if job_json is None
                    else np.array([network_of(j) for j in text(job_json)]))
    keep = done.copy()
    if topology:
        words = [n.replace("(", " ").replace(")", " ").split() for n in t["network"]]
        keep &= np.array([topology == n or topology in w for n, w in zip(t["network"], words)])
    if engine:
        keep &= t["engine"] == engine
    t = {c: v[keep] for c, v in t.items()}
    t["algbw_gb_per_s"] = t["msg_size_bytes"] / (t["total_time_us"] * 1e3)
    t["outstanding"] = (t["mst_rd_outstanding"] + t["mst_wr_outstanding"] +
                        t["slv_rd_outstanding"] + t["slv_wr_outstanding"])
    return t, int(np.sum(~done))


def write_summary(t, path):
    cols = ["row"] + JOB_COLS + ["network"] + RES_COLS + ["algbw_gb_per_s"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i in range(len(t["row"])):
            w.writerow([t[c][i] if t[c].dtype.kind != "f" else repr(float(t[c][i])) for c in cols])


def primitives_in(t):
    return [p for p in PRIMITIVES if np.any(t["primitive"] == p)]


def plot_busbw(t, path):
    prims = primitives_in(t)
    fig, axes = plt.subplots(1, len(prims), figsize=(4.5 * len(prims), 4), squeeze=False)
    for ax, prim in zip(axes[0], prims):
        sel = t["primitive"] == prim
        engines = sorted(set(t["engine"][sel]))
        styles = dict(zip(engines, ["-", "--", ":", "-."]))
        for n in sorted(set(t["num_participants"][sel])):
            color = None
            for eng in engines:  # one colour per N, one line style per engine
                s = sel & (t["num_participants"] == n) & (t["engine"] == eng)
                sizes = sorted(set(t["msg_size_bytes"][s]))
                if not sizes:
                    continue
                best = [t["bus_bw_gb_per_s"][s & (t["msg_size_bytes"] == m)].max() for m in sizes]
                label = f"N = {n}" + (f", {eng}" if len(engines) > 1 else "")
                line, = ax.plot(sizes, best, marker="o", linestyle=styles[eng], color=color,
                                label=label)
                color = line.get_color()
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(prim)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("bus bandwidth vs message size (best configuration per point)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_allreduce_algorithms(t, path):
    """Ring against the dimension-decomposed allreduces, per network; False when nothing to do."""
    sel = t["primitive"] == "allreduce"
    algos = [a for a in ("ring", "dimring", "dimring_rsag") if np.any(sel & (t["algorithm"] == a))]
    if len(algos) < 2:
        return False
    nets = sorted(set(t["network"][sel]))
    fig, axes = plt.subplots(1, len(nets), figsize=(4.5 * len(nets), 4), squeeze=False)
    styles = {"ring": "o-", "dimring": "s--", "dimring_rsag": "^:"}
    for ax, net in zip(axes[0], nets):
        for algo in algos:
            s = sel & (t["network"] == net) & (t["algorithm"] == algo)
            sizes = sorted(set(t["msg_size_bytes"][s]))
            if not sizes:
                continue
            best = [t["bus_bw_gb_per_s"][s & (t["msg_size_bytes"] == m)].max() for m in sizes]
            ax.plot(sizes, best, styles[algo], label=algo)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(f"allreduce on {net}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("flat ring vs dimension-decomposed allreduce (best outstanding setting per point)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_layouts(t, path):
    """Bus bandwidth against GDMA trackers per design; False when the file has one network."""
    designs = sorted(set(zip(t["engine"], t["network"])))
    if len(designs) < 2:
        return False
    prims = primitives_in(t)
    sizes = [int(m) for m in sorted(set(t["msg_size_bytes"]))[-4:]]
    fig, axes = plt.subplots(len(prims), len(sizes), figsize=(4.2 * len(sizes), 3.6 * len(prims)),
                             squeeze=False, sharex=True)
    marks = "osD^v<>px"
    for row, prim in enumerate(prims):
        for col, size in enumerate(sizes):
            ax = axes[row][col]
            sel = (t["primitive"] == prim) & (t["msg_size_bytes"] == size)
            for k, (eng, net) in enumerate(designs):
                s = sel & (t["engine"] == eng) & (t["network"] == net)
                x = sorted(set(t["mst_rd_outstanding"][s]))
                if not x:
                    continue
                best = [t["bus_bw_gb_per_s"][s & (t["mst_rd_outstanding"] == v)].max() for v in x]
                ax.plot(x, best, marker=marks[k % len(marks)], color=f"C{k}",
                        linestyle="--" if eng == "math" else "-", label=f"{eng} {net}")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{prim}, {size // 1024} KiB" if size < 1 << 20 else
                         f"{prim}, {size >> 20} MiB", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            if row == len(prims) - 1:
                ax.set_xlabel("GDMA trackers (mst_rd/wr_outstanding)")
            if col == 0:
                ax.set_ylabel("bus bandwidth (GB/s)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(designs), 5), fontsize=9)
    fig.suptitle("which layout for which collective: bus bandwidth per design "
                 "(best burst length at each point)")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def pareto(x, y):
    """Indices of the points not dominated (smaller-or-equal x and strictly smaller y)."""
    order = np.lexsort((y, x))
    front, best = [], np.inf
    for i in order:
        if y[i] < best:
            front.append(i)
            best = y[i]
    return np.array(front, dtype=int)


def plot_pareto(t, size, path):
    prims = primitives_in(t)
    fig, axes = plt.subplots(1, len(prims), figsize=(4.5 * len(prims), 4), squeeze=False)
    for ax, prim in zip(axes[0], prims):
        sel = t["primitive"] == prim
        m = size if size else (t["msg_size_bytes"][sel].max() if np.any(sel) else 0)
        s = sel & (t["msg_size_bytes"] == m)
        sets = sorted(set(t["participants"][s]), key=lambda p: (len(p.split(",")), p))[:6]
        for k, parts in enumerate(sets):
            g = s & (t["participants"] == parts)
            x, y = t["outstanding"][g].astype(float), t["total_time_us"][g]
            label = f"N={len(parts.split(','))}: {parts if len(parts) < 20 else parts[:17] + '...'}"
            ax.scatter(x, y, s=12, alpha=0.4, color=f"C{k}")
            f = pareto(x, y)
            ax.plot(x[f], y[f], color=f"C{k}", marker="D", label=label + " (front)")
        ax.set_xlabel("outstanding trackers (mst rd+wr + slv rd+wr)")
        ax.set_ylabel("total time (us)")
        ax.set_title(f"{prim}, {int(m)} B")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("total time against outstanding settings")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--out")
    ap.add_argument("--topology")
    ap.add_argument("--engine")
    ap.add_argument("--size", type=int)
    a = ap.parse_args()
    out = a.out or os.path.splitext(a.file)[0] + "-analysis"
    os.makedirs(out, exist_ok=True)
    t, unfinished = load(a.file, a.topology, a.engine)
    if len(t["row"]) == 0:
        sys.exit(f"{a.file}: no finished job matches")
    write_summary(t, os.path.join(out, "summary.csv"))
    plot_busbw(t, os.path.join(out, "busbw_vs_size.png"))
    plot_pareto(t, a.size, os.path.join(out, "pareto_outstanding.png"))
    extra = ""
    if plot_allreduce_algorithms(t, os.path.join(out, "allreduce_algorithms.png")):
        extra = ", allreduce_algorithms.png"
    if plot_layouts(t, os.path.join(out, "layouts.png")):
        extra += ", layouts.png"
    print(f"{a.file}: {len(t['row'])} finished jobs ({unfinished} not done in the file) -> "
          f"{out}/summary.csv, busbw_vs_size.png, pareto_outstanding.png{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
