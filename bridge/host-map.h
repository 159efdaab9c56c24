/* SPDX-License-Identifier: MIT */
/* Internal: vkMapMemory mappings for the host-mapped path. Vulkan allows
 * one mapping of a VkDeviceMemory at a time, so imports of the same memory
 * (other ranges, other flags, and other bridges of the same VkDevice) share
 * one mapping of the whole allocation, counted, and the last one unmaps it.
 * This is the one table that is not the bridge's own: Vulkan's rule is per
 * VkDeviceMemory, and two bridges of one VkDevice (two cl_contexts) may
 * import the same memory; a table per bridge mapped it twice (the
 * validation layer's VUID-vkMapMemory-memory-00678, t/bridge/bridge-object). The
 * map and unmap calls are the importing bridge's (its vkfn table). */
#ifndef CLMEM_HOST_MAP_H
#define CLMEM_HOST_MAP_H
#include "clmem.h"
#include "vkfn.h"

#include <pthread.h>
#include <vulkan/vulkan.h>

struct host_map;

/* Who maps: the bridge's device and its entry points. */
struct host_maps {
    const struct vkfn *vk;
    VkDevice device;
};

void clmem__host_maps_init(struct host_maps *maps, const struct vkfn *vk, VkDevice device);

/* Map (or share the mapping of) the whole allocation; *base_out is its
 * first byte. CLMEM_ERR_VULKAN when vkMapMemory fails, CLMEM_ERR_NO_MEMORY. */
clmem_status clmem__host_map_get(struct host_maps *maps, VkDeviceMemory memory, struct host_map **map_out,
                                 void **base_out);

/* Drop one user; the last one unmaps. NULL does nothing. */
void clmem__host_map_put(struct host_map *map);
#endif
