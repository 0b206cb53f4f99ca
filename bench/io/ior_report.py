#!/usr/bin/env python3
"""Report of bench/io/ior.sh (standard library only): per (target, case,
write/read) the median of IOR's bandwidth ("Summary of all tests": the
run's Max(MiB), one iteration a run) over each
implementation's runs, its spread (max - min) / median, the best peer and
Proust / best peer (> 1: Proust faster); then the geometric mean of the
ratios per target. Usage: ior_report.py <results dir> (writes summary.txt
and medians.csv there)."""
import csv
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report_common import fmt, geomean, load_kinds, table  # noqa: E402

root = sys.argv[1]
ROW = re.compile(r"^(write|read)\s+([0-9.]+)\s")

vals = {}  # (target, case, op, impl) -> [MiB/s]
for path in glob.glob(os.path.join(root, "raw", "*", "*.txt")):
    target = os.path.basename(os.path.dirname(path))
    impl, case = os.path.basename(path).split(".")[:2]
    with open(path) as f:
        summary = False
        for line in f:
            summary = summary or line.startswith("Summary of all tests")
            m = ROW.match(line) if summary else None
            if m:
                vals.setdefault((target, case, m.group(1), impl), []).append(float(m.group(2)))

kinds, order = load_kinds(root)
impls = order or sorted({k[3] for k in vals}, key=lambda i: (i != "proust", i))
for i in impls:
    kinds.setdefault(i, "proust" if i.startswith("proust") else "peer")
proust = [i for i in impls if kinds[i] == "proust"]
peers = [i for i in impls if kinds[i] != "proust"]
cases = []
meta = os.path.join(root, "meta.txt")
out = []
if os.path.exists(meta):
    with open(meta) as f:
        for line in f:
            if line.startswith("case "):
                cases.append(line.split()[1].rstrip(":"))
            if line.startswith(("date", "ior", "ranks", "case", "target", "load")):
                out.append("# " + line.rstrip())
notes = os.path.join(root, "notes.txt")
if os.path.exists(notes):
    with open(notes) as f:
        out += ["# note: " + l.rstrip() for l in f if l.strip()]

med, rows_csv, ratios = {}, [], {}
for key, v in sorted(vals.items()):
    m = statistics.median(v)
    med[key] = m
    rows_csv.append(list(key) + [kinds.get(key[3], "peer"), len(v), f"{m:.6g}", f"{min(v):.6g}",
                                 f"{max(v):.6g}", f"{(max(v) - min(v)) / m if m else 0:.4f}"])
targets = sorted({k[0] for k in vals}, key=lambda t: (t != "local", t != "shm", t))
out.append("")
out.append("IOR (MPI-IO backend but for posix), MiB/s: median of the runs (spread = (max - min) / median);")
out.append("every run passed IOR's -W/-R data checks. Proust / best peer > 1 means Proust is faster.")
for t in targets:
    rows = []
    keys = sorted({k[1:3] for k in vals if k[0] == t},
                  key=lambda k: (cases.index(k[0]) if k[0] in cases else 99, k[1] != "write"))
    for case, op in keys:
        cells = []
        for i in impls:
            v = vals.get((t, case, op, i))
            m = med.get((t, case, op, i))
            cells.append(f"{fmt(m)} ({100 * (max(v) - min(v)) / m:.0f}%)" if v and m else "-")
        pm = {i: med[(t, case, op, i)] for i in peers if (t, case, op, i) in med}
        best = max(pm, key=pm.get) if pm else None
        rc = []
        for p in proust:
            x = med.get((t, case, op, p))
            if x is not None and best and pm[best] > 0:
                rc.append(f"{x / pm[best]:.2f}")
                if case != "posix":  # IOR's POSIX backend does no MPI-IO
                    ratios.setdefault(t, []).append(x / pm[best])
            else:
                rc.append("-")
        rows.append([case, op] + cells + [best or "-"] + rc)
    out.append("")
    out.append(f"## target {t}")
    out.append(table(rows, ["case", "op"] + impls + ["best peer"] + [f"{p}/best" for p in proust]))
if ratios:
    out.append("")
    out.append("## geometric mean of Proust / best peer over the MPI-IO cases")
    out.append(table([[t, f"{geomean(r):.2f}", len(r)] for t, r in ratios.items()],
                     ["target", "geomean", "cells"]))
text = "\n".join(out) + "\n"
print(text, end="")
with open(os.path.join(root, "summary.txt"), "w") as f:
    f.write(text)
with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["target", "case", "op", "impl", "kind", "runs", "median", "min", "max", "spread"])
    w.writerows(rows_csv)
