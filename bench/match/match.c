/*
 * match.c — the cost of matching when many receives or many unexpected
 * messages wait: n distinct tags between ranks 1 (sender) and 0
 * (receiver), received in another order than sent. Any MPI
 * (bench/match/run.sh runs it on Proust MPI, MPICH and Open MPI).
 *
 *   match [-t posted,unexpected] [-o forward,reverse,random] [-N list] [-r reps]
 *
 *   posted      rank 0 posts n MPI_Irecv (tag i, 8 bytes each), then tells
 *               rank 1, which sends tags in the order -o; rank 0 times from
 *               its go message until every receive completed (MPI_Wait on each): each message
 *               looks for its receive among those still posted.
 *   unexpected  rank 1 sends tags 0 .. n-1, then a marker; once rank 0 has
 *               the marker (every message waits unexpected), it posts the n
 *               receives in the order -o and waits for them, timed: each
 *               receive looks for its message among those still queued.
 *
 * forward is the easy case (the match is always first in line); reverse
 * and random make a plain list scan cost n^2/2 and n^2/3 comparisons.
 * Each message carries its tag, checked. Per (test, order, n): -r (5)
 * timed loops after one untimed one; the median, in ns per message.
 * One line each: "<test> <order> <n> <ns per message>".
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_GO = 1 << 20, TAG_MARK = (1 << 20) + 1 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* order[k] = the tag handled k-th */
static void make_order(int *order, int n, const char *how)
{
    for (int i = 0; i < n; i++)
        order[i] = !strcmp(how, "reverse") ? n - 1 - i : i;
    if (!strcmp(how, "random")) {
        unsigned long long x = 0x9E3779B97F4A7C15ull ^ (unsigned long long)n;
        for (int i = n - 1; i > 0; i--) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int j = (int)((x >> 33) % (unsigned long long)(i + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
}

/* MPI_Waitall(n, req, MPI_STATUSES_IGNORE), one by one: MPICH's header
 * makes gcc warn about that call (a status array of size 0). */
static void wait_all(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++)
        MPI_Wait(&req[i], MPI_STATUS_IGNORE);
}

static void check(const long long *buf, int n, const char *test)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != i) {
            fprintf(stderr, "match: %s: receive of tag %d got %lld\n", test, i, buf[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* One loop of `test`; rank 0's time in seconds. */
static double one_loop(const char *test, const int *order, int n, long long *buf,
                       MPI_Request *req, int rank)
{
    char go = 0;
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(test, "posted")) {
        if (rank == 0) {
            for (int i = 0; i < n; i++) {
                buf[i] = -1;
                MPI_Irecv(&buf[i], 1, MPI_LONG_LONG, 1, i, MPI_COMM_WORLD, &req[i]);
            }
            double t0 = MPI_Wtime();
            MPI_Send(&go, 1, MPI_CHAR, 1, TAG_GO, MPI_COMM_WORLD);
            wait_all(n, req);
            t = MPI_Wtime() - t0;
            check(buf, n, test);
        } else if (rank == 1) {
            MPI_Recv(&go, 1, MPI_CHAR, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < n; k++) {
                buf[order[k]] = order[k];
                MPI_Send(&buf[order[k]], 1, MPI_LONG_LONG, 0, order[k], MPI_COMM_WORLD);
            }
        }
    } else {
        if (rank == 1) {
            for (int i = 0; i < n; i++) {
                buf[i] = i;
                MPI_Send(&buf[i], 1, MPI_LONG_LONG, 0, i, MPI_COMM_WORLD);
            }
            MPI_Send(&go, 1, MPI_CHAR, 0, TAG_MARK, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&go, 1, MPI_CHAR, 1, TAG_MARK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t0 = MPI_Wtime();
            for (int k = 0; k < n; k++) {
                buf[order[k]] = -1;
                MPI_Irecv(&buf[order[k]], 1, MPI_LONG_LONG, 1, order[k], MPI_COMM_WORLD,
                          &req[k]);
            }
            wait_all(n, req);
            t = MPI_Wtime() - t0;
            check(buf, n, test);
        }
    }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *tests = "posted,unexpected", *orders = "forward,reverse,random";
    const char *ns = "16,128,1024,8192";
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-t")) tests = argv[i + 1];
        else if (!strcmp(argv[i], "-o")) orders = argv[i + 1];
        else if (!strcmp(argv[i], "-N")) ns = argv[i + 1];
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
    }
    if (size < 2 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 match [-t posted,unexpected] "
                            "[-o forward,reverse,random] [-N 16,128,1024,8192] [-r 5]\n");
        MPI_Finalize();
        return 2;
    }
    char tbuf[128], obuf[128], nbuf[256];
    snprintf(tbuf, sizeof tbuf, "%s", tests);
    for (char *ts = NULL, *test = strtok_r(tbuf, ",", &ts); test; test = strtok_r(NULL, ",", &ts)) {
        snprintf(obuf, sizeof obuf, "%s", orders);
        for (char *os = NULL, *ord = strtok_r(obuf, ",", &os); ord; ord = strtok_r(NULL, ",", &os)) {
            snprintf(nbuf, sizeof nbuf, "%s", ns);
            for (char *s = NULL, *nn = strtok_r(nbuf, ",", &s); nn; nn = strtok_r(NULL, ",", &s)) {
                int n = atoi(nn);
                if (n < 1 || n >= TAG_GO)
                    continue;
                int *order = malloc((size_t)n * sizeof *order);
                long long *buf = malloc((size_t)n * sizeof *buf);
                MPI_Request *req = malloc((size_t)n * sizeof *req);
                double *t = malloc((size_t)reps * sizeof *t);
                if (!order || !buf || !req || !t)
                    MPI_Abort(MPI_COMM_WORLD, 1);
                make_order(order, n, ord);
                one_loop(test, order, n, buf, req, rank); /* warm-up */
                for (int r = 0; r < reps; r++)
                    t[r] = one_loop(test, order, n, buf, req, rank);
                qsort(t, (size_t)reps, sizeof *t, cmp_double);
                double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
                if (rank == 0) {
                    printf("%s %s %d %.1f\n", test, ord, n, med / n * 1e9);
                    fflush(stdout);
                }
                free(order);
                free(buf);
                free(req);
                free(t);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
