/*
 * frontend.c — proustrun across hosts: one agent per host (agent.c),
 * started through the launch agent (ssh HOST COMMAND by default) or, for
 * this host, directly; one tcp port where the agents' control connections
 * and every rank's boot connection arrive, each proving with the job's
 * secret that it belongs to the job (agent_wire.h). Ranks' boot records are
 * then served by kvs.c as for local ranks; their ends come as EXITED
 * reports, and an agent that vanishes takes its unreported ranks with it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "agent_wire.h"
#include "proustrun.h"

#define HDR_LEN sizeof(struct proust__wire_hdr)

extern char **environ;

static void random_bytes(unsigned char *out, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    while (fd >= 0 && got < n) {
        ssize_t r = read(fd, out + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (fd >= 0)
        close(fd);
    if (got < n) { /* no urandom: weaker, still unpredictable to a scanner */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        srand((unsigned)(ts.tv_nsec ^ getpid()));
        for (size_t i = got; i < n; i++)
            out[i] = (unsigned char)rand();
    }
}

static int is_local_host(const char *name)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    size_t short_len = strcspn(me, ".");
    return strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0 ||
           strcmp(name, me) == 0 ||
           (strlen(name) == short_len && strncmp(name, me, short_len) == 0);
}

/* "a,b,...": this machine's IPv4 addresses that are up, loopback last
 * (an agent on this host reaches that one). */
static int our_addresses(char *out, size_t size)
{
    struct ifaddrs *ifs = NULL;
    size_t len = 0;
    out[0] = '\0';
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK))
                continue;
            char a[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof a);
            if (len + strlen(a) + 2 + 10 >= size) /* room for loopback */
                break;
            len += (size_t)snprintf(out + len, size - len, "%s,", a);
        }
        freeifaddrs(ifs);
    }
    snprintf(out + len, size - len, "127.0.0.1");
    return 0;
}

static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* 'text' for a POSIX shell, appended to out. */
static void shell_quote(struct pr_buf *out, const char *text)
{
    pr_buf_append(out, "'", 1);
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            pr_buf_append(out, "'\\''", 4);
        else
            pr_buf_append(out, p, 1);
    }
    pr_buf_append(out, "'", 1);
}

static int spawn_agent(struct pr_job *job, struct pr_agent *a, const char *self,
                       const char *value, int stdin_fd)
{
    const char *host = job->hosts[a->host].name;
    char *argv[64], nodelist[300];
    int argc = 0;
    char *words = NULL;
    struct pr_buf cmd = {0};
    if (is_local_host(host) && !job->opt.slurm) {
        argv[argc++] = (char *)self;
        argv[argc++] = "--agent";
        argv[argc++] = (char *)value;
    } else if (job->opt.slurm && !job->opt.launch_agent) {
        /* a step of one task on the node, sharing the allocation's cpus
         * with the ranks the agent forks (as Hydra and Open MPI do) */
        snprintf(nodelist, sizeof nodelist, "--nodelist=%s", host);
        char *const srun[] = {"srun", "--nodes=1", "--ntasks=1", nodelist, "--overlap",
                              "--cpu-bind=none", "--mpi=none", "--export=ALL", "--quiet",
                              stdin_fd == 0 ? "--input=0" : "--input=none"};
        for (size_t i = 0; i < sizeof srun / sizeof srun[0]; i++)
            argv[argc++] = srun[i];
        argv[argc++] = (char *)self;
        argv[argc++] = "--agent";
        argv[argc++] = (char *)value;
    } else {
        words = strdup(job->opt.launch_agent ? job->opt.launch_agent : "ssh");
        char *save = NULL;
        for (char *w = strtok_r(words, " \t", &save); w && argc < 60;
             w = strtok_r(NULL, " \t", &save))
            argv[argc++] = w;
        if (argc == 0) {
            pr_err("--launch-agent is empty");
            free(words);
            return 2;
        }
        argv[argc++] = (char *)host;
        shell_quote(&cmd, self);
        pr_buf_append(&cmd, " --agent ", 9);
        shell_quote(&cmd, value);
        pr_buf_append(&cmd, "", 1);
        argv[argc++] = cmd.data;
    }
    argv[argc] = NULL;
    int outp[2], errp[2], st[2];
    if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(st, O_CLOEXEC)) {
        pr_err("cannot create pipes: %s", strerror(errno));
        free(words);
        pr_buf_free(&cmd);
        return 1;
    }
    pid_t parent = getpid();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* no agent outlives us */
        if (getppid() != parent)
            _exit(127);
        setsid(); /* a terminal's ^C comes to us, and we pass it on */
        pr_signals_child();
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (dup2(stdin_fd, 0) >= 0 && dup2(outp[1], 1) >= 0 && dup2(errp[1], 2) >= 0)
            execvp(argv[0], argv);
        int err = errno;
        ssize_t w = write(st[1], &err, sizeof err);
        (void)w;
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(outp[1]);
    close(errp[1]);
    close(st[1]);
    int rc = 0;
    if (pid < 0) {
        pr_err("cannot start the agent for %s: fork: %s", host, strerror(errno));
        rc = 1;
    } else {
        int err = 0;
        ssize_t got;
        while ((got = read(st[0], &err, sizeof err)) < 0 && errno == EINTR)
            ;
        a->pid = pid;
        a->alive = 1;
        job->agents_alive++;
        if (got == (ssize_t)sizeof err) {
            pr_err("cannot run the launch agent '%s' for %s: %s", argv[0], host, strerror(err));
            rc = err == ENOENT ? 127 : 126;
        }
    }
    close(st[0]);
    a->io.rank = -1;
    a->io.out_s = (struct pr_stream){.fd = outp[0], .out_fd = 1, .raw = 1};
    a->io.err_s = (struct pr_stream){.fd = errp[0], .out_fd = 2, .raw = 1};
    pr_set_nonblock(outp[0]);
    pr_set_nonblock(errp[0]);
    free(words);
    pr_buf_free(&cmd);
    return rc;
}

int pr_frontend_start(struct pr_job *job)
{
    int n = job->opt.nprocs;
    unsigned char sec[PR_SECRET_HEX / 2];
    random_bytes(sec, sizeof sec);
    for (size_t i = 0; i < sizeof sec; i++)
        snprintf(job->secret + 2 * i, 3, "%02x", sec[i]);
    snprintf(job->jobid, sizeof job->jobid, "%ld-%02x%02x%02x%02x%02x%02x", (long)getpid(),
             sec[0] ^ sec[6], sec[1] ^ sec[7], sec[2] ^ sec[8], sec[3] ^ sec[9],
             sec[4] ^ sec[10], sec[5] ^ sec[11]);
    for (int i = 0; i < n; i++) {
        struct pr_rank *r = &job->ranks[i];
        r->rank = i;
        r->alive = 1;
        r->boot_fd = r->out_s.fd = r->err_s.fd = -1;
    }
    job->live = n;
    int port = 0;
    if ((job->listen_fd = listen_any(&port)) < 0) {
        pr_err("cannot listen on a tcp port: %s", strerror(errno));
        return 1;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        pr_err("cannot find my own path: %s", strerror(errno));
        return 1;
    }
    self[sl] = '\0';
    char addrs[1024], value[1200];
    our_addresses(addrs, sizeof addrs);
    job->agents = calloc((size_t)job->nhosts, sizeof *job->agents);
    if (!job->agents) {
        pr_err("out of memory");
        return 1;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* stdin goes to rank 0's host; a background job leaves the terminal be */
    int stdin_ok = !(isatty(0) && tcgetpgrp(0) != getpgrp());
    for (int h = 0; h < job->nhosts; h++) {
        if (job->hosts[h].nranks == 0)
            continue;
        struct pr_agent *a = &job->agents[job->nagents++];
        a->host = h;
        a->ctrl_fd = -1;
        a->io.out_s.fd = a->io.err_s.fd = -1;
        snprintf(value, sizeof value, "%s@%d@%s:%d", job->secret, h, addrs, port);
        int in = job->ranks[0].host == h && stdin_ok ? 0 : devnull;
        int rc = spawn_agent(job, a, self, value, in);
        if (rc != 0) {
            if (devnull >= 0)
                close(devnull);
            pr_decide(job, rc);
            return rc;
        }
    }
    if (devnull >= 0)
        close(devnull);
    return 0;
}

/* ---- connections ------------------------------------------------------------ */

static void drop_pending(struct pr_job *job, int i, const char *why)
{
    struct pr_pending *p = &job->pending[i];
    if (why)
        pr_err("refused a connection from %s: %s", p->peer, why);
    close(p->fd);
    pr_buf_free(&p->in);
    job->pending[i] = job->pending[--job->npending];
}

void pr_frontend_accept(struct pr_job *job)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(job->listen_fd, (struct sockaddr *)&sa, &sl,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return; /* EAGAIN, or a connection that died in the queue */
        struct pr_pending *np = realloc(job->pending, ((size_t)job->npending + 1) * sizeof *np);
        if (!np) {
            close(fd);
            return;
        }
        job->pending = np;
        struct pr_pending *p = &job->pending[job->npending++];
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->deadline_ms = pr_now_ms() + PR_HELLO_TIMEOUT_MS;
        char a[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, a, sizeof a);
        snprintf(p->peer, sizeof p->peer, "%s:%d", a, ntohs(sa.sin_port));
    }
}

static void queue_ctrl(struct pr_job *job, struct pr_agent *a, uint16_t type, int32_t rank,
                       int32_t arg, const void *payload, size_t len)
{
    if (a->ctrl_fd < 0)
        return;
    struct proust__wire_hdr h = {.len = (uint32_t)len, .type = type,
                                 .magic = PROUST_WIRE_MAGIC, .rank = rank, .arg = arg};
    pr_buf_append(&a->out, &h, HDR_LEN);
    if (len)
        pr_buf_append(&a->out, payload, len);
    pr_frontend_ctrl_writable(job, a);
}

static int send_setup(struct pr_job *job, struct pr_agent *a)
{
    int nr = job->hosts[a->host].nranks, k = 0;
    int *ranks = malloc((size_t)nr * sizeof *ranks);
    char cwd[4096];
    if (!ranks || !getcwd(cwd, sizeof cwd)) {
        free(ranks);
        return -1;
    }
    for (int i = 0; i < job->opt.nprocs; i++)
        if (job->ranks[i].host == a->host)
            ranks[k++] = i;
    int envc = 0, argc = 0;
    while (environ[envc])
        envc++;
    while (job->opt.argv[argc])
        argc++;
    struct pr_setup s = {.size = job->opt.nprocs, .tag_output = job->opt.tag_output,
                         .bind_to = job->opt.bind_to, .grace_s = job->opt.grace_s,
                         .cwd = cwd, .nranks = nr, .ranks = ranks, .argc = argc,
                         .argv = job->opt.argv, .envc = envc, .env = environ};
    snprintf(s.jobid, sizeof s.jobid, "%s", job->jobid);
    char *buf;
    size_t len;
    int rc = pr_setup_encode(&s, &buf, &len);
    free(ranks);
    if (rc != 0)
        return -1;
    if (len > PROUST_WIRE_MAX_PAYLOAD) {
        pr_err("the environment and arguments (%zu bytes) are too large to send", len);
        free(buf);
        return -1;
    }
    queue_ctrl(job, a, PR_WIRE_SETUP, 0, 0, buf, len);
    free(buf);
    return 0;
}

/* A host's agent is gone: ranks it never reported are lost with it. */
static void agent_lost(struct pr_job *job, struct pr_agent *a, const char *why)
{
    if (a->ctrl_fd >= 0) {
        close(a->ctrl_fd);
        a->ctrl_fd = -1;
    }
    if (a->ended)
        return;
    a->ended = 1;
    int unreported = 0;
    for (int i = 0; i < job->opt.nprocs; i++)
        unreported += job->ranks[i].host == a->host && job->ranks[i].alive;
    if (unreported == 0)
        return;
    if (!job->terminating)
        pr_err("lost the agent on %s (%s)", job->hosts[a->host].name, why);
    for (int i = 0; i < job->opt.nprocs; i++) {
        struct pr_rank *r = &job->ranks[i];
        if (r->host == a->host && r->alive) {
            r->lost = 1;
            pr_rank_exited(job, r, 255 << 8);
        }
    }
}

void pr_tcp_keepalive(int fd)
{
    /* a host whose link goes down is noticed in seconds, not hours */
    int on = 1, idle = 1, intvl = 1, cnt = 3;
    unsigned user_timeout = 4000;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

void pr_frontend_pending(struct pr_job *job, int i)
{
    struct pr_pending *p = &job->pending[i];
    char chunk[4096];
    for (;;) {
        ssize_t n = recv(p->fd, chunk, sizeof chunk, MSG_DONTWAIT);
        if (n > 0) {
            pr_buf_append(&p->in, chunk, (size_t)n);
            if (p->in.len - p->in.off > HDR_LEN + PR_SECRET_HEX + (64u << 10))
                break; /* a hello is small; rank records behind it are too, yet */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        drop_pending(job, i, "closed before saying who it is");
        return;
    }
    size_t have = p->in.len - p->in.off;
    if (have < HDR_LEN)
        return;
    struct proust__wire_hdr h;
    memcpy(&h, p->in.data + p->in.off, HDR_LEN);
    if (h.magic != PROUST_WIRE_MAGIC ||
        (h.type != PR_WIRE_AGENT_HELLO && h.type != PR_WIRE_BOOT_HELLO) ||
        h.len != PR_SECRET_HEX) {
        drop_pending(job, i, "not a proustrun agent of this job (bad hello)");
        return;
    }
    if (have < HDR_LEN + PR_SECRET_HEX)
        return;
    const char *given = p->in.data + p->in.off + HDR_LEN;
    unsigned diff = 0;
    for (int k = 0; k < PR_SECRET_HEX; k++)
        diff |= (unsigned char)given[k] ^ (unsigned char)job->secret[k];
    if (diff) {
        drop_pending(job, i, "wrong job secret");
        return;
    }
    int fd = p->fd;
    size_t used = HDR_LEN + PR_SECRET_HEX;
    if (h.type == PR_WIRE_AGENT_HELLO) {
        struct pr_agent *a = NULL;
        for (int k = 0; k < job->nagents; k++)
            if (job->agents[k].host == h.rank)
                a = &job->agents[k];
        if (!a || a->ctrl_fd >= 0 || a->ended || have != used) {
            /* one we stopped before it called is no stranger */
            drop_pending(job, i, a && a->ended && job->terminating
                                     ? NULL : "an agent for no host, or a second one");
            return;
        }
        pr_buf_free(&p->in);
        job->pending[i] = job->pending[--job->npending];
        pr_tcp_keepalive(fd);
        a->ctrl_fd = fd;
        if (send_setup(job, a) != 0)
            agent_lost(job, a, "cannot send it the job");
        else if (job->terminating) /* too late: stop it at once */
            queue_ctrl(job, a, PR_WIRE_SIGNAL, 0, SIGKILL, NULL, 0);
        return;
    }
    if (h.rank < 0 || h.rank >= job->opt.nprocs || job->ranks[h.rank].booted ||
        !job->ranks[h.rank].alive) {
        drop_pending(job, i, "a boot connection for no rank, or a second one");
        return;
    }
    struct pr_rank *r = &job->ranks[h.rank];
    struct pr_buf early = p->in;
    job->pending[i] = job->pending[--job->npending];
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    pr_boot_attach(job, r, fd, early.data + early.off + used, have - used);
    pr_buf_free(&early);
    pr_boot_readable(job, r);
}

int64_t pr_frontend_timers(struct pr_job *job, int64_t now)
{
    int64_t next = -1;
    for (int i = 0; i < job->npending;) {
        if (job->pending[i].deadline_ms <= now) {
            drop_pending(job, i, "no hello within the time allowed");
            continue;
        }
        if (next < 0 || job->pending[i].deadline_ms < next)
            next = job->pending[i].deadline_ms;
        i++;
    }
    return next;
}

/* ---- control connections ---------------------------------------------------- */

void pr_frontend_ctrl_writable(struct pr_job *job, struct pr_agent *a)
{
    if (a->ctrl_fd >= 0 && pr_buf_send(a->ctrl_fd, &a->out) < 0)
        agent_lost(job, a, strerror(errno));
}

static struct pr_rank *rank_of_agent(struct pr_job *job, struct pr_agent *a, int32_t rank)
{
    if (rank < 0 || rank >= job->opt.nprocs || job->ranks[rank].host != a->host)
        return NULL;
    return &job->ranks[rank];
}

void pr_frontend_ctrl_readable(struct pr_job *job, struct pr_agent *a)
{
    char chunk[4096];
    while (a->ctrl_fd >= 0) {
        ssize_t n = recv(a->ctrl_fd, chunk, sizeof chunk, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            agent_lost(job, a, n == 0 ? "it closed its connection" : strerror(errno));
            return;
        }
        pr_buf_append(&a->in, chunk, (size_t)n);
        while (a->ctrl_fd >= 0 && a->in.len - a->in.off >= HDR_LEN) {
            struct proust__wire_hdr h;
            memcpy(&h, a->in.data + a->in.off, HDR_LEN);
            if (h.magic != PROUST_WIRE_MAGIC || h.len > 4096) {
                agent_lost(job, a, "it sent a malformed record");
                return;
            }
            if (a->in.len - a->in.off < HDR_LEN + h.len)
                break;
            struct pr_rank *r = rank_of_agent(job, a, h.rank);
            if (!r) {
                agent_lost(job, a, "it reported a rank not on its host");
                return;
            }
            if (h.type == PR_WIRE_STARTED) {
                r->pid = h.arg;
            } else if (h.type == PR_WIRE_EXITED) {
                pr_rank_exited(job, r, h.arg);
            } else if (h.type == PR_WIRE_SPAWN_FAILED) {
                /* its reason went to its stderr, which we forward */
                pr_decide(job, h.arg > 0 && h.arg < 256 ? h.arg : 1);
                job->terminating = 1;
                pr_signal_all(job, SIGKILL);
            } else {
                agent_lost(job, a, "it sent an unknown record");
                return;
            }
            pr_buf_consume(&a->in, HDR_LEN + h.len);
        }
    }
}

void pr_frontend_agent_exited(struct pr_job *job, struct pr_agent *a, int status)
{
    a->alive = 0;
    job->agents_alive--;
    /* Reports it sent before it went come first. */
    if (a->ctrl_fd >= 0)
        pr_frontend_ctrl_readable(job, a);
    char how[128], why[256];
    pr_describe_status(status, how, sizeof how);
    snprintf(why, sizeof why, "%s %s%s", a->ctrl_fd >= 0 || a->ended ? "it" : "it never connected;",
             how, WIFEXITED(status) && WEXITSTATUS(status) == 255 ? ", the launch agent could "
             "not reach the host?" : "");
    agent_lost(job, a, why);
}

void pr_frontend_signal(struct pr_job *job, int sig)
{
    for (int i = 0; i < job->nagents; i++) {
        struct pr_agent *a = &job->agents[i];
        if (a->ctrl_fd >= 0)
            queue_ctrl(job, a, PR_WIRE_SIGNAL, 0, sig, NULL, 0);
        else if (a->alive) /* not connected yet (or lost): stop its launch */
            kill(a->pid, sig == SIGKILL ? SIGKILL : SIGTERM);
    }
}

void pr_frontend_close(struct pr_job *job)
{
    if (job->listen_fd >= 0)
        close(job->listen_fd);
    job->listen_fd = -1;
    while (job->npending > 0)
        drop_pending(job, job->npending - 1, NULL);
    free(job->pending);
    for (int i = 0; i < job->nagents; i++) {
        struct pr_agent *a = &job->agents[i];
        if (a->ctrl_fd >= 0)
            close(a->ctrl_fd);
        if (a->alive) { /* the drain is over: no agent outlives the job */
            kill(a->pid, SIGKILL);
            while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        pr_buf_free(&a->in);
        pr_buf_free(&a->out);
    }
    free(job->agents);
    for (int h = 0; h < job->nhosts; h++)
        free(job->hosts[h].name);
    free(job->hosts);
}
