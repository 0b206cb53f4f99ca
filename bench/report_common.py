"""Helpers shared by the benchmark reports (bench/report.py,
bench/progress/report.py, bench/placement/report.py): the implementation
list of a run, medians' formatting, plain-text tables, geometric means."""
import csv
import math
import os


def load_kinds(root):
    """impls.tsv of a run: {impl: kind} and the impls in their order."""
    kinds, order = {}, []
    path = os.path.join(root, "impls.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.reader(f, delimiter="\t"):
                if len(row) >= 2:
                    kinds[row[0]] = row[1]
                    order.append(row[0])
    return kinds, order


def geomean(values):
    """Geometric mean of the positive values; None if there are none."""
    values = [v for v in values if v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def human_size(n):
    if n == "" or n is None:
        return ""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}"


def table(rows, header):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w) for c, w in zip(r, widths))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])
