/*
 * host.h — what tells this host from another: the kernel's boot id and the
 * host name (a network namespace built as a test host has its own name:
 * scripts/testcluster.sh). Rails compare it to decide what is local.
 */
#ifndef PROUST_COMMON_HOST_H
#define PROUST_COMMON_HOST_H

#include <stddef.h>

#define PROUST__HOST_ID_LEN 128

/* "<boot id>/<host name>" into out (len bytes). */
void proust__host_identity(char *out, size_t len);

#endif
