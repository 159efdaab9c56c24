/* SPDX-License-Identifier: MIT */
/* The bridge object: creation (entry points, pairing, capabilities), its
 * references, the counts of its imports and semaphores, and the process's
 * list of bridges. Finishing them (clmem_bridge_finish,
 * clmem_bridge_device_finish) is finish.c's. */
#include "config.h"
#include "bridge.h"
#include "deadline.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "opencl/query-cl.h"
#include "teardown-worker.h"
#include "versioned.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONTEXT_DEVICES 64

/* ------------------------------------------- the process's list of bridges */

/* The process's bridges, for clmem_bridge_device_finish() (finish.c): a
 * bridge is listed at creation and unlisted at the very end of its
 * destruction. All guarded by bridges_lock; `bridge_gone` is broadcast when a bridge leaves the list. */
static pthread_mutex_t bridges_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bridge_gone = PTHREAD_COND_INITIALIZER;
static clmem_bridge *bridges; /* through next_of_process */

static void list_bridge(clmem_bridge *b)
{
    pthread_mutex_lock(&bridges_lock);
    b->next_of_process = bridges;
    bridges = b;
    pthread_mutex_unlock(&bridges_lock);
}

static void unlist_bridge(clmem_bridge *b)
{
    clmem_bridge **p;

    pthread_mutex_lock(&bridges_lock);
    for (p = &bridges; *p && *p != b; p = &(*p)->next_of_process)
        ;
    if (*p)
        *p = b->next_of_process;
    pthread_cond_broadcast(&bridge_gone);
    pthread_mutex_unlock(&bridges_lock);
}

/* A reference on every listed bridge of `device` that still has one:
 * *count_out of them, in a new array the caller frees (NULL when there are
 * none). False when the array cannot be allocated. */
bool clmem__bridges_hold(VkDevice device, clmem_bridge ***held_out, unsigned *count_out)
{
    clmem_bridge **held = NULL;
    unsigned listed = 0, n = 0;

    pthread_mutex_lock(&bridges_lock);
    for (clmem_bridge *b = bridges; b; b = b->next_of_process)
        listed += b->device == device;
    if (listed && !(held = malloc(listed * sizeof *held))) {
        pthread_mutex_unlock(&bridges_lock);
        return false;
    }
    for (clmem_bridge *b = bridges; held && b; b = b->next_of_process)
        if (b->device == device && refcount_get_unless_zero(&b->refs))
            held[n++] = b;
    pthread_mutex_unlock(&bridges_lock);
    if (!n) {
        free(held);
        held = NULL;
    }
    *held_out = held;
    *count_out = n;
    return true;
}

/* Until no bridge of `device` is listed whose last reference is gone (one
 * another thread is destroying), or the monotonic deadline. */
bool clmem__bridges_wait_destroyed(VkDevice device, uint64_t deadline)
{
    bool dying;

    pthread_mutex_lock(&bridges_lock);
    for (;;) {
        uint64_t left = time_left(deadline);
        struct timespec until;

        dying = false;
        for (clmem_bridge *b = bridges; b && !dying; b = b->next_of_process)
            dying = b->device == device && atomic_load(&b->refs) == 0;
        if (!dying || !left)
            break;
        /* `bridge_gone` uses CLOCK_REALTIME: wait in slices of at most 100 ms, so
         * that a clock step cannot stretch the wait. */
        until = realtime_in(left < 100000000u ? left : 100000000u);
        pthread_cond_timedwait(&bridge_gone, &bridges_lock, &until);
    }
    pthread_mutex_unlock(&bridges_lock);
    return !dying;
}

/* ---------------------------------------------------------------- the bridge */

/* The device of the context the bridge works with: the one named, or the
 * one with Vulkan's deviceUUID, or the context's only device. */
static clmem_status choose_cl_device(const struct vkfn *vk, VkPhysicalDevice pd, cl_context context,
                                     cl_device_id wanted, cl_device_id *out)
{
    cl_device_id devices[MAX_CONTEXT_DEVICES];
    size_t bytes = 0;
    unsigned char vk_uuid[VK_UUID_SIZE];
    char vk_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    cl_uint n;
    cl_int err = FAULT("clGetContextInfo(CL_CONTEXT_DEVICES)")
                     ? CL_OUT_OF_HOST_MEMORY
                     : clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof devices, devices, &bytes);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetContextInfo(CL_CONTEXT_DEVICES)", err,
                               "context is not a valid cl_context (or has more than %d devices).",
                               MAX_CONTEXT_DEVICES);
    n = (cl_uint)(bytes / sizeof devices[0]);
    if (wanted) {
        for (cl_uint i = 0; i < n; i++)
            if (devices[i] == wanted) {
                *out = wanted;
                return CLMEM_OK;
            }
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH, "info->cl_device %p is not one of the context's %u devices.",
                           (void *)wanted, n);
    }
    clmem__vk_device_identity(vk, pd, vk_uuid, vk_name);
    for (cl_uint i = 0; i < n; i++) {
        unsigned char cl_uuid[16];
        if (clmem__cl_device_uuid(devices[i], cl_uuid) && memcmp(cl_uuid, vk_uuid, 16) == 0) {
            *out = devices[i];
            return CLMEM_OK;
        }
    }
    if (n == 1) { /* not the same device: the fd paths will say so; host-mapped works */
        *out = devices[0];
        return CLMEM_OK;
    }
    return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                       "None of the context's %u devices has the deviceUUID of Vulkan device %s; name one in "
                       "info->cl_device.",
                       n, vk_name);
}

static clmem_status read_info(const clmem_bridge_info *info, clmem_bridge_info *copy)
{
    const size_t first_version = offsetof(clmem_bridge_info, flags); /* flags may be absent */
    clmem_status s;

    memset(copy, 0, sizeof *copy);
    if ((s = clmem__versioned_size_check(info, info->size, first_version, sizeof *info, "clmem_bridge_info")) !=
        CLMEM_OK)
        return s;
    memcpy(copy, info, info->size < sizeof *copy ? info->size : sizeof *copy);
    if (!copy->instance || !copy->physical_device || !copy->device || !copy->context)
        return fail_null_info(!copy->instance          ? "instance"
                              : !copy->physical_device ? "physical_device"
                              : !copy->device          ? "device"
                                                       : "context");
    if (copy->flags & ~(uint32_t)CLMEM_BRIDGE_NO_IMPORT_CACHE)
        return fail_unknown_bits("info->flags", copy->flags, copy->flags & ~(uint32_t)CLMEM_BRIDGE_NO_IMPORT_CACHE);
    return CLMEM_OK;
}

static clmem_status bridge_create(const clmem_bridge_info *info, clmem_bridge **out)
{
    clmem_bridge_info in;
    clmem_bridge *b;
    clmem_status s;
    cl_int err;

    if (out)
        *out = NULL;
    if (!info || !out)
        return fail_null(!info ? "info" : "out");
    if ((s = read_info(info, &in)) != CLMEM_OK)
        return s;
    /* Aligned for the import cache's shards, each on its own cache lines
     * (cache.h); sizeof *b is a multiple of CACHE_PAIR because of them. */
    b = FAULT("bridge_alloc") ? NULL : aligned_alloc(CACHE_PAIR, sizeof *b);
    if (!b)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a bridge failed.");
    memset(b, 0, sizeof *b);
    b->instance = in.instance;
    b->physical_device = in.physical_device;
    b->device = in.device;
    b->context = in.context;
    b->flags = in.flags;
    if ((s = clmem__vkfn_load_instance(&b->vk, in.get_instance_proc_addr, in.instance)) != CLMEM_OK ||
        (s = clmem__vkfn_load_device(&b->vk, in.device)) != CLMEM_OK ||
        (s = choose_cl_device(&b->vk, in.physical_device, in.context, in.cl_device, &b->cl_device)) != CLMEM_OK)
        goto fail;
    err = clGetDeviceInfo(b->cl_device, CL_DEVICE_PLATFORM, sizeof b->platform, &b->platform, NULL);
    if (err != CL_SUCCESS) {
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetDeviceInfo(CL_DEVICE_PLATFORM)", err,
                            "Finding the OpenCL device's platform failed.");
        goto fail;
    }
    clmem__clext_load(&b->cl, b->platform);
    if ((s = clmem__caps_compute(&b->caps, &b->vk, in.physical_device, b->cl_device)) != CLMEM_OK)
        goto fail;
    err = FAULT("clRetainContext") ? CL_OUT_OF_HOST_MEMORY : clRetainContext(in.context);
    if (err != CL_SUCCESS) {
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainContext", err,
                            "Retaining the context failed.");
        goto fail;
    }
    refcount_init(&b->refs);
    b->live = MARK_BRIDGE;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->changed, NULL);
    pthread_mutex_init(&b->check_lock, NULL);
    clmem__cache_init(&b->cache, !(in.flags & CLMEM_BRIDGE_NO_IMPORT_CACHE));
    clmem__host_maps_init(&b->maps, &b->vk, in.device);
    clmem__own_memory_init(&b->own);
    clmem__teardown_worker_start(); /* its imports' teardowns start there (teardown-worker.h) */
    list_bridge(b);
    *out = b;
    return CLMEM_OK;

fail:
    free(b);
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_create(const clmem_bridge_info *info, clmem_bridge **out)
{
    return clmem__error_in(__func__, bridge_create(info, out));
}

CLMEM_EXPORT clmem_bridge *clmem_bridge_ref(clmem_bridge *b)
{
    if (b)
        live_ref(&b->refs, &b->live, MARK_BRIDGE, "clmem_bridge_ref", b);
    return b;
}

static void bridge_destroy(clmem_bridge *b)
{
    /* Nothing refers to it: every import and semaphore held a reference. */
    clmem__own_memory_destroy(&b->own);
    clmem__cache_destroy(&b->cache);
    pthread_cond_destroy(&b->changed);
    pthread_mutex_destroy(&b->lock);
    pthread_mutex_destroy(&b->check_lock);
    clReleaseContext(b->context);
    unlist_bridge(b); /* last: clmem_bridge_device_finish() returns once this ran */
    live_free(b, &b->live, sizeof *b);
}

CLMEM_EXPORT void clmem_bridge_unref(clmem_bridge *b)
{
    if (b && live_unref(&b->refs, &b->live, MARK_BRIDGE, "clmem_bridge_unref", b))
        bridge_destroy(b);
}

/* The accessors' check: a NULL bridge is answered with the accessor's
 * empty value, a bridge that is not live aborts. */
static bool bridge_given(const clmem_bridge *b, const char *call)
{
    if (!b)
        return false;
    BRIDGE_LIVE(b, call);
    return true;
}

CLMEM_EXPORT cl_context clmem_bridge_context(const clmem_bridge *b)
{
    return bridge_given(b, "clmem_bridge_context") ? b->context : NULL;
}

CLMEM_EXPORT cl_device_id clmem_bridge_cl_device(const clmem_bridge *b)
{
    return bridge_given(b, "clmem_bridge_cl_device") ? b->cl_device : NULL;
}

CLMEM_EXPORT VkDevice clmem_bridge_vk_device(const clmem_bridge *b)
{
    return bridge_given(b, "clmem_bridge_vk_device") ? b->device : VK_NULL_HANDLE;
}

CLMEM_EXPORT uint32_t clmem_bridge_caps(const clmem_bridge *b)
{
    return bridge_given(b, "clmem_bridge_caps") ? b->caps.bits : 0;
}

static clmem_status check_path(const clmem_bridge *b, clmem_bridge_path path)
{
    if (!b)
        return fail_null("bridge");
    BRIDGE_LIVE(b, "clmem_bridge_check_path");
    if (path != CLMEM_BRIDGE_PATH_OPAQUE_FD && path != CLMEM_BRIDGE_PATH_DMA_BUF &&
        path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return fail_not_concrete("path", (int)path);
    return clmem__caps_report(&b->caps.path[CAPS_PATH(path)]);
}

CLMEM_EXPORT clmem_status clmem_bridge_check_path(const clmem_bridge *b, clmem_bridge_path path)
{
    return clmem__error_in(__func__, check_path(b, path));
}

static clmem_status check_semaphore(const clmem_bridge *b, clmem_bridge_semaphore_mode mode)
{
    if (!b)
        return fail_null("bridge");
    BRIDGE_LIVE(b, "clmem_bridge_check_semaphore");
    if (mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        return CLMEM_OK;
    if (mode != CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD && mode != CLMEM_BRIDGE_SEMAPHORE_SYNC_FD)
        return fail_not_concrete("mode", (int)mode);
    return clmem__caps_report(&b->caps.semaphore[mode]);
}

CLMEM_EXPORT clmem_status clmem_bridge_check_semaphore(const clmem_bridge *b, clmem_bridge_semaphore_mode mode)
{
    return clmem__error_in(__func__, check_semaphore(b, mode));
}

clmem_status clmem__bridge_check_queue(const clmem_bridge *b, cl_command_queue queue)
{
    cl_context queue_context = NULL;
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", err,
                               "queue is not a valid command queue.");
    if (queue_context != b->context)
        return clmem__fail(CLMEM_ERR_CONTEXT_MISMATCH,
                           "The queue belongs to context %p, not to the bridge's context %p.", (void *)queue_context,
                           (void *)b->context);
    return CLMEM_OK;
}

/* ------------------------------------------------------------ bookkeeping */

void clmem__bridge_import_born(clmem_bridge *b)
{
    pthread_mutex_lock(&b->lock);
    b->live_imports++;
    pthread_mutex_unlock(&b->lock);
}

void clmem__bridge_import_failed(clmem_bridge *b)
{
    pthread_mutex_lock(&b->lock);
    b->live_imports--;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

void clmem__bridge_import_dying(clmem_bridge *b)
{
    pthread_mutex_lock(&b->lock);
    b->live_imports--;
    b->tearing_down++;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

void clmem__bridge_import_gone(clmem_bridge *b)
{
    bool last;

    pthread_mutex_lock(&b->lock);
    b->tearing_down--;
    /* The record's reference goes under the lock, with the count: a finish
     * that sees the count drop (it holds a reference of its own while it
     * waits) knows no teardown still holds the bridge, so the caller's
     * unref after it is the last and the context goes on the caller's
     * thread, not on a driver's. */
    last = refcount_put(&b->refs);
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
    if (last)
        bridge_destroy(b);
}

void clmem__bridge_semaphore_count(clmem_bridge *b, int delta)
{
    pthread_mutex_lock(&b->lock);
    b->live_semaphores = (unsigned)((int)b->live_semaphores + delta);
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}
