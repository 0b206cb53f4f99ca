/*
 * bench_sync.h — synchronise ranks 0 and 1 with a 0-byte round trip, using
 * only the front end's blocking bk_send/bk_recv (so the native and the MPI
 * versions synchronise the same way, and ranks beyond 1 need not take part).
 * Include after the bk_* definitions.
 */
#ifndef PROUST_BENCH_SYNC_H
#define PROUST_BENCH_SYNC_H

enum { BENCH_TAG_SYNC = 7 };

static inline void bk_sync(void)
{
    char dummy = 0;
    if (bk_rank == 0) {
        bk_send(&dummy, 0, 1, BENCH_TAG_SYNC);
        bk_recv(&dummy, 0, 1, BENCH_TAG_SYNC);
    } else if (bk_rank == 1) {
        bk_recv(&dummy, 0, 0, BENCH_TAG_SYNC);
        bk_send(&dummy, 0, 0, BENCH_TAG_SYNC);
    }
}

#endif /* PROUST_BENCH_SYNC_H */
