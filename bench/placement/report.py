#!/usr/bin/env python3
"""report.py — medians and ratios of a bench/placement/run.sh run.

    python3 bench/placement/report.py bench/results/placement-<date>
                                      (or bench/results/placement-latest)

Reads <dir>/raw/<transport>/<config>/<impl>/<job>.<rep>.txt (pingpong's
output: '#' lines are comments, others "pingpong <lat|bw> <size> <value>"),
<dir>/impls.tsv (name, kind: "proust" or "peer"), <dir>/placement.txt (the
plan: NUMA nodes, NIC, nodes chosen) and <dir>/meta.txt.

Prints, per transport, the median over all repetitions of 8-byte latency
(us) and 1 MiB / 4 MiB bandwidth (MB/s) for every MPI x configuration
(good, bad, auto), then per MPI good/bad and auto/good, then per
configuration Proust / best peer:
  latency (lower is better):    a / b < 1 means a is faster
  bandwidth (higher is better): a / b > 1 means a is faster
Also writes <dir>/medians.csv
(transport,config,metric,size,impl,kind,n,median,min,max).
Standard library only.
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_common import load_kinds, fmt, table  # noqa: E402


# The reported points: (metric, size, label); pingpong also measured 2 MiB.
POINTS = [("lat", 8, "lat 8B us"), ("bw", 1 << 20, "bw 1M MB/s"), ("bw", 4 << 20, "bw 4M MB/s")]
HIGHER_IS_BETTER = {"bw"}
CONFIGS = ["good", "bad", "auto"]

TRANSPORT_NOTES = {
    "shm": "each MPI's shared memory between the 2 ranks of this host: the NIC plays "
           "no part, so good, bad and auto should be equal (up to noise)",
    "tcp": "TCP between 2 ranks of one host (Proust PROUST_RAILS=tcp, peers forced "
           "onto TCP): the kernel loops it back, it never goes through the NIC's "
           "driver or hardware, so the NIC's locality should not matter here either; "
           "run across hosts (BENCH_HOSTS) to see it",
    "net": "one rank on each host, each MPI's default transport between hosts: "
           "the case where the NIC's locality matters",
}


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    kv[key.strip()] = value.strip()
    return kv


def load(root):
    """samples[(transport, config, impl, metric, size)] = [values]"""
    samples = {}
    raw = os.path.join(root, "raw")
    if not os.path.isdir(raw):
        sys.exit(f"report: no raw/ directory in {root}")
    for dirpath, _, files in os.walk(raw):
        parts = os.path.relpath(dirpath, raw).split(os.sep)
        if len(parts) != 3:
            continue
        transport, config, impl = parts
        for fname in sorted(files):
            if not fname.endswith(".txt"):
                continue  # .err, .failed
            with open(os.path.join(dirpath, fname), errors="replace") as f:
                for line in f:
                    tok = line.split()
                    if len(tok) != 4 or tok[0] != "pingpong":
                        continue
                    try:
                        key = (transport, config, impl, tok[1], int(tok[2]))
                        samples.setdefault(key, []).append(float(tok[3]))
                    except ValueError:
                        continue
    return samples


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "-"


def print_placement(plan, root):
    """What the run placed where, and what the figures can show."""
    print("== placement")
    nodes = plan.get("numa_nodes", "?")
    print(f"mode: {plan.get('mode', '?')} ({plan.get('hosts', '?')}), NUMA nodes: {nodes}, "
          f"NIC: {plan.get('nic', '?')} ({plan.get('nic_source', '?')}; "
          f"seen by hwloc: {plan.get('nic_found', '?')}), near node(s): {plan.get('near_nodes', '?')}")
    for c in CONFIGS:
        if f"config_{c}" in plan:
            print(f"  {c:4}  {plan[f'config_{c}']}")
    print(f"bad node: {plan.get('bad_reason', '?')}")
    effect = plan.get("effect", "?")
    print(f"placement effect: {effect}")
    if nodes == "1":
        print("  -> this machine has one NUMA node: good, bad and auto put the ranks on the same")
        print("     node, so the figures below show NO placement effect (differences are noise);")
        print("     this run only checks that every configuration works.")
    known = plan.get("proust_placement_known", "?")
    if known == "no":
        print("Proust: this build does not know PROUST_PLACEMENT (warned as unknown); its auto")
        print("  configuration then binds nothing, like off: rerun with a build that has it.")
    pp = os.path.join(root, "proust-placement.txt")
    if os.path.exists(pp):
        with open(pp, errors="replace") as f:
            lines = [ln.rstrip() for ln in f if ln.strip()]
        print("Proust's decision (proust-info --placement, auto):")
        for ln in lines[:12]:
            print("  " + ln)
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    samples = load(root)
    kinds, order = load_kinds(root)
    plan = read_kv(os.path.join(root, "placement.txt"))

    meta = os.path.join(root, "meta.txt")
    if os.path.exists(meta):
        with open(meta) as f:
            for line in f:
                print("# " + line.rstrip())
        print()
    print_placement(plan, root)
    if not samples:
        print(f"report: no measurements under {root}/raw")
        return 1

    impls = sorted({k[2] for k in samples},
                   key=lambda i: (order.index(i) if i in order else len(order), i))
    kind = lambda i: kinds.get(i, "proust" if i.startswith("proust") else "peer")
    mine = [i for i in impls if kind(i) == "proust"]
    peers = [i for i in impls if kind(i) != "proust"]
    known_tr = list(TRANSPORT_NOTES)
    transports = sorted({k[0] for k in samples},
                        key=lambda t: (known_tr.index(t) if t in known_tr else 9, t))
    configs = [c for c in CONFIGS if any(k[1] == c for k in samples)]

    med, csv_rows = {}, []
    for key, vals in samples.items():
        med[key] = statistics.median(vals)
        transport, config, impl, metric, size = key
        csv_rows.append([transport, config, metric, size, impl, kind(impl), len(vals),
                         med[key], min(vals), max(vals)])
    get = lambda t, c, i, p: med.get((t, c, i, p[0], p[1]))
    count = lambda t, c, i: min((len(samples.get((t, c, i, p[0], p[1]), [])) for p in POINTS))

    for t in transports:
        print(f"== {t}: {TRANSPORT_NOTES.get(t, '')}")
        rows = []
        for i in impls:
            for c in configs:
                rows.append([i, c] + [fmt(get(t, c, i, p)) for p in POINTS] + [count(t, c, i)])
        print(table(rows, ["impl", "config"] + [p[2] for p in POINTS] + ["n"]))

        print(f"-- {t}: placement ratios per MPI (lat: < 1 = the first is faster; "
              "bw: > 1 = the first is faster; auto/good = 1: automatic is as good as by hand)")
        rows = []
        for i in impls:
            row = [i]
            for a, b in (("good", "bad"), ("auto", "good")):
                row += [ratio(get(t, a, i, p), get(t, b, i, p)) for p in POINTS]
            rows.append(row)
        hdr = ["impl"] + [f"{p[2].rsplit(' ', 1)[0]} {a}/{b}"
                          for a, b in (("good", "bad"), ("auto", "good")) for p in POINTS]
        print(table(rows, hdr))

        if mine and peers:
            print(f"-- {t}: Proust / best peer per configuration (lat: < 1 = Proust wins; "
                  "bw: > 1 = Proust wins)")
            rows = []
            for m in mine:
                for c in configs:
                    row = [m, c]
                    for p in POINTS:
                        vals = [(get(t, c, q, p), q) for q in peers if get(t, c, q, p)]
                        best = (max if p[0] in HIGHER_IS_BETTER else min)(vals) if vals else None
                        row += [ratio(get(t, c, m, p), best[0] if best else None),
                                best[1] if best else "-"]
                    rows.append(row)
            hdr = ["impl", "config"]
            for p in POINTS:
                hdr += [f"{p[2].rsplit(' ', 1)[0]} /best", "best"]
            print(table(rows, hdr))
        print()

    with open(os.path.join(root, "medians.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transport", "config", "metric", "size", "impl", "kind", "n", "median",
                    "min", "max"])
        w.writerows(sorted(csv_rows, key=lambda r: (r[0], r[1], r[2], r[3], r[4])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
