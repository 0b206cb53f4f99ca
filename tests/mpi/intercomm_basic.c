/*
 * intercomm_basic.c — intercommunicators: MPI_Intercomm_create between the
 * two halves of MPI_COMM_WORLD (leaders 0 and others), remote size and
 * group, traffic across (and isolation from a dup), MPI_Intercomm_merge in
 * both orders, MPI_Comm_split and MPI_Comm_create of an intercommunicator,
 * Comm_compare, and an intercommunicator between two MPI_COMM_SELFs.
 * Needs at least 2 ranks.
 */
#include <stdbool.h>

#include "mpitest.h"

static int wrank, wsize, half;

/* World ranks of the local and remote groups of an intercommunicator. */
static void groups(MPI_Comm ic, int *lw, int *ln, int *rw, int *rn)
{
    MPI_Group l, r, w;
    int idx[64];
    for (int i = 0; i < 64; i++)
        idx[i] = i;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MPI_CHECK(MPI_Comm_group(ic, &l));
    MPI_CHECK(MPI_Comm_remote_group(ic, &r));
    MPI_CHECK(MPI_Group_size(l, ln));
    MPI_CHECK(MPI_Group_size(r, rn));
    MPI_CHECK(MPI_Group_translate_ranks(l, *ln, idx, w, lw));
    MPI_CHECK(MPI_Group_translate_ranks(r, *rn, idx, w, rw));
    MPI_CHECK(MPI_Group_free(&l));
    MPI_CHECK(MPI_Group_free(&r));
    MPI_CHECK(MPI_Group_free(&w));
}

/* Every local rank sends its world rank and salt to every remote rank on
 * both communicators, posting the receives of the second first. */
static void cross_traffic(MPI_Comm a, MPI_Comm b, int salt)
{
    int lw[64], rw[64], ln, rn, me;
    groups(a, lw, &ln, rw, &rn);
    MPI_CHECK(MPI_Comm_rank(a, &me));
    MPI_Comm cs[2] = {a, b};
    int out[2] = {wrank * 100 + salt, wrank * 100 + salt + 50};
    MPI_Request req[2 * 64];
    int nreq = 0;
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < rn; r++)
            MPI_CHECK(MPI_Isend(&out[k], 1, MPI_INT, r, 5, cs[k], &req[nreq++]));
    for (int k = 1; k >= 0; k--)
        for (int r = 0; r < rn; r++) {
            int in = -1;
            MPI_Status st;
            MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, r, 5, cs[k], &st));
            CHECK(in == rw[r] * 100 + salt + 50 * k && st.MPI_SOURCE == r,
                  "from remote %d on communicator %d: %d (source %d)", r, k, in, st.MPI_SOURCE);
        }
    MPI_CHECK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
}

static void ring(MPI_Comm c, int salt)
{
    int r, n, in = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &n));
    int out = r + salt;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 1, &in, 1, MPI_INT, (r + n - 1) % n, 1,
                           c, MPI_STATUS_IGNORE));
    CHECK(in == (r + n - 1) % n + salt, "ring: %d", in);
}

static void check_merged(MPI_Comm m, bool a_first)
{
    int r, n;
    MPI_CHECK(MPI_Comm_rank(m, &r));
    MPI_CHECK(MPI_Comm_size(m, &n));
    int want = a_first ? wrank : (wrank >= half ? wrank - half : wrank + (wsize - half));
    CHECK(n == wsize && r == want, "merged: rank %d (expected %d) size %d", r, want, n);
    ring(m, 3);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= 64, "needs 2 to 64 ranks");
    half = wsize / 2;
    bool in_a = wrank < half;

    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, in_a, wrank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 17, &ic));
    int flag, n, rn, r;
    MPI_CHECK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "Comm_test_inter: %d", flag);
    MPI_CHECK(MPI_Comm_size(ic, &n));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rn));
    MPI_CHECK(MPI_Comm_rank(ic, &r));
    int asz = half, bsz = wsize - half;
    CHECK(n == (in_a ? asz : bsz) && rn == (in_a ? bsz : asz), "sizes %d/%d", n, rn);
    CHECK(r == (in_a ? wrank : wrank - half), "rank %d", r);
    int lw[64], rw[64], ln, rnn;
    groups(ic, lw, &ln, rw, &rnn);
    for (int i = 0; i < rnn; i++)
        CHECK(rw[i] == (in_a ? half + i : i), "remote member %d is %d", i, rw[i]);
    for (int i = 0; i < ln; i++)
        CHECK(lw[i] == (in_a ? i : half + i), "local member %d is %d", i, lw[i]);

    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(ic, &dup));
    int res;
    MPI_CHECK(MPI_Comm_compare(ic, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare(intercomm, dup) %d", res);
    MPI_CHECK(MPI_Comm_compare(ic, local, &res));
    CHECK(res == MPI_UNEQUAL, "compare(intercomm, intracomm) %d", res);
    MPI_CHECK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag, "the dup of an intercommunicator is not one");
    cross_traffic(ic, dup, 1);

    MPI_Comm m;
    MPI_CHECK(MPI_Intercomm_merge(ic, in_a ? 0 : 1, &m));
    check_merged(m, true);
    MPI_CHECK(MPI_Comm_free(&m));
    MPI_CHECK(MPI_Intercomm_merge(dup, in_a ? 1 : 0, &m));
    check_merged(m, false);
    MPI_CHECK(MPI_Comm_free(&m));
    MPI_CHECK(MPI_Intercomm_merge(ic, 1, &m)); /* a tie: some order, the same everywhere */
    MPI_CHECK(MPI_Comm_size(m, &n));
    CHECK(n == wsize, "merge with equal high: size %d", n);
    ring(m, 4);

    /* Leaders other than rank 0, with the merged communicator as peer. */
    MPI_Comm ic2;
    int mr;
    MPI_CHECK(MPI_Comm_rank(m, &mr));
    int lsize = in_a ? asz : bsz;
    int other_leader_world = in_a ? wsize - 1 : half - 1; /* last rank of the other half */
    int other_leader_m;
    {
        MPI_Group wg, mg;
        MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MPI_CHECK(MPI_Comm_group(m, &mg));
        MPI_CHECK(MPI_Group_translate_ranks(wg, 1, &other_leader_world, mg, &other_leader_m));
        MPI_CHECK(MPI_Group_free(&wg));
        MPI_CHECK(MPI_Group_free(&mg));
    }
    MPI_CHECK(MPI_Intercomm_create(local, lsize - 1, m, other_leader_m, 99, &ic2));
    cross_traffic(ic2, ic, 2);
    MPI_CHECK(MPI_Comm_free(&ic2));
    MPI_CHECK(MPI_Comm_free(&m));

    /* Split of the intercommunicator by world parity, keys reversed. */
    MPI_Comm sp;
    MPI_CHECK(MPI_Comm_split(ic, wrank % 2, -wrank, &sp));
    int la = 0, lb = 0; /* members of my parity in A and in B */
    for (int i = 0; i < wsize; i++)
        if (i % 2 == wrank % 2) {
            if (i < half)
                la++;
            else
                lb++;
        }
    int myside = in_a ? la : lb, other = in_a ? lb : la;
    if (other == 0) {
        CHECK(sp == MPI_COMM_NULL, "split with an empty remote side gave a communicator");
    } else {
        MPI_CHECK(MPI_Comm_size(sp, &n));
        MPI_CHECK(MPI_Comm_remote_size(sp, &rn));
        MPI_CHECK(MPI_Comm_rank(sp, &r));
        CHECK(n == myside && rn == other, "split sizes %d/%d (expected %d/%d)", n, rn, myside,
              other);
        int above = 0; /* same parity, same side, larger world rank: before me */
        for (int i = wrank + 2; i < (in_a ? half : wsize); i += 2)
            above++;
        CHECK(r == above, "split rank %d, expected %d", r, above);
        MPI_Comm spd;
        MPI_CHECK(MPI_Comm_dup(sp, &spd));
        cross_traffic(sp, spd, 3);
        MPI_CHECK(MPI_Comm_free(&spd));
        MPI_CHECK(MPI_Comm_free(&sp));
    }

    /* Comm_create of the intercommunicator: drop local rank 0 where the
     * local group has more than one member. */
    MPI_Group lg, sub;
    MPI_CHECK(MPI_Comm_group(ic, &lg));
    int zero = 0, lsz;
    MPI_CHECK(MPI_Group_size(lg, &lsz));
    if (lsz > 1)
        MPI_CHECK(MPI_Group_excl(lg, 1, &zero, &sub));
    else
        MPI_CHECK(MPI_Group_incl(lg, 1, &zero, &sub));
    MPI_Comm cr;
    MPI_CHECK(MPI_Comm_create(ic, sub, &cr));
    int rank_in_ic;
    MPI_CHECK(MPI_Comm_rank(ic, &rank_in_ic));
    if (lsz > 1 && rank_in_ic == 0) {
        CHECK(cr == MPI_COMM_NULL, "excluded rank got a communicator");
    } else {
        int rsz;
        MPI_CHECK(MPI_Comm_remote_size(ic, &rsz));
        MPI_CHECK(MPI_Comm_size(cr, &n));
        MPI_CHECK(MPI_Comm_remote_size(cr, &rn));
        CHECK(n == (lsz > 1 ? lsz - 1 : 1) && rn == (rsz > 1 ? rsz - 1 : 1),
              "Comm_create of an intercommunicator: sizes %d/%d", n, rn);
        MPI_Comm crd;
        MPI_CHECK(MPI_Comm_dup(cr, &crd));
        cross_traffic(cr, crd, 4);
        MPI_CHECK(MPI_Comm_free(&crd));
        MPI_CHECK(MPI_Comm_free(&cr));
    }
    MPI_CHECK(MPI_Group_free(&sub));
    MPI_CHECK(MPI_Group_free(&lg));

    /* Between two processes only: MPI_COMM_SELF on both sides. */
    if (wrank < 2) {
        MPI_Comm pair, pair2;
        MPI_CHECK(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - wrank, 3, &pair));
        MPI_CHECK(MPI_Comm_remote_size(pair, &rn));
        CHECK(rn == 1, "pair: remote size %d", rn);
        MPI_CHECK(MPI_Comm_dup(pair, &pair2));
        cross_traffic(pair, pair2, 5);
        MPI_CHECK(MPI_Intercomm_merge(pair, wrank, &m));
        MPI_CHECK(MPI_Comm_rank(m, &r));
        CHECK(r == wrank, "pair merge: rank %d", r);
        MPI_CHECK(MPI_Comm_free(&m));
        MPI_CHECK(MPI_Comm_free(&pair2));
        MPI_CHECK(MPI_Comm_free(&pair));
    }

    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
