/* The frame ring (clmem-bridge.h, "frame ring"): N imported frames in
 * D = N / K slots of K frames, each slot with a ready and a done binary
 * semaphore, handed between a Vulkan producer and an OpenCL consumer a
 * batch (one slot) at a time.
 *
 * The state is two counters under one lock: how many batches the producer
 * has published (its last frame reported submitted: the consumer may take
 * them) and how many the consumer has handed back (the producer may reuse
 * their slots). Each side keeps the rest of its position to itself, so a
 * producer call and a consumer call only meet at the lock. Per slot, what
 * one side writes before publishing a counter the other reads after it:
 * the batch's first sequence and count (producer), the pending done signal
 * or the release's event (consumer).
 *
 * Why the order holds, per slot s and batch b (slot b % D):
 *  - binary semaphores alternate: ready[s] is signalled by batch b's last
 *    Vulkan submission, which the producer reports before the consumer may
 *    enqueue the wait (cl_next waits for the report); the next signal of
 *    ready[s] belongs to batch b + D, whose first submission waits on
 *    done[s], which OpenCL signals after that wait on the same in-order
 *    queue, and vk_next hands out b + D only after cl_done(b) enqueued the
 *    signal. done[s] likewise, the other way round.
 *  - with host ordering nothing waits on the devices: vk_next waits (host)
 *    for the release of the slot's previous batch, and cl_next for a fence
 *    that the producer's vk_submitted submitted behind ready[s].
 */
#include "config.h"
#include "bridge.h"
#include "export.h"
#include "fault.h"
#include "import.h"
#include "refcount.h"
#include "semaphore.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ring_slot {
    clmem_bridge_semaphore *ready, *done; /* one reference each */
    VkFence fence;                        /* host ordering: Vulkan's writes of the slot's batch completed */

    /* The producer's, published with the batch (submitted_batches). */
    uint64_t first_sequence;
    uint32_t count;
    bool fence_in_flight; /* host: submitted, not yet waited and reset by the consumer */

    /* The consumer's, published with the hand-back (done_batches); read
     * and cleared by the producer under the lock. */
    bool done_pending;  /* device: done[s] is signalled for Vulkan, which has not been told to wait yet */
    cl_event released;  /* host: the release of the slot's last batch, until the producer saw it complete */

    /* The consumer's own: a cl_next that failed after its wait. */
    bool ready_waited;  /* device: the wait on ready[s] is enqueued */
};

struct clmem_bridge_ring {
    clmem_refcount refs;
    clmem_bridge *bridge;       /* one reference */
    cl_command_queue queue;     /* retained */
    uint32_t n, k, depth;
    bool host_ordered;
    bool claimed;               /* the frames' and semaphores' in_ring are this ring's */
    clmem_handle **frames;      /* n, one reference each */
    struct bridge_import **recs;
    struct ring_slot *slots;    /* depth */

    pthread_mutex_t lock;
    pthread_cond_t changed;     /* broadcast when either counter grows */
    uint64_t submitted_batches; /* lock: batches the consumer may take */
    uint64_t done_batches;      /* lock: batches the consumer handed back */

    /* The producer's own. */
    uint64_t vk_batch;     /* the batch vk_next is handing out */
    uint32_t vk_pos;       /* its frames handed out so far */
    uint64_t vk_frames;    /* frames handed out */
    uint64_t vk_reported;  /* frames reported submitted */
    uint64_t vk_published; /* = submitted_batches, without the lock */
    bool drained;          /* vk_drain ended the producer's side */

    /* The consumer's own. */
    uint64_t cl_taken;     /* batches taken */
    uint64_t cl_returned;  /* = done_batches, without the lock */
};

/* ---------------------------------------------------------------- time */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t deadline_after(uint64_t timeout_ns)
{
    uint64_t now = now_ns();
    return timeout_ns >= UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

static uint64_t time_left(uint64_t deadline)
{
    uint64_t now;
    if (deadline == UINT64_MAX)
        return UINT64_MAX;
    now = now_ns();
    return now >= deadline ? 0 : deadline - now;
}

/* One wait on the condition (lock held); false once the deadline passed. */
static bool wait_changed(clmem_bridge_ring *ring, uint64_t deadline)
{
    struct timespec ts;

    if (deadline == UINT64_MAX) {
        pthread_cond_wait(&ring->changed, &ring->lock);
        return true;
    }
    if (now_ns() >= deadline)
        return false;
    ts.tv_sec = (time_t)(deadline / 1000000000u);
    ts.tv_nsec = (long)(deadline % 1000000000u);
    pthread_cond_timedwait(&ring->changed, &ring->lock, &ts); /* the caller re-checks its condition */
    return true;
}

/* Until ev completed, or the deadline. CLMEM_ERR_TIMEOUT, CLMEM_ERR_OPENCL
 * (the query failed, or the command ended in an error). clWaitForEvents
 * has no timeout, and event callbacks come late (NVIDIA: 20-36 ms after
 * the work, NOTES.md), so the status is polled: yielding for the first
 * 200 us, which is where a release on the host ordering's path usually
 * completes, then sleeping 20 us at a time. Without a deadline it is
 * clWaitForEvents. */
static clmem_status wait_event(cl_event ev, uint64_t deadline, const char *what)
{
    uint64_t spin_until = now_ns() + 200000u;

    for (;;) {
        cl_int status = CL_QUEUED;
        cl_int err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        uint64_t left;

        if (err != CL_SUCCESS)
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetEventInfo", err,
                                   "Asking whether %s completed failed.", what);
        if (status < 0)
            return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetEventInfo", status,
                                   "%s ended in an error on the device.", what);
        if (status == CL_COMPLETE)
            return CLMEM_OK;
        left = time_left(deadline);
        if (left == UINT64_MAX) {
            clWaitForEvents(1, &ev); /* then the status says how it ended */
            continue;
        }
        if (left == 0)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0, "%s had not completed in time.",
                                   what);
        if (now_ns() < spin_until) {
            sched_yield();
            continue;
        }
        {
            struct timespec pause = {0, left < 20000 ? (long)left : 20000};
            nanosleep(&pause, NULL);
        }
    }
}

/* ------------------------------------------------------------- creation */

static clmem_status check_semaphores(const clmem_bridge *b, const clmem_bridge_ring_info *info, uint32_t depth,
                                     bool *host_ordered)
{
    clmem_bridge_semaphore_mode mode = CLMEM_BRIDGE_SEMAPHORE_BEST;

    for (uint32_t i = 0; i < 2 * depth; i++) {
        const clmem_bridge_semaphore *sem = i < depth ? info->ready[i] : info->done[i - depth];
        const char *list = i < depth ? "ready" : "done";
        uint32_t at = i < depth ? i : i - depth;

        if (!sem)
            return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "%s[%u] is NULL.", list,
                                   (unsigned)at);
        if (sem->bridge != b)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                   "%s[%u] belongs to bridge %p, not to bridge %p.", list, (unsigned)at,
                                   (void *)sem->bridge, (void *)b);
        if (atomic_load(&sem->in_ring))
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                   "%s[%u] belongs to another ring.", list, (unsigned)at);
        if (sem->mode == CLMEM_BRIDGE_SEMAPHORE_SYNC_FD)
            return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                                   "%s[%u] was imported as a sync fd, which carries one signal per import; the "
                                   "ring signals its semaphores again and again: import them as opaque fd (or "
                                   "host-ordered).",
                                   list, (unsigned)at);
        if (i == 0)
            mode = sem->mode;
        else if (sem->mode != mode)
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                   "%s[%u] is %s, ready[0] is %s: all of a ring's semaphores must have one mode.",
                                   list, (unsigned)at,
                                   sem->mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED ? "host-ordered" : "opaque fd",
                                   mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED ? "host-ordered" : "opaque fd");
        for (uint32_t j = 0; j < i; j++) {
            const clmem_bridge_semaphore *other = j < depth ? info->ready[j] : info->done[j - depth];
            if (other == sem || other->vk_sem == sem->vk_sem)
                return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
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
    cl_command_queue_properties props = 0;
    clmem_status s = clmem__bridge_check_queue(b, queue);
    cl_int err;

    if (s != CLMEM_OK)
        return s;
    err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)", err,
                               "Asking the queue's properties failed.");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The ring's queue is out of order; the ring orders its wait, acquire, the kernels, "
                               "release and signal by enqueueing them in order: give it an in-order queue.");
    return CLMEM_OK;
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
    return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
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
    free(ring);
    clmem_bridge_unref(b);
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_create(clmem_bridge *b, const clmem_bridge_ring_info *info,
                                                   clmem_bridge_ring **out)
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
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !b ? "bridge" : !info ? "info" : "out");
    if (info->size < info_min)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "info->size is %zu; set it to sizeof(clmem_bridge_ring_info) (%zu).", info->size,
                               sizeof *info);
    if (info->flags)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0, "Unknown ring flags 0x%x.",
                               (unsigned)info->flags);
    if (info->frame_count == 0 || info->batch_size == 0 || info->frame_count % info->batch_size)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "frame_count (%u) must be a non-zero multiple of batch_size (%u).",
                               (unsigned)info->frame_count, (unsigned)info->batch_size);
    if (!info->frames || !info->ready || !info->done || !info->queue)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "info->%s is NULL.",
                               !info->frames ? "frames" : !info->ready ? "ready" : !info->done ? "done" : "queue");
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
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0, "Allocating a ring of %u frames failed.",
                               (unsigned)info->frame_count);
    }
    /* The frames: acquire_many's own checks, and none held by OpenCL. */
    s = clmem__handoff_check(b, info->frame_count, (const clmem_handle *const *)info->frames, info->queue,
                             ring->recs);
    for (uint32_t i = 0; s == CLMEM_OK && i < info->frame_count; i++)
        if (atomic_load(&ring->recs[i]->acquired))
            s = clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                "Frame %u is acquired by OpenCL; a ring starts with every frame Vulkan's.",
                                (unsigned)i);
    if (s != CLMEM_OK) {
        free(ring->frames);
        free(ring->recs);
        free(ring->slots);
        free(ring);
        return s;
    }

    refcount_init(&ring->refs);
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

CLMEM_EXPORT clmem_bridge_ring *clmem_bridge_ring_ref(clmem_bridge_ring *ring)
{
    if (ring)
        refcount_get(&ring->refs);
    return ring;
}

CLMEM_EXPORT void clmem_bridge_ring_unref(clmem_bridge_ring *ring)
{
    if (ring && refcount_put(&ring->refs))
        ring_free(ring);
}

/* ------------------------------------------------------------- producer */

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_next(clmem_bridge_ring *ring, uint32_t flags, uint64_t timeout_ns,
                                                    clmem_bridge_ring_frame *frame_out)
{
    uint64_t deadline;
    struct ring_slot *slot;
    VkSemaphore wait = VK_NULL_HANDLE;
    uint32_t s, pos;
    bool end;

    if (!ring || !frame_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !ring ? "ring" : "frame_out");
    if (flags & ~(uint32_t)CLMEM_BRIDGE_RING_END_BATCH)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0, "Unknown vk_next flags 0x%x.",
                               (unsigned)flags);
    if (ring->drained)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
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
            return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                                   "Batch %llu, the last in frame slot %u, was not reported submitted "
                                   "(vk_submitted), so OpenCL can never hand the slot back.",
                                   (unsigned long long)(ring->vk_batch - ring->depth), (unsigned)s);

        deadline = deadline_after(timeout_ns);
        pthread_mutex_lock(&ring->lock);
        while (ring->vk_batch >= ring->done_batches + ring->depth)
            if (!wait_changed(ring, deadline)) {
                uint64_t done = ring->done_batches;
                pthread_mutex_unlock(&ring->lock);
                return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0,
                                       "Frame slot %u is still OpenCL's: batch %llu is not handed back yet "
                                       "(%llu of the %llu batches taken so far are).",
                                       (unsigned)s, (unsigned long long)(ring->vk_batch - ring->depth),
                                       (unsigned long long)done,
                                       (unsigned long long)(ring->vk_batch - ring->depth + 1));
            }
        pending = slot->done_pending;
        released = slot->released;
        pthread_mutex_unlock(&ring->lock);
        if (released) { /* host ordering: the host is the semaphore */
            clmem_status st = wait_event(released, deadline, "The release of the slot's previous batch");
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

/* Has the producer handed out all of `batch` and reported its last frame
 * submitted? (Only for batches not yet published: their slot is not
 * reused before.) */
static bool batch_reported(const clmem_bridge_ring *ring, uint64_t batch)
{
    const struct ring_slot *slot = &ring->slots[batch % ring->depth];
    return batch < ring->vk_batch && slot->first_sequence + slot->count <= ring->vk_reported;
}

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_submitted(clmem_bridge_ring *ring, const clmem_bridge_ring_frame *frame)
{
    clmem_bridge *b;
    uint64_t publish;
    clmem_status st = CLMEM_OK;

    if (!ring || !frame)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !ring ? "ring" : "frame");
    if (frame->sequence >= ring->vk_frames)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "Frame %llu was not handed out yet (%llu were).",
                               (unsigned long long)frame->sequence, (unsigned long long)ring->vk_frames);
    /* A frame reported again is only a retry of a failed host-ordered
     * submission below. */
    if (frame->sequence < ring->vk_reported && !batch_reported(ring, ring->vk_published))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
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

CLMEM_EXPORT clmem_status clmem_bridge_ring_vk_drain(clmem_bridge_ring *ring, uint64_t timeout_ns, uint32_t capacity,
                                                     VkSemaphore *waits_out, uint32_t *count_out)
{
    uint64_t deadline;
    uint32_t needed = 0;

    if (count_out)
        *count_out = 0;
    if (!ring || !count_out || (capacity && !waits_out))
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !ring ? "ring" : !count_out ? "count_out" : "waits_out");
    if (ring->vk_pos != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "Batch %llu has %u frames handed out and is not ended: end it with "
                               "CLMEM_BRIDGE_RING_END_BATCH before draining.",
                               (unsigned long long)ring->vk_batch, (unsigned)ring->vk_pos);
    if (ring->vk_published != ring->vk_batch)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "Batch %llu was not reported submitted (vk_submitted) yet.",
                               (unsigned long long)ring->vk_published);
    deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&ring->lock);
    while (ring->done_batches < ring->vk_batch)
        if (!wait_changed(ring, deadline)) {
            uint64_t done = ring->done_batches;
            pthread_mutex_unlock(&ring->lock);
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0,
                                   "OpenCL had handed back %llu of the %llu batches in time.",
                                   (unsigned long long)done, (unsigned long long)ring->vk_batch);
        }
    for (uint32_t sl = 0; sl < ring->depth; sl++)
        needed += ring->slots[sl].done_pending;
    pthread_mutex_unlock(&ring->lock);
    if (needed > capacity) {
        *count_out = needed;
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "%u semaphores are to be waited on, room was given for %u (%u, the ring's slot "
                               "count, always suffices).",
                               (unsigned)needed, (unsigned)capacity, (unsigned)ring->depth);
    }
    /* Host ordering: the releases themselves, which vk_next would wait for. */
    for (uint32_t sl = 0; sl < ring->depth; sl++) {
        struct ring_slot *slot = &ring->slots[sl];
        cl_event released = slot->released; /* consumer's writes are done: every batch is back */
        if (released) {
            clmem_status st = wait_event(released, deadline, "The release of a batch");
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

/* ------------------------------------------------------------- consumer */

CLMEM_EXPORT clmem_status clmem_bridge_ring_cl_next(clmem_bridge_ring *ring, uint64_t timeout_ns, cl_uint num_events,
                                                    const cl_event *wait_list, clmem_bridge_ring_batch *batch_out,
                                                    cl_event *event_out)
{
    uint64_t deadline, batch;
    struct ring_slot *slot;
    clmem_bridge *b;
    uint32_t s;
    clmem_status st;

    if (event_out)
        *event_out = NULL;
    if (!ring || !batch_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !ring ? "ring" : "batch_out");
    b = ring->bridge;
    batch = ring->cl_taken;
    s = (uint32_t)(batch % ring->depth);
    slot = &ring->slots[s];
    deadline = deadline_after(timeout_ns);
    pthread_mutex_lock(&ring->lock);
    while (ring->submitted_batches <= batch)
        if (!wait_changed(ring, deadline)) {
            pthread_mutex_unlock(&ring->lock);
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0,
                                   "Vulkan had not submitted batch %llu in time.", (unsigned long long)batch);
        }
    pthread_mutex_unlock(&ring->lock);

    if (ring->host_ordered && slot->fence_in_flight) {
        uint64_t left = time_left(deadline);
        VkResult r = b->vk.WaitForFences(b->device, 1, &slot->fence, VK_TRUE, left);
        if (r == VK_TIMEOUT)
            return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_NONE, NULL, 0,
                                   "Vulkan's writes of batch %llu had not completed in time.",
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
        st = clmem_bridge_semaphore_wait(b, slot->ready, ring->queue, num_events, wait_list, NULL);
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

CLMEM_EXPORT clmem_status clmem_bridge_ring_cl_done(clmem_bridge_ring *ring, const clmem_bridge_ring_batch *batch,
                                                    cl_uint num_events, const cl_event *wait_list,
                                                    cl_event *event_out)
{
    struct ring_slot *slot;
    cl_event ev = NULL;
    bool pending = false;
    uint32_t s;
    clmem_status st;

    if (event_out)
        *event_out = NULL;
    if (!ring || !batch)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !ring ? "ring" : "batch");
    s = (uint32_t)(batch->batch % ring->depth);
    slot = &ring->slots[s];
    if (batch->batch != ring->cl_returned || batch->batch >= ring->cl_taken || batch->count != slot->count ||
        batch->first_index != s * ring->k)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
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
        pending = clmem_bridge_semaphore_signal(ring->bridge, slot->done, ring->queue, 0, NULL, NULL) == CLMEM_OK;
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
