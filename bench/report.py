#!/usr/bin/env python3
"""report.py — medians and Proust / best-peer ratios of a bench/run.sh run.

    python3 bench/report.py bench/results/<date>     (or bench/results/latest)

Reads <dir>/raw/<transport>/<impl>/<bench>.<rep>.txt (the benchmarks' own
output: '#' lines are comments, every other line is
"pingpong <lat|bw|bibw> <size> <value>" or "multiflow k=.. n=.. s=.. <ns>")
and <dir>/impls.tsv (name, kind: "proust" or "peer").

Prints, per transport and measurement, the median over every sample (all
repetitions) of each implementation, then for each Proust implementation
the ratio to the best peer at that point:
  latency, multiflow (lower is better): proust / min(peers)  -> < 1 = Proust wins
  bandwidth (higher is better):         proust / max(peers)  -> > 1 = Proust wins
and a geometric mean of each ratio column. Also writes <dir>/medians.csv
(transport,test,metric,size,impl,kind,n,median,min,max) for plot.py.
Standard library only.
"""
import csv
import math
import os
import statistics
import sys

HIGHER_IS_BETTER = {"bw", "bibw"}
UNITS = {"lat": "us", "bw": "MB/s", "bibw": "MB/s"}


def parse_line(line):
    """(test, metric, size or None, value) or None for a line to skip."""
    tok = line.split()
    if len(tok) < 3 or tok[0].startswith("#"):
        return None
    try:
        value = float(tok[-1])
    except ValueError:
        return None
    if tok[0] == "pingpong" and len(tok) == 4:
        try:
            return ("pingpong", tok[1], int(tok[2]), value)
        except ValueError:
            return None
    if tok[0] == "multiflow":
        return ("multiflow", " ".join(tok[1:-1]), None, value)
    return None


def load(root):
    """samples[(transport, test, metric, size)][impl] = [values]"""
    samples = {}
    raw = os.path.join(root, "raw")
    if not os.path.isdir(raw):
        sys.exit(f"report: no raw/ directory in {root}")
    for transport in sorted(os.listdir(raw)):
        tdir = os.path.join(raw, transport)
        for impl in sorted(os.listdir(tdir)):
            idir = os.path.join(tdir, impl)
            for fname in sorted(os.listdir(idir)):
                if not fname.endswith(".txt"):
                    continue  # .err, .failed
                with open(os.path.join(idir, fname), errors="replace") as f:
                    for line in f:
                        rec = parse_line(line)
                        if rec is None:
                            continue
                        test, metric, size, value = rec
                        key = (transport, test, metric, size)
                        samples.setdefault(key, {}).setdefault(impl, []).append(value)
    return samples


def load_kinds(root):
    kinds, order = {}, []
    path = os.path.join(root, "impls.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.reader(f, delimiter="\t"):
                if len(row) >= 2:
                    kinds[row[0]] = row[1]
                    order.append(row[0])
    return kinds, order


def kind_of(impl, kinds):
    return kinds.get(impl, "proust" if impl.startswith("proust") else "peer")


def human_size(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fmt(v):
    if v is None:
        return "-"
    if v >= 1000:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}"


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) for c, w in zip(r, widths))
    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    samples = load(root)
    kinds, order = load_kinds(root)
    if not samples:
        sys.exit(f"report: no measurements under {root}/raw")

    meta = os.path.join(root, "meta.txt")
    if os.path.exists(meta):
        with open(meta) as f:
            for line in f:
                print("# " + line.rstrip())
        print()

    csv_rows = []
    groups = {}
    for key, per_impl in samples.items():
        transport, test, metric, size = key
        groups.setdefault((transport, test, metric), []).append(size)

    def impl_rank(name):
        return (order.index(name) if name in order else len(order), name)

    summary = []
    for (transport, test, metric) in sorted(groups, key=lambda g: (g[0], g[1] != "pingpong", ["lat", "bw", "bibw"].index(g[2]) if g[2] in ("lat", "bw", "bibw") else 9, g[2])):
        sizes = sorted(groups[(transport, test, metric)], key=lambda s: -1 if s is None else s)
        impls = sorted({i for s in sizes for i in samples[(transport, test, metric, s)]}, key=impl_rank)
        mine = [i for i in impls if kind_of(i, kinds) == "proust"]
        peers = [i for i in impls if kind_of(i, kinds) != "proust"]
        higher = metric in HIGHER_IS_BETTER
        unit = UNITS.get(metric, "ns/msg")
        rows, ratios = [], {m: [] for m in mine}
        for size in sizes:
            per = samples[(transport, test, metric, size)]
            med = {}
            for impl in impls:
                vals = per.get(impl)
                if vals:
                    med[impl] = statistics.median(vals)
                    csv_rows.append([transport, test, metric, "" if size is None else size, impl,
                                     kind_of(impl, kinds), len(vals), med[impl], min(vals), max(vals)])
            peer_vals = [(med[p], p) for p in peers if p in med and med[p] > 0]
            best = (max if higher else min)(peer_vals) if peer_vals else None
            row = [human_size(size) if size is not None else metric]
            row += [fmt(med.get(i)) for i in impls]
            row.append(best[1] if best else "-")
            for m in mine:
                if best and m in med and med[m] > 0:
                    r = med[m] / best[0]
                    ratios[m].append(r)
                    row.append(f"{r:.2f}")
                else:
                    row.append("-")
            rows.append(row)
        better = "higher" if higher else "lower"
        title = f"== {transport}: {test} {metric} ({unit}, median; {better} is better)"
        if peers and mine:
            title += f"; ratio = proust / best peer, {'>' if higher else '<'} 1 means Proust wins"
        header = ["size" if test == "pingpong" else "case"] + impls + ["best peer"] + [f"{m}/best" for m in mine]
        print(title)
        print(table(rows, header))
        geo = []
        for m in mine:
            if ratios[m]:
                g = math.exp(sum(math.log(r) for r in ratios[m]) / len(ratios[m]))
                geo.append(f"{m}/best {g:.2f}")
                summary.append([transport, f"{test} {metric}", m, f"{g:.2f}", better, str(len(ratios[m]))])
        if geo:
            print("geometric mean: " + ", ".join(geo))
        print()

    if summary:
        print("== summary: geometric mean of proust / best peer over all sizes")
        print(table(summary, ["transport", "measurement", "impl", "ratio", "better", "points"]))

    with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transport", "test", "metric", "size", "impl", "kind", "n", "median", "min", "max"])
        w.writerows(csv_rows)


if __name__ == "__main__":
    main()
