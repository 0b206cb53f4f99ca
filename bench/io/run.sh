#!/usr/bin/env bash
# bench/io/run.sh — MPI-IO (bench/io/io_bench.c) on Proust MPI, MPICH and
# Open MPI: collective 3-D block write/read (coll3d) against one process's
# pwrite/pread of the same bytes (pwrite), independent strided small
# records in one call (strided, the data-sieving case) and one call per
# record (strided1), shared-file-pointer appends (shared). BENCH_IO_NP
# ranks, on a local file system and on /dev/shm, BENCH_REPS repetitions
# interleaved (rep 1 of every target, size and implementation, then rep 2,
# ...); report.py prints medians, spreads, Proust / best-peer ratios and
# the collective write as a fraction of the pwrite baseline.
#
#   bash bench/io/run.sh [prefix]           (default prefix: build/install)
#   BENCH_QUICK=1 bash bench/io/run.sh      smoke run: seconds
#   python3 bench/io/report.py bench/results/io-latest   report again
#
# An implementation whose wrapper or launcher is missing, or whose build
# of io_bench fails (Proust MPI before its MPI_File_* exist), is left out
# with a line saying so (notes.txt, build-<impl>.log).
#
# Environment:
#   BENCH_IO_NP=4                     ranks per job
#   BENCH_IO_SIZES="64M 256M 1G"      coll3d/pwrite total sizes (quick: "1M 4M")
#   BENCH_IO_DIRS="local shm"         targets: "local" = a fresh directory
#                                     under /var/tmp, "shm" = a fresh one
#                                     under /dev/shm (both removed at the
#                                     end), any other word = that directory
#   BENCH_IO_SMALL_ARGS               strided/shared options of io_bench
#                                     (default: its own, -n 65536 -R 64
#                                     -k 2000 -b 32; quick: -n 4096 -k 200)
#   BENCH_IO_ARGS                     appended to every io_bench command
#   BENCH_REPS=3 (quick: 1), BENCH_TIMEOUT=600 (s a job),
#   BENCH_IMPLS="proust mpich openmpi", BENCH_RESULTS (results root)
#
# IOR: bench/io/ior.sh (Debian 12 has no ior package: it builds IOR from
# its source with each MPI).
#
# Results: bench/results/io-<date>/ (io-latest links the last):
#   meta.txt, impls.tsv, notes.txt, build-<impl>.log
#   raw/<target>/<impl>.<job>.<rep>.txt   job = a size (coll3d + pwrite) or
#                                         small (strided, strided1, shared)
#   summary.txt, medians.csv              report.py
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
PREFIX=$(realpath -m "${1:-$BENCH/../build/install}")
NP=${BENCH_IO_NP:-4}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  SIZES=${BENCH_IO_SIZES:-1M 4M}; REPS=${BENCH_REPS:-1}
  SMALL_ARGS=${BENCH_IO_SMALL_ARGS:--n 4096 -k 200}
else
  SIZES=${BENCH_IO_SIZES:-64M 256M 1G}; REPS=${BENCH_REPS:-3}
  SMALL_ARGS=${BENCH_IO_SMALL_ARGS:-}
fi
DIRS=${BENCH_IO_DIRS:-local shm}
TIMEOUT=${BENCH_TIMEOUT:-600}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
STAMP=io-$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS/$STAMP
mkdir -p "$OUT/raw" || exit 1
: > "$OUT/notes.txt"
note() { echo "io: $*" | tee -a "$OUT/notes.txt" >&2; }

# compiler wrappers and launchers: three_mpis.sh's, with NP ranks
# shellcheck source=../common/three_mpis.sh
source "$BENCH/common/three_mpis.sh"
declare -A BIN
for impl in $IMPLS; do
  [[ " ${BENCH_IMPLS:-$impl} " == *" $impl "* ]] || continue
  RUN[$impl]="${RUN[$impl]% -n 2} -n $NP"
  launcher=${RUN[$impl]%% *}
  if ! command -v "${CC[$impl]}" > /dev/null || ! command -v "$launcher" > /dev/null; then
    note "$impl left out: no ${CC[$impl]} or $launcher"; continue
  fi
  if "${CC[$impl]}" -std=c11 -O2 -g -Wall -Wextra -o "$OUT/io_bench-$impl" "$HERE/io_bench.c" \
       > "$OUT/build-$impl.log" 2>&1; then
    BIN[$impl]=$OUT/io_bench-$impl
    [ -s "$OUT/build-$impl.log" ] || rm -f "$OUT/build-$impl.log"
  else
    note "$impl left out: io_bench does not build with ${CC[$impl]} (its MPI-IO missing?), see $OUT/build-$impl.log"
  fi
done
ACTIVE=$(for i in proust mpich openmpi; do [ -n "${BIN[$i]:-}" ] && echo $i; done)
[ -n "$ACTIVE" ] || { note "no implementation to run"; exit 1; }
# shellcheck source=targets.sh
source "$HERE/targets.sh"
# shellcheck disable=SC2086
io_write_impls "$OUT" $ACTIVE
# shellcheck disable=SC2086
io_targets proust-io $DIRS || { note "no target directory"; exit 1; }

{
  echo "date: $(date -Is)"; echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "git: $(git -C "$BENCH/.." describe --always --dirty 2>/dev/null || echo unknown)"
  echo "ranks: $NP  sizes: $SIZES  reps: $REPS  impls:" $ACTIVE
  echo "small args: ${SMALL_ARGS:-(io_bench defaults)}  extra args: ${BENCH_IO_ARGS:-}"
  for l in "${LABELS[@]}"; do
    echo "target $l: ${TDIR[$l]} ($(stat -f -c %T "${TDIR[$l]}"), $(df -h --output=avail "${TDIR[$l]}" | tail -1 | tr -d ' ') free)"
  done
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/meta.txt"

for ((rep = 1; rep <= REPS; rep++)); do
  for l in "${LABELS[@]}"; do
    mkdir -p "$OUT/raw/$l"
    for job in $SIZES small; do
      if [ "$job" = small ]; then args="-t strided,strided1,shared $SMALL_ARGS"
      else args="-t coll3d,pwrite -s $job"; fi
      for impl in $ACTIVE; do
        f=$OUT/raw/$l/$impl.$job.$rep.txt
        cmd="${RUN[$impl]} ${BIN[$impl]} -d ${TDIR[$l]} -r 1 $args ${BENCH_IO_ARGS:-}"
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout -k 5 "$TIMEOUT" $cmd > "$f" 2> "$f.err" < /dev/null
        rc=$?
        echo "# cmd: $cmd" >> "$f"
        [ -s "$f.err" ] || rm -f "$f.err"
        s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ $rc -ne 0 ]; then
          mv "$f" "$f.failed"
          note "FAILED rc=$rc: $impl $l $job rep $rep (see $f.failed, $f.err)"
          rm -f "${TDIR[$l]}"/io_bench.[0-9]*  # what a killed job left
          continue
        fi
        printf '  rep %d %-6s %-5s %-8s %6s s\n' "$rep" "$l" "$job" "$impl" "$s"
      done
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"
ln -sfn "$STAMP" "$RESULTS/io-latest"
python3 "$HERE/report.py" "$OUT"
rc=$?
# the plot, with whichever python3 has matplotlib (pyenv's may not, Debian's may)
for p in "$(command -v python3)" /usr/bin/python3; do
  if [ -x "$p" ] && "$p" -c 'import matplotlib' > /dev/null 2>&1; then
    "$p" "$HERE/plot.py" "$OUT/medians.csv" "$OUT/io.png" && echo "plot: $OUT/io.png"
    break
  fi
done
exit $rc
