#!/usr/bin/env bash
# tcp_connections.sh PROUSTRUN PROGRAM N — the tcp rail connects on demand:
# N ranks that talk only to their ring neighbours (PROGRAM =
# tcp_neighbours) open a few connections each (the two neighbours, and
# the peers of MPI_Finalize's barrier: at most 2 + 2 log2 N), not N - 1;
# with PROUST_TCP_CONNECT=eager every rank has N - 1 (the count is real).
set -u
PR=$1 PROG=$2 N=$3
count() { # mode -> "max-per-rank total-endpoints ranks-reporting"
  PROUST_RAILS=tcp PROUST_TCP_CONNECT=$1 PROUST_LOG_LEVEL=debug timeout 120 "$PR" -n "$N" "$PROG" 2>&1 |
    awk '/connections dialled/ {n = $5 + $8; s += n; r++; if (n > m) m = n}
         /tcp: .* connections up in/ {r++; m = '"$N"' - 1; s += m}
         END {print m + 0, s + 0, r + 0}'
}
read -r lmax ltot lranks <<< "$(count lazy)"
read -r emax etot eranks <<< "$(count eager)"
bound=2
for ((p = 1; p < N; p *= 2)); do bound=$((bound + 2)); done
echo "lazy: at most $lmax connections per rank, $((ltot / 2)) in all ($lranks ranks reported)"
echo "eager: at most $emax per rank ($eranks ranks reported)"
[ "$lranks" -eq "$N" ] || { echo "FAIL: $lranks of $N ranks reported their connections"; exit 1; }
[ "$lmax" -le "$bound" ] || { echo "FAIL: a rank opened $lmax connections (bound $bound)"; exit 1; }
[ "$eranks" -eq "$N" ] && [ "$emax" -eq $((N - 1)) ] ||
  { echo "FAIL: eager mode did not show N - 1 connections per rank"; exit 1; }
echo ok
