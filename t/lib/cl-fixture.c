/* SPDX-License-Identifier: MIT */
#include "cl-fixture.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cl_fixture_open(struct cl_fixture *f)
{
    const char *want = getenv("CLMEM_TEST_CL_PLATFORM");
    cl_platform_id platforms[16];
    cl_uint n = 0;
    cl_int err;

    memset(f, 0, sizeof *f);
    err = clGetPlatformIDs(16, platforms, &n);
    if (err != CL_SUCCESS || n == 0)
        tap_bail("no OpenCL platform (clGetPlatformIDs returned %d): install pocl-opencl-icd", err);
    if (n > 16)
        n = 16;
    for (cl_uint i = 0; i < n && !f->device; i++) {
        char name[256] = "";
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (want && !strstr(name, want))
            continue;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &f->device, NULL) != CL_SUCCESS) {
            f->device = NULL;
            continue;
        }
        f->platform = platforms[i];
        memcpy(f->platform_name, name, sizeof name);
    }
    if (!f->device)
        tap_bail("no OpenCL device%s%s", want ? " on a platform matching " : "", want ? want : "");
    cl_fixture_open_on(f, f->platform, f->device);
}

void cl_fixture_open_on(struct cl_fixture *f, cl_platform_id platform, cl_device_id device)
{
    cl_int err;

    memset(f, 0, sizeof *f);
    f->platform = platform;
    f->device = device;
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof f->platform_name, f->platform_name, NULL);
    clGetDeviceInfo(f->device, CL_DEVICE_NAME, sizeof f->device_name, f->device_name, NULL);
    f->context = clCreateContext(NULL, 1, &f->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateContext failed: %d", err);
    f->queue = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateCommandQueueWithProperties failed: %d", err);
    /* What the context counts with the fixture's objects alone: PoCL counts
     * the queue's reference on it (2), NVIDIA does not (1). */
    clGetContextInfo(f->context, CL_CONTEXT_REFERENCE_COUNT, sizeof f->context_refs, &f->context_refs, NULL);
}

void cl_fixture_close(struct cl_fixture *f)
{
    if (f->queue)
        clReleaseCommandQueue(f->queue);
    if (f->context)
        clReleaseContext(f->context);
    memset(f, 0, sizeof *f);
}

cl_mem cl_fixture_buffer(struct cl_fixture *f, size_t size)
{
    cl_int err;
    cl_mem m = clCreateBuffer(f->context, CL_MEM_READ_WRITE, size, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateBuffer(%zu) failed: %d", size, err);
    return m;
}

cl_kernel cl_fixture_kernel(struct cl_fixture *f, const char *source, const char *name)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(f->context, 1, &source, NULL, &err);
    cl_kernel k;
    if (err != CL_SUCCESS)
        tap_bail("clCreateProgramWithSource failed: %d", err);
    err = clBuildProgram(p, 1, &f->device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(p, f->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        tap_bail("clBuildProgram failed: %d: %s", err, log);
    }
    k = clCreateKernel(p, name, &err);
    clReleaseProgram(p); /* the kernel keeps the program alive */
    if (err != CL_SUCCESS)
        tap_bail("clCreateKernel(%s) failed: %d", name, err);
    return k;
}

cl_uint cl_mem_refcount(cl_mem mem)
{
    cl_uint n = 0;
    clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

cl_uint cl_queue_refcount(cl_command_queue queue)
{
    cl_uint n = 0;
    clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

int cl_all_devices(cl_platform_id *platforms, cl_device_id *devices, int max)
{
    cl_platform_id ps[16];
    cl_uint np = 0;
    int count = 0;

    if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS)
        return 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id ds[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 16 && count < max; d++) {
            platforms[count] = ps[p];
            devices[count++] = ds[d];
        }
    }
    return count;
}

cl_uint cl_context_refcount(cl_context context)
{
    cl_uint n = 0;
    clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

cl_uint cl_context_refs_settled(cl_context context, cl_uint want)
{
    cl_uint n = 0;
    for (int i = 0; i < 200; i++) {
        n = cl_context_refcount(context);
        if (n == want)
            break;
        usleep(10000);
    }
    return n;
}

void cl_fixture_expect_no_leaks(struct cl_fixture *f)
{
    cl_uint n = cl_context_refs_settled(f->context, f->context_refs);

    for (int i = 0; i < 200 && cl_queue_refcount(f->queue) != 1; i++)
        usleep(10000);
    tap_is_int(n, f->context_refs, "no OpenCL object is left in the context (fixture and its queue only)");
    tap_is_int(cl_queue_refcount(f->queue), 1, "the queue is held by the fixture only");
}

bool cl_queue_drains(cl_command_queue queue)
{
    cl_event marker = NULL;
    cl_int status = CL_QUEUED;
    if (clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker) != CL_SUCCESS)
        return false;
    clFlush(queue);
    for (int i = 0; i < 400 && status != CL_COMPLETE; i++) {
        clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status != CL_COMPLETE)
            usleep(5000);
    }
    clReleaseEvent(marker);
    return status == CL_COMPLETE;
}
