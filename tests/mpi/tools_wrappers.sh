#!/usr/bin/env bash
# tools_wrappers.sh TOOLS BUILD CMAKE CASE — one test of the tools of Proust
# MPI (registered one by one in tests/mpi/tools.cmake):
#   TOOLS  the build-tree scripts (build/tools/mpi: mpicc, mpicxx, mpiexec...)
#   BUILD  the build folder (for an install into a temporary prefix)
#   CMAKE  the cmake program
# The rails come from PROUST_RAILS (set by ctest). Exit 0 = pass; on failure
# it says what was expected and shows the output.
set -u
TOOLS=$1
BUILD=$2
CMAKE=$3
CASE=$4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proust-tools.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err
: > "$OUT"
: > "$ERR"

fail() {
    echo "FAIL [$CASE]: $*" >&2
    echo "--- stdout:" >&2
    cat "$OUT" >&2
    echo "--- stderr:" >&2
    cat "$ERR" >&2
    exit 1
}

# run CMD... : with a safety timeout; sets RC, output in $OUT and $ERR.
run() {
    timeout -k 2 60 "$@" > "$OUT" 2> "$ERR" < /dev/null
    RC=$?
}
expect_rc() { [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"; }
expect_out() { grep -qE -- "$1" "$OUT" || fail "stdout lacks /$1/"; }
expect_no_out() { ! grep -qE -- "$1" "$OUT" || fail "stdout has /$1/"; }
expect_err() { grep -qE -- "$1" "$ERR" || fail "stderr lacks /$1/"; }
expect_count() { # REGEX N
    local c
    c=$(grep -cE -- "$1" "$OUT")
    [ "$c" -eq "$2" ] || fail "$c lines of stdout match /$1/, expected $2"
}
expect_exact() { [ "$(cat "$OUT")" = "$1" ] || fail "stdout is not '$1'"; }

# A C program: a token goes round the ring (each rank adds its rank), every
# rank checks what it got and prints one line with the value of $PM_TEST_VAR.
write_ring_c() {
    cat > "$1" << 'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank = -1, size = 0, version = 0, subversion = 0;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_version(&version, &subversion);
    int token = 0, want = rank * (rank + 1) / 2;
    if (size > 1) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 3, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            want = (size - 1) * size / 2;
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, next, 3, MPI_COMM_WORLD);
        }
    }
    if (token != want) {
        fprintf(stderr, "rank %d: token %d, expected %d\n", rank, token, want);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    const char *v = getenv("PM_TEST_VAR");
    printf("rank %d of %d: MPI %d.%d token %d var %s\n", rank, size, version, subversion,
           token, v ? v : "(unset)");
    MPI_Finalize();
    return 0;
}
EOF
}

# The same in C++ (mpi.h from C++, a few C++ features).
write_ring_cxx() {
    cat > "$1" << 'EOF'
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {
struct Ring {
    int rank = -1, size = 0;
    int pass(int value) const
    {
        if (size == 1)
            return value;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        std::vector<int> v(1, value);
        if (rank == 0) {
            MPI_Send(v.data(), 1, MPI_INT, next, 4, MPI_COMM_WORLD);
            MPI_Recv(v.data(), 1, MPI_INT, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(v.data(), 1, MPI_INT, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v[0] += rank;
            MPI_Send(v.data(), 1, MPI_INT, next, 4, MPI_COMM_WORLD);
        }
        return v[0];
    }
};
} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    Ring ring;
    MPI_Comm_rank(MPI_COMM_WORLD, &ring.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ring.size);
    int token = ring.pass(0);
    std::vector<int> ranks(ring.rank == 0 ? ring.size : ring.rank + 1);
    std::iota(ranks.begin(), ranks.end(), 0);
    int want = std::accumulate(ranks.begin(), ranks.end(), 0);
    if (token != want) {
        std::fprintf(stderr, "rank %d: token %d, expected %d\n", ring.rank, token, want);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    const char *v = std::getenv("PM_TEST_VAR");
    std::string msg = "c++ rank " + std::to_string(ring.rank) + " token " + std::to_string(token) +
                      " var " + (v ? v : "(unset)");
    std::printf("%s\n", msg.c_str());
    MPI_Finalize();
    return 0;
}
EOF
}

# check_ring NPROCS: $OUT holds one line per rank from write_ring_c's program
# with PM_TEST_VAR=$2.
check_ring() {
    local n=$1 var=$2 r
    expect_count '^rank [0-9]+ of ' "$n"
    for ((r = 0; r < n; r++)); do
        local want=$((r * (r + 1) / 2))
        [ "$r" -eq 0 ] && want=$(((n - 1) * n / 2))
        expect_count "^rank $r of $n: MPI 4\\.1 token $want var $var\$" 1
    done
}

# Everything a user gets from an install tree at $1 (bin/, include/, lib/).
check_install_tree() {
    local p=$1
    for f in bin/mpicc bin/mpicxx bin/mpic++ bin/mpiexec bin/mpirun bin/proustrun \
        include/mpi.h lib/libmpi.so lib/pkgconfig/mpi.pc; do
        [ -e "$p/$f" ] || fail "install tree lacks $f"
    done
    run "$p/bin/mpicc" -showme:incdirs
    expect_exact "$p/include"
    run "$p/bin/mpicc" -showme:libdirs
    expect_exact "$p/lib"
    run "$p/bin/mpicc" -show x.c
    expect_out "^cc -I$p/include x\\.c -L$p/lib -Wl,-rpath,$p/lib .*-lmpi -lproust -lpthread\$"
    write_ring_c "$TMP/ring.c"
    run "$p/bin/mpicc" -Wall -Werror -o "$TMP/ring_inst" "$TMP/ring.c"
    expect_rc 0
    run "$p/bin/mpiexec" -n 3 -x PM_TEST_VAR=inst "$TMP/ring_inst"
    expect_rc 0
    check_ring 3 inst
    run "$p/bin/mpirun" -np 2 -genv PM_TEST_VAR viampirun "$TMP/ring_inst"
    expect_rc 0
    check_ring 2 viampirun
    write_ring_cxx "$TMP/ring.cc"
    run "$p/bin/mpicxx" -Wall -Werror -o "$TMP/ring_inst_cxx" "$TMP/ring.cc"
    expect_rc 0
    run "$p/bin/mpiexec" -n 2 "$TMP/ring_inst_cxx"
    expect_rc 0
    expect_count '^c\+\+ rank [01] token 1 var \(unset\)$' 2
    # pkg-config: the same program built with plain cc and mpi.pc.
    if command -v pkg-config > /dev/null; then
        run env PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --cflags --libs mpi
        expect_rc 0
        expect_out '-lmpi -lproust'
        local flags
        flags=$(cat "$OUT")
        # shellcheck disable=SC2086
        run cc -o "$TMP/ring_pc" "$TMP/ring.c" $flags
        expect_rc 0
        run "$p/bin/mpiexec" -n 2 "$TMP/ring_pc"
        expect_rc 0
        check_ring 2 '\(unset\)'
    fi
}

W=$TOOLS
unset PROUST_MPICC_CC PROUST_MPICXX_CXX
case "$CASE" in
show)
    # MPICH -show: the whole command, link flags only when linking.
    run "$W/mpicc" -show -O2 foo.c -o foo
    expect_rc 0
    expect_out '^cc -I[^ ]+/include -O2 foo\.c -o foo -L[^ ]+ -Wl,-rpath,[^ ]+ .*-lmpi -lproust -lpthread$'
    for flag in -c -E -S -M -MM -fsyntax-only; do
        run "$W/mpicc" -show "$flag" foo.c
        expect_out "^cc -I[^ ]+/include $flag foo\\.c\$"
        expect_no_out '-lmpi'
    done
    run "$W/mpicc" -compile_info
    expect_out '^cc -I[^ ]+/include$'
    run "$W/mpicc" -link_info
    expect_out '^cc -I[^ ]+/include -L.* -lmpi -lproust -lpthread$'
    # Open MPI -showme and its parts.
    run "$W/mpicc" -showme foo.c
    expect_out '^cc -I[^ ]+/include foo\.c -L.* -lmpi -lproust -lpthread$'
    run "$W/mpicc" -showme:compile
    expect_out '^-I[^ ]+/include$'
    run "$W/mpicc" -showme:link
    expect_out '^-L[^ ]+ -Wl,-rpath,[^ ]+ .*-lmpi -lproust -lpthread$'
    run "$W/mpicc" -showme:libs
    expect_exact 'mpi proust pthread'
    run "$W/mpicc" -showme:incdirs
    [ -f "$(cat "$OUT")/mpi.h" ] || fail "-showme:incdirs does not name the folder of mpi.h"
    run "$W/mpicc" -showme:libdirs
    found=0
    for d in $(cat "$OUT"); do [ -e "$d/libmpi.so" ] && found=1; done
    [ $found = 1 ] || fail "-showme:libdirs does not name the folder of libmpi.so"
    run "$W/mpicc" -showme:command
    expect_exact cc
    run "$W/mpicc" -showme:version
    expect_out '^mpicc: Proust MPI [0-9.]+ \(Language: C\)$'
    run "$W/mpicc" -showme:bogus
    expect_rc 2
    expect_err "mpicc: unknown option '-showme:bogus'"
    # The compiler: -cc=, then $PROUST_MPICC_CC, then cc; mpicxx: c++.
    run "$W/mpicc" -cc=gcc-42 -show foo.c
    expect_out '^gcc-42 -I'
    run env PROUST_MPICC_CC="ccache clang" "$W/mpicc" -show -c foo.c
    expect_out '^ccache clang -I[^ ]+ -c foo\.c$'
    run env PROUST_MPICC_CC=clang "$W/mpicc" -cc=tcc -showme:command
    expect_exact tcc
    run "$W/mpicxx" -show -c foo.cc
    expect_out '^c\+\+ -I[^ ]+/include -c foo\.cc$'
    run env PROUST_MPICXX_CXX=clang++ "$W/mpic++" -show foo.cc
    expect_out '^clang\+\+ -I.* -lmpi '
    run "$W/mpicxx" -cxx=g++-12 -showme:command
    expect_exact g++-12
    run "$W/mpicxx" -showme:version
    expect_out '\(Language: C\+\+\)$'
    # Arguments are kept whole and printed so that a shell splits them back.
    run "$W/mpicc" -show -DMSG="it's two words" 'my file.c'
    eval "words=($(cat "$OUT"))"
    [ "${words[2]}" = "-DMSG=it's two words" ] && [ "${words[3]}" = "my file.c" ] ||
        fail "the words of -show do not split back into the arguments"
    # Information-only runs go to the compiler untouched; no input: usage.
    run "$W/mpicc" --version
    expect_rc 0
    expect_out .
    run "$W/mpicc"
    expect_rc 1
    expect_err 'mpicc: no input files'
    run "$W/mpicc" -help
    expect_rc 0
    expect_out '^Usage: mpicc '
    ;;
compile)
    write_ring_c "$TMP/ring.c"
    # C99 and C11, warnings as errors: mpi.h must be clean.
    for std in c99 c11 gnu17; do
        run "$W/mpicc" -std=$std -Wall -Wextra -Werror -o "$TMP/ring_$std" "$TMP/ring.c"
        expect_rc 0
        [ -x "$TMP/ring_$std" ] || fail "no program built with -std=$std"
    done
    # Separate compile and link steps; -fsyntax-only links nothing.
    run "$W/mpicc" -c -o "$TMP/ring.o" "$TMP/ring.c"
    expect_rc 0
    run "$W/mpicc" -o "$TMP/ring2" "$TMP/ring.o"
    expect_rc 0
    run "$W/mpicc" -fsyntax-only "$TMP/ring.c"
    expect_rc 0
    # The program needs Proust's libmpi (not another MPI's of the system),
    # found without LD_LIBRARY_PATH (rpath).
    run env -u LD_LIBRARY_PATH ldd "$TMP/ring2"
    expect_no_out 'not found'
    lib=$(awk '$1 ~ /^libmpi\.so/ { print $3 }' "$OUT")
    [ -n "$lib" ] || fail "the program does not load libmpi"
    ours=0
    for d in $("$W/mpicc" -showme:libdirs); do
        [ "$(readlink -f "$lib")" = "$(readlink -f "$d/libmpi.so")" ] && ours=1
    done
    [ $ours = 1 ] || fail "the program loads $lib, not Proust's libmpi"
    # A compile error is the compiler's exit status.
    echo 'int main(void) { return undefined_thing; }' > "$TMP/bad.c"
    run "$W/mpicc" -o "$TMP/bad" "$TMP/bad.c"
    [ "$RC" -ne 0 ] || fail "a failed compilation returned 0"
    expect_err 'undefined_thing'
    ;;
run_c)
    write_ring_c "$TMP/ring.c"
    run "$W/mpicc" -o "$TMP/ring" "$TMP/ring.c"
    expect_rc 0
    for n in 1 2 4 8; do
        run "$W/mpiexec" -n $n -x PM_TEST_VAR=x$n "$TMP/ring"
        expect_rc 0
        check_ring $n x$n
    done
    run "$W/mpiexec" -np 3 --oversubscribe --bind-to none --host localhost \
        -genv PM_TEST_VAR 'two words' --tag-output "$TMP/ring"
    expect_rc 0
    expect_count '^\[[0-2]\] rank [0-2] of 3: MPI 4\.1 token [0-9]+ var two words$' 3
    ;;
cxx)
    write_ring_cxx "$TMP/ring.cc"
    for std in c++11 c++17; do
        run "$W/mpicxx" -std=$std -Wall -Wextra -Werror -o "$TMP/ring_cxx" "$TMP/ring.cc"
        expect_rc 0
    done
    run "$W/mpic++" -O1 -o "$TMP/ring_cxx2" "$TMP/ring.cc"
    expect_rc 0
    run "$W/mpiexec" -n 3 -x PM_TEST_VAR=cxx "$TMP/ring_cxx"
    expect_rc 0
    expect_count '^c\+\+ rank 0 token 3 var cxx$' 1
    expect_count '^c\+\+ rank 1 token 1 var cxx$' 1
    expect_count '^c\+\+ rank 2 token 3 var cxx$' 1
    ;;
mpiexec_options)
    # No MPI needed: each rank is a shell that shows its environment.
    show='echo "r=$PROUST_RANK n=$PROUST_SIZE a=${A-} b=${B-} c=${C-} d=${D-} pwd=$(pwd)"'
    mkdir "$TMP/wd"
    run env C=inherited "$W/mpiexec" -np 3 --oversubscribe --allow-run-as-root \
        --bind-to none -bind-to core --map-by slot --host "localhost:4,127.0.0.1,$(uname -n)" \
        -H localhost -genv A 'x y' -x B=2 -x C -env D d=4 -genvall -wdir "$TMP/wd" sh -c "$show"
    expect_rc 0
    for r in 0 1 2; do
        expect_count "^r=$r n=3 a=x y b=2 c=inherited d=d=4 pwd=$TMP/wd\$" 1
    done
    # Spellings of the number of processes; default 1.
    for n in "-n 2" "-np 2" "--np 2" "--np=2" "-n2" "-c 2" "--n 2"; do
        # shellcheck disable=SC2086
        run "$W/mpiexec" $n sh -c 'echo "n=$PROUST_SIZE"'
        expect_rc 0
        expect_count '^n=2$' 2
    done
    run "$W/mpiexec" sh -c 'echo "n=$PROUST_SIZE"'
    expect_exact 'n=1'
    # Labelled output (Open MPI --tag-output, MPICH -l).
    for opt in --tag-output -l -prepend-rank; do
        run "$W/mpiexec" -n 2 $opt sh -c 'echo "hi $PROUST_RANK"'
        expect_count '^\[0\] hi 0$' 1
        expect_count '^\[1\] hi 1$' 1
    done
    # Program arguments are the program's, options included; "--" ends ours.
    run "$W/mpiexec" -n 1 sh -c 'echo "args: $*"' prog -n 5 --weird 'a b'
    expect_exact 'args: -n 5 --weird a b'
    run "$W/mpiexec" -n 1 -- sh -c 'echo ok'
    expect_exact ok
    # The rank's exit status and signal come back.
    run "$W/mpiexec" -n 2 sh -c '[ "$PROUST_RANK" = 1 ] && exit 6; exit 0'
    expect_rc 6
    # mpirun is the same program.
    run "$W/mpirun" -np 2 sh -c 'echo "r=$PROUST_RANK"'
    expect_rc 0
    expect_count '^r=[01]$' 2
    run "$W/mpirun" --help
    expect_out '^Usage: mpirun '
    run "$W/mpiexec" --version
    expect_out '^mpiexec \(Proust MPI\) [0-9.]+$'
    ;;
mpiexec_errors)
    # Each wrong command line: exit status 2, a message naming the problem,
    # and nothing started.
    bad() { # expected-message args...
        local msg=$1
        shift
        run "$W/mpiexec" "$@"
        expect_rc 2
        expect_err "^mpiexec: $msg"
        expect_no_out started
    }
    bad "option '--mca' needs a name and a value" --mca btl
    bad "cannot read the hostfile '$TMP/nonexistent'" -hostfile "$TMP/nonexistent" -n 2 sh -c 'echo started'
    bad "unknown option '-genvnone'" -genvnone -n 1 sh -c 'echo started'
    bad "'0' is not a number of processes per host" -ppn 0 -n 2 sh -c 'echo started'
    bad "launcher 'slurm' is not supported" -launcher slurm -n 2 sh -c 'echo started'
    bad "'0' is not a number of processes" -n 0 sh -c 'echo started'
    bad "'two' is not a number of processes" -np two sh -c 'echo started'
    bad "'-3' is not a number of processes" -n -3 sh -c 'echo started'
    bad "option '-n' needs a value" -n
    bad "'1X=2' is not VAR=VALUE or VAR" -x 1X=2 sh -c 'echo started'
    bad "'A-B' is not a variable name" -genv A-B 1 sh -c 'echo started'
    bad "option '-genv' needs a variable and a value" -genv A
    bad "option '--tag-output' takes no value" --tag-output=yes sh -c 'echo started'
    bad "no program to run" -n 2
    bad "no program to run" -n 2 --
    bad "cannot change to directory" -wdir "$TMP/nonexistent" sh -c 'echo started'
    # A program that does not exist: the launcher says so.
    run "$W/mpiexec" -n 2 "$TMP/no-such-program"
    [ "$RC" -ne 0 ] || fail "a missing program returned 0"
    expect_err 'no-such-program'
    ;;
install)
    # Install the whole project into a temporary prefix (the default
    # component, so that the build's own install_manifest.txt stays), use
    # it, then move the tree: the wrappers, mpiexec and mpi.pc follow.
    run "$CMAKE" --install "$BUILD" --prefix "$TMP/inst" --component Unspecified
    expect_rc 0
    check_install_tree "$TMP/inst"
    mv "$TMP/inst" "$TMP/moved"
    check_install_tree "$TMP/moved"
    # Called through a symbolic link from elsewhere, it still finds its tree.
    mkdir "$TMP/links"
    ln -s "$TMP/moved/bin/mpicc" "$TMP/links/mpicc"
    run "$TMP/links/mpicc" -showme:incdirs
    expect_exact "$TMP/moved/include"
    # Found through PATH, as users call it.
    run env PATH="$TMP/moved/bin:$PATH" mpicc -showme:libdirs
    expect_exact "$TMP/moved/lib"
    ;;
findmpi)
    # CMake's FindMPI interrogates the wrapper (-showme:*, -show...), then
    # a target linked with MPI::MPI_C is built and run with mpiexec.
    mkdir "$TMP/proj"
    write_ring_c "$TMP/proj/ring.c"
    cat > "$TMP/proj/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(findmpi C)
find_package(MPI REQUIRED COMPONENTS C)
if(NOT MPI_C_VERSION VERSION_EQUAL 4.1)
  message(FATAL_ERROR "MPI_C_VERSION is '${MPI_C_VERSION}', expected 4.1")
endif()
message(STATUS "libraries: ${MPI_C_LIBRARIES}")
add_executable(ring ring.c)
target_link_libraries(ring PRIVATE MPI::MPI_C)
EOF
    # FindMPI keeps -L, -l and -Wl flags only: a libmpi built with sanitizers
    # (make test-sanitize) needs their runtimes linked in by the project.
    san=$("$W/mpicc" -showme:link | grep -o -- '-fsanitize=[^ ]*')
    run "$CMAKE" -S "$TMP/proj" -B "$TMP/proj/build" -DMPI_C_COMPILER="$W/mpicc" \
        -DMPIEXEC_EXECUTABLE="$W/mpiexec" -DCMAKE_EXE_LINKER_FLAGS="$san"
    expect_rc 0
    expect_out 'Found MPI_C: .*libmpi\.so \(found version "4\.1"\)'
    expect_out 'libraries: .*libmpi\.so;.*libproust\.so'
    run "$CMAKE" --build "$TMP/proj/build"
    expect_rc 0
    run "$W/mpiexec" -n 2 -x PM_TEST_VAR=cmake "$TMP/proj/build/ring"
    expect_rc 0
    check_ring 2 cmake
    ;;
findmpi_fortran)
    # FindMPI's Fortran: mpif.h, the mpi and the mpi_f08 modules found
    # through mpifort, then a program using mpi_f08 and MPI::MPI_Fortran
    # built and run; pkg-config's mpi-fort builds one too.
    mkdir "$TMP/proj"
    cat > "$TMP/proj/ring.f90" << 'EOF'
program ring
  use mpi_f08
  implicit none
  integer :: rank, size, token
  character(len=32) :: var
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  token = rank
  call MPI_Allreduce(MPI_IN_PLACE, token, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call get_environment_variable('PM_TEST_VAR', var)
  if (token == size * (size - 1) / 2) print '(A,I0,A,A)', 'ring ok rank ', rank, ' var ', trim(var)
  call MPI_Finalize()
end program ring
EOF
    cat > "$TMP/proj/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.20)
project(findmpi Fortran)
set(MPI_DETERMINE_Fortran_CAPABILITIES TRUE) # runs a program with each interface
find_package(MPI REQUIRED COMPONENTS Fortran)
foreach(v MPI_Fortran_HAVE_F77_HEADER MPI_Fortran_HAVE_F90_MODULE MPI_Fortran_HAVE_F08_MODULE)
  if(NOT ${v})
    message(FATAL_ERROR "${v} is false")
  endif()
endforeach()
message(STATUS "subarrays: f08 ${MPI_Fortran_F08_MODULE_SUBARRAYS} mpif.h ${MPI_Fortran_F77_HEADER_SUBARRAYS}")
add_executable(ring ring.f90)
target_link_libraries(ring PRIVATE MPI::MPI_Fortran)
EOF
    san=$("$W/mpifort" -showme:link | grep -o -- '-fsanitize=[^ ]*')
    run "$CMAKE" -S "$TMP/proj" -B "$TMP/proj/build" -DMPI_Fortran_COMPILER="$W/mpifort" \
        -DMPIEXEC_EXECUTABLE="$W/mpiexec" -DCMAKE_EXE_LINKER_FLAGS="$san"
    expect_rc 0
    expect_out 'Found MPI_Fortran: .*libmpifort\.so \(found version "4\.1"\)'
    expect_out 'subarrays: f08 TRUE mpif.h FALSE'
    run "$CMAKE" --build "$TMP/proj/build"
    expect_rc 0
    run "$W/mpiexec" -n 3 -x PM_TEST_VAR=cmake "$TMP/proj/build/ring"
    expect_rc 0
    expect_count '^ring ok rank [0-2] var cmake$' 3
    # pkg-config, from an installed tree
    run "$CMAKE" --install "$BUILD" --prefix "$TMP/prefix"
    expect_rc 0
    export PKG_CONFIG_PATH=$TMP/prefix/lib/pkgconfig
    run sh -c "gfortran -o '$TMP/ring_pc' '$TMP/proj/ring.f90' \$(pkg-config --cflags --libs mpi-fort) $san"
    expect_rc 0
    run "$TMP/prefix/bin/mpiexec" -n 2 -x PM_TEST_VAR=pc "$TMP/ring_pc"
    expect_rc 0
    expect_count '^ring ok rank [01] var pc$' 2
    ;;
*)
    echo "tools_wrappers.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
exit 0
