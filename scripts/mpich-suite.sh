#!/usr/bin/env bash
# Run MPICH's own MPI test suite (test/mpi of Debian's MPICH source) against
# Proust MPI, as MPICH runs it: its configure with our mpicc, then its
# runtests driver with our mpiexec (which honours the MPIEXEC_TIMEOUT that
# runtests sets for every test).
# Usage: scripts/mpich-suite.sh [dir...]   (default: the directories of the
#        suite's top-level testlist; e.g. "threads pt2pt coll")
#        MPICH_SUITE_FORTRAN=1 scripts/mpich-suite.sh f77/pt2pt f77/coll ...
#        runs the Fortran directories, in a copy configured with mpifort
#        (1: mpif.h only; or the interfaces, as configure takes them:
#        MPICH_SUITE_FORTRAN=f77,f90 for mpif.h and the mpi module)
#
# Needs the MPICH source package: `apt-get source` wants a deb-src line;
# with ADD_DEB_SRC=1 (root) this script adds one for the running Debian
# release. Left out at configure time: what Proust MPI does not provide
# (Fortran unless asked, C++, dynamic processes); MPI-IO's directory (io)
# is in since issue 44. Still
# counted as failures: tests of MPI-4 features and of the MPI functions not
# provided (they fail to build); see the stop notes of the progress issue
# for the list. Results: summary.tap / summary.xml in the suite's directory.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(cd "${PREFIX:-build/install}" && pwd)
work=$(mkdir -p build/mpich-suite && cd build/mpich-suite && pwd)
if ! ls "$work"/mpich-*/test/mpi/configure > /dev/null 2>&1; then
  if [ "${ADD_DEB_SRC:-0}" = 1 ] && ! grep -rqs "deb-src\|Types: deb-src" /etc/apt/sources.list /etc/apt/sources.list.d; then
    . /etc/os-release
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$VERSION_CODENAME" > /etc/apt/sources.list.d/proust-deb-src.sources
    apt-get update -qq
  fi
  (cd "$work" && apt-get source --download-only mpich) ||
    { echo "mpich-suite: apt-get source mpich failed (no deb-src line? rerun with ADD_DEB_SRC=1 as root)" >&2; exit 2; }
  tar -xJf "$work"/mpich_*.orig.tar.xz -C "$work" --wildcards 'mpich-*/test/mpi'
fi
suite=$(ls -d "$work"/mpich-*/test/mpi | head -1)
fortran=(--disable-fortran)
langs=${MPICH_SUITE_FORTRAN:-0}
[ "$langs" = 1 ] && langs=f77
if [ "$langs" != 0 ]; then
  # The Fortran directories (f77/...: mpif.h) need the suite configured
  # with our mpifort: a copy of its own (timestamps kept: no automake)
  [ -x "$prefix/bin/mpifort" ] || { echo "mpich-suite: no $prefix/bin/mpifort" >&2; exit 2; }
  if [ ! -d "$work/fortran/mpi" ]; then
    mkdir -p "$work/fortran" && cp -a "$suite" "$work/fortran/"
    (cd "$work/fortran/mpi" && { make distclean > /dev/null 2>&1 || true; })
  fi
  suite=$work/fortran/mpi
  fortran=(--enable-fortran="$langs" F77="$prefix/bin/mpifort" FC="$prefix/bin/mpifort")
  # configure builds the f08 directories only inside MPICH's tree (its own
  # FIXME says an MPI's mpi_f08 should be tried instead): in our copy, where
  # the compiler passed its Fortran 2008 check
  sed -i 's/if test "$enable_f08" = "yes" -a "$FROM_MPICH" = "yes" ; then/if test "$enable_f08" = "yes" ; then/' \
    "$suite/configure"
fi
cd "$suite"
# configured for other Fortran interfaces, or without MPI-IO: again
if [ -f Makefile ] && { [ "$(cat .fortran-langs 2> /dev/null)" != "$langs" ] ||
                        grep -q -- "--disable-romio" config.status 2> /dev/null; }; then
  make distclean > /dev/null 2>&1 || true
fi
echo "$langs" > .fortran-langs
if [ ! -f Makefile ]; then
  ./configure --with-mpi="$prefix" "${fortran[@]}" --disable-cxx \
    --disable-spawn --disable-dtpools --enable-strictmpi \
    --enable-threads=multiple MPIEXEC="$prefix/bin/mpiexec" > configure.log 2>&1 ||
    { echo "mpich-suite: configure failed, see $suite/configure.log" >&2; exit 2; }
  make -C util > util.log 2>&1 || { echo "mpich-suite: its util library failed, see $suite/util.log" >&2; exit 2; }
fi
[ -f testlist.all ] || cp testlist testlist.all
if [ $# -gt 0 ]; then printf '%s\n' "$@" > testlist; else cp testlist.all testlist; fi
status=0
MPITEST_TIMEOUT=${MPITEST_TIMEOUT:-60} ./runtests -srcdir=. -tests=testlist -testdirs= \
  -mpiexec="$prefix/bin/mpiexec" -xmlfile=summary.xml -tapfile=summary.tap || status=$?
cp testlist.all testlist
echo "ok: $(grep -c '^ok' summary.tap), not ok: $(grep -c '^not ok' summary.tap) ($suite/summary.tap)"
exit $status
