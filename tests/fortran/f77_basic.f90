! f77_basic.f90 -- Proust MPI through mpif.h (issue 42, first slice): the
! calls every Fortran MPI program makes, each result checked.
!   - init, rank and size, processor name (a string out), Wtime;
!   - a ring of Send/Recv with statuses (source, tag, count) and ANY_SOURCE;
!   - Isend/Irecv of DOUBLE PRECISION arrays with Waitall (statuses), then
!     with MPI_STATUSES_IGNORE, and Waitany's index (1-based);
!   - Allreduce of INTEGER with MPI_SUM, then in place (MPI_IN_PLACE);
!   - Bcast of a DOUBLE PRECISION array, Barrier, Comm_split, Comm_set_name
!     (a string in) and Comm_get_name;
!   - a bad rank under MPI_ERRORS_RETURN: an error code, not an abort.
! Prints "f77_basic: ok" on each rank; any check that fails stops the job.
program f77_basic
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: prog = 'f77_basic'
  integer :: ierr, rank, nprocs, right, left, i, n, idx, color, sub, subrank
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), reqs(4)
  integer :: val, got, total, ints(3), namelen
  double precision :: a(100), b(100), t0, buf(5)
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_OBJECT_NAME) :: cname

  call MPI_INIT(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Init')
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call check(nprocs >= 2 .and. rank >= 0 .and. rank < nprocs, 'rank and size')
  host = 'x'
  call MPI_GET_PROCESSOR_NAME(host, namelen, ierr)
  call check(ierr == MPI_SUCCESS .and. namelen > 0 .and. namelen <= MPI_MAX_PROCESSOR_NAME, &
             'processor name length')
  call check(len_trim(host) == namelen, 'processor name blank-padded')
  t0 = MPI_WTIME()
  call check(t0 > 0.0d0, 'MPI_Wtime')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! a ring: tag 7, value rank*10, then from anyone
  val = rank * 10
  if (mod(rank, 2) == 0) then
    call MPI_SEND(val, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, ierr)
    call MPI_RECV(got, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_RECV(got, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_SEND(val, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, ierr)
  end if
  call check(got == left * 10, 'ring value')
  call check(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 7, 'ring status')
  call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
  call check(n == 1, 'MPI_Get_count')
  call MPI_SENDRECV(val, 1, MPI_INTEGER, right, 8, got, 1, MPI_INTEGER, MPI_ANY_SOURCE, 8, &
                    MPI_COMM_WORLD, status, ierr)
  call check(got == left * 10 .and. status(MPI_SOURCE) == left, 'sendrecv from any source')

  ! nonblocking: two arrays each way
  do i = 1, 100
    a(i) = rank * 1000 + i
  end do
  call MPI_IRECV(b, 100, MPI_DOUBLE_PRECISION, left, 9, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IRECV(buf, 5, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_ISEND(a, 100, MPI_DOUBLE_PRECISION, right, 9, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_ISEND(a, 5, MPI_DOUBLE_PRECISION, left, 10, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_WAITALL(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'waitall')
  call check(statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 2) == 10, 'waitall statuses')
  call check(statuses(MPI_SOURCE, 2) == right, 'waitall second status')
  do i = 1, 100
    call check(b(i) == left * 1000 + i, 'nonblocking data')
  end do
  call check(buf(5) == right * 1000 + 5, 'nonblocking second message')
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 11, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(val, 1, MPI_INTEGER, right, 11, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. got == left * 10, 'waitall, statuses ignored')
  reqs(1) = MPI_REQUEST_NULL
  call MPI_IRECV(got, 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_SEND(val, 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, ierr)
  call MPI_WAITANY(2, reqs, idx, status, ierr)
  call check(idx == 2 .and. status(MPI_SOURCE) == left, 'waitany index is 1-based')

  ! reductions, in place too
  call MPI_ALLREDUCE(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(total == nprocs * (nprocs + 1) / 2, 'allreduce sum')
  ints = (/ rank, 1, -rank /)
  call MPI_ALLREDUCE(MPI_IN_PLACE, ints, 3, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(ints(1) == nprocs - 1 .and. ints(2) == 1 .and. ints(3) == 0, 'allreduce in place')

  ! broadcast, split, names
  if (rank == 0) a(1:5) = (/ 1.5d0, 2.5d0, 3.5d0, 4.5d0, 5.5d0 /)
  call MPI_BCAST(a, 5, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call check(a(3) == 3.5d0 .and. a(5) == 5.5d0, 'bcast')
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  color = mod(rank, 2)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, color, -rank, sub, ierr)
  call MPI_COMM_RANK(sub, subrank, ierr)
  call check(ierr == MPI_SUCCESS .and. subrank >= 0, 'comm_split')
  call MPI_COMM_SET_NAME(sub, 'half of the world   ', ierr)
  cname = 'garbage'
  call MPI_COMM_GET_NAME(sub, cname, n, ierr)
  call check(cname == 'half of the world' .and. n == 17, 'comm names, trimmed and padded')
  call MPI_COMM_FREE(sub, ierr)
  call check(sub == MPI_COMM_NULL, 'comm_free')

  ! errors come back as codes
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(val, 1, MPI_INTEGER, nprocs + 5, 1, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'a bad rank is an error')
  call MPI_ERROR_CLASS(ierr, n, ierr)
  call check(n == MPI_ERR_RANK, 'its class is MPI_ERR_RANK')

  call MPI_FINALIZE(ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Finalize')
  print '(A)', 'f77_basic: ok'

contains

  include 'check.inc'

end program f77_basic
