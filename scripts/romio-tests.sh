#!/usr/bin/env bash
# Run ROMIO's own tests (src/mpi/romio/test of Debian's MPICH source) against
# an MPI: each program built with its mpicc (the Fortran ones with its
# mpifort), run with the rank counts and arguments of ROMIO's runtests, and
# judged as ROMIO judges them: " No Errors" printed, exit status 0.
# Usage: scripts/romio-tests.sh [test...]    (default: all of them)
#        MPICC=mpicc.mpich MPIFORT=mpifort.mpich MPIEXEC=mpiexec.mpich
#          scripts/romio-tests.sh             (the same tests against MPICH)
# Needs the MPICH source package (scripts/mpich-suite.sh fetches it; with
# ADD_DEB_SRC=1 as root it adds a deb-src line). Files go to a scratch
# directory under build/romio-tests (TESTDIR= to put them on another file
# system, /dev/shm or an NFS mount, say). Exit status: the failures' count.
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=$(cd "${PREFIX:-build/install}" && pwd)
MPICC=${MPICC:-$prefix/bin/mpicc}
MPIFORT=${MPIFORT:-$prefix/bin/mpifort}
MPIEXEC=${MPIEXEC:-$prefix/bin/mpiexec}
name=$(command -v "$MPICC" | tr / _)
work=$(mkdir -p build/romio-tests && cd build/romio-tests && pwd)
src=$(ls -d build/mpich-suite/mpich-*/src/mpi/romio/test 2> /dev/null | head -1)
if [ -z "$src" ]; then
  tarball=$(ls build/mpich-suite/mpich_*.orig.tar.xz 2> /dev/null | head -1)
  if [ -z "$tarball" ]; then
    (mkdir -p build/mpich-suite && cd build/mpich-suite && apt-get source --download-only mpich) ||
      { echo "romio-tests: apt-get source mpich failed (no deb-src line? see scripts/mpich-suite.sh)" >&2; exit 2; }
    tarball=$(ls build/mpich-suite/mpich_*.orig.tar.xz | head -1)
  fi
  tar -xJf "$tarball" -C build/mpich-suite --wildcards 'mpich-*/src/mpi/romio/test'
  src=$(ls -d build/mpich-suite/mpich-*/src/mpi/romio/test | head -1)
fi
src=$(cd "$src" && pwd)
bin=$work/bin$name
mkdir -p "$bin"
scratch=$(mktemp -d "${TESTDIR:-$work}/romio.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# name ranks arguments (@F@: the test file's name), as ROMIO's runtests.in;
# and external32, big_extents and creat_excl, which it leaves out (not
# large_array: a 4 GiB file; ROMIO_LARGE=1 adds it)
tests=(
  "simple 4 -fname @F@" "async 4 -fname @F@" "async-multiple 4 -fname @F@"
  "atomicity 4 -fname @F@" "coll_test 4 -fname @F@" "excl 4 -fname @F@"
  "file_info 4 -fname @F@" "i_noncontig 2 -fname @F@" "noncontig 2 -fname @F@"
  "noncontig_coll 2 -fname @F@" "noncontig_coll2 4 -fname @F@"
  "aggregation1 4 -h -f @F@" "aggregation2 4 @F@" "hindexed 4 @F@"
  "misc 4 -fname @F@" "shared_fp 4 -fname @F@" "ordered_fp 4 -fname @F@"
  "split_coll 4 -fname @F@" "psimple 4 -fname @F@" "error 1 -fname @F@"
  "status 1 -fname @F@" "types_with_zeros 2 @F@" "darray_read 4 @F@"
  "syshints 1 $src/test_hintfile" "external32 2 -fname @F@"
  "big_extents 1 @F@" "creat_excl 4 -fname @F@"
  "fmisc 4 -fname @F@" "fcoll_test 4 -fname @F@" "pfcoll_test 4 -fname @F@"
)
[ "${ROMIO_LARGE:-0}" = 1 ] && tests+=("large_array 4 -fname @F@")
want=" $* "

build() { # test name -> executable in $bin, or 1
  local t=$1 exe=$bin/$1
  [ -x "$exe" ] && [ "$exe" -nt "$MPICC" ] && return 0
  if [ -f "$src/$t.c" ]; then
    "$MPICC" -O1 -o "$exe" "$src/$t.c" > "$bin/$t.build" 2>&1
  elif [ -f "$src/$t.c.in" ]; then
    sed 's/@LL@/lld/g' "$src/$t.c.in" > "$bin/$t.c"
    "$MPICC" -O1 -o "$exe" "$bin/$t.c" > "$bin/$t.build" 2>&1
  elif [ -f "$src/$t.f.in" ]; then
    # the substitutions ROMIO's configure makes for gfortran
    sed -e 's/@F77MPIOINC@//' -e 's/@FORTRAN_MPI_OFFSET@/integer*8/' \
        -e 's/@F77IARGC@/iargc()/' -e 's/@F77GETARG@/call getarg(i, str)/' \
        "$src/$t.f.in" > "$bin/$t.f"
    "$MPIFORT" -o "$exe" "$bin/$t.f" > "$bin/$t.build" 2>&1
  else
    echo "no source" > "$bin/$t.build"
    return 1
  fi
}

pass=0 fail=0 failed=()
for entry in "${tests[@]}"; do
  read -r t np args <<< "$entry"
  [ $# -gt 0 ] && [ "${want#* $t }" = "$want" ] && continue
  if ! build "$t"; then
    echo "not ok $t (build: $(tail -3 "$bin/$t.build" | tr '\n' ' '))"
    fail=$((fail + 1)) failed+=("$t")
    continue
  fi
  rm -rf "${scratch:?}"/*
  out=$(cd "$scratch" && timeout "${ROMIO_TEST_TIMEOUT:-120}" $MPIEXEC -n "$np" "$bin/$t" \
          ${args//@F@/$scratch/testfile} 2>&1)
  rc=$?
  # the two that print no " No Errors": what they print when right
  case $t in
    external32) good="external32 datarep is BIG ENDIAN" ;;
    large_array) good="Process 0: data read back is correct" ;;
    *) good="No Errors" ;;
  esac
  if [ $rc -eq 0 ] && echo "$out" | grep -q "$good"; then
    echo "ok $t ($np ranks)"
    pass=$((pass + 1))
  else
    echo "not ok $t ($np ranks, exit $rc)"
    echo "$out" | tail -15 | sed 's/^/#   /'
    fail=$((fail + 1)) failed+=("$t")
  fi
done
echo "romio-tests ($MPICC): ok $pass, not ok $fail${failed:+ (${failed[*]})}"
exit $fail
