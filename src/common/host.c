/*
 * host.c — this host's identity (host.h).
 */
#include "common/host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void proust__host_identity(char *out, size_t len)
{
    char boot_id[64] = "unknown";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot_id, sizeof boot_id, f))
            strcpy(boot_id, "unknown");
        boot_id[strcspn(boot_id, "\n")] = '\0';
        fclose(f);
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(out, len, "%s/%s", boot_id, host);
}
