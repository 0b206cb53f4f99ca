/*
 * shm_cross.c — copies between this process and a peer's memory
 * (process_vm_readv / process_vm_writev), for the shm rail's gets and
 * writes.
 *
 * The kernel copies with `rep movsb`, which on AMD Zen processors runs
 * several times slower when the destination sits 1-31 bytes past the
 * source modulo 64 (copy.h; docs/PERFORMANCE.md, "Figures behind the code"). Such copies go through
 * a bounce buffer of this thread placed at the remote address's offset
 * modulo 64, a piece at a time so that it stays in cache: the kernel copy
 * then runs at full speed, and proust_copy moves the piece in or out at
 * cache speed: the two together are about three times faster.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "proust.h"
#include "drivers/shm_state.h"

#define BOUNCE_PIECE ((size_t)128 << 10) /* fits the L2 with room to spare */
#define BOUNCE_MIN ((size_t)4096)        /* below, the two copies cost more */

static _Thread_local unsigned char *bounce;
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;
static bool bounce_key_ok;

static void bounce_key_init(void)
{
    bounce_key_ok = pthread_key_create(&bounce_key, free) == 0;
}

/* This thread's bounce buffer (freed when the thread exits), or NULL. */
static unsigned char *bounce_buffer(void)
{
    if (bounce)
        return bounce;
    pthread_once(&bounce_once, bounce_key_init);
    if (!bounce_key_ok)
        return NULL;
    unsigned char *b = aligned_alloc(64, BOUNCE_PIECE + 64);
    if (b && pthread_setspecific(bounce_key, b) != 0) {
        free(b);
        b = NULL;
    }
    return bounce = b;
}

/* One copy of len bytes, repeated over partial transfers: 0 or an errno. */
static int vm_copy(pid_t pid, unsigned char *local, uintptr_t remote, size_t len, bool to_peer)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {local + done, len - done};
        struct iovec r = {(void *)(remote + done), len - done};
        ssize_t n = to_peer ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return EIO;
        done += (size_t)n;
    }
    return 0;
}

int proust__shm_cross_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool to_peer,
                           size_t *copied)
{
    unsigned char *l = local;
    /* the kernel's destination and source: the slow offset? */
    bool slow = to_peer ? proust_copy_offset_slow((void *)(uintptr_t)remote, l)
                        : proust_copy_offset_slow(l, (void *)(uintptr_t)remote);
    unsigned char *b = slow && len >= BOUNCE_MIN ? bounce_buffer() : NULL;
    *copied = 0;
    if (!b) {
        int err = vm_copy(pid, l, (uintptr_t)remote, len, to_peer);
        if (!err)
            *copied = len;
        return err;
    }
    unsigned char *at = b + (remote & 63u); /* at - remote: 0 modulo 64 */
    while (*copied < len) {
        size_t n = len - *copied < BOUNCE_PIECE ? len - *copied : BOUNCE_PIECE;
        uintptr_t r = (uintptr_t)remote + *copied;
        int err;
        if (to_peer) {
            proust_copy(at, l + *copied, n);
            err = vm_copy(pid, at, r, n, true);
        } else if (!(err = vm_copy(pid, at, r, n, false))) {
            proust_copy(l + *copied, at, n);
        }
        if (err)
            return err;
        *copied += n;
    }
    return 0;
}
