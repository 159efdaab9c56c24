/* SPDX-License-Identifier: MIT */
/* The frame ring's object (frame-ring.h, which says how the ring works):
 * the checks of clmem_bridge_ring_create, the claim on its frames and
 * semaphores, and the references that free it. */
#include "config.h"
#include "frame-ring.h"
#include "handoff-handles.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "opencl/query-cl.h"
#include "versioned.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

static clmem_status check_semaphores(const clmem_bridge *b, const clmem_bridge_ring_info *info, uint32_t depth,
                                     bool *host_ordered)
{
    clmem_bridge_semaphore_mode mode = CLMEM_BRIDGE_SEMAPHORE_BEST;

    for (uint32_t i = 0; i < 2 * depth; i++) {
        const clmem_bridge_semaphore *sem = i < depth ? info->ready[i] : info->done[i - depth];
        const char *list = i < depth ? "ready" : "done";
        uint32_t at = i < depth ? i : i - depth;

        if (!sem)
            return clmem__fail(CLMEM_ERR_NULL_POINTER, "%s[%u] is NULL.", list, (unsigned)at);
        if (sem->bridge != b)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s[%u] belongs to bridge %p, not to bridge %p.", list,
                               (unsigned)at, (void *)sem->bridge, (void *)b);
        if (atomic_load(&sem->in_ring))
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "%s[%u] belongs to another ring.", list, (unsigned)at);
        if (sem->mode == CLMEM_BRIDGE_SEMAPHORE_SYNC_FD)
            return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                               "%s[%u] was imported as a sync fd, which carries one signal per import; the "
                               "ring signals its semaphores again and again: import them as opaque fd (or "
                               "host-ordered).",
                               list, (unsigned)at);
        if (i == 0)
            mode = sem->mode;
        else if (sem->mode != mode)
            return clmem__fail(
                CLMEM_ERR_INVALID_VALUE, "%s[%u] is %s, ready[0] is %s: all of a ring's semaphores must have one mode.",
                list, (unsigned)at, sem->mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED ? "host-ordered" : "opaque fd",
                mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED ? "host-ordered" : "opaque fd");
        for (uint32_t j = 0; j < i; j++) {
            const clmem_bridge_semaphore *other = j < depth ? info->ready[j] : info->done[j - depth];
            if (other == sem || other->vk_sem == sem->vk_sem)
                return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                                   "%s[%u] is the same semaphore as %s[%u]: each signal needs its own, or the "
                                   "binary semaphores cannot alternate.",
                                   list, (unsigned)at, j < depth ? "ready" : "done",
                                   (unsigned)(j < depth ? j : j - depth));
        }
    }
    *host_ordered = mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
    return CLMEM_OK;
}

static clmem_status check_queue(const clmem_bridge *b, cl_command_queue queue)
{
    clmem_status s = clmem__bridge_check_queue(b, queue);

    if (s != CLMEM_OK)
        return s;
    return clmem__cl_require_in_order(queue, "the ring orders its wait, acquire, the kernels, release and signal "
                                             "by enqueueing them in order.");
}

static bool claim(atomic_bool *flag)
{
    bool expected = false;
    return atomic_compare_exchange_strong(flag, &expected, true);
}

/* Mark the frames and semaphores as the ring's, all or none (two rings
 * made at once from one frame: one of them fails). */
static clmem_status claim_all(clmem_bridge_ring *ring)
{
    uint32_t i, sl = 0;

    for (i = 0; i < ring->n; i++)
        if (!claim(&ring->recs[i]->in_ring))
            break;
    for (; i == ring->n && sl < 2 * ring->depth; sl++) {
        struct ring_slot *slot = &ring->slots[sl % ring->depth];
        if (!claim(sl < ring->depth ? &slot->ready->in_ring : &slot->done->in_ring))
            break;
    }
    if (i == ring->n && sl == 2 * ring->depth) {
        ring->claimed = true;
        return CLMEM_OK;
    }
    while (sl-- > 0) {
        struct ring_slot *slot = &ring->slots[sl % ring->depth];
        atomic_store(sl < ring->depth ? &slot->ready->in_ring : &slot->done->in_ring, false);
    }
    while (i-- > 0)
        atomic_store(&ring->recs[i]->in_ring, false);
    return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                       "A frame or semaphore was taken by another ring made at the same time.");
}

/* What ring_free lets go of is whatever was taken so far. */
static void ring_free(clmem_bridge_ring *ring)
{
    clmem_bridge *b = ring->bridge;

    for (uint32_t i = 0; ring->claimed && i < ring->n; i++)
        atomic_store(&ring->recs[i]->in_ring, false);
    for (uint32_t sl = 0; ring->claimed && sl < ring->depth; sl++) {
        atomic_store(&ring->slots[sl].ready->in_ring, false);
        atomic_store(&ring->slots[sl].done->in_ring, false);
    }

    for (uint32_t s = 0; ring->slots && s < ring->depth; s++) {
        struct ring_slot *slot = &ring->slots[s];
        if (slot->fence) {
            /* A batch submitted that OpenCL never took: its wait still
             * holds the fence (the one blocking step, documented). */
            if (slot->fence_in_flight)
                b->vk.WaitForFences(b->device, 1, &slot->fence, VK_TRUE, UINT64_MAX);
            b->vk.DestroyFence(b->device, slot->fence, NULL);
        }
        if (slot->released)
            clReleaseEvent(slot->released);
        clmem_bridge_semaphore_unref(slot->ready);
        clmem_bridge_semaphore_unref(slot->done);
    }
    for (uint32_t i = 0; ring->frames && i < ring->n; i++)
        clmem_handle_unref(ring->frames[i]);
    if (ring->queue)
        clReleaseCommandQueue(ring->queue);
    pthread_cond_destroy(&ring->changed);
    pthread_mutex_destroy(&ring->lock);
    free(ring->slots);
    free(ring->recs);
    free(ring->frames);
    live_free(ring, &ring->live, sizeof *ring);
    clmem_bridge_unref(b);
}

static clmem_status ring_create(clmem_bridge *b, const clmem_bridge_ring_info *info, clmem_bridge_ring **out)
{
    const size_t info_min = offsetof(clmem_bridge_ring_info, flags) + sizeof info->flags;
    clmem_bridge_ring *ring;
    pthread_condattr_t attr;
    bool host_ordered = false;
    uint32_t depth;
    clmem_status s;

    if (out)
        *out = NULL;
    if (!b || !info || !out)
        return fail_null(!b ? "bridge" : !info ? "info" : "out");
    BRIDGE_LIVE(b, "clmem_bridge_ring_create");
    if ((s = clmem__versioned_size_check(info, info->size, info_min, sizeof *info, "clmem_bridge_ring_info")) !=
        CLMEM_OK)
        return s;
    if (!info->frames || !info->ready || !info->done || !info->queue)
        return fail_null_info(!info->frames ? "frames" : !info->ready ? "ready" : !info->done ? "done" : "queue");
    if (info->flags)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Unknown ring flags 0x%x.", (unsigned)info->flags);
    if (info->frame_count == 0 || info->batch_size == 0 || info->frame_count % info->batch_size)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "frame_count (%u) must be a non-zero multiple of batch_size (%u).",
                           (unsigned)info->frame_count, (unsigned)info->batch_size);
    depth = info->frame_count / info->batch_size;
    if ((s = check_queue(b, info->queue)) != CLMEM_OK ||
        (s = check_semaphores(b, info, depth, &host_ordered)) != CLMEM_OK)
        return s;

    ring = FAULT("ring_alloc") ? NULL : calloc(1, sizeof *ring);
    if (ring) {
        ring->frames = calloc(info->frame_count, sizeof *ring->frames);
        ring->recs = calloc(info->frame_count, sizeof *ring->recs);
        ring->slots = calloc(depth, sizeof *ring->slots);
    }
    if (!ring || !ring->frames || !ring->recs || !ring->slots) {
        if (ring) {
            free(ring->frames);
            free(ring->recs);
            free(ring->slots);
        }
        free(ring);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a ring of %u frames failed.", (unsigned)info->frame_count);
    }
    /* The frames: acquire_many's own checks, and none held by OpenCL. */
    s = clmem__handoff_check(b, info->frame_count, (const clmem_handle *const *)info->frames, info->queue,
                             ring->recs);
    for (uint32_t i = 0; s == CLMEM_OK && i < info->frame_count; i++)
        if (atomic_load(&ring->recs[i]->acquired))
            s = clmem__fail(CLMEM_ERR_INVALID_VALUE,
                            "Frame %u is acquired by OpenCL; a ring starts with every frame Vulkan's.", (unsigned)i);
    if (s != CLMEM_OK) {
        free(ring->frames);
        free(ring->recs);
        free(ring->slots);
        free(ring);
        return s;
    }

    refcount_init(&ring->refs);
    ring->live = MARK_RING;
    pthread_mutex_init(&ring->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* the deadlines are monotonic */
    pthread_cond_init(&ring->changed, &attr);
    pthread_condattr_destroy(&attr);
    ring->bridge = clmem_bridge_ref(b);
    ring->n = info->frame_count;
    ring->k = info->batch_size;
    ring->depth = depth;
    ring->host_ordered = host_ordered;
    for (uint32_t i = 0; i < ring->n; i++)
        ring->frames[i] = clmem_handle_ref(info->frames[i]);
    for (uint32_t sl = 0; sl < depth; sl++) {
        ring->slots[sl].ready = clmem_bridge_semaphore_ref(info->ready[sl]);
        ring->slots[sl].done = clmem_bridge_semaphore_ref(info->done[sl]);
    }
    if (clRetainCommandQueue(info->queue) == CL_SUCCESS)
        ring->queue = info->queue;
    for (uint32_t sl = 0; host_ordered && sl < depth; sl++) {
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkResult r = FAULT("vkCreateFence(ring)") ? VK_ERROR_OUT_OF_HOST_MEMORY
                                                  : b->vk.CreateFence(b->device, &fi, NULL, &ring->slots[sl].fence);
        if (r != VK_SUCCESS) {
            ring->slots[sl].fence = VK_NULL_HANDLE;
            ring_free(ring);
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateFence", r,
                                   "Creating the ring's fence for host ordering failed.");
        }
    }
    if (!ring->queue) {
        ring_free(ring);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clRetainCommandQueue", CL_INVALID_COMMAND_QUEUE,
                               "Retaining the ring's queue failed.");
    }
    if ((s = claim_all(ring)) != CLMEM_OK) {
        ring_free(ring);
        return s;
    }
    *out = ring;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_create(clmem_bridge *b, const clmem_bridge_ring_info *info,
                                                   clmem_bridge_ring **out)
{
    return clmem__error_in(__func__, ring_create(b, info, out));
}

CLMEM_EXPORT clmem_bridge_ring *clmem_bridge_ring_ref(clmem_bridge_ring *ring)
{
    if (ring)
        live_ref(&ring->refs, &ring->live, MARK_RING, "clmem_bridge_ring_ref", ring);
    return ring;
}

CLMEM_EXPORT void clmem_bridge_ring_unref(clmem_bridge_ring *ring)
{
    if (ring && live_unref(&ring->refs, &ring->live, MARK_RING, "clmem_bridge_ring_unref", ring))
        ring_free(ring);
}
