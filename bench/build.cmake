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
                     -i 0.001 -M 64K)
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
# (not a power of two) and 8 ranks.
set(BENCH_MPICC ${PROJECT_BINARY_DIR}/tools/mpi/mpicc)
if(TARGET mpi AND TARGET proustrun AND EXISTS ${PROJECT_SOURCE_DIR}/tools/mpi/wrapper.in)
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/mpi)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/mpi)
  add_test(NAME bench_mpi_build
           COMMAND sh -c "mkdir -p '${bin}' && for b in pingpong multiflow coll_latency; do \
'${BENCH_MPICC}' -std=c11 -O2 -g -Wall -Wextra -Wshadow -Werror -o '${bin}'/$b '${src}'/$b.c \
|| exit 1; done")
  set_tests_properties(bench_mpi_build PROPERTIES TIMEOUT 120 LABELS bench
                       FIXTURES_SETUP bench_mpi)
  foreach(rails "self,shm" "tcp")
    string(REPLACE "," "_" rtag "${rails}")
    add_test(NAME bench_mpi_pingpong_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/pingpong -i 0.001 -M 64K)
    add_test(NAME bench_mpi_multiflow_smoke_${rtag}
             COMMAND $<TARGET_FILE:proustrun> -n 2 ${bin}/multiflow -i 20)
    set(smoke bench_mpi_pingpong_smoke_${rtag} bench_mpi_multiflow_smoke_${rtag})
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
