# Tests of the tools of Proust MPI (tools/mpi): the compiler wrappers, the
# mpiexec/mpirun front end and the install tree, one ctest per case of
# tools_wrappers.sh. They use the build-tree scripts in
# <build>/tools/mpi; `install` installs into a temporary prefix.
set(PM_TOOLS_DIR ${PROJECT_BINARY_DIR}/tools/mpi)

# pm_tools_test(case rails) — test mpi_tools_<case>[_<rails>]
function(pm_tools_test name case rails)
  add_test(NAME mpi_tools_${name}
           COMMAND bash ${MPI_TEST_DIR}/tools_wrappers.sh ${PM_TOOLS_DIR} ${PROJECT_BINARY_DIR}
                   ${CMAKE_COMMAND} ${case})
  set_tests_properties(mpi_tools_${name} PROPERTIES TIMEOUT 120 LABELS tools
                       ENVIRONMENT "PROUST_RAILS=${rails}")
endfunction()

pm_tools_test(show show self,shm)
pm_tools_test(compile compile self,shm)
pm_tools_test(run_c_shm run_c self,shm)
pm_tools_test(run_c_tcp run_c tcp)
pm_tools_test(cxx cxx self,shm)
pm_tools_test(mpiexec_options mpiexec_options self,shm)
pm_tools_test(mpiexec_errors mpiexec_errors self,shm)
pm_tools_test(install install self,shm)
pm_tools_test(findmpi findmpi self,shm)
if(PROUST_FORTRAN)
  pm_tools_test(findmpi_fortran findmpi_fortran self,shm)
endif()
