/* SPDX-License-Identifier: MIT */
/* Internal: vk-image.c, which makes exportable images and answers "can
 * Vulkan make this image". */
#ifndef CLMEM_VK_IMAGE_H
#define CLMEM_VK_IMAGE_H
#include "bridge.h"
#include "formats.h"

#include <stdbool.h>

/* Can Vulkan make a 2D image of f with `tiling` and `usage`, exportable as
 * every bit of export_types (0: not exported), of `extent` (NULL: any)?
 * CLMEM_ERR_UNSUPPORTED naming what it refuses. *dedicated_only (may be
 * NULL) says whether an export type needs a dedicated allocation. */
clmem_status clmem__vk_image_supported(clmem_bridge *b, const struct image_format *f, VkImageTiling tiling,
                                       VkImageUsageFlags usage, VkExternalMemoryHandleTypeFlags export_types,
                                       const VkExtent2D *extent, bool *dedicated_only);

/* clmem_bridge_vk_image_create(), for the image live check: its sentence
 * is the calling public function's (lib/error-private.h). */
clmem_status clmem__vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent, VkImageTiling tiling,
                                    VkImageUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                    VkExternalMemoryHandleTypeFlags export_types, clmem_bridge_vk_image *image_out);
#endif
