/* SPDX-License-Identifier: MIT */
/* The host-mapped path: Vulkan's host-visible, host-coherent memory is
 * mapped (vkMapMemory, shared per allocation: host-map.c) and wrapped with
 * CL_MEM_USE_HOST_PTR. That flag promises the host and device views agree
 * only at map and unmap, so the host (Vulkan) side starts as the owner with
 * OpenCL's own map of the buffer, acquire is an unmap and release a map.
 * Zero-copy on CPU and host-unified devices; a copy at each handoff
 * elsewhere (NVIDIA). */
#include "config.h"
#include "error-private.h"
#include "fault.h"
#include "import-record.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Is the last byte of [base, base + bytes) in mapped address space?
 * mincore() on its page answers ENOMEM when the page is not mapped (and
 * asks the kernel nothing else; msync, which also walks the mappings, is
 * a read of the whole range to valgrind). The one check of
 * allocation_size the path can make on memory the application allocated:
 * a size larger than the allocation reaches past Vulkan's mapping of it,
 * into unmapped pages, unless other mappings follow it (lavapipe's memory
 * lies in the C library's heap, which ends somewhere after it; under
 * AddressSanitizer the allocator's reserved space goes on for terabytes). */
static bool end_mapped(const void *base, uint64_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    unsigned char resident;

    if (bytes == 0 || bytes - 1 > (uint64_t)(UINTPTR_MAX - (uintptr_t)base))
        return false;
    return mincore((void *)(((uintptr_t)base + (uintptr_t)(bytes - 1)) & ~(page - 1)), 1, &resident) == 0 ||
           errno != ENOMEM;
}

/* The buffer covers the range alone, not the allocation: on a device that
 * copies (NVIDIA), a map of the whole allocation would copy its stale view
 * over ranges that other imports handed back meanwhile (found by
 * t/bridge/bridge-threads on the H200). */
static clmem_status import_host(struct bridge_import *rec, const struct import_request *req)
{
    clmem_bridge *b = rec->bridge;
    cl_int err = CL_OUT_OF_RESOURCES;
    clmem_status s;

    if (req->image && req->image->optimal) /* image.c never asks: an optimal layout is not bytes to share */
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The host-mapped path shares bytes; an optimal-tiling image needs an fd path.");
    if ((s = clmem__host_map_get(&b->maps, req->memory->memory, &rec->host_map, &rec->host_base)) != CLMEM_OK)
        return s;
    if (!end_mapped(rec->host_base, req->allocation_size)) {
        s = clmem__fail(CLMEM_ERR_INVALID_VALUE,
                        "memory->allocation_size is %llu bytes, but Vulkan's mapping of this memory ends "
                        "before that: the allocation is smaller.",
                        (unsigned long long)req->allocation_size);
        goto fail;
    }
    rec->parent = FAULT("clCreateBuffer")
                      ? NULL
                      : clCreateBuffer(b->context, req->flags | CL_MEM_USE_HOST_PTR, (size_t)req->size,
                                       (char *)rec->host_base + req->offset, &err);
    if (err != CL_SUCCESS || !rec->parent) {
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateBuffer(CL_MEM_USE_HOST_PTR)", err,
                            "Wrapping the mapped Vulkan memory failed.");
        goto fail;
    }
    rec->parent_size = (size_t)req->size;
    err = CL_OUT_OF_RESOURCES;
    rec->cl_map_ptr = FAULT("clEnqueueMapBuffer")
                          ? NULL
                          : clEnqueueMapBuffer(req->queue, rec->parent, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                               (size_t)req->size, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS || !rec->cl_map_ptr) {
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueMapBuffer", err,
                            "Mapping the host-mapped buffer for the host side failed.");
        goto fail;
    }
    return CLMEM_OK;

fail:
    rec->cl_map_ptr = NULL;
    if (rec->parent)
        clReleaseMemObject(rec->parent);
    rec->parent = NULL;
    clmem__host_map_put(rec->host_map);
    rec->host_map = NULL;
    return s;
}

/* Unmap OpenCL's map, after `wait` and after the map itself: a release's
 * map is enqueued without blocking, maybe on another queue, and an unmap
 * that ran first would leave the map to write into freed state (PoCL
 * crashed so in t/bridge/bridge-lifetime). */
static cl_int unmap_after_map(struct bridge_import *rec, cl_command_queue queue, cl_uint n, const cl_event *wait,
                              cl_event *event_out)
{
    cl_event *list = NULL;
    const cl_event *all = wait;
    cl_int err;

    if (rec->map_event) { /* the caller's wait list, and the map */
        list = malloc((n + 1) * sizeof *list);
        if (!list)
            return CL_OUT_OF_HOST_MEMORY;
        for (cl_uint i = 0; i < n; i++)
            list[i] = wait[i];
        list[n++] = rec->map_event;
        all = list;
    }
    err = FAULT("clEnqueueUnmapMemObject") ? CL_OUT_OF_RESOURCES
                                           : clEnqueueUnmapMemObject(queue, rec->parent, rec->cl_map_ptr, n, all,
                                                                     event_out);
    free(list);
    if (err == CL_SUCCESS) {
        rec->cl_map_ptr = NULL;
        if (rec->map_event)
            clReleaseEvent(rec->map_event);
        rec->map_event = NULL;
    }
    return err;
}

/* One buffer per command (the ops' `batches` is false: handoff.c gives
 * these one record at a time). */
static cl_int acquire(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call)
{
    *call = "clEnqueueUnmapMemObject";
    if (count != 1)
        return CL_INVALID_VALUE;
    return unmap_after_map(recs[0], queue, n, wait, event_out);
}

static cl_int release(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call)
{
    struct bridge_import *rec = recs[0];
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_event ev = NULL;
    void *p;

    *call = "clEnqueueMapBuffer";
    if (count != 1)
        return CL_INVALID_VALUE;
    p = FAULT("clEnqueueMapBuffer") ? NULL
                                    : clEnqueueMapBuffer(queue, rec->parent, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                         rec->parent_size, n, wait, &ev, &err);
    if (err == CL_SUCCESS && !p)
        err = CL_MAP_FAILURE;
    if (err != CL_SUCCESS) {
        if (ev)
            clReleaseEvent(ev);
        return err;
    }
    rec->cl_map_ptr = p;
    rec->map_event = ev; /* the next unmap waits for it */
    if (event_out) {
        clRetainEvent(ev);
        *event_out = ev;
    }
    return CL_SUCCESS;
}

/* OpenCL's own map is undone before the buffer is released (enqueued after
 * the map: the markers come after it). */
static void before_release(struct bridge_import *rec)
{
    /* A buffer left mapped is never destroyed (PoCL), so a failed unmap is
     * retried once, at once. Never by waiting first: this runs in an event
     * callback during the hand-back (import-teardown.c), where a blocking
     * call can stop PoCL's queue for good; the unmap waits for the map's
     * event on the device anyway. */
    if (rec->cl_map_ptr && unmap_after_map(rec, rec->home_queue, 0, NULL, NULL) != CL_SUCCESS)
        unmap_after_map(rec, rec->home_queue, 0, NULL, NULL);
    rec->cl_map_ptr = NULL;
}

static void after_destroy(struct bridge_import *rec)
{
    if (rec->map_event) /* an unmap that failed to enqueue left it */
        clReleaseEvent(rec->map_event);
    rec->map_event = NULL;
    clmem__host_map_put(rec->host_map);
    rec->host_map = NULL;
}

static clmem_status host_mapped_allows(const clmem_bridge_vk_memory *m)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

    if ((m->property_flags & want) == want)
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The host-mapped path needs HOST_VISIBLE | HOST_COHERENT memory; this memory's property "
                       "flags are 0x%x.",
                       (unsigned)m->property_flags);
}

const struct import_ops clmem__host_mapped_ops = {
    CLMEM_BRIDGE_PATH_HOST_MAPPED, host_mapped_allows, import_host, acquire, release, false, before_release,
    after_destroy, true,
};
