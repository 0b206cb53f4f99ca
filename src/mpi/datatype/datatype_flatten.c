/*
 * datatype_flatten.c — turning a constructor's description into a type:
 * the merged block list of one instance (what packing walks), size, bounds
 * with the MPI lb/ub marker rules and the struct alignment padding, and the
 * lifetime of type objects (references, copies, destruction).
 */
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

/* Block lists longer than this (1.5 GiB of blocks and offsets) are refused
 * rather than attempted. A variable so that tests can lower it. */
MPI_Count pm_type_max_blocks = (MPI_Count)1 << 26;
#define PM_TYPE_MAX_BLOCKS pm_type_max_blocks

/* Piece i of a description; false when its displacement overflows. */
static bool piece(const struct pm_type_desc *d, MPI_Count i, MPI_Aint *disp, MPI_Count *bl,
                  const struct pm_datatype **t)
{
    *t = d->type ? d->type : d->types[i];
    *bl = d->bls ? d->bls[i] : d->cbls ? d->cbls[i] : d->bl;
    bool ok = true;
    if (d->disps)
        *disp = d->disps[i];
    else if (d->idisps)
        ok = !__builtin_mul_overflow((MPI_Aint)d->idisps[i], d->unit, disp);
    else if (d->cdisps)
        ok = !__builtin_mul_overflow((MPI_Aint)d->cdisps[i], d->unit, disp);
    else
        ok = !__builtin_mul_overflow((MPI_Aint)i, d->stride, disp);
    return ok && !__builtin_add_overflow(*disp, d->offset, disp);
}

static struct pm_dtype *dtype_alloc(void)
{
    struct pm_dtype *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    atomic_init(&d->t.refs, 1);
    d->t.combiner = MPI_COMBINER_NAMED;
    return d;
}

static struct pm_type_store *store_alloc(size_t n)
{
    struct pm_type_store *s =
        malloc(sizeof *s + n * sizeof(struct pm_block) + (n + 1) * sizeof(MPI_Aint));
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    s->n = n;
    return s;
}

/* Attach store `s` (n blocks filled) to `d`: fill in the stream offsets. */
static void attach_store(struct pm_dtype *d, struct pm_type_store *s)
{
    MPI_Aint *pre = (MPI_Aint *)(void *)(s->b + s->n);
    MPI_Aint off = 0;
    for (size_t i = 0; i < s->n; i++) {
        pre[i] = off;
        off += s->b[i].len;
    }
    pre[s->n] = off;
    s->reg_len = 0;
    s->reg_stride = 0;
    if (s->n >= 2) {
        MPI_Aint len = s->b[0].len, stride = s->b[1].disp - s->b[0].disp;
        size_t i = 1;
        while (i < s->n && s->b[i].len == len && s->b[i].disp - s->b[i - 1].disp == stride)
            i++;
        if (i == s->n) {
            s->reg_len = len;
            s->reg_stride = stride;
        }
    }
    d->t.blocks = s->b;
    d->t.nblocks = s->n;
    d->x.prefix = pre;
    d->x.store = s;
}

/* size == extent and one block starting at lb: count instances are one
 * gap-free block at true_lb. A type without data is trivially so. */
static bool is_contiguous(const struct pm_datatype *t)
{
    if (t->size == 0)
        return true;
    return t->nblocks == 1 && t->size == t->extent && t->lb == t->true_lb &&
           t->blocks[0].disp == t->true_lb;
}

/* Appends blocks, merging one that starts where the previous one ends;
 * grows the store when the first estimate was too small (it is exact
 * unless it passed PM_TYPE_MAX_BLOCKS before merging). */
struct appender {
    struct pm_type_store *s;
    size_t n, cap;
    bool failed;
};
static bool grow(struct appender *a)
{
    if (a->cap >= (size_t)PM_TYPE_MAX_BLOCKS)
        return false;
    size_t cap = a->cap < 16 ? 32 : a->cap * 2;
    if (cap > (size_t)PM_TYPE_MAX_BLOCKS)
        cap = (size_t)PM_TYPE_MAX_BLOCKS;
    struct pm_type_store *s =
        realloc(a->s, sizeof *s + cap * sizeof(struct pm_block) + (cap + 1) * sizeof(MPI_Aint));
    if (!s)
        return false;
    a->s = s;
    a->cap = cap;
    return true;
}
static inline void append(struct appender *a, MPI_Aint disp, MPI_Aint len)
{
    struct pm_block *b = a->s->b;
    if (len == 0 || a->failed)
        return;
    if (a->n && b[a->n - 1].disp + b[a->n - 1].len == disp) {
        b[a->n - 1].len += len;
        return;
    }
    if (a->n == a->cap) {
        if (!grow(a)) {
            a->failed = true;
            return;
        }
        b = a->s->b;
    }
    b[a->n].disp = disp;
    b[a->n].len = len;
    a->n++;
}

/* Copies of t that follow each other without a gap form one block. */
static inline bool abutting(const struct pm_datatype *t)
{
    return t->contiguous || (t->nblocks == 1 && t->blocks[0].len == t->extent);
}

int pm_type_build(const char *fname, const struct pm_type_desc *d, struct pm_datatype **out)
{
    /* Evenly spaced pieces that abut (a vector with stride == blocklength)
     * are one piece: n * bl copies. */
    struct pm_type_desc one;
    MPI_Aint step;
    MPI_Count all;
    if (d->type && !d->bls && !d->cbls && !d->disps && !d->idisps && !d->cdisps && d->n > 1 &&
        d->bl > 0 &&
        !__builtin_mul_overflow((MPI_Aint)d->bl, d->type->extent, &step) && step == d->stride &&
        !__builtin_mul_overflow(d->n, d->bl, &all)) {
        one = *d;
        one.n = 1;
        one.bl = all;
        d = &one;
    }

    MPI_Count size = 0, nelem = 0, maxb = 0, minb = 0;
    MPI_Aint align = 1;
    int basic = -1, first_basic = -1; /* -1: no piece (with data) seen yet */
    bool any = false, any_data = false, slb = false, sub = false;
    MPI_Aint lb_all = 0, ub_all = 0, lb_st = 0, ub_st = 0, tlb = 0, tub = 0;

    /* Pass 1: sizes, bounds and the number of blocks, with overflow checks. */
    for (MPI_Count i = 0; i < d->n; i++) {
        const struct pm_datatype *t;
        MPI_Aint disp, last, span, lo, hi;
        MPI_Count bl, add;
        if (!piece(d, i, &disp, &bl, &t))
            goto overflow;
        const struct pm_type_x *tx = pm_type_x(t);
        /* pieces without data (MPI_LB/MPI_UB markers, empty types) do not
         * make the type's elements mixed; a type without data takes its
         * first piece's (a zero-count int type still reduces as int) */
        if (first_basic == -1)
            first_basic = t->basic;
        if (bl > 0 && t->size > 0) {
            if (basic == -1)
                basic = t->basic;
            else if (basic != t->basic)
                basic = 0;
        }
        if (bl == 0 || pm_type_is_empty(t))
            continue;
        if (__builtin_mul_overflow(bl, t->size, &add) || __builtin_add_overflow(size, add, &size))
            goto overflow;
        if (__builtin_mul_overflow(bl, t->nelements, &add) ||
            __builtin_add_overflow(nelem, add, &nelem))
            goto overflow;
        /* Blocks before merging (saturated past the limit), and at least
         * how many remain: t's own blocks never merge with each other, a
         * copy at most with the next one, a piece with the next piece. */
        if (t->size > 0) {
            MPI_Count least = 1;
            if (abutting(t))
                add = 1;
            else if (__builtin_mul_overflow(bl, (MPI_Count)t->nblocks, &add))
                add = least = PM_TYPE_MAX_BLOCKS + 1;
            else
                least = add - (bl - 1);
            maxb = add > PM_TYPE_MAX_BLOCKS || maxb + add > PM_TYPE_MAX_BLOCKS
                       ? PM_TYPE_MAX_BLOCKS + 1
                       : maxb + add;
            minb += least - (minb > 0 ? 1 : 0);
            if (minb > PM_TYPE_MAX_BLOCKS)
                goto toobig;
        }
        if (tx->align > align)
            align = tx->align;
        /* copies at disp .. last (extents may be negative) */
        if (__builtin_mul_overflow((MPI_Aint)(bl - 1), t->extent, &span) ||
            __builtin_add_overflow(disp, span, &last))
            goto overflow;
        MPI_Aint first = disp < last ? disp : last, end = disp < last ? last : disp;
        if (__builtin_add_overflow(first, t->lb, &lo) ||
            __builtin_add_overflow(end, t->lb, &hi) || __builtin_add_overflow(hi, t->extent, &hi))
            goto overflow;
        if (!any || lo < lb_all)
            lb_all = lo;
        if (!any || hi > ub_all)
            ub_all = hi;
        any = true;
        if (tx->sticky_lb) {
            if (!slb || lo < lb_st)
                lb_st = lo;
            slb = true;
        }
        if (tx->sticky_ub) {
            if (!sub || hi > ub_st)
                ub_st = hi;
            sub = true;
        }
        if (t->size > 0) {
            if (__builtin_add_overflow(first, t->true_lb, &lo) ||
                __builtin_add_overflow(end, t->true_lb, &hi) ||
                __builtin_add_overflow(hi, t->true_extent, &hi))
                goto overflow;
            if (!any_data || lo < tlb)
                tlb = lo;
            if (!any_data || hi > tub)
                tub = hi;
            any_data = true;
        }
    }

    /* Pass 2: the blocks in type-map order. */
    size_t cap = maxb > PM_TYPE_MAX_BLOCKS ? (size_t)PM_TYPE_MAX_BLOCKS / 16 : (size_t)maxb;
    struct pm_dtype *nt = dtype_alloc();
    struct appender a = {store_alloc(cap), 0, cap, false};
    if (!nt || !a.s) {
        free(nt);
        free(a.s);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory for a type of %lld blocks",
                        fname, (long long)maxb);
    }
    for (MPI_Count i = 0; i < d->n && !a.failed; i++) {
        const struct pm_datatype *t;
        MPI_Aint disp;
        MPI_Count bl;
        piece(d, i, &disp, &bl, &t);
        if (bl == 0 || t->size == 0)
            continue;
        if (t->contiguous) {
            append(&a, disp + t->true_lb, (MPI_Aint)(bl * t->size));
            continue;
        }
        if (abutting(t)) { /* one block, copies back to back (any lb) */
            append(&a, disp + t->blocks[0].disp, (MPI_Aint)bl * t->blocks[0].len);
            continue;
        }
        for (MPI_Count j = 0; j < bl && !a.failed; j++, disp += t->extent)
            for (size_t k = 0; k < t->nblocks; k++)
                append(&a, disp + t->blocks[k].disp, t->blocks[k].len);
    }
    if (a.failed) {
        free(nt);
        free(a.s);
        if (a.cap >= (size_t)PM_TYPE_MAX_BLOCKS)
            goto toobig;
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory for a type of %zu+ blocks",
                        fname, a.n);
    }
    struct pm_type_store *s = a.s;
    if (a.n < a.cap) { /* shrink, moving nothing (offsets are written after) */
        struct pm_type_store *s2 = realloc(s, sizeof *s + a.n * sizeof(struct pm_block) +
                                                  (a.n + 1) * sizeof(MPI_Aint));
        if (s2)
            s = s2;
    }
    s->n = a.n;
    attach_store(nt, s);

    struct pm_datatype *t = &nt->t;
    t->size = size;
    t->nelements = nelem;
    t->basic = basic >= 0 ? basic : first_basic >= 0 ? first_basic : 0;
    nt->x.align = align;
    nt->x.sticky_lb = slb;
    nt->x.sticky_ub = sub;
    if (any) {
        MPI_Aint lb = slb ? lb_st : lb_all, ub = sub ? ub_st : ub_all;
        if (d->is_struct && !slb && !sub && align > 1) {
            /* the standard's epsilon: round the extent up to the alignment */
            MPI_Aint rem = ((ub - lb) % align + align) % align;
            if (rem)
                ub += align - rem;
        }
        t->lb = lb;
        t->extent = ub - lb;
    }
    if (any_data) {
        t->true_lb = tlb;
        t->true_extent = tub - tlb;
    }
    t->contiguous = is_contiguous(t);
    *out = t;
    return MPI_SUCCESS;

overflow:
    return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                    "%s: the type's size or displacements overflow MPI_Aint/MPI_Count", fname);
toobig:
    return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM,
                    "%s: the type map would need more than %lld contiguous blocks", fname,
                    (long long)PM_TYPE_MAX_BLOCKS);
}

int pm_type_build_resized(const char *fname, const struct pm_datatype *old, MPI_Aint lb,
                          MPI_Aint extent, struct pm_datatype **out)
{
    struct pm_datatype *t = pm_type_copy(old);
    if (!t)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    /* The copy carries old's envelope and name: a resized type has neither. */
    struct pm_dtype *d = (struct pm_dtype *)t;
    pm_type_clear_envelope(t);
    t->name[0] = '\0';
    t->committed = false;
    t->lb = lb;
    t->extent = extent;
    d->x.sticky_lb = d->x.sticky_ub = true;
    t->contiguous = is_contiguous(t);
    *out = t;
    return MPI_SUCCESS;
}

int pm_type_set_envelope(struct pm_datatype *t, int combiner, int ni, int na, int nc, int nd)
{
    struct pm_dtype *d = (struct pm_dtype *)t;
    size_t bytes = (size_t)na * sizeof(MPI_Aint) + (size_t)nc * sizeof(MPI_Count) +
                   (size_t)nd * sizeof(struct pm_datatype *) +
                   (size_t)nd * sizeof(MPI_Datatype) + (size_t)ni * sizeof(int);
    char *mem = NULL;
    if (bytes) {
        mem = calloc(1, bytes);
        if (!mem)
            return MPI_ERR_NO_MEM;
    }
    char *p = mem;
    t->aints = na ? (MPI_Aint *)(void *)p : NULL;
    p += (size_t)na * sizeof(MPI_Aint);
    t->counts = nc ? (MPI_Count *)(void *)p : NULL;
    p += (size_t)nc * sizeof(MPI_Count);
    d->x.inner = nd ? (struct pm_datatype **)(void *)p : NULL;
    p += (size_t)nd * sizeof(struct pm_datatype *);
    t->types = nd ? (MPI_Datatype *)(void *)p : NULL;
    p += (size_t)nd * sizeof(MPI_Datatype);
    t->ints = ni ? (int *)(void *)p : NULL;
    d->x.contents = mem;
    t->combiner = combiner;
    t->ni = ni;
    t->na = na;
    t->nc = nc;
    t->nd = nd;
    return MPI_SUCCESS;
}

void pm_type_clear_envelope(struct pm_datatype *t)
{
    struct pm_dtype *d = (struct pm_dtype *)t;
    for (int i = 0; i < t->nd; i++)
        pm_type_release(d->x.inner[i]);
    free(d->x.contents);
    d->x.contents = NULL;
    d->x.inner = NULL;
    t->ints = NULL;
    t->aints = NULL;
    t->counts = NULL;
    t->types = NULL;
    t->ni = t->na = t->nc = t->nd = 0;
    t->combiner = MPI_COMBINER_NAMED;
}

void pm_type_set_inner(struct pm_datatype *t, int i, struct pm_datatype *inner)
{
    struct pm_dtype *d = (struct pm_dtype *)t;
    pm_type_retain(inner);
    d->x.inner[i] = inner;
    t->types[i] = inner->handle;
}

struct pm_datatype *pm_type_copy(const struct pm_datatype *old)
{
    const struct pm_type_x *ox = pm_type_x(old);
    struct pm_dtype *d = dtype_alloc();
    if (!d)
        return NULL;
    struct pm_datatype *t = &d->t;
    if (ox->store) {
        atomic_fetch_add_explicit(&ox->store->refs, 1, memory_order_relaxed);
        d->t.blocks = old->blocks;
        d->t.nblocks = old->nblocks;
        d->x.prefix = ox->prefix;
        d->x.store = ox->store;
    } else { /* predefined: copy the few blocks */
        struct pm_type_store *s = store_alloc(old->nblocks);
        if (!s) {
            free(d);
            return NULL;
        }
        memcpy(s->b, old->blocks, old->nblocks * sizeof(struct pm_block));
        attach_store(d, s);
    }
    t->committed = old->committed;
    t->contiguous = old->contiguous;
    t->size = old->size;
    t->lb = old->lb;
    t->extent = old->extent;
    t->true_lb = old->true_lb;
    t->true_extent = old->true_extent;
    t->basic = old->basic;
    t->nelements = old->nelements;
    d->x.align = ox->align;
    d->x.sticky_lb = ox->sticky_lb;
    d->x.sticky_ub = ox->sticky_ub;
    d->x.pair_first = ox->pair_first;
    pm_lock(&pm_type_name_lock);
    memcpy(t->name, old->name, sizeof t->name);
    pm_unlock(&pm_type_name_lock);
    if (!old->predefined) {
        if (pm_type_set_envelope(t, old->combiner, old->ni, old->na, old->nc, old->nd) !=
            MPI_SUCCESS) {
            pm_type_release(t);
            return NULL;
        }
        if (old->ni)
            memcpy(t->ints, old->ints, (size_t)old->ni * sizeof(int));
        if (old->na)
            memcpy(t->aints, old->aints, (size_t)old->na * sizeof(MPI_Aint));
        if (old->nc)
            memcpy(t->counts, old->counts, (size_t)old->nc * sizeof(MPI_Count));
        for (int i = 0; i < old->nd; i++)
            pm_type_set_inner(t, i, ox->inner[i]);
    }
    return t;
}

int pm_type_publish(const char *fname, struct pm_datatype *t, MPI_Datatype *newtype)
{
    int h = pm_table_add(&pm_type_table, t);
    if (!h) {
        pm_type_release(t);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: no room for a new datatype handle",
                        fname);
    }
    t->handle = h;
    *newtype = h;
    return MPI_SUCCESS;
}

void pm_type_retain(struct pm_datatype *t)
{
    if (!t->predefined)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void pm_type_release(struct pm_datatype *t)
{
    if (t->predefined || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    struct pm_dtype *d = (struct pm_dtype *)t;
    /* Normally gone with MPI_Type_free; this catches the rest. */
    if (t->attrs)
        pm_attrs_delete_type(t);
    for (int i = 0; i < t->nd; i++)
        pm_type_release(d->x.inner[i]);
    free(d->x.contents);
    struct pm_type_store *s = d->x.store;
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        free(s);
    free(d);
}
