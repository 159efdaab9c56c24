/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the consumer process's devices.
 * Its own Vulkan device (CLMEM_VK_DEVICE, like the producer's), the OpenCL
 * device paired with it (or the first one, where none pairs), and the
 * bench's one-work-item kernel that every consumer role runs on each frame:
 * p[0] += 1, p[1] += the value seen. */
#include "xproc-common.h"

static const char bump_kernel[] = "__kernel void bump(__global uint *p) {\n"
                                  "    uint v = p[0];\n"
                                  "    p[0] = v + 1u;\n"
                                  "    p[1] = p[1] + v;\n"
                                  "}\n";

int xproc_consumer_fail(const char *what)
{
    fprintf(stderr, "clmem-bench (x) consumer: %s: %s\n", what, clmem_error_message());
    return 1;
}

bool xproc_consumer_open(struct consumer_devices *c)
{
    cl_int err;
    if (!vkctx_open(&c->vk, -1)) {
        fprintf(stderr, "clmem-bench (x) consumer: %s\n", c->vk.error);
        return false;
    }
    if (clmem_bridge_pair(c->vk.instance, c->vk.get_instance_proc_addr, c->vk.physical_device, &c->platform,
                          &c->device) != CLMEM_OK &&
        (clGetPlatformIDs(1, &c->platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(c->platform, CL_DEVICE_TYPE_ALL, 1, &c->device, NULL) != CL_SUCCESS))
        return false;
    c->context = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
    c->queue = clCreateCommandQueueWithProperties(c->context, c->device, NULL, &err);
    c->program = clCreateProgramWithSource(c->context, 1, (const char *[]){bump_kernel}, NULL, &err);
    if (clBuildProgram(c->program, 1, &c->device, "", NULL, NULL) != CL_SUCCESS)
        return false;
    c->bump = clCreateKernel(c->program, "bump", &err);
    return err == CL_SUCCESS;
}

void xproc_consumer_close(struct consumer_devices *c)
{
    clReleaseKernel(c->bump);
    clReleaseProgram(c->program);
    clReleaseCommandQueue(c->queue);
    clReleaseContext(c->context);
    vkctx_close(&c->vk);
}
