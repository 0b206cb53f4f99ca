! f77_callbacks.f90 -- Fortran procedures MPI calls back through mpif.h:
!   - a user reduction (MPI_Op_create, not commutative): the composition of
!     affine maps x -> m x + c, stored as (m, c) pairs, which is associative
!     but gives the known result only in the standard's rank order; used
!     by MPI_Allreduce and MPI_Reduce;
!   - a communicator error handler (MPI_Comm_create_errhandler) that keeps
!     the error code it is called with: a send to a bad rank calls it once,
!     with a code of class MPI_ERR_RANK, and the call returns that code.
! Prints "f77_callbacks: ok" on each rank.
module f77_callbacks_state
  implicit none
  integer :: handler_calls = 0, handler_code = 0
end module f77_callbacks_state

subroutine weighted(invec, inoutvec, n, dtype)
  implicit none
  integer :: n, dtype, i
  integer :: invec(n), inoutvec(n)
  do i = 1, n - 1, 2 ! inoutvec := invec o inoutvec
    inoutvec(i + 1) = invec(i) * inoutvec(i + 1) + invec(i + 1)
    inoutvec(i) = invec(i) * inoutvec(i)
  end do
end subroutine weighted

subroutine keep_error(comm, code)
  use f77_callbacks_state
  implicit none
  integer :: comm, code
  handler_calls = handler_calls + 1
  handler_code = code
end subroutine keep_error

program f77_callbacks
  use f77_callbacks_state
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: prog = 'f77_callbacks'
  external weighted, keep_error
  integer :: ierr, rank, nprocs, op, eh, v(2), r(2), want, i, cls

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)

  call MPI_OP_CREATE(weighted, .false., op, ierr)
  call check(ierr == MPI_SUCCESS, 'op_create')
  v = (/ 2, rank + 1 /) ! x -> 2x + rank + 1
  call MPI_ALLREDUCE(v, r, 2, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  ! f_0 o f_1 o ... o f_{n-1} = (2**n, sum of 2**i (i + 1))
  want = 0
  do i = 0, nprocs - 1
    want = want + 2**i * (i + 1)
  end do
  call check(r(1) == 2**nprocs .and. r(2) == want, 'non-commutative allreduce')
  r = 0
  call MPI_REDUCE(v, r, 2, MPI_INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(r(2) == want, 'non-commutative reduce')
  call MPI_OP_FREE(op, ierr)
  call check(op == MPI_OP_NULL, 'op_free')

  call MPI_COMM_CREATE_ERRHANDLER(keep_error, eh, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, eh, ierr)
  call MPI_SEND(v, 1, MPI_INTEGER, nprocs + 3, 0, MPI_COMM_WORLD, ierr)
  call check(handler_calls == 1, 'the handler was called once')
  call MPI_ERROR_CLASS(handler_code, cls, i)
  call check(cls == MPI_ERR_RANK .and. ierr == handler_code, 'the handler got the error')
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)

  call MPI_FINALIZE(ierr)
  print '(A)', 'f77_callbacks: ok'

contains

  include 'check.inc'

end program f77_callbacks
