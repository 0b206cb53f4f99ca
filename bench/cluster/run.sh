#!/usr/bin/env bash
# bench/cluster/run.sh — Proust across hosts against MPICH and Open MPI, on
# the test cluster of scripts/testcluster.sh (hosts are network namespaces
# joined by veth pairs: a real tcp path between processes that share
# nothing but the kernel). Run as root, nothing else running:
#
#   bash bench/cluster/run.sh [prefix]      (default prefix: build/install)
#
# BENCH_BINDIR: programs built elsewhere (bench/progress/stage-device.sh's
# pack, for the lent device: <wrapper>.mpi_pingpong, ...).
#
# It builds its own 4-host cluster (and removes it), then, interleaved and
# repeated (BENCH_REPS, default 3):
#   pingpong  bench/mpi/pingpong -t lat,bw at 8 B and 1 MiB, rank 0 on h1,
#             rank 1 on h2 (osu-style latency and bandwidth over tcp)
#   alltoall  bench/mpi/coll_latency -t alltoall, BENCH_A2A_NP ranks (8)
#             on 4 hosts, 8 B - 64 KiB (shared memory inside a host, tcp
#             between); 16 ranks on this 2-core machine make every
#             implementation spin against 15 others (Open MPI's took
#             minutes): run 16 where there are cores
#   startup   bench/startup/hello, BENCH_A2A_NP ranks on 4 hosts: wall time
#   jacobi    bench/cluster/jacobi (seed 003's border exchange), 4 ranks on
#             2 hosts (2 x 2 grid), N = 256, 1024, 4096: time of one
#             iteration; Proust also over its ofi rail (proustofi:
#             PROUST_RAILS=self,shm,ofi, tcp;ofi_rxm between the hosts)
# BENCH_CLUSTER_PARTS picks among "pingpong alltoall startup jacobi" (all).
# Proust starts with proustrun -H, MPICH with Hydra (-launcher-exec; UCX
# forced onto tcp, as the namespaces share /dev/shm and UCX would otherwise
# take shared memory between "hosts"), Open MPI with its mpirun (plm_rsh_agent; ob1 + tcp btl on the cluster's
# network, which is the only setting in which it runs across these hosts).
# For Proust's alltoall it also counts the tcp connections each rank opened
# (on demand, and with PROUST_TCP_CONNECT=eager). Prints medians, spreads
# and Proust / best-peer ratios; raw outputs in bench/results/cluster-<date>.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
REPO=$(cd "$BENCH/.." && pwd)
PREFIX=$(realpath -m "${1:-$REPO/build/install}")
REPS=${BENCH_REPS:-3}
NA=${BENCH_A2A_NP:-8}
OUT=${BENCH_RESULTS:-$BENCH/results}/cluster-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw" "$OUT/bin" || exit 1
[ "$(id -u)" = 0 ] || { echo "bench/cluster: needs root (network namespaces)"; exit 77; }

declare -A CC=([proust]="$PREFIX/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
IMPLS=""
for impl in proust mpich openmpi; do
  ok=1
  for p in mpi/pingpong mpi/coll_latency startup/hello cluster/jacobi; do
    if [ -n "${BENCH_BINDIR:-}" ]; then # built elsewhere (stage-device.sh)
      cp "$BENCH_BINDIR/$(basename "${CC[$impl]}").${p//\//_}" "$OUT/bin/$impl.$(basename $p)" || ok=0
    elif command -v "${CC[$impl]}" > /dev/null; then
      "${CC[$impl]}" -std=c11 -O2 -o "$OUT/bin/$impl.$(basename $p)" "$BENCH/$p.c" -lm || ok=0
    else
      ok=0
    fi
  done
  if [ $ok = 1 ]; then IMPLS="$IMPLS $impl"; else echo "no programs for $impl: left out"; fi
done

# run IMPL NP HOSTS(csv) PPN CMD... -> the launcher command line
launch() {
  local impl=$1 np=$2 hosts=$3 ppn=$4
  shift 4
  case $impl in
  proust) echo "$PREFIX/bin/proustrun --launch-agent $TESTCLUSTER_AGENT -H $(echo "$hosts" | sed "s/\(h[0-9]*\)/\1:$ppn/g") -n $np" ;;
  mpich) echo "env HYDRA_LAUNCHER_AUTOFORK=0 UCX_TLS=tcp,self mpiexec.mpich -genv UCX_TLS tcp,self -launcher ssh -launcher-exec $TESTCLUSTER_AGENT -hosts $hosts -localhost $TESTCLUSTER_HEAD -ppn $ppn -n $np" ;;
  openmpi) echo "mpiexec.openmpi ${OPAL_PREFIX:+--prefix $OPAL_PREFIX} --allow-run-as-root --oversubscribe --mca plm_rsh_agent $TESTCLUSTER_AGENT --mca oob_tcp_if_include 198.18.77.0/24 --mca pml ob1 --mca btl tcp,self,vader --mca btl_tcp_if_include 198.18.77.0/24 -H $(echo "$hosts" | sed "s/\(h[0-9]*\)/\1:$ppn/g") -n $np" ;;
  esac
}

has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

body() {
  for ((rep = 1; rep <= REPS; rep++)); do
    for impl in $IMPLS; do
      b=$OUT/bin/$impl
      if has pingpong; then
        timeout 300 $(launch $impl 2 h1,h2 1) "$b.pingpong" -t lat -m 8 -M 8 -r 3 -i 0.05 \
          > "$OUT/raw/$impl.lat.$rep.txt" 2>&1 || echo "  $impl lat rep $rep failed"
        timeout 300 $(launch $impl 2 h1,h2 1) "$b.pingpong" -t bw -m 1M -M 1M -r 3 -i 0.3 \
          > "$OUT/raw/$impl.bw.$rep.txt" 2>&1 || echo "  $impl bw rep $rep failed"
      fi
      if has alltoall; then
        timeout 300 $(launch $impl $NA h1,h2,h3,h4 $((NA / 4))) "$b.coll_latency" -t alltoall -m 8 -M 64K -f 8 -r 3 -i 0.2 \
          > "$OUT/raw/$impl.a2a.$rep.txt" 2>&1 || echo "  $impl alltoall rep $rep failed"
      fi
      if has startup; then
        t0=$(date +%s.%N)
        timeout 300 $(launch $impl $NA h1,h2,h3,h4 $((NA / 4))) "$b.hello" > "$OUT/raw/$impl.hello.$rep.txt" 2>&1 ||
          echo "  $impl hello rep $rep failed"
        echo "startup:np=$NA wall_s $NA $(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN {print b - a}")" >> "$OUT/raw/$impl.hello.$rep.txt"
      fi
      if has jacobi; then
        timeout 300 $(launch $impl 4 h1,h2 2) "$b.jacobi" > "$OUT/raw/$impl.jacobi.$rep.txt" 2>&1 ||
          echo "  $impl jacobi rep $rep failed"
        if [ $impl = proust ]; then
          PROUST_RAILS=self,shm,ofi timeout 300 $(launch $impl 4 h1,h2 2) "$b.jacobi" \
            > "$OUT/raw/proustofi.jacobi.$rep.txt" 2>&1 || echo "  proust (ofi) jacobi rep $rep failed"
        fi
      fi
      echo "  rep $rep $impl done"
    done
  done
  has alltoall || return 0
  # connections opened by Proust's alltoall ranks, on demand and all pairs
  for mode in lazy eager; do
    PROUST_TCP_CONNECT=$mode PROUST_LOG_LEVEL=debug timeout 300 $(launch proust 16 h1,h2,h3,h4 4) \
      "$OUT/bin/proust.coll_latency" -t alltoall -m 8 -M 8 -r 1 -i 0.01 2>&1 |
      awk -v mode=$mode '/connections dialled/ {n = $5 + $8; s += n; r++; if (n > m) m = n}
           /connections up in/ {r++; n = 15; s += n; if (n > m) m = n}
           END {printf "tcp connections, %s: %d in all, at most %d per rank (%d ranks)\n", mode, s / 2, m, r}'
  done > "$OUT/connections.txt"
}
export -f body launch has
PARTS=${BENCH_CLUSTER_PARTS:-pingpong alltoall startup jacobi}
export OUT REPS IMPLS PREFIX NA PARTS
bash "$REPO/scripts/testcluster.sh" run 4 bash -c body
python3 "$HERE/report.py" "$OUT" | tee "$OUT/summary.txt"
[ -f "$OUT/connections.txt" ] && cat "$OUT/connections.txt" | tee -a "$OUT/summary.txt"
