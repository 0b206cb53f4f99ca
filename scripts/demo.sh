#!/usr/bin/env bash
# The demo of `make run`: ping-pong and multi-flow over shm, then over tcp,
# with the embedded launcher.
set -euo pipefail
prefix=${1:-build/install}
echo "== proust-info (summary) =="
"$prefix/bin/proust-info" | sed -n '1,12p'
for rails in self,shm tcp; do
  for strategy in default aggreg; do
    echo
    echo "== PROUST_RAILS=$rails PROUST_STRATEGY=$strategy: proustrun -n 2 proust-demo =="
    PROUST_RAILS=$rails PROUST_STRATEGY=$strategy "$prefix/bin/proustrun" -n 2 "$prefix/bin/proust-demo"
  done
done

echo
echo "== Proust MPI: mpicc examples/mpi_demo.c, mpiexec -n 4 (shm) and -n 2 (tcp) =="
demo_dir=$(mktemp -d)
trap 'rm -rf "$demo_dir"' EXIT
"$prefix/bin/mpicc" -O2 examples/mpi_demo.c -o "$demo_dir/mpi_demo"
"$prefix/bin/mpiexec" -n 4 "$demo_dir/mpi_demo"
PROUST_RAILS=tcp "$prefix/bin/mpiexec" -n 2 "$demo_dir/mpi_demo"
