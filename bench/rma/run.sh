#!/usr/bin/env bash
# bench/rma/run.sh — one-sided communication (bench/rma/rma.c, OSU-style
# put/get/accumulate/fetch-and-op latency and put bandwidth) on Proust MPI,
# MPICH and Open MPI, 2 ranks, BENCH_REPS repetitions interleaved; prints
# the median of each figure per implementation and Proust / best peer.
#
#   bash bench/rma/run.sh [prefix]     (default prefix: build/install)
#
# BENCH_REPS (5), BENCH_RMA_ARGS (extra options of rma), BENCH_SYNCS
# ("lock flush fence"). Raw outputs: bench/results/rma-<date>/.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=$(realpath -m "${1:-$HERE/../../build/install}")
REPS=${BENCH_REPS:-5}
OUT=$HERE/../results/rma-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
# shellcheck source=../common/three_mpis.sh
source "$HERE/../common/three_mpis.sh"
for i in $IMPLS; do
  ${CC[$i]} -O2 "$HERE/rma.c" -o "$OUT/rma-$i" || { echo "build failed for $i" >&2; exit 1; }
done
for rep in $(seq 1 "$REPS"); do
  for sync in ${BENCH_SYNCS:-lock flush fence}; do
    for i in $IMPLS; do
      timeout 300 ${RUN[$i]} "$OUT/rma-$i" -s "$sync" ${BENCH_RMA_ARGS:-} \
        > "$OUT/$i.$sync.$rep.txt" 2> "$OUT/$i.$sync.$rep.err" ||
        echo "$i $sync rep $rep failed (see $OUT)" >&2
    done
  done
done
# medians per (impl, test, sync, bytes), then ratios (putbw: higher is better)
for i in $IMPLS; do
  cat "$OUT"/$i.*.txt | awk -v impl=$i '{print impl, $0}'
done | sort -k2,2 -k3,3 -k4,4n -k1,1 | awk '
  { key = $2 " " $3 " " $4; v[$1 SUBSEP key] = v[$1 SUBSEP key] " " $5; keys[key] = 1; impls[$1] = 1 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%-6s %-6s %9s %10s %10s %10s %8s\n", "test", "sync", "bytes", "proust", "mpich", "openmpi", "ratio"
    for (k in keys) {
      split(k, f, " "); p = median(v["proust" SUBSEP k])
      m = ("mpich" SUBSEP k) in v ? median(v["mpich" SUBSEP k]) : ""
      o = ("openmpi" SUBSEP k) in v ? median(v["openmpi" SUBSEP k]) : ""
      best = ""
      if (f[1] == "putbw") { best = (m != "" && (o == "" || m + 0 > o + 0)) ? m : o }
      else { best = (m != "" && (o == "" || m + 0 < o + 0)) ? m : o }
      r = best != "" && best + 0 > 0 ? sprintf("%.2f", p / best) : "-"
      printf "%-6s %-6s %9s %10s %10s %10s %8s\n", f[1], f[2], f[3], p, m, o, r
    }
  }' | (read -r h; echo "$h"; sort -k1,1 -k2,2 -k3,3n) | tee "$OUT/summary.txt"
echo "ratio: Proust / best peer (latency: lower is better; putbw MB/s: higher is better)"
echo "raw: $OUT"
