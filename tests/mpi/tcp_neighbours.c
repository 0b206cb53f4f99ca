/*
 * tcp_neighbours — ranks that talk only to their ring neighbours (one
 * MPI_Sendrecv each way, checked), for counting the tcp connections a job
 * opens on demand (tcp_connections.sh).
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == left, "got %d from the left, expected %d", got, left);
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, left, 1, &got, 1, MPI_INT, right, 1,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == right, "got %d from the right, expected %d", got, right);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
