#!/usr/bin/env bash
# bench/ofi/run.sh — MPI over libfabric: Proust MPI on its ofi rail against
# Open MPI's mtl/ofi (--mca pml cm --mca mtl ofi) on the same provider, and
# libfabric's own fi_pingpong as the floor; 2 ranks on this host, so every
# message goes through the provider (Proust: PROUST_RAILS=self,ofi; Open
# MPI's cm pml has no shared-memory path). MPICH is left out: Debian builds
# it on ch4:ucx, it cannot use libfabric. The raw provider: fi_pingpong's
# latency, and fi_write_bw.c's bandwidth (fi_write, 16 in flight, into the
# other process's registered buffer). BENCH_REPS repetitions,
# interleaved; medians, Proust / Open MPI and Proust / the raw provider.
#
#   bash bench/ofi/run.sh [prefix]          (default prefix: build/install)
#
# BENCH_OFI_PROVIDER (tcp;ofi_rxm), BENCH_REPS (5). Raw outputs:
# bench/results/ofi-<date>/.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=$(realpath -m "${1:-$HERE/../../build/install}")
REPS=${BENCH_REPS:-5}
PROV=${BENCH_OFI_PROVIDER:-tcp;ofi_rxm}
OUT=$HERE/../results/ofi-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
# shellcheck source=../common/three_mpis.sh
source "$HERE/../common/three_mpis.sh"
IMPLS=proust
[ -n "${CC[openmpi]:-}" ] && IMPLS="proust openmpi"
for i in $IMPLS; do
  ${CC[$i]} -O2 -I"$HERE/../common" -I"$HERE/../mpi" "$HERE/../mpi/pingpong.c" -o "$OUT/pingpong-$i" ||
    { echo "build failed for $i" >&2; exit 1; }
done
gcc -O2 "$HERE/fi_write_bw.c" -o "$OUT/fi_write_bw" -lfabric ||
  { echo "build failed for fi_write_bw" >&2; exit 1; }
RUN[proust]="env PROUST_RAILS=self,ofi PROUST_OFI_PROVIDER=$PROV ${RUN[proust]}"
RUN[openmpi]="${RUN[openmpi]:-} --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include $PROV"
SIZES="8 1024 65536 1048576 4194304"
for rep in $(seq 1 "$REPS"); do
  for i in $IMPLS; do
    timeout 300 ${RUN[$i]} "$OUT/pingpong-$i" -t lat,bw -m 8 -M 4M \
      > "$OUT/$i.$rep.txt" 2> "$OUT/$i.$rep.err" || echo "$i rep $rep failed (see $OUT)" >&2
  done
  # the raw provider's write bandwidth
  "$OUT/fi_write_bw" -p "$PROV" > "$OUT/fi_write.srv.$rep" 2>&1 &
  srv=$!
  sleep 0.5
  timeout 120 "$OUT/fi_write_bw" -p "$PROV" 127.0.0.1 > "$OUT/fi_write.$rep.txt" 2>&1
  wait $srv
  # fi_pingpong: latency only (usec/xfer is a round trip's half: its -I loop)
  if command -v fi_pingpong > /dev/null; then
    for s in $SIZES; do
      fi_pingpong -p "$PROV" -e rdm -I 10000 -S "$s" > "$OUT/fi.$s.$rep.srv" 2>&1 &
      srv=$!
      sleep 0.5
      timeout 60 fi_pingpong -p "$PROV" -e rdm -I 10000 -S "$s" 127.0.0.1 > "$OUT/fi.$s.$rep.cli" 2>&1
      wait $srv
      awk -v s="$s" '$1 ~ /^[0-9]/ && NF >= 8 { print "pingpong lat", s, $(NF-1) }' \
        "$OUT/fi.$s.$rep.cli" >> "$OUT/fi_pingpong.$rep.txt"
    done
  fi
done
python3 "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
echo "raw: $OUT"
