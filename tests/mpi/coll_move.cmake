# Data-movement collectives (gather, scatter, allgather, alltoall and their
# v/w/nonblocking forms): src/mpi/coll/coll_gather.c, coll_scatter.c,
# coll_allgather.c, coll_alltoall.c; and the persistent and large-count forms
# of every collective. Each program is named by what it checks; its tests are
# mpi_<program>_<ranks>_<rail>:
#
#   coll_gather_scatter  gather(v), scatter(v), every root (argument: the
#                        largest block in bytes, 1 MiB on few ranks, 64 KiB
#                        on many; the same for the next two)
#   coll_allgather       allgather(v)
#   coll_alltoall        alltoall(v/w)
#   coll_move_errors     argument errors
#   coll_move_inflight   many nonblocking ones in flight; none blocks
#   coll_move_comms      split and intercommunicators
#   coll_move_datatypes  derived and differing send/receive datatypes
#   coll_move_threads    MPI_THREAD_MULTIPLE, a duplicate per thread
#   coll_persistent      persistent collectives (MPI-4.0), every family
#   coll_large_count     the _c large-count collectives (MPI-4.0), every family
#   coll_zero            collectives that move no byte: at once, in step
#   coll_paths_mixed     ranks on a latency path and on a schedule in one call

foreach(prog coll_gather_scatter coll_allgather coll_alltoall coll_move_errors
             coll_move_inflight coll_move_comms coll_move_datatypes coll_move_threads
             coll_persistent coll_zero coll_paths_mixed)
  mpi_test_program(${prog} ${MPI_TEST_DIR}/${prog}.c)
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
    foreach(prog coll_gather_scatter coll_allgather coll_alltoall)
      mpi_job(NAME ${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails}
              PROGRAM ${prog} ARGS ${max})
    endforeach()
    foreach(prog coll_move_errors coll_move_inflight coll_move_comms coll_move_datatypes
                 coll_move_threads coll_persistent coll_zero coll_paths_mixed)
      mpi_job(NAME ${prog}_${np}_${rail} NPROCS ${np} RAILS ${rails} PROGRAM ${prog})
    endforeach()
  endforeach()
endforeach()

# 70 ranks: a root's linear gather(v)/scatter(v) and an all-to-all batch
# post more requests than a blocking collective's table holds (PM_CX_MAXREQ,
# coll_algo.h), so the table is drained as it fills. tcp: no rings per pair.
foreach(prog coll_gather_scatter coll_alltoall)
  mpi_job(NAME ${prog}_70_tcp NPROCS 70 RAILS tcp PROGRAM ${prog} ARGS 65536 TIMEOUT 300)
endforeach()

# MPI-4.0 large counts: every _c collective, blocking, nonblocking and
# persistent; the `big` job broadcasts INT_MAX + 4099 bytes (2 GiB a rank).
mpi_test_program(coll_large_count ${MPI_TEST_DIR}/coll_large_count.c)
foreach(np 1 2 3 4 5)
  mpi_job(NAME coll_large_count_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM coll_large_count)
endforeach()
mpi_job(NAME coll_large_count_3_tcp NPROCS 3 RAILS tcp PROGRAM coll_large_count)
mpi_job(NAME coll_large_count_big_2_shm NPROCS 2 RAILS self,shm PROGRAM coll_large_count
        ARGS big TIMEOUT 300)

# 8 ranks on a crowded node (more ranks than cores, forced so on any
# machine) with 1 MiB blocks: every pairwise round in flight at once
# (A2A_CROWDED_ALL), in place too.
mpi_job(NAME coll_alltoall_8_shm_crowded_big NPROCS 8 RAILS self,shm PROGRAM coll_alltoall
        ARGS 1048576 ENV PROUST_COLL_CROWDED=on)

# Bruck's alltoall takes over from 16 ranks with small blocks: 16 processes
# on shm, blocks up to 1 KiB (past the Bruck range too).
mpi_job(NAME coll_alltoall_16_shm NPROCS 16 RAILS self,shm PROGRAM coll_alltoall ARGS 1024
        TIMEOUT 300)
