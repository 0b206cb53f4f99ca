/*
 * coll_reduce_util.h — helpers of the reduction-family collective tests
 * (coll_reduce_*.c and coll_count_mismatch.c, coll_peer_death.c): deterministic
 * inputs, a 2x2 matrix product modulo a prime as a non-commutative operation,
 * and a wait that completes a request with MPI_Test polling (so that
 * nonblocking collectives are progressed by the engine, not by a blocking
 * wait).
 */
#ifndef PROUST_COLL_REDUCE_UTIL_H
#define PROUST_COLL_REDUCE_UTIL_H

#include "mpitest.h"

/* Input element i of rank r in test `t`. */
static inline int ca_val(int t, int r, long i)
{
    return (int)((t * 7919L + r * 131L + i * 7L) % 1009L);
}

/* Sum of ca_val over ranks [lo, hi]. */
static inline long ca_sum(int t, int lo, int hi, long i)
{
    long s = 0;
    for (int r = lo; r <= hi; r++)
        s += ca_val(t, r, i);
    return s;
}

/* Complete a request by polling MPI_Test (bounded: a hang fails). */
static inline void ca_poll(MPI_Request *req)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag) {
        MPI_CHECK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        CHECK(MPI_Wtime() - t0 < 60.0, "request not complete after 60 s");
    }
    CHECK(*req == MPI_REQUEST_NULL, "completed request not set to MPI_REQUEST_NULL");
}

/* ---- 2x2 matrices modulo a prime: a non-commutative product ------------- */
#define CA_P 10007
typedef struct {
    int a, b, c, d;
} ca_mat;

static inline ca_mat ca_mul(ca_mat x, ca_mat y)
{
    ca_mat z = {(x.a * y.a + x.b * y.c) % CA_P, (x.a * y.b + x.b * y.d) % CA_P,
                (x.c * y.a + x.d * y.c) % CA_P, (x.c * y.b + x.d * y.d) % CA_P};
    return z;
}

/* Matrix i of rank r in test t: entries small and varied so products of
 * different orders differ. */
static inline ca_mat ca_matval(int t, int r, long i)
{
    ca_mat m = {(int)((r + i + t) % 7 + 1), (int)((r * 3 + i) % 5), (int)((r + 2 * i + t) % 3),
                (int)((r * i) % 4 + 1)};
    return m;
}

/* Product of matrices i of ranks lo..hi in rank order. */
static inline ca_mat ca_matprod(int t, int lo, int hi, long i)
{
    ca_mat p = ca_matval(t, lo, i);
    for (int r = lo + 1; r <= hi; r++)
        p = ca_mul(p, ca_matval(t, r, i));
    return p;
}

static inline int ca_mateq(ca_mat x, ca_mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

/* MPI user function: inout = in * inout (in comes first). */
static inline void ca_matop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    ca_mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = ca_mul(x[i], y[i]);
}

#endif /* PROUST_COLL_REDUCE_UTIL_H */
