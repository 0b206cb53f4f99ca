/*
 * agent.c — proustrun --agent SECRET@HOST@ADDRS:PORT: the per-host half of
 * a job across hosts, started by the front end (frontend.c) through ssh or
 * the launch agent. It connects to the front end (the first of ADDRS that
 * answers), gets the job (SETUP: program, environment, directory, its
 * ranks), spawns its ranks as a local proustrun would, each with a boot
 * connection of its own to the front end, forwards their output (tagged
 * with their job ranks) on its stdout/stderr, and reports their starts and
 * ends. It obeys SIGNAL records; if the front end goes away, it kills its
 * ranks and exits: no process of the job outlives the front end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_wire.h"
#include "proustrun.h"

#define HDR_LEN sizeof(struct proust__wire_hdr)
#define PR_AGENT_CONNECT_MS 5000
#define PR_AGENT_SETUP_MS 30000

extern char **environ;

static char agent_secret[PR_SECRET_HEX + 1];
static int agent_host;

/* Connect to addr:port within ms; -1 with errno. */
static int connect_to(const char *addr, int port, int ms)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;
        int pr;
        while ((pr = poll(&p, 1, ms)) < 0 && errno == EINTR)
            ;
        if (pr == 0)
            err = ETIMEDOUT;
        else if (pr < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        if (err) {
            close(fd);
            errno = err;
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* blocking from here on */
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return fd;
}

static int send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_hello(int fd, uint16_t type, int32_t rank)
{
    struct proust__wire_hdr h = {.len = PR_SECRET_HEX, .type = type,
                                 .magic = PROUST_WIRE_MAGIC, .rank = rank};
    if (send_all(fd, &h, HDR_LEN) != 0 || send_all(fd, agent_secret, PR_SECRET_HEX) != 0)
        return -1;
    return 0;
}

/* Read exactly len bytes within ms. */
static int recv_all(int fd, void *data, size_t len, int ms)
{
    char *p = data;
    int64_t deadline = pr_now_ms() + ms;
    while (len > 0) {
        int64_t left = deadline - pr_now_ms();
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int pr_agent_boot_connect(struct pr_job *job, int rank)
{
    int fd = connect_to(job->boot_addr, job->boot_port, PR_AGENT_CONNECT_MS);
    if (fd < 0 || send_hello(fd, PR_WIRE_BOOT_HELLO, rank) != 0) {
        pr_err("rank %d: cannot connect to the front end at %s:%d: %s", rank, job->boot_addr,
               job->boot_port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

void pr_agent_report(struct pr_job *job, uint16_t type, int rank, int arg)
{
    if (job->ctrl_fd < 0)
        return;
    struct proust__wire_hdr h = {.type = type, .magic = PROUST_WIRE_MAGIC, .rank = rank,
                                 .arg = arg};
    if (send_all(job->ctrl_fd, &h, HDR_LEN) != 0) {
        close(job->ctrl_fd);
        job->ctrl_fd = -1;
        job->terminating = 1;
        pr_signal_all(job, SIGKILL);
    }
}

void pr_agent_ctrl_readable(struct pr_job *job)
{
    char chunk[4096];
    ssize_t n = recv(job->ctrl_fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n > 0) {
        pr_buf_append(&job->ctrl_in, chunk, (size_t)n);
        while (job->ctrl_in.len - job->ctrl_in.off >= HDR_LEN) {
            struct proust__wire_hdr h;
            memcpy(&h, job->ctrl_in.data + job->ctrl_in.off, HDR_LEN);
            if (h.magic != PROUST_WIRE_MAGIC || h.type != PR_WIRE_SIGNAL || h.len != 0 ||
                h.arg < 1 || h.arg >= NSIG)
                goto lost;
            pr_buf_consume(&job->ctrl_in, HDR_LEN);
            job->terminating = 1;
            pr_signal_all(job, h.arg);
        }
        return;
    }
lost: /* the front end is gone, or speaks nonsense: nothing here may live on */
    close(job->ctrl_fd);
    job->ctrl_fd = -1;
    job->terminating = 1;
    pr_signal_all(job, SIGKILL);
}

/* SECRET@HOST@a,b,c:PORT */
static int parse_agent_arg(const char *arg, char *addrs, size_t asize, int *port)
{
    const char *at1 = strchr(arg, '@'), *at2 = at1 ? strchr(at1 + 1, '@') : NULL;
    const char *colon = strrchr(arg, ':');
    if (!at1 || !at2 || !colon || colon < at2 || at1 - arg != PR_SECRET_HEX)
        return -1;
    memcpy(agent_secret, arg, PR_SECRET_HEX);
    agent_secret[PR_SECRET_HEX] = '\0';
    char *end;
    agent_host = (int)strtol(at1 + 1, &end, 10);
    if (end != at2 || agent_host < 0)
        return -1;
    *port = (int)strtol(colon + 1, &end, 10);
    if (*end || *port < 1 || *port > 65535 || (size_t)(colon - at2 - 1) >= asize)
        return -1;
    memcpy(addrs, at2 + 1, (size_t)(colon - at2 - 1));
    addrs[colon - at2 - 1] = '\0';
    return 0;
}

int pr_agent_main(struct pr_job *job)
{
    char addrs[1024];
    int port;
    if (parse_agent_arg(job->opt.agent_arg, addrs, sizeof addrs, &port) != 0) {
        pr_err("--agent %s: expected SECRET@HOST@ADDRESSES:PORT (started by proustrun)",
               job->opt.agent_arg);
        return 2;
    }
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    pr_err_set_host(host);
    /* The first of the front end's addresses that answers. */
    char *save = NULL;
    int fd = -1, last_err = 0;
    for (char *a = strtok_r(addrs, ",", &save); a && fd < 0; a = strtok_r(NULL, ",", &save)) {
        fd = connect_to(a, port, PR_AGENT_CONNECT_MS);
        if (fd < 0)
            last_err = errno;
        else
            snprintf(job->boot_addr, sizeof job->boot_addr, "%s", a);
    }
    if (fd < 0) {
        pr_err("cannot reach the front end on port %d at any of its addresses (%s)", port,
               strerror(last_err));
        return 1;
    }
    job->boot_port = port;
    job->ctrl_fd = fd;
    pr_tcp_keepalive(fd);
    struct proust__wire_hdr h;
    if (send_hello(fd, PR_WIRE_AGENT_HELLO, agent_host) != 0 ||
        recv_all(fd, &h, HDR_LEN, PR_AGENT_SETUP_MS) != 0) {
        /* closed at once: the front end refused us and says why, or the
         * job ended before we called */
        if (errno != ECONNRESET && errno != EPIPE)
            pr_err("the front end did not send the job: %s", strerror(errno));
        return 1;
    }
    if (h.magic != PROUST_WIRE_MAGIC || h.type != PR_WIRE_SETUP || h.len == 0 ||
        h.len > PROUST_WIRE_MAX_PAYLOAD) {
        pr_err("the front end sent a malformed job");
        return 1;
    }
    char *payload = malloc(h.len);
    struct pr_setup s;
    const char *why = "out of memory";
    if (!payload || recv_all(fd, payload, h.len, PR_AGENT_SETUP_MS) != 0 ||
        pr_setup_parse(payload, h.len, &s, &why) != 0) {
        pr_err("cannot read the job: %s", payload ? why : "out of memory");
        free(payload);
        return 1;
    }
    environ = s.env; /* the front end's, as Hydra passes it */
    if (s.cwd[0] && chdir(s.cwd) != 0)
        pr_err("cannot enter %s (%s); the ranks start in %s", s.cwd,
               strerror(errno), getenv("HOME") ? getenv("HOME") : "/");
    job->opt.nprocs = s.nranks;
    job->opt.tag_output = s.tag_output;
    job->opt.bind_to = s.bind_to;
    job->opt.grace_s = s.grace_s;
    job->opt.argv = s.argv;
    job->size = s.size;
    job->global_ranks = s.ranks;
    snprintf(job->jobid, sizeof job->jobid, "%s", s.jobid);

    int rc = pr_bind_plan(job);
    if (rc == 0)
        rc = pr_spawn_all(job);
    if (rc != 0) {
        pr_agent_report(job, PR_WIRE_SPAWN_FAILED, s.ranks[0], rc);
    } else {
        rc = pr_run(job);
    }
    if (job->ctrl_fd >= 0)
        close(job->ctrl_fd);
    pr_buf_free(&job->ctrl_in);
    free(job->bind_sets);
    free(job->ranks);
    pr_setup_free(&s);
    free(payload);
    return rc;
}
