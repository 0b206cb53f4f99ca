! f77_more.f90 -- more of mpif.h's conventions, each checked:
!   - logicals out (MPI_Iprobe's flag, MPI_Test's, MPI_Initialized) and in
!     (MPI_Cart_create's periods and reorder), read back by MPI_Cart_get;
!   - Testsome's indices (1-based) with their statuses;
!   - a derived datatype (MPI_Type_vector) built, committed, used, freed;
!   - strings out: MPI_Error_string, MPI_Get_library_version;
!   - MPI_Type_size, MPI_Get_elements through an in-status;
!   - attributes read: MPI_TAG_UB (MPI_Comm_get_attr, MPI_Attr_get), a
!     window's base, size and displacement unit (MPI_Win_get_attr);
!   - a receive leaves its status's MPI_ERROR as it was (MPI 3.2.5);
!   - info keys and values lose leading and trailing blanks; a key not
!     there leaves the value argument as it was; MPI_Info_get_string's
!     buflen counts characters;
!   - distributed graphs with weights and with MPI_UNWEIGHTED.
! Prints "f77_more: ok" on each rank.
program f77_more
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: prog = 'f77_more'
  integer :: ierr, rank, nprocs, right, left, i, outcount, vec, sz, n, cart
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 3), reqs(3), idx(3)
  integer :: dims(1), coords(1), grid(12), got(12), vals(3)
  logical :: flag, periods(1), periods_out(1), inited
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  integer(kind=MPI_ADDRESS_KIND) :: aval, addr, wsize
  integer :: ival, win, warr(10), info
  character(len=20) :: ival_s
  integer :: dg, srcs(1), dsts(1), sw(1), dw(1), indeg, outdeg
  logical :: weighted

  call MPI_INITIALIZED(inited, ierr)
  call check(.not. inited, 'not initialized before MPI_Init')
  call MPI_INIT(ierr)
  call MPI_INITIALIZED(inited, ierr)
  call check(inited, 'initialized after MPI_Init')
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  ! a periodic ring as a Cartesian communicator: logicals in and out
  dims(1) = nprocs
  periods(1) = .true.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call check(ierr == MPI_SUCCESS, 'cart_create')
  call MPI_CART_GET(cart, 1, dims, periods_out, coords, ierr)
  call check(periods_out(1) .and. dims(1) == nprocs .and. coords(1) == rank, 'cart_get')
  call MPI_COMM_FREE(cart, ierr)

  ! Iprobe's flag, then Testsome's 1-based indices
  call MPI_SEND(rank, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_IPROBE(left, 5, MPI_COMM_WORLD, flag, status, ierr)
  end do
  call check(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 5, 'iprobe status')
  call MPI_RECV(n, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, status, ierr)
  call check(n == left, 'probed message')
  reqs(1) = MPI_REQUEST_NULL
  call MPI_IRECV(vals(2), 1, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(2), ierr)
  reqs(3) = MPI_REQUEST_NULL
  call MPI_SEND(rank + 100, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_TESTSOME(3, reqs, outcount, idx, statuses, ierr)
  end do
  call check(outcount == 1 .and. idx(1) == 2, 'testsome index is 1-based')
  call check(statuses(MPI_SOURCE, 1) == left .and. vals(2) == left + 100, 'testsome status')
  call MPI_TEST(reqs(2), flag, status, ierr)
  call check(flag, 'test of a null request')

  ! a vector type: every other integer of 12
  call MPI_TYPE_VECTOR(6, 1, 2, MPI_INTEGER, vec, ierr)
  call MPI_TYPE_COMMIT(vec, ierr)
  call MPI_TYPE_SIZE(vec, sz, ierr)
  call check(sz == 24, 'vector size')
  do i = 1, 12
    grid(i) = rank * 100 + i
    got(i) = -1
  end do
  call MPI_SENDRECV(grid, 1, vec, right, 7, got, 1, vec, left, 7, MPI_COMM_WORLD, status, ierr)
  do i = 1, 12, 2
    call check(got(i) == left * 100 + i, 'vector element')
    call check(got(i + 1) == -1, 'vector gap untouched')
  end do
  call MPI_GET_ELEMENTS(status, MPI_INTEGER, n, ierr)
  call check(n == 6, 'get_elements through an in-status')
  call MPI_TYPE_FREE(vec, ierr)
  call check(vec == MPI_DATATYPE_NULL, 'type_free')

  ! strings out
  msg = ''
  call MPI_ERROR_STRING(MPI_ERR_TRUNCATE, msg, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n > 0 .and. len_trim(msg) == n, 'error string')
  call MPI_GET_LIBRARY_VERSION(version, n, ierr)
  call check(index(version, 'Proust') > 0 .and. n == len_trim(version), 'library version')

  ! attributes
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval >= 32767, 'MPI_TAG_UB by comm_get_attr')
  call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  call check(flag .and. ival == aval, 'MPI_TAG_UB by attr_get')
  wsize = 40
  call MPI_WIN_CREATE(warr, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(ierr == MPI_SUCCESS, 'win_create')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, aval, flag, ierr)
  call check(flag .and. aval == 40, 'MPI_WIN_SIZE')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, aval, flag, ierr)
  call check(flag .and. aval == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_BASE, aval, flag, ierr)
  call MPI_GET_ADDRESS(warr, addr, ierr)
  call check(flag .and. aval == addr, 'MPI_WIN_BASE is the array''s address')
  call MPI_WIN_FREE(win, ierr)

  ! a single completion does not set MPI_ERROR
  status(MPI_ERROR) = MPI_ERR_DIMS
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, right, 13, n, 1, MPI_INTEGER, left, 13, &
                    MPI_COMM_WORLD, status, ierr)
  call check(status(MPI_ERROR) == MPI_ERR_DIMS .and. status(MPI_SOURCE) == left, &
             'MPI_ERROR left alone')

  ! info strings
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, '  padded key  ', '  a value ', ierr)
  ival_s = 'unchanged'
  call MPI_INFO_GET(info, 'padded key', 20, ival_s, flag, ierr)
  call check(flag .and. ival_s == 'a value', 'info key and value without their blanks')
  ival_s = 'unchanged'
  call MPI_INFO_GET(info, 'nothing', 20, ival_s, flag, ierr)
  call check(.not. flag .and. ival_s == 'unchanged', 'a key not found leaves the value')
  call MPI_INFO_GET_NTHKEY(info, 0, ival_s, ierr)
  call check(ival_s == 'padded key', 'info_get_nthkey')
  ! MPI_Info_get_string: buflen counts characters (no terminator)
  ival_s = 'unchanged'
  n = 0
  call MPI_INFO_GET_STRING(info, 'padded key', n, ival_s, flag, ierr)
  call check(flag .and. n == 7 .and. ival_s == 'unchanged', 'info_get_string, buflen 0')
  n = 3
  call MPI_INFO_GET_STRING(info, 'padded key', n, ival_s, flag, ierr)
  call check(flag .and. n == 7 .and. ival_s == 'a v', 'info_get_string, 3 characters')
  call MPI_INFO_FREE(info, ierr)

  ! distributed graphs: a ring with weights, then without
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, (/ left /), (/ 10 + left /), 1, &
                                      (/ right /), (/ 10 + rank /), MPI_INFO_NULL, .false., &
                                      dg, ierr)
  call check(ierr == MPI_SUCCESS, 'dist_graph_create_adjacent, weighted')
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, indeg, outdeg, weighted, ierr)
  call check(indeg == 1 .and. outdeg == 1 .and. weighted, 'weighted neighbours count')
  call MPI_DIST_GRAPH_NEIGHBORS(dg, 1, srcs, sw, 1, dsts, dw, ierr)
  call check(srcs(1) == left .and. sw(1) == 10 + left .and. dw(1) == 10 + rank, &
             'neighbours and their weights')
  call MPI_COMM_FREE(dg, ierr)
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, (/ left /), MPI_UNWEIGHTED, 1, &
                                      (/ right /), MPI_UNWEIGHTED, MPI_INFO_NULL, .false., &
                                      dg, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, indeg, outdeg, weighted, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. weighted, 'MPI_UNWEIGHTED')
  call MPI_COMM_FREE(dg, ierr)

  call MPI_FINALIZE(ierr)
  print '(A)', 'f77_more: ok'

contains

  include 'check.inc'

end program f77_more
