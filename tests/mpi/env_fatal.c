/*
 * env_fatal.c — MPI_ERRORS_ARE_FATAL ends the whole job: the last rank
 * makes an error ("send": MPI_Send to rank = size; "call":
 * MPI_Comm_call_errhandler) while the others wait in a barrier that can
 * never complete. The job must stop with the library's message instead of
 * hanging; "survived" is printed if the erroneous call returns. "abort":
 * the same send on a duplicate of MPI_COMM_WORLD whose handler is
 * MPI_ERRORS_ABORT (MPI-4.0), MPI_COMM_WORLD's being MPI_ERRORS_RETURN.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size, buf = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *mode = argc > 1 ? argv[1] : "send";
    MPI_Comm comm = MPI_COMM_WORLD;
    if (strcmp(mode, "abort") == 0) {
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ABORT));
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Errhandler h = MPI_ERRHANDLER_NULL;
        MPI_CHECK(MPI_Comm_get_errhandler(comm, &h));
        CHECK(h == MPI_ERRORS_ABORT, "MPI_Comm_get_errhandler: %#x", (unsigned)h);
        MPI_CHECK(MPI_Errhandler_free(&h));
        CHECK(MPI_Errhandler_c2f(MPI_ERRORS_ABORT) != 0 || MPI_ERRORS_ABORT == 0,
              "MPI_ERRORS_ABORT has no Fortran handle");
        CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_ABORT)) == MPI_ERRORS_ABORT,
              "MPI_ERRORS_ABORT does not convert back");
    }
    if (rank == size - 1) {
        if (strcmp(mode, "abort") == 0)
            MPI_Send(&buf, 1, MPI_INT, size, 0, comm);
        else if (strcmp(mode, "call") == 0)
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
