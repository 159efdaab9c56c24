/* SPDX-License-Identifier: MIT */
/* Internal: the Vulkan entry points a bridge calls (vkfn-table.h lists
 * them), loaded once through the application's vkGetInstanceProcAddr (or
 * the loader's) and kept in the bridge, so that programs loading Vulkan
 * themselves (volk, their own loader) get their functions used. Below the
 * loaders, what the bridge asks
 * about a physical device through them. (What OpenCL says about a device
 * is opencl/query-cl.h.) */
#ifndef CLMEM_VKFN_H
#define CLMEM_VKFN_H
#include "clmem.h"
#include "vkfn-table.h"

#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

/* The instance-level functions. gipa NULL means the loader's
 * vkGetInstanceProcAddr. CLMEM_ERR_UNSUPPORTED naming the first missing one
 * (a Vulkan 1.1 instance provides them all). */
clmem_status clmem__vkfn_load_instance(struct vkfn *f, PFN_vkGetInstanceProcAddr gipa, VkInstance instance);

/* The device-level functions of `device`, through f->GetDeviceProcAddr.
 * CLMEM_ERR_UNSUPPORTED naming the first missing core function. */
clmem_status clmem__vkfn_load_device(struct vkfn *f, VkDevice device);

/* Is `name` among the physical device's extensions? */
bool clmem__vk_device_has_extension(const struct vkfn *vk, VkPhysicalDevice pd, const char *name);

/* deviceUUID and deviceName (VkPhysicalDeviceIDProperties, Vulkan 1.1). */
void clmem__vk_device_identity(const struct vkfn *vk, VkPhysicalDevice pd, unsigned char uuid[VK_UUID_SIZE],
                               char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE]);

/* VkPhysicalDeviceProperties.vendorID (0x10de: NVIDIA). */
uint32_t clmem__vk_vendor_id(const struct vkfn *vk, VkPhysicalDevice pd);
#endif
