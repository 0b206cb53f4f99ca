/*
 * cart.c — Cartesian topologies: MPI_Cart_create/get/rank/coords/shift/sub/
 * map, MPI_Cartdim_get, MPI_Dims_create and MPI_Topo_test.
 *
 * Ranks are laid out in row-major order (the last dimension varies
 * fastest), as the standard requires. `reorder` is accepted and ignored:
 * rank i of the new communicator is rank i of the old one.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

/* The Cartesian topology of comm, or raise MPI_ERR_TOPOLOGY. */
#define GET_CART(var, c, comm, fname)                                                    \
    struct pm_cart *var = (c)->cart;                                                     \
    if (!var)                                                                            \
    return pm_error(comm, MPI_ERR_TOPOLOGY,                                              \
                    "%s: the communicator has no Cartesian topology", fname)

struct pm_cart *pm_cart_new(int ndims, const int *dims, const int *periods, int rank)
{
    struct pm_cart *t = calloc(1, sizeof *t);
    size_t n = (size_t)(ndims > 0 ? ndims : 1);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = calloc(n, sizeof *t->dims);
    t->periods = calloc(n, sizeof *t->periods);
    t->coords = calloc(n, sizeof *t->coords);
    if (!t->dims || !t->periods || !t->coords) {
        pm_cart_free(t);
        return NULL;
    }
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    for (int i = ndims - 1; i >= 0; i--) {
        t->coords[i] = rank % dims[i];
        rank /= dims[i];
    }
    return t;
}

struct pm_cart *pm_cart_copy(const struct pm_cart *t)
{
    struct pm_cart *n = pm_cart_new(t->ndims, t->dims, t->periods, 0);
    if (n && t->ndims > 0)
        memcpy(n->coords, t->coords, (size_t)t->ndims * sizeof *n->coords);
    return n;
}

void pm_cart_free(struct pm_cart *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t);
}

/* Check ndims/dims/periods of Cart_create and Cart_map; *nnodes = product. */
static int check_grid(MPI_Comm comm, int size, int ndims, const int dims[], const int periods[],
                      int *nnodes, const char *fn)
{
    if (ndims < 0)
        return pm_error(comm, MPI_ERR_DIMS, "%s: ndims = %d is negative", fn, ndims);
    if (ndims > 0 && (!dims || !periods))
        return pm_error(comm, MPI_ERR_ARG, "%s: dims or periods is NULL", fn);
    long long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return pm_error(comm, MPI_ERR_DIMS, "%s: dims[%d] = %d is not positive", fn, i,
                            dims[i]);
        prod *= dims[i];
        if (prod > size)
            return pm_error(comm, MPI_ERR_ARG,
                            "%s: the grid has more points than the communicator has processes "
                            "(%d)", fn, size);
    }
    *nnodes = (int)prod;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm_old, fn);
    if (comm_cart)
        *comm_cart = MPI_COMM_NULL;
    if (c->is_inter)
        return pm_error(comm_old, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!comm_cart)
        return pm_error(comm_old, MPI_ERR_ARG, "%s: comm_cart is NULL", fn);
    int nnodes;
    int rc = check_grid(comm_old, c->size, ndims, dims, periods, &nnodes, fn);
    if (rc)
        return rc;
    /* The first nnodes ranks, in order, make the grid. */
    struct pm_comm *nc;
    rc = pm_comm_create_first(c, nnodes, &nc);
    if (rc)
        return pm_comm_fail(comm_old, rc, fn);
    if (nc) {
        nc->cart = pm_cart_new(ndims, dims, periods, nc->rank);
        if (!nc->cart) {
            pm_comm_discard(nc);
            return pm_error(comm_old, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        }
        *comm_cart = nc->handle;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Cart_create)

/* Divisors of n in increasing order; count in *k. */
static int *divisors(int n, int *k)
{
    int m = 0;
    for (long i = 1; i * i <= n; i++)
        if (n % i == 0)
            m += i * i == n ? 1 : 2;
    int *d = malloc((size_t)m * sizeof *d);
    if (!d)
        return NULL;
    int lo = 0, hi = m - 1;
    for (long i = 1; i * i <= n; i++)
        if (n % i == 0) {
            d[lo++] = (int)i;
            if (i * i != n)
                d[hi--] = (int)(n / i);
        }
    *k = m;
    return d;
}

/* Depth-first search for the non-increasing factorisation of n into k
 * factors with the smallest spread (largest - smallest); among equal
 * spreads, the one whose smallest factors are largest (compared from the
 * smallest up), which is the choice MPICH makes. */
struct dsearch {
    const int *div;
    int ndiv, k;
    int *cur, *best;
    int best_spread;
};

static bool better(const struct dsearch *s, int spread)
{
    if (spread != s->best_spread)
        return spread < s->best_spread;
    for (int i = s->k - 1; i >= 0; i--)
        if (s->cur[i] != s->best[i])
            return s->cur[i] > s->best[i];
    return false;
}

/* Is b^k <= n? */
static bool pow_le(long b, int k, long n)
{
    long p = 1;
    for (int i = 0; i < k; i++) {
        if (p > n / b)
            return false;
        p *= b;
    }
    return p <= n;
}

/* floor(n^(1/k)) for n >= 1. */
static long iroot(long n, int k)
{
    if (k == 1)
        return n;
    long r = (long)pow((double)n, 1.0 / k);
    if (r < 1)
        r = 1;
    while (pow_le(r + 1, k, n))
        r++;
    while (r > 1 && !pow_le(r, k, n))
        r--;
    return r;
}

/* Factors are tried in increasing order from the smallest that can be the
 * largest of the `left` remaining ones (n^(1/left)); the smallest factor to
 * come is at most (n/f)^(1/(left-1)), which bounds the spread from below and
 * ends the loop as soon as it exceeds the best spread found. */
static void dsearch(struct dsearch *s, int depth, long n, int maxf)
{
    int left = s->k - depth;
    if (left == 1) {
        if (n > maxf)
            return;
        s->cur[depth] = (int)n;
        int spread = s->cur[0] - (int)n;
        if (better(s, spread)) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
        }
        return;
    }
    long lo = iroot(n, left); /* then ceil(n^(1/left)) */
    if (pow_le(lo, left, n - 1))
        lo++;
    int i = 0, hi = s->ndiv; /* first divisor >= lo */
    while (i < hi) {
        int mid = (i + hi) / 2;
        if (s->div[mid] < lo)
            i = mid + 1;
        else
            hi = mid;
    }
    for (; i < s->ndiv && s->div[i] <= maxf; i++) {
        long f = s->div[i];
        if (n % f)
            continue;
        long top = depth == 0 ? f : s->cur[0];
        if (top - iroot(n / f, left - 1) > s->best_spread)
            break;
        s->cur[depth] = (int)f;
        dsearch(s, depth + 1, n / f, (int)f);
    }
}

/* Split n into k >= 1 non-increasing factors, as balanced as possible.
 * Primes larger than the square root of what is left cannot be balanced:
 * they go alone into the first dimensions (keeping at least one for the
 * rest; never the smallest prime), and the rest is searched. */
static int balance(int n, int k, int *out)
{
    int primes[32], counts[32], np = 0, m = n;
    for (long p = 2; p * p <= m; p++)
        if (m % p == 0) {
            primes[np] = (int)p;
            counts[np] = 0;
            while (m % p == 0) {
                m /= (int)p;
                counts[np]++;
            }
            np++;
        }
    if (m > 1) {
        primes[np] = m;
        counts[np++] = 1;
    }
    int lead = 0, rest = n;
    for (int j = np - 1; j > 0 && lead < k - 1; j--) {
        if (counts[j] != 1 || (long)primes[j] * primes[j] <= rest)
            break;
        out[lead++] = primes[j];
        rest /= primes[j];
    }
    int kk = k - lead, ndiv;
    int *div = divisors(rest, &ndiv);
    int *cur = malloc((size_t)kk * sizeof *cur);
    if (!div || !cur) {
        free(div);
        free(cur);
        return MPI_ERR_NO_MEM;
    }
    int *best = out + lead;
    struct dsearch s = {div, ndiv, kk, cur, best, rest};
    /* A factorisation always exists (rest, 1, ..., 1): its spread is rest - 1. */
    best[0] = rest;
    for (int i = 1; i < kk; i++)
        best[i] = 1;
    s.best_spread = rest - 1;
    dsearch(&s, 0, rest, rest);
    free(div);
    free(cur);
    return MPI_SUCCESS;
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    PM_CHECK_INIT(fn);
    if (nnodes <= 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: nnodes = %d is not positive", fn,
                        nnodes);
    if (ndims < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_DIMS, "%s: ndims = %d is negative", fn, ndims);
    if (ndims == 0)
        return MPI_SUCCESS; /* nothing to fill in (as MPICH and Open MPI do) */
    if (!dims)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: dims is NULL", fn);
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return pm_error(MPI_COMM_NULL, MPI_ERR_DIMS, "%s: dims[%d] = %d is negative", fn, i,
                            dims[i]);
        if (dims[i] == 0)
            nfree++;
        else if ((fixed *= dims[i]) > nnodes)
            break;
    }
    if (fixed > nnodes || nnodes % fixed)
        return pm_error(MPI_COMM_NULL, MPI_ERR_DIMS,
                        "%s: %d nodes cannot be split with the nonzero entries of dims", fn,
                        nnodes);
    int rest = (int)(nnodes / fixed);
    if (nfree == 0) {
        if (rest != 1)
            return pm_error(MPI_COMM_NULL, MPI_ERR_DIMS,
                            "%s: the product of dims is not %d and no entry is free", fn,
                            nnodes);
        return MPI_SUCCESS;
    }
    int *best = malloc((size_t)nfree * sizeof *best);
    if (!best || balance(rest, nfree, best) != MPI_SUCCESS) {
        free(best);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = best[j++];
    free(best);
    return MPI_SUCCESS;
}
PM_WEAK(Dims_create)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_CART(t, c, comm, fn);
    if (maxdims < t->ndims)
        return pm_error(comm, MPI_ERR_ARG, "%s: maxdims = %d is less than the %d dimensions",
                        fn, maxdims, t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return pm_error(comm, MPI_ERR_ARG, "%s: dims, periods or coords is NULL", fn);
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}
PM_WEAK(Cart_get)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    PM_CHECK_INIT("MPI_Cartdim_get");
    GET_COMM(c, comm, "MPI_Cartdim_get");
    GET_CART(t, c, comm, "MPI_Cartdim_get");
    if (!ndims)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Cartdim_get: ndims is NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
PM_WEAK(Cartdim_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_CART(t, c, comm, fn);
    if (!rank || (t->ndims > 0 && !coords))
        return pm_error(comm, MPI_ERR_ARG, "%s: coords or rank is NULL", fn);
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return pm_error(comm, MPI_ERR_ARG,
                                "%s: coords[%d] = %d is outside 0..%d of a non-periodic "
                                "dimension", fn, i, x, d - 1);
            x %= d;
            if (x < 0)
                x += d;
        }
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}
PM_WEAK(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_CART(t, c, comm, fn);
    if (rank < 0 || rank >= c->size)
        return pm_error(comm, MPI_ERR_RANK, "%s: rank %d is outside 0..%d", fn, rank,
                        c->size - 1);
    if (maxdims < t->ndims)
        return pm_error(comm, MPI_ERR_ARG, "%s: maxdims = %d is less than the %d dimensions",
                        fn, maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return pm_error(comm, MPI_ERR_ARG, "%s: coords is NULL", fn);
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
    return MPI_SUCCESS;
}
PM_WEAK(Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_CART(t, c, comm, fn);
    if (direction < 0 || direction >= t->ndims)
        return pm_error(comm, MPI_ERR_ARG, "%s: direction %d is outside 0..%d", fn, direction,
                        t->ndims - 1);
    if (!rank_source || !rank_dest)
        return pm_error(comm, MPI_ERR_ARG, "%s: rank_source or rank_dest is NULL", fn);
    int d = t->dims[direction];
    /* Rank of the process `delta` steps away along `direction`. */
    long stride = 1;
    for (int i = t->ndims - 1; i > direction; i--)
        stride *= t->dims[i];
    int me = t->coords[direction];
    long to[2] = {(long)me - disp, (long)me + disp};
    int out[2];
    for (int k = 0; k < 2; k++) {
        long x = to[k];
        if (x < 0 || x >= d) {
            if (!t->periods[direction]) {
                out[k] = MPI_PROC_NULL;
                continue;
            }
            x %= d;
            if (x < 0)
                x += d;
        }
        out[k] = (int)(c->rank + (x - me) * stride);
    }
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}
PM_WEAK(Cart_shift)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    GET_CART(t, c, comm, fn);
    if ((t->ndims > 0 && !remain_dims) || !newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: remain_dims or newcomm is NULL", fn);
    /* color: position among the dropped dimensions; key: among the kept
     * ones (row-major both), so each subgrid keeps the row-major order. */
    int color = 0, key = 0, nd = 0;
    int *dims = malloc((size_t)(t->ndims + 1) * sizeof *dims);
    int *periods = malloc((size_t)(t->ndims + 1) * sizeof *periods);
    if (!dims || !periods) {
        free(dims);
        free(periods);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + t->coords[i];
            dims[nd] = t->dims[i];
            periods[nd++] = t->periods[i];
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    /* Keeping no dimension gives a zero-dimensional grid, which has one
     * process (as MPI_Cart_create with ndims 0): the grid's rank 0 (so does
     * MPICH); the others get MPI_COMM_NULL. */
    if (nd == 0)
        color = c->rank == 0 ? 0 : MPI_UNDEFINED;
    struct pm_comm *nc;
    int rc = pm_comm_split_impl(c, color, key, &nc);
    if (rc == MPI_SUCCESS && nc) {
        nc->cart = pm_cart_new(nd, dims, periods, nc->rank);
        if (!nc->cart) {
            pm_comm_discard(nc);
            rc = MPI_ERR_NO_MEM;
        }
    }
    free(dims);
    free(periods);
    if (rc)
        return pm_comm_fail(comm, rc, fn);
    if (nc)
        *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Cart_sub)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (c->is_inter)
        return pm_error(comm, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!newrank)
        return pm_error(comm, MPI_ERR_ARG, "%s: newrank is NULL", fn);
    int nnodes;
    int rc = check_grid(comm, c->size, ndims, dims, periods, &nnodes, fn);
    if (rc)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
PM_WEAK(Cart_map)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    PM_CHECK_INIT("MPI_Topo_test");
    GET_COMM(c, comm, "MPI_Topo_test");
    if (!status)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Topo_test: status is NULL");
    *status = c->cart ? MPI_CART : c->graph ? MPI_GRAPH : c->dgraph ? MPI_DIST_GRAPH : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
PM_WEAK(Topo_test)
