# Conformance tests of Proust MPI (tests/mpi/*.c), one file of registrations
# per family: tests/mpi/<family>.cmake. Names: mpi_<family>_<variant>.

set(MPI_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/mpi)
# MPI-IO is in libmpi (src/mpi/io): its tests (io.cmake) are on
set(PROUST_MPI_IO ON)

# mpi_test_program(target source...) — an MPI program linked with libmpi.
function(mpi_test_program name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${MPI_TEST_DIR})
  target_link_libraries(${name} PRIVATE mpi Threads::Threads m)
endfunction()

# mpi_job(NAME n NPROCS k RAILS r PROGRAM target [ARGS ...] [ENV ...] [TIMEOUT s]
#         [WILL_FAIL])
# Runs `proustrun -n k program args` with PROUST_RAILS=r; the test is named
# mpi_<n>.
function(mpi_job)
  cmake_parse_arguments(A "WILL_FAIL" "NAME;NPROCS;RAILS;PROGRAM;TIMEOUT" "ARGS;ENV;LAUNCHER_ARGS" ${ARGN})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  proust_add_job_test(NAME mpi_${A_NAME} NPROCS ${A_NPROCS} RAILS ${A_RAILS}
                      PROGRAM ${A_PROGRAM} ARGS ${A_ARGS} ENV ${A_ENV}
                      TIMEOUT ${A_TIMEOUT} LAUNCHER_ARGS ${A_LAUNCHER_ARGS})
  if(A_WILL_FAIL)
    set_tests_properties(mpi_${A_NAME} PROPERTIES WILL_FAIL TRUE)
  endif()
endfunction()

file(GLOB MPI_TEST_FAMILIES CONFIGURE_DEPENDS ${MPI_TEST_DIR}/*.cmake)
foreach(family ${MPI_TEST_FAMILIES})
  include(${family})
endforeach()
