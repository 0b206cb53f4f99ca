/*
 * helped.c — which requests the rendezvous helper (progress/helper.c)
 * advances: nonblocking transfers of PROUST__KICK_BYTES and more with a
 * peer on a rail where our cpu moves the data (no get: tcp). A request is
 * counted (progress's `helped`) while its RF_HELPED flag is set; whoever
 * clears the flag uncounts it.
 */
#include "core/gate.h"
#include "core/request.h"
#include "core/session.h"
#include "core/wait.h"

bool proust__helper_serves_peer(const struct proust_session *s, int peer)
{
    if (peer < 0 || peer >= s->size || peer == s->rank)
        return false;
    const proust__rail_t *r = s->gates[peer].rail;
    return r && !(r->caps.flags & PROUST__RAIL_CAN_GET);
}

void proust__request_helped(struct proust_session *s, struct proust_request *req)
{
    struct proust__progress *p = &s->prog;
    if (!p->helper || req->total < PROUST__KICK_BYTES || !proust__helper_serves_peer(s, req->peer))
        return;
    /* count first: a completion that sees the flag must find it counted */
    proust__helped_add(p);
    if (atomic_fetch_or(&req->flags, PROUST__RF_HELPED) & PROUST__RF_DONE) {
        proust__request_unhelp(req); /* completed already: nothing to help */
        return;
    }
    proust__helper_posted(p);
}

void proust__request_unhelp(struct proust_request *req)
{
    if (!(atomic_fetch_and_explicit(&req->flags, ~PROUST__RF_HELPED, memory_order_seq_cst) &
          PROUST__RF_HELPED))
        return; /* someone else cleared it, and uncounted it */
    proust__helped_remove(&req->session->prog);
}
