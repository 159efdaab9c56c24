/* SPDX-License-Identifier: MIT */
/* clmem-info: one live round trip on a sharing path: Vulkan fills a
 * buffer, OpenCL transforms it in place, Vulkan reads it back and every
 * word is checked. */
#include "config.h"

#include "info.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char kernel_source[] = "__kernel void transform(__global uint *x)\n"
                                    "{\n"
                                    "    size_t i = get_global_id(0);\n"
                                    "    x[i] = x[i] * 3u + 1u;\n"
                                    "}\n";

static void build_failed(struct cl_env *env, cl_int err)
{
    char log[256] = "";
    clGetProgramBuildInfo(env->program, env->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    log[sizeof log - 1] = '\0';
    native_failure(env->error, sizeof env->error, CLMEM_API_OPENCL, "clBuildProgram", err, log);
}

/* Run the kernel once on a scratch buffer of the trip's size: drivers
 * (PoCL for one) compile a kernel for its launch size at the first
 * enqueue, and that compile is no part of the handoff being timed. */
static cl_int warm_up(struct cl_env *env, size_t size)
{
    size_t words = size / sizeof(cl_uint);
    cl_int err;
    cl_mem scratch = clCreateBuffer(env->context, CL_MEM_READ_WRITE, size, NULL, &err);

    if (err != CL_SUCCESS)
        return err;
    err = clSetKernelArg(env->kernel, 0, sizeof scratch, &scratch);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(env->queue, env->kernel, 1, NULL, &words, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(env->queue);
    clReleaseMemObject(scratch);
    return err;
}

/* The context and queue. */
bool cl_env_open(struct cl_env *env, cl_device_id dev)
{
    cl_platform_id platform = NULL;
    cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, 0, 0};
    const char *call = "clGetDeviceInfo(CL_DEVICE_PLATFORM)";
    cl_int err;

    memset(env, 0, sizeof *env);
    env->device = dev;
    err = clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (err == CL_SUCCESS) {
        props[1] = (cl_context_properties)platform;
        call = "clCreateContext";
        env->context = clCreateContext(props, 1, &dev, NULL, NULL, &err);
    }
    if (err == CL_SUCCESS) {
        call = "clCreateCommandQueueWithProperties";
        env->queue = clCreateCommandQueueWithProperties(env->context, dev, NULL, &err);
    }
    if (err != CL_SUCCESS)
        native_failure(env->error, sizeof env->error, CLMEM_API_OPENCL, call, err, NULL);
    return err == CL_SUCCESS;
}

/* The kernel, built and warmed up once; false (with env->error) when it
 * cannot be. */
bool cl_env_build(struct cl_env *env, size_t size)
{
    const char *src = kernel_source;
    const char *call = "clCreateProgramWithSource";
    cl_int err;

    if (env->built)
        return env->error[0] == '\0';
    env->built = true;
    env->program = clCreateProgramWithSource(env->context, 1, &src, NULL, &err);
    if (err == CL_SUCCESS && (err = clBuildProgram(env->program, 1, &env->device, "", NULL, NULL)) != CL_SUCCESS) {
        build_failed(env, err);
        return false;
    }
    if (err == CL_SUCCESS) {
        call = "clCreateKernel";
        env->kernel = clCreateKernel(env->program, "transform", &err);
    }
    if (err == CL_SUCCESS) {
        call = "the warm-up run of the kernel";
        err = warm_up(env, size);
    }
    if (err != CL_SUCCESS)
        native_failure(env->error, sizeof env->error, CLMEM_API_OPENCL, call, err, NULL);
    return err == CL_SUCCESS;
}

void cl_env_close(struct cl_env *env)
{
    if (env->kernel)
        clReleaseKernel(env->kernel);
    if (env->program)
        clReleaseProgram(env->program);
    if (env->queue)
        clReleaseCommandQueue(env->queue);
    if (env->context)
        clReleaseContext(env->context);
    memset(env, 0, sizeof *env);
}

/* The state of one round trip, so that teardown can undo any prefix. */
struct trip {
    struct vkctx *ctx;
    struct cl_env *env;
    clmem_bridge *bridge;
    clmem_bridge_path path;
    VkDeviceSize size;
    VkBuffer buffer, staging;
    clmem_bridge_vk_memory memory, staging_memory;
    clmem_handle *handle;
    struct anchor_state *anchor; /* the import was given our anchor for the memory */
};

static void on_vk_released(void *user)
{
    atomic_store(&((struct anchor_state *)user)->released, true);
}

static long elapsed_us(const struct timespec *a, const struct timespec *b)
{
    return (long)((b->tv_sec - a->tv_sec) * 1000000L + (b->tv_nsec - a->tv_nsec) / 1000L);
}

/* Record a failure of a clmem call; read the message before anything else
 * can overwrite this thread's record. */
static bool failed_clmem(struct row *row, const char *what)
{
    snprintf(row->reason, sizeof row->reason, "%s: %s", what, clmem_error_message());
    return false;
}

static bool failed_native(struct row *row, const char *what, clmem_api api, int32_t code)
{
    native_failure(row->reason, sizeof row->reason, api, what, code, NULL);
    return false;
}

/* The shared buffer (what the path needs) and a host-visible staging buffer
 * for reading it back through Vulkan. */
static bool make_buffers(struct trip *t, struct row *row)
{
    VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags props = host;
    VkExternalMemoryHandleTypeFlags export_types = 0;

    if (t->path == CLMEM_BRIDGE_PATH_OPAQUE_FD || t->path == CLMEM_BRIDGE_PATH_DMA_BUF) {
        props = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        export_types = t->path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                            : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    }
    if (clmem_bridge_vk_buffer_create(t->bridge, t->size,
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                      props, export_types, &t->buffer, &t->memory) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_vk_buffer_create (shared buffer)");
    if (clmem_bridge_vk_buffer_create(t->bridge, t->size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, host, 0, &t->staging,
                                      &t->staging_memory) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_vk_buffer_create (staging buffer)");
    return true;
}

/* Vulkan writes the pattern, then OpenCL imports the buffer (timed). */
static bool fill_and_import(struct trip *t, struct row *row)
{
    struct timespec a, b;
    clmem_keepalive *ka;
    clmem_status s;
    VkResult vr = vkctx_fill(t->ctx, t->buffer, 0, t->size, FILL_VALUE);

    if (vr != VK_SUCCESS)
        return failed_native(row, "vkCmdFillBuffer (the pattern, submitted and waited for)", CLMEM_API_VULKAN, vr);
    /* Our anchor for the Vulkan memory: the bridge takes its own reference
     * and we drop ours at once, so the callback tells us when the bridge
     * is done with the memory. */
    t->anchor = xrealloc(NULL, sizeof *t->anchor);
    atomic_init(&t->anchor->released, false);
    ka = clmem_keepalive_new(on_vk_released, t->anchor);
    if (!ka) {
        free(t->anchor);
        t->anchor = NULL;
        return failed_clmem(row, "clmem_keepalive_new");
    }
    clock_gettime(CLOCK_MONOTONIC, &a);
    s = clmem_bridge_import_vk(t->bridge, &t->memory, 0, t->size, t->path, ka, t->env->queue, CL_MEM_READ_WRITE,
                               &t->handle);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (s != CLMEM_OK)
        failed_clmem(row, "clmem_bridge_import_vk");
    clmem_keepalive_unref(ka);
    if (s != CLMEM_OK)
        return false;
    row->import_us = elapsed_us(&a, &b);
    return true;
}

/* OpenCL takes the memory, runs x = x*3+1 over it and hands it back
 * (timed from acquire to the end of clFinish). */
static bool transform(struct trip *t, struct row *row)
{
    struct timespec a, b;
    cl_mem mem = clmem_handle_mem(t->handle);
    size_t words = (size_t)t->size / sizeof(cl_uint);
    cl_int err;

    clock_gettime(CLOCK_MONOTONIC, &a);
    if (clmem_bridge_acquire(t->bridge, t->handle, 0, NULL, NULL) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_acquire");
    if ((err = clSetKernelArg(t->env->kernel, 0, sizeof mem, &mem)) != CL_SUCCESS)
        return failed_native(row, "clSetKernelArg", CLMEM_API_OPENCL, err);
    err = clEnqueueNDRangeKernel(t->env->queue, t->env->kernel, 1, NULL, &words, NULL, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return failed_native(row, "clEnqueueNDRangeKernel", CLMEM_API_OPENCL, err);
    if (clmem_bridge_release(t->bridge, t->handle, 0, NULL, NULL) != CLMEM_OK)
        return failed_clmem(row, "clmem_bridge_release");
    if ((err = clFinish(t->env->queue)) != CL_SUCCESS)
        return failed_native(row, "clFinish", CLMEM_API_OPENCL, err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    row->handoff_us = elapsed_us(&a, &b);
    return true;
}

/* Vulkan copies the buffer to the staging buffer; every word must be the
 * transformed pattern. */
static bool read_back(struct trip *t, struct row *row)
{
    void *p = NULL;
    const uint32_t *w;
    size_t words = (size_t)t->size / sizeof(uint32_t), i;
    VkResult vr = vkctx_copy(t->ctx, t->buffer, t->staging, t->size);

    if (vr != VK_SUCCESS)
        return failed_native(row, "vkCmdCopyBuffer (the read-back, submitted and waited for)", CLMEM_API_VULKAN, vr);
    vr = vkMapMemory(t->ctx->device, t->staging_memory.memory, 0, VK_WHOLE_SIZE, 0, &p);
    if (vr != VK_SUCCESS)
        return failed_native(row, "vkMapMemory (staging)", CLMEM_API_VULKAN, vr);
    w = p;
    for (i = 0; i < words && w[i] == EXPECTED_VALUE; i++)
        ;
    if (i < words)
        snprintf(row->reason, sizeof row->reason, "word %zu of %zu is 0x%08x, expected 0x%08x (filled 0x%08x)", i,
                 words, (unsigned)w[i], EXPECTED_VALUE, FILL_VALUE);
    vkUnmapMemory(t->ctx->device, t->staging_memory.memory);
    return i == words;
}

/* Drop the handle, then free the Vulkan memory, but only once the bridge
 * has let go of it: freeing memory OpenCL may still use is the bug this
 * check exists to catch, so then the memory is leaked instead. The bridge
 * lets go after the last handle, once the device work it waits for is done
 * (a driver callback, or clmem_bridge_finish doing it itself): finish is
 * what makes that happen now. */
static void trip_teardown(struct trip *t, struct row *row)
{
    bool ok = row->reason[0] == '\0';

    clmem_handle_unref(t->handle);
    t->handle = NULL;
    if (t->staging)
        clmem_bridge_vk_buffer_destroy(t->bridge, t->staging, &t->staging_memory);
    if (!t->buffer)
        return;
    if (t->anchor && !atomic_load(&t->anchor->released)) {
        clmem_status s = clmem_bridge_finish(t->bridge, FINISH_TIMEOUT_NS);
        if (s != CLMEM_OK) {
            if (ok)
                snprintf(row->reason, sizeof row->reason,
                         "clmem_bridge_finish after the last clmem_handle_unref: %s (memory leaked, not freed)",
                         clmem_error_message());
            return; /* t->anchor leaked on purpose: its release may still come */
        }
        if (!atomic_load(&t->anchor->released)) {
            if (ok)
                snprintf(row->reason, sizeof row->reason,
                         "Vulkan anchor not released: clmem_bridge_finish returned CLMEM_OK, but the import "
                         "still held the Vulkan memory (memory leaked, not freed)");
            return;
        }
    }
    free(t->anchor);
    t->anchor = NULL;
    clmem_bridge_vk_buffer_destroy(t->bridge, t->buffer, &t->memory);
}

void round_trip(struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, clmem_bridge_path path,
                size_t size, struct row *row)
{
    struct trip t = {.ctx = ctx, .env = env, .bridge = bridge, .path = path, .size = size};
    unsigned errors_before = vkctx_validation_errors();
    unsigned new_errors;

    if (make_buffers(&t, row) && fill_and_import(&t, row) && transform(&t, row))
        read_back(&t, row);
    trip_teardown(&t, row);
    new_errors = vkctx_validation_errors() - errors_before;
    if (row->reason[0] == '\0' && new_errors)
        snprintf(row->reason, sizeof row->reason,
                 "the Vulkan validation layer reported %u error(s) (the '# validation error' lines)", new_errors);
    row->status = row->reason[0] ? ROW_FAILED : ROW_OK;
}
