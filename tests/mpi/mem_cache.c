/*
 * mem_cache.c — the registration cache of MPI_Alloc_mem memory (2 ranks,
 * over a rail that registers: PROUST_RAILS=self,ofi). Rank 0 sends 1 MiB
 * messages (read by the receiver from registered memory: pulls and gets)
 * from a block of MPI_Alloc_mem, rank 1 checks every byte:
 *   - from the block: the sends find it registered (cache hits grow,
 *     misses do not);
 *   - the block freed, then malloc at the same address where the allocator
 *     gives it (new content): no hit any more (MPI_Free_mem released the
 *     registration first: nothing stale is served), the data is the new one;
 *   - a new MPI_Alloc_mem block: hits again.
 * Prints the hit rate. --expect-hits: fail unless there were hits (over a
 * rail that does not register, run without it).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "mpitest.h"
#include "proust.h"

#define N ((size_t)1 << 20)
#define ROUNDS 8

static int rank;

static void fill(unsigned char *p, int seed)
{
    for (size_t i = 0; i < N; i++)
        p[i] = (unsigned char)(i * 131u + (unsigned)seed * 7u + 3u);
}

/* Rank 0 sends ROUNDS messages from buf (blocking sends, then nonblocking
 * ones); rank 1 receives and checks each. */
static void exchange(unsigned char *buf, unsigned char *rbuf, int seed)
{
    for (int r = 0; r < ROUNDS; r++) {
        if (rank == 0) {
            fill(buf, seed + r);
            if (r % 2) {
                MPI_Request rq;
                MPI_CHECK(MPI_Isend(buf, (int)N, MPI_BYTE, 1, r, MPI_COMM_WORLD, &rq));
                MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                MPI_CHECK(MPI_Send(buf, (int)N, MPI_BYTE, 1, r, MPI_COMM_WORLD));
            }
        } else {
            MPI_CHECK(MPI_Recv(rbuf, (int)N, MPI_BYTE, 0, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            fill(buf, seed + r);
            CHECK(memcmp(rbuf, buf, N) == 0, "round %d of seed %d: data differ", r, seed);
        }
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2, "run with 2 ranks, got %d", size);
    bool expect = argc > 1 && strcmp(argv[1], "--expect-hits") == 0;
    unsigned char *rbuf = malloc(N);
    CHECK(rbuf != NULL, "malloc");
    proust_rma_counts_t c0, c1, c2, c3;

    unsigned char *a;
    MPI_CHECK(MPI_Alloc_mem((MPI_Aint)N, MPI_INFO_NULL, &a));
    proust_rma_counts(&c0);
    exchange(a, rbuf, 1);
    proust_rma_counts(&c1);
    MPI_CHECK(MPI_Free_mem(a));

    /* new pages at the same address (the block was an mmap of glibc's,
     * unmapped by the free): mapped again there */
    uintptr_t page = (uintptr_t)a & ~(uintptr_t)4095;
    size_t span = N + ((uintptr_t)a - page);
    void *m = mmap((void *)page, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    bool same = m == (void *)page;
    if (!same && m != MAP_FAILED)
        munmap(m, span);
    unsigned char *heap = same ? NULL : malloc(N);
    unsigned char *b = same ? a : heap;
    CHECK(b != NULL, "malloc");
    if (rank == 0 && !same)
        printf("mem_cache: the freed block's address is in use again: a heap block instead\n");
    exchange(b, rbuf, 50);
    proust_rma_counts(&c2);
    if (same)
        munmap(m, span);
    free(heap);

    unsigned char *d;
    MPI_CHECK(MPI_Alloc_mem((MPI_Aint)N, MPI_INFO_NULL, &d));
    exchange(d, rbuf, 90);
    proust_rma_counts(&c3);
    MPI_CHECK(MPI_Free_mem(d));

    if (rank == 0) {
        uint64_t hits = c3.cache_hits - c0.cache_hits, misses = c3.cache_misses - c0.cache_misses;
        printf("mem_cache: %llu hits, %llu misses (hit rate %.2f); from the freed block's "
               "address: %llu hits, %llu misses\n",
               (unsigned long long)hits, (unsigned long long)misses,
               hits + misses ? (double)hits / (double)(hits + misses) : 0.0,
               (unsigned long long)(c2.cache_hits - c1.cache_hits),
               (unsigned long long)(c2.cache_misses - c1.cache_misses));
        /* never a hit outside MPI_Alloc_mem memory */
        CHECK(c2.cache_hits == c1.cache_hits, "a send from freed memory found a registration");
        if (expect) {
            CHECK(c1.cache_hits > c0.cache_hits && c1.cache_misses == c0.cache_misses,
                  "sends from MPI_Alloc_mem memory: %llu hits, %llu misses",
                  (unsigned long long)(c1.cache_hits - c0.cache_hits),
                  (unsigned long long)(c1.cache_misses - c0.cache_misses));
            CHECK(c2.cache_misses > c1.cache_misses, "sends from malloc memory: no miss");
            CHECK(c3.cache_hits > c2.cache_hits, "a new MPI_Alloc_mem block: no hit");
        }
    }
    free(rbuf);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
