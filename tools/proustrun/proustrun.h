/*
 * proustrun.h — shared state of the launcher. One process, one thread, one
 * poll() loop (loop.c) that serves the boot protocol (kvs.c, protocol in
 * src/boot/wire.h), forwards stdio (iofwd.c) and watches the children it
 * started (spawn.c). Arguments are parsed in args.c.
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

struct pr_options {
    int nprocs;
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
    struct pr_buf in;  /* received bytes, not yet a whole record */
    struct pr_buf out; /* records waiting to be sent */
    struct pr_stream out_s, err_s;
};

struct pr_kvs; /* kvs.c */

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
void pr_set_nonblock(int fd);
void pr_write_all(struct pr_job *job, int fd, const char *data, size_t len);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bind.c */
int pr_bind_parse(const char *text); /* PR_BIND_*, or -1 */
int pr_bind_plan(struct pr_job *job); /* fills job->bind_sets; 0 or an exit code */

/* spawn.c */
int pr_spawn_all(struct pr_job *job); /* 0, or an exit code on failure */
void pr_signal_all(struct pr_job *job, int sig);
/* SIGKILL what remains of the ranks' process groups (a failed job's end). */
void pr_kill_leftovers(struct pr_job *job);
/* "exited with code 2" / "killed by signal 9 (Killed)"; returns the job
 * exit code for that status (0 if it exited 0). */
int pr_describe_status(int status, char *text, size_t size);

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
/* A rank asked to abort (from kvs.c). */
void pr_handle_abort(struct pr_job *job, struct pr_rank *r, int code, const char *why,
                     size_t why_len);

#endif
