/*
 * coll_paths_mixed.c — collectives where ranks take different paths for
 * the same call: a rank whose datatype is predefined may take a latency
 * path straight on the engine (MPI_Allgather(v), MPI_Alltoall and
 * MPI_Alltoallv of two or a few ranks; MPI_Scatter and MPI_Gather at a leaf
 * of their tree and at the root of two ranks; MPI_Scatterv's non-root
 * ranks), one whose datatype is
 * derived goes by the general path; their
 * messages must still meet. Each rank alternates, per round, between
 * MPI_INT x 4 and a contiguous type of 4 ints, in or out of place; the
 * gathered values are checked; then the same with blocks of 128 KiB (an
 * exchange by rendezvous on the engine's path). Then counts that disagree (rank 0 gives 1
 * element where its block holds 4): every rank reports it, whichever path
 * it took, and the next collective works.
 *
 * Usage: coll_paths_mixed   (any number of ranks; 2 is the interesting one)
 */
#include <stdbool.h>

#include "mpitest.h"

enum { MAXR = 64, K = 4 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXR, "at most %d ranks", MAXR);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype four;
    MPI_CHECK(MPI_Type_contiguous(K, MPI_INT, &four));
    MPI_CHECK(MPI_Type_commit(&four));
    int mine[K * MAXR], all[K * MAXR];
    for (int round = 0; round < 8; round++) {
        bool derived = (rank + round) % 2 == 1, in_place = round % 4 >= 2;
        MPI_Datatype t = derived ? four : MPI_INT;
        int n = derived ? 1 : K;
        for (int i = 0; i < K * MAXR; i++)
            all[i] = -1;
        for (int j = 0; j < K; j++)
            mine[j] = rank * 100 + round * 10 + j;
        if (in_place) {
            for (int j = 0; j < K; j++)
                all[rank * K + j] = mine[j];
            MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, t, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Allgather(mine, n, t, all, n, t, MPI_COMM_WORLD));
        }
        for (int i = 0; i < size; i++)
            for (int j = 0; j < K; j++)
                CHECK(all[i * K + j] == i * 100 + round * 10 + j,
                      "round %d (%s%s): block %d element %d is %d", round,
                      derived ? "derived" : "MPI_INT", in_place ? ", in place" : "", i, j,
                      all[i * K + j]);
        /* allgatherv: rank 1's block empty */
        int gc[MAXR], gd[MAXR];
        for (int i = 0; i < size; i++) {
            gc[i] = i == 1 ? 0 : n;
            gd[i] = i * n;
        }
        for (int i = 0; i < K * MAXR; i++)
            all[i] = -1;
        MPI_CHECK(MPI_Allgatherv(mine, gc[rank], t, all, gc, gd, t, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            for (int j = 0; j < K; j++) {
                int want = i == 1 ? -1 : i * 100 + round * 10 + j;
                CHECK(all[i * K + j] == want, "round %d allgatherv: block %d element %d is %d",
                      round, i, j, all[i * K + j]);
            }
        /* alltoall: block j for rank j */
        int out[K * MAXR], in[K * MAXR];
        for (int i = 0; i < size * K; i++)
            out[i] = rank * 1000 + i;
        MPI_CHECK(MPI_Alltoall(out, n, t, in, n, t, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            for (int j = 0; j < K; j++)
                CHECK(in[i * K + j] == i * 1000 + rank * K + j, "round %d alltoall: %d from %d",
                      round, in[i * K + j], i);
        /* alltoallv, the same blocks but rank 1's empty both ways */
        int cnt[MAXR], dsp[MAXR];
        for (int i = 0; i < size; i++) {
            cnt[i] = (i == 1 || rank == 1) ? 0 : n;
            dsp[i] = i * n;
        }
        for (int i = 0; i < size * K; i++)
            in[i] = -1;
        MPI_CHECK(MPI_Alltoallv(out, cnt, dsp, t, in, cnt, dsp, t, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            for (int j = 0; j < K; j++) {
                int want = (i == 1 || rank == 1) ? -1 : i * 1000 + rank * K + j;
                CHECK(in[i * K + j] == want, "round %d alltoallv: %d from %d, want %d", round,
                      in[i * K + j], i, want);
            }
        /* scatter and gather from every root, the root in place every
         * other round */
        for (int root = 0; root < size; root++) {
            bool root_in_place = rank == root && in_place;
            int src[K * MAXR], got[K], gall[K * MAXR];
            for (int i = 0; i < size * K; i++)
                src[i] = root * 10000 + round * 100 + i;
            for (int j = 0; j < K; j++)
                got[j] = -1;
            MPI_CHECK(MPI_Scatter(src, n, t, root_in_place ? MPI_IN_PLACE : (void *)got, n, t, root,
                                  MPI_COMM_WORLD));
            for (int j = 0; j < K && !root_in_place; j++)
                CHECK(got[j] == root * 10000 + round * 100 + rank * K + j,
                      "round %d scatter from %d (%s): element %d is %d", round, root,
                      derived ? "derived" : "MPI_INT", j, got[j]);
            /* scatterv: block i is K elements at displacement (size-1-i)*K */
            int scnt[MAXR], sdsp[MAXR];
            for (int i = 0; i < size; i++) {
                scnt[i] = n;
                sdsp[i] = (size - 1 - i) * n;
            }
            for (int j = 0; j < K; j++)
                got[j] = -1;
            MPI_CHECK(MPI_Scatterv(src, scnt, sdsp, t,
                                   root_in_place ? MPI_IN_PLACE : (void *)got, n, t, root,
                                   MPI_COMM_WORLD));
            for (int j = 0; j < K && !root_in_place; j++)
                CHECK(got[j] == root * 10000 + round * 100 + (size - 1 - rank) * K + j,
                      "round %d scatterv from %d (%s): element %d is %d", round, root,
                      derived ? "derived" : "MPI_INT", j, got[j]);
            for (int i = 0; i < size * K; i++)
                gall[i] = -1;
            if (root_in_place) {
                for (int j = 0; j < K; j++)
                    gall[rank * K + j] = mine[j];
                MPI_CHECK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gall, n, t, root,
                                     MPI_COMM_WORLD));
            } else {
                MPI_CHECK(MPI_Gather(mine, n, t, gall, n, t, root, MPI_COMM_WORLD));
            }
            for (int i = 0; i < size && rank == root; i++)
                for (int j = 0; j < K; j++)
                    CHECK(gall[i * K + j] == i * 100 + round * 10 + j,
                          "round %d gather to %d (%s): block %d element %d is %d", round, root,
                          derived ? "derived" : "MPI_INT", i, j, gall[i * K + j]);
        }
    }
    /* large blocks: 32768 ints, as MPI_INT x 32768 or one contiguous type */
    enum { BIG = 32768 };
    MPI_Datatype big;
    MPI_CHECK(MPI_Type_contiguous(BIG, MPI_INT, &big));
    MPI_CHECK(MPI_Type_commit(&big));
    int *bmine = malloc(BIG * sizeof(int)), *ball = malloc((size_t)size * BIG * sizeof(int));
    CHECK(bmine && ball, "out of memory");
    for (int round = 0; round < 4; round++) {
        bool derived = (rank + round) % 2 == 1;
        for (int j = 0; j < BIG; j++)
            bmine[j] = rank * 7919 + round * 31 + j;
        for (int i = 0; i < size * BIG; i++)
            ball[i] = -1;
        MPI_CHECK(MPI_Allgather(bmine, derived ? 1 : BIG, derived ? big : MPI_INT, ball,
                                derived ? 1 : BIG, derived ? big : MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            for (int j = 0; j < BIG; j++)
                CHECK(ball[(size_t)i * BIG + j] == i * 7919 + round * 31 + j,
                      "big round %d: block %d element %d is %d", round, i, j,
                      ball[(size_t)i * BIG + j]);
        /* scatter the blocks back from rank 0, gather them at the last rank
         * (blocks this large go linearly: every non-root on the engine) */
        for (int j = 0; j < BIG; j++)
            bmine[j] = -1;
        MPI_CHECK(MPI_Scatter(ball, derived ? 1 : BIG, derived ? big : MPI_INT, bmine,
                              derived ? 1 : BIG, derived ? big : MPI_INT, 0, MPI_COMM_WORLD));
        for (int j = 0; j < BIG; j++)
            CHECK(bmine[j] == rank * 7919 + round * 31 + j, "big round %d scatter: element %d is %d",
                  round, j, bmine[j]);
        for (int i = 0; i < size * BIG; i++)
            ball[i] = -1;
        MPI_CHECK(MPI_Gather(bmine, derived ? 1 : BIG, derived ? big : MPI_INT, ball,
                             derived ? 1 : BIG, derived ? big : MPI_INT, size - 1, MPI_COMM_WORLD));
        for (int i = 0; i < size && rank == size - 1; i++)
            for (int j = 0; j < BIG; j++)
                CHECK(ball[(size_t)i * BIG + j] == i * 7919 + round * 31 + j,
                      "big round %d gather: block %d element %d is %d", round, i, j,
                      ball[(size_t)i * BIG + j]);
    }
    free(bmine);
    free(ball);
    MPI_CHECK(MPI_Type_free(&big));
    if (size > 1) {
        int rc = MPI_Allgather(mine, rank == 0 ? 1 : K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD);
        CHECK(rc != MPI_SUCCESS, "rank %d: counts that disagree were not reported", rank);
        int me = rank, back[MAXR];
        MPI_CHECK(MPI_Allgather(&me, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(back[i] == i, "after the mismatch: [%d] = %d", i, back[i]);
        /* the last rank (a leaf of rank 0's tree) expects 1 element of a
         * block of 4: it reports the truncation; in a gather it gives 1
         * where 4 are expected: with two ranks the root reports it */
        int src[K * MAXR] = {0}, got[K];
        rc = MPI_Scatter(src, K, MPI_INT, got, rank == size - 1 ? 1 : K, MPI_INT, 0,
                         MPI_COMM_WORLD);
        CHECK(rank != size - 1 || rc != MPI_SUCCESS, "rank %d: a truncated scatter block was not "
              "reported", rank);
        rc = MPI_Gather(got, rank == size - 1 ? 1 : K, MPI_INT, all, K, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(size != 2 || rank != 0 || rc != MPI_SUCCESS, "a short gather block was not reported");
        MPI_CHECK(MPI_Allgather(&me, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(back[i] == i, "after the rooted mismatches: [%d] = %d", i, back[i]);
    }
    MPI_CHECK(MPI_Type_free(&four));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_paths_mixed: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
