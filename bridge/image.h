/* SPDX-License-Identifier: MIT */
/* Internal: what the image files share. vk-image.c makes images and
 * answers "can Vulkan make this image"; image.c imports planes and answers
 * clmem_bridge_check_image; image-check.c runs the optimal-tiling live
 * check. The format facts are formats.h's. */
#ifndef CLMEM_IMAGE_H
#define CLMEM_IMAGE_H
#include "bridge.h"
#include "formats.h"
#include "import.h"

/* Can Vulkan make a 2D image of f with `tiling` and `usage`, exportable as
 * every bit of export_types (0: not exported), of `extent` (NULL: any)?
 * CLMEM_ERR_UNSUPPORTED naming what it refuses. *dedicated_only (may be
 * NULL) says whether an export type needs a dedicated allocation. */
clmem_status clmem__vk_image_supported(clmem_bridge *b, const struct image_format *f, VkImageTiling tiling,
                                       VkImageUsageFlags usage, VkExternalMemoryHandleTypeFlags export_types,
                                       const VkExtent2D *extent, bool *dedicated_only);

/* The first memory type of `allowed` with every bit of `want`, or UINT32_MAX
 * (vk-buffer.c). */
uint32_t clmem__vk_find_memory_type(const struct vkfn *vk, VkPhysicalDevice pd, uint32_t allowed,
                                    VkMemoryPropertyFlags want);

/* clmem_bridge_vk_buffer_create() and clmem_bridge_vk_image_create(), for
 * the live check: their sentence is the calling public function's
 * (lib/error-private.h). */
clmem_status clmem__vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                     VkMemoryPropertyFlags property_flags,
                                     VkExternalMemoryHandleTypeFlags export_types, VkBuffer *buffer_out,
                                     clmem_bridge_vk_memory *memory_out);
clmem_status clmem__vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent, VkImageTiling tiling,
                                    VkImageUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                    VkExternalMemoryHandleTypeFlags export_types, clmem_bridge_vk_image *image_out);

/* The handle type of an fd path. */
VkExternalMemoryHandleTypeFlagBits clmem__path_handle_type(clmem_bridge_path path);

/* The fd path an optimal-tiling image goes through: `asked` itself, or for
 * BEST the first fd path the bridge supports (and, with memory, that the
 * memory is exportable as). CLMEM_ERR_UNSUPPORTED saying why none fits
 * (host-mapped: never); CLMEM_ERR_INVALID_VALUE for an unknown path. */
clmem_status clmem__image_optimal_path(const clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                       clmem_bridge_path asked, clmem_bridge_path *path_out);

/* Does OpenCL support the plane's format for 2D images with `flags`, at
 * this size (width, height 0: any)? CLMEM_ERR_UNSUPPORTED naming it. */
clmem_status clmem__image_cl_format_supported(const clmem_bridge *b, const struct image_format *f, unsigned plane,
                                              cl_mem_flags flags, uint32_t width, uint32_t height);

/* Import an optimal-tiling image from its memory's fd as an OpenCL image,
 * without asking for the live check (which uses it, so that it checks
 * exactly what the import does). Everything else checked. */
clmem_status clmem__import_optimal(clmem_bridge *b, const clmem_bridge_vk_image *image, clmem_bridge_path fd_path,
                                   clmem_keepalive *vk_keepalive, cl_command_queue queue, cl_mem_flags flags,
                                   clmem_handle **out);
#endif
