! f08_types.f90 -- the Fortran datatypes in collectives and reductions
! (mpi_f08): for each integer, real, complex and logical type of Fortran,
! MPI_Allreduce with the operations defined on it (sums and products of
! values that are exact in every kind, maxima, minima, logical and/or,
! bitwise or), MPI_Reduce to the last rank, MPI_Bcast and MPI_Allgather
! of whole arrays; MPI_CHARACTER broadcast; the pair types with MPI_MAXLOC
! and MPI_MINLOC; MPI_Type_size of each type against storage_size.
! Prints "f08_types: ok" on each rank.
program f08_types
  use mpi_f08
  use, intrinsic :: iso_fortran_env
  implicit none
  character(len=*), parameter :: prog = 'f08_types'
  integer, parameter :: n = 5
  integer :: rank, nprocs, i, root, root0, sz
  integer(int8) :: i1(n)
  integer(int16) :: i2(n)
  integer(int32) :: i4(n), i4all(n * 64)
  integer(int64) :: i8(n)
  real(real32) :: r4(n)
  real(real64) :: r8(n), r8all(n * 64)
  complex(real32) :: c8(n)
  complex(real64) :: c16(n)
  logical :: l(n)
  character(len=12) :: text
  real(real32) :: pr4(2, n)
  real(real64) :: pr8(2, n)
  integer :: pi4(2, n)
  integer(int64) :: sum_ranks

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call check(nprocs <= 64, 'at most 64 ranks')
  root = nprocs - 1
  sum_ranks = int(nprocs, int64) * (nprocs - 1) / 2

  ! -- sizes
  call type_size(MPI_INTEGER1, storage_size(i1) / 8, 'MPI_INTEGER1')
  call type_size(MPI_INTEGER2, storage_size(i2) / 8, 'MPI_INTEGER2')
  call type_size(MPI_INTEGER4, storage_size(i4) / 8, 'MPI_INTEGER4')
  call type_size(MPI_INTEGER8, storage_size(i8) / 8, 'MPI_INTEGER8')
  call type_size(MPI_REAL4, storage_size(r4) / 8, 'MPI_REAL4')
  call type_size(MPI_REAL8, storage_size(r8) / 8, 'MPI_REAL8')
  call type_size(MPI_COMPLEX8, storage_size(c8) / 8, 'MPI_COMPLEX8')
  call type_size(MPI_COMPLEX16, storage_size(c16) / 8, 'MPI_COMPLEX16')
  call type_size(MPI_DOUBLE_COMPLEX, storage_size(c16) / 8, 'MPI_DOUBLE_COMPLEX')
  call type_size(MPI_LOGICAL, storage_size(l) / 8, 'MPI_LOGICAL')
  call type_size(MPI_2REAL, 2 * storage_size(r4) / 8, 'MPI_2REAL')
  call type_size(MPI_2DOUBLE_PRECISION, 2 * storage_size(r8) / 8, 'MPI_2DOUBLE_PRECISION')

  ! -- integers of every kind: sum, max, min, bitwise or
  i1 = int(rank + (/ (i, i = 1, n) /), int8)
  call MPI_Allreduce(MPI_IN_PLACE, i1, n, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD)
  call check(all(i1 == int(sum_ranks + nprocs * (/ (i, i = 1, n) /), int8)), 'INTEGER1 sum')
  i2 = int(-rank * (/ (i, i = 1, n) /), int16)
  call MPI_Allreduce(MPI_IN_PLACE, i2, n, MPI_INTEGER2, MPI_MIN, MPI_COMM_WORLD)
  call check(all(i2 == int(-(nprocs - 1) * (/ (i, i = 1, n) /), int16)), 'INTEGER2 min')
  i4 = ishft(1, mod(rank, 30))
  call MPI_Allreduce(MPI_IN_PLACE, i4, n, MPI_INTEGER, MPI_BOR, MPI_COMM_WORLD)
  call check(all(i4 == sum((/ (ishft(1, i), i = 0, min(nprocs, 30) - 1) /))), 'INTEGER bor')
  i8 = 2_int64**40 * rank
  call MPI_Allreduce(MPI_IN_PLACE, i8, n, MPI_INTEGER8, MPI_MAX, MPI_COMM_WORLD)
  call check(all(i8 == 2_int64**40 * (nprocs - 1)), 'INTEGER8 max')
  i8 = 2_int64**40 + rank
  if (rank == root) then
    call MPI_Reduce(MPI_IN_PLACE, i8, n, MPI_INTEGER8, MPI_SUM, root, MPI_COMM_WORLD)
  else
    call MPI_Reduce(i8, i8, n, MPI_INTEGER8, MPI_SUM, root, MPI_COMM_WORLD)
  end if
  if (rank == root) call check(all(i8 == nprocs * 2_int64**40 + sum_ranks), 'INTEGER8 reduce')

  ! -- reals and complexes: exact sums and products
  r4 = 0.5 * rank
  call MPI_Allreduce(MPI_IN_PLACE, r4, n, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  call check(all(r4 == 0.5 * sum_ranks), 'REAL sum')
  r8 = 2d0
  call MPI_Allreduce(MPI_IN_PLACE, r8, n, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD)
  call check(all(r8 == 2d0**nprocs), 'DOUBLE PRECISION prod')
  r8 = -1.25d0 * rank
  call MPI_Allreduce(MPI_IN_PLACE, r8, n, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD)
  call check(all(r8 == -1.25d0 * (nprocs - 1)), 'REAL8 min')
  c8 = cmplx(rank, 1, real32)
  call MPI_Allreduce(MPI_IN_PLACE, c8, n, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD)
  call check(all(c8 == cmplx(sum_ranks, nprocs, real32)), 'COMPLEX sum')
  c16 = (0d0, 1d0)
  call MPI_Allreduce(MPI_IN_PLACE, c16, n, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD)
  call check(all(c16 == (0d0, 1d0)**nprocs), 'DOUBLE COMPLEX prod')

  ! -- logicals
  l = (/ (mod(rank + i, 2) == 0, i = 1, n) /)
  call MPI_Allreduce(MPI_IN_PLACE, l, n, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  call check(all(l .eqv. (/ (nprocs > 1 .or. mod(i, 2) == 0, i = 1, n) /)), 'LOGICAL lor')
  l = rank >= 0
  call MPI_Allreduce(MPI_IN_PLACE, l, n, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD)
  call check(all(l), 'LOGICAL land')

  ! -- pairs
  pr4(1, :) = real(mod(rank * 7, nprocs + 2))
  pr4(2, :) = real(rank)
  call MPI_Allreduce(MPI_IN_PLACE, pr4, n, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD)
  call check(all(pr4(1, :) == maxval((/ (real(mod(i * 7, nprocs + 2)), i = 0, nprocs - 1) /))), &
             '2REAL maxloc value')
  pr8(1, :) = 10d0 - rank
  pr8(2, :) = rank
  call MPI_Allreduce(MPI_IN_PLACE, pr8, n, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD)
  call check(all(pr8(1, :) == 10d0 - (nprocs - 1)) .and. all(pr8(2, :) == nprocs - 1), &
             '2DOUBLE_PRECISION minloc')
  pi4(1, :) = 3
  pi4(2, :) = rank
  call MPI_Allreduce(MPI_IN_PLACE, pi4, n, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD)
  call check(all(pi4(1, :) == 3) .and. all(pi4(2, :) == 0), '2INTEGER maxloc: lowest index')

  ! -- moves
  text = 'nobody'
  if (rank == root) text = 'hello, world'
  call MPI_Bcast(text, len(text), MPI_CHARACTER, root, MPI_COMM_WORLD)
  call check(text == 'hello, world', 'CHARACTER bcast')
  i4 = (/ (rank * 10 + i, i = 1, n) /)
  call MPI_Allgather(i4, n, MPI_INTEGER4, i4all, n, MPI_INTEGER4, MPI_COMM_WORLD)
  call check(all(i4all(1:n * nprocs) == (/ ((root0 * 10 + i, i = 1, n), root0 = 0, nprocs - 1) /)), &
             'INTEGER4 allgather')
  r8 = (/ (rank + 0.25d0 * i, i = 1, n) /)
  call MPI_Gather(r8, n, MPI_REAL8, r8all, n, MPI_REAL8, root, MPI_COMM_WORLD)
  if (rank == root) call check(all(r8all(1:n * nprocs) == &
                               (/ ((root0 + 0.25d0 * i, i = 1, n), root0 = 0, nprocs - 1) /)), &
                               'REAL8 gather')

  print '(A,A)', prog, ': ok'
  call MPI_Finalize()
contains
  include 'check.inc'

  subroutine type_size(t, want, what)
    type(MPI_Datatype), intent(in) :: t
    integer, intent(in) :: want
    character(len=*), intent(in) :: what
    call MPI_Type_size(t, sz)
    call check(sz == want, what // ' size')
  end subroutine type_size
end program f08_types
