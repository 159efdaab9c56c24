/* SPDX-License-Identifier: MIT */
/* The fd paths (cl_khr_external_memory): opaque fd and dma-buf. Vulkan
 * exports the allocation as an fd (or the caller brings one), OpenCL
 * imports it with clCreateBufferWithProperties, and ownership moves with
 * the extension's acquire and release. */
#include "config.h"
#include "error-private.h"
#include "fault.h"
#include "fd-numbers.h"
#include "import-record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static bool is_dma_buf(const struct bridge_import *rec)
{
    return rec->ops->path == CLMEM_BRIDGE_PATH_DMA_BUF;
}

/* clCreateBufferWithProperties on an fd, or for an optimal-tiling image
 * (image.c) clCreateImageWithProperties: the whole allocation either way.
 * On success the fd is the driver's. */
static clmem_status import_fd_object(struct bridge_import *rec, int fd, const struct import_request *req)
{
    clmem_bridge *b = rec->bridge;
    const struct image_request *im = req->image;
    cl_mem_properties props[] = {
        is_dma_buf(rec) ? CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR : CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
        (cl_mem_properties)fd,
        CLMEM_CL_MEM_DEVICE_HANDLE_LIST,
        (cl_mem_properties)(uintptr_t)b->cl_device,
        CLMEM_CL_DEVICE_HANDLE_LIST_END,
        0,
    };
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem parent;
    const char *call;

    if (im && im->optimal) {
        cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = im->width,
                              .image_height = im->height};
        call = "clCreateImageWithProperties";
        parent = FAULT("clCreateImageWithProperties")
                     ? NULL
                     : clCreateImageWithProperties(b->context, props, req->flags, &im->cl_format, &desc, NULL, &err);
    } else {
        call = "clCreateBufferWithProperties";
        parent = FAULT("clCreateBufferWithProperties")
                     ? NULL
                     : clCreateBufferWithProperties(b->context, props, req->flags, (size_t)req->allocation_size, NULL,
                                                    &err);
    }

    /* Any code but CL_SUCCESS is failure: NVIDIA returns 999 for a bad fd. */
    if (err != CL_SUCCESS || !parent) {
        if (parent)
            clReleaseMemObject(parent);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                               "Importing fd %d (%s, %llu bytes%s) failed.", fd, clmem_bridge_path_name(rec->ops->path),
                               (unsigned long long)req->allocation_size,
                               im && im->optimal ? ", as an optimal-tiling image" : "");
    }
    rec->parent = parent;
    rec->parent_size = (size_t)req->allocation_size;
    return CLMEM_OK;
}

/* *fd, or a duplicate at a number no semaphore fd had (fd-numbers.h: NVIDIA
 * never closes a memory fd imported at such a number). On failure *fd is
 * unchanged and still the caller's to close. */
static clmem_status fd_for_memory(int *fd)
{
    int moved = clmem__fd_number_for_memory(*fd);

    if (moved < 0)
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, "fcntl(F_DUPFD_CLOEXEC)", errno,
                               "Moving memory fd %d off a number a semaphore fd had before (where NVIDIA never "
                               "closes an imported memory fd) failed.",
                               *fd);
    *fd = moved;
    return CLMEM_OK;
}

/* From Vulkan: export, then import; the exported fd is ours until the
 * driver takes it. */
static clmem_status import_vk(struct bridge_import *rec, const struct import_request *req)
{
    clmem_bridge *b = rec->bridge;
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = req->memory->memory,
                                 .handleType = is_dma_buf(rec) ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                               : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    VkResult r = FAULT("vkGetMemoryFdKHR") ? VK_ERROR_TOO_MANY_OBJECTS : b->vk.GetMemoryFdKHR(b->device, &info, &fd);
    clmem_status s;

    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkGetMemoryFdKHR", r,
                               "Exporting the memory as %s failed.", clmem_bridge_path_name(rec->ops->path));
    if ((s = fd_for_memory(&fd)) != CLMEM_OK) {
        close(fd);
        return s;
    }
    s = import_fd_object(rec, fd, req);
    if (s != CLMEM_OK)
        close(fd);
    return s;
}

/* From the caller's fd. The driver is given a duplicate: if a step after
 * the driver took it fails, releasing the cl_mem closes the duplicate, and
 * the caller's fd is untouched on every error. On success the caller's fd
 * is kept until OpenCL destroyed the cl_mem, then closed: the caller sees
 * exactly the extension's rule (open while the cl_mem lives, never theirs
 * again). rec->caller_fd is set by clmem_bridge_import_fd once the whole
 * import succeeded. */
static clmem_status import_caller_fd(struct bridge_import *rec, const struct import_request *req)
{
    int dup_fd = FAULT("fcntl(F_DUPFD_CLOEXEC)") ? (errno = EMFILE, -1) : fcntl(req->fd, F_DUPFD_CLOEXEC, 0);
    clmem_status s;

    if (dup_fd < 0)
        return clmem_error_set(errno == EBADF ? CLMEM_ERR_INVALID_VALUE : CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM,
                               "fcntl(F_DUPFD_CLOEXEC)", errno, "Duplicating fd %d failed; it is untouched.", req->fd);
    if ((s = fd_for_memory(&dup_fd)) != CLMEM_OK) {
        close(dup_fd);
        return s;
    }
    s = import_fd_object(rec, dup_fd, req);
    if (s != CLMEM_OK)
        close(dup_fd); /* the driver did not take it; the caller's fd is untouched */
    return s;
}

static clmem_status import_any(struct bridge_import *rec, const struct import_request *req)
{
    return req->memory ? import_vk(rec, req) : import_caller_fd(rec, req);
}

/* The parents of recs[0..count), for one extension call. A small call
 * (every ring batch the docs suggest) uses the stack. */
#define FD_STACK_MEMS 16

typedef cl_int (*external_fn)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *, cl_event *);

static cl_int enqueue_external(external_fn fn, bool fault, struct bridge_import *const *recs, cl_uint count,
                               cl_command_queue queue, cl_uint n, const cl_event *wait, cl_event *event_out)
{
    cl_mem stack[FD_STACK_MEMS], *mems = stack;
    cl_int err;

    if (!fn)
        return CL_INVALID_OPERATION;
    if (count == 0)
        return CL_INVALID_VALUE; /* handoff.c never sends an empty command */
    if (count > FD_STACK_MEMS && !(mems = FAULT("fd_handoff_alloc") ? NULL : malloc(count * sizeof *mems)))
        return CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < count; i++)
        mems[i] = recs[i]->parent;
    err = fault ? CL_OUT_OF_RESOURCES : fn(queue, count, mems, n, wait, event_out);
    if (mems != stack)
        free(mems);
    return err;
}

/* One clEnqueueAcquireExternalMemObjectsKHR for every fd-path record of a
 * call (opaque fd and dma-buf alike: both paths share these functions). */
static cl_int acquire(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call)
{
    *call = "clEnqueueAcquireExternalMemObjectsKHR";
    return enqueue_external(recs[0]->bridge->cl.acquire_external, FAULT("clEnqueueAcquireExternalMemObjectsKHR"),
                            recs, count, queue, n, wait, event_out);
}

static cl_int release(struct bridge_import *const *recs, cl_uint count, cl_command_queue queue, cl_uint n,
                      const cl_event *wait, cl_event *event_out, const char **call)
{
    *call = "clEnqueueReleaseExternalMemObjectsKHR";
    return enqueue_external(recs[0]->bridge->cl.release_external, FAULT("clEnqueueReleaseExternalMemObjectsKHR"),
                            recs, count, queue, n, wait, event_out);
}

static void before_release(struct bridge_import *rec)
{
    (void)rec; /* nothing of OpenCL's own to undo */
}

static void after_destroy(struct bridge_import *rec)
{
    if (rec->caller_fd >= 0) /* import_fd took it on success; OpenCL is done with it now */
        close(rec->caller_fd);
    rec->caller_fd = -1;
}

static clmem_status exportable_as(const clmem_bridge_vk_memory *m, VkExternalMemoryHandleTypeFlags bit,
                                  clmem_bridge_path path)
{
    if (m->export_types & bit)
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED, "The memory was not allocated exportable as %s (export_types 0x%x).",
                       clmem_bridge_path_name(path), (unsigned)m->export_types);
}

static clmem_status opaque_fd_allows(const clmem_bridge_vk_memory *m)
{
    return exportable_as(m, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, CLMEM_BRIDGE_PATH_OPAQUE_FD);
}

static clmem_status dma_buf_allows(const clmem_bridge_vk_memory *m)
{
    return exportable_as(m, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, CLMEM_BRIDGE_PATH_DMA_BUF);
}

const struct import_ops clmem__opaque_fd_ops = {
    CLMEM_BRIDGE_PATH_OPAQUE_FD, opaque_fd_allows, import_any, acquire, release, true, before_release,
    after_destroy, false,
};
const struct import_ops clmem__dma_buf_ops = {
    CLMEM_BRIDGE_PATH_DMA_BUF, dma_buf_allows, import_any, acquire, release, true, before_release, after_destroy,
    false,
};
