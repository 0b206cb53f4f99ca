#!/usr/bin/env bash
# stress_run.sh LAUNCHER NPROCS LIMIT_S PROGRAM [ARGS...]
# Runs one stress job, `LAUNCHER -n NPROCS PROGRAM ARGS -s SEED`, with the
# seed from PROUST_STRESS_SEED or a new one, printed with the PROUST_*
# settings so that a failure can be replayed. A job still running after
# LIMIT_S seconds has hung: every thread of every process of the job gets
# its stack printed (gdb; the kernel's view without it), the job is killed
# and the test fails -- a hang is a diagnosis, not a CI time-out. LAUNCHER
# is proustrun, or another launcher with its options in one word list
# ("mpiexec.mpich -launcher ssh ..."); processes it starts in other network
# namespaces (test hosts) are found too, as descendants of the agents.
set -u
if [ $# -lt 4 ]; then
  echo "usage: stress_run.sh LAUNCHER NPROCS LIMIT_S PROGRAM [ARGS...]" >&2
  exit 2
fi
read -r -a launcher <<< "$1"
nprocs=$2 limit=$3
shift 3
seed=${PROUST_STRESS_SEED:-$(( ($(date +%s%N) / 1000 + $$) % 2147483647 ))}
echo "stress: seed $seed; replay: PROUST_STRESS_SEED=$seed $(env | grep '^PROUST_' | grep -v '^PROUST_STRESS_SEED=' | sort | tr '\n' ' ')$*"

descendants() {
  local c
  for c in $(pgrep -P "$1"); do
    echo "$c"
    descendants "$c"
  done
}

dump_stacks() {
  local p
  for p in "$@"; do
    echo "---- pid $p: $(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null)"
    if command -v gdb >/dev/null; then
      timeout 60 gdb -p "$p" -batch -nx -ex "set pagination off" -ex "thread apply all bt" \
        2>/dev/null | grep -E '^(Thread|#)'
    else
      for t in /proc/"$p"/task/*; do
        echo "thread ${t##*/} ($(cat "$t"/comm 2>/dev/null)) in $(cat "$t"/wchan 2>/dev/null)"
        cat "$t"/stack 2>/dev/null
      done
    fi
  done
}

# its own process group, so that a kill reaches every rank
setsid "${launcher[@]}" -n "$nprocs" "$@" -s "$seed" &
job=$!
deadline=$(( $(date +%s) + limit ))
while kill -0 "$job" 2>/dev/null; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "stress: HANG: still running after $limit s (seed $seed); the stacks of every rank:"
    kill -STOP -- -"$job" 2>/dev/null
    dump_stacks $(descendants "$job")
    kill -KILL -- -"$job" 2>/dev/null
    wait "$job" 2>/dev/null
    echo "stress: FAILED (hang), seed $seed"
    exit 1
  fi
  sleep 0.2
done
wait "$job"
rc=$?
[ "$rc" -eq 0 ] || echo "stress: FAILED with status $rc, seed $seed"
exit "$rc"
