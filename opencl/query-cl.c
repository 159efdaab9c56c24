/* SPDX-License-Identifier: MIT */
/* The device queries of query-cl.h, for the bridge and clmem-info. They
 * need no Vulkan, so clmem-info links them (opencl/opencl.am) in every
 * configuration. */
#include "config.h"
#include "query-cl.h"

#include <stdlib.h>
#include <string.h>

bool clmem__cl_device_has_extension(cl_device_id device, const char *name)
{
    size_t size = 0, len = strlen(name);
    char *all;
    bool found = false;

    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS || size == 0)
        return false;
    all = malloc(size + 1);
    if (!all)
        return false;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, all, NULL) == CL_SUCCESS) {
        all[size] = '\0';
        for (const char *p = all; (p = strstr(p, name)) != NULL; p += len)
            if ((p == all || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) {
                found = true;
                break;
            }
    }
    free(all);
    return found;
}

cl_uint *clmem__cl_device_handle_types(cl_device_id device, cl_device_info query, size_t *n)
{
    cl_uint *types;
    size_t bytes = 0;

    *n = 0;
    /* The answer is a byte count, not an entry count; ask for it first. */
    if (clGetDeviceInfo(device, query, 0, NULL, &bytes) != CL_SUCCESS)
        return NULL;
    /* An empty list still needs a pointer that is not NULL: one entry. */
    types = malloc(bytes < sizeof *types ? sizeof *types : bytes);
    if (!types)
        return NULL;
    if (bytes >= sizeof *types && clGetDeviceInfo(device, query, bytes, types, NULL) != CL_SUCCESS) {
        free(types);
        return NULL;
    }
    *n = bytes / sizeof *types;
    return types;
}

bool clmem__cl_device_lists_handle_type(cl_device_id device, cl_device_info query, cl_uint type)
{
    size_t n;
    cl_uint *types = clmem__cl_device_handle_types(device, query, &n);
    bool found = false;

    for (size_t i = 0; i < n && !found; i++)
        found = types[i] == type;
    free(types);
    return found;
}

bool clmem__cl_device_uuid(cl_device_id device, unsigned char uuid[16])
{
    if (!clmem__cl_device_has_extension(device, "cl_khr_device_uuid"))
        return false;
    return clGetDeviceInfo(device, CL_DEVICE_UUID_KHR, 16, uuid, NULL) == CL_SUCCESS;
}

bool clmem__cl_device_uses_host_memory(cl_device_id device)
{
    cl_device_type type = 0;
    cl_bool unified = CL_FALSE;

    if (clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL) == CL_SUCCESS &&
        (type & CL_DEVICE_TYPE_CPU))
        return true;
    /* Deprecated in OpenCL 2.0, still answered by every implementation. */
    return clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) ==
               CL_SUCCESS &&
           unified;
}

void clmem__cl_device_names(cl_device_id device, char *device_name, size_t device_len, char *platform_name,
                     size_t platform_len)
{
    cl_platform_id platform = NULL;

    device_name[0] = platform_name[0] = '\0';
    clGetDeviceInfo(device, CL_DEVICE_NAME, device_len, device_name, NULL);
    if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) == CL_SUCCESS)
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, platform_len, platform_name, NULL);
    device_name[device_len - 1] = platform_name[platform_len - 1] = '\0';
}

clmem_status clmem__cl_device_base_align(cl_device_id device, cl_uint *bytes)
{
    cl_uint bits = 0;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetDeviceInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN)",
                               err, "Querying the sub-buffer alignment failed.");
    *bytes = bits / 8 ? bits / 8 : 1;
    return CLMEM_OK;
}

clmem_status clmem__cl_require_in_order(cl_command_queue queue, const char *why)
{
    cl_command_queue_properties props = 0;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)", err,
                               "the queue's properties cannot be queried: is it a command queue?");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0, "the queue is out of order: %s", why);
    return CLMEM_OK;
}
