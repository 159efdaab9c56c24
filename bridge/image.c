/* SPDX-License-Identifier: MIT */
/* clmem_bridge_import_vk_image and clmem_bridge_check_image: images into
 * OpenCL, one plane per handle.
 *
 * A linear plane is not a second import path: it is clmem_bridge_import_vk
 * of the plane's bytes [offset, offset + size) of the image's memory, with
 * the plane's row pitch on the handles (import.c's request carries it), and
 * for CLMEM_BRIDGE_IMAGE_AS_IMAGE an image2d view made from that buffer
 * (import.c, make_image_view). So plane handles are cached, handed over and
 * torn down exactly as buffer handles are. An optimal-tiling image is the
 * fd path's import of the whole allocation, with clCreateImageWithProperties
 * instead of clCreateBufferWithProperties (path-fd.c), offered only once
 * image-check.c's live check passed for the format.
 *
 * Everything that can be checked without the driver is checked here first,
 * in the order of the header's list, so that a bad description is refused
 * before anything is imported. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "image.h"
#include "vk-image.h"

#include <string.h>

#define MAX_CL_FORMATS 512

VkExternalMemoryHandleTypeFlagBits clmem__path_handle_type(clmem_bridge_path path)
{
    return path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                             : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
}

static bool concrete_path(clmem_bridge_path p)
{
    return p == CLMEM_BRIDGE_PATH_OPAQUE_FD || p == CLMEM_BRIDGE_PATH_DMA_BUF || p == CLMEM_BRIDGE_PATH_HOST_MAPPED;
}

/* ------------------------------------------------------------ OpenCL side */

clmem_status clmem__image_cl_format_supported(const clmem_bridge *b, const struct image_format *f, unsigned plane,
                                              cl_mem_flags flags, uint32_t width, uint32_t height)
{
    const struct format_plane *fp = &f->planes[plane];
    cl_image_format formats[MAX_CL_FORMATS];
    cl_uint n = 0;
    size_t max_w = 0, max_h = 0;
    cl_mem_flags access = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY);
    cl_int err = clGetSupportedImageFormats(b->context, access ? access : CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D,
                                            MAX_CL_FORMATS, formats, &n);
    bool found = false;

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_OPENCL, "clGetSupportedImageFormats", err,
                               "%s (%s) cannot list its 2D image formats.", b->caps.cl_device_name,
                               b->caps.cl_platform_name);
    for (cl_uint i = 0; i < n && i < MAX_CL_FORMATS && !found; i++)
        found = formats[i].image_channel_order == fp->cl.image_channel_order &&
                formats[i].image_channel_data_type == fp->cl.image_channel_data_type;
    if (!found)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "%s does not support 2D images of %s (plane %u of %s) with flags 0x%llx.",
                           b->caps.cl_device_name, fp->cl_name, plane, f->name, (unsigned long long)flags);
    clGetDeviceInfo(b->cl_device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof max_w, &max_w, NULL);
    clGetDeviceInfo(b->cl_device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof max_h, &max_h, NULL);
    if ((max_w && width > max_w) || (max_h && height > max_h))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Plane %u of this %s image is %ux%u texels; %s makes 2D images of at most %zux%zu "
                           "(CL_DEVICE_IMAGE2D_MAX_WIDTH, _HEIGHT).",
                           plane, f->name, width, height, b->caps.cl_device_name, max_w, max_h);
    return CLMEM_OK;
}

/* An image2d view of a linear plane of `pitch` bytes a row. */
static clmem_status view_possible(const clmem_bridge *b, const struct image_format *f, unsigned plane,
                                  cl_mem_flags flags, uint32_t width, uint32_t height, uint64_t pitch)
{
    const struct format_plane *fp = &f->planes[plane];
    uint64_t align_bytes = (uint64_t)b->caps.image_pitch_align * fp->texel_bytes;
    clmem_status s;

    if ((s = clmem__caps_report(&b->caps.image_view)) != CLMEM_OK)
        return s;
    if ((s = clmem__image_cl_format_supported(b, f, plane, flags, width, height)) != CLMEM_OK)
        return s;
    if (align_bytes && pitch % align_bytes != 0)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "An image2d view of plane %u of this %s image needs its row pitch to be a multiple "
                           "of CL_DEVICE_IMAGE_PITCH_ALIGNMENT (%u texels of %u bytes = %llu bytes on %s); the "
                           "plane's row pitch is %llu bytes. Its buffer handle (no CLMEM_BRIDGE_IMAGE_AS_IMAGE) "
                           "works at any pitch.",
                           plane, f->name, b->caps.image_pitch_align, fp->texel_bytes, (unsigned long long)align_bytes,
                           b->caps.cl_device_name, (unsigned long long)pitch);
    return CLMEM_OK;
}

/* ------------------------------------------------------------ paths */

clmem_status clmem__image_optimal_path(const clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                       clmem_bridge_path asked, clmem_bridge_path *path_out)
{
    static const clmem_bridge_path fd_paths[] = {CLMEM_BRIDGE_PATH_OPAQUE_FD, CLMEM_BRIDGE_PATH_DMA_BUF};

    switch (asked) {
    case CLMEM_BRIDGE_PATH_HOST_MAPPED:
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Optimal-tiling images are offered on the fd paths only: the host-mapped path shares "
                           "bytes, and an optimal image's bytes are in the driver's own layout. Use linear "
                           "tiling on the host-mapped path.");
    case CLMEM_BRIDGE_PATH_OPAQUE_FD:
    case CLMEM_BRIDGE_PATH_DMA_BUF:
        if (b->caps.path[CAPS_PATH(asked)].status != CLMEM_OK)
            return clmem__fail(b->caps.path[CAPS_PATH(asked)].status,
                               "Optimal-tiling images are offered on the fd paths only, after a live check, and "
                               "this bridge has no %s path. %s",
                               clmem_bridge_path_name(asked), b->caps.path[CAPS_PATH(asked)].message);
        if (memory && !(memory->export_types & clmem__path_handle_type(asked)))
            return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                               "The image's memory was not allocated exportable as %s (export_types 0x%x).",
                               clmem_bridge_path_name(asked), (unsigned)memory->export_types);
        *path_out = asked;
        return CLMEM_OK;
    case CLMEM_BRIDGE_PATH_BEST:
        for (unsigned i = 0; i < 2; i++)
            if (b->caps.path[CAPS_PATH(fd_paths[i])].status == CLMEM_OK &&
                (!memory || (memory->export_types & clmem__path_handle_type(fd_paths[i])))) {
                *path_out = fd_paths[i];
                return CLMEM_OK;
            }
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Optimal-tiling images are offered on the fd paths only, after a live check, and "
                           "none fits%s: opaque fd: %s dma-buf: %s",
                           memory ? " this memory" : "",
                           b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_OPAQUE_FD)].status
                               ? b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_OPAQUE_FD)].message
                               : "the memory is not exportable as opaque fd.",
                           b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_DMA_BUF)].status
                               ? b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_DMA_BUF)].message
                               : "the memory is not exportable as dma-buf.");
    }
    return fail_unknown_path((int)asked);
}

/* ------------------------------------------------------------ the import */

/* The checks of the description that every tiling shares. */
static clmem_status check_description(const clmem_bridge_vk_image *image, uint32_t plane, uint32_t image_flags,
                                      const struct image_format **format_out)
{
    const struct image_format *f;

    if (image_flags & ~(uint32_t)CLMEM_BRIDGE_IMAGE_AS_IMAGE)
        return fail_unknown_bits("image_flags", image_flags, image_flags & ~(uint32_t)CLMEM_BRIDGE_IMAGE_AS_IMAGE);
    if (!(f = clmem__format_find(image->format)))
        return clmem__format_unknown(image->format);
    if (plane >= f->plane_count)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Plane %u is past the %u plane%s of %s (planes 0 to %u).", plane,
                           f->plane_count, f->plane_count == 1 ? "" : "s", f->name, f->plane_count - 1u);
    if (image->plane_count != f->plane_count)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "image->plane_count is %u; %s has %u plane%s.", image->plane_count,
                           f->name, f->plane_count, f->plane_count == 1 ? "" : "s");
    if (image->extent.width == 0 || image->extent.height == 0)
        return fail_empty_extent(CLMEM_ERR_INVALID_VALUE, image->extent);
    if (f->plane_count > 1 && (image->extent.width % 2 || image->extent.height % 2))
        return fail_odd_420_extent(f->name, image->extent);
    *format_out = f;
    return CLMEM_OK;
}

static void image_request_of(const struct image_format *f, unsigned plane, const clmem_bridge_vk_image *image,
                             bool optimal, struct image_request *im)
{
    memset(im, 0, sizeof *im);
    im->format = f;
    im->plane = plane;
    im->cl_format = f->planes[plane].cl;
    im->texel_bytes = f->planes[plane].texel_bytes;
    im->width = clmem__format_plane_width(f, plane, image->extent.width);
    im->height = clmem__format_plane_height(f, plane, image->extent.height);
    im->optimal = optimal;
}

/* A linear RGBA8 or BGRA8 VkImage in non-dedicated memory, shared through
 * an fd path on NVIDIA: what OpenCL writes in place, Vulkan read back wrong
 * for some data (docs/driver-notes.md: measured with raw calls on 580.159,
 * and right in a dedicated allocation). Refused rather than shared wrong.
 * A VkBuffer laid out as an image (no VkImage) is not affected. */
static clmem_status check_dedicated(const clmem_bridge *b, const clmem_bridge_vk_image *image,
                                    const struct image_format *f, clmem_bridge_path path)
{
    bool fd_path = path == CLMEM_BRIDGE_PATH_OPAQUE_FD || path == CLMEM_BRIDGE_PATH_DMA_BUF ||
                   (path == CLMEM_BRIDGE_PATH_BEST && image->memory.export_types != 0);

    if (!image->image || image->memory.dedicated || !fd_path || b->caps.vk_vendor_id != VK_VENDOR_NVIDIA ||
        (image->format != VK_FORMAT_R8G8B8A8_UNORM && image->format != VK_FORMAT_B8G8R8A8_UNORM))
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "A linear %s VkImage shared through an fd path on %s needs a dedicated allocation "
                       "(VkMemoryDedicatedAllocateInfo, and memory.dedicated set): in memory that is not, "
                       "Vulkan was measured to read back wrong what OpenCL wrote (NVIDIA 580). "
                       "clmem_bridge_vk_image_create() allocates exported images dedicated.",
                       f->name, b->caps.vk_device_name);
}

static clmem_status import_linear(clmem_bridge *b, const clmem_bridge_vk_image *image, const struct image_format *f,
                                  uint32_t plane, clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                                  cl_command_queue queue, cl_mem_flags flags, bool as_image, clmem_handle **out)
{
    const clmem_bridge_vk_image_plane *pl = &image->planes[plane];
    struct image_request im;
    struct import_request req = {&image->memory, -1, 0, pl->offset, pl->size, queue, flags, 0, NULL};
    uint64_t row_bytes, span;
    clmem_status s;

    image_request_of(f, plane, image, false, &im);
    row_bytes = (uint64_t)im.width * im.texel_bytes;
    if (pl->width != im.width || pl->height != im.height)
        return clmem__fail(
            CLMEM_ERR_INVALID_VALUE, "Plane %u of a %ux%u %s image is %ux%u texels; its description says %ux%u.", plane,
            image->extent.width, image->extent.height, f->name, im.width, im.height, pl->width, pl->height);
    if (pl->row_pitch < row_bytes || pl->row_pitch % im.texel_bytes != 0 || pl->row_pitch > UINT32_MAX)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The row pitch %llu of plane %u must hold a row of %u texels of %u bytes (%llu), be a "
                           "multiple of %u and fit in 32 bits.",
                           (unsigned long long)pl->row_pitch, plane, im.width, im.texel_bytes,
                           (unsigned long long)row_bytes, im.texel_bytes);
    span = (uint64_t)(im.height - 1) * pl->row_pitch + row_bytes;
    if (pl->size < span)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "Plane %u is %llu bytes, less than the %llu bytes its %u rows of pitch %llu span.", plane,
                           (unsigned long long)pl->size, (unsigned long long)span, im.height,
                           (unsigned long long)pl->row_pitch);
    /* Then the request's own checks and whether it fits the bridge, before
     * what the device can do (clmem-bridge.h, "Which error wins"). */
    if ((s = clmem__import_check_own(&req, path)) != CLMEM_OK || (s = clmem__import_check_fits(b, &req)) != CLMEM_OK)
        return s;
    if (pl->offset % b->caps.base_align_bytes != 0)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "Plane %u of this %s image starts at offset %llu of its memory, which is not a "
                           "multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes on %s), as the origin of the "
                           "sub-buffer that covers the plane must be.",
                           plane, f->name, (unsigned long long)pl->offset, b->caps.base_align_bytes,
                           b->caps.cl_device_name);
    if (as_image && (s = view_possible(b, f, plane, flags, im.width, im.height, pl->row_pitch)) != CLMEM_OK)
        return s;
    if ((s = check_dedicated(b, image, f, path)) != CLMEM_OK)
        return s;
    req.row_pitch = (uint32_t)pl->row_pitch;
    req.image = as_image ? &im : NULL;
    return clmem__import_vk_request(b, &req, path, vk_keepalive, out);
}

clmem_status clmem__import_optimal(clmem_bridge *b, const clmem_bridge_vk_image *image, clmem_bridge_path fd_path,
                                   clmem_keepalive *vk_keepalive, cl_command_queue queue, cl_mem_flags flags,
                                   clmem_handle **out)
{
    const struct image_format *f = clmem__format_find(image->format);
    struct image_request im;
    struct import_request req = {&image->memory, -1, 0, 0, image->memory.allocation_size, queue, flags, 0, NULL};
    clmem_status s;

    image_request_of(f, 0, image, true, &im);
    if (image->memory_offset != 0)
        return fail_optimal_offset(image->memory_offset);
    if ((s = clmem__caps_report(&b->caps.image_from_fd)) != CLMEM_OK ||
        (s = clmem__image_cl_format_supported(b, f, 0, flags, im.width, im.height)) != CLMEM_OK)
        return s;
    req.image = &im;
    return clmem__import_vk_request(b, &req, fd_path, vk_keepalive, out);
}

/* The kept results of the optimal-tiling live checks ([0] opaque fd, [1]
 * dma-buf), which image-check.c writes. */
static unsigned path_slot(clmem_bridge_path path)
{
    return path == CLMEM_BRIDGE_PATH_DMA_BUF ? 1u : 0u;
}

struct image_check *clmem__image_check_slot(clmem_bridge *b, const struct image_format *format, clmem_bridge_path path)
{
    return &b->image_checks[clmem__format_index(format)][path_slot(path)];
}

struct image_check clmem__image_check_kept(clmem_bridge *b, const struct image_format *format, clmem_bridge_path path)
{
    struct image_check c;
    pthread_mutex_lock(&b->check_lock);
    c = *clmem__image_check_slot(b, format, path);
    pthread_mutex_unlock(&b->check_lock);
    return c;
}

/* Does the format have an optimal-tiling import at all? */
static clmem_status optimal_offered(const struct image_format *f)
{
    if (f->offers & FORMAT_OPTIMAL_FD)
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "%s offers no optimal-tiling import (core OpenCL has no image of %u planes to import "
                       "it into); with linear tiling each plane is a handle.",
                       f->name, f->plane_count);
}

/* The bridge's kept live-check answer for the format on fd_path: CLMEM_OK
 * once it passed, its failure, or that none has run. */
static clmem_status optimal_checked(clmem_bridge *b, const struct image_format *f, clmem_bridge_path fd_path)
{
    struct image_check check = clmem__image_check_kept(b, f, fd_path);

    if (check.state == IMAGE_CHECK_NOT_RUN)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Optimal-tiling %s images are offered only after a live check on this bridge, and "
                           "none has run for the %s path: call clmem_bridge_image_live_check() first.",
                           f->name, clmem_bridge_path_name(fd_path));
    return clmem__caps_report(&check.answer);
}

static clmem_status import_optimal_checked(clmem_bridge *b, const clmem_bridge_vk_image *image,
                                           const struct image_format *f, clmem_bridge_path path,
                                           clmem_keepalive *vk_keepalive, cl_command_queue queue, cl_mem_flags flags,
                                           bool as_image, clmem_handle **out)
{
    struct import_request req = {&image->memory, -1, 0, 0, image->memory.allocation_size, queue, flags, 0, NULL};
    clmem_bridge_path fd_path;
    clmem_status s;

    if (!as_image)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "An optimal-tiling image has no buffer layout to share (its texels are where the "
                           "driver puts them): ask for CLMEM_BRIDGE_IMAGE_AS_IMAGE, or make the image with "
                           "linear tiling.");
    if ((s = optimal_offered(f)) != CLMEM_OK)
        return s;
    if (image->memory_offset != 0)
        return fail_optimal_offset(image->memory_offset);
    /* The request's own checks and whether it fits the bridge, before what
     * the device can do (clmem-bridge.h, "Which error wins"). */
    if ((s = clmem__import_check_own(&req, path)) != CLMEM_OK || (s = clmem__import_check_fits(b, &req)) != CLMEM_OK)
        return s;
    if ((s = clmem__image_optimal_path(b, &image->memory, path, &fd_path)) != CLMEM_OK)
        return s;
    if ((s = optimal_checked(b, f, fd_path)) != CLMEM_OK)
        return s;
    return clmem__import_optimal(b, image, fd_path, vk_keepalive, queue, flags, out);
}

static clmem_status import_vk_image(clmem_bridge *b, const clmem_bridge_vk_image *image, uint32_t plane,
                                    clmem_bridge_path path, clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                    cl_mem_flags flags, uint32_t image_flags, clmem_handle **out)
{
    const struct image_format *f = NULL;
    bool as_image = (image_flags & CLMEM_BRIDGE_IMAGE_AS_IMAGE) != 0;
    clmem_status s;

    if (out)
        *out = NULL;
    if (!b || !image || !queue || !out)
        return fail_null(!b ? "bridge" : !image ? "image" : !queue ? "queue" : "out");
    BRIDGE_LIVE(b, "clmem_bridge_import_vk_image");
    if (!image->memory.device || !image->memory.memory)
        return clmem__fail(CLMEM_ERR_NULL_POINTER, "image->memory.%s is NULL.",
                           !image->memory.device ? "device" : "memory");
    if ((s = check_description(image, plane, image_flags, &f)) != CLMEM_OK)
        return s;
    /* The tiling is the last argument to check on its own; each branch then
     * keeps clmem-bridge.h's order ("Which error wins"). */
    switch (image->tiling) {
    case VK_IMAGE_TILING_LINEAR:
        return import_linear(b, image, f, plane, path, vk_keepalive, queue, flags, as_image, out);
    case VK_IMAGE_TILING_OPTIMAL:
        return import_optimal_checked(b, image, f, path, vk_keepalive, queue, flags, as_image, out);
    default: break;
    }
    return fail_unknown_tiling("image->tiling", (int)image->tiling);
}

CLMEM_EXPORT clmem_status clmem_bridge_import_vk_image(clmem_bridge *b, const clmem_bridge_vk_image *image,
                                                       uint32_t plane, clmem_bridge_path path,
                                                       clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                                       cl_mem_flags flags, uint32_t image_flags, clmem_handle **out)
{
    return clmem__error_in(__func__,
                           import_vk_image(b, image, plane, path, vk_keepalive, queue, flags, image_flags, out));
}

/* ------------------------------------------------------------ the check */

static clmem_status check_image(const clmem_bridge *cb, VkFormat format, VkImageTiling tiling, clmem_bridge_path path,
                                cl_mem_flags flags, uint32_t image_flags)
{
    /* The Vulkan query goes through the bridge's table; nothing is written. */
    clmem_bridge *b = (clmem_bridge *)cb;
    const VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    bool as_image = (image_flags & CLMEM_BRIDGE_IMAGE_AS_IMAGE) != 0;
    const struct image_format *f;
    clmem_status s;

    if (!b)
        return fail_null("bridge");
    BRIDGE_LIVE(b, "clmem_bridge_check_image");
    if (!concrete_path(path))
        return fail_not_concrete("path", (int)path);
    if (image_flags & ~(uint32_t)CLMEM_BRIDGE_IMAGE_AS_IMAGE)
        return fail_unknown_bits("image_flags", image_flags, image_flags & ~(uint32_t)CLMEM_BRIDGE_IMAGE_AS_IMAGE);
    if (tiling != VK_IMAGE_TILING_LINEAR && tiling != VK_IMAGE_TILING_OPTIMAL)
        return fail_unknown_tiling("tiling", (int)tiling);
    if (!(f = clmem__format_find(format)))
        return clmem__format_unknown(format);
    if (tiling == VK_IMAGE_TILING_LINEAR) {
        VkExternalMemoryHandleTypeFlags export =
            path == CLMEM_BRIDGE_PATH_HOST_MAPPED ? 0 : (VkExternalMemoryHandleTypeFlags)clmem__path_handle_type(path);
        if ((s = clmem__caps_report(&b->caps.path[CAPS_PATH(path)])) != CLMEM_OK ||
            (s = clmem__vk_image_supported(b, f, tiling, usage, export, NULL, NULL)) != CLMEM_OK)
            return s;
        for (unsigned p = 0; as_image && p < f->plane_count; p++)
            if ((s = view_possible(b, f, p, flags, 0, 0, 0)) != CLMEM_OK)
                return s;
        return CLMEM_OK;
    }
    if (!as_image)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "An optimal-tiling image is shared as an OpenCL image only: ask with "
                           "CLMEM_BRIDGE_IMAGE_AS_IMAGE.");
    if ((s = optimal_offered(f)) != CLMEM_OK)
        return s;
    {
        clmem_bridge_path fd_path;

        if ((s = clmem__image_optimal_path(b, NULL, path, &fd_path)) != CLMEM_OK ||
            (s = clmem__caps_report(&b->caps.image_from_fd)) != CLMEM_OK ||
            (s = clmem__image_cl_format_supported(b, f, 0, flags, 0, 0)) != CLMEM_OK ||
            (s = clmem__vk_image_supported(b, f, tiling, usage,
                                           (VkExternalMemoryHandleTypeFlags)clmem__path_handle_type(fd_path), NULL,
                                           NULL)) != CLMEM_OK)
            return s;
        return optimal_checked(b, f, fd_path);
    }
}

CLMEM_EXPORT clmem_status clmem_bridge_check_image(const clmem_bridge *cb, VkFormat format, VkImageTiling tiling,
                                                   clmem_bridge_path path, cl_mem_flags flags, uint32_t image_flags)
{
    return clmem__error_in(__func__, check_image(cb, format, tiling, path, flags, image_flags));
}
