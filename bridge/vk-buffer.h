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
#endif
