/* SPDX-License-Identifier: MIT */
/* ffmpeg-filter-example: FFmpeg's own OpenCL filters on FFmpeg's Vulkan
 * frames, no download and no upload.
 *
 * Frames of a Vulkan frames pool (set up by clmem_av_frames_setup(), or
 * by clmem_av_frames_setup_optimal() where the map takes no linear frames,
 * as on NVIDIA's OpenCL) get a pattern with FFmpeg's own upload; libclmem-av maps each one to an
 * AV_PIX_FMT_OPENCL frame whose planes are images over the Vulkan memory
 * (clmem_av_cl_map), and a libavfilter graph of OpenCL filters
 * (avgblur_opencl, then unsharp_opencl) filters it. The same bytes go
 * through the same graph the way FFmpeg users take today (hwupload from
 * software frames), and the two outputs must be byte-identical. NV12 where
 * the OpenCL device makes NV12's images (CL_R and CL_RG), else RGBA (a CPU
 * OpenCL such as PoCL has no CL_RG). Prints the format, the image way the
 * map took, and the result; exits 0 when every byte matched, 2 where no
 * image way fits this machine (the sentence says why), 1 otherwise.
 *
 * Build (installed): cc ffmpeg-filter-example.c $(pkg-config --cflags --libs clmem-av libavfilter) */
#include <clmem-av.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WIDTH 640
#define HEIGHT 360
#define FRAMES 3
#define FILTERS "avgblur_opencl=sizeX=3,unsharp_opencl"

static AVBufferRef *cl_device;

static int fail(const char *what)
{
    fprintf(stderr, "ffmpeg-filter-example: %s: %s\n", what, clmem_error_message());
    return 1;
}

/* buffer source -> FILTERS (after hwupload when `upload`) -> buffer sink;
 * the source takes AV_PIX_FMT_OPENCL frames of cl_frames, or software
 * frames of `sw` to upload. */
static AVFilterGraph *graph_new(bool upload, enum AVPixelFormat sw, AVBufferRef *cl_frames, AVFilterContext **src,
                                AVFilterContext **sink)
{
    AVFilterGraph *g = avfilter_graph_alloc();
    AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
    AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
    int r;

    *src = avfilter_graph_alloc_filter(g, avfilter_get_by_name("buffer"), "in");
    par->format = upload ? sw : AV_PIX_FMT_OPENCL;
    par->width = WIDTH;
    par->height = HEIGHT;
    par->time_base = (AVRational){1, 25};
    par->sample_aspect_ratio = (AVRational){1, 1};
    par->hw_frames_ctx = upload ? NULL : cl_frames;
    r = av_buffersrc_parameters_set(*src, par);
    av_free(par);
    if (r >= 0)
        r = avfilter_init_str(*src, NULL);
    if (r >= 0)
        r = avfilter_graph_create_filter(sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL, g);
    outs->name = av_strdup("in");
    outs->filter_ctx = *src;
    ins->name = av_strdup("out");
    ins->filter_ctx = *sink;
    if (r >= 0)
        r = avfilter_graph_parse_ptr(g, upload ? "[in]hwupload," FILTERS "[out]" : "[in]" FILTERS "[out]", &ins,
                                     &outs, NULL);
    avfilter_inout_free(&ins);
    avfilter_inout_free(&outs);
    /* hwupload uploads to FFmpeg's OpenCL device over the bridge's context. */
    for (unsigned i = 0; r >= 0 && i < g->nb_filters; i++)
        if (strcmp(g->filters[i]->filter->name, "hwupload") == 0)
            g->filters[i]->hw_device_ctx = av_buffer_ref(cl_device);
    if (r >= 0)
        r = avfilter_graph_config(g, NULL);
    if (r < 0)
        avfilter_graph_free(&g);
    return g;
}

/* One frame in (the graph takes it), one filtered frame out, downloaded to
 * `sw`. */
static int filter_one(AVFilterContext *src, AVFilterContext *sink, AVFrame *in, AVFrame *sw)
{
    AVFrame *out = av_frame_alloc();
    int r = av_buffersrc_add_frame(src, in);
    if (r >= 0)
        r = av_buffersink_get_frame(sink, out);
    if (r >= 0)
        r = av_hwframe_transfer_data(sw, out, 0);
    av_frame_free(&out);
    return r;
}

static AVFrame *sw_frame(enum AVPixelFormat sw)
{
    AVFrame *f = av_frame_alloc();
    f->format = sw;
    f->width = WIDTH;
    f->height = HEIGHT;
    av_frame_get_buffer(f, 0);
    return f;
}

int main(void)
{
    AVBufferRef *device_ref = NULL, *vk_frames_ref, *cl_frames_ref = NULL;
    AVHWFramesContext *vk_frames;
    AVFilterGraph *mapped_graph, *upload_graph;
    AVFilterContext *mapped_src, *mapped_sink, *upload_src, *upload_sink;
    enum AVPixelFormat sw = AV_PIX_FMT_NV12;
    clmem_av_cl_way way = CLMEM_AV_CL_WAY_NONE;
    clmem_bridge *bridge;
    clmem_status s;
    long bad = 0;

    av_log_set_level(AV_LOG_ERROR); /* FFmpeg's notes on its OpenCL device's interop stay quiet */
    if (av_hwdevice_ctx_create(&device_ref, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0) < 0) {
        fprintf(stderr, "ffmpeg-filter-example: FFmpeg cannot make a Vulkan device here\n");
        return 1;
    }
    /* The bridge on FFmpeg's VkDevice, and FFmpeg's OpenCL device over the
     * bridge's own OpenCL context. */
    if (clmem_av_bridge_create(device_ref, NULL, 0, &bridge) != CLMEM_OK)
        return fail("clmem_av_bridge_create");
    if (clmem_av_cl_device_create(bridge, &cl_device) != CLMEM_OK)
        return fail("clmem_av_cl_device_create");

    /* A Vulkan pool whose frames OpenCL can read, and the OpenCL frames
     * context that matches it: NV12 where the device has its images;
     * linear frames where the map takes them, else optimal-tiling ones
     * (each plane's VkImage imported as an OpenCL image). */
    for (bool optimal = false;;) {
        AVFrame *trial, *trial_cl;

        vk_frames_ref = av_hwframe_ctx_alloc(device_ref);
        vk_frames = (AVHWFramesContext *)vk_frames_ref->data;
        vk_frames->format = AV_PIX_FMT_VULKAN;
        vk_frames->sw_format = sw;
        vk_frames->width = WIDTH;
        vk_frames->height = HEIGHT;
        s = optimal ? clmem_av_frames_setup_optimal(vk_frames_ref) : clmem_av_frames_setup(vk_frames_ref);
        if (s != CLMEM_OK)
            return fail(optimal ? "clmem_av_frames_setup_optimal" : "clmem_av_frames_setup");
        if (av_hwframe_ctx_init(vk_frames_ref) < 0)
            return fprintf(stderr, "ffmpeg-filter-example: av_hwframe_ctx_init failed\n"), 1;
        s = clmem_av_cl_frames_create(cl_device, vk_frames_ref, &cl_frames_ref);
        if (s == CLMEM_ERR_UNSUPPORTED && sw == AV_PIX_FMT_NV12) {
            printf("no NV12 OpenCL frames here (%s): RGBA instead\n", clmem_error_message());
            av_buffer_unref(&vk_frames_ref);
            sw = AV_PIX_FMT_RGBA;
            continue;
        }
        if (s != CLMEM_OK)
            return fail("clmem_av_cl_frames_create");
        /* A trial map of one frame says whether the map takes this pool's frames. */
        trial = av_frame_alloc();
        trial_cl = av_frame_alloc();
        if (!trial || !trial_cl || av_hwframe_get_buffer(vk_frames_ref, trial, 0) < 0)
            return fprintf(stderr, "ffmpeg-filter-example: av_hwframe_get_buffer failed\n"), 1;
        trial_cl->hw_frames_ctx = av_buffer_ref(cl_frames_ref);
        s = clmem_av_cl_map(bridge, NULL, trial_cl, trial, AV_HWFRAME_MAP_OVERWRITE);
        av_frame_free(&trial_cl); /* the unmap */
        av_frame_free(&trial);
        if (s == CLMEM_OK)
            break;
        if (s != CLMEM_ERR_UNSUPPORTED)
            return fail("clmem_av_cl_map");
        if (optimal) {
            printf("no image way for these frames here: %s\n", clmem_error_message());
            return 2;
        }
        printf("the map takes no linear frames here (%s): optimal-tiling frames instead\n", clmem_error_message());
        av_buffer_unref(&cl_frames_ref);
        av_buffer_unref(&vk_frames_ref);
        optimal = true;
    }
    mapped_graph = graph_new(false, sw, cl_frames_ref, &mapped_src, &mapped_sink);
    upload_graph = graph_new(true, sw, NULL, &upload_src, &upload_sink);
    if (!mapped_graph || !upload_graph)
        return fprintf(stderr, "ffmpeg-filter-example: building the filter graphs failed\n"), 1;

    for (int n = 0; n < FRAMES; n++) {
        AVFrame *pattern = sw_frame(sw), *vk = av_frame_alloc(), *mapped = av_frame_alloc();
        AVFrame *mapped_out = sw_frame(sw), *upload_out = sw_frame(sw);

        for (int p = 0; p < av_pix_fmt_count_planes(sw); p++) {
            int rows = p ? HEIGHT / 2 : HEIGHT, bytes = av_image_get_linesize(sw, WIDTH, p);
            for (int y = 0; y < rows; y++)
                for (int x = 0; x < bytes; x++)
                    pattern->data[p][y * pattern->linesize[p] + x] = (uint8_t)(x * 5 + y * 3 + p * 71 + n * 40);
        }
        if (av_hwframe_get_buffer(vk_frames_ref, vk, 0) < 0 || av_hwframe_transfer_data(vk, pattern, 0) < 0)
            return fprintf(stderr, "ffmpeg-filter-example: upload to the Vulkan frame failed\n"), 1;

        /* The Vulkan frame as an OpenCL frame over the same memory; the
         * graph's unref of it hands the frame back to FFmpeg. */
        mapped->hw_frames_ctx = av_buffer_ref(cl_frames_ref);
        s = clmem_av_cl_map(bridge, NULL, mapped, vk, AV_HWFRAME_MAP_READ);
        if (s != CLMEM_OK)
            return fail("clmem_av_cl_map");
        way = clmem_av_cl_frame_way(mapped);
        if (filter_one(mapped_src, mapped_sink, mapped, mapped_out) < 0 ||
            filter_one(upload_src, upload_sink, pattern, upload_out) < 0)
            return fprintf(stderr, "ffmpeg-filter-example: filtering failed\n"), 1;
        for (int p = 0; p < av_pix_fmt_count_planes(sw); p++) {
            int rows = p ? HEIGHT / 2 : HEIGHT, bytes = av_image_get_linesize(sw, WIDTH, p);
            for (int y = 0; y < rows; y++)
                bad += memcmp(mapped_out->data[p] + y * mapped_out->linesize[p],
                              upload_out->data[p] + y * upload_out->linesize[p], (size_t)bytes) != 0;
        }
        av_frame_free(&mapped);
        av_frame_free(&pattern);
        av_frame_free(&vk);
        av_frame_free(&mapped_out);
        av_frame_free(&upload_out);
    }
    if (bad)
        printf("%ld rows differ between the mapped route and the hwupload route\n", bad);
    else
        printf("%d %s %dx%d Vulkan frames through %s as %s images: every byte as the hwupload route's\n", FRAMES,
               av_get_pix_fmt_name(sw), WIDTH, HEIGHT, FILTERS, clmem_av_cl_way_name(way));

    /* The end: the graphs and the OpenCL frames context (which keeps the
     * pool frames' imports) first, then the bridge's work, then FFmpeg's
     * Vulkan device last (the bridge borrows its VkDevice). */
    avfilter_graph_free(&mapped_graph);
    avfilter_graph_free(&upload_graph);
    av_buffer_unref(&cl_frames_ref);
    av_buffer_unref(&cl_device);
    av_buffer_unref(&vk_frames_ref);
    {
        const AVVulkanDeviceContext *vk = ((AVHWDeviceContext *)device_ref->data)->hwctx;
        if (clmem_bridge_device_finish(vk->act_dev, 10000000000ull) != CLMEM_OK)
            return fail("clmem_bridge_device_finish");
    }
    clmem_bridge_unref(bridge);
    av_buffer_unref(&device_ref);
    return bad != 0;
}
