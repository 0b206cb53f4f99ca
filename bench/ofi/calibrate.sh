#!/usr/bin/env bash
# Calibrate the ofi rail's read threshold (PROUST_OFI_READ_MIN): from which
# size is a rendezvous piece faster read by the receiver (fi_read, no copy,
# one more round trip) than sent as messages (one copy out of a receive
# buffer)? Runs the native pingpong (latency and streaming bandwidth) with
# every piece read (PROUST_OFI_READ_MIN=1) and with none (off), alternated,
# ROUNDS times, between two ranks on the provider PROUST_OFI_PROVIDER picks,
# and prints the medians side by side and the threshold to use: the
# smallest size from which reading wins, or ties within 3 %, on both
# measures at that size and every larger one. Then the streaming bandwidth
# of each rail at 4 MiB (ofi, tcp), printed as PROUST_RAIL_BANDWIDTH (the
# shares split_balance gives the rails). Then the slot rings: latency from
# 8 B to 8 KiB with rings (slots of 16 KiB) and without, alternated,
# printed as PROUST_OFI_RING (on where rings win at 8 B) and
# PROUST_OFI_RING_SLOT (the smallest slot that holds the largest message
# up to which they win, at every size below it).
#
#   bash bench/ofi/calibrate.sh [PREFIX] [ROUNDS]   (PREFIX: build/install)
#   PROUSTRUN_ARGS="--launch-agent ... -H a,b"      to measure across hosts
# Then: export PROUST_OFI_READ_MIN=... PROUST_RAIL_BANDWIDTH=... and the
# PROUST_OFI_RING* lines as printed.
set -euo pipefail
prefix=${1:-build/install}
rounds=${2:-5}
run=$prefix/bin/proustrun
bench=$prefix/bin/proust-bench-pingpong
[ -x "$run" ] && [ -x "$bench" ] || { echo "calibrate: no $run or $bench (make build first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
    for mode in off 1; do
        PROUST_OFI_READ_MIN=$mode PROUST_RAILS=self,ofi PROUST_PROGRESS=poll PROUST_RDV_THRESHOLD=32K \
            "$run" ${PROUSTRUN_ARGS:--n 2} "$bench" -t lat,bw -m 32K -M 4M \
            | awk -v m="$mode" '$1 == "pingpong" { print m, $2, $3, $4 }' >> "$out/all"
    done
done
for r in $(seq 1 "$rounds"); do
    for rail in ofi tcp; do
        rails=$rail; [ "$rail" = ofi ] && rails=self,ofi
        PROUST_RAILS=$rails PROUST_PROGRESS=poll "$run" ${PROUSTRUN_ARGS:--n 2} "$bench" -t bw -m 4M -M 4M \
            | awk -v r="$rail" '$1 == "pingpong" { print r, $4 }' >> "$out/rails"
    done
done
for r in $(seq 1 "$rounds"); do
    for ring in on off; do
        PROUST_OFI_RING=$ring PROUST_OFI_RING_AFTER=0 PROUST_OFI_RING_SLOT=16K PROUST_RAILS=self,ofi \
            PROUST_PROGRESS=poll "$run" ${PROUSTRUN_ARGS:--n 2} "$bench" -t lat -m 8 -M 8K \
            | awk -v m="$ring" '$1 == "pingpong" { print m, $3, $4 }' >> "$out/ring"
    done
done
python3 - "$out/all" "$out/rails" "$out/ring" <<'PY'
import statistics, sys
from collections import defaultdict
v = defaultdict(list)
for line in open(sys.argv[1]):
    mode, metric, size, value = line.split()
    v[(mode, metric, int(size))].append(float(value))
sizes = sorted({k[2] for k in v})
med = {k: statistics.median(x) for k, x in v.items()}
def wins(size):
    lat = med[("1", "lat", size)] <= med[("off", "lat", size)] * 1.03
    bw = med[("1", "bw", size)] >= med[("off", "bw", size)] * 0.97
    return lat and bw
print(f"{'size':>9} {'lat msg':>9} {'lat read':>9} {'bw msg':>9} {'bw read':>9}  (medians of {len(v[('off','lat',sizes[0])])} runs; us, MB/s)")
for s in sizes:
    print(f"{s:>9} {med[('off','lat',s)]:9.1f} {med[('1','lat',s)]:9.1f} "
          f"{med[('off','bw',s)]:9.0f} {med[('1','bw',s)]:9.0f}{'  read' if wins(s) else ''}")
threshold = None
for i, s in enumerate(sizes):
    if all(wins(t) for t in sizes[i:]):
        threshold = s
        break
if threshold is None:
    print("PROUST_OFI_READ_MIN=off  (reading never wins here)")
else:
    print(f"PROUST_OFI_READ_MIN={threshold}")
bw = defaultdict(list)
for line in open(sys.argv[2]):
    rail, value = line.split()
    bw[rail].append(float(value))
print("PROUST_RAIL_BANDWIDTH=" + ",".join(
    f"{rail}:{statistics.median(v) / 1000:.1f}" for rail, v in sorted(bw.items())))
ring = defaultdict(list)
for line in open(sys.argv[3]):
    mode, size, value = line.split()
    ring[(mode, int(size))].append(float(value))
rsizes = sorted({k[1] for k in ring})
rmed = {k: statistics.median(x) for k, x in ring.items()}
print(f"{'size':>9} {'lat msg':>9} {'lat ring':>9}  (slot rings; us)")
for s in rsizes:
    print(f"{s:>9} {rmed[('off', s)]:9.2f} {rmed[('on', s)]:9.2f}"
          f"{'  ring' if rmed[('on', s)] < rmed[('off', s)] else ''}")
fits = 0  # the largest size up to which rings win at every size
for s in rsizes:
    if rmed[("on", s)] >= rmed[("off", s)]:
        break
    fits = s
if fits == 0:
    print("PROUST_OFI_RING=off  (messages win at 8 B here)")
else:
    slot = 256  # header (32 B) and stamps (16 B) included, a power of two
    while slot < fits + 48:
        slot *= 2
    print(f"PROUST_OFI_RING=on PROUST_OFI_RING_SLOT={slot}")
PY
