/* SPDX-License-Identifier: MIT */
/* Internal: the sentences that more than one of libclmem-bridge's checks
 * write, each written here once. Durations are lib/error-private.h's
 * clmem__duration(); lib/error-private.h also says how a sentence gets the public call's name. */
#ifndef CLMEM_BRIDGE_FAIL_H
#define CLMEM_BRIDGE_FAIL_H
#include "error-private.h"

#include <vulkan/vulkan.h>

#include <stdint.h>

/* A pointer argument the call needs is NULL; `argument` is its name. */
static inline clmem_status fail_null(const char *argument)
{
    return clmem__fail(CLMEM_ERR_NULL_POINTER, "The %s argument is NULL.", argument);
}

/* A pointer field of the call's info struct is NULL; `field` is its name. */
static inline clmem_status fail_null_info(const char *field)
{
    return clmem__fail(CLMEM_ERR_NULL_POINTER, "info->%s is NULL.", field);
}

/* A size the call needs non-zero is zero; `what` names it ("size"). */
static inline clmem_status fail_zero(const char *what)
{
    return clmem__fail(CLMEM_ERR_ZERO_SIZE, "The %s is zero.", what);
}

/* A handle that no bridge import made. */
static inline clmem_status fail_foreign_handle(void)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The handle did not come from clmem-bridge.");
}

/* A clmem_bridge_path value that names no path. */
static inline clmem_status fail_unknown_path(int path)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Unknown path %d.", path);
}

/* A call that checks one concrete choice got BEST or an unknown value;
 * `what` is "path" or "mode". */
static inline clmem_status fail_not_concrete(const char *what, int value)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The %s must be a concrete one, not %d.", what, value);
}

/* An image extent with no texels; the status is the caller's. */
static inline clmem_status fail_empty_extent(clmem_status status, VkExtent2D extent)
{
    return clmem__fail(status, "The image extent %ux%u is empty.", extent.width, extent.height);
}

/* A flags argument or field with bits the library does not know; `name`
 * is how the sentence names it ("info->flags", "image_flags"). */
static inline clmem_status fail_unknown_bits(const char *name, uint32_t value, uint32_t unknown)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s 0x%x holds unknown bits 0x%x.", name, (unsigned)value,
                       (unsigned)unknown);
}

/* A VkImageTiling the bridge does not make or import; `name` is how the
 * sentence names it ("tiling", "image->tiling"). */
static inline clmem_status fail_unknown_tiling(const char *name, int tiling)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s %d is neither VK_IMAGE_TILING_LINEAR nor VK_IMAGE_TILING_OPTIMAL.",
                       name, tiling);
}

/* A 4:2:0 format (format_name) with an odd width or height. */
static inline clmem_status fail_odd_420_extent(const char *format_name, VkExtent2D extent)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "%s is 4:2:0: its chroma plane has one texel per 2x2 block of luma, so its width and height "
                       "must be even (Vulkan's VUID-VkImageCreateInfo-format-04712 and -04713); this extent is "
                       "%ux%u.",
                       format_name, extent.width, extent.height);
}

/* An optimal-tiling image bound at a memory offset other than 0. */
static inline clmem_status fail_optimal_offset(uint64_t memory_offset)
{
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "An optimal-tiling image is imported from the fd of its whole allocation, so it must be "
                       "bound at offset 0 (memory_offset is %llu).",
                       (unsigned long long)memory_offset);
}
#endif
