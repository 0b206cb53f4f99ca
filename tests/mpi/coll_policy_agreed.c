/*
 * coll_policy_agreed — the collective choices every process must make alike
 * (src/mpi/coll/coll_policy.c) are agreed, not read locally: each rank sets
 * PROUST_COLL_CROWDED before MPI_Init from its own rank (`--mixed`: rank 1
 * asks for on, the others for off; `--all=on|moderate|off|auto`: every
 * rank the same; on, moderate and off run the three large-broadcast
 * algorithms: binomial tree, tree in segments, scatter + ring allgather),
 * then broadcasts of 128 KiB - 3 MiB (the sizes where the choice matters)
 * from every root, blocking and nonblocking, must deliver every byte. Were
 * the choice local, rank 1 would run a binomial tree while the others run
 * scatter + ring allgather: wrong data or a hang (the test's 60 s limit).
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "--mixed";
    const char *rank_env = getenv("PROUST_RANK"); /* set by the launcher */
    int early_rank = rank_env ? atoi(rank_env) : 0;
    if (!strcmp(mode, "--mixed"))
        setenv("PROUST_COLL_CROWDED", early_rank == 1 ? "on" : "off", 1);
    else if (!strncmp(mode, "--all=", 6))
        setenv("PROUST_COLL_CROWDED", mode + 6, 1);
    else {
        fprintf(stderr, "usage: coll_policy_agreed [--mixed | --all=on|moderate|off|auto]\n");
        return 2;
    }
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(rank == early_rank, "PROUST_RANK %d is not the MPI rank %d", early_rank, rank);
    static const size_t sizes[] = {128 * 1024, 128 * 1024 + 7, 1u << 20, 3u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        unsigned char *buf = malloc(n);
        CHECK(buf != NULL, "malloc %zu", n);
        for (int root = 0; root < size; root++) {
            for (int nb = 0; nb < 2; nb++) {
                uint64_t seed = (uint64_t)(k * 131 + (size_t)root * 7 + (size_t)nb);
                if (rank == root)
                    mt_fill(buf, n, seed);
                else
                    memset(buf, 0, n);
                if (nb) {
                    MPI_Request r;
                    MPI_CHECK(MPI_Ibcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &r));
                    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                } else {
                    MPI_CHECK(MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
                }
                long bad = mt_verify(buf, n, seed);
                CHECK(bad < 0, "%s of %zu bytes from root %d: byte %ld is %u, want %u",
                      nb ? "MPI_Ibcast" : "MPI_Bcast", n, root, bad,
                      bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : mt_byte(seed, (size_t)bad));
            }
        }
        free(buf);
    }
    if (rank == 0)
        printf("coll_policy_agreed %s: %d ranks, broadcasts intact\n", mode, size);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
