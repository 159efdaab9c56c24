/* SPDX-License-Identifier: MIT */
/* clmem_av_bridge_create(): a bridge on FFmpeg's Vulkan device, with the
 * OpenCL device paired by UUID when the caller brings no context, or,
 * where no OpenCL device can say its UUID, the only OpenCL device there
 * is (as clmem_bridge_create() takes a context's only device). */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "ffmpeg-vk.h"

#include <stdio.h>

/* The one OpenCL device of all platforms, or CLMEM_ERR_UNSUPPORTED naming
 * how many there are (pairing by UUID already said none offers it). */
static clmem_status only_device(const char *why_no_uuid, cl_platform_id *platform_out, cl_device_id *device_out)
{
    cl_platform_id platforms[16];
    cl_uint nplatforms = 0, total = 0;
    cl_int err;

    /* -1001, CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no platform. */
    if ((err = clGetPlatformIDs(16, platforms, &nplatforms)) != CL_SUCCESS && err != -1001)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetPlatformIDs", err,
                               "Listing the OpenCL platforms failed.");
    for (cl_uint i = 0; i < nplatforms && i < 16; i++) {
        cl_uint n = 0;
        cl_device_id first;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &first, &n) != CL_SUCCESS)
            continue;
        if (n && total == 0) {
            *platform_out = platforms[i];
            *device_out = first;
        }
        total += n;
    }
    if (total == 1)
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "%s There %s %u OpenCL device%s, so none is the obvious pair: pass a context of the one "
                       "to use.",
                       why_no_uuid, total == 1 ? "is" : "are", total, total == 1 ? "" : "s");
}

static clmem_status av_bridge_create(AVBufferRef *device_ref, cl_context context, uint32_t flags, clmem_bridge **out)
{
    const AVVulkanDeviceContext *vk;
    cl_platform_id platform = NULL;
    cl_device_id device = NULL;
    cl_context own = NULL;
    clmem_bridge_info info = {0};
    clmem_status s;

    if (out)
        *out = NULL;
    if (!device_ref || !out)
        return clmem__null_arg(device_ref ? "out" : "device_ref");
    if (!(vk = clmem__av_vk_device_arg(device_ref)))
        return CLMEM_ERR_INVALID_VALUE;
    if (!vk->inst || !vk->phys_dev || !vk->act_dev)
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "FFmpeg's Vulkan device context has no %s: is it initialised?",
                           !vk->inst       ? "instance"
                           : !vk->phys_dev ? "physical device"
                                           : "device");

    if (!context) {
        cl_int err;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, 0, 0};

        s = clmem_bridge_pair(vk->inst, vk->get_proc_addr, vk->phys_dev, &platform, &device);
        if (s == CLMEM_ERR_UNSUPPORTED) {
            /* No device says its UUID (a CPU OpenCL such as PoCL): the only
             * device there is, whose bridge shares through the host-mapped
             * path (the fd paths need the UUIDs to match). */
            char why[1024];
            snprintf(why, sizeof why, "%s", clmem_error_message());
            s = only_device(why, &platform, &device);
        }
        if (s != CLMEM_OK)
            return s;
        props[1] = (cl_context_properties)platform;
        own = clCreateContext(props, 1, &device, NULL, NULL, &err);
        if (!own)
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateContext", err,
                                   "Making an OpenCL context on the device paired with FFmpeg's failed.");
        context = own;
    }

    info.size = sizeof info;
    info.instance = vk->inst;
    info.physical_device = vk->phys_dev;
    info.device = vk->act_dev;
    info.get_instance_proc_addr = vk->get_proc_addr;
    info.context = context;
    info.cl_device = device; /* NULL with the caller's context: the bridge pairs in it */
    info.flags = flags;
    s = clmem_bridge_create(&info, out);
    if (own)
        clReleaseContext(own); /* the bridge retained it on success */
    return s;
}

CLMEM_EXPORT clmem_status clmem_av_bridge_create(AVBufferRef *device_ref, cl_context context, uint32_t flags,
                                                 clmem_bridge **out)
{
    return clmem__error_in(__func__, av_bridge_create(device_ref, context, flags, out));
}
