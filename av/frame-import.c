/* SPDX-License-Identifier: MIT */
/* clmem_av_frame_import(): an AVVkFrame's planes into OpenCL through the
 * bridge's image import, one handle per plane with its row pitch. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "ffmpeg-vk.h"
#include "frame-import.h"
#include "frame-pool.h"
#include "plane-owner.h"

#include <string.h>

/* The frame reference the imports hold as their Vulkan keepalive. */
static void frame_release(void *user)
{
    AVFrame *frame = user;
    av_frame_free(&frame);
}

/* Can the frame's memory go through `path`? CLMEM_ERR_UNSUPPORTED, saying
 * why FFmpeg allocated it without that export, where an fd path is asked
 * for (or BEST would have to take one) and the memory lacks it. */
static clmem_status check_export(clmem_bridge *b, const AVVulkanDeviceContext *vk, clmem_bridge_path path,
                                 VkExternalMemoryHandleTypeFlags types)
{
    VkExternalMemoryHandleTypeFlagBits need;
    const char *extension;

    if (path == CLMEM_BRIDGE_PATH_BEST) {
        if (types || clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_HOST_MAPPED) == CLMEM_OK)
            return CLMEM_OK; /* the bridge picks among what is left */
        path = CLMEM_BRIDGE_PATH_OPAQUE_FD;
    }
    if (path == CLMEM_BRIDGE_PATH_OPAQUE_FD) {
        need = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        extension = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
    } else if (path == CLMEM_BRIDGE_PATH_DMA_BUF) {
        need = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
        extension = VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME;
    } else {
        return CLMEM_OK; /* host-mapped needs no export; an unknown path is the bridge's to refuse */
    }
    if (types & need)
        return CLMEM_OK;
    if (!clmem__av_has_device_extension(vk, extension))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The frame's memory cannot go through the %s path: FFmpeg's Vulkan device did "
                           "not enable %s, so its pool allocated the frame's memory without that export.",
                           clmem_bridge_path_name(path), extension);
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The frame's memory cannot go through the %s path: Vulkan exports no images of the "
                       "frame's format, tiling and usage that way (vkGetPhysicalDeviceImageFormatProperties2), "
                       "so FFmpeg's pool allocated the frame's memory without that export.",
                       clmem_bridge_path_name(path));
}

/* Would the import take the host-mapped path? As the bridge's BEST picks:
 * opaque fd, then dma-buf, where both the memory and the bridge have it,
 * else host-mapped. */
static bool takes_host_mapped(clmem_bridge *b, clmem_bridge_path path, VkExternalMemoryHandleTypeFlags types)
{
    if (path != CLMEM_BRIDGE_PATH_BEST)
        return path == CLMEM_BRIDGE_PATH_HOST_MAPPED;
    if ((types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT) &&
        clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK)
        return false;
    return !((types & VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT) &&
             clmem_bridge_check_path(b, CLMEM_BRIDGE_PATH_DMA_BUF) == CLMEM_OK);
}

/* FFmpeg maps a linear host-visible frame of its own pool to transfer it
 * (av_hwframe_transfer_data, av_hwframe_map), and the host-mapped path
 * holds the memory's one mapping while the import lives: the two would map
 * it twice (VUID-vkMapMemory-memory-00678). Such a frame is refused on that
 * path; libclmem-av's pool hides HOST_VISIBLE from FFmpeg (frame-pool.c). */
static clmem_status check_mapping(clmem_bridge *b, const AVVkFrame *vkf, bool ours, clmem_bridge_path path,
                                  VkExternalMemoryHandleTypeFlags types)
{
    if (ours || vkf->tiling != VK_IMAGE_TILING_LINEAR || !(vkf->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
        !takes_host_mapped(b, path, types))
        return CLMEM_OK;
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "The frame is a linear host-visible frame of FFmpeg's own pool, which FFmpeg maps to "
                       "transfer it, and the host-mapped path holds its memory's one mapping while imported: "
                       "set its frames context up with clmem_av_frames_setup() before av_hwframe_ctx_init() "
                       "(FFmpeg never maps those frames).");
}

/* The frame's tiling, checked: linear, or the linear DRM modifier; or,
 * for `as_images`, the optimal tiling of clmem_av_frames_setup_optimal().
 * Sets *aspect to the aspect its plane layouts are read with. */
static clmem_status check_tiling(const AVVulkanDeviceContext *vk, const AVVkFrame *vkf, bool ours, bool as_images,
                                 VkImageAspectFlags *aspect)
{
    PFN_vkGetImageDrmFormatModifierPropertiesEXT get_modifier;
    VkImageDrmFormatModifierPropertiesEXT props = {.sType = VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_PROPERTIES_EXT};
    VkResult r;

    if (vkf->tiling == VK_IMAGE_TILING_LINEAR) {
        *aspect = VK_IMAGE_ASPECT_COLOR_BIT;
        return CLMEM_OK;
    }
    if (ours && vkf->tiling == VK_IMAGE_TILING_OPTIMAL && as_images) {
        *aspect = VK_IMAGE_ASPECT_COLOR_BIT;
        return CLMEM_OK;
    }
    if (ours && vkf->tiling == VK_IMAGE_TILING_OPTIMAL)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The frame is an optimal-tiling frame of clmem_av_frames_setup_optimal(), whose layout "
                           "is the driver's: OpenCL cannot read its planes as buffers with rows. Set the frames "
                           "context up with clmem_av_frames_setup() for plane buffers.");
    if (vkf->tiling != VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The frame's images have %s tiling, whose layout is the driver's: set its frames "
                           "context up with clmem_av_frames_setup() before av_hwframe_ctx_init().",
                           vkf->tiling == VK_IMAGE_TILING_OPTIMAL ? "optimal" : "an unknown");
    get_modifier = (PFN_vkGetImageDrmFormatModifierPropertiesEXT)clmem__av_device_proc(
        vk, "vkGetImageDrmFormatModifierPropertiesEXT");
    if (!get_modifier)
        return CLMEM_ERR_UNSUPPORTED;
    if ((r = get_modifier(vk->act_dev, vkf->img[0], &props)) != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkGetImageDrmFormatModifierPropertiesEXT", r,
                               "Reading the frame's DRM format modifier failed.");
    if (props.drmFormatModifier != 0)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The frame's images have the tiled DRM format modifier 0x%llx, whose layout is "
                           "the driver's: set its frames context up with clmem_av_frames_setup() before "
                           "av_hwframe_ctx_init() to get DRM_FORMAT_MOD_LINEAR.",
                           (unsigned long long)props.drmFormatModifier);
    *aspect = VK_IMAGE_ASPECT_MEMORY_PLANE_0_BIT_EXT;
    return CLMEM_OK;
}

/* Plane p of the frame as the bridge's image description: FFmpeg's image
 * of plane p alone (a one-plane format), its memory, and its layout. */
static void describe_plane(const AVVulkanDeviceContext *vk, const AVHWFramesContext *frames,
                           const struct av_format *format, const AVVkFrame *vkf, uint32_t p, bool ours,
                           VkMemoryPropertyFlags hidden_flags, VkImageAspectFlags aspect,
                           VkExternalMemoryHandleTypeFlags export_types,
                           PFN_vkGetImageMemoryRequirements2 get_requirements,
                           PFN_vkGetImageSubresourceLayout get_layout, clmem_bridge_vk_image *desc)
{
    const AVVulkanFramesContext *fc = frames->hwctx;
    /* libclmem-av's pool gives each plane memory of its own, whatever flags
     * FFmpeg's av_hwframe_ctx_init() set (it sets CONTIGUOUS on Intel). */
    bool contiguous = !ours && ((fc->flags & AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY) || !vkf->mem[p]);
    uint32_t m = contiguous ? 0 : p; /* FFmpeg's one allocation holds every plane at offset[p] */
    VkImageMemoryRequirementsInfo2 req_info = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2, NULL,
                                               vkf->img[p]};
    VkMemoryDedicatedRequirements dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, .pNext = &dedicated};
    VkImageSubresource sub = {aspect, 0, 0};
    VkSubresourceLayout layout = {0};
    uint32_t w = (uint32_t)frames->width, h = (uint32_t)frames->height;

    if (p > 0 && format->subsampled) {
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    get_requirements(vk->act_dev, &req_info, &req);
    /* Vulkan gives no subresource layout for an optimal-tiling image (its
     * texels are where the driver puts them): its planes[] stay 0. */
    if (vkf->tiling != VK_IMAGE_TILING_OPTIMAL)
        get_layout(vk->act_dev, vkf->img[p], &sub, &layout);

    memset(desc, 0, sizeof *desc);
    desc->image = vkf->img[p];
    desc->memory.device = vk->act_dev;
    desc->memory.memory = vkf->mem[m];
    desc->memory.allocation_size = vkf->size[m];
    desc->memory.property_flags = vkf->flags | hidden_flags; /* the bits libclmem-av's pool hides from FFmpeg */
    desc->memory.export_types = export_types;
    /* libclmem-av's pool allocates every plane dedicated; FFmpeg's own
     * where Vulkan prefers or requires it, except in its one contiguous
     * allocation. */
    desc->memory.dedicated = ours || (!contiguous && (dedicated.prefersDedicatedAllocation ||
                                                      dedicated.requiresDedicatedAllocation));
    desc->memory_offset = (VkDeviceSize)vkf->offset[p];
    desc->size = req.memoryRequirements.size;
    desc->format = av_vkfmt_from_pixfmt(frames->sw_format)[p];
    desc->extent.width = w;
    desc->extent.height = h;
    desc->usage = fc->usage;
    desc->plane_count = 1;
    if (vkf->tiling == VK_IMAGE_TILING_OPTIMAL) {
        desc->tiling = VK_IMAGE_TILING_OPTIMAL;
        return;
    }
    desc->tiling = VK_IMAGE_TILING_LINEAR; /* the linear DRM modifier's layout is linear too */
    desc->planes[0].offset = desc->memory_offset + layout.offset;
    desc->planes[0].size = layout.size;
    desc->planes[0].row_pitch = layout.rowPitch;
    desc->planes[0].width = w;
    desc->planes[0].height = h;
}

CLMEM_EXPORT void clmem_av_frame_planes_unref(clmem_av_frame_planes *planes)
{
    if (!planes)
        return;
    for (uint32_t i = 0; i < planes->count && i < CLMEM_AV_MAX_PLANES; i++)
        clmem_handle_unref(planes->planes[i]);
    memset(planes, 0, sizeof *planes);
}

static clmem_status av_frame_import(clmem_bridge *b, const AVFrame *frame, clmem_bridge_path path,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_av_frame_planes *out)
{
    return clmem__av_frame_import(b, frame, path, queue, flags, NULL, false, out);
}

/* frame-import.h. */
clmem_status clmem__av_frame_import(clmem_bridge *b, const AVFrame *frame, clmem_bridge_path path,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_keepalive *given, bool as_images,
                                    clmem_av_frame_planes *out)
{
    AVVkFrame *vkf;
    AVHWFramesContext *frames;
    const struct av_format *format;
    const AVVulkanDeviceContext *vk;
    VkImageAspectFlags aspect = VK_IMAGE_ASPECT_COLOR_BIT;
    VkExternalMemoryHandleTypeFlags export_types;
    PFN_vkGetImageMemoryRequirements2 get_requirements;
    PFN_vkGetImageSubresourceLayout get_layout;
    AVFrame *ref;
    clmem_keepalive *keepalive;
    clmem_av_frame_planes planes = {0};
    struct av_pool_facts facts = {0};
    bool ours = false;
    clmem_status s;

    if (out)
        memset(out, 0, sizeof *out);
    if (!b || !frame || !queue || !out)
        return clmem__null_arg(!b ? "b" : !frame ? "frame" : !queue ? "queue" : "out");
    if ((s = clmem__av_frame_parts(frame, &vkf, &frames, &format)) != CLMEM_OK)
        return s;
    vk = clmem__av_vk_device(frames->device_ctx);
    if (vk->act_dev != clmem_bridge_vk_device(b))
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                           "The frame is on another VkDevice than the bridge's: make the bridge from the "
                           "frame's device context (clmem_av_bridge_create()).");
    if ((s = clmem__av_pool_check(frames, &ours, &facts)) != CLMEM_OK ||
        (s = check_tiling(vk, vkf, ours, as_images, &aspect)) != CLMEM_OK)
        return s;
    if ((s = clmem__av_export_types(vk, frames, ours, facts.tiling, &export_types)) != CLMEM_OK ||
        (s = check_export(b, vk, path, export_types)) != CLMEM_OK ||
        (s = check_mapping(b, vkf, ours, path, export_types)) != CLMEM_OK)
        return s;
    get_requirements = (PFN_vkGetImageMemoryRequirements2)clmem__av_device_proc(vk, "vkGetImageMemoryRequirements2");
    get_layout = (PFN_vkGetImageSubresourceLayout)clmem__av_device_proc(vk, "vkGetImageSubresourceLayout");
    if (!get_requirements || !get_layout)
        return CLMEM_ERR_UNSUPPORTED;

    if (given) {
        keepalive = clmem_keepalive_ref(given);
    } else {
        if (!(ref = av_frame_clone(frame)))
            return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, "av_frame_clone", 0,
                                   "Taking a reference on the frame failed.");
        if (!(keepalive = clmem_keepalive_new(frame_release, ref))) {
            av_frame_free(&ref);
            return CLMEM_ERR_NO_MEMORY;
        }
    }

    for (uint32_t p = 0; p < format->planes; p++) {
        clmem_bridge_vk_image desc;

        describe_plane(vk, frames, format, vkf, p, ours, facts.hidden_flags, aspect, export_types, get_requirements,
                       get_layout, &desc);
        s = clmem_bridge_import_vk_image(b, &desc, 0, path, keepalive, queue, flags,
                                         as_images ? CLMEM_BRIDGE_IMAGE_AS_IMAGE : 0, &planes.planes[p]);
        if (s == CLMEM_OK && (s = clmem__av_plane_owner_add(clmem_handle_mem(planes.planes[p]), vkf->img[p])) != CLMEM_OK)
            clmem_handle_unref(planes.planes[p]);
        if (s != CLMEM_OK)
            break;
        planes.formats[p] = desc.format;
        planes.widths[p] = desc.extent.width;
        planes.heights[p] = desc.extent.height;
        planes.count = p + 1;
    }
    clmem_keepalive_unref(keepalive); /* the imports hold it now, or it goes here */
    if (s != CLMEM_OK) {
        clmem_av_frame_planes_unref(&planes);
        return s;
    }
    *out = planes;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_frame_import(clmem_bridge *b, const AVFrame *frame, clmem_bridge_path path,
                                                cl_command_queue queue, cl_mem_flags flags, clmem_av_frame_planes *out)
{
    return clmem__error_in(__func__, av_frame_import(b, frame, path, queue, flags, out));
}
