! f08_sections.f90 -- array sections as mpi_f08 buffers where counts are
! each rank's share or two buffers share one (count, datatype):
!   - MPI_Gather into a strided 1-D section, MPI_Scatter from one: each
!     rank's block lands at its own elements, the gaps untouched;
!   - MPI_Alltoall on a 2-D section: refused, MPI_ERR_BUFFER returned on
!     the communicator (MPI_ERRORS_RETURN), nothing written;
!   - MPI_Allreduce in place on a strided section: right;
!   - MPI_Allreduce from a contiguous buffer into a section, and
!     MPI_Reduce_local on sections: refused (one datatype cannot describe
!     both buffers), the buffers untouched;
!   - a negative stride a(8:1:-2) sent and received;
!   - MPI_Buffer_detach returns the attached buffer's address.
! Prints "f08_sections: ok" on each rank.
program f08_sections
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  character(len=*), parameter :: prog = 'f08_sections'
  integer, parameter :: m = 64
  type(MPI_Comm) :: comm
  integer :: rank, nprocs, i, ierr, mine(2), r(4 * m), grid(8, 4), two(2, m), got(4), bytes
  integer :: back(8), line(8)
  integer, pointer :: pool(:)
  type(c_ptr) :: mem, detached

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs)
  call check(nprocs <= 16, 'at most 16 ranks')

  ! -- gather into every other element: rank i's 2 values at 4i+1, 4i+3
  mine = (/ 10 * rank + 1, 10 * rank + 2 /)
  r = -1
  call MPI_Gather(mine, 2, MPI_INTEGER, r(1:4 * nprocs:2), 2, MPI_INTEGER, 0, comm)
  if (rank == 0) then
    do i = 0, nprocs - 1
      call check(r(4 * i + 1) == 10 * i + 1 .and. r(4 * i + 3) == 10 * i + 2, 'gather: blocks')
      call check(r(4 * i + 2) == -1 .and. r(4 * i + 4) == -1, 'gather: gaps untouched')
    end do
  end if

  ! -- scatter from every third element
  r = -1
  if (rank == 0) r(1:6 * nprocs:3) = (/ (100 + i, i = 1, 2 * nprocs) /)
  mine = 0
  call MPI_Scatter(r(1:6 * nprocs:3), 2, MPI_INTEGER, mine, 2, MPI_INTEGER, 0, comm)
  call check(all(mine == (/ 100 + 2 * rank + 1, 100 + 2 * rank + 2 /)), 'scatter from a section')

  ! -- a 2-D section where counts are per rank: refused, returned
  grid = -5
  two = 0
  call MPI_Alltoall(two, 1, MPI_INTEGER, grid(1:8:2, 1:min(nprocs, 4)), 1, MPI_INTEGER, comm, ierr)
  call check(ierr == MPI_ERR_BUFFER .and. all(grid == -5), 'alltoall on a 2-D section refused')

  ! -- reductions
  r = 1
  r(1:8:2) = rank
  call MPI_Allreduce(MPI_IN_PLACE, r(1:8:2), 4, MPI_INTEGER, MPI_SUM, comm)
  call check(all(r(1:8:2) == nprocs * (nprocs - 1) / 2) .and. all(r(2:8:2) == 1), &
             'allreduce in place on a section')
  got = 7
  r(1:8) = 3
  call MPI_Allreduce(got, r(1:8:2), 4, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check(ierr == MPI_ERR_BUFFER .and. all(r(1:8) == 3), 'allreduce into a section refused')
  ! (no communicator: raised on MPI_COMM_SELF)
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
  call MPI_Reduce_local(got, r(1:8:2), 4, MPI_INTEGER, MPI_SUM, ierr)
  call check(ierr == MPI_ERR_BUFFER .and. all(r(1:8) == 3), 'reduce_local into a section refused')

  ! -- a negative stride, point to point
  line = (/ (rank * 10 + i, i = 1, 8) /)
  back = -1
  call MPI_Sendrecv(line(8:1:-2), 4, MPI_INTEGER, mod(rank + 1, nprocs), 1, back(1:4), 4, &
                    MPI_INTEGER, mod(rank + nprocs - 1, nprocs), 1, comm, MPI_STATUS_IGNORE)
  call check(all(back(1:4) == mod(rank + nprocs - 1, nprocs) * 10 + (/ 8, 6, 4, 2 /)) .and. &
             all(back(5:8) == -1), 'negative stride')

  ! -- the buffer MPI_Buffer_detach hands back (memory from MPI_Alloc_mem:
  ! the interface gives attach's buffer no TARGET, so the compiler may
  ! assume a local array's address cannot come back)
  call MPI_Alloc_mem(16384_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem)
  call c_f_pointer(mem, pool, (/ 4096 /))
  call MPI_Buffer_attach(pool, 4 * size(pool))
  call MPI_Buffer_detach(detached, bytes)
  call check(c_associated(detached, mem) .and. bytes == 4 * 4096, 'buffer detach address')
  call MPI_Free_mem(pool)

  call MPI_Comm_free(comm)
  print '(A,A)', prog, ': ok'
  call MPI_Finalize()
contains
  include 'check.inc'
end program f08_sections
