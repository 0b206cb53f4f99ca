/*
 * ofi_lib.c — libfabric, loaded when the ofi rail first opens. Linking it
 * cost every process about 0.2 s at start (the libraries of its providers:
 * verbs, psm, efa...), ofi rail or not; only five of its functions are
 * exported, the rest of its API is inline through each object's ops.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

struct ofi_lib proust__ofi;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = PROUST_ERR_NOT_SUPPORTED;

/* Settings of libfabric's providers that Proust needs, unless the user set
 * them: libfabric reads them when its first call loads the providers.
 * FI_OFI_RXM_EAGER_LIMIT: ofi_rxm (over tcp, whose receive buffers are
 * dynamic) sends each of our messages (OFI_BUF_SIZE at most) eagerly
 * rather than by rendezvous. A rendezvous that a dead peer left in rxm's
 * unexpected queue (libfabric 1.17) crashed the survivor's next fi_recv
 * on the closed connection; eagerly sent messages are whole when queued. */
static void set_provider_defaults(void)
{
    char value[32];
    snprintf(value, sizeof value, "%u", (unsigned)OFI_BUF_SIZE);
    (void)setenv("FI_OFI_RXM_EAGER_LIMIT", value, 0);
}

static void load(void)
{
    set_provider_defaults();
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        PROUST_WARN("ofi: libfabric is not installed here (%s)", dlerror());
        return;
    }
    *(void **)&proust__ofi.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&proust__ofi.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&proust__ofi.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&proust__ofi.fabric = dlsym(h, "fi_fabric");
    *(void **)&proust__ofi.strerror = dlsym(h, "fi_strerror");
    if (!proust__ofi.getinfo || !proust__ofi.freeinfo || !proust__ofi.dupinfo ||
        !proust__ofi.fabric || !proust__ofi.strerror) {
        PROUST_WARN("ofi: this libfabric lacks fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric "
                    "or fi_strerror");
        dlclose(h);
        return;
    }
    loaded = PROUST_OK; /* kept loaded for the process: providers keep threads */
}

int proust__ofi_load(void)
{
    pthread_once(&once, load);
    return loaded;
}
