/* Internal: what the two APIs say about their devices. Small wrappers that
 * turn the two-call size/data queries into one call each. */
#ifndef CLMEM_QUERY_H
#define CLMEM_QUERY_H
#include "cl-compat.h"
#include <stdbool.h>
#include <stddef.h>
#include "vkfn.h"
#include <vulkan/vulkan.h>

/* Is `name` a whole word of the device's CL_DEVICE_EXTENSIONS? */
bool clmem__cl_device_has_extension(cl_device_id device, const char *name);

/* Does a handle-type list query (CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
 * CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR; the answer is bytes, not a
 * count) list `type`? */
bool clmem__cl_device_lists_handle_type(cl_device_id device, cl_device_info query, cl_uint type);

/* CL_DEVICE_UUID_KHR into uuid[16]; false when cl_khr_device_uuid is absent
 * or the query fails. */
bool clmem__cl_device_uuid(cl_device_id device, unsigned char uuid[16]);

/* A CPU device, or one reporting CL_DEVICE_HOST_UNIFIED_MEMORY: host
 * pointers are used in place, so host-mapped sharing copies nothing. */
bool clmem__cl_device_uses_host_memory(cl_device_id device);

/* CL_DEVICE_NAME and the platform's CL_PLATFORM_NAME, for messages. */
void clmem__cl_device_names(cl_device_id device, char *device_name, size_t device_len, char *platform_name,
                     size_t platform_len);

/* Is `name` among the Vulkan physical device's extensions? (Vulkan calls go
 * through the bridge's table: vkfn.h.) */
bool clmem__vk_device_has_extension(const struct vkfn *vk, VkPhysicalDevice pd, const char *name);

/* deviceUUID and deviceName (VkPhysicalDeviceIDProperties, Vulkan 1.1). */
void clmem__vk_device_identity(const struct vkfn *vk, VkPhysicalDevice pd, unsigned char uuid[VK_UUID_SIZE], char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE]);
#endif
