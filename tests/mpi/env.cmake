# Tests of reduction operations (op_*), error handlers, info objects,
# MPI_Alloc_mem and handle conversions (env_*). Names:
# mpi_env_<what>_<nprocs>_<shm|tcp>, <what> the program without "env_".

foreach(prog op_predef op_user op_derived op_coll env_info env_errh env_fatal env_mem env_conv
        env_session)
  mpi_test_program(${prog} ${MPI_TEST_DIR}/${prog}.c)
endforeach()

foreach(rail shm tcp)
  if(rail STREQUAL "shm")
    set(rails self,shm)
    set(nps 1 3 8)
  else()
    set(rails tcp)
    set(nps 2 4)
  endif()
  foreach(np ${nps})
    foreach(prog op_predef op_user op_derived op_coll env_errh env_mem env_conv)
      string(REGEX REPLACE "^env_" "" what ${prog})
      mpi_job(NAME env_${what}_${np}_${rail} NPROCS ${np} RAILS ${rails} PROGRAM ${prog}
              TIMEOUT 60)
    endforeach()
    # Sessions without MPI_Init, and a session around the World Model.
    foreach(mode only mixed)
      mpi_job(NAME env_session_${mode}_${np}_${rail} NPROCS ${np} RAILS ${rails}
              PROGRAM env_session ARGS ${mode} TIMEOUT 60)
    endforeach()
    # MPI_INFO_ENV reports the arguments.
    mpi_job(NAME env_info_${np}_${rail} NPROCS ${np} RAILS ${rails} PROGRAM env_info
            ARGS first second TIMEOUT 60)
  endforeach()
  # MPI_ERRORS_ARE_FATAL stops the whole job with the library's message.
  foreach(mode send call)
    mpi_job(NAME env_fatal_${mode}_${rail} NPROCS 3 RAILS ${rails} PROGRAM env_fatal
            ARGS ${mode} TIMEOUT 60)
    set_tests_properties(mpi_env_fatal_${mode}_${rail} PROPERTIES
                         PASS_REGULAR_EXPRESSION "fatal error: MPI_"
                         FAIL_REGULAR_EXPRESSION "survived")
  endforeach()
  # MPI_ERRORS_ABORT on a duplicate of MPI_COMM_WORLD (which returns errors)
  mpi_job(NAME env_fatal_abort_${rail} NPROCS 3 RAILS ${rails} PROGRAM env_fatal ARGS abort
          TIMEOUT 60)
  set_tests_properties(mpi_env_fatal_abort_${rail} PROPERTIES
                       PASS_REGULAR_EXPRESSION "fatal error: MPI_Send.*MPI_ERRORS_ABORT"
                       FAIL_REGULAR_EXPRESSION "survived|check failed")
endforeach()

# The tool information interface (MPI_T): PROUST_RAILS is read back.
mpi_test_program(mpi_t ${MPI_TEST_DIR}/mpi_t.c)
mpi_job(NAME env_mpi_t_1_shm NPROCS 1 RAILS self,shm PROGRAM mpi_t TIMEOUT 60)
mpi_job(NAME env_mpi_t_2_tcp NPROCS 2 RAILS tcp PROGRAM mpi_t TIMEOUT 60)
