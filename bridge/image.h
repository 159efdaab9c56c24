/* SPDX-License-Identifier: MIT */
/* Internal: image.c, which imports planes, answers
 * clmem_bridge_check_image and keeps the optimal-tiling live checks'
 * results, which image-check.c runs and writes. "Can Vulkan make this
 * image" is vk-image.h's; the format facts are formats.h's. */
#ifndef CLMEM_IMAGE_H
#define CLMEM_IMAGE_H
#include "bridge.h"
#include "formats.h"
#include "import.h"

/* The kept live-check result of `format` on fd path `path`
 * (b->image_checks): image_check_slot is the slot itself, for a caller
 * holding b->check_lock; image_check_kept, a copy taken under it. */
struct image_check *clmem__image_check_slot(clmem_bridge *b, const struct image_format *format, clmem_bridge_path path);
struct image_check clmem__image_check_kept(clmem_bridge *b, const struct image_format *format, clmem_bridge_path path);

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
