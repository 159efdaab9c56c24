#include "cl-fixture.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

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
    clGetDeviceInfo(f->device, CL_DEVICE_NAME, sizeof f->device_name, f->device_name, NULL);
    f->context = clCreateContext(NULL, 1, &f->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateContext failed: %d", err);
    f->queue = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    if (err != CL_SUCCESS)
        tap_bail("clCreateCommandQueueWithProperties failed: %d", err);
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
