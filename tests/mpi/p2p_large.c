/*
 * p2p_large.c — the MPI-4.0 large-count point-to-point calls (MPI_*_c).
 *
 * Checks, ranks paired (0-1, 2-3, ...; an odd last rank talks to itself):
 * every send mode and receive form with an MPI_Count count moves the data
 * intact (0 B - 4 MiB, odd alignment, a noncontiguous vector type), the
 * persistent _init_c forms, Sendrecv(_replace)_c and their nonblocking
 * twins, matched receives (Mrecv_c, Imrecv_c), Buffer_attach_c/detach_c,
 * and the counts a status gives (Get_count_c, Get_elements_c; the int forms
 * read MPI_UNDEFINED past INT_MAX). Errors: a negative count, a count whose
 * bytes overflow the address space. With argument `big` (and the memory),
 * one message of more than INT_MAX bytes between the pair.
 */
#include <limits.h>
#include <stdbool.h>
#include <unistd.h>

#include "p2p_common.h"

static int rank, size, peer;

static const MPI_Count sizes[] = {0, 1, 7, 4096, 65537, 300001, (MPI_Count)4 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* One message of `n` bytes each way with the send form `mode`. */
static void exchange(int mode, MPI_Count n, int salt)
{
    unsigned char *s = malloc((size_t)n + 3), *r = malloc((size_t)n + 3);
    CHECK(s && r, "malloc");
    uint64_t seed = (uint64_t)rank * 1000 + (uint64_t)salt, pseed = (uint64_t)peer * 1000 + salt;
    p2p_fill(s + 3, (size_t)n, seed);
    memset(r, 0xee, (size_t)n + 3);
    MPI_Request rq[2];
    MPI_Status st;
    int tag = salt % 1000;
    MPI_CHECK(MPI_Irecv_c(r + 1, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[0]));
    /* the peer's receive is posted before anyone sends (ready mode) */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    switch (mode) {
    case 0: MPI_CHECK(MPI_Send_c(s + 3, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case 1: MPI_CHECK(MPI_Ssend_c(s + 3, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case 2: MPI_CHECK(MPI_Rsend_c(s + 3, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case 3:
    case 4:
    case 5: {
        int (*f)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) =
            mode == 3 ? MPI_Isend_c : mode == 4 ? MPI_Issend_c : MPI_Irsend_c;
        MPI_CHECK(f(s + 3, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    }
    }
    MPI_CHECK(MPI_Wait(&rq[0], &st));
    MPI_Count cnt = -1;
    MPI_CHECK(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
    CHECK(cnt == n && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
          "mode %d: count %lld (want %lld), source %d, tag %d", mode, (long long)cnt,
          (long long)n, st.MPI_SOURCE, st.MPI_TAG);
    CHECK(r[0] == 0xee && r[n + 1] == 0xee, "mode %d: wrote outside the buffer (%lld B)", mode,
          (long long)n);
    long bad = p2p_check(r + 1, (size_t)n, pseed);
    CHECK(bad < 0, "mode %d, %lld bytes: byte %ld wrong", mode, (long long)n, bad);
    free(s);
    free(r);
}

static void test_modes(void)
{
    for (int mode = 0; mode < 6; mode++)
        for (size_t k = 0; k < NSIZES; k++)
            exchange(mode, sizes[k], mode * 100 + (int)k);
}

/* A vector of doubles (stride 3) both ways with Sendrecv_c, then in place
 * with Sendrecv_replace_c and the nonblocking twins. */
static void test_combined(void)
{
    MPI_Datatype v, vec; /* 1000 pairs of doubles, stride 3; instances 3000 doubles apart */
    MPI_CHECK(MPI_Type_vector(1000, 2, 3, MPI_DOUBLE, &v));
    MPI_CHECK(MPI_Type_create_resized(v, 0, 3000 * sizeof(double), &vec));
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Type_commit(&vec));
    const MPI_Count count = 5, nd = count * 3000;
    double *a = malloc(nd * sizeof *a), *b = malloc(nd * sizeof *b);
    CHECK(a && b, "malloc");
    for (int form = 0; form < 4; form++) {
        for (MPI_Count i = 0; i < nd; i++) {
            a[i] = rank * 1e6 + (double)i + form;
            b[i] = -1;
        }
        MPI_Status st;
        MPI_Request rq;
        double *got = b;
        switch (form) {
        case 0:
            MPI_CHECK(MPI_Sendrecv_c(a, count, vec, peer, 7, b, count, vec, peer, 7,
                                     MPI_COMM_WORLD, &st));
            break;
        case 1:
            MPI_CHECK(MPI_Isendrecv_c(a, count, vec, peer, 7, b, count, vec, peer, 7,
                                      MPI_COMM_WORLD, &rq));
            MPI_CHECK(MPI_Wait(&rq, &st));
            break;
        case 2:
            MPI_CHECK(MPI_Sendrecv_replace_c(a, count, vec, peer, 8, peer, 8, MPI_COMM_WORLD,
                                             &st));
            got = a;
            break;
        case 3:
            MPI_CHECK(MPI_Isendrecv_replace_c(a, count, vec, peer, 8, peer, 8, MPI_COMM_WORLD,
                                              &rq));
            MPI_CHECK(MPI_Wait(&rq, &st));
            got = a;
            break;
        }
        MPI_Count cnt = -1, el = -1;
        MPI_CHECK(MPI_Get_count_c(&st, vec, &cnt));
        MPI_CHECK(MPI_Get_elements_c(&st, vec, &el));
        CHECK(cnt == count && el == count * 2000, "form %d: count %lld elements %lld", form,
              (long long)cnt, (long long)el);
        for (MPI_Count i = 0; i < nd; i++) {
            /* gaps keep what was there: -1, or our own data when replaced */
            double mine = got == a ? rank * 1e6 + (double)i + form : -1;
            double want = i % 3 != 2 ? peer * 1e6 + (double)i + form : mine;
            CHECK(got[i] == want, "form %d: element %lld is %g, want %g", form, (long long)i,
                  got[i], want);
        }
    }
    MPI_CHECK(MPI_Type_free(&vec));
    free(a);
    free(b);
}

/* Persistent sends of each mode and a persistent receive, started twice. */
static void test_persistent(void)
{
    const MPI_Count n = 70001;
    int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
    CHECK(s && r, "malloc");
    /* room for every buffered send of this test: a send's space comes back
     * only when the engine has seen it leave */
    int bsize = 4 * ((int)(n * sizeof(int)) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    CHECK(bbuf, "malloc");
    MPI_CHECK(MPI_Buffer_attach_c(bbuf, bsize));
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request rq[2];
        MPI_CHECK(MPI_Recv_init_c(r, n, MPI_INT, peer, 20 + mode, MPI_COMM_WORLD, &rq[0]));
        int (*f)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) =
            mode == 0 ? MPI_Send_init_c : mode == 1 ? MPI_Ssend_init_c
                                      : mode == 2 ? MPI_Rsend_init_c : MPI_Bsend_init_c;
        MPI_CHECK(f(s, n, MPI_INT, peer, 20 + mode, MPI_COMM_WORLD, &rq[1]));
        for (int round = 0; round < 2; round++) {
            for (MPI_Count i = 0; i < n; i++) {
                s[i] = (int)(rank * 7 + i * 3 + round + mode);
                r[i] = -1;
            }
            MPI_CHECK(MPI_Start(&rq[0]));
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* ready mode: receive posted */
            MPI_CHECK(MPI_Start(&rq[1]));
            MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            for (MPI_Count i = 0; i < n; i++)
                CHECK(r[i] == (int)(peer * 7 + i * 3 + round + mode),
                      "persistent mode %d round %d: element %lld is %d", mode, round,
                      (long long)i, r[i]);
        }
        MPI_CHECK(MPI_Request_free(&rq[0]));
        MPI_CHECK(MPI_Request_free(&rq[1]));
    }
    /* buffered sends, blocking and not, then the detach hands the buffer back */
    for (int form = 0; form < 2; form++) {
        for (MPI_Count i = 0; i < n; i++)
            s[i] = (int)(rank + i + form);
        MPI_Request rq;
        MPI_CHECK(MPI_Irecv_c(r, n, MPI_INT, peer, 30, MPI_COMM_WORLD, &rq));
        if (form == 0) {
            MPI_CHECK(MPI_Bsend_c(s, n, MPI_INT, peer, 30, MPI_COMM_WORLD));
        } else {
            MPI_Request b;
            MPI_CHECK(MPI_Ibsend_c(s, n, MPI_INT, peer, 30, MPI_COMM_WORLD, &b));
            MPI_CHECK(MPI_Wait(&b, MPI_STATUS_IGNORE));
        }
        MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (MPI_Count i = 0; i < n; i++)
            CHECK(r[i] == (int)(peer + i + form), "bsend form %d: element %lld is %d", form,
                  (long long)i, r[i]);
    }
    void *back = NULL;
    MPI_Count bsz = -1;
    MPI_CHECK(MPI_Buffer_detach_c(&back, &bsz));
    CHECK(back == bbuf && bsz == bsize, "detach gave %p, %lld", back, (long long)bsz);
    free(bbuf);
    free(s);
    free(r);
}

/* Mprobe, then the large-count matched receives. */
static void test_matched(void)
{
    const MPI_Count n = 123457;
    unsigned char *s = malloc((size_t)n), *r = malloc((size_t)n);
    CHECK(s && r, "malloc");
    for (int form = 0; form < 2; form++) {
        p2p_fill(s, (size_t)n, (uint64_t)rank + 50 + form);
        MPI_Request sr;
        MPI_CHECK(MPI_Isend_c(s, n, MPI_BYTE, peer, 40, MPI_COMM_WORLD, &sr));
        MPI_Message msg;
        MPI_Status st;
        MPI_CHECK(MPI_Mprobe(peer, 40, MPI_COMM_WORLD, &msg, &st));
        MPI_Count cnt = -1;
        MPI_CHECK(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
        CHECK(cnt == n, "probed count %lld", (long long)cnt);
        if (form == 0) {
            MPI_CHECK(MPI_Mrecv_c(r, n, MPI_BYTE, &msg, &st));
        } else {
            MPI_Request rq;
            MPI_CHECK(MPI_Imrecv_c(r, n, MPI_BYTE, &msg, &rq));
            MPI_CHECK(MPI_Wait(&rq, &st));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "message handle not released");
        long bad = p2p_check(r, (size_t)n, (uint64_t)peer + 50 + form);
        CHECK(bad < 0, "matched form %d: byte %ld wrong", form, bad);
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
    free(s);
    free(r);
}

/* What a status says past INT_MAX, without moving that much data. */
static void test_status_counts(void)
{
    MPI_Status st;
    const MPI_Count big = (MPI_Count)3 * 1000000000; /* > INT_MAX, a multiple of 3 */
    MPI_CHECK(MPI_Status_set_elements_x(&st, MPI_BYTE, big));
    int c = 0;
    MPI_Count cc = 0;
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &c));
    CHECK(c == MPI_UNDEFINED, "int count of %lld bytes: %d", (long long)big, c);
    MPI_CHECK(MPI_Get_count_c(&st, MPI_BYTE, &cc));
    CHECK(cc == big, "large count: %lld", (long long)cc);
    MPI_CHECK(MPI_Get_elements(&st, MPI_BYTE, &c));
    CHECK(c == MPI_UNDEFINED, "int elements: %d", c);
    MPI_CHECK(MPI_Get_elements_c(&st, MPI_BYTE, &cc));
    CHECK(cc == big, "large elements: %lld", (long long)cc);
    MPI_Datatype three;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_BYTE, &three));
    MPI_CHECK(MPI_Type_commit(&three));
    MPI_CHECK(MPI_Get_count_c(&st, three, &cc));
    CHECK(cc == big / 3, "count of 3-byte items: %lld", (long long)cc);
    MPI_CHECK(MPI_Get_count(&st, three, &c));
    CHECK(c == big / 3, "int count of 3-byte items: %d", c); /* fits an int */
    MPI_CHECK(MPI_Status_set_elements_x(&st, MPI_BYTE, 4));
    MPI_CHECK(MPI_Get_count_c(&st, three, &cc));
    CHECK(cc == MPI_UNDEFINED, "4 bytes as 3-byte items: %lld", (long long)cc);
    /* MPI_Status_set_elements_c (MPI-4): basic elements (bytes) of the type */
    MPI_CHECK(MPI_Status_set_elements_c(&st, three, big + 3));
    MPI_CHECK(MPI_Get_elements_c(&st, MPI_BYTE, &cc));
    CHECK(cc == big + 3, "set_elements_c of %lld elements: %lld bytes", big + 3,
          (long long)cc);
    MPI_CHECK(MPI_Get_count_c(&st, three, &cc));
    CHECK(cc == big / 3 + 1, "set_elements_c then get_count_c: %lld", (long long)cc);
    MPI_CHECK(MPI_Type_free(&three));
}

static void test_errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char b[8];
    MPI_Request rq;
    CHECK(p2p_class(MPI_Send_c(b, -1, MPI_BYTE, peer, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "negative count accepted");
    CHECK(p2p_class(MPI_Irecv_c(b, -5, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &rq)) ==
              MPI_ERR_COUNT,
          "negative receive count accepted");
    /* 2^61 ints: 2^63 bytes, past any address space */
    const MPI_Count huge = (MPI_Count)1 << 61;
    CHECK(p2p_class(MPI_Send_c(b, huge, MPI_INT, peer, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "overflowing send count accepted");
    CHECK(p2p_class(MPI_Recv_c(b, huge, MPI_INT, peer, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE)) == MPI_ERR_COUNT,
          "overflowing receive count accepted");
    CHECK(p2p_class(MPI_Send_init_c(b, huge, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq)) ==
              MPI_ERR_COUNT,
          "overflowing persistent count accepted");
    CHECK(p2p_class(MPI_Buffer_attach_c(b, -1)) == MPI_ERR_ARG, "negative buffer size accepted");
    /* a buffer larger than an int reads MPI_UNDEFINED from the int detach;
     * never touched, so it costs no memory */
    const MPI_Count bsz = (MPI_Count)INT_MAX + 100;
    void *big = malloc((size_t)bsz);
    if (big) {
        MPI_CHECK(MPI_Buffer_attach_c(big, bsz));
        void *back = NULL;
        int isz = 0;
        MPI_CHECK(MPI_Buffer_detach(&back, &isz));
        CHECK(back == big && isz == MPI_UNDEFINED, "int detach of %lld bytes: %p, %d",
              (long long)bsz, back, isz);
        free(big);
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* One message past INT_MAX bytes (about 2 GiB each side). */
static void test_big(void)
{
    const MPI_Count n = (MPI_Count)INT_MAX + 4099;
    if (!mt_all_have_memory(3.0 * (double)n * size)) {
        if (rank == 0)
            printf("p2p_large: big message skipped (not enough free memory)\n");
        return;
    }
    unsigned char *buf = malloc((size_t)n);
    CHECK(buf, "malloc of %lld bytes", (long long)n);
    if (rank < peer || peer == rank) {
        p2p_fill(buf, (size_t)n, 4242);
        MPI_Request rq;
        unsigned char *rb = peer == rank ? malloc((size_t)n) : NULL;
        if (peer == rank) {
            CHECK(rb, "malloc");
            MPI_CHECK(MPI_Irecv_c(rb, n, MPI_BYTE, rank, 99, MPI_COMM_WORLD, &rq));
        }
        MPI_CHECK(MPI_Send_c(buf, n, MPI_BYTE, peer, 99, MPI_COMM_WORLD));
        if (rb) {
            MPI_Status st;
            MPI_CHECK(MPI_Wait(&rq, &st));
            CHECK(p2p_check(rb, (size_t)n, 4242) < 0, "self: big message corrupted");
            free(rb);
        }
    } else {
        memset(buf, 0, (size_t)n);
        MPI_Status st;
        MPI_CHECK(MPI_Recv_c(buf, n, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &st));
        MPI_Count cnt = -1;
        int icnt = 0;
        MPI_CHECK(MPI_Get_count_c(&st, MPI_BYTE, &cnt));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &icnt));
        CHECK(cnt == n && icnt == MPI_UNDEFINED, "big message: count %lld / %d", (long long)cnt,
              icnt);
        long bad = p2p_check(buf, (size_t)n, 4242);
        CHECK(bad < 0, "big message: byte %ld wrong", bad);
    }
    free(buf);
    if (rank == 0)
        printf("p2p_large: %lld-byte message ok\n", (long long)n);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    test_modes();
    test_combined();
    test_persistent();
    test_matched();
    test_status_counts();
    test_errors();
    if (argc > 1 && strcmp(argv[1], "big") == 0)
        test_big();
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_large: ok\n");
    return 0;
}
