# Datatypes (src/mpi/datatype/): constructors, queries, packing.
# Jobs are named mpi_datatype_<program>[_<ranks>_<rail>].

# The internals on their own (no job): the datatype sources and the handle
# tables, with stand-ins for errors and attributes; libproust for proust_copy.
set(_mpi ${PROJECT_SOURCE_DIR}/src/mpi)
file(GLOB DATATYPE_SOURCES CONFIGURE_DEPENDS ${_mpi}/datatype/*.c)
add_executable(datatype_unit ${MPI_TEST_DIR}/datatype_unit.c ${DATATYPE_SOURCES}
               ${_mpi}/misc/handle.c ${_mpi}/misc/util.c)
target_include_directories(datatype_unit PRIVATE ${PROJECT_SOURCE_DIR}/include ${_mpi}
                           ${_mpi}/pt2pt ${_mpi}/coll ${_mpi}/datatype ${_mpi}/comm
                           ${_mpi}/rma ${_mpi}/misc ${_mpi}/init)
target_link_libraries(datatype_unit PRIVATE proust)
add_test(NAME mpi_datatype_unit COMMAND datatype_unit)
set_tests_properties(mpi_datatype_unit PROPERTIES TIMEOUT 120)

foreach(prog build errors external p2p threads large)
  mpi_test_program(datatype_${prog} ${MPI_TEST_DIR}/datatype_${prog}.c)
endforeach()

mpi_job(NAME datatype_build_1 NPROCS 1 RAILS self,shm PROGRAM datatype_build)
mpi_job(NAME datatype_errors_1 NPROCS 1 RAILS self,shm PROGRAM datatype_errors)
mpi_job(NAME datatype_external_1 NPROCS 1 RAILS self,shm PROGRAM datatype_external)
mpi_job(NAME datatype_threads_1 NPROCS 1 RAILS self,shm PROGRAM datatype_threads)
# MPI-4.0 large counts (MPI_Type_*_c, MPI_Pack_c & co); two ranks send a _c type.
mpi_job(NAME datatype_large_1 NPROCS 1 RAILS self,shm PROGRAM datatype_large)
mpi_job(NAME datatype_large_2_shm NPROCS 2 RAILS self,shm PROGRAM datatype_large)
# Pairs of ranks exchange derived types; with 3 ranks the last one idles.
foreach(np 2 3 4)
  mpi_job(NAME datatype_p2p_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM datatype_p2p)
endforeach()
foreach(np 2 3)
  mpi_job(NAME datatype_p2p_${np}_tcp NPROCS ${np} RAILS tcp PROGRAM datatype_p2p)
endforeach()

# The MPI-1 names removed in MPI-3.0 (src/mpi/misc/deprecated.c).
mpi_test_program(mpi1_compat ${MPI_TEST_DIR}/mpi1_compat.c)
mpi_job(NAME mpi1_compat_1 NPROCS 1 RAILS self,shm PROGRAM mpi1_compat)
mpi_job(NAME mpi1_compat_3_shm NPROCS 3 RAILS self,shm PROGRAM mpi1_compat)
mpi_job(NAME mpi1_compat_2_tcp NPROCS 2 RAILS tcp PROGRAM mpi1_compat)
