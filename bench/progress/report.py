#!/usr/bin/env python3
"""report.py — medians and Proust / peer ratios of a bench/progress/run.sh run.

    python3 bench/progress/report.py bench/results/progress-<date>
                                     (or bench/results/progress-latest)

Reads <dir>/raw/<impl>/<job>.<rep>.txt (the programs' own output: '#' lines
are comments, every other line is one measurement) and <dir>/impls.tsv
(name, kind: "proust" or "peer"). Lines:

  overlap <mode> <size> <factor|-> <t_cpu> <t_comm> <t_compute> <t_total> <overlap%>
  reactivity <K> <threads> <lat_mean> <lat_median> <round_trips>
  waiters <N> <t_median_ms> <t_min_ms> <t_max_ms> <ratio> <reps>
  threads <N> <lat_median> <lat_min> <lat_max> <msg_rate> <round_trips>
  pingpong lat <size> <us>
  partitioned <size> <P> <T> <factor> <t_cpu> <t_comm> <t_compute> <t_bulk> <t_first>
              <t_last> <overlap%>

Every value is the median over all samples (one per repetition of the job)
of that implementation. Ratios compare each Proust implementation with the
best peer (MPICH, MPICH with async progress, Open MPI) at the same point:
  times (lower is better):           proust / min(peers)  -> < 1: Proust wins
  rates, overlap (higher is better): proust / max(peers)  -> > 1: Proust wins
overlap % is compared as a difference in points (proust - best peer).
Tables: overlap (t_comm, overlap % and t_total per mode), the compute
slowdown inside each MPI, seq, reactivity, waiters, threads (with fine vs
coarse locking), 8-byte ping-pong with the progress thread on vs off,
partitioned communication (first partition, whole round, overlap %, round
against compute-then-send), and a summary of geometric means. Writes <dir>/medians.csv
(bench,mode,size,x,metric,impl,kind,n,median,min,max) for plot.py.
Standard library only.
"""
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_common import load_kinds, geomean, human_size, fmt, table  # noqa: E402


OVERLAP_MODES = ["isend", "irecv", "both", "iallreduce", "ibcast"]
OVERLAP_METRICS = ["t_cpu", "t_comm", "t_compute", "t_total", "overlap"]
PART_METRICS = ["t_cpu", "t_comm", "t_compute", "t_bulk", "t_first", "t_last", "overlap"]
# Special comparisons (run.sh names).
MAIN, POLL, COARSE = "proust", "proust-poll", "proust-coarse"
STRIPES1 = "proust-stripes1"


def num(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_line(line):
    """[(bench, mode, size, x, metric, value)] of one output line."""
    tok = line.split()
    if not tok or tok[0].startswith("#"):
        return []
    out = []

    def add(bench, mode, size, x, names, values):
        for name, v in zip(names, values):
            v = num(v)
            if v is not None:
                out.append((bench, mode, size, x, name, v))

    try:
        if tok[0] == "overlap" and len(tok) == 9:
            add("overlap", tok[1], int(tok[2]), tok[3], OVERLAP_METRICS, tok[4:9])
        elif tok[0] == "reactivity" and len(tok) == 6:
            add("reactivity", "", "", int(tok[1]), ["threads", "lat_mean", "lat_median", "n"],
                tok[2:6])
        elif tok[0] == "waiters" and len(tok) == 7:
            add("waiters", "", "", int(tok[1]), ["t_median", "t_min", "t_max"], tok[2:5])
        elif tok[0] in ("threads", "threads_peers") and len(tok) == 7:
            add(tok[0], "", "", int(tok[1]),
                ["lat_median", "lat_min", "lat_max", "rate", "n"], tok[2:7])
        elif tok[0] == "partitioned" and len(tok) == 12:
            # mode "P:T" (partitions, producer threads), x = the factor
            add("partitioned", f"{int(tok[2])}:{int(tok[3])}", int(tok[1]), tok[4],
                PART_METRICS, tok[5:12])
        elif tok[0] == "pingpong" and len(tok) == 4:
            add("pingpong", tok[1], int(tok[2]), "", ["value"], tok[3:4])
    except ValueError:
        return []
    return out


def load(root):
    """samples[(bench, mode, size, x, metric)][impl] = [values]; skipped[impl] = [job]"""
    samples, skipped = {}, {}
    raw = os.path.join(root, "raw")
    if not os.path.isdir(raw):
        sys.exit(f"report: no raw/ directory in {root}")
    for impl in sorted(os.listdir(raw)):
        idir = os.path.join(raw, impl)
        if not os.path.isdir(idir):
            continue
        for fname in sorted(os.listdir(idir)):
            if not fname.endswith(".txt"):
                continue  # .err, .failed
            with open(os.path.join(idir, fname), errors="replace") as f:
                for line in f:
                    if line.startswith("# SKIPPED"):
                        job = fname.rsplit(".", 2)[0]
                        if job not in skipped.setdefault(impl, []):
                            skipped[impl].append(job)
                    for bench, mode, size, x, metric, v in parse_line(line):
                        key = (bench, mode, size, x, metric)
                        samples.setdefault(key, {}).setdefault(impl, []).append(v)
    return samples, skipped


class Report:
    def __init__(self, root):
        self.root = root
        self.samples, self.skipped = load(root)
        self.kinds, order = load_kinds(root)
        impls = {i for per in self.samples.values() for i in per}
        self.impls = sorted(impls, key=lambda n: (order.index(n) if n in order else len(order), n))
        self.csv_rows = []
        self.summary = []
        self._med = {}

    def kind(self, impl):
        return self.kinds.get(impl, "proust" if impl.startswith("proust") else "peer")

    def med(self, key, impl):
        """Median of the samples (memoised; records a CSV row the first time)."""
        if (key, impl) in self._med:
            return self._med[(key, impl)]
        vals = self.samples.get(key, {}).get(impl)
        m = statistics.median(vals) if vals else None
        self._med[(key, impl)] = m
        if vals:
            bench, mode, size, x, metric = key
            self.csv_rows.append([bench, mode, size, x, metric, impl, self.kind(impl), len(vals),
                                  m, min(vals), max(vals)])
        return m

    def keys(self, bench, metric, mode=None):
        ks = [k for k in self.samples if k[0] == bench and k[4] == metric
              and (mode is None or k[1] == mode)]
        order = OVERLAP_MODES + ["seq"]
        return sorted(ks, key=lambda k: (order.index(k[1]) if k[1] in order else len(order),
                                         str(k[1]), -1 if k[2] == "" else k[2], xnum(k[3])))

    def ratio_table(self, title, rows, higher, impls=None, diff=False, name=None, label_cols=None):
        """rows: [(label cells, {impl: value})]. Adds best peer and, per Proust
        implementation, value / best (or value - best with diff=True)."""
        impls = [i for i in (impls or self.impls) if any(r[1].get(i) is not None for r in rows)]
        if not rows or not impls:
            return {}
        mine = [i for i in impls if self.kind(i) == "proust"]
        peers = [i for i in impls if self.kind(i) != "proust"]
        out, ratios = [], {m: [] for m in mine}
        for labels, vals in rows:
            best = [(vals[p], p) for p in peers if vals.get(p) is not None
                    and (diff or vals[p] > 0)]
            best = (max if higher else min)(best) if best else None
            row = list(labels) + [fmt(vals.get(i)) for i in impls]
            row.append(best[1] if best else "-")
            for m in mine:
                v = vals.get(m)
                if best is None or v is None or (not diff and v <= 0):
                    row.append("-")
                elif diff:
                    row.append(f"{v - best[0]:+.1f}")
                    ratios[m].append(v - best[0])
                else:
                    r = v / best[0]
                    row.append(f"{r:.2f}")
                    ratios[m].append(r)
            out.append(row)
        op = "-" if diff else "/"
        header = list(label_cols) + impls + ["best peer"] + [
            f"{m}-best (pts)" if diff else f"{m}/best" for m in mine]
        if peers and mine:
            what = ("difference in points" if diff else
                    f"ratio, {'>' if higher else '<'} 1 means Proust wins")
            title += f"; {what}"
        print(title)
        print(table(out, header))
        if peers and name:
            agg = []
            for m in mine:
                if not ratios[m]:
                    continue
                g = statistics.mean(ratios[m]) if diff else geomean(ratios[m])
                if g is None:
                    continue
                agg.append(f"{m}{op}best {g:+.1f}" if diff else f"{m}{op}best {g:.2f}")
                self.summary.append([name, m, f"{g:+.1f}" if diff else f"{g:.2f}",
                                     "mean diff (points)" if diff else "geomean ratio",
                                     "higher" if higher else "lower", str(len(ratios[m]))])
            if agg:
                print(("mean: " if diff else "geometric mean: ") + ", ".join(agg))
        print()
        return ratios

    # ---- overlap ---------------------------------------------------------
    def overlap(self):
        comm_rows, seen = [], set()
        for k in self.keys("overlap", "t_comm"):
            # t_comm is measured once per (mode, size): the first factor's row
            if k[1] == "seq" or (k[1], k[2]) in seen:
                continue
            seen.add((k[1], k[2]))
            comm_rows.append(((k[1], human_size(k[2])), {i: self.med(k, i) for i in self.impls}))
        self.ratio_table("== overlap: t_comm, the operation without compute (us, median; lower "
                         "is better)", comm_rows, False, name="overlap t_comm",
                         label_cols=["mode", "size"])
        for mode in OVERLAP_MODES:
            rows, trows = [], []
            for k in self.keys("overlap", "overlap", mode):
                labels = (human_size(k[2]), k[3])
                rows.append((labels, {i: self.med(k, i) for i in self.impls}))
            for k in self.keys("overlap", "t_total", mode):
                if k[3] == "0":
                    continue
                tk = {i: self.med(k, i) for i in self.impls}
                trows.append(((human_size(k[2]), k[3]), tk))
            if not rows:
                continue
            self.ratio_table(f"== overlap {mode}: overlap % (median; higher is better; 100 = "
                             "communication hidden, 0 = none, < 0 = slower than in sequence)",
                             [r for r in rows if any(v is not None for v in r[1].values())],
                             True, diff=True, name=f"overlap {mode} %",
                             label_cols=["size", "t/t_comm"])
            self.ratio_table(f"== overlap {mode}: t_total, communication + compute (us, median; "
                             "lower is better)", trows, False, name=f"overlap {mode} t_total",
                             label_cols=["size", "t/t_comm"])
        # compute slowdown: t_compute / t_cpu, alone, inside each MPI job
        slow = {}
        for k in self.keys("overlap", "t_compute"):
            kc = k[:4] + ("t_cpu",)
            for i in self.impls:
                a, b = self.med(k, i), self.med(kc, i)
                if a is not None and b:
                    slow.setdefault(i, []).append(a / b)
        if slow:
            rows = [[i, fmt(statistics.median(v)), fmt(max(v)), str(len(v))]
                    for i, v in slow.items()]
            rows.sort(key=lambda r: self.impls.index(r[0]))
            print("== compute alone inside the MPI job / the same compute on an idle core "
                  "before MPI_Init (1.0 = the MPI takes no CPU from an idle process)")
            print(table(rows, ["impl", "median", "max", "points"]))
            print()
        rows = []
        for k in self.keys("overlap", "t_total", "seq"):
            rows.append(((human_size(k[2]),), {i: self.med(k, i) for i in self.impls}))
        if rows:
            cpu = [self.med(k[:4] + ("t_cpu",), i) for k in self.keys("overlap", "t_total", "seq")
                   for i in self.impls]
            cpu = [c for c in cpu if c]
            t = f"{statistics.median(cpu):g} us " if cpu else ""
            self.ratio_table(f"== overlap seq: MPI_Isend, {t}compute, MPI_Wait; receiver in "
                             "MPI_Recv: time of the sequence (us, median; lower is better)", rows,
                             False, name="overlap seq", label_cols=["size"])

    # ---- reactivity --------------------------------------------------------
    def reactivity(self):
        for metric, what in (("lat_mean", "loop time / 2 round trips"),
                             ("lat_median", "median round trip / 2")):
            rows = []
            for k in self.keys("reactivity", metric):
                th = [self.med(k[:4] + ("threads",), i) for i in self.impls]
                th = sorted({int(t) for t in th if t is not None})
                rows.append(((str(k[3]), "/".join(map(str, th))),
                             {i: self.med(k, i) for i in self.impls}))
            self.ratio_table(f"== reactivity: 8 B ping-pong while rank 1 runs K compute threads "
                             f"per core, {what} (us, median; lower is better)", rows, False,
                             name=f"reactivity {metric}", label_cols=["K", "threads"])

    # ---- waiters -------------------------------------------------------------
    def waiters(self):
        keys = self.keys("waiters", "t_median")
        if not keys:
            return
        rows, rrows = [], []
        base = {i: self.med(("waiters", "", "", 0, "t_median"), i) for i in self.impls}
        for k in keys:
            vals = {i: self.med(k, i) for i in self.impls}
            rows.append(((str(k[3]),), vals))
            rrows.append(((str(k[3]),), {i: (vals[i] / base[i]) if vals.get(i) is not None
                                         and base.get(i) else None for i in self.impls}))
        self.ratio_table("== waiters: rank 1's main thread computes a fixed task while N of its "
                         "threads wait in MPI_Recv: completion time (ms, median; lower is "
                         "better)", rows, False,
                         name="waiters time", label_cols=["N"])
        self.ratio_table("== waiters: completion time / completion time with N = 0 (~1.0 when "
                         "waiting threads sleep; lower is better)", rrows, False,
                         name="waiters slowdown", label_cols=["N"])

    # ---- threads -------------------------------------------------------------
    def threads(self, bench="threads", what="N threads per rank"):
        lat = [((str(k[3]),), {i: self.med(k, i) for i in self.impls})
               for k in self.keys(bench, "lat_median")]
        rate = [((str(k[3]),), {i: self.med(k, i) for i in self.impls})
                for k in self.keys(bench, "rate")]
        if not lat:
            return
        self.ratio_table(f"== {bench}: {what}, concurrent 8 B ping-pongs, per-thread "
                         "latency (us, median over threads; lower is better)", lat, False,
                         name=f"{bench} latency", label_cols=["N"])
        self.ratio_table(f"== {bench}: aggregate message rate (messages/s, all threads; higher "
                         "is better)", rate, True, name=f"{bench} rate", label_cols=["N"])
        for other, label in ((COARSE, "coarse"), (STRIPES1, "one match lock")):
            rows = []
            for (lab, lv), (_, rv) in zip(lat, rate):
                if lv.get(MAIN) and lv.get(other) and rv.get(MAIN) and rv.get(other):
                    rows.append([lab[0], fmt(lv[MAIN]), fmt(lv[other]),
                                 f"{lv[MAIN] / lv[other]:.2f}", fmt(rv[MAIN]), fmt(rv[other]),
                                 f"{rv[MAIN] / rv[other]:.2f}"])
            if rows:
                print(f"== {bench}: fine ({MAIN}) vs {label} ({other}) "
                      "(latency ratio < 1 and rate ratio > 1: fine locking wins)")
                print(table(rows, ["N", "lat fine", f"lat {label}", "ratio", "rate fine",
                                   f"rate {label}", "ratio"]))
                print()

    # ---- pingpong 8 B ----------------------------------------------------
    def pingpong(self):
        keys = self.keys("pingpong", "value", "lat")
        for k in keys:
            vals = {i: self.med(k, i) for i in self.impls}
            if not any(v is not None for v in vals.values()):
                continue
            self.ratio_table(f"== ping-pong latency at {human_size(k[2])} B (bench/mpi/pingpong "
                             "lat, us, median; lower is better)", [((human_size(k[2]),), vals)],
                             False, name=f"pingpong {human_size(k[2])}", label_cols=["size"])
            if vals.get(MAIN) and vals.get(POLL):
                d = vals[MAIN] - vals[POLL]
                print(f"progress thread on ({MAIN}) vs off ({POLL}): {fmt(vals[MAIN])} vs "
                      f"{fmt(vals[POLL])} us, {d:+.3f} us ({100.0 * d / vals[POLL]:+.0f}%)")
                self.summary.append([f"pingpong {human_size(k[2])}", f"{MAIN}/{POLL}",
                                     f"{vals[MAIN] / vals[POLL]:.2f}", "ratio", "lower", "1"])
                print()

    # ---- partitioned -----------------------------------------------------------
    def partitioned(self):
        def order(k):
            parts, threads = (int(v) for v in k[1].split(":"))
            return (threads, k[2], parts, xnum(k[3]))

        def rows(metric, only_compute=False):
            out = []
            for k in sorted(self.keys("partitioned", metric), key=order):
                if only_compute and xnum(k[3]) <= 0:
                    continue
                parts, threads = k[1].split(":")
                out.append(((human_size(k[2]), parts, threads, k[3]),
                            {i: self.med(k, i) for i in self.impls}))
            return out

        cols = ["size", "P", "T", "t/t_comm"]
        first = rows("t_first")
        if not first:
            return
        self.ratio_table("== partitioned: rank 0 sees partition 0 (MPI_Parrived), us from the "
                         "round's start (median; lower is better)", first, False,
                         name="partitioned t_first", label_cols=cols)
        self.ratio_table("== partitioned: whole round, producer compute included (us, median; "
                         "lower is better)", rows("t_last"), False, name="partitioned t_last",
                         label_cols=cols)
        self.ratio_table("== partitioned: overlap % of the transfer with the producer's "
                         "compute (median; higher is better)", rows("overlap", True), True,
                         diff=True, name="partitioned overlap %", label_cols=cols)
        gain = []
        for labels, vals in rows("t_last"):
            k = None
            bulk = {}
            for kk in self.keys("partitioned", "t_bulk"):
                parts, threads = kk[1].split(":")
                if (human_size(kk[2]), parts, threads, kk[3]) == tuple(labels):
                    k = kk
            if k is None:
                continue
            for i in self.impls:
                b = self.med(k, i)
                bulk[i] = vals[i] / b if vals.get(i) is not None and b else None
            gain.append((labels, bulk))
        self.ratio_table("== partitioned round / compute-then-MPI_Send round of the same MPI "
                         "(< 1: partitioning pays; lower is better)", gain, False,
                         name="partitioned / bulk", label_cols=cols)

    def run(self):
        meta = os.path.join(self.root, "meta.txt")
        if os.path.exists(meta):
            with open(meta) as f:
                for line in f:
                    print("# " + line.rstrip())
            print()
        self.overlap()
        self.reactivity()
        self.waiters()
        self.threads()
        self.threads("threads_peers", "N threads of rank 0, each with its own peer rank")
        self.pingpong()
        self.partitioned()
        for impl, jobs in sorted(self.skipped.items()):
            print(f"note: {impl} skipped {', '.join(jobs)} (MPI_THREAD_MULTIPLE not provided)")
        if self.summary:
            print()
            print("== summary: Proust against the best peer, over the points of each table")
            print(table(self.summary, ["measurement", "impl", "value", "aggregate", "better",
                                       "points"]))
        with open(os.path.join(self.root, "medians.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bench", "mode", "size", "x", "metric", "impl", "kind", "n", "median",
                        "min", "max"])
            w.writerows(self.csv_rows)


def xnum(x):
    """Sort key for the x column: numbers numerically, '-' first."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return -1.0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    r = Report(sys.argv[1])
    if not r.samples:
        sys.exit(f"report: no measurements under {sys.argv[1]}/raw")
    r.run()


if __name__ == "__main__":
    main()
