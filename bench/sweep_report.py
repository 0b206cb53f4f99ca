#!/usr/bin/env python3
"""sweep_report.py — the matrix of Proust / best-peer ratios of a sweep.

    python3 bench/sweep_report.py bench/results/<date> [--plots] [--best]

Reads <dir>/raw/<transport>/<impl>/sweep.np<N>.<rep>.txt (lines
"sweep:np=<N> <pattern> <size> <us>", bench/mpi/sweep.c) and <dir>/impls.tsv
(name, kind: "proust" or "peer"). Every value is a time: lower is better.

For each cell (transport, ranks, pattern, size): each implementation's
median over the repetitions and its spread, (max - min) / median; the
ratio Proust / best peer (> 1: a peer is faster); the cell's spread, the
larger of Proust's and that peer's. A peer *wins* a cell when the ratio
exceeds 1 + the cell's spread: what repetitions cannot explain. With
--best, each implementation's best (lowest) repetition stands for it
instead of the median: on a machine whose speed switches between modes for
minutes at a time (this 2-core VM: an 8 B round trip of 0.24 or 0.64 us,
whichever the MPI), a median of three decides which mode two runs fell in.

Prints, and writes to <dir>/sweep.md: the cells a peer wins, worst first;
the spread over all cells; then one matrix per transport and number of
ranks (rows: patterns, columns: sizes; a peer's win marked with '!').
Writes <dir>/sweep.csv, and with --plots (matplotlib) one PNG per pattern
in <dir>/plots/: time against size, a panel per (transport, ranks).
Standard library only, but for the plots.
"""
import csv
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import load_kinds, geomean, human_size  # noqa: E402

LINE = re.compile(r"^sweep:np=(\d+) (\S+) (\d+) ([0-9.eE+-]+)$")


def load(root):
    """{(tr, np, pattern, size): {impl: [values]}}"""
    cells = {}
    for path in glob.glob(os.path.join(root, "raw", "*", "*", "sweep.np*.*.txt")):
        parts = path.split(os.sep)
        tr, impl = parts[-3], parts[-2]
        with open(path) as f:
            for line in f:
                m = LINE.match(line.strip())
                if not m:
                    continue
                key = (tr, int(m.group(1)), m.group(2), int(m.group(3)))
                cells.setdefault(key, {}).setdefault(impl, []).append(float(m.group(4)))
    return cells


STAT = statistics.median  # --best: min


def spread(values):
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med > 0 else 0.0


def analyse(cells, kinds):
    """One row per (cell, Proust implementation) with a peer to compare."""
    rows = []
    for key, by_impl in sorted(cells.items()):
        peers = {i: v for i, v in by_impl.items() if kinds.get(i) == "peer"}
        if not peers:
            continue
        best = min(peers, key=lambda i: STAT(peers[i]))
        b = STAT(peers[best])
        for impl, vals in by_impl.items():
            if kinds.get(impl) != "proust":
                continue
            p = STAT(vals)
            if b > 0:
                ratio = p / b
            else:
                ratio = 1.0 if p <= 0 else float("inf")
            sp = max(spread(vals), spread(peers[best]))
            rows.append({"transport": key[0], "np": key[1], "pattern": key[2], "size": key[3],
                         "impl": impl, "proust_us": p, "peer": best, "peer_us": b,
                         "ratio": ratio, "spread": sp, "reps": len(vals),
                         "peer_wins": ratio > 1 + sp})
    return rows


ORDER = ["latency", "bw", "bibw", "sendrecv", "exchange", "barrier", "bcast", "reduce",
         "allreduce", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
         "alltoall", "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan"]


def pattern_order(rows):
    """sweep.c's order, each collective's blocking form before its i form."""
    seen = {r["pattern"] for r in rows}
    order = [p for name in ORDER for p in (name, "i" + name) if p in seen]
    return order + sorted(seen - set(order))


def report(root, rows):
    out = []
    w = out.append
    meta = os.path.join(root, "meta.txt")
    w("# Sweep: Proust / best peer, time ratios (> 1: a peer is faster)\n")
    if os.path.exists(meta):
        with open(meta) as f:
            for line in f:
                if line.startswith(("date:", "cpu:", "git:", "reps:")):
                    w("    " + line.rstrip())
        w("")
    if not rows:
        w("no sweep results")
        return "\n".join(out)
    w("Each implementation's " + ("best (lowest) repetition" if STAT is min else "median")
      + " of the repetitions.\n")
    spreads = [r["spread"] for r in rows]
    wins = sorted((r for r in rows if r["peer_wins"]), key=lambda r: -r["ratio"])
    ahead = [r for r in rows if r["ratio"] < 1 - r["spread"]]
    w(f"{len(rows)} cells; run-to-run spread (max - min) / median over the repetitions: "
      f"median {statistics.median(spreads):.1%}, 90th percentile "
      f"{sorted(spreads)[int(0.9 * (len(spreads) - 1))]:.1%}.")
    w(f"Proust ahead beyond the spread in {len(ahead)} cells, a peer in {len(wins)}; "
      f"geometric mean of the ratios {geomean([r['ratio'] for r in rows if r['ratio'] > 0]):.2f}.\n")
    w("## Cells a peer wins (beyond the spread), worst first\n")
    if wins:
        w("| transport | ranks | pattern | size | Proust us | best peer | peer us | ratio | spread |")
        w("|---|---|---|---|---|---|---|---|---|")
        for r in wins:
            w(f"| {r['transport']} | {r['np']} | {r['pattern']} | {human_size(r['size'])} | "
              f"{r['proust_us']:.3f} | {r['peer']} | {r['peer_us']:.3f} | {r['ratio']:.2f} | "
              f"{r['spread']:.0%} |")
    else:
        w("none")
    w("")
    order = pattern_order(rows)
    for tr in sorted({r["transport"] for r in rows}):
        for np_ in sorted({r["np"] for r in rows if r["transport"] == tr}):
            sub = [r for r in rows if r["transport"] == tr and r["np"] == np_]
            sizes = sorted({r["size"] for r in sub})
            w(f"## {tr}, {np_} ranks: Proust / best peer ('!': the peer wins beyond the spread)\n")
            w("| pattern | " + " | ".join(human_size(s) for s in sizes) + " |")
            w("|---|" + "---|" * len(sizes))
            for p in order:
                cells = {r["size"]: r for r in sub if r["pattern"] == p}
                if not cells:
                    continue
                row = []
                for s in sizes:
                    r = cells.get(s)
                    row.append("" if r is None else f"{r['ratio']:.2f}{'!' if r['peer_wins'] else ''}")
                w(f"| {p} | " + " | ".join(row) + " |")
            w("")
    return "\n".join(out)


def write_csv(root, rows):
    with open(os.path.join(root, "sweep.csv"), "w", newline="") as f:
        cols = ["transport", "np", "pattern", "size", "impl", "proust_us", "peer", "peer_us",
                "ratio", "spread", "reps", "peer_wins"]
        wr = csv.DictWriter(f, fieldnames=cols)
        wr.writeheader()
        for r in rows:
            wr.writerow(r)


def plots(root, cells):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = sorted({(k[0], k[1]) for k in cells})
    patterns = sorted({k[2] for k in cells})
    os.makedirs(os.path.join(root, "plots"), exist_ok=True)
    for p in patterns:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
        for ax, (tr, np_) in zip(axes[0], panels):
            series = {}
            for (t, n, pat, size), by_impl in cells.items():
                if (t, n, pat) != (tr, np_, p):
                    continue
                for impl, vals in by_impl.items():
                    series.setdefault(impl, []).append((max(size, 0.5), statistics.median(vals)))
            for impl in sorted(series):
                pts = sorted(series[impl])
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker=".", label=impl)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{p}, {tr}, {np_} ranks", fontsize=9)
            ax.set_xlabel("bytes (0 B drawn at 0.5)", fontsize=8)
            ax.set_ylabel("us (lower is better)", fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(root, "plots", f"sweep-{p}.png"), dpi=90)
        plt.close(fig)


def main():
    global STAT
    if "--best" in sys.argv:
        STAT = min
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = args[0]
    cells = load(root)
    rows = analyse(cells, load_kinds(root)[0])
    text = report(root, rows)
    print(text)
    with open(os.path.join(root, "sweep.md"), "w") as f:
        f.write(text + "\n")
    write_csv(root, rows)
    if "--plots" in sys.argv and cells:
        plots(root, cells)
    return 0


if __name__ == "__main__":
    sys.exit(main())
