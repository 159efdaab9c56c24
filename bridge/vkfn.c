#include "config.h"
#include "vkfn.h"
#include "fault.h"

#include <stddef.h>

/* A missing entry point is an error that names it. */
static clmem_status missing(const char *level, const char *name)
{
    return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                           "The %s-level Vulkan function %s is not available (clmem-bridge needs Vulkan 1.1).",
                           level, name);
}

#define LOAD_INSTANCE(field)                                                                          \
    do {                                                                                              \
        f->field = (PFN_vk##field)gipa(instance, "vk" #field);                                        \
        if (!f->field)                                                                                \
            return missing("instance", "vk" #field);                                                  \
    } while (0)

#define LOAD_DEVICE(field)                                                                            \
    do {                                                                                              \
        f->field = (PFN_vk##field)f->GetDeviceProcAddr(device, "vk" #field);                          \
        if (!f->field)                                                                                \
            return missing("device", "vk" #field);                                                    \
    } while (0)

clmem_status clmem__vkfn_load_instance(struct vkfn *f, PFN_vkGetInstanceProcAddr gipa, VkInstance instance)
{
    if (!gipa)
        gipa = vkGetInstanceProcAddr;
    if (FAULT("vkGetInstanceProcAddr"))
        return missing("instance", "vkGetDeviceProcAddr");
    LOAD_INSTANCE(GetDeviceProcAddr);
    LOAD_INSTANCE(GetPhysicalDeviceProperties2);
    LOAD_INSTANCE(GetPhysicalDeviceMemoryProperties);
    LOAD_INSTANCE(EnumerateDeviceExtensionProperties);
    LOAD_INSTANCE(GetPhysicalDeviceExternalBufferProperties);
    LOAD_INSTANCE(GetPhysicalDeviceExternalSemaphoreProperties);
    LOAD_INSTANCE(GetPhysicalDeviceFormatProperties);
    LOAD_INSTANCE(GetPhysicalDeviceImageFormatProperties2);
    return CLMEM_OK;
}

clmem_status clmem__vkfn_load_device(struct vkfn *f, VkDevice device)
{
    LOAD_DEVICE(CreateBuffer);
    LOAD_DEVICE(DestroyBuffer);
    LOAD_DEVICE(GetBufferMemoryRequirements2);
    LOAD_DEVICE(AllocateMemory);
    LOAD_DEVICE(FreeMemory);
    LOAD_DEVICE(BindBufferMemory);
    LOAD_DEVICE(MapMemory);
    LOAD_DEVICE(UnmapMemory);
    LOAD_DEVICE(CreateFence);
    LOAD_DEVICE(DestroyFence);
    LOAD_DEVICE(QueueSubmit);
    LOAD_DEVICE(WaitForFences);
    LOAD_DEVICE(ResetFences);
    LOAD_DEVICE(CreateImage);
    LOAD_DEVICE(DestroyImage);
    LOAD_DEVICE(GetImageMemoryRequirements2);
    LOAD_DEVICE(BindImageMemory);
    LOAD_DEVICE(GetImageSubresourceLayout);
    LOAD_DEVICE(CreateCommandPool);
    LOAD_DEVICE(DestroyCommandPool);
    LOAD_DEVICE(AllocateCommandBuffers);
    LOAD_DEVICE(FreeCommandBuffers);
    LOAD_DEVICE(BeginCommandBuffer);
    LOAD_DEVICE(EndCommandBuffer);
    LOAD_DEVICE(CmdPipelineBarrier);
    LOAD_DEVICE(CmdCopyBufferToImage);
    LOAD_DEVICE(CmdCopyImageToBuffer);
    /* Extensions: present only when enabled on the device. */
    f->GetMemoryFdKHR = (PFN_vkGetMemoryFdKHR)f->GetDeviceProcAddr(device, "vkGetMemoryFdKHR");
    f->GetSemaphoreFdKHR = (PFN_vkGetSemaphoreFdKHR)f->GetDeviceProcAddr(device, "vkGetSemaphoreFdKHR");
    return CLMEM_OK;
}
