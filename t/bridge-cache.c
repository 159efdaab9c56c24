/* The import cache: the same memory imported again is the live import (same
 * cl_mem, same anchor), a different range or the cache turned off is a new
 * import, and an entry goes with its last handle. Also 8 threads importing
 * and dropping one allocation at once. Uses the best path the machine has. */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <pthread.h>

static int other_releases;
static void count_other(void *user)
{
    (void)user;
    other_releases++;
}

struct shared {
    struct cl_fixture *f;
    clmem_vk_memory *memory;
    clmem_keepalive *ka;
    atomic_int failures;
};

static void *importer(void *arg)
{
    struct shared *sh = arg;
    for (int i = 0; i < 2000; i++) {
        clmem_handle *h = NULL;
        clmem_status s = clmem_bridge_import_vk(sh->memory, 0, 64 * 1024, CLMEM_PATH_BEST, sh->ka, sh->f->context,
                                                sh->f->queue, CL_MEM_READ_WRITE, &h);
        if (s != CLMEM_OK || !clmem_handle_mem(h))
            atomic_fetch_add(&sh->failures, 1);
        clmem_handle_unref(h);
    }
    return NULL;
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    struct vk_owned o;
    clmem_keepalive *ka;
    clmem_handle *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
    clmem_path best;
    uint32_t caps = 0;
    int fds_before;
    cl_uint align_bits = 0;

    bridge_open_vulkan(&vk);
    cl_fixture_open(&f);
    {
        cl_platform_id paired_platform;
        cl_device_id paired_device;
        if (clmem_bridge_pair(vk.physical_device, &paired_platform, &paired_device) == CLMEM_OK) {
            /* the fd path, where it exists */
            cl_fixture_close(&f);
            cl_fixture_open_on(&f, paired_platform, paired_device);
        }
    }
    clmem_bridge_caps(vk.physical_device, f.device, &caps);
    best = caps & CLMEM_CAP_OPAQUE_FD ? CLMEM_PATH_OPAQUE_FD : CLMEM_PATH_HOST_MAPPED;
    tap_diag("path under test: %s on %s", clmem_path_name(best), f.device_name);
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
    ka = vk_owned_new(&o, &vk, 1024 * 1024, path_memory_props(best), path_export_types(&vk, best));
    { /* warm-up: a driver may open fds of its own on first use */
        clmem_handle *w = NULL;
        clmem_bridge_import_vk(&o.memory, 0, 4096, CLMEM_PATH_BEST, ka, f.context, f.queue, 0, &w);
        clmem_handle_unref(w);
    }
    fds_before = fd_count();

#define IMPORT(off, size, flags, out) \
    clmem_bridge_import_vk(&o.memory, off, size, CLMEM_PATH_BEST, ka, f.context, f.queue, flags, out)

    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &a), CLMEM_OK, "first import");
    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &b), CLMEM_OK, "same memory again");
    tap_ok(a && b && clmem_handle_mem(a) == clmem_handle_mem(b) &&
               clmem_handle_keep_alive(a) == clmem_handle_keep_alive(b),
           "the second import is the live one: same cl_mem, same anchor");
    tap_is_int(IMPORT(align_bits / 8 * 8, 64 * 1024, CL_MEM_READ_WRITE, &c), CLMEM_OK, "another range");
    tap_ok(c && clmem_handle_mem(c) != clmem_handle_mem(a), "another range is another import");
    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_ONLY, &d), CLMEM_OK, "other flags");
    tap_ok(d && clmem_handle_mem(d) != clmem_handle_mem(a), "other flags are another import");
    clmem_bridge_cache_set_enabled(0);
    tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &e), CLMEM_OK, "cache off: import");
    tap_ok(e && clmem_handle_mem(e) != clmem_handle_mem(a), "cache off: a new driver import");
    clmem_bridge_cache_set_enabled(1);
    {
        clmem_handle *again = NULL;
        event_log_reset();
        log_cl_destruction(clmem_handle_mem(a), "first import destroyed");
        clmem_handle_unref(a);
        tap_ok(event_position("first import destroyed") < 0, "one cached handle left: the import lives");
        clmem_handle_unref(b);
        tap_ok(event_position("first import destroyed") >= 0, "the last cached handle went: OpenCL destroyed it");
        tap_is_int(IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &again), CLMEM_OK, "importing it again is a new import");
        clmem_handle_unref(again);
    }
    clmem_handle_unref(c);
    clmem_handle_unref(d);
    clmem_handle_unref(e);
    {
        /* A second caller with an anchor of its own gets the cached import,
         * and its anchor is held as long as that import, like a new one. */
        clmem_handle *first = NULL, *second = NULL;
        clmem_keepalive *other = clmem_keepalive_new(count_other, NULL);
        IMPORT(0, 64 * 1024, CL_MEM_READ_WRITE, &first);
        tap_is_int(clmem_bridge_import_vk(&o.memory, 0, 64 * 1024, CLMEM_PATH_BEST, other, f.context, f.queue,
                                          CL_MEM_READ_WRITE, &second),
                   CLMEM_OK, "a cached import for a caller with another anchor");
        tap_ok(second && clmem_handle_mem(second) == clmem_handle_mem(first), "it is the live import");
        clmem_keepalive_unref(other);
        clmem_handle_unref(first);
        tap_is_int(other_releases, 0, "that caller's anchor is held while its handle lives");
        clmem_handle_unref(second);
        tap_is_int(other_releases, 1, "and dropped, once, when the import goes");
    }

    {
        struct shared sh = {.f = &f, .memory = &o.memory, .ka = ka};
        pthread_t threads[8];
        atomic_init(&sh.failures, 0);
        for (int i = 0; i < 8; i++)
            pthread_create(&threads[i], NULL, importer, &sh);
        for (int i = 0; i < 8; i++)
            pthread_join(threads[i], NULL);
        tap_is_int(atomic_load(&sh.failures), 0, "8 threads x 2000 concurrent cached imports and drops");
    }
    tap_is_int(atomic_load(&o.released), 0, "the Vulkan memory is still held by the test");
    clmem_keepalive_unref(ka);
    tap_is_int(atomic_load(&o.released), 1, "no import kept a reference: the memory is freed once");
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked");
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
