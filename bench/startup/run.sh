#!/usr/bin/env bash
# bench/startup/run.sh — start-up cost of a job of N ranks on one host
# (issues 39 and 43): Proust MPI against MPICH and Open MPI, interleaved
# (rep 1 of every N and implementation, then rep 2, ...).
#
#   bash bench/startup/run.sh [prefix]         (default prefix: build/install)
#
# For each run: the launcher's wall time (what a user waits for a hello
# world), the slowest rank's MPI_Init, the first barrier + allreduce, and
# the /dev/shm the job holds while it runs (less what was in use before).
# Prints medians per implementation and N, Proust / best-peer ratios, and
# the growth from the smallest N. Raw outputs: bench/results/startup-<date>/.
#
# Environment:
#   BENCH_STARTUP_NP="2 8 16 32 64"   numbers of ranks
#   BENCH_REPS=3                       repetitions
#   BENCH_TIMEOUT=120                  seconds allowed for one job
#   BENCH_IMPLS="proust mpich openmpi" implementations to run
#   BENCH_BINDIR                       prebuilt programs (stage-device.sh:
#                                      <wrapper basename>.startup_hello)
#   BENCH_RESULTS                      results root (default bench/results)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
PREFIX=$(realpath -m "${1:-$BENCH/../build/install}")
NPS=${BENCH_STARTUP_NP:-2 8 16 32 64}
REPS=${BENCH_REPS:-3}
TIMEOUT=${BENCH_TIMEOUT:-120}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
OUT=$RESULTS/startup-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw" || exit 1

# name | compiler wrapper | launcher (Open MPI unbound, as hydra and proustrun)
LINES=("proust|$PREFIX/bin/mpicc|$PREFIX/bin/mpiexec"
       "mpich|mpicc.mpich|mpiexec.mpich"
       "openmpi|mpicc.openmpi|mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none")
declare -A BIN LAUNCH
for line in "${LINES[@]}"; do
  IFS='|' read -r impl cc launcher <<< "$line"
  [[ " ${BENCH_IMPLS:-$impl} " == *" $impl "* ]] || continue
  command -v "${launcher%% *}" > /dev/null || { echo "startup: no ${launcher%% *}, $impl left out" >&2; continue; }
  if [ -n "${BENCH_BINDIR:-}" ]; then
    BIN[$impl]=$BENCH_BINDIR/$(basename "$cc").startup_hello
  elif command -v "$cc" > /dev/null; then
    BIN[$impl]=$OUT/$impl.hello
    "$cc" -std=c11 -O2 -Wall -Wextra -o "${BIN[$impl]}" "$HERE/hello.c" || BIN[$impl]=
  fi
  [ -x "${BIN[$impl]:-}" ] || { echo "startup: no hello for $impl, left out" >&2; unset "BIN[$impl]"; continue; }
  LAUNCH[$impl]=$launcher
done
ACTIVE=$(for i in proust mpich openmpi; do [ -n "${BIN[$i]:-}" ] && echo $i; done)
{
  echo "date: $(date -Is)"; echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "git: $(git -C "$BENCH/.." describe --always --dirty 2>/dev/null || echo unknown)"
  echo "ranks: $NPS reps: $REPS impls:" $ACTIVE
} | tee "$OUT/meta.txt"

shm_used_mb() { df -k --output=used /dev/shm | tail -1 | awk '{printf "%.1f", $1 * 1024 / 1e6}'; }
for ((rep = 1; rep <= REPS; rep++)); do
  for np in $NPS; do
    for impl in $ACTIVE; do
      f=$OUT/raw/$impl.np$np.$rep.txt
      base=$(shm_used_mb)
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      timeout -k 5 "$TIMEOUT" ${LAUNCH[$impl]} -n "$np" "${BIN[$impl]}" > "$f" 2> "$f.err" < /dev/null
      rc=$?
      t1=$(date +%s.%N)
      [ -s "$f.err" ] || rm -f "$f.err"
      if [ $rc -ne 0 ]; then
        echo "  FAILED rc=$rc: $impl np=$np rep $rep (see $f.err)"; mv "$f" "$f.failed"; continue
      fi
      awk -v a="$t0" -v b="$t1" -v np="$np" -v base="$base" 'BEGIN {
            printf "startup:np=%d wall_s %d %.6f\nstartup:np=%d shm_base_mb %d %s\n", np, np, b - a, np, np, base }' >> "$f"
      printf '  rep %d np %-4s %-8s %6.2f s\n' "$rep" "$np" "$impl" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
    done
  done
done
python3 "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
# the curves, with whichever python3 has matplotlib
for py in python3 /usr/bin/python3; do
  "$py" "$HERE/plot.py" "$OUT/medians.csv" "$OUT/startup.png" 2> /dev/null && break
done
