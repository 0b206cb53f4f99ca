/*
 * bk_mpi.h — the benchmark front end on MPI: the bk_* interface that the
 * loops in bench/common/ expect (see pingpong_core.h). Blocking calls are
 * MPI_Send/MPI_Recv, nonblocking ones MPI_Isend/MPI_Irecv completed with
 * MPI_Waitall, all on MPI_COMM_WORLD with an explicit source and tag.
 * Errors abort the job (MPI_ERRORS_ARE_FATAL, the default handler).
 * Builds with any MPI's compiler wrapper (MPICH, Open MPI, Proust's own).
 */
#ifndef PROUST_BENCH_MPI_H
#define PROUST_BENCH_MPI_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define BK_IMPL "mpi"

typedef MPI_Request bk_req_t;

static int bk_rank, bk_size;

static void bk_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &bk_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bk_size);
}

static void bk_finalize(void)
{
    MPI_Finalize();
}

static void bk_describe(FILE *f)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (len < 0) len = 0;
    if (len >= (int)sizeof lib) len = (int)sizeof lib - 1;
    lib[len] = '\0';
    char *nl = strchr(lib, '\n'); /* first line only */
    if (nl) *nl = '\0';
    int ver = 0, sub = 0;
    MPI_Get_version(&ver, &sub);
    fprintf(f, "# library: %s (MPI %d.%d)\n", lib, ver, sub);
}

static inline int bk_count(size_t len)
{
    if (len > (size_t)INT_MAX) {
        fprintf(stderr, "bench: message of %zu bytes too large for MPI int counts\n", len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return (int)len;
}

static inline void bk_send(const void *buf, size_t len, int peer, int tag)
{
    MPI_Send(buf, bk_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD);
}

static inline void bk_recv(void *buf, size_t len, int peer, int tag)
{
    MPI_Recv(buf, bk_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static inline void bk_isend(const void *buf, size_t len, int peer, int tag, bk_req_t *r)
{
    MPI_Isend(buf, bk_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
}

static inline void bk_irecv(void *buf, size_t len, int peer, int tag, bk_req_t *r)
{
    MPI_Irecv(buf, bk_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
}

static inline int bk_test(bk_req_t *r)
{
    int flag = 0;
    MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* GCC >= 11 takes MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) for an
 * array of size 0 and warns (-Wstringop-overflow); the call is correct. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 7
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline void bk_waitall(size_t n, bk_req_t *reqs)
{
    MPI_Waitall((int)n, reqs, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 7
#pragma GCC diagnostic pop
#endif

#endif /* PROUST_BENCH_MPI_H */
