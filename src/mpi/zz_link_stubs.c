/* TEMPORARY (removed before the submission): weak definitions of internal
 * functions whose files are being written, so that test programs link while
 * the library is assembled. Each one aborts if actually called. */
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define PM_STUB(ret, name, args)                                                   \
    __attribute__((weak)) ret name args                                            \
    {                                                                              \
        fprintf(stderr, "proust mpi: internal function %s not written yet\n", #name); \
        abort();                                                                   \
    }

__attribute__((weak)) struct pm_datatype pm_type_predef[PROUST_MPI_NUM_PREDEFINED_TYPES];
__attribute__((weak)) struct pm_comm *pm_comm_world;
__attribute__((weak)) struct pm_comm *pm_comm_self;

PM_STUB(struct pm_errhandler *, pm_errhandler_get, (MPI_Errhandler h))
PM_STUB(void, pm_errhandler_retain, (MPI_Errhandler h))
PM_STUB(void, pm_errhandler_release, (MPI_Errhandler h))
PM_STUB(void, pm_errhandler_init, (void))
PM_STUB(int, pm_type_check, (MPI_Datatype dt, struct pm_datatype **out))
PM_STUB(void, pm_type_retain, (struct pm_datatype *t))
PM_STUB(void, pm_type_release, (struct pm_datatype *t))
PM_STUB(void, pm_datatypes_init, (void))
PM_STUB(size_t, pm_type_pack, (const void *inbuf, MPI_Count count, const struct pm_datatype *t, size_t skip, void *out, size_t max))
PM_STUB(size_t, pm_type_unpack, (const void *in, size_t bytes, void *outbuf, MPI_Count count, const struct pm_datatype *t, size_t skip))
PM_STUB(MPI_Count, pm_type_elements, (const struct pm_datatype *t, MPI_Count bytes))
PM_STUB(struct pm_op *, pm_op_get, (MPI_Op h))
PM_STUB(int, pm_op_check, (MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *fname))
PM_STUB(int, pm_op_apply, (MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype dt))
PM_STUB(bool, pm_op_commutative, (MPI_Op op))
PM_STUB(void, pm_op_retain, (MPI_Op op))
PM_STUB(void, pm_op_release, (MPI_Op op))
PM_STUB(void, pm_ops_init, (void))
PM_STUB(struct pm_group *, pm_group_get, (MPI_Group h))
PM_STUB(struct pm_group *, pm_group_new, (int n, const int *world_ranks))
PM_STUB(void, pm_group_retain, (struct pm_group *g))
PM_STUB(void, pm_group_release, (struct pm_group *g))
PM_STUB(void, pm_groups_init, (void))
PM_STUB(struct pm_comm *, pm_comm_new, (struct pm_group *local, struct pm_group *remote, uint16_t context))
PM_STUB(void, pm_comm_retain, (struct pm_comm *c))
PM_STUB(void, pm_comm_release, (struct pm_comm *c))
PM_STUB(int, pm_context_alloc, (struct pm_comm *c, uint16_t *context))
PM_STUB(void, pm_context_free, (uint16_t context))
PM_STUB(void, pm_comms_init, (void))
PM_STUB(void, pm_comms_finalize, (void))
PM_STUB(int, pm_attrs_copy_comm, (struct pm_comm *from, struct pm_comm *to))
PM_STUB(int, pm_attrs_delete_comm, (struct pm_comm *c))
PM_STUB(int, pm_attrs_copy_type, (struct pm_datatype *from, struct pm_datatype *to))
PM_STUB(int, pm_attrs_delete_type, (struct pm_datatype *t))
PM_STUB(struct pm_sched *, pm_sched_create, (struct pm_comm *c))
PM_STUB(int, pm_sched_send, (struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt, int peer))
PM_STUB(int, pm_sched_recv, (struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer))
PM_STUB(int, pm_sched_send_local, (struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt, int peer))
PM_STUB(int, pm_sched_recv_local, (struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer))
PM_STUB(int, pm_sched_reduce, (struct pm_sched *s, const void *in, void *inout, MPI_Count count, MPI_Datatype dt, MPI_Op op))
PM_STUB(int, pm_sched_copy, (struct pm_sched *s, const void *src, MPI_Count scount, MPI_Datatype stype, void *dst, MPI_Count rcount, MPI_Datatype rtype))
PM_STUB(int, pm_sched_fence, (struct pm_sched *s))
PM_STUB(void *, pm_sched_scratch, (struct pm_sched *s, size_t bytes))
PM_STUB(int, pm_sched_start, (struct pm_sched *s, MPI_Request *request))
PM_STUB(int, pm_sched_run, (struct pm_sched *s))
PM_STUB(void, pm_sched_discard, (struct pm_sched *s))
PM_STUB(int, pm_coll_check_comm, (const char *fname, MPI_Comm comm, struct pm_comm **c))
PM_STUB(int, pm_coll_check_root, (const char *fname, struct pm_comm *c, int root))
PM_STUB(int, pm_coll_check_buf, (const char *fname, struct pm_comm *c, MPI_Count count, MPI_Datatype dt))
PM_STUB(int, pm_persistent_poll, (struct pm_request *r, int *flag, MPI_Status *st, bool progress))
PM_STUB(void, pm_persistent_complete, (struct pm_request *r))
PM_STUB(void, pm_persistent_free, (struct pm_request *r))
PM_STUB(bool, pm_persistent_active, (const struct pm_request *r))
