/*
 * mpi_demo.c — a small MPI program for `make run`: a token around a ring,
 * a ping-pong latency, and collectives, each checked.
 *
 *   build/install/bin/mpicc examples/mpi_demo.c -o mpi_demo
 *   build/install/bin/mpiexec -n 4 ./mpi_demo
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* A token goes around the ring; each rank adds its rank. */
    int token = 0;
    if (size > 1) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }

    /* 8-byte ping-pong between ranks 0 and 1. */
    double lat_us = 0;
    if (size > 1 && rank < 2) {
        double x = 0;
        int iters = 20000, peer = 1 - rank;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(&x, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(&x, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&x, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
            }
        }
        lat_us = (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Collectives: the sum of ranks, and everybody's rank gathered. */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int *all = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    int ok = sum == size * (size - 1) / 2;
    for (int i = 0; i < size; i++)
        ok = ok && all[i] == i;
    free(all);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        printf("%s, %d processes\n", lib, size);
        printf("ring token: %d (expected %d)\n", token, size * (size - 1) / 2);
        if (size > 1)
            printf("ping-pong 8 B: %.2f us one way\n", lat_us);
        printf("allreduce + allgather: %s\n", ok ? "correct" : "WRONG");
    }
    /* Only rank 0 holds the whole ring sum. */
    int token_ok = rank != 0 || size == 1 || token == size * (size - 1) / 2;
    int mine = ok && token_ok, all_ok;
    MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
