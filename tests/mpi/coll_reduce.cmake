# Reduction-family collectives (barrier, bcast, reduce, allreduce,
# reduce_scatter, scan) and the schedule engine: src/mpi/coll/coll_sched.c,
# coll_cx.c, coll_check.c, coll_barrier.c, coll_bcast.c, coll_reduce.c,
# coll_allreduce.c, coll_reduce_scatter.c, coll_scan.c. Each program is named
# by what it checks; its tests are mpi_<program>_<ranks>_<rail>:
#
#   coll_reduce_sizes        every collective of the family over a sweep of
#                            sizes (argument: the largest message in bytes,
#                            4 MiB up to four ranks, 256 KiB beyond)
#   coll_reduce_user_ops     user operations; a non-commutative one combines
#                            in rank order
#   coll_reduce_builtin_ops  every predefined operation on every type it is
#                            defined for (argument: the long vectors' length)
#   coll_reduce_inflight     nonblocking ones in flight together, with
#                            point-to-point traffic; derived types; frees
#   coll_reduce_comms        COMM_SELF, split and intercommunicators
#   coll_reduce_errors       argument errors, truncation
#   coll_reduce_threads      MPI_THREAD_MULTIPLE, a duplicate per thread
#   coll_count_mismatch      ranks passing counts that disagree (every family)
#   coll_policy_agreed       node-dependent choices agreed by all ranks
#   coll_peer_death          a process dies during collectives

foreach(prog coll_reduce_sizes coll_reduce_user_ops coll_reduce_builtin_ops
             coll_reduce_inflight coll_reduce_comms coll_reduce_errors coll_reduce_threads
             coll_count_mismatch)
  mpi_test_program(${prog} ${MPI_TEST_DIR}/${prog}.c)
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
    mpi_job(NAME coll_reduce_sizes_${np}_${rail} NPROCS ${np} RAILS ${rails}
            PROGRAM coll_reduce_sizes ARGS ${max})
    foreach(prog coll_reduce_user_ops coll_reduce_inflight coll_reduce_comms
                 coll_reduce_errors coll_reduce_threads coll_count_mismatch)
      mpi_job(NAME ${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails} PROGRAM ${prog})
    endforeach()
    # builtin ops: length of the long vectors (9000 elements cross the
    # large-message thresholds; 310 operation/type pairs stay quick on many
    # ranks)
    if(np LESS_EQUAL 3)
      set(len 9000)
    elseif(np LESS_EQUAL 5)
      set(len 2500)
    else()
      set(len 400)
    endif()
    mpi_job(NAME coll_reduce_builtin_ops_${np}_${rail} NPROCS ${np} RAILS ${rails}
            PROGRAM coll_reduce_builtin_ops ARGS ${len})
  endforeach()
endforeach()

# Collective choices that depend on the node (PROUST_COLL_CROWDED): agreed
# by all processes even when their settings differ (--mixed), and the three
# broadcast algorithms for large messages checked whatever this machine's
# cores (on: binomial tree, moderate: the tree in segments, off: scatter +
# ring allgather).
mpi_test_program(coll_policy_agreed ${MPI_TEST_DIR}/coll_policy_agreed.c)
foreach(np 3 4 8)
  mpi_job(NAME coll_policy_agreed_mixed_${np}_shm NPROCS ${np} RAILS self,shm
          PROGRAM coll_policy_agreed ARGS --mixed TIMEOUT 60)
endforeach()
mpi_job(NAME coll_policy_agreed_mixed_4_tcp NPROCS 4 RAILS tcp PROGRAM coll_policy_agreed
        ARGS --mixed TIMEOUT 60)
foreach(setting on moderate off)
  foreach(np 3 5)
    mpi_job(NAME coll_policy_agreed_${setting}_${np}_shm NPROCS ${np} RAILS self,shm
            PROGRAM coll_policy_agreed ARGS --all=${setting} TIMEOUT 60)
  endforeach()
  mpi_job(NAME coll_reduce_sizes_4_shm_crowded_${setting} NPROCS 4 RAILS self,shm
          PROGRAM coll_reduce_sizes ARGS 4194304 ENV PROUST_COLL_CROWDED=${setting})
endforeach()

# A process dies in the middle: the collectives it takes part in end with an
# error on the survivors (proustrun itself exits non-zero: the survivors'
# lines are the verdict).
mpi_test_program(coll_peer_death ${MPI_TEST_DIR}/coll_peer_death.c)
foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
  else()
    set(rails tcp)
  endif()
  mpi_job(NAME coll_peer_death_pair_${rail} NPROCS 2 RAILS ${rails} PROGRAM coll_peer_death
          ARGS --mode=pair LAUNCHER_ARGS --grace 10 TIMEOUT 60)
  set_tests_properties(mpi_coll_peer_death_pair_${rail} PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor 0: all failed after [0-9.]+ s.*survivor 0 exiting cleanly"
    FAIL_REGULAR_EXPRESSION "FAIL|check failed")
  mpi_job(NAME coll_peer_death_barrier_${rail} NPROCS 3 RAILS ${rails} PROGRAM coll_peer_death
          ARGS --mode=barrier LAUNCHER_ARGS --grace 10 TIMEOUT 60)
  set_tests_properties(mpi_coll_peer_death_barrier_${rail} PROPERTIES
    PASS_REGULAR_EXPRESSION "survivor 0: all failed.*survivor 1: all failed.*exiting cleanly;survivor 1: all failed.*survivor 0: all failed.*exiting cleanly"
    FAIL_REGULAR_EXPRESSION "FAIL|check failed")
endforeach()
