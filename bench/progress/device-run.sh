#!/usr/bin/env bash
# bench/progress/device-run.sh — the progress benchmarks on a machine with
# more cores than ranks (the lent device machine), from the pack that
# stage-device.sh made here:
#
#   bash bench/progress/stage-device.sh && tar -C .devrun -cJf .devpack/devrun.tar.xz .
#   (device) bash bench/progress/device-run.sh .devpack/devrun.tar.xz
#
# It describes the machine (cores, NUMA nodes, /dev/shm, proust-info), runs
# bench/progress/run.sh on the jobs that two cores cannot show (DEVICE_JOBS)
# within DEVICE_BUDGET seconds, and leaves in $OUT (or ./device-out):
# machine.txt, summary.txt, results.tgz (raw outputs, medians.csv, PNGs).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACK=${1:?usage: device-run.sh pack.tar.xz}
DEST=${OUT:-$PWD/device-out}
WORK=${TMPDIR:-/tmp}/proust-device
JOBS=${DEVICE_JOBS:-overlap_both overlap_coll threads threads_peers reactivity waiters pingpong partitioned}
BUDGET=${DEVICE_BUDGET:-380}

mkdir -p "$WORK" "$DEST" && tar -C "$WORK" -xJf "$PACK" || exit 1
# shellcheck disable=SC1091
source "$WORK/env.sh"

# Shared-memory rails and the peers' transports map files in /dev/shm.
shm_kb=$(df -k --output=size /dev/shm 2>/dev/null | tail -1)
if [ "${shm_kb:-0}" -lt 4194304 ] && [ "$(id -u)" = 0 ]; then
  mount -o remount,size=8G /dev/shm 2>/dev/null || true
fi
{
  echo "== nproc: $(nproc)"; lscpu
  echo "== NUMA nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)"
  cat /sys/devices/system/node/node*/cpulist 2>/dev/null
  echo "== /dev/shm"; df -h /dev/shm
  echo "== uname: $(uname -a)"; echo "== load: $(cat /proc/loadavg)"
  echo "== proust-info"; proust-info 2>&1
} > "$DEST/machine.txt" 2>&1
head -30 "$DEST/machine.txt"

export BENCH_RESULTS=$WORK/results BENCH_REPS=${DEVICE_REPS:-5} BENCH_BUDGET=$BUDGET \
       BENCH_TIMEOUT=${DEVICE_JOB_TIMEOUT:-60} BENCH_BENCHES=$JOBS
bash "$HERE/run.sh" "$WORK/install" 2>&1 | tee "$DEST/run.log" | grep -v ' rep [0-9]*/[0-9]* '
latest=$(readlink -f "$BENCH_RESULTS/progress-latest")
cp "$latest/summary.txt" "$DEST/" 2>/dev/null
tar -C "$BENCH_RESULTS" -czf "$DEST/results.tgz" "$(basename "$latest")"
