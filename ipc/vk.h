/* SPDX-License-Identifier: MIT */
/* Internal: the Vulkan entry points and facts the two sides need, loaded
 * through the application's vkGetInstanceProcAddr (or the loader's): the
 * UUIDs for the HELLO, the memory types, and what each side calls on its
 * device (the producer exports fds and waits on fences; the consumer's
 * host-mapped path imports fds). */
#ifndef CLMEM_IPC_VK_H
#define CLMEM_IPC_VK_H
#include "bridge/vkfn-table.h"
#include "clmem-ipc.h"

#include <stdbool.h>

struct ipc_vk {
    VkDevice device;
    struct vkfn fn; /* the libraries' one list of entry points (bridge/vkfn-table.h) */
    uint8_t device_uuid[VK_UUID_SIZE];
    uint8_t driver_uuid[VK_UUID_SIZE];
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    VkPhysicalDeviceMemoryProperties memory;
};

/* Load what the library calls and read the UUIDs and memory types.
 * CLMEM_ERR_UNSUPPORTED naming the first missing entry point. */
clmem_status clmem__ipc_vk_load(struct ipc_vk *v, PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                                VkPhysicalDevice physical_device, VkDevice device);

/* Can this device import opaque-fd memory (for buffers of transfer use)?
 * false with the reason in why. */
bool clmem__ipc_vk_imports_opaque_fd(const struct ipc_vk *v, VkPhysicalDevice pd, char *why, size_t len);
#endif
