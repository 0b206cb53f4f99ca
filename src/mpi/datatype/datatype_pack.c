/*
 * datatype_pack.c — moving typed data to and from a plain byte stream:
 * pm_type_pack/pm_type_unpack (resumable at any byte offset, so a large
 * message can be streamed in pieces), pm_type_elements (MPI_Get_elements),
 * and MPI_Pack, MPI_Unpack, MPI_Pack_size. The MPI_PACKED format is the
 * bytes themselves: every process of a job has the same representation.
 */
#include <limits.h>
#include <string.h>

#include "datatype.h"

#define ERR(comm, code, ...) pm_error(comm, code, __VA_ARGS__)

/* Block index holding stream offset `off` (0 <= off < size) of an instance:
 * the last i with prefix[i] <= off (blocks are never empty). */
static size_t find_block(const MPI_Aint *prefix, size_t n, MPI_Aint off)
{
    size_t lo = 0, hi = n; /* prefix[lo] <= off < prefix[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (prefix[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    /* small blocks are common (one element): spare them a libc call */
    switch (n) {
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    default:
        proust_copy(dst, src, n);
    }
}

/* k blocks of len bytes, `stride` apart from address `at`, to or from the
 * stream; the usual element sizes get a copy the compiler inlines. */
static inline void walk_strided(uintptr_t at, MPI_Aint stride, size_t len, size_t k,
                                unsigned char *stream, bool pack)
{
#define PM_STRIDED(L)                                                                            \
    for (size_t i = 0; i < k; i++, at += (uintptr_t)stride, stream += (L)) {                     \
        if (pack)                                                                                \
            memcpy(stream, (const void *)at, (L));                                               \
        else                                                                                     \
            memcpy((void *)at, stream, (L));                                                     \
    }
    switch (len) {
    case 4:
        PM_STRIDED(4);
        break;
    case 8:
        PM_STRIDED(8);
        break;
    case 16:
        PM_STRIDED(16);
        break;
    default:
        for (size_t i = 0; i < k; i++, at += (uintptr_t)stride, stream += len) {
            if (pack)
                copy_bytes(stream, (const void *)at, len);
            else
                copy_bytes((void *)at, stream, len);
        }
    }
#undef PM_STRIDED
}

/* Move `n` bytes between the stream (starting `skip` bytes in) and the
 * typed buffer at address `base`. Addresses are computed as integers: the
 * buffer may be MPI_BOTTOM with absolute displacements. */
static inline void walk(const struct pm_datatype *t, uintptr_t base, size_t skip,
                        unsigned char *stream, size_t n, bool pack)
{
    const MPI_Aint *prefix = pm_type_x(t)->prefix;
    const struct pm_block *blocks = t->blocks;
    size_t nb = t->nblocks;
    MPI_Count inst = (MPI_Count)(skip / (size_t)t->size);
    MPI_Aint off = (MPI_Aint)(skip % (size_t)t->size);
    size_t b = find_block(prefix, nb, off);
    MPI_Aint in_block = off - prefix[b];
    uintptr_t at = base + (uintptr_t)(inst * t->extent);
    const struct pm_type_store *st = pm_type_x(t)->store;
    size_t reg_len = st ? (size_t)st->reg_len : 0;
    while (n > 0) {
        if (reg_len && in_block == 0 && n >= reg_len) {
            /* whole blocks of a regular list: a strided loop */
            size_t k = n / reg_len;
            if (k > nb - b)
                k = nb - b;
            walk_strided(at + (uintptr_t)blocks[b].disp, st->reg_stride, reg_len, k, stream, pack);
            stream += k * reg_len;
            n -= k * reg_len;
            if ((b += k) == nb) {
                b = 0;
                at += (uintptr_t)t->extent;
            }
            continue;
        }
        size_t avail = (size_t)(blocks[b].len - in_block);
        size_t c = avail < n ? avail : n;
        void *typed = (void *)(at + (uintptr_t)blocks[b].disp + (uintptr_t)in_block);
        if (pack)
            copy_bytes(stream, typed, c);
        else
            copy_bytes(typed, stream, c);
        stream += c;
        n -= c;
        in_block = 0;
        if (c < avail) /* stopped inside the block: n is 0 */
            break;
        if (++b == nb) {
            b = 0;
            at += (uintptr_t)t->extent;
        }
    }
}

/* Bytes available from `skip` on in count instances, capped at `max`. */
static size_t span(MPI_Count count, const struct pm_datatype *t, size_t skip, size_t max)
{
    if (count <= 0 || t->size <= 0)
        return 0;
    size_t total = (size_t)count * (size_t)t->size;
    if (skip >= total)
        return 0;
    return total - skip < max ? total - skip : max;
}

size_t pm_type_pack(const void *inbuf, MPI_Count count, const struct pm_datatype *t,
                    size_t skip, void *out, size_t max)
{
    size_t n = span(count, t, skip, max);
    if (n == 0)
        return 0;
    uintptr_t base = (uintptr_t)inbuf;
    if (t->contiguous)
        proust_copy(out, (const void *)(base + (uintptr_t)t->true_lb + skip), n);
    else
        walk(t, base, skip, out, n, true);
    return n;
}

size_t pm_type_unpack(const void *in, size_t bytes, void *outbuf, MPI_Count count,
                      const struct pm_datatype *t, size_t skip)
{
    size_t n = span(count, t, skip, bytes);
    if (n == 0)
        return 0;
    uintptr_t base = (uintptr_t)outbuf;
    if (t->contiguous)
        proust_copy((void *)(base + (uintptr_t)t->true_lb + skip), in, n);
    else
        walk(t, base, skip, (unsigned char *)(uintptr_t)in, n, false);
    return n;
}

/* ---- MPI_Get_elements ---- */

static MPI_Count elements(const struct pm_datatype *t, MPI_Count bytes);

/* Elements in the first `rem` bytes (0 < rem < size) of one instance: the
 * stream of a derived type is its inner type's stream repeated, except for
 * struct, whose fields follow each other. */
static MPI_Count partial(const struct pm_datatype *t, MPI_Count rem)
{
    const struct pm_type_x *x = pm_type_x(t);
    if (t->predefined) /* a pair type holding only its first member */
        return x->pair_first && rem == x->pair_first ? 1 : MPI_UNDEFINED;
    if (t->nd == 0)
        return MPI_UNDEFINED;
    if (t->combiner != MPI_COMBINER_STRUCT)
        return elements(x->inner[0], rem);
    MPI_Count acc = 0;
    for (int i = 0; i < t->nd && rem > 0; i++) {
        const struct pm_datatype *f = x->inner[i];
        MPI_Count bl = pm_type_struct_bl(t, i), seg = bl * f->size;
        if (rem >= seg) {
            acc += bl * f->nelements;
            rem -= seg;
            continue;
        }
        MPI_Count e = elements(f, rem);
        return e == MPI_UNDEFINED ? MPI_UNDEFINED : acc + e;
    }
    return acc;
}

static MPI_Count elements(const struct pm_datatype *t, MPI_Count bytes)
{
    if (bytes == 0)
        return 0;
    if (t->size == 0)
        return MPI_UNDEFINED;
    /* homogeneous: the stream is a sequence of one basic type */
    if (!t->predefined && t->basic)
        t = &pm_type_predef[t->basic];
    MPI_Count n = bytes / t->size * t->nelements, rem = bytes % t->size;
    if (rem == 0)
        return n;
    MPI_Count p = partial(t, rem);
    return p == MPI_UNDEFINED ? MPI_UNDEFINED : n + p;
}

MPI_Count pm_type_elements(const struct pm_datatype *t, MPI_Count bytes)
{
    return elements(t, bytes);
}

/* The inverse (MPI_Status_set_elements): bytes of the first `n` elements. */
MPI_Count pm_type_element_bytes(const struct pm_datatype *t, MPI_Count n)
{
    if (n == 0 || t->nelements == 0)
        return 0;
    if (!t->predefined && t->basic)
        t = &pm_type_predef[t->basic];
    MPI_Count bytes = n / t->nelements * t->size, rem = n % t->nelements;
    if (rem == 0)
        return bytes;
    const struct pm_type_x *x = pm_type_x(t);
    if (t->predefined) /* a pair type: its first member */
        return bytes + x->pair_first;
    if (t->nd == 0)
        return bytes;
    if (t->combiner != MPI_COMBINER_STRUCT)
        return bytes + pm_type_element_bytes(x->inner[0], rem);
    for (int i = 0; i < t->nd; i++) {
        const struct pm_datatype *f = x->inner[i];
        MPI_Count bl = pm_type_struct_bl(t, i), fe = bl * f->nelements;
        if (rem < fe)
            return bytes + pm_type_element_bytes(f, rem);
        bytes += bl * f->size;
        rem -= fe;
    }
    return bytes;
}

/* ---- MPI_Pack & co ---- */

/* Checks shared by the three calls: communicator, count, datatype; the
 * bytes of `count` instances in *bytes. */
static int check_common(const char *fn, MPI_Comm comm, MPI_Count count, MPI_Datatype datatype,
                        bool need_commit, struct pm_datatype **t, MPI_Count *bytes)
{
    if (!pm_comm_get(comm))
        return ERR(MPI_COMM_NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fn,
                   (unsigned)comm);
    if (count < 0)
        return ERR(comm, MPI_ERR_COUNT, "%s: count %lld is negative", fn, (long long)count);
    *t = pm_type_get(datatype);
    if (!*t)
        return ERR(comm, MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype", fn,
                   (unsigned)datatype);
    if (need_commit && !(*t)->committed)
        return ERR(comm, MPI_ERR_TYPE, "%s: datatype %#x is not committed", fn,
                   (unsigned)datatype);
    if (__builtin_mul_overflow(count, (*t)->size, bytes))
        return ERR(comm, MPI_ERR_COUNT, "%s: %lld elements of %lld bytes overflow", fn,
                   (long long)count, (long long)(*t)->size);
    return MPI_SUCCESS;
}

int pm_type_check_stream(const char *fn, MPI_Comm comm, const void *buf, MPI_Aint bufsize,
                         bool has_position, MPI_Aint position, MPI_Count need, const char *what)
{
    if (!has_position)
        return ERR(comm, MPI_ERR_ARG, "%s: position is NULL", fn);
    if (bufsize < 0)
        return ERR(comm, MPI_ERR_ARG, "%s: %s %lld is negative", fn, what, (long long)bufsize);
    if (position < 0 || position > bufsize)
        return ERR(comm, MPI_ERR_ARG, "%s: position %lld is outside [0, %s = %lld]", fn,
                   (long long)position, what, (long long)bufsize);
    if (need > (MPI_Count)(bufsize - position))
        return ERR(comm, MPI_ERR_TRUNCATE,
                   "%s: %lld bytes do not fit between position %lld and %s %lld", fn,
                   (long long)need, (long long)position, what, (long long)bufsize);
    if (need > 0 && !buf)
        return ERR(comm, MPI_ERR_BUFFER, "%s: the packed buffer is NULL", fn);
    return MPI_SUCCESS;
}

/* MPI_Pack and MPI_Unpack with MPI_Count sizes (the _c forms; the int
 * ones convert). `position` may be NULL (an error). */
static int pack(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    struct pm_datatype *t = NULL;
    MPI_Count need = 0;
    int rc = check_common(fn, comm, incount, datatype, true, &t, &need);
    if (rc || (rc = pm_type_check_stream(fn, comm, outbuf, outsize, position != NULL,
                                         position ? *position : 0, need, "outsize")))
        return rc;
    pm_type_pack(inbuf, incount, t, 0, (char *)outbuf + *position, (size_t)need);
    *position += need;
    return MPI_SUCCESS;
}

static int unpack(const char *fn, const void *inbuf, MPI_Count insize, MPI_Count *position,
                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    struct pm_datatype *t = NULL;
    MPI_Count need = 0;
    int rc = check_common(fn, comm, outcount, datatype, true, &t, &need);
    if (rc || (rc = pm_type_check_stream(fn, comm, inbuf, insize, position != NULL,
                                         position ? *position : 0, need, "insize")))
        return rc;
    pm_type_unpack((const char *)inbuf + *position, (size_t)need, outbuf, outcount, t, 0);
    *position += need;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Pack");
    MPI_Count pos = position ? *position : 0;
    int rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize,
                  position ? &pos : NULL, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos; /* within outsize, an int */
    return rc;
}
PM_WEAK(Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Pack_c");
    return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}
PM_WEAK(Pack_c)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Unpack");
    MPI_Count pos = position ? *position : 0;
    int rc = unpack("MPI_Unpack", inbuf, insize, position ? &pos : NULL, outbuf, outcount,
                    datatype, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos; /* within insize, an int */
    return rc;
}
PM_WEAK(Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Unpack_c");
    return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
}
PM_WEAK(Unpack_c)

/* Bytes MPI_Pack_size(_c) reports in *need; `size` is the caller's output
 * (only checked here). */
static int pack_size(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                     const void *size, MPI_Count *need)
{
    struct pm_datatype *t = NULL;
    int rc = check_common(fn, comm, incount, datatype, false, &t, need);
    if (rc == MPI_SUCCESS && !size)
        rc = ERR(comm, MPI_ERR_ARG, "%s: size is NULL", fn);
    return rc;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Pack_size";
    PM_CHECK_INIT(fn);
    MPI_Count need = 0;
    int rc = pack_size(fn, incount, datatype, comm, size, &need);
    if (rc)
        return rc;
    if (need > INT_MAX)
        return ERR(comm, MPI_ERR_ARG,
                   "%s: %d elements take %lld bytes, more than an int holds (MPI_Pack_size_c)",
                   fn, incount, (long long)need);
    *size = (int)need;
    return MPI_SUCCESS;
}
PM_WEAK(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    static const char fn[] = "MPI_Pack_size_c";
    PM_CHECK_INIT(fn);
    MPI_Count need = 0;
    int rc = pack_size(fn, incount, datatype, comm, size, &need);
    if (rc)
        return rc;
    *size = need;
    return MPI_SUCCESS;
}
PM_WEAK(Pack_size_c)
