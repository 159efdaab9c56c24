/* SPDX-License-Identifier: MIT */
/* Misuse of the bridge's objects, and what the bridge can tell about the
 * memory it is given.
 *
 * Each misuse runs in a child process (t/lib/child.h), as in t/core/misuse: an
 * unref too many of a bridge (the heap was corrupt and glibc aborted much
 * later, "malloc(): unaligned tcache chunk detected"), of a bridge handle,
 * of a semaphore and of a ring; a bridge used after its last unref; a
 * handle passed as a bridge. Each must end in SIGABRT with one line naming
 * the call (or, under ASan and UBSan, in their report of the same call: a
 * read of freed memory, or of a handle through a bridge pointer, whose
 * alignment UBSan checks first).
 *
 * Then, in this process:
 *  - an allocation_size the bridge knows is wrong: memory from
 *    clmem_bridge_vk_buffer_create() or clmem_bridge_vk_image_create()
 *    described as 1 GiB is refused with CLMEM_ERR_INVALID_VALUE, naming
 *    both sizes, on any path;
 *  - on the host-mapped path, memory the application allocated (64 KiB)
 *    described as 1 GiB is refused too: the address space past lavapipe's
 *    memory (in the C library's heap) is not mapped that far (the bridge
 *    asks mincore about the claimed last byte's page). Skipped
 *    under AddressSanitizer, whose allocator maps the address space
 *    around every allocation, so the excess cannot be seen;
 *  - the import's "No path fits" message puts first the reasons of the
 *    paths this pair offers, and is not cut. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/child.h"
#include "t/lib/ring-fixture.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const VkDeviceSize KiB = 1024, GiB = 1024 * 1024 * 1024;

struct setup {
    struct vkctx vk;
    struct cl_fixture f;
    clmem_bridge *b;
};

static void setup_open(struct setup *s)
{
    bridge_open_vulkan(&s->vk);
    cl_fixture_open_paired(&s->f, &s->vk);
    s->b = bridge_open(&s->vk, &s->f, 0);
}

/* ---------------------------------------------------------- the cases */

static void bridge_unref_twice(void)
{
    struct setup s;
    setup_open(&s);
    clmem_bridge_unref(s.b);
    clmem_bridge_unref(s.b);
}

static void bridge_caps_after_unref(void)
{
    struct setup s;
    setup_open(&s);
    clmem_bridge_unref(s.b);
    (void)clmem_bridge_caps(s.b);
}

/* A call reached through the image and memory helpers, not the handoffs. */
static void bridge_best_memory_after_unref(void)
{
    struct setup s;
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags types;
    setup_open(&s);
    clmem_bridge_unref(s.b);
    (void)clmem_bridge_best_memory(s.b, &path, &props, &types);
}

static void handle_as_bridge(void)
{
    clmem_handle *h = NULL;
    if (clmem_handle_wrap((cl_mem)(uintptr_t)0x1000, (cl_command_queue)(uintptr_t)0x2000, 0, NULL, &h) != CLMEM_OK)
        exit(100);
    clmem_bridge_unref((clmem_bridge *)h);
}

/* A handle the bridge made, dropped twice. */
static void bridge_handle_unref_twice(void)
{
    struct setup s;
    struct vk_owned o;
    clmem_bridge_path path;
    clmem_keepalive *ka;
    clmem_handle *h = NULL;

    setup_open(&s);
    path = bridge_test_path(s.b);
    ka = vk_owned_new(&o, s.b, &s.vk, 64 * KiB, path_memory_props(path), path_export_types(&s.vk, path));
    if (clmem_bridge_import_vk(s.b, &o.memory, 0, 64 * KiB, path, ka, s.f.queue, CL_MEM_READ_WRITE, &h) != CLMEM_OK)
        exit(100);
    clmem_keepalive_unref(ka);
    clmem_handle_unref(h);
    clmem_handle_unref(h);
}

static clmem_bridge_semaphore *host_semaphore(struct setup *s, VkSemaphore *vk_sem)
{
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    clmem_bridge_semaphore *sem = NULL;

    if (vkCreateSemaphore(s->vk.device, &ci, NULL, vk_sem) != VK_SUCCESS ||
        clmem_bridge_semaphore_import(s->b, s->vk.queue, *vk_sem, CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, NULL, &sem) !=
            CLMEM_OK)
        exit(100);
    return sem;
}

static void semaphore_unref_twice(void)
{
    struct setup s;
    VkSemaphore vk_sem;
    clmem_bridge_semaphore *sem;

    setup_open(&s);
    sem = host_semaphore(&s, &vk_sem);
    clmem_bridge_semaphore_unref(sem);
    clmem_bridge_semaphore_unref(sem);
}

static void semaphore_mode_after_unref(void)
{
    struct setup s;
    VkSemaphore vk_sem;
    clmem_bridge_semaphore *sem;

    setup_open(&s);
    sem = host_semaphore(&s, &vk_sem);
    clmem_bridge_semaphore_unref(sem);
    (void)clmem_bridge_semaphore_get_mode(sem);
}

static void ring_unref_twice(void)
{
    struct setup s;
    struct ring_run r;
    clmem_bridge_ring *ring;

    setup_open(&s);
    ring_run_open(&r, &s.vk, &s.f, s.b, bridge_test_path(s.b), CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, 2, 1, 2,
                  "misuse");
    ring = r.ring;
    clmem_bridge_ring_unref(ring);
    clmem_bridge_ring_unref(ring);
}

static const struct misuse_case cases[] = {
    {"bridge-unref-twice", bridge_unref_twice, false, "clmem_bridge_unref", "Aborting.", true},
    {"bridge-unref-twice-checked", bridge_unref_twice, true, "clmem_bridge_unref",
     "last reference was already dropped by clmem_bridge_unref: an unref too many. Aborting.", false},
    {"bridge-caps-after-unref-checked", bridge_caps_after_unref, true, "clmem_bridge_caps",
     "last reference was already dropped by clmem_bridge_unref: a use after the last unref. Aborting.", false},
    {"bridge-best-memory-after-unref-checked", bridge_best_memory_after_unref, true, "clmem_bridge_best_memory",
     /* another file of the library than the unref: the mistake is told, not who freed it */
     "last reference was already dropped: a use after the last unref. Aborting.", false},
    {"handle-as-bridge", handle_as_bridge, false, "clmem_bridge_unref", "this is a clmem_handle, not a clmem_bridge",
     true},
    {"bridge-handle-unref-twice", bridge_handle_unref_twice, false, "clmem_handle_unref", "Aborting.", true},
    {"bridge-handle-unref-twice-checked", bridge_handle_unref_twice, true, "clmem_handle_unref",
     "last reference was already dropped by clmem_handle_unref: an unref too many. Aborting.", false},
    {"semaphore-unref-twice", semaphore_unref_twice, false, "clmem_bridge_semaphore_unref", "Aborting.", true},
    {"semaphore-mode-after-unref-checked", semaphore_mode_after_unref, true, "clmem_bridge_semaphore_get_mode",
     "last reference was already dropped by clmem_bridge_semaphore_unref: a use after the last unref. Aborting.",
     false},
    {"ring-unref-twice-checked", ring_unref_twice, true, "clmem_bridge_ring_unref",
     "last reference was already dropped by clmem_bridge_ring_unref: an unref too many. Aborting.", false},
};
#define CASE_COUNT (int)(sizeof cases / sizeof cases[0])

/* ------------------------------------------------- allocation_size */

static void check_own_allocation(struct setup *s)
{
    clmem_bridge_path path = bridge_test_path(s->b);
    clmem_bridge_vk_memory told;
    clmem_bridge_vk_image image;
    clmem_handle *h = (clmem_handle *)s; /* must become NULL */
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, s->b, &s->vk, 64 * KiB, path_memory_props(path),
                                       path_export_types(&s->vk, path));
    clmem_status st;

    told = o.memory;
    told.allocation_size = GiB;
    st = clmem_bridge_import_vk(s->b, &told, 0, 64 * KiB, path, ka, s->f.queue, CL_MEM_READ_WRITE, &h);
    tap_ok(st == CLMEM_ERR_INVALID_VALUE && !h && strstr(clmem_error_message(), "1073741824") &&
               strstr(clmem_error_message(), "allocated"),
           "%s: memory the bridge allocated, described as 1 GiB: %s, %s", clmem_bridge_path_name(path),
           clmem_status_name(st), clmem_error_message());
    st = clmem_bridge_import_vk(s->b, &o.memory, 0, 64 * KiB, path, ka, s->f.queue, CL_MEM_READ_WRITE, &h);
    tap_ok(st == CLMEM_OK && h, "described as it is, it imports: %s", clmem_status_name(st));
    clmem_handle_unref(h);
    clmem_keepalive_unref(ka);
    tap_is_int(bridge_settle(s->b), CLMEM_OK, "and its teardown completes");

    st = clmem_bridge_vk_image_create(s->b, VK_FORMAT_R8G8B8A8_UNORM, (VkExtent2D){64, 64}, VK_IMAGE_TILING_LINEAR,
                                      VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                      path_memory_props(path), path_export_types(&s->vk, path), &image);
    if (st != CLMEM_OK) {
        tap_skip(clmem_error_message(), "an image the bridge allocated, described as 1 GiB");
        return;
    }
    image.memory.allocation_size = GiB;
    h = (clmem_handle *)s;
    st = clmem_bridge_import_vk_image(s->b, &image, 0, path, NULL, s->f.queue, CL_MEM_READ_WRITE, 0, &h);
    tap_ok(st == CLMEM_ERR_INVALID_VALUE && !h && strstr(clmem_error_message(), "1073741824"),
           "an image the bridge allocated, described as 1 GiB: %s, %s", clmem_status_name(st),
           clmem_error_message());
    clmem_bridge_vk_image_destroy(s->b, &image);
}

static uint32_t host_memory_type(struct setup *s)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkPhysicalDeviceMemoryProperties mp;

    vkGetPhysicalDeviceMemoryProperties(s->vk.physical_device, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((mp.memoryTypes[i].propertyFlags & want) == want)
            return i;
    return UINT32_MAX;
}

/* Memory the application allocated itself, as vkAllocateMemory gives it. */
static void check_host_mapped_size(struct setup *s)
{
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = 64 * KiB};
    clmem_bridge_vk_memory m = {.device = s->vk.device, .allocation_size = GiB};
    clmem_handle *h = (clmem_handle *)s;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    clmem_status st;

    const char *instrumented = getenv("CLMEM_TEST_INSTRUMENTED");

    if (clmem_bridge_check_path(s->b, CLMEM_BRIDGE_PATH_HOST_MAPPED) != CLMEM_OK) {
        tap_skip(clmem_error_message(), "host-mapped: application memory described as 1 GiB");
        tap_skip("no host-mapped path", "host-mapped: described as it is");
        return;
    }
    if (instrumented && strcmp(instrumented, "asan") == 0) {
        tap_skip("AddressSanitizer's allocator maps the address space around every allocation, so a mapping's "
                 "end cannot be seen",
                 "host-mapped: application memory described as 1 GiB");
        tap_skip("as above", "host-mapped: described as it is");
        return;
    }
    ai.memoryTypeIndex = host_memory_type(s);
    if (ai.memoryTypeIndex == UINT32_MAX || vkAllocateMemory(s->vk.device, &ai, NULL, &memory) != VK_SUCCESS)
        tap_bail("allocating 64 KiB of host-visible memory failed");
    m.memory = memory;
    m.property_flags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    st = clmem_bridge_import_vk(s->b, &m, 0, 64 * KiB, CLMEM_BRIDGE_PATH_HOST_MAPPED, NULL, s->f.queue,
                                CL_MEM_READ_WRITE, &h);
    tap_ok(st == CLMEM_ERR_INVALID_VALUE && !h && strstr(clmem_error_message(), "1073741824"),
           "host-mapped: 64 KiB of the application's memory described as 1 GiB: %s, %s", clmem_status_name(st),
           clmem_error_message());
    clmem_handle_unref(h); /* NULL unless the check failed */
    h = NULL;
    m.allocation_size = 64 * KiB;
    st = clmem_bridge_import_vk(s->b, &m, 0, 64 * KiB, CLMEM_BRIDGE_PATH_HOST_MAPPED, NULL, s->f.queue,
                                CL_MEM_READ_WRITE, &h);
    tap_ok(st == CLMEM_OK && h, "host-mapped: described as it is, it imports (%s)", clmem_status_name(st));
    clmem_handle_unref(h);
    if (bridge_settle(s->b) != CLMEM_OK)
        tap_bail("the host-mapped import's teardown did not complete: %s", clmem_error_message());
    vkFreeMemory(s->vk.device, memory, NULL);
}

/* ------------------------------------------------- no path fits */

static uint32_t device_only_type(struct setup *s)
{
    VkPhysicalDeviceMemoryProperties mp;

    vkGetPhysicalDeviceMemoryProperties(s->vk.physical_device, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if (!(mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
            return i;
    return UINT32_MAX;
}

/* Memory no path takes: not exported (no fd path) and, where the device
 * has such memory, not host-visible (no host-mapped path); else described
 * as not host-visible, which is what the path reads. */
static void check_no_path_message(struct setup *s)
{
    static const clmem_bridge_path paths[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF,
                                              CLMEM_BRIDGE_PATH_HOST_MAPPED};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = 64 * KiB};
    clmem_bridge_vk_memory m = {.device = s->vk.device, .allocation_size = 64 * KiB};
    VkDeviceMemory memory = VK_NULL_HANDLE;
    clmem_handle *h = NULL;
    const char *devices, *offered, *lacking;
    char msg[4096], first[64];
    bool order_ok = true;
    clmem_status st;

    ai.memoryTypeIndex = device_only_type(s);
    if (ai.memoryTypeIndex == UINT32_MAX)
        ai.memoryTypeIndex = host_memory_type(s);
    if (vkAllocateMemory(s->vk.device, &ai, NULL, &memory) != VK_SUCCESS)
        tap_bail("allocating 64 KiB failed");
    m.memory = memory;
    m.property_flags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    st = clmem_bridge_import_vk(s->b, &m, 0, 64 * KiB, CLMEM_BRIDGE_PATH_BEST, NULL, s->f.queue, CL_MEM_READ_WRITE,
                                &h);
    snprintf(msg, sizeof msg, "%s", clmem_error_message()); /* the checks below make calls of their own */
    tap_ok(st == CLMEM_ERR_UNSUPPORTED && strncmp(msg, "clmem_bridge_import_vk: no path fits this memory", 48) == 0,
           "memory no path takes: CLMEM_ERR_UNSUPPORTED, \"clmem_bridge_import_vk: no path fits\" (%s)", clmem_status_name(st));
    tap_diag("  %s", msg);
    devices = strstr(msg, "(OpenCL device ");
    offered = strstr(msg, "Offered by this pair");
    lacking = strstr(msg, "Not offered by this pair");
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const char *at;
        snprintf(first, sizeof first, " %s: ", clmem_bridge_path_name(paths[i]));
        at = strstr(msg, first);
        if (clmem_bridge_check_path(s->b, paths[i]) == CLMEM_OK)
            order_ok = order_ok && at && offered && at > offered && (!lacking || at < lacking);
        else
            order_ok = order_ok && at && lacking && at > lacking;
        order_ok = order_ok && (!devices || (at && at < devices));
    }
    tap_ok(order_ok && devices && (!offered || !lacking || offered < lacking),
           "it gives each path's reason, those the pair offers first, before the device names");
    tap_ok(strlen(msg) < 2047 && msg[strlen(msg) - 1] == ')', "and it is whole (%zu bytes)", strlen(msg));
    vkFreeMemory(s->vk.device, memory, NULL);
}

int main(int argc, char **argv)
{
    int child = misuse_run_child(cases, CASE_COUNT, argc, argv);
    struct setup s;

    if (child >= 0) /* a child: it ran one case */
        return child;
    setup_open(&s); /* skips the whole test where there is no Vulkan */
    tap_plan(CASE_COUNT + 11);
    for (int i = 0; i < CASE_COUNT; i++)
        misuse_check(&cases[i], 120);
    check_own_allocation(&s);
    check_host_mapped_size(&s);
    check_no_path_message(&s);
    tap_is_int(clmem_bridge_device_finish(s.vk.device, 10000000000u), CLMEM_OK, "nothing is left pending");
    clmem_bridge_unref(s.b);
    cl_fixture_close(&s.f);
    vkctx_close(&s.vk);
    tap_is_int(vkctx_validation_errors(), 0, "the validation layer reported nothing");
    return tap_done();
}
