/* SPDX-License-Identifier: MIT */
/* FFmpeg's OpenCL frames over Vulkan frames (clmem-av.h, @ref av_cl): an
 * AV_HWDEVICE_TYPE_OPENCL device over the bridge's context, an OpenCL
 * frames context matching a Vulkan one, and the map call that makes a
 * Vulkan frame an AV_PIX_FMT_OPENCL frame whose planes are image2d
 * objects over the Vulkan memory.
 *
 * A map is clmem_av_frame_import() of the frame's planes (the bridge's
 * buffers, one per plane), the handoff to OpenCL in host order or the sync
 * object's, then one image per plane over each plane buffer's memory, the
 * way the plane's path allows:
 *  - host-ptr-image: the host-mapped path's buffer lives over Vulkan's own
 *    mapping (CL_MEM_HOST_PTR); the image is a CL_MEM_USE_HOST_PTR image
 *    over the same bytes with the plane's row pitch. OpenCL may keep a
 *    copy of such an image's bytes on the device, so the map tells OpenCL
 *    that the host wrote them (a map with CL_MAP_WRITE_INVALIDATE_REGION
 *    and its unmap), and the unmap of a writable mapping brings OpenCL's
 *    bytes back to the host (a map for reading and its unmap) before the
 *    release. On a CPU OpenCL both return the host pointer: no byte moves.
 *  - buffer-view: an image2d over the plane buffer (cl_khr_image2d_from_buffer),
 *    where the device has it and the plane's row pitch and memory meet its
 *    alignments.
 *  - vk-image: a frame of clmem_av_frames_setup_optimal() has no rows to
 *    view; each plane's optimal-tiling VkImage is imported as an OpenCL
 *    image (the bridge's optimal-tiling import, once its live check passed
 *    for the plane's format), and is handed over with a layout change to
 *    GENERAL and a queue-family release to EXTERNAL recorded on FFmpeg's
 *    queue: device order's submissions (sync-device.c), the caller's sync
 *    object where it is in device order, else the cache's own (struct
 *    cl_cache). The map still waits for the acquire before it returns, as
 *    in host order.
 * The planes and images of a frame of libclmem-av's pool are kept in the
 * OpenCL frames context's cache (struct cl_cache, one struct cl_entry per
 * pool frame) from its first map until that frames context is freed; the
 * imports' keepalive is a reference on the Vulkan frames context, whose
 * pool frames live as long as it does, so that the frame itself returns to
 * the pool between maps. Other frames get an entry of the mapping's own.
 *
 * The mapped frame's buf[0] owns a struct cl_mapping; its free callback is
 * the unmap: the release in the same order as the acquire, then the entry
 * back to the cache (or freed), then the references. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "ffmpeg-vk.h"
#include "frame-import.h"
#include "frame-pool.h"
#include "frame-sync.h"
#include "sync.h"

#include <libavutil/hwcontext_opencl.h>
#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The image formats FFmpeg's OpenCL frames use for a software format, one
 * per plane (hwcontext_opencl.c picks CL_R, CL_RG, CL_RGBA or CL_BGRA by
 * component count and order, UNORM_INT8 or UNORM_INT16 by depth). */
struct cl_layout {
    enum AVPixelFormat sw_format;
    const char *name;
    uint32_t planes;
    cl_image_format formats[3];
    uint32_t texel_bytes[3];
};

static const struct cl_layout layouts[] = {
    {AV_PIX_FMT_NV12, "nv12", 2, {{CL_R, CL_UNORM_INT8}, {CL_RG, CL_UNORM_INT8}}, {1, 2}},
    {AV_PIX_FMT_P010, "p010le", 2, {{CL_R, CL_UNORM_INT16}, {CL_RG, CL_UNORM_INT16}}, {2, 4}},
    {AV_PIX_FMT_RGBA, "rgba", 1, {{CL_RGBA, CL_UNORM_INT8}}, {4}},
    {AV_PIX_FMT_BGRA, "bgra", 1, {{CL_BGRA, CL_UNORM_INT8}}, {4}},
    {AV_PIX_FMT_YUV420P,
     "yuv420p",
     3,
     {{CL_R, CL_UNORM_INT8}, {CL_R, CL_UNORM_INT8}, {CL_R, CL_UNORM_INT8}},
     {1, 1, 1}},
};

static const char *order_name(cl_channel_order o)
{
    return o == CL_R ? "CL_R" : o == CL_RG ? "CL_RG" : o == CL_RGBA ? "CL_RGBA" : o == CL_BGRA ? "CL_BGRA" : "?";
}

static const char *type_name(cl_channel_type t)
{
    return t == CL_UNORM_INT8 ? "CL_UNORM_INT8" : t == CL_UNORM_INT16 ? "CL_UNORM_INT16" : "?";
}

/* The software format's row, or NULL with CLMEM_ERR_UNSUPPORTED naming those offered. */
static const struct cl_layout *layout_of(enum AVPixelFormat sw_format)
{
    const char *name = av_get_pix_fmt_name(sw_format);

    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].sw_format == sw_format)
            return &layouts[i];
    clmem__fail(CLMEM_ERR_UNSUPPORTED,
                "OpenCL frames are offered for the software formats nv12, p010, rgba, bgra and yuv420p, not %s.",
                name ? name : "an unknown pix_fmt");
    return NULL;
}

/* Does the context make read-write 2D images of every plane's format?
 * CLMEM_ERR_UNSUPPORTED naming the software format and the image format it
 * lacks. */
static clmem_status check_image_formats(cl_context context, const struct cl_layout *layout)
{
    cl_image_format have[256];
    cl_uint n = 0;
    cl_int err;

    err = clGetSupportedImageFormats(context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 256, have, &n);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetSupportedImageFormats", err,
                               "Listing the OpenCL device's image formats failed.");
    if (n > 256)
        n = 256;
    for (uint32_t p = 0; p < layout->planes; p++) {
        const cl_image_format *want = &layout->formats[p];
        bool found = false;
        for (cl_uint i = 0; i < n && !found; i++)
            found = have[i].image_channel_order == want->image_channel_order &&
                    have[i].image_channel_data_type == want->image_channel_data_type;
        if (!found)
            return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                               "%s frames need %s %s images for plane %u, and the OpenCL device makes no such "
                               "read-write 2D images.",
                               layout->name, order_name(want->image_channel_order),
                               type_name(want->image_channel_data_type), p);
    }
    return CLMEM_OK;
}

/* The OpenCL device context behind a frames context buffer, or NULL. */
static const AVOpenCLDeviceContext *cl_device_of_frames(const AVBufferRef *frames_ref)
{
    const AVHWFramesContext *frames = (const AVHWFramesContext *)frames_ref->data;
    return frames->device_ctx && frames->device_ctx->type == AV_HWDEVICE_TYPE_OPENCL ? frames->device_ctx->hwctx : NULL;
}

/* ---------------------------------------------------------------- the device */

/* The device's free callback: the context reference it was given. */
static void device_free(AVHWDeviceContext *dev)
{
    AVOpenCLDeviceContext *oc = dev->hwctx;
    if (oc->context)
        clReleaseContext(oc->context);
}

static clmem_status cl_device_create(clmem_bridge *b, AVBufferRef **out)
{
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    AVBufferRef *ref;
    AVHWDeviceContext *dev;
    AVOpenCLDeviceContext *oc;
    cl_int err;
    int r;

    if (out)
        *out = NULL;
    if (!b || !out)
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "%s is NULL.", !b ? "b" : "out");
    context = clmem_bridge_context(b);
    device = clmem_bridge_cl_device(b);
    if (!context || !device)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "b is not a live bridge.");
    if (!(ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_OPENCL)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_OPENCL) failed: FFmpeg "
                                                "was built without OpenCL, or memory ran out.");
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    if (!queue) {
        av_buffer_unref(&ref);
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateCommandQueueWithProperties", err,
                               "Making the OpenCL device's queue failed.");
    }
    dev = (AVHWDeviceContext *)ref->data;
    oc = dev->hwctx;
    clRetainContext(context);
    oc->context = context; /* the device's own reference, released by device_free */
    oc->device_id = device;
    oc->command_queue = queue; /* av_hwdevice_ctx_init() retains it */
    dev->free = device_free;
    r = av_hwdevice_ctx_init(ref);
    clReleaseCommandQueue(queue);
    if (r < 0) {
        av_buffer_unref(&ref);
        return clmem__fail(CLMEM_ERR_OPENCL,
                           "av_hwdevice_ctx_init of the OpenCL device over the bridge's context "
                           "returned %d.",
                           r);
    }
    *out = ref;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_cl_device_create(clmem_bridge *b, AVBufferRef **out)
{
    return clmem__error_in(__func__, cl_device_create(b, out));
}

/* ---------------------------------------------------------------- the cache */

/* One Vulkan frame's planes in OpenCL: the plane handles, the images over
 * them and the way they were made. A frame of libclmem-av's pool keeps
 * its entry in the OpenCL frames context's cache (struct cl_cache) from
 * its first map until that frames context is freed, so that mapping it
 * again costs no import and no image; any other frame's entry is the
 * mapping's own. */
struct cl_entry {
    struct cl_entry *next; /* the cache's list */
    const AVVkFrame *vkf;  /* whose planes these are (alive while the imports hold its frames context) */
    clmem_bridge *bridge;  /* a reference: the bridge that imported them */
    clmem_av_frame_planes planes;
    cl_mem images[CLMEM_AV_MAX_PLANES];
    clmem_av_cl_way way;
    bool mapped; /* a mapping uses it (cached entries; under the cache's lock) */
};

/* The OpenCL frames context's cache of pool frames' entries: its
 * AVHWFramesContext.user_opaque, freed by its free callback. `device_sync`
 * is the device-order sync object that hands over the vk-image way's
 * frames mapped without one of the caller's (made on the first such map,
 * on that map's bridge). */
struct cl_cache {
    pthread_mutex_t lock;
    struct cl_entry *entries;
    clmem_av_sync *device_sync;
};

/* The images, the planes (their last handles start the imports'
 * teardowns), the bridge. */
static void entry_free(struct cl_entry *e)
{
    if (!e)
        return;
    for (uint32_t p = 0; p < CLMEM_AV_MAX_PLANES; p++)
        if (e->images[p])
            clReleaseMemObject(e->images[p]);
    clmem_av_frame_planes_unref(&e->planes);
    clmem_bridge_unref(e->bridge);
    av_free(e);
}

/* The OpenCL frames context is being freed: no mapping of it is left (each
 * holds a reference on it), so no entry is in use. */
static void cache_free(AVHWFramesContext *frames)
{
    struct cl_cache *cache = frames->user_opaque;

    if (!cache)
        return;
    while (cache->entries) {
        struct cl_entry *e = cache->entries;
        cache->entries = e->next;
        entry_free(e);
    }
    clmem_av_sync_unref(cache->device_sync); /* waits for its last submissions */
    pthread_mutex_destroy(&cache->lock);
    av_free(cache);
    frames->user_opaque = NULL;
}

/* ---------------------------------------------------------------- the frames context */

static clmem_status cl_frames_create(AVBufferRef *cl_device_ref, AVBufferRef *vk_frames_ref, AVBufferRef **out)
{
    const AVHWDeviceContext *cl_dev;
    const AVHWFramesContext *vk_frames;
    const AVOpenCLDeviceContext *oc;
    const struct cl_layout *layout;
    AVHWFramesContext *frames;
    struct cl_cache *cache;
    AVBufferRef *ref;
    clmem_status s;
    int r;

    if (out)
        *out = NULL;
    if (!cl_device_ref || !vk_frames_ref || !out)
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "%s is NULL.",
                           !cl_device_ref   ? "cl_device_ref"
                           : !vk_frames_ref ? "vk_frames_ref"
                                            : "out");
    cl_dev = (const AVHWDeviceContext *)cl_device_ref->data;
    vk_frames = (const AVHWFramesContext *)vk_frames_ref->data;
    if (cl_dev->type != AV_HWDEVICE_TYPE_OPENCL)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "cl_device_ref is not an FFmpeg device context of type AV_HWDEVICE_TYPE_OPENCL.");
    if (!clmem__av_vk_device(vk_frames->device_ctx) || vk_frames->format != AV_PIX_FMT_VULKAN)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "vk_frames_ref is not a frames context of AV_PIX_FMT_VULKAN "
                                                    "frames on a Vulkan device.");
    if (!(layout = layout_of(vk_frames->sw_format)))
        return CLMEM_ERR_UNSUPPORTED;
    oc = cl_dev->hwctx;
    if ((s = check_image_formats(oc->context, layout)) != CLMEM_OK)
        return s;
    if (!(ref = av_hwframe_ctx_alloc(cl_device_ref)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "av_hwframe_ctx_alloc on the OpenCL device failed.");
    frames = (AVHWFramesContext *)ref->data;
    if (!(cache = av_mallocz(sizeof *cache))) {
        av_buffer_unref(&ref);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the frames context's cache failed.");
    }
    pthread_mutex_init(&cache->lock, NULL);
    frames->user_opaque = cache;
    frames->free = cache_free;
    frames->format = AV_PIX_FMT_OPENCL;
    frames->sw_format = vk_frames->sw_format;
    frames->width = vk_frames->width;
    frames->height = vk_frames->height;
    /* FFmpeg's own pool of OpenCL images stays empty (initial_pool_size
     * 0): mapped frames bring their images. */
    if ((r = av_hwframe_ctx_init(ref)) < 0) {
        av_buffer_unref(&ref);
        return clmem__fail(CLMEM_ERR_OPENCL, "av_hwframe_ctx_init of the OpenCL frames context (%s %dx%d) returned %d.",
                           layout->name, vk_frames->width, vk_frames->height, r);
    }
    *out = ref;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_cl_frames_create(AVBufferRef *cl_device_ref, AVBufferRef *vk_frames_ref,
                                                    AVBufferRef **out)
{
    return clmem__error_in(__func__, cl_frames_create(cl_device_ref, vk_frames_ref, out));
}

/* ---------------------------------------------------------------- the map */

/* What a mapped frame's buf[0] holds. */
struct cl_mapping {
    clmem_bridge *bridge;
    clmem_av_sync *sync;    /* NULL: host order; always a device-order one for the vk-image way */
    AVFrame *vk;            /* a reference on the Vulkan frame */
    AVBufferRef *cl_frames; /* a reference on the OpenCL frames context (its cache holds `entry`) */
    struct cl_entry *entry;
    bool cached;            /* entry is the cache's, not the mapping's own */
    cl_command_queue queue; /* the OpenCL device's queue (retained): acquire, release, host-ptr upkeep */
    int flags;              /* AV_HWFRAME_MAP_* */
};

/* Tags buf[0] of a mapped frame (its opaque), so that clmem_av_cl_frame_way() knows one. */
static const char mapping_tag[] = "clmem-av OpenCL mapping";

CLMEM_EXPORT const char *clmem_av_cl_way_name(clmem_av_cl_way way)
{
    static const char *const names[] = {
        [CLMEM_AV_CL_WAY_NONE] = "none",
        [CLMEM_AV_CL_WAY_HOST_PTR] = "host-ptr-image",
        [CLMEM_AV_CL_WAY_BUFFER_VIEW] = "buffer-view",
        [CLMEM_AV_CL_WAY_VK_IMAGE] = "vk-image",
    };

    return (unsigned)way < sizeof names / sizeof names[0] ? names[way] : "unknown-way";
}

/* The cache of an OpenCL frames context clmem_av_cl_frames_create() made,
 * or NULL for any other. */
static struct cl_cache *cache_of(const AVBufferRef *cl_frames_ref)
{
    const AVHWFramesContext *frames = (const AVHWFramesContext *)cl_frames_ref->data;
    return frames->free == cache_free ? frames->user_opaque : NULL;
}

/* The keepalive of a cached entry's imports: a reference on the Vulkan
 * frames context, whose pool frames live as long as it does, so that the
 * frame itself goes back to the pool between maps. */
static void frames_ref_release(void *user)
{
    AVBufferRef *ref = user;
    av_buffer_unref(&ref);
}

/* Host-ptr images: bring the image's bytes from the host (`to_device`, a
 * map that invalidates OpenCL's copy) or back to it (a map for reading),
 * each map unmapped at once. Blocking: done when it returns. */
static cl_int host_ptr_sync(const struct cl_mapping *m, bool to_device)
{
    const struct cl_entry *e = m->entry;
    cl_int err = CL_SUCCESS;

    for (uint32_t p = 0; p < e->planes.count && err == CL_SUCCESS; p++) {
        size_t origin[3] = {0, 0, 0}, region[3] = {e->planes.widths[p], e->planes.heights[p], 1}, pitch = 0;
        void *ptr =
            clEnqueueMapImage(m->queue, e->images[p], CL_TRUE, to_device ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ,
                              origin, region, &pitch, NULL, 0, NULL, NULL, &err);
        if (ptr)
            err = clEnqueueUnmapMemObject(m->queue, e->images[p], ptr, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS)
        err = clFinish(m->queue);
    return err;
}

/* Hand the frame back to Vulkan (host order or the sync object's). */
static clmem_status mapping_release(struct cl_mapping *m)
{
    return m->sync ? clmem_av_sync_release(m->sync, m->vk, &m->entry->planes, m->queue, 0, NULL)
                   : clmem__av_frame_release(m->bridge, m->vk, &m->entry->planes, m->queue, 0, NULL);
}

/* Everything but the release: a cached entry goes back to its cache (its
 * imports kept, or dropped if `drop_entry`), the mapping's own entry goes,
 * then the references. */
static void mapping_free_parts(struct cl_mapping *m, bool drop_entry)
{
    if (m->cached) {
        struct cl_cache *cache = cache_of(m->cl_frames);
        pthread_mutex_lock(&cache->lock);
        if (drop_entry) {
            for (struct cl_entry **at = &cache->entries; *at; at = &(*at)->next)
                if (*at == m->entry) {
                    *at = m->entry->next;
                    break;
                }
        } else {
            m->entry->mapped = false;
        }
        pthread_mutex_unlock(&cache->lock);
    }
    if (!m->cached || drop_entry)
        entry_free(m->entry);
    if (m->queue)
        clReleaseCommandQueue(m->queue);
    av_frame_free(&m->vk);
    clmem_av_sync_unref(m->sync);
    clmem_bridge_unref(m->bridge);
    av_buffer_unref(&m->cl_frames); /* last: it may free the cache */
    av_free(m);
}

/* The mapped frame's buf[0] went: the unmap. It cannot report a failure
 * (FFmpeg's buffer free returns nothing); the release signals FFmpeg's
 * semaphores even when OpenCL's work ended in an error (clmem_av_frame_release()),
 * so that FFmpeg never waits forever. */
static void mapping_unmap(void *opaque, uint8_t *data)
{
    struct cl_mapping *m = (struct cl_mapping *)data;

    (void)opaque;
    if (m->entry->way == CLMEM_AV_CL_WAY_HOST_PTR && (m->flags & (AV_HWFRAME_MAP_WRITE | AV_HWFRAME_MAP_OVERWRITE)))
        host_ptr_sync(m, false);
    mapping_release(m);
    mapping_free_parts(m, false);
}

/* Plane p's image over the host-mapped plane buffer's own bytes. */
static clmem_status image_host_ptr(cl_context context, struct cl_entry *e, const struct cl_layout *layout, uint32_t p)
{
    cl_mem buf = clmem_handle_mem(e->planes.planes[p]);
    void *host = NULL;
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                          .image_width = e->planes.widths[p],
                          .image_height = e->planes.heights[p],
                          .image_row_pitch = clmem_handle_row_pitch(e->planes.planes[p])};
    cl_int err = clGetMemObjectInfo(buf, CL_MEM_HOST_PTR, sizeof host, &host, NULL);

    if (err != CL_SUCCESS || !host)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clGetMemObjectInfo", err,
                               "Plane %u's host-mapped buffer has no CL_MEM_HOST_PTR to make its image over.", p);
    e->images[p] =
        clCreateImage(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &layout->formats[p], &desc, host, &err);
    if (!e->images[p])
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateImage", err,
                               "Making plane %u's %s image (%ux%u, row pitch %zu, CL_MEM_USE_HOST_PTR over the "
                               "Vulkan mapping) failed.",
                               p, order_name(layout->formats[p].image_channel_order), e->planes.widths[p],
                               e->planes.heights[p], desc.image_row_pitch);
    return CLMEM_OK;
}

/* Plane p's image2d over the plane buffer (cl_khr_image2d_from_buffer). */
static clmem_status image_buffer_view(cl_context context, cl_device_id device, struct cl_entry *e,
                                      const struct cl_layout *layout, uint32_t p)
{
    cl_uint pitch_align = 0;
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                          .image_width = e->planes.widths[p],
                          .image_height = e->planes.heights[p],
                          .image_row_pitch = clmem_handle_row_pitch(e->planes.planes[p]),
                          .buffer = clmem_handle_mem(e->planes.planes[p])};
    cl_int err;

    /* CL_DEVICE_IMAGE_PITCH_ALIGNMENT is in texels; 0 where the device
     * makes no images from buffers. */
    clGetDeviceInfo(device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof pitch_align, &pitch_align, NULL);
    if (!pitch_align || desc.image_row_pitch % ((size_t)pitch_align * layout->texel_bytes[p]))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Plane %u's row pitch (%zu bytes) is not a multiple of the OpenCL device's image pitch "
                           "alignment (%u texels of %u bytes), so no image2d can view its buffer.",
                           p, desc.image_row_pitch, pitch_align, layout->texel_bytes[p]);
    e->images[p] = clCreateImage(context, CL_MEM_READ_WRITE, &layout->formats[p], &desc, NULL, &err);
    if (!e->images[p])
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateImage", err,
                               "Making plane %u's %s image2d from its buffer (%ux%u, row pitch %zu) failed.", p,
                               order_name(layout->formats[p].image_channel_order), e->planes.widths[p],
                               e->planes.heights[p], desc.image_row_pitch);
    return CLMEM_OK;
}

static bool has_device_extension(cl_device_id device, const char *name)
{
    char ext[8192] = "";
    size_t len = strlen(name);

    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    for (const char *at = strstr(ext, name); at; at = strstr(at + 1, name))
        if ((at == ext || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0'))
            return true;
    return false;
}

/* Which way the planes' path allows: the host-mapped path's buffers lie
 * over Vulkan's mapping; the fd paths' buffers take image2d views where
 * the device has them. Planes imported as images (`vk_image`) are the
 * vk-image way's, and each plane's handle holds its image. */
static clmem_status choose_way(struct cl_entry *e, cl_device_id device, bool vk_image, clmem_av_cl_way *way)
{
    clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST;
    clmem_status s;

    if (vk_image) {
        for (uint32_t p = 0; p < e->planes.count; p++) {
            e->images[p] = clmem_handle_mem(e->planes.planes[p]);
            clRetainMemObject(e->images[p]); /* the entry's reference, as for the images of the other ways */
        }
        *way = CLMEM_AV_CL_WAY_VK_IMAGE;
        return CLMEM_OK;
    }
    if ((s = clmem_bridge_handle_path(e->planes.planes[0], &path)) != CLMEM_OK)
        return s;
    if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
        *way = CLMEM_AV_CL_WAY_HOST_PTR;
        return CLMEM_OK;
    }
    if (has_device_extension(device, "cl_khr_image2d_from_buffer")) {
        *way = CLMEM_AV_CL_WAY_BUFFER_VIEW;
        return CLMEM_OK;
    }
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The frame's planes went through the %s path, and the OpenCL device has no "
                       "cl_khr_image2d_from_buffer to view them as images: set the Vulkan frames context up "
                       "with clmem_av_frames_setup_optimal() instead, whose planes are imported as images.",
                       clmem_bridge_path_name(path));
}

/* The vk-image way's imports need the bridge's live check to have passed
 * for each plane's format (it runs once per bridge and format, on the sync
 * object's queue). CLMEM_ERR_UNSUPPORTED naming the way and the bridge's
 * answer for the first plane it refuses. */
static clmem_status check_vk_image(struct cl_mapping *m, const AVHWFramesContext *vk_frames)
{
    const struct cl_layout *layout = layout_of(vk_frames->sw_format); /* cl_map() checked it */
    const VkFormat *formats = av_vkfmt_from_pixfmt(vk_frames->sw_format);

    for (uint32_t p = 0; p < layout->planes; p++) {
        clmem_status s = clmem__av_device_live_check(m->sync, formats[p], m->queue);
        if (s != CLMEM_OK) {
            char why[1024];
            snprintf(why, sizeof why, "%s", clmem_error_message());
            return clmem__fail(s == CLMEM_ERR_VULKAN || s == CLMEM_ERR_NO_MEMORY ? s : CLMEM_ERR_UNSUPPORTED,
                               "src is an optimal-tiling %s frame (clmem_av_frames_setup_optimal()), whose planes "
                               "reach OpenCL as their VkImages imported as images (the vk-image way), and the "
                               "bridge does not import plane %u so: %s",
                               layout->name, p, why);
        }
    }
    return CLMEM_OK;
}

/* The device-order sync object that hands a vk-image frame over: the
 * caller's where it is in device order, else the cache's own (made on
 * its first use), else, for an OpenCL frames context of FFmpeg's own or a
 * map on another bridge than the cache's, one of the mapping's own.
 * CLMEM_ERR_UNSUPPORTED where device order cannot work here, naming the
 * way and why. */
static clmem_status vk_image_sync(struct cl_mapping *m, clmem_av_sync *given, AVBufferRef *vk_device_ref)
{
    struct cl_cache *cache = cache_of(m->cl_frames);
    clmem_status s = CLMEM_OK;

    if (given && clmem_av_sync_get_order(given) == CLMEM_AV_ORDER_DEVICE) {
        m->sync = clmem_av_sync_ref(given);
        return CLMEM_OK;
    }
    if (cache) {
        pthread_mutex_lock(&cache->lock);
        if (!cache->device_sync)
            s = clmem_av_sync_create(m->bridge, vk_device_ref, CLMEM_AV_ORDER_DEVICE, CLMEM_AV_MAX_IN_FLIGHT,
                                     &cache->device_sync);
        if (s == CLMEM_OK && cache->device_sync->bridge == m->bridge)
            m->sync = clmem_av_sync_ref(cache->device_sync);
        pthread_mutex_unlock(&cache->lock);
    }
    if (s == CLMEM_OK && !m->sync)
        s = clmem_av_sync_create(m->bridge, vk_device_ref, CLMEM_AV_ORDER_DEVICE, 1, &m->sync);
    if (s != CLMEM_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        return clmem__fail(s == CLMEM_ERR_NO_MEMORY ? s : CLMEM_ERR_UNSUPPORTED,
                           "src is an optimal-tiling frame (clmem_av_frames_setup_optimal()), whose planes reach "
                           "OpenCL as their VkImages imported as images (the vk-image way), handed over with a "
                           "layout change on FFmpeg's queue in device order, and device order cannot work here: %s",
                           why);
    }
    return CLMEM_OK;
}

/* The mapping's entry: the cache's for a frame of libclmem-av's pool
 * mapped into a frames context of clmem_av_cl_frames_create() (made and
 * listed on its first map, marked mapped), else one of its own (`ours`:
 * src is a frame of libclmem-av's pool, as cl_map found). Its planes are
 * imported and its way chosen unless the entry has them. */
static clmem_status mapping_entry(struct cl_mapping *m, const AVFrame *src, cl_device_id device, bool ours,
                                  bool vk_image)
{
    struct cl_cache *cache = cache_of(m->cl_frames);
    const AVVkFrame *vkf = (const AVVkFrame *)src->data[0];
    clmem_keepalive *keepalive = NULL;
    clmem_status s;

    if (cache && ours) {
        struct cl_entry *e;
        pthread_mutex_lock(&cache->lock);
        for (e = cache->entries; e && !(e->vkf == vkf && e->bridge == m->bridge); e = e->next)
            ;
        if (e && e->mapped) {
            pthread_mutex_unlock(&cache->lock);
            return clmem__fail(CLMEM_ERR_INVALID_VALUE, "src is mapped already: unmap it (av_frame_unref() of "
                                                        "its OpenCL frame) before mapping it again.");
        }
        if (!e && (e = av_mallocz(sizeof *e))) {
            e->vkf = vkf;
            e->bridge = clmem_bridge_ref(m->bridge);
            e->next = cache->entries;
            cache->entries = e;
        }
        if (e)
            e->mapped = true;
        pthread_mutex_unlock(&cache->lock);
        if (!e)
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the frame's cache entry failed.");
        m->entry = e;
        m->cached = true;
    } else {
        if (!(m->entry = av_mallocz(sizeof *m->entry)))
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the mapping failed.");
        m->entry->vkf = vkf;
        m->entry->bridge = clmem_bridge_ref(m->bridge);
    }
    if (m->entry->planes.count)
        return CLMEM_OK; /* kept from an earlier map */
    if (vk_image && (s = check_vk_image(m, (const AVHWFramesContext *)src->hw_frames_ctx->data)) != CLMEM_OK)
        return s;
    if (m->cached) {
        AVBufferRef *frames_ref = av_buffer_ref(src->hw_frames_ctx);
        if (!frames_ref || !(keepalive = clmem_keepalive_new(frames_ref_release, frames_ref))) {
            av_buffer_unref(&frames_ref);
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Taking a reference on src's frames context failed.");
        }
    }
    s = clmem__av_frame_import(m->bridge, src, CLMEM_BRIDGE_PATH_BEST, m->queue, CL_MEM_READ_WRITE, keepalive, vk_image,
                               &m->entry->planes);
    clmem_keepalive_unref(keepalive); /* the imports hold it now, or it goes here */
    if (s == CLMEM_OK && (s = choose_way(m->entry, device, vk_image, &m->entry->way)) != CLMEM_OK)
        clmem_av_frame_planes_unref(&m->entry->planes);
    return s;
}

static clmem_status cl_map(clmem_bridge *b, clmem_av_sync *sync, AVFrame *dst, const AVFrame *src, int flags)
{
    const AVHWFramesContext *cl_frames, *vk_frames;
    const AVOpenCLDeviceContext *oc;
    const struct cl_layout *layout;
    struct cl_mapping *m;
    struct cl_entry *e;
    struct av_pool_facts facts = {0};
    bool ours = false, vk_image;
    AVFrame *out = NULL;
    clmem_status s;
    cl_int err;

    if (!b || !dst || !src)
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "%s is NULL.", !b ? "b" : !dst ? "dst" : "src");
    if (flags & ~(AV_HWFRAME_MAP_READ | AV_HWFRAME_MAP_WRITE | AV_HWFRAME_MAP_OVERWRITE | AV_HWFRAME_MAP_DIRECT))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "flags 0x%x has bits that are no AV_HWFRAME_MAP_* flag.",
                           (unsigned)flags);
    if (!dst->hw_frames_ctx || dst->buf[0] || dst->data[0])
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           dst->hw_frames_ctx ? "dst holds a frame already: pass a frame with only hw_frames_ctx set."
                                              : "dst has no hw_frames_ctx: set it to an OpenCL frames context "
                                                "(clmem_av_cl_frames_create()).");
    if (src->format != AV_PIX_FMT_VULKAN || !src->hw_frames_ctx || !src->data[0]) {
        const char *name = av_get_pix_fmt_name((enum AVPixelFormat)src->format);
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "src is not a Vulkan frame (its pix_fmt is %s%s).",
                           name ? name : "none",
                           src->format == AV_PIX_FMT_VULKAN ? ", without its AVVkFrame or frames context" : "");
    }
    cl_frames = (const AVHWFramesContext *)dst->hw_frames_ctx->data;
    vk_frames = (const AVHWFramesContext *)src->hw_frames_ctx->data;
    if (!(oc = cl_device_of_frames(dst->hw_frames_ctx)) || cl_frames->format != AV_PIX_FMT_OPENCL)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "dst->hw_frames_ctx is not a frames context of "
                                                    "AV_PIX_FMT_OPENCL frames on an OpenCL device.");
    if (!(layout = layout_of(vk_frames->sw_format)))
        return CLMEM_ERR_UNSUPPORTED;
    if (cl_frames->sw_format != vk_frames->sw_format || cl_frames->width != vk_frames->width ||
        cl_frames->height != vk_frames->height)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "dst's OpenCL frames context is %s %dx%d and src's Vulkan frames are %s %dx%d: make it "
                           "with clmem_av_cl_frames_create() from src's frames context.",
                           av_get_pix_fmt_name(cl_frames->sw_format), cl_frames->width, cl_frames->height, layout->name,
                           vk_frames->width, vk_frames->height);
    if (oc->context != clmem_bridge_context(b))
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH, "dst's OpenCL device has another cl_context than the bridge's: "
                                                      "make it with clmem_av_cl_device_create() on this bridge.");
    /* A frames context of clmem_av_cl_frames_create() had its formats
     * checked when it was made, on this context and for this sw_format. */
    if (!cache_of(dst->hw_frames_ctx) && (s = check_image_formats(oc->context, layout)) != CLMEM_OK)
        return s;
    if ((s = clmem__av_pool_check(vk_frames, &ours, &facts)) != CLMEM_OK)
        return s;
    vk_image = ours && facts.tiling == VK_IMAGE_TILING_OPTIMAL;
    if (!flags)
        flags = AV_HWFRAME_MAP_READ | AV_HWFRAME_MAP_WRITE;

    if (!(m = av_mallocz(sizeof *m)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the mapping failed.");
    m->flags = flags;
    m->queue = oc->command_queue;
    clRetainCommandQueue(m->queue);
    m->bridge = clmem_bridge_ref(b);
    m->vk = av_frame_clone(src);
    m->cl_frames = av_buffer_ref(dst->hw_frames_ctx);
    if (!m->vk || !m->cl_frames) {
        mapping_free_parts(m, false);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Taking a reference on src or on dst's frames context failed.");
    }
    if (!vk_image)
        m->sync = clmem_av_sync_ref(sync);
    else if ((s = vk_image_sync(m, sync, vk_frames->device_ref)) != CLMEM_OK) {
        mapping_free_parts(m, false);
        return s;
    }
    if ((s = mapping_entry(m, src, oc->device_id, ours, vk_image)) != CLMEM_OK) {
        if (m->entry) /* a cached entry without planes is dropped; one with planes was in use: not touched */
            mapping_free_parts(m, !m->entry->planes.count);
        else
            mapping_free_parts(m, false);
        return s;
    }
    e = m->entry;
    s = m->sync ? clmem_av_sync_acquire(m->sync, m->vk, &e->planes, m->queue, UINT64_MAX, NULL)
                : clmem__av_frame_acquire(b, m->vk, &e->planes, m->queue, UINT64_MAX, NULL);
    if (s != CLMEM_OK) {
        mapping_free_parts(m, false);
        return s;
    }
    for (uint32_t p = 0; p < layout->planes && s == CLMEM_OK; p++)
        if (!e->images[p])
            s = e->way == CLMEM_AV_CL_WAY_HOST_PTR ? image_host_ptr(oc->context, e, layout, p)
                                                   : image_buffer_view(oc->context, oc->device_id, e, layout, p);
    /* FFmpeg's filters enqueue on queues of their own: the acquire (and
     * the host-ptr images' bytes) must be OpenCL's before the frame is. */
    if (s == CLMEM_OK && e->way == CLMEM_AV_CL_WAY_HOST_PTR && !(flags & AV_HWFRAME_MAP_OVERWRITE) &&
        (err = host_ptr_sync(m, true)) != CL_SUCCESS)
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueMapImage", err,
                            "Handing the Vulkan bytes to the planes' host-ptr images failed.");
    if (s == CLMEM_OK && (err = clFinish(m->queue)) != CL_SUCCESS)
        s = clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clFinish", err,
                            "Waiting for the planes' acquire failed.");
    if (s == CLMEM_OK && !(out = av_frame_alloc()))
        s = clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the mapped frame failed.");
    if (s == CLMEM_OK &&
        !(out->buf[0] = av_buffer_create((uint8_t *)m, sizeof *m, mapping_unmap, (void *)mapping_tag, 0)))
        s = clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the mapped frame's buffer failed.");
    if (s != CLMEM_OK) {
        /* The frame goes back as the unmap would hand it. The first failure
         * is the one to report: a release that fails too is added to it. */
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        if (mapping_release(m) != CLMEM_OK)
            clmem__fail(s, "%s; handing the frame back to Vulkan failed too: %s", why, clmem_error_message());
        mapping_free_parts(m, false);
        av_frame_free(&out);
        return s;
    }
    /* From here the mapped frame owns m: freeing it is the unmap. */
    for (uint32_t p = 0; p < layout->planes; p++)
        out->data[p] = (uint8_t *)e->images[p];
    out->format = AV_PIX_FMT_OPENCL;
    out->width = src->width;
    out->height = src->height;
    if (!(out->hw_frames_ctx = av_buffer_ref(dst->hw_frames_ctx)) || av_frame_copy_props(out, src) < 0) {
        av_frame_free(&out);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Copying src's properties to the mapped frame failed.");
    }
    av_frame_unref(dst);
    av_frame_move_ref(dst, out);
    av_frame_free(&out);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_cl_map(clmem_bridge *b, clmem_av_sync *sync, AVFrame *dst, const AVFrame *src,
                                          int flags)
{
    return clmem__error_in(__func__, cl_map(b, sync, dst, src, flags));
}

CLMEM_EXPORT clmem_av_cl_way clmem_av_cl_frame_way(const AVFrame *mapped)
{
    const struct cl_mapping *m;

    if (!mapped || !mapped->buf[0] || av_buffer_get_opaque(mapped->buf[0]) != (void *)mapping_tag)
        return CLMEM_AV_CL_WAY_NONE;
    m = (const struct cl_mapping *)mapped->buf[0]->data;
    return m->entry->way;
}
