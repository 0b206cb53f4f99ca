#!/usr/bin/env python3
"""plot.py — PNG plots of a bench/progress/run.sh run, from <dir>/medians.csv
(written by bench/progress/report.py).

    python3 bench/progress/plot.py bench/results/progress-<date>

Writes into <dir>:
  overlap.png     overlap % against the compute time (t / t_comm) for
                  isend and irecv at 1 MiB (or the largest size measured
                  below it), one line per implementation
  reactivity.png  8 B ping-pong latency against K, the compute threads
                  per core on the receiving rank (log scale)
  threads.png     waiters: completion time / N = 0 against N; threads:
                  aggregate message rate against the threads per rank
A plot whose data is missing is left out. matplotlib is optional: without
it the script says so and exits 0 (Debian: python3-matplotlib).
"""
import csv
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # optional
    plt = None

TARGET = 1 << 20  # overlap plot size


def human_size(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def load(root):
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
    return rows, impls


def series(rows, impl, bench, metric, mode=None, size=None):
    """[(x, median, min, max)] sorted by x."""
    pts = []
    for r in rows:
        if (r["impl"], r["bench"], r["metric"]) != (impl, bench, metric):
            continue
        if mode is not None and r["mode"] != mode:
            continue
        if size is not None and r["size"] != str(size):
            continue
        x, m = fnum(r["x"]), fnum(r["median"])
        if x is not None and m is not None:
            pts.append((x, m, fnum(r["min"]), fnum(r["max"])))
    return sorted(pts)


def style(rows, impl):
    kind = next((r["kind"] for r in rows if r["impl"] == impl), "peer")
    return "-" if kind == "proust" else "--"


def draw(ax, rows, impls, bench, metric, mode=None, size=None, band=True, transform=None):
    drawn = False
    for impl in impls:
        pts = series(rows, impl, bench, metric, mode, size)
        if transform:
            pts = transform(impl, pts)
        if not pts:
            continue
        xs = [p[0] for p in pts]
        color = f"C{impls.index(impl) % 10}"  # one colour per implementation in every plot
        ax.plot(xs, [p[1] for p in pts], style(rows, impl), color=color, marker="o", ms=3,
                label=impl)
        if band and all(p[2] is not None and p[3] is not None for p in pts):
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=color, alpha=0.12)
        drawn = True
    return drawn


def save(fig, root, name):
    fig.tight_layout()
    path = os.path.join(root, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot: {path}")


def plot_overlap(root, rows, impls):
    sizes = sorted({int(r["size"]) for r in rows if r["bench"] == "overlap"
                    and r["mode"] in ("isend", "irecv") and r["metric"] == "overlap"})
    if not sizes:
        return
    below = [s for s in sizes if s <= TARGET]
    size = TARGET if TARGET in sizes else (below[-1] if below else sizes[0])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), squeeze=False)
    for ax, mode in zip(axes[0], ("isend", "irecv")):
        draw(ax, rows, impls, "overlap", "overlap", mode, size)
        ax.axhline(100, color="grey", lw=0.6)
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xlabel("compute time / t_comm")
        ax.set_ylabel("overlap % (higher is better)")
        ax.set_title(f"{mode} {human_size(size)}: rank 0 MPI_{mode.capitalize()}, compute, "
                     "MPI_Wait")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", framealpha=0.6)
    save(fig, root, "overlap.png")


def plot_reactivity(root, rows, impls):
    if not any(r["bench"] == "reactivity" for r in rows):
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), squeeze=False)
    for ax, metric, what in zip(axes[0], ("lat_mean", "lat_median"),
                                ("loop time / 2 round trips", "median round trip / 2")):
        draw(ax, rows, impls, "reactivity", metric)
        ax.set_yscale("log")
        ax.set_xlabel("compute threads per core on rank 1 (K)")
        ax.set_ylabel(f"8 B latency, us ({what})")
        ax.set_title("reactivity: ping-pong against a busy receiver")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small", framealpha=0.6)
    save(fig, root, "reactivity.png")


def plot_threads(root, rows, impls):
    have_w = any(r["bench"] == "waiters" for r in rows)
    have_t = any(r["bench"] == "threads" for r in rows)
    if not (have_w or have_t):
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), squeeze=False)
    if have_w:
        def slowdown(impl, pts):
            base = next((p[1] for p in pts if p[0] == 0), None)
            return [(p[0], p[1] / base, None, None) for p in pts] if base else []
        ax = axes[0][0]
        draw(ax, rows, impls, "waiters", "t_median", band=False, transform=slowdown)
        ax.axhline(1, color="grey", lw=0.6)
        ax.set_xlabel("threads waiting in MPI_Recv (N)")
        ax.set_ylabel("compute time / time with N = 0 (lower is better)")
        ax.set_title("waiters: what blocked threads cost a computation")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", framealpha=0.6)
    if have_t:
        ax = axes[0][1]
        draw(ax, rows, impls, "threads", "rate")
        ax.set_yscale("log")
        ax.set_xlabel("threads per rank (N)")
        ax.set_ylabel("messages/s, all threads (higher is better)")
        ax.set_title("threads: concurrent 8 B ping-pongs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small", framealpha=0.6)
    save(fig, root, "threads.png")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if plt is None:
        print("plot: matplotlib not available, no plots (pip install matplotlib, or Debian "
              "python3-matplotlib)")
        return
    root = sys.argv[1]
    rows, impls = load(root)
    plot_overlap(root, rows, impls)
    plot_reactivity(root, rows, impls)
    plot_threads(root, rows, impls)


if __name__ == "__main__":
    main()
