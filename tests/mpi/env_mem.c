/*
 * env_mem.c — MPI_Alloc_mem/MPI_Free_mem: blocks of every size (0
 * included) are 64-byte aligned, distinct and writable; pointers that did
 * not come from MPI_Alloc_mem (or were already freed) give MPI_ERR_BASE
 * without harm; argument errors; many blocks and several threads at once.
 */
#include <pthread.h>
#include <stdbool.h>

#include "mpitest.h"

static void check_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

static void sizes(void)
{
    static const MPI_Aint sz[] = {0, 1, 7, 63, 64, 65, 1000, 4096, 1 << 20};
    enum { NS = sizeof sz / sizeof sz[0] };
    unsigned char *p[NS];
    for (int i = 0; i < NS; i++) {
        MPI_CHECK(MPI_Alloc_mem(sz[i], MPI_INFO_NULL, &p[i]));
        CHECK(p[i] != NULL, "size %td: NULL", sz[i]);
        CHECK(((uintptr_t)p[i] & 63) == 0, "size %td: %p not 64-byte aligned", sz[i],
              (void *)p[i]);
        mt_fill(p[i], (size_t)sz[i], (uint64_t)i);
        for (int j = 0; j < i; j++)
            CHECK(p[i] != p[j], "blocks %d and %d are the same", i, j);
    }
    for (int i = 0; i < NS; i++)
        CHECK(mt_verify(p[i], (size_t)sz[i], (uint64_t)i) == -1, "block %d overwritten", i);
    for (int i = NS - 1; i >= 0; i -= 2)
        MPI_CHECK(MPI_Free_mem(p[i]));
    for (int i = NS - 2; i >= 0; i -= 2)
        MPI_CHECK(MPI_Free_mem(p[i]));

    /* With info objects: hints are ignored, the info must be valid. */
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    void *q;
    MPI_CHECK(MPI_Alloc_mem(100, info, &q));
    MPI_CHECK(MPI_Free_mem(q));
    MPI_CHECK(MPI_Alloc_mem(100, MPI_INFO_ENV, &q));
    MPI_CHECK(MPI_Free_mem(q));
    MPI_Info stale = info;
    MPI_CHECK(MPI_Info_free(&info));
    check_class(MPI_Alloc_mem(100, stale, &q), MPI_ERR_INFO, "a freed info");
    check_class(MPI_Alloc_mem(100, (MPI_Info)MPI_COMM_WORLD, &q), MPI_ERR_INFO,
                "a communicator as info");
}

static void bad_frees(void)
{
    void *p;
    check_class(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG, "size -1");
    check_class(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), MPI_ERR_ARG, "NULL baseptr");
    check_class(MPI_Alloc_mem(PTRDIFF_MAX, MPI_INFO_NULL, &p), MPI_ERR_NO_MEM, "PTRDIFF_MAX");

    char *m = malloc(64);
    int local;
    check_class(MPI_Free_mem(m), MPI_ERR_BASE, "a malloc'ed pointer");
    free(m); /* still ours: MPI_Free_mem must not have freed it */
    check_class(MPI_Free_mem(&local), MPI_ERR_BASE, "a stack address");
    MPI_CHECK(MPI_Alloc_mem(256, MPI_INFO_NULL, &p));
    check_class(MPI_Free_mem((char *)p + 64), MPI_ERR_BASE, "an interior pointer");
    MPI_CHECK(MPI_Free_mem(p));
    check_class(MPI_Free_mem(p), MPI_ERR_BASE, "a double free");
    MPI_CHECK(MPI_Free_mem(NULL));
}

/* Enough blocks to grow the tracking table several times, freed out of
 * order. */
static void many(void)
{
    enum { M = 3000 };
    void **p = malloc(M * sizeof *p);
    CHECK(p, "malloc");
    for (int i = 0; i < M; i++) {
        MPI_CHECK(MPI_Alloc_mem(i % 200, MPI_INFO_NULL, &p[i]));
        if (i % 200)
            memset(p[i], i & 0xff, (size_t)(i % 200));
    }
    for (int i = 0; i < M; i += 3)
        MPI_CHECK(MPI_Free_mem(p[i]));
    for (int i = 0; i < M; i += 3)
        check_class(MPI_Free_mem(p[i]), MPI_ERR_BASE, "freed twice");
    for (int i = M - 1; i >= 0; i--)
        if (i % 3)
            MPI_CHECK(MPI_Free_mem(p[i]));
    free(p);
}

static void *worker(void *arg)
{
    void *mine[16] = {NULL};
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 2000; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 16) % 16);
        if (mine[k]) {
            CHECK(*(int *)mine[k] == k, "thread block %d overwritten", k);
            MPI_CHECK(MPI_Free_mem(mine[k]));
            mine[k] = NULL;
        } else {
            MPI_CHECK(MPI_Alloc_mem((MPI_Aint)(sizeof(int) + seed % 500), MPI_INFO_NULL, &mine[k]));
            *(int *)mine[k] = k;
        }
    }
    for (int k = 0; k < 16; k++)
        if (mine[k])
            MPI_CHECK(MPI_Free_mem(mine[k]));
    return NULL;
}

static void threads(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0, "create");
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    sizes();
    bad_frees();
    many();
    threads();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
