# MPI-IO (MPI-4.1 chapter 14, MPI_File_*; src/mpi/io/). Registered only when
# PROUST_MPI_IO is on. Each program is named by what it checks; its tests are
# mpi_<program>_<ranks>_<rail>:
#
#   io_basic        access modes, open/close/delete, set_size/preallocate/sync,
#                   group/info/amode, explicit offsets and the individual
#                   pointer (0 B to 16 MiB per rank, unaligned, past the end),
#                   large-count forms, c2f/f2c, get_type_extent
#   io_views        set_view/get_view with vector, indexed, hindexed, struct,
#                   resized, subarray (2-D/3-D, C/Fortran) and darray filetypes;
#                   noncontiguous memory; pointers in etypes; byte offsets;
#                   MPI_DISPLACEMENT_CURRENT
#   io_coll         write_all/read_all/_at_all and split collectives over a
#                   3-D block (subarray) and a cyclic (vector) distribution,
#                   ranks with count 0, under several collective-buffering
#                   hint sets; every rank checks every byte
#   io_shared       write_shared/read_shared/seek_shared/get_position_shared,
#                   write_ordered/read_ordered and their _begin/_end forms
#   io_nonblocking  iwrite/iread (_at, _shared) with many requests in flight,
#                   Waitall/Testany/Test loops, iwrite_all/iread_all/_at_all
#                   in flight with point-to-point traffic
#   io_errors       error classes (open, access, views, delete), default and
#                   user file error handlers, MPI_File_call_errhandler
#   io_datarep      native, internal and external32 views (external32 bytes
#                   against MPI_Pack_external), MPI_Register_datarep with
#                   conversion callbacks, MPI_ERR_DUP_DATAREP
#
# Every program works in a fresh directory under $TMPDIR (or /tmp) that it
# removes at the end, and on failure.

if(PROUST_MPI_IO)
  set(_io_programs io_basic io_views io_coll io_shared io_nonblocking io_errors io_datarep)
  foreach(prog ${_io_programs})
    mpi_test_program(${prog} ${MPI_TEST_DIR}/${prog}.c)
  endforeach()

  foreach(prog ${_io_programs})
    foreach(np 1 2 4)
      mpi_job(NAME ${prog}_${np}_shm NPROCS ${np} RAILS self,shm PROGRAM ${prog} TIMEOUT 120)
    endforeach()
    mpi_job(NAME ${prog}_2_tcp NPROCS 2 RAILS tcp PROGRAM ${prog} TIMEOUT 120)
  endforeach()
  # eight ranks writing interleaved pieces of the same file at once
  mpi_job(NAME io_coll_8_tcp NPROCS 8 RAILS tcp PROGRAM io_coll TIMEOUT 120)
endif()
