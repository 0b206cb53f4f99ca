# bench/build.cmake — the native Proust benchmarks (included from
# bench/CMakeLists.txt). The MPI versions of the same loops are built by
# bench/run.sh with each MPI's own compiler wrapper, not here.
#
#   bench_pingpong  -> installed as bin/proust-bench-pingpong
#   bench_multiflow -> installed as bin/proust-bench-multiflow
foreach(b pingpong multiflow)
  add_executable(bench_${b} ${CMAKE_CURRENT_SOURCE_DIR}/native/${b}.c)
  target_include_directories(bench_${b} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/native
                             ${CMAKE_CURRENT_SOURCE_DIR}/common)
  target_link_libraries(bench_${b} PRIVATE proust)
  set_target_properties(bench_${b} PROPERTIES OUTPUT_NAME proust-bench-${b})
  install(TARGETS bench_${b} RUNTIME DESTINATION bin)
endforeach()

# Smoke tests: each benchmark runs a few iterations on each rail, so that
# `make test` catches a benchmark that no longer runs (no timing is judged).
if(TARGET proustrun)
  foreach(rails "self,shm" "tcp")
    string(REPLACE "," "_" rtag "${rails}")
    add_test(NAME bench_pingpong_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 $<TARGET_FILE:bench_pingpong>
                     -t all,testlat -i 0.001 -M 64K)
    set_tests_properties(bench_pingpong_smoke_${rtag} PROPERTIES TIMEOUT 120 LABELS bench
                         ENVIRONMENT "PROUST_RAILS=${rails}")
    foreach(strategy default aggreg)
      add_test(NAME bench_multiflow_smoke_${rtag}_${strategy}
               COMMAND $<TARGET_FILE:proustrun> -n 2 $<TARGET_FILE:bench_multiflow> -i 20)
      set_tests_properties(bench_multiflow_smoke_${rtag}_${strategy} PROPERTIES TIMEOUT 120
                           LABELS bench
                           ENVIRONMENT "PROUST_RAILS=${rails};PROUST_STRATEGY=${strategy}")
    endforeach()
  endforeach()
endif()

# The MPI front ends (bench/mpi/*.c) against Proust MPI, for smoke tests
# only (measurements build them with each MPI's mpicc: run.sh). They are
# built by a test (bench_mpi_build, with the build tree's mpicc, as a user
# would) rather than by the build, so that a libmpi still missing functions
# fails these tests instead of everybody's build. coll_latency runs at 2, 3
# (not a power of two) and 8 ranks; the sweep at 3.
set(BENCH_MPICC ${PROJECT_BINARY_DIR}/tools/mpi/mpicc)
if(TARGET mpi AND TARGET proustrun AND EXISTS ${PROJECT_SOURCE_DIR}/tools/mpi/wrapper.in)
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/mpi)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/mpi)
  add_test(NAME bench_mpi_build
           COMMAND sh -c "mkdir -p '${bin}' && for b in pingpong multiflow coll_latency sweep; do \
'${BENCH_MPICC}' -std=c11 -O2 -g -Wall -Wextra -Wshadow -Werror -o '${bin}'/$b '${src}'/$b.c \
|| exit 1; done && '${BENCH_MPICC}' -std=c11 -O2 -g -Wall -Wextra -Wshadow -Werror \
-o '${bin}'/match '${CMAKE_CURRENT_SOURCE_DIR}'/match/match.c && '${BENCH_MPICC}' -std=c11 \
-O2 -g -Wall -Wextra -Wshadow -Werror -o '${bin}'/rma '${CMAKE_CURRENT_SOURCE_DIR}'/rma/rma.c")
  set_tests_properties(bench_mpi_build PROPERTIES TIMEOUT 120 LABELS bench
                       FIXTURES_SETUP bench_mpi)
  foreach(rails "self,shm" "tcp")
    string(REPLACE "," "_" rtag "${rails}")
    add_test(NAME bench_mpi_pingpong_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/pingpong -t all,testlat -i 0.001 -M 64K)
    add_test(NAME bench_mpi_multiflow_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/multiflow -i 20)
    # bench/match: every receive's data is checked (an error aborts)
    add_test(NAME bench_mpi_match_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/match -N 16,300 -r 1)
    set(smoke bench_mpi_pingpong_smoke_${rtag} bench_mpi_multiflow_smoke_${rtag}
        bench_mpi_match_smoke_${rtag})
    # bench/rma: every one-sided loop and synchronisation, tiny sizes
    foreach(sync lock flush fence)
      add_test(NAME bench_mpi_rma_smoke_${rtag}_${sync}
               COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/rma -s ${sync} -i 40 -M 4096)
      list(APPEND smoke bench_mpi_rma_smoke_${rtag}_${sync})
    endforeach()
    add_test(NAME bench_mpi_rma_smoke_${rtag}_create
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/rma -s flush -w create -i 40 -M 4096)
    list(APPEND smoke bench_mpi_rma_smoke_${rtag}_create)
    # bench/mpi/sweep.c: every pattern, blocking and nonblocking, tiny sizes
    add_test(NAME bench_mpi_sweep_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 3 ${bin}/sweep -M 4K -T 0.2)
    list(APPEND smoke bench_mpi_sweep_smoke_${rtag})
    foreach(np 2 3 8)
      add_test(NAME bench_mpi_coll_latency_smoke_${rtag}_np${np}
               COMMAND $<TARGET_FILE:proustrun> -n ${np} ${bin}/coll_latency
                       -i 0.005 -r 1 -M 16K)
      list(APPEND smoke bench_mpi_coll_latency_smoke_${rtag}_np${np})
    endforeach()
    set_tests_properties(${smoke} PROPERTIES TIMEOUT 120 LABELS bench
                         FIXTURES_REQUIRED bench_mpi ENVIRONMENT "PROUST_RAILS=${rails}")
  endforeach()
endif()

# The progress-engine benchmarks (bench/progress/*.c, MPI only, issue 4)
# against Proust MPI, for smoke tests only (measurements: bench/progress/
# run.sh, with each MPI's mpicc). Built by a test with the build tree's
# mpicc, as bench_mpi_build does; each program then runs with 2 ranks and
# tiny parameters (well under a second) in the default progress mode, with
# PROUST_PROGRESS=poll, and threads also with PROUST_LOCKING=coarse. A
# program that cannot get MPI_THREAD_MULTIPLE prints "# SKIPPED" and exits
# 0: Proust MPI provides it, so here that output fails the test.
if(TARGET mpi AND TARGET proustrun AND EXISTS ${PROJECT_SOURCE_DIR}/tools/mpi/wrapper.in)
  set(pbin ${CMAKE_CURRENT_BINARY_DIR}/progress)
  set(psrc ${CMAKE_CURRENT_SOURCE_DIR}/progress)
  add_test(NAME bench_progress_build
           COMMAND sh -c "mkdir -p '${pbin}' && for b in overlap reactivity waiters threads partitioned; do \
'${BENCH_MPICC}' -std=c11 -O2 -g -Wall -Wextra -Wshadow -Werror -pthread -o '${pbin}'/$b \
'${psrc}'/$b.c || exit 1; done")
  set_tests_properties(bench_progress_build PROPERTIES TIMEOUT 120 LABELS bench
                       FIXTURES_SETUP bench_progress)
  set(progress_args_overlap -m 64K -M 64K -F 0,1 -C 64K -A 16 -i 2)
  set(progress_args_reactivity -K 0,1 -T 0.02 -n 200)
  set(progress_args_waiters -N 0,2 -w 2 -s 1 -r 2)
  set(progress_args_threads -N 1,2 -T 0.02 -n 200)
  set(progress_args_partitioned -m 64K -M 64K -P 1,4,64 -T 1,2 -i 2)
  set(smoke)
  foreach(b overlap reactivity waiters threads partitioned)
    foreach(mode default poll)
      add_test(NAME bench_progress_${b}_smoke_${mode}
               COMMAND $<TARGET_FILE:proustrun> -n 2 ${pbin}/${b} ${progress_args_${b}})
      list(APPEND smoke bench_progress_${b}_smoke_${mode})
      if(mode STREQUAL "poll")
        set_tests_properties(bench_progress_${b}_smoke_${mode} PROPERTIES
                             ENVIRONMENT "PROUST_PROGRESS=poll")
      endif()
    endforeach()
  endforeach()
  add_test(NAME bench_progress_threads_smoke_coarse
           COMMAND $<TARGET_FILE:proustrun> -n 2 ${pbin}/threads ${progress_args_threads})
  set_tests_properties(bench_progress_threads_smoke_coarse PROPERTIES
                       ENVIRONMENT "PROUST_LOCKING=coarse")
  list(APPEND smoke bench_progress_threads_smoke_coarse)
  set_tests_properties(${smoke} PROPERTIES TIMEOUT 60 LABELS bench
                       FIXTURES_REQUIRED bench_progress FAIL_REGULAR_EXPRESSION "# SKIPPED")
endif()
