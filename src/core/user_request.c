/*
 * user_request.c — the public side of event sources: registering one, and
 * the requests a source completes (proust_request_create / _complete).
 * The sources themselves, their polling and their pending lists, are the
 * progress engine's (progress/ptask.c); the requests are core's.
 */
#include "core/request.h"
#include "core/session.h"

int proust_ptask_register(proust_session_t *s, const struct proust_ptask_desc *desc,
                          proust_ptask_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    return proust__ptask_register(&s->prog, desc, out);
}

int proust_progress_info(const proust_session_t *s, proust_progress_info_t *info)
{
    if (!s)
        return PROUST_ERR_STATE;
    if (!info)
        return PROUST_ERR_INVALID;
    proust__progress_describe(&s->prog, info);
    return PROUST_OK;
}

int proust_request_create(proust_session_t *s, proust_ptask_t *t, void *user,
                          proust_request_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!out || (t && !proust__ptask_usable(&s->prog, t)))
        return PROUST_ERR_INVALID;
    struct proust_request *req = proust__request_alloc(s, PROUST__REQ_USER);
    if (!req)
        return PROUST_ERR_NOMEM;
    req->user_data = user;
    req->ptask = t;
    req->segs = &req->seg0;
    req->seg0.iov_base = NULL;
    req->seg0.iov_len = 0;
    req->nseg = 0;
    req->total = 0;
    req->peer = PROUST_ANY_SOURCE;
    atomic_store_explicit(&req->pending, 1, memory_order_relaxed);
    if (t) {
        req->pending_on.req = req;
        req->where = PROUST__IN_POSTED;
        proust__ptask_pend(t, &req->pending_on);
    }
    *out = req;
    return PROUST_OK;
}

void *proust_request_user_data(const proust_request_t *req)
{
    return req && req->kind == PROUST__REQ_USER ? req->user_data : NULL;
}

int proust_request_complete(proust_request_t *req, int status)
{
    if (!req)
        return PROUST_ERR_INVALID;
    if (req->kind != PROUST__REQ_USER)
        return PROUST_ERR_INVALID;
    if (atomic_exchange(&req->pending, 0) == 0)
        return PROUST_ERR_STATE; /* completed already */
    if (req->ptask) {
        proust__ptask_unpend(req->ptask, &req->pending_on);
        req->where = PROUST__IN_NONE;
    }
    req->status.source = req->session->rank;
    req->status.error = status;
    proust__request_complete(req);
    if (!proust__ptask_polling())
        proust__run_deferred(); /* not inside a progress pass: callbacks now */
    return PROUST_OK;
}
