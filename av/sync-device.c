/* SPDX-License-Identifier: MIT */
/* Device order (clmem-av.h, clmem_av_order): a frame handed between
 * FFmpeg's Vulkan work and OpenCL's with no host wait, the way OpenCL's
 * CTS (test_vulkan) and FFmpeg's own CUDA interop do it, through binary
 * semaphores, since OpenCL has no timeline semaphores and Vulkan exports
 * none as a sync fd:
 *
 *   acquire  Vulkan:  wait sem[p] >= sem_value[p]; barriers: layout
 *                     GENERAL, queue-family release to EXTERNAL; signal
 *                     to_cl (binary)
 *            OpenCL:  wait to_cl; acquire the planes
 *   release  OpenCL:  release the planes; signal from_cl; flush
 *            Vulkan:  wait from_cl; barriers: queue-family acquire from
 *                     EXTERNAL; signal sem[p] = sem_value[p] + 1, stored
 *
 * Every submission also signals the sync object's own timeline semaphore
 * `progress` at the next value, which is how the slots learn, without a
 * host wait, that their command buffers and the frame may be let go. Each
 * frame in flight has a slot: its two binary semaphores (imported into
 * OpenCL once), its two command buffers (recorded anew per frame, in the
 * sync object's own pool) and a reference on its frame. A slot is taken
 * again only once its release's submission completed, so each binary
 * semaphore alternates strictly between one signal and one wait, as the
 * frame ring's do (a second signal before the wait hung NVIDIA's driver).
 *
 * The submissions go to one queue of FFmpeg's transfer family (sync.h):
 * on NVIDIA a transfer-only queue, where a semaphore-only submission costs
 * about 85 us against about 400 us on the graphics queue (the GPU's
 * context switch; docs/driver-notes.md, docs/probes/tlsync-probe.c). */
#include "config.h"
#include "error-private.h"
#include "opencl/query-cl.h"
#include "sync.h"

#include <string.h>

#if CLMEM_AV_FFMPEG_LOCKS
/* FFmpeg 6.1's queue lock (deprecated, not removed, in 8.1). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void lock_queue(clmem_av_sync *sync)
{
    if (sync->vk->lock_queue)
        sync->vk->lock_queue((AVHWDeviceContext *)sync->device->data, sync->family, sync->index);
}

static void unlock_queue(clmem_av_sync *sync)
{
    if (sync->vk->unlock_queue)
        sync->vk->unlock_queue((AVHWDeviceContext *)sync->device->data, sync->family, sync->index);
}
#pragma GCC diagnostic pop
#else
/* FFmpeg 5.1: no queue lock; the caller keeps other threads off FFmpeg's
 * device (clmem_av_sync_acquire()). */
static void lock_queue(clmem_av_sync *sync)
{
    (void)sync;
}

static void unlock_queue(clmem_av_sync *sync)
{
    (void)sync;
}
#endif

static clmem_status vk_failed(const char *call, VkResult r, const char *what)
{
    return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, call, r, "%s failed.", what);
}

/* A binary semaphore exportable as opaque fd, for OpenCL to import. */
static clmem_status binary_semaphore(clmem_av_sync *sync, VkSemaphore *out)
{
    VkExportSemaphoreCreateInfo export = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                          .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &export};
    VkResult r = sync->fn.create_semaphore(sync->vk->act_dev, &info, sync->vk->alloc, out);

    if (r != VK_SUCCESS) {
        *out = VK_NULL_HANDLE;
        return vk_failed("vkCreateSemaphore", r, "Making a binary semaphore to share with OpenCL");
    }
    return CLMEM_OK;
}

static clmem_status slot_open(clmem_av_sync *sync, struct av_slot *slot)
{
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = sync->pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 2};
    VkCommandBuffer cbs[2];
    VkResult r;
    clmem_status s;

    if (!(slot->frame = av_frame_alloc()))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating an AVFrame failed.");
    if ((s = binary_semaphore(sync, &slot->to_cl)) != CLMEM_OK || (s = binary_semaphore(sync, &slot->from_cl)) != CLMEM_OK)
        return s;
    if ((s = clmem_bridge_semaphore_import(sync->bridge, VK_NULL_HANDLE, slot->to_cl, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
                                           NULL, &slot->cl_to)) != CLMEM_OK ||
        (s = clmem_bridge_semaphore_import(sync->bridge, VK_NULL_HANDLE, slot->from_cl,
                                           CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD, NULL, &slot->cl_from)) != CLMEM_OK)
        return s;
    if ((r = sync->fn.allocate_buffers(sync->vk->act_dev, &alloc, cbs)) != VK_SUCCESS)
        return vk_failed("vkAllocateCommandBuffers", r, "Allocating a frame's command buffers");
    slot->acquire_cb = cbs[0];
    slot->release_cb = cbs[1];
    slot->state = SLOT_FREE;
    return CLMEM_OK;
}

clmem_status clmem__av_device_open(clmem_av_sync *sync)
{
    const AVVulkanDeviceContext *vk = sync->vk;
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkSemaphoreTypeCreateInfo timeline = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                          .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo progress = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &timeline};
    VkResult r;
    clmem_status s;

#define DEVICE_PROC(field, name) ((sync->fn.field = (void *)clmem__av_device_proc(vk, name)) != NULL)
    if (!DEVICE_PROC(get_queue, "vkGetDeviceQueue") || !DEVICE_PROC(create_pool, "vkCreateCommandPool") ||
        !DEVICE_PROC(destroy_pool, "vkDestroyCommandPool") ||
        !DEVICE_PROC(allocate_buffers, "vkAllocateCommandBuffers") || !DEVICE_PROC(begin, "vkBeginCommandBuffer") ||
        !DEVICE_PROC(end, "vkEndCommandBuffer") || !DEVICE_PROC(barrier, "vkCmdPipelineBarrier") ||
        !DEVICE_PROC(submit, "vkQueueSubmit") || !DEVICE_PROC(create_semaphore, "vkCreateSemaphore") ||
        !DEVICE_PROC(destroy_semaphore, "vkDestroySemaphore") || !DEVICE_PROC(counter, "vkGetSemaphoreCounterValue"))
        return CLMEM_ERR_UNSUPPORTED;
#undef DEVICE_PROC
    if (vk->queue_family_tx_index < 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "FFmpeg's Vulkan device context has no transfer queue family.");
    sync->family = (uint32_t)vk->queue_family_tx_index;
    sync->index = vk->nb_tx_queues > 0 ? (uint32_t)vk->nb_tx_queues - 1 : 0;
    sync->nqf = clmem__av_queue_families(vk, sync->qfs);
    sync->fn.get_queue(vk->act_dev, sync->family, sync->index, &sync->queue);

    pool.queueFamilyIndex = sync->family;
    if ((r = sync->fn.create_pool(vk->act_dev, &pool, vk->alloc, &sync->pool)) != VK_SUCCESS) {
        sync->pool = VK_NULL_HANDLE;
        return vk_failed("vkCreateCommandPool", r, "Making the sync object's command pool");
    }
    if ((r = sync->fn.create_semaphore(vk->act_dev, &progress, vk->alloc, &sync->progress)) != VK_SUCCESS) {
        sync->progress = VK_NULL_HANDLE;
        return vk_failed("vkCreateSemaphore", r, "Making the sync object's timeline semaphore");
    }
    for (uint32_t i = 0; i < sync->nslots; i++)
        if ((s = slot_open(sync, &sync->slots[i])) != CLMEM_OK)
            return s;
    return CLMEM_OK;
}

/* Let go of the frames of slots whose last submission completed. */
static void reap(clmem_av_sync *sync)
{
    uint64_t done = 0;

    if (sync->fn.counter(sync->vk->act_dev, sync->progress, &done) != VK_SUCCESS)
        return;
    for (uint32_t i = 0; i < sync->nslots; i++) {
        struct av_slot *slot = &sync->slots[i];
        if (slot->state == SLOT_RELEASING && slot->done_at <= done) {
            av_frame_unref(slot->frame);
            slot->vkf = NULL;
            slot->state = SLOT_FREE;
        }
    }
}

static clmem_status wait_progress(clmem_av_sync *sync, uint64_t value, uint64_t timeout_ns)
{
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 1,
                                .pSemaphores = &sync->progress,
                                .pValues = &value};
    VkResult r = sync->host.wait(sync->vk->act_dev, &info, timeout_ns);

    if (r == VK_TIMEOUT)
        return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_VULKAN, "vkWaitSemaphores", r,
                               "A frame's Vulkan submission was still waiting for OpenCL after %s.",
                               clmem__duration(timeout_ns).text);
    if (r != VK_SUCCESS)
        return vk_failed("vkWaitSemaphores", r, "Waiting for the sync object's submissions");
    return CLMEM_OK;
}

void clmem__av_device_close(clmem_av_sync *sync)
{
    VkDevice dev = sync->vk->act_dev;

    if (sync->progress) {
        wait_progress(sync, sync->submitted, UINT64_MAX);
        sync->fn.destroy_semaphore(dev, sync->progress, sync->vk->alloc);
    }
    for (uint32_t i = 0; i < sync->nslots; i++) {
        struct av_slot *slot = &sync->slots[i];
        av_frame_free(&slot->frame);
        clmem_bridge_semaphore_unref(slot->cl_to);
        clmem_bridge_semaphore_unref(slot->cl_from);
        if (slot->to_cl)
            sync->fn.destroy_semaphore(dev, slot->to_cl, sync->vk->alloc);
        if (slot->from_cl)
            sync->fn.destroy_semaphore(dev, slot->from_cl, sync->vk->alloc);
    }
    if (sync->pool)
        sync->fn.destroy_pool(dev, sync->pool, sync->vk->alloc); /* frees the command buffers */
}

clmem_status clmem__av_device_finish_locked(clmem_av_sync *sync, uint64_t timeout_ns)
{
    clmem_status s = wait_progress(sync, sync->submitted, timeout_ns);
    reap(sync);
    return s;
}

/* A slot for a new frame: free, or its release's submission completed,
 * or (waiting up to timeout_ns) the oldest release's. */
static clmem_status take_slot(clmem_av_sync *sync, uint64_t timeout_ns, struct av_slot **out)
{
    struct av_slot *oldest = NULL;
    clmem_status s;

    reap(sync);
    for (uint32_t i = 0; i < sync->nslots; i++) {
        struct av_slot *slot = &sync->slots[i];
        if (slot->state == SLOT_FREE) {
            *out = slot;
            return CLMEM_OK;
        }
        if (slot->state == SLOT_RELEASING && (!oldest || slot->done_at < oldest->done_at))
            oldest = slot;
    }
    if (!oldest)
        return clmem__fail(CLMEM_ERR_TIMEOUT,
                           "All %u frames in flight of the sync object are acquired and not released: release "
                           "one first (or make the sync object with more frames_in_flight).",
                           sync->nslots);
    if ((s = wait_progress(sync, oldest->done_at, timeout_ns)) != CLMEM_OK)
        return s;
    reap(sync);
    *out = oldest;
    return CLMEM_OK;
}

/* The queue families of a barrier that hands plane images to or from
 * OpenCL: FFmpeg makes its images CONCURRENT among its families where it
 * has several (then the other index is IGNORED:
 * VUID-VkImageMemoryBarrier-image-04071), else EXCLUSIVE, owned by that
 * one family, which is ours. */
static uint32_t own_family(const clmem_av_sync *sync)
{
    return sync->nqf > 1 ? VK_QUEUE_FAMILY_IGNORED : sync->family;
}

/* Record the barriers of every plane: to OpenCL (layout GENERAL,
 * released to EXTERNAL) or from it (acquired from EXTERNAL). */
static VkResult record(clmem_av_sync *sync, VkCommandBuffer cb, const struct av_frame_call *c, bool to_opencl)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkImageMemoryBarrier bar[CLMEM_AV_MAX_PLANES];
    VkResult r;

    for (uint32_t p = 0; p < c->planes; p++) {
        bar[p] = (VkImageMemoryBarrier){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
            /* FFmpeg's writes are made visible by the wait on its timeline
             * semaphore, OpenCL's by the binary semaphore's signal. */
            .srcAccessMask = 0,
            .dstAccessMask = to_opencl ? 0 : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
            .oldLayout = to_opencl ? c->vkf->layout[p] : VK_IMAGE_LAYOUT_GENERAL,
            .newLayout = VK_IMAGE_LAYOUT_GENERAL,
            .srcQueueFamilyIndex = to_opencl ? own_family(sync) : VK_QUEUE_FAMILY_EXTERNAL,
            .dstQueueFamilyIndex = to_opencl ? VK_QUEUE_FAMILY_EXTERNAL : own_family(sync),
            .image = c->vkf->img[p],
            .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    }
    if ((r = sync->fn.begin(cb, &begin)) != VK_SUCCESS)
        return r;
    sync->fn.barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL,
                     c->planes, bar);
    return sync->fn.end(cb);
}

/* One submission on the sync object's queue: waits (binary semaphores'
 * values are ignored), the command buffer, signals, and `progress` at the
 * next value, which *done_at gets. */
static VkResult submit(clmem_av_sync *sync, uint32_t nwait, const VkSemaphore *wait, const uint64_t *wait_values,
                       VkCommandBuffer cb, uint32_t nsignal, const VkSemaphore *signal, const uint64_t *signal_values,
                       uint64_t *done_at)
{
    VkSemaphore signals[CLMEM_AV_MAX_PLANES + 1];
    uint64_t values[CLMEM_AV_MAX_PLANES + 1];
    VkPipelineStageFlags stages[CLMEM_AV_MAX_PLANES];
    VkTimelineSemaphoreSubmitInfo timeline = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                              .waitSemaphoreValueCount = nwait,
                                              .pWaitSemaphoreValues = wait_values,
                                              .signalSemaphoreValueCount = nsignal + 1,
                                              .pSignalSemaphoreValues = values};
    VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .pNext = &timeline,
                         .waitSemaphoreCount = nwait,
                         .pWaitSemaphores = wait,
                         .pWaitDstStageMask = stages,
                         .commandBufferCount = 1,
                         .pCommandBuffers = &cb,
                         .signalSemaphoreCount = nsignal + 1,
                         .pSignalSemaphores = signals};
    VkResult r;

    for (uint32_t i = 0; i < nwait; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    memcpy(signals, signal, nsignal * sizeof *signal);
    memcpy(values, signal_values, nsignal * sizeof *values);
    signals[nsignal] = sync->progress;
    values[nsignal] = sync->submitted + 1;
    lock_queue(sync);
    r = sync->fn.submit(sync->queue, 1, &info, VK_NULL_HANDLE);
    unlock_queue(sync);
    if (r == VK_SUCCESS)
        *done_at = ++sync->submitted;
    return r;
}

/* Hand the slot's frame back to FFmpeg: the Vulkan half of a release.
 * Waits for `wait` (from_cl signalled by OpenCL after its release, or
 * to_cl when OpenCL never took the frame), or for nothing where OpenCL was
 * finished on the host instead; acquires the planes back from EXTERNAL,
 * signals sem_value + 1, and stores it in the frame with layout and
 * access. A failed submission leaves the slot broken (its semaphore
 * signalled with no wait to come). */
static clmem_status hand_back(clmem_av_sync *sync, const struct av_frame_call *c, struct av_slot *slot,
                              VkSemaphore wait)
{
    uint64_t zero = 0, values[CLMEM_AV_MAX_PLANES];
    VkResult r;

    clmem__av_lock_frame(c);
    for (uint32_t p = 0; p < c->planes; p++)
        values[p] = c->vkf->sem_value[p] + 1;
    r = record(sync, slot->release_cb, c, false);
    if (r == VK_SUCCESS)
        r = submit(sync, wait ? 1 : 0, &wait, &zero, slot->release_cb, c->planes, c->vkf->sem, values, &slot->done_at);
    if (r != VK_SUCCESS) {
        clmem__av_unlock_frame(c);
        slot->state = SLOT_BROKEN;
        return vk_failed("vkQueueSubmit", r,
                         "Submitting the frame's hand-back to FFmpeg (its semaphores are not signalled; the slot is "
                         "not used again)");
    }
    for (uint32_t p = 0; p < c->planes; p++) {
        c->vkf->sem_value[p] = values[p];
        c->vkf->layout[p] = VK_IMAGE_LAYOUT_GENERAL;
        c->vkf->access[p] = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
#if CLMEM_AV_FFMPEG_LOCKS
        /* FFmpeg 6.1 records which family owns an EXCLUSIVE image (IGNORED
         * for CONCURRENT ones): now ours, acquired from EXTERNAL. */
        c->vkf->queue_family[p] = own_family(sync);
#endif
    }
    clmem__av_unlock_frame(c);
    slot->state = SLOT_RELEASING;
    return CLMEM_OK;
}

/* OpenCL's half of a release's ordering: signal from_cl on `queue` (with a
 * flush), or, where OpenCL refuses the signal, finish the queue on the
 * host. The semaphore Vulkan is to wait on, or VK_NULL_HANDLE. */
static VkSemaphore signal_from_cl(clmem_av_sync *sync, struct av_slot *slot, cl_command_queue queue)
{
    if (clmem_bridge_semaphore_signal(sync->bridge, slot->cl_from, queue, 0, NULL, NULL) == CLMEM_OK)
        return slot->from_cl;
    clFinish(queue);
    return VK_NULL_HANDLE;
}

clmem_status clmem__av_device_live_check(clmem_av_sync *sync, VkFormat format, cl_command_queue queue)
{
    clmem_status s;

    pthread_mutex_lock(&sync->lock);
    lock_queue(sync);
    s = clmem_bridge_image_live_check(sync->bridge, format, CLMEM_BRIDGE_PATH_BEST, sync->queue, sync->family, queue);
    unlock_queue(sync);
    pthread_mutex_unlock(&sync->lock);
    return s;
}

clmem_status clmem__av_device_acquire_locked(clmem_av_sync *sync, const struct av_frame_call *c, AVFrame *frame,
                                             const clmem_av_frame_planes *planes, cl_command_queue queue,
                                             uint64_t timeout_ns, cl_event *event_out)
{
    struct av_slot *slot = NULL;
    const char *call = "vkQueueSubmit";
    uint64_t zero = 0;
    VkResult r;
    clmem_status s;

    for (uint32_t i = 0; i < sync->nslots; i++)
        if (sync->slots[i].state == SLOT_ACQUIRED && sync->slots[i].vkf == c->vkf)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "The frame is acquired through this sync object already: release it first.");
    /* Asked at every acquire: a queue remembered by its address could be
     * released and another made at the same address. */
    s = clmem__cl_require_in_order(queue, "device order enqueues the semaphore wait before the acquire, and the "
                                          "release before the signal, and needs them run in that order.");
    if (s != CLMEM_OK || (s = take_slot(sync, timeout_ns, &slot)) != CLMEM_OK)
        return s;
    if (av_frame_ref(slot->frame, frame) < 0)
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, "av_frame_ref", 0,
                               "Taking a reference on the frame for its release failed.");

    /* Vulkan: after FFmpeg's work on the frame, to OpenCL. */
    clmem__av_lock_frame(c);
    if ((r = record(sync, slot->acquire_cb, c, true)) != VK_SUCCESS)
        call = "vkBeginCommandBuffer or vkEndCommandBuffer";
    else
        r = submit(sync, c->planes, c->vkf->sem, c->vkf->sem_value, slot->acquire_cb, 1, &slot->to_cl, &zero,
                   &slot->done_at);
    clmem__av_unlock_frame(c);
    if (r != VK_SUCCESS) {
        av_frame_unref(slot->frame);
        return vk_failed(call, r, "Submitting the frame's handoff to OpenCL (nothing was submitted)");
    }
    slot->vkf = c->vkf;
    slot->state = SLOT_ACQUIRED;

    /* OpenCL: after Vulkan's signal, the acquire. */
    if ((s = clmem_bridge_semaphore_wait(sync->bridge, slot->cl_to, queue, 0, NULL, NULL)) != CLMEM_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        hand_back(sync, c, slot, slot->to_cl); /* Vulkan consumes its own signal */
        return clmem__fail(s, "%s The frame is handed back to FFmpeg.", why);
    }
    if ((s = clmem_bridge_acquire_many(sync->bridge, planes->count, planes->planes, queue, 0, NULL, event_out)) !=
        CLMEM_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        hand_back(sync, c, slot, signal_from_cl(sync, slot, queue));
        return clmem__fail(s, "%s The frame is handed back to FFmpeg.", why);
    }
    return CLMEM_OK;
}

clmem_status clmem__av_device_release_locked(clmem_av_sync *sync, const struct av_frame_call *c,
                                             const clmem_av_frame_planes *planes, cl_command_queue queue,
                                             cl_uint num_events, const cl_event *wait_list)
{
    struct av_slot *slot = NULL;
    clmem_status s;

    for (uint32_t i = 0; i < sync->nslots && !slot; i++)
        if (sync->slots[i].state == SLOT_ACQUIRED && sync->slots[i].vkf == c->vkf)
            slot = &sync->slots[i];
    if (!slot)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The frame is not acquired through this sync object: release what "
                                                    "clmem_av_sync_acquire() acquired, on the same sync object.");
    if ((s = clmem_bridge_release_many(sync->bridge, planes->count, planes->planes, queue, num_events, wait_list,
                                       NULL)) != CLMEM_OK)
        return s;
    return hand_back(sync, c, slot, signal_from_cl(sync, slot, queue));
}
