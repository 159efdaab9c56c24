/* SPDX-License-Identifier: MIT */
/* The import cache, which is per bridge: the same memory imported again
 * through one bridge is the live import (same cl_mem, same anchor), a
 * different range or flags is a new import, an entry goes with its last
 * handle, a bridge made with CLMEM_BRIDGE_NO_IMPORT_CACHE never hits, and
 * two bridges (two cl_contexts) keep separate caches. Also 8 threads
 * importing and dropping one allocation at once. Uses the best path the
 * machine has. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <pthread.h>

static int other_releases;
static void count_other(void *user)
{
    (void)user;
    other_releases++;
}

struct shared {
    clmem_bridge *bridge;
    struct cl_fixture *f;
    clmem_bridge_vk_memory *memory;
    clmem_keepalive *ka;
    atomic_int failures;
};

static void *importer(void *arg)
{
    struct shared *sh = arg;
    for (int i = 0; i < 2000; i++) {
        clmem_handle *h = NULL;
        clmem_status s = clmem_bridge_import_vk(sh->bridge, sh->memory, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, sh->ka,
                                                sh->f->queue, CL_MEM_READ_WRITE, &h);
        if (s != CLMEM_OK || !clmem_handle_mem(h))
            atomic_fetch_add(&sh->failures, 1);
        clmem_handle_unref(h);
    }
    return NULL;
}

static cl_context mem_context(cl_mem mem)
{
    cl_context c = NULL;
    clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof c, &c, NULL);
    return c;
}

/* One import and its drop, then the bridge settled: a driver may open fds
 * of its own on first use. */
static void warm_up(clmem_bridge *b, struct cl_fixture *f, struct vk_owned *o, clmem_keepalive *ka)
{
    clmem_handle *w = NULL;
    clmem_bridge_import_vk(b, &o->memory, 0, 4096, CLMEM_BRIDGE_PATH_BEST, ka, f->queue, 0, &w);
    clmem_handle_unref(w);
    if (bridge_settle(b) != CLMEM_OK)
        tap_bail("settling after the warm-up failed: %s", clmem_error_message());
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f, f2;
    struct vk_owned o, o2, o3;
    clmem_keepalive *ka, *ka2, *ka3;
    clmem_bridge *b, *nc, *b2;
    clmem_handle *ha = NULL, *hb = NULL, *hc = NULL, *hd = NULL;
    clmem_bridge_path best;
    clmem_status s;
    bool fd_path;
    int fds_before;
    cl_uint align_bits = 0;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk); /* the fd path, where it exists */
    cl_fixture_open_on(&f2, f.platform, f.device); /* a second context on the same device */
    b = bridge_open(&vk, &f, 0);
    nc = bridge_open(&vk, &f, CLMEM_BRIDGE_NO_IMPORT_CACHE);
    b2 = bridge_open(&vk, &f2, 0);
    fd_path = clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD;
    best = fd_path ? CLMEM_BRIDGE_PATH_OPAQUE_FD : CLMEM_BRIDGE_PATH_HOST_MAPPED;
    tap_diag("path under test: %s on %s", clmem_bridge_path_name(best), f.device_name);
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    /* o: the cache's memory (bridge b, and b2 on every path: two bridges of
     * one VkDevice share its one host mapping); o2: the no-cache bridge's;
     * o3: memory of b2's alone, held to the end. */
    ka = vk_owned_new(&o, b, &vk, 1024 * 1024, path_memory_props(best), path_export_types(&vk, best));
    ka2 = vk_owned_new(&o2, nc, &vk, 1024 * 1024, path_memory_props(best), path_export_types(&vk, best));
    ka3 = vk_owned_new(&o3, b2, &vk, 1024 * 1024, path_memory_props(best), path_export_types(&vk, best));
    warm_up(b, &f, &o, ka);
    warm_up(nc, &f, &o2, ka2);
    warm_up(b2, &f2, &o, ka);
    fds_before = fd_count();

#define IMPORT(off, size, flags, out) \
    clmem_bridge_import_vk(b, &o.memory, off, size, CLMEM_BRIDGE_PATH_BEST, ka, f.queue, flags, out)

    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &ha), CLMEM_OK, "first import");
    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &hb), CLMEM_OK, "same memory again");
    tap_ok(ha && hb && clmem_handle_mem(ha) == clmem_handle_mem(hb) &&
               clmem_handle_keepalive(ha) == clmem_handle_keepalive(hb),
           "the second import is the live one: same cl_mem, same anchor");
    tap_is_int(IMPORT(align_bits / 8 * 8, 64 * 1024, CL_MEM_READ_WRITE, &hc), CLMEM_OK, "another range");
    tap_ok(hc && clmem_handle_mem(hc) != clmem_handle_mem(ha), "another range is another import");
    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_ONLY, &hd), CLMEM_OK, "other flags");
    tap_ok(hd && clmem_handle_mem(hd) != clmem_handle_mem(ha), "other flags are another import");
    clmem_handle_unref(hc);
    clmem_handle_unref(hd);

    {
        /* A bridge made without a cache: every import is a driver import. */
        clmem_handle *e1 = NULL, *e2 = NULL;
        tap_is_int(clmem_bridge_import_vk(nc, &o2.memory, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, ka2, f.queue,
                                          CL_MEM_READ_WRITE, &e1),
                   CLMEM_OK, "no-cache bridge: import");
        tap_is_int(clmem_bridge_import_vk(nc, &o2.memory, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, ka2, f.queue,
                                          CL_MEM_READ_WRITE, &e2),
                   CLMEM_OK, "no-cache bridge: the same memory, range and flags again");
        tap_ok(e1 && e2 && clmem_handle_mem(e1) != clmem_handle_mem(e2) &&
                   clmem_handle_keepalive(e1) != clmem_handle_keepalive(e2),
               "no-cache bridge: never a hit, a new driver import (another cl_mem and anchor)");
        tap_ok(e1 && ha && clmem_handle_mem(e1) != clmem_handle_mem(ha),
               "no-cache bridge: nothing of bridge b's cache either");
        clmem_handle_unref(e1);
        clmem_handle_unref(e2);
        s = bridge_settle(nc);
        tap_ok(s == CLMEM_OK, "no-cache bridge: settled (%s)", s ? clmem_error_message() : "ok");
        tap_is_int(atomic_load(&o2.released), 0, "no-cache bridge: its memory is still held by the test");
    }

    {
        /* Two bridges, two contexts: separate caches. */
        clmem_handle *x1 = NULL, *x2 = NULL;
        /* The same memory on every path: on host-mapped the two bridges
         * share the one mapping Vulkan allows (bridge/host-map.h). */
        clmem_bridge_vk_memory *m2 = &o.memory;
        clmem_keepalive *k2 = ka;

        s = clmem_bridge_import_vk(b2, m2, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, k2, f2.queue, CL_MEM_READ_WRITE,
                                   &x1);
        tap_ok(s == CLMEM_OK && x1 && mem_context(clmem_handle_mem(x1)) == f2.context &&
                   clmem_handle_queue(x1) == f2.queue,
               "second bridge: import, a cl_mem of its own context (%s)", s ? clmem_error_message() : "ok");
        tap_ok(x1 && ha && clmem_handle_mem(x1) != clmem_handle_mem(ha) &&
                   clmem_handle_keepalive(x1) != clmem_handle_keepalive(ha),
               "the same memory, range and flags through the second bridge is not the first bridge's import");
        s = clmem_bridge_import_vk(b2, m2, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, k2, f2.queue, CL_MEM_READ_WRITE,
                                   &x2);
        tap_ok(s == CLMEM_OK && x1 && x2 && clmem_handle_mem(x2) == clmem_handle_mem(x1) &&
                   clmem_handle_keepalive(x2) == clmem_handle_keepalive(x1),
               "second bridge: importing again hits its own cache (same cl_mem, same anchor)");
        {
            clmem_handle *y = NULL;
            s = IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &y);
            tap_ok(s == CLMEM_OK && y && clmem_handle_mem(y) == clmem_handle_mem(ha) &&
                       mem_context(clmem_handle_mem(y)) == f.context,
                   "and the first bridge still hits its own (same cl_mem as before, in its context)");
            clmem_handle_unref(y);
        }
        clmem_handle_unref(x1);
        clmem_handle_unref(x2);
        s = bridge_settle(b2);
        tap_ok(s == CLMEM_OK, "second bridge: settled (%s)", s ? clmem_error_message() : "ok");
    }

    {
        clmem_handle *again = NULL;
        cl_mem first_mem = clmem_handle_mem(ha);
        event_log_reset();
        log_cl_destruction(first_mem, "first import destroyed");
        clmem_handle_unref(ha);
        tap_ok(event_position("first import destroyed") < 0, "one cached handle left: the import lives");
        s = clmem_bridge_finish(b, 0);
        tap_ok(s == CLMEM_ERR_IN_USE, "and finish says it is in use (%s)", clmem_status_name(s));
        clmem_handle_unref(hb);
        tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &again), CLMEM_OK,
                   "importing it again after its last handle went");
        /* While the old cl_mem is alive (not yet logged as destroyed) its
         * address cannot be the new one's. */
        tap_ok(again && (clmem_handle_mem(again) != first_mem || event_position("first import destroyed") >= 0),
               "is a new import, not the one being torn down");
        clmem_handle_unref(again);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "bridge_settle after the last handles -> CLMEM_OK (%s)",
               s ? clmem_error_message() : "ok");
        tap_ok(event_position("first import destroyed") >= 0,
               "the last cached handle went: OpenCL destroyed the import once the bridge settled");
    }
    {
        /* A second caller with an anchor of its own gets the cached import,
         * and its anchor is held as long as that import, like a new one. */
        clmem_handle *first = NULL, *second = NULL;
        clmem_keepalive *other = clmem_keepalive_new(count_other, NULL);
        IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &first);
        tap_is_int(clmem_bridge_import_vk(b, &o.memory, 0, 64 * 1024, CLMEM_BRIDGE_PATH_BEST, other, f.queue,
                                          CL_MEM_READ_WRITE, &second),
                   CLMEM_OK, "a cached import for a caller with another anchor");
        tap_ok(second && first && clmem_handle_mem(second) == clmem_handle_mem(first), "it is the live import");
        clmem_keepalive_unref(other);
        clmem_handle_unref(first);
        tap_is_int(other_releases, 0, "that caller's anchor is held while its handle lives");
        clmem_handle_unref(second);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "bridge_settle after the import's last handle -> CLMEM_OK (%s)",
               s ? clmem_error_message() : "ok");
        tap_is_int(other_releases, 1, "and dropped, once, when the import went");
    }

    {
        struct shared sh = {.bridge = b, .f = &f, .memory = &o.memory, .ka = ka};
        pthread_t threads[8];
        atomic_init(&sh.failures, 0);
        for (int i = 0; i < 8; i++)
            pthread_create(&threads[i], NULL, importer, &sh);
        for (int i = 0; i < 8; i++)
            pthread_join(threads[i], NULL);
        tap_is_int(atomic_load(&sh.failures), 0, "8 threads x 2000 concurrent cached imports and drops");
    }
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "bridge_settle after the threads -> CLMEM_OK (%s)", s ? clmem_error_message() : "ok");
    tap_is_int(atomic_load(&o.released), 0, "the Vulkan memory is still held by the test");
    /* Counted with the memory still allocated, as fds_before was: lavapipe
     * backs each exportable allocation with an fd of its own. */
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    clmem_keepalive_unref(ka);
    tap_is_int(atomic_load(&o.released), 1, "no import kept a reference: the memory is freed once");
    clmem_keepalive_unref(ka2);
    clmem_keepalive_unref(ka3);
    tap_ok(atomic_load(&o2.released) == 1 && atomic_load(&o3.released) == 1,
           "nor on the other bridges' memory: freed once each");
    clmem_bridge_unref(b2);
    clmem_bridge_unref(nc);
    clmem_bridge_unref(b);
    cl_fixture_close(&f2);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
