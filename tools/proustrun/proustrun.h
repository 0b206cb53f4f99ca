/*
 * proustrun.h — shared state of the launcher. One process, one thread, one
 * poll() loop (loop.c) that serves the boot protocol (kvs.c, protocol in
 * src/boot/wire.h), forwards stdio (iofwd.c) and watches the children it
 * started (spawn.c). Arguments are parsed in args.c.
 *
 * Three modes. Local (no host named): the ranks are our children. Front
 * end (-H, --hostfile, a Slurm allocation): hosts.c maps ranks to hosts,
 * frontend.c starts one agent per host (ssh or --launch-agent) and serves
 * every rank's boot connection, which arrives over tcp; our children are
 * the agents, whose stdout and stderr carry their ranks' tagged lines.
 * Agent (proustrun --agent, started by a front end): agent.c gets the job
 * from the front end, spawns this host's ranks with a boot connection it
 * opened to the front end for each, and reports their starts and ends.
 */
#ifndef PROUSTRUN_H
#define PROUSTRUN_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PR_DEFAULT_GRACE_S 3.0
#define PR_KILL_DELAY_MS 2000   /* SIGTERM -> SIGKILL */
#define PR_TIMEOUT_EXIT 124     /* the time limit stopped the job (as timeout(1)) */
#define PR_DRAIN_MS 1000        /* output drain once every child is gone */
#define PR_PARTIAL_FLUSH_MS 200 /* a prompt of rank 0 waits this long for its end */
#define PR_MAX_LINE 65536       /* longer lines are written in pieces */

/* --bind-to (bind.c) */
enum { PR_BIND_NONE, PR_BIND_HWTHREAD, PR_BIND_CORE, PR_BIND_L3CACHE, PR_BIND_NUMA,
       PR_BIND_PACKAGE };

enum { PR_MODE_LOCAL, PR_MODE_FRONTEND, PR_MODE_AGENT };
enum { PR_MAP_SLOT, PR_MAP_NODE };

struct pr_options {
    int nprocs;
    int mode;            /* PR_MODE_* */
    /* hosts (front end): -H list, --hostfile, --map-by, --npernode */
    const char *host_list;
    const char *hostfile;
    int map_by;          /* PR_MAP_* */
    int npernode;        /* 0 = as slots say */
    const char *launch_agent; /* --launch-agent / PROUST_LAUNCH_AGENT, default ssh */
    int slurm;           /* hosts from the Slurm allocation, agents by srun */
    const char *agent_arg;    /* --agent ADDRS:PORT (agent mode) */
    int tag_output;
    int bind_to;         /* PR_BIND_* */
    int report_bindings; /* print each rank's cpus */
    double grace_s;
    double timeout_s;    /* the whole job's time limit, 0 = none */
    char **argv; /* program and its arguments, NULL-terminated */
};

/* Growable byte buffer; data[off..len) is pending. */
struct pr_buf {
    char *data;
    size_t off, len, cap;
};

/* One forwarded output stream (a child's stdout or stderr). */
struct pr_stream {
    int fd;           /* read end of the pipe, -1 after EOF */
    int out_fd;       /* 1 or 2 */
    int midline;      /* part of the current line was already written */
    int raw;          /* lines already tagged (an agent's): never prefix */
    int64_t since_ms; /* when the pending partial line started waiting */
    struct pr_buf line;
};

struct pr_rank {
    int rank;
    pid_t pid;
    int alive;   /* not yet reaped */
    int status;  /* wait status once reaped */
    int boot_fd; /* our end of the boot socket, -1 once closed */
    int in_fence;
    int booted;  /* its boot connection existed (a remote one comes late) */
    int host;    /* index in job->hosts (front end), else 0 */
    int lost;    /* front end: its agent vanished before reporting its end */
    struct pr_buf in;  /* received bytes, not yet a whole record */
    struct pr_buf out; /* records waiting to be sent */
    struct pr_stream out_s, err_s;
};

struct pr_kvs; /* kvs.c */

/* A host of the job (front end). */
struct pr_host {
    char *name;
    int slots;
    int nranks; /* ranks mapped to it */
};

/* The agent that runs one host's ranks (front end). */
struct pr_agent {
    int host;
    pid_t pid;      /* our child: ssh (or the launch agent), or proustrun --agent */
    int alive;
    int ctrl_fd;    /* its control connection, -1 before HELLO and after EOF */
    int ended;      /* its ranks were all reported, or declared lost */
    struct pr_buf in, out;
    struct pr_rank io; /* its stdout/stderr, raw (already tagged) */
};

/* A connection accepted on the front end's port, not yet authenticated. */
struct pr_pending {
    int fd;
    int64_t deadline_ms;
    char peer[64];
    struct pr_buf in;
};

struct pr_job {
    struct pr_options opt;
    struct pr_rank *ranks;
    char jobid[64];
    int live; /* children not yet reaped */

    /* stdin forwarding to rank 0 */
    int stdin_src;  /* our stdin, -1 when done */
    int stdin_dst;  /* write end of rank 0's stdin pipe, -1 when closed */
    int devnull;    /* /dev/null for the other ranks' stdin */
    char stdin_buf[65536];
    size_t stdin_off, stdin_len;

    struct pr_kvs *kvs;
    cpu_set_t *bind_sets; /* per rank, NULL without --bind-to */

    /* front end */
    struct pr_host *hosts;
    int nhosts;
    struct pr_agent *agents; /* one per host with ranks */
    int nagents, agents_alive;
    int listen_fd;
    struct pr_pending *pending;
    int npending;
    char secret[33]; /* hex: proves a connection belongs to the job */

    /* agent */
    int ctrl_fd;        /* to the front end, -1 once lost */
    struct pr_buf ctrl_in;
    int size;           /* the whole job's ranks (local mode: nprocs) */
    int *global_ranks;  /* agent: our ranks' numbers in the job */
    char boot_addr[64]; /* agent: the front end address that answered */
    int boot_port;

    /* outcome */
    int exit_code;
    int decided;      /* exit_code is final (first failure or abort) */
    int aborting;     /* an abort killed everything */
    int terminating;  /* SIGTERM sent (grace over or forwarded signal) */
    int64_t grace_deadline_ms, kill_deadline_ms, drain_deadline_ms; /* 0 = unset */
    int64_t timeout_deadline_ms; /* --timeout / MPIEXEC_TIMEOUT, 0 = none */
    int stdout_broken, stderr_broken;
};

/* args.c */
int pr_parse_args(int argc, char **argv, struct pr_options *opt); /* exit code, or -1 to go on */

/* util (in main.c) */
int64_t pr_now_ms(void);
void pr_buf_append(struct pr_buf *b, const void *data, size_t len);
void pr_buf_consume(struct pr_buf *b, size_t n);
void pr_buf_free(struct pr_buf *b);
/* Send what b holds on a non-blocking socket: 0 all of it, 1 the socket
 * is full, -1 the connection failed (errno). */
int pr_buf_send(int fd, struct pr_buf *b);
void pr_set_nonblock(int fd);
void pr_write_all(struct pr_job *job, int fd, const char *data, size_t len);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_err_set_host(const char *host); /* agent: "proustrun (on HOST): ..." */

/* bind.c */
int pr_bind_parse(const char *text); /* PR_BIND_*, or -1 */
int pr_bind_plan(struct pr_job *job); /* fills job->bind_sets; 0 or an exit code */

/* spawn.c */
int pr_spawn_all(struct pr_job *job); /* 0, or an exit code on failure */
void pr_signal_all(struct pr_job *job, int sig);
/* SIGKILL what remains of the ranks' process groups (a failed job's end). */
void pr_kill_leftovers(struct pr_job *job);
/* After the last rank here ended: remove its shm names from /dev/shm. */
void pr_shm_cleanup(struct pr_job *job);
/* "exited with code 2" / "killed by signal 9 (Killed)"; returns the job
 * exit code for that status (0 if it exited 0). */
int pr_describe_status(int status, char *text, size_t size);

/* hosts.c: the host list and which ranks run where (front end) */
int pr_hosts_plan(struct pr_job *job); /* 0 or an exit code */

/* frontend.c */
int pr_frontend_start(struct pr_job *job); /* listen, spawn agents; 0 or an exit code */
void pr_frontend_accept(struct pr_job *job);
void pr_frontend_pending(struct pr_job *job, int index);
void pr_frontend_ctrl_readable(struct pr_job *job, struct pr_agent *a);
void pr_frontend_ctrl_writable(struct pr_job *job, struct pr_agent *a);
void pr_frontend_agent_exited(struct pr_job *job, struct pr_agent *a, int status);
void pr_frontend_signal(struct pr_job *job, int sig);
int64_t pr_frontend_timers(struct pr_job *job, int64_t now); /* next deadline or -1 */
void pr_frontend_close(struct pr_job *job);
/* Control connections notice a host whose link went down within ~5 s. */
void pr_tcp_keepalive(int fd);

/* agent.c */
int pr_agent_main(struct pr_job *job); /* the agent's whole life; its exit code */
void pr_agent_ctrl_readable(struct pr_job *job);
void pr_agent_report(struct pr_job *job, uint16_t type, int rank, int arg);
/* A boot connection to the front end for `rank`, authenticated; -1 on error. */
int pr_agent_boot_connect(struct pr_job *job, int rank);

/* kvs.c: the boot protocol */
int pr_kvs_create(struct pr_job *job);
void pr_kvs_destroy(struct pr_job *job);
void pr_boot_readable(struct pr_job *job, struct pr_rank *r);
void pr_boot_writable(struct pr_job *job, struct pr_rank *r);
void pr_boot_disconnect(struct pr_job *job, struct pr_rank *r);
/* Complete or fail the fence if its state changed; call once per loop turn. */
int pr_boot_service(struct pr_job *job);
/* Tell every connected rank but `dead` that it died. */
void pr_boot_notify_failure(struct pr_job *job, int dead, int status);
/* A rank came or went without a boot record: look at the fence again. */
void pr_boot_fence_dirty(struct pr_job *job);
/* Adopt an authenticated connection as rank r's boot socket (front end),
 * with the bytes that came after its hello. */
void pr_boot_attach(struct pr_job *job, struct pr_rank *r, int fd, const void *early,
                    size_t len);

/* iofwd.c: stdout/stderr lines and stdin */
void pr_stream_readable(struct pr_job *job, struct pr_rank *r, struct pr_stream *s);
/* Write rank 0's stdout partial line (a prompt) if it has waited
 * PR_PARTIAL_FLUSH_MS while stdin is forwarded, or every partial line if
 * force; returns the earliest time another one is due, or -1. */
int64_t pr_stream_flush_partials(struct pr_job *job, int force);
void pr_stream_close(struct pr_job *job, struct pr_rank *r, struct pr_stream *s);
void pr_stdin_readable(struct pr_job *job);
void pr_stdin_writable(struct pr_job *job);
void pr_stdin_stop(struct pr_job *job);

/* loop.c */
/* Before spawning: SIGINT/SIGTERM/SIGHUP/SIGCHLD to a self-pipe, SIGPIPE
 * ignored. 0, or -1 with errno. */
int pr_signals_init(void);
/* In a child before exec (signals blocked): dispositions as on entry. */
void pr_signals_child(void);
int pr_run(struct pr_job *job); /* the job's exit code */
/* Set the job's exit code unless an earlier event did. */
void pr_decide(struct pr_job *job, int code);
/* A rank ended (reaped here, or reported by its agent). */
void pr_rank_exited(struct pr_job *job, struct pr_rank *r, int status);
/* A rank asked to abort (from kvs.c). */
void pr_handle_abort(struct pr_job *job, struct pr_rank *r, int code, const char *why,
                     size_t why_len);

#endif
