# One-sided communication (src/mpi/win*.c, rma_*.c): tests/mpi/rma_*.c,
# jobs named mpi_rma_<program>_<ranks>_<rail>. Every job takes a few
# seconds on 2 cores; rma_sync's shared-memory windows need all ranks on
# one node, which proustrun gives.

# rma_jobs(name n...): one job per rank count on each rail.
function(rma_jobs name)
  foreach(rail shm tcp)
    if(rail STREQUAL "shm")
      set(rails self,shm)
    else()
      set(rails tcp)
    endif()
    foreach(n ${ARGN})
      mpi_job(NAME rma_${name}_${n}_${rail} NPROCS ${n} RAILS ${rails}
              PROGRAM mpi_rma_${name} TIMEOUT 90)
    endforeach()
  endforeach()
endfunction()

foreach(name data acc sync errors threads)
  mpi_test_program(mpi_rma_${name} ${MPI_TEST_DIR}/rma_${name}.c)
endforeach()

rma_jobs(data 1 2 3 4)
rma_jobs(acc 1 2 3 4)
rma_jobs(sync 1 2 3 4)
rma_jobs(errors 1 2 3)
rma_jobs(threads 1 2 4)
