/* SPDX-License-Identifier: MIT */
/* Fd and object accounting under load: 10 000 host-mapped
 * import/acquire/release/unref cycles (and as many on the opaque-fd path
 * where it exists: the H200) on a bridge without an import cache
 * (CLMEM_BRIDGE_NO_IMPORT_CACHE), so that every cycle is a new driver
 * import (vkMapMemory, clCreateBuffer with CL_MEM_USE_HOST_PTR, OpenCL's
 * map, every other cycle a sub-buffer, the destructor callback, then the
 * handoff's unmap and map, and the teardown: the markers the last unref
 * enqueues, and the release of the cl_mem and the Vulkan anchor once they
 * completed, on a driver thread or in clmem_bridge_finish()).
 * A leak of anything per cycle is 10 000 of it, so afterwards:
 *  - clmem_bridge_finish() returns CLMEM_OK, and then the fd count and the
 *    context's and queue's reference counts are as before (checked every
 *    1000 cycles too, after a finish, to name where a leak starts);
 *  - the heap in use did not grow by a record a cycle (glibc's mallinfo2;
 *    not meaningful under valgrind or a sanitizer, which replace malloc);
 *  - the caller's anchor on the Vulkan memory was held through all the
 *    cycles and released exactly once, when the caller let go at the end
 *    (at once: the finished bridge holds no reference on it);
 *  - once the last bridge reference went, the context's reference count is
 *    what it was before the bridge was made.
 * CLMEM_STRESS_CYCLES overrides the count (scripts/check-valgrind.sh lowers
 * it: valgrind is some 50 times slower). */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ALLOC_SIZE (64 * 1024)


/* PoCL lets go of its own references on the queue and the context (held by
 * its commands and events, which a driver thread cleans up) a little after
 * the calls returned: true once the counts are back, false if they are not
 * after two seconds (a leak never comes back). */
static bool refs_settle(struct cl_fixture *f, cl_uint ctx_want, cl_uint queue_want)
{
    for (int ms = 0; ms < 2000; ms++) {
        if (cl_context_refcount(f->context) == ctx_want && cl_queue_refcount(f->queue) == queue_want)
            return true;
        usleep(1000);
    }
    return false;
}

/* One cycle; "" or what failed. Odd cycles import a sub-range. */
static const char *cycle(clmem_bridge *b, struct cl_fixture *f, struct vk_owned *o, clmem_keepalive *ka, int i,
                         VkDeviceSize align, clmem_bridge_path path)
{
    static char why[512];
    VkDeviceSize offset = (i & 1) ? align : 0;
    VkDeviceSize size = (i & 1) ? 4096 : o->memory.allocation_size;
    clmem_handle *h = NULL;
    cl_event done = NULL;
    cl_int err = CL_SUCCESS;
    clmem_status s = clmem_bridge_import_vk(b, &o->memory, offset, size, path, ka, f->queue, CL_MEM_READ_WRITE, &h);

    why[0] = '\0';
    if (s != CLMEM_OK)
        snprintf(why, sizeof why, "import: %s", clmem_error_message());
    else if ((s = clmem_bridge_acquire(b, h, 0, NULL, NULL)) != CLMEM_OK)
        snprintf(why, sizeof why, "acquire: %s", clmem_error_message());
    else if ((s = clmem_bridge_release(b, h, 0, NULL, &done)) != CLMEM_OK)
        snprintf(why, sizeof why, "release: %s", clmem_error_message());
    else if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
        snprintf(why, sizeof why, "waiting for the release: %d", err);
    if (done)
        clReleaseEvent(done);
    clmem_handle_unref(h);
    return why;
}

static void stress(struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_owned o;
    clmem_bridge *b;
    clmem_keepalive *ka;
    const char *env = getenv("CLMEM_STRESS_CYCLES");
    int cycles = env ? atoi(env) : 10000;
    int fds_before, done = 0, first_fd_leak = -1, first_ref_leak = -1, first_finish_failure = -1;
    cl_uint ctx_no_bridge, ctx_before, queue_before, align_bits = 0;
    size_t heap_before, heap_after;
    struct timespec t0, t1;
    double seconds;
    const char *why = "";
    char finish_why[512] = "";
    clmem_status s;

    tap_diag("path: %s on %s", clmem_bridge_path_name(path), f->device_name);
    clGetDeviceInfo(f->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    ctx_no_bridge = cl_context_refcount(f->context);
    b = bridge_open(vk, f, CLMEM_BRIDGE_NO_IMPORT_CACHE);
    ka = vk_owned_new(&o, b, vk, ALLOC_SIZE, path_memory_props(path), path_export_types(vk, path));
    /* Warm-up: the drivers' first-use fds and caches are not leaks. */
    for (int i = 0; i < 20 && !why[0]; i++)
        why = cycle(b, f, &o, ka, i, align_bits / 8 ? align_bits / 8 : 1, path);
    if (why[0])
        tap_bail("the warm-up cycles failed: %s", why);
    if (bridge_settle(b) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the warm-up cycles failed: %s", clmem_error_message());
    clFinish(f->queue);
    usleep(100000); /* let the driver's own references go (see refs_settle) */
    fds_before = fd_count();
    ctx_before = cl_context_refcount(f->context);
    queue_before = cl_queue_refcount(f->queue);
    heap_before = mallinfo2().uordblks;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (; done < cycles; done++) {
        why = cycle(b, f, &o, ka, done, align_bits / 8 ? align_bits / 8 : 1, path);
        if (why[0])
            break;
        if ((done + 1) % 1000 == 0) {
            /* The teardowns of the cycles so far may still be pending on
             * driver threads: finish them, then count. */
            if ((s = bridge_settle(b)) != CLMEM_OK && first_finish_failure < 0) {
                first_finish_failure = done + 1;
                snprintf(finish_why, sizeof finish_why, "%s", clmem_error_message());
            }
            if (first_fd_leak < 0 && fd_count() != fds_before)
                first_fd_leak = done + 1;
            if (first_ref_leak < 0 && !refs_settle(f, ctx_before, queue_before))
                first_ref_leak = done + 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

    tap_ok(done == cycles, "%d of %d import/acquire/release/unref cycles succeeded%s%s", done, cycles,
           why[0] ? ": " : "", why);
    tap_diag("%.2f s, %.1f us a cycle", seconds, done ? seconds * 1e6 / done : 0.0);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK && first_finish_failure < 0,
           "clmem_bridge_finish returned CLMEM_OK every 1000 cycles and at the end%s%s",
           s != CLMEM_OK ? ": " : "", s != CLMEM_OK ? clmem_error_message() : "");
    if (first_finish_failure >= 0)
        tap_diag("the first finish that failed was after %d cycles: %s", first_finish_failure, finish_why);
    heap_after = mallinfo2().uordblks;
    tap_ok(fd_count() == fds_before && first_fd_leak < 0, "no fd leaked: %d open, %d before", fd_count(),
           fds_before);
    if (first_fd_leak >= 0)
        tap_diag("the fd count first differed after %d cycles", first_fd_leak);
    tap_ok(refs_settle(f, ctx_before, queue_before) && first_ref_leak < 0,
           "no OpenCL object leaked: context references %u (%u before), queue references %u (%u before)",
           cl_context_refcount(f->context), ctx_before, cl_queue_refcount(f->queue), queue_before);
    if (first_ref_leak >= 0)
        tap_diag("the reference counts first differed after %d cycles", first_ref_leak);
    if (heap_before == 0 && heap_after == 0)
        tap_skip("mallinfo2 reports nothing: malloc is replaced (valgrind or a sanitizer)", "the heap did not grow");
    else if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        /* 28 bytes a cycle: under the smallest object a cycle allocates (an
         * anchor, a 32-byte chunk; records and handles are larger), over
         * what the driver's own allocations left on the H200 (0.6 bytes a
         * cycle in one run, 18.2 in another, with the library's
         * allocations the same). */
        tap_ok(heap_after < heap_before + (size_t)cycles * 28,
               "the heap did not grow by a record a cycle: %zu bytes in use, %zu before (%.1f bytes a cycle)",
               heap_after, heap_before, ((double)heap_after - (double)heap_before) / (cycles ? cycles : 1));
    else
        /* Not an assertion: on the H200 the heap grew 259 bytes a cycle on
         * this path and 0.6 on the host-mapped one, with the library making
         * the same allocations on both; mallinfo2 cannot tell the driver's
         * growth (its fd import) from ours. That every record was freed is
         * asserted below instead: each holds a reference on the anchor. */
        tap_diag("heap in use grew %.1f bytes a cycle (the driver's allocations included)",
                 ((double)heap_after - (double)heap_before) / (cycles ? cycles : 1));
    tap_is_int(atomic_load(&o.released), 0, "the caller's anchor is still held by the caller");
    clmem_keepalive_unref(ka);
    /* No waiting: after a successful finish no import holds the anchor, so
     * the caller's reference was the last. */
    tap_is_int(atomic_load(&o.released), 1,
               "and released exactly once, at once, when the caller let go: every import's record was freed");
    clmem_bridge_unref(b); /* the anchor's release dropped its own reference */
    tap_is_int(cl_context_refs_settled(f->context, ctx_no_bridge), ctx_no_bridge,
               "the last bridge reference released the context: its reference count is as before the bridge");
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
    clmem_status s;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    stress(&vk, &f, CLMEM_BRIDGE_PATH_HOST_MAPPED);
    b = bridge_open(&vk, &f, 0);
    s = clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    if (s == CLMEM_OK) {
        clmem_bridge_unref(b);
        stress(&vk, &f, CLMEM_BRIDGE_PATH_OPAQUE_FD);
    } else {
        tap_skip(clmem_error_message(), "the same cycles on the opaque-fd path");
        clmem_bridge_unref(b);
    }
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
