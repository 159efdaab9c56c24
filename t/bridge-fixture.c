#include "bridge-fixture.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void bridge_open_vulkan(struct vkctx *vk)
{
    if (!vkctx_open(vk, -1))
        tap_skip_all("no usable Vulkan device: %s", vk->error);
}

void cl_fixture_open_paired(struct cl_fixture *f, struct vkctx *vk)
{
    cl_platform_id platform;
    cl_device_id device;

    if (clmem_bridge_pair(vk->physical_device, &platform, &device) == CLMEM_OK)
        cl_fixture_open_on(f, platform, device);
    else
        cl_fixture_open(f);
}

#define EVENTS_MAX 64
static const char *events[EVENTS_MAX];
static atomic_int event_count;

void event_log(const char *what)
{
    int i = atomic_fetch_add(&event_count, 1);
    if (i < EVENTS_MAX)
        events[i] = what;
}

int event_position(const char *what)
{
    int n = atomic_load(&event_count);
    for (int i = 0; i < n && i < EVENTS_MAX; i++)
        if (strcmp(events[i], what) == 0)
            return i;
    return -1;
}

void event_log_reset(void)
{
    atomic_store(&event_count, 0);
}

static void vk_owned_release(void *user)
{
    struct vk_owned *o = user;
    clmem_bridge_vk_buffer_destroy(o->buffer, &o->memory);
    atomic_fetch_add(&o->released, 1);
    event_log("vulkan memory freed");
}

clmem_keepalive *vk_owned_new(struct vk_owned *o, struct vkctx *vk, VkDeviceSize size,
                              VkMemoryPropertyFlags props, VkExternalMemoryHandleTypeFlags export_types)
{
    clmem_keepalive *ka;
    clmem_status s;

    memset(o, 0, sizeof *o);
    o->vk = vk;
    atomic_init(&o->released, 0);
    s = clmem_bridge_vk_buffer_create(vk->physical_device, vk->device, size,
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                      props, export_types, &o->buffer, &o->memory);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_buffer_create(%llu) failed: %s", (unsigned long long)size, clmem_error_message());
    ka = clmem_keepalive_new(vk_owned_release, o);
    if (!ka)
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

VkMemoryPropertyFlags path_memory_props(clmem_path path)
{
    /* BEST gets memory every path can take: host-visible and exportable. */
    return path == CLMEM_PATH_HOST_MAPPED || path == CLMEM_PATH_BEST
               ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
               : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
}

VkExternalMemoryHandleTypeFlags path_export_types(const struct vkctx *vk, clmem_path path)
{
    switch (path) {
    case CLMEM_PATH_OPAQUE_FD: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    case CLMEM_PATH_DMA_BUF: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
    case CLMEM_PATH_BEST: return vk->has_memory_fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0;
    case CLMEM_PATH_HOST_MAPPED: break;
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
static bool vulkan_sees(struct vkctx *vk, struct vk_owned *o, VkDeviceSize alloc_size, VkDeviceSize offset,
                        VkDeviceSize size, uint32_t value, char *why, size_t why_len)
{
    struct vk_owned staging;
    clmem_keepalive *ka = vk_owned_new(&staging, vk, alloc_size,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    uint32_t *words = NULL;
    bool good = true;
    VkResult r = vkctx_copy(vk, o->buffer, staging.buffer, alloc_size);

    if (r == VK_SUCCESS)
        r = vkMapMemory(vk->device, staging.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&words);
    if (r != VK_SUCCESS) {
        snprintf(why, why_len, "reading back through Vulkan failed: VkResult %d", r);
        good = false;
    }
    for (VkDeviceSize i = 0; good && i < alloc_size / 4; i++) {
        bool inside = i * 4 >= offset && i * 4 < offset + size;
        uint32_t want = inside ? value * 3u + 1u : value;
        if (words[i] != want) {
            snprintf(why, why_len, "word %llu is 0x%08x, want 0x%08x (%s the range)", (unsigned long long)i,
                     words[i], want, inside ? "inside" : "outside");
            good = false;
        }
    }
    if (words)
        vkUnmapMemory(vk->device, staging.memory.memory);
    clmem_keepalive_unref(ka);
    return good;
}

bool round_trip(struct vkctx *vk, struct cl_fixture *f, cl_kernel k, clmem_path path, VkDeviceSize alloc_size,
                VkDeviceSize offset, VkDeviceSize size, const char *label)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, alloc_size, path_memory_props(path), path_export_types(vk, path));
    const uint32_t value = 0x01020304u + (uint32_t)(alloc_size >> 10);
    clmem_handle *h = NULL;
    char why[256] = "";
    bool good = false;
    cl_event done = NULL;
    cl_int err;
    VkResult r = vkctx_fill(vk, o.buffer, 0, VK_WHOLE_SIZE, value);
    clmem_status s = r != VK_SUCCESS ? CLMEM_ERR_VULKAN
                                     : clmem_bridge_import_vk(&o.memory, offset, size, path, ka, f->context,
                                                              f->queue, CL_MEM_READ_WRITE, &h);

    clmem_keepalive_unref(ka); /* the import holds its own reference */
    if (r != VK_SUCCESS)
        snprintf(why, sizeof why, "vkCmdFillBuffer submission failed: %d", r);
    else if (s != CLMEM_OK)
        snprintf(why, sizeof why, "import failed: %s", clmem_error_message());
    else if ((s = clmem_bridge_acquire(h, 0, NULL, NULL)) != CLMEM_OK)
        snprintf(why, sizeof why, "acquire failed: %s", clmem_error_message());
    else if ((err = run_xform(f, k, clmem_handle_mem(h), (size_t)(size / 4))) != CL_SUCCESS)
        snprintf(why, sizeof why, "kernel enqueue failed: %d", err);
    else if ((s = clmem_bridge_release(h, 0, NULL, &done)) != CLMEM_OK)
        snprintf(why, sizeof why, "release failed: %s", clmem_error_message());
    else if ((err = clWaitForEvents(1, &done)) != CL_SUCCESS)
        snprintf(why, sizeof why, "waiting for the release failed: %d", err);
    else
        good = vulkan_sees(vk, &o, alloc_size, offset, size, value, why, sizeof why);
    if (done)
        clReleaseEvent(done);
    if (h && atomic_load(&o.released) != 0) {
        snprintf(why, sizeof why, "the Vulkan memory was freed while a handle was alive");
        good = false;
    }
    clmem_handle_unref(h);
    if (h && atomic_load(&o.released) != 1) {
        snprintf(why, sizeof why, "the Vulkan anchor ran %d times after the last handle, want once",
                 atomic_load(&o.released));
        good = false;
    }
    if (!h) /* the import failed: the anchor still has to free the memory exactly once */
        good = good && atomic_load(&o.released) == 1;
    tap_ok(good, "%s: %s round trip, %llu bytes at offset %llu of %llu%s%s", label, clmem_path_name(path),
           (unsigned long long)size, (unsigned long long)offset, (unsigned long long)alloc_size, good ? "" : ": ",
           why);
    return good;
}

/* The cl_mem is destroyed before the Vulkan anchor drops, and the drop
 * happens when the last handle goes. */
void check_release_order(struct vkctx *vk, struct cl_fixture *f, clmem_path path)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_handle *h = NULL, *h2;
    clmem_status s = clmem_bridge_import_vk(&o.memory, 0, 65536, path, ka, f->context,
                                            f->queue, CL_MEM_READ_WRITE, &h);

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK, "order: import (%s)", s ? clmem_error_message() : "ok"))
        return;
    event_log_reset();
    log_cl_destruction(clmem_handle_mem(h), "cl_mem destroyed");
    h2 = clmem_handle_ref(h);
    clmem_handle_unref(h);
    tap_is_int(atomic_load(&o.released), 0, "order: a second reference keeps the Vulkan memory");
    {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        clmem_handle_unref(h2);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tap_diag("order: the last unref took %.1f us (waiting for OpenCL to destroy the cl_mem)",
                 (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
    }
    tap_is_int(atomic_load(&o.released), 1, "order: the last unref frees the Vulkan memory, once");
    tap_ok(event_position("cl_mem destroyed") >= 0 &&
               event_position("cl_mem destroyed") < event_position("vulkan memory freed"),
           "order: OpenCL destroyed the cl_mem (%d) before the Vulkan memory was freed (%d)",
           event_position("cl_mem destroyed"), event_position("vulkan memory freed"));
}

/* Work still queued on another queue holds the memory past the last
 * handle: the Vulkan anchor waits for it. */
void check_pending_work(struct vkctx *vk, struct cl_fixture *f, cl_kernel k, clmem_path path)
{
    struct vk_owned o;
    clmem_keepalive *ka = vk_owned_new(&o, vk, 65536, path_memory_props(path), path_export_types(vk, path));
    clmem_handle *h = NULL;
    cl_int err;
    cl_command_queue other = clCreateCommandQueueWithProperties(f->context, f->device, NULL, &err);
    cl_event gate = clCreateUserEvent(f->context, &err);
    cl_mem mem;
    size_t words = 65536 / 4;
    clmem_status s = clmem_bridge_import_vk(&o.memory, 0, 65536, path, ka, f->context,
                                            f->queue, CL_MEM_READ_WRITE, &h);
    bool freed = false;

    clmem_keepalive_unref(ka);
    if (!tap_ok(s == CLMEM_OK && err == CL_SUCCESS, "pending: import and a second queue (%s)",
                s ? clmem_error_message() : "ok"))
        return;
    mem = clmem_handle_mem(h);
    clmem_bridge_acquire(h, 0, NULL, NULL);
    clFinish(f->queue);
    clSetKernelArg(k, 0, sizeof mem, &mem);
    err = clEnqueueNDRangeKernel(other, k, 1, NULL, &words, NULL, 1, &gate, NULL);
    clFlush(other);
    tap_is_int(err, CL_SUCCESS, "pending: a kernel waits on a user event on the other queue");
    clmem_handle_unref(h); /* the last handle; the kernel has not run */
    tap_is_int(atomic_load(&o.released), 0, "pending: the Vulkan memory outlives the last handle while work is queued");
    clSetUserEventStatus(gate, CL_COMPLETE);
    clFinish(other);
    /* The driver destroys the cl_mem once the kernel is done, possibly on
     * its own thread; give it up to five seconds. */
    for (int i = 0; i < 500 && !freed; i++) {
        freed = atomic_load(&o.released) == 1;
        if (!freed)
            usleep(10000);
    }
    tap_ok(freed, "pending: the Vulkan memory is freed once the queued kernel completed");
    clReleaseEvent(gate);
    clReleaseCommandQueue(other);
}

