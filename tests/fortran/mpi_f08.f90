! mpi_f08.f90 -- Proust MPI through `use mpi_f08`:
!   - handle types: ==, /= between handles and their constants;
!   - ierror optional, and returned where given (a send to a bad rank under
!     MPI_ERRORS_RETURN);
!   - non-contiguous sections as buffers (MPI_SUBARRAYS_SUPPORTED): a
!     strided 1-D section sent nonblocking, a 2-D section a(2:6:2, 1:3)
!     received nonblocking into, a section of a 3-D array broadcast; the
!     elements outside the section untouched; a reduction of a section
!     refused (its buffers share one count and datatype), the error
!     returned on the communicator;
!   - TYPE(MPI_Status) fields and MPI_Get_count; MPI_STATUS(ES)_IGNORE;
!   - large counts: MPI_Send/MPI_Recv/MPI_Get_count with
!     INTEGER(KIND=MPI_COUNT_KIND) counts;
!   - callbacks in their mpi_f08 forms: a user operation (TYPE(C_PTR),
!     VALUE vectors) declared with PROCEDURE(MPI_User_function), an error
!     handler, attribute copy functions including MPI_COMM_DUP_FN;
!   - MPI_Alloc_mem's TYPE(C_PTR), MPI_Sizeof, MPI_Wtime.
! Prints "mpi_f08: ok" on each rank.
module mpi_f08_test_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: handler_calls = 0, handler_code = MPI_SUCCESS, copies = 0
contains
  subroutine max_abs(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, (/ len /))
    call c_f_pointer(inoutvec, b, (/ len /))
    where (abs(a) > abs(b)) b = a
  end subroutine max_abs

  subroutine keep_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handler_calls = handler_calls + 1
    handler_code = code
  end subroutine keep_error

  subroutine plus_one(oldcomm, keyval, extra, valin, valout, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
    logical :: flag
    copies = copies + 1
    valout = valin + extra
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine plus_one
end module mpi_f08_test_ops

program mpi_f08_test
  use mpi_f08
  use mpi_f08_test_ops
  use, intrinsic :: iso_c_binding
  implicit none
  character(len=*), parameter :: prog = 'mpi_f08'
  procedure(MPI_User_function), pointer :: op_fn => null()
  procedure(MPI_Comm_errhandler_function), pointer :: eh_fn => null()
  type(MPI_Comm) :: comm, dup
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st
  type(MPI_Op) :: op
  type(MPI_Errhandler) :: eh
  integer :: rank, nprocs, left, right, i, j, k, n, ierr, key, sz
  integer :: line(12), got(6), grid(7, 4), cube(4, 3, 2), mine(2, 3, 2)
  integer(kind=MPI_COUNT_KIND) :: big_count
  integer(kind=MPI_ADDRESS_KIND) :: val
  logical :: flag
  type(c_ptr) :: mem
  real(kind=8), pointer :: reals(:)
  double precision :: t0

  call MPI_Init()
  t0 = MPI_Wtime()
  comm = MPI_COMM_WORLD
  call check(comm == MPI_COMM_WORLD .and. comm /= MPI_COMM_SELF, 'handle comparisons')
  call check(MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED')
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs, ierr)
  call check(ierr == MPI_SUCCESS, 'ierror given')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! -- a strided section out, a 2-D section in, both nonblocking
  line = (/ (100 * rank + i, i = 1, 12) /)
  grid = -1
  call MPI_Irecv(grid(2:6:2, 1:3), 9, MPI_INTEGER, left, 1, comm, reqs(1))
  call MPI_Isend(line(1:12:3), 4, MPI_INTEGER, right, 1, comm, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  ! the 4 elements of line(1:12:3) from the left land in the first 4
  ! elements of the section (column-major): (2,1) (4,1) (6,1) (2,2)
  call check(grid(2, 1) == 100 * left + 1 .and. grid(4, 1) == 100 * left + 4 .and. &
             grid(6, 1) == 100 * left + 7 .and. grid(2, 2) == 100 * left + 10, &
             'sections: data in place')
  n = 0
  do j = 1, 4
    do i = 1, 7
      if (grid(i, j) == -1) n = n + 1
    end do
  end do
  call check(n == 28 - 4, 'sections: nothing else written')

  ! -- a 3-D section in a reduction
  do k = 1, 2
    do j = 1, 3
      do i = 1, 4
        cube(i, j, k) = rank + i + 10 * j + 100 * k
      end do
    end do
  end do
  call MPI_Bcast(cube(1:4:3, :, :), 12, MPI_INTEGER, nprocs - 1, comm)
  ! (sendbuf and recvbuf share one (count, datatype): a section there is
  ! refused, the error raised on the communicator)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPI_Allreduce(cube(1:4:3, :, :), mine, 12, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check(ierr == MPI_ERR_BUFFER, 'reduction of a section: refused')
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL)
  call check(all(cube(1:4:3, :, :) == reshape((/ ((((nprocs - 1) + i + 10 * j + 100 * k, &
             i = 1, 4, 3), j = 1, 3), k = 1, 2) /), (/ 2, 3, 2 /))), '3-D section broadcast')
  call check(all(cube(2:3, :, :) == reshape((/ (((rank + i + 10 * j + 100 * k, &
             i = 2, 3), j = 1, 3), k = 1, 2) /), (/ 2, 3, 2 /))), '3-D section: rest untouched')

  ! -- statuses and large counts
  line = rank
  if (nprocs > 1) then
    big_count = 12
    call MPI_Sendrecv(line, 6, MPI_INTEGER, right, 2, got, 6, MPI_INTEGER, left, 2, comm, st)
    call MPI_Get_count(st, MPI_INTEGER, n)
    call check(st%MPI_SOURCE == left .and. st%MPI_TAG == 2 .and. n == 6 .and. all(got == left), &
               'sendrecv status')
    call MPI_Send(line, big_count, MPI_INTEGER, right, 3, comm)
    call MPI_Recv(line, big_count, MPI_INTEGER, left, 3, comm, st)
    call MPI_Get_count(st, MPI_INTEGER, big_count)
    call check(big_count == 12 .and. st%MPI_TAG == 3 .and. st%MPI_SOURCE == left .and. &
               all(line == left), 'large-count send/recv')
  end if

  ! -- callbacks
  op_fn => max_abs
  call MPI_Op_create(op_fn, .true., op)
  got(1:3) = (/ rank, -rank, 1 /)
  call MPI_Allreduce(MPI_IN_PLACE, got, 3, MPI_INTEGER, op, comm)
  call check(got(1) == nprocs - 1 .and. got(2) == -(nprocs - 1) .and. got(3) == 1, &
             'user operation')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op freed')

  eh_fn => keep_error
  call MPI_Comm_create_errhandler(eh_fn, eh)
  call MPI_Comm_dup(comm, dup)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(line, 1, MPI_INTEGER, nprocs + 3, 0, dup, ierr)
  call MPI_Error_class(ierr, k)
  call check(handler_calls == 1 .and. k == MPI_ERR_RANK .and. handler_code == ierr, &
             'error handler')
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(line, 1, MPI_INTEGER, nprocs + 3, 0, dup, ierr)
  call check(ierr /= MPI_SUCCESS .and. handler_calls == 1, 'MPI_ERRORS_RETURN')
  call MPI_Errhandler_free(eh)

  call MPI_Comm_create_keyval(plus_one, MPI_COMM_NULL_DELETE_FN, key, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, key, 37_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, comm)
  call MPI_Comm_get_attr(comm, key, val, flag)
  call check(flag .and. val == 42 .and. copies == 1, 'attribute copy function')
  call MPI_Comm_free(comm)
  call MPI_Comm_free_keyval(key)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, key, 9_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(dup, comm)
  call MPI_Comm_get_attr(comm, key, val, flag)
  call check(flag .and. val == 9, 'MPI_COMM_DUP_FN')
  call MPI_Comm_free(comm)
  call MPI_Comm_free(dup)
  call MPI_Comm_free_keyval(key)

  ! -- C pointers, sizes
  call MPI_Alloc_mem(80_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem)
  call c_f_pointer(mem, reals, (/ 10 /))
  reals = 1.5d0
  call check(sum(reals) == 15d0, 'MPI_Alloc_mem')
  call MPI_Free_mem(reals)
  call MPI_Sizeof(t0, sz)
  call check(sz == 8, 'MPI_Sizeof')
  call check(MPI_Wtime() >= t0, 'MPI_Wtime')

  print '(A,A)', prog, ': ok'
  call MPI_Finalize()
contains
  include 'check.inc'
end program mpi_f08_test
