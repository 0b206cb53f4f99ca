#!/usr/bin/env bash
# bench/scale-device.sh — what a node of many cores shows and the 2-core VM
# cannot (issues 39 and 43): start-up from 2 to 128 ranks
# (bench/startup/run.sh) and MPI collectives at as many ranks as cores
# (bench/mpi/coll_latency.c), Proust MPI against MPICH and Open MPI, from
# the pack of bench/progress/stage-device.sh, already unpacked by
# bench/progress/device-run.sh under $WORK:
#
#   (device) bash bench/scale-device.sh [work dir]    (default /tmp/proust-device)
#
# Leaves startup.txt and coll.txt (medians, ratios) and scale-raw.tgz in
# $OUT (or ./device-out). SCALE_NP (start-up ranks, default "2 16 64 128"),
# SCALE_COLL_NP (default: nproc), SCALE_REPS (3), SCALE_COLL_ARGS.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${1:-${TMPDIR:-/tmp}/proust-device}
DEST=${OUT:-$PWD/device-out}
mkdir -p "$DEST" "$WORK/scale"
# shellcheck disable=SC1091
source "$WORK/env.sh"
REPS=${SCALE_REPS:-3}

BENCH_RESULTS=$WORK/scale BENCH_STARTUP_NP=${SCALE_NP:-2 16 64 128} BENCH_REPS=$REPS \
  bash "$HERE/startup/run.sh" "$WORK/install" > "$DEST/startup.txt" 2>&1

# Collectives: as bench/run.sh runs coll_latency (Open MPI binds by default);
# SCALE_COLL_NP=0 skips them.
np=${SCALE_COLL_NP:-$(nproc)}
[ "$np" = 0 ] && { cat "$DEST/startup.txt"; exit 0; }
args=${SCALE_COLL_ARGS:--M 256K -i 0.3 -r 5}
raw=$WORK/scale/coll; mkdir -p "$raw"
declare -A L=([mpicc]="mpiexec" [mpicc.mpich]="mpiexec.mpich"
              [mpicc.openmpi]="mpiexec.openmpi --allow-run-as-root --oversubscribe")
for ((rep = 1; rep <= REPS; rep++)); do
  for w in mpicc mpicc.mpich mpicc.openmpi; do
    # shellcheck disable=SC2086
    timeout -k 5 120 ${L[$w]} -n "$np" "$BENCH_BINDIR/$w.mpi_coll_latency" $args \
      > "$raw/$w.$rep.txt" 2> "$raw/$w.$rep.err" < /dev/null || echo "coll: $w rep $rep failed" >&2
  done
done
python3 - "$raw" "$np" > "$DEST/coll.txt" <<'PY'
import glob, os, statistics, sys
raw, np_ = sys.argv[1], sys.argv[2]
v = {}
for p in glob.glob(os.path.join(raw, "*.txt")):
    impl = os.path.basename(p).rsplit(".", 2)[0]
    for line in open(p):
        f = line.split()
        if len(f) == 4 and f[0].startswith("coll:"):
            v.setdefault((f[1], int(f[2])), {}).setdefault(impl, []).append(float(f[3]))
names = {"mpicc": "proust", "mpicc.mpich": "mpich", "mpicc.openmpi": "openmpi"}
print(f"# coll_latency, {np_} ranks, us, median [min-max]; ratio = proust / best peer")
for (c, s) in sorted(v):
    d = v[(c, s)]
    med = {names[i]: statistics.median(x) for i, x in d.items()}
    cells = " ".join(f"{names[i]} {statistics.median(x):.2f} [{min(x):.2f}-{max(x):.2f}]" for i, x in sorted(d.items()))
    peers = [m for i, m in med.items() if i != "proust"]
    r = f"{med['proust'] / min(peers):.2f}" if "proust" in med and peers else "-"
    print(f"{c:10s} {s:>8d}  {cells}  ratio {r}")
PY
tar -C "$WORK/scale" -czf "$DEST/scale-raw.tgz" .
cat "$DEST/startup.txt" "$DEST/coll.txt"
