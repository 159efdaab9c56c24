/* SPDX-License-Identifier: MIT */
/* The producer's frames into the consumer's bridge, on one of two paths:
 *  - opaque fd: a duplicate of the allocation's fd goes to
 *    clmem_bridge_import_fd(), which gives it to OpenCL (NVIDIA);
 *  - host-mapped: the fd is imported once into the bridge's own VkDevice
 *    (vkAllocateMemory with VkImportMemoryFdInfoKHR: the same driver, so the
 *    same deviceUUID and driverUUID and the producer's memory type), and
 *    that memory goes to clmem_bridge_import_vk() on the host-mapped path;
 *    an anchor frees the VkDeviceMemory once every import of it let go.
 *    Where Vulkan's opaque fds are host memory (lavapipe's memfds) and
 *    OpenCL runs on the CPU, this is zero-copy too.
 * A frame alone in its allocation is one import of the whole allocation,
 * its planes sub-buffers of it: each frame handed over is then one object
 * to acquire and release, as a program with the raw calls would import it.
 * Frames that share an allocation are imported a plane at a time: one
 * import of the whole allocation per frame would map it once per frame,
 * and the host-mapped path's cache would give them all the same import,
 * which cannot be acquired for one frame while another is OpenCL's.
 * The allocation's own fd is closed by the caller once the imports are made
 * (proto.c holds it until then). */
#define _GNU_SOURCE /* F_DUPFD_CLOEXEC */
#include "config.h"
#include "error-private.h"
#include "consumer.h"
#include "opencl/query-cl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static clmem_status dup_failed(uint32_t index, int err)
{
    return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_SYSTEM, "fcntl(F_DUPFD_CLOEXEC)", err,
                           "Duplicating allocation %u's fd failed: %s.", index, strerror(err));
}

clmem_status clmem__ipc_consumer_choose_path(struct clmem_ipc_consumer *c, const struct ipc_hello *producer)
{
    char fd_why[1024] = "", host_why[1024] = "";
    char mine[37], theirs[37];

    if (c->want_path == CLMEM_BRIDGE_PATH_BEST || c->want_path == CLMEM_BRIDGE_PATH_OPAQUE_FD) {
        clmem_status st = clmem_bridge_check_path(c->bridge, CLMEM_BRIDGE_PATH_OPAQUE_FD);
        if (st == CLMEM_OK) {
            c->path = CLMEM_BRIDGE_PATH_OPAQUE_FD;
            return CLMEM_OK;
        }
        if (c->want_path == CLMEM_BRIDGE_PATH_OPAQUE_FD)
            return clmem__fail(st, "The consumer cannot take the opaque-fd path: %s", clmem_error_message());
        snprintf(fd_why, sizeof fd_why, "%s", clmem_error_message());
    }

    /* Host-mapped: the fd goes into the bridge's VkDevice first. */
    if (clmem_bridge_check_path(c->bridge, CLMEM_BRIDGE_PATH_HOST_MAPPED) != CLMEM_OK)
        snprintf(host_why, sizeof host_why, "%s", clmem_error_message());
    else if (!c->vk.fn.GetMemoryFdKHR)
        snprintf(host_why, sizeof host_why,
                 "the bridge's VkDevice was made without VK_KHR_external_memory_fd, so it cannot import the fds");
    else if (memcmp(producer->driver_uuid, c->vk.driver_uuid, IPC_UUID_BYTES)) {
        clmem__ipc_format_uuid(producer->driver_uuid, theirs);
        clmem__ipc_format_uuid(c->vk.driver_uuid, mine);
        snprintf(host_why, sizeof host_why,
                 "the producer's Vulkan driver (driverUUID %s) is not the consumer's (%s), and an opaque fd is "
                 "imported by the driver that exported it only", theirs, mine);
    } else
        clmem__ipc_vk_imports_opaque_fd(&c->vk, c->physical_device, host_why, sizeof host_why);
    if (!host_why[0]) {
        c->path = CLMEM_BRIDGE_PATH_HOST_MAPPED;
        return CLMEM_OK;
    }
    if (c->want_path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED, "The consumer cannot take the host-mapped path: %s.", host_why);
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The consumer has no path for the producer's memory. Opaque fd: %s Host-mapped: %s.", fd_why,
                       host_why);
}

/* ------------------------------------------------------------ host-mapped */

/* A VkDeviceMemory imported from the producer's fd, freed by the anchor
 * that every import of it holds (possibly on an OpenCL driver thread, as
 * any bridge keepalive: clmem_bridge_finish() waits for it). */
struct imported_memory {
    PFN_vkFreeMemory FreeMemory;
    PFN_vkDestroyBuffer DestroyBuffer;
    VkDevice device;
    VkDeviceMemory memory;
    VkBuffer dedicated_to; /* an allocation exported dedicated is imported dedicated */
};

static void free_imported_memory(void *user)
{
    struct imported_memory *m = user;
    m->FreeMemory(m->device, m->memory, NULL);
    if (m->dedicated_to)
        m->DestroyBuffer(m->device, m->dedicated_to, NULL);
    free(m);
}

static clmem_status import_into_vulkan(struct clmem_ipc_consumer *c, const struct proto_alloc *a, uint32_t index,
                                       clmem_keepalive **anchor_out, clmem_bridge_vk_memory *desc_out)
{
    const VkPhysicalDeviceMemoryProperties *mp = &c->vk.memory;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = a->desc.memory_type_index;
    VkDevice device = clmem_bridge_vk_device(c->bridge);
    VkResult vr;

    if (type >= mp->memoryTypeCount || (mp->memoryTypes[type].propertyFlags & host) != host)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The producer's allocation %u is of memory type %u, which is not host-visible and "
                           "host-coherent on %s (%u types): the host-mapped path maps it.",
                           index, type, c->vk.device_name, mp->memoryTypeCount);
    struct imported_memory *m = calloc(1, sizeof *m);
    if (!m)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the record of the producer's allocation %u failed.", index);
    *m = (struct imported_memory){c->vk.fn.FreeMemory, c->vk.fn.DestroyBuffer, device, VK_NULL_HANDLE, VK_NULL_HANDLE};

    VkMemoryDedicatedAllocateInfo dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    VkImportMemoryFdInfoKHR import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = &import,
                               .allocationSize = a->desc.allocation_size,
                               .memoryTypeIndex = type};
    if (a->desc.flags & IPC_ALLOC_DEDICATED) {
        VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                                .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                 .pNext = &ext,
                                 .size = a->desc.allocation_size,
                                 .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
        vr = c->vk.fn.CreateBuffer(device, &bi, NULL, &m->dedicated_to);
        if (vr != VK_SUCCESS) {
            free(m);
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateBuffer", vr,
                                   "The buffer the producer's dedicated allocation %u is imported for (%llu bytes) "
                                   "could not be made.", index, (unsigned long long)a->desc.allocation_size);
        }
        dedicated.buffer = m->dedicated_to;
        import.pNext = &dedicated;
    }
    import.fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0); /* a successful import takes it; ours stays with proto.c */
    if (import.fd < 0) {
        int err = errno;
        free_imported_memory(m); /* frees nothing but the buffer: memory is still VK_NULL_HANDLE */
        return dup_failed(index, err);
    }
    vr = c->vk.fn.AllocateMemory(device, &ai, NULL, &m->memory);
    if (vr != VK_SUCCESS) {
        close(import.fd); /* a failed import leaves the fd ours */
        m->memory = VK_NULL_HANDLE;
        free_imported_memory(m);
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkAllocateMemory(VkImportMemoryFdInfoKHR)", vr,
                               "Importing the producer's allocation %u (%llu bytes, memory type %u) into %s failed.",
                               index, (unsigned long long)a->desc.allocation_size, type, c->vk.device_name);
    }
    *anchor_out = clmem_keepalive_new(free_imported_memory, m);
    if (!*anchor_out) {
        free_imported_memory(m);
        return CLMEM_ERR_NO_MEMORY; /* clmem_keepalive_new() said why */
    }
    *desc_out = (clmem_bridge_vk_memory){.device = device,
                                         .memory = m->memory,
                                         .allocation_size = a->desc.allocation_size,
                                         .property_flags = mp->memoryTypes[type].propertyFlags,
                                         .export_types = 0,
                                         .dedicated = m->dedicated_to != VK_NULL_HANDLE};
    return CLMEM_OK;
}

/* ------------------------------------------------------------ both paths */

/* What the kernel can say about the fd before any driver sees it: a memfd
 * (host memory) must hold the bytes the producer announced, or the
 * consumer's accesses past its end would fault. A device's fd is checked by
 * its driver's import. */
static clmem_status check_fd(const struct proto_alloc *a, uint32_t index)
{
    struct stat st;
    if (fstat(a->fd, &st) != 0)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_SYSTEM, "fstat", errno,
                               "The fd of the producer's allocation %u cannot be examined: %s.", index,
                               strerror(errno));
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < a->desc.allocation_size)
        return clmem__invalid("The producer's allocation %u announces %llu bytes, and its fd is a file of %lld bytes.",
                              index, (unsigned long long)a->desc.allocation_size, (long long)st.st_size);
    if (S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        return clmem__invalid("The producer's allocation %u came with an fd that is a %s, not memory.", index,
                              S_ISDIR(st.st_mode)    ? "directory"
                              : S_ISFIFO(st.st_mode) ? "pipe"
                                                     : "socket");
    return CLMEM_OK;
}

void clmem__ipc_consumer_drop_imports(struct clmem_ipc_consumer *c)
{
    for (uint32_t i = 0; i < CLMEM_IPC_MAX_FRAMES; i++) {
        struct consumer_frame *cf = &c->frames[i];
        /* The planes first: a sub-buffer holds its parent, which the
         * import's teardown waits to see destroyed. */
        for (uint32_t p = 0; p < IPC_MAX_PLANES; p++) {
            if (cf->planes[p])
                clReleaseMemObject(cf->planes[p]);
            cf->planes[p] = NULL;
        }
        for (uint32_t p = 0; p < IPC_MAX_PLANES; p++) {
            clmem_handle_unref(cf->imports[p]);
            cf->imports[p] = NULL;
        }
        cf->import_count = 0;
    }
}

/* [offset, offset + size) of allocation a into the bridge, on c's path. */
static clmem_status import_range(struct clmem_ipc_consumer *c, const struct proto_alloc *a, uint32_t alloc_index,
                                 clmem_keepalive *anchor, const clmem_bridge_vk_memory *desc, uint64_t offset,
                                 uint64_t size, clmem_handle **out)
{
    clmem_status st;

    if (c->path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return clmem_bridge_import_vk(c->bridge, desc, offset, size, CLMEM_BRIDGE_PATH_HOST_MAPPED, anchor, c->queue,
                                      c->mem_flags, out);
    int fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0); /* the import takes it on success */
    if (fd < 0)
        return dup_failed(alloc_index, errno);
    st = clmem_bridge_import_fd(c->bridge, fd, CLMEM_BRIDGE_PATH_OPAQUE_FD, a->desc.allocation_size, offset, size, NULL,
                                c->queue, c->mem_flags, out);
    if (st != CLMEM_OK)
        close(fd); /* a failed import leaves it ours */
    return st;
}

/* Plane `plane` of a frame whose allocation is imported whole as `whole`:
 * a sub-buffer of it, or the import's own buffer when the plane is all of
 * it. */
static clmem_status plane_of_whole(const clmem_handle *whole, const struct proto_alloc *a, const struct ipc_plane *p,
                                   cl_uint base_align, cl_mem *out)
{
    cl_mem parent = clmem_handle_mem(whole);
    cl_buffer_region region = {(size_t)p->offset, (size_t)p->size};
    cl_int err = CL_OUT_OF_RESOURCES;

    if (p->offset == 0 && p->size == a->desc.allocation_size) {
        clRetainMemObject(parent);
        *out = parent;
        return CLMEM_OK;
    }
    /* The producer's layout, checked as the bridge checks a plane it
     * imports on its own: a driver need not refuse a misaligned origin. */
    if (p->offset % base_align != 0)
        return clmem__invalid("offset %llu is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes), which "
                              "sub-buffer origins must be.",
                              (unsigned long long)p->offset, base_align);
    *out = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err == CL_SUCCESS && *out)
        return CLMEM_OK;
    if (*out)
        clReleaseMemObject(*out);
    *out = NULL;
    return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateSubBuffer", err,
                           "OpenCL would not make the plane a sub-buffer of the allocation's import.");
}

/* The recorded failure, with what was being imported said first; its
 * status, native call and code kept. */
static clmem_status import_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static clmem_status import_failed(const char *fmt, ...)
{
    char what[256], why[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(why, sizeof why, "%s", clmem_error_message());
    return clmem_error_set(clmem_error_status(), clmem_error_api(), clmem_error_call(), clmem_error_native_code(),
                           "%s failed: %s", what, why);
}

static clmem_status plane_failed(const struct ipc_frame *f, uint32_t plane)
{
    const struct ipc_plane *p = &f->planes[plane];

    return import_failed("Importing plane %u of frame %u (%llu bytes at offset %llu of allocation %u)", plane, f->index,
                         (unsigned long long)p->size, (unsigned long long)p->offset, f->allocation);
}

/* Frame f's imports and plane buffers into cf; on failure what was made
 * stays in cf for the caller's drop. */
static clmem_status import_frame(struct clmem_ipc_consumer *c, const struct ipc_frame *f, bool alone,
                                 cl_uint base_align, clmem_keepalive *anchor, const clmem_bridge_vk_memory *desc,
                                 struct consumer_frame *cf)
{
    const struct proto_alloc *a = &c->proto.allocs[f->allocation];

    if (alone) {
        if (import_range(c, a, f->allocation, anchor, desc, 0, a->desc.allocation_size, &cf->imports[0]) != CLMEM_OK)
            return import_failed("Importing allocation %u (%llu bytes) for frame %u", f->allocation,
                                 (unsigned long long)a->desc.allocation_size, f->index);
        cf->import_count = 1;
        for (uint32_t p = 0; p < f->plane_count; p++)
            if (plane_of_whole(cf->imports[0], a, &f->planes[p], base_align, &cf->planes[p]) != CLMEM_OK)
                return plane_failed(f, p);
        return CLMEM_OK;
    }
    for (uint32_t p = 0; p < f->plane_count; p++) {
        if (import_range(c, a, f->allocation, anchor, desc, f->planes[p].offset, f->planes[p].size, &cf->imports[p]) !=
            CLMEM_OK)
            return plane_failed(f, p);
        cf->import_count = p + 1;
        cf->planes[p] = clmem_handle_mem(cf->imports[p]);
        clRetainMemObject(cf->planes[p]);
    }
    return CLMEM_OK;
}

clmem_status clmem__ipc_consumer_import(struct clmem_ipc_consumer *c)
{
    struct proto *pr = &c->proto;
    clmem_keepalive *anchors[CLMEM_IPC_MAX_ALLOCATIONS] = {0};
    clmem_bridge_vk_memory descs[CLMEM_IPC_MAX_ALLOCATIONS];
    uint32_t frames_in[CLMEM_IPC_MAX_ALLOCATIONS] = {0};
    /* The bridge's device: its own range check uses the same alignment. */
    cl_uint base_align = 1;
    clmem_status st = clmem__cl_device_base_align(clmem_bridge_cl_device(c->bridge), &base_align);

    for (uint32_t i = 0; i < pr->allocation_count && st == CLMEM_OK; i++) {
        st = check_fd(&pr->allocs[i], i);
        if (st == CLMEM_OK && c->path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
            st = import_into_vulkan(c, &pr->allocs[i], i, &anchors[i], &descs[i]);
    }
    for (uint32_t f = 0; f < pr->frame_count; f++)
        frames_in[pr->frames[f].desc.allocation]++;
    for (uint32_t f = 0; f < pr->frame_count && st == CLMEM_OK; f++) {
        const struct ipc_frame *d = &pr->frames[f].desc;
        c->frames[f].index = f;
        c->frames[f].plane_count = d->plane_count;
        st = import_frame(c, d, frames_in[d->allocation] == 1, base_align, anchors[d->allocation],
                          &descs[d->allocation], &c->frames[f]);
    }
    /* The imports hold the anchors they need; the VkDeviceMemory of an
     * allocation no import took is freed here. */
    for (uint32_t i = 0; i < pr->allocation_count; i++)
        clmem_keepalive_unref(anchors[i]);
    if (st != CLMEM_OK) {
        clmem_status keep = clmem_error_status();
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        clmem__ipc_consumer_drop_imports(c);
        return clmem__fail(keep, "%s", why);
    }
    return CLMEM_OK;
}
