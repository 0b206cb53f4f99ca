/*
 * cluster_where — which ranks share a host follows the real hosts: each
 * rank's MPI_Get_processor_name is its host name, MPI_COMM_TYPE_SHARED
 * groups exactly the ranks of one host (in rank order), and the job spans
 * the number of hosts given. Then every pair of ranks exchanges 1 MiB + 3
 * both ways (shm inside a host, tcp between hosts), checked byte by byte.
 *
 * usage: cluster_where HOSTS
 */
#include <stdbool.h>

#include "mpitest.h"

#define BIG ((1 << 20) + 3)

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size, len, want_hosts = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[MPI_MAX_PROCESSOR_NAME], host[256] = {0};
    MPI_CHECK(MPI_Get_processor_name(name, &len));
    gethostname(host, sizeof host - 1);
    CHECK(strcmp(name, host) == 0, "processor name %s on host %s", name, host);
    char *all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    CHECK(all != NULL, "out of memory");
    MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                            MPI_CHAR, MPI_COMM_WORLD));
    int hosts = 0, mine = 0, my_index = 0;
    for (int r = 0; r < size; r++) {
        const char *n = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        bool first = true;
        for (int q = 0; q < r && first; q++)
            first = strcmp(n, all + (size_t)q * MPI_MAX_PROCESSOR_NAME) != 0;
        hosts += first;
        if (strcmp(n, name) == 0) {
            my_index += r < rank;
            mine++;
        }
    }
    CHECK(hosts == want_hosts, "the job spans %d hosts, expected %d", hosts, want_hosts);
    MPI_Comm shared;
    int srank, ssize;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    MPI_Comm_rank(shared, &srank);
    MPI_Comm_size(shared, &ssize);
    CHECK(ssize == mine && srank == my_index, "shared communicator: %d of %d, host %s has %d "
          "ranks and I am its %d-th", srank, ssize, name, mine, my_index);
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out && in, "out of memory");
    for (int peer = 0; peer < size; peer++) {
        if (peer == rank)
            continue;
        for (int i = 0; i < BIG; i++)
            out[i] = (unsigned char)(i * 13 + rank * 7 + peer);
        MPI_CHECK(MPI_Sendrecv(out, BIG, MPI_BYTE, peer, 5, in, BIG, MPI_BYTE, peer, 5,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i++)
            CHECK(in[i] == (unsigned char)(i * 13 + peer * 7 + rank), "byte %d from rank %d", i,
                  peer);
    }
    MPI_Comm_free(&shared);
    free(out);
    free(in);
    free(all);
    if (rank == 0)
        printf("cluster_where: %d ranks on %d hosts, placement and data right\n", size, hosts);
    MPI_Finalize();
    return 0;
}
