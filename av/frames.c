/* clmem_av_frames_setup(): a Vulkan frames context whose frames OpenCL
 * reads as rows and shares right: linear, each plane in a dedicated
 * allocation, from libclmem-av's pool (pool.c says why its own). */
#include "config.h"
#include "export.h"
#include "frame-vk.h"
#include "pool.h"

static bool has_modifier_list(const void *chain)
{
    for (const VkBaseInStructure *in = chain; in; in = in->pNext)
        if (in->sType == VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT)
            return true;
    return false;
}

CLMEM_EXPORT clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref)
{
    AVHWFramesContext *frames;
    AVVulkanFramesContext *fc;
    const AVVulkanDeviceContext *vk;
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
    if ((s = clmem__av_pool_install(frames, vk)) != CLMEM_OK)
        return s;
    fc->tiling = VK_IMAGE_TILING_LINEAR; /* FFmpeg's trial image in av_hwframe_ctx_init() is made so too */
    return CLMEM_OK;
}
