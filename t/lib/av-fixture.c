/* SPDX-License-Identifier: MIT */
/* The libclmem-av tests' fixture (av-fixture.h). */
#include "av-fixture.h"
#include "tap.h"

#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int validation_errors;

static const char *invert_src =
    "__kernel void invert(__global uchar *p, uint pitch, uint row_bytes) {\n"
    "    size_t x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x < row_bytes) p[y * pitch + x] = (uchar)(255 - p[y * pitch + x]);\n"
    "}\n";

/* FFmpeg's Vulkan device logs the validation layer's messages through
 * av_log (errors at AV_LOG_ERROR); everything else stays quiet. */
static void log_callback(void *avcl, int level, const char *fmt, va_list args)
{
    char line[2048];

    (void)avcl;
    if (level > AV_LOG_ERROR)
        return;
    vsnprintf(line, sizeof line, fmt, args);
    if (strstr(line, "VUID-") || strstr(line, "Validation Error")) {
        atomic_fetch_add(&validation_errors, 1);
        tap_diag("validation error: %.1000s", line);
    }
}

static bool layer_installed(void)
{
    uint32_t n = 0;
    VkLayerProperties props[64];

    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS)
        return false;
    if (n > 64)
        n = 64;
    if (vkEnumerateInstanceLayerProperties(&n, props) != VK_SUCCESS && n == 0)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(props[i].layerName, "VK_LAYER_KHRONOS_validation") == 0)
            return true;
    return false;
}

void av_fixture_open(struct av_fixture *f, bool validation)
{
    AVDictionary *opts = NULL;
    cl_platform_id platform;
    cl_device_id device;
    clmem_status s;
    int r;

    memset(f, 0, sizeof *f);
    av_log_set_level(AV_LOG_ERROR);
    av_log_set_callback(log_callback);
    /* CLMEM_VALIDATION=0 leaves the layer out, as tools/vkctx/vkctx.c does. */
    f->validation = validation && !(getenv("CLMEM_VALIDATION") && strcmp(getenv("CLMEM_VALIDATION"), "0") == 0) &&
                    layer_installed();
    if (f->validation)
        av_dict_set(&opts, "debug", "1", 0);
    r = av_hwdevice_ctx_create(&f->device, AV_HWDEVICE_TYPE_VULKAN, NULL, opts, 0);
    av_dict_free(&opts);
    if (r < 0)
        tap_skip_all("FFmpeg cannot make a Vulkan device here (av_hwdevice_ctx_create returned %d)", r);
    f->vk = ((AVHWDeviceContext *)f->device->data)->hwctx;
    if (clmem_bridge_pair(f->vk->inst, f->vk->get_proc_addr, f->vk->phys_dev, &platform, &device) == CLMEM_OK)
        cl_fixture_open_on(&f->cl, platform, device);
    else
        cl_fixture_open(&f->cl);
    f->invert = cl_fixture_kernel(&f->cl, invert_src, "invert");
    if ((s = clmem_av_bridge_create(f->device, f->cl.context, 0, &f->bridge)) != CLMEM_OK)
        tap_bail("%s", clmem_error_message());
    f->path = clmem_bridge_check_path(f->bridge, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK
                  ? CLMEM_BRIDGE_PATH_OPAQUE_FD
                  : CLMEM_BRIDGE_PATH_HOST_MAPPED;
    tap_diag("FFmpeg's Vulkan device with OpenCL %s: path %s, validation layer %s", f->cl.device_name,
             clmem_bridge_path_name(f->path), f->validation ? "on" : validation ? "not installed" : "off");
}

void av_fixture_close(struct av_fixture *f)
{
    clmem_bridge_unref(f->bridge);
    clReleaseKernel(f->invert);
    cl_fixture_close(&f->cl);
    av_buffer_unref(&f->device);
}

int av_fixture_validation_errors(void)
{
    return atomic_load(&validation_errors);
}

PFN_vkVoidFunction av_fixture_device_proc(const struct av_fixture *f, const char *name)
{
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)f->vk->get_proc_addr(f->vk->inst, "vkGetDeviceProcAddr");
    PFN_vkVoidFunction fn = gdpa ? gdpa(f->vk->act_dev, name) : NULL;
    if (!fn)
        tap_bail("FFmpeg's Vulkan device has no %s", name);
    return fn;
}

uint64_t av_fixture_counter(const struct av_fixture *f, VkSemaphore sem)
{
    PFN_vkGetSemaphoreCounterValue get =
        (PFN_vkGetSemaphoreCounterValue)av_fixture_device_proc(f, "vkGetSemaphoreCounterValue");
    uint64_t v = 0;
    get(f->vk->act_dev, sem, &v);
    return v;
}

AVBufferRef *av_fixture_frames_set_up(const struct av_fixture *f, enum AVPixelFormat sw, int w, int h, bool optimal,
                                      char *why, size_t len)
{
    const char *call = optimal ? "clmem_av_frames_setup_optimal" : "clmem_av_frames_setup";
    AVBufferRef *ref = av_hwframe_ctx_alloc(f->device);
    AVHWFramesContext *fc;
    clmem_status s;
    int r;

    if (!ref)
        tap_bail("av_hwframe_ctx_alloc failed");
    fc = (AVHWFramesContext *)ref->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = w;
    fc->height = h;
    s = optimal ? clmem_av_frames_setup_optimal(ref) : clmem_av_frames_setup(ref);
    if (s == CLMEM_ERR_UNSUPPORTED && why) {
        snprintf(why, len, "%s", clmem_error_message());
        av_buffer_unref(&ref);
        return NULL;
    }
    if (s != CLMEM_OK)
        tap_bail("%s(%s %dx%d): %s", call, av_get_pix_fmt_name(sw), w, h, clmem_error_message());
    if ((r = av_hwframe_ctx_init(ref)) < 0)
        tap_bail("av_hwframe_ctx_init(%s %dx%d): %d", av_get_pix_fmt_name(sw), w, h, r);
    return ref;
}

AVBufferRef *av_fixture_frames(const struct av_fixture *f, enum AVPixelFormat sw, int w, int h)
{
    return av_fixture_frames_set_up(f, sw, w, h, false, NULL, 0);
}

AVFrame *av_fixture_frame(AVBufferRef *frames)
{
    AVFrame *fr = av_frame_alloc();
    int r;
    if (!fr || (r = av_hwframe_get_buffer(frames, fr, 0)) < 0)
        tap_bail("av_hwframe_get_buffer failed (%s)", clmem_error_message());
    return fr;
}

size_t av_fixture_plane_rows(const AVFrame *fr, int p)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    return p > 0 ? (size_t)AV_CEIL_RSHIFT(fr->height, d->log2_chroma_h) : (size_t)fr->height;
}

size_t av_fixture_plane_row_bytes(const AVFrame *fr, int p)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    int max_step[4] = {0};
    av_image_fill_max_pixsteps(max_step, NULL, d);
    return (size_t)max_step[p] * (size_t)(p > 0 ? AV_CEIL_RSHIFT(fr->width, d->log2_chroma_w) : fr->width);
}

AVFrame *av_fixture_pattern(enum AVPixelFormat sw, int w, int h, unsigned salt)
{
    AVFrame *fr = av_frame_alloc();
    fr->format = sw;
    fr->width = w;
    fr->height = h;
    if (av_frame_get_buffer(fr, 0) < 0)
        tap_bail("av_frame_get_buffer failed");
    for (int p = 0; p < 4 && fr->data[p]; p++)
        for (size_t y = 0; y < av_fixture_plane_rows(fr, p); y++)
            for (int x = 0; x < fr->linesize[p]; x++)
                fr->data[p][y * (size_t)fr->linesize[p] + x] = (uint8_t)(x * 7 + y * 13 + p * 101 + salt * 29 + 1);
    return fr;
}

void av_fixture_invert(struct av_fixture *f, const clmem_av_frame_planes *planes, cl_uint num_events,
                       const cl_event *wait_list, cl_event *event_out)
{
    cl_event last = NULL;

    for (uint32_t p = 0; p < planes->count; p++) {
        uint32_t texel = 0;
        cl_mem mem = clmem_handle_mem(planes->planes[p]);
        cl_uint pitch = clmem_handle_row_pitch(planes->planes[p]);
        cl_uint row_bytes;
        size_t global[2];
        cl_int err;

        clmem_bridge_image_plane_format(planes->formats[p], 0, NULL, &texel);
        row_bytes = texel * planes->widths[p];
        global[0] = row_bytes;
        global[1] = planes->heights[p];
        clSetKernelArg(f->invert, 0, sizeof mem, &mem);
        clSetKernelArg(f->invert, 1, sizeof pitch, &pitch);
        clSetKernelArg(f->invert, 2, sizeof row_bytes, &row_bytes);
        if (last)
            clReleaseEvent(last);
        last = NULL;
        if ((err = clEnqueueNDRangeKernel(f->cl.queue, f->invert, 2, NULL, global, NULL, num_events, wait_list,
                                          &last)) != CL_SUCCESS)
            tap_bail("clEnqueueNDRangeKernel: %d", err);
    }
    if (event_out)
        *event_out = last;
    else if (last)
        clReleaseEvent(last);
}

bool av_fixture_inverted(const AVFrame *want, const AVFrame *got, char *why, size_t len)
{
    for (int p = 0; p < 4 && want->data[p]; p++)
        for (size_t y = 0; y < av_fixture_plane_rows(want, p); y++)
            for (size_t x = 0; x < av_fixture_plane_row_bytes(want, p); x++) {
                uint8_t a = want->data[p][y * want->linesize[p] + x], b = got->data[p][y * got->linesize[p] + x];
                if ((unsigned)b + (unsigned)a != 255u) {
                    snprintf(why, len, "plane %d byte (%zu, %zu): got 0x%02x, want 0x%02x", p, x, y, b, 255 - a);
                    return false;
                }
            }
    if (len)
        why[0] = '\0';
    return true;
}

AVFrame *av_fixture_download(AVFrame *hw)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)hw->hw_frames_ctx->data;
    AVFrame *sw = av_frame_alloc();
    int r;

    sw->format = fc->sw_format;
    sw->width = fc->width;
    sw->height = fc->height;
    if (av_frame_get_buffer(sw, 0) < 0)
        tap_bail("av_frame_get_buffer failed");
    if ((r = av_hwframe_transfer_data(sw, hw, 0)) < 0)
        tap_bail("download with av_hwframe_transfer_data: %d", r);
    return sw;
}
