/*
 * main.c — proustrun: start N processes of a program on this machine (or,
 * through one agent per host, on the hosts named), serve their bootstrap
 * (rank, size, key-value exchange, fence), forward their stdio and report
 * how they ended. No daemon: the launcher is the parent of every rank or
 * of its host's agent, and the only server.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proustrun.h"

int64_t pr_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pr_buf_append(struct pr_buf *b, const void *data, size_t len)
{
    if (b->off > 0 && b->off == b->len) {
        b->off = b->len = 0;
    }
    if (b->len + len > b->cap) {
        if (b->off > 0) { /* slide down before growing */
            memmove(b->data, b->data + b->off, b->len - b->off);
            b->len -= b->off;
            b->off = 0;
        }
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->len + len)
            ncap *= 2;
        if (ncap != b->cap) {
            char *nd = realloc(b->data, ncap);
            if (!nd) {
                pr_err("out of memory");
                exit(1);
            }
            b->data = nd;
            b->cap = ncap;
        }
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

void pr_buf_consume(struct pr_buf *b, size_t n)
{
    b->off += n;
    if (b->off >= b->len)
        b->off = b->len = 0;
}

void pr_buf_free(struct pr_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

int pr_buf_send(int fd, struct pr_buf *b)
{
    while (b->len > b->off) {
        ssize_t n = send(fd, b->data + b->off, b->len - b->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            pr_buf_consume(b, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        return -1;
    }
    return 0;
}

void pr_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Blocking write of our own output; a closed stdout/stderr drops output. */
void pr_write_all(struct pr_job *job, int fd, const char *data, size_t len)
{
    int *broken = fd == 2 ? &job->stderr_broken : &job->stdout_broken;
    while (len > 0 && !*broken) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) { /* inherited O_NONBLOCK */
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
                continue;
            }
            *broken = 1;
            return;
        }
        data += n;
        len -= (size_t)n;
    }
}

/* An agent names its host in every message: the user reads them on the
 * front end's terminal, mixed with the other hosts'. */
static char err_host[80];

void pr_err_set_host(const char *host)
{
    snprintf(err_host, sizeof err_host, "%s", host);
}

void pr_err(const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* One write per message so it does not mix with forwarded lines. */
    char line[2100];
    int n = err_host[0] ? snprintf(line, sizeof line, "proustrun (on %s): %s\n", err_host, text)
                        : snprintf(line, sizeof line, "proustrun: %s\n", text);
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

/* Make sure 0, 1 and 2 are open, so that no descriptor we create takes one
 * of those numbers (the children's dup2 onto 0/1/2 would clobber it). */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
        }
    }
}

static void raise_fd_limit(int nprocs)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t need = (rlim_t)nprocs * 4 + 64;
    if (rl.rlim_cur >= need)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

int main(int argc, char **argv)
{
    struct pr_job job;
    memset(&job, 0, sizeof job);
    int rc = pr_parse_args(argc, argv, &job.opt);
    if (rc >= 0)
        return rc;
    ensure_std_fds();
    job.stdin_src = -1;
    job.stdin_dst = -1;
    job.devnull = -1;
    job.listen_fd = -1;
    job.ctrl_fd = -1;
    if (pr_kvs_create(&job) != 0) {
        pr_err("out of memory");
        return 1;
    }
    if (pr_signals_init() != 0) {
        pr_err("cannot create a pipe: %s", strerror(errno));
        return 1;
    }
    if (job.opt.mode == PR_MODE_AGENT) {
        rc = pr_agent_main(&job);
        pr_kvs_destroy(&job);
        return rc;
    }
    if (job.opt.mode == PR_MODE_FRONTEND) {
        if ((rc = pr_hosts_plan(&job)) == 0) {
            raise_fd_limit(job.opt.nprocs);
            rc = pr_frontend_start(&job);
            if (rc == 0)
                rc = pr_run(&job);
            else
                pr_signal_all(&job, SIGKILL);
        }
        pr_frontend_close(&job);
        pr_kvs_destroy(&job);
        free(job.ranks);
        return rc;
    }
    raise_fd_limit(job.opt.nprocs);
    if ((rc = pr_bind_plan(&job)) != 0) {
        pr_kvs_destroy(&job);
        return rc;
    }
    rc = pr_spawn_all(&job);
    if (rc != 0) {
        pr_kvs_destroy(&job);
        free(job.bind_sets);
        return rc;
    }
    rc = pr_run(&job);
    pr_kvs_destroy(&job);
    free(job.bind_sets);
    if (job.devnull >= 0)
        close(job.devnull);
    free(job.ranks);
    return rc;
}
