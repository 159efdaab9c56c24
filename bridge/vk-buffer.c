/* SPDX-License-Identifier: MIT */
/* clmem_bridge_vk_buffer_create: the exportable buffer allocation every
 * interop program writes, with the dedicated-allocation rules honoured:
 * dedicated when Vulkan requires or prefers it for the buffer, or reports
 * the export handle type as dedicated-only. */
#include "config.h"
#include "vk-buffer.h"
#include "export.h"
#include "fail.h"
#include "fault.h"

#include <string.h>

static bool export_needs_dedicated(const struct vkfn *vk, VkPhysicalDevice pd, VkBufferUsageFlags usage,
                                   VkExternalMemoryHandleTypeFlags export_types)
{
    for (uint32_t bit = 1; bit && bit <= export_types; bit <<= 1) {
        VkPhysicalDeviceExternalBufferInfo info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
                                                   .usage = usage,
                                                   .handleType = (VkExternalMemoryHandleTypeFlagBits)bit};
        VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
        if (!(export_types & bit))
            continue;
        vk->GetPhysicalDeviceExternalBufferProperties(pd, &info, &props);
        if (props.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT)
            return true;
    }
    return false;
}

uint32_t clmem__vk_find_memory_type(const struct vkfn *vk, VkPhysicalDevice pd, uint32_t allowed,
                                    VkMemoryPropertyFlags want)
{
    VkPhysicalDeviceMemoryProperties mp;
    vk->GetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((allowed & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
            return i;
    return UINT32_MAX;
}

VkResult clmem__vk_allocate_memory(const clmem_bridge *b, VkDeviceSize size, uint32_t type_index,
                                   VkExternalMemoryHandleTypeFlags export_types, bool dedicated, VkBuffer buffer,
                                   VkImage image, VkDeviceMemory *memory_out)
{
    VkMemoryDedicatedAllocateInfo dedicated_info = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, .image = image, .buffer = buffer};
    VkExportMemoryAllocateInfo export_info = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                              .handleTypes = export_types};
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = size, .memoryTypeIndex = type_index};

    if (export_types)
        alloc.pNext = &export_info;
    if (dedicated) {
        dedicated_info.pNext = alloc.pNext;
        alloc.pNext = &dedicated_info;
    }
    if (FAULT("vkAllocateMemory"))
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    return b->vk.AllocateMemory(b->device, &alloc, NULL, memory_out);
}

VkMemoryRequirements clmem__vk_memory_requirements(const clmem_bridge *b, VkBuffer buffer, VkImage image,
                                                   bool *dedicated_out)
{
    VkMemoryDedicatedRequirements dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, .pNext = &dedicated};

    if (buffer != VK_NULL_HANDLE) {
        VkBufferMemoryRequirementsInfo2 info = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2,
                                                .buffer = buffer};
        b->vk.GetBufferMemoryRequirements2(b->device, &info, &req);
    } else {
        VkImageMemoryRequirementsInfo2 info = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2,
                                               .image = image};
        b->vk.GetImageMemoryRequirements2(b->device, &info, &req);
    }
    *dedicated_out = dedicated.requiresDedicatedAllocation || dedicated.prefersDedicatedAllocation;
    return req.memoryRequirements;
}

void clmem__vk_memory_own(clmem_bridge *b, VkDeviceMemory memory, VkDeviceSize size, uint32_t type_index,
                          VkExternalMemoryHandleTypeFlags export_types, bool dedicated, clmem_bridge_vk_memory *out)
{
    VkPhysicalDeviceMemoryProperties mp;

    b->vk.GetPhysicalDeviceMemoryProperties(b->physical_device, &mp);
    out->device = b->device;
    out->memory = memory;
    out->allocation_size = size;
    out->property_flags = mp.memoryTypes[type_index].propertyFlags;
    out->export_types = export_types;
    out->dedicated = dedicated ? VK_TRUE : VK_FALSE;
    clmem__own_memory_note(&b->own, memory, size); /* imports of it are checked against this */
}

clmem_status clmem__vk_memory_bind_new(clmem_bridge *b, VkBuffer buffer, VkImage image, const char *noun,
                                       const char *what, VkMemoryPropertyFlags property_flags,
                                       VkExternalMemoryHandleTypeFlags export_types, bool dedicated,
                                       clmem_bridge_vk_memory *out)
{
    const struct vkfn *vk = &b->vk;
    bool vulkan_wants_dedicated;
    VkMemoryRequirements req = clmem__vk_memory_requirements(b, buffer, image, &vulkan_wants_dedicated);
    uint32_t type_index = clmem__vk_find_memory_type(vk, b->physical_device, req.memoryTypeBits, property_flags);
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkResult r;

    if (type_index == UINT32_MAX)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "No memory type with property flags 0x%x can hold this %s (allowed types 0x%x).",
                           (unsigned)property_flags, what, (unsigned)req.memoryTypeBits);
    dedicated = dedicated || vulkan_wants_dedicated;
    r = clmem__vk_allocate_memory(b, req.size, type_index, export_types, dedicated, buffer, image, &memory);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkAllocateMemory", r,
                               "Allocating %llu bytes of memory type %u for the %s failed.",
                               (unsigned long long)req.size, type_index, noun);
    if (buffer != VK_NULL_HANDLE)
        r = FAULT("vkBindBufferMemory") ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                        : vk->BindBufferMemory(b->device, buffer, memory, 0);
    else
        r = FAULT("vkBindImageMemory") ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                       : vk->BindImageMemory(b->device, image, memory, 0);
    if (r != VK_SUCCESS) {
        vk->FreeMemory(b->device, memory, NULL);
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN,
                               buffer != VK_NULL_HANDLE ? "vkBindBufferMemory" : "vkBindImageMemory", r,
                               "Binding the %s to its memory failed.", noun);
    }
    clmem__vk_memory_own(b, memory, req.size, type_index, export_types, dedicated, out);
    return CLMEM_OK;
}

clmem_status clmem__vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                     VkMemoryPropertyFlags property_flags, VkExternalMemoryHandleTypeFlags export_types,
                                     VkBuffer *buffer_out, clmem_bridge_vk_memory *memory_out)
{
    VkExternalMemoryBufferCreateInfo external = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                                 .handleTypes = export_types};
    VkBufferCreateInfo create = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                 .size = size,
                                 .usage = usage,
                                 .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer buffer = VK_NULL_HANDLE;
    bool export_dedicated;
    clmem_status s;
    VkResult r;

    if (buffer_out)
        *buffer_out = VK_NULL_HANDLE;
    if (memory_out)
        memset(memory_out, 0, sizeof *memory_out);
    if (!b || !buffer_out || !memory_out)
        return fail_null(!b ? "bridge" : !buffer_out ? "buffer_out" : "memory_out");
    BRIDGE_LIVE(b, "clmem_bridge_vk_buffer_create");
    const struct vkfn *vk = &b->vk;
    if (size == 0)
        return fail_zero("buffer size");

    if (export_types)
        create.pNext = &external;
    r = FAULT("vkCreateBuffer") ? VK_ERROR_OUT_OF_HOST_MEMORY : vk->CreateBuffer(b->device, &create, NULL, &buffer);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateBuffer", r,
                               "Creating a %llu-byte buffer failed.", (unsigned long long)size);
    export_dedicated = export_types && export_needs_dedicated(vk, b->physical_device, usage, export_types);
    s = clmem__vk_memory_bind_new(b, buffer, VK_NULL_HANDLE, "buffer", "buffer", property_flags, export_types,
                                  export_dedicated, memory_out);
    if (s != CLMEM_OK) {
        vk->DestroyBuffer(b->device, buffer, NULL);
        return s;
    }
    *buffer_out = buffer;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                                        VkMemoryPropertyFlags property_flags,
                                                        VkExternalMemoryHandleTypeFlags export_types,
                                                        VkBuffer *buffer_out, clmem_bridge_vk_memory *memory_out)
{
    return clmem__error_in(
        __func__, clmem__vk_buffer_create(b, size, usage, property_flags, export_types, buffer_out, memory_out));
}

CLMEM_EXPORT void clmem_bridge_vk_buffer_destroy(clmem_bridge *b, VkBuffer buffer,
                                                 const clmem_bridge_vk_memory *memory)
{
    if (!b)
        return;
    BRIDGE_LIVE(b, "clmem_bridge_vk_buffer_destroy");
    if (buffer)
        b->vk.DestroyBuffer(b->device, buffer, NULL);
    if (memory && memory->memory) {
        clmem__own_memory_forget(&b->own, memory->memory); /* before the handle can be reused */
        b->vk.FreeMemory(b->device, memory->memory, NULL);
    }
}
