/*
 * jacobi.c — seed 003's application experiment: a 2D Jacobi relaxation on
 * an N x N grid of doubles split over a px x py grid of ranks (px * py =
 * the job's size, as square as it goes), each iteration a border
 * exchange with the 4 neighbours (MPI_Irecv / MPI_Isend / MPI_Waitall;
 * columns packed by hand, as codes do), the 5-point update, and every 20
 * iterations an MPI_Allreduce of the residual. Prints, per grid size, the
 * time of one iteration (median of 5 timed blocks) and the border message
 * size, and a checksum that must not depend on the implementation:
 *
 *   jacobi N=<n> border_bytes <b> iter_us <t> checksum <c>
 *
 *   mpicc -O2 -o jacobi bench/cluster/jacobi.c -lm
 *   mpiexec -n 4 ./jacobi [N ...]          (default: 256 1024 4096)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, px, py, cx, cy;

static int neighbour(int dx, int dy)
{
    int x = cx + dx, y = cy + dy;
    if (x < 0 || x >= px || y < 0 || y >= py)
        return MPI_PROC_NULL;
    return y * px + x;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run(int n, int iters)
{
    int nx = n / px, ny = n / py; /* local interior */
    size_t w = (size_t)nx + 2;
    double *u = calloc(w * (size_t)(ny + 2), sizeof *u);
    double *v = calloc(w * (size_t)(ny + 2), sizeof *v);
    double *sendbuf = malloc(4 * (size_t)(nx > ny ? nx : ny) * sizeof *sendbuf);
    double *recvbuf = malloc(4 * (size_t)(nx > ny ? nx : ny) * sizeof *recvbuf);
    if (!u || !v || !sendbuf || !recvbuf)
        MPI_Abort(MPI_COMM_WORLD, 2);
#define AT(a, i, j) (a)[(size_t)(j) * w + (size_t)(i)]
    /* fixed boundary: 1 on the global top edge, 0 elsewhere */
    if (cy == 0)
        for (int i = 0; i < nx + 2; i++)
            AT(u, i, 0) = AT(v, i, 0) = 1.0;
    int nb[4] = {neighbour(0, -1), neighbour(0, 1), neighbour(-1, 0), neighbour(1, 0)};
    int len[4] = {nx, nx, ny, ny};
    int m = nx > ny ? nx : ny;
    double block_us[5];
    int per_block = iters / 5 > 0 ? iters / 5 : 1;
    double res = 0;
    for (int b = 0; b < 5; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < per_block; it++) {
            MPI_Request rq[8];
            int k = 0;
            for (int d = 0; d < 4; d++) /* d: 0 up, 1 down, 2 left, 3 right */
                MPI_Irecv(recvbuf + d * m, len[d], MPI_DOUBLE, nb[d], d ^ 1, MPI_COMM_WORLD,
                          &rq[k++]);
            for (int i = 0; i < nx; i++) {
                sendbuf[0 * m + i] = AT(u, i + 1, 1);
                sendbuf[1 * m + i] = AT(u, i + 1, ny);
            }
            for (int j = 0; j < ny; j++) {
                sendbuf[2 * m + j] = AT(u, 1, j + 1);
                sendbuf[3 * m + j] = AT(u, nx, j + 1);
            }
            for (int d = 0; d < 4; d++)
                MPI_Isend(sendbuf + d * m, len[d], MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD,
                          &rq[k++]);
            MPI_Status st[8];
            MPI_Waitall(8, rq, st);
            if (nb[0] != MPI_PROC_NULL)
                for (int i = 0; i < nx; i++)
                    AT(u, i + 1, 0) = recvbuf[0 * m + i];
            if (nb[1] != MPI_PROC_NULL)
                for (int i = 0; i < nx; i++)
                    AT(u, i + 1, ny + 1) = recvbuf[1 * m + i];
            if (nb[2] != MPI_PROC_NULL)
                for (int j = 0; j < ny; j++)
                    AT(u, 0, j + 1) = recvbuf[2 * m + j];
            if (nb[3] != MPI_PROC_NULL)
                for (int j = 0; j < ny; j++)
                    AT(u, nx + 1, j + 1) = recvbuf[3 * m + j];
            double local = 0;
            for (int j = 1; j <= ny; j++)
                for (int i = 1; i <= nx; i++) {
                    double x = 0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) +
                                       AT(u, i, j + 1));
                    local += fabs(x - AT(u, i, j));
                    AT(v, i, j) = x;
                }
            double *t = u;
            u = v;
            v = t;
            if (it % 20 == 19)
                MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        block_us[b] = (MPI_Wtime() - t0) / per_block * 1e6;
    }
    double mine = 0, sum = 0;
    for (int j = 1; j <= ny; j++)
        for (int i = 1; i <= nx; i++)
            mine += AT(u, i, j) * (1 + (i + j) % 7);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double t[5];
    MPI_Reduce(block_us, t, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(t, 5, sizeof *t, cmp);
        printf("jacobi N=%d border_bytes %zu iter_us %.2f checksum %.9e\n", n,
               (size_t)nx * sizeof(double), t[2], sum);
        fflush(stdout);
    }
#undef AT
    free(u);
    free(v);
    free(sendbuf);
    free(recvbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (px = (int)sqrt((double)size); size % px; px--)
        ;
    py = size / px;
    cx = rank % px;
    cy = rank / px;
    int defaults[] = {256, 1024, 4096};
    int count = argc > 1 ? argc - 1 : 3;
    for (int k = 0; k < count; k++) {
        int n = argc > 1 ? atoi(argv[k + 1]) : defaults[k];
        if (n < 2 * px || n < 2 * py) {
            if (rank == 0)
                fprintf(stderr, "jacobi: N=%d is too small for %d x %d ranks\n", n, px, py);
            continue;
        }
        /* about the same work per size: fewer iterations on larger grids */
        int iters = (int)(2.0e8 / ((double)n * n)) + 20;
        if (iters > 2000)
            iters = 2000;
        run(n, iters);
    }
    MPI_Finalize();
    return 0;
}
