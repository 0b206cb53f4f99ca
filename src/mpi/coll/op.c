/*
 * op.c — reduction operations: the predefined operations and user ones
 * (MPI_Op_create/free/commutative), checking that an operation applies to a
 * datatype (MPI-3.1 §5.9.2), and applying it to typed buffers
 * (MPI_Reduce_local, and every reduction of the collectives).
 *
 * A predefined operation applies to a predefined datatype, or to a derived
 * datatype whose elements are all one predefined type (pm_datatype.basic):
 * the loop of op_kernels.c then runs over the elements of its type map. A
 * user function is called with the user's datatype handle and count.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

/* A user operation. `freed` is set by MPI_Op_free: the handle is invalid to
 * the application from then on, but stays in the table (so pending
 * collectives holding a reference still find the function) until the last
 * reference goes. */
struct pm_user_op {
    struct pm_op op;
    atomic_bool freed;
};

static struct pm_op predef_ops[PROUST_MPI_NUM_PREDEFINED_OPS];

static const char *const op_names[PROUST_MPI_NUM_PREDEFINED_OPS] = {
    [PM_OPI(MPI_MAX)] = "MPI_MAX",       [PM_OPI(MPI_MIN)] = "MPI_MIN",
    [PM_OPI(MPI_SUM)] = "MPI_SUM",       [PM_OPI(MPI_PROD)] = "MPI_PROD",
    [PM_OPI(MPI_LAND)] = "MPI_LAND",     [PM_OPI(MPI_BAND)] = "MPI_BAND",
    [PM_OPI(MPI_LOR)] = "MPI_LOR",       [PM_OPI(MPI_BOR)] = "MPI_BOR",
    [PM_OPI(MPI_LXOR)] = "MPI_LXOR",     [PM_OPI(MPI_BXOR)] = "MPI_BXOR",
    [PM_OPI(MPI_MINLOC)] = "MPI_MINLOC", [PM_OPI(MPI_MAXLOC)] = "MPI_MAXLOC",
    [PM_OPI(MPI_REPLACE)] = "MPI_REPLACE", [PM_OPI(MPI_NO_OP)] = "MPI_NO_OP",
};

/* Classes of types each predefined operation is defined on (the table of
 * MPI-3.1 §5.9.2). MPI_REPLACE and MPI_NO_OP take any type. */
#define ARITH (PM_TC_CINT | PM_TC_FINT | PM_TC_FLOAT)
static const unsigned op_classes[PROUST_MPI_NUM_PREDEFINED_OPS] = {
    [PM_OPI(MPI_MAX)] = ARITH,
    [PM_OPI(MPI_MIN)] = ARITH,
    [PM_OPI(MPI_SUM)] = ARITH | PM_TC_COMPLEX,
    [PM_OPI(MPI_PROD)] = ARITH | PM_TC_COMPLEX,
    [PM_OPI(MPI_LAND)] = PM_TC_CINT | PM_TC_LOGICAL,
    [PM_OPI(MPI_LOR)] = PM_TC_CINT | PM_TC_LOGICAL,
    [PM_OPI(MPI_LXOR)] = PM_TC_CINT | PM_TC_LOGICAL,
    [PM_OPI(MPI_BAND)] = PM_TC_CINT | PM_TC_FINT | PM_TC_BYTE,
    [PM_OPI(MPI_BOR)] = PM_TC_CINT | PM_TC_FINT | PM_TC_BYTE,
    [PM_OPI(MPI_BXOR)] = PM_TC_CINT | PM_TC_FINT | PM_TC_BYTE,
    [PM_OPI(MPI_MINLOC)] = PM_TC_PAIR,
    [PM_OPI(MPI_MAXLOC)] = PM_TC_PAIR,
};

static bool is_predef_op(MPI_Op h)
{
    unsigned idx = (unsigned)h & PROUST_MPI_INDEX_MASK;
    return (h & PROUST_MPI_KIND_MASK) == PROUST_MPI_KIND_OP && idx >= 1 &&
           idx < PROUST_MPI_NUM_PREDEFINED_OPS;
}

/* Predefined datatype index of a handle, or 0 for a derived one. */
static int predef_type_index(MPI_Datatype h)
{
    unsigned idx = (unsigned)h & PROUST_MPI_INDEX_MASK;
    if ((h & PROUST_MPI_KIND_MASK) == PROUST_MPI_KIND_DATATYPE && idx >= 1 &&
        idx < PROUST_MPI_NUM_PREDEFINED_TYPES)
        return (int)idx;
    return 0;
}

/* The operation behind a handle, freed by the application or not (internal
 * users hold references). */
static struct pm_op *op_find(MPI_Op h)
{
    if (is_predef_op(h))
        return &predef_ops[PM_OPI(h)];
    if ((unsigned)(h & PROUST_MPI_INDEX_MASK) < PROUST_MPI_NUM_PREDEFINED_OPS)
        return NULL;
    return (struct pm_op *)pm_table_get(&pm_op_table, h);
}

struct pm_op *pm_op_get(MPI_Op h)
{
    struct pm_op *o = op_find(h);
    if (o && pm_op_is_user(o) && atomic_load(&((struct pm_user_op *)o)->freed))
        return NULL;
    return o;
}

void pm_ops_init(void)
{
    for (int i = 1; i < PROUST_MPI_NUM_PREDEFINED_OPS; i++) {
        predef_ops[i].handle = PROUST_MPI_KIND_OP | i;
        /* REPLACE and NO_OP keep one operand: the order matters. */
        predef_ops[i].commutative = i != PM_OPI(MPI_REPLACE) && i != PM_OPI(MPI_NO_OP);
        predef_ops[i].fn = NULL;
        atomic_store(&predef_ops[i].refs, 1);
        pm_table_set(&pm_op_table, i, &predef_ops[i]);
    }
}

bool pm_op_commutative(MPI_Op op)
{
    struct pm_op *o = op_find(op);
    return o ? o->commutative : false;
}

void pm_op_retain(MPI_Op op)
{
    if (is_predef_op(op))
        return;
    struct pm_op *o = op_find(op);
    if (o)
        atomic_fetch_add(&o->refs, 1);
}

void pm_op_release(MPI_Op op)
{
    if (is_predef_op(op))
        return;
    struct pm_op *o = op_find(op);
    if (o && atomic_fetch_sub(&o->refs, 1) == 1) {
        pm_table_remove(&pm_op_table, o->handle);
        free(o);
    }
}

/* ---- Checks -------------------------------------------------------------- */

bool pm_op_predef_applies(MPI_Op op, MPI_Datatype dt)
{
    unsigned oi = (unsigned)op - (unsigned)PROUST_MPI_KIND_OP;
    if (oi - 1 >= PROUST_MPI_NUM_PREDEFINED_OPS - 1)
        return false;
    int ti = predef_type_index(dt);
    return ti && (pm_op_types[ti].cls & op_classes[oi]);
}

int pm_op_check(MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *fname)
{
    struct pm_op *o = pm_op_get(op);
    if (!o)
        return pm_error(comm, MPI_ERR_OP, "%s: invalid reduction operation %#x", fname,
                        (unsigned)op);
    if (pm_op_is_user(o))
        return MPI_SUCCESS; /* a user function takes any datatype */
    int oi = PM_OPI(op);
    if (oi == PM_OPI(MPI_REPLACE) || oi == PM_OPI(MPI_NO_OP))
        return MPI_SUCCESS;
    int ti = predef_type_index(dt);
    if (ti) {
        if (!(pm_op_types[ti].cls & op_classes[oi]))
            return pm_error(comm, MPI_ERR_OP, "%s: %s is not defined for %s", fname,
                            op_names[oi], pm_op_types[ti].name);
        return MPI_SUCCESS;
    }
    struct pm_datatype *t = pm_type_get(dt);
    if (!t)
        return pm_error(comm, MPI_ERR_TYPE, "%s: invalid datatype %#x", fname, (unsigned)dt);
    int b = t->basic;
    if (b <= 0 || b >= PROUST_MPI_NUM_PREDEFINED_TYPES)
        return pm_error(comm, MPI_ERR_OP,
                        "%s: %s is not defined for a derived datatype mixing several "
                        "predefined types",
                        fname, op_names[oi]);
    if (!(pm_op_types[b].cls & op_classes[oi]))
        return pm_error(comm, MPI_ERR_OP,
                        "%s: %s is not defined for a derived datatype of %s elements", fname,
                        op_names[oi], pm_op_types[b].name);
    return MPI_SUCCESS;
}

/* ---- Application ----------------------------------------------------------- */

static inline bool aligned(const void *p, unsigned a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

/* buf + off without pointer arithmetic on a possibly null base (MPI_BOTTOM
 * with absolute displacements). */
static inline char *at(const void *buf, MPI_Aint off)
{
    return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* A cursor over the data bytes of instance after instance of a type (its
 * blocks in type-map order): the stream MPI_Pack would produce. */
struct walk {
    const struct pm_block *blocks;
    size_t nblocks;
    MPI_Aint extent;
    MPI_Count inst;
    size_t blk;
    MPI_Aint off;
};

/* Move the data of `nel` elements between the typed buffer `buf` (at the
 * cursor) and the aligned array `arr` of C elements of type `ty`. */
static void transfer(struct walk *w, void *buf, unsigned char *arr, const struct pm_op_type *ty,
                     size_t nel, bool to_arr)
{
    size_t e = 0, o = 0;
    unsigned k = 0;
    while (e < nel) {
        while (w->off >= w->blocks[w->blk].len) {
            w->off = 0;
            if (++w->blk == w->nblocks) {
                w->blk = 0;
                w->inst++;
            }
        }
        const struct pm_block *b = &w->blocks[w->blk];
        char *p = at(buf, (MPI_Aint)w->inst * w->extent + b->disp + w->off);
        size_t take = (size_t)(b->len - w->off);
        if (take > ty->sub[k].len - o)
            take = ty->sub[k].len - o;
        unsigned char *q = arr + e * ty->size + ty->sub[k].disp + o;
        if (to_arr)
            memcpy(q, p, take);
        else
            memcpy(p, q, take);
        w->off += (MPI_Aint)take;
        o += take;
        if (o == ty->sub[k].len) {
            o = 0;
            if (++k == ty->nsub) {
                k = 0;
                e++;
            }
        }
    }
}

#define PM_BATCH 4096

/* Apply kernel `k` to `nel` elements of type `ty` laid out by `blocks`
 * (count instances of `extent`), through aligned batches. */
static void apply_walk(pm_op_kernel *k, const struct pm_op_type *ty, const void *in,
                       void *inout, MPI_Count nel, const struct pm_block *blocks,
                       size_t nblocks, MPI_Aint extent)
{
    _Alignas(64) unsigned char a[PM_BATCH];
    _Alignas(64) unsigned char b[PM_BATCH];
    size_t per = PM_BATCH / ty->size;
    struct walk w = {.blocks = blocks, .nblocks = nblocks, .extent = extent};
    while (nel > 0) {
        size_t n = nel < (MPI_Count)per ? (size_t)nel : per;
        struct walk start = w;
        transfer(&w, (void *)in, a, ty, n, true);
        w = start;
        transfer(&w, inout, b, ty, n, true);
        k(a, b, n);
        w = start;
        transfer(&w, inout, b, ty, n, false);
        nel -= (MPI_Count)n;
    }
}

/* Data bytes of one element of `ty`. */
static size_t data_size(const struct pm_op_type *ty)
{
    return (size_t)ty->sub[0].len + (ty->nsub > 1 ? ty->sub[1].len : 0);
}

/* A predefined operation on `count` elements of predefined type `ti`. */
static int apply_predef(int oi, int ti, const void *in, void *inout, MPI_Count count)
{
    const struct pm_op_type *ty = &pm_op_types[ti];
    if (oi == PM_OPI(MPI_REPLACE)) {
        memmove(inout, in, (size_t)count * ty->size);
        return MPI_SUCCESS;
    }
    pm_op_kernel *k = ty->kernels ? ty->kernels[oi] : NULL;
    if (!k || !(ty->cls & op_classes[oi]))
        return MPI_ERR_OP;
    if (aligned(in, ty->align) && aligned(inout, ty->align)) {
        k(in, inout, (size_t)count);
        return MPI_SUCCESS;
    }
    /* A misaligned buffer: go through aligned copies of the elements. */
    struct pm_block blocks[2];
    for (unsigned i = 0; i < ty->nsub; i++) {
        blocks[i].disp = ty->sub[i].disp;
        blocks[i].len = ty->sub[i].len;
    }
    apply_walk(k, ty, in, inout, count, blocks, ty->nsub, ty->size);
    return MPI_SUCCESS;
}

/* Does every block of every instance hold whole elements of the dense type
 * `ty`, aligned for its C type, in both buffers? */
static bool blocks_aligned(const struct pm_datatype *t, const struct pm_op_type *ty,
                           const void *in, const void *inout)
{
    unsigned a = ty->align;
    if (!aligned(in, a) || !aligned(inout, a) || (t->extent & (MPI_Aint)(a - 1)))
        return false;
    for (size_t j = 0; j < t->nblocks; j++)
        if ((t->blocks[j].disp & (MPI_Aint)(a - 1)) || t->blocks[j].len % ty->size)
            return false;
    return true;
}

/* A predefined operation on a derived datatype. */
static int apply_derived(int oi, const struct pm_datatype *t, const void *in, void *inout,
                         MPI_Count count)
{
    if (oi == PM_OPI(MPI_REPLACE)) {
        for (MPI_Count i = 0; i < count; i++)
            for (size_t j = 0; j < t->nblocks; j++) {
                MPI_Aint off = (MPI_Aint)i * t->extent + t->blocks[j].disp;
                memmove(at(inout, off), at(in, off), (size_t)t->blocks[j].len);
            }
        return MPI_SUCCESS;
    }
    int b = t->basic;
    if (b <= 0 || b >= PROUST_MPI_NUM_PREDEFINED_TYPES)
        return MPI_ERR_OP;
    const struct pm_op_type *ty = &pm_op_types[b];
    pm_op_kernel *k = ty->kernels ? ty->kernels[oi] : NULL;
    if (!k || !(ty->cls & op_classes[oi]))
        return MPI_ERR_OP;
    size_t ds = data_size(ty);
    if (t->size % (MPI_Count)ds != 0)
        return MPI_ERR_TYPE; /* not made of whole elements of `basic` */
    MPI_Count nel = count * (t->size / (MPI_Count)ds);
    if (nel == 0 || t->nblocks == 0)
        return MPI_SUCCESS;
    if (ty->nsub == 1 && ds == ty->size) {
        if (t->contiguous) {
            const char *pin = at(in, t->true_lb);
            char *pio = at(inout, t->true_lb);
            if (aligned(pin, ty->align) && aligned(pio, ty->align)) {
                k(pin, pio, (size_t)nel);
                return MPI_SUCCESS;
            }
        } else if (blocks_aligned(t, ty, in, inout)) {
            /* Whole aligned elements in every block: run the loop in place. */
            for (MPI_Count i = 0; i < count; i++)
                for (size_t j = 0; j < t->nblocks; j++) {
                    MPI_Aint off = (MPI_Aint)i * t->extent + t->blocks[j].disp;
                    k(at(in, off), at(inout, off), (size_t)t->blocks[j].len / ty->size);
                }
            return MPI_SUCCESS;
        }
    }
    apply_walk(k, ty, in, inout, nel, t->blocks, t->nblocks, t->extent);
    return MPI_SUCCESS;
}

/* An MPI_Op_create function takes an int count: call it on pieces of at
 * most INT_MAX (an MPI_Op_create_c one takes the whole count). */
static int apply_user(struct pm_op *o, const void *in, void *inout, MPI_Count count,
                      MPI_Datatype dt)
{
    if (o->fn_c) {
        MPI_Datatype type = dt;
        o->fn_c((void *)in, inout, &count, &type);
        return MPI_SUCCESS;
    }
    MPI_Aint extent = 0;
    if (count > INT_MAX) {
        struct pm_datatype *t = pm_type_get(dt);
        if (!t)
            return MPI_ERR_TYPE;
        extent = t->extent;
    }
    MPI_Count done = 0;
    while (done < count) {
        int len = count - done > INT_MAX ? INT_MAX : (int)(count - done);
        MPI_Datatype type = dt;
        MPI_Aint off = (MPI_Aint)done * extent;
        o->fn(at(in, off), at(inout, off), &len, &type);
        done += count - done > INT_MAX ? INT_MAX : count - done;
    }
    return MPI_SUCCESS;
}

int pm_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype dt)
{
    struct pm_op *o = op_find(op);
    if (!o)
        return MPI_ERR_OP;
    if (count <= 0)
        return MPI_SUCCESS;
    if (pm_op_is_user(o))
        return apply_user(o, in, inout, count, dt);
    int oi = PM_OPI(op);
    if (oi == PM_OPI(MPI_NO_OP))
        return MPI_SUCCESS;
    int ti = predef_type_index(dt);
    if (ti)
        return apply_predef(oi, ti, in, inout, count);
    struct pm_datatype *t = pm_type_get(dt);
    if (!t)
        return MPI_ERR_TYPE;
    return apply_derived(oi, t, in, inout, count);
}

/* ---- MPI functions ------------------------------------------------------- */

static int op_create(const char *fn, MPI_User_function *user_fn, MPI_User_function_c *user_fn_c,
                     int commute, MPI_Op *op)
{
    if (!user_fn && !user_fn_c)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: user_fn is NULL", fn);
    if (!op)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: op is NULL", fn);
    struct pm_user_op *u = calloc(1, sizeof *u);
    if (!u)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    u->op.fn = user_fn;
    u->op.fn_c = user_fn_c;
    u->op.commutative = commute != 0;
    atomic_init(&u->op.refs, 1);
    atomic_init(&u->freed, false);
    int h = pm_table_add(&pm_op_table, u);
    if (!h) {
        free(u);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of handles", fn);
    }
    u->op.handle = h;
    *op = h;
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    PM_CHECK_INIT("MPI_Op_create");
    return op_create("MPI_Op_create", user_fn, NULL, commute, op);
}
PM_WEAK(Op_create)

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    PM_CHECK_INIT("MPI_Op_create_c");
    return op_create("MPI_Op_create_c", NULL, user_fn, commute, op);
}
PM_WEAK(Op_create_c)

int PMPI_Op_free(MPI_Op *op)
{
    PM_CHECK_INIT("MPI_Op_free");
    if (!op)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_free: op is NULL");
    MPI_Op h = *op;
    if (is_predef_op(h))
        return pm_error(MPI_COMM_NULL, MPI_ERR_OP,
                        "MPI_Op_free: %s is predefined and cannot be freed",
                        op_names[PM_OPI(h)]);
    struct pm_op *o = pm_op_get(h);
    if (!o)
        return pm_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free: invalid operation %#x",
                        (unsigned)h);
    bool was = false;
    if (!atomic_compare_exchange_strong(&((struct pm_user_op *)o)->freed, &was, true))
        return pm_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free: operation %#x already freed",
                        (unsigned)h);
    *op = MPI_OP_NULL;
    pm_op_release(h);
    return MPI_SUCCESS;
}
PM_WEAK(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    PM_CHECK_INIT("MPI_Op_commutative");
    struct pm_op *o = pm_op_get(op);
    if (!o)
        return pm_error(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_commutative: invalid operation %#x",
                        (unsigned)op);
    if (!commute)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_commutative: commute is NULL");
    *commute = o->commutative;
    return MPI_SUCCESS;
}
PM_WEAK(Op_commutative)

static int reduce_local(const char *fn, const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op)
{
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return pm_error(MPI_COMM_NULL, MPI_ERR_BUFFER, "%s: MPI_IN_PLACE is not allowed", fn);
    if (count < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_COUNT, "%s: count %lld < 0", fn, count);
    struct pm_datatype *t;
    int rc = pm_type_check(datatype, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_NULL, rc, "%s: datatype %#x is invalid or not committed", fn,
                        (unsigned)datatype);
    if (!pm_count_fast(count) && (rc = pm_check_count(fn, MPI_COMM_NULL, count, t)))
        return rc;
    rc = pm_op_check(op, datatype, MPI_COMM_NULL, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A null buffer is legal with a derived type of absolute addresses. */
    if (count > 0 && predef_type_index(datatype) && (!inbuf || !inoutbuf))
        return pm_error(MPI_COMM_NULL, MPI_ERR_BUFFER, "%s: %s buffer is NULL with count %lld",
                        fn, inbuf ? "inoutbuf" : "inbuf", count);
    if (count > 0 && inbuf == inoutbuf && t->size > 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_BUFFER,
                        "%s: inbuf and inoutbuf are the same buffer", fn);
    rc = pm_op_apply(op, inbuf, inoutbuf, count, datatype);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_NULL, rc, "%s: the operation failed", fn);
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    PM_CHECK_INIT("MPI_Reduce_local");
    return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}
PM_WEAK(Reduce_local)

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op)
{
    PM_CHECK_INIT("MPI_Reduce_local_c");
    return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}
PM_WEAK(Reduce_local_c)
