/*
 * mpi_config.c — Proust MPI's own PROUST_* variables (mpi_config.h).
 */
#include <stdlib.h>

#include "mpi_impl.h"
#define PM_CONFIG_TABLE
#include "mpi_config.h"

void pm_config_register(void)
{
    proust_config_register(pm_config_vars, PM_CFG_COUNT); /* cannot fail: a valid table */
}

const char *pm_config_str(pm_config_id_t id)
{
    const char *v = getenv(pm_config_vars[id].name);
    return v ? v : pm_config_vars[id].def;
}
