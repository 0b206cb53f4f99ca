#!/usr/bin/env python3
"""report.py — medians and Proust / best-peer ratios of a bench/run.sh run.

    python3 bench/report.py bench/results/<date>     (or bench/results/latest)

Reads <dir>/raw/<transport>/<impl>/<run>.<rep>.txt (the benchmarks' own
output: '#' lines are comments, every other line is
"pingpong <lat|bw|bibw> <size> <value>", "multiflow k=.. n=.. s=.. <ns>" or
"coll:np=<ranks> <collective> <size> <us>") and <dir>/impls.tsv (name,
kind: "proust" or "peer").

Prints, per transport and measurement, the median over every sample (all
repetitions) of each implementation, then for each Proust implementation
the ratio to the best peer at that point:
  latency, multiflow, collectives (lower is better): proust / min(peers)
                                                     -> < 1 = Proust wins
  bandwidth (higher is better):  proust / max(peers) -> > 1 = Proust wins
and a geometric mean of each ratio column (for collectives, also per
collective). Collectives get one table per transport and number of ranks,
one row per (collective, size). Then the MPI-level overhead of Proust MPI:
its pingpong latency minus the native API's at 8 bytes (and 0).
Also writes <dir>/medians.csv
(transport,test,metric,size,impl,kind,n,median,min,max) for plot.py.
Standard library only.
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import load_kinds, geomean, human_size, fmt, table  # noqa: E402


HIGHER_IS_BETTER = {"bw", "bibw"}
UNITS = {"lat": "us", "bw": "MB/s", "bibw": "MB/s"}
COLLECTIVES = ["barrier", "bcast", "allreduce", "alltoall"]  # table order
# The MPI-level overhead compares these two implementations (run.sh names).
NATIVE, MPI = "proust", "proust-mpi"
OVERHEAD_SIZES = [8, 0]


def parse_line(line):
    """(test, metric, size or None, value) or None for a line to skip."""
    tok = line.split()
    if len(tok) < 3 or tok[0].startswith("#") or tok[0].startswith("sweep:"):
        return None  # the sweep has its own report (sweep_report.py)
    try:
        value = float(tok[-1])
    except ValueError:
        return None
    if tok[0] == "multiflow":
        return ("multiflow", " ".join(tok[1:-1]), None, value)
    if len(tok) == 4:  # pingpong, coll:np=N
        try:
            return (tok[0], tok[1], int(tok[2]), value)
        except ValueError:
            return None
    return None


def is_coll(test):
    return test.startswith("coll")


def coll_ranks(test):
    """coll:np=8 -> 8 (for ordering)"""
    try:
        return int(test.rsplit("=", 1)[1])
    except (IndexError, ValueError):
        return 0


def coll_rank(metric):
    return (COLLECTIVES.index(metric) if metric in COLLECTIVES else len(COLLECTIVES), metric)


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


def kind_of(impl, kinds):
    return kinds.get(impl, "proust" if impl.startswith("proust") else "peer")


def overhead(samples):
    """Proust MPI's pingpong latency minus the native API's, per transport."""
    rows = []
    for transport in sorted({k[0] for k in samples}):
        for size in OVERHEAD_SIZES:
            per = samples.get((transport, "pingpong", "lat", size), {})
            if per.get(NATIVE) and per.get(MPI):
                native = statistics.median(per[NATIVE])
                mpi = statistics.median(per[MPI])
                pct = f"{100.0 * (mpi - native) / native:+.0f}%" if native > 0 else "-"
                rows.append([transport, human_size(size), fmt(native), fmt(mpi),
                             f"{mpi - native:+.3f}", pct])
    if rows:
        print()
        print(f"== MPI-level overhead: pingpong latency of {MPI} - {NATIVE} (us, medians)")
        print(table(rows, ["transport", "size", NATIVE, MPI, "overhead", "relative"]))


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
    # tables: (transport, test, table) -> [(metric, size)]; pingpong and
    # multiflow have one table per metric, collectives one per test (ranks).
    groups = {}
    for key in samples:
        transport, test, metric, size = key
        table_key = (transport, test, "latency" if is_coll(test) else metric)
        groups.setdefault(table_key, []).append((metric, size))

    def impl_rank(name):
        return (order.index(name) if name in order else len(order), name)

    def group_order(g):
        transport, test, metric = g
        test_rank = 0 if test == "pingpong" else 1 if test == "multiflow" else 2
        metric_rank = ["lat", "bw", "bibw"].index(metric) if metric in ("lat", "bw", "bibw") else 9
        return (transport, test_rank, coll_ranks(test), test, metric_rank, metric)

    def row_order(row):
        metric, size = row
        return (coll_rank(metric), -1 if size is None else size)

    summary = []
    for (transport, test, table_metric) in sorted(groups, key=group_order):
        rowkeys = sorted(groups[(transport, test, table_metric)], key=row_order)
        impls = sorted({i for m, s in rowkeys for i in samples[(transport, test, m, s)]},
                       key=impl_rank)
        mine = [i for i in impls if kind_of(i, kinds) == "proust"]
        peers = [i for i in impls if kind_of(i, kinds) != "proust"]
        coll = is_coll(test)
        higher = table_metric in HIGHER_IS_BETTER
        unit = "us" if coll else UNITS.get(table_metric, "ns/msg")
        rows, ratios = [], {m: [] for m in mine}
        per_coll = {}  # (impl, collective) -> ratios
        for metric, size in rowkeys:
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
            if coll:
                label = f"{metric} {human_size(size)}" if metric != "barrier" else metric
            elif size is None:
                label = metric
            else:
                label = human_size(size)
            row = [label]
            row += [fmt(med.get(i)) for i in impls]
            row.append(best[1] if best else "-")
            for m in mine:
                if best and m in med and med[m] > 0:
                    r = med[m] / best[0]
                    ratios[m].append(r)
                    per_coll.setdefault((m, metric), []).append(r)
                    row.append(f"{r:.2f}")
                else:
                    row.append("-")
            rows.append(row)
        better = "higher" if higher else "lower"
        what = f"{test} {table_metric}" if not coll else f"collectives, {coll_ranks(test)} ranks"
        title = f"== {transport}: {what} ({unit}, median; {better} is better)"
        if peers and mine:
            title += f"; ratio = proust / best peer, {'>' if higher else '<'} 1 means Proust wins"
        first = "collective size" if coll else "size" if test == "pingpong" else "case"
        header = [first] + impls + ["best peer"] + [f"{m}/best" for m in mine]
        print(title)
        print(table(rows, header))
        geo = []
        for m in mine:
            if ratios[m]:
                geo.append(f"{m}/best {geomean(ratios[m]):.2f}")
                label = f"{test} (all)" if coll else f"{test} {table_metric}"
                summary.append([transport, label, m, f"{geomean(ratios[m]):.2f}", better,
                                str(len(ratios[m]))])
        if geo:
            print("geometric mean: " + ", ".join(geo))
        if coll:
            for m in mine:
                for name in sorted({c for (i, c) in per_coll if i == m}, key=coll_rank):
                    rs = per_coll[(m, name)]
                    summary.append([transport, f"{test} {name}", m, f"{geomean(rs):.2f}",
                                    better, str(len(rs))])
        print()

    if summary:
        print("== summary: geometric mean of proust / best peer over all sizes")
        print(table(summary, ["transport", "measurement", "impl", "ratio", "better", "points"]))

    overhead(samples)

    with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transport", "test", "metric", "size", "impl", "kind", "n", "median", "min", "max"])
        w.writerows(csv_rows)


if __name__ == "__main__":
    main()
