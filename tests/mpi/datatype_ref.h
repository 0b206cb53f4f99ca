/*
 * datatype_ref.h — a reference interpreter of type maps for the datatype
 * tests: walks a datatype through MPI_Type_get_envelope/get_contents and
 * lists its basic elements (byte displacement, size) in type-map order,
 * straight from the standard's definitions of each constructor (subarray
 * and darray by enumerating array indices). Independent of the library's
 * flattening, so packing can be compared against it.
 */
#ifndef DATATYPE_REF_H
#define DATATYPE_REF_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

struct ref_ent {
    MPI_Aint disp;
    int len;
};
struct ref_map {
    struct ref_ent *e;
    size_t n, cap;
};

static void ref_add(struct ref_map *m, MPI_Aint disp, int len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
        CHECK(m->e, "out of memory");
    }
    m->e[m->n].disp = disp;
    m->e[m->n].len = len;
    m->n++;
}

static MPI_Aint ref_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
    return ext;
}

struct ref_pair { MPI_Datatype t; int a, b_off, b; };
#define REF_PAIR(T, S, A, B) {T, sizeof(A), offsetof(S, b), sizeof(B)}
struct ref_fi { float a; int b; };
struct ref_di { double a; int b; };
struct ref_li { long a; int b; };
struct ref_ii { int a; int b; };
struct ref_si { short a; int b; };
struct ref_ldi { long double a; int b; };

static void ref_map_of(MPI_Datatype t, MPI_Aint base, struct ref_map *m);

/* Walk the elements of an n-dimensional index space in memory order
 * (`order`), calling ref_map_of for those `pick` keeps. */
static void ref_nd(int ndims, const int *sizes, int order, MPI_Datatype old, MPI_Aint base,
                   struct ref_map *m, int (*pick)(const int *idx, void *arg), void *arg)
{
    int idx[16] = {0};
    long total = 1;
    MPI_Aint ext = ref_extent(old);
    for (int d = 0; d < ndims; d++)
        total *= sizes[d];
    for (long k = 0; k < total; k++) {
        /* decode k: fastest dimension is the last (C) or the first (Fortran) */
        long r = k, off = 0, mul = 1;
        for (int s = 0; s < ndims; s++) {
            int d = order == MPI_ORDER_C ? ndims - 1 - s : s;
            idx[d] = (int)(r % sizes[d]);
            r /= sizes[d];
            off += idx[d] * mul;
            mul *= sizes[d];
        }
        if (pick(idx, arg))
            ref_map_of(old, base + off * ext, m);
    }
}

struct ref_sub { int ndims; const int *sub, *start; };
static int ref_pick_sub(const int *idx, void *arg)
{
    struct ref_sub *s = arg;
    for (int d = 0; d < s->ndims; d++)
        if (idx[d] < s->start[d] || idx[d] >= s->start[d] + s->sub[d])
            return 0;
    return 1;
}

struct ref_darray { int ndims; const int *gsizes, *distribs, *dargs, *psizes; int coords[16]; };
static int ref_pick_darray(const int *idx, void *arg)
{
    struct ref_darray *a = arg;
    for (int d = 0; d < a->ndims; d++) {
        int g = a->gsizes[d], p = a->psizes[d], darg = a->dargs[d], owner;
        if (a->distribs[d] == MPI_DISTRIBUTE_NONE)
            continue;
        if (a->distribs[d] == MPI_DISTRIBUTE_BLOCK) {
            int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
            owner = idx[d] / blk;
        } else {
            int blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
            owner = (idx[d] / blk) % p;
        }
        if (owner != a->coords[d])
            return 0;
    }
    return 1;
}

static void ref_map_of(MPI_Datatype t, MPI_Aint base, struct ref_map *m)
{
    static const struct ref_pair pairs[] = {
        REF_PAIR(MPI_FLOAT_INT, struct ref_fi, float, int),
        REF_PAIR(MPI_DOUBLE_INT, struct ref_di, double, int),
        REF_PAIR(MPI_LONG_INT, struct ref_li, long, int),
        REF_PAIR(MPI_2INT, struct ref_ii, int, int),
        REF_PAIR(MPI_SHORT_INT, struct ref_si, short, int),
        REF_PAIR(MPI_LONG_DOUBLE_INT, struct ref_ldi, long double, int),
    };
    int ni, na, nd, comb;
    MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
            if (pairs[i].t == t) {
                ref_add(m, base, pairs[i].a);
                ref_add(m, base + pairs[i].b_off, pairs[i].b);
                return;
            }
        int sz;
        MPI_CHECK(MPI_Type_size(t, &sz));
        ref_add(m, base, sz);
        return;
    }
    int *I = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *A = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *T = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    CHECK(I && A && T, "out of memory");
    MPI_CHECK(MPI_Type_get_contents(t, ni, na, nd, I, A, T));
    MPI_Aint ext = ref_extent(T[0]);
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        ref_map_of(T[0], base, m);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (int i = 0; i < I[0]; i++)
            ref_map_of(T[0], base + i * ext, m);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1]; j++)
                ref_map_of(T[0], base + ((MPI_Aint)i * I[2] + j) * ext, m);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1]; j++)
                ref_map_of(T[0], base + i * A[0] + j * ext, m);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1 + i]; j++)
                ref_map_of(T[0], base + ((MPI_Aint)I[1 + I[0] + i] + j) * ext, m);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1 + i]; j++)
                ref_map_of(T[0], base + A[i] + j * ext, m);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1]; j++)
                ref_map_of(T[0], base + ((MPI_Aint)I[2 + i] + j) * ext, m);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < I[0]; i++)
            for (int j = 0; j < I[1]; j++)
                ref_map_of(T[0], base + A[i] + j * ext, m);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < I[0]; i++) {
            MPI_Aint e = ref_extent(T[i]);
            for (int j = 0; j < I[1 + i]; j++)
                ref_map_of(T[i], base + A[i] + j * e, m);
        }
        break;
    case MPI_COMBINER_SUBARRAY: {
        int n = I[0];
        struct ref_sub s = {n, I + 1 + n, I + 1 + 2 * n};
        ref_nd(n, I + 1, I[3 * n + 1], T[0], base, m, ref_pick_sub, &s);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int size = I[0], rank = I[1], n = I[2];
        struct ref_darray a = {n, I + 3, I + 3 + n, I + 3 + 2 * n, I + 3 + 3 * n, {0}};
        for (int d = 0, left = rank, procs = size; d < n; d++) {
            procs /= a.psizes[d];
            a.coords[d] = left / procs;
            left %= procs;
        }
        ref_nd(n, a.gsizes, I[4 * n + 3], T[0], base, m, ref_pick_darray, &a);
        break;
    }
    default:
        CHECK(0, "unexpected combiner %d", comb);
    }
    for (int i = 0; i < nd; i++) {
        int ci, ca, cd, cc;
        MPI_CHECK(MPI_Type_get_envelope(T[i], &ci, &ca, &cd, &cc));
        if (cc != MPI_COMBINER_NAMED)
            MPI_CHECK(MPI_Type_free(&T[i]));
    }
    free(I);
    free(A);
    free(T);
}

#endif /* DATATYPE_REF_H */
