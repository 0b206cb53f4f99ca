/*
 * spawn.c — start the ranks: fork + exec, each with its environment, its
 * boot socket and its stdio pipes. Every descriptor proustrun creates is
 * close-on-exec; a child keeps only 0/1/2 and its own boot socket.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "agent_wire.h"
#include "proustrun.h"

extern char **environ;

int pr_describe_status(int status, char *text, size_t size)
{
    if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        snprintf(text, size, "exited with code %d", code);
        return code;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = strsignal(sig);
        snprintf(text, size, "killed by signal %d (%s)%s", sig, name ? name : "?",
                 WCOREDUMP(status) ? ", core dumped" : "");
        return 128 + sig;
    }
    snprintf(text, size, "ended with wait status 0x%x", (unsigned)status);
    return 1;
}

/* Each rank leads its own session, hence its own process group, so that
 * a signal reaches the processes it started too (a shell script's
 * commands). */
static void signal_rank(const struct pr_rank *r, int sig)
{
    if (r->pid > 0 && kill(-r->pid, sig) != 0 && r->alive)
        kill(r->pid, sig);
}

void pr_signal_all(struct pr_job *job, int sig)
{
    if (job->opt.mode == PR_MODE_FRONTEND) { /* the agents signal their ranks */
        pr_frontend_signal(job, sig);
        return;
    }
    for (int i = 0; i < job->opt.nprocs; i++)
        if (job->ranks[i].alive)
            signal_rank(&job->ranks[i], sig);
}

void pr_kill_leftovers(struct pr_job *job)
{
    if (job->opt.mode == PR_MODE_FRONTEND) {
        pr_frontend_signal(job, SIGKILL);
        return;
    }
    for (int i = 0; i < job->opt.nprocs; i++) {
        const struct pr_rank *r = &job->ranks[i];
        /* An open output pipe after the rank was reaped: something it
         * started still runs (and its group, which outlives the leader
         * while it has members, still exists). */
        if (r->alive || r->out_s.fd >= 0 || r->err_s.fd >= 0)
            signal_rank(r, SIGKILL);
    }
}

/* The job is over on this host: remove what its shm rails left in
 * /dev/shm (a rank killed before it closed leaves its segment, with the
 * rings to it, and its doorbell: drivers/shm.c). Only names of ranks
 * started here: in the test cluster, hosts share one /dev/shm. */
void pr_shm_cleanup(struct pr_job *job)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    char seg[160];
    snprintf(seg, sizeof seg, "proust-%s-", job->jobid);
    size_t lseg = strlen(seg);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, seg, lseg) != 0)
            continue;
        const char *rest = e->d_name + lseg; /* <rank> or <rank>.bell */
        char *end;
        long rank = strtol(rest, &end, 10);
        if (end == rest || rank < 0 || rank >= job->opt.nprocs || job->ranks[rank].pid <= 0 ||
            (*end && *end != '.'))
            continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        unlink(path);
    }
    closedir(d);
}

static int is_exec_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Full path of the program, like execvp would find it; NULL with errno set. */
static char *resolve_program(const char *prog)
{
    if (strchr(prog, '/')) {
        struct stat st;
        if (stat(prog, &st) != 0)
            return NULL;
        if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0) {
            errno = EACCES;
            return NULL;
        }
        return strdup(prog);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t plen = strlen(prog);
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
        char *full = malloc(dlen + plen + 3);
        if (!full)
            return NULL;
        if (dlen == 0)
            snprintf(full, dlen + plen + 3, "./%s", prog);
        else
            snprintf(full, dlen + plen + 3, "%.*s/%s", (int)dlen, path, prog);
        if (is_exec_file(full))
            return full;
        free(full);
        path += dlen + (colon ? 1 : 0);
    }
    errno = ENOENT;
    return NULL;
}

static int is_boot_var(const char *entry)
{
    static const char *const names[] = {PROUST_ENV_RANK,       PROUST_ENV_SIZE,
                                        PROUST_ENV_LOCAL_RANK, PROUST_ENV_LOCAL_SIZE,
                                        PROUST_ENV_JOBID,      PROUST_ENV_BOOT_FD,
                                        PROUST_ENV_NODE_CPUS};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(entry, names[i], n) == 0 && entry[n] == '=')
            return 1;
    }
    return 0;
}

/* Our environment minus any inherited boot variables, with room for 6 more
 * at the end (filled per rank by set_boot_env). */
static char **base_env(size_t *count)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = calloc(n + 8, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (!is_boot_var(*e))
            env[k++] = *e;
    *count = k;
    return env;
}

static void set_boot_env(char **env, size_t base, char slots[7][96], const struct pr_job *job,
                         int index, int boot_fd)
{
    cpu_set_t mine;
    int cpus = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine) : 0;
    snprintf(slots[0], 96, "%s=%d", PROUST_ENV_RANK, job->ranks[index].rank);
    snprintf(slots[1], 96, "%s=%d", PROUST_ENV_SIZE, job->size);
    snprintf(slots[2], 96, "%s=%d", PROUST_ENV_LOCAL_RANK, index);
    snprintf(slots[3], 96, "%s=%d", PROUST_ENV_LOCAL_SIZE, job->opt.nprocs);
    snprintf(slots[4], 96, "%s=%s", PROUST_ENV_JOBID, job->jobid);
    snprintf(slots[5], 96, "%s=%d", PROUST_ENV_BOOT_FD, boot_fd);
    snprintf(slots[6], 96, "%s=%d", PROUST_ENV_NODE_CPUS, cpus);
    for (int i = 0; i < 7; i++)
        env[base + (size_t)i] = slots[i];
    env[base + 7] = NULL;
}

static void make_jobid(struct pr_job *job)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long t = (unsigned long long)ts.tv_sec * 1000000000ull +
                           (unsigned long long)ts.tv_nsec;
    unsigned long long r = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &r, sizeof r) != (ssize_t)sizeof r)
            r = 0;
        close(fd);
    }
    snprintf(job->jobid, sizeof job->jobid, "%ld-%llx", (long)getpid(),
             (t ^ r) & 0xffffffffffffull);
}

/* In the child, after fork: never returns. */
static void child_exec(const char *path, char **argv, char **env, int in_fd, int out_fd,
                       int err_fd, int boot_fd, int status_fd, pid_t parent,
                       const sigset_t *mask, const cpu_set_t *cpus, bool own_session)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the launcher died before prctl */
        _exit(127);
    /* Its own session: besides its own process group, the kernel's
     * autogroup scheduling then shares the cpus between ranks rather than
     * between their threads, as under MPICH's hydra. A rank that starts 16
     * compute threads would otherwise get 16 shares of the cpus its
     * neighbours need to answer messages (8 B ping-pong against such a rank
     * on 2 cores: 5-20 ms round trips). The ranks never had the terminal:
     * stdin, stdout and stderr are our pipes.
     * Not with more ranks than cpus here: there a waiting rank hands its
     * cpu to the others with sched_yield, and the kernel's EEVDF scheduler
     * gives a yielding task's cpu back to its own group, so a rank alone
     * in its autogroup spins on (64 ranks on 2 cores: a barrier 5 ms in
     * sessions of their own, 0.6 ms in ours; Open MPI's mpirun 0.5). A
     * process group of its own still takes our signals. */
    if (own_session ? setsid() < 0 : setpgid(0, 0) != 0)
        goto fail;
    pr_signals_child();
    sigprocmask(SIG_SETMASK, mask, NULL);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    /* --bind-to: the program starts (and stays) on its cpus */
    if (cpus && sched_setaffinity(0, sizeof *cpus, cpus) != 0)
        goto fail;
    int fl = fcntl(boot_fd, F_GETFD);
    if (fl < 0 || fcntl(boot_fd, F_SETFD, fl & ~FD_CLOEXEC) < 0)
        goto fail;
    execve(path, argv, env);
fail:;
    int err = errno;
    ssize_t w = write(status_fd, &err, sizeof err);
    (void)w;
    _exit(127);
}

/* Each forked rank's exec, once all are forked: the launcher does not
 * wait for one rank's exec before it forks the next (the children exec on
 * the other cpus meanwhile). The first that failed is reported: 127 when
 * the program was not found, 126 when it could not run, else 0. Closes
 * the descriptors. */
static int check_execs(struct pr_job *job, const char *prog, int *exec_fd, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (exec_fd[i] < 0)
            continue;
        struct pr_rank *r = &job->ranks[i];
        int err = 0;
        ssize_t got;
        while ((got = read(exec_fd[i], &err, sizeof err)) < 0 && errno == EINTR)
            ;
        close(exec_fd[i]);
        exec_fd[i] = -1;
        if (got == (ssize_t)sizeof err) {
            if (rc == 0)
                pr_err("cannot run '%s' (rank %d): %s", prog, r->rank, strerror(err));
            rc = rc ? rc : err == ENOENT ? 127 : 126;
        } else if (rc == 0 && job->opt.mode == PR_MODE_AGENT) {
            pr_agent_report(job, PR_WIRE_STARTED, r->rank, (int)r->pid);
        }
    }
    return rc;
}

static void kill_spawned(struct pr_job *job)
{
    pr_signal_all(job, SIGKILL);
    for (int i = 0; i < job->opt.nprocs; i++) {
        struct pr_rank *r = &job->ranks[i];
        if (r->alive)
            while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        r->alive = 0;
    }
}

static int stdin_forwardable(void)
{
    /* A background job reading the terminal would be stopped (SIGTTIN). */
    if (isatty(0) && tcgetpgrp(0) != getpgrp())
        return 0;
    return 1;
}

int pr_spawn_all(struct pr_job *job)
{
    const char *prog = job->opt.argv[0];
    char *path = resolve_program(prog);
    if (!path) {
        int err = errno;
        pr_err("cannot run '%s': %s%s", prog, strerror(err),
               err == ENOENT && !strchr(prog, '/') ? " (not found in PATH)" : "");
        return err == ENOENT ? 127 : 126;
    }
    int n = job->opt.nprocs;
    job->ranks = calloc((size_t)n, sizeof *job->ranks);
    size_t base = 0;
    char **env = base_env(&base);
    if (!job->ranks || !env) {
        pr_err("out of memory");
        free(path);
        free(env);
        return 1;
    }
    if (job->opt.mode != PR_MODE_AGENT) { /* an agent has the front end's */
        make_jobid(job);
        job->size = n;
    }
    job->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->devnull < 0) {
        pr_err("cannot open /dev/null: %s", strerror(errno));
        free(path);
        free(env);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct pr_rank *r = &job->ranks[i];
        r->rank = job->global_ranks ? job->global_ranks[i] : i;
        r->booted = 1;
        r->boot_fd = r->out_s.fd = r->err_s.fd = -1;
        r->out_s.out_fd = 1;
        r->err_s.out_fd = 2;
    }
    int forward_stdin = stdin_forwardable();
    /* more ranks here than cpus: they share our scheduling group */
    cpu_set_t ours;
    int ncpus = sched_getaffinity(0, sizeof ours, &ours) == 0 ? CPU_COUNT(&ours) : 0;
    bool own_sessions = ncpus <= 0 || job->opt.nprocs <= ncpus;
    pid_t self = getpid();
    char slots[7][96];
    int rc = 0;
    int *exec_fd = malloc((size_t)n * sizeof *exec_fd);
    if (!exec_fd) {
        pr_err("out of memory");
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < n; i++)
        exec_fd[i] = -1;
    for (int i = 0; i < n && rc == 0; i++) {
        struct pr_rank *r = &job->ranks[i];
        int sv[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1};
        int st[2] = {-1, -1};
        if (job->opt.mode == PR_MODE_AGENT) {
            /* the rank's boot socket: a connection to the front end */
            if ((sv[1] = pr_agent_boot_connect(job, r->rank)) < 0)
                rc = 1;
        } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            pr_err("cannot create the boot socket of rank %d: %s", r->rank, strerror(errno));
            rc = 1;
        }
        if (rc == 0 && (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
                        pipe2(st, O_CLOEXEC) != 0 ||
                        (r->rank == 0 && forward_stdin && pipe2(inp, O_CLOEXEC) != 0))) {
            pr_err("cannot create the pipes of rank %d: %s", r->rank, strerror(errno));
            rc = 1;
        }
        pid_t pid = -1;
        if (rc == 0) {
            set_boot_env(env, base, slots, job, i, sv[1]);
            /* Signals wait until the child has dropped our handlers. */
            sigset_t all, old;
            sigfillset(&all);
            sigprocmask(SIG_BLOCK, &all, &old);
            pid = fork();
            if (pid == 0)
                child_exec(path, job->opt.argv, env, inp[0] >= 0 ? inp[0] : job->devnull,
                           outp[1], errp[1], sv[1], st[1], self, &old,
                           job->bind_sets ? &job->bind_sets[i] : NULL, own_sessions);
            sigprocmask(SIG_SETMASK, &old, NULL);
            if (pid < 0) {
                pr_err("cannot start rank %d: fork: %s", r->rank, strerror(errno));
                rc = 1;
            }
        }
        int fds_child[] = {sv[1], outp[1], errp[1], inp[0], st[1]};
        for (size_t k = 0; k < sizeof fds_child / sizeof fds_child[0]; k++)
            if (fds_child[k] >= 0)
                close(fds_child[k]);
        if (pid > 0) {
            /* no setpgid here: the child's setsid needs it not to lead a
             * group yet; signals before its exec go to the pid alone (and
             * to its group once it made one) */
            r->pid = pid;
            r->alive = 1;
            job->live++;
            exec_fd[i] = st[0]; /* read once every rank is forked */
            st[0] = -1;
        }
        if (st[0] >= 0)
            close(st[0]);
        r->boot_fd = sv[0];
        r->out_s.fd = outp[0];
        r->err_s.fd = errp[0];
        if (r->rank == 0)
            job->stdin_dst = inp[1];
        if (job->opt.mode == PR_MODE_AGENT) { /* the rank's own, not ours */
            if (sv[0] >= 0)
                close(sv[0]);
            r->boot_fd = -1;
        }
        if (rc != 0)
            break;
        if (r->boot_fd >= 0)
            pr_set_nonblock(r->boot_fd);
        pr_set_nonblock(r->out_s.fd);
        pr_set_nonblock(r->err_s.fd);
        if (r->rank == 0 && job->stdin_dst >= 0) {
            pr_set_nonblock(job->stdin_dst);
            job->stdin_src = 0;
        }
    }
    if (exec_fd) {
        int erc = check_execs(job, prog, exec_fd, n);
        rc = rc ? rc : erc;
    }
    free(exec_fd);
    free(path);
    free(env);
    if (rc != 0) {
        kill_spawned(job);
        for (int i = 0; i < n; i++) {
            struct pr_rank *r = &job->ranks[i];
            int fds[] = {r->boot_fd, r->out_s.fd, r->err_s.fd};
            for (size_t k = 0; k < 3; k++)
                if (fds[k] >= 0)
                    close(fds[k]);
        }
        if (job->stdin_dst >= 0)
            close(job->stdin_dst);
        free(job->ranks);
        job->ranks = NULL;
        job->live = 0;
    }
    return rc;
}
