# Proust MPI from Fortran (issue 42, in progress: docs/FORTRAN-PLAN.md):
# each program is compiled by the build tree's mpifort when the test runs
# (so the wrapper is tested too), then run under proustrun on the rails
# that matter; every rank prints "<name>: ok" once its checks passed.
if(NOT PROUST_FORTRAN)
  return()
endif()
set(FORTRAN_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fortran)
set(MPIFORT ${PROJECT_BINARY_DIR}/tools/mpi/mpifort)

# fortran_job(NAME n SOURCE file NPROCS k RAILS r [EXTRA c-file])
function(fortran_job)
  cmake_parse_arguments(F "" "NAME;SOURCE;NPROCS;RAILS;EXTRA" "" ${ARGN})
  set(extra "")
  if(F_EXTRA)
    set(extra ${FORTRAN_TEST_DIR}/${F_EXTRA})
  endif()
  get_filename_component(prog ${F_SOURCE} NAME_WE)
  # each test compiles in a folder of its own: gfortran writes module files
  # (.mod) where it runs, and the shm and tcp jobs of a program run at once
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/fortran/${F_NAME}.d)
  add_test(NAME fortran_${F_NAME}
           COMMAND sh -c "mkdir -p \"$1\" && cd \"$1\" && \"$0\" -O1 -w -o prog \"$2\" $5 && \"$3\" -n $4 ./prog"
                   ${MPIFORT} ${dir} ${FORTRAN_TEST_DIR}/${F_SOURCE} ${PROUSTRUN} ${F_NPROCS}
                   "${extra}")
  set(oks "${prog}: ok") # one line per rank
  if(F_NPROCS GREATER 1)
    foreach(i RANGE 2 ${F_NPROCS})
      string(APPEND oks "[^\n]*\n(.|\n)*${prog}: ok")
    endforeach()
  endif()
  set_tests_properties(fortran_${F_NAME} PROPERTIES TIMEOUT 120 LABELS fortran
    ENVIRONMENT "PROUST_RAILS=${F_RAILS}"
    PASS_REGULAR_EXPRESSION "${oks}"
    FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()

foreach(rails shm tcp)
  set(r self,shm)
  if(rails STREQUAL "tcp")
    set(r tcp)
  endif()
  fortran_job(NAME f77_basic_2_${rails} SOURCE f77_basic.f90 NPROCS 2 RAILS ${r})
  fortran_job(NAME f77_basic_3_${rails} SOURCE f77_basic.f90 NPROCS 3 RAILS ${r})
  fortran_job(NAME f77_fixed_2_${rails} SOURCE f77_fixed.f NPROCS 2 RAILS ${r})
  fortran_job(NAME f77_more_3_${rails} SOURCE f77_more.f90 NPROCS 3 RAILS ${r})
  fortran_job(NAME f77_callbacks_4_${rails} SOURCE f77_callbacks.f90 NPROCS 4 RAILS ${r})
  fortran_job(NAME f77_attributes_2_${rails} SOURCE f77_attributes.f90 NPROCS 2 RAILS ${r})
  fortran_job(NAME mpi_module_3_${rails} SOURCE mpi_module.f90 NPROCS 3 RAILS ${r})
  fortran_job(NAME mpi_f08_3_${rails} SOURCE mpi_f08.f90 NPROCS 3 RAILS ${r})
  fortran_job(NAME f08_types_4_${rails} SOURCE f08_types.f90 NPROCS 4 RAILS ${r})
  fortran_job(NAME f08_sections_3_${rails} SOURCE f08_sections.f90 NPROCS 3 RAILS ${r})
  fortran_job(NAME attr_lang_2_${rails} SOURCE attr_lang.f90 NPROCS 2 RAILS ${r}
              EXTRA attr_lang_c.c)
endforeach()

fortran_job(NAME mpi_f08_1 SOURCE mpi_f08.f90 NPROCS 1 RAILS self,shm)
fortran_job(NAME f08_sections_1 SOURCE f08_sections.f90 NPROCS 1 RAILS self,shm)
fortran_job(NAME f77_errors_2 SOURCE f77_errors.f90 NPROCS 2 RAILS self,shm)

# mpifort prints the command it runs (MPICH's -show), finding mpif.h
add_test(NAME fortran_mpifort_show COMMAND ${MPIFORT} -show -c x.f90)
set_tests_properties(fortran_mpifort_show PROPERTIES LABELS fortran
  PASS_REGULAR_EXPRESSION "gfortran .*-I.*fallow-argument-mismatch")
