/*
 * bk_native.h — the benchmark front end on the native Proust API: the bk_*
 * interface that the loops in bench/common/ expect (see pingpong_core.h).
 * Blocking calls are proust_send/proust_recv, nonblocking ones
 * proust_isend/proust_irecv completed with proust_waitall; receives name
 * their source and match the tag exactly (PROUST_TAG_MASK_FULL).
 */
#ifndef PROUST_BENCH_NATIVE_H
#define PROUST_BENCH_NATIVE_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>

#include <proust.h>

#define BK_IMPL "proust"

typedef proust_request_t *bk_req_t;

static proust_session_t *bk_session;
static int bk_rank, bk_size;

static void bk_check(int rc, const char *what)
{
    if (rc != PROUST_OK) {
        fprintf(stderr, "bench: rank %d: %s failed: %s (%s)\n", bk_rank, what,
                proust_strerror(rc), proust_error_name(rc));
        exit(1);
    }
}

static void bk_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    bk_check(proust_init(&bk_session), "proust_init");
    bk_rank = proust_rank(bk_session);
    bk_size = proust_size(bk_session);
}

static void bk_finalize(void)
{
    bk_check(proust_finalize(bk_session), "proust_finalize");
    bk_session = NULL;
}

static void bk_describe(FILE *f)
{
    const char *rail = "?";
    if (bk_size > 1 && proust_peer_rail(bk_session, 1, &rail) != PROUST_OK)
        rail = "?";
    const char *env_rails = getenv("PROUST_RAILS");
    fprintf(f, "# library: Proust %s (native API)\n", PROUST_VERSION_STRING);
    fprintf(f, "# rail to rank 1: %s | strategy: %s | PROUST_RAILS=%s\n", rail,
            proust_strategy_name(bk_session), env_rails ? env_rails : "(unset)");
}

static inline void bk_send(const void *buf, size_t len, int peer, int tag)
{
    int rc = proust_send(bk_session, buf, len, peer, (proust_tag_t)tag);
    if (rc != PROUST_OK) bk_check(rc, "proust_send");
}

static inline void bk_recv(void *buf, size_t len, int peer, int tag)
{
    int rc = proust_recv(bk_session, buf, len, peer, (proust_tag_t)tag, PROUST_TAG_MASK_FULL,
                         NULL);
    if (rc != PROUST_OK) bk_check(rc, "proust_recv");
}

static inline void bk_isend(const void *buf, size_t len, int peer, int tag, bk_req_t *r)
{
    int rc = proust_isend(bk_session, buf, len, peer, (proust_tag_t)tag, r);
    if (rc != PROUST_OK) bk_check(rc, "proust_isend");
}

static inline void bk_irecv(void *buf, size_t len, int peer, int tag, bk_req_t *r)
{
    int rc = proust_irecv(bk_session, buf, len, peer, (proust_tag_t)tag, PROUST_TAG_MASK_FULL, r);
    if (rc != PROUST_OK) bk_check(rc, "proust_irecv");
}

static inline void bk_waitall(size_t n, bk_req_t *reqs)
{
    int rc = proust_waitall(n, reqs, NULL);
    if (rc != PROUST_OK) bk_check(rc, "proust_waitall");
}

static inline int bk_test(bk_req_t *r)
{
    int flag = 0;
    int rc = proust_test(r, &flag, NULL);
    if (rc != PROUST_OK) bk_check(rc, "proust_test");
    return flag;
}

#endif /* PROUST_BENCH_NATIVE_H */
