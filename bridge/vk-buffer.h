/* SPDX-License-Identifier: MIT */
/* Internal: Vulkan allocation help of vk-buffer.c, which makes exportable
 * buffers (vk-image.c uses it for images too). */
#ifndef CLMEM_VK_BUFFER_H
#define CLMEM_VK_BUFFER_H
#include "bridge.h"

#include <stdint.h>

/* The first memory type of `allowed` with every bit of `want`, or UINT32_MAX. */
uint32_t clmem__vk_find_memory_type(const struct vkfn *vk, VkPhysicalDevice pd, uint32_t allowed,
                                    VkMemoryPropertyFlags want);

/* Allocate `size` bytes of memory type `type_index` for a new buffer or
 * image (the other one VK_NULL_HANDLE): exported as export_types (0: not
 * exported), and dedicated to that buffer or image where `dedicated`. */
VkResult clmem__vk_allocate_memory(const clmem_bridge *b, VkDeviceSize size, uint32_t type_index,
                                   VkExternalMemoryHandleTypeFlags export_types, bool dedicated, VkBuffer buffer,
                                   VkImage image, VkDeviceMemory *memory_out);

/* The memory requirements of a new buffer or image (the other one
 * VK_NULL_HANDLE); *dedicated_out: Vulkan requires or prefers a dedicated
 * allocation for it. */
VkMemoryRequirements clmem__vk_memory_requirements(const clmem_bridge *b, VkBuffer buffer, VkImage image,
                                                   bool *dedicated_out);

/* Describe memory the bridge allocated and bound, `size` bytes of memory
 * type `type_index`, in *out, and note it as the bridge's own. */
void clmem__vk_memory_own(clmem_bridge *b, VkDeviceMemory memory, VkDeviceSize size, uint32_t type_index,
                          VkExternalMemoryHandleTypeFlags export_types, bool dedicated, clmem_bridge_vk_memory *out);

/* Memory for a new buffer or image (the other one VK_NULL_HANDLE), of the
 * first memory type with every bit of `property_flags`, exported as
 * export_types, dedicated where `dedicated` or Vulkan requires or prefers
 * it; bound, and described in *out (clmem__vk_memory_own). The sentences
 * call it "the <noun>" ("image") and, where no memory type fits, "this
 * <what>" ("VK_FORMAT_R8_UNORM image with linear tiling"). On failure the
 * error is recorded, nothing is allocated, *out is untouched, and the
 * caller destroys the buffer or image. */
clmem_status clmem__vk_memory_bind_new(clmem_bridge *b, VkBuffer buffer, VkImage image, const char *noun,
                                       const char *what, VkMemoryPropertyFlags property_flags,
                                       VkExternalMemoryHandleTypeFlags export_types, bool dedicated,
                                       clmem_bridge_vk_memory *out);

/* clmem_bridge_vk_buffer_create(), for the image live check: its sentence
 * is the calling public function's (lib/error-private.h). */
clmem_status clmem__vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                     VkMemoryPropertyFlags property_flags, VkExternalMemoryHandleTypeFlags export_types,
                                     VkBuffer *buffer_out, clmem_bridge_vk_memory *memory_out);
#endif
