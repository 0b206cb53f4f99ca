/*
 * pmi1_fake — the PMI-1 bootstrap (src/boot/pmi1.c) against a launcher
 * played by this test over a socketpair (PMI_FD), one scenario per run:
 *
 *   ok          a correct launcher that keeps values of 64 bytes at most:
 *               puts of 0, 5 and 3000 bytes (cut into parts), a fence, the
 *               values read back intact, a missing key absent, the local
 *               rank and size from PMI_process_mapping, finalize answered.
 *   nomap       no PMI_process_mapping: local ranks from host names.
 *   garbage, close, long_line, wrong_cmd, bad_maxes, refused, unprintable
 *               a launcher that answers garbage, closes the socket, sends
 *               a line without end, answers another command, bad maxes,
 *               refuses init, puts a control byte in a value: the
 *               bootstrap must fail with an error, not crash or hang.
 *
 * usage: pmi1_fake SCENARIO   (exit 0: behaved as it must)
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "proust.h"

static const char *scenario;

static bool is(const char *s)
{
    return strcmp(scenario, s) == 0;
}

/* ---- the launcher -------------------------------------------------------- */
#define KV_MAX 256
static char kv_key[KV_MAX][128], kv_val[KV_MAX][128];
static int kv_n;

static void reply(int fd, const char *line)
{
    if (write(fd, line, strlen(line)) < 0)
        return; /* the process hung up: its verdict comes from its exit */
}

static const char *word(const char *line, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    size_t n = strcspn(p, " \n");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* Answer one request; false: hang up. */
static bool serve_line(int fd, const char *line)
{
    char key[128], val[128], out[512];
    if (!strncmp(line, "cmd=init ", 9)) {
        if (is("garbage"))
            reply(fd, "hello world\n");
        else if (is("close"))
            return false;
        else if (is("long_line"))
            for (int i = 0; i < 6000; i++)
                reply(fd, "x");
        else if (is("wrong_cmd"))
            reply(fd, "cmd=barrier_out\n");
        else if (is("refused"))
            reply(fd, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1 msg=go_away\n");
        else
            reply(fd, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    } else if (!strncmp(line, "cmd=get_maxes", 13)) {
        reply(fd, is("bad_maxes") ? "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=abc\n"
                                  : "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=64\n");
    } else if (!strncmp(line, "cmd=get_my_kvsname", 18)) {
        reply(fd, "cmd=my_kvsname kvsname=kvs_fake_0\n");
    } else if (!strncmp(line, "cmd=put ", 8) && word(line, "key", key, sizeof key) &&
               word(line, "value", val, sizeof val) && kv_n < KV_MAX) {
        strcpy(kv_key[kv_n], key);
        strcpy(kv_val[kv_n++], val);
        reply(fd, "cmd=put_result rc=0\n");
    } else if (!strncmp(line, "cmd=get ", 8) && word(line, "key", key, sizeof key)) {
        const char *v = NULL;
        if (!strcmp(key, "PMI_process_mapping") && !is("nomap"))
            v = is("unprintable") ? "(vector,(0,1,\0012))" : "(vector,(0,1,2))";
        for (int i = 0; i < kv_n && !v; i++)
            if (!strcmp(kv_key[i], key))
                v = kv_val[i];
        if (v)
            snprintf(out, sizeof out, "cmd=get_result rc=0 value=%s\n", v);
        else
            snprintf(out, sizeof out, "cmd=get_result rc=-1 msg=key_%s_not_found\n", key);
        reply(fd, out);
    } else if (!strncmp(line, "cmd=barrier_in", 14)) {
        reply(fd, "cmd=barrier_out\n");
    } else if (!strncmp(line, "cmd=finalize", 12)) {
        reply(fd, "cmd=finalize_ack\n");
    } else {
        fprintf(stderr, "fake launcher: unexpected request '%s'\n", line);
        exit(3);
    }
    return true;
}

static void launcher(int fd)
{
    char buf[8192];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            return;
        len += (size_t)r;
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            *nl = '\0';
            if (!serve_line(fd, buf))
                return;
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
        }
    }
}

/* ---- the process ------------------------------------------------------- */
static int process(int fd)
{
    char num[16];
    snprintf(num, sizeof num, "%d", fd);
    setenv("PMI_FD", num, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", is("nomap") ? "1" : "2", 1);
    unsetenv("PROUST_BOOT_FD");
    unsetenv("PROUST_BOOT");
    proust__boot_t b;
    int rc = proust__boot_open(&b);
    bool good = is("ok") || is("nomap");
    if (!good) {
        if (rc == PROUST_OK) {
            fprintf(stderr, "scenario %s: the bootstrap started anyway\n", scenario);
            return 1;
        }
        printf("scenario %s: refused (%s), as it must be\n", scenario, proust_strerror(rc));
        return 0;
    }
    if (rc != PROUST_OK || b.rank != 0 || b.size != (is("nomap") ? 1 : 2) ||
        b.local_rank != 0 || b.local_size != b.size || strncmp(b.jobid, "pmi-kvs_fake_0", 14)) {
        fprintf(stderr, "scenario %s: open %d, rank %d/%d, local %d/%d, job %s\n", scenario, rc,
                b.rank, b.size, b.local_rank, b.local_size, b.jobid);
        return 1;
    }
    static unsigned char big[3000], back[3000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i * 7 + 1);
    if (b.ops->put(&b, "empty", "", 0) != PROUST_OK || b.ops->put(&b, "small", "hello", 5) ||
        b.ops->put(&b, "big", big, sizeof big) || b.ops->fence(&b) != PROUST_OK) {
        fprintf(stderr, "puts or fence failed\n");
        return 1;
    }
    size_t len = sizeof back;
    if (b.ops->get(&b, 0, "big", back, &len) != PROUST_OK || len != sizeof big ||
        memcmp(back, big, len) != 0) {
        fprintf(stderr, "the 3000-byte value came back wrong (%zu bytes)\n", len);
        return 1;
    }
    len = sizeof back;
    if (b.ops->get(&b, 0, "small", back, &len) != PROUST_OK || len != 5 || memcmp(back, "hello", 5)) {
        fprintf(stderr, "the small value came back wrong\n");
        return 1;
    }
    len = sizeof back;
    if (b.ops->get(&b, 0, "empty", back, &len) != PROUST_OK || len != 0) {
        fprintf(stderr, "the empty value came back wrong\n");
        return 1;
    }
    len = 10;
    if (b.ops->get(&b, 0, "big", back, &len) != PROUST_ERR_NOMEM) {
        fprintf(stderr, "a value larger than the buffer was not PROUST_ERR_NOMEM\n");
        return 1;
    }
    len = sizeof back;
    if (b.ops->get(&b, 0, "absent", back, &len) != PROUST_ERR_INVALID) {
        fprintf(stderr, "a missing key was not PROUST_ERR_INVALID\n");
        return 1;
    }
    proust__boot_close(&b);
    printf("scenario %s: ok\n", scenario);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pmi1_fake SCENARIO\n");
        return 2;
    }
    scenario = argv[1];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        alarm(20); /* a hang is a failure, not a CI time-out */
        int rc = process(sv[1]);
        fflush(stdout);
        _exit(rc);
    }
    close(sv[1]);
    launcher(sv[0]);
    close(sv[0]);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st)) {
        fprintf(stderr, "scenario %s: the process died of signal %d\n", scenario,
                WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return 1;
    }
    return WEXITSTATUS(st);
}
