#!/usr/bin/env bash
# bench/match/run.sh — matching with many receives or many unexpected
# messages waiting (bench/match/match.c) on Proust MPI, MPICH and Open MPI,
# 2 ranks, BENCH_REPS repetitions interleaved; prints the median of each
# figure (ns per message) per implementation and Proust / best peer
# (lower is better).
#
#   bash bench/match/run.sh [prefix]     (default prefix: build/install)
#
# BENCH_REPS (5), BENCH_MATCH_ARGS (extra options of match, e.g.
# "-N 1024 -o reverse"). Raw outputs: bench/results/match-<date>/.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=$(realpath -m "${1:-$HERE/../../build/install}")
REPS=${BENCH_REPS:-5}
OUT=$HERE/../results/match-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
# shellcheck source=../common/three_mpis.sh
source "$HERE/../common/three_mpis.sh"
for i in $IMPLS; do
  ${CC[$i]} -std=c11 -O2 "$HERE/match.c" -o "$OUT/match-$i" ||
    { echo "build failed for $i" >&2; exit 1; }
done
{
  echo "date: $(date -Is)  host: $(uname -n)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$HERE/../.." describe --always --dirty 2>/dev/null)  reps: $REPS  args: ${BENCH_MATCH_ARGS:-}"
} > "$OUT/meta.txt"
for rep in $(seq 1 "$REPS"); do
  for i in $IMPLS; do
    # shellcheck disable=SC2086
    timeout 300 ${RUN[$i]} "$OUT/match-$i" ${BENCH_MATCH_ARGS:-} \
      > "$OUT/$i.$rep.txt" 2> "$OUT/$i.$rep.err" < /dev/null ||
      echo "$i rep $rep failed (see $OUT)" >&2
  done
done
# medians per (impl, test, order, n), then proust / best peer
for i in $IMPLS; do
  cat "$OUT"/$i.*.txt | awk -v impl=$i 'NF == 4 {print impl, $0}'
done | awk '
  { key = $2 " " $3 " " $4; v[$1 SUBSEP key] = v[$1 SUBSEP key] " " $5
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%-10s %-8s %6s %10s %10s %10s %12s\n", "test", "order", "n", "proust", "mpich", "openmpi", "proust/best"
    for (k = 1; k <= nk; k++) {
      key = keys[k]; split(key, f, " "); p = median(v["proust" SUBSEP key])
      m = ("mpich" SUBSEP key) in v ? median(v["mpich" SUBSEP key]) : ""
      o = ("openmpi" SUBSEP key) in v ? median(v["openmpi" SUBSEP key]) : ""
      best = (m != "" && (o == "" || m + 0 < o + 0)) ? m : o
      r = best != "" && best + 0 > 0 ? sprintf("%.3f", p / best) : "-"
      printf "%-10s %-8s %6s %10s %10s %10s %12s\n", f[1], f[2], f[3], p, m, o, r
    }
  }' | tee "$OUT/summary.txt"
echo "(ns per message, median of $REPS runs; results in $OUT)"
