#!/usr/bin/env bash
# bench/run.sh — Proust side by side with MPICH and Open MPI.
#
#   bash bench/run.sh [prefix]          (make bench: prefix = build/install)
#
# prefix holds bin/proustrun, bin/proust-bench-{pingpong,multiflow},
# lib/libproust.so and Proust MPI (bin/mpicc, bin/mpiexec, lib/libmpi.so).
# The MPI versions of the loops (bench/mpi/*.c) are built here with each
# MPI's compiler wrapper (MPICH, Open MPI, Proust MPI). Every implementation
# runs every benchmark it has on each transport (shm, tcp): pingpong and
# multiflow with 2 ranks, coll_latency and sweep (MPI only: every
# point-to-point pattern and collective, every power-of-two size, see
# bench/mpi/sweep.c) with 2, 4 and 8 ranks;
# BENCH_REPS times, interleaved (rep 1 of everything, then rep 2, ...) so
# that a change in machine load hits every implementation alike. Raw outputs go to
# bench/results/<date>/raw/, then bench/report.py prints medians and the
# Proust / best-peer ratios and bench/plot.py draws PNGs (if matplotlib);
# bench/sweep_report.py writes the sweep's matrix of ratios (sweep.md), the
# cells a peer wins first, and a plot per pattern.
#
# Environment:
#   BENCH_REPS=5          process-level repetitions (1 with BENCH_QUICK)
#   BENCH_QUICK=1         smoke run: sizes up to 64 KiB, few iterations
#   BENCH_TRANSPORTS      "shm tcp"
#   BENCH_BENCHES         "pingpong multiflow coll_latency sweep"
#   BENCH_IMPLS           only these implementations (names below), e.g. "proust mpich"
#   BENCH_PINGPONG_ARGS   extra/overriding pingpong options, e.g. "-t lat -M 1M"
#   BENCH_MULTIFLOW_ARGS  extra/overriding multiflow options, e.g. "-k 4 -n 16"
#   BENCH_COLL_ARGS       extra/overriding coll_latency options, e.g. "-t bcast -M 64K"
#   BENCH_COLL_NPROCS     numbers of ranks of coll_latency ("2 4 8")
#   BENCH_SWEEP_ARGS      extra/overriding sweep options, e.g. "-p p2p,alltoall -M 1M"
#   BENCH_SWEEP_NPROCS    numbers of ranks of sweep ("2 4 8")
#   BENCH_TIMEOUT=900     seconds allowed for one run
#   BENCH_RESULTS         results root (default bench/results)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PREFIX=${1:-$HERE/../build/install}
PREFIX=$(realpath -m "$PREFIX")

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPS=${BENCH_REPS:-1}
  PP_ARGS="-M 64K -i 0.02 ${BENCH_PINGPONG_ARGS:-}"
  MF_ARGS="-i 200 ${BENCH_MULTIFLOW_ARGS:-}"
  CL_ARGS="-M 4K -i 0.01 -r 2 ${BENCH_COLL_ARGS:-}"
  SW_ARGS="-M 64K -T 2 ${BENCH_SWEEP_ARGS:-}"
else
  REPS=${BENCH_REPS:-5}
  PP_ARGS="${BENCH_PINGPONG_ARGS:-}"
  MF_ARGS="${BENCH_MULTIFLOW_ARGS:-}"
  CL_ARGS="${BENCH_COLL_ARGS:-}"
  SW_ARGS="${BENCH_SWEEP_ARGS:-}"
fi
TRANSPORTS=${BENCH_TRANSPORTS:-shm tcp}
BENCHES=${BENCH_BENCHES:-pingpong multiflow coll_latency sweep}
COLL_NPROCS=${BENCH_COLL_NPROCS:-2 4 8}
SWEEP_NPROCS=${BENCH_SWEEP_NPROCS:-2 4 8}
ONLY=${BENCH_IMPLS:-}
TIMEOUT=${BENCH_TIMEOUT:-900}
RESULTS=${BENCH_RESULTS:-$HERE/results}

# ---- The implementations: one line each ---------------------------------
# name | kind | benchmarks | build | launcher | shm settings | tcp settings
#   kind: "proust" (measured) or "peer" (compared against: ratios use the
#         best peer); build: "native" (prefix/bin/proust-bench-<bench>) or
#         the MPI compiler wrapper that builds bench/mpi/<bench>.c.
#   launcher: the command without the number of ranks ("-n N" follows it).
#   settings: words; NAME=value goes into the environment, any other word
#         is passed to the launcher before the program.
# Peer transport settings (Debian MPICH 4.0.2 is ch4:ucx, so its traffic
# goes through UCX: UCX_TLS picks the transport, MPIR_CVAR_NOLOCAL=1 keeps
# MPICH's own shared memory out; Open MPI 4.1: ob1 with the tcp btl).
IMPLS=(
  "proust|proust|pingpong multiflow|native|$PREFIX/bin/proustrun|PROUST_RAILS=self,shm|PROUST_RAILS=tcp"
  "proust-aggreg|proust|multiflow|native|$PREFIX/bin/proustrun|PROUST_RAILS=self,shm PROUST_STRATEGY=aggreg|PROUST_RAILS=tcp PROUST_STRATEGY=aggreg"
  "proust-mpi|proust|pingpong multiflow coll_latency sweep|$PREFIX/bin/mpicc|$PREFIX/bin/mpiexec|PROUST_RAILS=self,shm|PROUST_RAILS=tcp"
  "mpich|peer|pingpong multiflow coll_latency sweep|mpicc.mpich|mpiexec.mpich||MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self"
  "openmpi|peer|pingpong multiflow coll_latency sweep|mpicc.openmpi|mpiexec.openmpi --allow-run-as-root --oversubscribe||--mca pml ob1 --mca btl tcp,self"
)

note() { echo "bench: $*" >&2; }

stamp=$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS/$stamp
mkdir -p "$OUT/raw" || { note "cannot create $OUT"; exit 1; }
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/proust-bench.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
: > "$OUT/impls.tsv"
: > "$OUT/notes.txt"
skip() { note "$*"; echo "$*" >> "$OUT/notes.txt"; }

# ---- Prepare every implementation: binaries present, launcher present ----
declare -A LAUNCH SET_shm SET_tcp KIND BENCHES_OF
ACTIVE=()
for line in "${IMPLS[@]}"; do
  IFS='|' read -r name kind benches build launcher shm tcp <<< "$line"
  if [ -n "$ONLY" ] && ! [[ " $ONLY " == *" $name "* ]]; then continue; fi
  launcher_bin=${launcher%% *}
  if ! command -v "$launcher_bin" > /dev/null 2>&1; then
    skip "skipping $name: launcher $launcher_bin not found"; continue
  fi
  if [ "$build" = native ]; then
    dir=$PREFIX/bin ok=1
    for b in $benches; do
      [ -x "$dir/proust-bench-$b" ] || { skip "skipping $name: $dir/proust-bench-$b not built"; ok=0; }
    done
    [ $ok = 1 ] || continue
    for b in $benches; do ln -sf "$dir/proust-bench-$b" "$BUILD/$name.$b"; done
  else
    if ! command -v "$build" > /dev/null 2>&1; then
      skip "skipping $name: compiler wrapper $build not found"; continue
    fi
    ok=1
    for b in $benches; do
      if ! "$build" -std=c11 -O2 -g -Wall -Wextra -o "$BUILD/$name.$b" "$HERE/mpi/$b.c" \
           > "$BUILD/$name.$b.log" 2>&1; then
        skip "skipping $name: $build failed on bench/mpi/$b.c:"; cat "$BUILD/$name.$b.log" >&2; ok=0
      elif [ -s "$BUILD/$name.$b.log" ]; then
        note "$build warnings on bench/mpi/$b.c:"; cat "$BUILD/$name.$b.log" >&2
      fi
    done
    [ $ok = 1 ] || continue
  fi
  KIND[$name]=$kind; BENCHES_OF[$name]=$benches; LAUNCH[$name]=$launcher
  SET_shm[$name]=$shm; SET_tcp[$name]=$tcp
  ACTIVE+=("$name")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$launcher" "$shm" "$tcp" "$build" >> "$OUT/impls.tsv"
done
if [ ${#ACTIVE[@]} -eq 0 ]; then note "nothing to run"; rm -rf "$OUT"; exit 1; fi

# ---- Record the conditions -------------------------------------------------
{
  echo "date: $(date -Is)"
  echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$HERE/.." describe --always --dirty 2>/dev/null || echo unknown)"
  echo "prefix: $PREFIX"
  echo "reps: $REPS quick: $QUICK transports: $TRANSPORTS benches: $BENCHES"
  echo "pingpong args: ${PP_ARGS:-(defaults)}"
  echo "multiflow args: ${MF_ARGS:-(defaults)}"
  echo "coll_latency args: ${CL_ARGS:-(defaults)} ranks: $COLL_NPROCS"
  echo "sweep args: ${SW_ARGS:-(defaults)} ranks: $SWEEP_NPROCS"
  command -v mpichversion > /dev/null && echo "mpich: $(mpichversion 2>/dev/null | head -3 | tr -s '\t ' ' ' | paste -sd';')"
  command -v ompi_info > /dev/null && echo "openmpi: $(ompi_info --version 2>/dev/null | head -1)"
} > "$OUT/meta.txt"
echo "results: $OUT"
echo "implementations: ${ACTIVE[*]}"

# ---- Run ------------------------------------------------------------------
# run_one impl transport bench rep nprocs
run_one() {
  local impl=$1 tr=$2 bench=$3 rep=$4 np=$5
  local settings envs=() largs=() w args
  if [ "$tr" = shm ]; then settings=${SET_shm[$impl]}; else settings=${SET_tcp[$impl]}; fi
  for w in $settings; do
    if [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then envs+=("$w"); else largs+=("$w"); fi
  done
  case $bench in
  pingpong) args=$PP_ARGS ;;
  multiflow) args=$MF_ARGS ;;
  sweep) args=$SW_ARGS ;;
  *) args=$CL_ARGS ;;
  esac
  local dir=$OUT/raw/$tr/$impl run=$bench
  [ "$bench" = coll_latency ] || [ "$bench" = sweep ] && run=$bench.np$np
  mkdir -p "$dir"
  local out=$dir/$run.$rep.txt err=$dir/$run.$rep.err
  # shellcheck disable=SC2086
  local cmd=(env "${envs[@]}" timeout -k 10 "$TIMEOUT" ${LAUNCH[$impl]} -n "$np" "${largs[@]}"
             "$BUILD/$impl.$bench" $args)
  echo "# cmd: ${cmd[*]}" | sed "s|$BUILD/|<bin>/|" > "$out"
  echo "# impl=$impl transport=$tr rep=$rep ranks=$np" >> "$out"
  local t0=$SECONDS rc
  "${cmd[@]}" >> "$out" 2> "$err" < /dev/null
  rc=$?
  [ -s "$err" ] || rm -f "$err"
  if [ $rc -ne 0 ]; then
    mv "$out" "$out.failed"
    skip "FAILED (rc=$rc): $impl $tr $run rep $rep — see ${out#"$OUT"/}.failed$([ -f "$err" ] && echo " and .err")"
    return 1
  fi
  printf '  %-4s %-17s %-14s rep %d/%d  %3ds\n' "$tr" "$run" "$impl" "$rep" "$REPS" $((SECONDS - t0))
}

for ((rep = 1; rep <= REPS; rep++)); do
  for tr in $TRANSPORTS; do
    for bench in $BENCHES; do
      nps=2
      [ "$bench" = coll_latency ] && nps=$COLL_NPROCS
      [ "$bench" = sweep ] && nps=$SWEEP_NPROCS
      for np in $nps; do
        for impl in "${ACTIVE[@]}"; do
          [[ " ${BENCHES_OF[$impl]} " == *" $bench "* ]] || continue
          run_one "$impl" "$tr" "$bench" "$rep" "$np"
        done
      done
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"

# ---- Report ---------------------------------------------------------------
ln -sfn "$stamp" "$RESULTS/latest"
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then note "python3 not found: raw results only, in $OUT"; exit 0; fi
"$PY" "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
# plot with whichever python3 has matplotlib (pyenv's may not, Debian's may)
for p in "$PY" /usr/bin/python3; do
  [ -s "$OUT/medians.csv" ] || break
  if [ -x "$p" ] && "$p" -c 'import matplotlib' > /dev/null 2>&1; then
    "$p" "$HERE/plot.py" "$OUT" || note "plot failed"
    break
  fi
done
if [[ " $BENCHES " == *" sweep "* ]]; then
  echo
  plots=
  for p in "$PY" /usr/bin/python3; do
    if [ -x "$p" ] && "$p" -c 'import matplotlib' > /dev/null 2>&1; then PY=$p plots=--plots; break; fi
  done
  "$PY" "$HERE/sweep_report.py" "$OUT" $plots || note "sweep report failed"
fi
if [ -s "$OUT/notes.txt" ]; then echo; echo "notes:"; sed 's/^/  /' "$OUT/notes.txt"; fi
echo "results in $OUT"
exit "$rc"
