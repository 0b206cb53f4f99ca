/*
 * handle_conv.c — MPI_*_c2f / MPI_*_f2c (MPI-3.1 §17.2.4). Handles are ints
 * in C as in Fortran, so a conversion is the identity; f2c of a value that
 * names no live object of that kind returns the null handle, as the
 * standard asks for an invalid Fortran handle.
 *
 * These may be called before MPI_Init: an empty table just finds nothing.
 */
#include "win.h"

#define PM_C2F(Name, CType)                                                        \
    MPI_Fint PMPI_##Name##_c2f(CType h)                                            \
    {                                                                              \
        return (MPI_Fint)h;                                                        \
    }                                                                              \
    PM_WEAK(Name##_c2f)

#define PM_F2C(Name, CType, valid)                                                 \
    CType PMPI_##Name##_f2c(MPI_Fint f)                                            \
    {                                                                              \
        CType h = (CType)f;                                                        \
        return (valid) ? h : (CType)0;                                             \
    }                                                                              \
    PM_WEAK(Name##_f2c)

static bool op_valid(MPI_Op h)
{
    unsigned idx = (unsigned)h & PROUST_MPI_INDEX_MASK;
    if ((h & PROUST_MPI_KIND_MASK) == PROUST_MPI_KIND_OP && idx >= 1 &&
        idx < PROUST_MPI_NUM_PREDEFINED_OPS)
        return true;
    return pm_op_get(h) != NULL;
}

static bool errh_valid(MPI_Errhandler h)
{
    return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT ||
           pm_table_get(&pm_errh_table, h) != NULL;
}

PM_C2F(Comm, MPI_Comm)
PM_F2C(Comm, MPI_Comm, pm_comm_get(h) != NULL)
PM_C2F(Type, MPI_Datatype)
PM_F2C(Type, MPI_Datatype, pm_type_get(h) != NULL)
PM_C2F(Group, MPI_Group)
PM_F2C(Group, MPI_Group, h == MPI_GROUP_EMPTY || pm_table_get(&pm_group_table, h) != NULL)
PM_C2F(Op, MPI_Op)
PM_F2C(Op, MPI_Op, op_valid(h))
PM_C2F(Request, MPI_Request)
PM_F2C(Request, MPI_Request, pm_request_get(h) != NULL)
PM_C2F(Info, MPI_Info)
PM_F2C(Info, MPI_Info, pm_info_valid(h))
PM_C2F(Errhandler, MPI_Errhandler)
PM_F2C(Errhandler, MPI_Errhandler, errh_valid(h))
PM_C2F(Message, MPI_Message)
PM_F2C(Message, MPI_Message,
       h == MPI_MESSAGE_NO_PROC || pm_table_get(&pm_message_table, h) != NULL)
PM_C2F(Win, MPI_Win)
PM_F2C(Win, MPI_Win, pm_win_get(h) != NULL)
PM_C2F(Session, MPI_Session)
PM_F2C(Session, MPI_Session, pm_table_get(&pm_session_table, h) != NULL)
