/*
 * comm_idup.c — MPI_Comm_idup / MPI_Comm_idup_with_info (src/mpi/comm/comm_idup.c):
 * the call returns before the other members join (rank 0 starts it, then
 * sends what rank 1 waits for before it starts its own: a blocking idup
 * deadlocks, which the watchdog turns into a failure); the new communicator
 * works and its traffic does not meet the parent's; several idups in
 * flight on one parent, mixed with nonblocking collectives completed in
 * another order on every rank; attributes copied at the call (a change
 * made afterwards does not show); an intercommunicator's idup; errors.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "comm_idup: no progress in 30 s (an idup that blocks?)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

/* Sum of ranks over c, and a ring exchange on tag 5 checked against the
 * parent's messages on the same tag. */
static void check_works(MPI_Comm c, MPI_Comm parent)
{
    int n, r, sum = 0;
    MPI_CHECK(MPI_Comm_size(c, &n));
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce on the duplicate: %d", sum);
    int result;
    MPI_CHECK(MPI_Comm_compare(c, parent, &result));
    CHECK(result == MPI_CONGRUENT, "compare with the parent: %d", result);
    /* Same tag on both: each receive must get its own communicator's. */
    int to = (r + 1) % n, from = (r + n - 1) % n, a = 1000 + r, b = 2000 + r, ga = -1, gb = -1;
    MPI_Request q[4];
    MPI_CHECK(MPI_Irecv(&gb, 1, MPI_INT, from, 5, c, &q[0]));
    MPI_CHECK(MPI_Irecv(&ga, 1, MPI_INT, from, 5, parent, &q[1]));
    MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, to, 5, parent, &q[2]));
    MPI_CHECK(MPI_Isend(&b, 1, MPI_INT, to, 5, c, &q[3]));
    MPI_CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    CHECK(ga == 1000 + from && gb == 2000 + from, "traffic mixed: parent got %d, dup got %d", ga,
          gb);
}

static void test_nonblocking(void)
{
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request q;
    int token = 0;
    if (size < 2) {
        MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q));
        MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else if (rank == 0) {
        MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q));
        token = 42;
        MPI_CHECK(MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        if (rank == 1) {
            MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == 42, "token %d", token);
        }
        MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q));
        MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
    CHECK(q == MPI_REQUEST_NULL && d != MPI_COMM_NULL, "request %d, comm null %d",
          q != MPI_REQUEST_NULL, d == MPI_COMM_NULL);
    check_works(d, MPI_COMM_WORLD);
    MPI_CHECK(MPI_Comm_free(&d));
}

/* Several idups and nonblocking collectives in flight on one parent,
 * completed in a rank-dependent order. */
static void test_many(void)
{
    enum { N = 6 };
    MPI_Comm parent, d[N];
    MPI_Request q[N + 2];
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    int one = 1, s1 = 0, s2 = 0;
    MPI_CHECK(MPI_Iallreduce(&one, &s1, 1, MPI_INT, MPI_SUM, parent, &q[0]));
    for (int i = 0; i < N; i++)
        MPI_CHECK(i % 2 ? MPI_Comm_idup(parent, &d[i], &q[i + 1])
                        : MPI_Comm_idup_with_info(parent, MPI_INFO_NULL, &d[i], &q[i + 1]));
    MPI_CHECK(MPI_Iallreduce(&one, &s2, 1, MPI_INT, MPI_SUM, parent, &q[N + 1]));
    if (rank % 2) {
        for (int i = N + 1; i >= 0; i--)
            MPI_CHECK(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Waitall(N + 2, q, MPI_STATUSES_IGNORE));
    }
    CHECK(s1 == size && s2 == size, "iallreduce around the idups: %d %d", s1, s2);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < i; k++)
            CHECK(d[i] != d[k], "idups %d and %d gave one communicator", k, i);
    for (int i = 0; i < N; i++)
        check_works(d[i], parent);
    for (int i = 0; i < N; i++)
        MPI_CHECK(MPI_Comm_free(&d[i]));
    MPI_CHECK(MPI_Comm_free(&parent));
}

static void test_attributes(void)
{
    int key, flag = 0, *got = NULL;
    static int first = 1, second = 2;
    MPI_Comm parent, d;
    MPI_Request q;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    MPI_CHECK(MPI_Comm_set_attr(parent, key, &first));
    MPI_CHECK(MPI_Comm_idup(parent, &d, &q));
    MPI_CHECK(MPI_Comm_set_attr(parent, key, &second)); /* after the call */
    MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_get_attr(d, key, &got, &flag));
    CHECK(flag && got == &first, "attribute of the duplicate: flag %d, %s", flag,
          got == &second ? "the value set after the call" : "another value");
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_free(&parent));
    MPI_CHECK(MPI_Comm_free_keyval(&key));
}

static void test_intercomm(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter, d;
    int color = rank < size / 2;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
    MPI_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? size / 2 : 0, 77, &inter));
    MPI_Request q;
    MPI_CHECK(MPI_Comm_idup(inter, &d, &q));
    MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int flag = 0, rsize = 0, want = color ? size - size / 2 : size / 2;
    MPI_CHECK(MPI_Comm_test_inter(d, &flag));
    MPI_CHECK(MPI_Comm_remote_size(d, &rsize));
    CHECK(flag && rsize == want, "intercomm duplicate: inter %d, remote size %d (want %d)", flag,
          rsize, want);
    /* Local rank 0s swap their world ranks over the duplicate. */
    int lr;
    MPI_CHECK(MPI_Comm_rank(d, &lr));
    if (lr == 0) {
        int theirs = -1;
        MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &theirs, 1, MPI_INT, 0, 3, d,
                               MPI_STATUS_IGNORE));
        CHECK(theirs == (color ? size / 2 : 0), "remote leader is world rank %d", theirs);
    }
    int sum = 0;
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d)); /* the other group's sum */
    int lo = color ? size / 2 : 0, hi = color ? size : size / 2, want_sum = 0;
    for (int i = lo; i < hi; i++)
        want_sum += i;
    CHECK(sum == want_sum, "intercomm allreduce on the duplicate: %d, want %d", sum, want_sum);
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_free(&inter));
    MPI_CHECK(MPI_Comm_free(&half));
}

static void test_errors(void)
{
    MPI_Comm d = MPI_COMM_WORLD;
    MPI_Request q;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Comm_idup(MPI_COMM_WORLD, &d, NULL), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &q), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_idup(MPI_COMM_NULL, &d, &q), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_idup_with_info(MPI_COMM_WORLD, (MPI_Info)12345, &d, &q), MPI_ERR_INFO);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    signal(SIGALRM, watchdog);
    alarm(30);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_nonblocking();
    test_many();
    test_attributes();
    test_intercomm();
    test_errors();
    /* An idup left in flight at MPI_Finalize would be erroneous; one
     * completed just before it must not race the shutdown. */
    MPI_Comm last;
    MPI_Request q;
    MPI_CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &last, &q));
    MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&last));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
