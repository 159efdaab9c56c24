/* SPDX-License-Identifier: MIT */
/* The rules clmem-bridge.h and clmem.h state, each checked against what the
 * library does, so that the header and the code cannot part ways. One
 * section per rule, named by the header paragraph it checks:
 *  - clmem_bridge_finish(): imports made with a NULL keepalive are waited
 *    for too; after CLMEM_OK their cl_mem is destroyed;
 *  - clmem_bridge_unref(): the last reference dropped before finish, with
 *    a teardown pending, is safe: the bridge goes after the teardown;
 *  - "Where a keepalive's callback runs" and "What a keepalive's callback
 *    may call": not inside the last unref while work is pending, exactly
 *    once; from the callback, non-blocking OpenCL calls and the last unref
 *    of another import's handle (which takes the bridge's locks) work;
 *  - the import cache: a cache hit's keepalive is held until the import's
 *    teardown and dropped once; "Two imports of the same bytes": a pitched
 *    plane handle of a range and a plain import of it are two imports with
 *    their own acquire state, aliasing the same bytes;
 *  - "Which error wins": calls with two faults return the earlier step's;
 *  - "NULL arguments": CLMEM_ERR_NULL_POINTER from every status-returning
 *    function, for each pointer it needs;
 *  - "Versioned structs": a larger size with a zero tail is accepted, a
 *    non-zero tail is CLMEM_ERR_UNSUPPORTED, an absurd size
 *    CLMEM_ERR_INVALID_VALUE;
 *  - 4:2:0 formats refuse an odd extent, saying why;
 *  - clmem.h's clmem_handle: a handle's cl_mem starts at the shared range,
 *    and a bridge handle's row pitch is a multiple of the texel size.
 * The work a lifetime rule must wait for is held behind a user event that
 * another thread opens later. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KiB 1024u
#define GATE_DELAY_MS 100

/* ------------------------------------------------------------ helpers */

struct vk_buf {
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
};

static void vk_buf_make(struct vk_buf *v, clmem_bridge *b, struct vkctx *vk, VkDeviceSize size,
                        clmem_bridge_path path)
{
    clmem_status s = clmem_bridge_vk_buffer_create(
        b, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, path_memory_props(path),
        path_export_types(vk, path), &v->buffer, &v->memory);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_buffer_create: %s", clmem_error_message());
}

static cl_uint base_align_bytes(cl_device_id d)
{
    cl_uint bits = 0;
    clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    return bits / 8 ? bits / 8 : 1;
}

static void CL_CALLBACK note_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    atomic_store((atomic_int *)user, 1);
}

/* A helper thread that opens a user event after GATE_DELAY_MS. */
struct gate {
    cl_event event;
    atomic_llong opened_ns;
    pthread_t thread;
    cl_int err;
};

static void *open_gate(void *arg)
{
    struct gate *g = arg;
    usleep(GATE_DELAY_MS * 1000);
    atomic_store(&g->opened_ns, tap_now_ns());
    g->err = clSetUserEventStatus(g->event, CL_COMPLETE);
    return NULL;
}

static void gate_open_later(struct gate *g)
{
    atomic_init(&g->opened_ns, 0);
    g->err = CL_SUCCESS;
    if (pthread_create(&g->thread, NULL, open_gate, g) != 0)
        tap_bail("pthread_create failed");
}

/* ------------------------------------------ finish and NULL keepalives */

/* An import without a keepalive, acquired, with the queue held behind a
 * user event and the memory left acquired when the last handle goes:
 * finish waits for it like for any other, and after CLMEM_OK its cl_mem is
 * destroyed, so the caller may free the memory. */
static void check_finish_null_keepalive(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f,
                                        clmem_bridge_path path)
{
    struct vk_buf v;
    struct gate g;
    clmem_handle *h = NULL;
    atomic_int destroyed;
    cl_int err = CL_SUCCESS;
    clmem_status s, s0;

    atomic_init(&destroyed, 0);
    vk_buf_make(&v, b, vk, 64 * KiB, path);
    g.event = clCreateUserEvent(f->context, &err);
    s = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, NULL, f->queue, CL_MEM_READ_WRITE, &h);
    if (!tap_ok(s == CLMEM_OK && err == CL_SUCCESS, "finish: an import with a NULL keepalive (%s; user event %d)",
                s ? clmem_error_message() : "ok", err))
        tap_bail("cannot go on without the import");
    clSetMemObjectDestructorCallback(clmem_handle_mem(h), note_destroyed, &destroyed);
    s = clmem_bridge_acquire(b, h, 0, NULL, NULL);
    err = clEnqueueMarkerWithWaitList(f->queue, 1, &g.event, NULL); /* the queue waits for the gate */
    clFlush(f->queue);
    clmem_handle_unref(h); /* the last handle, left acquired, with the queue held */
    s0 = clmem_bridge_finish(b, 0);
    tap_ok(s == CLMEM_OK && err == CL_SUCCESS && s0 == CLMEM_ERR_TIMEOUT && atomic_load(&destroyed) == 0,
           "finish: with the queue held, finish(0) -> CLMEM_ERR_TIMEOUT for the import without a keepalive, its "
           "cl_mem alive (%s)",
           clmem_status_name(s0));
    gate_open_later(&g);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK && atomic_load(&destroyed) == 1 && atomic_load(&g.opened_ns) != 0,
           "finish: once another thread opened the gate, finish -> CLMEM_OK, and the cl_mem of the import without "
           "a keepalive was destroyed before it returned (%s; destroyed %d)",
           s ? clmem_error_message() : "ok", atomic_load(&destroyed));
    pthread_join(g.thread, NULL);
    clReleaseEvent(g.event);
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory); /* safe now: what the rule promises */
}

/* ------------------------------------------------- keepalive callbacks */

struct callback_probe {
    atomic_int runs;
    atomic_llong ran_ns;
    pthread_t thread;
    /* what the callback did, and what those calls returned */
    cl_event gate;           /* clGetEventInfo on it */
    cl_int gate_query, gate_status;
    cl_mem own;              /* clReleaseMemObject of it */
    cl_int own_release;
    clmem_handle *other;     /* the last handle of another import of the bridge: clmem_handle_unref */
    clmem_bridge *bridge;    /* clmem_bridge_caps */
    uint32_t caps;
};

static void probe_callback(void *user)
{
    struct callback_probe *p = user;

    p->thread = pthread_self();
    p->gate_query = clGetEventInfo(p->gate, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof p->gate_status,
                                   &p->gate_status, NULL);
    p->own_release = clReleaseMemObject(p->own);
    clmem_handle_unref(p->other); /* takes the cache's and the bridge's locks */
    p->caps = clmem_bridge_caps(p->bridge);
    atomic_store(&p->ran_ns, tap_now_ns());
    atomic_fetch_add(&p->runs, 1);
}

static void count_run(void *user) { atomic_fetch_add((atomic_int *)user, 1); }

static void check_keepalive_callback(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_buf v, w;
    struct gate g;
    struct callback_probe p;
    clmem_keepalive *ka, *other_ka;
    clmem_handle *h = NULL;
    atomic_int other_runs;
    cl_int err = CL_SUCCESS, err2 = CL_SUCCESS;
    pthread_t self = pthread_self();
    clmem_status s, s2;

    memset(&p, 0, sizeof p);
    atomic_init(&p.runs, 0);
    atomic_init(&p.ran_ns, 0);
    atomic_init(&other_runs, 0);
    vk_buf_make(&v, b, vk, 64 * KiB, path);
    vk_buf_make(&w, b, vk, 64 * KiB, path);
    g.event = clCreateUserEvent(f->context, &err);
    p.gate = g.event;
    p.own = clCreateBuffer(f->context, CL_MEM_READ_WRITE, 4096, NULL, &err2);
    p.bridge = b;
    ka = clmem_keepalive_new(probe_callback, &p);
    other_ka = clmem_keepalive_new(count_run, &other_runs);
    s = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, ka, f->queue, CL_MEM_READ_WRITE, &h);
    s2 = clmem_bridge_import_vk(b, &w.memory, 0, 64 * KiB, path, other_ka, f->queue, CL_MEM_READ_WRITE, &p.other);
    clmem_keepalive_unref(ka);
    clmem_keepalive_unref(other_ka);
    if (!tap_ok(s == CLMEM_OK && s2 == CLMEM_OK && err == CL_SUCCESS && err2 == CL_SUCCESS && ka && other_ka,
                "callback: two imports, one whose keepalive's callback calls OpenCL and the library (%s)",
                s ? clmem_error_message() : s2 ? clmem_error_message() : "ok"))
        tap_bail("cannot go on without the imports");
    err = clEnqueueMarkerWithWaitList(f->queue, 1, &g.event, NULL);
    clFlush(f->queue);
    clmem_handle_unref(h); /* the last handle, with the queue held: the teardown must wait */
    tap_ok(err == CL_SUCCESS && atomic_load(&p.runs) == 0,
           "callback: not run inside the last unref while the queue's work is pending (runs %d)",
           atomic_load(&p.runs));
    gate_open_later(&g);
    /* finish refuses while the other import has its handle (which the
     * callback drops): the teardown runs on the driver's callbacks. */
    for (long long t0 = tap_now_ns(); atomic_load(&p.runs) == 0 &&
                                      tap_ms_between(t0, tap_now_ns()) < tap_time_bound_ms(10000.0, 120000.0);)
        usleep(1000);
    s = bridge_settle(b);
    pthread_join(g.thread, NULL);
    tap_ok(s == CLMEM_OK && atomic_load(&p.runs) == 1 && atomic_load(&p.ran_ns) >= atomic_load(&g.opened_ns),
           "callback: run exactly once, after the gate opened, without finish; finish then -> CLMEM_OK (%s; runs %d)",
           s ? clmem_error_message() : "ok", atomic_load(&p.runs));
    tap_diag("callback: it ran on %s", pthread_equal(p.thread, self)       ? "the thread in clmem_bridge_finish"
                                       : pthread_equal(p.thread, g.thread) ? "the thread that opened the gate"
                                                                           : "another thread (the driver's)");
    tap_ok(p.gate_query == CL_SUCCESS && p.gate_status == CL_COMPLETE && p.own_release == CL_SUCCESS &&
               p.caps == clmem_bridge_caps(b),
           "callback: clGetEventInfo (%d, status %d), clReleaseMemObject (%d) and clmem_bridge_caps worked in it",
           p.gate_query, p.gate_status, p.own_release);
    tap_ok(atomic_load(&other_runs) == 1,
           "callback: the last unref of another import's handle in it (cache and bridge locks) completed that "
           "import's teardown too (its keepalive ran %d time(s)), no deadlock",
           atomic_load(&other_runs));
    clReleaseEvent(g.event);
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
    clmem_bridge_vk_buffer_destroy(b, w.buffer, &w.memory);
}

/* ------------------------------------- the last unref before finish */

/* clmem_bridge_unref(): dropping the caller's last reference while an
 * import's teardown waits for a held queue is safe. The bridge stays
 * (it keeps its reference on the cl_context), the teardown completes once
 * another thread opened the gate, the keepalive runs once, and then the
 * bridge goes and lets go of the context. Only finish could have said
 * when: here the keepalive's callback says it. */
static void check_unref_before_finish(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_buf v;
    struct gate g;
    clmem_bridge *b2;
    clmem_keepalive *ka;
    clmem_handle *h = NULL;
    atomic_int runs;
    cl_int err = CL_SUCCESS;
    cl_uint refs_before, refs_with, refs_pending, refs_after;
    clmem_status s;

    atomic_init(&runs, 0);
    g.event = clCreateUserEvent(f->context, &err); /* it holds a context reference of its own */
    refs_before = cl_context_refcount(f->context);
    b2 = bridge_open(vk, f, 0);
    refs_with = cl_context_refcount(f->context);
    vk_buf_make(&v, b2, vk, 64 * KiB, path);
    ka = clmem_keepalive_new(count_run, &runs);
    s = clmem_bridge_import_vk(b2, &v.memory, 0, 64 * KiB, path, ka, f->queue, CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK && err == CL_SUCCESS && refs_with > refs_before,
                "unref before finish: a second bridge (context references %u -> %u) and an import (%s)",
                refs_before, refs_with, s ? clmem_error_message() : "ok"))
        tap_bail("cannot go on without the import");
    err = clEnqueueMarkerWithWaitList(f->queue, 1, &g.event, NULL); /* the queue waits for the gate */
    clFlush(f->queue);
    clmem_handle_unref(h);   /* the last handle: its teardown waits for the gate */
    clmem_bridge_unref(b2); /* the caller's last reference, without finish */
    refs_pending = cl_context_refcount(f->context);
    tap_ok(err == CL_SUCCESS && atomic_load(&runs) == 0 && refs_pending >= refs_with,
           "unref before finish: with the teardown pending, the bridge stays (context references %u, %u with it) "
           "and the keepalive has not run (%d)",
           refs_pending, refs_with, atomic_load(&runs));
    gate_open_later(&g);
    long long t0 = tap_now_ns();
    do {
        usleep(1000);
        refs_after = cl_context_refcount(f->context);
    } while ((atomic_load(&runs) == 0 || refs_after != refs_before) &&
             tap_ms_between(t0, tap_now_ns()) < tap_time_bound_ms(10000.0, 120000.0));
    pthread_join(g.thread, NULL);
    tap_ok(atomic_load(&runs) == 1 && refs_after == refs_before,
           "unref before finish: once another thread opened the gate the teardown completed on its own, the "
           "keepalive ran once (%d) and the bridge let go of the cl_context (references %u, %u before it)",
           atomic_load(&runs), refs_after, refs_before);
    clReleaseEvent(g.event);
    if (atomic_load(&runs) == 1)
        clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory); /* its keepalive ran: nothing uses it */
}

/* ------------------------------------------- the import cache, aliases */

/* A cache hit's keepalive: held by the import (never dropped while a
 * handle lives), dropped at its teardown, once; passing the anchor the
 * import holds again changes nothing. */
static void check_cache_hit_keepalive(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f,
                                      clmem_bridge_path path)
{
    struct vk_buf v;
    atomic_int runs_a, runs_b;
    clmem_keepalive *ka_a, *ka_b;
    clmem_handle *h1 = NULL, *h2 = NULL, *h3 = NULL;
    clmem_status s1, s2, s3, s;

    atomic_init(&runs_a, 0);
    atomic_init(&runs_b, 0);
    vk_buf_make(&v, b, vk, 64 * KiB, path);
    ka_a = clmem_keepalive_new(count_run, &runs_a);
    ka_b = clmem_keepalive_new(count_run, &runs_b);
    s1 = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, ka_a, f->queue, CL_MEM_READ_WRITE, &h1);
    s2 = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, ka_b, f->queue, CL_MEM_READ_WRITE, &h2);
    s3 = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, ka_a, f->queue, CL_MEM_READ_WRITE, &h3);
    clmem_keepalive_unref(ka_a);
    clmem_keepalive_unref(ka_b);
    if (!tap_ok(s1 == CLMEM_OK && s2 == CLMEM_OK && s3 == CLMEM_OK && clmem_handle_mem(h2) == clmem_handle_mem(h1) &&
                    clmem_handle_mem(h3) == clmem_handle_mem(h1) &&
                    clmem_handle_keepalive(h2) == clmem_handle_keepalive(h1),
                "cache: a re-import with another keepalive, and one with the first again, are hits (one cl_mem, "
                "one anchor) (%s)",
                s1 || s2 || s3 ? clmem_error_message() : "ok"))
        tap_bail("cannot go on without the imports");
    clmem_handle_unref(h1);
    clmem_handle_unref(h2);
    tap_ok(atomic_load(&runs_a) == 0 && atomic_load(&runs_b) == 0,
           "cache: with one handle left, neither keepalive is dropped (runs %d, %d): a hit's is held, not replaced",
           atomic_load(&runs_a), atomic_load(&runs_b));
    clmem_handle_unref(h3);
    s = bridge_settle(b);
    /* Held once or twice is not visible from outside; what is: each is
     * dropped, and its callback run, exactly once at the teardown. */
    tap_ok(s == CLMEM_OK && atomic_load(&runs_a) == 1 && atomic_load(&runs_b) == 1,
           "cache: at the teardown each keepalive is dropped, its callback run once (runs %d, %d; %s)",
           atomic_load(&runs_a), atomic_load(&runs_b), s ? clmem_error_message() : "ok");
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

/* A pitched plane handle of a range and a plain import of the same range:
 * different keys, so two imports aliasing the same bytes, each with its
 * own acquire state; a plain re-import is a hit on the plain one. */
static void check_aliases(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    const uint32_t width = 64, height = 64, pitch = 256;
    const VkDeviceSize range = (VkDeviceSize)pitch * height;
    struct vk_buf v;
    clmem_bridge_vk_image img;
    clmem_handle *plain = NULL, *again = NULL, *pitched = NULL;
    clmem_handle *both[2];
    uint32_t pattern[64], seen[64];
    cl_int werr, rerr;
    clmem_status s1, s2, s3, a1, a2, a3, r;

    vk_buf_make(&v, b, vk, 64 * KiB, path);
    memset(&img, 0, sizeof img);
    img.memory = v.memory;
    img.size = range;
    img.format = VK_FORMAT_R8_UNORM;
    img.extent = (VkExtent2D){width, height};
    img.tiling = VK_IMAGE_TILING_LINEAR;
    img.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    img.plane_count = 1;
    img.planes[0] = (clmem_bridge_vk_image_plane){0, range, pitch, width, height};
    s1 = clmem_bridge_import_vk(b, &v.memory, 0, range, path, NULL, f->queue, CL_MEM_READ_WRITE, &plain);
    s2 = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, f->queue, CL_MEM_READ_WRITE, 0, &pitched);
    s3 = clmem_bridge_import_vk(b, &v.memory, 0, range, path, NULL, f->queue, CL_MEM_READ_WRITE, &again);
    if (!tap_ok(s1 == CLMEM_OK && s2 == CLMEM_OK && s3 == CLMEM_OK && clmem_handle_row_pitch(pitched) == pitch &&
                    clmem_handle_mem(pitched) != clmem_handle_mem(plain) &&
                    clmem_handle_keepalive(pitched) != clmem_handle_keepalive(plain) &&
                    clmem_handle_mem(again) == clmem_handle_mem(plain),
                "aliases: a pitched plane handle of a range is another import than the plain one (the row pitch is "
                "in the key); a plain re-import is a hit on the plain one (%s)",
                s1 || s2 || s3 ? clmem_error_message() : "ok"))
        tap_bail("cannot go on without the imports");
    a1 = clmem_bridge_acquire(b, plain, 0, NULL, NULL);
    a2 = clmem_bridge_acquire(b, pitched, 0, NULL, NULL);
    a3 = clmem_bridge_acquire(b, again, 0, NULL, NULL);
    tap_ok(a1 == CLMEM_OK && a2 == CLMEM_OK && a3 == CLMEM_ERR_INVALID_VALUE,
           "aliases: acquiring the pitched alias while the plain one is acquired works (its own state); the plain "
           "import's cache hit shares the plain state (already acquired -> %s)",
           clmem_status_name(a3));
    for (unsigned i = 0; i < 64; i++)
        pattern[i] = 0x5a000000u + i;
    memset(seen, 0, sizeof seen);
    werr = clEnqueueWriteBuffer(f->queue, clmem_handle_mem(plain), CL_FALSE, 0, sizeof pattern, pattern, 0, NULL,
                                NULL);
    rerr = clEnqueueReadBuffer(f->queue, clmem_handle_mem(pitched), CL_TRUE, 0, sizeof seen, seen, 0, NULL, NULL);
    tap_ok(werr == CL_SUCCESS && rerr == CL_SUCCESS && memcmp(pattern, seen, sizeof seen) == 0,
           "aliases: bytes written through one, on one in-order queue, are read through the other (write %d, read %d)",
           werr, rerr);
    both[0] = plain; /* an array of handles, passed without a cast */
    both[1] = pitched;
    r = clmem_bridge_release_many(b, 2, both, f->queue, 0, NULL, NULL);
    a1 = r == CLMEM_OK ? clmem_bridge_acquire_many(b, 2, both, f->queue, 0, NULL, NULL) : r;
    a2 = a1 == CLMEM_OK ? clmem_bridge_release_many(b, 2, both, f->queue, 0, NULL, NULL) : a1;
    tap_ok(r == CLMEM_OK && a1 == CLMEM_OK && a2 == CLMEM_OK,
           "aliases: the two are two entries of one release_many, acquire_many and release_many (%s)",
           r || a1 || a2 ? clmem_error_message() : "ok");
    clFinish(f->queue);
    clmem_handle_unref(plain);
    clmem_handle_unref(again);
    clmem_handle_unref(pitched);
    if (bridge_settle(b) != CLMEM_OK)
        tap_diag("aliases: finish: %s", clmem_error_message());
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

/* --------------------------------------------------- which error wins */

static void expect2(clmem_status got, clmem_status want, const void *out, const char *what)
{
    tap_ok(got == want && out == NULL, "error order: %s -> %s%s%s", what, clmem_status_name(want),
           got == want ? "" : " | got: ", got == want ? "" : clmem_error_message());
}

static void check_error_order(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, struct cl_fixture *other,
                              clmem_bridge_path path)
{
    const cl_uint align = base_align_bytes(f->device);
    struct vk_buf v;
    clmem_bridge_vk_memory foreign;
    clmem_bridge_vk_image img;
    clmem_handle *h = NULL;
    clmem_status s;

    vk_buf_make(&v, b, vk, 64 * KiB, path);
    foreign = v.memory;
    foreign.device = (VkDevice)(uintptr_t)0x10; /* another VkDevice: compared, never called */

    /* Step 3 before step 4: a format with no optimal tiling on this bridge,
     * with another context's queue (docs/bad-input.md, row 65). */
    s = clmem_bridge_image_live_check(b, VK_FORMAT_R8_UNORM, CLMEM_BRIDGE_PATH_BEST, vk->queue, vk->queue_family,
                                      other->queue);
    tap_ok(s == CLMEM_ERR_CONTEXT_MISMATCH,
           "error order: live_check of R8 with another context's queue -> CLMEM_ERR_CONTEXT_MISMATCH, whatever the "
           "bridge offers (%s)",
           clmem_error_message());
    /* Step 2 before step 3. */
    s = clmem_bridge_image_live_check(b, VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, CLMEM_BRIDGE_PATH_BEST, vk->queue,
                                      vk->queue_family, other->queue);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && strstr(clmem_error_message(), "no optimal-tiling import"),
           "error order: live_check of NV12 (no optimal tiling in the format table) with another context's queue "
           "-> CLMEM_ERR_UNSUPPORTED from the table (%s)",
           clmem_error_message());
    s = clmem_bridge_image_live_check(b, VK_FORMAT_R8_UNORM, (clmem_bridge_path)77, vk->queue, vk->queue_family,
                                      other->queue);
    tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "error order: live_check with an unknown path and another context's "
                                           "queue -> CLMEM_ERR_INVALID_VALUE");

    s = clmem_bridge_import_vk(b, &v.memory, 0, 0, path, NULL, other->queue, CL_MEM_READ_WRITE, &h);
    expect2(s, CLMEM_ERR_ZERO_SIZE, h, "import_vk of size 0 on another context's queue");
    s = clmem_bridge_import_vk(b, &v.memory, 0, 4096, (clmem_bridge_path)77, NULL, other->queue, CL_MEM_READ_WRITE,
                               &h);
    expect2(s, CLMEM_ERR_INVALID_VALUE, h, "import_vk with an unknown path on another context's queue");
    s = clmem_bridge_import_vk(b, &v.memory, 0, 4096, path, NULL, other->queue, CL_MEM_USE_HOST_PTR, &h);
    expect2(s, CLMEM_ERR_INVALID_VALUE, h, "import_vk with a host-pointer flag on another context's queue");
    s = clmem_bridge_import_vk(b, &foreign, 0, 128 * KiB, path, NULL, f->queue, CL_MEM_READ_WRITE, &h);
    expect2(s, CLMEM_ERR_INVALID_VALUE, h, "import_vk of another VkDevice's memory with a range past the end");
    if (align > 1) {
        s = clmem_bridge_import_vk(b, &v.memory, 1, 4096, path, NULL, other->queue, CL_MEM_READ_WRITE, &h);
        expect2(s, CLMEM_ERR_CONTEXT_MISMATCH, h, "import_vk at a misaligned offset on another context's queue");
    } else {
        tap_skip("CL_DEVICE_MEM_BASE_ADDR_ALIGN is 1 byte here", "error order: a misaligned offset");
    }

    memset(&img, 0, sizeof img);
    img.memory = v.memory;
    img.size = 16 * KiB;
    img.format = VK_FORMAT_R8_UNORM;
    img.extent = (VkExtent2D){64, 64};
    img.tiling = VK_IMAGE_TILING_LINEAR;
    img.plane_count = 1;
    img.planes[0] = (clmem_bridge_vk_image_plane){align > 1 ? 1 : 0, 8 * KiB, 64, 64, 64};
    img.memory.device = foreign.device;
    if (align > 1) {
        s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, f->queue, CL_MEM_READ_WRITE, 0, &h);
        expect2(s, CLMEM_ERR_DEVICE_MISMATCH, h, "import_vk_image of a misaligned plane of another VkDevice's memory");
        img.memory.device = v.memory.device;
        s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, other->queue, CL_MEM_READ_WRITE, 0, &h);
        expect2(s, CLMEM_ERR_CONTEXT_MISMATCH, h, "import_vk_image of a misaligned plane on another context's queue");
    } else {
        tap_skip("CL_DEVICE_MEM_BASE_ADDR_ALIGN is 1 byte here", "error order: a misaligned plane, another device");
        tap_skip("CL_DEVICE_MEM_BASE_ADDR_ALIGN is 1 byte here", "error order: a misaligned plane, another queue");
    }
    img.memory.device = v.memory.device;
    img.tiling = VK_IMAGE_TILING_OPTIMAL;
    img.memory_offset = 4;
    memset(img.planes, 0, sizeof img.planes);
    s = clmem_bridge_import_vk_image(b, &img, 0, CLMEM_BRIDGE_PATH_HOST_MAPPED, NULL, other->queue, CL_MEM_READ_WRITE,
                                     CLMEM_BRIDGE_IMAGE_AS_IMAGE, &h);
    expect2(s, CLMEM_ERR_INVALID_VALUE, h,
            "import_vk_image of an optimal image bound at offset 4, host-mapped, on another context's queue");
    img.memory_offset = 0;
    s = clmem_bridge_import_vk_image(b, &img, 0, CLMEM_BRIDGE_PATH_HOST_MAPPED, NULL, other->queue, CL_MEM_READ_WRITE,
                                     CLMEM_BRIDGE_IMAGE_AS_IMAGE, &h);
    expect2(s, CLMEM_ERR_CONTEXT_MISMATCH, h,
            "import_vk_image of an optimal image on the host-mapped path on another context's queue");
    img.format = (VkFormat)12345;
    s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, NULL, CL_MEM_READ_WRITE, 0, &h);
    expect2(s, CLMEM_ERR_NULL_POINTER, h, "import_vk_image of an unknown format with a NULL queue");
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

/* ------------------------------------------------------ NULL arguments */

static void null_is(clmem_status got, const char *call)
{
    tap_ok(got == CLMEM_ERR_NULL_POINTER, "NULL: %s -> CLMEM_ERR_NULL_POINTER%s%s", call,
           got == CLMEM_ERR_NULL_POINTER ? "" : " | got: ",
           got == CLMEM_ERR_NULL_POINTER ? "" : clmem_status_name(got));
}

static void check_null_arguments(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_buf v;
    clmem_bridge_vk_memory mem_out;
    clmem_bridge_vk_image img_out;
    clmem_bridge_info info = {.size = sizeof info,
                              .instance = vk->instance,
                              .physical_device = vk->physical_device,
                              .device = vk->device,
                              .context = f->context};
    clmem_bridge_ring_info ring_info = {.size = sizeof ring_info};
    clmem_bridge_ring_frame frame;
    clmem_bridge_ring_batch batch;
    clmem_bridge_path got_path;
    clmem_bridge *made = NULL;
    clmem_bridge_semaphore *sem = NULL;
    clmem_bridge_ring *ring = NULL;
    clmem_handle *h = NULL, *out = NULL, *list[1];
    cl_event ev = NULL;
    VkBuffer buf;
    VkSemaphore waits[1];
    uint32_t count;
    clmem_status s;

    vk_buf_make(&v, b, vk, 64 * KiB, path);
    s = clmem_bridge_import_vk(b, &v.memory, 0, 64 * KiB, path, NULL, f->queue, CL_MEM_READ_WRITE, &h);
    if (s != CLMEM_OK)
        tap_bail("import: %s", clmem_error_message());
    list[0] = h;

    /* clmem.h */
    null_is(clmem_handle_wrap(NULL, f->queue, 0, NULL, &out), "clmem_handle_wrap(mem NULL)");
    null_is(clmem_handle_wrap(clmem_handle_mem(h), NULL, 0, NULL, &out), "clmem_handle_wrap(queue NULL)");
    null_is(clmem_handle_wrap(clmem_handle_mem(h), f->queue, 0, NULL, NULL), "clmem_handle_wrap(out NULL)");
    null_is(clmem_handle_wrap_checked(NULL, f->queue, 0, NULL, &out), "clmem_handle_wrap_checked(mem NULL)");
    null_is(clmem_handle_wrap_checked(clmem_handle_mem(h), NULL, 0, NULL, &out),
            "clmem_handle_wrap_checked(queue NULL)");
    null_is(clmem_handle_wrap_checked(clmem_handle_mem(h), f->queue, 0, NULL, NULL),
            "clmem_handle_wrap_checked(out NULL)");

    /* the bridge object */
    null_is(clmem_bridge_pair(NULL, NULL, vk->physical_device, NULL, NULL), "clmem_bridge_pair(instance NULL)");
    null_is(clmem_bridge_pair(vk->instance, NULL, NULL, NULL, NULL), "clmem_bridge_pair(physical_device NULL)");
    null_is(clmem_bridge_create(NULL, &made), "clmem_bridge_create(info NULL)");
    null_is(clmem_bridge_create(&info, NULL), "clmem_bridge_create(out NULL)");
    null_is(clmem_bridge_finish(NULL, 0), "clmem_bridge_finish(NULL)");
    null_is(clmem_bridge_check_path(NULL, CLMEM_BRIDGE_PATH_HOST_MAPPED), "clmem_bridge_check_path(NULL)");
    null_is(clmem_bridge_check_semaphore(NULL, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED),
            "clmem_bridge_check_semaphore(NULL)");
    null_is(clmem_bridge_vk_buffer_create(NULL, 4096, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0, 0, &buf, &mem_out),
            "clmem_bridge_vk_buffer_create(bridge NULL)");
    null_is(clmem_bridge_vk_buffer_create(b, 4096, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0, 0, NULL, &mem_out),
            "clmem_bridge_vk_buffer_create(buffer_out NULL)");
    null_is(clmem_bridge_vk_buffer_create(b, 4096, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 0, 0, &buf, NULL),
            "clmem_bridge_vk_buffer_create(memory_out NULL)");

    /* imports and handles */
    null_is(clmem_bridge_import_vk(NULL, &v.memory, 0, 4096, path, NULL, f->queue, 0, &out),
            "clmem_bridge_import_vk(bridge NULL)");
    null_is(clmem_bridge_import_vk(b, NULL, 0, 4096, path, NULL, f->queue, 0, &out),
            "clmem_bridge_import_vk(memory NULL)");
    null_is(clmem_bridge_import_vk(b, &v.memory, 0, 4096, path, NULL, NULL, 0, &out),
            "clmem_bridge_import_vk(queue NULL)");
    null_is(clmem_bridge_import_vk(b, &v.memory, 0, 4096, path, NULL, f->queue, 0, NULL),
            "clmem_bridge_import_vk(out NULL)");
    null_is(clmem_bridge_import_fd(NULL, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, NULL, f->queue, 0, &out),
            "clmem_bridge_import_fd(bridge NULL)");
    null_is(clmem_bridge_import_fd(b, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, NULL, NULL, 0, &out),
            "clmem_bridge_import_fd(queue NULL)");
    null_is(clmem_bridge_import_fd(b, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, 4096, 0, 4096, NULL, f->queue, 0, NULL),
            "clmem_bridge_import_fd(out NULL)");
    null_is(clmem_bridge_handle_for_queue(NULL, f->queue, &out), "clmem_bridge_handle_for_queue(handle NULL)");
    null_is(clmem_bridge_handle_for_queue(h, NULL, &out), "clmem_bridge_handle_for_queue(queue NULL)");
    null_is(clmem_bridge_handle_for_queue(h, f->queue, NULL), "clmem_bridge_handle_for_queue(out NULL)");
    null_is(clmem_bridge_handle_path(NULL, &got_path), "clmem_bridge_handle_path(handle NULL)");
    null_is(clmem_bridge_handle_path(h, NULL), "clmem_bridge_handle_path(path_out NULL)");

    /* images */
    null_is(clmem_bridge_vk_image_create(NULL, VK_FORMAT_R8_UNORM, (VkExtent2D){16, 16}, VK_IMAGE_TILING_LINEAR,
                                         VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0, 0, &img_out),
            "clmem_bridge_vk_image_create(bridge NULL)");
    null_is(clmem_bridge_vk_image_create(b, VK_FORMAT_R8_UNORM, (VkExtent2D){16, 16}, VK_IMAGE_TILING_LINEAR,
                                         VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0, 0, NULL),
            "clmem_bridge_vk_image_create(image_out NULL)");
    null_is(clmem_bridge_import_vk_image(NULL, &img_out, 0, path, NULL, f->queue, 0, 0, &out),
            "clmem_bridge_import_vk_image(bridge NULL)");
    null_is(clmem_bridge_import_vk_image(b, NULL, 0, path, NULL, f->queue, 0, 0, &out),
            "clmem_bridge_import_vk_image(image NULL)");
    null_is(clmem_bridge_import_vk_image(b, &img_out, 0, path, NULL, NULL, 0, 0, &out),
            "clmem_bridge_import_vk_image(queue NULL)");
    null_is(clmem_bridge_import_vk_image(b, &img_out, 0, path, NULL, f->queue, 0, 0, NULL),
            "clmem_bridge_import_vk_image(out NULL)");
    null_is(clmem_bridge_check_image(NULL, VK_FORMAT_R8_UNORM, VK_IMAGE_TILING_LINEAR, CLMEM_BRIDGE_PATH_HOST_MAPPED,
                                     0, 0),
            "clmem_bridge_check_image(bridge NULL)");
    null_is(clmem_bridge_image_live_check(NULL, VK_FORMAT_R8_UNORM, CLMEM_BRIDGE_PATH_BEST, vk->queue,
                                          vk->queue_family, f->queue),
            "clmem_bridge_image_live_check(bridge NULL)");
    null_is(clmem_bridge_image_live_check(b, VK_FORMAT_R8_UNORM, CLMEM_BRIDGE_PATH_BEST, VK_NULL_HANDLE,
                                          vk->queue_family, f->queue),
            "clmem_bridge_image_live_check(vk_queue NULL)");
    null_is(clmem_bridge_image_live_check(b, VK_FORMAT_R8_UNORM, CLMEM_BRIDGE_PATH_BEST, vk->queue, vk->queue_family,
                                          NULL),
            "clmem_bridge_image_live_check(queue NULL)");

    /* handoff */
    null_is(clmem_bridge_acquire(NULL, h, 0, NULL, NULL), "clmem_bridge_acquire(bridge NULL)");
    null_is(clmem_bridge_acquire(b, NULL, 0, NULL, NULL), "clmem_bridge_acquire(handle NULL)");
    null_is(clmem_bridge_release(NULL, h, 0, NULL, NULL), "clmem_bridge_release(bridge NULL)");
    null_is(clmem_bridge_release(b, NULL, 0, NULL, NULL), "clmem_bridge_release(handle NULL)");
    null_is(clmem_bridge_acquire_many(NULL, 1, list, f->queue, 0, NULL, &ev), "clmem_bridge_acquire_many(bridge NULL)");
    null_is(clmem_bridge_acquire_many(b, 1, NULL, f->queue, 0, NULL, &ev), "clmem_bridge_acquire_many(handles NULL)");
    null_is(clmem_bridge_acquire_many(b, 1, list, NULL, 0, NULL, &ev), "clmem_bridge_acquire_many(queue NULL)");
    null_is(clmem_bridge_release_many(NULL, 1, list, f->queue, 0, NULL, &ev), "clmem_bridge_release_many(bridge NULL)");
    null_is(clmem_bridge_release_many(b, 1, NULL, f->queue, 0, NULL, &ev), "clmem_bridge_release_many(handles NULL)");
    null_is(clmem_bridge_release_many(b, 1, list, NULL, 0, NULL, &ev), "clmem_bridge_release_many(queue NULL)");

    /* semaphores */
    null_is(clmem_bridge_semaphore_import(NULL, vk->queue, (VkSemaphore)(uintptr_t)0x10,
                                          CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, NULL, &sem),
            "clmem_bridge_semaphore_import(bridge NULL)");
    null_is(clmem_bridge_semaphore_import(b, vk->queue, VK_NULL_HANDLE, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, NULL,
                                          &sem),
            "clmem_bridge_semaphore_import(semaphore NULL)");
    null_is(clmem_bridge_semaphore_import(b, vk->queue, (VkSemaphore)(uintptr_t)0x10,
                                          CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, NULL, NULL),
            "clmem_bridge_semaphore_import(out NULL)");
    null_is(clmem_bridge_semaphore_wait(NULL, NULL, f->queue, 0, NULL, NULL),
            "clmem_bridge_semaphore_wait(bridge NULL)");
    null_is(clmem_bridge_semaphore_wait(b, NULL, f->queue, 0, NULL, NULL), "clmem_bridge_semaphore_wait(sem NULL)");
    null_is(clmem_bridge_semaphore_signal(NULL, NULL, f->queue, 0, NULL, NULL),
            "clmem_bridge_semaphore_signal(bridge NULL)");
    null_is(clmem_bridge_semaphore_signal(b, NULL, f->queue, 0, NULL, NULL), "clmem_bridge_semaphore_signal(sem NULL)");

    /* the ring */
    null_is(clmem_bridge_ring_create(NULL, &ring_info, &ring), "clmem_bridge_ring_create(bridge NULL)");
    null_is(clmem_bridge_ring_create(b, NULL, &ring), "clmem_bridge_ring_create(info NULL)");
    null_is(clmem_bridge_ring_create(b, &ring_info, NULL), "clmem_bridge_ring_create(out NULL)");
    null_is(clmem_bridge_ring_create(b, &ring_info, &ring), "clmem_bridge_ring_create(info->frames NULL)");
    null_is(clmem_bridge_ring_vk_next(NULL, 0, 0, &frame), "clmem_bridge_ring_vk_next(ring NULL)");
    null_is(clmem_bridge_ring_vk_submitted(NULL, &frame), "clmem_bridge_ring_vk_submitted(ring NULL)");
    null_is(clmem_bridge_ring_vk_drain(NULL, 0, 1, waits, &count), "clmem_bridge_ring_vk_drain(ring NULL)");
    null_is(clmem_bridge_ring_cl_next(NULL, 0, 0, NULL, &batch, NULL), "clmem_bridge_ring_cl_next(ring NULL)");
    null_is(clmem_bridge_ring_cl_done(NULL, &batch, 0, NULL, NULL), "clmem_bridge_ring_cl_done(ring NULL)");

    tap_ok(out == NULL && made == NULL && sem == NULL && ring == NULL && ev == NULL,
           "NULL: no call above made anything");
    clmem_handle_unref(h);
    if (bridge_settle(b) != CLMEM_OK)
        tap_diag("NULL: finish: %s", clmem_error_message());
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

/* --------------------------------------------------- versioned structs */

static void check_versioned(struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b)
{
    struct {
        clmem_bridge_info info;
        uint64_t newer[2]; /* what a newer header could add */
    } big;
    struct {
        clmem_bridge_ring_info info;
        uint64_t newer[2];
    } big_ring;
    clmem_bridge *made = NULL;
    clmem_bridge_ring *ring = NULL;
    clmem_status s;

    memset(&big, 0, sizeof big);
    big.info.size = sizeof big;
    big.info.instance = vk->instance;
    big.info.physical_device = vk->physical_device;
    big.info.device = vk->device;
    big.info.get_instance_proc_addr = vk->get_instance_proc_addr;
    big.info.context = f->context;
    s = clmem_bridge_create(&big.info, &made);
    tap_ok(s == CLMEM_OK && made, "versioned: bridge_create with size %zu (a newer header's), zero past sizeof %zu "
                                  "-> CLMEM_OK (%s)",
           sizeof big, sizeof big.info, s ? clmem_error_message() : "ok");
    clmem_bridge_unref(made);
    made = NULL;
    big.newer[1] = 1;
    s = clmem_bridge_create(&big.info, &made);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && !made && strstr(clmem_error_message(), "does not know"),
           "versioned: bridge_create with a non-zero byte past sizeof -> CLMEM_ERR_UNSUPPORTED, naming it (%s)",
           clmem_error_message());
    big.info.size = 5000;
    s = clmem_bridge_create(&big.info, &made);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && !made, "versioned: bridge_create with size 5000 -> CLMEM_ERR_INVALID_VALUE "
                                                   "(%s)",
           clmem_error_message());

    memset(&big_ring, 0, sizeof big_ring);
    big_ring.info.size = sizeof big_ring;
    s = clmem_bridge_ring_create(b, &big_ring.info, &ring);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && !ring,
           "versioned: ring_create with a larger size and a zero tail reads on (the NULL frames -> %s)",
           clmem_status_name(s));
    big_ring.newer[0] = 7;
    s = clmem_bridge_ring_create(b, &big_ring.info, &ring);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && !ring,
           "versioned: ring_create with a non-zero byte past sizeof -> CLMEM_ERR_UNSUPPORTED (%s)",
           clmem_error_message());
}

/* ------------------------------------------------- 4:2:0 extents */

static void check_odd_420(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    static const VkFormat formats[] = {VK_FORMAT_G8_B8R8_2PLANE_420_UNORM,
                                       VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16};
    struct vk_buf v;
    clmem_bridge_vk_image img;
    clmem_handle *h = NULL;
    clmem_status s;

    vk_buf_make(&v, b, vk, 64 * KiB, path);
    for (unsigned i = 0; i < 2; i++) {
        const char *name = clmem_bridge_image_format_name(formats[i]);
        s = clmem_bridge_vk_image_create(b, formats[i], (VkExtent2D){33, 16}, VK_IMAGE_TILING_LINEAR,
                                         VK_IMAGE_USAGE_TRANSFER_SRC_BIT, path_memory_props(path), 0, &img);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && img.memory.memory == VK_NULL_HANDLE &&
                   strstr(clmem_error_message(), "must be even") && strstr(clmem_error_message(), "2x2"),
               "4:2:0: vk_image_create of a 33x16 %s -> CLMEM_ERR_INVALID_VALUE saying why (%s)", name,
               clmem_error_message());
        memset(&img, 0, sizeof img);
        img.memory = v.memory;
        img.size = 64 * KiB;
        img.format = formats[i];
        img.extent = (VkExtent2D){32, 15};
        img.tiling = VK_IMAGE_TILING_LINEAR;
        img.plane_count = 2;
        s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, f->queue, CL_MEM_READ_WRITE, 0, &h);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && !h && strstr(clmem_error_message(), "must be even"),
               "4:2:0: import_vk_image of a 32x15 %s -> CLMEM_ERR_INVALID_VALUE saying why (%s)", name,
               clmem_error_message());
    }
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

/* ---------------------------------------- what a consumer reads (clmem.h) */

static void check_consumer_view(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    const VkDeviceSize offset = 16 * KiB > base_align_bytes(f->device) ? 16 * KiB : base_align_bytes(f->device);
    const VkDeviceSize size = 8 * KiB;
    struct vk_buf v;
    clmem_bridge_vk_image img;
    clmem_handle *h = NULL, *plane = NULL;
    uint32_t first = 0, last = 0, texel = 0;
    size_t cl_size = 0;
    cl_int e1, e2;
    clmem_status s, a;

    vk_buf_make(&v, b, vk, offset + 2 * size, path);
    if (vkctx_fill(vk, v.buffer, 0, offset, 0x11111111u) != VK_SUCCESS ||
        vkctx_fill(vk, v.buffer, offset, size, 0x22222222u) != VK_SUCCESS ||
        vkctx_fill(vk, v.buffer, offset + size, size, 0x33333333u) != VK_SUCCESS)
        tap_bail("vkctx_fill failed");
    s = clmem_bridge_import_vk(b, &v.memory, offset, size, path, NULL, f->queue, CL_MEM_READ_ONLY, &h);
    a = s == CLMEM_OK ? clmem_bridge_acquire(b, h, 0, NULL, NULL) : s;
    clGetMemObjectInfo(clmem_handle_mem(h), CL_MEM_SIZE, sizeof cl_size, &cl_size, NULL);
    e1 = clEnqueueReadBuffer(f->queue, clmem_handle_mem(h), CL_TRUE, 0, 4, &first, 0, NULL, NULL);
    e2 = clEnqueueReadBuffer(f->queue, clmem_handle_mem(h), CL_TRUE, size - 4, 4, &last, 0, NULL, NULL);
    tap_ok(a == CLMEM_OK && e1 == CL_SUCCESS && e2 == CL_SUCCESS && cl_size == size && first == 0x22222222u &&
               last == 0x22222222u,
           "consumer: the cl_mem of an import of [%llu, +%llu) is those bytes: size %zu, its byte 0 is byte %llu "
           "(0x%08x ... 0x%08x) (%s)",
           (unsigned long long)offset, (unsigned long long)size, cl_size, (unsigned long long)offset, first, last,
           a ? clmem_error_message() : "ok");
    if (a == CLMEM_OK)
        clmem_bridge_release(b, h, 0, NULL, NULL);
    clFinish(f->queue);
    clmem_handle_unref(h);

    clmem_bridge_image_plane_format(VK_FORMAT_R16_UNORM, 0, NULL, &texel);
    memset(&img, 0, sizeof img);
    img.memory = v.memory;
    img.size = offset + 2 * size;
    img.format = VK_FORMAT_R16_UNORM;
    img.extent = (VkExtent2D){32, 16};
    img.tiling = VK_IMAGE_TILING_LINEAR;
    img.plane_count = 1;
    img.planes[0] = (clmem_bridge_vk_image_plane){offset, size, 129, 32, 16};
    s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, f->queue, CL_MEM_READ_ONLY, 0, &plane);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && !plane,
           "consumer: a plane whose row pitch (129) is not a multiple of its texel size (%u) -> "
           "CLMEM_ERR_INVALID_VALUE (%s)",
           texel, clmem_error_message());
    img.planes[0].row_pitch = 130;
    s = clmem_bridge_import_vk_image(b, &img, 0, path, NULL, f->queue, CL_MEM_READ_ONLY, 0, &plane);
    tap_ok(s == CLMEM_OK && texel == 2 && clmem_handle_row_pitch(plane) == 130 &&
               clmem_handle_row_pitch(plane) % texel == 0,
           "consumer: a plane handle's row pitch is a multiple of its texel size (%u %% %u) (%s)",
           clmem_handle_row_pitch(plane), texel, s ? clmem_error_message() : "ok");
    clmem_handle_unref(plane);
    if (bridge_settle(b) != CLMEM_OK)
        tap_diag("consumer: finish: %s", clmem_error_message());
    clmem_bridge_vk_buffer_destroy(b, v.buffer, &v.memory);
}

int main(void)
{
    struct bridge_test t;
    struct cl_fixture other;

    bridge_test_open(&t, "bridge-rules", 300);
    cl_fixture_open_on(&other, t.f.platform, t.f.device);

    check_finish_null_keepalive(t.b, &t.vk, &t.f, t.path);
    check_keepalive_callback(t.b, &t.vk, &t.f, t.path);
    check_unref_before_finish(t.b, &t.vk, &t.f, t.path);
    check_cache_hit_keepalive(t.b, &t.vk, &t.f, t.path);
    check_aliases(t.b, &t.vk, &t.f, t.path);
    check_error_order(t.b, &t.vk, &t.f, &other, t.path);
    check_null_arguments(t.b, &t.vk, &t.f, t.path);
    check_versioned(&t.vk, &t.f, t.b);
    check_odd_420(t.b, &t.vk, &t.f, t.path);
    check_consumer_view(t.b, &t.vk, &t.f, t.path);

    tap_ok(bridge_settle(t.b) == CLMEM_OK, "finish at the end -> CLMEM_OK (%s)", clmem_error_message());
    clmem_bridge_unref(t.b);
    cl_fixture_close(&other);
    cl_fixture_expect_no_leaks(&t.f);
    cl_fixture_close(&t.f);
    vkctx_close(&t.vk);
    return tap_done();
}
