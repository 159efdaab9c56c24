/* SPDX-License-Identifier: MIT */
/* clmem_version: the package version the library was built as. */
#include "config.h"
#include "clmem.h"
#include "export.h"

CLMEM_EXPORT const char *clmem_version(void)
{
    return PACKAGE_VERSION;
}
