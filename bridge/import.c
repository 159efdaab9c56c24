/* Importing Vulkan memory into OpenCL: the fd paths
 * (cl_khr_external_memory) and the host-mapped path, one record and one
 * anchor per import, and the teardown order that keeps Vulkan memory alive
 * until OpenCL can no longer touch it.
 *
 * The order of each import is chosen so that failures leave nothing
 * behind: the record and anchor are allocated before anything is imported,
 * the driver is only ever given an fd the library owns (one it exported, or
 * a duplicate of the caller's), and each later step's undo is the step
 * before it in reverse. */
#include "config.h"
#include "cache.h"
#include "device-facts.h"
#include "clmem-bridge.h"
#include "export.h"
#include "fault.h"
#include "import.h"
#include "query.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- teardown */

/* How long the last release waits for OpenCL to destroy the cl_mem before
 * it leaves the Vulkan anchor to the destructor callback. NVIDIA destroys
 * asynchronously on a driver thread (measured: docs/driver-notes.md),
 * normally well inside this; only work that cannot finish by itself (a
 * kernel gated on a user event, a cl_mem retained elsewhere) reaches it. */
#define DESTROY_WAIT_MS 2000

static void import_free(struct bridge_import *rec)
{
    if (rec->caller_fd >= 0) /* import_fd took it on success; OpenCL is done with it now */
        close(rec->caller_fd);
    clmem__host_map_put(rec->host_map);
    clmem_keepalive_unref(rec->vk_keep_alive);
    for (unsigned i = 0; i < rec->more_vk_anchor_count; i++)
        clmem_keepalive_unref(rec->more_vk_anchors[i]);
    free(rec->more_vk_anchors);
    pthread_cond_destroy(&rec->destroyed_cond);
    pthread_mutex_destroy(&rec->lock);
    free(rec);
}

/* Runs when OpenCL destroys the imported cl_mem: after its last release
 * and after every command that used it completed. Only now may the Vulkan
 * memory go. May run on a driver thread. */
static void CL_CALLBACK on_parent_destroyed(cl_mem parent, void *user)
{
    struct bridge_import *rec = user;
    bool abandoned;

    (void)parent;
    pthread_mutex_lock(&rec->lock);
    abandoned = rec->teardown == IMPORT_ABANDONED;
    rec->teardown = IMPORT_DESTROYED;
    pthread_cond_signal(&rec->destroyed_cond);
    pthread_mutex_unlock(&rec->lock);
    if (abandoned) /* the releasing thread stopped waiting: finish here */
        import_free(rec);
}

/* After the last release of parent: wait for its destruction, so that in
 * the normal case the Vulkan anchor drops on the caller's thread before
 * clmem_handle_unref returns. */
static void wait_for_destruction(struct bridge_import *rec)
{
    struct timespec deadline;
    bool destroyed;

    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += DESTROY_WAIT_MS / 1000;
    deadline.tv_nsec += (long)(DESTROY_WAIT_MS % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&rec->lock);
    while (rec->teardown == IMPORT_LIVE)
        if (pthread_cond_timedwait(&rec->destroyed_cond, &rec->lock, &deadline) != 0)
            break;
    destroyed = rec->teardown == IMPORT_DESTROYED;
    if (!destroyed)
        rec->teardown = IMPORT_ABANDONED;
    pthread_mutex_unlock(&rec->lock);
    if (destroyed)
        import_free(rec);
}

/* The anchor's release: the last handle of this import is gone. */
void clmem__import_anchor_release(void *user)
{
    struct bridge_import *rec = user;
    cl_command_queue queue = rec->queue;

    clmem__cache_forget(rec);
    if (!rec->parent) { /* the import failed before OpenCL held anything */
        import_free(rec);
        return;
    }
    /* Hand the memory back to Vulkan if the user left OpenCL owning it. An
     * acquired external cl_mem is never destroyed on NVIDIA, so a failed
     * release is tried once more once the queue is idle. */
    if (atomic_load(&rec->acquired) && clmem__handoff_release(rec, 0, NULL, NULL) != CLMEM_OK) {
        clFinish(queue);
        clmem__handoff_release(rec, 0, NULL, NULL);
    }
    if (rec->cl_map_ptr) /* host-mapped: OpenCL's own map is undone before release */
        clEnqueueUnmapMemObject(queue, rec->parent, rec->cl_map_ptr, 0, NULL, NULL);
    /* Commands on this queue finish now; work on other queues delays the
     * destruction until it completes. */
    clFinish(queue);
    if (rec->view)
        clReleaseMemObject(rec->view);
    clReleaseMemObject(rec->parent);
    if (rec->destructor_set)
        wait_for_destruction(rec);
    else /* the import failed before the callback was set */
        import_free(rec);
    clReleaseCommandQueue(queue);
}

clmem_status clmem__import_hold_anchor(struct bridge_import *rec, clmem_keepalive *vk_keep_alive)
{
    clmem_status s = CLMEM_OK;
    bool held;

    if (!vk_keep_alive || vk_keep_alive == rec->vk_keep_alive)
        return CLMEM_OK;
    pthread_mutex_lock(&rec->lock);
    held = false;
    for (unsigned i = 0; i < rec->more_vk_anchor_count && !held; i++)
        held = rec->more_vk_anchors[i] == vk_keep_alive;
    if (!held) {
        clmem_keepalive **grown =
            realloc(rec->more_vk_anchors, (rec->more_vk_anchor_count + 1) * sizeof *rec->more_vk_anchors);
        if (grown) {
            rec->more_vk_anchors = grown;
            rec->more_vk_anchors[rec->more_vk_anchor_count++] = clmem_keepalive_ref(vk_keep_alive);
        } else
            s = clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0,
                                "Holding the cached import's second Vulkan anchor failed.");
    }
    pthread_mutex_unlock(&rec->lock);
    return s;
}

struct bridge_import *clmem__import_of_handle(const clmem_handle *h)
{
    return clmem_keepalive_user_data(clmem_handle_keep_alive(h), clmem__import_anchor_release);
}

/* ------------------------------------------------------------ validation */

#define HOST_PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)

/* What every import needs checked before anything is touched. */
struct import_target {
    cl_device_id device;
    const struct cl_device_facts *facts;
};

static clmem_status check_range(uint64_t allocation_size, uint64_t offset, uint64_t size)
{
    if (allocation_size == 0 || size == 0)
        return clmem_error_set(CLMEM_ERR_ZERO_SIZE, CLMEM_API_NONE, NULL, 0, "The %s is zero.",
                               size == 0 ? "size" : "allocation size");
    if (offset > allocation_size || size > allocation_size - offset)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The range [%llu, %llu + %llu) reaches beyond the %llu-byte allocation.",
                               (unsigned long long)offset, (unsigned long long)offset, (unsigned long long)size,
                               (unsigned long long)allocation_size);
    return CLMEM_OK;
}

static clmem_status check_target(cl_context context, cl_command_queue queue, cl_mem_flags flags, uint64_t offset,
                                 struct import_target *t)
{
    cl_context queue_context = NULL;
    cl_int err;

    if (flags & HOST_PTR_FLAGS)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "flags 0x%llx hold a host-pointer flag; the bridge chooses how memory is shared.",
                               (unsigned long long)flags);
    err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof queue_context, &queue_context, NULL);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", err,
                               "queue is not a valid command queue.");
    if (queue_context != context)
        return clmem_error_set(CLMEM_ERR_CONTEXT_MISMATCH, CLMEM_API_NONE, NULL, 0,
                               "The queue belongs to context %p, not to the given context %p.",
                               (void *)queue_context, (void *)context);
    err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof t->device, &t->device, NULL);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetCommandQueueInfo(CL_QUEUE_DEVICE)", err,
                               "Finding the queue's device failed.");
    t->facts = clmem__cl_device_facts(t->device);
    if (!t->facts)
        return clmem_error_status();
    if (offset % t->facts->base_align_bytes != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "offset %llu is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes), which "
                               "sub-buffer origins must be.",
                               (unsigned long long)offset, t->facts->base_align_bytes);
    return CLMEM_OK;
}

static bool cl_imports(const struct cl_device_facts *facts, clmem_path path)
{
    return path == CLMEM_PATH_DMA_BUF ? facts->imports_dma_buf : facts->imports_opaque_fd;
}

/* CLMEM_OK when the queue's device imports fds of `path`; else the error
 * naming the extension it lacks. */
static clmem_status check_cl_imports(const struct import_target *t, clmem_path path)
{
    char dev_name[256], plat_name[256];

    if (cl_imports(t->facts, path))
        return CLMEM_OK;
    clmem__cl_device_names(t->device, dev_name, sizeof dev_name, plat_name, sizeof plat_name);
    return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0, "%s not offered by %s (%s).",
                           path == CLMEM_PATH_DMA_BUF ? "cl_khr_external_memory_dma_buf"
                                                      : "cl_khr_external_memory_opaque_fd",
                           plat_name, dev_name);
}

static bool host_mappable(const clmem_vk_memory *m)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    return (m->property_flags & want) == want;
}

/* Resolve CLMEM_PATH_BEST, and check a named path is possible at all. */
static clmem_status choose_path(const clmem_vk_memory *m, const struct import_target *t, clmem_path asked,
                                clmem_path *chosen)
{
    char dev_name[256], plat_name[256];
    cl_device_id device = t->device;
    bool fd_ok = (m->export_types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT) &&
                 cl_imports(t->facts, CLMEM_PATH_OPAQUE_FD);
    bool dma_ok = (m->export_types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT) &&
                  cl_imports(t->facts, CLMEM_PATH_DMA_BUF);

    switch (asked) {
    case CLMEM_PATH_BEST:
        *chosen = fd_ok ? CLMEM_PATH_OPAQUE_FD : dma_ok ? CLMEM_PATH_DMA_BUF : CLMEM_PATH_HOST_MAPPED;
        if (*chosen != CLMEM_PATH_HOST_MAPPED || host_mappable(m))
            return CLMEM_OK;
        clmem__cl_device_names(device, dev_name, sizeof dev_name, plat_name, sizeof plat_name);
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                               "No path fits: the memory was exported as 0x%x and %s (%s) imports neither it as "
                               "opaque fd nor as dma-buf, and it is not HOST_VISIBLE | HOST_COHERENT.",
                               (unsigned)m->export_types, dev_name, plat_name);
    case CLMEM_PATH_OPAQUE_FD:
    case CLMEM_PATH_DMA_BUF: {
        bool dma = asked == CLMEM_PATH_DMA_BUF;
        VkExternalMemoryHandleTypeFlags bit =
            dma ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        *chosen = asked;
        if (!(m->export_types & bit))
            return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                                   "The memory was not allocated exportable as %s (export_types 0x%x).",
                                   clmem_path_name(asked), (unsigned)m->export_types);
        return check_cl_imports(t, asked);
    }
    case CLMEM_PATH_HOST_MAPPED:
        *chosen = asked;
        if (!host_mappable(m))
            return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                                   "The host-mapped path needs HOST_VISIBLE | HOST_COHERENT memory; its property "
                                   "flags are 0x%x.",
                                   (unsigned)m->property_flags);
        return CLMEM_OK;
    }
    return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0, "Unknown path %d.", (int)asked);
}

/* ------------------------------------------------------ building imports */

/* The record and anchor, allocated before anything is imported so that an
 * allocation failure never strands an fd the driver already owns. */
static clmem_status import_begin(cl_platform_id platform, clmem_path path, struct bridge_import **rec_out,
                                 clmem_keepalive **anchor_out)
{
    const struct clext *ext = clmem__clext_for_platform(platform);
    struct bridge_import *rec;
    clmem_keepalive *anchor;

    if (!ext)
        return clmem_error_status();
    rec = FAULT("import_record_alloc") ? NULL : calloc(1, sizeof *rec);
    if (!rec)
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, NULL, 0, "Allocating an import record failed.");
    anchor = clmem_keepalive_new(clmem__import_anchor_release, rec);
    if (!anchor) {
        free(rec);
        return CLMEM_ERR_NO_MEMORY;
    }
    rec->path = path;
    rec->ext = ext;
    rec->parent_size = 0;
    rec->caller_fd = -1;
    rec->teardown = IMPORT_LIVE;
    pthread_mutex_init(&rec->lock, NULL);
    pthread_cond_init(&rec->destroyed_cond, NULL);
    atomic_init(&rec->acquired, false);
    *rec_out = rec;
    *anchor_out = anchor;
    return CLMEM_OK;
}

/* clCreateBufferWithProperties on an fd. On success the fd is the driver's. */
static clmem_status import_fd_buffer(cl_context context, cl_device_id device, int fd, clmem_path path,
                                     uint64_t allocation_size, cl_mem_flags flags, cl_mem *parent_out)
{
    cl_mem_properties props[] = {
        path == CLMEM_PATH_DMA_BUF ? CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR : CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
        (cl_mem_properties)fd,
        CLMEM_CL_MEM_DEVICE_HANDLE_LIST,
        (cl_mem_properties)(uintptr_t)device,
        CLMEM_CL_DEVICE_HANDLE_LIST_END,
        0,
    };
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem parent = FAULT("clCreateBufferWithProperties")
                        ? NULL
                        : clCreateBufferWithProperties(context, props, flags, (size_t)allocation_size, NULL, &err);

    /* Any code but CL_SUCCESS is failure: NVIDIA returns 999 for a bad fd. */
    if (err != CL_SUCCESS || !parent) {
        if (parent)
            clReleaseMemObject(parent);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateBufferWithProperties", err,
                               "Importing fd %d (%s, %llu bytes) failed.", fd,
                               clmem_path_name(path), (unsigned long long)allocation_size);
    }
    *parent_out = parent;
    return CLMEM_OK;
}

/* clCreateBuffer(CL_MEM_USE_HOST_PTR) on the import's range of the mapping,
 * then OpenCL's own map of it: CL_MEM_USE_HOST_PTR promises the host and
 * device views agree only at map/unmap, so the host (Vulkan) side starts as
 * the owner and acquire is an unmap. The buffer covers the range alone, not
 * the allocation: on a device that copies (NVIDIA), a map of the whole
 * allocation would copy its stale view over ranges other imports handed
 * back meanwhile (found by t/bridge-threads on the H200). */
static clmem_status import_host_buffer(struct bridge_import *rec, cl_context context, cl_command_queue queue,
                                       const clmem_vk_memory *m, uint64_t offset, uint64_t size, cl_mem_flags flags)
{
    cl_int err = CL_OUT_OF_RESOURCES;
    clmem_status s = clmem__host_map_get(m->device, m->memory, &rec->host_map, &rec->host_base);

    if (s != CLMEM_OK)
        return s;
    rec->parent = FAULT("clCreateBuffer") ? NULL
                                          : clCreateBuffer(context, flags | CL_MEM_USE_HOST_PTR, (size_t)size,
                                                           (char *)rec->host_base + offset, &err);
    if (err != CL_SUCCESS || !rec->parent) {
        if (rec->parent)
            clReleaseMemObject(rec->parent);
        rec->parent = NULL;
        clmem__host_map_put(rec->host_map);
        rec->host_map = NULL;
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", err,
                               "Wrapping the mapped Vulkan memory failed.");
    }
    err = CL_OUT_OF_RESOURCES;
    rec->cl_map_ptr = FAULT("clEnqueueMapBuffer")
                          ? NULL
                          : clEnqueueMapBuffer(queue, rec->parent, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                               (size_t)size, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS || !rec->cl_map_ptr) {
        rec->cl_map_ptr = NULL;
        clReleaseMemObject(rec->parent);
        rec->parent = NULL;
        clmem__host_map_put(rec->host_map);
        rec->host_map = NULL;
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueMapBuffer", err,
                               "Mapping the host-mapped buffer for the host side failed.");
    }
    return CLMEM_OK;
}

/*
 * The steps after OpenCL holds rec->parent: the sub-buffer, the destructor
 * callback that chains the Vulkan anchor, and the handle. On failure the
 * anchor's release undoes everything (including the parent, which closes an
 * imported fd: see "fd ownership" in clmem-bridge.h).
 */
static clmem_status import_finish(struct bridge_import *rec, clmem_keepalive *anchor, cl_command_queue queue,
                                  uint64_t offset, uint64_t size, uint64_t allocation_size,
                                  clmem_keepalive *vk_keep_alive, clmem_handle **out)
{
    cl_int err = CL_OUT_OF_RESOURCES;
    clmem_status s;

    rec->queue = queue;
    clRetainCommandQueue(queue);
    if (offset != 0 || size != allocation_size) {
        cl_buffer_region region = {(size_t)offset, (size_t)size};
        rec->view = FAULT("clCreateSubBuffer")
                        ? NULL
                        : clCreateSubBuffer(rec->parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        if (err != CL_SUCCESS || !rec->view) {
            if (rec->view)
                clReleaseMemObject(rec->view);
            rec->view = NULL;
            s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateSubBuffer", err,
                                "Making the sub-buffer [%llu, +%llu) failed.", (unsigned long long)offset,
                                (unsigned long long)size);
            goto fail;
        }
    }
    err = FAULT("clSetMemObjectDestructorCallback")
              ? CL_OUT_OF_HOST_MEMORY
              : clSetMemObjectDestructorCallback(rec->parent, on_parent_destroyed, rec);
    if (err != CL_SUCCESS) {
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clSetMemObjectDestructorCallback", err,
                            "Chaining the Vulkan anchor to the cl_mem's destruction failed.");
        goto fail;
    }
    /* From here on the destructor callback owns rec and the Vulkan reference. */
    rec->destructor_set = true;
    rec->vk_keep_alive = clmem_keepalive_ref(vk_keep_alive);
    s = clmem_handle_wrap(rec->view ? rec->view : rec->parent, queue, 0, anchor, out);
    clmem_keepalive_unref(anchor); /* the handle holds it now, or it tears down */
    return s;

fail:
    clmem_keepalive_unref(anchor); /* runs clmem__import_anchor_release: view, parent, queue */
    return s;
}

/* -------------------------------------------------------------- public */

static clmem_status check_out_and_pointers(clmem_handle **out, cl_context context, cl_command_queue queue)
{
    if (out)
        *out = NULL;
    if (!out || !context || !queue)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !out ? "out" : !context ? "context" : "queue");
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_import_vk(const clmem_vk_memory *memory, VkDeviceSize offset,
                                                 VkDeviceSize size, clmem_path path, clmem_keepalive *vk_keep_alive,
                                                 cl_context context, cl_command_queue queue, cl_mem_flags flags,
                                                 clmem_handle **out)
{
    struct import_target t;
    struct bridge_import *rec;
    clmem_keepalive *anchor;
    clmem_path chosen = CLMEM_PATH_BEST;
    clmem_status s = check_out_and_pointers(out, context, queue);

    if (s != CLMEM_OK)
        return s;
    if (!memory || !memory->device || !memory->memory)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !memory ? "memory" : !memory->device ? "memory->device" : "memory->memory");
    if ((s = check_range(memory->allocation_size, offset, size)) != CLMEM_OK)
        return s;
    /* A live import of the same range needs no driver call, and no repeat of
     * the checks it passed (cache.h says what the key holds). */
    struct cache_key key = {memory->device, memory->memory, offset, size, flags, context, path};
    bool hit = false;
    s = clmem__cache_lookup(&key, queue, vk_keep_alive, out, &hit);
    if (hit || s != CLMEM_OK)
        return s;
    if ((s = check_target(context, queue, flags, offset, &t)) != CLMEM_OK ||
        (s = choose_path(memory, &t, path, &chosen)) != CLMEM_OK)
        return s;
    if ((s = import_begin(t.facts->platform, chosen, &rec, &anchor)) != CLMEM_OK)
        return s;

    if (chosen == CLMEM_PATH_HOST_MAPPED) {
        s = import_host_buffer(rec, context, queue, memory, offset, size, flags);
    } else {
        VkExternalMemoryHandleTypeFlagBits type = chosen == CLMEM_PATH_DMA_BUF
                                                      ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                      : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                     .memory = memory->memory,
                                     .handleType = type};
        PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(memory->device, "vkGetMemoryFdKHR");
        int fd = -1;
        VkResult r;

        if (!get_fd) {
            s = clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                                "vkGetMemoryFdKHR is not available: enable VK_KHR_external_memory_fd on the "
                                "VkDevice.");
        } else if ((r = FAULT("vkGetMemoryFdKHR") ? VK_ERROR_TOO_MANY_OBJECTS
                                                   : get_fd(memory->device, &info, &fd)) != VK_SUCCESS) {
            s = clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkGetMemoryFdKHR", r,
                                "Exporting the memory as %s failed.", clmem_path_name(chosen));
        } else {
            s = import_fd_buffer(context, t.device, fd, chosen, memory->allocation_size, flags, &rec->parent);
            if (s != CLMEM_OK)
                close(fd); /* the fd we exported is ours until the driver takes it */
        }
    }
    if (s != CLMEM_OK) {
        clmem_keepalive_unref(anchor); /* nothing imported: frees rec */
        return s;
    }
    if (chosen == CLMEM_PATH_HOST_MAPPED) { /* the buffer is the range itself: no sub-buffer */
        rec->parent_size = (size_t)size;
        s = import_finish(rec, anchor, queue, 0, size, size, vk_keep_alive, out);
    } else {
        rec->parent_size = (size_t)memory->allocation_size;
        s = import_finish(rec, anchor, queue, offset, size, memory->allocation_size, vk_keep_alive, out);
    }
    if (s == CLMEM_OK)
        clmem__cache_insert(&key, rec, clmem_handle_keep_alive(*out));
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_import_fd(int fd, clmem_path path, uint64_t allocation_size, uint64_t offset,
                                                 uint64_t size, clmem_keepalive *keep_alive, cl_context context,
                                                 cl_command_queue queue, cl_mem_flags flags, clmem_handle **out)
{
    struct import_target t;
    struct bridge_import *rec;
    clmem_keepalive *anchor;
    int dup_fd;
    clmem_status s = check_out_and_pointers(out, context, queue);

    if (s != CLMEM_OK)
        return s;
    if (fd < 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0, "fd %d is negative.", fd);
    if (path != CLMEM_PATH_OPAQUE_FD && path != CLMEM_PATH_DMA_BUF)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "clmem_bridge_import_fd takes CLMEM_PATH_OPAQUE_FD or CLMEM_PATH_DMA_BUF, not %s.",
                               clmem_path_name(path));
    if ((s = check_range(allocation_size, offset, size)) != CLMEM_OK ||
        (s = check_target(context, queue, flags, offset, &t)) != CLMEM_OK)
        return s;
    if ((s = check_cl_imports(&t, path)) != CLMEM_OK)
        return s;
    if ((s = import_begin(t.facts->platform, path, &rec, &anchor)) != CLMEM_OK)
        return s;
    /* The driver is given a duplicate: if a step after the driver took it
     * fails, releasing the cl_mem closes the duplicate, and the caller's fd
     * is untouched on every error. On success the caller's fd is kept until
     * OpenCL destroyed the cl_mem, then closed: the caller sees exactly the
     * extension's rule (open while the cl_mem lives, never theirs again). */
    dup_fd = FAULT("fcntl(F_DUPFD_CLOEXEC)") ? (errno = EMFILE, -1) : fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
        s = clmem_error_set(errno == EBADF ? CLMEM_ERR_INVALID_VALUE : CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM,
                            "fcntl(F_DUPFD_CLOEXEC)", errno, "Duplicating fd %d failed; it is untouched.", fd);
        clmem_keepalive_unref(anchor);
        return s;
    }
    s = import_fd_buffer(context, t.device, dup_fd, path, allocation_size, flags, &rec->parent);
    if (s != CLMEM_OK) {
        close(dup_fd); /* the driver did not take it; the caller's fd is untouched */
        clmem_keepalive_unref(anchor);
        return s;
    }
    rec->parent_size = (size_t)allocation_size;
    s = import_finish(rec, anchor, queue, offset, size, allocation_size, keep_alive, out);
    if (s == CLMEM_OK)
        rec->caller_fd = fd; /* the handle keeps rec alive: no one else sees it yet */
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_handle_path(const clmem_handle *h, clmem_path *path_out)
{
    struct bridge_import *rec = clmem__import_of_handle(h);

    if (!path_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "path_out is NULL.");
    if (!rec)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The handle did not come from clmem-bridge.");
    *path_out = rec->path;
    return CLMEM_OK;
}
