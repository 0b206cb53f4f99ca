/*
 * p2p_bsend_scopes.c — MPI-4.1's buffers for buffered mode (§3.6): a
 * communicator's buffer serves that communicator only and comes before the
 * process's (even when full); a session's serves the communicators made
 * from its groups and their duplicates; MPI_BUFFER_AUTOMATIC takes any
 * number of pending messages of any size and detaches as itself with size
 * 0; MPI_*_flush_buffer / _iflush_buffer wait for the messages placed
 * before the call only (a later one may stay pending); detach returns what
 * was attached; bad arguments get their error class.
 *
 * Ranks pair up (rank ^ 1; a rank without a partner sends to itself). The
 * lower rank of a pair sends, the other receives; BIG messages are
 * rendezvous on every rail, so they stay in the buffer until received.
 */
#include <stdbool.h>

#include "p2p_common.h"

#define BIG (1 << 20)
#define SLOT (BIG + MPI_BSEND_OVERHEAD)

static int rank, size, peer;
static bool sender, receiver; /* both when alone */
static unsigned char *msg, *in;

static void send_big(MPI_Comm comm, int tag, uint64_t seed)
{
    p2p_fill(msg, BIG, seed);
    MPI_CHECK(MPI_Bsend(msg, BIG, MPI_BYTE, peer, tag, comm));
    memset(msg, 0, BIG); /* the buffered copy is what counts */
}

static void recv_big(MPI_Comm comm, int tag, uint64_t seed)
{
    MPI_Status st;
    MPI_CHECK(MPI_Recv(in, BIG, MPI_BYTE, peer, tag, comm, &st));
    CHECK_STATUS(st, peer, tag, BIG);
    CHECK(p2p_check(in, BIG, seed) < 0, "buffered message tag %d (seed %llu) wrong", tag,
          (unsigned long long)seed);
}

static void token(MPI_Comm comm, bool send)
{
    if (send)
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, 99, comm));
    else
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 99, comm, MPI_STATUS_IGNORE));
}

/* A communicator's buffer: only its messages, before the process's. */
static void comm_buffer(void)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    char *cbuf = malloc(SLOT), *pbuf = malloc(2 * SLOT);
    CHECK(cbuf && pbuf, "out of memory");
    if (sender) {
        MPI_CHECK(MPI_Comm_attach_buffer(dup, cbuf, SLOT));
        EXPECT_CLASS(MPI_Comm_attach_buffer(dup, cbuf, SLOT), MPI_ERR_BUFFER);
        send_big(dup, 1, 11);
        EXPECT_CLASS(MPI_Bsend(msg, 1, MPI_BYTE, peer, 2, dup), MPI_ERR_BUFFER); /* full */
        int v = 7;
        EXPECT_CLASS(MPI_Bsend(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        /* the process's buffer serves the world; dup's, full, still comes first */
        MPI_CHECK(MPI_Buffer_attach(pbuf, 2 * SLOT));
        EXPECT_CLASS(MPI_Bsend(msg, 1, MPI_BYTE, peer, 2, dup), MPI_ERR_BUFFER);
        send_big(MPI_COMM_WORLD, 3, 33);
        token(MPI_COMM_WORLD, true);
    }
    if (receiver) {
        if (!sender)
            token(MPI_COMM_WORLD, false);
        recv_big(dup, 1, 11);
        recv_big(MPI_COMM_WORLD, 3, 33);
        if (sender)
            token(MPI_COMM_WORLD, false);
        int flag = 1;
        MPI_CHECK(MPI_Iprobe(peer, 2, dup, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a refused buffered send on the duplicate was delivered");
    }
    if (sender) {
        void *b = NULL;
        int bs = -1;
        MPI_CHECK(MPI_Comm_detach_buffer(dup, &b, &bs));
        CHECK(b == cbuf && bs == SLOT, "comm detach returned %p %d", b, bs);
        MPI_CHECK(MPI_Comm_detach_buffer(dup, &b, &bs));
        CHECK(b == NULL && bs == 0, "second comm detach returned %p %d", b, bs);
        MPI_Count bc = -1;
        MPI_CHECK(MPI_Buffer_detach_c(&b, &bc));
        CHECK(b == pbuf && bc == 2 * SLOT, "process detach returned %p %lld", b, (long long)bc);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a refused buffered send on the world was delivered");
    MPI_CHECK(MPI_Comm_free(&dup));
    free(cbuf);
    free(pbuf);
}

/* A new session and a communicator over its mpi://WORLD. */
static void session_world(const char *tag, MPI_Session *s, MPI_Group *g, MPI_Comm *c)
{
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s));
    MPI_CHECK(MPI_Group_from_session_pset(*s, "mpi://WORLD", g));
    MPI_CHECK(MPI_Comm_create_from_group(*g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, c));
}

/* A session's buffer serves its communicators (and their duplicates), not
 * the world's. */
static void session_buffer(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc, sdup;
    session_world("bsend-scopes", &s, &g, &sc);
    MPI_CHECK(MPI_Comm_dup(sc, &sdup));
    char *sbuf = malloc(2 * SLOT);
    CHECK(sbuf, "out of memory");
    if (sender) {
        MPI_CHECK(MPI_Session_attach_buffer_c(s, sbuf, 2 * SLOT));
        EXPECT_CLASS(MPI_Session_attach_buffer(s, sbuf, SLOT), MPI_ERR_BUFFER);
        int v = 7;
        EXPECT_CLASS(MPI_Bsend(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        send_big(sc, 1, 44);
        send_big(sdup, 1, 55);
        EXPECT_CLASS(MPI_Bsend(msg, 1, MPI_BYTE, peer, 2, sc), MPI_ERR_BUFFER); /* full */
        token(sc, true);
    }
    if (receiver) {
        if (!sender)
            token(sc, false);
        recv_big(sc, 1, 44);
        recv_big(sdup, 1, 55);
        if (sender)
            token(sc, false);
    }
    if (sender) {
        void *b = NULL;
        int bs = -1;
        MPI_CHECK(MPI_Session_detach_buffer(s, &b, &bs));
        CHECK(b == sbuf && bs == 2 * SLOT, "session detach returned %p %d", b, bs);
    }
    MPI_CHECK(MPI_Barrier(sc));
    int flag = 1;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 2, sc, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a refused buffered send on the session's communicator was delivered");
    MPI_CHECK(MPI_Comm_free(&sdup));
    MPI_CHECK(MPI_Comm_free(&sc));
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Session_finalize(&s));
    free(sbuf);
}

/* MPI_BUFFER_AUTOMATIC, at each scope: many large messages pending. */
#define NAUTO 12
static void automatic(void)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc, dup;
    session_world("bsend-auto", &s, &g, &sc);
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, sc};
    for (int scope = 0; scope < 3; scope++) {
        MPI_Comm c = comms[scope];
        if (sender) {
            if (scope == 0)
                MPI_CHECK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
            else if (scope == 1)
                MPI_CHECK(MPI_Comm_attach_buffer_c(dup, MPI_BUFFER_AUTOMATIC, -1));
            else
                MPI_CHECK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
            for (int k = 0; k < NAUTO; k++)
                send_big(c, 10 + k, 100 * (uint64_t)scope + (uint64_t)k);
            token(c, true);
        }
        if (receiver) {
            if (!sender)
                token(c, false);
            for (int k = 0; k < NAUTO; k++)
                recv_big(c, 10 + k, 100 * (uint64_t)scope + (uint64_t)k);
            if (sender)
                token(c, false);
        }
        if (sender) {
            void *b = NULL;
            int bs = -1;
            if (scope == 0)
                MPI_CHECK(MPI_Buffer_detach(&b, &bs));
            else if (scope == 1)
                MPI_CHECK(MPI_Comm_detach_buffer(dup, &b, &bs));
            else
                MPI_CHECK(MPI_Session_detach_buffer(s, &b, &bs));
            CHECK(b == MPI_BUFFER_AUTOMATIC && bs == 0, "scope %d: automatic detach %p %d",
                  scope, b, bs);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&sc));
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Session_finalize(&s));
}

/* A flush waits for what was placed before it, not after. */
static void flushes(void)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Request r;
    /* nothing attached or pending: done at once */
    MPI_CHECK(MPI_Comm_iflush_buffer(dup, &r));
    int flag = 0;
    MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && r == MPI_REQUEST_NULL, "an empty flush did not complete at once");
    MPI_CHECK(MPI_Buffer_flush());
    MPI_CHECK(MPI_Comm_flush_buffer(dup));
    char *buf = malloc(2 * SLOT);
    CHECK(buf, "out of memory");
    if (sender) {
        MPI_CHECK(MPI_Buffer_attach(buf, 2 * SLOT));
        send_big(MPI_COMM_WORLD, 1, 71);
        MPI_CHECK(MPI_Buffer_iflush(&r));
        send_big(MPI_COMM_WORLD, 2, 72); /* after the flush: not waited for */
        if (!receiver) {
            for (int i = 0; i < 100; i++) {
                MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "the flush completed before its message was received");
            }
            token(MPI_COMM_WORLD, true); /* the receiver takes message 1 only */
        } else {
            recv_big(MPI_COMM_WORLD, 1, 71);
        }
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        token(dup, true); /* now the receiver takes message 2 */
        if (receiver) {
            token(dup, false);
            recv_big(MPI_COMM_WORLD, 2, 72);
        }
        MPI_CHECK(MPI_Buffer_flush()); /* message 2 */
        /* both slots free again */
        send_big(MPI_COMM_WORLD, 3, 73);
        send_big(MPI_COMM_WORLD, 4, 74);
        if (receiver) {
            recv_big(MPI_COMM_WORLD, 3, 73);
            recv_big(MPI_COMM_WORLD, 4, 74);
        }
        MPI_CHECK(MPI_Buffer_flush());
        void *b;
        int bs;
        MPI_CHECK(MPI_Buffer_detach(&b, &bs));
        CHECK(b == buf && bs == 2 * SLOT, "detach returned %p %d", b, bs);
    } else {
        token(MPI_COMM_WORLD, false);
        recv_big(MPI_COMM_WORLD, 1, 71);
        token(dup, false);
        recv_big(MPI_COMM_WORLD, 2, 72);
        recv_big(MPI_COMM_WORLD, 3, 73);
        recv_big(MPI_COMM_WORLD, 4, 74);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_free(&dup));
    free(buf);
}

static void errors(void)
{
    char b[64];
    void *out;
    int n;
    MPI_Request r;
    EXPECT_CLASS(MPI_Comm_attach_buffer(MPI_COMM_NULL, b, 64), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_attach_buffer(MPI_COMM_WORLD, b, -1), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_attach_buffer(MPI_COMM_WORLD, NULL, 64), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &out, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_detach_buffer(MPI_COMM_WORLD, NULL, &n), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_flush_buffer(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Buffer_iflush(NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, b, 64), MPI_ERR_SESSION);
    EXPECT_CLASS(MPI_Session_detach_buffer(MPI_SESSION_NULL, &out, &n), MPI_ERR_SESSION);
    EXPECT_CLASS(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
    EXPECT_CLASS(MPI_Session_iflush_buffer(MPI_SESSION_NULL, &r), MPI_ERR_SESSION);
}

int main(int argc, char **argv)
{
    /* the accounting counts messages pending until received: an idle
     * receiver would pull them in and release them early (unexp_pull.c) */
    setenv("PROUST_IDLE_PULL_BYTES", "0", 1);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    sender = rank <= peer;
    receiver = rank >= peer;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    msg = malloc(BIG);
    in = malloc(BIG);
    CHECK(msg && in, "out of memory");
    comm_buffer();
    session_buffer();
    automatic();
    flushes();
    errors();
    free(msg);
    free(in);
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_bsend_scopes: %d ranks: OK\n", size);
    return 0;
}
