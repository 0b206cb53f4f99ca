! attr_lang.f90 (with attr_lang_c.c) -- attribute values across languages
! (MPI-4.1 19.3.7): a value Fortran sets on a keyval made in C is an
! integer that C reads through a pointer, in MPI_Comm_get_attr and in the
! keyval's copy and delete callbacks alike; a C delete callback that sets
! another attribute while a Fortran MPI_COMM_SET_ATTR replaces a value
! stores a C pointer (the callback's calls are C's), which C reads back
! as it set it.
! Prints "attr_lang: ok" on each rank.
program attr_lang
  use mpi
  implicit none
  character(len=*), parameter :: prog = 'attr_lang'
  integer :: ierr, key, comm, dup, ok
  integer(kind=MPI_ADDRESS_KIND) :: v, seen

  call MPI_INIT(ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
  call attr_lang_setup(key)
  v = 123456789012_MPI_ADDRESS_KIND
  call MPI_COMM_SET_ATTR(comm, key, v, ierr)
  call attr_lang_read(comm, seen)
  call check(seen == v, 'C reads a pointer to the value Fortran set')
  call MPI_COMM_DUP(comm, dup, ierr) ! the C copy callback sees it the same way
  call MPI_COMM_FREE(dup, ierr)
  v = 7
  call MPI_COMM_SET_ATTR(comm, key, v, ierr) ! the C delete callback runs here
  call attr_lang_check(comm, 123456789012_MPI_ADDRESS_KIND, 123456789012_MPI_ADDRESS_KIND, ok)
  call check(ok == 1, 'C callbacks: pointers to Fortran values; their own calls are C''s')
  call MPI_COMM_FREE(comm, ierr)
  print '(A,A)', prog, ': ok'
  call MPI_FINALIZE(ierr)
contains
  include 'check.inc'
end program attr_lang
