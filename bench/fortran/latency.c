/* latency.c -- the C path of bench/fortran/latency.F90: the same 8-byte
 * ping-pong loop (MPI_Send/MPI_Recv of one double with a status), so that
 * the Fortran figures minus these are what a binding costs. Prints one line
 * per block: "C <block> <usec one way>". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    enum { WARMUP = 20000, ITERS = 20000, BLOCKS = 15 };
    int rank;
    double buf = 1.0;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    for (int b = 0; b <= BLOCKS; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < (b == 0 ? WARMUP : ITERS); i++) {
            if (rank == 0) {
                MPI_Send(&buf, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st);
                MPI_Send(&buf, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t1 = MPI_Wtime();
        if (rank == 0 && b > 0)
            printf("C %d %.4f\n", b, (t1 - t0) * 1e6 / (2.0 * ITERS));
    }
    MPI_Finalize();
    return 0;
}
