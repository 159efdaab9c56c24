/* SPDX-License-Identifier: MIT */
#include "config.h"
#include "vkfn.h"
#include "error-private.h"
#include "fault.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A missing entry point is an error that names it. */
static clmem_status missing(const char *level, const char *name)
{
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The %s-level Vulkan function %s is not available (clmem-bridge needs Vulkan 1.1).", level,
                       name);
}

clmem_status clmem__vkfn_load_instance(struct vkfn *f, PFN_vkGetInstanceProcAddr gipa, VkInstance instance)
{
    const char *absent;

    if (FAULT("vkGetInstanceProcAddr"))
        return missing("instance", "vkGetDeviceProcAddr");
    absent = vkfn_table_load_instance(f, gipa, instance);
    return absent ? missing("instance", absent) : CLMEM_OK;
}

clmem_status clmem__vkfn_load_device(struct vkfn *f, VkDevice device)
{
    const char *absent = vkfn_table_load_device(f, device);
    return absent ? missing("device", absent) : CLMEM_OK;
}

/* ------------------------------------------------------------ what a device says, through the table */

bool clmem__vk_device_has_extension(const struct vkfn *vk, VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    VkExtensionProperties *props;
    bool found = false;

    if (vk->EnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    props = calloc(n, sizeof *props);
    if (!props)
        return false;
    if (vk->EnumerateDeviceExtensionProperties(pd, NULL, &n, props) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

void clmem__vk_device_identity(const struct vkfn *vk, VkPhysicalDevice pd, unsigned char uuid[VK_UUID_SIZE], char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE])
{
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};

    vk->GetPhysicalDeviceProperties2(pd, &props);
    memcpy(uuid, id.deviceUUID, VK_UUID_SIZE);
    memcpy(name, props.properties.deviceName, VK_MAX_PHYSICAL_DEVICE_NAME_SIZE);
}

uint32_t clmem__vk_vendor_id(const struct vkfn *vk, VkPhysicalDevice pd)
{
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};

    vk->GetPhysicalDeviceProperties2(pd, &props);
    return props.properties.vendorID;
}
