#!/usr/bin/env bash
# Run HDF5's parallel test suite (testpar of Debian's HDF5 source) against
# Proust MPI, as an outside check of its MPI-IO: HDF5 configured with
# --enable-parallel and our mpicc, only the library, the test support
# library and the testpar programs built, each program then run with our
# mpiexec -n N for every N asked for.
# Usage: scripts/hdf5-testpar.sh [program...]   (default: the ten below)
#        HDF5_TESTPAR_NP="1 2 3 4"  rank counts (default "1 2 4")
#        HDF5_TESTPAR_TIMEOUT=600   seconds per program and rank count
#        PREFIX=dir                 the MPI to test (default build/install)
#        MPICC=mpicc.mpich MPIEXEC=mpiexec.mpich   another MPI's compiler
#          wrapper and launcher (both, or neither), e.g. to check the script
#          itself; every MPI gets its own build directory
#
# Needs the HDF5 source package: `apt-get source` wants a deb-src line;
# with ADD_DEB_SRC=1 (root) this script adds one for the running Debian
# release. Built static (no libtool wrappers to launch), without Fortran,
# C++, the high-level library, the tools and Java; zlib if found (the
# deflate filter of t_filters_parallel and testphdf5). Programs (testpar's
# TEST_PROG_PARA and testpflush.sh, in the order `make check` runs them):
#   t_mpi t_bigio testphdf5 t_pread t_pshutdown t_prestart t_init_term
#   t_shapesame t_filters_parallel t_pflush
# (t_pflush: t_pflush1, which always exits non-zero by design, then
# t_pflush2, which must pass; t_prestart reopens the file t_pshutdown left,
# so it needs t_pshutdown before it.) Run only when named: t_cache and
# t_cache_image, the metadata cache's stress tests (mostly point-to-point
# traffic, little MPI-IO), slow on 2 cores: t_cache_image 3-4 min at 2 to 4
# ranks, t_cache 15 s at 4 with Proust but 4 min at 3 and over 10 at 4 with
# MPICH (whose waits spin); e.g.
#   HDF5_TESTPAR_NP="3 4" scripts/hdf5-testpar.sh t_cache t_cache_image
# Not run at fewer ranks than they need (t_mpi 2, t_cache_image 2, t_cache
# 3, t_pread 3): reported as "skip". A program fails on a non-zero exit
# status, a timeout, or a "*FAILED*" in its output. Logs: testpar-logs/ in the build
# directory; test files go to a temporary HDF5_PARAPREFIX under TMPDIR.
# Exit status: 0 if nothing failed, 1 if something did, 2 if the build did.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(cd "${PREFIX:-build/install}" 2> /dev/null && pwd || echo "${PREFIX:-build/install}")
if [ -n "${MPICC:-}${MPIEXEC:-}" ]; then
  [ -n "${MPICC:-}" ] && [ -n "${MPIEXEC:-}" ] ||
    { echo "hdf5-testpar: set MPICC and MPIEXEC together" >&2; exit 2; }
  mpicc=$(command -v "$MPICC") || { echo "hdf5-testpar: no $MPICC" >&2; exit 2; }
  mpiexec=$(command -v "$MPIEXEC") || { echo "hdf5-testpar: no $MPIEXEC" >&2; exit 2; }
else
  mpicc=$prefix/bin/mpicc mpiexec=$prefix/bin/mpiexec
  [ -x "$mpicc" ] && [ -x "$mpiexec" ] || { echo "hdf5-testpar: no $mpicc or $mpiexec" >&2; exit 2; }
fi
work=$(mkdir -p build/hdf5-testpar && cd build/hdf5-testpar && pwd)
if ! ls "$work"/hdf5-*/configure > /dev/null 2>&1; then
  if [ "${ADD_DEB_SRC:-0}" = 1 ] && ! grep -rqs "deb-src\|Types: deb-src" /etc/apt/sources.list /etc/apt/sources.list.d; then
    . /etc/os-release
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$VERSION_CODENAME" > /etc/apt/sources.list.d/proust-deb-src.sources
    apt-get update -qq
  fi
  (cd "$work" && apt-get source --download-only hdf5) ||
    { echo "hdf5-testpar: apt-get source hdf5 failed (no deb-src line? rerun with ADD_DEB_SRC=1 as root)" >&2; exit 2; }
  tar -xzf "$(ls "$work"/hdf5_*.orig.tar.* | head -1)" -C "$work"
fi
src=$(dirname "$(ls "$work"/hdf5-*/configure | head -1)")

# One build directory per compiler wrapper; configured again when the MPI's
# mpi.h (what configure's MPI checks see) or the options changed
build=$work/obj-$(echo "$mpicc" | sed 's|^/||; s|[^A-Za-z0-9._-]|_|g')
options=(--enable-parallel --disable-fortran --disable-cxx --disable-hl --disable-tools
         --disable-java --disable-shared --enable-static --enable-build-mode=production
         --disable-dependency-tracking --enable-silent-rules)
key="$mpicc ${options[*]} $({ echo '#include <mpi.h>' | "$mpicc" -E -x c - 2> /dev/null || true; } | md5sum)"
if [ "$(cat "$build/.proust-key" 2> /dev/null)" != "$key" ]; then
  rm -rf "$build" && mkdir -p "$build"
  echo "hdf5-testpar: configuring $(basename "$src") with $mpicc in $build"
  (cd "$build" && CC="$mpicc" "$src/configure" "${options[@]}" > configure.log 2>&1) ||
    { echo "hdf5-testpar: configure failed, see $build/configure.log" >&2; exit 2; }
  echo "$key" > "$build/.proust-key"
fi
all=(t_mpi t_bigio testphdf5 t_cache t_cache_image t_pread t_pshutdown t_prestart
     t_init_term t_shapesame t_filters_parallel t_pflush)
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(t_mpi t_bigio testphdf5 t_pread t_pshutdown t_prestart
                                 t_init_term t_shapesame t_filters_parallel t_pflush)
bins=()
for p in "${progs[@]}"; do
  case " ${all[*]} " in *" $p "*) ;; *) echo "hdf5-testpar: no program $p (${all[*]})" >&2; exit 2 ;; esac
  if [ "$p" = t_pflush ]; then bins+=(t_pflush1 t_pflush2); else bins+=("$p"); fi
done
start=$SECONDS
jobs=${HDF5_TESTPAR_JOBS:-2}
{ make -j"$jobs" -C "$build/src" && make -j"$jobs" -C "$build/test" libh5test.la &&
  make -j"$jobs" -C "$build/testpar" "${bins[@]}"; } > "$build/make.log" 2>&1 ||
  { tail -20 "$build/make.log" >&2; echo "hdf5-testpar: build failed, see $build/make.log" >&2; exit 2; }
echo "hdf5-testpar: built in $((SECONDS - start)) s ($build)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hdf5-testpar.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
logs=$build/testpar-logs
mkdir -p "$logs"
limit=${HDF5_TESTPAR_TIMEOUT:-600}
npass=0 nfail=0 nskip=0 failed=()
minranks() {
  case $1 in t_mpi|t_cache_image) echo 2 ;; t_cache|t_pread) echo 3 ;; *) echo 1 ;; esac
}
run() {  # run N PROGRAM LOG: the program, under the time limit
  timeout -k 10 "$limit" "$mpiexec" -n "$1" "$build/testpar/$2" >> "$3" 2>&1
}
for n in ${HDF5_TESTPAR_NP:-1 2 4}; do
  # one directory per rank count, kept between programs (t_prestart reads
  # what t_pshutdown left); it is the working directory too
  dir=$tmp/np$n
  mkdir -p "$dir"
  # t_cache_image execs ./t_cache_image (in the working directory)
  ln -sf "$build/testpar/t_cache_image" "$dir/"
  export HDF5_PARAPREFIX=$dir
  for p in "${progs[@]}"; do
    log=$logs/$p.np$n.log
    : > "$log"
    min=$(minranks "$p")
    if [ "$n" -lt "$min" ]; then
      # not run: they would only say so (and t_cache then frees datatypes
      # it never created, which MPICH aborts on)
      printf '%-20s np=%-2s %-6s %7s\n' "$p" "$n" skip -
      echo "    (needs at least $min ranks)"
      nskip=$((nskip + 1))
      continue
    fi
    t0=$(date +%s.%N)
    rc=0
    if [ "$p" = t_pflush ]; then
      # t_pflush1 exits non-zero on purpose, without finalizing: only its
      # timeout counts
      (cd "$dir" && run "$n" t_pflush1 "$log") || rc=$?
      [ $rc = 124 ] || [ $rc = 137 ] || { rc=0; (cd "$dir" && run "$n" t_pflush2 "$log") || rc=$?; }
    else
      (cd "$dir" && run "$n" "$p" "$log") || rc=$?
    fi
    t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc = 124 ] || [ $rc = 137 ]; then
      result="fail (timeout after ${limit} s)"
    elif [ $rc != 0 ]; then
      result="fail (exit status $rc)"
    elif grep -q '\*FAILED\*' "$log"; then
      result="fail (*FAILED* in its output)"
    elif grep -q 'Need at least [0-9]* processes' "$log"; then
      result="skip ($(grep -o 'Need at least [0-9]* processes' "$log" | head -1))"
    else
      result=pass
    fi
    printf '%-20s np=%-2s %-6s %7s s\n' "$p" "$n" "${result%% *}" "$t"
    case $result in
      pass) npass=$((npass + 1)) ;;
      skip*) nskip=$((nskip + 1)); echo "    ${result#skip }" ;;
      *) nfail=$((nfail + 1)); failed+=("$p@np$n")
         echo "    ${result#fail }, log: $log"
         # the failing checks and the MPI's own words, first
         grep -aE '\*FAILED\*|ERROR|rror string|ssertion|[Ff]ailed|Abort|Fatal|[Ss]ignal|[Tt]imed out' "$log" |
           head -8 | sed 's/^/    | /' || true ;;
    esac
  done
done
echo "hdf5-testpar: $npass passed, $nfail failed, $nskip skipped ($(basename "$src"), $mpiexec)"
[ $nfail = 0 ] || { echo "hdf5-testpar: failed: ${failed[*]}"; exit 1; }
