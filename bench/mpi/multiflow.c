/*
 * multiflow.c — "k parallel ping-pongs of n small messages each" between two
 * ranks on MPI (MPI_Isend/MPI_Irecv/MPI_Waitall). The loop is in
 * bench/common/multiflow_core.h, shared with bench/native/multiflow.c, which
 * defines the time per message precisely.
 *
 *   mpicc -O2 -o multiflow bench/mpi/multiflow.c
 *   mpiexec -n 2 ./multiflow [-k flows] [-n msgs] [-s size] [-i rounds]
 *                            [-W warmup] [-r reps]
 */
#include "bk_mpi.h"

#include "../common/multiflow_core.h"

int main(int argc, char **argv)
{
    return multiflow_main(argc, argv);
}
