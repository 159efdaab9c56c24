/* SPDX-License-Identifier: MIT */
/* Internal: an imported semaphore (semaphore.c), for the frame ring
 * (frame-ring.c), which hands the VkSemaphore to the producer and, with
 * host ordering, submits its waits itself on the producer's thread. */
#ifndef CLMEM_SEMAPHORE_INTERNAL_H
#define CLMEM_SEMAPHORE_INTERNAL_H
#include "bridge.h"

#include <stdatomic.h>
#include <stdbool.h>

struct clmem_bridge_semaphore {
    clmem_refcount refs;
    uint32_t live;                     /* MARK_SEMAPHORE while alive (live-mark.h) */
    clmem_bridge *bridge;              /* one reference */
    clmem_bridge_semaphore_mode mode;  /* never BEST */
    cl_semaphore_khr cl_sem;           /* device modes */
    VkQueue vk_queue;                  /* host ordering */
    VkSemaphore vk_sem;                /* the Vulkan semaphore (every mode) */
    VkFence fence;                     /* host ordering: tells the host the wait happened */
    clmem_keepalive *vk_keepalive;
    atomic_bool in_ring;               /* a ring's (frame-ring.c), which alone waits and signals it */
};

/* What clmem__semaphore_enqueue enqueues: a wait or a signal. */
enum semaphore_op { SEMAPHORE_WAIT, SEMAPHORE_SIGNAL };

/* clmem_bridge_semaphore_wait() or _signal(), as op says, for the frame
 * ring: its sentence is the calling public function's
 * (lib/error-private.h). */
clmem_status clmem__semaphore_enqueue(enum semaphore_op op, clmem_bridge *b, clmem_bridge_semaphore *sem,
                                      cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                      cl_event *event_out);
#endif
