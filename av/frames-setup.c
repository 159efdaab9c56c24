/* SPDX-License-Identifier: MIT */
/* clmem_av_frames_setup(): a Vulkan frames context whose frames OpenCL
 * reads as rows and shares right: linear, each plane in a dedicated
 * allocation, from libclmem-av's pool (frame-pool.c says why its own).
 * clmem_av_frames_setup_optimal(): the same pool with optimal-tiling
 * images exportable as opaque fds, which OpenCL takes as images imported
 * from the fd (the bridge's optimal-tiling image import).
 *
 * FFmpeg's trial image. av_hwframe_ctx_init() of FFmpeg 5.1 makes one
 * frame with the frames context's tiling, usage and create_pnext to see
 * whether allocation will fail, and frees it; our pool's frames are made
 * apart from that. On a device with VK_EXT_image_drm_format_modifier it
 * first adds a DRM format modifier list to create_pnext, whatever the
 * tiling, so a linear tiling here gave that trial image a modifier list on
 * a linear image: invalid usage (VUID-VkImageCreateInfo-pNext-02262, one
 * validation error per plane of every frames context set up, on the H200).
 * So on such a device the frames context asks for DRM-modifier tiling with
 * a modifier list of its own (FFmpeg adds none then): the linear modifier
 * where Vulkan makes images of every plane's format with it, else every
 * modifier that it makes them with. Either way the trial image is valid;
 * the pool's frames are linear images regardless. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "ffmpeg-vk.h"
#include "frame-pool.h"

#include <libavutil/pixdesc.h>
#include <stdlib.h>

static bool has_modifier_list(const void *chain)
{
    for (const VkBaseInStructure *in = chain; in; in = in->pNext)
        if (in->sType == VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT)
            return true;
    return false;
}

/* Can Vulkan make DRM-modifier-tiled images of every plane's format with
 * `modifier` and `usage`, shared as FFmpeg shares its images? */
static bool modifier_supported(const AVVulkanDeviceContext *vk, PFN_vkGetPhysicalDeviceImageFormatProperties2 query,
                               enum AVPixelFormat sw_format, VkImageUsageFlags usage, uint64_t modifier)
{
    uint32_t qfs[5], nqf = clmem__av_queue_families(vk, qfs);

    for (int p = 0; p < av_pix_fmt_count_planes(sw_format); p++) {
        VkPhysicalDeviceImageDrmFormatModifierInfoEXT mod = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_DRM_FORMAT_MODIFIER_INFO_EXT,
            .drmFormatModifier = modifier,
            .sharingMode = nqf > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
            .queueFamilyIndexCount = nqf,
            .pQueueFamilyIndices = qfs};
        if (clmem__av_query_plane_image(query, vk->phys_dev, sw_format, p, VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT,
                                        usage, &mod, NULL) != VK_SUCCESS)
            return false;
    }
    return true;
}

/* The modifier list FFmpeg's trial image is made with on a device with
 * VK_EXT_image_drm_format_modifier (the file's comment says why):
 * DRM_FORMAT_MOD_LINEAR (0) where every plane format takes it with
 * `usage`, else each modifier of plane 0's format that every plane format
 * takes. *count_out 0 and *modifiers_out NULL on a device without the
 * extension (the trial image is linear, with no list). */
static clmem_status trial_modifiers(const AVVulkanDeviceContext *vk, enum AVPixelFormat sw_format,
                                    VkImageUsageFlags usage, uint64_t **modifiers_out, uint32_t *count_out)
{
    PFN_vkGetPhysicalDeviceImageFormatProperties2 query;
    PFN_vkGetPhysicalDeviceFormatProperties2 format_props;
    VkDrmFormatModifierPropertiesListEXT list = {.sType = VK_STRUCTURE_TYPE_DRM_FORMAT_MODIFIER_PROPERTIES_LIST_EXT};
    VkFormatProperties2 props = {.sType = VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2, .pNext = &list};
    VkDrmFormatModifierPropertiesEXT *all = NULL;
    uint64_t *modifiers;
    uint32_t n = 0;

    *modifiers_out = NULL;
    *count_out = 0;
    if (!clmem__av_has_device_extension(vk, VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME))
        return CLMEM_OK;
    query = (PFN_vkGetPhysicalDeviceImageFormatProperties2)clmem__av_instance_proc(
        vk, "vkGetPhysicalDeviceImageFormatProperties2");
    format_props =
        (PFN_vkGetPhysicalDeviceFormatProperties2)clmem__av_instance_proc(vk, "vkGetPhysicalDeviceFormatProperties2");
    if (!query || !format_props)
        return CLMEM_ERR_UNSUPPORTED;
    if (modifier_supported(vk, query, sw_format, usage, 0 /* DRM_FORMAT_MOD_LINEAR */)) {
        if (!(modifiers = malloc(sizeof *modifiers)))
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a modifier list failed.");
        modifiers[0] = 0;
        *modifiers_out = modifiers;
        *count_out = 1;
        return CLMEM_OK;
    }
    format_props(vk->phys_dev, av_vkfmt_from_pixfmt(sw_format)[0], &props);
    if (list.drmFormatModifierCount) {
        all = calloc(list.drmFormatModifierCount, sizeof *all);
        modifiers = calloc(list.drmFormatModifierCount, sizeof *modifiers);
        if (!all || !modifiers) {
            free(all);
            free(modifiers);
            return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a list of %u DRM format modifiers failed.",
                               list.drmFormatModifierCount);
        }
        list.pDrmFormatModifierProperties = all;
        format_props(vk->phys_dev, av_vkfmt_from_pixfmt(sw_format)[0], &props);
        for (uint32_t i = 0; i < list.drmFormatModifierCount; i++)
            if (modifier_supported(vk, query, sw_format, usage, all[i].drmFormatModifier))
                modifiers[n++] = all[i].drmFormatModifier;
        free(all);
        if (n) {
            *modifiers_out = modifiers;
            *count_out = n;
            return CLMEM_OK;
        }
        free(modifiers);
    }
    /* Every call succeeded: the answer is "none", so no VkResult goes with it. */
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "FFmpeg's av_hwframe_ctx_init makes a trial image with a DRM format modifier list on this "
                       "device, and Vulkan (vkGetPhysicalDeviceImageFormatProperties2) makes %s images with no DRM "
                       "format modifier for usage 0x%x (not even the linear one): the trial image would be invalid "
                       "usage. clmem_av_frames_setup_optimal() may still make such frames.",
                       av_get_pix_fmt_name(sw_format), (unsigned)usage);
}

/* Can Vulkan make linear images of every plane's format with `usage`? */
static bool linear_supported(const AVVulkanDeviceContext *vk, PFN_vkGetPhysicalDeviceImageFormatProperties query,
                             enum AVPixelFormat sw_format, VkImageUsageFlags usage)
{
    const VkFormat *formats = av_vkfmt_from_pixfmt(sw_format);
    VkImageFormatProperties props;

    for (int p = 0; p < av_pix_fmt_count_planes(sw_format); p++)
        if (query(vk->phys_dev, formats[p], VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_LINEAR, usage,
                  VK_IMAGE_CREATE_ALIAS_BIT, &props) != VK_SUCCESS)
            return false;
    return true;
}

/* The usage of the pool's linear images when the caller left it 0: FFmpeg's
 * default (transfers, sampled, storage), less what Vulkan cannot make
 * linear images of these formats with (a device may offer fewer features
 * for linear tiling than for optimal). A usage the caller chose is
 * theirs. */
static clmem_status choose_usage(const AVVulkanDeviceContext *vk, const AVHWFramesContext *frames,
                                 VkImageUsageFlags *usage)
{
    const VkImageUsageFlags transfers = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    const VkImageUsageFlags optional[2] = {VK_IMAGE_USAGE_SAMPLED_BIT, VK_IMAGE_USAGE_STORAGE_BIT};
    PFN_vkGetPhysicalDeviceImageFormatProperties query =
        (PFN_vkGetPhysicalDeviceImageFormatProperties)clmem__av_instance_proc(
            vk, "vkGetPhysicalDeviceImageFormatProperties");

    if (!query)
        return CLMEM_ERR_UNSUPPORTED;
    if (!linear_supported(vk, query, frames->sw_format, transfers))
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_VULKAN, "vkGetPhysicalDeviceImageFormatProperties",
                               0, "Vulkan makes no linear images of %s's plane formats, even for transfers only: "
                               "OpenCL cannot read its frames as rows on this device.",
                               av_get_pix_fmt_name(frames->sw_format));
    *usage = transfers;
    for (int i = 0; i < 2; i++)
        if (linear_supported(vk, query, frames->sw_format, *usage | optional[i]))
            *usage |= optional[i];
    return CLMEM_OK;
}

/* The usage of the optimal pool's images when the caller left it 0: the
 * usage the bridge's live check proves a format's optimal-tiling import
 * with (transfers, plus sampled and storage where the format's
 * optimal-tiling features allow them), for every plane's format. */
static clmem_status choose_usage_optimal(const AVVulkanDeviceContext *vk, const AVHWFramesContext *frames,
                                         VkImageUsageFlags *usage)
{
    const VkFormat *formats = av_vkfmt_from_pixfmt(frames->sw_format);
    const VkFormatFeatureFlags transfers = VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    PFN_vkGetPhysicalDeviceFormatProperties query =
        (PFN_vkGetPhysicalDeviceFormatProperties)clmem__av_instance_proc(vk, "vkGetPhysicalDeviceFormatProperties");
    VkFormatFeatureFlags all = ~(VkFormatFeatureFlags)0;

    if (!query)
        return CLMEM_ERR_UNSUPPORTED;
    for (int p = 0; p < av_pix_fmt_count_planes(frames->sw_format); p++) {
        VkFormatProperties props;
        query(vk->phys_dev, formats[p], &props);
        all &= props.optimalTilingFeatures;
    }
    if ((all & transfers) != transfers)
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_VULKAN, "vkGetPhysicalDeviceFormatProperties", 0,
                               "Vulkan cannot copy to and from optimal-tiling images of %s's plane formats (format "
                               "features 0x%x).",
                               av_get_pix_fmt_name(frames->sw_format), (unsigned)all);
    *usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    if (all & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
        *usage |= VK_IMAGE_USAGE_SAMPLED_BIT;
    if (all & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT)
        *usage |= VK_IMAGE_USAGE_STORAGE_BIT;
    return CLMEM_OK;
}

/* Does Vulkan make optimal-tiling images of every plane's format with
 * `usage`, exportable as opaque fds (as FFmpeg makes its images: aliased,
 * shared by its queue families)? */
static clmem_status check_optimal_export(const AVVulkanDeviceContext *vk, enum AVPixelFormat sw_format,
                                         VkImageUsageFlags usage)
{
    const VkFormat *formats = av_vkfmt_from_pixfmt(sw_format);
    PFN_vkGetPhysicalDeviceImageFormatProperties2 query =
        (PFN_vkGetPhysicalDeviceImageFormatProperties2)clmem__av_instance_proc(
            vk, "vkGetPhysicalDeviceImageFormatProperties2");

    if (!clmem__av_has_device_extension(vk, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Optimal-tiling frames reach OpenCL only as images imported from an opaque fd, and "
                           "FFmpeg's Vulkan device did not enable %s.",
                           VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    if (!query)
        return CLMEM_ERR_UNSUPPORTED;
    for (int p = 0; p < av_pix_fmt_count_planes(sw_format); p++) {
        VkPhysicalDeviceExternalImageFormatInfo ext = {.sType =
                                                           VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO,
                                                       .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkExternalImageFormatProperties eprops = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
        VkResult r = clmem__av_query_plane_image(query, vk->phys_dev, sw_format, p, VK_IMAGE_TILING_OPTIMAL, usage,
                                                 &ext, &eprops);

        if (r != VK_SUCCESS ||
            !(eprops.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
            return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_VULKAN, "vkGetPhysicalDeviceImageFormatProperties2",
                                   r,
                                   "Vulkan makes no optimal-tiling images of %s's plane %d format (%d) with usage "
                                   "0x%x exportable as an opaque fd.",
                                   av_get_pix_fmt_name(sw_format), p, (int)formats[p], (unsigned)usage);
    }
    return CLMEM_OK;
}

static clmem_status av_frames_setup(AVBufferRef *frames_ref, VkImageTiling tiling)
{
    AVHWFramesContext *frames;
    AVVulkanFramesContext *fc;
    const AVVulkanDeviceContext *vk;
    VkImageUsageFlags usage = 0;
    uint64_t *modifiers;
    uint32_t nmodifiers;
    clmem_status s;

    if (!frames_ref)
        return clmem__null_arg("frames_ref");
    frames = (AVHWFramesContext *)frames_ref->data;
    if (!(vk = clmem__av_vk_device(frames->device_ctx)))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "frames_ref is not a frames context of a Vulkan device.");
    if (frames->format != AV_PIX_FMT_VULKAN)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The frames context's format is not AV_PIX_FMT_VULKAN.");
    if (frames->pool)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frames context already has a pool: call %s() before av_hwframe_ctx_init(), which "
                           "gives the context libclmem-av's own pool.",
                           tiling == VK_IMAGE_TILING_OPTIMAL ? "clmem_av_frames_setup_optimal"
                                                             : "clmem_av_frames_setup");
    if (!clmem__av_format(frames->sw_format))
        return CLMEM_ERR_UNSUPPORTED;
    fc = frames->hwctx;
    if (tiling == VK_IMAGE_TILING_OPTIMAL && fc->tiling != VK_IMAGE_TILING_OPTIMAL)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frames context asks for tiling %d: clmem_av_frames_setup_optimal() allocates "
                           "optimal-tiling frames; leave the tiling at FFmpeg's default (VK_IMAGE_TILING_OPTIMAL).",
                           (int)fc->tiling);
    if (fc->tiling != VK_IMAGE_TILING_OPTIMAL && fc->tiling != VK_IMAGE_TILING_LINEAR)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frames context asks for tiling %d: libclmem-av allocates linear frames "
                           "itself; leave the tiling at FFmpeg's default or VK_IMAGE_TILING_LINEAR.",
                           (int)fc->tiling);
    if (has_modifier_list(fc->create_pnext))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frames context's create_pnext lists DRM format modifiers: libclmem-av "
                           "allocates its frames itself, with no modifier.");
    if (tiling == VK_IMAGE_TILING_OPTIMAL) {
        if ((!fc->usage && (s = choose_usage_optimal(vk, frames, &usage)) != CLMEM_OK) ||
            (s = check_optimal_export(vk, frames->sw_format, fc->usage ? fc->usage : usage)) != CLMEM_OK)
            return s;
    } else if (!fc->usage && (s = choose_usage(vk, frames, &usage)) != CLMEM_OK) {
        return s;
    }
    if ((s = trial_modifiers(vk, frames->sw_format, fc->usage ? fc->usage : usage, &modifiers, &nmodifiers)) !=
        CLMEM_OK)
        return s;
    if ((s = clmem__av_pool_install(frames, vk, tiling, modifiers, nmodifiers)) != CLMEM_OK)
        return s; /* the install freed the list */
    /* FFmpeg's trial image (the file's comment): the pool's tiling where the
     * device has no DRM format modifiers, else of the list the pool now
     * holds. */
    fc->tiling = nmodifiers ? VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT : tiling;
    if (!fc->usage)
        fc->usage = usage;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref)
{
    return clmem__error_in(__func__, av_frames_setup(frames_ref, VK_IMAGE_TILING_LINEAR));
}

CLMEM_EXPORT clmem_status clmem_av_frames_setup_optimal(AVBufferRef *frames_ref)
{
    return clmem__error_in(__func__, av_frames_setup(frames_ref, VK_IMAGE_TILING_OPTIMAL));
}
