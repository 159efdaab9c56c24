/* SPDX-License-Identifier: MIT */
/* Internal, header-only, for libclmem-bridge (vkfn.h) and libclmem-ipc
 * (ipc/vk.h): the one list of the Vulkan entry points the libraries call,
 * as X-macros in the manner of FFmpeg's hwcontext_vulkan.c, the table they
 * fill, and its two loaders. Instance-level functions come from
 * vkGetInstanceProcAddr(instance, ...), device-level ones from the
 * vkGetDeviceProcAddr it returns. Every instance-level and core device
 * function is there in Vulkan 1.1; a device extension's is NULL where the
 * extension is not enabled. */
#ifndef CLMEM_VKFN_TABLE_H
#define CLMEM_VKFN_TABLE_H
#include <stddef.h>
#include <vulkan/vulkan.h>

/* Instance level. */
#define VKFN_INSTANCE(X)                            \
    X(GetDeviceProcAddr)                            \
    X(GetPhysicalDeviceProperties2)                 \
    X(GetPhysicalDeviceMemoryProperties)            \
    X(EnumerateDeviceExtensionProperties)           \
    X(GetPhysicalDeviceExternalBufferProperties)    \
    X(GetPhysicalDeviceExternalSemaphoreProperties) \
    X(GetPhysicalDeviceFormatProperties)            \
    X(GetPhysicalDeviceImageFormatProperties2)

/* Device level, core 1.0/1.1 (images and command buffers: vk-image.c and
 * the optimal-tiling live check). */
#define VKFN_DEVICE(X)              \
    X(CreateBuffer)                 \
    X(DestroyBuffer)                \
    X(GetBufferMemoryRequirements2) \
    X(AllocateMemory)               \
    X(FreeMemory)                   \
    X(BindBufferMemory)             \
    X(MapMemory)                    \
    X(UnmapMemory)                  \
    X(CreateFence)                  \
    X(DestroyFence)                 \
    X(QueueSubmit)                  \
    X(WaitForFences)                \
    X(ResetFences)                  \
    X(CreateImage)                  \
    X(DestroyImage)                 \
    X(GetImageMemoryRequirements2)  \
    X(BindImageMemory)              \
    X(GetImageSubresourceLayout)    \
    X(CreateCommandPool)            \
    X(DestroyCommandPool)           \
    X(AllocateCommandBuffers)       \
    X(FreeCommandBuffers)           \
    X(BeginCommandBuffer)           \
    X(EndCommandBuffer)             \
    X(CmdPipelineBarrier)           \
    X(CmdCopyBufferToImage)         \
    X(CmdCopyImageToBuffer)

/* Device extensions. */
#define VKFN_DEVICE_EXT(X) \
    X(GetMemoryFdKHR)      \
    X(GetSemaphoreFdKHR)

#define VKFN_FIELD(name) PFN_vk##name name;
struct vkfn {
    VKFN_INSTANCE(VKFN_FIELD)
    VKFN_DEVICE(VKFN_FIELD)
    VKFN_DEVICE_EXT(VKFN_FIELD)
};
#undef VKFN_FIELD

/* The instance-level functions through gipa (NULL: the loader's
 * vkGetInstanceProcAddr). NULL when all are there, else the name of the
 * first missing one, for the caller's error. */
static inline const char *vkfn_table_load_instance(struct vkfn *f, PFN_vkGetInstanceProcAddr gipa, VkInstance instance)
{
    if (!gipa)
        gipa = vkGetInstanceProcAddr;
#define VKFN_LOAD(name)                                        \
    if (!(f->name = (PFN_vk##name)gipa(instance, "vk" #name))) \
        return "vk" #name;
    VKFN_INSTANCE(VKFN_LOAD)
#undef VKFN_LOAD
    return NULL;
}

/* The device-level functions of `device`, through f->GetDeviceProcAddr:
 * NULL when every core one is there, else the name of the first missing
 * one. An extension's stays NULL where it is not enabled. */
static inline const char *vkfn_table_load_device(struct vkfn *f, VkDevice device)
{
#define VKFN_LOAD(name)                                                      \
    if (!(f->name = (PFN_vk##name)f->GetDeviceProcAddr(device, "vk" #name))) \
        return "vk" #name;
    VKFN_DEVICE(VKFN_LOAD)
#undef VKFN_LOAD
#define VKFN_LOAD_EXT(name) f->name = (PFN_vk##name)f->GetDeviceProcAddr(device, "vk" #name);
    VKFN_DEVICE_EXT(VKFN_LOAD_EXT)
#undef VKFN_LOAD_EXT
    return NULL;
}
#endif
