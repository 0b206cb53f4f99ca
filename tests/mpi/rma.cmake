# One-sided communication (src/mpi/rma/): tests/mpi/rma_*.c,
# jobs named mpi_rma_<program>_<ranks>_<rail>. Every job takes a few
# seconds on 2 cores; rma_sync's shared-memory windows need all ranks on
# one node, which proustrun gives.

# Jobs through comm_jobs (comm.cmake, included first: tests/mpi.cmake
# includes the families in sorted order).
foreach(name data acc sync errors threads large)
  mpi_test_program(mpi_rma_${name} ${MPI_TEST_DIR}/rma_${name}.c)
endforeach()

comm_jobs(rma_data 1 2 3 4)
comm_jobs(rma_acc 1 2 3 4)
comm_jobs(rma_sync 1 2 3 4)
comm_jobs(rma_errors 1 2 3)
comm_jobs(rma_threads 1 2 4)
comm_jobs(rma_large 1 2 3)
# Windows of MPI_Win_allocate within a host are shared memory by default
# (direct loads and stores); the same programs with messages the target applies
foreach(name data acc threads)
  mpi_job(NAME rma_${name}_msgs_2_shm NPROCS 2 RAILS self,shm PROGRAM mpi_rma_${name}
          ENV PROUST_RMA_SHM=off TIMEOUT 120)
  mpi_job(NAME rma_${name}_msgs_3_tcp NPROCS 3 RAILS tcp PROGRAM mpi_rma_${name}
          ENV PROUST_RMA_SHM=off TIMEOUT 120)
endforeach()
# one put and one get of INT_MAX + 4099 bytes (skipped where memory is short)
mpi_job(NAME rma_large_big_2_shm NPROCS 2 RAILS self,shm PROGRAM mpi_rma_large ARGS big
        TIMEOUT 240)

# Waiting on the window's own memory (MPI_Win_sync / MPI_Win_flush move
# incoming operations), with no progress thread to help.
mpi_test_program(mpi_rma_spin ${MPI_TEST_DIR}/rma_spin.c)
foreach(np 2 3)
  mpi_job(NAME rma_spin_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM mpi_rma_spin
          ENV PROUST_PROGRESS=block TIMEOUT 60)
endforeach()
mpi_job(NAME rma_spin_2_tcp NPROCS 2 RAILS tcp PROGRAM mpi_rma_spin ENV PROUST_PROGRESS=block
        TIMEOUT 60)

# A process dies holding the exclusive lock of a shared-memory window: the
# survivor's lock calls fail within seconds (proustrun exits non-zero: the
# survivor's lines are the verdict).
mpi_test_program(mpi_rma_death ${MPI_TEST_DIR}/rma_death.c)
mpi_job(NAME rma_death_2_shm NPROCS 2 RAILS self,shm PROGRAM mpi_rma_death
        LAUNCHER_ARGS --grace 10 TIMEOUT 60)
set_tests_properties(mpi_rma_death_2_shm PROPERTIES
  PASS_REGULAR_EXPRESSION "survivor 0: lock failed after [0-9.]+ s.*survivor 0 exiting cleanly"
  FAIL_REGULAR_EXPRESSION "check failed")
