/* SPDX-License-Identifier: MIT */
/* FFmpeg's own OpenCL filters on Vulkan frames (clmem-av.h, @ref av_cl).
 *
 * On FFmpeg's Vulkan device (lavapipe and PoCL on the CPU machines): an
 * FFmpeg OpenCL device over the bridge's context, an OpenCL frames context
 * matching each Vulkan one, and Vulkan frames mapped to AV_PIX_FMT_OPENCL
 * frames (clmem_av_cl_map). Every one-input OpenCL filter of the build
 * that takes the format runs on a mapped frame and on the same bytes
 * uploaded with hwupload, and the two outputs must be byte-identical;
 * overlay_opencl with its main input mapped too. After each the Vulkan
 * frame holds its bytes, and its timeline semaphores are signalled at a
 * sem_value one higher (FFmpeg's next use waits for OpenCL). A write
 * through a mapping reaches the Vulkan frame. Properties are copied, the
 * way is named, bad input is refused with its status and sentence, and no
 * fd, context or queue reference is left behind.
 *
 * Formats whose image formats the OpenCL device lacks (PoCL 3.1 has no
 * CL_RG images, so no NV12 or P010 OpenCL frames, FFmpeg's own included)
 * skip, naming the image format. Built twice: plain (the host-mapped path,
 * host-ptr images, on the CPU machines) and with t/fake-nvidia-import.c
 * (the opaque-fd path: image2d views of the plane buffers where the
 * OpenCL device has cl_khr_image2d_from_buffer). */
#define _GNU_SOURCE /* mkstemps */
#include "config.h"

#include "t/lib/av-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#if HAVE_LIBAVFILTER
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_opencl.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 96
#define H 64

static struct av_fixture fx;
static AVBufferRef *cl_device;
static char program_path[256];

/* The one-input filters, each with options that make it change the frame
 * (the defaults of several copy planes through untouched). */
static const char *const filters[] = {
    "avgblur_opencl=sizeX=3",
    "unsharp_opencl",
    "nlmeans_opencl",
    "convolution_opencl=0m=1 2 1 2 4 2 1 2 1:0rdiv=0.0625:1m=1 2 1 2 4 2 1 2 1:1rdiv=0.0625:2m=1 2 1 2 4 2 1 2 "
    "1:2rdiv=0.0625:3m=1 2 1 2 4 2 1 2 1:3rdiv=0.0625",
    "dilation_opencl",
    "erosion_opencl",
    "prewitt_opencl",
    "sobel_opencl",
    "roberts_opencl",
    "transpose_opencl=dir=clock",
    /* Every plane of the output a multiple of 16 wide and high (128x96,
     * chroma 64x48): FFmpeg 5.1's pad_opencl runs its kernel over the
     * output rounded up to 16 (ff_opencl_filter_work_size_from_image with
     * block alignment 16) and its kernel has no bound check, so any other
     * size writes past the image's edge, which OpenCL leaves undefined. */
    "pad_opencl=w=iw+32:h=ih+32:x=8:y=4",
    "program_opencl", /* with the test's kernel: see filter_desc() */
    "tonemap_opencl=tonemap=hable:format=p010", /* P010 only */
};

static const char program_src[] =
    "__kernel void invert(__write_only image2d_t dst, unsigned int index, __read_only image2d_t src)\n"
    "{\n"
    "    const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "    int2 at = (int2)(get_global_id(0), get_global_id(1));\n"
    "    float4 v = read_imagef(src, s, at);\n"
    "    write_imagef(dst, at, (float4)(1.0f - v.x, 1.0f - v.y, 1.0f - v.z, v.w));\n"
    "}\n";

/* The filter's name: its description up to '='. */
static void filter_name(const char *desc, char *name, size_t len)
{
    size_t n = strcspn(desc, "=");
    snprintf(name, len, "%.*s", (int)(n < len ? n : len - 1), desc);
}

static void filter_desc(const char *f, char *out, size_t len)
{
    if (strcmp(f, "program_opencl") == 0)
        snprintf(out, len, "program_opencl=source=%s:kernel=invert", program_path);
    else
        snprintf(out, len, "%s", f);
}

/* Does the filter take frames of `sw`? tonemap_opencl takes P010 (among
 * these), nlmeans_opencl planar YUV420P, YUV444P and GBRP only. */
static bool filter_takes(const char *f, enum AVPixelFormat sw)
{
    if (strncmp(f, "tonemap_opencl", 14) == 0)
        return sw == AV_PIX_FMT_P010;
    if (strncmp(f, "nlmeans_opencl", 14) == 0)
        return sw == AV_PIX_FMT_YUV420P;
    return true;
}

/* ---------------------------------------------------------------- graphs */

struct graph {
    AVFilterGraph *g;
    AVFilterContext *src[2], *sink;
};

/* Buffer sources in0 (and in1) of `fmt[i]` (AV_PIX_FMT_OPENCL with
 * frames[i], or a software format), the chain `desc` from them to the
 * sink "out"; hwupload gets FFmpeg's OpenCL device over the bridge. */
static int graph_open(struct graph *gr, const char *desc, int inputs, const enum AVPixelFormat *fmt,
                      AVBufferRef *const *frames, const int *w, const int *h)
{
    AVFilterInOut *outs = NULL, *ins = avfilter_inout_alloc();
    int r;

    memset(gr, 0, sizeof *gr);
    gr->g = avfilter_graph_alloc();
    for (int i = inputs - 1; i >= 0; i--) {
        AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
        AVFilterInOut *o = avfilter_inout_alloc();
        char name[8];

        snprintf(name, sizeof name, "in%d", i);
        gr->src[i] = avfilter_graph_alloc_filter(gr->g, avfilter_get_by_name("buffer"), name);
        par->format = fmt[i];
        par->width = w[i];
        par->height = h[i];
        par->time_base = (AVRational){1, 25};
        par->sample_aspect_ratio = (AVRational){1, 1};
        par->hw_frames_ctx = frames[i];
        r = av_buffersrc_parameters_set(gr->src[i], par);
        av_free(par);
        if (r < 0 || (r = avfilter_init_str(gr->src[i], NULL)) < 0)
            return r;
        o->name = av_strdup(name);
        o->filter_ctx = gr->src[i];
        o->next = outs;
        outs = o;
    }
    if ((r = avfilter_graph_create_filter(&gr->sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL,
                                          gr->g)) < 0)
        return r;
    ins->name = av_strdup("out");
    ins->filter_ctx = gr->sink;
    r = avfilter_graph_parse_ptr(gr->g, desc, &ins, &outs, NULL);
    avfilter_inout_free(&ins);
    avfilter_inout_free(&outs);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < gr->g->nb_filters; i++)
        if (strcmp(gr->g->filters[i]->filter->name, "hwupload") == 0)
            gr->g->filters[i]->hw_device_ctx = av_buffer_ref(cl_device);
    return avfilter_graph_config(gr->g, NULL);
}

/* Push the inputs (ownership taken), pull one frame, download it. */
static int graph_run(struct graph *gr, int inputs, AVFrame **in, AVFrame **sw_out)
{
    AVFrame *out = av_frame_alloc();
    AVHWFramesContext *fc;
    int r = 0;

    for (int i = 0; i < inputs && r >= 0; i++)
        r = av_buffersrc_add_frame_flags(gr->src[i], in[i], AV_BUFFERSRC_FLAG_KEEP_REF);
    for (int i = 0; i < inputs && r >= 0; i++)
        r = av_buffersrc_add_frame_flags(gr->src[i], NULL, 0); /* end of stream: framesync lets go */
    if (r >= 0)
        r = av_buffersink_get_frame(gr->sink, out);
    if (r >= 0) {
        fc = (AVHWFramesContext *)out->hw_frames_ctx->data;
        *sw_out = av_frame_alloc();
        (*sw_out)->format = fc->sw_format;
        (*sw_out)->width = out->width;
        (*sw_out)->height = out->height;
        if ((r = av_frame_get_buffer(*sw_out, 0)) >= 0)
            r = av_hwframe_transfer_data(*sw_out, out, 0);
        if (r < 0)
            av_frame_free(sw_out);
    }
    av_frame_free(&out);
    return r;
}

static void graph_close(struct graph *gr)
{
    avfilter_graph_free(&gr->g);
}

static const char *av_err(int r)
{
    static char buf[AV_ERROR_MAX_STRING_SIZE];
    return av_make_error_string(buf, sizeof buf, r);
}

/* Do two software frames hold the same visible bytes? If not, `why` says where. */
static bool same_bytes(const AVFrame *a, const AVFrame *b, char *why, size_t len)
{
    if (a->format != b->format || a->width != b->width || a->height != b->height) {
        snprintf(why, len, "%s %dx%d against %s %dx%d", av_get_pix_fmt_name(a->format), a->width, a->height,
                 av_get_pix_fmt_name(b->format), b->width, b->height);
        return false;
    }
    for (int p = 0; p < 4 && a->data[p]; p++) {
        int bytes = av_image_get_linesize(a->format, a->width, p);
        for (size_t y = 0; y < av_fixture_plane_rows(a, p); y++)
            for (int x = 0; x < bytes; x++) {
                uint8_t u = a->data[p][y * a->linesize[p] + x], v = b->data[p][y * b->linesize[p] + x];
                if (u != v) {
                    snprintf(why, len, "plane %d byte (%d, %zu): 0x%02x against 0x%02x", p, x, y, u, v);
                    return false;
                }
            }
    }
    snprintf(why, len, "every byte");
    return true;
}

/* Does the device make read-write 2D images of this format? */
static bool cl_has_image_format(cl_channel_order order, cl_channel_type type)
{
    cl_image_format have[256];
    cl_uint n = 0;

    clGetSupportedImageFormats(fx.cl.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 256, have, &n);
    for (cl_uint i = 0; i < n && i < 256; i++)
        if (have[i].image_channel_order == order && have[i].image_channel_data_type == type)
            return true;
    return false;
}

/* A frames context's own Vulkan frame with a pattern, the upload
 * completed: FFmpeg 5.1 copies from the pattern's own memory (imported
 * as host memory) after av_hwframe_transfer_data() returns, so the pattern
 * may be freed only once its semaphores reached sem_value. */
static AVFrame *vk_frame_with(AVBufferRef *vk_frames, const AVFrame *pattern)
{
    PFN_vkWaitSemaphores wait = (PFN_vkWaitSemaphores)av_fixture_device_proc(&fx, "vkWaitSemaphores");
    AVFrame *f = av_fixture_frame(vk_frames);
    AVVkFrame *vkf;
    int r;

    if ((r = av_hwframe_transfer_data(f, pattern, 0)) < 0)
        tap_bail("uploading the pattern: %s", av_err(r));
    vkf = (AVVkFrame *)f->data[0];
    for (int p = 0; p < av_pix_fmt_count_planes(pattern->format); p++) {
        VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                    .semaphoreCount = 1,
                                    .pSemaphores = &vkf->sem[p],
                                    .pValues = &vkf->sem_value[p]};
        if (wait(fx.vk->act_dev, &info, 10000000000ull) != VK_SUCCESS)
            tap_bail("FFmpeg's upload of the pattern did not complete within 10 s");
    }
    return f;
}

static uint64_t sem_value(const AVFrame *f, int p)
{
    return ((const AVVkFrame *)f->data[0])->sem_value[p];
}

/* Is the Vulkan frame signalled at its sem_value on every plane (within
 * 5 s: the vk-image way hands frames back in device order, the GPU
 * signalling after OpenCL's release), and does it still hold `pattern`? */
static bool vk_intact(AVFrame *vkf, const AVFrame *pattern, int planes, uint64_t want_value, char *why, size_t len)
{
    PFN_vkWaitSemaphores wait = (PFN_vkWaitSemaphores)av_fixture_device_proc(&fx, "vkWaitSemaphores");
    AVFrame *back;
    bool same;

    for (int p = 0; p < planes; p++) {
        VkSemaphore sem = ((AVVkFrame *)vkf->data[0])->sem[p];
        VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                    .semaphoreCount = 1,
                                    .pSemaphores = &sem,
                                    .pValues = &want_value};
        uint64_t v;
        wait(fx.vk->act_dev, &info, 5000000000ull);
        v = av_fixture_counter(&fx, sem);
        if (sem_value(vkf, p) != want_value || v < want_value) {
            snprintf(why, len, "plane %d: sem_value %llu (want %llu), its semaphore at %llu", p,
                     (unsigned long long)sem_value(vkf, p), (unsigned long long)want_value, (unsigned long long)v);
            return false;
        }
    }
    back = av_fixture_download(vkf);
    same = same_bytes(back, pattern, why, len);
    av_frame_free(&back);
    return same;
}

/* ---------------------------------------------------------------- the filters */

/* Does the map find an image way for this frame? If not, `why` gets the
 * library's sentence (an fd path on an OpenCL device without
 * cl_khr_image2d_from_buffer, as PoCL with t/lib/fake-nvidia-import.c;
 * optimal-tiling frames where the bridge imports no images from fds). A
 * trial map that works is unmapped at once. */
static bool way_offered(AVBufferRef *cl_frames, AVFrame *vkf, char *why, size_t len)
{
    AVFrame *mapped = av_frame_alloc();
    clmem_status s;

    mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
    s = clmem_av_cl_map(fx.bridge, NULL, mapped, vkf, AV_HWFRAME_MAP_READ);
    if (s == CLMEM_ERR_UNSUPPORTED)
        snprintf(why, len, "%s", clmem_error_message());
    av_frame_free(&mapped);
    return s != CLMEM_ERR_UNSUPPORTED;
}


/* Every point of run_filters() for `sw` skips, naming why (or fails,
 * where why is an OpenCL call's failure). */
static void skip_filters(enum AVPixelFormat sw, const char *name, const char *why)
{
    /* The bridge's sentence for an OpenCL call that failed ("... returned
     * -5") is a failure, not a capability the device lacks: those points
     * fail. */
    bool failed = strstr(why, " returned -") != NULL;

    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        char fname[64];
        filter_name(filters[i], fname, sizeof fname);
        if (!filter_takes(filters[i], sw))
            continue;
        if (failed)
            tap_ok(false, "%s through %s: %s", name, fname, why);
        else
            tap_skip(why, "%s through %s", name, fname);
    }
    if (failed)
        tap_ok(false, "%s through overlay_opencl with the main input mapped: %s", name, why);
    else
        tap_skip(why, "%s through overlay_opencl with the main input mapped", name);
}

/* Every filter that takes `sw` on a mapped frame against the hwupload
 * route, on linear frames or on optimal-tiling ones. */
static void run_filters(enum AVPixelFormat sw, const char *missing, bool optimal)
{
    const char *tiling = optimal ? "optimal" : "linear";
    char name[64], no_way[512], no_setup[512];
    AVBufferRef *vk_frames = av_fixture_frames_set_up(&fx, sw, W, H, optimal, no_setup, sizeof no_setup);
    AVBufferRef *cl_frames = NULL;
    AVFrame *pattern = av_fixture_pattern(sw, W, H, 3), *vkf;
    AVFrame *overlay = av_fixture_pattern(sw, 32, 24, 9);
    int planes = av_pix_fmt_count_planes(sw);
    clmem_status s;

    snprintf(name, sizeof name, "%s %s", av_get_pix_fmt_name(sw), tiling);
    if (!vk_frames) { /* the Vulkan device makes no such frames */
        skip_filters(sw, name, no_setup);
        av_frame_free(&pattern);
        av_frame_free(&overlay);
        return;
    }
    vkf = vk_frame_with(vk_frames, pattern);
    s = clmem_av_cl_frames_create(cl_device, vk_frames, &cl_frames);
    if (!missing && s == CLMEM_OK && !way_offered(cl_frames, vkf, no_way, sizeof no_way)) {
        /* No image way for the path the planes take (map_itself() checks
         * the refusal): every point skips, naming it. */
        missing = no_way;
        av_buffer_unref(&cl_frames);
    }
    if (missing == no_way) {
        tap_ok(s == CLMEM_OK, "%s: clmem_av_cl_frames_create matches the Vulkan frames (the map has no way here)",
               name);
        skip_filters(sw, name, missing);
        goto out;
    }
    if (missing) {
        char reason[256];
        snprintf(reason, sizeof reason,
                 "the OpenCL device makes no %s read-write 2D images, which %s frames need (FFmpeg's own "
                 "hwupload cannot make such frames here either)",
                 missing, name);
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && cl_frames == NULL && strstr(clmem_error_message(), missing) &&
                   strstr(clmem_error_message(), av_get_pix_fmt_name(sw)),
               "%s: the OpenCL device makes no %s images -> clmem_av_cl_frames_create is CLMEM_ERR_UNSUPPORTED "
               "naming both (%s)",
               name, missing, clmem_error_message());
        skip_filters(sw, name, reason);
        goto out;
    }
    if (!tap_ok(s == CLMEM_OK, "%s: clmem_av_cl_frames_create matches the Vulkan frames (%s)", name,
                s == CLMEM_OK ? "ok" : clmem_error_message()))
        goto out;

    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
        char fname[64], desc[512], up_desc[600], map_desc[600], why[256];
        const AVFilter *filter;
        struct graph mg, rg;
        AVFrame *mapped = NULL, *sw_in = NULL, *mapped_out = NULL, *ref_out = NULL;
        enum AVPixelFormat cl_fmt = AV_PIX_FMT_OPENCL;
        int w = W, h = H, r;
        uint64_t before = sem_value(vkf, 0);

        filter_name(filters[i], fname, sizeof fname);
        if (!filter_takes(filters[i], sw))
            continue;
        if (!(filter = avfilter_get_by_name(fname))) {
            tap_skip("this libavfilter has no such filter", "%s through %s", name, fname);
            continue;
        }
        filter_desc(filters[i], desc, sizeof desc);
        snprintf(up_desc, sizeof up_desc, "[in0]hwupload,%s[out]", desc);

        /* The route users have today: software bytes uploaded with hwupload. */
        if ((r = graph_open(&rg, up_desc, 1, &sw, (AVBufferRef *[]){NULL}, &w, &h)) < 0 ||
            (sw_in = av_frame_clone(pattern), (r = graph_run(&rg, 1, &sw_in, &ref_out)) < 0)) {
            av_frame_free(&sw_in);
            graph_close(&rg);
            tap_skip(av_err(r), "%s through %s: FFmpeg's own hwupload route refuses it", name, fname);
            continue;
        }
        av_frame_free(&sw_in);
        graph_close(&rg);

        /* The mapped route. */
        mapped = av_frame_alloc();
        mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fx.bridge, NULL, mapped, vkf, AV_HWFRAME_MAP_READ);
        if (s != CLMEM_OK) {
            tap_ok(false, "%s through %s: %s", name, fname, clmem_error_message());
            av_frame_free(&mapped);
            av_frame_free(&ref_out);
            continue;
        }
        snprintf(map_desc, sizeof map_desc, "[in0]%s[out]", desc);
        if ((r = graph_open(&mg, map_desc, 1, &cl_fmt, &cl_frames, &w, &h)) < 0 ||
            (r = graph_run(&mg, 1, &mapped, &mapped_out)) < 0)
            tap_ok(false, "%s through %s: the mapped route's graph: %s", name, fname, av_err(r));
        else
            tap_ok(same_bytes(mapped_out, ref_out, why, sizeof why),
                   "%s through %s: the mapped route's output is the hwupload route's, %dx%d (%s)", name, fname,
                   mapped_out->width, mapped_out->height, why);
        av_frame_free(&mapped); /* the graph's references went with the graph or before */
        graph_close(&mg);
        tap_ok(vk_intact(vkf, pattern, planes, before + 1, why, sizeof why),
               "%s after %s: the Vulkan frame holds its bytes and is signalled at sem_value + 1 (%s)", name, fname,
               why);
        av_frame_free(&mapped_out);
        av_frame_free(&ref_out);
    }

    /* overlay_opencl: the main input mapped, the overlay uploaded. */
    {
        char why[256];
        struct graph mg, rg;
        enum AVPixelFormat ref_fmts[2] = {sw, sw}, map_fmts[2] = {AV_PIX_FMT_OPENCL, sw};
        AVBufferRef *map_frames[2] = {cl_frames, NULL}, *no_frames[2] = {NULL, NULL};
        int ws[2] = {W, 32}, hs[2] = {H, 24}, r;
        AVFrame *in[2], *mapped_out = NULL, *ref_out = NULL;
        uint64_t before = sem_value(vkf, 0);
        const char *desc = "[in0]hwupload[a];[in1]hwupload[b];[a][b]overlay_opencl=x=8:y=4";
        const char *map_desc = "[in1]hwupload[b];[in0][b]overlay_opencl=x=8:y=4";

        in[0] = av_frame_clone(pattern);
        in[1] = av_frame_clone(overlay);
        r = graph_open(&rg, desc, 2, ref_fmts, no_frames, ws, hs);
        if (r >= 0)
            r = graph_run(&rg, 2, in, &ref_out);
        av_frame_free(&in[0]);
        av_frame_free(&in[1]);
        graph_close(&rg);
        if (r < 0) {
            tap_skip(av_err(r), "%s through overlay_opencl: FFmpeg's own hwupload route refuses it", name);
        } else {
            in[0] = av_frame_alloc();
            in[0]->hw_frames_ctx = av_buffer_ref(cl_frames);
            s = clmem_av_cl_map(fx.bridge, NULL, in[0], vkf, AV_HWFRAME_MAP_READ);
            in[1] = av_frame_clone(overlay);
            if (s != CLMEM_OK)
                tap_ok(false, "%s through overlay_opencl: %s", name, clmem_error_message());
            else if ((r = graph_open(&mg, map_desc, 2, map_fmts, map_frames, ws, hs)) < 0 ||
                     (r = graph_run(&mg, 2, in, &mapped_out)) < 0)
                tap_ok(false, "%s through overlay_opencl: the mapped route's graph: %s", name, av_err(r));
            else
                tap_ok(same_bytes(mapped_out, ref_out, why, sizeof why),
                       "%s through overlay_opencl, main input mapped: the hwupload route's output (%s)", name, why);
            av_frame_free(&in[0]);
            av_frame_free(&in[1]);
            if (s == CLMEM_OK)
                graph_close(&mg);
            tap_ok(vk_intact(vkf, pattern, planes, before + 1, why, sizeof why),
                   "%s after overlay_opencl: the Vulkan frame holds its bytes, signalled at sem_value + 1 (%s)", name,
                   why);
        }
        av_frame_free(&mapped_out);
        av_frame_free(&ref_out);
    }

out:
    av_buffer_unref(&cl_frames);
    av_frame_free(&vkf);
    av_frame_free(&pattern);
    av_frame_free(&overlay);
    av_buffer_unref(&vk_frames);
}

/* ---------------------------------------------------------------- the map itself */

/* Properties, the way, a write through a mapping, an overwrite. */
static void map_itself(void)
{
    AVBufferRef *vk_frames = av_fixture_frames(&fx, AV_PIX_FMT_RGBA, W, H), *cl_frames = NULL;
    AVFrame *pattern = av_fixture_pattern(AV_PIX_FMT_RGBA, W, H, 5), *vkf = vk_frame_with(vk_frames, pattern);
    AVFrame *mapped = av_frame_alloc(), *back;
    clmem_bridge_path path = fx.path;
    clmem_av_cl_way want = path == CLMEM_BRIDGE_PATH_HOST_MAPPED ? CLMEM_AV_CL_WAY_HOST_PTR
                                                                 : CLMEM_AV_CL_WAY_BUFFER_VIEW;
    uint64_t before = sem_value(vkf, 0);
    cl_mem images_seen = NULL;
    int refs;
    char why[256];
    clmem_status s;
    bool ok;

    if (clmem_av_cl_frames_create(cl_device, vk_frames, &cl_frames) != CLMEM_OK)
        tap_bail("clmem_av_cl_frames_create(rgba): %s", clmem_error_message());
    vkf->pts = 1234;
    vkf->color_range = AVCOL_RANGE_JPEG;
    vkf->colorspace = AVCOL_SPC_BT709;
    vkf->crop_left = 2;
    vkf->crop_top = 4;
    mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
    refs = av_buffer_get_ref_count(vkf->buf[0]);
    s = clmem_av_cl_map(fx.bridge, NULL, mapped, vkf, AV_HWFRAME_MAP_READ | AV_HWFRAME_MAP_WRITE);
    if (s != CLMEM_OK) {
        /* The path the planes take has no image way here: say which, once. */
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && strstr(clmem_error_message(), "clmem_av_frames_setup_optimal()") &&
                   sem_value(vkf, 0) == before && mapped->buf[0] == NULL,
               "clmem_av_cl_map on the %s path: CLMEM_ERR_UNSUPPORTED, dst and the frame unchanged (%s)",
               clmem_bridge_path_name(path), clmem_error_message());
        goto out;
    }
    tap_ok(mapped->format == AV_PIX_FMT_OPENCL && mapped->width == W && mapped->height == H && mapped->buf[0] &&
               mapped->data[0] && mapped->hw_frames_ctx && mapped->hw_frames_ctx->data == cl_frames->data,
           "clmem_av_cl_map: an AV_PIX_FMT_OPENCL %dx%d frame of the OpenCL frames context", mapped->width,
           mapped->height);
    tap_ok(mapped->pts == 1234 && mapped->color_range == AVCOL_RANGE_JPEG && mapped->colorspace == AVCOL_SPC_BT709 &&
               mapped->crop_left == 2 && mapped->crop_top == 4,
           "the mapped frame has src's pts, colour and crop");
    {
        cl_mem_object_type type = 0;
        clGetMemObjectInfo((cl_mem)mapped->data[0], CL_MEM_TYPE, sizeof type, &type, NULL);
        tap_ok(type == CL_MEM_OBJECT_IMAGE2D, "data[0] is an image2d cl_mem (type 0x%x)", (unsigned)type);
    }
    ok = clmem_av_cl_frame_way(mapped) == want;
    tap_ok(ok, "on the %s path the way is %s (%s)", clmem_bridge_path_name(path), clmem_av_cl_way_name(want),
           clmem_av_cl_way_name(clmem_av_cl_frame_way(mapped)));
    tap_ok(clmem_av_cl_frame_way(vkf) == CLMEM_AV_CL_WAY_NONE && clmem_av_cl_frame_way(NULL) == CLMEM_AV_CL_WAY_NONE &&
               strcmp(clmem_av_cl_way_name(CLMEM_AV_CL_WAY_NONE), "none") == 0,
           "clmem_av_cl_frame_way of a frame it did not map, and of NULL, is none");
    tap_ok(sem_value(vkf, 0) == before, "while mapped, sem_value is where it was (%llu)",
           (unsigned long long)sem_value(vkf, 0));
    images_seen = (cl_mem)mapped->data[0];

    /* A write through the mapping: fill the image, unmap, download. */
    {
        cl_float4 colour = {{0.0f, 1.0f, 0.0f, 1.0f}};
        size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
        cl_int err = clEnqueueFillImage(fx.cl.queue, (cl_mem)mapped->data[0], &colour, origin, region, 0, NULL, NULL);
        clFinish(fx.cl.queue);
        tap_ok(err == CL_SUCCESS, "clEnqueueFillImage on the mapped image (%d)", err);
    }
    av_frame_unref(mapped);
    tap_ok(av_buffer_get_ref_count(vkf->buf[0]) == refs,
           "after the unmap the frame has the references it had before the map (%d): the kept imports hold none",
           refs);
    tap_ok(sem_value(vkf, 0) == before + 1 && av_fixture_counter(&fx, ((AVVkFrame *)vkf->data[0])->sem[0]) >= before + 1,
           "av_frame_unref of the mapped frame signalled the Vulkan frame at sem_value + 1 (%llu)",
           (unsigned long long)sem_value(vkf, 0));
    back = av_fixture_download(vkf);
    ok = true;
    for (int y = 0; y < H && ok; y++)
        for (int x = 0; x < W && ok; x++) {
            const uint8_t *px = back->data[0] + y * back->linesize[0] + 4 * x;
            ok = px[0] == 0 && px[1] == 255 && px[2] == 0 && px[3] == 255;
            if (!ok)
                snprintf(why, sizeof why, "(%d, %d) is %02x%02x%02x%02x", x, y, px[0], px[1], px[2], px[3]);
        }
    tap_ok(ok, "a write through a READ|WRITE mapping reaches the Vulkan frame after av_frame_unref%s%s",
           ok ? "" : ": ", ok ? "" : why);
    av_frame_free(&back);

    /* The same pool frame again, and after it went back to the pool: the
     * frames context kept its imports and images (the same cl_mem), and
     * the pool still hands the frame out (the kept imports do not hold it). */
    {
        AVFrame *second = av_frame_alloc(), *third = av_frame_alloc();
        cl_mem first_image = images_seen;
        second->hw_frames_ctx = av_buffer_ref(cl_frames);
        third->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fx.bridge, NULL, second, vkf, AV_HWFRAME_MAP_READ);
        tap_ok(s == CLMEM_OK && (cl_mem)second->data[0] == first_image,
               "mapping the frame again takes the images kept from its first map (%s)",
               s == CLMEM_OK ? "the same cl_mem" : clmem_error_message());
        s = clmem_av_cl_map(fx.bridge, NULL, third, vkf, AV_HWFRAME_MAP_READ);
        tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "mapped already"),
               "mapping a frame that is mapped already: CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
        tap_ok(third->buf[0] == NULL && third->hw_frames_ctx != NULL, "and the refused dst is unchanged");
        av_frame_free(&second);
        av_frame_free(&third);

        /* A frame FFmpeg never transferred (FFmpeg's transfers keep a
         * reference on their last frame until their next submission): back
         * to the pool after its map, handed out again, mapped again. */
        {
            AVFrame *fresh = av_fixture_frame(vk_frames);
            const void *pool_frame = fresh->data[0];
            cl_mem kept;
            second = av_frame_alloc();
            second->hw_frames_ctx = av_buffer_ref(cl_frames);
            s = clmem_av_cl_map(fx.bridge, NULL, second, fresh, AV_HWFRAME_MAP_OVERWRITE);
            kept = s == CLMEM_OK ? (cl_mem)second->data[0] : NULL;
            av_frame_free(&second);
            av_frame_free(&fresh);
            fresh = av_fixture_frame(vk_frames);
            tap_ok(s == CLMEM_OK && fresh->data[0] == pool_frame,
                   "a mapped and unmapped frame goes back to the pool, which hands it out again (%s)",
                   s == CLMEM_OK ? "the same AVVkFrame" : clmem_error_message());
            second = av_frame_alloc();
            second->hw_frames_ctx = av_buffer_ref(cl_frames);
            s = clmem_av_cl_map(fx.bridge, NULL, second, fresh, AV_HWFRAME_MAP_OVERWRITE);
            tap_ok(s == CLMEM_OK && (cl_mem)second->data[0] == kept && kept != first_image,
                   "mapping it then takes the images kept from its first map: no import (%s)",
                   s == CLMEM_OK ? "the same cl_mem" : clmem_error_message());
            av_frame_free(&fresh);
        }
        av_frame_free(&second);
    }
    /* Through a sync object: its order's acquire and release (host order
     * where OpenCL imports no semaphore, as on PoCL). */
    {
        clmem_av_sync *sync = NULL;
        AVFrame *m3 = av_frame_alloc();
        uint64_t at = sem_value(vkf, 0);
        s = clmem_av_sync_create(fx.bridge, fx.device, CLMEM_AV_ORDER_BEST, 2, &sync);
        if (s != CLMEM_OK)
            tap_bail("clmem_av_sync_create: %s", clmem_error_message());
        m3->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fx.bridge, sync, m3, vkf, AV_HWFRAME_MAP_READ);
        tap_ok(s == CLMEM_OK && sem_value(vkf, 0) == at,
               "clmem_av_cl_map through a sync object (%s order): mapped, the frame OpenCL's (%s)",
               clmem_av_order_name(clmem_av_sync_get_order(sync)), s == CLMEM_OK ? "ok" : clmem_error_message());
        av_frame_free(&m3);
        s = clmem_av_sync_finish(sync, 10000000000ull);
        tap_ok(s == CLMEM_OK && sem_value(vkf, 0) == at + 1 &&
                   av_fixture_counter(&fx, ((AVVkFrame *)vkf->data[0])->sem[0]) >= at + 1,
               "its unmap released the frame through the sync object: signalled at sem_value + 1 (%llu)",
               (unsigned long long)sem_value(vkf, 0));
        clmem_av_sync_unref(sync);
    }
    /* An OpenCL frames context of FFmpeg's own (not clmem_av_cl_frames_create()'s):
     * maps work there too, each with imports of its own. */
    {
        AVBufferRef *own = av_hwframe_ctx_alloc(cl_device);
        AVHWFramesContext *ofc = (AVHWFramesContext *)own->data;
        AVFrame *m2 = av_frame_alloc();
        uint64_t at = sem_value(vkf, 0);
        ofc->format = AV_PIX_FMT_OPENCL;
        ofc->sw_format = AV_PIX_FMT_RGBA;
        ofc->width = W;
        ofc->height = H;
        if (av_hwframe_ctx_init(own) < 0)
            tap_bail("an OpenCL frames context of FFmpeg's own");
        m2->hw_frames_ctx = av_buffer_ref(own);
        s = clmem_av_cl_map(fx.bridge, NULL, m2, vkf, AV_HWFRAME_MAP_READ);
        tap_ok(s == CLMEM_OK && m2->data[0] && (cl_mem)m2->data[0] != images_seen,
               "a map into an OpenCL frames context of FFmpeg's own: images of its own (%s)",
               s == CLMEM_OK ? "ok" : clmem_error_message());
        av_frame_free(&m2);
        tap_ok(sem_value(vkf, 0) == at + 1, "and its unmap hands the frame back (sem_value %llu)",
               (unsigned long long)sem_value(vkf, 0));
        av_buffer_unref(&own);
    }
out:
    av_frame_free(&mapped);
    av_buffer_unref(&cl_frames);
    av_frame_free(&vkf);
    av_frame_free(&pattern);
    av_buffer_unref(&vk_frames);
}

/* ---------------------------------------------------------------- bad input */

/* An optimal-tiling frames context of clmem_av_frames_setup_optimal() on
 * FFmpeg's device, not initialised (NULL where the setup refuses; its
 * status in *s). */
static AVBufferRef *optimal_frames_alloc(enum AVPixelFormat sw, clmem_status *s)
{
    AVBufferRef *ref = av_hwframe_ctx_alloc(fx.device);
    AVHWFramesContext *fc = (AVHWFramesContext *)ref->data;

    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = W;
    fc->height = H;
    if ((*s = clmem_av_frames_setup_optimal(ref)) != CLMEM_OK)
        av_buffer_unref(&ref);
    return ref;
}

/* Frames of clmem_av_frames_setup_optimal(): optimal-tiling images whose
 * memory is exportable as an opaque fd, which FFmpeg uploads to and
 * downloads from; the plane-buffer import and the map refuse them,
 * naming why, and change nothing. */
static void optimal_frames(void)
{
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)av_fixture_device_proc(&fx, "vkGetMemoryFdKHR");
    AVBufferRef *vk_frames, *cl_frames = NULL, *refused;
    AVFrame *pattern = av_fixture_pattern(AV_PIX_FMT_RGBA, W, H, 11), *vkf, *down = av_frame_alloc();
    AVFrame *mapped = av_frame_alloc();
    const AVVulkanFramesContext *vfc;
    AVVkFrame *f;
    clmem_av_frame_planes planes;
    struct fd_snapshot fds;
    uint64_t before;
    char why[256];
    clmem_status s;
    int r, fd = -1;

    vk_frames = optimal_frames_alloc(AV_PIX_FMT_RGBA, &s);
    if (!tap_ok(s == CLMEM_OK, "clmem_av_frames_setup_optimal(rgba) (%s)", s == CLMEM_OK ? "ok" : clmem_error_message()))
        tap_bail("no optimal-tiling frames: %s", clmem_error_message());
    vfc = ((AVHWFramesContext *)vk_frames->data)->hwctx;
    tap_ok((vfc->usage & (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT)) ==
               (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT),
           "its usage 0x%x has both transfers", (unsigned)vfc->usage);
    if ((r = av_hwframe_ctx_init(vk_frames)) < 0)
        tap_bail("av_hwframe_ctx_init of the optimal-tiling frames: %s", av_err(r));
    vkf = vk_frame_with(vk_frames, pattern);
    f = (AVVkFrame *)vkf->data[0];
    tap_ok(f->tiling == VK_IMAGE_TILING_OPTIMAL && f->img[0] && f->mem[0] && f->offset[0] == 0,
           "a frame of the pool is an optimal-tiling image bound at offset 0 (tiling %d)", (int)f->tiling);
    {
        VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                     .memory = f->mem[0],
                                     .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkResult vr = get_fd(fx.vk->act_dev, &info, &fd);
        tap_ok(vr == VK_SUCCESS && fd >= 0, "its memory exports as an opaque fd (VkResult %d)", (int)vr);
        if (fd >= 0)
            close(fd);
    }
    down->format = AV_PIX_FMT_RGBA;
    r = av_hwframe_transfer_data(down, vkf, 0);
    tap_ok(r >= 0 && same_bytes(pattern, down, why, sizeof why),
           "FFmpeg's upload to it and download from it give the pattern back (%s)", r < 0 ? av_err(r) : "same bytes");

    fd_snapshot_take(&fds);
    before = sem_value(vkf, 0);
    s = clmem_av_frame_import(fx.bridge, vkf, CLMEM_BRIDGE_PATH_BEST, fx.cl.queue, CL_MEM_READ_WRITE, &planes);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && planes.count == 0 && strstr(clmem_error_message(), "optimal-tiling frame"),
           "clmem_av_frame_import of it: CLMEM_ERR_UNSUPPORTED, no planes (%s)", clmem_error_message());
    if (clmem_av_cl_frames_create(cl_device, vk_frames, &cl_frames) != CLMEM_OK)
        tap_bail("clmem_av_cl_frames_create(optimal rgba): %s", clmem_error_message());
    mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
    s = clmem_av_cl_map(fx.bridge, NULL, mapped, vkf, AV_HWFRAME_MAP_READ | AV_HWFRAME_MAP_WRITE);
    if (s == CLMEM_OK) {
        /* The vk-image way: OpenCL reads what FFmpeg uploaded, and what it
         * writes is what FFmpeg downloads after the unmap. */
        AVFrame *next = av_fixture_pattern(AV_PIX_FMT_RGBA, W, H, 12);
        uint8_t *got = malloc((size_t)W * H * 4);
        size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
        cl_mem image = (cl_mem)mapped->data[0];
        bool same = true;
        cl_int err;

        tap_ok(clmem_av_cl_frame_way(mapped) == CLMEM_AV_CL_WAY_VK_IMAGE,
               "clmem_av_cl_map of it takes the vk-image way (%s)", clmem_av_cl_way_name(clmem_av_cl_frame_way(mapped)));
        err = clEnqueueReadImage(fx.cl.queue, image, CL_TRUE, origin, region, (size_t)W * 4, 0, got, 0, NULL, NULL);
        for (int y = 0; y < H && same; y++)
            same = memcmp(got + (size_t)y * W * 4, pattern->data[0] + (size_t)y * pattern->linesize[0], (size_t)W * 4) == 0;
        tap_ok(err == CL_SUCCESS && same, "OpenCL reads the pattern FFmpeg uploaded from the plane's image (%d)", err);
        err = clEnqueueWriteImage(fx.cl.queue, image, CL_TRUE, origin, region, (size_t)next->linesize[0], 0,
                                  next->data[0], 0, NULL, NULL);
        av_frame_unref(mapped); /* the unmap: the hand-back to FFmpeg */
        tap_ok(err == CL_SUCCESS && vk_intact(vkf, next, 1, before + 1, why, sizeof why),
               "what OpenCL wrote is what FFmpeg downloads after the unmap, signalled at sem_value + 1 (%s)", why);
        mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fx.bridge, NULL, mapped, vkf, AV_HWFRAME_MAP_READ);
        tap_ok(s == CLMEM_OK && (cl_mem)mapped->data[0] == image,
               "mapping the pool frame again gives the same image: its import is kept (%s)",
               s == CLMEM_OK ? "ok" : clmem_error_message());
        av_frame_unref(mapped);
        av_frame_free(&pattern);
        pattern = next;
        before = sem_value(vkf, 0);
        free(got);
    } else {
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && strstr(clmem_error_message(), "vk-image way") && mapped->buf[0] == NULL &&
                   mapped->data[0] == NULL && sem_value(vkf, 0) == before,
               "clmem_av_cl_map of it: CLMEM_ERR_UNSUPPORTED naming the vk-image way, dst and the frame unchanged (%s)",
               clmem_error_message());
        fd_describe_new(&fds, why, sizeof why);
        tap_ok(strcmp(why, "none") == 0, "the refusals left no fd behind (new: %s)", why);
        tap_skip("the map takes no vk-image way here", "what OpenCL wrote is what FFmpeg downloads after the unmap");
    }
    av_frame_unref(down);
    down->format = AV_PIX_FMT_RGBA;
    r = av_hwframe_transfer_data(down, vkf, 0);
    tap_ok(r >= 0 && same_bytes(pattern, down, why, sizeof why), "the frame holds its bytes after the map (%s)",
           r < 0 ? av_err(r) : why);

    /* Bad set-ups: a linear tiling asked for, a context initialised already. */
    refused = av_hwframe_ctx_alloc(fx.device);
    ((AVHWFramesContext *)refused->data)->format = AV_PIX_FMT_VULKAN;
    ((AVHWFramesContext *)refused->data)->sw_format = AV_PIX_FMT_NV12;
    ((AVHWFramesContext *)refused->data)->width = W;
    ((AVHWFramesContext *)refused->data)->height = H;
    ((AVVulkanFramesContext *)((AVHWFramesContext *)refused->data)->hwctx)->tiling = VK_IMAGE_TILING_LINEAR;
    s = clmem_av_frames_setup_optimal(refused);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "asks for tiling") &&
               ((AVHWFramesContext *)refused->data)->pool == NULL,
           "clmem_av_frames_setup_optimal with a linear tiling: CLMEM_ERR_INVALID_VALUE, no pool (%s)",
           clmem_error_message());
    av_buffer_unref(&refused);
    s = clmem_av_frames_setup_optimal(vk_frames);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "already has a pool"),
           "clmem_av_frames_setup_optimal of an initialised context: CLMEM_ERR_INVALID_VALUE (%s)",
           clmem_error_message());
    s = clmem_av_frames_setup_optimal(NULL);
    tap_ok(s == CLMEM_ERR_NULL_POINTER, "clmem_av_frames_setup_optimal(NULL): CLMEM_ERR_NULL_POINTER (%s)",
           clmem_error_message());

    av_frame_free(&mapped);
    av_frame_free(&down);
    av_frame_free(&vkf);
    av_frame_free(&pattern);
    av_buffer_unref(&cl_frames);
    av_buffer_unref(&vk_frames);
}

static void bad_input(void)
{
    AVBufferRef *vk_frames = av_fixture_frames(&fx, AV_PIX_FMT_RGBA, W, H), *cl_frames = NULL, *out = NULL;
    AVBufferRef *small_frames = av_fixture_frames(&fx, AV_PIX_FMT_RGBA, W / 2, H), *small_cl = NULL;
    AVFrame *pattern = av_fixture_pattern(AV_PIX_FMT_RGBA, W, H, 7), *vkf = vk_frame_with(vk_frames, pattern);
    AVFrame *dst = av_frame_alloc();
    AVBufferRef *gray = av_hwframe_ctx_alloc(fx.device);
    AVHWFramesContext *gfc = (AVHWFramesContext *)gray->data;
    uint64_t before = sem_value(vkf, 0);
    struct fd_snapshot fds;
    char why[256];
    clmem_status s;

    if (clmem_av_cl_frames_create(cl_device, vk_frames, &cl_frames) != CLMEM_OK ||
        clmem_av_cl_frames_create(cl_device, small_frames, &small_cl) != CLMEM_OK)
        tap_bail("clmem_av_cl_frames_create(rgba): %s", clmem_error_message());
    fd_snapshot_take(&fds);

    s = clmem_av_cl_device_create(NULL, &out);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && out == NULL && strstr(clmem_error_message(), "clmem_av_cl_device_create: b is NULL"),
           "clmem_av_cl_device_create(NULL): CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_av_cl_frames_create(cl_device, NULL, &out);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && out == NULL && strstr(clmem_error_message(), "vk_frames_ref is NULL"),
           "clmem_av_cl_frames_create(vk_frames_ref NULL): CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_av_cl_frames_create(fx.device, vk_frames, &out);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && out == NULL && strstr(clmem_error_message(), "AV_HWDEVICE_TYPE_OPENCL"),
           "clmem_av_cl_frames_create on the Vulkan device: CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
    gfc->format = AV_PIX_FMT_VULKAN;
    gfc->sw_format = AV_PIX_FMT_GRAY8;
    gfc->width = W;
    gfc->height = H;
    s = clmem_av_cl_frames_create(cl_device, gray, &out);
    tap_ok(s == CLMEM_ERR_UNSUPPORTED && out == NULL && strstr(clmem_error_message(), "not gray"),
           "clmem_av_cl_frames_create of gray frames: CLMEM_ERR_UNSUPPORTED naming the format (%s)",
           clmem_error_message());

    s = clmem_av_cl_map(NULL, NULL, dst, vkf, 0);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "clmem_av_cl_map: b is NULL"),
           "clmem_av_cl_map(b NULL): CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_av_cl_map(fx.bridge, NULL, dst, NULL, 0);
    tap_ok(s == CLMEM_ERR_NULL_POINTER && strstr(clmem_error_message(), "src is NULL"),
           "clmem_av_cl_map(src NULL): CLMEM_ERR_NULL_POINTER (%s)", clmem_error_message());
    s = clmem_av_cl_map(fx.bridge, NULL, dst, vkf, 0);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "no hw_frames_ctx"),
           "clmem_av_cl_map into a dst without hw_frames_ctx: CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
    dst->hw_frames_ctx = av_buffer_ref(cl_frames);
    s = clmem_av_cl_map(fx.bridge, NULL, dst, vkf, 0x100);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "0x100"),
           "clmem_av_cl_map with an unknown flag: CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
    s = clmem_av_cl_map(fx.bridge, NULL, dst, pattern, 0);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "pix_fmt is rgba"),
           "clmem_av_cl_map of a software frame: CLMEM_ERR_INVALID_VALUE naming its pix_fmt (%s)",
           clmem_error_message());
    av_buffer_unref(&dst->hw_frames_ctx);
    dst->hw_frames_ctx = av_buffer_ref(small_cl);
    s = clmem_av_cl_map(fx.bridge, NULL, dst, vkf, 0);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "rgba 48x64"),
           "clmem_av_cl_map into a frames context of another size: CLMEM_ERR_INVALID_VALUE giving both (%s)",
           clmem_error_message());
    av_buffer_unref(&dst->hw_frames_ctx);
    dst->hw_frames_ctx = av_buffer_ref(vk_frames);
    s = clmem_av_cl_map(fx.bridge, NULL, dst, vkf, 0);
    tap_ok(s == CLMEM_ERR_INVALID_VALUE && strstr(clmem_error_message(), "AV_PIX_FMT_OPENCL"),
           "clmem_av_cl_map into a Vulkan frames context: CLMEM_ERR_INVALID_VALUE (%s)", clmem_error_message());
    av_buffer_unref(&dst->hw_frames_ctx);

    /* A frame of another Vulkan device. */
    {
        AVBufferRef *other = NULL, *other_frames;
        AVFrame *ovkf;
        if (av_hwdevice_ctx_create(&other, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0) < 0)
            tap_bail("a second Vulkan device");
        other_frames = av_hwframe_ctx_alloc(other);
        {
            AVHWFramesContext *ofc = (AVHWFramesContext *)other_frames->data;
            ofc->format = AV_PIX_FMT_VULKAN;
            ofc->sw_format = AV_PIX_FMT_RGBA;
            ofc->width = W;
            ofc->height = H;
            if (clmem_av_frames_setup(other_frames) != CLMEM_OK || av_hwframe_ctx_init(other_frames) < 0)
                tap_bail("frames on the second device: %s", clmem_error_message());
        }
        ovkf = av_fixture_frame(other_frames);
        dst->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fx.bridge, NULL, dst, ovkf, 0);
        tap_ok(s == CLMEM_ERR_DEVICE_MISMATCH && strstr(clmem_error_message(), "clmem_av_cl_map: ") &&
                   strstr(clmem_error_message(), "another VkDevice"),
               "clmem_av_cl_map of a frame of another Vulkan device: CLMEM_ERR_DEVICE_MISMATCH (%s)",
               clmem_error_message());
        tap_ok(dst->buf[0] == NULL && dst->data[0] == NULL && dst->hw_frames_ctx != NULL,
               "every refused map left dst as it was");
        av_frame_free(&ovkf);
        av_buffer_unref(&other_frames);
        av_buffer_unref(&other);
    }
    tap_ok(sem_value(vkf, 0) == before, "and the Vulkan frame untouched (sem_value %llu)",
           (unsigned long long)sem_value(vkf, 0));
    fd_describe_new(&fds, why, sizeof why);
    tap_ok(strcmp(why, "none") == 0, "no fd left by the refused calls (new: %s)", why);

    av_frame_free(&dst);
    av_buffer_unref(&gray);
    av_buffer_unref(&cl_frames);
    av_buffer_unref(&small_cl);
    av_frame_free(&vkf);
    av_frame_free(&pattern);
    av_buffer_unref(&vk_frames);
    av_buffer_unref(&small_frames);
}

int main(void)
{
    struct fd_snapshot fds;
    cl_uint refs_before;
    char why[256];
    clmem_status s;
    int fd;

    tap_watchdog("av-cl-frames", getenv("CLMEM_TEST_INSTRUMENTED") ? 3600 : 600);
    av_fixture_open(&fx, true);
    snprintf(program_path, sizeof program_path, "%s/clmem-av-cl-XXXXXX.cl", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if ((fd = mkstemps(program_path, 3)) < 0 || write(fd, program_src, sizeof program_src - 1) < 0 || close(fd) < 0)
        tap_bail("writing the program_opencl kernel to %s", program_path);
    fd_snapshot_take(&fds);
    refs_before = cl_context_refcount(fx.cl.context);

    s = clmem_av_cl_device_create(fx.bridge, &cl_device);
    if (!tap_ok(s == CLMEM_OK, "clmem_av_cl_device_create over the bridge's context (%s)",
                s == CLMEM_OK ? "ok" : clmem_error_message()))
        tap_bail("no OpenCL device: %s", clmem_error_message());
    {
        const AVOpenCLDeviceContext *oc = ((AVHWDeviceContext *)cl_device->data)->hwctx;
        tap_ok(oc->context == fx.cl.context && oc->device_id == clmem_bridge_cl_device(fx.bridge) && oc->command_queue &&
                   cl_context_refcount(fx.cl.context) > refs_before,
               "its AVOpenCLDeviceContext holds the bridge's context (retained: %u references, %u before), its device "
               "and a queue",
               cl_context_refcount(fx.cl.context), refs_before);
    }

    map_itself();
    for (int optimal = 0; optimal <= 1; optimal++) {
        run_filters(AV_PIX_FMT_RGBA, NULL, optimal);
        run_filters(AV_PIX_FMT_BGRA, cl_has_image_format(CL_BGRA, CL_UNORM_INT8) ? NULL : "CL_BGRA", optimal);
        run_filters(AV_PIX_FMT_NV12, cl_has_image_format(CL_RG, CL_UNORM_INT8) ? NULL : "CL_RG", optimal);
        run_filters(AV_PIX_FMT_P010, cl_has_image_format(CL_RG, CL_UNORM_INT16) ? NULL : "CL_RG", optimal);
        run_filters(AV_PIX_FMT_YUV420P, cl_has_image_format(CL_R, CL_UNORM_INT8) ? NULL : "CL_R", optimal);
    }
    bad_input();
    optimal_frames();

    av_buffer_unref(&cl_device);
    s = clmem_bridge_finish(fx.bridge, 10000000000ull);
    tap_ok(s == CLMEM_OK, "finish: everything handed back (%s)", s == CLMEM_OK ? "ok" : clmem_error_message());
    tap_ok(cl_context_refs_settled(fx.cl.context, refs_before) == refs_before,
           "the OpenCL device, frames contexts and mappings gone, the context has its references of before (%u)",
           cl_context_refcount(fx.cl.context));
    fd_describe_new(&fds, why, sizeof why);
    tap_ok(strcmp(why, "none") == 0, "no fd left behind (new: %s)", why);
    tap_ok(av_fixture_validation_errors() == 0, "the validation layer reported nothing (%d)",
           av_fixture_validation_errors());
    unlink(program_path);
    av_fixture_close(&fx);
    return tap_done();
}
#else
int main(void)
{
    tap_skip_all("%s", LIBAVFILTER_FOUND);
}
#endif
