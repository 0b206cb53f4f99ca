#!/usr/bin/env bash
# Build mpi4py from PyPI against Proust MPI (build/install/bin/mpicc) in a
# virtual environment and run the smoke test under mpiexec -n 2.
# Usage: scripts/mpi4py-smoke.sh [prefix]   (default build/install)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(cd "${1:-build/install}" && pwd)
venv=${MPI4PY_VENV:-build/mpi4py-venv}

need=(python3-dev python3-venv python3-pip)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# Rebuild when libmpi changed: the wheel is linked against it.
stamp="$venv/.built-against"
lib_id=$(sha1sum "$prefix/lib/libmpi.so" "$prefix/include/mpi.h" | sha1sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lib_id" ]; then
  "$venv/bin/python" -m pip install -q --upgrade pip setuptools wheel "cython>=3.0.1"
  "$venv/bin/python" -m pip uninstall -q -y mpi4py 2>/dev/null || true
  echo "building mpi4py against $prefix/bin/mpicc (a few minutes)"
  env MPICC="$prefix/bin/mpicc" "$venv/bin/python" -m pip install -q --no-cache-dir \
    --no-build-isolation --no-binary mpi4py mpi4py
  echo "$lib_id" > "$stamp"
fi
for rails in self,shm tcp; do
  echo "== mpi4py smoke test, PROUST_RAILS=$rails, mpiexec -n 2 =="
  PROUST_RAILS=$rails timeout 300 "$prefix/bin/mpiexec" -n 2 "$venv/bin/python" tests/mpi4py/smoke.py
done
echo "== mpi4py smoke test, mpiexec -n 3 =="
timeout 300 "$prefix/bin/mpiexec" -n 3 "$venv/bin/python" tests/mpi4py/smoke.py
