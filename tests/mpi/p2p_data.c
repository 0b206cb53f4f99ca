/*
 * p2p_data.c — data integrity of point-to-point messages: every send mode
 * (Send, Ssend, Rsend, Bsend and their nonblocking forms), sizes from 0 B to
 * 16 MiB with odd sizes, unaligned send and receive buffers, receives posted
 * before the message arrives and after (Probe first), blocking and
 * nonblocking receives, receive buffers larger than the message (guard bytes
 * must stay untouched), and a noncontiguous datatype both ways.
 *
 * Ranks work in pairs (rank ^ 1); an odd rank out talks to itself.
 * Argument: the largest size (default 16 MiB).
 */
#include <stdbool.h>

#include "p2p_common.h"

enum { M_SEND, M_SSEND, M_RSEND, M_BSEND, M_ISEND, M_ISSEND, M_IRSEND, M_IBSEND, M_COUNT };
static const char *const mode_name[] = {"Send",  "Ssend",  "Rsend",  "Bsend",
                                        "Isend", "Issend", "Irsend", "Ibsend"};
enum { BEFORE, AFTER };
#define TAG_READY 30000
#define GUARD 8

static int rank, size;
static unsigned char *sbuf_mem, *rbuf_mem;

static bool nonblocking(int mode)
{
    return mode >= M_ISEND;
}

/* Start a send in `mode`; returns a request for nonblocking modes. */
static MPI_Request send_start(int mode, const void *buf, int count, MPI_Datatype dt, int peer,
                              int tag)
{
    MPI_Request req = MPI_REQUEST_NULL;
    switch (mode) {
    case M_SEND: MPI_CHECK(MPI_Send(buf, count, dt, peer, tag, MPI_COMM_WORLD)); break;
    case M_SSEND: MPI_CHECK(MPI_Ssend(buf, count, dt, peer, tag, MPI_COMM_WORLD)); break;
    case M_RSEND: MPI_CHECK(MPI_Rsend(buf, count, dt, peer, tag, MPI_COMM_WORLD)); break;
    case M_BSEND: MPI_CHECK(MPI_Bsend(buf, count, dt, peer, tag, MPI_COMM_WORLD)); break;
    case M_ISEND: MPI_CHECK(MPI_Isend(buf, count, dt, peer, tag, MPI_COMM_WORLD, &req)); break;
    case M_ISSEND: MPI_CHECK(MPI_Issend(buf, count, dt, peer, tag, MPI_COMM_WORLD, &req)); break;
    case M_IRSEND: MPI_CHECK(MPI_Irsend(buf, count, dt, peer, tag, MPI_COMM_WORLD, &req)); break;
    case M_IBSEND: MPI_CHECK(MPI_Ibsend(buf, count, dt, peer, tag, MPI_COMM_WORLD, &req)); break;
    }
    return req;
}

/* One message of n bytes from `from` to `to` (either may be this rank). */
static void xfer(int mode, int order, size_t n, int from, int to, int tag, int variant)
{
    bool me_send = from == rank, me_recv = to == rank, self = me_send && me_recv;
    if (mode == M_RSEND || mode == M_IRSEND) {
        if (order == AFTER)
            return; /* ready mode needs the receive posted */
    }
    if (self && order == AFTER && !nonblocking(mode) && mode != M_BSEND)
        return; /* a blocking send to oneself cannot wait for a later receive */
    /* Unaligned buffers, at offsets that vary with the message. */
    unsigned char *sbuf = sbuf_mem + 1 + (unsigned)(tag % 7);
    unsigned char *rbuf = rbuf_mem + 3 + (unsigned)(tag % 5);
    uint64_t seed = ((uint64_t)from << 40) ^ ((uint64_t)mode << 32) ^ (uint64_t)n ^
                    ((uint64_t)order << 36) ^ ((uint64_t)tag << 48);
    /* 8-byte multiples go as doubles in odd variants (count != bytes). */
    bool dbl = n % 8 == 0 && (variant & 1);
    MPI_Datatype dt = dbl ? MPI_DOUBLE : MPI_BYTE;
    int count = (int)(dbl ? n / 8 : n);
    int rcount = count + (dbl ? 1 : GUARD); /* larger than the message */
    MPI_Status st;
    MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;

    if (me_send)
        p2p_fill(sbuf, n, seed);
    if (me_recv) {
        memset(rbuf, 0xa5, n + GUARD);
        if (order == BEFORE) {
            MPI_CHECK(MPI_Irecv(rbuf, rcount, dt, from, tag, MPI_COMM_WORLD, &rreq));
            if (!self)
                MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, from, TAG_READY, MPI_COMM_WORLD));
        }
    }
    if (me_send) {
        if (!self && order == BEFORE)
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, to, TAG_READY, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        sreq = send_start(mode, sbuf, count, dt, to, tag);
        if (!self) {
            MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            CHECK(sreq == MPI_REQUEST_NULL, "send request not freed by MPI_Wait");
        }
    }
    if (me_recv) {
        if (order == BEFORE) {
            MPI_CHECK(MPI_Wait(&rreq, &st));
        } else {
            MPI_Status pst;
            MPI_CHECK(MPI_Probe(from, tag, MPI_COMM_WORLD, &pst));
            CHECK_STATUS(pst, from, tag, n);
            if (variant & 2) {
                MPI_CHECK(MPI_Recv(rbuf, rcount, dt, from, tag, MPI_COMM_WORLD, &st));
            } else {
                MPI_CHECK(MPI_Irecv(rbuf, rcount, dt, from, tag, MPI_COMM_WORLD, &rreq));
                MPI_CHECK(MPI_Wait(&rreq, &st));
            }
        }
        CHECK(rreq == MPI_REQUEST_NULL, "receive request not freed by MPI_Wait");
        CHECK_STATUS(st, from, tag, n);
        int got = -1;
        MPI_CHECK(MPI_Get_count(&st, dt, &got));
        CHECK(got == count, "MPI_Get_count %d, expected %d", got, count);
        long bad = p2p_check(rbuf, n, seed);
        CHECK(bad < 0, "%s (%s) of %zu bytes from %d: byte %ld wrong", mode_name[mode],
              order == BEFORE ? "posted before" : "posted after", n, from, bad);
        for (int g = 0; g < GUARD; g++)
            CHECK(rbuf[n + g] == 0xa5, "%s of %zu bytes: byte %d past the message written",
                  mode_name[mode], n, g);
    }
    if (self)
        MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
}

/* A vector type on one side, contiguous ints on the other, both ways. The
 * receives are posted first, so both partners may send blocking. */
static void typed(int peer, int nvec)
{
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(nvec, 3, 5, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int span = nvec * 5, n = nvec * 3;
    int *strided = malloc(sizeof(int) * (size_t)span);
    int *packed = malloc(sizeof(int) * (size_t)n);
    int *out = malloc(sizeof(int) * (size_t)span);
    CHECK(strided && packed && out, "out of memory");
    MPI_Request rq;
    MPI_Status st;

    /* strided -> contiguous */
    for (int i = 0; i < span; i++)
        out[i] = i % 5 < 3 ? rank * 100000 + i : -3;
    for (int i = 0; i < n; i++)
        packed[i] = -1;
    MPI_CHECK(MPI_Irecv(packed, n, MPI_INT, peer, 100, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Send(out, 1, vec, peer, 100, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&rq, &st));
    int got = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "vector received as %d ints, expected %d", got, n);
    for (int i = 0; i < n; i++)
        CHECK(packed[i] == peer * 100000 + (i / 3) * 5 + i % 3, "from vector: element %d is %d",
              i, packed[i]);

    /* contiguous -> strided: the holes must stay untouched */
    for (int i = 0; i < span; i++)
        strided[i] = -7;
    for (int i = 0; i < n; i++)
        out[i] = rank * 1000 + i;
    MPI_CHECK(MPI_Irecv(strided, 1, vec, peer, 200, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Send(out, n, MPI_INT, peer, 200, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&rq, &st));
    MPI_CHECK(MPI_Get_count(&st, vec, &got));
    CHECK(got == 1, "MPI_Get_count with the vector type: %d, expected 1", got);
    for (int i = 0, k = 0; i < span; i++) {
        if (i % 5 < 3) {
            CHECK(strided[i] == peer * 1000 + k, "into vector: slot %d is %d", i, strided[i]);
            k++;
        } else {
            CHECK(strided[i] == -7, "into vector: hole %d overwritten (%d)", i, strided[i]);
        }
    }
    MPI_CHECK(MPI_Type_free(&vec));
    CHECK(vec == MPI_DATATYPE_NULL, "MPI_Type_free did not reset the handle");
    free(strided);
    free(packed);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    size_t maxsize = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)16 << 20;
    static const size_t sizes[] = {0,     1,         7,           63,        64,
                                   1000,  4097,      65535,       65536 + 3, 262147,
                                   (1u << 20) + 1, 16u << 20};
    int peer = (rank ^ 1) < size ? (rank ^ 1) : rank;
    sbuf_mem = malloc(maxsize + 64);
    rbuf_mem = malloc(maxsize + 64);
    /* room for two of the largest (a space is reclaimed when its send completed) */
    int bsize = 2 * (int)maxsize + 8 * MPI_BSEND_OVERHEAD + 64;
    void *battach = malloc((size_t)bsize);
    CHECK(sbuf_mem && rbuf_mem && battach, "out of memory");
    MPI_CHECK(MPI_Buffer_attach(battach, bsize));

    int tag = 0, variant = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        if (n > maxsize)
            continue;
        for (int mode = 0; mode < M_COUNT; mode++)
            for (int order = BEFORE; order <= AFTER; order++)
                for (int dir = 0; dir < 2; dir++) {
                    int lo = rank < peer ? rank : peer, hi = rank < peer ? peer : rank;
                    int from = dir ? hi : lo, to = dir ? lo : hi;
                    xfer(mode, order, n, from, to, ++tag % 20000 + 1, variant++);
                }
    }
    typed(peer, 1000);

    void *bdet = NULL;
    int bdet_size = 0;
    MPI_CHECK(MPI_Buffer_detach(&bdet, &bdet_size));
    CHECK(bdet == battach && bdet_size == bsize, "MPI_Buffer_detach returned %p/%d", bdet,
          bdet_size);
    free(battach);
    free(sbuf_mem);
    free(rbuf_mem);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_data: %d ranks, sizes up to %zu: OK\n", size, maxsize);
    return 0;
}
