#!/usr/bin/env bash
# Run mpi4py's own test suite (from its source distribution) against Proust
# MPI, as its users run it: mpiexec -n N python test/main.py.
# Usage: scripts/mpi4py-suite.sh [nprocs...]   (default: 1 2 3)
#
# Builds the mpi4py venv first (scripts/mpi4py-smoke.sh does, and rebuilds
# it when libmpi or mpi.h changed: mpi4py decides at build time which MPI
# functions exist). Left out: spawn and the process pool (no dynamic
# processes), and ULFM (its fallback for MPIX_Comm_iagree is an Iallreduce
# on the same communicator, which the test interleaves with Barrier in a
# different order on different ranks: it needs a real agreement).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(cd "${PREFIX:-build/install}" && pwd)
venv=${MPI4PY_VENV:-build/mpi4py-venv}
MPI4PY_VENV=$venv bash scripts/mpi4py-smoke.sh "$prefix" > /dev/null
version=$("$venv/bin/python" -c 'import mpi4py; print(mpi4py.__version__)')
src=build/mpi4py-src/mpi4py-$version
if [ ! -d "$src/test" ]; then
  mkdir -p build/mpi4py-src
  "$venv/bin/pip" download -q --no-deps --no-binary :all: -d build/mpi4py-src "mpi4py==$version"
  tar -xzf "build/mpi4py-src/mpi4py-$version.tar.gz" -C build/mpi4py-src
fi
python=$(cd "$venv" && pwd)/bin/python
nps=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(1 2 3)
status=0
for n in "${nps[@]}"; do
  echo "== mpi4py $version test suite, mpiexec -n $n =="
  (cd "$src" && timeout 900 "$prefix/bin/mpiexec" -n "$n" "$python" test/main.py \
     -q -e "util_pool|spawn|dynproc|ulfm") || status=1
done
exit $status
