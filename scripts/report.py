#!/usr/bin/python3
"""Draws the report of a commsweep result file: `commsweep report FILE.h5 --out DIR` runs it.

usage: scripts/report.py FILE.h5 FRONTS.json DIR

FRONTS.json is `commsweep pareto --json` of FILE.h5: the fronts come from the C side and are
drawn, never recomputed, here.  Writes into DIR one page, index.html, self-contained (no
network, no script; the PNGs next to it):
  front_N.png        workload N: every point of every engine against the first design objective
                     and the first result objective, the front's points marked and, with two
                     objectives, joined as a staircase
  engines_A_B.png    the first result objective of engine A against engine B on the designs both
                     ran (the same adapter and spec), with the +/-5% band; B, the reference, is the
                     engine that simulated more cycles
  busbw_vs_size.png  bus bandwidth against message size, one panel per primitive, one line per
                     engine (its best design at each size, the range of its designs shaded)
and a table of each front.  Needs Debian's python3-h5py, python3-numpy and python3-matplotlib.
"""
import html
import json
import math
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

BAND = 0.05
PRIMITIVES = ["allreduce", "allgather", "reducescatter", "alltoall", "p2p"]
COLOURS = ["tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown"]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def label(obj):
    unit = f" ({obj['unit']})" if obj.get("unit") else ""
    better = "lower" if obj["goal"] == "min" else "higher"
    return f"{obj['column']}{unit}, {better} is better"


def axes_of(objs):
    """The objectives drawn: x the first design objective, y the first result objective."""
    results = [i for i, o in enumerate(objs) if o["kind"] == "result"]
    designs = [i for i, o in enumerate(objs) if o["kind"] != "result"]
    y = results[0] if results else 0
    rest = [i for i in designs if i != y] + [i for i in results if i != y]
    return (rest[0] if rest else None), y


def staircase(xs, ys, objs, x, y):
    """The 2-D front's points joined in x order (only meaningful with two objectives)."""
    order = sorted(range(len(xs)), key=lambda i: xs[i] * (1 if objs[x]["goal"] == "min" else -1))
    sx, sy = [], []
    for i in order:
        if sx:
            sx.append(xs[i])
            sy.append(sy[-1])
        sx.append(xs[i])
        sy.append(ys[i])
    return sx, sy


def plot_front(workload, groups, objs, engines, path):
    x, y = axes_of(objs)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for g in groups:
        e = engines.index(g["engine"])
        col, mk = COLOURS[e % len(COLOURS)], MARKERS[e % len(MARKERS)]
        pts = g["point"]
        xv = [p["values"][objs[x]["column"]] if x is not None else p["row"] for p in pts]
        yv = [p["values"][objs[y]["column"]] for p in pts]
        front = [i for i, p in enumerate(pts) if p["on_front"]]
        dom = [i for i, p in enumerate(pts) if not p["on_front"]]
        if dom:
            ax.scatter([xv[i] for i in dom], [yv[i] for i in dom], s=14, marker=mk, color=col,
                       alpha=0.25, label=f"{g['engine']}: dominated ({len(dom)})")
        ax.scatter([xv[i] for i in front], [yv[i] for i in front], s=46, marker=mk, color=col,
                   edgecolors="black", linewidths=0.6,
                   label=f"{g['engine']}: front ({len(front)} of {len(pts)})")
        if len(objs) == 2 and x is not None and front:
            sx, sy = staircase([xv[i] for i in front], [yv[i] for i in front], objs, x, y)
            ax.plot(sx, sy, color=col, linewidth=1, alpha=0.8)
    xs = [p["values"][objs[x]["column"]] for g in groups for p in g["point"]] if x is not None else []
    if xs and min(xs) > 0 and max(xs) >= 8 * min(xs):  # powers of two of trackers, bytes
        ax.set_xscale("log", base=2)
    ax.set_xlabel(label(objs[x]) if x is not None else "row of the file")
    ax.set_ylabel(label(objs[y]))
    if all(v > 0 for g in groups for v in (p["values"][objs[y]["column"]] for p in g["point"])):
        ax.set_yscale("log")
    title = workload if len(workload) < 70 else workload[:67] + "..."
    if len(objs) > 2:
        others = ", ".join(o["column"] for i, o in enumerate(objs) if i not in (x, y))
        title += f"\nfront in {len(objs)} objectives (also {others}): see the table"
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def read_rows(h5):
    with h5py.File(h5, "r") as f:
        jobs, res = f["jobs"][()], f["results"][()]
    return jobs, res


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def engine_pairs(doc, res, jobs):
    """{(a, b): [(value on a, value on b, primitive)]} for the designs a and b both ran; b is
    the engine with more simulated cycles per row (the reference)."""
    objs = doc["objectives"]
    _, y = axes_of(objs)
    col = objs[y]["column"]
    by_engine = {}
    for g in doc["groups"]:
        d = by_engine.setdefault(g["engine"], {})
        for p in g["point"]:
            d.setdefault(p["design_id"], []).append(p)
    cycles = {e: np.mean([float(res["sim_cycles"][p[0]["row"]]) for p in d.values()])
              for e, d in by_engine.items()}
    names = sorted(by_engine, key=lambda e: (cycles[e], e))
    pairs = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = [k for k in by_engine[a] if k in by_engine[b]
                      and len(by_engine[a][k]) == 1 and len(by_engine[b][k]) == 1]
            if common:
                pairs[(a, b)] = [(by_engine[a][k][0]["values"][col], by_engine[b][k][0]["values"][col],
                                  text(jobs["primitive"][by_engine[b][k][0]["row"]])) for k in common]
    return pairs, objs[y]


def plot_pair(a, b, rows, obj, path):
    fig, ax = plt.subplots(figsize=(5.6, 5))
    va = np.array([r[0] for r in rows])
    vb = np.array([r[1] for r in rows])
    prims = [r[2] for r in rows]
    for k, prim in enumerate(p for p in PRIMITIVES if p in prims):
        s = np.array([q == prim for q in prims])
        ax.scatter(vb[s], va[s], s=14, color=COLOURS[k % len(COLOURS)], label=prim)
    lo, hi = min(va.min(), vb.min()), max(va.max(), vb.max())
    positive = lo > 0
    line = np.geomspace(lo, hi, 50) if positive else np.linspace(lo, hi, 50)
    ax.plot(line, line, color="black", linewidth=1, label=f"{a} = {b}")
    ax.fill_between(line, line * (1 - BAND), line * (1 + BAND), color="grey", alpha=0.25,
                    label=f"+/-{BAND:.0%}")
    if positive:
        ax.set_xscale("log")
        ax.set_yscale("log")
    unit = f" ({obj['unit']})" if obj.get("unit") else ""
    ax.set_xlabel(f"{obj['column']} on {b}{unit}")
    ax.set_ylabel(f"{obj['column']} on {a}{unit}")
    ax.set_title(f"{a} against {b}: {len(rows)} designs", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    err = np.where(vb != 0, (va - vb) / np.where(vb != 0, vb, 1), np.inf)
    finite = err[np.isfinite(err)]
    return {"rmspe": float(np.sqrt(np.mean(finite ** 2))) if len(finite) else math.nan,
            "within": int(np.sum(np.abs(err) <= BAND)), "worst": float(np.max(np.abs(err)))}


def plot_busbw(jobs, res, path):
    done = res["status"] == 1
    prim = np.array([text(v) for v in jobs["primitive"]])
    eng = np.array([text(v) for v in jobs["engine"]])
    prims = [p for p in PRIMITIVES if np.any(done & (prim == p))]
    if not prims:
        return False
    engines = sorted(set(eng[done]))
    fig, axes = plt.subplots(1, len(prims), figsize=(4.3 * len(prims), 3.8), squeeze=False)
    for ax, p in zip(axes[0], prims):
        for k, e in enumerate(engines):
            s = done & (prim == p) & (eng == e)
            sizes = sorted(set(jobs["msg_size_bytes"][s]))
            if not sizes:
                continue
            bw = [res["bus_bw_gb_per_s"][s & (jobs["msg_size_bytes"] == m)] for m in sizes]
            col = COLOURS[k % len(COLOURS)]
            ax.plot(sizes, [v.max() for v in bw], marker=MARKERS[k % len(MARKERS)], color=col,
                    label=f"{e}: best design")
            ax.fill_between(sizes, [v.min() for v in bw], [v.max() for v in bw], color=col,
                            alpha=0.15)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(p)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("bus bandwidth against message size (shaded: the range of the designs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def fmt(v):
    return f"{v:.6g}" if isinstance(v, float) else html.escape(str(v))


def front_table(groups, objs):
    head = "".join(f"<th>{html.escape(o['column'])}" + (f" ({html.escape(o['unit'])})" if o.get("unit") else "")
                   + "</th>" for o in objs)
    out = [f"<table><tr><th>engine</th><th>row</th>{head}<th>design</th></tr>"]
    for g in groups:
        for p in g["point"]:
            if not p["on_front"]:
                continue
            vals = "".join(f"<td class=n>{fmt(p['values'][o['column']])}</td>" for o in objs)
            design = ", ".join(f"{html.escape(k)}={fmt(v)}" for k, v in p["design"].items()) or "-"
            out.append(f"<tr><td>{html.escape(g['engine'])}</td><td class=n>{p['row']}</td>{vals}"
                       f"<td>{design}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1.5em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}td.n{text-align:right}
th{background:#eee}h2{border-bottom:1px solid #999;margin-top:2em}img{max-width:100%}"""


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    h5, fronts, out = sys.argv[1:4]
    with open(fronts) as f:
        doc = json.load(f)
    jobs, res = read_rows(h5)
    objs = doc["objectives"]
    engines = sorted({g["engine"] for g in doc["groups"]})
    workloads = []
    for g in doc["groups"]:
        if not workloads or workloads[-1][0] != g["workload_text"]:
            workloads.append((g["workload_text"], []))
        workloads[-1][1].append(g)
    rows = doc["rows"]
    goals = "; ".join(f"{'minimize' if o['goal'] == 'min' else 'maximize'} {html.escape(o['column'])}"
                      + (f" ({html.escape(o['unit'])})" if o.get("unit") else "") for o in objs)
    wl = ", ".join(html.escape(w["column"]) for w in doc["workload"])
    body = [f"<h1>commsweep report: {html.escape(os.path.basename(h5))}</h1>",
            f"<p>Objectives: {goals}. A workload is one value of: {wl}. A point is on the front "
            "when no other point of its workload and engine is as good in every objective and "
            "better in one (docs/pareto.md).</p>",
            f"<p>{rows['rows']} rows; {sum(g['points'] for g in doc['groups'])} points in "
            f"{len(doc['groups'])} fronts; left out: {rows['not_done']} not done, "
            f"{rows['corrupt']} corrupt, {rows['missing']} without a value, {rows['filtered']} "
            "filtered.</p>",
            "<h2>Engines against each other</h2>"]
    pairs, pobj = engine_pairs(doc, res, jobs)
    if not pairs:
        body.append("<p>No design has rows on two engines.</p>")
    for (a, b), prs in sorted(pairs.items()):
        name = f"engines_{a}_{b}.png"
        st = plot_pair(a, b, prs, pobj, os.path.join(out, name))
        body.append(f"<p>{html.escape(pobj['column'])} of {html.escape(a)} against "
                    f"{html.escape(b)} on {len(prs)} designs: RMSPE {100 * st['rmspe']:.2f}%, "
                    f"{st['within']} within +/-{BAND:.0%}, worst {100 * st['worst']:.1f}%.</p>"
                    f"<img src=\"{name}\" alt=\"{html.escape(a)} against {html.escape(b)}\">")
    body.append("<h2>Bus bandwidth against message size</h2>")
    if plot_busbw(jobs, res, os.path.join(out, "busbw_vs_size.png")):
        body.append('<img src="busbw_vs_size.png" alt="bus bandwidth against message size">')
    else:
        body.append("<p>No done rows.</p>")
    body.append("<h2>Fronts</h2>")
    for i, (w, groups) in enumerate(workloads):
        name = f"front_{i}.png"
        plot_front(w, groups, objs, engines, os.path.join(out, name))
        counts = "; ".join(f"{html.escape(g['engine'])}: {g['on_front']} on the front, "
                           f"{g['dominated']} dominated" for g in groups)
        body.append(f"<h3>{html.escape(w)}</h3><p>{counts}</p>"
                    f"<img src=\"{name}\" alt=\"front of {html.escape(w)}\">")
        body.append(front_table(groups, objs))
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>commsweep report</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
