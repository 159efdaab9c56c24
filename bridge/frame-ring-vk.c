/* SPDX-License-Identifier: MIT */
/* The frame ring's Vulkan producer (frame-ring.h): vk_next hands out the
 * frames of a batch once OpenCL handed its slot back, vk_submitted
 * publishes the batches whose last frame was submitted, vk_drain ends the
 * producer's side. */
#include "config.h"
#include "deadline.h"
#include "frame-ring.h"
#include "export.h"
#include "fail.h"
#include "fault.h"

#include <pthread.h>
#include <stdint.h>

static clmem_status ring_vk_next(clmem_bridge_ring *ring, uint32_t flags, uint64_t timeout_ns,
                                 clmem_bridge_ring_frame *frame_out)
{
    uint64_t deadline;
    struct ring_slot *slot;
    VkSemaphore wait = VK_NULL_HANDLE;
    uint32_t s, pos;
    bool end;

    if (!ring || !frame_out)
        return fail_null(!ring ? "ring" : "frame_out");
    LIVE_CHECK(ring->live, MARK_RING, "clmem_bridge_ring_vk_next", ring);
    if (flags & ~(uint32_t)CLMEM_BRIDGE_RING_END_BATCH)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Unknown vk_next flags 0x%x.", (unsigned)flags);
    if (ring->drained)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The ring was drained (clmem_bridge_ring_vk_drain): it hands out no more frames.");
    s = (uint32_t)(ring->vk_batch % ring->depth);
    slot = &ring->slots[s];
    pos = ring->vk_pos;
    if (pos == 0) { /* a batch starts: the slot must be OpenCL's no more */
        bool pending;
        cl_event released;

        /* The slot's previous batch must at least be reported: OpenCL
         * cannot take, let alone hand back, what it was not told about. */
        if (ring->vk_batch >= ring->depth && ring->vk_published <= ring->vk_batch - ring->depth)
            return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                               "Batch %llu, the last in frame slot %u, was not reported submitted "
                               "(vk_submitted), so OpenCL can never hand the slot back.",
                               (unsigned long long)(ring->vk_batch - ring->depth), (unsigned)s);

        deadline = deadline_after(timeout_ns);
        pthread_mutex_lock(&ring->lock);
        while (ring->vk_batch >= ring->done_batches + ring->depth)
            if (!clmem__ring_wait_changed(ring, deadline)) {
                uint64_t done = ring->done_batches;
                pthread_mutex_unlock(&ring->lock);
                return clmem__fail(CLMEM_ERR_TIMEOUT,
                                   "Frame slot %u is still OpenCL's: batch %llu is not handed back yet "
                                   "(%llu of the %llu batches taken so far are).",
                                   (unsigned)s, (unsigned long long)(ring->vk_batch - ring->depth),
                                   (unsigned long long)done, (unsigned long long)(ring->vk_batch - ring->depth + 1));
            }
        pending = slot->done_pending;
        released = slot->released;
        pthread_mutex_unlock(&ring->lock);
        if (released) { /* host ordering: the host is the semaphore */
            clmem_status st = clmem__ring_wait_event(released, deadline, "The release of the slot's previous batch");
            if (st != CLMEM_OK)
                return st; /* nothing changed: the next call waits again */
            pthread_mutex_lock(&ring->lock);
            slot->released = NULL;
            pthread_mutex_unlock(&ring->lock);
            clReleaseEvent(released);
        }
        if (pending) {
            wait = slot->done->vk_sem;
            pthread_mutex_lock(&ring->lock);
            slot->done_pending = false;
            pthread_mutex_unlock(&ring->lock);
        }
        slot->first_sequence = ring->vk_frames;
    }
    end = pos + 1 == ring->k || (flags & CLMEM_BRIDGE_RING_END_BATCH);
    frame_out->sequence = ring->vk_frames;
    frame_out->batch = ring->vk_batch;
    frame_out->index = s * ring->k + pos;
    frame_out->position = pos;
    frame_out->handle = ring->frames[frame_out->index];
    frame_out->wait_semaphore = wait;
    frame_out->signal_semaphore = end ? slot->ready->vk_sem : VK_NULL_HANDLE;
    ring->vk_frames++;
    ring->vk_pos = pos + 1;
    slot->count = pos + 1;
    if (end) {
        ring->vk_batch++;
        ring->vk_pos = 0;
    }
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_next(clmem_bridge_ring *ring, uint32_t flags, uint64_t timeout_ns,
                                                    clmem_bridge_ring_frame *frame_out)
{
    return clmem__error_in(__func__, ring_vk_next(ring, flags, timeout_ns, frame_out));
}

/* Has the producer handed out all of `batch` and reported its last frame
 * submitted? (Only for batches not yet published: their slot is not
 * reused before.) */
static bool batch_reported(const clmem_bridge_ring *ring, uint64_t batch)
{
    const struct ring_slot *slot = &ring->slots[batch % ring->depth];
    return batch < ring->vk_batch && slot->first_sequence + slot->count <= ring->vk_reported;
}

static clmem_status ring_vk_submitted(clmem_bridge_ring *ring, const clmem_bridge_ring_frame *frame)
{
    clmem_bridge *b;
    uint64_t publish;
    clmem_status st = CLMEM_OK;

    if (!ring || !frame)
        return fail_null(!ring ? "ring" : "frame");
    LIVE_CHECK(ring->live, MARK_RING, "clmem_bridge_ring_vk_submitted", ring);
    if (frame->sequence >= ring->vk_frames)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Frame %llu was not handed out yet (%llu were).",
                           (unsigned long long)frame->sequence, (unsigned long long)ring->vk_frames);
    /* A frame reported again is only a retry of a failed host-ordered
     * submission below. */
    if (frame->sequence < ring->vk_reported && !batch_reported(ring, ring->vk_published))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "Frame %llu was reported submitted already (frames up to %llu were).",
                           (unsigned long long)frame->sequence, (unsigned long long)ring->vk_reported);
    if (frame->sequence + 1 > ring->vk_reported)
        ring->vk_reported = frame->sequence + 1;

    /* The batches whose last frame is now submitted, in order. */
    b = ring->bridge;
    for (publish = ring->vk_published; batch_reported(ring, publish); publish++) {
        struct ring_slot *slot = &ring->slots[publish % ring->depth];
        if (ring->host_ordered) {
            /* How the host will learn that Vulkan's writes completed: a
             * wait on the batch's signal, with a fence, on the producer's
             * thread (the queue's external synchronisation). */
            VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .waitSemaphoreCount = 1,
                               .pWaitSemaphores = &slot->ready->vk_sem,
                               .pWaitDstStageMask = &stage};
            VkResult r = FAULT("vkQueueSubmit(ring)")
                             ? VK_ERROR_OUT_OF_HOST_MEMORY
                             : b->vk.QueueSubmit(slot->ready->vk_queue, 1, &si, slot->fence);
            if (r != VK_SUCCESS) {
                st = clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkQueueSubmit", r,
                                     "Submitting the host-ordered wait of batch %llu failed; it is not handed to "
                                     "OpenCL (report a frame again to retry).",
                                     (unsigned long long)publish);
                break;
            }
            slot->fence_in_flight = true;
        }
    }
    if (publish != ring->vk_published) {
        ring->vk_published = publish;
        pthread_mutex_lock(&ring->lock);
        ring->submitted_batches = publish;
        pthread_cond_broadcast(&ring->changed);
        pthread_mutex_unlock(&ring->lock);
    }
    return st;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_submitted(clmem_bridge_ring *ring, const clmem_bridge_ring_frame *frame)
{
    return clmem__error_in(__func__, ring_vk_submitted(ring, frame));
}

static clmem_status ring_vk_drain(clmem_bridge_ring *ring, uint64_t timeout_ns, uint32_t capacity,
                                  VkSemaphore *waits_out, uint32_t *count_out)
{
    uint64_t deadline;
    uint32_t needed = 0;

    if (count_out)
        *count_out = 0;
    if (!ring || !count_out || (capacity && !waits_out))
        return fail_null(!ring ? "ring" : !count_out ? "count_out" : "waits_out");
    LIVE_CHECK(ring->live, MARK_RING, "clmem_bridge_ring_vk_drain", ring);
    if (ring->vk_pos != 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "Batch %llu has %u frames handed out and is not ended: end it with "
                           "CLMEM_BRIDGE_RING_END_BATCH before draining.",
                           (unsigned long long)ring->vk_batch, (unsigned)ring->vk_pos);
    if (ring->vk_published != ring->vk_batch)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Batch %llu was not reported submitted (vk_submitted) yet.",
                           (unsigned long long)ring->vk_published);
    deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&ring->lock);
    while (ring->done_batches < ring->vk_batch)
        if (!clmem__ring_wait_changed(ring, deadline)) {
            uint64_t done = ring->done_batches;
            pthread_mutex_unlock(&ring->lock);
            return clmem__fail(CLMEM_ERR_TIMEOUT, "OpenCL had handed back %llu of the %llu batches in time.",
                               (unsigned long long)done, (unsigned long long)ring->vk_batch);
        }
    for (uint32_t sl = 0; sl < ring->depth; sl++)
        needed += ring->slots[sl].done_pending;
    pthread_mutex_unlock(&ring->lock);
    if (needed > capacity) {
        *count_out = needed;
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "%u semaphores are to be waited on, room was given for %u (%u, the ring's slot "
                           "count, always suffices).",
                           (unsigned)needed, (unsigned)capacity, (unsigned)ring->depth);
    }
    /* Host ordering: the releases themselves, which vk_next would wait for. */
    for (uint32_t sl = 0; sl < ring->depth; sl++) {
        struct ring_slot *slot = &ring->slots[sl];
        cl_event released = slot->released; /* consumer's writes are done: every batch is back */
        if (released) {
            clmem_status st = clmem__ring_wait_event(released, deadline, "The release of a batch");
            if (st != CLMEM_OK)
                return st;
            pthread_mutex_lock(&ring->lock);
            slot->released = NULL;
            pthread_mutex_unlock(&ring->lock);
            clReleaseEvent(released);
        }
    }
    pthread_mutex_lock(&ring->lock);
    for (uint32_t sl = 0; sl < ring->depth; sl++)
        if (ring->slots[sl].done_pending) {
            waits_out[(*count_out)++] = ring->slots[sl].done->vk_sem;
            ring->slots[sl].done_pending = false;
        }
    pthread_mutex_unlock(&ring->lock);
    ring->drained = true;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_drain(clmem_bridge_ring *ring, uint64_t timeout_ns, uint32_t capacity,
                                                     VkSemaphore *waits_out, uint32_t *count_out)
{
    return clmem__error_in(__func__, ring_vk_drain(ring, timeout_ns, capacity, waits_out, count_out));
}
