#!/usr/bin/env bash
# Install the Debian packages Proust needs, only those missing.
# --bench: also MPICH's and Open MPI's development files, the peers of the
# side-by-side benchmarks (kept out of the test setup, which installs only
# their launchers, so that nothing but Proust provides mpi.h and libmpi.so
# when MPI programs are built against Proust).
set -euo pipefail
# gdb: the stress tests print every thread's stack of a job that hangs;
# mpich: its launcher, Hydra (no headers: mpi.h stays Proust's), starts
# Proust programs through PMI-1 in the launch tests; openmpi-bin: its mpirun
# (a PMIx server; no headers either) starts them through PMIx; iproute2:
# scripts/testcluster.sh builds test hosts with ip netns; slurm-wlm:
# scripts/testcluster-slurm.sh runs a real Slurm on them (srun --mpi=pmix,
# --mpi=pmi2, salloc + proustrun); procps: pgrep/pkill in test scripts
# gfortran, python3-venv, python3-pip: the Fortran bindings, generated from
# the MPI Forum's API description (pympistandard, from PyPI, in a venv)
need=(cmake make gcc g++ pkg-config libhwloc-dev hwloc libfabric-dev libpmix-dev gdb mpich openmpi-bin
      iproute2 slurm-wlm procps gfortran python3-venv python3-pip)
if [ "${1:-}" = "--bench" ]; then
  need+=(mpich libmpich-dev openmpi-bin libopenmpi-dev python3-matplotlib libfabric-bin)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The generator's Python (src/mpi/CMakeLists.txt: PROUST_GEN_PYTHON), with
# the version of the standard's description the bindings were made from.
venv=build/gen-venv
cd "$(dirname "$0")/.."
if ! "$venv/bin/python" -c "import pympistandard" 2> /dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q "pympistandard==0.2.0" ||
    echo "install-deps: pympistandard could not be installed from PyPI: the Fortran bindings" \
         "will not be built (cmake says so)" >&2
fi
