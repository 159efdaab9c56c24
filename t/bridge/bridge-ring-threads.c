/* SPDX-License-Identifier: MIT */
/* The frame ring with its producer and consumer on two threads, as an
 * application runs it: the Vulkan thread calls vk_next / vkQueueSubmit /
 * vk_submitted, the OpenCL thread cl_next / kernels / cl_done, and neither
 * waits for the other except inside the ring's calls. Every word of every
 * frame is checked in both directions (t/lib/ring-fixture.h). Also two
 * threads making rings of the same frames at once: exactly one gets them.
 * Written for ThreadSanitizer (scripts/check-sanitizers.sh tsan runs it):
 * the ring's state crosses threads only under its lock. 200 frames a run
 * with host ordering, 2000 with device ordering (or argv[1]). */
#include "t/lib/ring-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/fd-watch.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *producer(void *arg)
{
    struct ring_run *r = arg;
    while (ring_produce_batch(r))
        ;
    return NULL;
}

static void *consumer(void *arg)
{
    struct ring_run *r = arg;
    while (ring_consume_batch(r))
        ;
    return NULL;
}

static void two_threads(struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b, clmem_bridge_path path,
                        clmem_bridge_semaphore_mode mode, uint32_t n, uint32_t k, uint64_t total, const char *label)
{
    struct ring_run r;
    pthread_t tp, tc;

    ring_run_open(&r, vk, f, b, path, mode, n, k, total, label);
    if (pthread_create(&tc, NULL, consumer, &r) != 0 || pthread_create(&tp, NULL, producer, &r) != 0)
        tap_bail("pthread_create failed");
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    ring_run_check(&r);
    ring_run_close(&r);
}

struct race {
    clmem_bridge *b;
    const clmem_bridge_ring_info *info;
    pthread_barrier_t *start;
    clmem_bridge_ring *ring;
    clmem_status status;
};

static void *make_ring(void *arg)
{
    struct race *x = arg;
    pthread_barrier_wait(x->start);
    x->status = clmem_bridge_ring_create(x->b, x->info, &x->ring);
    return NULL;
}

/* Eight threads make a ring of the same frames and semaphores at once. */
static void creation_race(struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b, clmem_bridge_path path,
                          clmem_bridge_semaphore_mode mode)
{
    enum { THREADS = 8, ROUNDS = 20 };
    struct ring_run r;
    clmem_bridge_ring_info info;
    int bad_rounds = 0;

    ring_run_open(&r, vk, f, b, path, mode, 2, 1, 2, "race");
    info = (clmem_bridge_ring_info){.size = sizeof info, .frame_count = 2, .batch_size = 1, .frames = r.frames,
                                    .ready = r.sems, .done = r.sems + 2, .queue = f->queue};
    clmem_bridge_ring_unref(r.ring);
    r.ring = NULL;
    for (int round = 0; round < ROUNDS; round++) {
        struct race x[THREADS];
        pthread_t t[THREADS];
        pthread_barrier_t start;
        int won = 0, refused = 0;

        pthread_barrier_init(&start, NULL, THREADS);
        for (int i = 0; i < THREADS; i++) {
            x[i] = (struct race){.b = b, .info = &info, .start = &start};
            if (pthread_create(&t[i], NULL, make_ring, &x[i]) != 0)
                tap_bail("pthread_create failed");
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
            won += x[i].status == CLMEM_OK;
            refused += x[i].status == CLMEM_ERR_INVALID_VALUE && !x[i].ring;
        }
        pthread_barrier_destroy(&start);
        if (won != 1 || refused != THREADS - 1)
            bad_rounds++;
        for (int i = 0; i < THREADS; i++) {
            if (x[i].status == CLMEM_OK && !r.ring)
                r.ring = x[i].ring; /* kept for the last round's run */
            else
                clmem_bridge_ring_unref(x[i].ring);
        }
        if (round + 1 < ROUNDS) {
            clmem_bridge_ring_unref(r.ring);
            r.ring = NULL;
        }
    }
    tap_ok(bad_rounds == 0 && r.ring, "%d rounds of %d threads making a ring of the same frames at once: exactly one "
                                      "got it each time (%d rounds otherwise)",
           ROUNDS, THREADS, bad_rounds);
    if (!r.ring)
        tap_bail("no ring to finish the race with");
    while (ring_produce_batch(&r) && ring_consume_batch(&r))
        ;
    ring_run_check(&r);
    ring_run_close(&r);
}

int main(int argc, char **argv)
{
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
    uint32_t caps;
    clmem_bridge_path path;
    clmem_bridge_semaphore_mode mode;
    uint64_t total;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    b = bridge_open_with(&vk, &f, 0, fd_watch_get_instance_proc_addr);
    caps = clmem_bridge_caps(b);
    path = bridge_test_path(b);
    mode = caps & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD
                                                       : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
    total = argc > 1 ? strtoull(argv[1], NULL, 10) : mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? 2000 : 200;
    tap_diag("Vulkan %s, OpenCL %s: %s frames, %s semaphores, %llu frames a run, producer and consumer on two "
             "threads",
             vk.device_name, f.device_name, clmem_bridge_path_name(path),
             mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? "opaque-fd" : "host-ordered", (unsigned long long)total);
    /* Passes of the same runs, counted after each: the fds the bridge
     * exported must all be closed, and the others (NVIDIA's own grow to a
     * high-water mark as rings come and go, with raw calls too:
     * docs/probes/ring-fd-probe.c) must level off. */
    int passes = ring_test_passes();
    int others[RING_TEST_MAX_PASSES];
    for (int pass = 0; pass < passes; pass++) {
        char step[64];
        two_threads(&vk, &f, b, path, mode, 3, 1, total, "threads, ring of 3, batch 1");
        two_threads(&vk, &f, b, path, mode, 8, 2, total + 1, "threads, ring of 4 batches of 2");
        creation_race(&vk, &f, b, path, mode);
        snprintf(step, sizeof step, "pass %d", pass + 1);
        others[pass] = fd_watch_others(step);
    }
    fd_watch_check_passes(others, passes, "the ring runs on two threads");
    clmem_bridge_unref(b);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
