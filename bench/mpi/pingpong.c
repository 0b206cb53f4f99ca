/*
 * pingpong.c — latency, bandwidth and bidirectional bandwidth between two
 * ranks on MPI (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv/MPI_Waitall). The
 * loops are in bench/common/pingpong_core.h, shared with the native
 * bench/native/pingpong.c, which also documents the options and the output.
 *
 *   mpicc -O2 -o pingpong bench/mpi/pingpong.c
 *   mpiexec -n 2 ./pingpong [-t lat|bw|bibw|testlat|all] [-m min] [-M max] [-i scale]
 *                           [-r reps] [-w window] [-c cap]
 */
#include "bk_mpi.h"

#include "../common/pingpong_core.h"

int main(int argc, char **argv)
{
    return pingpong_main(argc, argv);
}
