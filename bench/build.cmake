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
