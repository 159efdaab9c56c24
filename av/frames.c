/* clmem_av_frames_setup(): make a Vulkan frames context's frames linear,
 * so that OpenCL reads their planes as rows (clmem-av.h says why linear). */
#include "config.h"
#include "export.h"
#include "frame-vk.h"

/* DRM_FORMAT_MOD_LINEAR, from drm_fourcc.h (not needed otherwise). */
#define DRM_MODIFIER_LINEAR 0

/* The list appended to create_pnext: read-only for FFmpeg, which links its
 * own structures only where no list is given, so one copy serves every
 * frames context. */
static const uint64_t linear_modifier = DRM_MODIFIER_LINEAR;
static const VkImageDrmFormatModifierListCreateInfoEXT linear_list = {
    VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT, NULL, 1, &linear_modifier};

static const VkImageDrmFormatModifierListCreateInfoEXT *find_modifier_list(const void *chain)
{
    for (const VkBaseInStructure *in = chain; in; in = in->pNext)
        if (in->sType == VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT)
            return (const VkImageDrmFormatModifierListCreateInfoEXT *)in;
    return NULL;
}

static bool only_linear(const VkImageDrmFormatModifierListCreateInfoEXT *list)
{
    return list && list->drmFormatModifierCount == 1 && list->pDrmFormatModifiers &&
           list->pDrmFormatModifiers[0] == DRM_MODIFIER_LINEAR;
}

CLMEM_EXPORT clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref)
{
    AVHWFramesContext *frames;
    AVVulkanFramesContext *fc;
    const AVVulkanDeviceContext *vk;
    const VkImageDrmFormatModifierListCreateInfoEXT *list;

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
                               "av_hwframe_ctx_init(), on a context whose pool FFmpeg makes.");
    if (!clmem__av_format(frames->sw_format))
        return CLMEM_ERR_UNSUPPORTED;
    fc = frames->hwctx;
    list = find_modifier_list(fc->create_pnext);

    switch (fc->tiling) {
    case VK_IMAGE_TILING_LINEAR:
        return CLMEM_OK;
    case VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT:
        if (only_linear(list))
            return CLMEM_OK;
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context asks for DRM format modifiers %s: OpenCL reads the planes "
                               "as rows only with DRM_FORMAT_MOD_LINEAR alone.",
                               list ? "other than DRM_FORMAT_MOD_LINEAR alone" : "without a modifier list");
    case VK_IMAGE_TILING_OPTIMAL:
        break;
    default:
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context's tiling %d is not one FFmpeg knows.", (int)fc->tiling);
    }

    /* FFmpeg's default (0, VK_IMAGE_TILING_OPTIMAL): it would pick the
     * driver's DRM modifier where the device has the extension. */
    if (!clmem__av_has_device_extension(vk, VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME)) {
        fc->tiling = VK_IMAGE_TILING_LINEAR;
        return CLMEM_OK;
    }
    if (list && !only_linear(list))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frames context's create_pnext lists DRM format modifiers other than "
                               "DRM_FORMAT_MOD_LINEAR alone: OpenCL reads the planes as rows only with it.");
    if (list) {
        fc->tiling = VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT;
        return CLMEM_OK;
    }
    if (!fc->create_pnext) {
        fc->create_pnext = (void *)&linear_list;
    } else {
        VkBaseOutStructure *last = fc->create_pnext;
        while (last->pNext)
            last = last->pNext;
        last->pNext = (VkBaseOutStructure *)&linear_list;
    }
    fc->tiling = VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT;
    return CLMEM_OK;
}
