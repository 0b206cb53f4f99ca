/*
 * env_fatal.c — MPI_ERRORS_ARE_FATAL ends the whole job: the last rank
 * makes an error ("send": MPI_Send to rank = size; "call":
 * MPI_Comm_call_errhandler) while the others wait in a barrier that can
 * never complete. The job must stop with the library's message instead of
 * hanging; "survived" is printed if the erroneous call returns.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size, buf = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *mode = argc > 1 ? argv[1] : "send";
    if (rank == size - 1) {
        if (strcmp(mode, "call") == 0)
            MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
        else
            MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        printf("survived\n");
        fflush(stdout);
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("survived\n");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
