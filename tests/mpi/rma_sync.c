/*
 * rma_sync.c — synchronisation and window objects (MPI-3.1 11.2, 11.5).
 *
 * General active target (post / start / complete / wait) with the ring
 * neighbours as groups: puts both ways and a get in one epoch, completed by
 * MPI_Win_wait, then by an MPI_Win_test loop, then with MPI_MODE_NOCHECK on
 * both sides after a barrier; a star (rank 0 exposed to all others).
 * MPI_Win_lock(MPI_LOCK_EXCLUSIVE) on rank 0: a get / increment / put of a
 * counter and an "owner" word, never two holders at once (nor a shared
 * holder with an exclusive one), exact total; on a window of user memory
 * and on one of MPI_Win_allocate (shared memory within a host: the lock
 * words taken by the origins). A window on a reordered
 * sub-communicator: ranks of the window's group, PSCW groups of processes.
 * lock_all with MPI_Win_flush_local (origin buffer reusable at once),
 * flush_local_all, flush_all and flush (remote completion: a third process,
 * or the target told by a message, sees the data), MPI_Win_sync between
 * local stores and remote gets. Fences with MPI_MODE_NOPRECEDE, NOSTORE,
 * NOPUT and NOSUCCEED. MPI_PROC_NULL as target of every operation: success,
 * nothing touched. MPI_Win_allocate_shared with rank-dependent sizes and
 * displacement units (rank 0 of two or more: size 0): MPI_Win_shared_query
 * for every rank and MPI_PROC_NULL, contiguous segments, loads and stores in
 * the neighbour's segment. MPI_Win_get_group, the predefined attributes of
 * each flavor (dynamic: MPI_BOTTOM and size 0), user keyvals with a delete
 * callback (replace, delete, at MPI_Win_free, keyval freed while in use),
 * names, info, c2f / f2c.
 * --expect-nic (windows across hosts, or over PROUST_RAILS=self,ofi with
 * PROUST_RMA_NIC=on): the locks must have been taken by the NIC's atomics
 * on the targets' lock words (proust_rma_counts), not granted by messages.
 */
#include <stdbool.h>
#include <string.h>

#include "proust.h"
#include "rma_util.h"

static int rank, size, right, left;
static MPI_Group world_group;

static int code(int r, int i) { return r * 1000 + i + 1; }

/* A window of n ints (disp_unit sizeof(int)) on user memory. */
static MPI_Win int_window(int **mem, int n)
{
    MPI_Win win;
    *mem = calloc((size_t)n, sizeof(int));
    CHECK(*mem != NULL, "calloc");
    MPI_CHECK(MPI_Win_create(*mem, n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    return win;
}

static void check_group(MPI_Win win, MPI_Comm comm)
{
    MPI_Group wg, cg;
    int result = -1;
    MPI_CHECK(MPI_Win_get_group(win, &wg));
    MPI_CHECK(MPI_Comm_group(comm, &cg));
    MPI_CHECK(MPI_Group_compare(wg, cg, &result));
    CHECK(result == MPI_IDENT, "MPI_Win_get_group: compare with the communicator's: %d", result);
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Group_free(&cg));
}

/* ---- post / start / complete / wait --------------------------------------- */
static MPI_Group neighbours(void)
{
    int ranks[2] = {left, right}, n = left == right ? 1 : 2;
    MPI_Group g;
    MPI_CHECK(MPI_Group_incl(world_group, n, ranks, &g));
    return g;
}

/* mode 0: MPI_Win_wait, 1: MPI_Win_test loop, 2: MPI_MODE_NOCHECK. */
static void pscw_ring(MPI_Win win, int *w, int round, int mode)
{
    MPI_Group nb = neighbours();
    for (int i = 0; i < 4; i++)
        w[i] = -1;
    w[2] = code(rank, 10 + round); /* read by the left neighbour */
    int v1 = code(rank, 20 + round), v2 = code(rank, 30 + round), g = -5;
    int assert = mode == 2 ? MPI_MODE_NOCHECK : 0;
    MPI_CHECK(MPI_Win_post(nb, assert, win));
    if (mode == 2) /* NOCHECK: every post is done before any start */
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_start(nb, assert, win));
    MPI_CHECK(MPI_Put(&v1, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Put(&v2, 1, MPI_INT, left, 1, 1, MPI_INT, win));
    MPI_CHECK(MPI_Get(&g, 1, MPI_INT, right, 2, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_complete(win));
    CHECK(g == code(right, 10 + round), "PSCW get (round %d): %d", round, g);
    if (mode == 1) {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Win_test(win, &flag));
    } else {
        MPI_CHECK(MPI_Win_wait(win));
    }
    CHECK(w[0] == code(left, 20 + round) && w[1] == code(right, 30 + round) && w[3] == -1,
          "PSCW round %d (mode %d): window %d %d %d", round, mode, w[0], w[1], w[3]);
    MPI_CHECK(MPI_Group_free(&nb));
}

static void test_pscw(void)
{
    int *w;
    MPI_Win win = int_window(&w, 64);
    for (int round = 0; round < 6; round++)
        pscw_ring(win, w, round, round % 3);
    /* Star: rank 0 exposes its window to every other rank. */
    if (size > 1) {
        MPI_Group g;
        if (rank == 0) {
            int excl = 0;
            MPI_CHECK(MPI_Group_excl(world_group, 1, &excl, &g));
            MPI_CHECK(MPI_Win_post(g, 0, win));
            MPI_CHECK(MPI_Win_wait(win));
            for (int r = 1; r < size && r < 56; r++)
                CHECK(w[8 + r] == code(r, 40), "star: slot of rank %d is %d", r, w[8 + r]);
        } else {
            int zero = 0, v = code(rank, 40);
            MPI_CHECK(MPI_Group_incl(world_group, 1, &zero, &g));
            MPI_CHECK(MPI_Win_start(g, 0, win));
            if (rank < 56)
                MPI_CHECK(MPI_Put(&v, 1, MPI_INT, 0, 8 + rank, 1, MPI_INT, win));
            MPI_CHECK(MPI_Win_complete(win));
        }
        MPI_CHECK(MPI_Group_free(&g));
    }
    MPI_CHECK(MPI_Win_free(&win));
    free(w);
}

/* ---- exclusive lock --------------------------------------------------------- */
static void test_exclusive(bool allocated)
{
    enum { ITERS = 40 };
    int *w;
    MPI_Win win; /* counter, owner */
    if (allocated) { /* within a host: shared memory, locks taken by the origins */
        MPI_CHECK(MPI_Win_allocate(2 * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &w, &win));
        w[0] = w[1] = 0;
        MPI_CHECK(MPI_Win_sync(win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        win = int_window(&w, 2);
    }
    int id = rank + 1, zero = 0;
    for (int it = 0; it < ITERS; it++) {
        int cur[2] = {-1, -1};
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_CHECK(MPI_Get(cur, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(cur[1] == 0, "exclusive lock: rank %d holds it too", cur[1] - 1);
        int next[2] = {cur[0] + 1, id};
        MPI_CHECK(MPI_Put(next, 2, MPI_INT, 0, 0, 2, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        usleep(50); /* held a while: another holder would see the owner word */
        MPI_CHECK(MPI_Put(&zero, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_unlock(0, win));
        /* A shared lock never overlaps an exclusive one: no owner inside
         * (asked a little later, when another rank may hold it). */
        usleep(10);
        int owner = -1;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_CHECK(MPI_Get(&owner, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_unlock(0, win));
        CHECK(owner == 0, "shared lock granted while rank %d holds the exclusive one", owner - 1);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        rma_local_begin(win, 0);
        CHECK(w[0] == size * ITERS && w[1] == 0, "exclusive increments: %d (want %d), owner %d",
              w[0], size * ITERS, w[1]);
        rma_local_end(win, 0);
    }
    MPI_CHECK(MPI_Win_free(&win));
    if (!allocated)
        free(w);
}

/* A window on a sub-communicator in reverse order: target ranks are ranks
 * of the window's group, and PSCW groups (built from MPI_COMM_WORLD's
 * group) name processes, whatever their rank in the window. */
static void test_subcomm(void)
{
    MPI_Comm sub;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &sub));
    int sr, ss, *w;
    MPI_CHECK(MPI_Comm_rank(sub, &sr));
    MPI_CHECK(MPI_Comm_size(sub, &ss));
    int sright = rma_right(sr, ss), sleft = rma_left(sr, ss);
    int wr[2] = {-1, -1}; /* world ranks of my sub-neighbours */
    MPI_Group sg;
    MPI_CHECK(MPI_Comm_group(sub, &sg));
    int in[2] = {sright, sleft};
    MPI_CHECK(MPI_Group_translate_ranks(sg, 2, in, world_group, wr));
    MPI_CHECK(MPI_Group_free(&sg));
    w = calloc(4, sizeof(int));
    CHECK(w != NULL, "calloc");
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(w, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, sub, &win));
    check_group(win, sub);
    MPI_Group nb;
    int members[2] = {wr[0], wr[1]};
    MPI_CHECK(MPI_Group_incl(world_group, wr[0] == wr[1] ? 1 : 2, members, &nb));
    int v = code(rank, 500);
    MPI_CHECK(MPI_Win_post(nb, 0, win));
    MPI_CHECK(MPI_Win_start(nb, 0, win));
    MPI_CHECK(MPI_Put(&v, 1, MPI_INT, sright, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_complete(win));
    MPI_CHECK(MPI_Win_wait(win));
    CHECK(w[0] == code(wr[1], 500), "window on a sub-communicator: got %d, want world rank %d's",
          w[0], wr[1]);
    MPI_CHECK(MPI_Group_free(&nb));
    MPI_CHECK(MPI_Barrier(sub)); /* every exposure epoch is over before the locks */
    int g = -1;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Get(&g, 1, MPI_INT, sleft, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    int lefts_left = -1, in2 = rma_left(sleft, ss);
    MPI_CHECK(MPI_Comm_group(sub, &sg));
    MPI_CHECK(MPI_Group_translate_ranks(sg, 1, &in2, world_group, &lefts_left));
    MPI_CHECK(MPI_Group_free(&sg));
    CHECK(g == code(lefts_left, 500), "get on a sub-communicator window: %d", g);
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&sub));
    free(w);
}

/* ---- lock_all, flushes, Win_sync --------------------------------------------- */
enum { SA = 0, SB = 64, SC = 128, SD = 192, SN = 256 };

static void test_lock_all_flush(void)
{
    int *w;
    MPI_Win win = int_window(&w, SN);
    int n = size < 64 ? size : 64, buf, val[64], c = code(rank, 300);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    w[SD] = code(rank, 77); /* a local store made visible by Win_sync */
    MPI_CHECK(MPI_Win_sync(win));
    for (int t = 0; t < n; t++) {
        buf = code(rank, t);
        MPI_CHECK(MPI_Put(&buf, 1, MPI_INT, t, SA + rank % 64, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush_local(t, win));
        buf = -999; /* the put must not see this */
    }
    for (int t = 0; t < n; t++) {
        val[t] = code(rank, 100 + t);
        MPI_CHECK(MPI_Put(&val[t], 1, MPI_INT, t, SB + rank % 64, 1, MPI_INT, win));
    }
    MPI_CHECK(MPI_Win_flush_local_all(win));
    for (int t = 0; t < n; t++)
        val[t] = -998;
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_sync(win));
    for (int r = 0; r < n; r++)
        CHECK(w[SA + r] == code(r, rank) && w[SB + r] == code(r, 100 + rank),
              "lock_all: slots of rank %d hold %d and %d", r, w[SA + r], w[SB + r]);
    /* A third process sees what flush_all completed; my left neighbour's
     * local store is visible after its Win_sync and the barrier. */
    int third = -1, stored = -1, far = rma_right(right, size);
    MPI_CHECK(MPI_Get(&third, 1, MPI_INT, right, SA + far % 64, 1, MPI_INT, win));
    MPI_CHECK(MPI_Get(&stored, 1, MPI_INT, left, SD, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush_all(win));
    CHECK(far >= 64 || third == code(far, right), "third party: %d", third);
    CHECK(stored == code(left, 77), "local store after MPI_Win_sync, read remotely: %d", stored);
    /* flush(t), then a message to t: the data is there when it arrives. */
    MPI_CHECK(MPI_Put(&c, 1, MPI_INT, right, SC, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    int token = 0;
    MPI_CHECK(MPI_Sendrecv(&c, 1, MPI_INT, right, 4, &token, 1, MPI_INT, left, 4, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_sync(win));
    CHECK(token == code(left, 300) && w[SC] == token, "after flush and a message: %d (token %d)",
          w[SC], token);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));
    free(w);
}

/* ---- fence assertions, MPI_PROC_NULL --------------------------------------- */
static void test_fence_asserts(void)
{
    int *w;
    MPI_Win win = int_window(&w, 8);
    int v = code(rank, 200), g = -1;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
    CHECK(w[0] == code(left, 200), "put before a NOSTORE fence: %d", w[0]);
    w[1] = code(rank, 201);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPUT, win));
    MPI_CHECK(MPI_Get(&g, 1, MPI_INT, left, 1, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE, win));
    CHECK(g == code(left, 201), "get in a NOPUT epoch: %d", g);
    MPI_CHECK(MPI_Win_free(&win));
    free(w);
}

static void proc_null_ops(MPI_Win win, int with_requests)
{
    int x = 5, y = 123, r = 77, cmp = 0;
    MPI_CHECK(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Get(&y, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    MPI_CHECK(MPI_Accumulate(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Get_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT,
                                 MPI_SUM, win));
    MPI_CHECK(MPI_Fetch_and_op(&x, &r, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, win));
    MPI_CHECK(MPI_Compare_and_swap(&x, &cmp, &r, MPI_INT, MPI_PROC_NULL, 0, win));
    if (with_requests) {
        MPI_Request q[4];
        MPI_CHECK(MPI_Rput(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &q[0]));
        MPI_CHECK(MPI_Rget(&y, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &q[1]));
        MPI_CHECK(MPI_Raccumulate(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, win,
                                  &q[2]));
        MPI_CHECK(MPI_Rget_accumulate(&x, 1, MPI_INT, &r, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT,
                                      MPI_SUM, win, &q[3]));
        MPI_CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(q[i] == MPI_REQUEST_NULL, "request %d to MPI_PROC_NULL not freed", i);
    }
    CHECK(x == 5 && y == 123 && r == 77, "an operation on MPI_PROC_NULL changed a buffer: %d %d %d",
          x, y, r);
}

static void test_proc_null(void)
{
    int *w;
    MPI_Win win = int_window(&w, 4);
    MPI_CHECK(MPI_Win_fence(0, win));
    proc_null_ops(win, 0);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    proc_null_ops(win, 1);
    MPI_CHECK(MPI_Win_unlock_all(win));
    CHECK(w[0] == 0 && w[1] == 0, "MPI_PROC_NULL operations reached a window: %d %d", w[0], w[1]);
    MPI_CHECK(MPI_Win_free(&win));
    free(w);
}

/* ---- attributes, group, names, info ------------------------------------------ */
static void check_attrs(MPI_Win win, const char *what, void *base, MPI_Aint bytes, int du,
                        int flavor, int check_mem)
{
    void *b = NULL;
    MPI_Aint *sz = NULL;
    int *d = NULL, *fl = NULL, *model = NULL, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &f1));
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &f2));
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &d, &f3));
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &f4));
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &f5));
    CHECK(f1 && f2 && f3 && f4 && f5, "%s: predefined attribute missing: %d %d %d %d %d", what, f1,
          f2, f3, f4, f5);
    CHECK(*fl == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, want %d", what, *fl, flavor);
    CHECK(*model == MPI_WIN_SEPARATE || *model == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d", what,
          *model);
    if (check_mem)
        CHECK(b == base && *sz == bytes && *d == du,
              "%s: MPI_WIN_BASE %p (want %p), MPI_WIN_SIZE %ld (want %ld), DISP_UNIT %d (want %d)",
              what, b, base, (long)*sz, (long)bytes, *d, du);
}

static int del_calls, extra_marker;
static MPI_Win del_win;
static void *del_val;
static int del_fn(MPI_Win win, int key, void *val, void *extra)
{
    (void)key;
    CHECK(extra == &extra_marker, "delete callback: extra_state %p", extra);
    del_calls++;
    del_win = win;
    del_val = val;
    return MPI_SUCCESS;
}

static void test_objects(void)
{
    static int v1, v2, v3, v4;
    char mem[100];
    MPI_Win win, dyn, alloc;
    void *abase = NULL;
    MPI_CHECK(MPI_Win_create(mem, 100, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_allocate(24 * (rank + 1), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &abase, &alloc));
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    check_attrs(win, "MPI_Win_create", mem, 100, 4, MPI_WIN_FLAVOR_CREATE, 1);
    check_attrs(alloc, "MPI_Win_allocate", abase, 24 * (rank + 1), 8, MPI_WIN_FLAVOR_ALLOCATE, 1);
    check_attrs(dyn, "MPI_Win_create_dynamic", MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, 1);
    check_group(win, MPI_COMM_WORLD);
    check_group(dyn, MPI_COMM_WORLD);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(alloc)) == alloc, "MPI_Win_f2c(MPI_Win_c2f(w)) != w");

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == 0, "default window name \"%s\" (%d)", name, len);
    MPI_CHECK(MPI_Win_set_name(win, "rma sync window"));
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 15 && strcmp(name, "rma sync window") == 0, "window name \"%s\" (%d)", name, len);

    /* Hints: the defaults, then what set_info changes; unknown keys are
     * ignored (as in MPICH). */
    MPI_Info info = MPI_INFO_NULL, hint;
    char val[MPI_MAX_INFO_VAL];
    int found = 0;
    MPI_CHECK(MPI_Win_get_info(alloc, &info));
    CHECK(info != MPI_INFO_NULL, "MPI_Win_get_info returned MPI_INFO_NULL");
    MPI_CHECK(MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &found));
    CHECK(found && strcmp(val, "rar,raw,war,waw") == 0, "default accumulate_ordering %s",
          found ? val : "(unset)");
    MPI_CHECK(MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL - 1, val, &found));
    CHECK(found && strcmp(val, "false") == 0, "default no_locks %s", found ? val : "(unset)");
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Info_create(&hint));
    MPI_CHECK(MPI_Info_set(hint, "proust_test_unknown_hint", "1"));
    MPI_CHECK(MPI_Info_set(hint, "accumulate_ops", "same_op"));
    MPI_CHECK(MPI_Win_set_info(alloc, hint));
    MPI_CHECK(MPI_Info_free(&hint));
    MPI_CHECK(MPI_Win_get_info(alloc, &info));
    MPI_CHECK(MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL - 1, val, &found));
    CHECK(found && strcmp(val, "same_op") == 0, "accumulate_ops after set_info: %s",
          found ? val : "(unset)");
    MPI_CHECK(MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &found));
    CHECK(found && strcmp(val, "rar,raw,war,waw") == 0, "accumulate_ordering after set_info %s",
          found ? val : "(unset)");
    MPI_CHECK(MPI_Info_get(info, "proust_test_unknown_hint", MPI_MAX_INFO_VAL - 1, val, &found));
    CHECK(!found, "an unknown hint is reported");
    MPI_CHECK(MPI_Info_free(&info));

    /* User keyvals. */
    int key, key2, flag = 0;
    void *got = NULL;
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, &extra_marker));
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key2, &extra_marker));
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "an attribute never set is found");
    MPI_CHECK(MPI_Win_set_attr(win, key, &v1));
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &v1 && del_calls == 0, "get_attr: flag %d, value %p", flag, got);
    MPI_CHECK(MPI_Win_set_attr(win, key, &v2));
    CHECK(del_calls == 1 && del_val == &v1 && del_win == win,
          "replacing an attribute: %d delete calls, value %p", del_calls, del_val);
    MPI_CHECK(MPI_Win_delete_attr(win, key));
    CHECK(del_calls == 2 && del_val == &v2, "MPI_Win_delete_attr: %d delete calls", del_calls);
    MPI_CHECK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(!flag, "a deleted attribute is found");
    MPI_CHECK(MPI_Win_set_attr(win, key, &v3));
    MPI_CHECK(MPI_Win_set_attr(alloc, key2, &v4));
    MPI_CHECK(MPI_Win_free_keyval(&key2)); /* still in use by alloc */
    CHECK(key2 == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval left %d", key2);
    MPI_Win h = win;
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
    CHECK(del_calls == 3 && del_val == &v3 && del_win == h,
          "MPI_Win_free: %d delete calls, value %p, window %d (want %d)", del_calls, del_val,
          (int)del_win, (int)h);
    h = alloc;
    MPI_CHECK(MPI_Win_free(&alloc));
    CHECK(del_calls == 4 && del_val == &v4 && del_win == h,
          "MPI_Win_free after MPI_Win_free_keyval: %d delete calls", del_calls);
    MPI_CHECK(MPI_Win_free_keyval(&key));
    MPI_CHECK(MPI_Win_free(&dyn));
}

/* ---- shared memory windows ------------------------------------------------------ */
static void test_shared(void)
{
    MPI_Comm node;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nr, ns;
    MPI_CHECK(MPI_Comm_rank(node, &nr));
    MPI_CHECK(MPI_Comm_size(node, &ns));
#define SEG(r) ((r) == 0 && ns > 1 ? 0 : ((MPI_Aint)(r) + 1) * 64)
#define DU(r) ((r) % 2 ? 8 : 4)
    int *base = NULL;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate_shared(SEG(nr), DU(nr), MPI_INFO_NULL, node, &base, &win));
    check_attrs(win, "MPI_Win_allocate_shared", base, SEG(nr), DU(nr), MPI_WIN_FLAVOR_SHARED,
                SEG(nr) > 0);
    check_group(win, node);
    int **seg = malloc(sizeof(int *) * (size_t)ns);
    CHECK(seg != NULL, "malloc");
    char *prev_end = NULL;
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        MPI_CHECK(MPI_Win_shared_query(win, r, &sz, &du, &seg[r]));
        CHECK(sz == SEG(r) && du == DU(r), "shared_query(%d): size %ld (want %ld), disp_unit %d",
              r, (long)sz, (long)SEG(r), du);
        if (sz == 0)
            continue;
        CHECK(prev_end == NULL || (char *)seg[r] == prev_end,
              "segment of rank %d at %p, not contiguous with the one before (ends at %p)", r,
              (void *)seg[r], (void *)prev_end);
        prev_end = (char *)seg[r] + sz;
    }
    CHECK(SEG(nr) == 0 || seg[nr] == base, "shared_query of my rank: %p, base %p", (void *)seg[nr],
          (void *)base);
    MPI_Aint sz = -1;
    int du = -1, *first = NULL, lo = ns > 1 ? 1 : 0;
    MPI_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &first));
    CHECK(sz == SEG(lo) && du == DU(lo) && first == seg[lo],
          "shared_query(MPI_PROC_NULL): size %ld, disp_unit %d, not rank %d's segment", (long)sz,
          du, lo);

    /* Ring over the ranks with memory: store in mine, load the next's,
     * store into the next's last int, RMA put into its third (byte 8, in
     * units of the target's disp_unit). */
    int has = SEG(nr) > 0, next = nr, prev = nr;
    do next = (next + 1) % ns; while (SEG(next) == 0);
    do prev = (prev + ns - 1) % ns; while (SEG(prev) == 0);
    int cnt = (int)(SEG(nr) / 4), ncnt = (int)(SEG(next) / 4), v = code(nr, 600);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; has && i < cnt; i++)
        base[i] = code(nr, i);
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(node));
    MPI_CHECK(MPI_Win_sync(win));
    for (int i = 0; has && i < ncnt; i++)
        CHECK(seg[next][i] == code(next, i), "load from rank %d's segment, int %d: %d", next, i,
              seg[next][i]);
    MPI_CHECK(MPI_Barrier(node)); /* everyone has read before anyone writes */
    if (has) {
        seg[next][ncnt - 1] = -code(nr, 1);
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, next, 8 / DU(next), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(next, win));
    }
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(node));
    MPI_CHECK(MPI_Win_sync(win));
    if (has) {
        CHECK(base[cnt - 1] == -code(prev, 1), "store by rank %d into my segment: %d", prev,
              base[cnt - 1]);
        CHECK(base[2] == code(prev, 600), "put by rank %d into my shared segment: %d", prev,
              base[2]);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&node));
    free(seg);
#undef SEG
#undef DU
}

int main(int argc, char **argv)
{
    rma_watchdog("rma_sync", 80);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    right = rma_right(rank, size);
    left = rma_left(rank, size);
    test_pscw();
    proust_rma_counts_t before, after;
    proust_rma_counts(&before);
    test_exclusive(false);
    proust_rma_counts(&after);
    if (argc > 1 && strcmp(argv[1], "--expect-nic") == 0)
        CHECK(after.atomics > before.atomics, "no lock taken by the NIC's atomics (%llu)",
              (unsigned long long)(after.atomics - before.atomics));
    test_exclusive(true);
    test_subcomm();
    test_lock_all_flush();
    test_fence_asserts();
    test_proc_null();
    test_objects();
    test_shared();
    MPI_CHECK(MPI_Group_free(&world_group));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
