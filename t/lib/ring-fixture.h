/* SPDX-License-Identifier: MIT */
/* Fixture for the frame-ring tests (t/bridge/bridge-ring.c, t/bridge/bridge-ring-threads.c):
 * a ring of imported frames whose every word is checked in both
 * directions. Frame sequence q: Vulkan first logs what OpenCL made of the
 * frame's previous sequence (a copy into a host-visible log, at that
 * sequence's place), then writes vk_value(q, j) into every word j; an
 * OpenCL kernel counts the words that are not vk_value(q, j) and writes
 * cl_value(q, j) into each. At the end Vulkan logs every frame's last
 * sequence, so every sequence's OpenCL writes are checked by Vulkan once,
 * and every sequence's Vulkan writes by OpenCL once.
 *
 * The producer step (one batch) and the consumer step (one batch) are
 * separate so that one test runs them on one thread and the other on two. */
#ifndef CLMEM_RING_FIXTURE_H
#define CLMEM_RING_FIXTURE_H
#include "bridge-fixture.h"

#include <stdatomic.h>

#define RING_FRAME_WORDS 256 /* 1 KiB frames */
#define RING_TIMEOUT_NS UINT64_C(10000000000)

struct ring_run {
    struct vkctx *vk;
    struct cl_fixture *f;
    clmem_bridge *b;
    clmem_bridge_path path;            /* of the frames */
    clmem_bridge_semaphore_mode mode;  /* of the semaphores */
    uint32_t n, k, depth;
    uint64_t total;                    /* frames to carry */
    const char *label;

    struct vk_owned *mem;              /* n frames' memory */
    clmem_keepalive **mem_ka;
    clmem_handle **frames;
    VkSemaphore *vk_sems;              /* 2 * depth: ready then done */
    clmem_bridge_semaphore **sems;
    clmem_bridge_ring *ring;

    struct vk_owned log;               /* total * RING_FRAME_WORDS words, host-visible */
    clmem_keepalive *log_ka;
    cl_mem results;                    /* 2 words per sequence: bad count, first bad word */
    cl_kernel kernel;
    VkCommandBuffer *cbs;              /* one per slot (the producer's) */
    VkFence *fences;

    /* the producer's */
    uint64_t produced;
    uint64_t *last_seq;                /* per frame index, UINT64_MAX before its first use */
    atomic_int bad_calls, bad_order;   /* either side may count */
    char first_error[512];
    atomic_flag error_set;
    /* the consumer's */
    uint64_t consumed;
};

/* Makes the frames (the path `path`), semaphores (`mode`) and ring; bails
 * out on failure (one TAP point says the ring was made). */
void ring_run_open(struct ring_run *r, struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b,
                   clmem_bridge_path path, clmem_bridge_semaphore_mode mode, uint32_t n, uint32_t k, uint64_t total,
                   const char *label);

/* One batch through the producer: vk_next for each of its frames (the last
 * one of the run with CLMEM_BRIDGE_RING_END_BATCH), one submission, one
 * vk_submitted. Returns false when everything was produced. */
bool ring_produce_batch(struct ring_run *r);

/* One batch through the consumer: cl_next, a kernel per frame, cl_done.
 * Returns false when everything was consumed. */
bool ring_consume_batch(struct ring_run *r);

/* The consumer's kernels on a batch (ring_consume_batch's middle), for a
 * test that takes batches itself. */
void ring_run_kernels(struct ring_run *r, const clmem_bridge_ring_batch *bt);

/* After both sides ran to the end: vk_drain (and the waits it gives,
 * submitted), drains the queues, logs the frames' last sequences and
 * checks every word; several TAP points. */
void ring_run_check(struct ring_run *r);

/* Drops the ring, the semaphores and the frames (after ring_run_check),
 * and settles the bridge; one TAP point: every frame's memory was freed. */
void ring_run_close(struct ring_run *r);

/* Records a failure of either side: counted, and the first one kept. */
void ring_fail(struct ring_run *r, atomic_int *counter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* How many passes the ring tests' fd checks make: 3 (2 in instrumented
 * runs), or CLMEM_TEST_RING_PASSES (2 to RING_TEST_MAX_PASSES) to look
 * further. */
#define RING_TEST_MAX_PASSES 32
int ring_test_passes(void);
#endif
