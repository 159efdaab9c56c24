/* The helpers of frame-vk.h. */
#include "config.h"
#include "frame-vk.h"

#include <libavutil/pixdesc.h>
#include <string.h>

static const struct av_format formats[] = {
    {AV_PIX_FMT_NV12, "nv12", 2, true},
    {AV_PIX_FMT_P010, "p010", 2, true},
    {AV_PIX_FMT_RGBA, "rgba", 1, false},
    {AV_PIX_FMT_BGRA, "bgra", 1, false},
};

const struct av_format *clmem__av_format(enum AVPixelFormat sw_format)
{
    const char *name;

    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].sw_format == sw_format)
            return &formats[i];
    name = av_get_pix_fmt_name(sw_format);
    clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                    "libclmem-av imports frames of the software formats nv12, p010, rgba and bgra, not %s.",
                    name ? name : "an unknown pix_fmt");
    return NULL;
}

AVVulkanDeviceContext *clmem__av_vk_device(const AVHWDeviceContext *dev)
{
    return dev && dev->type == AV_HWDEVICE_TYPE_VULKAN ? dev->hwctx : NULL;
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
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frame's pix_fmt is %s, not vulkan: only AV_PIX_FMT_VULKAN frames hold "
                               "Vulkan memory.",
                               name ? name : "none");
    }
    if (!frame->data[0] || !frame->hw_frames_ctx)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The vulkan frame has no %s.", frame->data[0] ? "frames context (hw_frames_ctx)"
                                                                            : "AVVkFrame (data[0])");
    frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    if (!clmem__av_vk_device(frames->device_ctx))
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "The frame's frames context is not on a Vulkan device.");
    if (!(format = clmem__av_format(frames->sw_format)))
        return CLMEM_ERR_UNSUPPORTED;
    *vkf_out = (AVVkFrame *)frame->data[0];
    *frames_out = frames;
    *format_out = format;
    return CLMEM_OK;
}
