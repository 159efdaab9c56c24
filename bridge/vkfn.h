/* SPDX-License-Identifier: MIT */
/* Internal: the Vulkan entry points a bridge calls, loaded once through the
 * application's vkGetInstanceProcAddr (or the loader's) and kept in the
 * bridge, so that programs loading Vulkan themselves (volk, their own
 * loader) get their functions used. Instance-level functions come from
 * vkGetInstanceProcAddr(instance, ...), device-level ones from the
 * vkGetDeviceProcAddr it returns. Below the loaders, what the bridge asks
 * about a physical device through them. (What OpenCL says about a device
 * is opencl/query-cl.h.) */
#ifndef CLMEM_VKFN_H
#define CLMEM_VKFN_H
#include "clmem.h"
#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

struct vkfn {
    /* instance level: every one present after clmem__vkfn_load_instance */
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
    PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
    PFN_vkGetPhysicalDeviceExternalBufferProperties GetPhysicalDeviceExternalBufferProperties;
    PFN_vkGetPhysicalDeviceExternalSemaphoreProperties GetPhysicalDeviceExternalSemaphoreProperties;
    PFN_vkGetPhysicalDeviceFormatProperties GetPhysicalDeviceFormatProperties;
    PFN_vkGetPhysicalDeviceImageFormatProperties2 GetPhysicalDeviceImageFormatProperties2;
    /* device level (core 1.0/1.1): every one present after clmem__vkfn_load_device */
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements2 GetBufferMemoryRequirements2;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkUnmapMemory UnmapMemory;
    PFN_vkCreateFence CreateFence;
    PFN_vkDestroyFence DestroyFence;
    PFN_vkQueueSubmit QueueSubmit;
    PFN_vkWaitForFences WaitForFences;
    PFN_vkResetFences ResetFences;
    /* images (vk-image.c) and the optimal-tiling live check (image-check.c) */
    PFN_vkCreateImage CreateImage;
    PFN_vkDestroyImage DestroyImage;
    PFN_vkGetImageMemoryRequirements2 GetImageMemoryRequirements2;
    PFN_vkBindImageMemory BindImageMemory;
    PFN_vkGetImageSubresourceLayout GetImageSubresourceLayout;
    PFN_vkCreateCommandPool CreateCommandPool;
    PFN_vkDestroyCommandPool DestroyCommandPool;
    PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
    PFN_vkFreeCommandBuffers FreeCommandBuffers;
    PFN_vkBeginCommandBuffer BeginCommandBuffer;
    PFN_vkEndCommandBuffer EndCommandBuffer;
    PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
    PFN_vkCmdCopyBufferToImage CmdCopyBufferToImage;
    PFN_vkCmdCopyImageToBuffer CmdCopyImageToBuffer;
    /* device extensions: NULL when the extension is not enabled */
    PFN_vkGetMemoryFdKHR GetMemoryFdKHR;
    PFN_vkGetSemaphoreFdKHR GetSemaphoreFdKHR;
};

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
