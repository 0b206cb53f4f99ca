#!/usr/bin/env python3
"""Medians of bench/startup/run.sh's raw outputs: per implementation and
number of ranks, the launcher's wall time, the slowest MPI_Init, the first
communication and /dev/shm held (less what was in use before the launch);
Proust / best-peer ratios, and each figure's growth from the smallest N.
Usage: report.py <results dir>   (writes medians.csv there too)."""
import csv
import glob
import os
import re
import statistics
import sys

root = sys.argv[1]
vals = {}  # (impl, np, metric) -> [values]
for path in glob.glob(os.path.join(root, "raw", "*.txt")):
    m = re.match(r"(.+)\.np(\d+)\.\d+\.txt$", os.path.basename(path))
    if not m:
        continue
    impl, np_ = m.group(1), int(m.group(2))
    got = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 4 and p[0].startswith("startup:"):
                got[p[1]] = float(p[3])
    if "shm_used_mb" in got and "shm_base_mb" in got:
        got["shm_job_mb"] = max(0.0, got["shm_used_mb"] - got["shm_base_mb"])
    for k in ("wall_s", "init_max_s", "first_comm_s", "shm_job_mb"):
        if k in got:
            vals.setdefault((impl, np_, k), []).append(got[k])

impls = [i for i in ("proust", "mpich", "openmpi") if any(k[0] == i for k in vals)]
nps = sorted({k[1] for k in vals})
metrics = [("wall_s", "launcher wall time, s"), ("init_max_s", "slowest MPI_Init, s"),
           ("first_comm_s", "first barrier + allreduce, s"),
           ("shm_job_mb", "/dev/shm held by the job, MB")]
rows = []
for metric, title in metrics:
    print(f"\n## {title} (median [min-max] of the runs)")
    print(f"{'ranks':>6} " + " ".join(f"{i:>24}" for i in impls) + "   proust/best peer")
    for n in nps:
        cells, med = [], {}
        for i in impls:
            v = vals.get((i, n, metric))
            if not v:
                cells.append(f"{'-':>24}")
                continue
            med[i] = statistics.median(v)
            rows.append([i, n, metric, med[i], min(v), max(v), len(v)])
            cells.append(f"{med[i]:>10.4g} [{min(v):.3g}-{max(v):.3g}]".rjust(24))
        peers = [med[i] for i in med if i != "proust" and med[i] > 0]
        ratio = f"{med['proust'] / min(peers):.2f}" if "proust" in med and peers else "-"
        print(f"{n:>6} " + " ".join(cells) + f"   {ratio}")
    if len(nps) > 1:
        lo = nps[0]
        growth = []
        for i in impls:
            a, b = vals.get((i, lo, metric)), vals.get((i, nps[-1], metric))
            if a and b and statistics.median(a) > 0:
                growth.append(f"{i} {statistics.median(b) / statistics.median(a):.1f}x")
        print(f"  growth {lo} -> {nps[-1]} ranks: " + ", ".join(growth))
with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["impl", "ranks", "metric", "median", "min", "max", "runs"])
    w.writerows(rows)
