/*
 * datatype_p2p.c — derived datatypes on the wire between ranks 0 and 1
 * (other ranks pair up the same way: 2k with 2k+1; an odd last rank idles).
 *
 * Sender and receiver use different type maps with the same type signature:
 * vector sent / contiguous received and back, struct with gaps received
 * into a struct laid out differently, subarray halos with Sendrecv, sizes
 * from a few bytes to a few MiB (odd counts), nonblocking receives whose
 * type is freed before completion, and MPI_Get_elements/MPI_Get_count on
 * receives that fill only part of the last instance.
 */
#include "mpitest.h"

static int rank, peer, nranks;

static void pairwise(void (*fn)(void))
{
    if (peer >= 0)
        fn();
}

/* vector(n, bl, stride) of ints sent, n*bl contiguous ints received; then
 * the reverse, checking that the gaps of the strided buffer stay intact. */
static void vector_vs_contiguous(int n, int bl, int stride)
{
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(n, bl, stride, MPI_INT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    size_t full = (size_t)((n - 1) * stride + bl), elems = (size_t)n * bl;
    int *strided = malloc(full * sizeof(int)), *flat = malloc(elems * sizeof(int));
    CHECK(strided && flat, "out of memory");
    int tag = n % 1000;
    if (rank < peer) {
        for (size_t i = 0; i < full; i++)
            strided[i] = (int)(i * 7 + 1);
        MPI_CHECK(MPI_Send(strided, 1, v, peer, tag, MPI_COMM_WORLD));
        /* and back: flat sent, received into the strided layout */
        for (size_t i = 0; i < full; i++)
            strided[i] = -1;
        MPI_Status st;
        MPI_CHECK(MPI_Recv(strided, 1, v, peer, tag, MPI_COMM_WORLD, &st));
        int count;
        MPI_CHECK(MPI_Get_count(&st, v, &count));
        CHECK(count == 1, "Get_count of the vector: %d", count);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < stride && (size_t)(i * stride + j) < full; j++) {
                size_t at = (size_t)i * stride + j;
                int want = j < bl ? (int)(i * bl + j) * 3 : -1;
                CHECK(strided[at] == want, "n=%d: strided[%zu] = %d, expected %d", n, at,
                      strided[at], want);
            }
    } else {
        MPI_Status st;
        MPI_CHECK(MPI_Recv(flat, (int)elems, MPI_INT, peer, tag, MPI_COMM_WORLD, &st));
        int count;
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == (int)elems, "n=%d: received %d ints, expected %zu", n, count, elems);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < bl; j++) {
                int want = (int)(((size_t)i * stride + j) * 7 + 1);
                CHECK(flat[i * bl + j] == want, "n=%d: flat[%d] = %d, expected %d", n, i * bl + j,
                      flat[i * bl + j], want);
            }
        for (size_t i = 0; i < elems; i++)
            flat[i] = (int)i * 3;
        MPI_CHECK(MPI_Send(flat, (int)elems, MPI_INT, peer, tag, MPI_COMM_WORLD));
    }
    free(strided);
    free(flat);
    MPI_CHECK(MPI_Type_free(&v));
}

static void sizes(void)
{
    /* from one element to ~3 MiB of data, odd counts */
    int ns[] = {1, 2, 3, 17, 255, 1001, 4099, 65537, 262147};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        vector_vs_contiguous(ns[i], 1, 2);
        vector_vs_contiguous(ns[i], 3, 5);
    }
    vector_vs_contiguous(3, 100001, 100003); /* few huge blocks */
}

struct rec {
    char c;
    double d;
    short s[2];
};
/* the receiver keeps the same fields elsewhere: {double; short[2]; char} */
struct rec2 {
    double d;
    short s[2];
    char c;
};

static void struct_layouts(void)
{
    enum { N = 1000 };
    int bl[3] = {1, 1, 2};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT}, t1, t2;
    MPI_Aint d1[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, s)};
    MPI_Aint d2[3] = {offsetof(struct rec2, c), offsetof(struct rec2, d),
                      offsetof(struct rec2, s)};
    MPI_CHECK(MPI_Type_create_struct(3, bl, d1, ty, &t1));
    MPI_CHECK(MPI_Type_create_struct(3, bl, d2, ty, &t2));
    MPI_CHECK(MPI_Type_commit(&t1));
    MPI_CHECK(MPI_Type_commit(&t2));
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(t1, &lb, &ext));
    CHECK(ext == sizeof(struct rec), "struct extent %ld, sizeof %zu", (long)ext,
          sizeof(struct rec));
    MPI_CHECK(MPI_Type_get_extent(t2, &lb, &ext));
    CHECK(ext == sizeof(struct rec2), "struct extent %ld, sizeof %zu", (long)ext,
          sizeof(struct rec2));
    if (rank < peer) {
        struct rec *a = calloc(N, sizeof *a);
        for (int i = 0; i < N; i++) {
            a[i].c = (char)('a' + i % 26);
            a[i].d = i * 0.5;
            a[i].s[0] = (short)i;
            a[i].s[1] = (short)-i;
        }
        MPI_CHECK(MPI_Send(a, N, t1, peer, 1, MPI_COMM_WORLD));
        free(a);
    } else {
        struct rec2 *b = malloc(N * sizeof *b);
        memset(b, 0x5a, N * sizeof *b);
        MPI_Request req;
        MPI_CHECK(MPI_Irecv(b, N, t2, peer, 1, MPI_COMM_WORLD, &req));
        /* the pending receive keeps the type alive */
        MPI_Datatype keep = t2;
        MPI_CHECK(MPI_Type_free(&keep));
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&req, &st));
        for (int i = 0; i < N; i++)
            CHECK(b[i].c == (char)('a' + i % 26) && b[i].d == i * 0.5 && b[i].s[0] == (short)i &&
                      b[i].s[1] == (short)-i,
                  "record %d: %c %g %d %d", i, b[i].c, b[i].d, b[i].s[0], b[i].s[1]);
        free(b);
        t2 = MPI_DATATYPE_NULL;
    }
    MPI_CHECK(MPI_Type_free(&t1));
    if (t2 != MPI_DATATYPE_NULL)
        MPI_CHECK(MPI_Type_free(&t2));
}

/* A 2D grid of doubles with a halo: each side sends its boundary column
 * (a subarray) and receives the peer's into its halo column. */
static void halo(void)
{
    enum { R = 37, C = 29 };
    double *g = malloc(sizeof(double) * R * C);
    for (int i = 0; i < R * C; i++)
        g[i] = rank * 100000 + i;
    int sz[2] = {R, C}, sub[2] = {R - 2, 1}, s_send[2] = {1, rank < peer ? C - 2 : 1},
        s_recv[2] = {1, rank < peer ? C - 1 : 0};
    MPI_Datatype ts, tr;
    MPI_CHECK(MPI_Type_create_subarray(2, sz, sub, s_send, MPI_ORDER_C, MPI_DOUBLE, &ts));
    MPI_CHECK(MPI_Type_create_subarray(2, sz, sub, s_recv, MPI_ORDER_C, MPI_DOUBLE, &tr));
    MPI_CHECK(MPI_Type_commit(&ts));
    MPI_CHECK(MPI_Type_commit(&tr));
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(g, 1, ts, peer, 2, g, 1, tr, peer, 2, MPI_COMM_WORLD, &st));
    int pcol = rank < peer ? 1 : C - 2, mycol = s_recv[1];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            double want = rank * 100000 + i * C + j;
            if (j == mycol && i >= 1 && i < R - 1)
                want = peer * 100000 + i * C + pcol;
            CHECK(g[i * C + j] == want, "halo (%d,%d) = %g, expected %g", i, j, g[i * C + j],
                  want);
        }
    MPI_CHECK(MPI_Type_free(&ts));
    MPI_CHECK(MPI_Type_free(&tr));
    free(g);
}

/* Receives that end inside an instance: Get_count is MPI_UNDEFINED and
 * Get_elements counts the basic elements that arrived. */
static void partial(void)
{
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t;
    MPI_CHECK(MPI_Type_create_struct(3, bl, d, ty, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    /* bytes sent (as the matching prefix of the signature) -> elements */
    struct { int ints, doubles; int elems; } c[] = {{1, 0, 1}, {1, 1, 2}, {2, 1, 4}};
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        if (rank < peer) {
            /* int, double, char, int [, double]: built as a struct on the fly */
            int sbl[4] = {1, 1, 1, 1};
            MPI_Aint sd[4] = {0, 8, 16, 24};
            MPI_Datatype sty[4] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_INT}, s;
            int n = c[k].ints + c[k].doubles + (c[k].ints > 1 ? 1 : 0);
            MPI_CHECK(MPI_Type_create_struct(n, sbl, sd, sty, &s));
            MPI_CHECK(MPI_Type_commit(&s));
            char buf[64] = {0};
            MPI_CHECK(MPI_Send(buf, 1, s, peer, 3, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Type_free(&s));
        } else {
            char buf[4 * 24];
            MPI_Status st;
            MPI_CHECK(MPI_Recv(buf, 4, t, peer, 3, MPI_COMM_WORLD, &st));
            int count, elems;
            MPI_Count ex;
            MPI_CHECK(MPI_Get_count(&st, t, &count));
            MPI_CHECK(MPI_Get_elements(&st, t, &elems));
            MPI_CHECK(MPI_Get_elements_x(&st, t, &ex));
            CHECK(count == MPI_UNDEFINED, "case %zu: Get_count %d", k, count);
            CHECK(elems == c[k].elems && ex == c[k].elems, "case %zu: Get_elements %d/%lld, expected %d",
                  k, elems, ex, c[k].elems);
        }
    }
    /* a whole number of instances: both agree */
    if (rank < peer) {
        char buf[3 * 24] = {0};
        MPI_CHECK(MPI_Send(buf, 3, t, peer, 4, MPI_COMM_WORLD));
    } else {
        char buf[4 * 24];
        MPI_Status st;
        int count, elems;
        MPI_CHECK(MPI_Recv(buf, 4, t, peer, 4, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, t, &count));
        MPI_CHECK(MPI_Get_elements(&st, t, &elems));
        CHECK(count == 3 && elems == 9, "whole instances: count %d elements %d", count, elems);
    }
    MPI_CHECK(MPI_Type_free(&t));
}

/* Many concurrent nonblocking transfers of a noncontiguous type. */
static void nonblocking(void)
{
    enum { K = 16, N = 3001 };
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(N, 1, 3, MPI_DOUBLE, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    double *buf = calloc((size_t)K * 3 * N, sizeof(double));
    MPI_Request req[K];
    for (int k = 0; k < K; k++) {
        double *b = buf + (size_t)k * 3 * N;
        if (rank < peer) {
            for (int i = 0; i < 3 * N; i++)
                b[i] = k * 1e6 + i;
            MPI_CHECK(MPI_Isend(b, 1, v, peer, 10 + k, MPI_COMM_WORLD, &req[k]));
        } else {
            MPI_CHECK(MPI_Irecv(b, 1, v, peer, 10 + k, MPI_COMM_WORLD, &req[k]));
        }
    }
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    if (rank > peer)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < 3 * N; i++) {
                double want = i % 3 == 0 ? k * 1e6 + i : 0;
                CHECK(buf[(size_t)k * 3 * N + i] == want, "message %d element %d: %g", k, i,
                      buf[(size_t)k * 3 * N + i]);
            }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    peer = rank ^ 1;
    if (peer >= nranks)
        peer = -1;
    pairwise(sizes);
    pairwise(struct_layouts);
    pairwise(halo);
    pairwise(partial);
    pairwise(nonblocking);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
