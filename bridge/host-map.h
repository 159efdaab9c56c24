/* Internal: shared vkMapMemory mappings for the host-mapped path. Vulkan
 * allows one mapping of a VkDeviceMemory at a time, so imports of the same
 * memory (other ranges, other flags) share one mapping of the whole
 * allocation, counted, and the last one unmaps it. */
#ifndef CLMEM_HOST_MAP_H
#define CLMEM_HOST_MAP_H
#include "clmem.h"
#include <vulkan/vulkan.h>

struct host_map;

/* Map (or share the mapping of) the whole allocation; *base_out is its
 * first byte. CLMEM_ERR_VULKAN when vkMapMemory fails, CLMEM_ERR_NO_MEMORY. */
clmem_status clmem__host_map_get(VkDevice device, VkDeviceMemory memory, struct host_map **map_out, void **base_out);

/* Drop one user; the last one unmaps. NULL does nothing. */
void clmem__host_map_put(struct host_map *map);
#endif
