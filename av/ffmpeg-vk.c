/* SPDX-License-Identifier: MIT */
/* What libclmem-av asks of FFmpeg's Vulkan device and frames contexts: the
 * imported software formats, the device's entry points and extensions, a
 * frame's parts, the queue families and the export types (ffmpeg-vk.h). */
#include "config.h"
#include "error-private.h"
#include "ffmpeg-vk.h"

#include <libavutil/pixdesc.h>
#include <string.h>

static const struct av_format formats[] = {
    {AV_PIX_FMT_NV12, "nv12", 2, true},  {AV_PIX_FMT_P010, "p010", 2, true},       {AV_PIX_FMT_RGBA, "rgba", 1, false},
    {AV_PIX_FMT_BGRA, "bgra", 1, false}, {AV_PIX_FMT_YUV420P, "yuv420p", 3, true},
};

const struct av_format *clmem__av_format(enum AVPixelFormat sw_format)
{
    const char *name;

    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].sw_format == sw_format)
            return &formats[i];
    name = av_get_pix_fmt_name(sw_format);
    clmem__fail(CLMEM_ERR_UNSUPPORTED,
                "libclmem-av imports frames of the software formats nv12, p010, rgba, bgra and yuv420p, not %s.",
                name ? name : "an unknown pix_fmt");
    return NULL;
}

AVVulkanDeviceContext *clmem__av_vk_device(const AVHWDeviceContext *dev)
{
    return dev && dev->type == AV_HWDEVICE_TYPE_VULKAN ? dev->hwctx : NULL;
}

const AVVulkanDeviceContext *clmem__av_vk_device_arg(const AVBufferRef *device_ref)
{
    const AVVulkanDeviceContext *vk = clmem__av_vk_device((const AVHWDeviceContext *)device_ref->data);
    if (!vk)
        clmem__invalid("device_ref is not an FFmpeg device context of type AV_HWDEVICE_TYPE_VULKAN.");
    return vk;
}

bool clmem__av_has_device_extension(const AVVulkanDeviceContext *vk, const char *name)
{
    for (int i = 0; i < vk->nb_enabled_dev_extensions; i++)
        if (vk->enabled_dev_extensions[i] && strcmp(vk->enabled_dev_extensions[i], name) == 0)
            return true;
    return false;
}

PFN_vkVoidFunction clmem__av_instance_proc(const AVVulkanDeviceContext *vk, const char *name)
{
    PFN_vkVoidFunction f = vk->get_proc_addr ? vk->get_proc_addr(vk->inst, name) : NULL;

    if (!f)
        clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_VULKAN, "vkGetInstanceProcAddr", 0,
                        "FFmpeg's Vulkan instance has no %s.", name);
    return f;
}

PFN_vkVoidFunction clmem__av_device_proc(const AVVulkanDeviceContext *vk, const char *name)
{
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)clmem__av_instance_proc(vk, "vkGetDeviceProcAddr");
    PFN_vkVoidFunction f = gdpa ? gdpa(vk->act_dev, name) : NULL;

    if (gdpa && !f)
        clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_VULKAN, "vkGetDeviceProcAddr", 0,
                        "FFmpeg's Vulkan device has no %s.", name);
    return f;
}

clmem_status clmem__av_frame_parts(const AVFrame *frame, AVVkFrame **vkf_out, AVHWFramesContext **frames_out,
                                   const struct av_format **format_out)
{
    AVHWFramesContext *frames;
    const struct av_format *format;

    if (frame->format != AV_PIX_FMT_VULKAN) {
        const char *name = av_get_pix_fmt_name((enum AVPixelFormat)frame->format);
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frame's pix_fmt is %s, not vulkan: only AV_PIX_FMT_VULKAN frames hold "
                           "Vulkan memory.",
                           name ? name : "none");
    }
    if (!frame->data[0] || !frame->hw_frames_ctx)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The vulkan frame has no %s.",
                           frame->data[0] ? "frames context (hw_frames_ctx)" : "AVVkFrame (data[0])");
    frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    if (!clmem__av_vk_device(frames->device_ctx))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The frame's frames context is not on a Vulkan device.");
    if (!(format = clmem__av_format(frames->sw_format)))
        return CLMEM_ERR_UNSUPPORTED;
    *vkf_out = (AVVkFrame *)frame->data[0];
    *frames_out = frames;
    *format_out = format;
    return CLMEM_OK;
}

/* The queue families FFmpeg made its images with (its p->qfs): the
 * distinct families of the device context. */
uint32_t clmem__av_queue_families(const AVVulkanDeviceContext *vk, uint32_t qfs[5])
{
    const int all[5] = {vk->queue_family_index, vk->queue_family_tx_index, vk->queue_family_comp_index,
                        vk->queue_family_encode_index, vk->queue_family_decode_index};
    uint32_t n = 0;

    for (int i = 0; i < 5; i++) {
        bool seen = all[i] < 0;
        for (uint32_t j = 0; j < n && !seen; j++)
            seen = qfs[j] == (uint32_t)all[i];
        if (!seen)
            qfs[n++] = (uint32_t)all[i];
    }
    return n;
}

/* ffmpeg-vk.h. */
VkResult clmem__av_query_plane_image(PFN_vkGetPhysicalDeviceImageFormatProperties2 query, VkPhysicalDevice pd,
                                     enum AVPixelFormat sw_format, int plane, VkImageTiling tiling,
                                     VkImageUsageFlags usage, void *info_next, void *props_next)
{
    VkPhysicalDeviceImageFormatInfo2 info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
                                             .pNext = info_next,
                                             .format = av_vkfmt_from_pixfmt(sw_format)[plane],
                                             .type = VK_IMAGE_TYPE_2D,
                                             .tiling = tiling,
                                             .usage = usage,
                                             .flags = VK_IMAGE_CREATE_ALIAS_BIT};
    VkImageFormatProperties2 props = {.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2, .pNext = props_next};

    return query(pd, &info, &props);
}

/* ffmpeg-vk.h. */
clmem_status clmem__av_export_types(const AVVulkanDeviceContext *vk, const AVHWFramesContext *frames, bool ours,
                                    VkImageTiling ours_tiling, VkExternalMemoryHandleTypeFlags *types_out)
{
    const AVVulkanFramesContext *fc = frames->hwctx;
    const VkImageDrmFormatModifierListCreateInfoEXT *mods = NULL;
    PFN_vkGetPhysicalDeviceImageFormatProperties2 query;
    bool fd = clmem__av_has_device_extension(vk, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    bool dma_buf = clmem__av_has_device_extension(vk, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) ||
                   clmem__av_has_device_extension(vk, VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME);
    const VkImageTiling tiling = ours ? ours_tiling : fc->tiling;
    const VkExternalMemoryHandleTypeFlagBits candidates[2] = {VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                                              VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT};
    const bool enabled[2] = {fd, dma_buf};
    uint32_t qfs[5];

    *types_out = 0;
    if (!fd && !dma_buf)
        return CLMEM_OK;
    query = (PFN_vkGetPhysicalDeviceImageFormatProperties2)clmem__av_instance_proc(
        vk, "vkGetPhysicalDeviceImageFormatProperties2");
    if (!query)
        return CLMEM_ERR_UNSUPPORTED;
    if (tiling == VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT)
        for (const VkBaseInStructure *in = fc->create_pnext; in && !mods; in = in->pNext)
            if (in->sType == VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT)
                mods = (const VkImageDrmFormatModifierListCreateInfoEXT *)in;

    for (int t = 0; t < 2; t++) {
        uint32_t count = mods ? mods->drmFormatModifierCount : 1;
        if (!enabled[t])
            continue;
        for (uint32_t m = 0; m < count && !(*types_out & candidates[t]); m++) {
            VkPhysicalDeviceImageDrmFormatModifierInfoEXT mod = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_DRM_FORMAT_MODIFIER_INFO_EXT};
            VkPhysicalDeviceExternalImageFormatInfo ext = {
                .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
            VkExternalImageFormatProperties eprops = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};

            if (mods) {
                mod.drmFormatModifier = mods->pDrmFormatModifiers[m];
                mod.queueFamilyIndexCount = clmem__av_queue_families(vk, qfs);
                mod.pQueueFamilyIndices = qfs;
                mod.sharingMode =
                    mod.queueFamilyIndexCount > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
                ext.pNext = &mod;
            }
            ext.handleType = candidates[t];
            if (clmem__av_query_plane_image(query, vk->phys_dev, frames->sw_format, 0, tiling, fc->usage, &ext,
                                            &eprops) == VK_SUCCESS)
                *types_out |= candidates[t];
        }
    }
    return CLMEM_OK;
}
