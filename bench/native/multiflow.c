/*
 * multiflow.c — "k parallel ping-pongs of n small messages each" between two
 * ranks on the native Proust API (all completions through proust_waitall).
 * The loop is in bench/common/multiflow_core.h (shared with
 * bench/mpi/multiflow.c), which defines the time per message precisely.
 *
 *   proustrun -n 2 proust-bench-multiflow [-k flows] [-n msgs] [-s size]
 *             [-i rounds] [-W warmup] [-r reps]
 * Run it with PROUST_STRATEGY=default and PROUST_STRATEGY=aggreg to compare
 * the strategies.
 */
#include "bk_native.h"

#include "../common/multiflow_core.h"

int main(int argc, char **argv)
{
    return multiflow_main(argc, argv);
}
