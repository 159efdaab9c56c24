/* clmem_av_bridge_create(): a bridge on FFmpeg's Vulkan device, with the
 * OpenCL device paired by UUID when the caller brings no context. */
#include "config.h"
#include "export.h"
#include "ffmpeg-vk.h"

CLMEM_EXPORT clmem_status clmem_av_bridge_create(AVBufferRef *device_ref, cl_context context, uint32_t flags,
                                                 clmem_bridge **out)
{
    const AVHWDeviceContext *dev;
    const AVVulkanDeviceContext *vk;
    cl_platform_id platform = NULL;
    cl_device_id device = NULL;
    cl_context own = NULL;
    clmem_bridge_info info = {0};
    clmem_status s;

    if (out)
        *out = NULL;
    if (!device_ref || !out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "%s is NULL.",
                               device_ref ? "out" : "device_ref");
    dev = (const AVHWDeviceContext *)device_ref->data;
    if (!(vk = clmem__av_vk_device(dev)))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "device_ref is not an FFmpeg device context of type AV_HWDEVICE_TYPE_VULKAN.");
    if (!vk->inst || !vk->phys_dev || !vk->act_dev)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0,
                               "FFmpeg's Vulkan device context has no %s: is it initialised?",
                               !vk->inst ? "instance" : !vk->phys_dev ? "physical device" : "device");

    if (!context) {
        cl_int err;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, 0, 0};

        if ((s = clmem_bridge_pair(vk->inst, vk->get_proc_addr, vk->phys_dev, &platform, &device)) != CLMEM_OK)
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
