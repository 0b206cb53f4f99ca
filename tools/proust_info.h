/* proust-info's parts. */
#ifndef PROUST_INFO_H
#define PROUST_INFO_H

#include "boot/boot.h"
#include "drivers/driver.h"

const struct proust__rail_ops *proust__rail_find(const char *name);
int proust__rail_apply_profile(proust__rail_t *rail);

/* proust-info --placement [options] (proust_info_placement.c) */
int proust_info_placement(int argc, char **argv);

#endif
