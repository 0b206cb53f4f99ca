/*
 * log.h — leveled logging, cheap when off (PROUST_LOG_LEVEL).
 * Messages go to stderr as "proust[rank] LEVEL file:line: text".
 */
#ifndef PROUST_LOG_H
#define PROUST_LOG_H

enum { PROUST_LOG_ERROR = 0, PROUST_LOG_WARN, PROUST_LOG_INFO, PROUST_LOG_DEBUG, PROUST_LOG_TRACE };

extern int proust__log_level;
extern int proust__log_rank;

void proust__log_init(void);
void proust__log_write(int level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define proust__log(level, ...)                                                                \
    do {                                                                                       \
        if ((level) <= proust__log_level)                                                      \
            proust__log_write((level), __FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)
#define PROUST_ERROR(...) proust__log(PROUST_LOG_ERROR, __VA_ARGS__)
#define PROUST_WARN(...) proust__log(PROUST_LOG_WARN, __VA_ARGS__)
#define PROUST_INFO(...) proust__log(PROUST_LOG_INFO, __VA_ARGS__)
#define PROUST_DEBUG(...) proust__log(PROUST_LOG_DEBUG, __VA_ARGS__)
#define PROUST_TRACE(...) proust__log(PROUST_LOG_TRACE, __VA_ARGS__)

#ifdef NDEBUG
#define proust__assert(cond) ((void)0)
#else
#include <assert.h>
#define proust__assert(cond) assert(cond)
#endif

#endif
