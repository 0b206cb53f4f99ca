! f77_attributes.f90 -- what MPI calls back the Fortran way through mpif.h,
! and the addresses it hands out:
!   - attribute copy/delete functions written in Fortran, for communicators
!     (INTEGER(KIND=MPI_ADDRESS_KIND) values and MPI-1's INTEGER ones),
!     datatypes and windows: a dup calls copy with the value and the
!     keyval's extra_state, its result is what the copy reads; every free
!     calls delete with the value it holds; a copy that fails makes the dup
!     fail with its code;
!   - the predefined MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, MPI_DUP_FN...;
!   - a generalized request whose query sets the status, whose free runs
!     once and sees the program's extra_state variable;
!   - MPI_ALLOC_MEM's address, written through and freed;
!   - MPI-1's INTEGER MPI_TYPE_HVECTOR, MPI_TYPE_STRUCT,
!     MPI_TYPE_EXTENT;
!   - MPI_SESSION_GET_NTH_PSET's length asked with 0, then the name.
! Prints "f77_attributes: ok" on each rank.
module f77_attributes_state
  implicit none
  include 'mpif.h'
  integer :: copies = 0, deletes = 0, last_deleted = 0, extra_seen = 0
  integer :: queries = 0, frees = 0
end module f77_attributes_state

subroutine double_copy(old, keyval, extra, valin, valout, flag, ierr)
  use f77_attributes_state
  implicit none
  integer :: old, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  copies = copies + 1
  extra_seen = int(extra)
  valout = 2 * valin
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine double_copy

subroutine count_delete(obj, keyval, val, extra, ierr)
  use f77_attributes_state
  implicit none
  integer :: obj, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  deletes = deletes + 1
  last_deleted = int(val)
  ierr = MPI_SUCCESS
end subroutine count_delete

subroutine failing_copy(old, keyval, extra, valin, valout, flag, ierr)
  use f77_attributes_state
  implicit none
  integer :: old, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  flag = .false.
  ierr = MPI_ERR_OTHER
end subroutine failing_copy

subroutine int_delete(comm, keyval, val, extra, ierr) ! MPI-1: INTEGER values
  use f77_attributes_state
  implicit none
  integer :: comm, keyval, val, extra, ierr
  deletes = deletes + 1
  last_deleted = val + extra
  ierr = MPI_SUCCESS
end subroutine int_delete

subroutine query_fn(extra, status, ierr)
  use f77_attributes_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  queries = queries + 1
  status(MPI_SOURCE) = 3
  status(MPI_TAG) = int(extra)
  call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, 5, ierr)
  call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
  ierr = MPI_SUCCESS
end subroutine query_fn

subroutine free_fn(extra, ierr)
  use f77_attributes_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  frees = frees + 1
  extra = extra + 1000
  ierr = MPI_SUCCESS
end subroutine free_fn

subroutine cancel_fn(extra, complete, ierr)
  implicit none
  integer(kind=8) :: extra
  logical :: complete
  integer :: ierr
  ierr = 0
end subroutine cancel_fn

program f77_attributes
  use f77_attributes_state
  use, intrinsic :: iso_c_binding
  implicit none
  character(len=*), parameter :: prog = 'f77_attributes'
  external double_copy, count_delete, failing_copy, int_delete
  external query_fn, free_fn, cancel_fn
  integer :: ierr, rank, comm, dup, dup2, key, key2, key3, ikey, tkey, t, t2, win, wkey
  integer :: req, st(MPI_STATUS_SIZE), n, ext, hv, sty, session, plen
  integer :: blens(2), disps(2), types(2), ival
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, base, wsize
  logical :: flag
  integer, pointer :: mem(:)
  integer :: pair(2)
  character(len=32) :: pset

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)

  ! -- communicator keyvals with Fortran functions
  call MPI_COMM_CREATE_KEYVAL(double_copy, count_delete, key, 77_MPI_ADDRESS_KIND, ierr)
  call check(ierr == MPI_SUCCESS, 'comm_create_keyval')
  val = 21 + rank
  call MPI_COMM_SET_ATTR(comm, key, val, ierr)
  call MPI_COMM_DUP(comm, dup, ierr)
  call check(ierr == MPI_SUCCESS .and. copies == 1 .and. extra_seen == 77, 'copy called')
  val = 0
  call MPI_COMM_GET_ATTR(dup, key, val, flag, ierr)
  call check(flag .and. val == 2 * (21 + rank), 'copied value doubled')
  call MPI_COMM_GET_ATTR(comm, key, val, flag, ierr)
  call check(flag .and. val == 21 + rank, 'own value kept')
  call MPI_COMM_FREE(dup, ierr)
  call check(deletes == 1 .and. last_deleted == 2 * (21 + rank), 'delete of the copy')
  val = 5
  call MPI_COMM_SET_ATTR(comm, key, val, ierr) ! replacing deletes the old value
  call check(deletes == 2 .and. last_deleted == 21 + rank, 'delete on replace')
  call MPI_COMM_DELETE_ATTR(comm, key, ierr)
  call check(deletes == 3 .and. last_deleted == 5, 'delete_attr')
  call MPI_COMM_GET_ATTR(comm, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'attribute gone')
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'free_keyval')

  ! -- a copy function that fails makes the dup fail with its code
  call MPI_COMM_SET_ERRHANDLER(comm, MPI_ERRORS_RETURN, ierr)
  call MPI_COMM_CREATE_KEYVAL(failing_copy, MPI_COMM_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND, &
                              ierr)
  call MPI_COMM_SET_ATTR(comm, key, 1_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_DUP(comm, dup, ierr)
  call check(ierr /= MPI_SUCCESS .and. dup == MPI_COMM_NULL, 'failing copy fails the dup')
  call MPI_COMM_DELETE_ATTR(comm, key, ierr)
  call MPI_COMM_FREE_KEYVAL(key, ierr)

  ! -- the predefined functions
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_KEYVAL_CREATE(MPI_DUP_FN, int_delete, ikey, 1000, ierr)
  call MPI_KEYVAL_CREATE(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, key3, 0, ierr)
  call MPI_COMM_SET_ATTR(comm, key, 1234567890123_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(comm, key2, 8_MPI_ADDRESS_KIND, ierr)
  call MPI_ATTR_PUT(comm, ikey, 9 + rank, ierr)
  call MPI_ATTR_PUT(comm, key3, 10, ierr)
  call MPI_COMM_DUP(comm, dup2, ierr)
  call MPI_COMM_GET_ATTR(dup2, key, val, flag, ierr)
  call check(flag .and. val == 1234567890123_MPI_ADDRESS_KIND, 'MPI_COMM_DUP_FN')
  call MPI_COMM_GET_ATTR(dup2, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_ATTR_GET(dup2, ikey, ival, flag, ierr)
  call check(flag .and. ival == 9 + rank, 'MPI_DUP_FN (INTEGER)')
  call MPI_ATTR_GET(dup2, key3, ival, flag, ierr)
  call check(.not. flag, 'MPI_NULL_COPY_FN')
  deletes = 0
  call MPI_COMM_FREE(dup2, ierr)
  call check(deletes == 1 .and. last_deleted == 1009 + rank, 'INTEGER delete and extra_state')
  call MPI_ATTR_DELETE(comm, ikey, ierr)
  call MPI_KEYVAL_FREE(ikey, ierr)
  call MPI_KEYVAL_FREE(key3, ierr)
  call MPI_COMM_FREE_KEYVAL(key, ierr)
  call MPI_COMM_FREE_KEYVAL(key2, ierr)

  ! -- datatypes and windows
  copies = 0
  deletes = 0
  call MPI_TYPE_CREATE_KEYVAL(double_copy, count_delete, tkey, 3_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, t, ierr)
  call MPI_TYPE_SET_ATTR(t, tkey, 50_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_DUP(t, t2, ierr)
  call MPI_TYPE_GET_ATTR(t2, tkey, val, flag, ierr)
  call check(flag .and. val == 100 .and. copies == 1 .and. extra_seen == 3, 'type keyval')
  call MPI_TYPE_FREE(t2, ierr)
  call MPI_TYPE_FREE(t, ierr)
  call check(deletes == 2, 'type attributes deleted')
  call MPI_TYPE_FREE_KEYVAL(tkey, ierr)

  call MPI_WIN_CREATE_KEYVAL(MPI_WIN_NULL_COPY_FN, count_delete, wkey, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_CREATE(pair, 8_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, comm, win, ierr)
  call MPI_WIN_SET_ATTR(win, wkey, 31_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_GET_ATTR(win, wkey, val, flag, ierr)
  call check(flag .and. val == 31, 'win attribute')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, wsize, flag, ierr)
  call check(flag .and. wsize == 8, 'MPI_WIN_SIZE')
  deletes = 0
  call MPI_WIN_FREE(win, ierr)
  call check(deletes == 1 .and. last_deleted == 31, 'win attribute deleted')
  call MPI_WIN_FREE_KEYVAL(wkey, ierr)

  ! -- a generalized request
  extra = 42
  call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call check(ierr == MPI_SUCCESS, 'grequest_start')
  call MPI_TEST(req, flag, st, ierr)
  call check(.not. flag, 'grequest not complete yet')
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_WAIT(req, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, n, ierr)
  call check(req == MPI_REQUEST_NULL .and. st(MPI_TAG) == 42 .and. st(MPI_SOURCE) == 3 &
             .and. n == 5 .and. queries >= 1, 'grequest status from query_fn')
  call check(frees == 1 .and. extra == 1042, 'grequest free_fn once, on our variable')

  ! -- MPI_ALLOC_MEM hands out an address
  call MPI_ALLOC_MEM(40_MPI_ADDRESS_KIND, MPI_INFO_NULL, base, ierr)
  call check(ierr == MPI_SUCCESS .and. base /= 0, 'alloc_mem')
  call c_f_pointer(transfer(base, c_null_ptr), mem, (/ 10 /))
  mem = rank
  call check(sum(mem) == 10 * rank, 'alloc_mem memory')
  call MPI_FREE_MEM(mem, ierr)
  call check(ierr == MPI_SUCCESS, 'free_mem')

  ! -- MPI-1's INTEGER addresses
  call MPI_TYPE_HVECTOR(3, 1, 12, MPI_INTEGER, hv, ierr)
  call MPI_TYPE_EXTENT(hv, ext, ierr)
  call check(ierr == MPI_SUCCESS .and. ext == 28, 'MPI_TYPE_HVECTOR extent')
  blens = (/ 1, 1 /)
  disps = (/ 0, 8 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_TYPE_STRUCT(2, blens, disps, types, sty, ierr)
  call MPI_TYPE_EXTENT(sty, ext, ierr)
  call check(ierr == MPI_SUCCESS .and. ext == 16, 'MPI_TYPE_STRUCT extent')
  call MPI_TYPE_FREE(hv, ierr)
  call MPI_TYPE_FREE(sty, ierr)

  ! -- a process set's name: its length first
  call MPI_SESSION_INIT(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  plen = 0
  call MPI_SESSION_GET_NTH_PSET(session, MPI_INFO_NULL, 0, plen, pset, ierr)
  call check(ierr == MPI_SUCCESS .and. plen == len('mpi://WORLD'), 'pset length')
  pset = 'x'
  call MPI_SESSION_GET_NTH_PSET(session, MPI_INFO_NULL, 0, plen, pset, ierr)
  call check(pset == 'mpi://WORLD', 'pset name: ' // pset)
  call MPI_SESSION_FINALIZE(session, ierr)

  call MPI_COMM_FREE(comm, ierr)
  print '(A,A)', prog, ': ok'
  call MPI_FINALIZE(ierr)
contains
  include 'check.inc'
end program f77_attributes
