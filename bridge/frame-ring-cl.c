/* SPDX-License-Identifier: MIT */
/* The frame ring's OpenCL consumer (frame-ring.h): cl_next takes the next
 * published batch (the wait on its ready semaphore, or on the host
 * ordering's fence, then the acquire), cl_done hands it back (the release,
 * then the done signal, or the release's event for the producer). */
#include "config.h"
#include "deadline.h"
#include "frame-ring.h"
#include "handoff.h"
#include "export.h"
#include "fail.h"

#include <pthread.h>
#include <stdint.h>

/* What cl_next and cl_done check first: *event_out NULL, the ring and the
 * batch argument given, the ring live. */
static clmem_status check_cl_call(const clmem_bridge_ring *ring, const void *batch, const char *batch_name,
                                  cl_event *event_out, const char *call)
{
    if (event_out)
        *event_out = NULL;
    if (!ring || !batch)
        return fail_null(!ring ? "ring" : batch_name);
    LIVE_CHECK(ring->live, MARK_RING, call, ring);
    return CLMEM_OK;
}

static clmem_status ring_cl_next(clmem_bridge_ring *ring, uint64_t timeout_ns, cl_uint num_events,
                                 const cl_event *wait_list, clmem_bridge_ring_batch *batch_out, cl_event *event_out)
{
    uint64_t deadline, batch;
    struct ring_slot *slot;
    clmem_bridge *b;
    uint32_t s;
    clmem_status st;

    if ((st = check_cl_call(ring, batch_out, "batch_out", event_out, "clmem_bridge_ring_cl_next")) != CLMEM_OK)
        return st;
    b = ring->bridge;
    batch = ring->cl_taken;
    s = (uint32_t)(batch % ring->depth);
    slot = &ring->slots[s];
    deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&ring->lock);
    while (ring->submitted_batches <= batch)
        if (!clmem__ring_wait_changed(ring, deadline)) {
            pthread_mutex_unlock(&ring->lock);
            return clmem__fail(CLMEM_ERR_TIMEOUT, "Vulkan had not submitted batch %llu in time.",
                               (unsigned long long)batch);
        }
    pthread_mutex_unlock(&ring->lock);

    if (ring->host_ordered && slot->fence_in_flight) {
        uint64_t left = time_left(deadline);
        VkResult r = b->vk.WaitForFences(b->device, 1, &slot->fence, VK_TRUE, left);
        if (r == VK_TIMEOUT)
            return clmem__fail(CLMEM_ERR_TIMEOUT, "Vulkan's writes of batch %llu had not completed in time.",
                               (unsigned long long)batch);
        if (r == VK_SUCCESS)
            r = b->vk.ResetFences(b->device, 1, &slot->fence);
        if (r != VK_SUCCESS)
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkWaitForFences/vkResetFences", r,
                                   "Waiting on the host for Vulkan's writes of batch %llu failed.",
                                   (unsigned long long)batch);
        slot->fence_in_flight = false;
    }
    if (!ring->host_ordered && !slot->ready_waited) {
        st = clmem__semaphore_enqueue(SEMAPHORE_WAIT, b, slot->ready, ring->queue, num_events, wait_list, NULL);
        if (st != CLMEM_OK)
            return st;
        slot->ready_waited = true;
        num_events = 0; /* the acquire comes after the wait, which came after the wait list */
        wait_list = NULL;
    }
    st = clmem__import_handoff(true, &ring->recs[s * ring->k], slot->count, ring->queue, num_events, wait_list,
                               event_out);
    if (st != CLMEM_OK)
        return st; /* a retry finds the wait done */
    slot->ready_waited = false;
    ring->cl_taken = batch + 1;
    batch_out->batch = batch;
    batch_out->first_sequence = slot->first_sequence;
    batch_out->first_index = s * ring->k;
    batch_out->count = slot->count;
    batch_out->frames = &ring->frames[s * ring->k];
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_cl_next(clmem_bridge_ring *ring, uint64_t timeout_ns, cl_uint num_events,
                                                    const cl_event *wait_list, clmem_bridge_ring_batch *batch_out,
                                                    cl_event *event_out)
{
    return clmem__error_in(__func__, ring_cl_next(ring, timeout_ns, num_events, wait_list, batch_out, event_out));
}

static clmem_status ring_cl_done(clmem_bridge_ring *ring, const clmem_bridge_ring_batch *batch, cl_uint num_events,
                                 const cl_event *wait_list, cl_event *event_out)
{
    struct ring_slot *slot;
    cl_event ev = NULL;
    bool pending = false;
    uint32_t s;
    clmem_status st;

    if ((st = check_cl_call(ring, batch, "batch", event_out, "clmem_bridge_ring_cl_done")) != CLMEM_OK)
        return st;
    s = (uint32_t)(batch->batch % ring->depth);
    slot = &ring->slots[s];
    if (batch->batch != ring->cl_returned || batch->batch >= ring->cl_taken || batch->count != slot->count ||
        batch->first_index != s * ring->k)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "Batch %llu is not the oldest batch OpenCL holds (%s); batches go back in the order "
                           "cl_next handed them out.",
                           (unsigned long long)batch->batch,
                           ring->cl_returned < ring->cl_taken ? "that is an earlier one" : "it holds none");
    /* Host ordering needs the release's event: the producer waits on it. */
    st = clmem__import_handoff(false, &ring->recs[s * ring->k], slot->count, ring->queue, num_events, wait_list,
                               ring->host_ordered || event_out ? &ev : NULL);
    if (st != CLMEM_OK)
        return st;
    if (!ring->host_ordered) {
        pending = clmem__semaphore_enqueue(SEMAPHORE_SIGNAL, ring->bridge, slot->done, ring->queue, 0, NULL, NULL) ==
                  CLMEM_OK;
        if (!pending) /* no signal for Vulkan to wait on: order it on the host instead */
            clFinish(ring->queue);
    } else {
        clFlush(ring->queue); /* the release reaches the device now; the producer waits on it */
        if (event_out)
            clRetainEvent(ev);
    }
    pthread_mutex_lock(&ring->lock);
    if (ring->host_ordered)
        slot->released = ev;
    else
        slot->done_pending = pending;
    ring->done_batches = batch->batch + 1;
    pthread_cond_broadcast(&ring->changed);
    pthread_mutex_unlock(&ring->lock);
    ring->cl_returned = batch->batch + 1;
    if (event_out)
        *event_out = ev;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_cl_done(clmem_bridge_ring *ring, const clmem_bridge_ring_batch *batch,
                                                    cl_uint num_events, const cl_event *wait_list, cl_event *event_out)
{
    return clmem__error_in(__func__, ring_cl_done(ring, batch, num_events, wait_list, event_out));
}
