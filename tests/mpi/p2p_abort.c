/*
 * p2p_abort.c — MPI_Abort from one rank stops the whole job: the last rank
 * aborts with code 7 while the others block in a receive that nothing will
 * ever match. p2p_abort.sh checks that proustrun exits with status 7
 * (instead of hanging or reporting success).
 */
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        usleep(100000); /* let the others block first */
        MPI_Abort(MPI_COMM_WORLD, 7);
        fprintf(stderr, "MPI_Abort returned\n");
        return 3;
    }
    int v;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "[rank %d] a receive nobody sends to completed\n", rank);
    return 4;
}
