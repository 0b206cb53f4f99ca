#!/usr/bin/env bash
# bench/progress/run.sh — the progress-engine benchmarks (issue 4): Proust
# MPI with and without its progress thread against MPICH (with and without
# its async progress thread) and Open MPI.
#
#   bash bench/progress/run.sh [prefix]          (default prefix: build/install)
#
# prefix holds Proust MPI (bin/mpicc, bin/mpiexec, lib/libmpi.so). Every
# program (bench/progress/*.c, and bench/mpi/pingpong.c for benchmark 7)
# is built here with each MPI's compiler wrapper, then every job runs for
# every implementation with 2 ranks, BENCH_REPS times, interleaved (rep 1
# of everything, then rep 2, ...) so that a change in machine load hits
# every implementation alike. Raw outputs go to
# bench/results/progress-<date>/raw/<impl>/<job>.<rep>.txt, then
# bench/progress/report.py prints medians and ratios (and writes
# medians.csv) and bench/progress/plot.py draws PNGs (if matplotlib).
#
# Jobs (BENCH_BENCHES, default all, in this order):
#   overlap        overlap -t isend,irecv    (benchmark 1)
#   overlap_both   overlap -t both           (benchmark 2)
#   overlap_coll   overlap -t iallreduce,ibcast (benchmark 2)
#   overlap_seq    overlap -t seq            (seed 001 figure)
#   reactivity     reactivity                (benchmark 3)
#   waiters        waiters                   (benchmark 4)
#   threads        threads                   (benchmark 6; also proust-coarse,
#                  proust-stripes1)
#   threads_peers  threads -P: thread i of rank 0 with rank 1 + i, on
#                  BENCH_PEERS_NP ranks (9); not in the default set: it
#                  needs that many cores (run it on the device)
#   pingpong       bench/mpi/pingpong -t lat at 8 B (benchmark 7: progress
#                  thread on (proust) vs off (proust-poll), peers for scale)
#   partitioned    partitioned: MPI_Pready per partition against compute
#                  then MPI_Send (MPI-4.0 partitioned communication; Open
#                  MPI 4.1 has none: its build fails and it is skipped)
#
# Environment:
#   BENCH_REPS=5          process-level repetitions (1 with BENCH_QUICK)
#   BENCH_QUICK=1         smoke run: tiny sizes, few iterations, short budgets
#   BENCH_BENCHES         jobs to run, e.g. "overlap reactivity"
#   BENCH_IMPLS           only these implementations (names below); the
#                         default is every line but proust-block
#   BENCH_OVERLAP_ARGS, BENCH_REACTIVITY_ARGS, BENCH_WAITERS_ARGS,
#   BENCH_THREADS_ARGS, BENCH_PINGPONG_ARGS, BENCH_PARTITIONED_ARGS
#                         extra options, appended (so they override)
#   BENCH_TIMEOUT=300     seconds allowed for one job
#   BENCH_RESULTS         results root (default bench/results)
#   BENCH_BUDGET          seconds: start another repetition only while the
#                         ones done so far say it ends within this budget
#   BENCH_BINDIR          programs built elsewhere (stage-device.sh):
#                         <wrapper basename>.<dir>_<prog>, used instead of
#                         building here (for a machine without wrappers)
#
# PROUST_PROGRESS, PROUST_PROGRESS_THREADS, PROUST_LOCKING, PROUST_SPIN_US,
# MPICH_ASYNC_PROGRESS and MPIR_CVAR_ASYNC_PROGRESS are removed from the
# environment first: each implementation below sets what it means.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
PREFIX=${1:-$BENCH/../build/install}
PREFIX=$(realpath -m "$PREFIX")

QUICK=${BENCH_QUICK:-0}
declare -A ARGS
if [ "$QUICK" = 1 ]; then
  REPS=${BENCH_REPS:-1}
  ARGS[overlap]="-t isend,irecv -m 64K -M 256K -F 0,0.5,1 -i 3"
  ARGS[overlap_both]="-t both -m 64K -M 256K -i 3"
  ARGS[overlap_coll]="-t iallreduce,ibcast -C 256K -i 3"
  ARGS[overlap_seq]="-t seq -A 1K -i 5"
  ARGS[reactivity]="-K 0,1,4 -T 0.05 -n 2000"
  ARGS[waiters]="-N 0,1,4 -w 10 -s 5 -r 2"
  ARGS[threads]="-N 1,2 -T 0.05 -n 2000"
  ARGS[threads_peers]="-P -N 1,2 -T 0.05 -n 2000"
  ARGS[pingpong]="-t lat -m 8 -M 8 -i 0.1 -r 2"
  ARGS[partitioned]="-m 64K -M 256K -P 1,4 -i 3"
else
  REPS=${BENCH_REPS:-5}
  ARGS[overlap]="-t isend,irecv"
  ARGS[overlap_both]="-t both"
  ARGS[overlap_coll]="-t iallreduce,ibcast"
  ARGS[overlap_seq]="-t seq"
  ARGS[reactivity]=""
  ARGS[waiters]=""
  ARGS[threads]=""
  ARGS[threads_peers]="-P"
  ARGS[pingpong]="-t lat -m 8 -M 8 -r 5"
  ARGS[partitioned]=""
fi
for j in overlap overlap_both overlap_coll overlap_seq; do
  ARGS[$j]="${ARGS[$j]} ${BENCH_OVERLAP_ARGS:-}"
done
ARGS[reactivity]+=" ${BENCH_REACTIVITY_ARGS:-}"
ARGS[waiters]+=" ${BENCH_WAITERS_ARGS:-}"
ARGS[threads]+=" ${BENCH_THREADS_ARGS:-}"
ARGS[threads_peers]+=" ${BENCH_THREADS_ARGS:-}"
ARGS[pingpong]+=" ${BENCH_PINGPONG_ARGS:-}"
ARGS[partitioned]+=" ${BENCH_PARTITIONED_ARGS:-}"
ALL_JOBS="overlap overlap_both overlap_coll overlap_seq reactivity waiters threads pingpong partitioned"
KNOWN_JOBS="$ALL_JOBS threads_peers"
JOBS=${BENCH_BENCHES:-$ALL_JOBS}
TIMEOUT=${BENCH_TIMEOUT:-300}
RESULTS=${BENCH_RESULTS:-$BENCH/results}
NP=2

# The program (source file) of each job.
declare -A PROG=(
  [overlap]=progress/overlap [overlap_both]=progress/overlap [overlap_coll]=progress/overlap
  [overlap_seq]=progress/overlap [reactivity]=progress/reactivity [waiters]=progress/waiters
  [threads]=progress/threads [threads_peers]=progress/threads [pingpong]=mpi/pingpong
  [partitioned]=progress/partitioned
)
# Ranks of each job (NP unless said here).
declare -A JOB_NP=([threads_peers]=${BENCH_PEERS_NP:-9})
for j in $JOBS; do
  [ -n "${PROG[$j]:-}" ] || { echo "progress: unknown job '$j' (known: $KNOWN_JOBS)" >&2; exit 2; }
done

# ---- The implementations: one line each ---------------------------------
# name | kind | jobs | compiler wrapper | launcher | settings
#   kind: "proust" (measured) or "peer" (compared against); jobs: "all" or
#   a list; launcher: without the number of ranks ("-n 2" follows it);
#   settings: NAME=value words go into the environment, others to the
#   launcher. Open MPI binds each of 2 ranks to a core by default; MPICH's
#   hydra and Proust's launcher do not bind: --bind-to none gives Open MPI
#   the same placement, so that the progress / compute / waiting threads
#   of a rank may use every core with every MPI.
PM="$PREFIX/bin/mpiexec"
OMPI="mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none"
IMPLS=(
  "proust|proust|all|$PREFIX/bin/mpicc|$PM|"
  "proust-poll|proust|all|$PREFIX/bin/mpicc|$PM|PROUST_PROGRESS=poll"
  "proust-block|proust|all|$PREFIX/bin/mpicc|$PM|PROUST_PROGRESS=block"
  "proust-coarse|proust|threads threads_peers|$PREFIX/bin/mpicc|$PM|PROUST_LOCKING=coarse"
  "proust-stripes1|proust|threads threads_peers|$PREFIX/bin/mpicc|$PM|PROUST_MATCH_STRIPES=1"
  "mpich|peer|all|mpicc.mpich|mpiexec.mpich|"
  "mpich-async|peer|all|mpicc.mpich|mpiexec.mpich|MPICH_ASYNC_PROGRESS=1"
  "openmpi|peer|all|mpicc.openmpi|$OMPI|"
)
DEFAULT_IMPLS="proust proust-poll proust-coarse proust-stripes1 mpich mpich-async openmpi"
ONLY=${BENCH_IMPLS:-$DEFAULT_IMPLS}

unset PROUST_PROGRESS PROUST_PROGRESS_THREADS PROUST_LOCKING PROUST_SPIN_US \
      MPICH_ASYNC_PROGRESS MPIR_CVAR_ASYNC_PROGRESS

note() { echo "progress: $*" >&2; }

stamp=progress-$(date +%Y%m%d-%H%M%S)
OUT=$RESULTS/$stamp
mkdir -p "$OUT/raw" || { note "cannot create $OUT"; exit 1; }
BUILD=$(mktemp -d "${TMPDIR:-/tmp}/proust-progress.XXXXXX")
trap 'rm -rf "$BUILD"' EXIT
: > "$OUT/impls.tsv"
: > "$OUT/notes.txt"
skip() { note "$*"; echo "$*" >> "$OUT/notes.txt"; }

# ---- Build each program once per compiler wrapper -------------------------
declare -A BUILT    # "<wrapper>|<prog>" -> binary, or "" if the build failed
build() {
  local cc=$1 prog=$2 key="$1|$2"
  if [ -z "${BUILT[$key]+x}" ] && [ -n "${BENCH_BINDIR:-}" ]; then
    local staged=$BENCH_BINDIR/$(basename "${cc%% *}").${prog//\//_}
    if [ -x "$staged" ]; then BUILT[$key]=$staged; else BUILT[$key]=""; note "no $staged"; fi
  fi
  if [ -z "${BUILT[$key]+x}" ]; then
    local tag bin
    tag=$(printf '%s' "$cc" | tr -c 'A-Za-z0-9' '_')
    bin=$BUILD/$tag.${prog//\//_}
    if "$cc" -std=c11 -O2 -g -Wall -Wextra -pthread -o "$bin" "$BENCH/$prog.c" \
         > "$bin.log" 2>&1; then
      BUILT[$key]=$bin
      [ -s "$bin.log" ] && { note "$cc warnings on bench/$prog.c:"; cat "$bin.log" >&2; }
    else
      BUILT[$key]=""
      note "$cc failed on bench/$prog.c:"; cat "$bin.log" >&2
    fi
  fi
  [ -n "${BUILT[$key]}" ]
}

declare -A LAUNCH SET KIND JOBS_OF BIN
ACTIVE=()
for line in "${IMPLS[@]}"; do
  IFS='|' read -r name kind jobs cc launcher settings <<< "$line"
  [[ " $ONLY " == *" $name "* ]] || continue
  [ "$jobs" = all ] && jobs=$KNOWN_JOBS
  launcher_bin=${launcher%% *}
  if ! command -v "$launcher_bin" > /dev/null 2>&1; then
    skip "skipping $name: launcher $launcher_bin not found"; continue
  fi
  if [ -z "${BENCH_BINDIR:-}" ] && ! command -v "$cc" > /dev/null 2>&1; then
    skip "skipping $name: compiler wrapper $cc not found"; continue
  fi
  mine=""
  for j in $JOBS; do
    [[ " $jobs " == *" $j "* ]] || continue
    if build "$cc" "${PROG[$j]}"; then
      BIN[$name.$j]=${BUILT[$cc|${PROG[$j]}]}
      mine+=" $j"
    else
      skip "skipping $name $j: $cc failed on bench/${PROG[$j]}.c"
    fi
  done
  [ -n "$mine" ] || continue
  KIND[$name]=$kind; JOBS_OF[$name]=$mine; LAUNCH[$name]=$launcher; SET[$name]=$settings
  ACTIVE+=("$name")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$launcher" "$settings" "$cc" >> "$OUT/impls.tsv"
done
if [ ${#ACTIVE[@]} -eq 0 ]; then note "nothing to run"; rm -rf "$OUT"; exit 1; fi

# ---- Record the conditions -------------------------------------------------
{
  echo "date: $(date -Is)"
  echo "host: $(uname -n) $(uname -sr)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "git: $(git -C "$BENCH/.." describe --always --dirty 2>/dev/null || echo unknown)"
  echo "prefix: $PREFIX"
  echo "reps: $REPS quick: $QUICK ranks: $NP jobs: $JOBS"
  for j in $JOBS; do echo "args $j: ${ARGS[$j]}"; done
  command -v mpichversion > /dev/null && echo "mpich: $(mpichversion 2>/dev/null | head -3 | tr -s '\t ' ' ' | paste -sd';')"
  command -v ompi_info > /dev/null && echo "openmpi: $(ompi_info --version 2>/dev/null | head -1)"
} > "$OUT/meta.txt"
echo "results: $OUT"
echo "implementations: ${ACTIVE[*]}"

# ---- Run ------------------------------------------------------------------
# run_one impl job rep
run_one() {
  local impl=$1 job=$2 rep=$3
  local envs=() largs=() w
  for w in ${SET[$impl]}; do
    if [[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then envs+=("$w"); else largs+=("$w"); fi
  done
  local dir=$OUT/raw/$impl
  mkdir -p "$dir"
  local out=$dir/$job.$rep.txt err=$dir/$job.$rep.err
  # shellcheck disable=SC2086
  local np=${JOB_NP[$job]:-$NP}
  local cmd=(env "${envs[@]}" timeout -k 10 "$TIMEOUT" ${LAUNCH[$impl]} -n "$np" "${largs[@]}"
             "${BIN[$impl.$job]}" ${ARGS[$job]})
  echo "# cmd: ${cmd[*]}" | sed "s|$BUILD/|<bin>/|" > "$out"
  echo "# impl=$impl job=$job rep=$rep ranks=$np" >> "$out"
  local t0=$SECONDS rc
  "${cmd[@]}" >> "$out" 2> "$err" < /dev/null
  rc=$?
  [ -s "$err" ] || rm -f "$err"
  if [ $rc -ne 0 ]; then
    mv "$out" "$out.failed"
    local why="rc=$rc"
    [ $rc = 124 ] || [ $rc = 137 ] && why="timed out after ${TIMEOUT}s"
    skip "FAILED ($why): $impl $job rep $rep — see raw/$impl/$job.$rep.txt.failed$([ -f "$err" ] && echo " and .err")"
    return 1
  fi
  grep -q '^# SKIPPED' "$out" && skip "$impl $job rep $rep: $(grep -m1 '^# SKIPPED' "$out" | cut -c3-)"
  printf '  %-13s %-14s rep %d/%d  %3ds\n' "$job" "$impl" "$rep" "$REPS" $((SECONDS - t0))
}

BUDGET=${BENCH_BUDGET:-0}
t_start=$SECONDS
for ((rep = 1; rep <= REPS; rep++)); do
  used=$((SECONDS - t_start))
  if [ "$BUDGET" -gt 0 ] && [ $rep -gt 1 ] && [ $((used + used / (rep - 1))) -gt "$BUDGET" ]; then
    skip "stopped after $((rep - 1)) of $REPS repetitions: BENCH_BUDGET=${BUDGET}s"
    break
  fi
  for job in $JOBS; do
    for impl in "${ACTIVE[@]}"; do
      [[ " ${JOBS_OF[$impl]} " == *" $job "* ]] || continue
      run_one "$impl" "$job" "$rep"
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/meta.txt"

# ---- Report ---------------------------------------------------------------
ln -sfn "$stamp" "$RESULTS/progress-latest"
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then note "python3 not found: raw results only, in $OUT"; exit 0; fi
"$PY" "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
for p in "$PY" /usr/bin/python3; do
  [ -s "$OUT/medians.csv" ] || break
  if [ -x "$p" ] && "$p" -c 'import matplotlib' > /dev/null 2>&1; then
    "$p" "$HERE/plot.py" "$OUT" || note "plot failed"
    break
  fi
done
if [ -s "$OUT/notes.txt" ]; then echo; echo "notes:"; sed 's/^/  /' "$OUT/notes.txt"; fi
echo "results in $OUT"
exit "$rc"
