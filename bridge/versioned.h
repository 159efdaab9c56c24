/* SPDX-License-Identifier: MIT */
/* Internal: the size rule of clmem-bridge.h's versioned structs
 * (versioned.c). */
#ifndef CLMEM_VERSIONED_H
#define CLMEM_VERSIONED_H
#include "clmem.h"

#include <stddef.h>

/* clmem-bridge.h's size rule of a versioned struct: `info`
 * of `size` bytes, whose first version was `first_version` bytes and of
 * which this library knows `known` (its sizeof). CLMEM_ERR_INVALID_VALUE
 * for a size below the first version or absurdly large,
 * CLMEM_ERR_UNSUPPORTED for a non-zero byte past `known`; recorded, naming
 * `type`. */
clmem_status clmem__versioned_size_check(const void *info, size_t size, size_t first_version, size_t known,
                                         const char *type);
#endif
