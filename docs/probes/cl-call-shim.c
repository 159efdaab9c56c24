/* SPDX-License-Identifier: MIT */
/* cl-call-shim (build: cc -std=gnu11 -O2 -shared -fPIC -o /tmp/cl-call-shim.so docs/probes/cl-call-shim.c -ldl;
 * run: LD_PRELOAD=/tmp/cl-call-shim.so PROGRAM ...): counts and times the
 * OpenCL calls a program makes on the import and teardown paths, by
 * interposing the ICD loader's entry points, and prints at exit, per
 * function, the number of calls, their total and their mean time. Used to
 * find where clmem_bridge_import_vk spends what the raw sequence
 * (vkGetMemoryFdKHR + clCreateBufferWithProperties) does not. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum {
    F_GetCommandQueueInfo,
    F_CreateBufferWithProperties,
    F_CreateSubBuffer,
    F_SetMemObjectDestructorCallback,
    F_RetainCommandQueue,
    F_ReleaseCommandQueue,
    F_RetainMemObject,
    F_ReleaseMemObject,
    F_GetMemObjectInfo,
    F_GetContextInfo,
    F_GetDeviceInfo,
    F_RetainContext,
    F_ReleaseContext,
    F_EnqueueMarkerWithWaitList,
    F_SetEventCallback,
    F_ReleaseEvent,
    F_Flush,
    F_COUNT
};
static const char *names[F_COUNT] = {
    "clGetCommandQueueInfo", "clCreateBufferWithProperties", "clCreateSubBuffer", "clSetMemObjectDestructorCallback",
    "clRetainCommandQueue", "clReleaseCommandQueue", "clRetainMemObject", "clReleaseMemObject", "clGetMemObjectInfo",
    "clGetContextInfo", "clGetDeviceInfo", "clRetainContext", "clReleaseContext", "clEnqueueMarkerWithWaitList",
    "clSetEventCallback", "clReleaseEvent", "clFlush"};
static atomic_ullong calls[F_COUNT], nanos[F_COUNT];
static void *real[F_COUNT];

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void *next(int f)
{
    if (!real[f])
        real[f] = dlsym(RTLD_NEXT, names[f]);
    return real[f];
}

#define TIMED(f, type, ...)                                                                                          \
    do {                                                                                                             \
        unsigned long long t0 = now_ns();                                                                            \
        type r_ = ((type(*)())next(f))(__VA_ARGS__);                                                                 \
        atomic_fetch_add(&nanos[f], now_ns() - t0);                                                                  \
        atomic_fetch_add(&calls[f], 1);                                                                              \
        return r_;                                                                                                   \
    } while (0)

cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info p, size_t n, void *v, size_t *r)
{
    TIMED(F_GetCommandQueueInfo, cl_int, q, p, n, v, r);
}
cl_mem clCreateBufferWithProperties(cl_context c, const cl_mem_properties *p, cl_mem_flags f, size_t n, void *h,
                                    cl_int *e)
{
    TIMED(F_CreateBufferWithProperties, cl_mem, c, p, f, n, h, e);
}
cl_mem clCreateSubBuffer(cl_mem m, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *e)
{
    TIMED(F_CreateSubBuffer, cl_mem, m, f, t, i, e);
}
cl_int clSetMemObjectDestructorCallback(cl_mem m, void(CL_CALLBACK *cb)(cl_mem, void *), void *u)
{
    TIMED(F_SetMemObjectDestructorCallback, cl_int, m, cb, u);
}
cl_int clRetainCommandQueue(cl_command_queue q) { TIMED(F_RetainCommandQueue, cl_int, q); }
cl_int clReleaseCommandQueue(cl_command_queue q) { TIMED(F_ReleaseCommandQueue, cl_int, q); }
cl_int clRetainMemObject(cl_mem m) { TIMED(F_RetainMemObject, cl_int, m); }
cl_int clReleaseMemObject(cl_mem m) { TIMED(F_ReleaseMemObject, cl_int, m); }
cl_int clGetMemObjectInfo(cl_mem m, cl_mem_info p, size_t n, void *v, size_t *r)
{
    TIMED(F_GetMemObjectInfo, cl_int, m, p, n, v, r);
}
cl_int clGetContextInfo(cl_context c, cl_context_info p, size_t n, void *v, size_t *r)
{
    TIMED(F_GetContextInfo, cl_int, c, p, n, v, r);
}
cl_int clGetDeviceInfo(cl_device_id d, cl_device_info p, size_t n, void *v, size_t *r)
{
    TIMED(F_GetDeviceInfo, cl_int, d, p, n, v, r);
}
cl_int clRetainContext(cl_context c) { TIMED(F_RetainContext, cl_int, c); }
cl_int clReleaseContext(cl_context c) { TIMED(F_ReleaseContext, cl_int, c); }
cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *w, cl_event *e)
{
    TIMED(F_EnqueueMarkerWithWaitList, cl_int, q, n, w, e);
}
cl_int clSetEventCallback(cl_event e, cl_int t, void(CL_CALLBACK *cb)(cl_event, cl_int, void *), void *u)
{
    TIMED(F_SetEventCallback, cl_int, e, t, cb, u);
}
cl_int clReleaseEvent(cl_event e) { TIMED(F_ReleaseEvent, cl_int, e); }
cl_int clFlush(cl_command_queue q) { TIMED(F_Flush, cl_int, q); }

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "cl-call-shim: %-34s %10s %12s %10s\n", "function", "calls", "total us", "mean us");
    for (int f = 0; f < F_COUNT; f++)
        if (calls[f])
            fprintf(stderr, "cl-call-shim: %-34s %10llu %12.1f %10.3f\n", names[f], (unsigned long long)calls[f],
                    nanos[f] / 1000.0, nanos[f] / 1000.0 / (double)calls[f]);
}
