/*
 * rma_errors.c — error classes of one-sided calls (MPI-3.1 8.4, 11.2-11.5)
 * under MPI_ERRORS_RETURN on the window, and window error handlers.
 *
 * A new window's handler is MPI_ERRORS_ARE_FATAL (not the communicator's).
 * Arguments, in an epoch: a target rank out of range (MPI_ERR_RANK), a
 * target range past the end of the target's window, computed with its
 * disp_unit and the target datatype's extent (MPI_ERR_RMA_RANGE; a range
 * that just fits is fine), negative counts (MPI_ERR_COUNT), a null or
 * uncommitted datatype (MPI_ERR_TYPE), a user-defined or null operation in
 * accumulate calls, or a predefined one not defined for the type
 * (MPI_ERR_OP), compare_and_swap of a floating type and fetch_and_op of a
 * derived type (MPI_ERR_TYPE). Synchronisation: any operation outside an
 * epoch, unlock / flush of a rank not locked, a second lock of one rank,
 * unlock_all without lock_all, complete without start, wait without post, a
 * request-based operation in a fence epoch, an operation after a lock that
 * ended a fence's epoch, a lock inside an access epoch of MPI_Win_start,
 * MPI_Win_free with a lock held
 * (MPI_ERR_RMA_SYNC); a bad lock type (MPI_ERR_LOCKTYPE). Flavors:
 * MPI_Win_shared_query of a dynamic window or MPI_Win_attach on a window of
 * another flavor (MPI_ERR_RMA_FLAVOR), MPI_Win_shared_query of a rank
 * outside the window (MPI_ERR_RANK); on a created window it answers the
 * caller's own memory and size 0 for the others (MPI-4.1). Attributes: setting or deleting a predefined one, using a
 * communicator keyval (MPI_ERR_KEYVAL). MPI_NO_OP in MPI_Accumulate
 * (MPI_ERR_OP). Creation: negative size, zero disp_unit, null
 * communicator. An invalid window (MPI_WIN_NULL, a freed one, another kind
 * of handle) gives MPI_ERR_WIN on MPI_COMM_WORLD's handler. The window stays
 * usable after each error. A handler made with MPI_Win_create_errhandler
 * is called with the window and the code, which the call returns; also
 * through MPI_Win_call_errhandler, and after its handle is freed.
 */
#include "rma_util.h"

enum { WN = 64 };
static int rank, size;
static int buf[WN];

static int calls, last_code;
static MPI_Win last_win;
static void win_handler(MPI_Win *win, int *code, ...)
{
    calls++;
    last_win = *win;
    last_code = *code;
}

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

static void test_creation(void)
{
    MPI_Win w = MPI_WIN_NULL;
    void *p = NULL;
    EXPECT_CLASS2(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_SIZE,
                  MPI_ERR_ARG);
    EXPECT_CLASS2(MPI_Win_create(buf, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &w), MPI_ERR_DISP,
                  MPI_ERR_ARG);
    EXPECT_CLASS2(MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &w), MPI_ERR_SIZE,
                  MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &w), MPI_ERR_COMM);
    CHECK(w == MPI_WIN_NULL, "a failed creation returned a window");
}

/* Errors of the arguments of the communication calls, in an epoch. */
static void test_arguments(MPI_Win win)
{
    int x[4] = {1, 2, 3, 4}, r[4];
    double d = 1.0, dr, dc = 0;
    struct {
        double v;
        int i;
    } di = {1.0, 0};
    MPI_Datatype loose, two;
    MPI_Op uop;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &loose)); /* never committed */
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &two));
    MPI_CHECK(MPI_Type_commit(&two));
    MPI_CHECK(MPI_Op_create(user_op, 1, &uop));
    int last = size - 1;

    MPI_CHECK(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPI_Put(x, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Put(x, 1, MPI_INT, -7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Get(r, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Accumulate(x, 1, MPI_INT, size, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Fetch_and_op(x, r, MPI_INT, size, 0, MPI_SUM, win), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Win_flush(size, win), MPI_ERR_RANK);

    /* The windows hold WN ints with disp_unit sizeof(int). */
    EXPECT_CLASS(MPI_Put(x, 1, MPI_INT, last, WN, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPI_Put(x, 2, MPI_INT, last, WN - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPI_Get(r, 4, MPI_INT, 0, WN - 3, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPI_Get(r, 2, MPI_INT, 0, WN - 1, 1, two, win), MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPI_Accumulate(x, 1, MPI_INT, last, WN, 1, MPI_INT, MPI_SUM, win),
                 MPI_ERR_RMA_RANGE);
    EXPECT_CLASS2(MPI_Put(x, 1, MPI_INT, last, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE,
                  MPI_ERR_DISP);
    MPI_CHECK(MPI_Get(r, 1, MPI_INT, last, WN - 1, 1, MPI_INT, win)); /* the last int: fine */
    MPI_CHECK(MPI_Win_flush(last, win));

    /* counts whose bytes wrap around 64 bits (a window of shared memory
     * copies them itself: its fast paths check them too) */
    MPI_Count huge = (MPI_Count)1 << 62;
    EXPECT_CLASS(MPI_Put_c(x, huge, MPI_LONG_LONG, last, 0, huge, MPI_LONG_LONG, win),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Get_c(r, huge, MPI_LONG_LONG, last, 0, huge, MPI_LONG_LONG, win),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Accumulate_c(x, huge, MPI_LONG_LONG, last, 0, huge, MPI_LONG_LONG, MPI_SUM,
                                  win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Put(x, -1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Put(x, 1, MPI_INT, 0, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Get(r, -2, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Accumulate(x, -1, MPI_INT, 0, 0, -1, MPI_INT, MPI_SUM, win), MPI_ERR_COUNT);

    EXPECT_CLASS(MPI_Put(x, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Put(x, 1, MPI_INT, 0, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Get(r, 1, loose, 0, 0, 2, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Put(x, 2, MPI_INT, 0, 0, 1, loose, win), MPI_ERR_TYPE);

    EXPECT_CLASS(MPI_Accumulate(x, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Accumulate(x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Accumulate(&di, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_SUM, win),
                 MPI_ERR_OP);
    EXPECT_CLASS(MPI_Get_accumulate(x, 1, MPI_INT, r, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win),
                 MPI_ERR_OP);
    EXPECT_CLASS(MPI_Fetch_and_op(x, r, MPI_INT, 0, 0, uop, win), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Accumulate(x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, 0, 0, win), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Fetch_and_op(x, r, two, 0, 0, MPI_SUM, win), MPI_ERR_TYPE);

    /* Still usable: a put, flushed, read back. */
    int v = 4242 + rank, got = -1;
    if (rank == 0)
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, last, 5, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Get(&got, 1, MPI_INT, last, 5, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(last, win));
    CHECK(got == 4242, "the window after the errors: %d", got);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Type_free(&loose));
    MPI_CHECK(MPI_Type_free(&two));
    MPI_CHECK(MPI_Op_free(&uop));
}

/* Synchronisation errors. */
static void test_sync(MPI_Win win)
{
    int x = 1, r = 0, other = size > 1 ? 1 : 0;
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Group self;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_SELF, &self));
    /* No epoch at all. */
    EXPECT_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE);
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);

    /* A lock on rank 0: a second lock of it, unlock / flush of another. */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    if (size > 1) {
        EXPECT_CLASS(MPI_Win_unlock(other, win), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Win_flush(other, win), MPI_ERR_RMA_SYNC);
        EXPECT_CLASS(MPI_Put(&x, 1, MPI_INT, other, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    }
    MPI_CHECK(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    EXPECT_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC); /* unlocked twice */

    /* Request-based operations belong to passive target epochs only. */
    MPI_CHECK(MPI_Win_fence(0, win));
    EXPECT_CLASS(MPI_Rput(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &q), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Rget(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &q), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(q == MPI_REQUEST_NULL, "a failed Rput or Rget returned a request");

    /* A lock after a fence ends the fence's epoch (as in MPICH's suite):
     * operations after the unlock have none. */
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
    MPI_CHECK(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    EXPECT_CLASS(MPI_Get(&r, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    EXPECT_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* PSCW: no lock inside an access epoch; complete after start works, a
     * second complete does not. */
    MPI_CHECK(MPI_Win_post(self, 0, win));
    MPI_CHECK(MPI_Win_start(self, 0, win));
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_complete(win));
    MPI_CHECK(MPI_Win_wait(win));
    EXPECT_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Group_free(&self));
}

static void test_flavors(MPI_Win win)
{
    MPI_Aint sz;
    int du;
    void *p;
    int other[4];
    /* MPI-4.1: any window but a dynamic one; only the caller's own memory
     * is reachable */
    for (int r = 0; r < size; r++) {
        MPI_CHECK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(r == rank ? p == (void *)buf && sz == (MPI_Aint)sizeof buf && du == (int)sizeof(int)
                        : p == NULL && sz == 0,
              "shared_query of rank %d on a created window: %p %ld %d", r, p, (long)sz, du);
    }
    EXPECT_CLASS(MPI_Win_shared_query(win, size, &sz, &du, &p), MPI_ERR_RANK);
    MPI_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p)); /* rank 0's */
    CHECK(rank == 0 ? p == (void *)buf && sz == (MPI_Aint)sizeof buf : p == NULL && sz == 0,
          "shared_query of MPI_PROC_NULL on a created window: %p %ld", p, (long)sz);
    EXPECT_CLASS(MPI_Win_attach(win, other, sizeof other), MPI_ERR_RMA_FLAVOR);
    MPI_Win dyn;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    MPI_CHECK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Win_shared_query(dyn, 0, &sz, &du, &p), MPI_ERR_RMA_FLAVOR);
    /* nothing attached: the target refuses a get (a short reply) and a put
     * (counted for its next ack); the flush reports each */
    int r1 = -1, v = 7;
    MPI_Aint nowhere;
    MPI_CHECK(MPI_Get_address(&v, &nowhere));
    MPI_CHECK(MPI_Win_lock_all(0, dyn));
    MPI_CHECK(MPI_Get(&r1, 1, MPI_INT, 0, nowhere, 1, MPI_INT, dyn));
    EXPECT_CLASS(MPI_Win_flush(0, dyn), MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Win_flush(0, dyn)); /* reported once */
    MPI_CHECK(MPI_Put(&v, 1, MPI_INT, 0, nowhere, 1, MPI_INT, dyn));
    EXPECT_CLASS(MPI_Win_flush(0, dyn), MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Win_unlock_all(dyn));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&dyn));
}

/* Predefined attributes are read-only; a communicator keyval is not a
 * window keyval; MPI_Win_shared_query of a rank outside the window. */
static void test_attr_errors(MPI_Win win)
{
    int ckey, v = 0;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    EXPECT_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, &v), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Win_set_attr(win, ckey, &v), MPI_ERR_KEYVAL);
    MPI_CHECK(MPI_Comm_free_keyval(&ckey));
    MPI_Win sh;
    int *p = NULL, du = 0, *q = NULL;
    MPI_Aint sz = 0;
    MPI_CHECK(MPI_Win_allocate_shared(16, 4, MPI_INFO_NULL, MPI_COMM_SELF, &p, &sh));
    MPI_CHECK(MPI_Win_set_errhandler(sh, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Win_shared_query(sh, 1, &sz, &du, &q), MPI_ERR_RANK);
    MPI_CHECK(MPI_Win_shared_query(sh, 0, &sz, &du, &q));
    CHECK(sz == 16 && du == 4 && q == p, "shared_query on MPI_COMM_SELF: %ld %d", (long)sz, du);
    MPI_CHECK(MPI_Win_free(&sh));
}

static void test_invalid_window(MPI_Win stale)
{
    int x = 0;
    MPI_Win null = MPI_WIN_NULL;
    EXPECT_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, stale), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_set_errhandler(stale, MPI_ERRORS_RETURN), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_free(&null), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_free(&stale), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_fence(0, (MPI_Win)MPI_COMM_WORLD), MPI_ERR_WIN);
    EXPECT_CLASS(MPI_Win_fence(0, (MPI_Win)12345), MPI_ERR_WIN);
}

static void test_user_handler(MPI_Win win)
{
    MPI_Errhandler eh, got;
    int x = 0;
    MPI_CHECK(MPI_Win_create_errhandler(win_handler, &eh));
    MPI_CHECK(MPI_Win_set_errhandler(win, eh));
    MPI_CHECK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh, "MPI_Win_get_errhandler returned %#x, set %#x", (unsigned)got, (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Errhandler_free(&eh)); /* still in force on the window */
    calls = 0;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    int rc = MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_CHECK(MPI_Win_unlock_all(win));
    CHECK(calls == 1 && last_win == win && class_of(last_code) == MPI_ERR_RANK && rc == last_code,
          "user handler: %d calls, window %#x (want %#x), code %d class %d, call returned %d",
          calls, (unsigned)last_win, (unsigned)win, last_code, class_of(last_code), rc);
    rc = MPI_Win_lock(777, 0, 0, win);
    CHECK(calls == 2 && class_of(last_code) == MPI_ERR_LOCKTYPE && rc == last_code,
          "user handler on a bad lock type: %d calls, class %d", calls, class_of(last_code));
    MPI_CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(calls == 3 && last_code == MPI_ERR_OTHER && last_win == win,
          "MPI_Win_call_errhandler: %d calls, code %d", calls, last_code);
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    rma_watchdog("rma_errors", 60);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_creation();

    MPI_Win win;
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Win_create(buf, WN * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a new window's error handler is %#x, not "
          "MPI_ERRORS_ARE_FATAL", (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    test_arguments(win);
    test_sync(win);
    test_flavors(win);
    test_attr_errors(win);
    test_user_handler(win);
    /* the same argument errors on a window of MPI_Win_allocate (within a
     * host: shared memory, operations done by the origin) */
    MPI_Win aw;
    int *abuf;
    MPI_CHECK(MPI_Win_allocate(WN * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &abuf, &aw));
    MPI_CHECK(MPI_Win_set_errhandler(aw, MPI_ERRORS_RETURN));
    test_arguments(aw);
    MPI_CHECK(MPI_Win_free(&aw));

    /* MPI_Win_free with a lock_all epoch open, on every rank alike. */
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_Win keep = win;
    EXPECT_CLASS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK(win == keep, "a failed MPI_Win_free changed the handle");
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free left %#x", (unsigned)win);
    test_invalid_window(keep);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
