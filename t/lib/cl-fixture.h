/* SPDX-License-Identifier: MIT */
/* Test fixture: a real OpenCL platform, device, context and in-order queue.
 * CLMEM_TEST_CL_PLATFORM (a substring of the platform name) picks one;
 * otherwise the first platform with a device is used. */
#ifndef CLMEM_CL_FIXTURE_H
#define CLMEM_CL_FIXTURE_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>

struct cl_fixture {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char platform_name[256];
    char device_name[256];
    cl_uint context_refs; /* the context's reference count with the fixture's objects alone */
};

/* Opens the fixture or ends the program with "Bail out!" (a test machine
 * without any OpenCL device is broken, not lacking a capability). */
void cl_fixture_open(struct cl_fixture *f);
void cl_fixture_close(struct cl_fixture *f);

/* Opens the fixture on a given device (bails out on failure). */
void cl_fixture_open_on(struct cl_fixture *f, cl_platform_id platform, cl_device_id device);

/* Every OpenCL device on every platform, up to max; returns the count. */
int cl_all_devices(cl_platform_id *platforms, cl_device_id *devices, int max);

/* A buffer of `size` bytes in f's context; bails out on failure. */
cl_mem cl_fixture_buffer(struct cl_fixture *f, size_t size);

/* Builds `source` and returns kernel `name`; bails out with the build log on
 * failure. */
cl_kernel cl_fixture_kernel(struct cl_fixture *f, const char *source, const char *name);

/* The context's reference count once it reached `want`, or after 2 s: a
 * driver lets go of the objects of completed commands (their events) on
 * its own threads, a moment after the last release call returned. */
cl_uint cl_context_refs_settled(cl_context context, cl_uint want);

/* Two TAP points: the context holds nothing but the fixture and its queue,
 * and the queue nothing but the fixture (each given 2 s to settle, as
 * cl_context_refs_settled). */
void cl_fixture_expect_no_leaks(struct cl_fixture *f);

/* Is nothing on the (in-order) queue still waiting? A marker enqueued now
 * completes only after everything before it: a command gated on an
 * incomplete user event would hold it. Polls for up to 2 s. */
bool cl_queue_drains(cl_command_queue queue);

/* The reference counts OpenCL reports (for borrow/retain checks). */
cl_uint cl_mem_refcount(cl_mem mem);
cl_uint cl_queue_refcount(cl_command_queue queue);
cl_uint cl_context_refcount(cl_context context);
#endif
