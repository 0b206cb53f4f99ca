/*
 * pt2pt.c — the public point-to-point entry points: check the arguments,
 * build the request, hand it to the send or receive path.
 */
#include "core/cancel.h"
#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"
#include "core/wait.h"

static int check_session(const struct proust_session *s)
{
    return (s && atomic_load_explicit(&s->active, memory_order_relaxed)) ? PROUST_OK
                                                                        : PROUST_ERR_STATE;
}

static int post_send(struct proust_session *s, const void *buf, size_t len, int dest,
                     proust_tag_t tag, bool sync, bool blocking, proust_request_t **reqp)
{
    int rc = check_session(s);
    if (rc != PROUST_OK)
        return rc;
    if (!reqp || (!buf && len))
        return PROUST_ERR_INVALID;
    if (dest < 0 || dest >= s->size)
        return PROUST_ERR_RANK;
    struct proust_request *req = proust__request_alloc(s, PROUST__REQ_SEND);
    if (!req)
        return PROUST_ERR_NOMEM;
    req->peer = dest;
    req->tag = tag;
    req->nseg = 1;
    req->seg0.iov_base = (void *)buf;
    req->seg0.iov_len = len;
    req->segs = &req->seg0;
    req->total = len;
    req->waited = blocking;
    proust__send_post(s, req, sync, NULL);
    if (!blocking) /* we return to compute: the helper may push the data */
        proust__request_helped(s, req);
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}

int proust_isend(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag,
                 proust_request_t **req)
{
    return post_send(s, buf, len, dest, tag, false, false, req);
}

int proust_issend(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag,
                  proust_request_t **req)
{
    return post_send(s, buf, len, dest, tag, true, false, req);
}

static int check_recv(const struct proust_session *s, const void *buf, size_t len, int source)
{
    int rc = check_session(s);
    if (rc != PROUST_OK)
        return rc;
    if (!buf && len)
        return PROUST_ERR_INVALID;
    if (source != PROUST_ANY_SOURCE && (source < 0 || source >= s->size))
        return PROUST_ERR_RANK;
    return PROUST_OK;
}


int proust_irecv(proust_session_t *s, void *buf, size_t len, int source, proust_tag_t tag,
                 proust_tag_t mask, proust_request_t **reqp)
{
    int rc = check_recv(s, buf, len, source);
    if (rc != PROUST_OK)
        return rc;
    if (!reqp)
        return PROUST_ERR_INVALID;
    struct proust_request *req = proust__request_alloc(s, PROUST__REQ_RECV);
    if (!req)
        return PROUST_ERR_NOMEM;
    proust__recv_fill(req, buf, len, source, tag, mask);
    proust__recv_post(s, req, PROUST__POST_NONBLOCKING | PROUST__POST_MAY_OFFER);
    proust__request_helped(s, req);
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}

int proust_irecv_inline(proust_session_t *s, void *buf, size_t len, int source, proust_tag_t tag,
                        proust_tag_t mask, proust_request_t **reqp, proust_status_t *status)
{
    int rc = check_recv(s, buf, len, source);
    if (rc != PROUST_OK)
        return rc;
    if (!reqp || !status)
        return PROUST_ERR_INVALID;
    if (proust__request_reserve(s) != PROUST_OK)
        return PROUST_ERR_NOMEM;
    /* complete in the call, it never escapes it (as proust_recv's);
     * recv_post initialises it only if it is used */
    struct proust_request tmp;
    proust__recv_fill(&tmp, buf, len, source, tag, mask);
    struct proust_request *req =
        proust__recv_post_inline(s, &tmp, PROUST__POST_NONBLOCKING | PROUST__POST_MAY_OFFER);
    if (req)
        proust__request_helped(s, req);
    else
        *status = tmp.status;
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}

int proust_imrecv(proust_session_t *s, proust_message_t *msg, void *buf, size_t len,
                  proust_request_t **reqp)
{
    struct proust__inmsg *m = (struct proust__inmsg *)msg;
    if (!m || !reqp)
        return PROUST_ERR_INVALID;
    int rc = check_recv(s, buf, len, m->source);
    if (rc != PROUST_OK)
        return rc;
    struct proust_request *req = proust__request_alloc(s, PROUST__REQ_RECV);
    if (!req)
        return PROUST_ERR_NOMEM;
    proust__recv_fill(req, buf, len, m->source, m->tag, PROUST_TAG_MASK_FULL);
    proust__recv_post_message(s, req, m);
    proust__request_helped(s, req);
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}

/* An eager message sent from the caller's thread, with no request:
 * PROUST_ERR_BUSY when it would have to wait (rendezvous size, a rail that
 * sends only from its queue, a strategy that gathers before sending, or
 * chunks queued ahead of it, checked under the gate lock). */
static int send_now(struct proust_session *s, const void *buf, size_t len, int dest,
                    proust_tag_t tag)
{
    struct proust__gate *g = &s->gates[dest];
    if (len < g->rdv_threshold && g->rail->ops->try_send &&
        proust__gate_strategy(s, g->rail)->flush_on_submit)
        return proust__send_eager_now(s, g, buf, len, tag);
    return PROUST_ERR_BUSY;
}

int proust_try_send(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag)
{
    int rc = check_session(s);
    if (rc != PROUST_OK)
        return rc;
    if (!buf && len)
        return PROUST_ERR_INVALID;
    if (dest < 0 || dest >= s->size)
        return PROUST_ERR_RANK;
    return send_now(s, buf, len, dest, tag);
}

int proust_send(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag)
{
    /* an eager message that can leave at once needs no request */
    if (check_session(s) == PROUST_OK && (buf || !len) && dest >= 0 && dest < s->size) {
        int rc = send_now(s, buf, len, dest, tag);
        if (rc != PROUST_ERR_BUSY)
            return rc;
    }
    proust_request_t *req;
    int rc = post_send(s, buf, len, dest, tag, false, true, &req);
    return rc == PROUST_OK ? proust_wait(&req, NULL) : rc;
}

int proust_ssend(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag)
{
    proust_request_t *req;
    int rc = post_send(s, buf, len, dest, tag, true, true, &req);
    return rc == PROUST_OK ? proust_wait(&req, NULL) : rc;
}

int proust_recv(proust_session_t *s, void *buf, size_t len, int source, proust_tag_t tag,
                proust_tag_t mask, proust_status_t *status)
{
    int rc = check_recv(s, buf, len, source);
    if (rc != PROUST_OK)
        return rc;
    /* the request lives on this stack: nobody else can hold it, and the
     * engine lets go of it when it completes, before we return */
    struct proust_request req;
    proust__request_init(&req, s, PROUST__REQ_RECV);
    proust__recv_fill(&req, buf, len, source, tag, mask);
    req.waited = true;
    proust__recv_post(s, &req, 0);
    proust__wait_request(&req);
    proust__run_deferred();
    if (status)
        *status = req.status;
    return req.status.error;
}

int proust_cancel(proust_request_t *req)
{
    if (!req)
        return PROUST_ERR_INVALID;
    struct proust_session *s = req->session;
    if (req->kind == PROUST__REQ_SEND) {
        PROUST__COARSE_ENTER(&s->prog);
        int rc = proust__cancel_send(s, req);
        PROUST__COARSE_LEAVE(&s->prog);
        /* A send to ourselves: the answer is local work, so have it now,
         * as MPICH does. Programs read the status right after MPI_Cancel
         * (MPI_Request_get_status, then a receive if not cancelled: one
         * that would wait forever for a message the answer later took).
         * A progress thread may hold the poll flags meanwhile, so look for
         * the answer, not for events; 1 s bounds what cannot happen. */
        if (rc == PROUST_OK && req->peer == s->rank) {
            uint64_t t0 = proust__now_ns();
            while (!(atomic_load(&req->flags) & PROUST__RF_ANSWERED) &&
                   proust__now_ns() - t0 < 1000000000ull)
                if (proust__progress(s) == 0)
                    proust__cpu_relax();
        }
        proust__run_deferred();
        return rc;
    }
    if (req->kind != PROUST__REQ_RECV)
        return PROUST_ERR_BUSY;
    PROUST__COARSE_ENTER(&s->prog);
    /* an ANY_SOURCE receive may be bound to any gate's message: its
     * `where` is then written under that gate's stripe */
    proust__match_lock_source(s, req->peer);
    bool posted = req->where == PROUST__IN_POSTED;
    uint64_t revoke = 0;
    /* an offered receive: cancelled only if its sender had not started
     * writing into it (then it never will); otherwise it completes with
     * the data, as a matched receive does */
    if (posted && req->offer && !proust__offer_withdraw(s, req, &revoke))
        posted = false;
    if (posted) {
        proust__posted_remove(s, req);
        req->where = PROUST__IN_NONE;
        req->status.error = PROUST_ERR_CANCELED;
        req->status.source = req->peer;
        req->status.count = 0;
        proust__request_complete(req);
    }
    proust__match_unlock_source(s, req->peer);
    if (revoke) /* the sender may keep the offer for its next send: forget it */
        proust__send_control(s, req->peer, PROUST__CH_REVOKE, revoke, NULL, 0);
    PROUST__COARSE_LEAVE(&s->prog);
    proust__run_deferred();
    return posted ? PROUST_OK : PROUST_ERR_BUSY;
}
