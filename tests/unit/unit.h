/* Minimal assertion helpers for single-process unit tests: print both
 * values and where, then fail the process. */
#ifndef PROUST_UNIT_H
#define PROUST_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPECT_EQ(a, b)                                                                        \
    do {                                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                                    \
        if (a_ != b_) {                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a,  \
                    #b, a_, b_);                                                               \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

#define EXPECT_TRUE(c)                                                                         \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #c);                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

#endif
