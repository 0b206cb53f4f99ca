/*
 * mpi_config.c — Proust MPI's own PROUST_* variables (mpi_config.h).
 */
#include <stdlib.h>

#include "mpi_impl.h"

static const proust_config_var_t pm_config_table[PM_CFG_COUNT] = {
    PM_CONFIG_LIST(PM_CONFIG_ROW)
};

void pm_config_register(void)
{
    proust_config_register(pm_config_table, PM_CFG_COUNT); /* cannot fail: a valid table */
}

const char *pm_config_str(pm_config_id_t id)
{
    const char *v = getenv(pm_config_table[id].name);
    return v ? v : pm_config_table[id].def;
}
