/*
 * file_coll.c — collective data access (MPI-4.1 14.4: read_all, write_all,
 * read_at_all, write_at_all), with two-phase I/O ("collective buffering").
 *
 * When the ranks' pieces interleave in the file (each rank's view is a
 * subarray of a distributed array, say), writing them one by one means
 * many small writes, each a read-modify-write of the bytes around it. Two-
 * phase I/O turns them into few large ones: the range the ranks touch is
 * cut into one contiguous file domain per aggregator (cb_nodes of them:
 * by default one per PM_CB_AGG_BYTES, spread over the hosts), each handled
 * in windows of cb_buffer_size bytes. Round by round, every rank sends
 * the aggregators the pieces of its data that fall in their current
 * windows (MPI_Alltoallv) and each aggregator writes its window with one
 * pwrite, reading it first only when the pieces leave holes; reads go the
 * other way. The pieces' offsets travel once, before the rounds; each side
 * then knows every round's counts. A round's pieces leave from (arrive in)
 * the rank's data where they lie in order there; the buffers stay with the
 * file between calls (file_scratch.c).
 *
 * Accesses that do not interleave (each rank one contiguous range, apart
 * from the others) go straight to the file from each rank, as does every
 * access when romio_cb_read/write says "disable".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io.h"

/* Pieces this large and up go straight to the file even when the ranks'
 * data interleave (automatic mode). */
#define PM_CB_PIECE_MAX ((MPI_Offset)64 << 10)
/* Without cb_nodes / cb_config_list, a call gets one aggregator per this
 * many bytes of the range it covers (at least one per host, at most every
 * rank): with one per host, one process of a node would move and write
 * everything while its neighbours wait (NPB BT-IO's 10 MiB dumps from 4
 * ranks: the I/O time halved with the four aggregating). */
#define PM_CB_AGG_BYTES ((MPI_Offset)1 << 20)

struct piece {
    MPI_Offset off, len, at; /* file offset, bytes, offset in the rank's data */
    int agg, round;
};

struct plan {
    MPI_Offset gmin, gmax, fd_size, cb;
    int naggs, rounds;
};

static MPI_Offset dom_lo(const struct plan *p, int a)
{
    MPI_Offset lo = p->gmin + a * p->fd_size;
    return lo < p->gmax ? lo : p->gmax;
}

static MPI_Offset dom_hi(const struct plan *p, int a)
{
    MPI_Offset hi = p->gmin + (a + 1) * p->fd_size;
    return hi < p->gmax ? hi : p->gmax;
}

/* This rank's data cut at domain and window boundaries. */
static int make_pieces(struct pm_file *f, const struct plan *p, MPI_Offset pos, MPI_Offset bytes,
                       struct piece **out, size_t *nout)
{
    size_t n = 0, cap = 64;
    struct piece *v = malloc(cap * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    struct pm_view_iter it;
    pm_view_iter_start(&it, &f->view, pos, bytes);
    MPI_Offset off, len, at = 0;
    while (pm_view_iter_next(&it, &off, &len)) {
        while (len > 0) {
            int a = (int)((off - p->gmin) / p->fd_size);
            if (a >= p->naggs)
                a = p->naggs - 1;
            MPI_Offset lo = dom_lo(p, a);
            int r = (int)((off - lo) / p->cb);
            MPI_Offset end = lo + (MPI_Offset)(r + 1) * p->cb;
            if (end > dom_hi(p, a))
                end = dom_hi(p, a);
            MPI_Offset k = off + len <= end ? len : end - off;
            if (n == cap) {
                struct piece *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv) {
                    free(v);
                    return MPI_ERR_NO_MEM;
                }
                v = nv;
                cap *= 2;
            }
            v[n++] = (struct piece){off, k, at, a, r};
            off += k;
            len -= k;
            at += k;
        }
    }
    *out = v;
    *nout = n;
    return MPI_SUCCESS;
}

/* Rounds first: in a round every aggregator handles one window, and a
 * rank's pieces for it are those of that round (then in file order). */
static int by_round(const void *x, const void *y)
{
    const struct piece *a = x, *b = y;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int by_offset(const void *x, const void *y)
{
    const MPI_Offset *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Bytes of [lo, hi) that the n (offset, length) pairs cover, counted once
 * (ranks may write the same bytes: what they cover, not the sum). Sorts. */
static MPI_Offset union_len(MPI_Offset *pairs, size_t n)
{
    qsort(pairs, n, 2 * sizeof *pairs, by_offset);
    MPI_Offset total = 0, end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        MPI_Offset lo = pairs[2 * i], hi = lo + pairs[2 * i + 1];
        if (lo < end)
            lo = end;
        if (hi > lo)
            total += hi - lo;
        if (hi > end)
            end = hi;
    }
    return total;
}

/* Do the ranks' accesses interleave? (each: [lo, hi), whether its data is
 * one contiguous range of the file, its average piece) */
static bool interleaved(const MPI_Offset *r, int size)
{
    for (int i = 0; i < size; i++) {
        if (r[4 * i + 1] <= r[4 * i])
            continue; /* nothing */
        if (r[4 * i + 2] == 0)
            return true;
        for (int j = i + 1; j < size; j++)
            if (r[4 * j + 1] > r[4 * j] && r[4 * j] < r[4 * i + 1] && r[4 * i] < r[4 * j + 1])
                return true;
    }
    return false;
}

/* Can this round's pieces [mi, m_end) go to (come from) the aggregators
 * straight from (into) data, without packing? Yes when each aggregator's
 * pieces follow one another in data (a view in file order makes it so)
 * and every range fits an int from the first: then *base and disp[rank]
 * locate them. */
static bool round_in_place(const struct pm_file *f, const struct piece *mine, size_t mi,
                           size_t m_end, int *disp, MPI_Offset *base)
{
    MPI_Offset b = mi < m_end ? mine[mi].at : 0, next = 0;
    for (size_t i = mi; i < m_end; i++)
        if (mine[i].at < b)
            b = mine[i].at;
    int prev = -1;
    for (size_t i = mi; i < m_end; i++) {
        int to = f->aggs[mine[i].agg];
        if (to == prev && mine[i].at != next)
            return false;
        if (to != prev) {
            if (mine[i].at - b > INT32_MAX)
                return false;
            disp[to] = (int)(mine[i].at - b);
            prev = to;
        }
        next = mine[i].at + mine[i].len;
        if (next - b > INT32_MAX)
            return false;
    }
    *base = b;
    return true;
}

/* What an aggregator received for one window: from rank r, the pairs
 * (offset, length) rpairs[rcur[r]..] below whi, their bytes in rbuf one
 * after the other, rank by rank. */
struct received {
    int P;
    const int *rcur, *rdisp, *rcount;
    const MPI_Offset *rpairs;
    MPI_Offset whi;
    const char *rbuf;
};

/* Write the window [slo, shi) of the received pieces. Holes between them
 * keep the file's bytes: read, fill, write back under a write lock, so
 * that a writer through another handle (another open, another job) does
 * not lose what it wrote into a hole meanwhile (ROMIO locks there too); a
 * file system without locks goes on unlocked. A descriptor that cannot
 * read (a write-only file) writes piece by piece instead. */
static int write_window(struct pm_file *f, const struct received *in, char *win, MPI_Offset slo,
                        MPI_Offset shi, bool holes, char *why, size_t whylen)
{
    bool locked = false, piecewise = false;
    if (holes) {
        int lk = pm_file_lock(f, true, slo, shi - slo);
        if (lk < 0 && lk != -EBADF && lk != -ENOLCK && lk != -EOPNOTSUPP) {
            snprintf(why, whylen, "cannot lock bytes %lld-%lld of %s: %s", (long long)slo,
                     (long long)shi, f->path, strerror(-lk));
            return pm_file_errno_class(-lk);
        }
        locked = lk == 0;
        ssize_t got = pm_pread_full(f->fd, win, (size_t)(shi - slo), slo);
        if (got == -EBADF) {
            piecewise = true;
        } else if (got < 0) {
            if (locked)
                pm_file_unlock(f, slo, shi - slo);
            snprintf(why, whylen, "read of %s at %lld: %s", f->path, (long long)slo,
                     strerror((int)-got));
            return pm_file_errno_class((int)-got);
        } else if (got < shi - slo) { /* past the end of the file */
            memset(win + got, 0, (size_t)(shi - slo - got));
        }
    }
    int rc = MPI_SUCCESS;
    size_t o2 = 0;
    for (int r = 0; r < in->P && rc == MPI_SUCCESS; r++)
        for (int k = in->rcur[r]; k < in->rdisp[r] + in->rcount[r] && in->rpairs[k] < in->whi;
             k += 2) {
            MPI_Offset off = in->rpairs[k], len = in->rpairs[k + 1];
            if (piecewise) {
                ssize_t w = pm_pwrite_full(f->fd, in->rbuf + o2, (size_t)len, off);
                if (w < 0) {
                    rc = pm_file_errno_class((int)-w);
                    snprintf(why, whylen, "write to %s at %lld: %s", f->path, (long long)off,
                             strerror((int)-w));
                    break;
                }
            } else {
                memcpy(win + (off - slo), in->rbuf + o2, (size_t)len);
            }
            o2 += (size_t)len;
        }
    if (!piecewise && rc == MPI_SUCCESS) {
        ssize_t w = pm_pwrite_full(f->fd, win, (size_t)(shi - slo), slo);
        if (w < 0) {
            rc = pm_file_errno_class((int)-w);
            snprintf(why, whylen, "write to %s at %lld: %s", f->path, (long long)slo,
                     strerror((int)-w));
        }
    }
    if (locked)
        pm_file_unlock(f, slo, shi - slo);
    return rc;
}

/* Two-phase exchange and I/O. data: this rank's bytes (in the file's
 * representation), `bytes` of them from view byte `pos`. */
static int two_phase(struct pm_file *f, bool write, const struct plan *p, MPI_Offset pos,
                     char *data, MPI_Offset bytes, char *why, size_t whylen)
{
    const int P = f->size;
    struct piece *mine = NULL;
    size_t nmine = 0;
    int rc = make_pieces(f, p, pos, bytes, &mine, &nmine);
    /* the pieces each rank sends each aggregator, as (off, len) pairs */
    int *scount = calloc((size_t)P, sizeof *scount), *rcount = calloc((size_t)P, sizeof *rcount);
    int *sdisp = calloc((size_t)P, sizeof *sdisp), *rdisp = calloc((size_t)P, sizeof *rdisp);
    int *cur = calloc((size_t)P, sizeof *cur);
    int *dscount = calloc((size_t)P, sizeof *dscount), *drcount = calloc((size_t)P, sizeof *drcount);
    int *dsdisp = calloc((size_t)P, sizeof *dsdisp), *drdisp = calloc((size_t)P, sizeof *drdisp);
    MPI_Offset *spairs = NULL, *rpairs = NULL;
    char *sbuf = NULL, *rbuf = NULL, *win = NULL;
    if (!scount || !rcount || !sdisp || !rdisp || !cur || !dscount || !drcount || !dsdisp ||
        !drdisp)
        rc = MPI_ERR_NO_MEM;
    int agg_of_rank = -1; /* which aggregator am I (index), -1: none */
    for (int a = 0; a < p->naggs; a++)
        if (f->aggs[a] == f->rank)
            agg_of_rank = a;
    if (rc == MPI_SUCCESS) {
        for (size_t i = 0; i < nmine; i++)
            scount[f->aggs[mine[i].agg]] += 2;
        for (int r = 0, d = 0; r < P; r++) {
            sdisp[r] = d;
            d += scount[r];
        }
        spairs = malloc((nmine * 2 + 1) * sizeof *spairs);
        if (!spairs)
            rc = MPI_ERR_NO_MEM;
    }
    int ok = rc;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MAX, f->comm);
    if (ok != MPI_SUCCESS) {
        rc = ok;
        snprintf(why, whylen, "out of memory planning collective I/O");
        goto out;
    }
    /* pairs in aggregator order: the pieces are in file order, and the
     * aggregators' domains too, so one pass */
    memcpy(cur, sdisp, (size_t)P * sizeof *cur);
    for (size_t i = 0; i < nmine; i++) {
        int to = f->aggs[mine[i].agg];
        spairs[cur[to]++] = mine[i].off;
        spairs[cur[to]++] = mine[i].len;
    }
    PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, f->comm);
    size_t nr = 0;
    for (int r = 0; r < P; r++) {
        rdisp[r] = (int)nr;
        nr += (size_t)rcount[r];
    }
    rpairs = malloc((nr + 1) * sizeof *rpairs);
    ok = rpairs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MAX, f->comm);
    if (ok != MPI_SUCCESS) {
        rc = ok;
        snprintf(why, whylen, "out of memory planning collective I/O");
        goto out;
    }
    PMPI_Alltoallv(spairs, scount, sdisp, MPI_OFFSET, rpairs, rcount, rdisp, MPI_OFFSET,
                   f->comm);
    /* an aggregator gets each rank's pairs in file order, which is round
     * order within its domain; this rank now walks its pieces by round */
    qsort(mine, nmine, sizeof *mine, by_round);
    MPI_Offset *spans = NULL; /* an aggregator's pairs of one window, to sort */
    if (agg_of_rank >= 0) {
        MPI_Offset wmax = p->cb < p->fd_size ? p->cb : p->fd_size;
        win = pm_file_scratch(f, PM_SCRATCH_WIN, (size_t)wmax);
        spans = malloc((nr + 2) * sizeof *spans);
    }
    /* rounds */
    size_t mi = 0;                       /* my next piece */
    int *rcur = calloc((size_t)P, sizeof *rcur); /* per rank: next pair received */
    if (!rcur || (agg_of_rank >= 0 && !win))
        rc = MPI_ERR_NO_MEM;
    for (int r = 0; r < P && rcur; r++)
        rcur[r] = rdisp[r];
    for (int round = 0; round < p->rounds; round++) {
        /* what I send each aggregator this round, and receive as one */
        memset(dscount, 0, (size_t)P * sizeof *dscount);
        size_t m_end = mi;
        while (m_end < nmine && mine[m_end].round == round)
            m_end++;
        for (size_t i = mi; i < m_end; i++)
            dscount[f->aggs[mine[i].agg]] += (int)mine[i].len;
        MPI_Offset wlo = 0, whi = 0;
        memset(drcount, 0, (size_t)P * sizeof *drcount);
        if (agg_of_rank >= 0) {
            wlo = dom_lo(p, agg_of_rank) + (MPI_Offset)round * p->cb;
            whi = wlo + p->cb < dom_hi(p, agg_of_rank) ? wlo + p->cb : dom_hi(p, agg_of_rank);
            for (int r = 0; r < P; r++)
                for (int k = rcur[r]; k < rdisp[r] + rcount[r] && rpairs[k] < whi; k += 2)
                    drcount[r] += (int)rpairs[k + 1];
        }
        size_t stot = 0, rtot = 0;
        for (int r = 0; r < P; r++) {
            dsdisp[r] = (int)stot;
            stot += (size_t)dscount[r];
            drdisp[r] = (int)rtot;
            rtot += (size_t)drcount[r];
        }
        /* my pieces straight from (into) data where they lie in order */
        MPI_Offset base = 0;
        bool in_place = round_in_place(f, mine, mi, m_end, cur, &base);
        sbuf = in_place ? NULL : pm_file_scratch(f, PM_SCRATCH_SEND, stot);
        rbuf = pm_file_scratch(f, PM_SCRATCH_RECV, rtot);
        char *mybuf = in_place ? data + base : sbuf;
        int *mydisp = in_place ? cur : dsdisp;
        if ((!in_place && !sbuf) || !rbuf) {
            /* nothing moves from here: the peers' exchange fails on the
             * sizes, and the error reaches every rank at the end */
            rc = MPI_ERR_NO_MEM;
            memset(dscount, 0, (size_t)P * sizeof *dscount);
            memset(drcount, 0, (size_t)P * sizeof *drcount);
            mybuf = rbuf = NULL;
            in_place = true; /* no packing */
        }
        /* the window's span: from the first piece to the last */
        MPI_Offset slo = whi, shi = wlo, covered = 0;
        size_t npairs = 0;
        if (agg_of_rank >= 0)
            for (int r = 0; r < P; r++)
                for (int k = rcur[r]; k < rdisp[r] + rcount[r] && rpairs[k] < whi; k += 2) {
                    if (rpairs[k] < slo)
                        slo = rpairs[k];
                    if (rpairs[k] + rpairs[k + 1] > shi)
                        shi = rpairs[k] + rpairs[k + 1];
                    covered += rpairs[k + 1];
                    if (spans) {
                        spans[2 * npairs] = rpairs[k];
                        spans[2 * npairs + 1] = rpairs[k + 1];
                        npairs++;
                    }
                }
        /* pieces that add up to the span may still overlap and leave holes */
        if (write && covered >= shi - slo && shi > slo)
            covered = spans ? union_len(spans, npairs) : 0;
        if (!in_place)
            memcpy(cur, dsdisp, (size_t)P * sizeof *cur); /* where each one's part goes */
        if (write) {
            /* else my pieces, packed per aggregator in file order */
            for (size_t i = mi; i < m_end && !in_place && sbuf; i++) {
                int to = f->aggs[mine[i].agg];
                memcpy(sbuf + cur[to], data + mine[i].at, (size_t)mine[i].len);
                cur[to] += (int)mine[i].len;
            }
            PMPI_Alltoallv(mybuf, dscount, mydisp, MPI_BYTE, rbuf, drcount, drdisp, MPI_BYTE,
                           f->comm);
            if (agg_of_rank >= 0 && shi > slo && rc == MPI_SUCCESS) {
                struct received in = {P, rcur, rdisp, rcount, rpairs, whi, rbuf};
                rc = write_window(f, &in, win, slo, shi, covered < shi - slo, why, whylen);
            }
        } else {
            if (agg_of_rank >= 0 && shi > slo && rc == MPI_SUCCESS) {
                ssize_t got = pm_pread_full(f->fd, win, (size_t)(shi - slo), slo);
                if (got < 0) {
                    rc = pm_file_errno_class((int)-got);
                    snprintf(why, whylen, "read of %s at %lld: %s", f->path, (long long)slo,
                             strerror((int)-got));
                    got = 0;
                }
                if (got < shi - slo) /* past the end: nobody asked for it (clipped) */
                    memset(win + got, 0, (size_t)(shi - slo - got));
                size_t o2 = 0;
                for (int r = 0; r < P; r++)
                    for (int k = rcur[r]; k < rdisp[r] + rcount[r] && rpairs[k] < whi; k += 2) {
                        memcpy(rbuf + o2, win + (rpairs[k] - slo), (size_t)rpairs[k + 1]);
                        o2 += (size_t)rpairs[k + 1];
                    }
            }
            PMPI_Alltoallv(rbuf, drcount, drdisp, MPI_BYTE, mybuf, dscount, mydisp, MPI_BYTE,
                           f->comm);
            for (size_t i = mi; i < m_end && !in_place && sbuf; i++) {
                int from = f->aggs[mine[i].agg];
                memcpy(data + mine[i].at, sbuf + cur[from], (size_t)mine[i].len);
                cur[from] += (int)mine[i].len;
            }
        }
        pm_file_scratch_release(f, PM_SCRATCH_SEND, sbuf);
        pm_file_scratch_release(f, PM_SCRATCH_RECV, rbuf);
        sbuf = rbuf = NULL;
        /* past this round's pairs */
        if (agg_of_rank >= 0)
            for (int r = 0; r < P; r++)
                while (rcur[r] < rdisp[r] + rcount[r] && rpairs[rcur[r]] < whi)
                    rcur[r] += 2;
        mi = m_end;
    }
    free(rcur);
    free(spans);
out:
    free(mine);
    free(scount);
    free(rcount);
    free(sdisp);
    free(rdisp);
    free(cur);
    free(dscount);
    free(drcount);
    free(dsdisp);
    free(drdisp);
    free(spairs);
    free(rpairs);
    pm_file_scratch_release(f, PM_SCRATCH_SEND, sbuf);
    pm_file_scratch_release(f, PM_SCRATCH_RECV, rbuf);
    pm_file_scratch_release(f, PM_SCRATCH_WIN, win);
    return rc;
}

int pm_file_rw_all(struct pm_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype dt, MPI_Status *status, const char *fname)
{
    struct pm_datatype *t = pm_type_get(dt);
    const struct pm_datarep *rep = f->view.rep;
    /* file positions and bytes */
    MPI_Offset pos = offset * f->view.fesize, bytes = pm_view_fbytes(&f->view, count * t->size);
    int cb = write ? f->hints.cb_write : f->hints.cb_read;
    if (!write && bytes > 0) {
        /* a read stops at the end of the file: only what is before it */
        struct stat sb;
        MPI_Offset size = fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : 0;
        MPI_Offset avail = pm_view_bytes_before(&f->view, size) - pos;
        if (avail < bytes)
            bytes = avail > 0 ? avail : 0;
    }
    /* where each rank's data lies: [lo, hi), one range or not (-1: not in
     * file order), and its average piece */
    bool in_order = pm_view_in_order(&f->view, pos, bytes);
    MPI_Offset r4[4] = {0, 0, in_order ? 1 : -1, INT64_MAX};
    if (bytes > 0) {
        r4[0] = pm_view_file_offset(&f->view, pos);
        r4[1] = pm_view_file_offset(&f->view, pos + bytes - 1) + 1;
        if (in_order)
            r4[2] = r4[1] - r4[0] == bytes;
        struct pm_view_iter it;
        MPI_Offset off, len, pieces = 0;
        pm_view_iter_start(&it, &f->view, pos, bytes);
        while (pm_view_iter_next(&it, &off, &len))
            pieces++;
        r4[3] = bytes / pieces;
    }
    /* every rank's four numbers: on the stack for up to 64 ranks, which
     * spares small calls a collective to agree the memory is there */
    MPI_Offset on_stack[4 * 64];
    MPI_Offset *all = f->size <= 64 ? on_stack : malloc((size_t)f->size * 4 * sizeof *all);
    int rc = all ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (f->size > 64)
        PMPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, f->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        pm_file_status(status, 0);
        return pm_file_error(f, rc, "%s: out of memory", fname);
    }
    PMPI_Allgather(r4, 4, MPI_OFFSET, all, 4, MPI_OFFSET, f->comm);
    /* automatic: two-phase I/O when the ranks' data interleave in pieces
     * small enough that writing them one by one costs more than moving
     * them to the aggregators (bench/io: 128 KiB pieces of a 3-D array go
     * faster straight to the file from every rank) */
    MPI_Offset smallest = INT64_MAX;
    for (int r = 0; r < f->size; r++)
        if (all[4 * r + 3] < smallest)
            smallest = all[4 * r + 3];
    bool use_cb = cb == PM_HINT_ENABLE ||
                  (cb == PM_HINT_AUTOMATIC && f->size > 1 && smallest < PM_CB_PIECE_MAX &&
                   interleaved(all, f->size));
    for (int r = 0; r < f->size; r++)
        if (all[4 * r + 2] < 0)
            use_cb = false; /* overlapping filetype blocks: not in file order */
    if (f->atomic)
        use_cb = false; /* each rank's access locked whole instead */
    if (!use_cb) {
        if (all != on_stack)
            free(all);
        /* each rank alone; a read still stops at the end of the file */
        return pm_file_rw(f, write, offset, buf, count, dt, status, fname);
    }
    struct plan p = {.gmin = INT64_MAX, .gmax = 0, .naggs = f->naggs,
                     .cb = f->hints.cb_buffer_size};
    for (int r = 0; r < f->size; r++)
        if (all[4 * r + 1] > all[4 * r]) {
            if (all[4 * r] < p.gmin)
                p.gmin = all[4 * r];
            if (all[4 * r + 1] > p.gmax)
                p.gmax = all[4 * r + 1];
        }
    if (all != on_stack)
        free(all);
    if (p.gmax <= p.gmin) { /* nobody has data */
        pm_file_status(status, 0);
        return MPI_SUCCESS;
    }
    if (f->hints.cb_auto) {
        MPI_Offset k = (p.gmax - p.gmin + PM_CB_AGG_BYTES - 1) / PM_CB_AGG_BYTES;
        int least = f->nhosts < f->naggs ? f->nhosts : f->naggs;
        p.naggs = k < least ? least : k > f->naggs ? f->naggs : (int)k;
    }
    p.fd_size = (p.gmax - p.gmin + p.naggs - 1) / p.naggs;
    if (f->hints.striping_unit > 0 && p.fd_size > f->hints.striping_unit)
        p.fd_size = (p.fd_size + f->hints.striping_unit - 1) / f->hints.striping_unit *
                    f->hints.striping_unit; /* domains on stripe boundaries */
    p.rounds = (int)((p.fd_size + p.cb - 1) / p.cb);

    /* this rank's data as bytes of the file's representation */
    bool native = rep->kind == PM_REP_NATIVE || rep->kind == PM_REP_INTERNAL;
    bool direct = native && t->contiguous;
    char *data = direct ? (char *)buf + t->true_lb
                        : pm_file_scratch(f, PM_SCRATCH_DATA, (size_t)bytes);
    rc = data ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    MPI_Offset fper = pm_view_fbytes(&f->view, t->size);
    MPI_Count whole = fper ? bytes / fper : 0;
    if (rc == MPI_SUCCESS && write && !direct) {
        if (pm_datarep_to_file(rep, buf, count, dt, data, 0) != MPI_SUCCESS)
            rc = MPI_ERR_CONVERSION;
    }
    int agreed = rc;
    PMPI_Allreduce(MPI_IN_PLACE, &agreed, 1, MPI_INT, MPI_MAX, f->comm);
    char why[512] = "";
    if (agreed == MPI_SUCCESS)
        rc = two_phase(f, write, &p, pos, data, bytes, why, sizeof why);
    else
        snprintf(why, sizeof why, rc == MPI_ERR_CONVERSION ? "conversion failed"
                                                           : "out of memory (on some rank)");
    if (!write && !direct && data && rc == MPI_SUCCESS) {
        if (native)
            pm_type_unpack(data, (size_t)bytes, buf, count, t, 0);
        else if (whole > 0 && pm_datarep_from_file(rep, buf, whole, dt, data, 0) != MPI_SUCCESS)
            rc = MPI_ERR_CONVERSION;
    }
    if (!direct)
        pm_file_scratch_release(f, PM_SCRATCH_DATA, data);
    /* an aggregator's failure is everybody's */
    int worst = agreed != MPI_SUCCESS ? agreed : rc;
    PMPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, f->comm);
    pm_file_status(status, worst == MPI_SUCCESS ? pm_view_mbytes(&f->view, bytes) : 0);
    if (worst != MPI_SUCCESS)
        return pm_file_error(f, worst, "%s(%s): %s", fname, f->path,
                             *why ? why : "collective I/O failed on another rank");
    return MPI_SUCCESS;
}

static int collective(MPI_File fh, bool write, bool explicit, MPI_Offset offset, void *buf,
                      MPI_Count count, MPI_Datatype dt, MPI_Status *status, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: a split collective is active", fn);
    int rc = pm_file_access_start(f, write, explicit ? PM_AT : PM_PTR, &offset, buf, count, dt,
                                  fn);
    if (rc != MPI_SUCCESS)
        return rc;
    pm_file_drain(f);
    struct pm_datatype *t = pm_type_get(dt);
    MPI_Status tmp;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &tmp : status;
    rc = pm_file_rw_all(f, write, offset, buf, count, dt, st, fn);
    if (!explicit && st->proust_bytes < count * t->size) {
        pthread_mutex_lock(&f->lock); /* a short read: the pointer after what came */
        f->fp = offset + st->proust_bytes / f->view.esize;
        pthread_mutex_unlock(&f->lock);
    }
    return rc;
}

#define PM_COLL_PAIR(NAME, WRITE, EXPLICIT, CONST)                                              \
    int PMPI_File_##NAME(MPI_File fh, EXPLICIT##_ARG CONST void *buf, int count,               \
                         MPI_Datatype datatype, MPI_Status *status)                            \
    {                                                                                          \
        return collective(fh, WRITE, EXPLICIT##_ON, EXPLICIT##_VAL, (void *)buf, count,        \
                          datatype, status, "MPI_File_" #NAME);                                \
    }                                                                                          \
    PM_WEAK(File_##NAME)                                                                       \
    int PMPI_File_##NAME##_c(MPI_File fh, EXPLICIT##_ARG CONST void *buf, MPI_Count count,     \
                             MPI_Datatype datatype, MPI_Status *status)                        \
    {                                                                                          \
        return collective(fh, WRITE, EXPLICIT##_ON, EXPLICIT##_VAL, (void *)buf, count,        \
                          datatype, status, "MPI_File_" #NAME "_c");                           \
    }                                                                                          \
    PM_WEAK(File_##NAME##_c)

#define AT_ARG MPI_Offset offset,
#define AT_ON true
#define AT_VAL offset
#define PTR_ARG
#define PTR_ON false
#define PTR_VAL 0
#define NOCONST

PM_COLL_PAIR(read_all, false, PTR, NOCONST)
PM_COLL_PAIR(write_all, true, PTR, const)
PM_COLL_PAIR(read_at_all, false, AT, NOCONST)
PM_COLL_PAIR(write_at_all, true, AT, const)
