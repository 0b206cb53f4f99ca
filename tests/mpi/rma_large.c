/*
 * rma_large.c — MPI-4.0 large-count one-sided calls (src/mpi/rma/win.c,
 * rma_ops.c): MPI_Win_create_c, MPI_Win_allocate_c,
 * MPI_Win_allocate_shared_c, MPI_Win_shared_query_c (MPI_Aint units), and
 * MPI_Put_c, MPI_Get_c, MPI_Accumulate_c, MPI_Get_accumulate_c with their
 * request-based R* forms (MPI_Count counts).
 *
 * On each flavor every rank writes its right neighbour's window and reads
 * its left one's through the _c calls, in a fence epoch and, request-based,
 * in a lock_all epoch: a contiguous put at an odd displacement, a strided
 * get (vector target type), sums and fetches of long long. Displacements
 * are counted in units of 24 bytes (three long long), so a unit read at the
 * wrong width or ignored shows. The int queries of a unit an int cannot
 * hold (MPI_Win_shared_query, the MPI_WIN_DISP_UNIT attribute) read
 * MPI_UNDEFINED, the _c query the unit itself, and operations on such a
 * window reach byte 0 and nothing past the window. Errors: negative counts,
 * counts whose bytes overflow, NULL requests, units that are not positive.
 * With the argument `big` (2 ranks): one MPI_Put_c and one MPI_Get_c of
 * INT_MAX + 4099 bytes, checked at sampled positions.
 */
#include <limits.h>
#include <unistd.h>

#include "rma_util.h"

#define UNIT ((MPI_Aint)(3 * sizeof(long long)))
#define SLOTS 64 /* window: SLOTS units of 3 long long */
#define NLL (3 * SLOTS)

static int rank, size, right, left;

static long long value(int r, int i) { return (long long)r * 1000003 + i * 7 + 1; }

/* Every rank's window holds value(rank, i) at long long i before each run. */
static void reset(long long *mem, MPI_Win win)
{
    rma_local_begin(win, rank);
    for (int i = 0; i < NLL; i++)
        mem[i] = value(rank, i);
    rma_local_end(win, rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Fence epoch: put 5 values at unit 3 of the right neighbour, get every
 * third value of units 10-13 of the left one, add 1..4 into unit 20 of the
 * right one, fetch-and-add at unit 30 of the right one. */
static void fence_ops(long long *mem, MPI_Win win, const char *flavor)
{
    reset(mem, win);
    MPI_Datatype every_third;
    MPI_CHECK(MPI_Type_vector(4, 1, 3, MPI_LONG_LONG, &every_third));
    MPI_CHECK(MPI_Type_commit(&every_third));
    long long out[5], got[4], add[4] = {1, 2, 3, 4}, fetched[3], inc[3] = {10, 20, 30};
    for (int i = 0; i < 5; i++)
        out[i] = -value(rank, i);
    memset(got, 0, sizeof got);
    memset(fetched, 0, sizeof fetched);
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Put_c(out, 5, MPI_LONG_LONG, right, 3, 5, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Get_c(got, 4, MPI_LONG_LONG, left, 10, 1, every_third, win));
    MPI_CHECK(MPI_Accumulate_c(add, 4, MPI_LONG_LONG, right, 20, 4, MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Get_accumulate_c(inc, 3, MPI_LONG_LONG, fetched, 3, MPI_LONG_LONG, right, 30,
                                   3, MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == value(left, 30 + 3 * i), "%s: get_c [%d] = %lld, expected %lld", flavor,
              i, got[i], value(left, 30 + 3 * i));
    for (int i = 0; i < 3; i++)
        CHECK(fetched[i] == value(right, 90 + i), "%s: get_accumulate_c fetched [%d] = %lld",
              flavor, i, fetched[i]);
    rma_local_begin(win, rank);
    for (int i = 0; i < NLL; i++) {
        long long want = value(rank, i);
        if (i >= 9 && i < 14)
            want = -value(left, i - 9);
        else if (i >= 60 && i < 64)
            want += i - 59;
        else if (i >= 90 && i < 93)
            want += 10 * (i - 89);
        CHECK(mem[i] == want, "%s: after the fence epoch [%d] = %lld, expected %lld", flavor, i,
              mem[i], want);
    }
    rma_local_end(win, rank);
    MPI_CHECK(MPI_Type_free(&every_third));
}

/* The same through the R* forms in a lock_all epoch, all in flight at once. */
static void request_ops(long long *mem, MPI_Win win, const char *flavor)
{
    reset(mem, win);
    long long out[2] = {-1, -2}, got[3] = {0}, add[2] = {5, 6}, fetched[2] = {0}, inc[2] = {7, 8};
    MPI_Request r[4];
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Rput_c(out, 2, MPI_LONG_LONG, right, 7, 2, MPI_LONG_LONG, win, &r[0]));
    MPI_CHECK(MPI_Rget_c(got, 3, MPI_LONG_LONG, left, 40, 3, MPI_LONG_LONG, win, &r[1]));
    MPI_CHECK(MPI_Raccumulate_c(add, 2, MPI_LONG_LONG, right, 50, 2, MPI_LONG_LONG, MPI_SUM, win,
                                &r[2]));
    MPI_CHECK(MPI_Rget_accumulate_c(inc, 2, MPI_LONG_LONG, fetched, 2, MPI_LONG_LONG, right, 55,
                                    2, MPI_LONG_LONG, MPI_SUM, win, &r[3]));
    MPI_CHECK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++)
        CHECK(got[i] == value(left, 120 + i), "%s: rget_c [%d] = %lld", flavor, i, got[i]);
    for (int i = 0; i < 2; i++)
        CHECK(fetched[i] == value(right, 165 + i), "%s: rget_accumulate_c fetched [%d] = %lld",
              flavor, i, fetched[i]);
    rma_local_begin(win, rank);
    for (int i = 0; i < NLL; i++) {
        long long want = value(rank, i);
        if (i == 21 || i == 22)
            want = -(i - 20);
        else if (i == 150 || i == 151)
            want += 5 + (i - 150);
        else if (i == 165 || i == 166)
            want += 7 + (i - 165);
        CHECK(mem[i] == want, "%s: after the lock_all epoch [%d] = %lld, expected %lld", flavor,
              i, mem[i], want);
    }
    rma_local_end(win, rank);
}

static void check_unit_attr(MPI_Win win, int expect, const char *flavor)
{
    int *unit = NULL, flag = 0;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == expect, "%s: MPI_WIN_DISP_UNIT reads %d, expected %d", flavor,
          flag ? *unit : -1, expect);
}

static void flavors(void)
{
    MPI_Win win;
    long long *mem = malloc(NLL * sizeof *mem);
    CHECK(mem, "out of memory");
    MPI_CHECK(MPI_Win_create_c(mem, NLL * sizeof *mem, UNIT, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_unit_attr(win, (int)UNIT, "create_c");
    fence_ops(mem, win, "create_c");
    request_ops(mem, win, "create_c");
    MPI_CHECK(MPI_Win_free(&win));
    free(mem);

    MPI_CHECK(MPI_Win_allocate_c(NLL * sizeof *mem, UNIT, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                 &win));
    fence_ops(mem, win, "allocate_c");
    request_ops(mem, win, "allocate_c");
    MPI_CHECK(MPI_Win_free(&win));

    MPI_CHECK(MPI_Win_allocate_shared_c(NLL * sizeof *mem, UNIT, MPI_INFO_NULL, MPI_COMM_WORLD,
                                        &mem, &win));
    MPI_Aint qsize = 0, qunit = 0;
    int iunit = 0;
    void *qbase = NULL;
    MPI_CHECK(MPI_Win_shared_query_c(win, right, &qsize, &qunit, &qbase));
    CHECK(qsize == NLL * (MPI_Aint)sizeof *mem && qunit == UNIT && qbase,
          "shared_query_c: size %td unit %td base %p", qsize, qunit, qbase);
    MPI_CHECK(MPI_Win_shared_query(win, right, &qsize, &iunit, &qbase));
    CHECK(iunit == (int)UNIT, "shared_query: unit %d", iunit);
    fence_ops(mem, win, "allocate_shared_c");
    request_ops(mem, win, "allocate_shared_c");
    MPI_CHECK(MPI_Win_free(&win));
}

/* A displacement unit an int cannot hold: queries and range. */
static void wide_unit(void)
{
    const MPI_Aint wide = (MPI_Aint)INT_MAX + 9;
    long long *mem;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate_shared_c(64, wide, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint qsize = 0, qunit = 0;
    int iunit = 0;
    void *qbase = NULL;
    MPI_CHECK(MPI_Win_shared_query_c(win, rank, &qsize, &qunit, &qbase));
    CHECK(qunit == wide && qsize == 64 && qbase == mem, "shared_query_c: unit %td, size %td",
          qunit, qsize);
    MPI_CHECK(MPI_Win_shared_query(win, rank, &qsize, &iunit, &qbase));
    CHECK(iunit == MPI_UNDEFINED, "shared_query of a unit past INT_MAX: %d, expected "
          "MPI_UNDEFINED", iunit);
    check_unit_attr(win, MPI_UNDEFINED, "allocate_shared_c (wide unit)");
    rma_local_begin(win, rank);
    mem[0] = value(rank, 0);
    rma_local_end(win, rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    long long got = 0, one = 1;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Get_c(&got, 1, MPI_LONG_LONG, left, 0, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush(left, win));
    CHECK(got == value(left, 0), "get_c at displacement 0 of a wide unit: %lld", got);
    /* one unit further is past the 64-byte window, and 2^40 units past any */
    EXPECT_CLASS(MPI_Put_c(&one, 1, MPI_LONG_LONG, left, 1, 1, MPI_LONG_LONG, win),
                 MPI_ERR_RMA_RANGE);
    EXPECT_CLASS(MPI_Put_c(&one, 1, MPI_LONG_LONG, left, (MPI_Aint)1 << 40, 1, MPI_LONG_LONG, win),
                 MPI_ERR_RMA_RANGE);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));
}

static void errors(void)
{
    long long buf[4] = {0};
    MPI_Win win;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Win_create_c(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                 MPI_ERR_DISP);
    EXPECT_CLASS(MPI_Win_allocate_c(64, -8, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win),
                 MPI_ERR_DISP);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Win_create_c(buf, sizeof buf, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Count huge = (MPI_Count)1 << 62; /* times 8 bytes: past the address space */
    MPI_Request r;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    EXPECT_CLASS(MPI_Put_c(buf, -1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Get_c(buf, 1, MPI_LONG_LONG, right, 0, -3, MPI_LONG_LONG, win),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Put_c(buf, huge, MPI_LONG_LONG, right, 0, huge, MPI_LONG_LONG, win),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Accumulate_c(buf, 1, MPI_LONG_LONG, right, 0, huge, MPI_LONG_LONG, MPI_SUM,
                                  win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Get_accumulate_c(buf, 1, MPI_LONG_LONG, buf + 1, huge, MPI_LONG_LONG, right,
                                      0, 1, MPI_LONG_LONG, MPI_SUM, win), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Rput_c(buf, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, NULL),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Rget_c(buf, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, win, NULL),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Raccumulate_c(buf, -1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_SUM,
                                   win, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Rget_accumulate_c(buf, 1, MPI_LONG_LONG, buf + 1, 1, MPI_LONG_LONG, right, 0,
                                       1, MPI_LONG_LONG, MPI_SUM, win, NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));
}

/* One put and one get of more than INT_MAX bytes (2 ranks, several GiB). */
static void big_transfer(void)
{
    MPI_Count n = (MPI_Count)INT_MAX + 4099;
    if (!mt_all_have_memory(3.0 * (double)n * size)) {
        if (rank == 0)
            printf("rma_large: big transfers skipped (not enough free memory)\n");
        return;
    }
    unsigned char *mem, *buf = malloc((size_t)n);
    CHECK(buf, "cannot allocate %lld bytes", n);
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate_c((MPI_Aint)n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    /* rank 0 puts buf into rank 1's zeroed window, then rank 1 gets
     * rank 0's window (another pattern) */
    for (MPI_Count i = 0; i < n; i += 4096) {
        buf[i] = mt_byte(11, (size_t)i);
        mem[i] = rank == 0 ? mt_byte(21, (size_t)i) : 0;
    }
    buf[n - 1] = 0x50;
    mem[n - 1] = rank == 0 ? 0x77 : 0;
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 0)
        MPI_CHECK(MPI_Put_c(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 1) {
        for (MPI_Count i = 0; i < n; i += 4096)
            CHECK(mem[i] == mt_byte(11, (size_t)i), "big put_c: byte %lld", i);
        CHECK(mem[n - 1] == 0x50, "big put_c: the last byte");
        memset(buf, 0, (size_t)n);
        MPI_CHECK(MPI_Get_c(buf, n, MPI_BYTE, 0, 0, n, MPI_BYTE, win));
    }
    MPI_CHECK(MPI_Win_fence(0, win));
    if (rank == 1) {
        for (MPI_Count i = 0; i < n; i += 4096)
            CHECK(buf[i] == mt_byte(21, (size_t)i), "big get_c: byte %lld", i);
        CHECK(buf[n - 1] == 0x77, "big get_c: the last byte");
    }
    MPI_CHECK(MPI_Win_free(&win));
    free(buf);
    if (rank == 0)
        printf("rma_large: one MPI_Put_c and one MPI_Get_c of %lld bytes\n", n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = rma_right(rank, size);
    left = rma_left(rank, size);
    rma_watchdog("rma_large", 240);
    if (argc > 1 && strcmp(argv[1], "big") == 0) {
        if (size == 2)
            big_transfer();
        MPI_Finalize();
        return 0;
    }
    flavors();
    wide_unit();
    errors();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_large: every _c one-sided call checked on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
