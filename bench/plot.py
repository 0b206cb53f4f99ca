#!/usr/bin/env python3
"""plot.py — PNG plots of a bench/run.sh run, from <dir>/medians.csv.

    python3 bench/plot.py bench/results/<date>

Writes <dir>/pingpong-<transport>.png (latency, bandwidth, bidirectional
bandwidth against message size, one line per implementation, median with
min-max band) and <dir>/multiflow.png (ns per message, one panel per
transport, one bar per implementation). Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"lat": "latency (us, half round trip)", "bw": "bandwidth (MB/s)",
         "bibw": "bidirectional bandwidth (MB/s)"}


def human_size(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    with open(os.path.join(root, "medians.csv")) as f:
        rows = list(csv.DictReader(f))
    impls = []  # run.sh's order (impls.tsv), then any other
    tsv = os.path.join(root, "impls.tsv")
    if os.path.exists(tsv):
        with open(tsv) as f:
            impls = [line.split("\t")[0] for line in f if line.strip()]
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    impls = [i for i in impls if any(r["impl"] == i for r in rows)]
    style = {i: ("-" if k == "proust" else "--") for i, k in ((r["impl"], r["kind"]) for r in rows)}

    for transport in sorted({r["transport"] for r in rows}):
        pp = [r for r in rows if r["transport"] == transport and r["test"] == "pingpong"]
        metrics = [m for m in ("lat", "bw", "bibw") if any(r["metric"] == m for r in pp)]
        if not metrics:
            continue
        fig, axes = plt.subplots(1, len(metrics), figsize=(6 * len(metrics), 4.5), squeeze=False)
        for ax, metric in zip(axes[0], metrics):
            for impl in impls:
                pts = sorted((int(r["size"]), float(r["median"]), float(r["min"]), float(r["max"]))
                             for r in pp if r["metric"] == metric and r["impl"] == impl)
                pts = [p for p in pts if p[0] > 0]  # log axis
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                ax.plot(xs, [p[1] for p in pts], style.get(impl, "-"), marker=".", label=impl)
                ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], alpha=0.15)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(UNITS[metric])
            ax.set_title(f"{transport}: {metric}")
            top = max((int(r["size"]) for r in pp if r["metric"] == metric), default=1)
            ticks = [1 << k for k in range(0, 41, 2 if top <= (1 << 16) else 4) if (1 << k) <= top]
            ax.set_xticks(ticks, [human_size(t) for t in ticks])
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        path = os.path.join(root, f"pingpong-{transport}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"plot: {path}")

    mf = [r for r in rows if r["test"] == "multiflow"]
    if mf:
        transports = sorted({r["transport"] for r in mf})
        mf_impls = [i for i in impls if any(r["impl"] == i for r in mf)]
        fig, axes = plt.subplots(1, len(transports), figsize=(5.5 * len(transports), 4.5),
                                 squeeze=False)
        width = 0.8 / max(1, len(mf_impls))
        for ax, transport in zip(axes[0], transports):
            cases = sorted({r["metric"] for r in mf if r["transport"] == transport})
            for j, impl in enumerate(mf_impls):
                xs, ys = [], []
                for g, case in enumerate(cases):
                    for r in mf:
                        if (r["impl"], r["transport"], r["metric"]) == (impl, transport, case):
                            xs.append(g + (j - (len(mf_impls) - 1) / 2) * width)
                            ys.append(float(r["median"]))
                ax.bar(xs, ys, width, label=impl)
            ax.set_xticks(range(len(cases)), cases)
            ax.set_ylabel("ns per message (lower is better)")
            ax.set_title(f"{transport}: multiflow")
            ax.legend(fontsize="small", framealpha=0.6)
        fig.tight_layout()
        path = os.path.join(root, "multiflow.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"plot: {path}")

if __name__ == "__main__":
    main()
