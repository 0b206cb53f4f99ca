#!/usr/bin/env bash
# Install the Debian packages Proust needs, only those missing.
set -euo pipefail
need=(cmake make gcc pkg-config libhwloc-dev hwloc libfabric-dev)
# Peers for the side-by-side benchmarks and MPI tests.
need+=(mpich libmpich-dev openmpi-bin libopenmpi-dev)
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
