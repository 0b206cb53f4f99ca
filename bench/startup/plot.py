#!/usr/bin/env python3
"""PNG curves of start-up runs (bench/startup/run.sh's medians.csv): the
launcher's wall time and the /dev/shm held, against the number of ranks,
one line per implementation (log-log). Usage: plot.py <medians.csv> <out.png>
(needs matplotlib; Debian's python3-matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, metric, label in ((axes[0], "wall_s", "launcher wall time (s)"),
                          (axes[1], "shm_job_mb", "/dev/shm held (MB)")):
    for impl in ("proust", "mpich", "openmpi"):
        pts = sorted((int(r["ranks"]), float(r["median"])) for r in rows
                     if r["impl"] == impl and r["metric"] == metric and float(r["median"]) > 0)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks on one node")
    ax.set_ylabel(label)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
fig.suptitle("Start-up of an MPI hello world (16-core device)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
