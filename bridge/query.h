/* Internal: what the two APIs say about their devices. Small wrappers that
 * turn the two-call size/data queries into one call each. The OpenCL ones
 * are in query-cl.h. */
#ifndef CLMEM_QUERY_H
#define CLMEM_QUERY_H
#include "opencl/query-cl.h"
#include <stdbool.h>
#include <stddef.h>
#include "vkfn.h"
#include <vulkan/vulkan.h>

/* Is `name` among the Vulkan physical device's extensions? (Vulkan calls go
 * through the bridge's table: vkfn.h.) */
bool clmem__vk_device_has_extension(const struct vkfn *vk, VkPhysicalDevice pd, const char *name);

/* deviceUUID and deviceName (VkPhysicalDeviceIDProperties, Vulkan 1.1). */
/* VkPhysicalDeviceProperties.vendorID (0x10de: NVIDIA). */
uint32_t clmem__vk_vendor_id(const struct vkfn *vk, VkPhysicalDevice pd);

void clmem__vk_device_identity(const struct vkfn *vk, VkPhysicalDevice pd, unsigned char uuid[VK_UUID_SIZE], char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE]);
#endif
