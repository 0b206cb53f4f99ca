# Groups, communicators, intercommunicators, Cartesian topologies and
# attributes (src/mpi/comm/: group.c, comm*.c, context.c, intercomm.c, cart.c,
# attr.c). Jobs are named mpi_<program>_<ranks>_<rail>.

# comm_jobs(program n...): one job per rank count on each rail.
function(comm_jobs prog)
  foreach(rail shm tcp)
    if(rail STREQUAL "shm")
      set(rails self,shm)
    else()
      set(rails tcp)
    endif()
    foreach(n ${ARGN})
      mpi_job(NAME ${prog}_${n}_${rail} NPROCS ${n} RAILS ${rails} PROGRAM mpi_${prog}
              TIMEOUT 60)
    endforeach()
  endforeach()
endfunction()

foreach(prog group_algebra comm_split comm_errors attr_cb cart_topo intercomm_basic
        intercomm_roots graph_topo comm_threads comm_idup)
  mpi_test_program(mpi_${prog} ${MPI_TEST_DIR}/${prog}.c)
endforeach()

comm_jobs(group_algebra 1 3 8)
comm_jobs(comm_split 1 2 3 4 8)
# bound to a core each: hardware splits that cut (HW_UNGUIDED, PU, Core)
mpi_job(NAME comm_split_bound_2 NPROCS 2 RAILS shm PROGRAM mpi_comm_split
        LAUNCHER_ARGS --bind-to core TIMEOUT 60)
comm_jobs(comm_errors 1 3)
comm_jobs(attr_cb 1 2 4)
comm_jobs(comm_idup 1 2 3 5)
comm_jobs(cart_topo 1 2 4 6 8)
comm_jobs(intercomm_basic 2 3 4 5 8)
comm_jobs(intercomm_roots 2 3 4 5)
comm_jobs(graph_topo 1 2 3 5 8)
comm_jobs(comm_threads 1 2 3 4)
