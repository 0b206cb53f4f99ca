# Reduction-family collectives and the schedule engine: src/mpi/coll_sched.c,
# coll_cx.c, coll_check.c, coll_barrier.c, coll_bcast.c, coll_reduce.c,
# coll_allreduce.c, coll_reduce_scatter.c, coll_scan.c. Tests are named
# mpi_colla_<program>_<ranks>_<rail>; the argument of the sweep is the
# largest message in bytes (4 MiB on two ranks, 1 MiB on three or four,
# 256 KiB beyond).

foreach(prog sweep order ops inflight comms errors)
  mpi_test_program(colla_${prog} ${MPI_TEST_DIR}/colla_${prog}.c)
endforeach()

foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
  else()
    set(rails tcp)
  endif()
  foreach(np 1 2 3 4 5 8)
    if(np LESS_EQUAL 2)
      set(max 4194304)
    elseif(np LESS_EQUAL 4)
      set(max 1048576)
    else()
      set(max 262144)
    endif()
    mpi_job(NAME colla_sweep_${np}_${rail} NPROCS ${np} RAILS ${rails}
            PROGRAM colla_sweep ARGS ${max})
    foreach(prog order inflight comms errors)
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
