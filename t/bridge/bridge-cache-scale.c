/* SPDX-License-Identifier: MIT */
/* The import cache and the handoff check as they grow: many
 * live keys that differ only in their size each hit their own import; a
 * hit's Vulkan keepalive is held once, until the import's teardown, and a
 * hit with an anchor already held allocates nothing; 8 threads importing,
 * hitting and dropping keys that share shards while the shards' buckets
 * grow; acquire_many of more than 16 handles (the sorted check) rejects a
 * duplicate, names the same entries as the pairwise check, and changes
 * nothing. Costs are clmem-bench (k)'s, not this test's. Uses the best path
 * the machine has. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/tap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define SIZES 256          /* keys differing only in size: 4 KiB, 8 KiB, ... 1 MiB at offset 0 */
#define FRESH 300          /* hits, each with an anchor of its own */
#define SAME_HITS 2000     /* hits with one anchor the import holds already */
#define MANY 40            /* handles in one acquire_many: above the pairwise check's 16 */
#define THREADS 8
#define THREAD_ROUNDS 300

static atomic_int fresh_releases[FRESH + 1];

static void count_release(void *user)
{
    atomic_fetch_add(&fresh_releases[(int)(intptr_t)user], 1);
}

static size_t mem_size(cl_mem mem)
{
    size_t n = 0;
    clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof n, &n, NULL);
    return n;
}

static int by_pointer(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

struct shared {
    clmem_bridge *bridge;
    struct cl_fixture *f;
    clmem_bridge_vk_memory *memory;
    clmem_keepalive *ka;
    atomic_int wrong, failures;
};

/* Each thread imports sizes of its own residue class and the sizes all
 * threads share, holds a few, hits them again, drops them: every handle
 * must carry a cl_mem of exactly the size asked for. */
static void *churn(void *arg)
{
    struct shared *sh = arg;
    static _Thread_local unsigned seed;
    clmem_handle *held[4] = {NULL, NULL, NULL, NULL};

    seed = (unsigned)(uintptr_t)&held;
    for (int r = 0; r < THREAD_ROUNDS; r++) {
        VkDeviceSize size = 4096 * (VkDeviceSize)(1 + rand_r(&seed) % 64);
        clmem_handle *h = NULL;
        clmem_status s = clmem_bridge_import_vk(sh->bridge, sh->memory, 0, size, CLMEM_BRIDGE_PATH_BEST, sh->ka,
                                                sh->f->queue, CL_MEM_READ_WRITE, &h);
        if (s != CLMEM_OK) {
            atomic_fetch_add(&sh->failures, 1);
            continue;
        }
        if (mem_size(clmem_handle_mem(h)) != size)
            atomic_fetch_add(&sh->wrong, 1);
        clmem_handle_unref(held[r % 4]);
        held[r % 4] = h;
    }
    for (int i = 0; i < 4; i++)
        clmem_handle_unref(held[i]);
    return NULL;
}

int main(void)
{
    struct vkctx vk;
    struct cl_fixture f;
    struct vk_owned o;
    clmem_keepalive *ka;
    clmem_bridge *b;
    clmem_bridge_path best;
    clmem_status s;
    static clmem_handle *first[SIZES], *again[SIZES];
    static uintptr_t mems[SIZES];

    tap_watchdog("t/bridge/bridge-cache-scale", 600);
    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    b = bridge_open(&vk, &f, 0);
    best = bridge_test_path(b);
    tap_diag("path under test: %s on %s", clmem_bridge_path_name(best), f.device_name);
    ka = vk_owned_new(&o, b, &vk, SIZES * 4096, path_memory_props(best), path_export_types(&vk, best));

#define IMPORT(size, anchor, out) \
    clmem_bridge_import_vk(b, &o.memory, 0, size, CLMEM_BRIDGE_PATH_BEST, anchor, f.queue, CL_MEM_READ_WRITE, out)

    /* ---- keys that differ only in size, all live at once */
    {
        int failed = 0, hits = 0, sized = 0, distinct = 1;
        for (int i = 0; i < SIZES; i++)
            failed += IMPORT(4096 * (VkDeviceSize)(i + 1), ka, &first[i]) != CLMEM_OK;
        for (int i = 0; i < SIZES; i++)
            failed += IMPORT(4096 * (VkDeviceSize)(i + 1), ka, &again[i]) != CLMEM_OK;
        tap_is_int(failed, 0, "%d imports of [0, 4 KiB * n) and each once more: all succeed", 2 * SIZES);
        for (int i = 0; i < SIZES && !failed; i++) {
            hits += clmem_handle_mem(again[i]) == clmem_handle_mem(first[i]);
            sized += mem_size(clmem_handle_mem(first[i])) == 4096 * (size_t)(i + 1);
            mems[i] = (uintptr_t)clmem_handle_mem(first[i]);
        }
        tap_is_int(hits, SIZES, "each second import is its own size's live import (a cache hit)");
        tap_is_int(sized, SIZES, "each import's cl_mem has the size asked for");
        qsort(mems, SIZES, sizeof mems[0], by_pointer);
        for (int i = 1; i < SIZES; i++)
            distinct &= mems[i] != mems[i - 1];
        tap_ok(distinct, "the %d sizes are %d imports: no hit crossed to another size", SIZES, SIZES);
        for (int i = 0; i < SIZES; i++) {
            clmem_handle_unref(first[i]);
            clmem_handle_unref(again[i]);
        }
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "all of them torn down (%s)", s ? clmem_error_message() : "ok");
    }

    /* ---- anchors on hits: each held once, until the import's teardown */
    {
        clmem_handle *h0 = NULL;
        clmem_keepalive *repeated = clmem_keepalive_new(count_release, (void *)(intptr_t)FRESH);
        int failed = 0, early = 0, once = 0;

        tap_is_int(IMPORT(65536, ka, &h0), CLMEM_OK, "an import that hits follow");
        for (int i = 0; i < FRESH; i++) {
            clmem_keepalive *fresh = clmem_keepalive_new(count_release, (void *)(intptr_t)i);
            clmem_handle *h = NULL;
            failed += IMPORT(65536, fresh, &h) != CLMEM_OK || clmem_handle_mem(h) != clmem_handle_mem(h0);
            clmem_keepalive_unref(fresh); /* the import holds its own reference now */
            clmem_handle_unref(h);
        }
        for (int i = 0; i < 100; i++) {
            clmem_handle *h = NULL;
            failed += IMPORT(65536, repeated, &h) != CLMEM_OK || clmem_handle_mem(h) != clmem_handle_mem(h0);
            clmem_handle_unref(h);
        }
        clmem_keepalive_unref(repeated);
        tap_is_int(failed, 0, "%d hits with fresh anchors and 100 with one repeated anchor: all the live import",
                   FRESH);
        for (int i = 0; i <= FRESH; i++)
            early += atomic_load(&fresh_releases[i]) != 0;
        tap_is_int(early, 0, "no hit's anchor is dropped while the import lives (callers let go of theirs)");

#ifdef __GLIBC__
        {
            /* A hit with an anchor the import holds: a handle allocated and
             * freed, nothing kept. */
            struct mallinfo2 before, after;
            clmem_handle *warm = NULL;
            long long grown;
            IMPORT(65536, ka, &warm);
            clmem_handle_unref(warm);
            before = mallinfo2();
            for (int i = 0; i < SAME_HITS; i++) {
                clmem_handle *h = NULL;
                IMPORT(65536, ka, &h);
                clmem_handle_unref(h);
            }
            after = mallinfo2();
            grown = (long long)after.uordblks - (long long)before.uordblks;
            tap_ok(grown < 1024, "%d hits with an anchor already held grow the heap by %lld bytes (< 1 KiB: "
                                 "nothing is kept per hit)",
                   SAME_HITS, grown);
        }
#else
        tap_skip("mallinfo2 is glibc's", "hits with an anchor already held keep no memory");
#endif
        clmem_handle_unref(h0);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "the import torn down (%s)", s ? clmem_error_message() : "ok");
        for (int i = 0; i <= FRESH; i++)
            once += atomic_load(&fresh_releases[i]) == 1;
        tap_is_int(once, FRESH + 1, "then every hit's anchor, fresh or repeated, was dropped exactly once");
    }

    /* ---- 8 threads on keys that share shards, the buckets growing */
    {
        struct shared sh = {.bridge = b, .f = &f, .memory = &o.memory, .ka = ka};
        pthread_t threads[THREADS];
        atomic_init(&sh.wrong, 0);
        atomic_init(&sh.failures, 0);
        for (int i = 0; i < THREADS; i++)
            pthread_create(&threads[i], NULL, churn, &sh);
        for (int i = 0; i < THREADS; i++)
            pthread_join(threads[i], NULL);
        tap_is_int(atomic_load(&sh.failures), 0, "%d threads x %d imports of 64 sizes, held, hit and dropped",
                   THREADS, THREAD_ROUNDS);
        tap_is_int(atomic_load(&sh.wrong), 0, "every handle's cl_mem had the size its thread asked for");
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "all of them torn down (%s)", s ? clmem_error_message() : "ok");
    }

    /* ---- acquire_many above 16 entries: the sorted duplicate check */
    {
        clmem_handle *h[MANY], *other = NULL;
        clmem_handle *list[MANY];
        int failed = 0, still = 0;

        for (int i = 0; i < MANY; i++)
            failed += clmem_bridge_import_vk(b, &o.memory, 4096 * (VkDeviceSize)i, 4096, CLMEM_BRIDGE_PATH_BEST,
                                             ka, f.queue, 0, &h[i]) != CLMEM_OK;
        failed += clmem_bridge_import_vk(b, &o.memory, 4096 * 5, 4096, CLMEM_BRIDGE_PATH_BEST, ka, f.queue, 0,
                                         &other) != CLMEM_OK; /* a hit: another handle of entry 5's import */
        tap_is_int(failed, 0, "%d imports of distinct 4 KiB ranges", MANY);
        for (int i = 0; i < MANY; i++)
            list[i] = h[i];
        list[33] = other; /* entry 5's import */
        list[37] = h[2];
        s = clmem_bridge_acquire_many(b, MANY, list, f.queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entries 5 and 33"),
               "%d handles with two imports listed twice: rejected, naming the first repeat (%s: %s)", MANY,
               clmem_status_name(s), clmem_error_message());
        list[20] = h[5];
        s = clmem_bridge_acquire_many(b, MANY, list, f.queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entries 5 and 20"),
               "an import three times: the lowest repeat is named (%s)", clmem_error_message());
        list[20] = h[20];
        list[33] = h[33];
        list[37] = h[37];
        list[MANY - 1] = h[0];
        s = clmem_bridge_acquire_many(b, MANY, list, f.queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "entries 0 and 39"),
               "the last entry repeating the first (%s)", clmem_error_message());
        list[MANY - 1] = h[MANY - 1];
        s = clmem_bridge_acquire_many(b, MANY, list, f.queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_OK, "the %d distinct handles: acquired (%s), so the rejected calls changed nothing", MANY,
               s ? clmem_error_message() : "ok");
        s = clmem_bridge_release_many(b, MANY, list, f.queue, 0, NULL, NULL);
        tap_ok(s == CLMEM_OK, "and released (%s)", s ? clmem_error_message() : "ok");
        for (int i = 0; i < MANY; i++)
            clmem_handle_unref(h[i]);
        clmem_handle_unref(other);
        s = bridge_settle(b);
        tap_ok(s == CLMEM_OK, "all of them torn down (%s)", s ? clmem_error_message() : "ok");
        still = atomic_load(&o.released);
        tap_is_int(still, 0, "the Vulkan memory is still held by the test");
    }

    clmem_keepalive_unref(ka);
    tap_is_int(atomic_load(&o.released), 1, "no import kept a reference: the memory is freed once");
    clmem_bridge_unref(b);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
