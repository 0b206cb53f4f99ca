#!/usr/bin/env bash
# Layer direction, checked mechanically: each layer includes only what it may
# (docs/ARCHITECTURE.md, "Layers and folders"). Prints the offending lines.
set -u
src=${1:?usage: check_layers.sh SRC_DIR}
fail=0
check() { # folder, allowed include pattern (extended regex)
  local dir=$1 allowed=$2
  local bad
  bad=$(grep -rHn --include='*.[ch]' '#include "' "$src/$dir" |
    grep -Ev "#include \"($allowed)\"" || true)
  if [ -n "$bad" ]; then
    echo "layer violation in src/$dir (allowed: $allowed):"
    echo "$bad"
    fail=1
  fi
}
check common 'proust.h|common/[a-z_]+\.h'
check boot 'proust.h|common/[a-z_]+\.h|boot/[a-z_]+\.h'
check drivers 'proust.h|common/[a-z_]+\.h|boot/boot.h|drivers/[a-z_]+\.h'
check topology 'proust.h|common/[a-z_]+\.h|topology/[a-z_]+\.h'
# progress is below core: it reaches core only through its upcall table
check progress 'proust.h|common/[a-z_]+\.h|drivers/driver.h|topology/[a-z_]+\.h|progress/[a-z_]+\.h'
check strategy 'strategy/strategy.h|core/chunk.h|core/wire.h'
# Proust MPI: the public headers and its own (src/mpi/*.h and those of its
# family folders, by bare name: libmpi's include path holds include/,
# src/mpi and its families only)
mpi_own=$(cd "$src/mpi" && ls -- *.h */*.h | sed 's|.*/||; s/\./\\./' | paste -sd'|')
check mpi "proust\.h|mpi\.h|$mpi_own"
exit $fail
