/*
 * iofwd.c — stdio forwarding. Each rank's stdout and stderr arrive on pipes
 * and leave on proustrun's stdout and stderr one whole line at a time (so
 * lines of different ranks never mix), prefixed "[rank] " with
 * --tag-output. A partial line is written when it grows past PR_MAX_LINE
 * or at end of file, and, for rank 0's stdout while proustrun's stdin is
 * still forwarded, when its end does not come within PR_PARTIAL_FLUSH_MS
 * (a prompt waiting for input). proustrun's stdin goes to rank 0 only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proustrun.h"

static struct pr_buf scratch; /* assembled output, reused */

static void add_prefix(struct pr_job *job, struct pr_rank *r)
{
    char prefix[24];
    int n = snprintf(prefix, sizeof prefix, "[%d] ", r->rank);
    pr_buf_append(&scratch, prefix, (size_t)n);
    (void)job;
}

/* Write the pending partial line of s; at_eof ends the line too. */
static void flush_partial(struct pr_job *job, struct pr_rank *r, struct pr_stream *s, int at_eof)
{
    size_t pending = s->line.len - s->line.off;
    int tag = job->opt.tag_output && !s->raw;
    if (pending == 0 && !(at_eof && tag && s->midline))
        return;
    scratch.off = scratch.len = 0;
    if (tag && !s->midline && pending)
        add_prefix(job, r);
    if (pending)
        pr_buf_append(&scratch, s->line.data + s->line.off, pending);
    if (tag && at_eof) {
        pr_buf_append(&scratch, "\n", 1); /* keep tagged output line-structured */
        s->midline = 0;
    } else {
        s->midline = 1;
    }
    pr_write_all(job, s->out_fd, scratch.data, scratch.len);
    s->line.off = s->line.len = 0;
    s->since_ms = 0;
}

static void emit(struct pr_job *job, struct pr_rank *r, struct pr_stream *s, const char *p,
                 size_t n)
{
    const char *end = p + n;
    int tag = job->opt.tag_output && !s->raw;
    scratch.off = scratch.len = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            if (s->line.len == s->line.off)
                s->since_ms = pr_now_ms();
            pr_buf_append(&s->line, p, (size_t)(end - p));
            break;
        }
        if (tag && !s->midline)
            add_prefix(job, r);
        if (s->line.len > s->line.off)
            pr_buf_append(&scratch, s->line.data + s->line.off, s->line.len - s->line.off);
        pr_buf_append(&scratch, p, (size_t)(nl + 1 - p));
        s->line.off = s->line.len = 0;
        s->midline = 0;
        s->since_ms = 0;
        p = nl + 1;
    }
    if (scratch.len)
        pr_write_all(job, s->out_fd, scratch.data, scratch.len);
    if (s->line.len - s->line.off >= PR_MAX_LINE)
        flush_partial(job, r, s, 0);
}

void pr_stream_close(struct pr_job *job, struct pr_rank *r, struct pr_stream *s)
{
    if (s->fd < 0)
        return;
    close(s->fd);
    s->fd = -1;
    flush_partial(job, r, s, 1);
    pr_buf_free(&s->line);
}

void pr_stream_readable(struct pr_job *job, struct pr_rank *r, struct pr_stream *s)
{
    char buf[65536];
    /* Bounded, so that one chatty rank does not starve the others. */
    for (int i = 0; i < 16 && s->fd >= 0; i++) {
        ssize_t n = read(s->fd, buf, sizeof buf);
        if (n > 0) {
            emit(job, r, s, buf, (size_t)n);
            if ((size_t)n < sizeof buf)
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        pr_stream_close(job, r, s); /* end of file (or error) */
    }
}

int64_t pr_stream_flush_partials(struct pr_job *job, int force)
{
    if (force) {
        for (int i = 0; i < job->opt.nprocs; i++) {
            struct pr_rank *r = &job->ranks[i];
            flush_partial(job, r, &r->out_s, 0);
            flush_partial(job, r, &r->err_s, 0);
        }
        for (int i = 0; i < job->nagents; i++) {
            flush_partial(job, &job->agents[i].io, &job->agents[i].io.out_s, 0);
            flush_partial(job, &job->agents[i].io, &job->agents[i].io.err_s, 0);
        }
        return -1;
    }
    /* An agent's lines come whole, but the connection may cut one: a
     * piece waits PR_PARTIAL_FLUSH_MS for its end (a remote prompt). */
    int64_t next = -1, now = pr_now_ms();
    for (int i = 0; i < job->nagents; i++) {
        struct pr_stream *ss[2] = {&job->agents[i].io.out_s, &job->agents[i].io.err_s};
        for (int k = 0; k < 2; k++) {
            if (ss[k]->line.len == ss[k]->line.off)
                continue;
            int64_t due = ss[k]->since_ms + PR_PARTIAL_FLUSH_MS;
            if (due <= now)
                flush_partial(job, &job->agents[i].io, ss[k], 0);
            else if (next < 0 || due < next)
                next = due;
        }
    }
    if (job->opt.mode == PR_MODE_FRONTEND)
        return next;
    /* Otherwise whole lines only, but for a prompt of rank 0. */
    struct pr_rank *r = &job->ranks[0];
    struct pr_stream *s = &r->out_s;
    if (job->stdin_src < 0 || s->line.len == s->line.off)
        return -1;
    int64_t due = s->since_ms + PR_PARTIAL_FLUSH_MS;
    if (due > pr_now_ms())
        return due;
    flush_partial(job, r, s, 0);
    return -1;
}

/* ---- stdin -> rank 0 ------------------------------------------------------- */

void pr_stdin_stop(struct pr_job *job)
{
    job->stdin_src = -1; /* our fd 0 stays open: it is not ours to close */
    if (job->stdin_dst >= 0)
        close(job->stdin_dst);
    job->stdin_dst = -1;
    job->stdin_off = job->stdin_len = 0;
}

void pr_stdin_writable(struct pr_job *job)
{
    while (job->stdin_dst >= 0 && job->stdin_off < job->stdin_len) {
        ssize_t n = write(job->stdin_dst, job->stdin_buf + job->stdin_off,
                          job->stdin_len - job->stdin_off);
        if (n > 0) {
            job->stdin_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        pr_stdin_stop(job); /* rank 0 closed its stdin or exited */
        return;
    }
    job->stdin_off = job->stdin_len = 0;
    if (job->stdin_src < 0 && job->stdin_dst >= 0) { /* our stdin ended: pass EOF on */
        close(job->stdin_dst);
        job->stdin_dst = -1;
    }
}

void pr_stdin_readable(struct pr_job *job)
{
    if (job->stdin_src < 0 || job->stdin_len > 0)
        return;
    ssize_t n = read(job->stdin_src, job->stdin_buf, sizeof job->stdin_buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        job->stdin_src = -1;
    } else {
        job->stdin_off = 0;
        job->stdin_len = (size_t)n;
    }
    pr_stdin_writable(job);
}
