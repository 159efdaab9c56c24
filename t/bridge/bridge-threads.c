/* SPDX-License-Identifier: MIT */
/* 8 threads on one bridge at once (host-mapped path, import cache on), in
 * two phases. Run under ThreadSanitizer by scripts/check-sanitizers.sh.
 *
 * Phase 1, while a bridge handle on the whole allocation that all threads
 * share is alive. Each thread, on a queue of its own, over and over:
 *  - imports its own slice of the shared allocation (so all the imports
 *    share the bridge's one vkMapMemory mapping and the cache's buckets),
 *    and imports it again (a cache hit: the same cl_mem);
 *  - makes a third handle of the import for the test's main queue, which
 *    every thread shares (clmem_bridge_handle_for_queue: the import's
 *    queue list grows under the lock while other threads do the same);
 *  - acquires, fills the slice with a value of its own, releases through
 *    the second handle, waits;
 *  - refs/unrefs the shared handle, and wraps and drops handles on its
 *    cl_mem and anchor;
 *  - now and then calls clmem_bridge_finish(b, 0), which must say
 *    CLMEM_ERR_IN_USE (the shared handle is alive) and release nothing;
 *  - drops its three handles, which starts the import's teardown.
 * Every import gets an anchor of its own with a counting release, which
 * must never run while its handles are alive. Afterwards the shared
 * handle shows every slice holding its thread's last value; once it is
 * dropped too, clmem_bridge_finish() returns CLMEM_OK and then every
 * anchor has run its release exactly once, and nothing leaked (fds, the
 * context's and every queue's OpenCL reference counts).
 *
 * Phase 2, nothing shared alive: the threads race imports of one and the
 * same range (cache hits on an import another thread is dropping, misses
 * when it just went), handles for a neighbour's queue, unrefs, and
 * clmem_bridge_finish() with timeouts of 0, 1 ms and 50 ms. finish may
 * return CLMEM_OK, CLMEM_ERR_IN_USE (another thread holds a handle) or
 * CLMEM_ERR_TIMEOUT, nothing else; when it returns CLMEM_OK every anchor
 * the calling thread dropped before the call has run its release. After
 * the threads joined and dropped everything, finish returns CLMEM_OK, every
 * anchor ran exactly once, and nothing leaked.
 *
 * Last, the Vulkan memory's own anchor: held by the test throughout, and
 * released exactly once when the test lets go.
 * CLMEM_THREADS_ITERATIONS overrides the iterations per thread and phase. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 8
#define SHARED_PAIRS 50 /* ref/unref pairs on the shared handle per iteration */
#define FINISH_EVERY 7  /* iterations between a thread's clmem_bridge_finish calls */

struct shared {
    clmem_bridge *b;
    struct cl_fixture *f;
    struct vk_owned *o;
    clmem_handle *whole;     /* phase 1: shared by all threads */
    VkDeviceSize slice;      /* bytes per thread: a multiple of the sub-buffer alignment */
    int iterations;
    atomic_int *releases;    /* phase 1: per (thread, iteration), its anchor's release count */
    atomic_int *releases2;   /* phase 2: the same */
    pthread_barrier_t start; /* so that the threads really overlap */
    atomic_int failures;
    atomic_int finish_ok, finish_in_use, finish_timeout; /* phase 2's finish answers */
    pthread_mutex_t lock;
    char first_failure[512];
};

struct worker {
    struct shared *sh;
    int index;
    cl_command_queue queue;
    cl_command_queue neighbour; /* the next thread's queue, for phase 2 */
    int phase;
};

static void count_release(void *user)
{
    atomic_fetch_add((atomic_int *)user, 1);
}

static uint32_t slice_value(int thread, int iteration)
{
    return (uint32_t)thread << 16 | (uint32_t)iteration;
}

static void fail(struct shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct shared *sh, const char *fmt, ...)
{
    va_list ap;
    if (atomic_fetch_add(&sh->failures, 1) != 0)
        return;
    pthread_mutex_lock(&sh->lock);
    va_start(ap, fmt);
    vsnprintf(sh->first_failure, sizeof sh->first_failure, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&sh->lock);
}

/* Phase 1, one iteration; false after a failure (recorded). */
static bool iterate(struct worker *w, int it)
{
    struct shared *sh = w->sh;
    atomic_int *count = &sh->releases[w->index * sh->iterations + it];
    VkDeviceSize offset = (VkDeviceSize)w->index * sh->slice;
    clmem_keepalive *ka = clmem_keepalive_new(count_release, count);
    clmem_handle *h = NULL, *again = NULL, *main_queue = NULL, *wrapped = NULL;
    cl_mem whole_mem = clmem_handle_mem(sh->whole);
    uint32_t value = slice_value(w->index, it);
    cl_event done = NULL;
    clmem_status s;
    cl_int err;
    bool good = false;

    if (!ka) {
        fail(sh, "thread %d: clmem_keepalive_new failed", w->index);
        return false;
    }
    s = clmem_bridge_import_vk(sh->b, &sh->o->memory, offset, sh->slice, CLMEM_BRIDGE_PATH_HOST_MAPPED, ka,
                               w->queue, CL_MEM_READ_WRITE, &h);
    if (s == CLMEM_OK)
        s = clmem_bridge_import_vk(sh->b, &sh->o->memory, offset, sh->slice, CLMEM_BRIDGE_PATH_HOST_MAPPED, ka,
                                   w->queue, CL_MEM_READ_WRITE, &again);
    clmem_keepalive_unref(ka); /* the import holds its own reference */
    if (s != CLMEM_OK) {
        fail(sh, "thread %d iteration %d: import: %s", w->index, it, clmem_error_message());
        goto out;
    }
    if (clmem_handle_mem(again) != clmem_handle_mem(h)) {
        fail(sh, "thread %d iteration %d: the second import of a live slice is not the cached one", w->index, it);
        goto out;
    }
    s = clmem_bridge_handle_for_queue(h, sh->f->queue, &main_queue);
    if (s != CLMEM_OK || clmem_handle_mem(main_queue) != clmem_handle_mem(h) ||
        clmem_handle_queue(main_queue) != sh->f->queue ||
        clmem_handle_keepalive(main_queue) != clmem_handle_keepalive(h)) {
        fail(sh, "thread %d iteration %d: handle_for_queue: %s", w->index, it,
             s ? clmem_error_message() : "not the import's cl_mem and anchor on the main queue");
        goto out;
    }
    if ((s = clmem_bridge_acquire(sh->b, h, 0, NULL, NULL)) != CLMEM_OK) {
        fail(sh, "thread %d iteration %d: acquire: %s", w->index, it, clmem_error_message());
        goto out;
    }
    err = clEnqueueFillBuffer(w->queue, clmem_handle_mem(h), &value, sizeof value, 0, (size_t)sh->slice, 0, NULL,
                              NULL);
    /* Released through the other handle: the handoff state is the import's. */
    s = clmem_bridge_release(sh->b, again, 0, NULL, &done);
    if (err != CL_SUCCESS || s != CLMEM_OK) {
        fail(sh, "thread %d iteration %d: fill %d, release: %s", w->index, it, err,
             s ? clmem_error_message() : "ok");
        goto out;
    }
    if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS) {
        fail(sh, "thread %d iteration %d: waiting for the release: %d", w->index, it, err);
        goto out;
    }

    /* The shared handle: references and wraps from every thread at once. */
    for (int i = 0; i < SHARED_PAIRS; i++)
        clmem_handle_unref(clmem_handle_ref(sh->whole));
    s = clmem_handle_wrap(whole_mem, w->queue, 0, clmem_handle_keepalive(sh->whole), &wrapped);
    if (s != CLMEM_OK || clmem_handle_keepalive(wrapped) != clmem_handle_keepalive(sh->whole)) {
        fail(sh, "thread %d iteration %d: wrapping the shared cl_mem: %s", w->index, it,
             s ? clmem_error_message() : "wrong anchor");
        goto out;
    }
    if (it % FINISH_EVERY == w->index % FINISH_EVERY) {
        /* Handles of this bridge are alive (the shared one, this thread's):
         * finish must refuse at once. */
        clmem_error_clear();
        s = clmem_bridge_finish(sh->b, 0);
        if (s != CLMEM_ERR_IN_USE || clmem_error_status() != CLMEM_ERR_IN_USE) {
            fail(sh, "thread %d iteration %d: clmem_bridge_finish with handles alive returned %s, want "
                     "CLMEM_ERR_IN_USE (%s)",
                 w->index, it, clmem_status_name(s), s ? clmem_error_message() : "no message");
            goto out;
        }
    }
    if (atomic_load(count) != 0) {
        fail(sh, "thread %d iteration %d: the import's anchor was released while its handles lived", w->index, it);
        goto out;
    }
    good = true;
out:
    if (done)
        clReleaseEvent(done);
    clmem_handle_unref(wrapped);
    clmem_handle_unref(again);
    clmem_handle_unref(main_queue);
    clmem_handle_unref(h); /* the last handle: the import's teardown starts */
    return good;
}

/* Phase 2, one iteration: the same range as every other thread, so that
 * imports hit (or just miss) an import another thread is dropping. */
static bool race(struct worker *w, int it)
{
    struct shared *sh = w->sh;
    atomic_int *mine = &sh->releases2[w->index * sh->iterations];
    atomic_int *count = &mine[it];
    clmem_keepalive *ka = clmem_keepalive_new(count_release, count);
    clmem_handle *h = NULL, *other = NULL;
    clmem_status s;
    bool good = false;

    if (!ka) {
        fail(sh, "thread %d: clmem_keepalive_new failed", w->index);
        return false;
    }
    s = clmem_bridge_import_vk(sh->b, &sh->o->memory, 0, sh->slice, CLMEM_BRIDGE_PATH_HOST_MAPPED, ka, w->queue,
                               CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(ka);
    if (s != CLMEM_OK) {
        fail(sh, "thread %d phase 2 iteration %d: import: %s", w->index, it, clmem_error_message());
        goto out;
    }
    if (it & 1) {
        s = clmem_bridge_handle_for_queue(h, w->neighbour, &other);
        if (s != CLMEM_OK || clmem_handle_mem(other) != clmem_handle_mem(h) ||
            clmem_handle_queue(other) != w->neighbour) {
            fail(sh, "thread %d phase 2 iteration %d: handle_for_queue: %s", w->index, it,
                 s ? clmem_error_message() : "not the import's cl_mem on the neighbour's queue");
            goto out;
        }
    }
    if (atomic_load(count) != 0) {
        fail(sh, "thread %d phase 2 iteration %d: the anchor was released while a handle lived", w->index, it);
        goto out;
    }
    good = true;
out:
    /* Either order: the last of the two starts the teardown. */
    if (it & 2) {
        clmem_handle_unref(h);
        clmem_handle_unref(other);
    } else {
        clmem_handle_unref(other);
        clmem_handle_unref(h);
    }
    if (good && it % FINISH_EVERY == w->index % FINISH_EVERY) {
        static const uint64_t timeouts[] = {0, 1000000, 50000000};
        uint64_t timeout = timeouts[(it / FINISH_EVERY) % 3];

        s = clmem_bridge_finish(sh->b, timeout);
        switch (s) {
        case CLMEM_OK:
            atomic_fetch_add(&sh->finish_ok, 1);
            /* Everything this thread dropped so far is released. */
            for (int i = 0; i <= it && good; i++)
                if (atomic_load(&mine[i]) != 1) {
                    fail(sh, "thread %d phase 2 iteration %d: clmem_bridge_finish returned CLMEM_OK, but the anchor "
                             "of this thread's import %d (dropped before the call) has run its release %d times",
                         w->index, it, i, atomic_load(&mine[i]));
                    good = false;
                }
            break;
        case CLMEM_ERR_IN_USE: atomic_fetch_add(&sh->finish_in_use, 1); break;
        case CLMEM_ERR_TIMEOUT: atomic_fetch_add(&sh->finish_timeout, 1); break;
        default:
            fail(sh, "thread %d phase 2 iteration %d: clmem_bridge_finish(%llu ns) returned %s: %s", w->index, it,
                 (unsigned long long)timeout, clmem_status_name(s), clmem_error_message());
            good = false;
        }
    }
    return good;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&w->sh->start);
    for (int it = 0; it < w->sh->iterations; it++)
        if (!(w->phase == 1 ? iterate(w, it) : race(w, it)))
            break;
    return NULL;
}

static void run_threads(struct shared *sh, struct worker *workers, int phase)
{
    pthread_t threads[NTHREADS];

    pthread_barrier_init(&sh->start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        workers[i].phase = phase;
        if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0)
            tap_bail("pthread_create failed");
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&sh->start);
}

/* Read the whole allocation through a fresh import (acquire, read,
 * release); NULL on failure, with the reason in why. */
static uint32_t *read_all(clmem_bridge *b, struct cl_fixture *f, struct vk_owned *o, clmem_keepalive *ka, char *why,
                          size_t len)
{
    uint32_t *words = malloc((size_t)o->memory.allocation_size);
    clmem_handle *h = NULL;
    cl_int err = CL_SUCCESS;
    clmem_status s = clmem_bridge_import_vk(b, &o->memory, 0, o->memory.allocation_size,
                                            CLMEM_BRIDGE_PATH_HOST_MAPPED, ka, f->queue, CL_MEM_READ_WRITE, &h);
    if (s == CLMEM_OK && (s = clmem_bridge_acquire(b, h, 0, NULL, NULL)) == CLMEM_OK) {
        err = clEnqueueReadBuffer(f->queue, clmem_handle_mem(h), CL_TRUE, 0, (size_t)o->memory.allocation_size,
                                  words, 0, NULL, NULL);
        if (clmem_bridge_release(b, h, 0, NULL, NULL) != CLMEM_OK && err == CL_SUCCESS)
            err = CL_INVALID_OPERATION;
        clFinish(f->queue);
    }
    clmem_handle_unref(h);
    if (s != CLMEM_OK || err != CL_SUCCESS || !words) {
        snprintf(why, len, "reading the allocation back failed: %s / %d", s ? clmem_error_message() : "ok", err);
        free(words);
        return NULL;
    }
    return words;
}

/*
 * Before the threads, the same without them: two live imports of disjoint
 * slices, both acquired, both filled, released one after the other. Each
 * import's OpenCL buffer covers the whole allocation (the sub-buffer is its
 * view), so a handoff that maps more than the import's own range makes one
 * slice's release write the other slice with stale bytes on a device that
 * is not zero-copy (seen on the H200; PoCL on the CPU shares the bytes, so
 * it passes there either way). Returns "" or what went wrong.
 */
static const char *disjoint_slices(clmem_bridge *b, struct cl_fixture *f, struct vk_owned *o, clmem_keepalive *ka,
                                   VkDeviceSize slice)
{
    static char why[512];
    clmem_handle *h[2] = {NULL, NULL};
    uint32_t *words;
    clmem_status s = CLMEM_OK;
    cl_int err = CL_SUCCESS;

    why[0] = '\0';
    for (int i = 0; i < 2 && s == CLMEM_OK; i++)
        s = clmem_bridge_import_vk(b, &o->memory, (VkDeviceSize)i * slice, slice, CLMEM_BRIDGE_PATH_HOST_MAPPED, ka,
                                   f->queue, CL_MEM_READ_WRITE, &h[i]);
    for (int i = 0; i < 2 && s == CLMEM_OK; i++)
        s = clmem_bridge_acquire(b, h[i], 0, NULL, NULL);
    for (int i = 0; i < 2 && s == CLMEM_OK && err == CL_SUCCESS; i++) {
        uint32_t value = 0xA0000000u + (uint32_t)i;
        err = clEnqueueFillBuffer(f->queue, clmem_handle_mem(h[i]), &value, sizeof value, 0, (size_t)slice, 0,
                                  NULL, NULL);
    }
    for (int i = 0; i < 2 && s == CLMEM_OK && err == CL_SUCCESS; i++)
        s = clmem_bridge_release(b, h[i], 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(f->queue);
    clmem_handle_unref(h[0]);
    clmem_handle_unref(h[1]);
    if (s != CLMEM_OK || err != CL_SUCCESS) {
        snprintf(why, sizeof why, "import/acquire/fill/release: %s / %d", s ? clmem_error_message() : "ok", err);
        return why;
    }
    if (!(words = read_all(b, f, o, ka, why, sizeof why)))
        return why;
    for (int i = 0; i < 2 && !why[0]; i++)
        for (VkDeviceSize j = 0; j < slice / 4 && !why[0]; j++)
            if (words[i * slice / 4 + j] != 0xA0000000u + (uint32_t)i)
                snprintf(why, sizeof why, "slice %d, word %llu is 0x%08x, want 0x%08x: the other slice's release "
                                          "wrote it",
                         i, (unsigned long long)j, words[i * slice / 4 + j], 0xA0000000u + (uint32_t)i);
    free(words);
    return why;
}


/* The counts a phase must leave as it found them. */
struct baseline {
    int fds;
    cl_uint context_refs, main_queue_refs, queue_refs[NTHREADS];
};

static void take_baseline(struct baseline *bl, struct cl_fixture *f, const struct worker *workers)
{
    clFinish(f->queue);
    usleep(100000); /* let the driver's own references go */
    bl->fds = fd_count();
    bl->context_refs = cl_context_refcount(f->context);
    bl->main_queue_refs = cl_queue_refcount(f->queue);
    for (int i = 0; i < NTHREADS; i++)
        bl->queue_refs[i] = cl_queue_refcount(workers[i].queue);
}

/* PoCL lets go of its own references (held by its commands and events,
 * which a driver thread cleans up) a little after the calls returned:
 * wait up to two seconds for the counts to come back. "" or what differs. */
static const char *leaks(const struct baseline *bl, struct cl_fixture *f, const struct worker *workers)
{
    static char why[512];
    bool same = false;

    for (int ms = 0; ms < 2000 && !same; ms++) {
        same = cl_context_refcount(f->context) == bl->context_refs &&
               cl_queue_refcount(f->queue) == bl->main_queue_refs;
        for (int i = 0; i < NTHREADS && same; i++)
            same = cl_queue_refcount(workers[i].queue) == bl->queue_refs[i];
        if (!same)
            usleep(1000);
    }
    why[0] = '\0';
    if (fd_count() != bl->fds)
        snprintf(why, sizeof why, "%d fds open, %d before", fd_count(), bl->fds);
    else if (cl_context_refcount(f->context) != bl->context_refs)
        snprintf(why, sizeof why, "the context has %u references, %u before", cl_context_refcount(f->context),
                 bl->context_refs);
    else if (cl_queue_refcount(f->queue) != bl->main_queue_refs)
        snprintf(why, sizeof why, "the main queue has %u references, %u before", cl_queue_refcount(f->queue),
                 bl->main_queue_refs);
    else
        for (int i = 0; i < NTHREADS && !why[0]; i++)
            if (cl_queue_refcount(workers[i].queue) != bl->queue_refs[i])
                snprintf(why, sizeof why, "thread %d's queue has %u references, %u before", i,
                         cl_queue_refcount(workers[i].queue), bl->queue_refs[i]);
    return why;
}

/* How many of n counters are not exactly 1; *over: how many are above. */
static int not_once(atomic_int *counts, int n, int *over)
{
    int bad = 0;
    *over = 0;
    for (int i = 0; i < n; i++) {
        int c = atomic_load(&counts[i]);
        bad += c != 1;
        *over += c > 1;
    }
    return bad;
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    struct vk_owned o;
    struct shared sh;
    struct worker workers[NTHREADS];
    struct baseline bl;
    clmem_bridge *b;
    clmem_keepalive *vk_ka;
    const char *env = getenv("CLMEM_THREADS_ITERATIONS");
    const char *why;
    cl_uint align_bits = 0, ctx_no_bridge;
    int total, bad, over;
    uint32_t *words;
    bool data_good = true;
    clmem_status s;
    cl_int err;

    memset(&sh, 0, sizeof sh);
    sh.iterations = env ? atoi(env) : 500;
    if (sh.iterations < 1)
        sh.iterations = 1;
    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    ctx_no_bridge = cl_context_refcount(f.context);
    b = bridge_open(&vk, &f, 0);
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    sh.slice = align_bits / 8 > 4096 ? align_bits / 8 : 4096;
    sh.b = b;
    sh.f = &f;
    sh.o = &o;
    pthread_mutex_init(&sh.lock, NULL);
    atomic_init(&sh.failures, 0);
    atomic_init(&sh.finish_ok, 0);
    atomic_init(&sh.finish_in_use, 0);
    atomic_init(&sh.finish_timeout, 0);
    total = NTHREADS * sh.iterations;
    sh.releases = calloc((size_t)total, sizeof *sh.releases);
    sh.releases2 = calloc((size_t)total, sizeof *sh.releases2);
    if (!sh.releases || !sh.releases2)
        tap_bail("out of memory");
    vk_ka = vk_owned_new(&o, b, &vk, sh.slice * NTHREADS, path_memory_props(CLMEM_BRIDGE_PATH_HOST_MAPPED), 0);
    if (vkctx_fill(&vk, o.buffer, 0, VK_WHOLE_SIZE, 0) != VK_SUCCESS)
        tap_bail("vkCmdFillBuffer failed");
    why = disjoint_slices(b, &f, &o, vk_ka, sh.slice);
    tap_ok(!why[0], "two live imports of disjoint slices, acquired, filled and released in turn, keep each "
           "other's bytes%s%s", why[0] ? ": " : "", why);
    if (vkctx_fill(&vk, o.buffer, 0, VK_WHOLE_SIZE, 0) != VK_SUCCESS)
        tap_bail("vkCmdFillBuffer failed");
    for (int i = 0; i < NTHREADS; i++) {
        workers[i].sh = &sh;
        workers[i].index = i;
        workers[i].queue = clCreateCommandQueueWithProperties(f.context, f.device, NULL, &err);
        if (err != CL_SUCCESS)
            tap_bail("clCreateCommandQueueWithProperties failed: %d", err);
    }
    for (int i = 0; i < NTHREADS; i++)
        workers[i].neighbour = workers[(i + 1) % NTHREADS].queue;
    if ((s = bridge_settle(b)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the single-threaded imports failed: %s", clmem_error_message());
    take_baseline(&bl, &f, workers);

    /* ---------------------------------------------------------- phase 1 */
    s = clmem_bridge_import_vk(b, &o.memory, 0, o.memory.allocation_size, CLMEM_BRIDGE_PATH_HOST_MAPPED, vk_ka,
                               f.queue, CL_MEM_READ_WRITE, &sh.whole);
    if (s != CLMEM_OK)
        tap_bail("importing the whole allocation failed: %s", clmem_error_message());
    run_threads(&sh, workers, 1);
    tap_ok(atomic_load(&sh.failures) == 0,
           "phase 1: %d threads x %d imports, cache hits, handles for the shared queue, acquire/fill/release, "
           "shared-handle refs and wraps, finish refused while handles live%s%s",
           NTHREADS, sh.iterations, sh.first_failure[0] ? ": " : "", sh.first_failure);

    /* What the threads wrote, through the shared handle. */
    words = malloc((size_t)o.memory.allocation_size);
    s = clmem_bridge_acquire(b, sh.whole, 0, NULL, NULL);
    err = s == CLMEM_OK ? clEnqueueReadBuffer(f.queue, clmem_handle_mem(sh.whole), CL_TRUE, 0,
                                              (size_t)o.memory.allocation_size, words, 0, NULL, NULL)
                        : CL_INVALID_OPERATION;
    if (s == CLMEM_OK)
        s = clmem_bridge_release(b, sh.whole, 0, NULL, NULL);
    clFinish(f.queue);
    for (int t = 0; t < NTHREADS && data_good && err == CL_SUCCESS && atomic_load(&sh.failures) == 0; t++)
        for (VkDeviceSize i = 0; i < sh.slice / 4 && data_good; i++)
            if (words[t * sh.slice / 4 + i] != slice_value(t, sh.iterations - 1)) {
                tap_diag("thread %d's slice, word %llu: 0x%08x, want 0x%08x", t, (unsigned long long)i,
                         words[t * sh.slice / 4 + i], slice_value(t, sh.iterations - 1));
                data_good = false;
            }
    tap_ok(s == CLMEM_OK && err == CL_SUCCESS && data_good, "every slice holds its thread's last fill");
    free(words);
    clmem_handle_unref(sh.whole);
    sh.whole = NULL;

    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "phase 1: with every handle dropped, clmem_bridge_finish returns CLMEM_OK%s%s",
           s ? ": " : "", s ? clmem_error_message() : "");
    /* No waiting: finish returned once every dropped import's anchor went. */
    bad = not_once(sh.releases, total, &over);
    if (atomic_load(&sh.failures) == 0)
        tap_ok(bad == 0, "phase 1: each of the %d imports' anchors ran its release exactly once (%d did not, %d more "
               "than once)", total, bad, over);
    else
        tap_ok(over == 0, "phase 1 (stopped early): no import's anchor ran its release more than once (%d did)",
               over);
    why = leaks(&bl, &f, workers);
    tap_ok(!why[0], "phase 1 leaked nothing: fds, context and queue references as before%s%s", why[0] ? ": " : "",
           why);

    /* ---------------------------------------------------------- phase 2 */
    atomic_store(&sh.failures, 0);
    sh.first_failure[0] = '\0';
    run_threads(&sh, workers, 2);
    tap_ok(atomic_load(&sh.failures) == 0,
           "phase 2: %d threads x %d imports of one range, handles for a neighbour's queue, unrefs and "
           "clmem_bridge_finish racing%s%s",
           NTHREADS, sh.iterations, sh.first_failure[0] ? ": " : "", sh.first_failure);
    tap_diag("phase 2: clmem_bridge_finish answered CLMEM_OK %d, CLMEM_ERR_IN_USE %d, CLMEM_ERR_TIMEOUT %d times",
             atomic_load(&sh.finish_ok), atomic_load(&sh.finish_in_use), atomic_load(&sh.finish_timeout));
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "phase 2: after the threads joined, clmem_bridge_finish returns CLMEM_OK%s%s",
           s ? ": " : "", s ? clmem_error_message() : "");
    bad = not_once(sh.releases2, total, &over);
    if (atomic_load(&sh.failures) == 0)
        tap_ok(bad == 0, "phase 2: each of the %d imports' anchors ran its release exactly once (%d did not, %d more "
               "than once)", total, bad, over);
    else
        tap_ok(over == 0, "phase 2 (stopped early): no import's anchor ran its release more than once (%d did)",
               over);
    why = leaks(&bl, &f, workers);
    tap_ok(!why[0], "phase 2 leaked nothing: fds, context and queue references as before%s%s", why[0] ? ": " : "",
           why);

    /* ------------------------------------------------------------- end */
    for (int i = 0; i < NTHREADS; i++) {
        tap_is_int(cl_queue_refcount(workers[i].queue), 1, "thread %d's queue is held by the test alone", i);
        clReleaseCommandQueue(workers[i].queue);
    }
    tap_is_int(atomic_load(&o.released), 0, "the Vulkan memory is still held by the test");
    clmem_keepalive_unref(vk_ka);
    tap_is_int(atomic_load(&o.released), 1, "and released exactly once, at once, when the test let go");
    clmem_bridge_unref(b);
    tap_is_int(cl_context_refs_settled(f.context, ctx_no_bridge), ctx_no_bridge,
               "the last bridge reference released the context: its reference count is as before the bridge");
    free(sh.releases);
    free(sh.releases2);
    pthread_mutex_destroy(&sh.lock);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
