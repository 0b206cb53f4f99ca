/*
 * agent_wire.h — what a proustrun front end and its per-host agents say to
 * each other. Records have src/boot/wire.h's 16-byte header (magic
 * PROUST_WIRE_MAGIC: a peer of the other byte order is refused, as is
 * anything else that does not start with it).
 *
 * The front end listens on one tcp port for two kinds of connection, each
 * opened by an agent and starting with one record that names the job's
 * secret (32 hex digits, given to the agent on its command line):
 *   AGENT_HELLO  rank = host index, payload = secret. The agent's control
 *                connection; the front end answers SETUP.
 *   BOOT_HELLO   rank = a rank of the agent's host, payload = secret. The
 *                agent then hands the socket to that rank as its
 *                PROUST_BOOT_FD: from here on it carries wire.h's records.
 * A connection whose first record is anything else, or is not complete
 * within PR_HELLO_TIMEOUT_MS, is closed and logged: never parsed further.
 *
 * Front end -> agent (control):
 *   SETUP   payload = NUL-terminated "key=value" strings (setup_msg.c):
 *           size, jobid, tag, bind, grace, cwd, rank (one per rank of the
 *           host, in local-rank order), argv (in order), env (in order).
 *   SIGNAL  arg = a signal for every rank of the host.
 * Agent -> front end (control):
 *   STARTED rank, arg = its pid on the host.
 *   EXITED  rank, arg = its wait status.
 *   SPAWN_FAILED rank, arg = exit code (126, 127...), payload = why.
 * Closing the control connection ends the agent's ranks (SIGKILL): no
 * process of a job outlives its front end.
 */
#ifndef PROUSTRUN_AGENT_WIRE_H
#define PROUSTRUN_AGENT_WIRE_H

#include "boot/wire.h"

#define PR_HELLO_TIMEOUT_MS 10000
#define PR_SECRET_HEX 32

enum pr_agent_wire_type {
    PR_WIRE_AGENT_HELLO = 64,
    PR_WIRE_BOOT_HELLO = 65,
    PR_WIRE_SETUP = 66,
    PR_WIRE_SIGNAL = 67,
    PR_WIRE_STARTED = 68,
    PR_WIRE_EXITED = 69,
    PR_WIRE_SPAWN_FAILED = 70,
};

/* The job as the front end describes it to an agent (setup_msg.c). */
struct pr_setup {
    int size;
    char jobid[64];
    int tag_output;
    int bind_to;
    double grace_s;
    const char *cwd;
    int nranks;
    int *ranks;   /* nranks global ranks, local-rank order */
    int argc;
    char **argv;  /* argc + 1 (NULL-terminated), pointing into the payload */
    int envc;
    char **env;   /* envc + 1 */
};

/* Encode: appends to *out (malloc'd, *len bytes). 0, or -1 out of memory. */
int pr_setup_encode(const struct pr_setup *s, char **out, size_t *len);
/* Parse a SETUP payload (bytes from the network). The strings point into
 * buf, which must outlive s. 0, or -1 with *why set to what is wrong. */
int pr_setup_parse(char *buf, size_t len, struct pr_setup *s, const char **why);
void pr_setup_free(struct pr_setup *s); /* the arrays, not buf */

#endif
