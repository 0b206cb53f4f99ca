# Data-movement collectives (gather, scatter, allgather, alltoall and their
# v/w/nonblocking forms): src/mpi/coll_gather.c, coll_scatter.c,
# coll_allgather.c, coll_alltoall.c. Tests are named
# mpi_collb_<program>_<ranks>_<rail>; the argument of the size sweeps is the
# largest block in bytes (1 MiB on few ranks, 64 KiB on many).

foreach(prog rooted allgather alltoall errors inflight comms types threads persistent)
  mpi_test_program(collb_${prog} ${MPI_TEST_DIR}/collb_${prog}.c)
endforeach()

foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
  else()
    set(rails tcp)
  endif()
  foreach(np 1 2 3 4 5 8)
    if(np LESS_EQUAL 3)
      set(max 1048576)
    else()
      set(max 65536)
    endif()
    foreach(prog rooted allgather alltoall)
      mpi_job(NAME collb_${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails}
              PROGRAM collb_${prog} ARGS ${max})
    endforeach()
    foreach(prog errors inflight comms types threads persistent)
      mpi_job(NAME collb_${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails}
              PROGRAM collb_${prog})
    endforeach()
  endforeach()
endforeach()

# MPI-4.0 large counts: every _c collective, blocking, nonblocking and
# persistent; the `big` job broadcasts INT_MAX + 4099 bytes (2 GiB a rank).
mpi_test_program(collb_large ${MPI_TEST_DIR}/collb_large.c)
foreach(np 1 2 3 4 5)
  mpi_job(NAME collb_large_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM collb_large)
endforeach()
mpi_job(NAME collb_large_3_tcp NPROCS 3 RAILS tcp PROGRAM collb_large)
mpi_job(NAME collb_large_big_2_shm NPROCS 2 RAILS self,shm PROGRAM collb_large ARGS big
        TIMEOUT 300)

# Bruck's alltoall takes over from 16 ranks with small blocks: 16 processes
# on shm, blocks up to 1 KiB (past the Bruck range too).
mpi_job(NAME collb_alltoall_16_shm NPROCS 16 RAILS self,shm PROGRAM collb_alltoall ARGS 1024
        TIMEOUT 300)
