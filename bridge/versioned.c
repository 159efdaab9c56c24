/* SPDX-License-Identifier: MIT */
/* The size rule of the versioned structs, in a file of its own because two
 * neighbours use it, bridge.c (clmem_bridge_info) and frame-ring.c
 * (clmem_bridge_ring_info), and both must say the same thing:
 * clmem-bridge.h's "Versioned structs" paragraph is its specification. */
#include "config.h"
#include "error-private.h"
#include "versioned.h"

/* No struct of this library will ever be this large: a size above it is an
 * uninitialised field, and reading that far could fault. */
#define VERSIONED_MAX_SIZE 4096u

clmem_status clmem__versioned_size_check(const void *info, size_t size, size_t first_version, size_t known,
                                         const char *type)
{
    const unsigned char *bytes = info;

    if (size < first_version)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "info->size is %zu, less than the first version of %s (%zu bytes); set it to "
                           "sizeof(%s) (%zu here).",
                           size, type, first_version, type, known);
    if (size > VERSIONED_MAX_SIZE)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "info->size is %zu, larger than any %s can be (%u): set it to sizeof(%s).", size, type,
                           VERSIONED_MAX_SIZE, type);
    /* A newer header's fields start at or past this library's sizeof (the
     * header promises never to use the tail padding), so only bytes past it
     * ask for what this library does not know. */
    for (size_t i = known; i < size; i++)
        if (bytes[i] != 0)
            return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                               "info->size is %zu, from a newer header than this library's %s (%zu bytes), and "
                               "byte %zu past it is not zero: it sets a field this library does not know.",
                               size, type, known, i);
    return CLMEM_OK;
}
