/* SPDX-License-Identifier: MIT */
/* Importing Vulkan memory into OpenCL: the checks every import passes, the
 * import record and its anchor, the choice of path, and the steps after
 * OpenCL holds the memory (sub-buffer, destructor callback, handle). The
 * paths' own steps are in path-fd.c and path-host.c; the record's lists
 * in import-record.c; the teardown in import-teardown.c.
 *
 * The order is chosen so that failures leave nothing behind: the record and
 * anchor are allocated before anything is imported, the driver is only ever
 * given an fd the library owns (one it exported, or a duplicate of the
 * caller's), and each later step's undo is the anchor's release. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "import.h"
#include "import-teardown.h"
#include "keepalive-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_PTR_FLAGS (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)

/* ------------------------------------------------------------ the record */

struct bridge_import *clmem__import_of_handle(const clmem_handle *h)
{
    return clmem__keepalive_user_data(clmem_handle_keepalive(h), clmem__import_anchor_release);
}

/* An import's anchor is a block of its own that also holds the import's
 * cache entry (cache.h). Every cache hit and every handle of the import
 * changes the anchor's count, from whichever thread makes or drops them:
 * anchors made one after another from plain 32-byte blocks shared cache
 * lines, and hits on different imports from different threads contended
 * for them. The block is 152 bytes (160 from glibc's malloc), so two
 * anchors' counts are more than the 128-byte pair that x86 cores fetch
 * together apart. And a hit reads the entry and the count in this one block
 * rather than in separate allocations that could lie pages apart among the
 * driver's. The anchor's last unref frees the block with free()
 * (keepalive-private.h), after its release callback unlisted the entry. */
struct import_anchor {
    struct clmem_keepalive ka; /* first: the block is freed through it */
    struct cache_entry entry;  /* listed in the bridge's cache while the import lives (rec->cache_entry) */
};

static clmem_keepalive *import_anchor_new(struct bridge_import *rec)
{
    struct import_anchor *a = FAULT("anchor_alloc") ? NULL : malloc(sizeof *a);

    if (!a) {
        clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating an import's anchor failed.");
        return NULL;
    }
    clmem__keepalive_init(&a->ka, clmem__import_anchor_release, rec);
    return &a->ka;
}
_Static_assert(sizeof(struct import_anchor) >= 128, "two import anchors' counts are 128 bytes apart at least");

/* The record and anchor, allocated before anything is imported so that an
 * allocation failure never strands an fd the driver already owns. */
static clmem_status import_begin(clmem_bridge *b, const struct import_ops *ops, struct bridge_import **rec_out,
                                 clmem_keepalive **anchor_out)
{
    struct bridge_import *rec = FAULT("import_record_alloc") ? NULL : calloc(1, sizeof *rec);
    clmem_keepalive *anchor;

    if (!rec)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating an import record failed.");
    anchor = import_anchor_new(rec);
    if (!anchor) {
        free(rec);
        return CLMEM_ERR_NO_MEMORY;
    }
    rec->bridge = clmem_bridge_ref(b);
    rec->ops = ops;
    rec->caller_fd = -1;
    pthread_mutex_init(&rec->lock, NULL);
    atomic_init(&rec->acquired, false);
    atomic_init(&rec->in_ring, false);
    atomic_init(&rec->markers_pending, 0);
    atomic_init(&rec->cl_released, false);
    atomic_init(&rec->hand_back_claimed, false);
    atomic_init(&rec->hand_back_done, false);
    atomic_init(&rec->destroy_pending, 0);
    atomic_init(&rec->teardown_claimed, false);
    atomic_init(&rec->markers_ready, false);
    atomic_init(&rec->refs, 1);
    clmem__bridge_import_born(b);
    *rec_out = rec;
    *anchor_out = anchor;
    return CLMEM_OK;
}

/* Hold a Vulkan keepalive until OpenCL destroyed the cl_mem: the import's
 * own, and a cache hit's when it is not held already (anchor-set.h: a hit
 * with a held anchor costs a lookup and no memory). */
static clmem_status import_hold_vk(struct bridge_import *rec, clmem_keepalive *vk_keepalive)
{
    clmem_status s;

    /* The import's own keepalive is held until the teardown, and first_vk
     * is not written after the import was handed out: a re-import passing
     * it again (the usual hit) takes no lock. */
    if (!vk_keepalive || vk_keepalive == rec->first_vk)
        return CLMEM_OK;
    pthread_mutex_lock(&rec->lock);
    s = clmem__anchor_set_hold(&rec->vk_anchors, vk_keepalive);
    pthread_mutex_unlock(&rec->lock);
    return s;
}

/* A new handle of a live import (whose anchor reference the caller holds)
 * for `queue`: the queue joins the teardown's list first. Every handle of
 * an import carries the same cl_mem and row pitch. */
static clmem_status import_new_handle(struct bridge_import *rec, clmem_keepalive *anchor, cl_command_queue queue,
                                      clmem_handle **out)
{
    clmem_status s = clmem__import_add_queue(rec, queue);
    if (s == CLMEM_OK)
        s = clmem_handle_wrap(clmem__import_handed_mem(rec), queue, rec->row_pitch, anchor, out);
    return s;
}

/* ------------------------------------------------------------ validation */

static clmem_status check_common(clmem_bridge *b, cl_command_queue queue, clmem_handle **out, const char *call)
{
    if (out)
        *out = NULL;
    if (!b || !queue || !out)
        return fail_null(!b ? "bridge" : !queue ? "queue" : "out");
    BRIDGE_LIVE(b, call);
    return CLMEM_OK;
}

static clmem_status check_vk_memory(const clmem_bridge_vk_memory *memory)
{
    if (!memory || !memory->device || !memory->memory)
        return fail_null(!memory ? "memory" : !memory->device ? "memory->device" : "memory->memory");
    return CLMEM_OK;
}

static clmem_status check_range(uint64_t allocation_size, uint64_t offset, uint64_t size)
{
    if (allocation_size == 0 || size == 0)
        return fail_zero(size == 0 ? "size" : "allocation size");
    if (offset > allocation_size || size > allocation_size - offset) {
        char end[48]; /* offset + size, or the sum written out where it does not fit 64 bits */
        if (size <= UINT64_MAX - offset)
            snprintf(end, sizeof end, "%llu", (unsigned long long)(offset + size));
        else
            snprintf(end, sizeof end, "%llu + %llu", (unsigned long long)offset, (unsigned long long)size);
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The range [%llu, %s) reaches beyond the %llu-byte allocation.",
                           (unsigned long long)offset, end, (unsigned long long)allocation_size);
    }
    return CLMEM_OK;
}

static clmem_status check_flags(cl_mem_flags flags)
{
    if (flags & HOST_PTR_FLAGS)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "flags 0x%llx hold a host-pointer flag; the bridge chooses how memory is shared.",
                           (unsigned long long)flags);
    return CLMEM_OK;
}

/* What every import needs checked before anything is touched. */
static clmem_status check_target(clmem_bridge *b, const struct import_request *req)
{
    clmem_status s;

    if ((s = check_flags(req->flags)) != CLMEM_OK)
        return s;
    if ((s = check_range(req->allocation_size, req->offset, req->size)) != CLMEM_OK)
        return s;
    if ((s = clmem__bridge_check_queue(b, req->queue)) != CLMEM_OK)
        return s;
    /* Memory the bridge allocated itself: the size it is told must be the
     * size it asked Vulkan for (own-memory.h; other memory is trusted). */
    if (req->memory && (s = clmem__own_memory_check(&b->own, req->memory)) != CLMEM_OK)
        return s;
    if (req->offset % b->caps.base_align_bytes != 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "offset %llu is not a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes), which "
                           "sub-buffer origins must be.",
                           (unsigned long long)req->offset, b->caps.base_align_bytes);
    return CLMEM_OK;
}

static const struct import_ops *ops_of(clmem_bridge_path path)
{
    switch (path) {
    case CLMEM_BRIDGE_PATH_OPAQUE_FD: return &clmem__opaque_fd_ops;
    case CLMEM_BRIDGE_PATH_DMA_BUF: return &clmem__dma_buf_ops;
    case CLMEM_BRIDGE_PATH_HOST_MAPPED: return &clmem__host_mapped_ops;
    case CLMEM_BRIDGE_PATH_BEST: break;
    }
    return NULL;
}

/* Can this memory go through `path` on this bridge? What the memory itself
 * allows first (the caller's to fix), then the bridge's answer for the
 * pair. */
static clmem_status path_fits(const clmem_bridge *b, const clmem_bridge_vk_memory *m, clmem_bridge_path path)
{
    clmem_status s = ops_of(path)->memory_allows(m);
    if (s != CLMEM_OK)
        return s;
    return clmem__caps_report(&b->caps.path[CAPS_PATH(path)]);
}

/* Why `path` does not fit: what the memory lacks, where the pair offers
 * the path (the caller's to fix), else what the pair lacks. */
static void why_not(const clmem_bridge *b, const clmem_bridge_vk_memory *m, clmem_bridge_path path, bool *pair_has,
                    char *out, size_t len)
{
    *pair_has = b->caps.path[CAPS_PATH(path)].status == CLMEM_OK;
    if (*pair_has && ops_of(path)->memory_allows(m) != CLMEM_OK)
        snprintf(out, len, "%s", clmem_error_message());
    else
        snprintf(out, len, "%s", *pair_has ? "fits." : b->caps.path[CAPS_PATH(path)].message);
}

/* Resolve BEST to the first path that fits; check a named one fits. When
 * none does, the message gives first the reasons of the paths this pair
 * offers (what the memory lacks: the reason that applies on this
 * machine), then what the pair lacks for the others, which can be long. */
static clmem_status choose_path(const clmem_bridge *b, const clmem_bridge_vk_memory *m, clmem_bridge_path asked,
                                const struct import_ops **ops_out)
{
    static const clmem_bridge_path order[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF,
                                              CLMEM_BRIDGE_PATH_HOST_MAPPED};
    enum { PATHS = sizeof order / sizeof order[0] };
    char why[PATHS][CAPS_MESSAGE_MAX], offered[3 * CAPS_MESSAGE_MAX + 96] = "", lacking[3 * CAPS_MESSAGE_MAX + 96] = "";
    bool pair_has[PATHS];
    size_t o = 0, l = 0;
    clmem_status s;

    if (asked != CLMEM_BRIDGE_PATH_BEST) {
        if (!ops_of(asked))
            return fail_unknown_path((int)asked);
        if ((s = path_fits(b, m, asked)) != CLMEM_OK)
            return s;
        *ops_out = ops_of(asked);
        return CLMEM_OK;
    }
    for (unsigned i = 0; i < PATHS; i++)
        if (path_fits(b, m, order[i]) == CLMEM_OK) {
            *ops_out = ops_of(order[i]);
            return CLMEM_OK;
        }
    for (unsigned i = 0; i < PATHS; i++) {
        why_not(b, m, order[i], &pair_has[i], why[i], sizeof why[i]);
        if (pair_has[i] && o < sizeof offered)
            o += (size_t)snprintf(offered + o, sizeof offered - o, " %s: %s", clmem_bridge_path_name(order[i]),
                                  why[i]);
        else if (!pair_has[i] && l < sizeof lacking)
            l += (size_t)snprintf(lacking + l, sizeof lacking - l, " %s: %s", clmem_bridge_path_name(order[i]),
                                  why[i]);
    }
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "No path fits this memory (export_types 0x%x, property flags 0x%x).%s%s%s%s "
                       "(OpenCL device %s, %s; Vulkan device %s.)",
                       (unsigned)m->export_types, (unsigned)m->property_flags,
                       offered[0] ? " Offered by this pair, but not for this memory:" : "", offered,
                       lacking[0] ? " Not offered by this pair:" : "", lacking, b->caps.cl_device_name,
                       b->caps.cl_platform_name, b->caps.vk_device_name);
}

/* ------------------------------------------------------------- building */

/* The image2d view of the range: made from the buffer the handles would
 * otherwise carry, with the plane's pitch (image.c checked the device's
 * rules that do not depend on the import). On the host-mapped path the
 * buffer wraps a host pointer, which OpenCL wants aligned to
 * CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT texels: checked here, where the
 * pointer is known. */
static clmem_status make_image_view(struct bridge_import *rec, const struct import_request *req)
{
    const struct image_request *im = req->image;
    cl_mem buffer = rec->view ? rec->view : rec->parent;
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                          .image_width = im->width,
                          .image_height = im->height,
                          .image_row_pitch = req->row_pitch};
    cl_uint base_align = rec->bridge->caps.image_base_align;
    void *host_ptr = NULL;
    cl_int err = CL_OUT_OF_RESOURCES;

    if (base_align && clGetMemObjectInfo(buffer, CL_MEM_HOST_PTR, sizeof host_ptr, &host_ptr, NULL) == CL_SUCCESS &&
        host_ptr && (uintptr_t)host_ptr % ((uintptr_t)base_align * im->texel_bytes) != 0)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "An image view of plane %u needs its host address %p to be a multiple of "
                           "CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT (%u texels of %u bytes) on %s.",
                           im->plane, host_ptr, base_align, im->texel_bytes, rec->bridge->caps.cl_device_name);
    desc.buffer = buffer;
    rec->image = FAULT("clCreateImage") ? NULL
                                        : clCreateImage(rec->bridge->context, req->flags, &im->cl_format, &desc, NULL,
                                                        &err);
    if (err != CL_SUCCESS || !rec->image) {
        if (rec->image)
            clReleaseMemObject(rec->image);
        rec->image = NULL;
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateImage", err,
                               "Making a %ux%u image2d view (channel order 0x%x, type 0x%x, row pitch %u) of plane %u "
                               "failed.",
                               im->width, im->height, (unsigned)im->cl_format.image_channel_order,
                               (unsigned)im->cl_format.image_channel_data_type, req->row_pitch, im->plane);
    }
    return CLMEM_OK;
}

/*
 * The steps after OpenCL holds rec->parent: the queue list, the
 * sub-buffer, the destructor callback, the Vulkan keepalive and the handle.
 * On failure the anchor's release undoes everything (including the parent,
 * which closes an imported fd: see "fd ownership" in clmem-bridge.h).
 */
static clmem_status import_finish(struct bridge_import *rec, clmem_keepalive *anchor,
                                  const struct import_request *req, clmem_keepalive *vk_keepalive,
                                  clmem_handle **out)
{
    cl_int err = CL_OUT_OF_RESOURCES;
    clmem_status s;

    rec->row_pitch = req->image ? 0 : req->row_pitch; /* an image's pitch is OpenCL's to know */
    s = clmem__import_add_queue(rec, req->queue);
    /* Set after the queue is listed: the lock-free checks take it as listed.
     * Set even when listing failed: the import then fails and is never
     * handed out, and its teardown still needs the queue (host-mapped
     * unmaps there). */
    rec->home_queue = req->queue;
    if (s != CLMEM_OK)
        goto fail;
    if (!rec->ops->parent_is_range && (req->offset != 0 || req->size != req->allocation_size)) {
        cl_buffer_region region = {(size_t)req->offset, (size_t)req->size};
        rec->view = FAULT("clCreateSubBuffer")
                        ? NULL
                        : clCreateSubBuffer(rec->parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        if (err != CL_SUCCESS || !rec->view) {
            if (rec->view)
                clReleaseMemObject(rec->view);
            rec->view = NULL;
            s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateSubBuffer", err,
                                "Making the sub-buffer [%llu, +%llu) failed.", (unsigned long long)req->offset,
                                (unsigned long long)req->size);
            goto fail;
        }
    }
    if (req->image && !req->image->optimal && (s = make_image_view(rec, req)) != CLMEM_OK)
        goto fail;
    if ((s = clmem__import_arm_destructor(rec)) != CLMEM_OK)
        goto fail;
    if ((s = import_hold_vk(rec, vk_keepalive)) != CLMEM_OK)
        goto fail;
    rec->first_vk = vk_keepalive; /* held: import_hold_vk's shortcut from here */
    s = clmem_handle_wrap(clmem__import_handed_mem(rec), req->queue, rec->row_pitch, anchor, out);
    rec->handed_out = s == CLMEM_OK; /* read by the anchor's release, after the last handle went */
fail:
    clmem_keepalive_unref(anchor); /* the handle holds it now, or the release undoes everything */
    return s;
}

static clmem_status import_with(clmem_bridge *b, const struct import_ops *ops, const struct import_request *req,
                                clmem_keepalive *vk_keepalive, struct bridge_import **rec_out, clmem_handle **out)
{
    struct bridge_import *rec = NULL;
    clmem_keepalive *anchor = NULL;
    clmem_status s = import_begin(b, ops, &rec, &anchor);

    if (s != CLMEM_OK)
        return s;
    if ((s = ops->import(rec, req)) != CLMEM_OK) {
        clmem_keepalive_unref(anchor); /* nothing imported: frees rec */
        return s;
    }
    s = import_finish(rec, anchor, req, vk_keepalive, out);
    *rec_out = s == CLMEM_OK ? rec : NULL;
    return s;
}

/* -------------------------------------------------------------- public */

/* List a new import in the bridge's cache: its entry, in its anchor's
 * block, gets the key and what a hit reads. Before the first handle is
 * returned, so nothing else sees the import yet. */
static void cache_list(clmem_bridge *b, struct bridge_import *rec, const struct cache_key *key,
                       clmem_keepalive *anchor)
{
    struct cache_entry *e = &((struct import_anchor *)anchor)->entry;

    e->key = *key;
    e->hit = (struct cache_hit){rec, clmem__import_handed_mem(rec), rec->home_queue, rec->first_vk, rec->row_pitch};
    e->anchor = anchor;
    clmem__cache_insert(&b->cache, e, &rec->cache_entry);
}

static void cache_key_of(const struct import_request *req, clmem_bridge_path path, struct cache_key *key)
{
    memset(key, 0, sizeof *key); /* compared field by field; zeroed so a buffer's image fields are 0 */
    key->memory = req->memory->memory;
    key->offset = req->offset;
    key->size = req->size;
    key->flags = req->flags;
    key->path = path;
    key->row_pitch = req->row_pitch;
    if (req->image) {
        key->image_kind = req->image->optimal ? 2 : 1;
        key->image_format = req->image->cl_format;
        key->image_width = req->image->width;
        key->image_height = req->image->height;
    }
}

clmem_status clmem__import_check_own(struct import_request *req, clmem_bridge_path path)
{
    clmem_status s = check_flags(req->flags);

    if (s != CLMEM_OK)
        return s;
    if (path != CLMEM_BRIDGE_PATH_BEST && !ops_of(path))
        return fail_unknown_path((int)path);
    req->allocation_size = req->memory->allocation_size;
    return check_range(req->allocation_size, req->offset, req->size);
}

static clmem_status check_device(const clmem_bridge *b, const clmem_bridge_vk_memory *memory)
{
    if (memory->device != b->device)
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                           "The memory belongs to VkDevice %p, not to the bridge's VkDevice %p.",
                           (void *)memory->device, (void *)b->device);
    return CLMEM_OK;
}

clmem_status clmem__import_check_fits(clmem_bridge *b, const struct import_request *req)
{
    clmem_status s = check_device(b, req->memory);
    return s != CLMEM_OK ? s : clmem__bridge_check_queue(b, req->queue);
}

clmem_status clmem__import_vk_request(clmem_bridge *b, struct import_request *req, clmem_bridge_path path,
                                      clmem_keepalive *vk_keepalive, clmem_handle **out)
{
    const clmem_bridge_vk_memory *memory = req->memory;
    const struct import_ops *ops = NULL;
    struct bridge_import *rec;
    clmem_keepalive *anchor;
    struct cache_key key;
    struct cache_hit hit;
    clmem_status s;

    /* The arguments on their own before whether they fit the bridge
     * (clmem-bridge.h, "Which error wins"). */
    if ((s = clmem__import_check_own(req, path)) != CLMEM_OK || (s = check_device(b, memory)) != CLMEM_OK)
        return s;

    /* A live import of the same range needs no driver call, and no repeat of
     * the checks it passed (cache.h says what the key holds). */
    cache_key_of(req, path, &key);
    if (clmem__cache_lookup(&b->cache, &key, &hit, &anchor)) {
        /* The import's own queue and keepalive (the usual re-import): the
         * entry's copy says all, and nothing of the record is read. */
        if (req->queue == hit.home_queue && (!vk_keepalive || vk_keepalive == hit.first_vk))
            s = clmem_handle_wrap(hit.mem, req->queue, hit.row_pitch, anchor, out);
        /* A queue the import lists already was checked when it joined, and
         * is retained, so it is still that queue: only a new one costs the
         * driver call (on the H200 about 0.1 us of a hit). */
        else if ((clmem__import_has_queue(hit.rec, req->queue) ||
                  (s = clmem__bridge_check_queue(b, req->queue)) == CLMEM_OK) &&
                 (s = import_hold_vk(hit.rec, vk_keepalive)) == CLMEM_OK)
            s = import_new_handle(hit.rec, anchor, req->queue, out);
        clmem_keepalive_unref(anchor);
        return s;
    }
    if ((s = check_target(b, req)) != CLMEM_OK || (s = choose_path(b, memory, path, &ops)) != CLMEM_OK)
        return s;
    if ((s = import_with(b, ops, req, vk_keepalive, &rec, out)) == CLMEM_OK)
        cache_list(b, rec, &key, clmem_handle_keepalive(*out));
    return s;
}

static clmem_status import_vk(clmem_bridge *b, const clmem_bridge_vk_memory *memory, VkDeviceSize offset,
                              VkDeviceSize size, clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                              cl_command_queue queue, cl_mem_flags flags, clmem_handle **out)
{
    struct import_request req = {memory, -1, 0, offset, size, queue, flags, 0, NULL};
    clmem_status s = check_common(b, queue, out, "clmem_bridge_import_vk");

    if (s == CLMEM_OK)
        s = check_vk_memory(memory);
    return s == CLMEM_OK ? clmem__import_vk_request(b, &req, path, vk_keepalive, out) : s;
}

CLMEM_EXPORT clmem_status clmem_bridge_import_vk(clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                                 VkDeviceSize offset, VkDeviceSize size, clmem_bridge_path path,
                                                 clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                                 cl_mem_flags flags, clmem_handle **out)
{
    return clmem__error_in(__func__, import_vk(b, memory, offset, size, path, vk_keepalive, queue, flags, out));
}

/* A buffer import whose handles carry a row pitch. The pitch is checked
 * here, before anything is imported, with the rules
 * clmem_handle_wrap_checked() applies to a handle's pitch; the import itself
 * is the one every Vulkan import goes through (clmem__import_vk_request),
 * which already puts a request's row_pitch on its handles and in the cache
 * key. */
static clmem_status import_vk_pitched(clmem_bridge *b, const clmem_bridge_vk_memory *memory, VkDeviceSize offset,
                                      VkDeviceSize size, uint32_t row_pitch, uint32_t element_size,
                                      clmem_bridge_path path, clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                      cl_mem_flags flags, clmem_handle **out)
{
    struct import_request req = {memory, -1, 0, offset, size, queue, flags, row_pitch, NULL};
    clmem_status s = check_common(b, queue, out, "clmem_bridge_import_vk_pitched");

    if (s != CLMEM_OK || (s = check_vk_memory(memory)) != CLMEM_OK)
        return s;
    if (size == 0)
        return fail_zero("size");
    if (row_pitch == 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "row_pitch is 0; a packed range needs no pitch: use clmem_bridge_import_vk().");
    if (row_pitch > size)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "row_pitch %u is larger than the range's %llu bytes.",
                           (unsigned)row_pitch, (unsigned long long)size);
    if (element_size != 0 && row_pitch % element_size != 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "row_pitch %u is not a multiple of the %u-byte element, so no leading dimension in "
                           "elements is exact.",
                           (unsigned)row_pitch, (unsigned)element_size);
    return clmem__import_vk_request(b, &req, path, vk_keepalive, out);
}

CLMEM_EXPORT clmem_status clmem_bridge_import_vk_pitched(clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                                         VkDeviceSize offset, VkDeviceSize size, uint32_t row_pitch,
                                                         uint32_t element_size, clmem_bridge_path path,
                                                         clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                                         cl_mem_flags flags, clmem_handle **out)
{
    return clmem__error_in(__func__, import_vk_pitched(b, memory, offset, size, row_pitch, element_size, path,
                                                       vk_keepalive, queue, flags, out));
}

static clmem_status import_fd(clmem_bridge *b, int fd, clmem_bridge_path path, uint64_t allocation_size,
                              uint64_t offset, uint64_t size, clmem_keepalive *keepalive, cl_command_queue queue,
                              cl_mem_flags flags, clmem_handle **out)
{
    struct import_request req = {NULL, fd, allocation_size, offset, size, queue, flags, 0, NULL};
    struct bridge_import *rec;
    clmem_status s = check_common(b, queue, out, "clmem_bridge_import_fd");

    if (s != CLMEM_OK)
        return s;
    if (fd < 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "fd %d is negative.", fd);
    if (path != CLMEM_BRIDGE_PATH_OPAQUE_FD && path != CLMEM_BRIDGE_PATH_DMA_BUF)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The path must be CLMEM_BRIDGE_PATH_OPAQUE_FD or CLMEM_BRIDGE_PATH_DMA_BUF, not %s.",
                           clmem_bridge_path_name(path));
    if ((s = check_target(b, &req)) != CLMEM_OK)
        return s;
    /* The OpenCL side must import this fd type; the Vulkan side is the
     * caller's (the fd may not even come from Vulkan). */
    if ((s = clmem__caps_report(&b->caps.cl_import[path])) != CLMEM_OK)
        return s;
    s = import_with(b, ops_of(path), &req, keepalive, &rec, out);
    if (s == CLMEM_OK)
        rec->caller_fd = fd; /* the handle keeps rec alive: no one else sees it yet */
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_import_fd(clmem_bridge *b, int fd, clmem_bridge_path path,
                                                 uint64_t allocation_size, uint64_t offset, uint64_t size,
                                                 clmem_keepalive *keepalive, cl_command_queue queue, cl_mem_flags flags,
                                                 clmem_handle **out)
{
    return clmem__error_in(__func__,
                           import_fd(b, fd, path, allocation_size, offset, size, keepalive, queue, flags, out));
}

static clmem_status handle_for_queue(const clmem_handle *h, cl_command_queue queue, clmem_handle **out)
{
    struct bridge_import *rec = clmem__import_of_handle(h);
    clmem_status s;

    if (out)
        *out = NULL;
    if (!h || !queue || !out)
        return fail_null(!h ? "handle" : !queue ? "queue" : "out");
    if (!rec)
        return fail_foreign_handle();
    if ((s = clmem__bridge_check_queue(rec->bridge, queue)) != CLMEM_OK)
        return s;
    /* h's reference keeps the anchor, and so rec, alive. */
    return import_new_handle(rec, clmem_handle_keepalive(h), queue, out);
}

CLMEM_EXPORT clmem_status clmem_bridge_handle_for_queue(const clmem_handle *h, cl_command_queue queue,
                                                        clmem_handle **out)
{
    return clmem__error_in(__func__, handle_for_queue(h, queue, out));
}

static clmem_status handle_path(const clmem_handle *h, clmem_bridge_path *path_out)
{
    struct bridge_import *rec = clmem__import_of_handle(h);

    if (!h || !path_out)
        return fail_null(!h ? "handle" : "path_out");
    if (!rec)
        return fail_foreign_handle();
    *path_out = rec->ops->path;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_handle_path(const clmem_handle *h, clmem_bridge_path *path_out)
{
    return clmem__error_in(__func__, handle_path(h, path_out));
}
