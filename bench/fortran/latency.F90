! latency.F90 -- 8-byte ping-pong from Fortran (bench/fortran/run.sh): the
! round trip over MPI_Send/MPI_Recv, half of it reported, through one of
! Fortran's three interfaces, chosen when compiling:
!   -DIFACE_F08   use mpi_f08      -DIFACE_MPI   use mpi      (neither) mpif.h
! The same loop as latency.c (the C path). Prints, after a warm-up, one
! line per block: "<interface> <block> <usec one way>"; the script takes
! medians.
program latency
#if defined(IFACE_F08)
  use mpi_f08
#elif defined(IFACE_MPI)
  use mpi
#endif
  implicit none
#if !defined(IFACE_F08) && !defined(IFACE_MPI)
  include 'mpif.h'
#endif
#if defined(IFACE_F08)
  character(len=*), parameter :: iface = 'mpi_f08'
  type(MPI_Status) :: st
#else
  integer :: st(MPI_STATUS_SIZE)
#  if defined(IFACE_MPI)
  character(len=*), parameter :: iface = 'mpi'
#  else
  character(len=*), parameter :: iface = 'mpif.h'
#  endif
#endif
  integer, parameter :: warmup = 20000, iters = 20000, blocks = 15
  integer :: ierr, rank, peer, i, b
  double precision :: buf, t0, t1

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank
  buf = 1d0
  do b = 0, blocks
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    t0 = MPI_WTIME()
    do i = 1, merge(warmup, iters, b == 0)
      if (rank == 0) then
        call MPI_SEND(buf, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
        call MPI_RECV(buf, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, st, ierr)
      else
        call MPI_RECV(buf, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, st, ierr)
        call MPI_SEND(buf, 1, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
      end if
    end do
    t1 = MPI_WTIME()
    if (rank == 0 .and. b > 0) print '(A,1X,I0,1X,F10.4)', iface, b, (t1 - t0) * 1d6 / (2 * iters)
  end do
  call MPI_FINALIZE(ierr)
end program latency
