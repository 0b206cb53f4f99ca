/*
 * env_session.c — the MPI-4 Sessions Model. Argument "only": a process
 * that never calls MPI_Init opens two sessions at once, reads their
 * process sets, builds communicators from mpi://WORLD and mpi://SELF
 * with MPI_Comm_create_from_group (two string tags at once) and
 * reduces on them, joins even and odd ranks with
 * MPI_Intercomm_create_from_groups; closes both, then opens a session again (the instance
 * outlives its last session). Argument "mixed": a session opened before
 * MPI_Init keeps working after MPI_Finalize, until its own finalize.
 * Errors: unknown process sets, bad handles and lengths, a user session
 * handler called with the session.
 */
#include <stdbool.h>
#include <string.h>

#include "mpitest.h"

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void on_session_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

/* A communicator over process set `pset` of session s, checked by a sum. */
static MPI_Comm comm_from(MPI_Session s, const char *pset, const char *tag, int expect_size)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_CHECK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_CHECK(MPI_Group_free(&g));
    int n = -1, r = -1, sum = -1;
    MPI_CHECK(MPI_Comm_size(c, &n));
    MPI_CHECK(MPI_Comm_rank(c, &r));
    CHECK(n == expect_size, "%s: size %d, expected %d", pset, n, expect_size);
    MPI_CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "%s: sum of ranks %d", pset, sum);
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the communicator lost the handler given");
    MPI_CHECK(MPI_Errhandler_free(&eh));
    return c;
}

static int world_size(MPI_Session s)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    MPI_CHECK(MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "no mpi_size in the info of mpi://WORLD");
    MPI_CHECK(MPI_Info_free(&info));
    return atoi(v);
}

static void psets(MPI_Session s)
{
    int n = 0;
    MPI_CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    int found = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        char name[MPI_MAX_PSET_NAME_LEN];
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        int got = len;
        MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, name));
        CHECK((int)strlen(name) == len - 1, "pset %d: \"%s\" is not %d long", i, name, len - 1);
        found += !strcmp(name, "mpi://WORLD") + !strcmp(name, "mpi://SELF");
        char small[4];
        got = 4;
        MPI_CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, small));
        CHECK(strlen(small) == 3 && !strncmp(small, name, 3), "pset %d truncated: \"%s\"", i,
              small);
    }
    CHECK(found == 2, "mpi://WORLD and mpi://SELF not both listed");
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    MPI_CHECK(MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && atoi(v) == 1, "mpi://SELF: mpi_size %s", flag ? v : "missing");
    MPI_CHECK(MPI_Info_free(&info));
}

static void errors(MPI_Session s)
{
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Session_create_errhandler(on_session_error, &eh));
    MPI_CHECK(MPI_Session_set_errhandler(s, eh));
    MPI_CHECK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "Session_get_errhandler gave %#x, not %#x", (unsigned)got, (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_session == s && g == MPI_GROUP_NULL,
          "unknown process set: rc %d, handler called %d times", rc, handler_calls);
    int len = 0;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, NULL);
    CHECK(rc != MPI_SUCCESS && handler_calls == 2, "pset 99: rc %d", rc);
    MPI_CHECK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 3 && handler_code == MPI_ERR_OTHER, "call_errhandler: %d calls",
          handler_calls);
    /* a communicator handler is refused on a session, and the other way */
    MPI_Errhandler ceh;
    MPI_CHECK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)on_session_error,
                                         &ceh));
    rc = MPI_Session_set_errhandler(s, ceh);
    CHECK(rc != MPI_SUCCESS && handler_calls == 4, "a communicator handler set on a session");
    MPI_CHECK(MPI_Errhandler_free(&ceh));
    MPI_CHECK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    rc = MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    CHECK(rc != MPI_SUCCESS && c == MPI_COMM_NULL, "a NULL string tag was accepted");
    MPI_CHECK(MPI_Group_free(&g));
}

/* Even and odd world ranks, joined by MPI_Intercomm_create_from_groups;
 * each side's leader is its highest rank. */
static void intercomm(MPI_Session s, int r, int n)
{
    MPI_Group world, even, odd;
    MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    int ne = (n + 1) / 2, no = n / 2, ranks[64];
    for (int i = 0; i < ne; i++)
        ranks[i] = 2 * i;
    MPI_CHECK(MPI_Group_incl(world, ne, ranks, &even));
    for (int i = 0; i < no; i++)
        ranks[i] = 2 * i + 1;
    MPI_CHECK(MPI_Group_incl(world, no, ranks, &odd));
    bool mine_even = r % 2 == 0;
    MPI_Comm ic;
    MPI_CHECK(MPI_Intercomm_create_from_groups(mine_even ? even : odd, (mine_even ? ne : no) - 1,
                                               mine_even ? odd : even, (mine_even ? no : ne) - 1,
                                               "org.proust.test.inter", MPI_INFO_NULL,
                                               MPI_ERRORS_RETURN, &ic));
    int inter = 0, rsize = -1, lrank = -1;
    MPI_CHECK(MPI_Comm_test_inter(ic, &inter));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rsize));
    MPI_CHECK(MPI_Comm_rank(ic, &lrank));
    CHECK(inter && rsize == (mine_even ? no : ne) && lrank == r / 2,
          "intercommunicator: inter %d remote size %d rank %d", inter, rsize, lrank);
    /* rank i of each side swaps with rank i of the other, where it exists */
    if (lrank < no) {
        int got = -1;
        MPI_CHECK(MPI_Sendrecv(&r, 1, MPI_INT, lrank, 3, &got, 1, MPI_INT, lrank, 3, ic,
                               MPI_STATUS_IGNORE));
        CHECK(got == (mine_even ? r + 1 : r - 1), "across the intercommunicator: got %d", got);
    }
    MPI_Comm merged;
    int mrank = -1;
    MPI_CHECK(MPI_Intercomm_merge(ic, !mine_even, &merged));
    MPI_CHECK(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == (mine_even ? r / 2 : ne + r / 2), "merged rank %d", mrank);
    MPI_CHECK(MPI_Comm_free(&merged));
    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Group_free(&even));
    MPI_CHECK(MPI_Group_free(&odd));
    MPI_CHECK(MPI_Group_free(&world));
}

static void thread_level(MPI_Session s, const char *expect)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Session_get_info(s, &info));
    MPI_CHECK(MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && !strcmp(v, expect), "thread_level %s, expected %s", flag ? v : "missing",
          expect);
    MPI_CHECK(MPI_Info_free(&info));
}

static void sessions_only(void)
{
    int flag = 1;
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized is true before any MPI_Init");
    MPI_Info ask;
    MPI_CHECK(MPI_Info_create(&ask));
    MPI_CHECK(MPI_Info_set(ask, "thread_level", "MPI_THREAD_FUNNELED"));
    MPI_Session a, b;
    MPI_CHECK(MPI_Session_init(ask, MPI_ERRORS_RETURN, &a));
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &b));
    MPI_CHECK(MPI_Info_free(&ask));
    CHECK(a != b && a != MPI_SESSION_NULL, "two sessions, handles %#x and %#x", (unsigned)a,
          (unsigned)b);
    thread_level(a, "MPI_THREAD_FUNNELED");
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized is true with sessions only");
    int n = world_size(a);
    psets(a);
    MPI_Comm wa = comm_from(a, "mpi://WORLD", "org.proust.test.a", n);
    MPI_Comm wb = comm_from(b, "mpi://world", "org.proust.test.b", n);
    MPI_Comm sa = comm_from(a, "mpi://SELF", "org.proust.test.self", 1);
    /* the two communicators keep their traffic apart */
    int r, x = -1, y = -1;
    MPI_CHECK(MPI_Comm_rank(wa, &r));
    int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Request q[2];
    MPI_CHECK(MPI_Irecv(&x, 1, MPI_INT, from, 0, wb, &q[0]));
    MPI_CHECK(MPI_Irecv(&y, 1, MPI_INT, from, 0, wa, &q[1]));
    int va = 1000 + r, vb = 2000 + r;
    MPI_CHECK(MPI_Send(&va, 1, MPI_INT, to, 0, wa));
    MPI_CHECK(MPI_Send(&vb, 1, MPI_INT, to, 0, wb));
    MPI_CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(x == 2000 + from && y == 1000 + from, "messages crossed communicators: %d %d", x, y);
    if (n >= 2)
        intercomm(b, r, n);
    errors(b);
    MPI_CHECK(MPI_Comm_free(&wa));
    MPI_CHECK(MPI_Comm_free(&wb));
    MPI_CHECK(MPI_Comm_free(&sa));
    MPI_CHECK(MPI_Session_finalize(&a));
    CHECK(a == MPI_SESSION_NULL, "handle not nulled");
    MPI_CHECK(MPI_Session_finalize(&b));
    /* again, once every session is gone */
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &a));
    MPI_Comm w = comm_from(a, "mpi://WORLD", "org.proust.test.again", n);
    MPI_CHECK(MPI_Comm_free(&w));
    MPI_CHECK(MPI_Session_finalize(&a));
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized is true with sessions only");
    if (r == 0)
        printf("env_session only: %d ranks: OK\n", n);
}

static void mixed(int *argc, char ***argv)
{
    MPI_Session s;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    int n = world_size(s);
    MPI_Comm c = comm_from(s, "mpi://WORLD", "org.proust.test.mixed", n);
    MPI_CHECK(MPI_Init(argc, argv));
    int wn = 0, flag = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &wn));
    CHECK(wn == n, "MPI_COMM_WORLD has %d ranks, the session's world %d", wn, n);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* no session: raised on MPI_COMM_SELF (MPI-4.0 §9.3) */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int cls = 0, len = 0;
    MPI_Error_class(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &len), &cls);
    CHECK(cls == MPI_ERR_SESSION, "MPI_SESSION_NULL: class %d", cls);
    MPI_CHECK(MPI_Finalize());
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(flag, "MPI_Finalized is false after MPI_Finalize");
    /* the session's communicator still works */
    int r, sum = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "after MPI_Finalize: sum %d", sum);
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Session_finalize(&s));
    if (r == 0)
        printf("env_session mixed: %d ranks: OK\n", n);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mixed"))
        mixed(&argc, &argv);
    else
        sessions_only();
    return 0;
}
