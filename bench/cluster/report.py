#!/usr/bin/env python3
"""Medians of bench/cluster/run.sh's raw outputs: latency (us) and bandwidth
(MB/s) between two hosts, alltoall (us) at 16 ranks on 4 hosts, start-up
wall time (s); [min-max] spread and Proust / best-peer ratios.
Usage: report.py <results dir>"""
import glob
import os
import re
import statistics
import sys

root = sys.argv[1]
vals = {}  # (what, size) -> impl -> [values]
sums = {}  # jacobi N -> impl -> checksum (must agree)
for path in glob.glob(os.path.join(root, "raw", "*.txt")):
    impl, kind = os.path.basename(path).split(".")[:2]
    for line in open(path, errors="replace"):
        f = line.split()
        if kind == "jacobi" and len(f) == 8 and f[0] == "jacobi" and f[1].startswith("N="):
            size = int(f[1][2:])
            vals.setdefault(("jacobi 4 ranks 2 hosts us", size), {}).setdefault(impl, []).append(
                float(f[5]))
            sums.setdefault(size, {})[impl] = f[7]
            continue
        if len(f) != 4 or f[0].startswith("#"):
            continue
        try:
            size, v = int(f[2]), float(f[3])
        except ValueError:
            continue
        what = {"lat": "latency us", "bw": "bandwidth MB/s", "a2a": "alltoall 4 hosts us",
                "hello": "start-up 4 hosts s"}.get(kind)
        if kind == "hello" and f[1] != "wall_s":
            continue
        if kind in ("lat", "bw") and f[1] not in ("lat", "bw"):
            continue
        if what:
            vals.setdefault((what, size), {}).setdefault(impl, []).append(v)
impls = ["proust", "mpich", "openmpi"]
if any("proustofi" in d for d in vals.values()):
    impls.insert(1, "proustofi")  # Proust over its ofi rail (jacobi)
print(f"{'measure':24} {'size':>8} " + " ".join(f"{i:>24}" for i in impls) + "  proust/best")
for (what, size) in sorted(vals):
    d = vals[(what, size)]
    med = {i: statistics.median(x) for i, x in d.items()}
    cells = []
    for i in impls:
        x = d.get(i)
        cells.append(f"{med[i]:.4g} [{min(x):.3g}-{max(x):.3g}]".rjust(24) if x else "-".rjust(24))
    peers = [med[i] for i in med if not i.startswith("proust")]
    ratio = "-"
    if "proust" in med and peers:
        best = max(peers) if "bandwidth" in what else min(peers)
        ratio = f"{med['proust'] / best:.2f}"
        if "proustofi" in med:
            ratio += f" (ofi {med['proustofi'] / best:.2f})"
    print(f"{what:24} {size:>8} " + " ".join(cells) + f"  {ratio}")
for size, by_impl in sorted(sums.items()):
    if len(set(by_impl.values())) > 1:
        print(f"jacobi N={size}: the checksums differ: {by_impl}")

# The all-to-all curves as a PNG beside the results, where matplotlib is
# (Debian's python3-matplotlib).
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
a2a = {k: v for k, v in vals.items() if k[0].startswith("alltoall")}
if a2a:
    fig, ax = plt.subplots(figsize=(6, 4))
    for impl in impls:
        pts = sorted((size, statistics.median(d[impl])) for (_, size), d in a2a.items() if impl in d)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per pair")
    ax.set_ylabel("MPI_Alltoall, us")
    ax.set_title("All-to-all on 4 test hosts")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(root, "alltoall.png"), dpi=100)
