/*
 * pingpong.c — latency, bandwidth and bidirectional bandwidth between two
 * ranks on the native Proust API. The loops are in
 * bench/common/pingpong_core.h (shared with bench/mpi/pingpong.c), which
 * also documents what is measured, the options and the output format.
 *
 *   proustrun -n 2 proust-bench-pingpong [-t lat|bw|bibw|testlat|all] [-m min]
 *             [-M max] [-i scale] [-r reps] [-w window] [-c cap]
 */
#include "bk_native.h"

#include "../common/pingpong_core.h"

int main(int argc, char **argv)
{
    return pingpong_main(argc, argv);
}
