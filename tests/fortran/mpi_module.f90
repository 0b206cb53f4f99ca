! mpi_module.f90 -- Proust MPI through `use mpi` (explicit interfaces):
!   - choice buffers of any type and rank: a 2-D real array, a double
!     precision scalar, a strided section a(1:n:2) (copied in and out for
!     blocking calls), with keyword arguments;
!   - leniency on the other arguments of buffer routines (MPICH's module
!     has no interface for them): unused counts passed as scalars;
!   - statuses and MPI_GET_COUNT; MPI_IN_PLACE; Fortran datatypes in
!     reductions (MPI_INTEGER8, MPI_REAL8, MPI_DOUBLE_COMPLEX, MPI_LOGICAL,
!     MPI_2REAL with MPI_MAXLOC);
!   - MPI_SIZEOF over the intrinsic types, MPI_TYPE_CREATE_F90_REAL;
!   - MPI_ALLOC_MEM's TYPE(C_PTR) form, MPI_WTIME/MPI_WTICK as functions;
!   - the sentinels are mpif.h's: the same addresses (a subroutine that
!     includes mpif.h compares them).
! Prints "mpi_module: ok" on each rank.
subroutine compare_sentinels(bottom_at, in_place_at, same)
  implicit none
  include 'mpif.h'
  integer(kind=MPI_ADDRESS_KIND) :: bottom_at, in_place_at
  logical :: same
  same = loc(MPI_BOTTOM) == bottom_at .and. loc(MPI_IN_PLACE) == in_place_at
end subroutine compare_sentinels

program mpi_module
  use mpi
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer, c_associated
  implicit none
  character(len=*), parameter :: prog = 'mpi_module'
  integer, parameter :: n = 9
  integer :: ierr, rank, nprocs, peer, i, j, cnt, sz, ftype, st(MPI_STATUS_SIZE)
  real :: grid(3, 4), grid_in(3, 4)
  double precision :: d, t0
  integer :: line(n), reqs(2)
  integer(kind=8) :: big
  real(kind=8) :: r8
  complex(kind=8) :: z
  logical :: flag, same
  real :: pair(2, 1)
  type(c_ptr) :: mem
  integer, pointer :: ints(:)
  integer(kind=MPI_ADDRESS_KIND) :: b_at, p_at

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call check(.not. MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED')
  t0 = MPI_WTIME()
  call check(MPI_WTICK() > 0d0 .and. MPI_WTICK() < 1d0, 'MPI_WTICK')

  ! -- a ring of three messages: a 2-D array, a scalar, a section
  peer = mod(rank + 1, nprocs)
  do j = 1, 4
    do i = 1, 3
      grid(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  d = rank + 0.5d0
  line = -1
  line(1:n:2) = rank
  if (rank == 0) then
    call MPI_SEND(buf=grid, count=12, datatype=MPI_REAL, dest=peer, tag=1, &
                  comm=MPI_COMM_WORLD, ierror=ierr)
    call MPI_SEND(d, 1, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, ierr)
    call MPI_SEND(line(1:n:2), 5, MPI_INTEGER, peer, 3, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 1 .or. (rank == 0 .and. nprocs == 1)) then
    call MPI_RECV(grid_in, 12, MPI_REAL, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_GET_COUNT(st, MPI_REAL, cnt, ierr)
    call check(cnt == 12 .and. st(MPI_SOURCE) == 0 .and. st(MPI_TAG) == 1, '2-D status')
    call check(all(grid_in == grid - (rank * 100)), '2-D array')
    call MPI_RECV(d, 1, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(d == 0.5d0, 'scalar')
    line = -7
    call MPI_RECV(line(1:n:2), 5, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, st, ierr)
    call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
    call check(cnt == 5 .and. all(line(1:n:2) == 0) .and. all(line(2:n:2) == -7), 'section')
  end if
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  ! -- nonblocking on whole arrays
  line = rank
  call MPI_IRECV(line, n, MPI_INTEGER, mod(rank + nprocs - 1, nprocs), 4, MPI_COMM_WORLD, &
                 reqs(1), ierr)
  call MPI_ISEND(grid, 12, MPI_REAL, peer, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAIT(reqs(2), st, ierr)
  call MPI_IRECV(grid_in, 12, MPI_REAL, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_SEND((/ (rank, i = 1, n) /), n, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(all(line == mod(rank + nprocs - 1, nprocs)), 'isend/irecv')

  ! -- reductions over Fortran types, in place
  big = 2_8**40 + rank
  call MPI_ALLREDUCE(MPI_IN_PLACE, big, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(big == nprocs * 2_8**40 + nprocs * (nprocs - 1) / 2, 'MPI_INTEGER8 sum')
  r8 = 1.25d0
  call MPI_ALLREDUCE(MPI_IN_PLACE, r8, 1, MPI_REAL8, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check(abs(r8 - 1.25d0**nprocs) < 1d-12, 'MPI_REAL8 prod')
  z = cmplx(rank, 1, kind=8)
  call MPI_ALLREDUCE(MPI_IN_PLACE, z, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(z == cmplx(nprocs * (nprocs - 1) / 2, nprocs, kind=8), 'MPI_DOUBLE_COMPLEX sum')
  flag = rank >= 0
  call MPI_ALLREDUCE(MPI_IN_PLACE, flag, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(flag, 'MPI_LOGICAL land')
  pair(1, 1) = real(mod(rank * 7, nprocs + 1))
  pair(2, 1) = real(rank)
  call MPI_ALLREDUCE(MPI_IN_PLACE, pair, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(pair(1, 1) == maxval((/ (real(mod(i * 7, nprocs + 1)), i = 0, nprocs - 1) /)), &
             'MPI_2REAL maxloc')
  ! an unused count as a scalar, where the interface says an array
  line = rank
  call MPI_ALLTOALLV(MPI_IN_PLACE, 0, 0, MPI_DATATYPE_NULL, line, (/ (1, i = 1, nprocs) /), &
                     (/ (i, i = 0, nprocs - 1) /), MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(line(1:nprocs) == (/ (i, i = 0, nprocs - 1) /)), &
             'alltoallv in place')

  ! -- sizes
  call MPI_SIZEOF(big, sz, ierr)
  call check(sz == 8, 'MPI_SIZEOF integer(8)')
  call MPI_SIZEOF(grid, sz, ierr)
  call check(sz == 4, 'MPI_SIZEOF real array')
  call MPI_SIZEOF(z, sz, ierr)
  call check(sz == 16, 'MPI_SIZEOF complex(8)')
  call MPI_SIZEOF(flag, sz, ierr)
  call check(sz == 4, 'MPI_SIZEOF logical')
  call MPI_TYPE_CREATE_F90_REAL(15, 300, ftype, ierr)
  call MPI_TYPE_SIZE(ftype, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 8, 'MPI_TYPE_CREATE_F90_REAL')

  ! -- C pointers
  call MPI_ALLOC_MEM(int(4 * n, MPI_ADDRESS_KIND), MPI_INFO_NULL, mem, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(mem), 'MPI_ALLOC_MEM (C_PTR)')
  call c_f_pointer(mem, ints, (/ n /))
  ints = rank
  call MPI_FREE_MEM(ints, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_FREE_MEM')

  ! -- one set of sentinels for mpif.h and the module
  b_at = loc(MPI_BOTTOM)
  p_at = loc(MPI_IN_PLACE)
  call compare_sentinels(b_at, p_at, same)
  call check(same, 'sentinels shared with mpif.h')

  call check(MPI_WTIME() >= t0, 'MPI_WTIME')
  print '(A,A)', prog, ': ok'
  call MPI_FINALIZE(ierr)
contains
  include 'check.inc'
end program mpi_module
