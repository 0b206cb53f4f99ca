/*
 * file_view.c — file views (MPI-4.1 14.3): MPI_File_set_view / get_view,
 * the map from a view's data to file offsets, extents and byte offsets.
 *
 * A view tiles its filetype from `disp` every extent; the data of the view
 * are the filetype's blocks in order. A position in that data ("view
 * byte") maps to a file offset through the tile (pos / size) and the block
 * (a binary search of `cum`, the data before each block). The standard
 * requires the filetype's displacements to be non-negative and
 * non-decreasing, so the map is monotonic: checked at set_view, and
 * nothing else here has to care about order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

void pm_view_default(struct pm_view *v)
{
    memset(v, 0, sizeof *v);
    v->etype = v->filetype = pm_type_get(MPI_BYTE);
    v->etype_h = v->filetype_h = MPI_BYTE;
    v->rep = pm_datarep_find("native");
    v->esize = v->fesize = v->tsize = v->textent = 1;
    v->rnum = v->rden = 1;
    v->blocks = v->filetype->blocks;
    v->nblocks = v->filetype->nblocks;
    v->contiguous = v->ordered = v->tiles_ordered = true;
}

void pm_view_free(struct pm_view *v)
{
    if (v->filetype && v->blocks != v->filetype->blocks)
        free(v->blocks); /* scaled copies (before the type may go) */
    if (v->etype)
        pm_type_release(v->etype);
    if (v->filetype)
        pm_type_release(v->filetype);
    free(v->cum);
    v->etype = v->filetype = NULL;
    v->cum = NULL;
    v->blocks = NULL;
}

/* Block i of the filetype whose data holds view byte q of a tile. */
static size_t block_of(const struct pm_view *v, MPI_Offset q)
{
    size_t lo = 0, hi = v->nblocks; /* cum[lo] <= q < cum[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (v->cum[mid] <= q)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void pm_view_iter_start(struct pm_view_iter *it, const struct pm_view *v, MPI_Offset pos,
                        MPI_Offset len)
{
    it->v = v;
    it->left = len;
    if (v->contiguous) {
        it->tile = 0;
        it->block = 0;
        it->inside = pos;
        return;
    }
    it->tile = pos / v->tsize;
    MPI_Offset q = pos % v->tsize;
    it->block = block_of(v, q);
    it->inside = q - v->cum[it->block];
}

bool pm_view_iter_next(struct pm_view_iter *it, MPI_Offset *off, MPI_Offset *len)
{
    if (it->left <= 0)
        return false;
    const struct pm_view *v = it->v;
    if (v->contiguous) {
        *off = v->disp + it->inside;
        *len = it->left;
        it->inside += it->left;
        it->left = 0;
        return true;
    }
    const struct pm_block *b = &v->blocks[it->block];
    MPI_Offset n = b->len - it->inside;
    if (n > it->left)
        n = it->left;
    *off = v->disp + it->tile * v->textent + b->disp + it->inside;
    *len = n;
    it->left -= n;
    it->inside += n;
    if (it->inside == b->len) {
        it->inside = 0;
        if (++it->block == v->nblocks) {
            it->block = 0;
            it->tile++;
        }
    }
    /* merge with the next segments while they are adjacent in the file */
    while (it->left > 0) {
        const struct pm_block *nb = &v->blocks[it->block];
        MPI_Offset noff = v->disp + it->tile * v->textent + nb->disp;
        if (noff != *off + *len)
            break;
        MPI_Offset m = nb->len < it->left ? nb->len : it->left;
        *len += m;
        it->left -= m;
        it->inside = m;
        if (it->inside == nb->len) {
            it->inside = 0;
            if (++it->block == v->nblocks) {
                it->block = 0;
                it->tile++;
            }
        }
    }
    return true;
}

MPI_Offset pm_view_file_offset(const struct pm_view *v, MPI_Offset pos)
{
    if (v->contiguous)
        return v->disp + pos;
    MPI_Offset tile = pos / v->tsize, q = pos % v->tsize;
    size_t b = block_of(v, q);
    return v->disp + tile * v->textent + v->blocks[b].disp + (q - v->cum[b]);
}

MPI_Offset pm_view_bytes_before(const struct pm_view *v, MPI_Offset off)
{
    if (off <= v->disp)
        return 0;
    MPI_Offset rel = off - v->disp;
    if (v->contiguous)
        return rel;
    MPI_Offset tiles = rel / v->textent, rem = rel % v->textent, bytes = tiles * v->tsize;
    for (size_t i = 0; i < v->nblocks; i++) {
        const struct pm_block *b = &v->blocks[i];
        if (b->disp >= rem)
            break;
        bytes += b->disp + b->len <= rem ? b->len : rem - b->disp;
    }
    return bytes;
}

/* The standard's rule (MPI-4.1 14.3): the filetype's displacements are
 * non-negative and do not decrease. Blocks may overlap (a view only read
 * may read bytes twice). From one tile to the next they may go back when
 * the type's bounds are set apart from its data (HDF5 does, and accesses
 * a single tile): the map stays right, only not in file order. */
static bool non_decreasing(const struct pm_datatype *t)
{
    if (t->nblocks == 0 || t->blocks[0].disp < 0)
        return false;
    for (size_t i = 1; i < t->nblocks; i++)
        if (t->blocks[i].disp < t->blocks[i - 1].disp)
            return false;
    return true;
}

/* Stricter: the blocks do not overlap either, so a tile's data are in
 * increasing file order (what sieving and two-phase I/O rely on). */
static bool in_file_order(const struct pm_datatype *t)
{
    MPI_Aint end = 0;
    for (size_t i = 0; i < t->nblocks; i++) {
        if (t->blocks[i].disp < end)
            return false;
        end = t->blocks[i].disp + t->blocks[i].len;
    }
    return true;
}

/* And from one tile to the next. */
static bool tiles_in_order(const struct pm_datatype *t)
{
    return t->nblocks == 0 || t->blocks[t->nblocks - 1].disp + t->blocks[t->nblocks - 1].len <=
                                  t->extent + t->blocks[0].disp;
}

bool pm_view_in_order(const struct pm_view *v, MPI_Offset pos, MPI_Offset bytes)
{
    return v->ordered && (v->tiles_ordered || bytes <= 0 || v->contiguous ||
                          pos / v->tsize == (pos + bytes - 1) / v->tsize);
}

/* Fill v from (disp, etype, filetype, rep), the file holding num / den
 * bytes per byte of memory data: MPI_SUCCESS or an error class. */
static int view_make(struct pm_view *v, MPI_Offset disp, struct pm_datatype *et,
                     MPI_Datatype eh, struct pm_datatype *ft, MPI_Datatype fh,
                     const struct pm_datarep *rep, MPI_Offset num, MPI_Offset den)
{
    memset(v, 0, sizeof *v);
    v->disp = disp;
    v->etype = et;
    v->filetype = ft;
    v->etype_h = eh;
    v->filetype_h = fh;
    v->rep = rep;
    v->rnum = num;
    v->rden = den;
    v->esize = et->size;
    v->fesize = et->size / den * num;
    v->tsize = ft->size / den * num;
    v->textent = ft->extent / den * num;
    v->nblocks = ft->nblocks;
    v->blocks = ft->blocks;
    if (num != den) {
        /* every offset and length scaled: the type is of one basic type,
         * its displacements whole elements */
        v->blocks = malloc(ft->nblocks * sizeof *v->blocks);
        if (!v->blocks)
            return MPI_ERR_NO_MEM;
        for (size_t i = 0; i < ft->nblocks; i++)
            v->blocks[i] = (struct pm_block){ft->blocks[i].disp / den * num,
                                             ft->blocks[i].len / den * num};
    }
    v->contiguous = v->nblocks == 1 && v->blocks[0].disp == 0 &&
                    v->blocks[0].len == v->textent;
    v->ordered = in_file_order(ft);
    v->tiles_ordered = tiles_in_order(ft);
    v->cum = malloc((v->nblocks + 1) * sizeof *v->cum);
    if (!v->cum) {
        if (v->blocks != ft->blocks)
            free(v->blocks);
        return MPI_ERR_NO_MEM;
    }
    MPI_Offset sum = 0;
    for (size_t i = 0; i < v->nblocks; i++) {
        v->cum[i] = sum;
        sum += v->blocks[i].len;
    }
    v->cum[v->nblocks] = sum;
    pm_type_retain(et);
    pm_type_retain(ft);
    return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    struct pm_datatype *et, *ft;
    if (pm_type_check(etype, &et) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: invalid or uncommitted etype %#x", fn,
                             (unsigned)etype);
    if (pm_type_check(filetype, &ft) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: invalid or uncommitted filetype %#x", fn,
                             (unsigned)filetype);
    if (!datarep)
        return pm_file_error(f, MPI_ERR_ARG, "%s: datarep is NULL", fn);
    const struct pm_datarep *rep = pm_datarep_find(datarep);
    if (!rep)
        return pm_file_error(f, MPI_ERR_UNSUPPORTED_DATAREP,
                             "%s: unknown data representation \"%s\"", fn, datarep);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_file_error(f, MPI_ERR_INFO, "%s: invalid info %#x", fn, (unsigned)info);
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: a split collective is active", fn);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(f->amode & MPI_MODE_SEQUENTIAL))
            return pm_file_error(f, MPI_ERR_ARG, "%s: MPI_DISPLACEMENT_CURRENT is for files "
                                 "opened with MPI_MODE_SEQUENTIAL", fn);
    } else if (disp < 0) {
        return pm_file_error(f, MPI_ERR_ARG, "%s: negative displacement %lld", fn,
                             (long long)disp);
    }
    if (et->size <= 0)
        return pm_file_error(f, MPI_ERR_ARG, "%s: the etype has no data", fn);
    if (ft->size <= 0 || ft->size % et->size)
        return pm_file_error(f, MPI_ERR_ARG, "%s: the filetype (%lld bytes of data) is not "
                             "made of etypes (%lld bytes)", fn, (long long)ft->size,
                             (long long)et->size);
    for (int k = 0; k < 2; k++) {
        struct pm_datatype *t = k ? ft : et;
        if (!non_decreasing(t))
            return pm_file_error(f, MPI_ERR_ARG, "%s: the %s's displacements are not "
                                 "non-negative and non-decreasing (MPI-4.1 14.3)", fn,
                                 k ? "filetype" : "etype");
        /* overlapping blocks would write bytes twice: only a file opened
         * read-only may have them (as ROMIO allows) */
        if (!(f->amode & MPI_MODE_RDONLY) && !in_file_order(t))
            return pm_file_error(f, MPI_ERR_ARG, "%s: the %s's blocks overlap, which only a "
                                 "file opened MPI_MODE_RDONLY may have", fn,
                                 k ? "filetype" : "etype");
    }
    /* the filetype is made of etypes: of the same basic type when both
     * have one (MPI_BYTE goes with anything) */
    if (et->basic && ft->basic && et->basic != ft->basic &&
        PROUST_MPI_TYPE(et->basic) != MPI_BYTE && PROUST_MPI_TYPE(ft->basic) != MPI_BYTE)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: the filetype's elements (type %#x) are "
                             "not of the etype's type (%#x)", fn,
                             (unsigned)PROUST_MPI_TYPE(ft->basic),
                             (unsigned)PROUST_MPI_TYPE(et->basic));
    char why[256];
    MPI_Offset num, den, enum_, eden;
    int rc = pm_datarep_scale(rep, ft, &num, &den, why, sizeof why);
    if (rc == MPI_SUCCESS)
        rc = pm_datarep_scale(rep, et, &enum_, &eden, why, sizeof why);
    if (rc == MPI_SUCCESS && enum_ * den != num * eden) {
        snprintf(why, sizeof why, "the etype and the filetype change size differently in "
                 "data representation \"%s\"", rep->name);
        rc = MPI_ERR_UNSUPPORTED_DATAREP;
    }
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s: %s", fn, why);

    pm_file_drain(f);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset cur = 0; /* the shared pointer, in the old view's bytes */
        pm_shared_get(f, &cur);
        disp = pm_view_file_offset(&f->view, cur * f->view.fesize);
    }
    struct pm_view v;
    rc = view_make(&v, disp, et, etype, ft, filetype, rep, num, den);
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s: out of memory", fn);
    pthread_mutex_lock(&f->lock);
    pm_view_free(&f->view);
    f->view = v;
    f->fp = 0;
    pthread_mutex_unlock(&f->lock);
    rc = pm_hints_apply(f, info, fn);
    PMPI_Barrier(f->comm); /* nobody uses the shared pointer while it resets */
    if (rc == MPI_SUCCESS && f->rank == 0)
        rc = pm_shared_set(f, 0);
    PMPI_Barrier(f->comm);
    return rc == MPI_SUCCESS ? rc : pm_file_error(f, rc, "%s(%s): cannot set the view", fn,
                                                  f->path);
}
PM_WEAK(File_set_view)

/* A handle the caller owns: predefined types as they are, others duplicated. */
static int give_type(MPI_Datatype h, struct pm_datatype *t, MPI_Datatype *out)
{
    if (t->predefined || t->permanent) {
        *out = h;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t->handle, out);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!disp || !etype || !filetype || !datarep)
        return pm_file_error(f, MPI_ERR_ARG, "%s: a NULL output argument", fn);
    pthread_mutex_lock(&f->lock);
    *disp = f->view.disp;
    int rc = give_type(f->view.etype_h, f->view.etype, etype);
    if (rc == MPI_SUCCESS)
        rc = give_type(f->view.filetype_h, f->view.filetype, filetype);
    strcpy(datarep, f->view.rep->name);
    pthread_mutex_unlock(&f->lock);
    return rc == MPI_SUCCESS ? rc : pm_file_error(f, rc, "%s: cannot copy the types", fn);
}
PM_WEAK(File_get_view)

static int type_extent(struct pm_file *f, MPI_Datatype datatype, MPI_Count *extent,
                       const char *fn)
{
    struct pm_datatype *t = pm_type_get(datatype);
    if (!t)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: invalid datatype %#x", fn,
                             (unsigned)datatype);
    char why[256];
    MPI_Offset num, den;
    int rc = pm_datarep_scale(f->view.rep, t, &num, &den, why, sizeof why);
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s: %s", fn, why);
    *extent = t->extent / den * num;
    return MPI_SUCCESS;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char fn[] = "MPI_File_get_type_extent";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!extent)
        return pm_file_error(f, MPI_ERR_ARG, "%s: extent is NULL", fn);
    MPI_Count e;
    int rc = type_extent(f, datatype, &e, fn);
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return rc;
}
PM_WEAK(File_get_type_extent)

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    static const char fn[] = "MPI_File_get_type_extent_c";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!extent)
        return pm_file_error(f, MPI_ERR_ARG, "%s: extent is NULL", fn);
    return type_extent(f, datatype, extent, fn);
}
PM_WEAK(File_get_type_extent_c)

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!disp)
        return pm_file_error(f, MPI_ERR_ARG, "%s: disp is NULL", fn);
    if (offset < 0)
        return pm_file_error(f, MPI_ERR_ARG, "%s: negative offset %lld", fn,
                             (long long)offset);
    pthread_mutex_lock(&f->lock);
    *disp = pm_view_file_offset(&f->view, offset * f->view.fesize);
    pthread_mutex_unlock(&f->lock);
    return MPI_SUCCESS;
}
PM_WEAK(File_get_byte_offset)
