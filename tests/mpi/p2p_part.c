/*
 * p2p_part.c — partitioned communication (MPI-4.0 §4) around a ring: each
 * rank sends to the next and receives from the previous (itself when
 * alone). Sizes 0 B to 16 MiB at odd addresses, send and receive sides
 * cut into different numbers of partitions, partitions marked ready in
 * scrambled orders (one by one, by ranges, by lists); every partition is
 * checked as soon as MPI_Parrived says it has landed, and again after the
 * wait; several rounds per request. Also: noncontiguous types on either
 * side, more partitions than one message each (100000), threads marking
 * and polling partitions at once, the init-order matching of requests
 * with the same tag, MPI_PROC_NULL, and the error paths (wildcards, bad
 * partitions, marking twice, sizes that do not match).
 */
#include <pthread.h>
#include <stdbool.h>

#include "mpitest.h"

static int rank, size, to, from;

/* Byte i of round `it` of the data rank `who` sends. */
static unsigned char data_byte(int who, int it, size_t i)
{
    return mt_byte((uint64_t)who * 1000003u + (uint64_t)it * 7919u + 17u, i);
}

/* The k-th partition to mark ready among n, in round `it`'s order: forward,
 * backward, then evens before odds. */
static int order(int k, int n, int it)
{
    switch (it % 3) {
    case 0:
        return k;
    case 1:
        return n - 1 - k;
    default:
        return k < (n + 1) / 2 ? 2 * k : 2 * (k - (n + 1) / 2) + 1;
    }
}

static void fill_partition(unsigned char *s, size_t pbytes, int q, int it)
{
    for (size_t i = (size_t)q * pbytes; i < (size_t)(q + 1) * pbytes; i++)
        s[i] = data_byte(rank, it, i);
}

static void verify_partition(const unsigned char *r, size_t pbytes, int q, int it,
                             const char *what)
{
    for (size_t i = (size_t)q * pbytes; i < (size_t)(q + 1) * pbytes; i++)
        CHECK(r[i] == data_byte(from, it, i), "%s round %d: byte %zu of partition %d is %u, "
              "expected %u", what, it, i, q, r[i], data_byte(from, it, i));
}

/* Receive side of a round: poll every partition (last first) until all
 * have arrived, checking each one the moment it has. */
static void poll_all(MPI_Request rreq, unsigned char *r, int rp, size_t rpb, int it,
                     const char *what)
{
    bool *seen = calloc((size_t)rp, sizeof *seen);
    CHECK(seen, "out of memory");
    for (int left = rp; left > 0;) {
        for (int q = rp - 1; q >= 0; q--) {
            int flag = 0;
            if (seen[q])
                continue;
            MPI_CHECK(MPI_Parrived(rreq, q, &flag));
            if (flag) {
                verify_partition(r, rpb, q, it, what);
                seen[q] = true;
                left--;
            }
        }
    }
    free(seen);
}

/* One exchange of `total` bytes, cut into sp partitions to send and rp to
 * receive; how = 0 marks them one by one, 1 by ranges of 3, 2 by lists. */
static void exchange(size_t total, int sp, int rp, int how, int rounds)
{
    char what[96];
    snprintf(what, sizeof what, "%zu bytes, %d -> %d partitions, mode %d", total, sp, rp, how);
    unsigned char *sb = malloc(total + 8), *rb = malloc(total + 8);
    CHECK(sb && rb, "out of memory for %s", what);
    unsigned char *s = sb + 1, *r = rb + 3; /* odd addresses */
    size_t spb = total / (size_t)sp, rpb = total / (size_t)rp;
    MPI_Request sreq, rreq;
    MPI_CHECK(MPI_Precv_init(r, rp, (MPI_Count)rpb, MPI_BYTE, from, 5, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &rreq));
    MPI_CHECK(MPI_Psend_init(s, sp, (MPI_Count)spb, MPI_BYTE, to, 5, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &sreq));
    int *list = malloc((size_t)sp * sizeof *list);
    CHECK(list, "out of memory");
    for (int it = 0; it < rounds; it++) {
        memset(rb, 0xEE, total + 8);
        MPI_CHECK(MPI_Start(&rreq));
        MPI_CHECK(MPI_Start(&sreq));
        if (how == 1) { /* ranges of 3 partitions, in the round's order */
            int chunks = (sp + 2) / 3;
            for (int k = 0; k < chunks; k++) {
                int lo = 3 * (it % 2 ? chunks - 1 - k : k);
                int hi = lo + 2 < sp ? lo + 2 : sp - 1;
                for (int q = lo; q <= hi; q++)
                    fill_partition(s, spb, q, it);
                MPI_CHECK(MPI_Pready_range(lo, hi, sreq));
            }
        } else {
            for (int k = 0; k < sp; k++) {
                list[k] = order(k, sp, it);
                fill_partition(s, spb, list[k], it);
                if (how == 0)
                    MPI_CHECK(MPI_Pready(list[k], sreq));
            }
            if (how == 2) { /* two lists: first half, then the rest */
                MPI_CHECK(MPI_Pready_list(sp / 2, list, sreq));
                MPI_CHECK(MPI_Pready_list(sp - sp / 2, list + sp / 2, sreq));
            }
        }
        poll_all(rreq, r, rp, rpb, it, what);
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Wait(&rreq, &st));
        MPI_Count n = -1;
        MPI_CHECK(MPI_Get_count_c(&st, MPI_BYTE, &n));
        CHECK(n == (MPI_Count)total && st.MPI_SOURCE == from && st.MPI_TAG == 5,
              "%s: status count %lld source %d tag %d", what, (long long)n, st.MPI_SOURCE,
              st.MPI_TAG);
        for (int q = 0; q < rp; q++)
            verify_partition(r, rpb, q, it, what);
        CHECK(rb[0] == 0xEE && rb[2] == 0xEE && r[total] == 0xEE, "%s: bytes written outside "
              "the receive buffer", what);
        int flag = 0;
        MPI_CHECK(MPI_Parrived(rreq, 0, &flag)); /* inactive: true */
        CHECK(flag, "%s: Parrived on an inactive request is false", what);
    }
    MPI_CHECK(MPI_Request_free(&sreq));
    MPI_CHECK(MPI_Request_free(&rreq));
    CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "handles not nulled");
    free(list);
    free(sb);
    free(rb);
}

static void sweep(void)
{
    static const struct { size_t total; int sp, rp; } cases[] = {
        {0, 4, 2}, {1, 1, 1}, {7, 7, 1}, {7, 1, 7}, {60, 4, 6}, {12297, 3, 1},
        {131074, 2, 1}, {1048656, 16, 8}, {1048656, 8, 16}, {3 * 1048576 + 12, 3, 4},
        {16u << 20, 64, 256},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (size > 4 && cases[i].total > (2u << 20))
            continue;
        int rounds = cases[i].total > (2u << 20) ? 2 : 4;
        for (int how = 0; how < 3; how++)
            exchange(cases[i].total, cases[i].sp, cases[i].rp, how, rounds);
    }
}

/* Noncontiguous types: ints sent through a vector type (2 of every 3)
 * received as plain ints, and the other way round; the gaps of the vector
 * receive keep their bytes. */
static void noncontig(void)
{
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    enum { ELEMS = 3000 }; /* vector elements: 6000 ints, 16 bytes of extent each */
    int *vbuf = malloc(ELEMS * 4 * sizeof(int)), *ibuf = malloc(ELEMS * 2 * sizeof(int));
    CHECK(vbuf && ibuf, "out of memory");
    for (int dir = 0; dir < 2; dir++) { /* 0: vector -> ints, 1: ints -> vector */
        MPI_Request sreq, rreq;
        if (dir == 0) {
            MPI_CHECK(MPI_Precv_init(ibuf, 8, ELEMS * 2 / 8, MPI_INT, from, 6, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &rreq));
            MPI_CHECK(MPI_Psend_init(vbuf, 6, ELEMS / 6, vec, to, 6, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &sreq));
        } else {
            MPI_CHECK(MPI_Precv_init(vbuf, 5, ELEMS / 5, vec, from, 6, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &rreq));
            MPI_CHECK(MPI_Psend_init(ibuf, 4, ELEMS * 2 / 4, MPI_INT, to, 6, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &sreq));
        }
        for (int it = 0; it < 3; it++) {
            /* vector element e holds ints 4e and 4e + 3; 4e+1, 4e+2 are gaps */
            for (int e = 0; e < ELEMS; e++) {
                vbuf[4 * e] = dir == 0 ? rank * 100000 + it * 10000 + 2 * e : -1;
                vbuf[4 * e + 3] = dir == 0 ? rank * 100000 + it * 10000 + 2 * e + 1 : -1;
                vbuf[4 * e + 1] = vbuf[4 * e + 2] = -7;
            }
            for (int i = 0; i < ELEMS * 2; i++)
                ibuf[i] = dir == 1 ? rank * 100000 + it * 10000 + i : -1;
            MPI_CHECK(MPI_Start(&rreq));
            MPI_CHECK(MPI_Start(&sreq));
            int sp = dir == 0 ? 6 : 4, rp = dir == 0 ? 8 : 5;
            for (int k = 0; k < sp; k++)
                MPI_CHECK(MPI_Pready(order(k, sp, it + 1), sreq));
            for (int q = 0; q < rp; q++) { /* each partition, as soon as it lands */
                int flag = 0;
                while (!flag)
                    MPI_CHECK(MPI_Parrived(rreq, q, &flag));
                int per = ELEMS * 2 / rp; /* ints per receive partition */
                for (int i = q * per; i < (q + 1) * per; i++) {
                    int got = dir == 0 ? ibuf[i] : vbuf[4 * (i / 2) + 3 * (i % 2)];
                    CHECK(got == from * 100000 + it * 10000 + i, "noncontig dir %d round %d: "
                          "int %d is %d", dir, it, i, got);
                }
            }
            MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
            if (dir == 1)
                for (int e = 0; e < ELEMS; e++)
                    CHECK(vbuf[4 * e + 1] == -7 && vbuf[4 * e + 2] == -7,
                          "noncontig: the gap of element %d was written", e);
        }
        MPI_CHECK(MPI_Request_free(&sreq));
        MPI_CHECK(MPI_Request_free(&rreq));
    }
    MPI_CHECK(MPI_Type_free(&vec));
    free(vbuf);
    free(ibuf);
}

/* More partitions than one message each can carry (100000 ints on one
 * side, 1000 partitions of 100 on the other), marked by ranges. */
static void many(void)
{
    enum { N = 100000 };
    int *s = malloc(N * sizeof(int)), *r = malloc(N * sizeof(int));
    CHECK(s && r, "out of memory");
    for (int dir = 0; dir < 2; dir++) {
        int sp = dir == 0 ? N : 1000, rp = dir == 0 ? 1000 : N;
        MPI_Request sreq, rreq;
        MPI_CHECK(MPI_Precv_init(r, rp, N / rp, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &rreq));
        MPI_CHECK(MPI_Psend_init(s, sp, N / sp, MPI_INT, to, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &sreq));
        for (int it = 0; it < 2; it++) {
            for (int i = 0; i < N; i++)
                s[i] = rank * 7 + it * 13 + i;
            memset(r, 0, N * sizeof(int));
            MPI_CHECK(MPI_Startall(1, &rreq));
            MPI_CHECK(MPI_Start(&sreq));
            int step = sp / 10;
            for (int lo = sp - step; lo >= 0; lo -= step)
                MPI_CHECK(MPI_Pready_range(lo, lo + step - 1, sreq));
            MPI_Request both[2] = {sreq, rreq};
            MPI_CHECK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
            for (int i = 0; i < N; i++)
                CHECK(r[i] == from * 7 + it * 13 + i, "many dir %d: int %d is %d", dir, i, r[i]);
        }
        MPI_CHECK(MPI_Request_free(&sreq));
        MPI_CHECK(MPI_Request_free(&rreq));
    }
    free(s);
    free(r);
}

/* Threads: each marks every NT-th partition ready after filling it, then
 * polls every NT-th receive partition, all at once. */
enum { NT = 4, TPARTS = 64 };
static struct {
    unsigned char *s, *r;
    size_t pbytes;
    MPI_Request sreq, rreq;
    int it;
} shared;

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int q = t; q < TPARTS; q += NT) {
        fill_partition(shared.s, shared.pbytes, q, shared.it);
        MPI_CHECK(MPI_Pready(q, shared.sreq));
    }
    for (int q = TPARTS - NT + t; q >= 0; q -= NT) {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Parrived(shared.rreq, q, &flag));
        verify_partition(shared.r, shared.pbytes, q, shared.it, "threads");
    }
    return NULL;
}

static void threads(void)
{
    size_t total = (size_t)TPARTS * 65536 + TPARTS * 3; /* rendezvous partitions */
    shared.pbytes = total / TPARTS;
    shared.s = malloc(total);
    shared.r = malloc(total);
    CHECK(shared.s && shared.r, "out of memory");
    MPI_CHECK(MPI_Precv_init(shared.r, TPARTS, (MPI_Count)shared.pbytes, MPI_BYTE, from, 8,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &shared.rreq));
    MPI_CHECK(MPI_Psend_init(shared.s, TPARTS, (MPI_Count)shared.pbytes, MPI_BYTE, to, 8,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &shared.sreq));
    for (shared.it = 0; shared.it < 3; shared.it++) {
        MPI_Request both[2] = {shared.sreq, shared.rreq};
        MPI_CHECK(MPI_Startall(2, both));
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0,
                  "pthread_create");
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
        MPI_CHECK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    }
    MPI_CHECK(MPI_Request_free(&shared.sreq));
    MPI_CHECK(MPI_Request_free(&shared.rreq));
    free(shared.s);
    free(shared.r);
}

/* Two sends with the same tag match the receives in the order of the init
 * calls, whatever the order of the starts; a request that is never started
 * still takes its match. */
static void init_order(void)
{
    enum { N = 64 };
    int a[N], b[N], ra[N], rb[N], c = 0, rc = 0;
    MPI_Request s[3], r[3];
    MPI_CHECK(MPI_Psend_init(&c, 1, 1, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s[2]));
    MPI_CHECK(MPI_Psend_init(a, 4, N / 4, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]));
    MPI_CHECK(MPI_Psend_init(b, 2, N / 2, MPI_INT, to, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]));
    MPI_CHECK(MPI_Precv_init(&rc, 1, 1, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    MPI_CHECK(MPI_Precv_init(ra, 8, N / 8, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r[0]));
    MPI_CHECK(MPI_Precv_init(rb, 1, N, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    MPI_CHECK(MPI_Request_free(&s[2])); /* never started: matched all the same */
    MPI_CHECK(MPI_Request_free(&r[2]));
    for (int i = 0; i < N; i++) {
        a[i] = 1000 * rank + i;
        b[i] = -1000 * rank - i - 1;
    }
    MPI_CHECK(MPI_Start(&r[1]));
    MPI_CHECK(MPI_Start(&s[1]));
    MPI_CHECK(MPI_Pready_range(0, 1, s[1]));
    MPI_CHECK(MPI_Start(&s[0]));
    MPI_CHECK(MPI_Pready_range(0, 3, s[0]));
    MPI_CHECK(MPI_Start(&r[0]));
    MPI_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    MPI_CHECK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(ra[i] == 1000 * from + i && rb[i] == -1000 * from - i - 1,
              "init order: element %d got %d and %d", i, ra[i], rb[i]);
    for (int k = 0; k < 2; k++) {
        MPI_CHECK(MPI_Request_free(&s[k]));
        MPI_CHECK(MPI_Request_free(&r[k]));
    }
}

/* Nothing has arrived before the sender readies it, empty partitions
 * included (mpi4py checks this). */
static void not_before_ready(void)
{
    static const struct { int bytes, sp, rp; } cases[] = {{0, 3, 2}, {0, 1, 4}, {48, 4, 3}};
    char sbuf[48], rbuf[48];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int sp = cases[k].sp, rp = cases[k].rp;
        MPI_Request s, r;
        MPI_CHECK(MPI_Psend_init(sbuf, sp, cases[k].bytes / sp, MPI_BYTE, to, 10, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &s));
        MPI_CHECK(MPI_Precv_init(rbuf, rp, cases[k].bytes / rp, MPI_BYTE, from, 10,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        for (int it = 0; it < 2; it++) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Start(&r));
            for (int i = 0; i < rp; i++) {
                int flag = 1;
                MPI_CHECK(MPI_Parrived(r, i, &flag));
                CHECK(!flag, "%d bytes in %d partitions: partition %d arrived before its sender "
                      "started", cases[k].bytes, rp, i);
            }
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Start(&s));
            MPI_CHECK(MPI_Pready_range(0, sp - 1, s));
            for (int i = 0; i < rp; i++) {
                int flag = 0;
                while (!flag)
                    MPI_CHECK(MPI_Parrived(r, i, &flag));
            }
            MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        MPI_CHECK(MPI_Request_free(&s));
        MPI_CHECK(MPI_Request_free(&r));
    }
}

static void proc_null(void)
{
    int x[4] = {1, 2, 3, 4};
    MPI_Request s, r;
    MPI_CHECK(MPI_Psend_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &s));
    MPI_CHECK(MPI_Precv_init(x, 4, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r));
    for (int it = 0; it < 2; it++) {
        MPI_CHECK(MPI_Start(&s));
        MPI_CHECK(MPI_Start(&r));
        MPI_CHECK(MPI_Pready_range(0, 1, s));
        int flag = 0;
        MPI_CHECK(MPI_Parrived(r, 3, &flag));
        CHECK(flag, "PROC_NULL: partition not arrived");
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&r, &st));
        int n = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && n == 0, "PROC_NULL: source %d count %d",
              st.MPI_SOURCE, n);
        MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    CHECK(x[0] == 1 && x[3] == 4, "PROC_NULL: the buffer changed");
    MPI_CHECK(MPI_Request_free(&s));
    MPI_CHECK(MPI_Request_free(&r));
}

static void errors(void)
{
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[8] = {0}, y[8] = {0};
    MPI_Request s, r, q = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Precv_init(x, 2, 1, MPI_INT, MPI_ANY_SOURCE, 1, c, MPI_INFO_NULL, &q),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Precv_init(x, 2, 1, MPI_INT, from, MPI_ANY_TAG, c, MPI_INFO_NULL, &q),
                 MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Psend_init(x, 0, 1, MPI_INT, to, 1, c, MPI_INFO_NULL, &q), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Psend_init(x, 2, -1, MPI_INT, to, 1, c, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Psend_init(x, 2, 1, MPI_INT, size, 1, c, MPI_INFO_NULL, &q), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Psend_init(x, 2, 1, MPI_INT, to, -3, c, MPI_INFO_NULL, &q), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Psend_init(x, 2, 1, MPI_INT, to, 1, MPI_COMM_NULL, MPI_INFO_NULL, &q),
                 MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Psend_init(x, 2, 1, MPI_INT, to, 1, c, (MPI_Info)12345, &q), MPI_ERR_INFO);
    CHECK(q == MPI_REQUEST_NULL, "a failed init gave a request");

    MPI_CHECK(MPI_Psend_init(x, 8, 1, MPI_INT, to, 2, c, MPI_INFO_NULL, &s));
    MPI_CHECK(MPI_Precv_init(y, 4, 2, MPI_INT, from, 2, c, MPI_INFO_NULL, &r));
    EXPECT_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST); /* not started */
    MPI_CHECK(MPI_Start(&s));
    MPI_CHECK(MPI_Start(&r));
    EXPECT_CLASS(MPI_Pready(8, s), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Pready_range(3, 2, s), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Pready_range(6, 8, s), MPI_ERR_ARG);
    int bad[3] = {1, 2, 9};
    EXPECT_CLASS(MPI_Pready_list(3, bad, s), MPI_ERR_ARG); /* marks none */
    EXPECT_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);       /* a receive */
    int flag = 0;
    EXPECT_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST); /* a send */
    EXPECT_CLASS(MPI_Parrived(r, 4, &flag), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Cancel(&s), MPI_ERR_REQUEST);
    flag = 0;
    MPI_CHECK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "Parrived(MPI_REQUEST_NULL) is false");
    for (int i = 0; i < 8; i++)
        x[i] = rank * 10 + i;
    MPI_CHECK(MPI_Pready_range(0, 7, s)); /* fails if the bad list marked 1 or 2 */
    EXPECT_CLASS(MPI_Pready(5, s), MPI_ERR_ARG); /* twice */
    MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(y[i] == from * 10 + i, "errors: element %d is %d", i, y[i]);
    MPI_Request plain;
    MPI_CHECK(MPI_Send_init(x, 1, MPI_INT, to, 3, c, &plain));
    EXPECT_CLASS(MPI_Pready(0, plain), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Parrived(plain, 0, &flag), MPI_ERR_REQUEST);
    MPI_CHECK(MPI_Request_free(&plain));
    MPI_CHECK(MPI_Request_free(&s));
    MPI_CHECK(MPI_Request_free(&r));

    /* Sizes that do not match: the receive fails, nothing hangs (one small
     * and one rendezvous size each way). */
    size_t big = 1 << 20;
    char *sb = calloc(2, big), *rb = calloc(2, big);
    CHECK(sb && rb, "out of memory");
    for (int k = 0; k < 4; k++) {
        size_t unit = k < 2 ? 100 : big;
        size_t sunit = k % 2 ? unit : unit / 2, runit = k % 2 ? unit / 2 : unit;
        MPI_CHECK(MPI_Psend_init(sb, 2, (MPI_Count)sunit, MPI_BYTE, to, 4, c, MPI_INFO_NULL, &s));
        MPI_CHECK(MPI_Precv_init(rb, 2, (MPI_Count)runit, MPI_BYTE, from, 4, c, MPI_INFO_NULL,
                                 &r));
        for (int it = 0; it < 2; it++) {
            MPI_CHECK(MPI_Start(&r));
            MPI_CHECK(MPI_Start(&s));
            MPI_CHECK(MPI_Pready_range(0, 1, s));
            MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
            int got = 0, prc = MPI_SUCCESS;
            while (!got) /* ends, with the error */
                prc = MPI_Parrived(r, 1, &got);
            int pcls = 0;
            MPI_Error_class(prc, &pcls);
            CHECK(pcls == (k % 2 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT), "Parrived on a receive "
                  "whose size does not match: class %d", pcls);
            EXPECT_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE),
                         k % 2 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT);
        }
        MPI_CHECK(MPI_Request_free(&s));
        MPI_CHECK(MPI_Request_free(&r));
    }
    free(sb);
    free(rb);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    sweep();
    noncontig();
    many();
    if (provided == MPI_THREAD_MULTIPLE)
        threads();
    init_order();
    not_before_ready();
    proc_null();
    errors();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_part: %d ranks: OK\n", size);
    return 0;
}
