#!/usr/bin/env bash
# bench/fortran/run.sh — what a Fortran binding costs: the 8-byte ping-pong
# of latency.F90 through mpif.h, `use mpi` and `use mpi_f08`, and the same
# loop in C (latency.c), on Proust MPI, MPICH and Open MPI (Debian's
# mpifort.mpich, mpifort.openmpi), 2 ranks bound one per core, BENCH_REPS
# repetitions interleaved. Prints the median one-way latency (us) of each interface per
# implementation, its overhead over that implementation's C path (ns), and
# Proust / best peer (lower is better).
#
#   bash bench/fortran/run.sh [prefix]     (default prefix: build/install)
#
# BENCH_REPS (5). Raw outputs: bench/results/fortran-<date>/.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=$(realpath -m "${1:-$HERE/../../build/install}")
REPS=${BENCH_REPS:-5}
OUT=$HERE/../results/fortran-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
# shellcheck source=../common/three_mpis.sh
source "$HERE/../common/three_mpis.sh"
declare -A FC=([proust]="$PREFIX/bin/mpifort" [mpich]=mpifort.mpich [openmpi]=mpifort.openmpi)
# one rank per core, for all three: unbound, a run lands in one of two
# modes (~0.1 or ~0.3 us here) whatever the interface, which hides what a
# binding costs
RUN[proust]="$PREFIX/bin/mpiexec --bind-to core -n 2"
[ -n "${RUN[mpich]:-}" ] && RUN[mpich]="mpiexec.mpich -bind-to core -n 2"
[ -n "${RUN[openmpi]:-}" ] && RUN[openmpi]="mpiexec.openmpi --allow-run-as-root --bind-to core -n 2"
VARIANTS="C mpif.h mpi mpi_f08"
for i in $IMPLS; do
  ${CC[$i]} -std=c11 -O2 "$HERE/latency.c" -o "$OUT/lat-$i-C" ||
    { echo "C build failed for $i" >&2; exit 1; }
  for v in mpif.h mpi mpi_f08; do
    flag=""; [ "$v" = mpi ] && flag=-DIFACE_MPI; [ "$v" = mpi_f08 ] && flag=-DIFACE_F08
    (cd "$OUT" && ${FC[$i]} -O2 $flag -J "$OUT" "$HERE/latency.F90" -o "$OUT/lat-$i-$v") ||
      { echo "Fortran ($v) build failed for $i" >&2; exit 1; }
  done
done
{
  echo "date: $(date -Is)  host: $(uname -n)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$HERE/../.." describe --always --dirty 2>/dev/null)  reps: $REPS"
} > "$OUT/meta.txt"
for rep in $(seq 1 "$REPS"); do
  for v in $VARIANTS; do
    for i in $IMPLS; do
      # shellcheck disable=SC2086
      timeout 300 ${RUN[$i]} "$OUT/lat-$i-$v" > "$OUT/$i.$v.$rep.txt" 2> "$OUT/$i.$v.$rep.err" \
        < /dev/null || echo "$i $v rep $rep failed (see $OUT)" >&2
    done
  done
done
# every block of every run: "impl variant usec"; medians over them all
for i in $IMPLS; do
  for v in $VARIANTS; do
    cat "$OUT"/$i.$v.*.txt 2>/dev/null | awk -v impl=$i -v var=$v 'NF == 3 {print impl, var, $3}'
  done
done | awk -v variants="$VARIANTS" '
  { v[$1 SUBSEP $2] = v[$1 SUBSEP $2] " " $3; impls[$1] = 1 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function spread(s,   a, n, i, lo, hi) {
    n = split(s, a, " "); lo = hi = a[1]
    for (i = 2; i <= n; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
    return sprintf("%.3f-%.3f", lo, hi)
  }
  END {
    nv = split(variants, vs, " ")
    printf "%-8s %-8s %10s %14s %10s %12s\n", "iface", "impl", "usec", "spread", "over C ns", "proust/best"
    for (k = 1; k <= nv; k++) {
      var = vs[k]; best = ""
      for (i in impls) if (i != "proust" && ((i SUBSEP var) in v)) {
        m = median(v[i SUBSEP var]); if (best == "" || m + 0 < best + 0) best = m }
      for (i in impls) {
        if (!((i SUBSEP var) in v)) continue
        m = median(v[i SUBSEP var]); c = median(v[i SUBSEP "C"])
        over = var == "C" ? "-" : sprintf("%.1f", (m - c) * 1000)
        r = (i == "proust" && best != "") ? sprintf("%.3f", m / best) : ""
        printf "%-8s %-8s %10.4f %14s %10s %12s\n", var, i, m, spread(v[i SUBSEP var]), over, r
      }
    }
  }' | tee "$OUT/summary.txt"
echo "(one-way usec, median of every 20000-round-trip block of $REPS runs; results in $OUT)"
