# One-sided communication (src/mpi/win*.c, rma_*.c): tests/mpi/rma_*.c,
# jobs named mpi_rma_<program>_<ranks>_<rail>. Every job takes a few
# seconds on 2 cores; rma_sync's shared-memory windows need all ranks on
# one node, which proustrun gives.

# Jobs through comm_jobs (comm.cmake, included first: tests/mpi.cmake
# includes the families in sorted order).
foreach(name data acc sync errors threads)
  mpi_test_program(mpi_rma_${name} ${MPI_TEST_DIR}/rma_${name}.c)
endforeach()

comm_jobs(rma_data 1 2 3 4)
comm_jobs(rma_acc 1 2 3 4)
comm_jobs(rma_sync 1 2 3 4)
comm_jobs(rma_errors 1 2 3)
comm_jobs(rma_threads 1 2 4)

# Waiting on the window's own memory (MPI_Win_sync / MPI_Win_flush move
# incoming operations), with no progress thread to help.
mpi_test_program(mpi_rma_spin ${MPI_TEST_DIR}/rma_spin.c)
foreach(np 2 3)
  mpi_job(NAME rma_spin_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM mpi_rma_spin
          ENV PROUST_PROGRESS=block TIMEOUT 60)
endforeach()
mpi_job(NAME rma_spin_2_tcp NPROCS 2 RAILS tcp PROGRAM mpi_rma_spin ENV PROUST_PROGRESS=block
        TIMEOUT 60)
