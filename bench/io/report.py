#!/usr/bin/env python3
"""Report of bench/io/run.sh (standard library only): per (target, test,
size, metric) the median of each implementation's runs and its spread
(max - min) / median, the best peer and Proust / best peer; then the
collective write (and read) as a fraction of one process's pwrite (pread)
of the same bytes, and the geometric means of the ratios per test.
Usage: report.py <results dir>   (writes summary.txt and medians.csv there)."""
import csv
import glob
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report_common import fmt, geomean, human_size, load_kinds, table  # noqa: E402

root = sys.argv[1]
RATE = re.compile(r"(MBps|recps|appends_ps)$")
TESTS = ["coll3d", "pwrite", "strided", "strided1", "shared"]
METRICS = ["write_MBps", "read_MBps", "write_recps", "read_recps", "appends_ps"]

vals = {}  # (target, test, size, metric, impl) -> [values]
for path in glob.glob(os.path.join(root, "raw", "*", "*.txt")):
    target = os.path.basename(os.path.dirname(path))
    impl = os.path.basename(path).split(".")[0]
    with open(path) as f:
        for line in f:
            if not line.startswith("io:"):
                continue
            p = line.split()
            test = p[0][3:]
            kv = dict(x.split("=", 1) for x in p[1:] if "=" in x)
            size = int(kv.get("size", 0))
            for k, v in kv.items():
                if RATE.search(k):
                    vals.setdefault((target, test, size, k, impl), []).append(float(v))

kinds, order = load_kinds(root)
impls = order or sorted({k[4] for k in vals}, key=lambda i: (not i.startswith("proust"), i))
for i in impls:
    kinds.setdefault(i, "proust" if i.startswith("proust") else "peer")
proust = [i for i in impls if kinds[i] == "proust"]
peers = [i for i in impls if kinds[i] != "proust"]


med = {}  # (target, test, size, metric, impl) -> median
csv_rows = []
for key, v in sorted(vals.items()):
    m = statistics.median(v)
    med[key] = m
    spread = (max(v) - min(v)) / m if m else 0.0
    csv_rows.append([key[0], key[1], key[2], key[3], key[4], kinds.get(key[4], "peer"), len(v),
                     f"{m:.6g}", f"{min(v):.6g}", f"{max(v):.6g}", f"{spread:.4f}"])

out = []
meta = os.path.join(root, "meta.txt")
if os.path.exists(meta):
    with open(meta) as f:
        out += ["# " + l.rstrip() for l in f if l.startswith(("date", "ranks", "target", "load"))]
notes = os.path.join(root, "notes.txt")
if os.path.exists(notes):
    with open(notes) as f:
        out += ["# note: " + l.rstrip() for l in f if l.strip()]
out.append("")
out.append("MPI-IO, median of the runs (spread = (max - min) / median). Every figure is a rate")
out.append("(MB/s = 10^6 B/s, records/s, appends/s): Proust / best peer > 1 means Proust is faster.")
out.append("Reads follow their writes: they come from the page cache where there is one.")
targets = sorted({k[0] for k in vals}, key=lambda t: (t != "local", t != "shm", t))
ratios = {}  # (target, test, metric) -> [proust/best over sizes]
for t in targets:
    rows = []
    keys = sorted({k[1:4] for k in vals if k[0] == t},
                  key=lambda k: (TESTS.index(k[0]) if k[0] in TESTS else 99, k[1],
                                 METRICS.index(k[2]) if k[2] in METRICS else 99))
    for test, size, metric in keys:
        cells = []
        for i in impls:
            v = vals.get((t, test, size, metric, i))
            if not v:
                cells.append("-")
                continue
            m = med[(t, test, size, metric, i)]
            cells.append(f"{fmt(m)} ({100 * (max(v) - min(v)) / m:.0f}%)" if m else "0")
        pm = {i: med[(t, test, size, metric, i)] for i in peers if (t, test, size, metric, i) in med}
        best = max(pm, key=pm.get) if pm else None
        rcells = []
        for p in proust:
            x = med.get((t, test, size, metric, p))
            if test == "pwrite":  # the baseline does no MPI-IO: a ratio there is noise
                rcells.append("n/a")
            elif x is not None and best and pm[best] > 0:
                r = x / pm[best]
                rcells.append(f"{r:.2f}")
                if not metric.endswith("recps"):  # the same ratio as MBps
                    ratios.setdefault((t, test, metric), []).append(r)
            else:
                rcells.append("-")
        rows.append([test, human_size(size), metric] + cells + [best or "-"] + rcells)
    out.append("")
    out.append(f"## target {t}")
    out.append(table(rows, ["test", "size", "metric"] + impls + ["best peer"]
                     + [f"{p}/best" for p in proust]))

# the collective against one process's pwrite/pread of the same bytes,
# pwrite pooled over every implementation's runs (it does not use MPI-IO)
rows = []
for t in targets:
    sizes = sorted({k[2] for k in vals if k[0] == t and k[1] == "coll3d"})
    for s in sizes:
        base = {}
        for d in ("write", "read"):
            pooled = [x for i in impls for x in vals.get((t, "pwrite", s, f"{d}_MBps", i), [])]
            base[d] = statistics.median(pooled) if pooled else None
        row = [t, human_size(s), fmt(base["write"]), fmt(base["read"])]
        for i in impls:
            for d in ("write", "read"):
                c = med.get((t, "coll3d", s, f"{d}_MBps", i))
                row.append(f"{c / base[d]:.2f}" if c and base[d] else "-")
        rows.append(row)
if rows:
    out.append("")
    out.append("## coll3d as a fraction of one process's pwrite (write + fsync) / pread of the same bytes")
    out.append("(pwrite MB/s: median of every implementation's pwrite runs; 1.00 = as fast as rank 0 alone)")
    out.append(table(rows, ["target", "size", "pwrite MB/s", "pread MB/s"]
                     + [f"{i} {d}" for i in impls for d in ("w", "r")]))

if ratios:
    rows = [[t, test, metric, f"{geomean(r):.2f}", len(r)]
            for (t, test, metric), r in sorted(ratios.items(),
                                               key=lambda kv: (targets.index(kv[0][0]),
                                                               TESTS.index(kv[0][1]) if kv[0][1] in TESTS else 99,
                                                               METRICS.index(kv[0][2])))]
    out.append("")
    out.append("## geometric mean of Proust / best peer over the sizes (> 1: Proust faster)")
    out.append(table(rows, ["target", "test", "metric", "geomean", "sizes"]))
elif not proust:
    out.append("")
    out.append("(no Proust implementation in this run: no Proust / best-peer ratio)")

text = "\n".join(out) + "\n"
sys.stdout.write(text)
with open(os.path.join(root, "summary.txt"), "w") as f:
    f.write(text)
with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["target", "test", "size", "metric", "impl", "kind", "n", "median", "min", "max",
                "spread"])
    w.writerows(csv_rows)
