/*
 * loop.c — the event loop: one poll() over the boot sockets, the output
 * pipes, stdin and a self-pipe for signals; children are reaped here and
 * their ends decide the job's fate:
 *   - a rank exits non-zero or is killed: report it, send a failure notice
 *     to the others, let them run for the grace period, then SIGTERM, then
 *     SIGKILL PR_KILL_DELAY_MS later; exit with the failing rank's code;
 *   - a rank asks to abort: report it, SIGKILL everyone, exit with its code;
 *   - SIGINT/SIGTERM/SIGHUP to proustrun: forwarded to every rank's process
 *     group, SIGKILL PR_KILL_DELAY_MS later (at once on a second signal);
 *     exit 128+signal. A signal ignored when proustrun started (nohup, a
 *     script's background job) stays ignored.
 * The first of these events sets the exit code. Once every child is gone,
 * output is drained for at most PR_DRAIN_MS (grandchildren may hold pipes).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_wire.h"
#include "proustrun.h"

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char)sig;
    ssize_t w = write(sig_pipe[1], &c, 1);
    (void)w;
    errno = saved;
}

static int sigpipe_ignored_on_entry;
static int installed[NSIG];

void pr_signals_child(void)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (installed[sig])
            signal(sig, SIG_DFL);
    signal(SIGPIPE, sigpipe_ignored_on_entry ? SIG_IGN : SIG_DFL);
}

int pr_signals_init(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* One ignored on entry (nohup, a background job's SIGINT) stays
         * ignored, for us and, through exec, for the ranks. */
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
        installed[sigs[i]] = 1;
    }
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    installed[SIGCHLD] = 1;
    sigpipe_ignored_on_entry = signal(SIGPIPE, SIG_IGN) == SIG_IGN;
    return 0;
}

/* pid -> rank, sorted by pid */
struct pid_slot {
    pid_t pid;
    int rank;
};
static struct pid_slot *pid_map;

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = ((const struct pid_slot *)a)->pid, y = ((const struct pid_slot *)b)->pid;
    return (x > y) - (x < y);
}

static struct pr_rank *rank_of_pid(struct pr_job *job, pid_t pid)
{
    struct pid_slot key = {pid, 0};
    struct pid_slot *s = bsearch(&key, pid_map, (size_t)job->opt.nprocs, sizeof *pid_map,
                                 cmp_pid);
    return s ? &job->ranks[s->rank] : NULL;
}

void pr_decide(struct pr_job *job, int code)
{
    if (!job->decided) {
        job->decided = 1;
        job->exit_code = code;
    }
}

void pr_handle_abort(struct pr_job *job, struct pr_rank *r, int code, const char *why,
                     size_t why_len)
{
    if (job->aborting)
        return;
    int n = why_len > 1000 ? 1000 : (int)why_len;
    pr_err("rank %d called abort (code %d): %.*s", r->rank, code, n, why);
    job->aborting = 1;
    job->terminating = 1;
    pr_decide(job, code >= 0 && code <= 255 ? code : 1);
    pr_signal_all(job, SIGKILL);
}

void pr_rank_exited(struct pr_job *job, struct pr_rank *r, int status)
{
    if (!r->alive)
        return;
    r->alive = 0;
    r->status = status;
    job->live--;
    if (job->opt.mode == PR_MODE_AGENT) { /* the front end judges */
        pr_agent_report(job, PR_WIRE_EXITED, r->rank, status);
        return;
    }
    /* Records it sent before dying (an abort, its last puts) come first. */
    if (r->boot_fd >= 0)
        pr_boot_readable(job, r);
    pr_boot_disconnect(job, r);
    pr_boot_fence_dirty(job);
    char how[128];
    int code = pr_describe_status(status, how, sizeof how);
    if (code == 0 || job->aborting)
        return;
    if (!job->terminating) {
        if (job->opt.mode == PR_MODE_FRONTEND && r->lost)
            pr_err("rank %d (pid %ld on %s) is lost with its host's agent", r->rank,
                   (long)r->pid, job->hosts[r->host].name);
        else if (job->opt.mode == PR_MODE_FRONTEND)
            pr_err("rank %d (pid %ld on %s) %s", r->rank, (long)r->pid,
                   job->hosts[r->host].name, how);
        else
            pr_err("rank %d (pid %ld) %s", r->rank, (long)r->pid, how);
    }
    pr_boot_notify_failure(job, r->rank, status);
    if (!job->decided) {
        pr_decide(job, code);
        if (!job->terminating)
            job->grace_deadline_ms = pr_now_ms() + (int64_t)(job->opt.grace_s * 1000.0);
    }
}

static void reap(struct pr_job *job)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (job->opt.mode == PR_MODE_FRONTEND) {
            for (int i = 0; i < job->nagents; i++)
                if (job->agents[i].pid == pid && job->agents[i].alive)
                    pr_frontend_agent_exited(job, &job->agents[i], status);
            continue;
        }
        struct pr_rank *r = rank_of_pid(job, pid);
        if (r && r->alive)
            pr_rank_exited(job, r, status);
    }
}

static void forward_signal(struct pr_job *job, int sig)
{
    if (job->live == 0)
        return;
    pr_decide(job, 128 + sig);
    if (job->terminating) { /* second signal, or one during the shutdown */
        pr_signal_all(job, SIGKILL);
        return;
    }
    job->terminating = 1;
    pr_err("got signal %d (%s), passing it to the ranks", sig, strsignal(sig));
    pr_signal_all(job, sig);
    job->kill_deadline_ms = pr_now_ms() + PR_KILL_DELAY_MS;
}

/* SIGTERM to every rank still running, SIGKILL PR_KILL_DELAY_MS later. */
static void terminate_all(struct pr_job *job, int64_t now)
{
    job->terminating = 1;
    pr_signal_all(job, SIGTERM);
    job->kill_deadline_ms = now + PR_KILL_DELAY_MS;
}

static void timers(struct pr_job *job, int64_t now)
{
    if (job->timeout_deadline_ms && now >= job->timeout_deadline_ms) {
        job->timeout_deadline_ms = 0;
        if (job->live > 0 && !job->terminating) {
            pr_err("the job ran past its time limit (%g s): stopping it", job->opt.timeout_s);
            pr_decide(job, PR_TIMEOUT_EXIT);
            terminate_all(job, now);
        }
    }
    if (job->grace_deadline_ms && now >= job->grace_deadline_ms) {
        job->grace_deadline_ms = 0;
        if (job->live > 0 && !job->terminating)
            terminate_all(job, now);
    }
    if (job->kill_deadline_ms && now >= job->kill_deadline_ms) {
        job->kill_deadline_ms = 0;
        pr_signal_all(job, SIGKILL);
    }
}

static int64_t min_deadline(int64_t a, int64_t b)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

enum { K_SIG, K_STDIN, K_STDIN_DST, K_BOOT, K_OUT, K_ERR, K_LISTEN, K_PENDING, K_CTRL,
       K_AOUT, K_AERR, K_UPLINK };

int pr_run(struct pr_job *job)
{
    int n = job->opt.nprocs;
    pid_map = malloc((size_t)n * sizeof *pid_map);
    size_t cap = 0;
    struct pollfd *pfd = NULL;
    int *kind = NULL, *who = NULL;
    if (!pid_map) {
        pr_err("out of memory");
        pr_signal_all(job, SIGKILL);
        return 1;
    }
    for (int i = 0; i < n; i++)
        pid_map[i] = (struct pid_slot){job->ranks[i].pid, i};
    if (job->opt.timeout_s > 0 && job->opt.mode != PR_MODE_AGENT)
        job->timeout_deadline_ms = pr_now_ms() + (int64_t)(job->opt.timeout_s * 1000.0);
    qsort(pid_map, (size_t)n, sizeof *pid_map, cmp_pid);

    for (;;) {
        reap(job);
        pr_boot_service(job);
        int64_t now = pr_now_ms();
        timers(job, now);
        int64_t next_partial = pr_stream_flush_partials(job, 0);
        int64_t next_front = job->opt.mode == PR_MODE_FRONTEND ? pr_frontend_timers(job, now) : -1;

        size_t want = 3 * (size_t)n + 4 + (size_t)job->npending + 3 * (size_t)job->nagents;
        if (want > cap) {
            cap = want * 2;
            struct pollfd *np_ = realloc(pfd, cap * sizeof *pfd);
            int *nk = realloc(kind, cap * sizeof *kind), *nw = realloc(who, cap * sizeof *who);
            if (np_)
                pfd = np_;
            if (nk)
                kind = nk;
            if (nw)
                who = nw;
            if (!np_ || !nk || !nw) {
                pr_err("out of memory");
                pr_signal_all(job, SIGKILL);
                pr_decide(job, 1);
                break;
            }
        }
        int open_streams = 0;
        size_t np = 0;
#define ADD(fd_, ev_, k_, w_) \
    (pfd[np] = (struct pollfd){.fd = (fd_), .events = (ev_)}, kind[np] = (k_), who[np] = (w_), np++)
        ADD(sig_pipe[0], POLLIN, K_SIG, -1);
        if (job->live == 0) {
            pr_stdin_stop(job);
            if (!job->drain_deadline_ms)
                job->drain_deadline_ms = now + PR_DRAIN_MS;
        }
        if (job->stdin_src >= 0 && job->stdin_dst >= 0 && job->stdin_len == 0)
            ADD(job->stdin_src, POLLIN, K_STDIN, -1);
        if (job->stdin_dst >= 0) /* events 0 still reports POLLERR: rank 0 closed it */
            ADD(job->stdin_dst, job->stdin_len ? POLLOUT : 0, K_STDIN_DST, -1);
        for (int i = 0; i < n; i++) {
            struct pr_rank *r = &job->ranks[i];
            if (r->boot_fd >= 0)
                ADD(r->boot_fd, POLLIN | (r->out.len > r->out.off ? POLLOUT : 0), K_BOOT, i);
            if (r->out_s.fd >= 0)
                ADD(r->out_s.fd, POLLIN, K_OUT, i), open_streams++;
            if (r->err_s.fd >= 0)
                ADD(r->err_s.fd, POLLIN, K_ERR, i), open_streams++;
        }
        if (job->listen_fd >= 0)
            ADD(job->listen_fd, POLLIN, K_LISTEN, -1);
        for (int i = 0; i < job->npending; i++)
            ADD(job->pending[i].fd, POLLIN, K_PENDING, i);
        for (int i = 0; i < job->nagents; i++) {
            struct pr_agent *a = &job->agents[i];
            if (a->ctrl_fd >= 0)
                ADD(a->ctrl_fd, POLLIN | (a->out.len > a->out.off ? POLLOUT : 0), K_CTRL, i);
            if (a->io.out_s.fd >= 0)
                ADD(a->io.out_s.fd, POLLIN, K_AOUT, i), open_streams++;
            if (a->io.err_s.fd >= 0)
                ADD(a->io.err_s.fd, POLLIN, K_AERR, i), open_streams++;
        }
        if (job->ctrl_fd >= 0)
            ADD(job->ctrl_fd, POLLIN, K_UPLINK, -1);
#undef ADD
        if (job->live == 0 && job->agents_alive == 0 &&
            (open_streams == 0 || now >= job->drain_deadline_ms))
            break;
        /* Agents that outlive their ranks' ends and the drain are stopped. */
        if (job->live == 0 && job->agents_alive > 0 && now >= job->drain_deadline_ms + 2000) {
            pr_frontend_signal(job, SIGKILL);
            for (int i = 0; i < job->nagents; i++)
                if (job->agents[i].alive)
                    kill(job->agents[i].pid, SIGKILL);
        }

        int64_t deadline = min_deadline(job->grace_deadline_ms, job->kill_deadline_ms);
        deadline = min_deadline(deadline, job->timeout_deadline_ms);
        deadline = min_deadline(deadline, next_partial);
        deadline = min_deadline(deadline, next_front);
        deadline = min_deadline(deadline, job->live == 0 ? job->drain_deadline_ms : 0);
        if (job->live == 0 && job->agents_alive > 0)
            deadline = min_deadline(deadline, job->drain_deadline_ms + 2000);
        int timeout = -1;
        if (deadline > 0)
            timeout = deadline <= now ? 0 : (int)(deadline - now);
        int pr = poll(pfd, np, timeout);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            pr_err("poll: %s", strerror(errno));
            pr_signal_all(job, SIGKILL);
            pr_decide(job, 1);
            break;
        }
        for (size_t k = 0; k < np && pr > 0; k++) {
            short re = pfd[k].revents;
            if (!re)
                continue;
            pr--;
            struct pr_rank *r = NULL;
            if (who[k] >= 0 && kind[k] <= K_ERR)
                r = &job->ranks[who[k]];
            struct pr_agent *a = NULL;
            if (who[k] >= 0 && kind[k] >= K_CTRL && kind[k] <= K_AERR)
                a = &job->agents[who[k]];
            switch (kind[k]) {
            case K_SIG: {
                unsigned char sigs[64];
                ssize_t got;
                while ((got = read(sig_pipe[0], sigs, sizeof sigs)) > 0)
                    for (ssize_t s = 0; s < got; s++)
                        if (sigs[s] != SIGCHLD)
                            forward_signal(job, sigs[s]);
                reap(job);
                break;
            }
            case K_STDIN:
                if (job->stdin_src == pfd[k].fd)
                    pr_stdin_readable(job);
                break;
            case K_STDIN_DST:
                if (job->stdin_dst != pfd[k].fd)
                    break;
                if (re & POLLOUT)
                    pr_stdin_writable(job);
                else if (re & (POLLERR | POLLHUP | POLLNVAL))
                    pr_stdin_stop(job);
                break;
            case K_BOOT:
                if (r->boot_fd != pfd[k].fd)
                    break;
                if (re & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
                    pr_boot_readable(job, r);
                if (r->boot_fd >= 0 && (re & POLLOUT))
                    pr_boot_writable(job, r);
                break;
            case K_OUT:
                if (r->out_s.fd == pfd[k].fd)
                    pr_stream_readable(job, r, &r->out_s);
                break;
            case K_ERR:
                if (r->err_s.fd == pfd[k].fd)
                    pr_stream_readable(job, r, &r->err_s);
                break;
            case K_LISTEN:
                if (job->listen_fd == pfd[k].fd)
                    pr_frontend_accept(job);
                break;
            case K_PENDING:
                /* the array may have shrunk or moved: match the descriptor */
                for (int i = 0; i < job->npending; i++)
                    if (job->pending[i].fd == pfd[k].fd) {
                        pr_frontend_pending(job, i);
                        break;
                    }
                break;
            case K_CTRL:
                if (a->ctrl_fd != pfd[k].fd)
                    break;
                if (re & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
                    pr_frontend_ctrl_readable(job, a);
                if (a->ctrl_fd >= 0 && (re & POLLOUT))
                    pr_frontend_ctrl_writable(job, a);
                break;
            case K_AOUT:
                if (a->io.out_s.fd == pfd[k].fd)
                    pr_stream_readable(job, &a->io, &a->io.out_s);
                break;
            case K_AERR:
                if (a->io.err_s.fd == pfd[k].fd)
                    pr_stream_readable(job, &a->io, &a->io.err_s);
                break;
            case K_UPLINK:
                if (job->ctrl_fd == pfd[k].fd)
                    pr_agent_ctrl_readable(job);
                break;
            }
        }
    }

    /* Whatever is still buffered goes out; pipes held by grandchildren are
     * read once more, then abandoned. */
    for (int i = 0; i < n; i++) {
        struct pr_rank *r = &job->ranks[i];
        if (r->out_s.fd >= 0)
            pr_stream_readable(job, r, &r->out_s);
        if (r->err_s.fd >= 0)
            pr_stream_readable(job, r, &r->err_s);
    }
    for (int i = 0; i < job->nagents; i++) {
        struct pr_agent *a = &job->agents[i];
        if (a->io.out_s.fd >= 0)
            pr_stream_readable(job, &a->io, &a->io.out_s);
        if (a->io.err_s.fd >= 0)
            pr_stream_readable(job, &a->io, &a->io.err_s);
    }
    pr_stream_flush_partials(job, 1);
    if (job->exit_code != 0 || job->terminating)
        pr_kill_leftovers(job);
    pr_shm_cleanup(job);
    for (int i = 0; i < n; i++) {
        struct pr_rank *r = &job->ranks[i];
        pr_stream_close(job, r, &r->out_s);
        pr_stream_close(job, r, &r->err_s);
        pr_boot_disconnect(job, r);
    }
    for (int i = 0; i < job->nagents; i++) {
        struct pr_agent *a = &job->agents[i];
        pr_stream_close(job, &a->io, &a->io.out_s);
        pr_stream_close(job, &a->io, &a->io.err_s);
    }
    free(pfd);
    free(kind);
    free(who);
    free(pid_map);
    pid_map = NULL;
    return job->exit_code;
}
