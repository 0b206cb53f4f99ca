#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/config.h"

int proust__log_level = PROUST_LOG_WARN;
int proust__log_rank = -1;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

void proust__log_init(void)
{
    const char *v = proust__config_str(PROUST_CFG_LOG_LEVEL);
    for (int i = 0; i <= PROUST_LOG_TRACE; i++) {
        if (strcasecmp(v, level_names[i]) == 0) {
            proust__log_level = i;
            return;
        }
    }
    proust__log_level = PROUST_LOG_WARN;
    proust__log_write(PROUST_LOG_WARN, __FILE__, __LINE__,
                      "PROUST_LOG_LEVEL=%s is not a level (error, warn, info, debug, trace)", v);
}

void proust__log_write(int level, const char *file, int line, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    /* One fprintf so lines from several threads do not interleave. */
    fprintf(stderr, "proust[%d] %s %s:%d: %s\n", proust__log_rank, level_names[level],
            base ? base + 1 : file, line, text);
}
