#!/usr/bin/env python3
"""PNG bars of an MPI-IO run (bench/io/run.sh's medians.csv): the collective
3-D array write and read bandwidth of each implementation at each size, one
panel per target (local disk, /dev/shm), with one process's pwrite / pread
of the same bytes as a line. Usage: plot.py <medians.csv> <out.png>
(needs matplotlib; Debian's python3-matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
impls = [i for i in ("proust", "mpich", "openmpi") if any(r["impl"] == i for r in rows)]
targets = sorted({r["target"] for r in rows})
sizes = sorted({int(r["size"]) for r in rows if r["test"] == "coll3d"})


def median(target, test, size, metric, impl=None):
    vals = [float(r["median"]) for r in rows
            if r["target"] == target and r["test"] == test and int(r["size"]) == size and
            r["metric"] == metric and (impl is None or r["impl"] == impl)]
    return sorted(vals)[len(vals) // 2] if vals else 0.0


fig, axes = plt.subplots(2, len(targets), figsize=(5 * len(targets), 7), squeeze=False)
width = 0.8 / max(len(impls), 1)
for col, target in enumerate(targets):
    for row, (metric, base, label) in enumerate((("write_MBps", "write_MBps", "write"),
                                                 ("read_MBps", "read_MBps", "read"))):
        ax = axes[row][col]
        for k, impl in enumerate(impls):
            ax.bar([i + k * width for i in range(len(sizes))],
                   [median(target, "coll3d", s, metric, impl) for s in sizes], width, label=impl)
        ax.plot([i + 0.4 - width / 2 for i in range(len(sizes))],
                [median(target, "pwrite", s, base) for s in sizes], "k--", marker="x",
                label="one process, p" + label)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sizes))])
        ax.set_xticklabels([f"{s >> 20} MiB" for s in sizes])
        ax.set_ylabel(f"collective {label}, MB/s")
        ax.set_title(f"{target}: 3-D array, subarray views, {label}")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
fig.suptitle("MPI-IO collective write and read, 4 ranks (bench/io)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
