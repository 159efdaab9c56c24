/* SPDX-License-Identifier: MIT */
#include "bridge-fixture.h"
#include "tap.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void bridge_open_vulkan(struct vkctx *vk)
{
    if (!vkctx_open(vk, -1))
        tap_skip_all("no usable Vulkan device: %s", vk->error);
}

void cl_fixture_open_paired(struct cl_fixture *f, struct vkctx *vk)
{
    cl_platform_id platform;
    cl_device_id device;

    if (clmem_bridge_pair(vk->instance, NULL, vk->physical_device, &platform, &device) == CLMEM_OK)
        cl_fixture_open_on(f, platform, device);
    else
        cl_fixture_open(f);
}

clmem_bridge *bridge_open(struct vkctx *vk, struct cl_fixture *f, uint32_t flags)
{
    return bridge_open_with(vk, f, flags, NULL);
}

clmem_bridge *bridge_open_with(struct vkctx *vk, struct cl_fixture *f, uint32_t flags,
                               PFN_vkGetInstanceProcAddr get_instance_proc_addr)
{
    clmem_bridge_info info = {.size = sizeof info,
                              .instance = vk->instance,
                              .physical_device = vk->physical_device,
                              .device = vk->device,
                              .get_instance_proc_addr = get_instance_proc_addr,
                              .context = f->context,
                              .cl_device = f->device,
                              .flags = flags};
    clmem_bridge *b = NULL;
    clmem_status s = clmem_bridge_create(&info, &b);

    if (s != CLMEM_OK || !b)
        tap_bail("clmem_bridge_create(Vulkan %s, OpenCL %s, flags 0x%x) failed: %s", vk->device_name,
                 f->device_name, (unsigned)flags, s != CLMEM_OK ? clmem_error_message() : "no bridge returned");
    return b;
}

clmem_bridge_path bridge_test_path(const clmem_bridge *b)
{
    return (clmem_bridge_caps(b) & CLMEM_BRIDGE_CAP_OPAQUE_FD) ? CLMEM_BRIDGE_PATH_OPAQUE_FD
                                                                : CLMEM_BRIDGE_PATH_HOST_MAPPED;
}

void bridge_test_open(struct bridge_test *t, const char *name, unsigned watchdog_seconds)
{
    if (watchdog_seconds)
        tap_watchdog(name, watchdog_seconds);
    bridge_open_vulkan(&t->vk);
    cl_fixture_open_paired(&t->f, &t->vk);
    t->b = bridge_open(&t->vk, &t->f, 0);
    t->path = bridge_test_path(t->b);
    tap_diag("Vulkan %s, OpenCL %s (%s); path %s%s", t->vk.device_name, t->f.device_name, t->f.platform_name,
             clmem_bridge_path_name(t->path),
             t->path == CLMEM_BRIDGE_PATH_OPAQUE_FD ? "" : " (the bridge reports no opaque-fd import here)");
}

void bridge_test_close(struct bridge_test *t)
{
    tap_is_int(clmem_bridge_finish(t->b, 0), CLMEM_OK, "nothing of the bridge holds Vulkan memory at the end");
    clmem_bridge_unref(t->b);
    t->b = NULL;
    cl_fixture_expect_no_leaks(&t->f); /* teardown threads may still be letting go: it waits up to 2 s */
    cl_fixture_close(&t->f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               t->vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&t->vk);
}

clmem_status bridge_settle(clmem_bridge *b)
{
    /* 10 s; 120 s in an instrumented run (tap.h), where valgrind runs
     * PoCL's kernels many times slower. */
    return clmem_bridge_finish(b, (uint64_t)(tap_time_bound_ms(10000.0, 120000.0) * 1e6));
}

void uuid_hex(const unsigned char uuid[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

bool message_has_uuid(const char *msg, const char hex[33])
{
    char flat[1024];
    size_t j = 0;
    for (size_t i = 0; msg[i] && j < sizeof flat - 1; i++)
        if (msg[i] != '-' && msg[i] != ':')
            flat[j++] = (char)tolower((unsigned char)msg[i]);
    flat[j] = '\0';
    return strstr(flat, hex) != NULL;
}

/* Entries are written on driver threads too (destructor callbacks, the
 * Vulkan anchor's release): each slot is atomic, and a slot whose count is
 * taken but whose string is not stored yet reads as NULL and is skipped. */
#define EVENTS_MAX 64
static _Atomic(const char *) events[EVENTS_MAX];
static atomic_int event_count;

void event_log(const char *what)
{
    int i = atomic_fetch_add(&event_count, 1);
    if (i < EVENTS_MAX)
        atomic_store(&events[i], what);
}

int event_position(const char *what)
{
    int n = atomic_load(&event_count);
    for (int i = 0; i < n && i < EVENTS_MAX; i++) {
        const char *e = atomic_load(&events[i]);
        if (e && strcmp(e, what) == 0)
            return i;
    }
    return -1;
}

void event_log_reset(void)
{
    for (int i = 0; i < EVENTS_MAX; i++)
        atomic_store(&events[i], NULL);
    atomic_store(&event_count, 0);
}

/* May run on a driver callback thread or inside clmem_bridge_finish(). */
static void vk_owned_release(void *user)
{
    struct vk_owned *o = user;
    clmem_bridge *b = o->bridge;

    clmem_bridge_vk_buffer_destroy(b, o->buffer, &o->memory);
    o->bridge = NULL;
    event_log("vulkan memory freed");
    atomic_fetch_add(&o->released, 1);
    clmem_bridge_unref(b);
}

clmem_keepalive *vk_owned_new(struct vk_owned *o, clmem_bridge *b, struct vkctx *vk, VkDeviceSize size,
                              VkMemoryPropertyFlags props, VkExternalMemoryHandleTypeFlags export_types)
{
    clmem_keepalive *ka;
    clmem_status s;

    memset(o, 0, sizeof *o);
    o->vk = vk;
    atomic_init(&o->released, 0);
    s = clmem_bridge_vk_buffer_create(b, size,
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                      props, export_types, &o->buffer, &o->memory);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_buffer_create(%llu) failed: %s", (unsigned long long)size, clmem_error_message());
    o->bridge = clmem_bridge_ref(b);
    ka = clmem_keepalive_new(vk_owned_release, o);
    if (!ka)
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

bool vk_staging_open(struct vk_staging *s, clmem_bridge *b, struct vkctx *vk, VkDeviceSize size)
{
    s->ka = vk_owned_new(&s->o, b, vk, size, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         0);
    s->data = NULL;
    if (vkMapMemory(vk->device, s->o.memory.memory, 0, VK_WHOLE_SIZE, 0, &s->data) != VK_SUCCESS)
        s->data = NULL;
    return s->data != NULL;
}

void vk_staging_close(struct vk_staging *s)
{
    if (s->data)
        vkUnmapMemory(s->o.vk->device, s->o.memory.memory);
    s->data = NULL;
    clmem_keepalive_unref(s->ka); /* never imported: frees the buffer here */
    s->ka = NULL;
}

bool vk_read_back(struct vk_staging *s, clmem_bridge *b, struct vkctx *vk, VkBuffer buffer, VkDeviceSize size,
                  char *why, size_t why_len)
{
    VkResult r;

    if (!vk_staging_open(s, b, vk, size)) {
        snprintf(why, why_len, "reading back through Vulkan failed: mapping the staging buffer failed");
        return false;
    }
    if ((r = vkctx_copy(vk, buffer, s->o.buffer, size)) != VK_SUCCESS) {
        snprintf(why, why_len, "reading back through Vulkan failed: VkResult %d", r);
        return false;
    }
    return true;
}

void vk_buffer_barrier(VkCommandBuffer cb, VkBuffer buf, uint32_t src_family, uint32_t dst_family, VkAccessFlags src,
                       VkAccessFlags dst)
{
    VkBufferMemoryBarrier bb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                .srcAccessMask = src,
                                .dstAccessMask = dst,
                                .srcQueueFamilyIndex = src_family,
                                .dstQueueFamilyIndex = dst_family,
                                .buffer = buf,
                                .size = VK_WHOLE_SIZE};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 1,
                         &bb, 0, NULL);
}

VkMemoryPropertyFlags path_memory_props(clmem_bridge_path path)
{
    /* BEST gets memory every path can take: host-visible and exportable. */
    return path == CLMEM_BRIDGE_PATH_HOST_MAPPED || path == CLMEM_BRIDGE_PATH_BEST
               ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
               : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
}

VkExternalMemoryHandleTypeFlags path_export_types(const struct vkctx *vk, clmem_bridge_path path)
{
    switch (path) {
    case CLMEM_BRIDGE_PATH_OPAQUE_FD: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    case CLMEM_BRIDGE_PATH_DMA_BUF: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
    case CLMEM_BRIDGE_PATH_BEST: return vk->has_memory_fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0;
    case CLMEM_BRIDGE_PATH_HOST_MAPPED: break;
    }
    return 0;
}

static void CL_CALLBACK on_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    event_log(user);
}

void log_cl_destruction(cl_mem mem, const char *what)
{
    cl_int err = clSetMemObjectDestructorCallback(mem, on_destroyed, (void *)what);
    if (err != CL_SUCCESS)
        tap_bail("clSetMemObjectDestructorCallback failed: %d", err);
}

static const char xform_source[] = "__kernel void xform(__global uint *p) {\n"
                                   "    size_t i = get_global_id(0);\n"
                                   "    p[i] = p[i] * 3u + 1u;\n"
                                   "}\n";

cl_kernel xform_kernel(struct cl_fixture *f)
{
    return cl_fixture_kernel(f, xform_source, "xform");
}

cl_int run_xform(struct cl_fixture *f, cl_kernel k, cl_mem mem, size_t words)
{
    cl_int err = clSetKernelArg(k, 0, sizeof mem, &mem);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(f->queue, k, 1, NULL, &words, NULL, 0, NULL, NULL);
    return err;
}

/* Vulkan's view: copy the allocation to host-visible staging and check. */
static bool vulkan_sees(clmem_bridge *b, struct vkctx *vk, struct vk_owned *o, VkDeviceSize alloc_size,
                        VkDeviceSize offset, VkDeviceSize size, uint32_t value, char *why, size_t why_len)
{
    struct vk_staging staging;
    bool good = vk_read_back(&staging, b, vk, o->buffer, alloc_size, why, why_len);
    const uint32_t *words = staging.data;

    for (VkDeviceSize i = 0; good && i < alloc_size / 4; i++) {
        bool inside = i * 4 >= offset && i * 4 < offset + size;
        uint32_t want = inside ? value * 3u + 1u : value;
        if (words[i] != want) {
            snprintf(why, why_len, "word %llu is 0x%08x, want 0x%08x (%s the range)", (unsigned long long)i,
                     words[i], want, inside ? "inside" : "outside");
            good = false;
        }
    }
    vk_staging_close(&staging);
    return good;
}

bool round_trip(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k, clmem_bridge_path path,
                VkDeviceSize alloc_size, VkDeviceSize offset, VkDeviceSize size, const char *label)
{
    struct vk_owned o;
    clmem_keepalive *ka =
        vk_owned_new(&o, b, vk, alloc_size, path_memory_props(path), path_export_types(vk, path));
    const uint32_t value = 0x01020304u + (uint32_t)(alloc_size >> 10);
    clmem_handle *h = NULL;
    char why[512] = "";
    bool good = false;
    cl_event done = NULL;
    cl_int err;
    VkResult r = vkctx_fill(vk, o.buffer, 0, VK_WHOLE_SIZE, value);
    clmem_status s = r != VK_SUCCESS ? CLMEM_ERR_VULKAN
                                     : clmem_bridge_import_vk(b, &o.memory, offset, size, path, ka, f->queue,
                                                              CL_MEM_READ_WRITE, &h);

    clmem_keepalive_unref(ka); /* the import holds its own reference */
    if (r != VK_SUCCESS)
        snprintf(why, sizeof why, "vkCmdFillBuffer submission failed: %d", r);
    else if (s != CLMEM_OK)
        snprintf(why, sizeof why, "import failed: %s", clmem_error_message());
    else if ((s = clmem_bridge_acquire(b, h, 0, NULL, NULL)) != CLMEM_OK)
        snprintf(why, sizeof why, "acquire failed: %s", clmem_error_message());
    else if ((err = run_xform(f, k, clmem_handle_mem(h), (size_t)(size / 4))) != CL_SUCCESS)
        snprintf(why, sizeof why, "kernel enqueue failed: %d", err);
    else if ((s = clmem_bridge_release(b, h, 0, NULL, &done)) != CLMEM_OK)
        snprintf(why, sizeof why, "release failed: %s", clmem_error_message());
    else if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
        snprintf(why, sizeof why, "waiting for the release failed: %d", err);
    else
        good = vulkan_sees(b, vk, &o, alloc_size, offset, size, value, why, sizeof why);
    if (done)
        clReleaseEvent(done);
    if (h && atomic_load(&o.released) != 0) {
        snprintf(why, sizeof why, "the Vulkan memory was freed while a handle was alive");
        good = false;
    }
    clmem_handle_unref(h);
    if (h) {
        /* The last unref only enqueues the teardown; finish completes it. */
        clmem_status settled = bridge_settle(b);
        if (settled != CLMEM_OK) {
            snprintf(why, sizeof why, "bridge_settle after the last handle returned %s: %s",
                     clmem_status_name(settled), clmem_error_message());
            good = false;
        } else if (atomic_load(&o.released) != 1) {
            snprintf(why, sizeof why, "the Vulkan anchor ran %d times after the last handle and bridge_settle, "
                                      "want once",
                     atomic_load(&o.released));
            good = false;
        }
    }
    if (!h) /* the import failed: the anchor still has to free the memory exactly once */
        good = good && atomic_load(&o.released) == 1;
    tap_ok(good, "%s: %s round trip, %llu bytes at offset %llu of %llu%s%s", label, clmem_bridge_path_name(path),
           (unsigned long long)size, (unsigned long long)offset, (unsigned long long)alloc_size, good ? "" : ": ",
           why);
    return good;
}

static double elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One TAP point: "cl_mem destroyed" was logged before "vulkan memory freed". */
static void check_logged_order(const char *label)
{
    int cl = event_position("cl_mem destroyed"), vkm = event_position("vulkan memory freed");
    tap_ok(cl >= 0 && vkm >= 0 && cl < vkm, "%s: OpenCL destroyed the cl_mem (%d) before the Vulkan memory was freed (%d)",
           label, cl, vkm);
}

/* The cl_mem is destroyed before the Vulkan anchor drops, the drop happens
 * only after the last handle went, and bridge_settle() completes it. */
void check_release_order(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, clmem_bridge_path path)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, b, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_handle *h = NULL, *h2;
    clmem_status s = clmem_bridge_import_vk(b, &o.memory, 0, 65536, path, ka, f->queue, CL_MEM_READ_WRITE, &h);
    struct timespec t0;

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK, "order: import (%s)", s ? clmem_error_message() : "ok"))
        return;
    event_log_reset();
    log_cl_destruction(clmem_handle_mem(h), "cl_mem destroyed");
    h2 = clmem_handle_ref(h);
    clmem_handle_unref(h);
    tap_is_int(atomic_load(&o.released), 0, "order: a second reference keeps the Vulkan memory");
    s = clmem_bridge_finish(b, 0);
    tap_ok(s == CLMEM_ERR_IN_USE && atomic_load(&o.released) == 0 && event_position("cl_mem destroyed") < 0,
           "order: finish while a handle lives -> CLMEM_ERR_IN_USE, releasing nothing (%s: %s)",
           clmem_status_name(s), s ? clmem_error_message() : "-");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clmem_handle_unref(h2);
    tap_diag("order: the last unref took %.1f us (it only enqueues the teardown)", elapsed_ms(&t0) * 1e3);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "order: bridge_settle after the last handle -> CLMEM_OK in %.1f ms (%s)", elapsed_ms(&t0),
           s ? clmem_error_message() : "ok");
    tap_is_int(atomic_load(&o.released), 1, "order: after the last unref and bridge_settle the Vulkan memory is freed, once");
    check_logged_order("order");
    s = clmem_bridge_finish(b, 0);
    tap_ok(s == CLMEM_OK && atomic_load(&o.released) == 1,
           "order: a second finish has nothing left to do and frees nothing twice (%s)",
           s ? clmem_error_message() : "ok");
}

/* Work still queued on another queue, which a handle of the import was made
 * for, holds the memory past the last handle: the teardown waits for it. */
void check_pending_work(clmem_bridge *b, struct vkctx *vk, struct cl_fixture *f, cl_kernel k,
                        clmem_bridge_path path)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, b, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_handle *h = NULL, *ho = NULL;
    cl_int err = CL_SUCCESS, gate_err = CL_SUCCESS;
    cl_command_queue other = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    cl_event gate = clCreateUserEvent(f->context, &gate_err);
    cl_mem mem;
    size_t words = 65536 / 4;
    clmem_status s = clmem_bridge_import_vk(b, &o.memory, 0, 65536, path, ka, f->queue, CL_MEM_READ_WRITE, &h);
    clmem_status acquired;
    struct timespec t0;
    double ms;

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK && err == CL_SUCCESS && gate_err == CL_SUCCESS,
                "pending: import and a second queue (%s; queue %d, user event %d)", s ? clmem_error_message() : "ok",
                err, gate_err)) {
        clmem_handle_unref(h);
        if (gate_err == CL_SUCCESS)
            clReleaseEvent(gate);
        if (err == CL_SUCCESS)
            clReleaseCommandQueue(other);
        bridge_settle(b);
        return;
    }
    mem = clmem_handle_mem(h);
    s = clmem_bridge_handle_for_queue(h, other, &ho);
    tap_ok(s == CLMEM_OK && ho && clmem_handle_mem(ho) == mem && clmem_handle_queue(ho) == other &&
               clmem_handle_keepalive(ho) == clmem_handle_keepalive(h),
           "pending: handle_for_queue gives a handle of the same import (cl_mem, anchor) on the other queue (%s)",
           s ? clmem_error_message() : "ok");
    event_log_reset();
    log_cl_destruction(mem, "cl_mem destroyed");
    acquired = clmem_bridge_acquire(b, h, 0, NULL, NULL);
    clFinish(f->queue);
    clSetKernelArg(k, 0, sizeof mem, &mem);
    err = clEnqueueNDRangeKernel(other, k, 1, NULL, &words, NULL, 1, &gate, NULL);
    clFlush(other);
    tap_ok(acquired == CLMEM_OK && err == CL_SUCCESS,
           "pending: acquired, and a kernel waits on a user event on the other queue (%s; enqueue %d)",
           acquired ? clmem_error_message() : "ok", err);
    clmem_handle_unref(h);  /* not the last: ho lives */
    clmem_handle_unref(ho); /* the last handle; the kernel has not run */
    tap_is_int(atomic_load(&o.released), 0, "pending: the Vulkan memory outlives the last handle while work is queued");
    s = clmem_bridge_finish(b, 0);
    tap_ok(s == CLMEM_ERR_TIMEOUT && atomic_load(&o.released) == 0,
           "pending: finish(0) while the kernel waits -> CLMEM_ERR_TIMEOUT, nothing freed (%s: %s)",
           clmem_status_name(s), s ? clmem_error_message() : "-");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    s = clmem_bridge_finish(b, UINT64_C(50000000));
    ms = elapsed_ms(&t0);
    tap_ok(s == CLMEM_ERR_TIMEOUT && atomic_load(&o.released) == 0 && ms >= 40.0 && ms < 2050.0,
           "pending: finish(50 ms) while the kernel waits -> CLMEM_ERR_TIMEOUT after %.1f ms, nothing freed (%s)", ms,
           clmem_status_name(s));
    clSetUserEventStatus(gate, CL_COMPLETE);
    clFinish(other);
    if (atomic_load(&o.released))
        tap_diag("pending: the teardown ran on a driver callback before bridge_settle");
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "pending: bridge_settle once the kernel completed -> CLMEM_OK (%s)",
           s ? clmem_error_message() : "ok");
    tap_is_int(atomic_load(&o.released), 1, "pending: the Vulkan memory is freed, once, after the queued kernel completed");
    check_logged_order("pending");
    clReleaseEvent(gate);
    clReleaseCommandQueue(other);
}
