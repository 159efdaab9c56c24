/* SPDX-License-Identifier: MIT */
/* clmem_bridge_pair: find the OpenCL device that is this Vulkan device, by
 * deviceUUID (cl_khr_device_uuid). Driver UUIDs differ between the two
 * APIs even for one vendor's driver, so they are never compared. */
#include "config.h"
#include "clmem-bridge.h"
#include "export.h"
#include "fail.h"
#include "opencl/query-cl.h"
#include "vkfn.h"

#include <string.h>

#define MAX_PLATFORMS 32
#define MAX_DEVICES 64

static clmem_status pair(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                         VkPhysicalDevice physical_device, cl_platform_id *platform_out, cl_device_id *device_out)
{
    struct vkfn vk;
    unsigned char vk_uuid[VK_UUID_SIZE];
    char vk_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint nplatforms = 0;
    bool any_uuid = false;
    cl_int err;

    if (platform_out)
        *platform_out = NULL;
    if (device_out)
        *device_out = NULL;
    if (!instance || !physical_device)
        return fail_null(!instance ? "instance" : "physical_device");
    if (clmem__vkfn_load_instance(&vk, get_instance_proc_addr, instance) != CLMEM_OK)
        return clmem_error_status();
    clmem__vk_device_identity(&vk, physical_device, vk_uuid, vk_name);

    err = clGetPlatformIDs(MAX_PLATFORMS, platforms, &nplatforms);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && nplatforms == 0))
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                           "There is no OpenCL platform, so nothing pairs with Vulkan device %s.", vk_name);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetPlatformIDs", err,
                               "Listing OpenCL platforms failed.");
    if (nplatforms > MAX_PLATFORMS)
        nplatforms = MAX_PLATFORMS;

    for (cl_uint p = 0; p < nplatforms; p++) {
        cl_device_id devices[MAX_DEVICES];
        cl_uint ndevices = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devices, &ndevices) != CL_SUCCESS)
            continue;
        if (ndevices > MAX_DEVICES)
            ndevices = MAX_DEVICES;
        for (cl_uint d = 0; d < ndevices; d++) {
            unsigned char cl_uuid[16];
            if (!clmem__cl_device_uuid(devices[d], cl_uuid))
                continue;
            any_uuid = true;
            if (memcmp(cl_uuid, vk_uuid, 16) == 0) {
                if (platform_out)
                    *platform_out = platforms[p];
                if (device_out)
                    *device_out = devices[d];
                return CLMEM_OK;
            }
        }
    }
    if (!any_uuid)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "No OpenCL device offers cl_khr_device_uuid, so none can be matched to Vulkan "
                           "device %s.",
                           vk_name);
    return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH, "No OpenCL device has the deviceUUID of Vulkan device %s.", vk_name);
}

CLMEM_EXPORT clmem_status clmem_bridge_pair(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                            VkPhysicalDevice physical_device, cl_platform_id *platform_out,
                                            cl_device_id *device_out)
{
    return clmem__error_in(__func__, pair(instance, get_instance_proc_addr, physical_device, platform_out, device_out));
}
