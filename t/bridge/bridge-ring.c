/* SPDX-License-Identifier: MIT */
/* Frames in flight, on one thread:
 *  - clmem_bridge_acquire_many / release_many: count 0, a NULL entry,
 *    handles of another bridge, an already acquired handle in the list
 *    (the call fails and nothing changes: no state, nothing enqueued),
 *    duplicates, a queue the import has no handle for, host-mapped handles
 *    together (one event for several commands), and, where the opaque-fd
 *    path exists, fd handles in ONE extension command and mixed paths in
 *    one call;
 *  - a ring of 3 frames (batch 1) carrying 10 000 frames where the device
 *    path exists (clmem_bridge_caps has OPAQUE_FD and SEMAPHORE_OPAQUE_FD),
 *    300 through host ordering elsewhere (or argv[1]), every word of every
 *    frame checked in both directions (t/lib/ring-fixture.h); then 3 batches of
 *    4 frames over the same count plus a short last batch, and one slot of
 *    3; the fd count and the heap constant over the runs;
 *  - the ring's refusals: bad creation info, frames and semaphores a ring
 *    holds, a full ring (vk_next times out and changes nothing), a batch
 *    not submitted yet (cl_next times out), batches handed back out of
 *    order, frames reported twice; and after vk_drain, the same frames and
 *    semaphores in a new ring. */
#include "t/lib/ring-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/fd-watch.h"
#include "t/lib/tap.h"

#include <CL/cl_ext.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR
#define CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR 0x2047
#endif

#define BUF_BYTES 4096


static cl_command_type command_type(cl_event ev)
{
    cl_command_type t = 0;
    clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL);
    return t;
}

/* An event over several commands: a marker. PoCL reports CL_COMMAND_MARKER;
 * NVIDIA 580 reports 0x4003 for clEnqueueMarkerWithWaitList (measured on
 * the H200), so what is checked is that it is none of the single commands
 * a handoff enqueues. */
static bool covers_several(cl_command_type t)
{
    return t != CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR && t != CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR &&
           t != CL_COMMAND_MAP_BUFFER && t != CL_COMMAND_UNMAP_MEM_OBJECT && t != 0;
}

/* Is the memory behind h acquired by OpenCL? A probe: an acquire is refused
 * (changing nothing) exactly when it is; when it is not, the acquire goes
 * through and is released again. */
static bool is_acquired(clmem_bridge *b, const clmem_handle *h)
{
    clmem_status s = clmem_bridge_acquire(b, h, 0, NULL, NULL);
    if (s == CLMEM_OK) {
        clmem_bridge_release(b, h, 0, NULL, NULL);
        return false;
    }
    return s == CLMEM_ERR_INVALID_VALUE;
}

/* Vulkan reads the buffer back: every word must be `want`. */
static bool vulkan_words(clmem_bridge *b, struct vkctx *vk, VkBuffer buf, uint32_t want, char *why, size_t len)
{
    struct vk_owned st;
    clmem_keepalive *ka = vk_owned_new(&st, b, vk, BUF_BYTES,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    uint32_t *w = NULL;
    bool good = vkctx_copy(vk, buf, st.buffer, BUF_BYTES) == VK_SUCCESS &&
                vkMapMemory(vk->device, st.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&w) == VK_SUCCESS;
    if (!good)
        snprintf(why, len, "reading back through Vulkan failed");
    for (uint32_t i = 0; good && i < BUF_BYTES / 4; i++)
        if (w[i] != want) {
            snprintf(why, len, "word %u is 0x%08x, want 0x%08x", i, w[i], want);
            good = false;
        }
    if (w)
        vkUnmapMemory(vk->device, st.memory.memory);
    clmem_keepalive_unref(ka);
    return good;
}

struct buf {
    struct vk_owned o;
    clmem_keepalive *ka;
    clmem_handle *h;
};

static void buf_import(struct buf *x, clmem_bridge *b, struct vkctx *vk, cl_command_queue queue,
                       clmem_bridge_path path)
{
    clmem_status s;
    x->ka = vk_owned_new(&x->o, b, vk, BUF_BYTES, path_memory_props(path), path_export_types(vk, path));
    s = clmem_bridge_import_vk(b, &x->o.memory, 0, BUF_BYTES, path, x->ka, queue, CL_MEM_READ_WRITE, &x->h);
    if (s != CLMEM_OK)
        tap_bail("importing a %s buffer failed: %s", clmem_bridge_path_name(path), clmem_error_message());
}

static void buf_drop(struct buf *x)
{
    clmem_handle_unref(x->h);
    clmem_keepalive_unref(x->ka);
}

/* Vulkan fills each, acquire_many, a kernel transforms each, release_many,
 * Vulkan checks each. The events: *acq_type and *rel_type get their
 * command types. One TAP point. */
static void many_round_trip(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k, struct buf **bufs,
                            cl_uint n, const char *label, cl_command_type want_type)
{
    clmem_handle *hs[8];
    cl_event acq = NULL, rel = NULL;
    char why[256] = "";
    bool good = true, all_acquired = true;
    clmem_status s;

    for (cl_uint i = 0; i < n; i++) {
        hs[i] = bufs[i]->h;
        if (vkctx_fill(vk, bufs[i]->o.buffer, 0, VK_WHOLE_SIZE, 0x100u + i) != VK_SUCCESS)
            tap_bail("vkctx_fill failed");
    }
    s = clmem_bridge_acquire_many(b, n, hs, f->queue, 0, NULL, &acq);
    if (s != CLMEM_OK) {
        snprintf(why, sizeof why, "acquire_many: %s", clmem_error_message());
        good = false;
    }
    for (cl_uint i = 0; good && i < n; i++)
        all_acquired = all_acquired && is_acquired(b, hs[i]);
    for (cl_uint i = 0; good && i < n; i++)
        if (run_xform(f, k, clmem_handle_mem(hs[i]), BUF_BYTES / 4) != CL_SUCCESS) {
            snprintf(why, sizeof why, "the kernel on entry %u failed", i);
            good = false;
        }
    if (good && (s = clmem_bridge_release_many(b, n, hs, f->queue, 0, NULL, &rel)) != CLMEM_OK) {
        snprintf(why, sizeof why, "release_many: %s", clmem_error_message());
        good = false;
    }
    if (good && clWaitForEvents(1, &rel) != CL_SUCCESS) {
        snprintf(why, sizeof why, "waiting for release_many's event failed");
        good = false;
    }
    for (cl_uint i = 0; good && i < n; i++)
        if (!vulkan_words(b, vk, bufs[i]->o.buffer, (0x100u + i) * 3u + 1u, why, sizeof why)) {
            good = false;
            break;
        }
    tap_ok(good && all_acquired, "%s: acquire_many, a kernel on each, release_many: Vulkan sees every word%s%s%s",
           label, all_acquired ? "" : " (not every entry was acquired)", good ? "" : ": ", why);
    if (acq && rel)
        tap_ok(want_type == CL_COMMAND_MARKER ? covers_several(command_type(acq)) && covers_several(command_type(rel))
                                              : command_type(acq) == want_type && command_type(rel) == want_type + 1,
               "%s: the events are of %s (acquire 0x%x, release 0x%x)", label,
               want_type == CL_COMMAND_MARKER ? "markers over several commands" : "ONE extension command",
               (unsigned)command_type(acq), (unsigned)command_type(rel));
    else
        tap_ok(false, "%s: both calls returned an event", label);
    if (acq)
        clReleaseEvent(acq);
    if (rel)
        clReleaseEvent(rel);
}

static void check_acquire_many(clmem_bridge *b, clmem_bridge *b2, struct vkctx *vk, struct cl_fixture *f,
                               struct cl_fixture *other, cl_kernel k)
{
    struct buf h[3], d[2], x2;
    struct buf *list[4];
    bool fd = (clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD) != 0;
    char no_fd[640] = "";
    cl_event ev = NULL, gate;
    cl_command_queue q2;
    clmem_handle *h0q2 = NULL, *h0again = NULL;
    cl_int err, status = 0;
    clmem_status s;

    if (!fd) {
        clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD);
        snprintf(no_fd, sizeof no_fd, "CLMEM_BRIDGE_CAP_OPAQUE_FD is not set: %s", clmem_error_message());
    }
    for (int i = 0; i < 3; i++)
        buf_import(&h[i], b, vk, f->queue, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    for (int i = 0; fd && i < 2; i++)
        buf_import(&d[i], b, vk, f->queue, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    buf_import(&x2, b2, vk, other->queue, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    gate = clCreateUserEvent(f->context, &err);
    q2 = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    if (!gate || !q2)
        tap_bail("a user event and a second queue: %d", err);

    /* ---- count 0 */
    s = clmem_bridge_acquire_many(b, 0, NULL, f->queue, 0, NULL, NULL);
    tap_ok(s == CLMEM_OK && cl_queue_drains(f->queue), "acquire_many(count 0, no event) -> CLMEM_OK, nothing to do (%s)",
           s ? clmem_error_message() : "ok");
    s = clmem_bridge_release_many(b, 0, NULL, f->queue, 0, NULL, NULL);
    tap_is_int(s, CLMEM_OK, "release_many(count 0) -> CLMEM_OK");
    s = clmem_bridge_acquire_many(b, 0, NULL, f->queue, 1, &gate, &ev);
    if (ev) {
        clFlush(f->queue);
        usleep(20000);
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    }
    tap_ok(s == CLMEM_OK && ev && status != CL_COMPLETE,
           "acquire_many(count 0) with an event: CLMEM_OK and an event that waits for the wait list (%s; status %d)",
           s ? clmem_error_message() : "ok", status);
    clSetUserEventStatus(gate, CL_COMPLETE);
    tap_ok(ev && clWaitForEvents(1, &ev) == CL_SUCCESS, "  which completes once the wait list did");
    if (ev)
        clReleaseEvent(ev);
    clReleaseEvent(gate);
    gate = clCreateUserEvent(f->context, &err);
    ev = (cl_event)(uintptr_t)1;
    s = clmem_bridge_acquire_many(b, 0, NULL, NULL, 0, NULL, &ev);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && ev == NULL, "acquire_many(count 0, NULL queue) -> CLMEM_ERR_NULL_POINTER, "
                                                      "*event_out NULL (%s)", clmem_status_name(s));
    s = clmem_bridge_acquire_many(b, 0, NULL, other->queue, 0, NULL, &ev);
    tap_ok(s == CLMEM_ERR_CONTEXT_MISMATCH && ev == NULL,
           "acquire_many(count 0) on a queue of another context -> CLMEM_ERR_CONTEXT_MISMATCH (%s)",
           clmem_status_name(s));

    /* ---- a NULL entry, a NULL list */
    {
        clmem_handle *hs[3] = {h[0].h, NULL, h[2].h};
        s = clmem_bridge_acquire_many(b, 3, hs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_NULL_POINTER && strncmp(clmem_error_message(), "clmem_bridge_acquire_many: entry 1 ", 35) == 0,
               "acquire_many with a NULL entry -> CLMEM_ERR_NULL_POINTER naming entry 1 (%s)", clmem_error_message());
        tap_ok(cl_queue_drains(f->queue) && !is_acquired(b, h[0].h) && !is_acquired(b, h[2].h),
               "  nothing was enqueued and neither other entry was acquired");
        s = clmem_bridge_acquire_many(b, 2, NULL, f->queue, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire_many(count 2, NULL list) -> CLMEM_ERR_NULL_POINTER");
        s = clmem_bridge_acquire_many(NULL, 1, hs, f->queue, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire_many(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
        hs[1] = h[1].h;
        s = clmem_bridge_acquire_many(b, 3, hs, NULL, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_NULL_POINTER, "acquire_many(NULL queue) -> CLMEM_ERR_NULL_POINTER");
    }

    /* ---- handles of another bridge, and not of a bridge at all */
    {
        clmem_handle *hs[3] = {h[0].h, x2.h, h[2].h};
        clmem_handle *plain = NULL;
        cl_mem m = cl_fixture_buffer(f, 64);

        s = clmem_bridge_acquire_many(b, 3, hs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entry 1") &&
                   strstr(clmem_error_message(), "bridge"),
               "acquire_many with a handle of another bridge -> CLMEM_ERR_INVALID_VALUE naming entry 1 (%s)",
               clmem_error_message());
        tap_ok(cl_queue_drains(f->queue) && !is_acquired(b, h[0].h) && !is_acquired(b2, x2.h),
               "  nothing was enqueued and nothing acquired");
        s = clmem_bridge_acquire_many(b2, 1, hs, other->queue, 0, NULL, NULL);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "acquire_many through the other bridge of this bridge's handle -> "
                                               "CLMEM_ERR_INVALID_VALUE");
        clmem_handle_wrap(m, f->queue, 0, NULL, &plain);
        hs[1] = plain;
        s = clmem_bridge_acquire_many(b, 3, hs, f->queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && !is_acquired(b, h[0].h),
               "acquire_many with a handle not from the bridge -> CLMEM_ERR_INVALID_VALUE, nothing acquired (%s)",
               clmem_status_name(s));
        clmem_handle_unref(plain);
        clReleaseMemObject(m);
    }

    /* ---- an already acquired handle in the list: nothing changes */
    {
        clmem_handle *hs[3] = {h[0].h, h[1].h, h[2].h};
        clmem_handle *rs[2] = {h[1].h, h[0].h};
        s = clmem_bridge_acquire(b, h[1].h, 0, NULL, NULL);
        tap_is_int(s, CLMEM_OK, "acquire entry 1 alone");
        s = clmem_bridge_acquire_many(b, 3, hs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entry 1") &&
                   strstr(clmem_error_message(), "already acquired"),
               "acquire_many with an already acquired entry -> CLMEM_ERR_INVALID_VALUE naming it (%s)",
               clmem_error_message());
        tap_ok(cl_queue_drains(f->queue), "  nothing was enqueued (nothing waits on the gated wait list)");
        tap_ok(!is_acquired(b, h[0].h) && !is_acquired(b, h[2].h) && is_acquired(b, h[1].h),
               "  entries 0 and 2 are still Vulkan's, entry 1 still OpenCL's");
        s = clmem_bridge_release_many(b, 2, rs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entry 1"),
               "release_many with an entry that is not acquired -> CLMEM_ERR_INVALID_VALUE naming it (%s)",
               clmem_error_message());
        tap_ok(cl_queue_drains(f->queue) && is_acquired(b, h[1].h) && !is_acquired(b, h[0].h),
               "  nothing was enqueued; entry 1 is still OpenCL's");
        s = clmem_bridge_release(b, h[1].h, 0, NULL, NULL);
        tap_is_int(s, CLMEM_OK, "release entry 1 alone");
    }

    /* ---- duplicates */
    {
        clmem_handle *hs[3] = {h[0].h, h[1].h, h[0].h};
        s = clmem_bridge_acquire_many(b, 3, hs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entries 0 and 2"),
               "acquire_many listing one handle twice -> CLMEM_ERR_INVALID_VALUE naming both entries (%s)",
               clmem_error_message());
        s = clmem_bridge_handle_for_queue(h[0].h, f->queue, &h0again);
        hs[2] = h0again;
        s = s ? s : clmem_bridge_acquire_many(b, 3, hs, f->queue, 1, &gate, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "same imported memory"),
               "acquire_many with two handles of one import -> CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
        tap_ok(cl_queue_drains(f->queue) && !is_acquired(b, h[0].h) && !is_acquired(b, h[1].h),
               "  nothing was enqueued or acquired");
        clmem_handle_unref(h0again);
    }

    /* ---- a queue the import has no handle for */
    {
        clmem_handle *hs[1] = {h[0].h};
        s = clmem_bridge_acquire_many(b, 1, hs, q2, 0, NULL, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "handle_for_queue"),
               "acquire_many on a queue no handle of the import was made for -> CLMEM_ERR_INVALID_VALUE (%s)",
               clmem_error_message());
        s = clmem_bridge_handle_for_queue(h[0].h, q2, &h0q2);
        s = s ? s : clmem_bridge_acquire_many(b, 1, hs, q2, 0, NULL, NULL);
        tap_ok(s == CLMEM_OK, "  after clmem_bridge_handle_for_queue(q2) it is accepted (%s)",
               s ? clmem_error_message() : "ok");
        s = clmem_bridge_release_many(b, 1, hs, q2, 0, NULL, NULL);
        tap_ok(s == CLMEM_OK && clFinish(q2) == CL_SUCCESS, "  and released there (%s)", s ? clmem_error_message() : "ok");
        clmem_handle_unref(h0q2);
    }
    clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);

    /* ---- several host-mapped handles: one event over several commands */
    list[0] = &h[0];
    list[1] = &h[1];
    list[2] = &h[2];
    many_round_trip(b, vk, f, k, list, 3, "3 host-mapped", CL_COMMAND_MARKER);

    /* ---- the fd path: one extension command for all; mixed paths */
    if (fd) {
        list[0] = &d[0];
        list[1] = &d[1];
        many_round_trip(b, vk, f, k, list, 2, "2 opaque-fd", CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
        list[0] = &d[0];
        list[1] = &h[0];
        list[2] = &d[1];
        list[3] = &h[1];
        many_round_trip(b, vk, f, k, list, 4, "mixed: 2 opaque-fd and 2 host-mapped in one call", CL_COMMAND_MARKER);
    } else {
        for (int i = 0; i < 4; i++)
            tap_skip(no_fd, "%s", i < 2 ? "2 opaque-fd in ONE extension command" : "mixed paths in one call");
    }

    for (int i = 0; i < 3; i++)
        buf_drop(&h[i]);
    for (int i = 0; fd && i < 2; i++)
        buf_drop(&d[i]);
    buf_drop(&x2);
    clReleaseCommandQueue(q2);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK && bridge_settle(b2) == CLMEM_OK, "acquire_many: both bridges settle afterwards (%s)",
           s ? clmem_error_message() : "ok");
}

/* ---------------------------------------------------------------- the ring */

static void run_one_thread(struct ring_run *r)
{
    while (r->consumed < r->total && atomic_load(&r->bad_calls) == 0) {
        /* Keep every slot busy: up to D batches between Vulkan and OpenCL. */
        while (r->produced < r->total && (r->produced - r->consumed + r->k - 1) / r->k < r->depth)
            if (!ring_produce_batch(r))
                break;
        if (!ring_consume_batch(r))
            break;
    }
}

static size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

static void carry(struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b, clmem_bridge_path path,
                  clmem_bridge_semaphore_mode mode, uint32_t n, uint32_t k, uint64_t total, const char *label)
{
    struct ring_run r;
    int fds;
    size_t heap0, heap1;
    uint64_t warm, batches;
    struct timespec t0, t1;
    double us;

    ring_run_open(&r, vk, f, b, path, mode, n, k, total, label);
    /* A few batches first, so the drivers' caches are warm for the counts. */
    warm = total / 10;
    while (r.consumed < warm && atomic_load(&r.bad_calls) == 0) {
        if (!ring_produce_batch(&r) || !ring_consume_batch(&r))
            break;
    }
    clFinish(f->queue);
    fds = fd_count();
    heap0 = heap_in_use();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_one_thread(&r);
    clFinish(f->queue);
    vkQueueWaitIdle(vk->queue);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    heap1 = heap_in_use();
    batches = (total + k - 1) / k - (warm + k - 1) / k;
    if (batches == 0)
        batches = 1;
    us = ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / (double)(total - warm ? total - warm : 1);
    tap_diag("%s: %.1f us per frame over %llu frames (Vulkan writes + OpenCL reads and writes %u words)", label, us,
             (unsigned long long)(total - warm), RING_FRAME_WORDS);
    ring_run_check(&r);
    tap_ok(fd_count() == fds, "%s: the fd count is constant over the run (%d, %d before)", label, fd_count(), fds);
    if (heap0 == 0 && heap1 == 0)
        tap_skip("mallinfo2 reports nothing: malloc is replaced (valgrind or a sanitizer)", "%s: the heap", label);
    else if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        /* The library allocates nothing per batch of up to 16 frames; the
         * smallest thing that could leak is an event (PoCL's: ~290 bytes).
         * 128 bytes a batch leaves room for the drivers' noise (up to ~45
         * bytes a frame measured in the first run of a process). */
        tap_ok(heap1 < heap0 + (size_t)batches * 128,
               "%s: the heap did not grow by an event a batch: %zu bytes in use, %zu before (%.1f bytes a batch)",
               label, heap1, heap0, ((double)heap1 - (double)heap0) / (double)batches);
    else /* as t/bridge/bridge-stress: the driver's own growth is not ours to assert */
        tap_diag("%s: heap in use grew %.2f bytes a frame (the driver's allocations included)", label,
                 ((double)heap1 - (double)heap0) / (double)(total - warm));
    ring_run_close(&r);
}

/* After vk_drain (and its waits), the frames and semaphores make a new
 * ring that starts clean: every word checked again. */
static void check_drain_reuse(struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b, clmem_bridge_path path,
                              clmem_bridge_semaphore_mode mode)
{
    struct ring_run r;
    clmem_bridge_ring_info info;
    clmem_status s;

    ring_run_open(&r, vk, f, b, path, mode, 4, 2, 9, "drain, then a new ring");
    run_one_thread(&r);
    ring_run_check(&r); /* drains, and submits the waits */
    clmem_bridge_ring_unref(r.ring);
    info = (clmem_bridge_ring_info){.size = sizeof info, .frame_count = 4, .batch_size = 2, .frames = r.frames,
                                    .ready = r.sems, .done = r.sems + 2, .queue = f->queue};
    r.ring = NULL;
    s = clmem_bridge_ring_create(b, &info, &r.ring);
    if (!tap_ok(s == CLMEM_OK, "a drained ring's frames and semaphores make a new ring once it is dropped (%s)",
                s ? clmem_error_message() : "ok"))
        tap_bail("cannot run the second ring");
    r.produced = r.consumed = 0; /* the new ring counts from 0: the same values again */
    run_one_thread(&r);
    ring_run_check(&r);
    ring_run_close(&r);
}

/* ------------------------------------------------------- the ring refuses */

static void check_ring_refusals(struct vkctx *vk, struct cl_fixture *f, struct cl_fixture *other, clmem_bridge *b,
                                clmem_bridge *b2, clmem_bridge_path path, clmem_bridge_semaphore_mode mode)
{
    struct ring_run r;
    clmem_bridge_ring_info info;
    clmem_bridge_ring *ring2 = (clmem_bridge_ring *)(uintptr_t)1;
    clmem_bridge_ring_frame fr, fr2, bt_frame;
    clmem_bridge_ring_batch bt, bt2;
    uint32_t drained = 0;
    cl_command_queue ooo;
    cl_queue_properties ooo_props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    clmem_bridge_semaphore *sems[4];
    clmem_status s;
    cl_int err;

    ring_run_open(&r, vk, f, b, path, mode, 2, 1, 8, "refusals");
    info = (clmem_bridge_ring_info){.size = sizeof info,
                                    .frame_count = 2,
                                    .batch_size = 1,
                                    .frames = r.frames,
                                    .ready = r.sems,
                                    .done = r.sems + 2,
                                    .queue = f->queue};
#define REFUSED(want, what, ...)                                                                                   \
    do {                                                                                                           \
        clmem_bridge_ring_info bad = info;                                                                         \
        __VA_ARGS__;                                                                                               \
        ring2 = (clmem_bridge_ring *)(uintptr_t)1;                                                                 \
        s = clmem_bridge_ring_create(b, &bad, &ring2);                                                             \
        tap_ok(s == (want) && ring2 == NULL, "ring_create with %s -> %s (%s: %s)", what, #want,                    \
               clmem_status_name(s), clmem_error_message());                                                       \
        if (s == CLMEM_OK)                                                                                         \
            clmem_bridge_ring_unref(ring2);                                                                        \
    } while (0)

    REFUSED(CLMEM_ERR_INVALID_VALUE, "frames already in a ring", (void)0);
    clmem_bridge_ring_unref(r.ring); /* the same frames and semaphores are free again */
    r.ring = NULL;
    s = clmem_bridge_ring_create(NULL, &info, &ring2);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && ring2 == NULL, "ring_create(NULL bridge) -> CLMEM_ERR_NULL_POINTER");
    REFUSED(CLMEM_ERR_INVALID_VALUE, "info.size 0", bad.size = 0);
    REFUSED(CLMEM_ERR_INVALID_VALUE, "unknown flags", bad.flags = 4);
    REFUSED(CLMEM_ERR_INVALID_VALUE, "frame_count 0", bad.frame_count = 0);
    REFUSED(CLMEM_ERR_INVALID_VALUE, "batch_size 0", bad.batch_size = 0);
    REFUSED(CLMEM_ERR_INVALID_VALUE, "frame_count 2, batch_size 3 (not a multiple)", bad.batch_size = 3);
    REFUSED(CLMEM_ERR_NULL_POINTER, "frames NULL", bad.frames = NULL);
    REFUSED(CLMEM_ERR_NULL_POINTER, "queue NULL", bad.queue = NULL);
    {
        clmem_handle *twice[2] = {r.frames[0], r.frames[0]};
        REFUSED(CLMEM_ERR_INVALID_VALUE, "one frame listed twice", bad.frames = twice);
    }
    sems[0] = r.sems[0];
    sems[1] = r.sems[1];
    sems[2] = r.sems[2];
    sems[3] = r.sems[0];
    REFUSED(CLMEM_ERR_INVALID_VALUE, "one semaphore as ready[0] and done[1]", bad.done = sems + 2);
    sems[3] = NULL;
    REFUSED(CLMEM_ERR_NULL_POINTER, "a NULL semaphore", bad.done = sems + 2);
    ooo = clCreateCommandQueueWithProperties(f->context, f->device, ooo_props, &err);
    if (ooo) {
        clmem_handle *hq[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++)
            clmem_bridge_handle_for_queue(r.frames[i], ooo, &hq[i]);
        REFUSED(CLMEM_ERR_INVALID_VALUE, "an out-of-order queue", bad.queue = ooo);
        clmem_handle_unref(hq[0]);
        clmem_handle_unref(hq[1]);
        clReleaseCommandQueue(ooo);
    } else {
        tap_skip("the OpenCL device has no out-of-order queues", "ring_create with an out-of-order queue");
    }
    {
        cl_command_queue q2 = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
        REFUSED(CLMEM_ERR_INVALID_VALUE, "a queue no frame's import has a handle for", bad.queue = q2);
        clReleaseCommandQueue(q2);
    }
    {
        struct vk_owned o;
        clmem_keepalive *ka = vk_owned_new(&o, b2, vk, 4096, path_memory_props(CLMEM_BRIDGE_PATH_HOST_MAPPED), 0);
        clmem_handle *foreign = NULL, *mixed[2] = {r.frames[0], NULL};
        clmem_bridge_import_vk(b2, &o.memory, 0, 4096, CLMEM_BRIDGE_PATH_HOST_MAPPED, ka, other->queue, 0, &foreign);
        clmem_keepalive_unref(ka);
        mixed[1] = foreign;
        REFUSED(CLMEM_ERR_INVALID_VALUE, "a frame of another bridge", bad.frames = mixed);
        clmem_handle_unref(foreign);
        bridge_settle(b2);
    }
    s = clmem_bridge_acquire(b, r.frames[0], 0, NULL, NULL);
    REFUSED(CLMEM_ERR_INVALID_VALUE, "a frame OpenCL has acquired", (void)0);
    clmem_bridge_release(b, r.frames[0], 0, NULL, NULL);
    clFinish(f->queue);

    /* The real ring again, for the calls' refusals. */
    s = clmem_bridge_ring_create(b, &info, &r.ring);
    if (!tap_ok(s == CLMEM_OK, "the ring again once its frames are free (%s)", s ? clmem_error_message() : "ok"))
        tap_bail("cannot check the ring's calls");
    s = clmem_bridge_acquire(b, r.frames[0], 0, NULL, NULL);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "ring"),
           "acquire of a ring's frame from outside the ring -> CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
    s = clmem_bridge_ring_cl_next(r.ring, 0, 0, NULL, &bt, NULL);
    tap_is_int(s, CLMEM_ERR_TIMEOUT, "cl_next before Vulkan submitted anything -> CLMEM_ERR_TIMEOUT");
    s = clmem_bridge_ring_vk_next(r.ring, 2, 0, &fr);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "vk_next with unknown flags -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_ring_vk_next(r.ring, 0, 0, NULL);
    tap_is_int(s, CLMEM_ERR_NULL_POINTER, "vk_next(NULL frame) -> CLMEM_ERR_NULL_POINTER");
    fr.sequence = 0;
    s = clmem_bridge_ring_vk_submitted(r.ring, &fr);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "vk_submitted of a frame not handed out -> CLMEM_ERR_INVALID_VALUE");

    /* Fill the ring: two batches (slots) out, none back. On the way,
     * asking for a slot whose last batch was never reported is refused
     * at once rather than waiting for what cannot come. */
    s = clmem_bridge_ring_vk_next(r.ring, 0, 0, &fr);
    fr2 = fr;
    s = s ? s : clmem_bridge_ring_vk_next(r.ring, 0, 0, &fr2);
    tap_ok(s == CLMEM_OK, "vk_next hands out both slots before anything is reported (%s)",
           s ? clmem_error_message() : "ok");
    s = clmem_bridge_ring_vk_next(r.ring, 0, RING_TIMEOUT_NS, &bt_frame);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "not reported"),
           "vk_next for a slot whose batch was never reported -> CLMEM_ERR_INVALID_VALUE at once (%s)",
           clmem_error_message());
    s = clmem_bridge_ring_vk_drain(r.ring, 0, 0, NULL, &drained);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE, "vk_drain with batches not reported -> CLMEM_ERR_INVALID_VALUE (%s)",
           clmem_status_name(s));
    /* ring_produce_batch records and submits these two itself: start over
     * with a ring that has handed nothing out. */
    clmem_bridge_ring_unref(r.ring);
    r.ring = NULL;
    s = clmem_bridge_ring_create(b, &info, &r.ring);
    if (!tap_ok(s == CLMEM_OK, "a new ring of the same frames (%s)", s ? clmem_error_message() : "ok"))
        tap_bail("cannot go on");
    ring_produce_batch(&r);
    ring_produce_batch(&r);
    tap_ok(atomic_load(&r.bad_calls) == 0, "two batches produced (%s)", r.first_error);
    fr2 = fr;
    fr2.sequence = 1;
    s = clmem_bridge_ring_vk_submitted(r.ring, &fr2);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "vk_submitted of a frame reported already -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_ring_vk_next(r.ring, 0, 20000000, &fr);
    tap_ok(s == CLMEM_ERR_TIMEOUT, "vk_next on a full ring -> CLMEM_ERR_TIMEOUT after 20 ms (%s)",
           clmem_status_name(s));
    s = clmem_bridge_ring_cl_next(r.ring, RING_TIMEOUT_NS, 0, NULL, &bt, NULL);
    if (tap_ok(s == CLMEM_OK && bt.batch == 0, "cl_next takes batch 0 (%s)", s ? clmem_error_message() : "ok"))
        ring_run_kernels(&r, &bt);
    s = clmem_bridge_ring_cl_next(r.ring, RING_TIMEOUT_NS, 0, NULL, &bt2, NULL);
    if (tap_ok(s == CLMEM_OK && bt2.batch == 1, "cl_next takes batch 1 while 0 is out (%s)",
               s ? clmem_error_message() : "ok"))
        ring_run_kernels(&r, &bt2);
    s = clmem_bridge_ring_cl_done(r.ring, &bt2, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "cl_done of batch 1 before batch 0 -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_ring_vk_next(r.ring, 0, 0, &fr);
    tap_is_int(s, CLMEM_ERR_TIMEOUT, "vk_next still times out: nothing was handed back");
    s = clmem_bridge_ring_cl_done(r.ring, &bt, 0, NULL, NULL);
    tap_ok(s == CLMEM_OK, "cl_done of batch 0 (%s)", s ? clmem_error_message() : "ok");
    s = clmem_bridge_ring_cl_done(r.ring, &bt, 0, NULL, NULL);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "cl_done of batch 0 again -> CLMEM_ERR_INVALID_VALUE");
    s = clmem_bridge_ring_cl_done(r.ring, &bt2, 0, NULL, NULL);
    tap_ok(s == CLMEM_OK, "cl_done of batch 1 (%s)", s ? clmem_error_message() : "ok");
    r.consumed = 2;
    /* and the ring goes on, every value checked */
    while (ring_produce_batch(&r) && ring_consume_batch(&r))
        ;
    while (ring_consume_batch(&r))
        ;
    ring_run_check(&r);
    ring_run_close(&r);
#undef REFUSED
}

/* The fd count after each step of each pass, so that a leak names its step. */
/* The fds after each step of each pass, so that a leak names its step;
 * returns the ones that are not the bridge's exports. */
static int fd_step(int pass, const char *step)
{
    char what[128];
    snprintf(what, sizeof what, "pass %d, %s", pass + 1, step);
    return fd_watch_others(what);
}

int main(int argc, char **argv)
{
    struct vkctx vk;
    struct cl_fixture f, other;
    clmem_bridge *b, *b2;
    uint32_t caps;
    bool device;
    clmem_bridge_path path;
    clmem_bridge_semaphore_mode mode;
    uint64_t total;
    cl_kernel k;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    cl_fixture_open_on(&other, f.platform, f.device);
    b = bridge_open_with(&vk, &f, 0, fd_watch_get_instance_proc_addr);
    b2 = bridge_open(&vk, &other, 0);
    caps = clmem_bridge_caps(b);
    path = bridge_test_path(b);
    mode = caps & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD
                                                       : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
    device = path == CLMEM_BRIDGE_PATH_OPAQUE_FD && mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD;
    total = argc > 1 ? strtoull(argv[1], NULL, 10) : device ? 10000 : 300;
    tap_diag("Vulkan %s, OpenCL %s: %s frames, %s semaphores, %llu frames a run", vk.device_name, f.device_name,
             clmem_bridge_path_name(path), device ? "opaque-fd" : "host-ordered", (unsigned long long)total);
    if (!device) {
        clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD);
        tap_diag("host ordering, because: %s", clmem_error_message());
    }
    k = xform_kernel(&f);

    check_acquire_many(b, b2, &vk, &f, &other, k);
    /* Passes of the same runs, counted after each (fd-watch.h): the fds the
     * bridge exported must all be closed, and the others (NVIDIA's own grow
     * to a high-water mark as rings come and go, with raw calls too:
     * docs/probes/ring-fd-probe.c) must level off. */
    int passes = ring_test_passes();
    int others[RING_TEST_MAX_PASSES];
    for (int pass = 0; pass < passes; pass++) {
        carry(&vk, &f, b, path, mode, 3, 1, total, "ring of 3, batch 1");
        fd_step(pass, "ring of 3, batch 1");
        carry(&vk, &f, b, path, mode, 12, 4, total + 3, "ring of 3 batches of 4");
        fd_step(pass, "ring of 3 batches of 4");
        carry(&vk, &f, b, path, mode, 3, 3, total / 10 + 1, "one slot of 3");
        fd_step(pass, "one slot of 3");
        check_drain_reuse(&vk, &f, b, path, mode);
        fd_step(pass, "drain and reuse");
        check_ring_refusals(&vk, &f, &other, b, b2, path, mode);
        others[pass] = fd_step(pass, "refusals");
    }
    fd_watch_check_passes(others, passes, "the ring runs");

    clReleaseKernel(k);
    clmem_bridge_unref(b);
    clmem_bridge_unref(b2);
    cl_fixture_close(&other);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
