/* SPDX-License-Identifier: MIT */
/* Internal: the frame ring (clmem-bridge.h, "frame ring"): N imported frames in
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
 *
 * The ring is four files, one concept each: frame-ring.c (the object: its
 * checks, creation and teardown), frame-ring-wait.c (the deadlines and the
 * host waits of both sides), frame-ring-vk.c (the Vulkan producer:
 * vk_next, vk_submitted, vk_drain) and frame-ring-cl.c (the OpenCL
 * consumer: cl_next, cl_done). This header is the state they share.
 */
#ifndef CLMEM_FRAME_RING_INTERNAL_H
#define CLMEM_FRAME_RING_INTERNAL_H
#include "bridge.h"
#include "import-record.h"
#include "refcount.h"
#include "semaphore.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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
    uint32_t live;              /* MARK_RING while alive (live-mark.h) */
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

/* One wait on ring->changed (ring->lock held); false once the deadline
 * passed. */
bool clmem__ring_wait_changed(clmem_bridge_ring *ring, uint64_t deadline);
/* Until ev completed, or the deadline: CLMEM_ERR_TIMEOUT, CLMEM_ERR_OPENCL
 * (`what` names the command in the message). */
clmem_status clmem__ring_wait_event(cl_event ev, uint64_t deadline, const char *what);
#endif
