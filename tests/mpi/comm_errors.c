/*
 * comm_errors.c — error classes of the communicator functions under
 * MPI_ERRORS_RETURN, that errors go to the communicator's own handler
 * (inherited by new communicators), and that failed constructors leave
 * MPI_COMM_NULL.
 */
#include "mpitest.h"

static int wrank, wsize;

static int handler_calls, handler_code;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
}

static void ring_check(MPI_Comm c)
{
    int r, n, in = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &n));
    MPI_CHECK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &in, 1, MPI_INT, (r + n - 1) % n, 0,
                           c, MPI_STATUS_IGNORE));
    CHECK(in == (r + n - 1) % n, "ring: %d", in);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int x, flag;
    MPI_Comm c = MPI_COMM_NULL, bogus = MPI_COMM_WORLD + 12345;
    EXPECT_CLASS(MPI_Comm_size(MPI_COMM_NULL, &x), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_rank(bogus, &x), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_rank(MPI_GROUP_EMPTY, &x), MPI_ERR_COMM); /* a handle of another kind */
    EXPECT_CLASS(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;
    EXPECT_CLASS(MPI_Comm_free(&w), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_free(&s), MPI_ERR_COMM);
    CHECK(w == MPI_COMM_WORLD, "a failed Comm_free changed the handle");
    c = MPI_COMM_NULL;
    EXPECT_CLASS(MPI_Comm_free(&c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &x), MPI_ERR_COMM);
    c = MPI_COMM_SELF; /* must become MPI_COMM_NULL on failure */
    EXPECT_CLASS(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "failed Comm_split left %#x", (unsigned)c);
    EXPECT_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &x), MPI_ERR_COMM);
    MPI_Group g;
    EXPECT_CLASS(MPI_Comm_remote_group(MPI_COMM_SELF, &g), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    EXPECT_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -1, &c), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Comm_set_name(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, wsize, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, -3, &c), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Comm_set_info(MPI_COMM_WORLD, MPI_COMM_WORLD), MPI_ERR_INFO);

    /* A group that is not a subset of the communicator. */
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (wsize > 1) {
        EXPECT_CLASS(MPI_Comm_create(MPI_COMM_SELF, world, &c), MPI_ERR_GROUP);
        CHECK(c == MPI_COMM_NULL, "failed Comm_create left a communicator");
    }

    /* Errors on a communicator go to its handler; new communicators
     * inherit it. */
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPI_Comm d, d2;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_CHECK(MPI_Comm_set_errhandler(d, eh));
    MPI_CHECK(MPI_Comm_split(d, 0, 0, &d2));
    handler_calls = 0;
    int rc = MPI_Comm_remote_size(d2, &x);
    CHECK(handler_calls == 1 && rc == handler_code, "inherited handler: %d calls, rc %d code %d",
          handler_calls, rc, handler_code);
    MPI_Errhandler got;
    MPI_CHECK(MPI_Comm_get_errhandler(d2, &got));
    CHECK(got == eh, "split did not inherit the error handler");
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&d2));
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(!flag, "MPI_COMM_WORLD says it is an intercommunicator");

    /* A freed communicator is invalid at once. */
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm stale = d;
    MPI_CHECK(MPI_Comm_free(&d));
    EXPECT_CLASS(MPI_Comm_size(stale, &x), MPI_ERR_COMM);

    /* Running out of context ids is an error, not a crash or a hang, and
     * freeing gives them back. */
    enum { MAXC = 40000 };
    MPI_Comm *many = malloc(MAXC * sizeof *many);
    int made = 0, rc2 = MPI_SUCCESS, cls2;
    while (made < MAXC && (rc2 = MPI_Comm_dup(MPI_COMM_SELF, &many[made])) == MPI_SUCCESS)
        made++;
    MPI_Error_class(rc2, &cls2);
    CHECK(made > 30000 && made < MAXC && cls2 == MPI_ERR_OTHER,
          "context ids ran out after %d communicators, class %d", made, cls2);
    MPI_CHECK(MPI_Comm_free(&many[made / 2]));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &many[made / 2]));
    ring_check(many[made / 2]);
    for (int i = 0; i < made; i++)
        MPI_CHECK(MPI_Comm_free(&many[i]));
    free(many);

    MPI_CHECK(MPI_Group_free(&world));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
