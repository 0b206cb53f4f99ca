#!/usr/bin/env bash
# bench/nas/run.sh — the NAS Parallel Benchmarks (MPI version, 3.4) on
# Proust MPI, MPICH and Open MPI: seed 001 measures PIOMan on NAS SP. Each
# kernel is built with each MPI's Fortran wrapper (mpif90, mpif90.mpich,
# mpif90.openmpi) and run BENCH_REPS times, interleaved; prints the median
# time and Mop/s, the spread, the verification of every run, and Proust /
# best peer of the times (lower is better).
#
#   NPB_DIR=/path/to/NPB3.4-MPI bash bench/nas/run.sh [prefix]
#
# NPB is not in this repository: NPB_DIR is the NPB3.4-MPI folder of NASA's
# NPB 3.4 release (or a copy of it). BENCH_NAS_KERNELS ("sp"),
# BENCH_NAS_CLASS (A), BENCH_NAS_NP (4: SP and BT want a square),
# BENCH_NAS_F08 (def: `use mpi`; f: mpif.h; f08: mpi_f08), BENCH_REPS (5).
# Raw outputs: bench/results/nas-<date>/.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=$(realpath -m "${1:-$HERE/../../build/install}")
: "${NPB_DIR:?set NPB_DIR to the NPB3.4-MPI folder of NPB 3.4}"
KERNELS=${BENCH_NAS_KERNELS:-sp}
CLASS=${BENCH_NAS_CLASS:-A}
NP=${BENCH_NAS_NP:-4}
F08=${BENCH_NAS_F08:-def}
REPS=${BENCH_REPS:-5}
OUT=$HERE/../results/nas-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
declare -A FC CCX RUN
FC[proust]=$PREFIX/bin/mpif90; CCX[proust]=$PREFIX/bin/mpicc
RUN[proust]="$PREFIX/bin/mpiexec -n $NP"
if command -v mpif90.mpich > /dev/null; then
  FC[mpich]=mpif90.mpich; CCX[mpich]=mpicc.mpich; RUN[mpich]="mpiexec.mpich -n $NP"
fi
if command -v mpif90.openmpi > /dev/null; then
  FC[openmpi]=mpif90.openmpi; CCX[openmpi]=mpicc.openmpi
  RUN[openmpi]="mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none -n $NP"
fi
built=""
for i in proust mpich openmpi; do
  [ -n "${FC[$i]:-}" ] || continue
  rm -rf "$OUT/npb-$i" && cp -a "$NPB_DIR" "$OUT/npb-$i" && mkdir -p "$OUT/npb-$i/bin"
  ok=1
  for k in $KERNELS; do
    make -C "$OUT/npb-$i" "$k" CLASS="$CLASS" F08="$F08" MPIFC="${FC[$i]}" MPICC="${CCX[$i]}" \
      > "$OUT/build-$i-$k.log" 2>&1 || { ok=0; break; }
  done
  if [ $ok = 1 ]; then
    built="$built $i"
  elif [ $i = proust ]; then
    echo "building $k for Proust failed: $OUT/build-$i-$k.log" >&2; exit 1
  else # (Open MPI's mpif90 leaves mpif.h codes to gfortran's argument checks)
    echo "building $k for $i failed, $i left out: $OUT/build-$i-$k.log" >&2
  fi
done
IMPLS=$built
{
  echo "date: $(date -Is)  host: $(uname -n)  cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$HERE/../.." describe --always --dirty 2>/dev/null)  reps: $REPS"
  echo "kernels: $KERNELS  class: $CLASS  np: $NP  interface: $F08"
} > "$OUT/meta.txt"
for rep in $(seq 1 "$REPS"); do
  for k in $KERNELS; do
    for i in $IMPLS; do
      (cd "$OUT/npb-$i/bin" &&
        # shellcheck disable=SC2086
        timeout 1200 ${RUN[$i]} "./$k.$CLASS.x" > "$OUT/$i.$k.$rep.txt" 2>&1 < /dev/null) ||
        echo "$i $k rep $rep failed (see $OUT)" >&2
    done
  done
done
for k in $KERNELS; do
  for i in $IMPLS; do
    for f in "$OUT"/$i.$k.*.txt; do
      awk -v impl=$i -v k=$k '
        /Time in seconds/ { t = $NF } /Mop\/s total/ { m = $NF }
        /Verification    =/ { v = $NF }
        END { print k, impl, t, m, v }' "$f"
    done
  done
done | awk '
  { key = $1 SUBSEP $2; t[key] = t[key] " " $3; m[key] = m[key] " " $4
    ok[key] = ok[key] (($5 == "SUCCESSFUL") ? "" : "x"); kern[$1] = 1; impl[$2] = 1; n[key]++ }
  function median(s,   a, c, i, j, x) {
    c = split(s, a, " ")
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { x = a[i]; a[i] = a[j]; a[j] = x }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  function spread(s,   a, c, i, lo, hi) {
    c = split(s, a, " "); lo = hi = a[1]
    for (i = 2; i <= c; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
    return lo "-" hi
  }
  END {
    printf "%-6s %-8s %10s %16s %12s %10s %12s\n", "kernel", "impl", "time s", "spread", "Mop/s", "verified", "proust/best"
    for (k in kern) {
      best = ""
      for (i in impl) if (i != "proust" && ((k SUBSEP i) in t)) {
        x = median(t[k SUBSEP i]); if (best == "" || x + 0 < best + 0) best = x }
      for (i in impl) {
        key = k SUBSEP i; if (!(key in t)) continue
        x = median(t[key])
        r = (i == "proust" && best != "" && best + 0 > 0) ? sprintf("%.3f", x / best) : ""
        printf "%-6s %-8s %10.2f %16s %12.1f %10s %12s\n", k, i, x, spread(t[key]), median(m[key]),
               ok[key] == "" ? n[key] "/" n[key] : "FAILED", r
      }
    }
  }' | tee "$OUT/summary.txt"
echo "(median of $REPS runs; results in $OUT)"
