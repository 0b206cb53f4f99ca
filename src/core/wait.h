/*
 * wait.h — progress passes, the progress engine's upcalls and waiting for a
 * request (wait.c); the requests the rendezvous helper advances
 * (helped.c).
 */
#ifndef PROUST_CORE_WAIT_H
#define PROUST_CORE_WAIT_H

#include <stdbool.h>

#include "progress/progress.h"

struct proust_session;
struct proust_request;

/* ---- progress (wait.c) ------------------------------------------------------ */
/* What the progress engine calls in core (its upcalls: a pass, deferred
 * work, peer checks, idle work). */
extern const struct proust__progress_upcalls proust__core_upcalls;
/* Make progress until req is finished (does not release it). */
void proust__wait_request(struct proust_request *req);
/* One pass over rails and pending gates; returns events seen. */
int proust__progress(struct proust_session *s);
/* Ask the launcher and the rails whether peers died. */
void proust__check_peers(struct proust_session *s);
/* The same, as a rail upcall (drivers/driver.h check_peers). */
void proust__rail_check_peers(void *engine);

/* ---- the rendezvous helper's requests (helped.c) ---------------------------- */
/* Does the helper serve transfers with this peer (a rail without gets)? */
bool proust__helper_serves_peer(const struct proust_session *s, int peer);
/* A nonblocking post of req by an application thread: the helper counts
 * and advances it if it serves it. */
void proust__request_helped(struct proust_session *s, struct proust_request *req);
/* Clear req's helped flag; whoever clears it uncounts it (a completion,
 * or a post that found the request done already). */
void proust__request_unhelp(struct proust_request *req);

#endif
