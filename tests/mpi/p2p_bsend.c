/*
 * p2p_bsend.c — buffered mode. Without a buffer Bsend fails with
 * MPI_ERR_BUFFER; a buffer sized with MPI_BSEND_OVERHEAD per message holds
 * exactly that many pending messages (the next one fails); Buffer_detach
 * waits until the buffered messages left and returns the buffer; a small
 * buffer is reused by many messages in turn; Ibsend completes at once;
 * noncontiguous types are packed; four threads buffer-send concurrently.
 *
 * Ranks pair up (rank ^ 1; a rank without a partner sends to itself).
 */
#include <pthread.h>
#include <stdbool.h>

#include "p2p_common.h"

#define BIG (1 << 20) /* rendezvous on every rail: pending until received */

static int rank, size, peer;
static bool lo; /* the sender of the one-way parts (or alone) */

static void no_buffer(void)
{
    int v = 1;
    EXPECT_CLASS(MPI_Bsend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Request r;
    EXPECT_CLASS(MPI_Ibsend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    void *b = &v;
    int bs = 5;
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == NULL && bs == 0, "detach without a buffer: %p %d", b, bs);
    EXPECT_CLASS(MPI_Buffer_attach(&v, -1), MPI_ERR_ARG);
    /* too small for even an empty message */
    char small[MPI_BSEND_OVERHEAD - 1];
    MPI_CHECK(MPI_Buffer_attach(small, (int)sizeof small));
    EXPECT_CLASS(MPI_Bsend(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Buffer_attach(small, (int)sizeof small), MPI_ERR_BUFFER); /* twice */
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == small && bs == (int)sizeof small, "detach returned %p %d", b, bs);
}

/* Two pending messages fit exactly; the third does not. */
static void accounting(void)
{
    int bsize = 2 * (BIG + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bsize);
    unsigned char *msg = malloc(BIG), *in = malloc(BIG);
    CHECK(buf && msg && in, "out of memory");
    bool send_role = lo || peer == rank, recv_role = !lo || peer == rank;
    if (send_role) {
        MPI_CHECK(MPI_Buffer_attach(buf, bsize));
        for (int k = 0; k < 2; k++) {
            p2p_fill(msg, BIG, 500 + (uint64_t)k);
            MPI_CHECK(MPI_Bsend(msg, BIG, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD));
        }
        memset(msg, 0, BIG); /* the buffered copies are what counts */
        EXPECT_CLASS(MPI_Bsend(msg, BIG, MPI_BYTE, peer, 12, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT_CLASS(MPI_Bsend(msg, 1, MPI_BYTE, peer, 12, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        /* let the receiver go, then detach: waits for both to arrive */
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        if (peer == rank) {
            /* alone: receive them before detaching, or detach would wait
             * for ourselves */
            for (int k = 0; k < 2; k++) {
                MPI_Status st;
                MPI_CHECK(MPI_Recv(in, BIG, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &st));
                CHECK(p2p_check(in, BIG, 500 + (uint64_t)k) < 0, "buffered message %d wrong", k);
            }
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        void *b;
        int bs;
        MPI_CHECK(MPI_Buffer_detach(&b, &bs));
        CHECK(b == buf && bs == bsize, "detach returned %p %d, attached %p %d", b, bs,
              (void *)buf, bsize);
    }
    if (recv_role && peer != rank) {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 2; k++) {
            MPI_Status st;
            MPI_CHECK(MPI_Recv(in, BIG, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 10 + k, BIG);
            CHECK(p2p_check(in, BIG, 500 + (uint64_t)k) < 0, "buffered message %d wrong", k);
        }
        int flag = 1;
        MPI_Status st;
        MPI_CHECK(MPI_Iprobe(peer, 12, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a refused buffered send was delivered");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(buf);
    free(msg);
    free(in);
}

/* A buffer for 4 small messages carries 300 of them in turn. */
static void reuse(void)
{
    enum { N = 300, LEN = 100 };
    int bsize = 4 * (LEN + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bsize);
    CHECK(buf, "out of memory");
    MPI_CHECK(MPI_Buffer_attach(buf, bsize));
    unsigned char out[LEN], in[LEN];
    for (int i = 0; i < N; i++) {
        /* both directions; receive each before the next send, so at most
         * a couple are pending */
        p2p_fill(out, LEN, (uint64_t)rank * N + (uint64_t)i);
        if (i % 2) {
            MPI_CHECK(MPI_Bsend(out, LEN, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        } else {
            MPI_Request r;
            MPI_CHECK(MPI_Ibsend(out, LEN, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r));
            int flag = 0;
            MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(flag && r == MPI_REQUEST_NULL, "Ibsend not complete at once");
        }
        memset(out, 0, LEN); /* reusable at once */
        MPI_Status st;
        MPI_CHECK(MPI_Recv(in, LEN, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st));
        CHECK(p2p_check(in, LEN, (uint64_t)peer * N + (uint64_t)i) < 0, "message %d wrong", i);
    }
    /* a vector type is packed into the buffer */
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int v[12], w[4];
    for (int i = 0; i < 12; i++)
        v[i] = rank * 100 + i;
    MPI_CHECK(MPI_Bsend(v, 1, vec, peer, 4, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Recv(w, 4, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(w[i] == peer * 100 + 3 * i, "Bsend of a vector: element %d is %d", i, w[i]);
    void *b;
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == buf && bs == bsize, "detach returned %p %d", b, bs);
    free(buf);
}

#define NT 4
#define PER_THREAD 50
static void *bsender(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        int msg[50];
        for (int k = 0; k < 50; k++)
            msg[k] = rank * 1000000 + t * 10000 + i * 100 + k;
        MPI_CHECK(MPI_Bsend(msg, 50, MPI_INT, peer, 20 + t, MPI_COMM_WORLD));
    }
    return NULL;
}
static void *breceiver(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        int msg[50];
        MPI_CHECK(MPI_Recv(msg, 50, MPI_INT, peer, 20 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 50; k++)
            CHECK(msg[k] == peer * 1000000 + t * 10000 + i * 100 + k,
                  "thread %d message %d element %d is %d", t, i, k, msg[k]);
    }
    return NULL;
}

static void threads(void)
{
    /* room for every message at once: nothing can fail for lack of space */
    int bsize = NT * PER_THREAD * (50 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bsize);
    CHECK(buf, "out of memory");
    MPI_CHECK(MPI_Buffer_attach(buf, bsize));
    pthread_t th[2 * NT];
    for (int t = 0; t < NT; t++) {
        CHECK(pthread_create(&th[t], NULL, bsender, (void *)(intptr_t)t) == 0, "pthread_create");
        CHECK(pthread_create(&th[NT + t], NULL, breceiver, (void *)(intptr_t)t) == 0,
              "pthread_create");
    }
    for (int t = 0; t < 2 * NT; t++)
        pthread_join(th[t], NULL);
    void *b;
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == buf && bs == bsize, "detach returned %p %d", b, bs);
    free(buf);
}

int main(int argc, char **argv)
{
    int provided;
    /* the accounting counts messages pending until received: an idle
     * receiver would pull them in and release them early (unexp_pull.c) */
    setenv("PROUST_IDLE_PULL_BYTES", "0", 1);
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    lo = rank <= peer;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    no_buffer();
    accounting();
    reuse();
    threads();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_bsend: %d ranks: OK\n", size);
    return 0;
}
