/* SPDX-License-Identifier: MIT */
/* The Vulkan entry points and device facts of both sides (vk.h). */
#include "config.h"
#include "error-private.h"
#include "vk.h"

#include <stdio.h>
#include <string.h>

static clmem_status missing(const char *name)
{
    return clmem__fail(CLMEM_ERR_UNSUPPORTED, "the Vulkan function %s is not available (clmem-ipc needs Vulkan 1.1).",
                       name);
}

clmem_status clmem__ipc_vk_load(struct ipc_vk *v, PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                                VkPhysicalDevice physical_device, VkDevice device)
{
    const char *absent;

    memset(v, 0, sizeof *v);
    v->device = device;
    if (!(absent = vkfn_table_load_instance(&v->fn, gipa, instance)))
        absent = vkfn_table_load_device(&v->fn, device);
    if (absent)
        return missing(absent);

    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    v->fn.GetPhysicalDeviceProperties2(physical_device, &p2);
    memcpy(v->device_uuid, id.deviceUUID, VK_UUID_SIZE);
    memcpy(v->driver_uuid, id.driverUUID, VK_UUID_SIZE);
    memcpy(v->device_name, p2.properties.deviceName, sizeof v->device_name);
    v->device_name[sizeof v->device_name - 1] = '\0';
    v->fn.GetPhysicalDeviceMemoryProperties(physical_device, &v->memory);
    return CLMEM_OK;
}

bool clmem__ipc_vk_imports_opaque_fd(const struct ipc_vk *v, VkPhysicalDevice pd, char *why, size_t len)
{
    VkPhysicalDeviceExternalBufferInfo info = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
        .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};

    v->fn.GetPhysicalDeviceExternalBufferProperties(pd, &info, &props);
    if (!(props.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT)) {
        snprintf(why, len, "Vulkan device %s cannot import opaque-fd memory", v->device_name);
        return false;
    }
    return true;
}
