/*
 * bsend.c — buffered mode: MPI_Buffer_attach/detach, MPI_Bsend, MPI_Ibsend.
 *
 * A buffered send copies (packs) the message into the attached buffer and
 * sends it from there with a plain engine send, so it completes locally at
 * once. Each message takes its packed size plus MPI_BSEND_OVERHEAD of the
 * buffer (the accounting the standard tells users to size buffers with);
 * the bookkeeping itself lives outside the user's buffer, so its alignment
 * does not matter. Space is given back by the engine's completion callback
 * when the send has left; MPI_Buffer_detach waits for that to happen to
 * every message.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p2p.h"
#include "common/copy.h"

/* One message in the buffer: [off, off + span) is taken. */
struct bseg {
    size_t off, span;
    struct bseg *prev, *next;
};

/* The attached buffer; segments sorted by offset. */
static pthread_mutex_t bs_lock = PTHREAD_MUTEX_INITIALIZER;
static char *bs_base;
static size_t bs_size;
static size_t bs_used;
static bool bs_attached;
static bool bs_detaching;
static struct bseg *bs_head;

void pm_p2p_backoff(unsigned *idle)
{
    unsigned n = ++*idle;
    if (n < 64)
        return; /* messages usually arrive within a few polls */
    if (n < 4096) {
        sched_yield(); /* the peer we wait for may need this core */
        return;
    }
    struct timespec nap = {0, 50000};
    nanosleep(&nap, NULL);
}

/* First fit. Called with bs_lock held. */
static bool reserve(struct bseg *s, size_t span)
{
    size_t pos = 0;
    struct bseg *prev = NULL, *it = bs_head;
    for (; it; prev = it, it = it->next) {
        if (it->off - pos >= span)
            break;
        pos = it->off + it->span;
    }
    if (!it && (pos > bs_size || bs_size - pos < span))
        return false;
    s->off = pos;
    s->span = span;
    s->prev = prev;
    s->next = it;
    if (prev)
        prev->next = s;
    else
        bs_head = s;
    if (it)
        it->prev = s;
    bs_used += span;
    return true;
}

static void release(struct bseg *s)
{
    pthread_mutex_lock(&bs_lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        bs_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    bs_used -= s->span;
    pthread_mutex_unlock(&bs_lock);
    free(s);
}

/* The engine's completion callback of a buffered message: its space is
 * free again. A send that failed (dead peer) has nobody left to tell. */
static void bsend_done(proust_request_t *req, const proust_status_t *status, void *arg)
{
    release((struct bseg *)arg);
}

static int done_request(struct pm_comm *c, MPI_Comm comm, const char *fname,
                        struct pm_request **out)
{
    struct pm_request *r = pm_request_new(PM_REQ_DONE, c);
    if (!r)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory for the request", fname);
    pm_status_empty(&r->status);
    pm_request_set_done(r, MPI_SUCCESS);
    *out = r;
    return MPI_SUCCESS;
}

int pm_bsend_start(const char *fname, MPI_Comm comm, struct pm_comm *c, const void *buf,
                   MPI_Count count, struct pm_datatype *t, int dest, int tag,
                   struct pm_request **out)
{
    if (dest == MPI_PROC_NULL)
        return out ? done_request(c, comm, fname, out) : MPI_SUCCESS;
    size_t bytes = (size_t)count * (size_t)t->size;
    size_t span = bytes + MPI_BSEND_OVERHEAD;
    struct bseg *s = malloc(sizeof *s);
    if (!s)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    char *data = NULL;
    for (int tries = 0;; tries++) {
        pthread_mutex_lock(&bs_lock);
        if (!bs_attached || bs_detaching) {
            pthread_mutex_unlock(&bs_lock);
            free(s);
            return pm_error(comm, MPI_ERR_BUFFER,
                            "%s: no buffer attached (MPI_Buffer_attach) for a buffered "
                            "send of %zu bytes",
                            fname, bytes);
        }
        bool ok = reserve(s, span);
        bool busy = bs_head != NULL;
        size_t size = bs_size, used = bs_used;
        if (ok)
            data = bs_base + s->off;
        pthread_mutex_unlock(&bs_lock);
        if (ok)
            break;
        /* Sends that already left free their space from the engine's
         * progress: give them a few chances before refusing. */
        if (!busy || tries >= 64) {
            free(s);
            return pm_error(comm, MPI_ERR_BUFFER,
                            "%s: the attached buffer (%zu bytes, %zu in use by pending "
                            "buffered sends) has no room for a message of %zu bytes + "
                            "MPI_BSEND_OVERHEAD (%d)",
                            fname, size, used, bytes, MPI_BSEND_OVERHEAD);
        }
        proust_progress(pm_session);
    }
    if (bytes) {
        if (t->contiguous)
            proust__copy(data, (const char *)buf + t->true_lb, bytes);
        else
            pm_type_pack(buf, count, t, 0, data, bytes);
    }
    proust_request_t *preq = NULL;
    proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
    int prc = proust_isend(pm_session, data, bytes, pm_comm_peer(c, dest), ptag, &preq);
    if (prc != PROUST_OK) {
        release(s);
        return pm_error(comm, pm_error_from_proust(prc), "%s: sending %zu bytes to rank %d: %s",
                        fname, bytes, dest, proust_strerror(prc));
    }
    /* The callback gives the space back (at once if the send is done). */
    if (proust_request_monitor(preq, bsend_done, s) != PROUST_OK) {
        proust_wait(&preq, NULL);
        release(s);
    } else {
        proust_request_free(&preq);
    }
    return out ? done_request(c, comm, fname, out) : MPI_SUCCESS;
}

static int attach(const char *fn, void *buffer, MPI_Count size)
{
    if (size < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: negative size %lld", fn,
                        (long long)size);
    if (!buffer && size > 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_BUFFER, "%s: NULL buffer of %lld bytes", fn,
                        (long long)size);
    pthread_mutex_lock(&bs_lock);
    if (bs_attached) {
        size_t old = bs_size;
        pthread_mutex_unlock(&bs_lock);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_BUFFER,
                        "%s: a buffer (%zu bytes) is already attached; detach it first", fn,
                        old);
    }
    bs_base = buffer;
    bs_size = (size_t)size;
    bs_used = 0;
    bs_attached = true;
    pthread_mutex_unlock(&bs_lock);
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    PM_CHECK_INIT("MPI_Buffer_attach");
    return attach("MPI_Buffer_attach", buffer, size);
}
PM_WEAK(Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    PM_CHECK_INIT("MPI_Buffer_attach_c");
    return attach("MPI_Buffer_attach_c", buffer, size);
}
PM_WEAK(Buffer_attach_c)

/* `buffer_addr` is really a void ** (the standard's C binding says void *). */
static int detach(const char *fn, void *buffer_addr, size_t *size)
{
    if (!buffer_addr)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: buffer_addr is NULL", fn);
    pthread_mutex_lock(&bs_lock);
    if (!bs_attached) {
        pthread_mutex_unlock(&bs_lock);
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    if (bs_detaching) {
        pthread_mutex_unlock(&bs_lock);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_BUFFER,
                        "%s: another thread is detaching the buffer", fn);
    }
    bs_detaching = true; /* new buffered sends fail from here on */
    pthread_mutex_unlock(&bs_lock);
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&bs_lock);
        bool empty = bs_head == NULL;
        pthread_mutex_unlock(&bs_lock);
        if (empty)
            break;
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
    }
    pthread_mutex_lock(&bs_lock);
    *(void **)buffer_addr = bs_base;
    *size = bs_size;
    bs_base = NULL;
    bs_size = 0;
    bs_attached = false;
    bs_detaching = false;
    pthread_mutex_unlock(&bs_lock);
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    PM_CHECK_INIT("MPI_Buffer_detach");
    if (!size)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach: size is NULL");
    size_t n = 0;
    int rc = detach("MPI_Buffer_detach", buffer_addr, &n);
    if (rc == MPI_SUCCESS) /* attached with MPI_Buffer_attach_c: too big for an int */
        *size = pm_int_or_undefined((MPI_Count)n);
    return rc;
}
PM_WEAK(Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    PM_CHECK_INIT("MPI_Buffer_detach_c");
    if (!size)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_detach_c: size is NULL");
    size_t n = 0;
    int rc = detach("MPI_Buffer_detach_c", buffer_addr, &n);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)n;
    return rc;
}
PM_WEAK(Buffer_detach_c)

static int bsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request *request, bool nonblocking)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t = NULL;
    int rc = pm_check_send(fn, comm, c, count, datatype, dest, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!nonblocking)
        return pm_bsend_start(fn, comm, c, buf, count, t, dest, tag, NULL);
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    struct pm_request *r = NULL;
    rc = pm_bsend_start(fn, comm, c, buf, count, t, dest, tag, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Bsend");
    return bsend("MPI_Bsend", buf, count, datatype, dest, tag, comm, NULL, false);
}
PM_WEAK(Bsend)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Bsend_c");
    return bsend("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, NULL, false);
}
PM_WEAK(Bsend_c)

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Ibsend");
    return bsend("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request, true);
}
PM_WEAK(Ibsend)

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Ibsend_c");
    return bsend("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, request, true);
}
PM_WEAK(Ibsend_c)
