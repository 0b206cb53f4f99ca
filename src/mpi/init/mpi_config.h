/*
 * mpi_config.h — the PROUST_* variables that only Proust MPI reads, in a
 * table of its own (the engine's are in src/common/config.h). libmpi
 * registers it with the engine (proust_config_register, mpi_config.c)
 * before it starts the engine or answers MPI_T, so MPI_T lists these
 * variables with the engine's as control variables and proust_init's
 * warning about unknown PROUST_* variables knows them. proust-info, which
 * does not load libmpi, registers the same table and prints it: the two
 * define PM_CONFIG_TABLE (after including proust.h) to get the table.
 * docs/CONFIG.md documents them.
 */
#ifndef PROUST_MPI_CONFIG_H
#define PROUST_MPI_CONFIG_H

typedef enum { PM_CFG_RMA_SHM, PM_CFG_COLL_CROWDED, PM_CFG_RMA_NIC, PM_CFG_COUNT } pm_config_id_t;

/* Register the table with the engine; again does nothing. */
void pm_config_register(void);
/* The value in force: the environment's, else the default. */
const char *pm_config_str(pm_config_id_t id);

#endif

/* (outside the include guard: mpi_impl.h includes this header without it) */
#if defined(PM_CONFIG_TABLE) && !defined(PROUST_MPI_CONFIG_TABLE)
#define PROUST_MPI_CONFIG_TABLE
/* Indexed by pm_config_id_t: name, default, what it does. */
static const proust_config_var_t pm_config_vars[PM_CFG_COUNT] = {
    [PM_CFG_RMA_SHM] = {"PROUST_RMA_SHM", "on",
                        "on: the memory of an MPI window made by MPI_Win_allocate or "
                        "MPI_Win_allocate_shared whose processes all run on this host is "
                        "shared, and puts, gets and accumulates are loads and stores by the "
                        "origin; a window of MPI_Win_create there takes its locks in shared "
                        "memory; off: messages that the target applies"},
    [PM_CFG_COLL_CROWDED] = {"PROUST_COLL_CROWDED", "auto",
                             "MPI collectives of large messages for nodes with more ranks "
                             "than cores, where every step waits for partners the others "
                             "deschedule: on = fewer, larger steps (MPI_Bcast of 128 KiB and "
                             "more by binomial tree rather than scatter + ring allgather); "
                             "auto = on when a node of the job has more ranks than cores; "
                             "off. Agreed by all processes at init (on if any asks for it)"},
    [PM_CFG_RMA_NIC] = {"PROUST_RMA_NIC", "auto",
                        "MPI_Put and MPI_Get to a rank on another host, where a rail offers "
                        "one-sided access (ofi): the window's memory is registered, and they "
                        "are remote writes and reads the target's MPI takes no part in. on: "
                        "always; auto: where the NIC moves the bytes, and where the provider "
                        "does it in software (tcp) for 64 KiB - 1 MiB, where that is faster "
                        "than messages; off: messages that the target applies"},
};
#endif
