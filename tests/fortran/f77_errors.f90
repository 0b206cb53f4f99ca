! f77_errors.f90 -- outputs of mpif.h calls that fail, under
! MPI_ERRORS_RETURN: MPI_WAITSOME and MPI_WAITANY on a truncated receive
! still give 1-based indices (MPI_ERR_IN_STATUS: the statuses and indices
! are filled), with the error in the status; a failing MPI_WAITANY's
! index points at the request that failed.
! Prints "f77_errors: ok" on each rank.
program f77_errors
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: prog = 'f77_errors'
  integer :: ierr, rank, nprocs, reqs(3), idx(3), outcount, index, cls
  integer :: statuses(MPI_STATUS_SIZE, 3), status(MPI_STATUS_SIZE), big(10), small(1)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  big = 7
  if (rank == 0) then
    call MPI_SEND(big, 10, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)
    call MPI_SEND(big, 10, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) then
    reqs(1) = MPI_REQUEST_NULL
    reqs(3) = MPI_REQUEST_NULL
    call MPI_IRECV(small, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITSOME(3, reqs, outcount, idx, statuses, ierr)
    call check(ierr == MPI_ERR_IN_STATUS .and. outcount == 1 .and. idx(1) == 2, &
               'waitsome: 1-based index on MPI_ERR_IN_STATUS')
    call MPI_ERROR_CLASS(statuses(MPI_ERROR, 1), cls, ierr)
    call check(cls == MPI_ERR_TRUNCATE, 'waitsome: the error in the status')
    reqs(1) = MPI_REQUEST_NULL
    call MPI_IRECV(small, 1, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITANY(2, reqs, index, status, ierr)
    call MPI_ERROR_CLASS(ierr, cls, ierr)
    call check(cls == MPI_ERR_TRUNCATE .and. index == 2, 'waitany: 1-based index on error')
  end if
  print '(A,A)', prog, ': ok'
  call MPI_FINALIZE(ierr)
contains
  include 'check.inc'
end program f77_errors
