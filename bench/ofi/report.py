#!/usr/bin/env python3
"""bench/ofi/report.py DIR — medians of bench/ofi/run.sh's outputs in DIR
(proust.N.txt, openmpi.N.txt, fi_pingpong.N.txt, fi_write.N.txt: "pingpong
<test> <bytes> <value>" lines), Proust / Open MPI and Proust / the raw
provider (fi_pingpong's latency, fi_write_bw's bandwidth), and Proust's
spread (min-max over the repetitions)."""
import glob
import os
import statistics
import sys
from collections import defaultdict

IMPLS = ("proust", "openmpi", "fi_pingpong", "fi_write")


def main(out):
    v = defaultdict(list)
    for impl in IMPLS:
        for path in glob.glob(os.path.join(out, f"{impl}.[0-9]*.txt")):
            for line in open(path):
                f = line.split()
                if len(f) == 4 and f[0] == "pingpong":
                    v[(impl, f[1], int(f[2]))].append(float(f[3]))
    keys = sorted({(m, s) for (i, m, s) in v if i == "proust"})
    print(f"{'test':5} {'bytes':>8} {'proust':>9} {'openmpi':>9} {'raw':>9} "
          f"{'p/ompi':>7} {'p/raw':>7}  proust spread")
    for m, s in keys:
        med = {i: statistics.median(v[(i, m, s)]) for i in IMPLS if (i, m, s) in v}
        p = med["proust"]
        raw = "fi_write" if m == "bw" else "fi_pingpong"

        def cell(i):
            return f"{med[i]:9.2f}" if i in med else f"{'-':>9}"

        def ratio(i):
            return f"{p / med[i]:7.2f}" if med.get(i) else f"{'-':>7}"

        pr = v[("proust", m, s)]
        print(f"{m:5} {s:>8} {p:9.2f} {cell('openmpi')} {cell(raw)} "
              f"{ratio('openmpi')} {ratio(raw)}  {min(pr):.2f}-{max(pr):.2f}")
    print("ratios: Proust / peer (lat us: lower is better; bw MB/s: higher is better); "
          "raw: fi_pingpong (lat), fi_write_bw (bw)")


if __name__ == "__main__":
    main(sys.argv[1])
