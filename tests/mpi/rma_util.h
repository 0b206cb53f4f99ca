/*
 * rma_util.h — helpers shared by the one-sided communication tests
 * (tests/mpi/rma_*.c), on top of mpitest.h.
 *
 * rma_watchdog(name, s): a job that makes no progress for s seconds (a
 * passive-target operation nobody serves, an epoch that never opens) exits
 * with a message instead of running into the CTest timeout.
 *
 * Reading or writing one's own window memory with loads and stores while
 * other processes may access it is done inside an epoch on oneself, as
 * MPI-3.1 11.7 asks for both memory models: rma_local_begin/end lock the own
 * window (shared) and call MPI_Win_sync, so the tests are right for
 * MPI_WIN_SEPARATE too.
 */
#ifndef PROUST_RMA_UTIL_H
#define PROUST_RMA_UTIL_H

#include <signal.h>
#include <unistd.h>

#include "mpitest.h"

static const char *rma_watchdog_name = "rma";

static void rma_watchdog_fire(int sig)
{
    (void)sig;
    char msg[160];
    int n = snprintf(msg, sizeof msg, "%s: no progress for too long (an RMA call that hangs?)\n",
                     rma_watchdog_name);
    if (n > 0)
        (void)!write(2, msg, (size_t)n);
    _exit(3);
}

static inline void rma_watchdog(const char *name, unsigned seconds)
{
    rma_watchdog_name = name;
    signal(SIGALRM, rma_watchdog_fire);
    alarm(seconds);
}

/* Ring neighbours in `comm`. */
static inline int rma_right(int rank, int size) { return (rank + 1) % size; }
static inline int rma_left(int rank, int size) { return (rank + size - 1) % size; }

/* Open / close a passive-target epoch on the own window around local loads
 * and stores (see above). */
static inline void rma_local_begin(MPI_Win win, int self)
{
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, self, 0, win));
    MPI_CHECK(MPI_Win_sync(win));
}
static inline void rma_local_end(MPI_Win win, int self)
{
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Win_unlock(self, win));
}

/* Check that `call` fails with error class `a` or `b` (where MPICH and the
 * standard's table name different classes for one mistake). */
#define EXPECT_CLASS2(call, a, b)                                                  \
    do {                                                                           \
        int rma_ec_rc_ = (call), rma_ec_cls_ = 0;                                  \
        if (rma_ec_rc_ != MPI_SUCCESS)                                             \
            MPI_Error_class(rma_ec_rc_, &rma_ec_cls_);                             \
        CHECK(rma_ec_rc_ != MPI_SUCCESS && (rma_ec_cls_ == (a) || rma_ec_cls_ == (b)), \
              "%s returned %d (class %d), expected class %s (%d) or %s (%d)", #call, \
              rma_ec_rc_, rma_ec_cls_, #a, (a), #b, (b));                          \
    } while (0)

#endif /* PROUST_RMA_UTIL_H */
