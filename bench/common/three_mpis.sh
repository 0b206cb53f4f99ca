# bench/common/three_mpis.sh — sourced by the two-rank MPI benchmark
# scripts (bench/rma/run.sh, bench/match/run.sh): with PREFIX set (Proust's
# install prefix), it fills CC[impl] (compiler wrapper) and RUN[impl]
# (launcher with -n 2) for Proust MPI and for MPICH and Open MPI where
# Debian's wrappers exist, and IMPLS, the names found, Proust first.
# Open MPI gets --bind-to none: MPICH's hydra and Proust's launcher do not
# bind either.
# shellcheck shell=bash
declare -A CC RUN
CC[proust]="$PREFIX/bin/mpicc"; RUN[proust]="$PREFIX/bin/mpiexec -n 2"
if command -v mpicc.mpich > /dev/null; then
  CC[mpich]=mpicc.mpich; RUN[mpich]="mpiexec.mpich -n 2"
fi
if command -v mpicc.openmpi > /dev/null; then
  CC[openmpi]=mpicc.openmpi
  RUN[openmpi]="mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none -n 2"
fi
IMPLS=$(for i in proust mpich openmpi; do [ -n "${CC[$i]:-}" ] && echo $i; done)
