/*
 * coll_reduce_sizes.c — every reduction-family collective on MPI_COMM_WORLD
 * over a sweep of sizes (0, 1, odd, 4 KB, 64 KiB, 1 MiB, 4 MiB: those up to the
 * byte limit given as argument), blocking and nonblocking (completed by
 * MPI_Wait or by polling MPI_Test), roots first, middle and last, with and
 * without MPI_IN_PLACE. Results are checked element by element against sums
 * every rank computes locally from the deterministic inputs; buffers the
 * standard leaves alone (recvbuf off the root, Exscan's on rank 0) are checked
 * untouched.
 */
#include "coll_reduce_util.h"

static int rank, size;
#define SENTINEL (-77)

static void complete(int nb, MPI_Request *req)
{
    static int turn;
    if (!nb)
        return;
    if (turn++ % 2)
        ca_poll(req);
    else
        MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

static int nroots(int *roots)
{
    int n = 0, cand[3] = {0, size / 2, size - 1};
    for (int k = 0; k < 3; k++) {
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= roots[j] == cand[k];
        if (!dup)
            roots[n++] = cand[k];
    }
    return n;
}

static void t_bcast(long n, int nb)
{
    int roots[3], nr = nroots(roots);
    unsigned char *buf = malloc((size_t)n + 1);
    for (int k = 0; k < nr; k++) {
        int root = roots[k];
        uint64_t seed = (uint64_t)n * 31 + (uint64_t)root * 7 + (uint64_t)nb;
        if (rank == root)
            mt_fill(buf, (size_t)n, seed);
        else
            memset(buf, 0xee, (size_t)n);
        MPI_Request req;
        if (nb)
            MPI_CHECK(MPI_Ibcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
        complete(nb, &req);
        long bad = mt_verify(buf, (size_t)n, seed);
        CHECK(bad < 0, "bcast n=%ld root=%d nb=%d: byte %ld wrong", n, root, nb, bad);
    }
    /* the same as ints (a different datatype, same algorithms) */
    int *ib = malloc(sizeof(int) * ((size_t)n / 4 + 1));
    long ni = n / 4;
    for (long i = 0; i < ni; i++)
        ib[i] = rank == size - 1 ? ca_val(9, 0, i) : -1;
    MPI_Request req;
    if (nb)
        MPI_CHECK(MPI_Ibcast(ib, (int)ni, MPI_INT, size - 1, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Bcast(ib, (int)ni, MPI_INT, size - 1, MPI_COMM_WORLD));
    complete(nb, &req);
    for (long i = 0; i < ni; i++)
        CHECK(ib[i] == ca_val(9, 0, i), "int bcast n=%ld [%ld] = %d", ni, i, ib[i]);
    free(ib);
    free(buf);
}

static void t_reduce(long n, int nb)
{
    int roots[3], nr = nroots(roots);
    int *s = malloc(sizeof(int) * ((size_t)n + 1)), *r = malloc(sizeof(int) * ((size_t)n + 1));
    for (int k = 0; k < nr; k++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            int root = roots[k];
            for (long i = 0; i < n; i++) {
                s[i] = ca_val(1 + k, rank, i);
                r[i] = SENTINEL;
            }
            const void *sb = s;
            if (inplace && rank == root) {
                memcpy(r, s, sizeof(int) * (size_t)n);
                sb = MPI_IN_PLACE;
            }
            MPI_Request req;
            if (nb)
                MPI_CHECK(MPI_Ireduce(sb, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                                      &req));
            else
                MPI_CHECK(MPI_Reduce(sb, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            complete(nb, &req);
            for (long i = 0; i < n; i++) {
                long want = rank == root ? ca_sum(1 + k, 0, size - 1, i) : SENTINEL;
                CHECK(r[i] == want, "reduce n=%ld root=%d inplace=%d nb=%d [%ld] = %d, want %ld",
                      n, root, inplace, nb, i, r[i], want);
                CHECK(s[i] == ca_val(1 + k, rank, i), "reduce modified sendbuf");
            }
        }
    }
    free(s);
    free(r);
}

static void t_allreduce(long n, int nb)
{
    int *s = malloc(sizeof(int) * ((size_t)n + 1)), *r = malloc(sizeof(int) * ((size_t)n + 1));
    for (int inplace = 0; inplace < 2; inplace++) {
        for (long i = 0; i < n; i++) {
            s[i] = ca_val(4, rank, i);
            r[i] = inplace ? s[i] : SENTINEL;
        }
        MPI_Request req;
        const void *sb = inplace ? MPI_IN_PLACE : s;
        if (nb)
            MPI_CHECK(MPI_Iallreduce(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Allreduce(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        complete(nb, &req);
        for (long i = 0; i < n; i++)
            CHECK(r[i] == ca_sum(4, 0, size - 1, i), "allreduce n=%ld inplace=%d nb=%d [%ld] = %d",
                  n, inplace, nb, i, r[i]);
    }
    /* MPI_MAX on doubles */
    double *ds = malloc(sizeof(double) * ((size_t)n + 1));
    double *dr = malloc(sizeof(double) * ((size_t)n + 1));
    for (long i = 0; i < n; i++)
        ds[i] = ca_val(5, rank, i) - 500.5;
    MPI_Request req;
    if (nb)
        MPI_CHECK(MPI_Iallreduce(ds, dr, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Allreduce(ds, dr, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    complete(nb, &req);
    for (long i = 0; i < n; i++) {
        double want = -1e9;
        for (int q = 0; q < size; q++)
            if (ca_val(5, q, i) - 500.5 > want)
                want = ca_val(5, q, i) - 500.5;
        CHECK(dr[i] == want, "allreduce max n=%ld [%ld] = %g, want %g", n, i, dr[i], want);
    }
    free(ds);
    free(dr);
    free(s);
    free(r);
}

static void t_reduce_scatter(long n, int nb)
{
    int *rc = malloc(sizeof(int) * (size_t)size);
    for (int block = 0; block < 2; block++) {
        long total = 0, mine = 0, first = 0;
        for (int i = 0; i < size; i++) {
            rc[i] = block ? (int)(n / size) : (int)(n / size + (i % 3));
            if (i < rank)
                first += rc[i];
            total += rc[i];
        }
        mine = rc[rank];
        int *s = malloc(sizeof(int) * ((size_t)total + 1));
        int *r = malloc(sizeof(int) * ((size_t)total + 1));
        for (int inplace = 0; inplace < 2; inplace++) {
            for (long i = 0; i < total; i++) {
                s[i] = ca_val(6 + block, rank, i);
                r[i] = inplace ? s[i] : SENTINEL;
            }
            const void *sb = inplace ? MPI_IN_PLACE : s;
            MPI_Request req;
            if (block && nb)
                MPI_CHECK(MPI_Ireduce_scatter_block(sb, r, rc[0], MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                                    &req));
            else if (block)
                MPI_CHECK(MPI_Reduce_scatter_block(sb, r, rc[0], MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            else if (nb)
                MPI_CHECK(MPI_Ireduce_scatter(sb, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
            else
                MPI_CHECK(MPI_Reduce_scatter(sb, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            complete(nb, &req);
            for (long i = 0; i < mine; i++)
                CHECK(r[i] == ca_sum(6 + block, 0, size - 1, first + i),
                      "reduce_scatter%s n=%ld inplace=%d nb=%d [%ld] = %d", block ? "_block" : "",
                      n, inplace, nb, i, r[i]);
            if (!inplace)
                for (long i = mine; i < total; i++)
                    CHECK(r[i] == SENTINEL, "reduce_scatter wrote past its block");
        }
        free(s);
        free(r);
    }
    free(rc);
}

static void t_scan(long n, int nb)
{
    int *s = malloc(sizeof(int) * ((size_t)n + 1)), *r = malloc(sizeof(int) * ((size_t)n + 1));
    for (int ex = 0; ex < 2; ex++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            for (long i = 0; i < n; i++) {
                s[i] = ca_val(8 + ex, rank, i);
                r[i] = inplace ? s[i] : SENTINEL;
            }
            const void *sb = inplace ? MPI_IN_PLACE : s;
            MPI_Request req;
            if (ex && nb)
                MPI_CHECK(MPI_Iexscan(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
            else if (ex)
                MPI_CHECK(MPI_Exscan(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            else if (nb)
                MPI_CHECK(MPI_Iscan(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
            else
                MPI_CHECK(MPI_Scan(sb, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            complete(nb, &req);
            for (long i = 0; i < n; i++) {
                long want = ex ? (rank ? ca_sum(8 + ex, 0, rank - 1, i)
                                       : (inplace ? ca_val(8 + ex, 0, i) : SENTINEL))
                               : ca_sum(8, 0, rank, i);
                CHECK(r[i] == want, "%s n=%ld inplace=%d nb=%d [%ld] = %d, want %ld",
                      ex ? "exscan" : "scan", n, inplace, nb, i, r[i], want);
            }
        }
    }
    free(s);
    free(r);
}

static void t_barrier(int nb)
{
    /* a barrier orders: what rank 0 wrote before it is seen after it */
    for (int k = 0; k < 3; k++) {
        MPI_Request req;
        if (nb)
            MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        complete(nb, &req);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long maxbytes = argc > 1 ? atol(argv[1]) : 65536;
    static const long counts[] = {0, 1, 7, 1000, 16384, 262144, 1048576};
    for (int nb = 0; nb < 2; nb++) {
        t_barrier(nb);
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            long n = counts[k];
            if (n * (long)sizeof(int) > maxbytes)
                break;
            t_bcast(n * (long)sizeof(int) + (n & 1), nb);
            t_reduce(n, nb);
            t_allreduce(n, nb);
            t_reduce_scatter(n, nb);
            t_scan(n, nb);
        }
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_reduce_sizes: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
