/* clmem_av_frames_setup(): a Vulkan frames context whose frames OpenCL
 * reads as rows and shares right: linear, each plane in a dedicated
 * allocation, from libclmem-av's pool (frame-pool.c says why its own). */
#include "config.h"
#include "export.h"
#include "ffmpeg-vk.h"
#include "frame-pool.h"

#include <libavutil/pixdesc.h>

static bool has_modifier_list(const void *chain)
{
    for (const VkBaseInStructure *in = chain; in; in = in->pNext)
        if (in->sType == VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT)
            return true;
    return false;
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

CLMEM_EXPORT clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref)
{
    AVHWFramesContext *frames;
    AVVulkanFramesContext *fc;
    const AVVulkanDeviceContext *vk;
    VkImageUsageFlags usage = 0;
    clmem_status s;

    if (!frames_ref)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "frames_ref is NULL.");
    frames = (AVHWFramesContext *)frames_ref->data;
    if (!(vk = clmem__av_vk_device(frames->device_ctx)))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "frames_ref is not a frames context of a Vulkan device.");
    if (frames->format != AV_PIX_FMT_VULKAN)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context's format is not AV_PIX_FMT_VULKAN.");
    if (frames->pool)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context already has a pool: call clmem_av_frames_setup() before "
                               "av_hwframe_ctx_init(), which gives the context libclmem-av's own pool.");
    if (!clmem__av_format(frames->sw_format))
        return CLMEM_ERR_UNSUPPORTED;
    fc = frames->hwctx;
    if (fc->tiling != VK_IMAGE_TILING_OPTIMAL && fc->tiling != VK_IMAGE_TILING_LINEAR)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context asks for tiling %d: libclmem-av allocates linear frames "
                               "itself; leave the tiling at FFmpeg's default or VK_IMAGE_TILING_LINEAR.",
                               (int)fc->tiling);
    if (has_modifier_list(fc->create_pnext))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context's create_pnext lists DRM format modifiers: libclmem-av "
                               "allocates linear frames itself, with no modifier.");
    if (!fc->usage && (s = choose_usage(vk, frames, &usage)) != CLMEM_OK)
        return s;
    if ((s = clmem__av_pool_install(frames, vk)) != CLMEM_OK)
        return s;
    fc->tiling = VK_IMAGE_TILING_LINEAR; /* FFmpeg's trial image in av_hwframe_ctx_init() is made so too */
    if (!fc->usage)
        fc->usage = usage;
    return CLMEM_OK;
}
