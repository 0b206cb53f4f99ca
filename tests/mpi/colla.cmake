# Reduction-family collectives and the schedule engine: src/mpi/coll_sched.c,
# coll_cx.c, coll_check.c, coll_barrier.c, coll_bcast.c, coll_reduce.c,
# coll_allreduce.c, coll_reduce_scatter.c, coll_scan.c. Tests are named
# mpi_colla_<program>_<ranks>_<rail>; the argument of the sweep is the
# largest message in bytes (4 MiB up to four ranks, 256 KiB beyond).

foreach(prog sweep order ops inflight comms errors threads mismatch)
  mpi_test_program(colla_${prog} ${MPI_TEST_DIR}/colla_${prog}.c)
endforeach()

foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
  else()
    set(rails tcp)
  endif()
  foreach(np 1 2 3 4 5 8)
    if(np LESS_EQUAL 4)
      set(max 4194304)
    else()
      set(max 262144)
    endif()
    mpi_job(NAME colla_sweep_${np}_${rail} NPROCS ${np} RAILS ${rails}
            PROGRAM colla_sweep ARGS ${max})
    foreach(prog order inflight comms errors threads mismatch)
      mpi_job(NAME colla_${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails}
              PROGRAM colla_${prog})
    endforeach()
    # ops: length of the long vectors (9000 elements cross the large-message
    # thresholds; 310 operation/type pairs stay quick on many ranks)
    if(np LESS_EQUAL 3)
      set(len 9000)
    elseif(np LESS_EQUAL 5)
      set(len 2500)
    else()
      set(len 400)
    endif()
    mpi_job(NAME colla_ops_${np}_${rail} NPROCS ${np} RAILS ${rails}
            PROGRAM colla_ops ARGS ${len})
  endforeach()
endforeach()

# Collective choices that depend on the node (PROUST_COLL_CROWDED): agreed
# by all processes even when their settings differ (--mixed), and both
# broadcast algorithms for large messages checked whatever this machine's
# cores (on: binomial tree, off: scatter + ring allgather).
mpi_test_program(colla_policy ${MPI_TEST_DIR}/colla_policy.c)
foreach(np 3 4 8)
  mpi_job(NAME colla_policy_mixed_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM colla_policy
          ARGS --mixed TIMEOUT 60)
endforeach()
mpi_job(NAME colla_policy_mixed_4_tcp NPROCS 4 RAILS tcp PROGRAM colla_policy ARGS --mixed
        TIMEOUT 60)
foreach(setting on off)
  foreach(np 3 5)
    mpi_job(NAME colla_policy_${setting}_${np}_shm NPROCS ${np} RAILS self,shm
            PROGRAM colla_policy ARGS --all=${setting} TIMEOUT 60)
  endforeach()
  mpi_job(NAME colla_sweep_4_shm_crowded_${setting} NPROCS 4 RAILS self,shm
          PROGRAM colla_sweep ARGS 4194304 ENV PROUST_COLL_CROWDED=${setting})
endforeach()

# A process dies in the middle: the collectives it takes part in end with an
# error on the survivors (proustrun itself exits non-zero: the survivors'
# lines are the verdict).
mpi_test_program(colla_death ${MPI_TEST_DIR}/colla_death.c)
foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
  else()
    set(rails tcp)
  endif()
  mpi_job(NAME colla_death_pair_${rail} NPROCS 2 RAILS ${rails} PROGRAM colla_death
          ARGS --mode=pair LAUNCHER_ARGS --grace 10 TIMEOUT 60)
  set_tests_properties(mpi_colla_death_pair_${rail} PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor 0: all failed after [0-9.]+ s.*survivor 0 exiting cleanly"
    FAIL_REGULAR_EXPRESSION "FAIL|check failed")
  mpi_job(NAME colla_death_barrier_${rail} NPROCS 3 RAILS ${rails} PROGRAM colla_death
          ARGS --mode=barrier LAUNCHER_ARGS --grace 10 TIMEOUT 60)
  set_tests_properties(mpi_colla_death_barrier_${rail} PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor 0: all failed.*survivor 1: all failed.*exiting cleanly;survivor 1: all failed.*survivor 0: all failed.*exiting cleanly"
    FAIL_REGULAR_EXPRESSION "FAIL|check failed")
endforeach()
