/*
 * p2p_greq.c — generalized requests: the error codes of the application's
 * callbacks reach the caller (MPI 3.1 sec. 12.2), and the status the query
 * function fills is the one returned.
 *
 *  - query_fn's error: returned by MPI_Wait / MPI_Test, and by Waitall as
 *    MPI_ERR_IN_STATUS with that request's MPI_ERROR set;
 *  - free_fn's error: returned by the completion call and by
 *    MPI_Request_free;
 *  - cancel_fn's error: returned by MPI_Cancel; cancel_fn is told whether
 *    the request was completed already.
 */
#include "mpitest.h"

static int queries, frees, cancels, last_complete = -1;

static int q_ok(void *extra, MPI_Status *st)
{
    queries++;
    MPI_Status_set_elements(st, MPI_BYTE, *(int *)extra);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int q_bad(void *extra, MPI_Status *st)
{
    q_ok(extra, st);
    return MPI_ERR_BUFFER;
}

static int f_ok(void *extra)
{
    (void)extra;
    frees++;
    return MPI_SUCCESS;
}

static int f_bad(void *extra)
{
    (void)extra;
    frees++;
    return MPI_ERR_TAG;
}

static int c_ok(void *extra, int complete)
{
    (void)extra;
    cancels++;
    last_complete = complete;
    return MPI_SUCCESS;
}

static int c_bad(void *extra, int complete)
{
    c_ok(extra, complete);
    return MPI_ERR_COUNT;
}

static int class_of(int rc)
{
    int cls = -1;
    MPI_CHECK(MPI_Error_class(rc, &cls));
    return cls;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int bytes = 12;
    MPI_Request r;
    MPI_Status st;

    /* all well: the query's status comes back */
    MPI_CHECK(MPI_Grequest_start(q_ok, f_ok, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    MPI_CHECK(MPI_Wait(&r, &st));
    int count = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == 12 && r == MPI_REQUEST_NULL, "count %d", count);
    CHECK(queries == 1 && frees == 1, "queries %d frees %d", queries, frees);

    /* query_fn fails: Wait and Test return its error */
    MPI_CHECK(MPI_Grequest_start(q_bad, f_ok, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_BUFFER, "Wait after a failed query: %d", rc);
    CHECK(r == MPI_REQUEST_NULL && frees == 2, "the request was not freed");
    MPI_CHECK(MPI_Grequest_start(q_bad, f_ok, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    int flag = 0;
    rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && class_of(rc) == MPI_ERR_BUFFER, "Test after a failed query: %d", rc);

    /* free_fn fails: the completion call and Request_free return it */
    MPI_CHECK(MPI_Grequest_start(q_ok, f_bad, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_TAG, "Wait after a failed free: %d", rc);
    CHECK(r == MPI_REQUEST_NULL, "the request is still there");
    MPI_CHECK(MPI_Grequest_start(q_ok, f_bad, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    rc = MPI_Request_free(&r);
    CHECK(class_of(rc) == MPI_ERR_TAG, "Request_free after a failed free: %d", rc);

    /* cancel_fn: its error, and whether the request was complete */
    MPI_CHECK(MPI_Grequest_start(q_ok, f_ok, c_bad, &bytes, &r));
    rc = MPI_Cancel(&r);
    CHECK(class_of(rc) == MPI_ERR_COUNT, "Cancel with a failing cancel_fn: %d", rc);
    CHECK(last_complete == 0, "cancel_fn told complete = %d before completion", last_complete);
    MPI_CHECK(MPI_Grequest_complete(r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Grequest_start(q_ok, f_ok, c_ok, &bytes, &r));
    MPI_CHECK(MPI_Grequest_complete(r));
    MPI_CHECK(MPI_Cancel(&r));
    CHECK(last_complete == 1, "cancel_fn told complete = %d after completion", last_complete);
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* Waitall: MPI_ERR_IN_STATUS, the failed one's MPI_ERROR set */
    MPI_Request rr[3];
    MPI_Status sts[3];
    MPI_CHECK(MPI_Grequest_start(q_ok, f_ok, c_ok, &bytes, &rr[0]));
    MPI_CHECK(MPI_Grequest_start(q_bad, f_ok, c_ok, &bytes, &rr[1]));
    MPI_CHECK(MPI_Grequest_start(q_ok, f_bad, c_ok, &bytes, &rr[2]));
    for (int i = 0; i < 3; i++)
        MPI_CHECK(MPI_Grequest_complete(rr[i]));
    rc = MPI_Waitall(3, rr, sts);
    CHECK(class_of(rc) == MPI_ERR_IN_STATUS, "Waitall: %d", rc);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "status 0: %d", sts[0].MPI_ERROR);
    CHECK(class_of(sts[1].MPI_ERROR) == MPI_ERR_BUFFER, "status 1: %d", sts[1].MPI_ERROR);
    CHECK(class_of(sts[2].MPI_ERROR) == MPI_ERR_TAG, "status 2: %d", sts[2].MPI_ERROR);
    for (int i = 0; i < 3; i++)
        CHECK(rr[i] == MPI_REQUEST_NULL, "request %d left", i);

    MPI_CHECK(MPI_Finalize());
    printf("p2p_greq: OK\n");
    return 0;
}
