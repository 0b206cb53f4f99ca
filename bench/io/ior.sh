#!/usr/bin/env bash
# bench/io/ior.sh — IOR (github.com/hpc/ior), the HPC file systems' I/O
# benchmark, through its MPI-IO backend (-a MPIIO; -c collective) and its
# POSIX one, built with Proust's mpicc, MPICH's and Open MPI's, each run
# with its own launcher on the same cases, every one with IOR's data checks
# (-W after the write, -R after the read: a wrong byte fails the run).
# Repetitions interleaved (case by case, rep 1 of every implementation,
# then rep 2...); ior_report.py prints medians, spreads and Proust /
# best-peer ratios of IOR's write and read bandwidths.
#
#   IOR_SRC=/path/to/ior bash bench/io/ior.sh [prefix]
#
# IOR_SRC: an IOR source tree (a release tarball or a git checkout: then
# autoconf and automake bootstrap it). Without it, `git clone` of
# https://github.com/hpc/ior.git at IOR_VERSION (4.0.0) into build/ior/src
# (needs the network). Debian 12 has no ior package. The builds are kept
# in build/ior/<impl> (removed by hand to rebuild).
#
# Environment:
#   BENCH_IO_NP=4, BENCH_REPS=3, BENCH_TIMEOUT=300 (s a run)
#   BENCH_IO_DIRS="local shm"   as bench/io/run.sh (fresh directories under
#                               /var/tmp and /dev/shm, removed at the end)
#   BENCH_IOR_CASES             the case names below (default: all)
#   BENCH_IMPLS="proust mpich openmpi", BENCH_RESULTS (results root)
#
# Results: bench/results/ior-<date>/ (ior-latest links the last): meta.txt,
# impls.tsv, notes.txt, raw/<target>/<impl>.<case>.<rep>.txt (IOR's output
# and its command), summary.txt and medians.csv (ior_report.py).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
PREFIX=$(realpath -m "${1:-$ROOT/build/install}")
NP=${BENCH_IO_NP:-4}
REPS=${BENCH_REPS:-3}
TIMEOUT=${BENCH_TIMEOUT:-300}
DIRS=${BENCH_IO_DIRS:-local shm}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
STAMP=ior-$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS/$STAMP
mkdir -p "$OUT/raw" || exit 1
: > "$OUT/notes.txt"
note() { echo "ior: $*" | tee -a "$OUT/notes.txt" >&2; }

# The cases: name -> IOR options (a shared file unless -F; -C: each rank
# reads what another wrote, so no page of its own write is read back).
# 4 ranks x 4 segments x 16 MiB = 256 MiB for the large ones.
declare -A CASE
CASE[posix]="-a POSIX -b 16m -t 1m -s 4"
CASE[indep]="-a MPIIO -b 16m -t 1m -s 4"
CASE[coll]="-a MPIIO -b 16m -t 1m -s 4 -c"
CASE[interleaved]="-a MPIIO -b 64k -t 64k -s 256"
CASE[interleaved_coll]="-a MPIIO -b 64k -t 64k -s 256 -c"
CASE[small_coll]="-a MPIIO -b 4k -t 4k -s 512 -c"
CASE[view_coll]="-a MPIIO -b 1m -t 64k -s 16 -c --mpiio.useFileView"
CASE[odd_coll]="-a MPIIO -b 1200000 -t 120000 -s 8 -c"
ORDER="posix indep coll interleaved interleaved_coll small_coll view_coll odd_coll"
CASES=${BENCH_IOR_CASES:-$ORDER}

# IOR's source, then one build per MPI
SRC=${IOR_SRC:-$ROOT/build/ior/src}
if [ ! -f "$SRC/configure.ac" ]; then
  [ -z "${IOR_SRC:-}" ] || { note "IOR_SRC=$IOR_SRC is not an IOR source tree"; exit 2; }
  git clone -q --depth 1 --branch "${IOR_VERSION:-4.0.0}" https://github.com/hpc/ior.git "$SRC" ||
    { note "no IOR source: set IOR_SRC to an IOR tree (git clone of github.com/hpc/ior failed)"; exit 2; }
fi
SRC=$(cd "$SRC" && pwd)
if [ ! -x "$SRC/configure" ]; then
  command -v autoreconf > /dev/null || { note "IOR's git tree needs autoconf and automake"; exit 2; }
  (cd "$SRC" && autoreconf -if) > "$OUT/bootstrap.log" 2>&1 ||
    { note "IOR's bootstrap failed, see $OUT/bootstrap.log"; exit 2; }
fi

# shellcheck source=../common/three_mpis.sh
source "$BENCH/common/three_mpis.sh"
declare -A IOR
for impl in $IMPLS; do
  [[ " ${BENCH_IMPLS:-$impl} " == *" $impl "* ]] || continue
  RUN[$impl]="${RUN[$impl]% -n 2} -n $NP"
  inst=$ROOT/build/ior/$impl
  if [ ! -x "$inst/bin/ior" ] || [ "${CC[$impl]}" -nt "$inst/bin/ior" ] 2>/dev/null; then
    mkdir -p "$inst/build"
    if ! (cd "$inst/build" && "$SRC/configure" CC="${CC[$impl]}" --prefix="$inst" &&
          make -j2 && make install) > "$OUT/build-$impl.log" 2>&1; then
      note "$impl left out: IOR does not build with ${CC[$impl]}, see $OUT/build-$impl.log"
      continue
    fi
  fi
  IOR[$impl]=$inst/bin/ior
done
ACTIVE=$(for i in proust mpich openmpi; do [ -n "${IOR[$i]:-}" ] && echo $i; done)
[ -n "$ACTIVE" ] || { note "no implementation to run"; exit 1; }
# shellcheck source=targets.sh
source "$HERE/targets.sh"
# shellcheck disable=SC2086
io_write_impls "$OUT" $ACTIVE
# shellcheck disable=SC2086
io_targets proust-ior $DIRS || { note "no target directory"; exit 1; }

{
  echo "date: $(date -Is)"; echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "git: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "ior: $(sed -n 's/^Version: *//p' "$SRC/META" 2>/dev/null) ($SRC)"
  echo "ranks: $NP  reps: $REPS  impls:" $ACTIVE
  for c in $CASES; do echo "case $c: ${CASE[$c]} -w -r -W -R -C"; done
  for l in "${LABELS[@]}"; do
    echo "target $l: ${TDIR[$l]} ($(stat -f -c %T "${TDIR[$l]}"))"
  done
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/meta.txt"

fails=0
for c in $CASES; do
  [ -n "${CASE[$c]:-}" ] || { note "no case $c"; continue; }
  for ((rep = 1; rep <= REPS; rep++)); do
    for l in "${LABELS[@]}"; do
      mkdir -p "$OUT/raw/$l"
      for impl in $ACTIVE; do
        f=$OUT/raw/$l/$impl.$c.$rep.txt
        file=${TDIR[$l]}/ior.$impl
        cmd="${RUN[$impl]} ${IOR[$impl]} ${CASE[$c]} -w -r -W -R -C -o $file"
        # shellcheck disable=SC2086
        timeout -k 5 "$TIMEOUT" $cmd > "$f" 2>&1 < /dev/null
        rc=$?
        echo "# cmd: $cmd" >> "$f"
        rm -f "$file" "$file".*
        if [ $rc -ne 0 ] || grep -q "Incorrect data" "$f"; then
          mv "$f" "$f.failed"
          note "FAILED rc=$rc: $impl $l $c rep $rep (see $f.failed)"
          fails=$((fails + 1))
          continue
        fi
        printf '  %-16s rep %d %-6s %-8s %s\n' "$c" "$rep" "$l" "$impl" \
          "$(awk '/^Summary of all/ { s = 1 } s && /^(write|read) / { printf "%s %s  ", $1, $2 }' "$f")"
      done
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"
ln -sfn "$STAMP" "$RESULTS/ior-latest"
python3 "$HERE/ior_report.py" "$OUT" || fails=$((fails + 1))
exit $((fails > 0))
