#!/usr/bin/env bash
# bench/progress/stage-device.sh — pack what bench/progress/run.sh needs on a
# machine that has no compiler wrappers and no MPI installed (the lent
# 16-core device machine: nothing can be fetched there).
#
#   bash bench/progress/stage-device.sh [dest]        (default: .devrun)
#
# dest receives
#   bin/<wrapper>.<prog>   the progress programs, coll_latency and the
#                          start-up hello, built here with Proust's
#                          mpicc, mpicc.mpich and mpicc.openmpi (the names
#                          run.sh looks for under BENCH_BINDIR)
#   install/               Proust's install prefix (build/install)
#   root/                  MPICH's hydra and Open MPI's orterun with their
#                          plug-in folders, under their /usr paths, and every
#                          shared library they and the programs load
#                          (glibc excepted), in root/lib
#   env.sh                 source it there: PATH, LD_LIBRARY_PATH,
#                          OPAL_PREFIX, BENCH_BINDIR
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
REPO=$(cd "$BENCH/.." && pwd)
DEST=$(realpath -m "${1:-$REPO/.devrun}")
PREFIX=$REPO/build/install
ARCH=x86_64-linux-gnu

rm -rf "$DEST"; mkdir -p "$DEST/bin" "$DEST/root/lib"
cp -a "$PREFIX" "$DEST/install"

progs="progress/overlap progress/reactivity progress/waiters progress/threads progress/partitioned mpi/pingpong
       mpi/coll_latency startup/hello"
for cc in "$PREFIX/bin/mpicc" mpicc.mpich mpicc.openmpi; do
  for p in $progs; do
    # an MPI without a program's features (Open MPI 4.1: partitioned)
    # leaves it out: run.sh then skips that job for it
    "$cc" -std=c11 -O2 -g -Wall -Wextra -pthread \
      -o "$DEST/bin/$(basename "$cc").${p//\//_}" "$BENCH/$p.c" 2> /dev/null ||
      echo "stage: $cc does not build bench/$p.c (left out)" >&2
  done
done

# The peers' launchers and plug-ins, kept under their own paths so that
# OPAL_PREFIX (Open MPI) and the library-relative module folder (UCX) find them.
copy() { for f in "$@"; do mkdir -p "$DEST/root$(dirname "$f")"; cp -a "$f" "$DEST/root$f"; done; }
copy /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy /usr/bin/orterun /usr/bin/orted \
     /usr/lib/$ARCH/openmpi /usr/share/openmpi /etc/openmpi /usr/lib/$ARCH/ucx
[ -d /usr/lib/$ARCH/pmix2 ] && copy /usr/lib/$ARCH/pmix2
ln -sf mpiexec.hydra "$DEST/root/usr/bin/mpiexec.mpich"
ln -sf orterun "$DEST/root/usr/bin/mpiexec.openmpi"

# Every library the above loads, glibc's excepted (the target has its own).
mapfile -t objs < <(find "$DEST/bin" "$DEST/install" "$DEST/root" -type f \
                      \( -perm -u+x -o -name '*.so*' \))
for o in "${objs[@]}"; do ldd "$o" 2>/dev/null || true; done \
  | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u \
  | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libresolv)\.so' \
  | grep -v -e "^$DEST" -e "^$REPO/" | while read -r lib; do cp -L "$lib" "$DEST/root/lib/"; done

# Debug sections are most of the bytes (libmpich: 40 of 42 MB); the
# transfer to the target is size-limited.
find "$DEST" -type f -name '*.so*' -exec strip --strip-debug {} + 2>/dev/null || true

cat > "$DEST/env.sh" <<'EOF'
# source me on the target: the staged peers and programs take precedence
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH=$D/root/usr/bin:$D/install/bin:$PATH
export LD_LIBRARY_PATH=$D/install/lib:$D/root/lib:$D/root/usr/lib/x86_64-linux-gnu:$D/root/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$D/root/usr
export BENCH_BINDIR=$D/bin
EOF
du -sh "$DEST"
