/* SPDX-License-Identifier: MIT */
/* clmem-bench: FFmpeg's own OpenCL filters on FFmpeg's Vulkan frames,
 * through libclmem-av's map (clmem_av_cl_map).
 *
 * For 1920x1080 and 3840x2160 frames (320x180 and 640x360 with --quick on
 * a CPU OpenCL device), NV12 and RGBA, one filter graph of libavfilter,
 * buffersrc -> avgblur_opencl=sizeX=3 -> buffersink, on OpenCL frames of
 * an FFmpeg OpenCL device over the bridge's context
 * (clmem_av_cl_device_create). Four routes, interleaved rep by rep in
 * the order of a Williams square (in every four reps each goes first once
 * and follows each other once within a rep; after WARM_UP_US of them
 * untimed on the first frame size and format that runs), each timed per
 * frame:
 *   today:  what users write without clmem: av_hwframe_transfer_data of
 *           the Vulkan frame into a software frame, then into a frame of
 *           an OpenCL frames context of FFmpeg's own on the same OpenCL
 *           device (what hwupload does), the filter, until the filter's
 *           output frame is out of the sink;
 *   mapped: clmem_av_cl_map of the Vulkan frame (host order), the filter,
 *           and av_frame_unref of the mapped frame: the hand-back;
 *   floor:  the same filter on an OpenCL frame already resident (uploaded
 *           once, untimed);
 *   raw:    where the map took the vk-image way, its handover made with
 *           the raw calls on the map's own imports (ffmpeg-cl-raw.c), the
 *           filter, the raw hand-back: what the map and the unmap cost at
 *           the least on this driver.
 * The Vulkan frames context is set up with clmem_av_frames_setup(); where
 * the map refuses its frames, with clmem_av_frames_setup_optimal() (the
 * image way of a GPU whose OpenCL makes no image from a buffer). The way
 * the map took is printed; where it refuses both, the mapped route is
 * skipped naming both reasons, as today's and the floor's are where
 * FFmpeg makes no OpenCL frames of the format (PoCL has no CL_RG images,
 * so no NV12 OpenCL frames).
 *
 * Frames in flight on frames the GPU produced: D = 1, 2, 4 frames of the
 * pool carry a stream of F frames: each is written by a vkCmdCopyImage
 * from a resident Vulkan frame, submitted on FFmpeg's transfer queue
 * (its graphics queue where it has none) with FFmpeg's semaphores
 * (waiting at sem_value, signalling sem_value + 1, no
 * av_hwframe_transfer_data), then map, the filter, unref. The copies run
 * D frames ahead: the copy into a pool frame is submitted as soon as its
 * previous frame is unreferenced, so up to D copies wait or run on the
 * GPU while OpenCL filters. Host order (no sync object), device order
 * (a sync object of CLMEM_AV_ORDER_DEVICE, where it works) and, where the
 * raw route runs, the raw route's handover in place of the map (each pool
 * frame with a handover of its own): whether D frames in flight gain what
 * the target asks is then shown for the library and for the raw calls in
 * the same run. Timed until every frame's semaphores are signalled.
 *
 * Checked after the reps: the routes' outputs, downloaded, are
 * byte-identical, and the Vulkan frame still holds its upload. Built only
 * where configure found libavfilter (HAVE_LIBAVFILTER); otherwise one line
 * says so. */
#include "bench.h"

#if HAVE_LIBAVFILTER
#include "ffmpeg-cl-raw.h"
#include "ffvk.h"

#include <clmem-av.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_opencl.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <math.h>

#define FILTER "avgblur_opencl=sizeX=3"
#define NSIZES 2
#define NFORMATS 2
#define IN_FLIGHT 3 /* D = 1, 2, 4 */
/* The frames in flight's handovers: no sync object, CLMEM_AV_ORDER_DEVICE,
 * and device order's handover made with the raw calls (ffmpeg-cl-raw.c). */
enum order { O_HOST, O_DEVICE, O_RAW, ORDERS };
static const char *const order_name[ORDERS] = {"host", "device", "raw"};
#define MAX_D 4
#define WARM_UP_US 250000.0 /* the first frame size's routes, untimed, before its reps */
static const int in_flight_d[IN_FLIGHT] = {1, 2, 4};
static const enum AVPixelFormat formats[NFORMATS] = {AV_PIX_FMT_NV12, AV_PIX_FMT_RGBA};
static const char *const format_name[NFORMATS] = {"nv12", "rgba"};

enum route { R_TODAY, R_MAPPED, R_FLOOR, R_RAW, R_COUNT };
static const char *const route_variant[R_COUNT] = {"baseline", "clmem", "floor", "raw"};
/* Rep i runs route (i + williams[k]) % R_COUNT k-th: the rows of a 4x4
 * Williams square (0, +1, -1, +2). */
static const int williams[R_COUNT] = {0, 1, R_COUNT - 1, 2};

/* One frame size and format. */
struct ffcl_result {
    int width, height, format; /* format: index into formats[] */
    uint64_t bytes;
    struct summary s[R_COUNT];
    struct paired over;               /* mapped minus floor, paired by rep */
    struct paired raw_over;           /* raw minus floor */
    struct paired share;              /* mapped minus raw: the library's share */
    double ratio, ratio_lo, ratio_hi; /* today over mapped, per rep: median and 95 % interval */
    int ratio_n;
    char way[32];                             /* the image way the map took */
    char setup[40];                           /* the frames set-up the map accepted */
    char no_today[NOTE_MAX];                  /* why today and the floor did not run; empty when they did */
    char no_mapped[NOTE_MAX];                 /* why the mapped route did not run */
    char no_raw[NOTE_MAX];                    /* why the raw route did not run */
    struct summary flight[ORDERS][IN_FLIGHT]; /* per frame, by order (enum order) */
    char no_device[NOTE_MAX];                 /* why device order did not run */
    int stream;                               /* F */
};
static struct ffcl_result results[NSIZES * NFORMATS];
static int nresults;
static char not_run[NOTE_MAX];
static const char *copy_queue = "transfer"; /* which of FFmpeg's queues the frames in flight copy on */
#define NTARGETS 6 /* within the floor: NV12 and RGBA at 1080p and 4K; 10x today and D = 4 at 1080p NV12 */
static const struct target *targets[NTARGETS];

struct ffcl_bench {
    AVBufferRef *device; /* FFmpeg's Vulkan device */
    const AVVulkanDeviceContext *vk;
    clmem_bridge *bridge;
    AVBufferRef *cl_device; /* FFmpeg's OpenCL device over the bridge's context */
    struct ffvk fn;
    uint32_t copy_family; /* the frames in flight's copies: FFmpeg's transfer family, else its graphics one */
};

/* One filter graph: buffersrc of OpenCL frames of `frames` -> FILTER -> buffersink. */
struct graph {
    AVFilterGraph *g;
    AVFilterContext *src, *sink;
};

/* Everything one size and format holds. */
struct ffcl_run {
    int width, height;
    enum AVPixelFormat sw;
    AVBufferRef *vk_frames; /* the pool the map accepted, else clmem_av_frames_setup()'s */
    AVBufferRef *cl_mapped; /* clmem_av_cl_frames_create() of vk_frames; NULL: no mapped route */
    AVBufferRef *cl_plain;  /* FFmpeg's own OpenCL frames; NULL: no today or floor */
    struct graph mapped_graph, plain_graph;
    AVFrame *pattern, *sw_frame; /* the bytes; today's software frame */
    AVFrame *vk;                 /* the Vulkan frame every route starts from */
    AVFrame *resident;           /* the floor's OpenCL frame */
    struct ffcl_raw raw;         /* the raw route's handover of vk */
    AVFrame *raw_frame;          /* its OpenCL frame: the map's images, owned by nothing */
    int64_t pts;
};

static void av_check(int r, const char *what)
{
    if (r < 0) {
        char text[128];
        av_strerror(r, text, sizeof text);
        die("%s returned %d (%s)", what, r, text);
    }
}

static AVFrame *frame_new(void)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        die("out of memory");
    return f;
}

static AVFrame *sw_new(enum AVPixelFormat sw, int width, int height)
{
    AVFrame *f = frame_new();
    f->format = sw;
    f->width = width;
    f->height = height;
    av_check(av_frame_get_buffer(f, 0), "av_frame_get_buffer((l))");
    return f;
}

/* The frame's bytes, tightly packed: what size_bytes says. */
static uint64_t frame_bytes(enum AVPixelFormat sw, int width, int height)
{
    return (uint64_t)av_image_get_buffer_size(sw, width, height, 1);
}

static void wait_frame(struct ffcl_bench *fb, const AVFrame *hw, int planes)
{
    AVVkFrame *f = (AVVkFrame *)hw->data[0];
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = (uint32_t)planes,
                                .pSemaphores = f->sem,
                                .pValues = f->sem_value};
    check_vk(fb->fn.wait_semaphores(fb->vk->act_dev, &info, UINT64_MAX), "vkWaitSemaphores((l))");
}

static bool ffcl_open(struct bench *b, struct ffcl_bench *fb)
{
    int r;

    memset(fb, 0, sizeof *fb);
    av_log_set_level(AV_LOG_ERROR);
    if ((r = av_hwdevice_ctx_create(&fb->device, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0)) < 0) {
        snprintf(not_run, sizeof not_run, "FFmpeg cannot make a Vulkan device here (av_hwdevice_ctx_create: %d)", r);
        return false;
    }
    fb->vk = ((AVHWDeviceContext *)fb->device->data)->hwctx;
    /* The copies go to FFmpeg's transfer queue, as FFmpeg's own transfers
     * do: on NVIDIA a copy there runs beside OpenCL's kernels, where one
     * on the graphics queue waits for the GPU's switch between the two
     * APIs (docs/driver-notes.md). Its graphics queue where it has no
     * transfer family. */
    fb->copy_family =
        (uint32_t)(fb->vk->queue_family_tx_index >= 0 ? fb->vk->queue_family_tx_index : fb->vk->queue_family_index);
    if (fb->vk->queue_family_tx_index < 0)
        copy_queue = "graphics";
    if (clmem_av_bridge_create(fb->device, b->context, 0, &fb->bridge) != CLMEM_OK) {
        snprintf(not_run, sizeof not_run, "no bridge on FFmpeg's Vulkan device and the bench's OpenCL device: %s",
                 clmem_error_message());
        av_buffer_unref(&fb->device);
        return false;
    }
    if (clmem_av_cl_device_create(fb->bridge, &fb->cl_device) != CLMEM_OK) {
        snprintf(not_run, sizeof not_run, "no FFmpeg OpenCL device over the bridge's context: %s",
                 clmem_error_message());
        clmem_bridge_unref(fb->bridge);
        av_buffer_unref(&fb->device);
        return false;
    }
    {
        char why[256];
        if (!ffvk_load(&fb->fn, fb->vk, why, sizeof why))
            die("(l): %s", why);
    }
    return true;
}

/* The OpenCL device and the frames contexts are gone by now: the bridge's
 * work ends before FFmpeg's Vulkan device does (the bridge borrows it). */
static void ffcl_close(struct ffcl_bench *fb)
{
    av_buffer_unref(&fb->cl_device);
    check_clmem(clmem_bridge_finish(fb->bridge, FINISH_TIMEOUT_NS), "clmem_bridge_finish((l))");
    clmem_bridge_unref(fb->bridge);
    av_buffer_unref(&fb->device);
}

static bool graph_new(struct graph *gr, AVBufferRef *cl_frames, int width, int height, char *why, size_t len)
{
    AVBufferSrcParameters *par = av_buffersrc_parameters_alloc();
    AVFilterInOut *outs = avfilter_inout_alloc(), *ins = avfilter_inout_alloc();
    int r = AVERROR(ENOMEM);

    memset(gr, 0, sizeof *gr);
    if (!par || !outs || !ins || !(gr->g = avfilter_graph_alloc()))
        die("out of memory");
    if ((gr->src = avfilter_graph_alloc_filter(gr->g, avfilter_get_by_name("buffer"), "in"))) {
        par->format = AV_PIX_FMT_OPENCL;
        par->width = width;
        par->height = height;
        par->time_base = (AVRational){1, 25};
        par->sample_aspect_ratio = (AVRational){1, 1};
        par->hw_frames_ctx = cl_frames;
        r = av_buffersrc_parameters_set(gr->src, par);
    }
    if (r >= 0)
        r = avfilter_init_str(gr->src, NULL);
    if (r >= 0)
        r = avfilter_graph_create_filter(&gr->sink, avfilter_get_by_name("buffersink"), "out", NULL, NULL, gr->g);
    outs->name = av_strdup("in");
    outs->filter_ctx = gr->src;
    ins->name = av_strdup("out");
    ins->filter_ctx = gr->sink;
    if (r >= 0)
        r = avfilter_graph_parse_ptr(gr->g, "[in]" FILTER "[out]", &ins, &outs, NULL);
    if (r >= 0)
        r = avfilter_graph_config(gr->g, NULL);
    av_free(par);
    avfilter_inout_free(&ins);
    avfilter_inout_free(&outs);
    if (r < 0) {
        char text[128];
        av_strerror(r, text, sizeof text);
        snprintf(why, len, "the filter graph (" FILTER ") fails: %s", text);
        avfilter_graph_free(&gr->g);
        return false;
    }
    return true;
}

/* One frame through a graph: `in` is added (kept: the caller still holds
 * it), the filter's output taken out of the sink into `out`. */
static void filter_one(struct graph *gr, AVFrame *in, AVFrame *out, const char *what)
{
    av_check(av_buffersrc_add_frame_flags(gr->src, in, AV_BUFFERSRC_FLAG_KEEP_REF), what);
    av_check(av_buffersink_get_frame(gr->sink, out), what);
}

/* A Vulkan frames context of `sw`, set up by `set_up`, initialised. */
static AVBufferRef *vk_frames_new(struct ffcl_bench *fb, enum AVPixelFormat sw, int width, int height,
                                  clmem_status (*set_up)(AVBufferRef *), char *why, size_t len)
{
    AVBufferRef *ref = av_hwframe_ctx_alloc(fb->device);
    AVHWFramesContext *fc;
    int r;

    if (!ref)
        die("out of memory");
    fc = (AVHWFramesContext *)ref->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = width;
    fc->height = height;
    if (set_up(ref) != CLMEM_OK) {
        snprintf(why, len, "%s", clmem_error_message());
        av_buffer_unref(&ref);
        return NULL;
    }
    if ((r = av_hwframe_ctx_init(ref)) < 0) {
        snprintf(why, len, "av_hwframe_ctx_init of the Vulkan frames returned %d", r);
        av_buffer_unref(&ref);
        return NULL;
    }
    return ref;
}

/* A frame of vk_frames holding the pattern (FFmpeg's upload, waited for). */
static AVFrame *vk_frame_new(struct ffcl_bench *fb, AVBufferRef *vk_frames, const AVFrame *pattern)
{
    AVFrame *f = frame_new();
    av_check(av_hwframe_get_buffer(vk_frames, f, 0), "av_hwframe_get_buffer((l))");
    av_check(av_hwframe_transfer_data(f, pattern, 0), "av_hwframe_transfer_data((l) upload)");
    wait_frame(fb, f, av_pix_fmt_count_planes(pattern->format));
    return f;
}

/* A pool the map did not take: today's route still starts from a Vulkan
 * frame, the first pool's; a later pool's frames go. */
static void keep_first_pool(struct ffcl_run *r, AVBufferRef *vk_frames, AVFrame *vk)
{
    if (!r->vk_frames) {
        r->vk_frames = vk_frames;
        r->vk = vk;
    } else {
        av_frame_free(&vk);
        av_buffer_unref(&vk_frames);
    }
}

/* The mapped route's frames: clmem_av_frames_setup()'s pool, or where the
 * map refuses its frames, clmem_av_frames_setup_optimal()'s (where the
 * OpenCL device lacks the format's images, neither is tried further). On success
 * r->vk_frames, r->cl_mapped and r->vk are set and res names the way; else
 * res->no_mapped says why, and r->vk_frames and r->vk are a plain pool's
 * (or NULL when no pool could be made) for today's route. */
static void mapped_setup(struct ffcl_bench *fb, struct ffcl_run *r, struct ffcl_result *res)
{
    static const struct {
        clmem_status (*setup)(AVBufferRef *);
        const char *name;
    } pools[2] = {{clmem_av_frames_setup, "clmem_av_frames_setup"},
                  {clmem_av_frames_setup_optimal, "clmem_av_frames_setup_optimal"}};
    char why[2][NOTE_MAX];

    for (int p = 0; p < 2; p++) {
        AVBufferRef *vk_frames, *cl_frames = NULL;
        AVFrame *vk, *mapped;
        clmem_status s;

        if (!(vk_frames = vk_frames_new(fb, r->sw, r->width, r->height, pools[p].setup, why[p], NOTE_MAX)))
            continue;
        vk = vk_frame_new(fb, vk_frames, r->pattern);
        if (clmem_av_cl_frames_create(fb->cl_device, vk_frames, &cl_frames) != CLMEM_OK) {
            /* The OpenCL device lacks the format's images: no pool helps. */
            snprintf(res->no_mapped, sizeof res->no_mapped, "%s", clmem_error_message());
            snprintf(res->way, sizeof res->way, "none");
            keep_first_pool(r, vk_frames, vk);
            return;
        }
        mapped = frame_new();
        mapped->hw_frames_ctx = av_buffer_ref(cl_frames);
        s = clmem_av_cl_map(fb->bridge, NULL, mapped, vk, AV_HWFRAME_MAP_READ);
        if (s == CLMEM_OK) {
            snprintf(res->way, sizeof res->way, "%s", clmem_av_cl_way_name(clmem_av_cl_frame_way(mapped)));
            snprintf(res->setup, sizeof res->setup, "%s", pools[p].name);
            av_frame_free(&mapped); /* the unmap */
            av_buffer_unref(&r->vk_frames);
            av_frame_free(&r->vk);
            r->vk_frames = vk_frames;
            r->cl_mapped = cl_frames;
            r->vk = vk;
            return;
        }
        if (s != CLMEM_ERR_UNSUPPORTED)
            die("clmem_av_cl_map((l)) returned %s: %s", clmem_status_name(s), clmem_error_message());
        snprintf(why[p], NOTE_MAX, "%s", clmem_error_message());
        av_frame_free(&mapped);
        av_buffer_unref(&cl_frames);
        keep_first_pool(r, vk_frames, vk);
    }
    snprintf(res->no_mapped, sizeof res->no_mapped, "the map refuses both pools: %.1100s; %.1100s", why[0], why[1]);
    snprintf(res->way, sizeof res->way, "none");
}

/* Today's route and the floor: FFmpeg's own OpenCL frames on the same
 * device, and the resident frame. */
static void plain_setup(struct ffcl_bench *fb, struct ffcl_run *r, struct ffcl_result *res)
{
    AVHWFramesContext *fc;
    int e;

    if (!(r->cl_plain = av_hwframe_ctx_alloc(fb->cl_device)))
        die("out of memory");
    fc = (AVHWFramesContext *)r->cl_plain->data;
    fc->format = AV_PIX_FMT_OPENCL;
    fc->sw_format = r->sw;
    fc->width = r->width;
    fc->height = r->height;
    if ((e = av_hwframe_ctx_init(r->cl_plain)) < 0) {
        char text[128];
        av_strerror(e, text, sizeof text);
        snprintf(res->no_today, sizeof res->no_today,
                 "FFmpeg makes no %s OpenCL frames on this OpenCL device (av_hwframe_ctx_init: %s)",
                 av_get_pix_fmt_name(r->sw), text);
        av_buffer_unref(&r->cl_plain);
        return;
    }
    if (!graph_new(&r->plain_graph, r->cl_plain, r->width, r->height, res->no_today, sizeof res->no_today)) {
        av_buffer_unref(&r->cl_plain);
        return;
    }
    /* FFmpeg makes its OpenCL images per frame: a format whose image
     * format the device lacks (NV12 on PoCL: CL_RG) fails here. */
    r->resident = frame_new();
    if ((e = av_hwframe_get_buffer(r->cl_plain, r->resident, 0)) < 0) {
        char text[128];
        av_strerror(e, text, sizeof text);
        snprintf(res->no_today, sizeof res->no_today,
                 "FFmpeg makes no %s OpenCL frames on this OpenCL device (av_hwframe_get_buffer: %s; FFmpeg's "
                 "log line above names the plane whose image failed)",
                 av_get_pix_fmt_name(r->sw), text);
        av_frame_free(&r->resident);
        avfilter_graph_free(&r->plain_graph.g);
        av_buffer_unref(&r->cl_plain);
        return;
    }
    av_check(av_hwframe_transfer_data(r->resident, r->pattern, 0), "av_hwframe_transfer_data((l) resident)");
}

static void run_setup(struct ffcl_bench *fb, struct ffcl_run *r, struct ffcl_result *res, int width, int height,
                      int format)
{
    int planes;

    memset(r, 0, sizeof *r);
    r->width = width;
    r->height = height;
    r->sw = formats[format];
    res->width = width;
    res->height = height;
    res->format = format;
    res->bytes = frame_bytes(r->sw, width, height);
    r->pattern = sw_new(r->sw, width, height);
    r->sw_frame = sw_new(r->sw, width, height);
    planes = av_pix_fmt_count_planes(r->sw);
    for (int p = 0; p < planes; p++) {
        int rows = p ? height / 2 : height, bytes = av_image_get_linesize(r->sw, width, p);
        for (int y = 0; y < rows; y++)
            for (int x = 0; x < bytes; x++)
                r->pattern->data[p][(size_t)y * r->pattern->linesize[p] + x] = (uint8_t)(x * 5 + y * 3 + p * 71);
    }
    mapped_setup(fb, r, res);
    if (r->cl_mapped &&
        !graph_new(&r->mapped_graph, r->cl_mapped, width, height, res->no_mapped, sizeof res->no_mapped))
        av_buffer_unref(&r->cl_mapped);
    if (!r->vk)
        snprintf(res->no_today, sizeof res->no_today,
                 "no Vulkan frames to start from: neither pool could be set up (the mapped route says why)");
    else
        plain_setup(fb, r, res);
}

/* The raw frame's buffer frees nothing: the images are the raw
 * handover's, released by ffcl_raw_close(). */
static void raw_frame_free(void *opaque, uint8_t *data)
{
    (void)opaque;
    (void)data;
}

/* The raw handover of Vulkan frame vk (raw), on the images of the map's
 * own imports of it, and an OpenCL frame of those images for the filter
 * (*raw_frame). False, with why, where the raw calls cannot be made. */
static bool raw_open_frame(struct bench *b, struct ffcl_bench *fb, struct ffcl_run *r, const AVFrame *vk,
                           struct ffcl_raw *raw, AVFrame **raw_frame, char *why, size_t len)
{
    const AVOpenCLDeviceContext *oc = ((AVHWDeviceContext *)fb->cl_device->data)->hwctx;
    AVFrame *mapped = frame_new(), *f;
    bool ok;

    mapped->hw_frames_ctx = av_buffer_ref(r->cl_mapped);
    check_clmem(clmem_av_cl_map(fb->bridge, NULL, mapped, vk, AV_HWFRAME_MAP_READ), "clmem_av_cl_map((l) raw)");
    ok = ffcl_raw_open(raw, b, fb->vk, &fb->fn, oc->command_queue, mapped, why, len);
    av_frame_free(&mapped); /* the unmap: the images are released again, the library's kept imports */
    if (!ok)
        return false;
    f = *raw_frame = frame_new();
    f->format = AV_PIX_FMT_OPENCL;
    f->width = r->width;
    f->height = r->height;
    for (cl_uint p = 0; p < raw->planes; p++)
        f->data[p] = (uint8_t *)raw->images[p];
    f->hw_frames_ctx = av_buffer_ref(r->cl_mapped);
    f->buf[0] = av_buffer_create((uint8_t *)raw, sizeof *raw, raw_frame_free, NULL, 0);
    if (!f->hw_frames_ctx || !f->buf[0])
        die("out of memory");
    return true;
}

/* The raw route: where the map took the vk-image way, its handover made
 * with the raw calls on the images of the map's own imports of r->vk. */
static void raw_setup(struct bench *b, struct ffcl_bench *fb, struct ffcl_run *r, struct ffcl_result *res)
{
    if (*res->no_mapped) {
        snprintf(res->no_raw, sizeof res->no_raw, "the mapped route did not run");
        return;
    }
    if (strcmp(res->way, clmem_av_cl_way_name(CLMEM_AV_CL_WAY_VK_IMAGE)) != 0) {
        char way[sizeof res->way];
        snprintf(way, sizeof way, "%s", res->way);
        snprintf(res->no_raw, sizeof res->no_raw, "it mirrors the %s way's handover, and the map took the %s way",
                 clmem_av_cl_way_name(CLMEM_AV_CL_WAY_VK_IMAGE), way);
        return;
    }
    raw_open_frame(b, fb, r, r->vk, &r->raw, &r->raw_frame, res->no_raw, sizeof res->no_raw);
}

static void run_teardown(struct ffcl_run *r)
{
    av_frame_free(&r->raw_frame);
    ffcl_raw_close(&r->raw);
    avfilter_graph_free(&r->mapped_graph.g);
    avfilter_graph_free(&r->plain_graph.g);
    av_frame_free(&r->resident);
    av_frame_free(&r->vk);
    av_frame_free(&r->pattern);
    av_frame_free(&r->sw_frame);
    av_buffer_unref(&r->cl_plain);
    av_buffer_unref(&r->cl_mapped); /* its kept imports go with it */
    av_buffer_unref(&r->vk_frames);
}

/* The routes. `out` gets the filter's output frame (unreferenced after the
 * clock stops, by the caller). */
static double rep_today(struct ffcl_run *r, AVFrame *out)
{
    AVFrame *cl = frame_new();
    double t0 = now_us(), t;

    av_check(av_hwframe_transfer_data(r->sw_frame, r->vk, 0), "av_hwframe_transfer_data((l) download)");
    av_check(av_hwframe_get_buffer(r->cl_plain, cl, 0), "av_hwframe_get_buffer((l) upload)");
    av_check(av_hwframe_transfer_data(cl, r->sw_frame, 0), "av_hwframe_transfer_data((l) upload)");
    cl->pts = r->pts++;
    filter_one(&r->plain_graph, cl, out, "(l) today's filter");
    t = now_us() - t0;
    av_frame_free(&cl);
    return t;
}

static double rep_mapped(struct ffcl_bench *fb, struct ffcl_run *r, clmem_av_sync *sync, const AVFrame *vk,
                         AVFrame *out)
{
    AVFrame *mapped = frame_new();
    double t0 = now_us(), t;

    mapped->hw_frames_ctx = av_buffer_ref(r->cl_mapped);
    check_clmem(clmem_av_cl_map(fb->bridge, sync, mapped, vk, AV_HWFRAME_MAP_READ), "clmem_av_cl_map((l))");
    mapped->pts = r->pts++;
    filter_one(&r->mapped_graph, mapped, out, "(l) the mapped route's filter");
    av_frame_unref(mapped); /* the hand-back */
    t = now_us() - t0;
    av_frame_free(&mapped);
    return t;
}

static double rep_raw(struct ffcl_run *r, AVFrame *out)
{
    AVVkFrame *f = (AVVkFrame *)r->vk->data[0];
    double t0 = now_us();

    ffcl_raw_acquire(&r->raw, f);
    r->raw_frame->pts = r->pts++;
    filter_one(&r->mapped_graph, r->raw_frame, out, "(l) the raw route's filter");
    ffcl_raw_release(&r->raw, f);
    return now_us() - t0;
}

static double rep_floor(struct ffcl_run *r, AVFrame *out)
{
    double t0 = now_us();

    r->resident->pts = r->pts++;
    filter_one(&r->plain_graph, r->resident, out, "(l) the floor's filter");
    return now_us() - t0;
}

/* One rep of route w, timed; -1 where the route does not run here. */
static double rep_route(struct ffcl_bench *fb, struct ffcl_run *r, enum route w, const struct ffcl_result *res,
                        AVFrame *out)
{
    if (w == R_MAPPED)
        return *res->no_mapped ? -1 : rep_mapped(fb, r, NULL, r->vk, out);
    if (w == R_RAW)
        return r->raw_frame ? rep_raw(r, out) : -1;
    if (*res->no_today)
        return -1;
    return w == R_TODAY ? rep_today(r, out) : rep_floor(r, out);
}

/* One rep of every route that runs here, untimed. */
static void reps_untimed(struct ffcl_bench *fb, struct ffcl_run *r, const struct ffcl_result *res, AVFrame *out)
{
    for (int w = 0; w < R_COUNT; w++)
        if (rep_route(fb, r, (enum route)w, res, out) >= 0)
            av_frame_unref(out);
}

/* An OpenCL frame downloaded, against `want`: the rows that differ. */
static long rows_differ(struct ffcl_run *r, AVFrame *cl, const AVFrame *want)
{
    AVFrame *got = sw_new(r->sw, r->width, r->height);
    long bad = 0;

    av_check(av_hwframe_transfer_data(got, cl, 0), "av_hwframe_transfer_data((l) check)");
    for (int p = 0; p < av_pix_fmt_count_planes(r->sw); p++) {
        int rows = p ? r->height / 2 : r->height, bytes = av_image_get_linesize(r->sw, r->width, p);
        for (int y = 0; y < rows; y++)
            bad += memcmp(got->data[p] + (size_t)y * got->linesize[p], want->data[p] + (size_t)y * want->linesize[p],
                          (size_t)bytes) != 0;
    }
    av_frame_free(&got);
    return bad;
}

/* The routes' outputs are the same bytes, and the Vulkan frame holds its
 * upload. */
static void run_check(struct bench *b, struct ffcl_bench *fb, struct ffcl_run *r, const struct ffcl_result *res)
{
    AVFrame *out[R_COUNT] = {NULL}, *want = NULL, *vk_back;
    const char *fmt = av_get_pix_fmt_name(r->sw);
    long bad;

    for (int w = 0; w < R_COUNT; w++)
        out[w] = frame_new();
    if (!*res->no_today) {
        rep_today(r, out[R_TODAY]);
        rep_floor(r, out[R_FLOOR]);
        want = sw_new(r->sw, r->width, r->height);
        av_check(av_hwframe_transfer_data(want, out[R_TODAY], 0), "av_hwframe_transfer_data((l) check)");
        if ((bad = rows_differ(r, out[R_FLOOR], want)))
            fail(b, "(l) %dx%d %s: the floor's output differs from today's in %ld rows", r->width, r->height, fmt, bad);
    }
    if (!*res->no_mapped) {
        rep_mapped(fb, r, NULL, r->vk, out[R_MAPPED]);
        if (want && (bad = rows_differ(r, out[R_MAPPED], want)))
            fail(b, "(l) %dx%d %s: the mapped route's output differs from today's in %ld rows", r->width, r->height,
                 fmt, bad);
    }
    if (r->raw_frame) {
        rep_raw(r, out[R_RAW]);
        if (want && (bad = rows_differ(r, out[R_RAW], want)))
            fail(b, "(l) %dx%d %s: the raw route's output differs from today's in %ld rows", r->width, r->height, fmt,
                 bad);
    }
    if (r->vk) {
        vk_back = sw_new(r->sw, r->width, r->height);
        av_check(av_hwframe_transfer_data(vk_back, r->vk, 0), "av_hwframe_transfer_data((l) check)");
        for (int p = 0; p < av_pix_fmt_count_planes(r->sw); p++) {
            int rows = p ? r->height / 2 : r->height, bytes = av_image_get_linesize(r->sw, r->width, p), wrong = 0;
            for (int y = 0; y < rows; y++)
                wrong += memcmp(vk_back->data[p] + (size_t)y * vk_back->linesize[p],
                                r->pattern->data[p] + (size_t)y * r->pattern->linesize[p], (size_t)bytes) != 0;
            if (wrong)
                fail(b, "(l) %dx%d %s: the Vulkan frame's plane %d no longer holds its upload (%d rows)", r->width,
                     r->height, fmt, p, wrong);
        }
        av_frame_free(&vk_back);
    }
    av_frame_free(&want);
    for (int w = 0; w < R_COUNT; w++)
        av_frame_free(&out[w]);
}

/* today over mapped, rep by rep: the median ratio and its distribution-free
 * 95 % interval (the order statistics summarize_paired takes). */
static void ratio_interval(const double *today, const double *mapped, int n, struct ffcl_result *res)
{
    double *q = malloc(sizeof(double) * (size_t)n);
    struct summary s;
    int lo, hi;

    if (!q)
        die("out of memory");
    for (int i = 0; i < n; i++)
        q[i] = today[i] / mapped[i];
    s = summarize(q, n, 1);
    lo = (int)floor(n / 2.0 - 0.98 * sqrt((double)n));
    hi = (int)ceil(n / 2.0 + 0.98 * sqrt((double)n));
    res->ratio = s.median;
    res->ratio_lo = q[lo < 0 ? 0 : lo];
    res->ratio_hi = q[hi > n - 1 ? n - 1 : hi];
    res->ratio_n = n;
    free(q);
}

/* ------------------------------------------------------ frames in flight */

/* The copies of the stream: a command pool of the bench's on FFmpeg's
 * device, one command buffer per pool frame (resident -> frame k, every
 * plane), recorded once; each frame's previous bytes are discarded
 * (oldLayout UNDEFINED), so the same commands fit every use. */
struct copier {
    VkCommandPool pool;
    VkCommandBuffer cb[MAX_D];
    VkQueue queue;
    int planes;
};

static void plane_extent(enum AVPixelFormat sw, int width, int height, int p, uint32_t *w, uint32_t *h)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(sw);
    *w = (uint32_t)(p ? AV_CEIL_RSHIFT(width, d->log2_chroma_w) : width);
    *h = (uint32_t)(p ? AV_CEIL_RSHIFT(height, d->log2_chroma_h) : height);
}

static void image_barrier(struct ffcl_bench *fb, VkCommandBuffer cb, VkImage image, VkImageLayout from,
                          VkImageLayout to, VkAccessFlags src_access, VkAccessFlags dst_access)
{
    VkImageMemoryBarrier m = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                              .srcAccessMask = src_access,
                              .dstAccessMask = dst_access,
                              .oldLayout = from,
                              .newLayout = to,
                              .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .image = image,
                              .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    fb->fn.barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL, 1,
                   &m);
}

/* Submit cb on FFmpeg's queue as FFmpeg's rules ask: wait for each frame's
 * timelines at sem_value, signal sem_value + 1, and advance sem_value. */
static void submit_on_frames(struct ffcl_bench *fb, struct copier *c, VkCommandBuffer cb, AVVkFrame **frames,
                             int nframes)
{
    VkSemaphore sems[2 * AV_NUM_DATA_POINTERS];
    uint64_t wait_values[2 * AV_NUM_DATA_POINTERS], signal_values[2 * AV_NUM_DATA_POINTERS];
    VkPipelineStageFlags stages[2 * AV_NUM_DATA_POINTERS];
    uint32_t n = 0;

    for (int f = 0; f < nframes; f++)
        for (int p = 0; p < c->planes; p++) {
            sems[n] = frames[f]->sem[p];
            wait_values[n] = frames[f]->sem_value[p];
            signal_values[n] = frames[f]->sem_value[p] + 1;
            stages[n] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            n++;
        }
    {
        VkTimelineSemaphoreSubmitInfo values = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                                .waitSemaphoreValueCount = n,
                                                .pWaitSemaphoreValues = wait_values,
                                                .signalSemaphoreValueCount = n,
                                                .pSignalSemaphoreValues = signal_values};
        VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                             .pNext = &values,
                             .waitSemaphoreCount = n,
                             .pWaitSemaphores = sems,
                             .pWaitDstStageMask = stages,
                             .commandBufferCount = 1,
                             .pCommandBuffers = &cb,
                             .signalSemaphoreCount = n,
                             .pSignalSemaphores = sems};
        check_vk(fb->fn.submit(c->queue, 1, &info, VK_NULL_HANDLE), "vkQueueSubmit((l) copy)");
    }
    for (int f = 0; f < nframes; f++)
        for (int p = 0; p < c->planes; p++)
            frames[f]->sem_value[p]++;
}

static void copier_setup(struct ffcl_bench *fb, struct copier *c, struct ffcl_run *r, AVFrame *const *frames)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .queueFamilyIndex = fb->copy_family};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = MAX_D + 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    VkCommandBuffer cbs[MAX_D + 1];
    AVVkFrame *src = (AVVkFrame *)r->vk->data[0];

    memset(c, 0, sizeof *c);
    c->planes = av_pix_fmt_count_planes(r->sw);
    fb->fn.get_queue(fb->vk->act_dev, fb->copy_family, 0, &c->queue);
    check_vk(fb->fn.create_pool(fb->vk->act_dev, &pci, NULL, &c->pool), "vkCreateCommandPool((l))");
    ai.commandPool = c->pool;
    check_vk(fb->fn.allocate_cbs(fb->vk->act_dev, &ai, cbs), "vkAllocateCommandBuffers((l))");
    /* The resident frame into TRANSFER_SRC_OPTIMAL, once. */
    check_vk(fb->fn.begin_cb(cbs[MAX_D], &bi), "vkBeginCommandBuffer((l))");
    for (int p = 0; p < c->planes; p++)
        image_barrier(fb, cbs[MAX_D], src->img[p], src->layout[p], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, src->access[p],
                      VK_ACCESS_TRANSFER_READ_BIT);
    check_vk(fb->fn.end_cb(cbs[MAX_D]), "vkEndCommandBuffer((l))");
    submit_on_frames(fb, c, cbs[MAX_D], &src, 1);
    for (int p = 0; p < c->planes; p++) {
        src->layout[p] = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        src->access[p] = VK_ACCESS_TRANSFER_READ_BIT;
    }
    for (int k = 0; k < MAX_D; k++) {
        AVVkFrame *dst = (AVVkFrame *)frames[k]->data[0];
        c->cb[k] = cbs[k];
        check_vk(fb->fn.begin_cb(cbs[k], &bi), "vkBeginCommandBuffer((l))");
        for (int p = 0; p < c->planes; p++) {
            VkImageCopy region = {.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                                  .dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                                  .extent.depth = 1};
            plane_extent(r->sw, r->width, r->height, p, &region.extent.width, &region.extent.height);
            image_barrier(fb, cbs[k], dst->img[p], VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                          VK_ACCESS_TRANSFER_WRITE_BIT);
            fb->fn.copy_image(cbs[k], src->img[p], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, dst->img[p],
                              VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        }
        check_vk(fb->fn.end_cb(cbs[k]), "vkEndCommandBuffer((l))");
    }
}

/* Copy the resident frame into pool frame k (command buffer k), after
 * whatever last used it (its semaphores at sem_value). */
static void copy_into(struct ffcl_bench *fb, struct ffcl_run *r, struct copier *c, AVFrame *f, int k)
{
    AVVkFrame *pair[2] = {(AVVkFrame *)r->vk->data[0], (AVVkFrame *)f->data[0]};

    submit_on_frames(fb, c, c->cb[k], pair, 2);
    for (int p = 0; p < c->planes; p++) {
        pair[1]->layout[p] = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        pair[1]->access[p] = VK_ACCESS_TRANSFER_WRITE_BIT;
    }
}

/* The raw handover of each pool frame of the stream, and its OpenCL frame
 * for the filter (raw_open_frame()). */
struct raw_pool {
    struct ffcl_raw raw[MAX_D];
    AVFrame *frame[MAX_D];
};

/* Pool frame vk through the raw handover (rp's k), the filter, and back:
 * the raw route's calls, on a frame of the stream. */
static void raw_frame_through(struct ffcl_run *r, struct raw_pool *rp, int k, const AVFrame *vk, AVFrame *out)
{
    AVVkFrame *f = (AVVkFrame *)vk->data[0];

    ffcl_raw_acquire(&rp->raw[k], f);
    rp->frame[k]->pts = r->pts++;
    filter_one(&r->mapped_graph, rp->frame[k], out, "(l) the raw stream's filter");
    ffcl_raw_release(&rp->raw[k], f);
}

/* A stream of n frames through d pool frames: mapped in the sync object's
 * order (NULL: host order), or, with rp, handed over with the raw calls;
 * microseconds a frame. The first d copies are submitted at once; each
 * later one as soon as the map of the frame before it in the same pool
 * frame is unreferenced, so it waits on the GPU for that hand-back, not on
 * the host. */
static double rep_stream(struct ffcl_bench *fb, struct ffcl_run *r, struct copier *c, clmem_av_sync *sync,
                         struct raw_pool *rp, AVFrame *const *frames, int d, int n, AVFrame *out)
{
    double t0 = now_us();

    for (int k = 0; k < d && k < n; k++)
        copy_into(fb, r, c, frames[k], k);
    for (int i = 0; i < n; i++) {
        if (rp)
            raw_frame_through(r, rp, i % d, frames[i % d], out);
        else
            rep_mapped(fb, r, sync, frames[i % d], out);
        av_frame_unref(out);
        if (i + d < n)
            copy_into(fb, r, c, frames[i % d], i % d);
    }
    for (int k = 0; k < d && k < n; k++)
        wait_frame(fb, frames[k], c->planes);
    return (now_us() - t0) / n;
}

/* The watchdog for one part of the frames in flight, by its name: the
 * order and D, or the first maps (d = 0); a hang names the part. */
static void watch_in_flight(const char *label, int order, int d)
{
    char what[128];

    if (d)
        snprintf(what, sizeof what, "%s in flight, %s order, D = %d", label, order_name[order], d);
    else
        snprintf(what, sizeof what, "%s in flight, %s order, first maps", label, order_name[order]);
    watchdog("(l) FFmpeg's OpenCL filters", what);
}

/* Each pool frame's raw handover, where the raw route runs (r->raw_frame). */
static bool raw_pool_open(struct bench *b, struct ffcl_bench *fb, struct ffcl_run *r, AVFrame *const *frames,
                          struct raw_pool *rp)
{
    char why[NOTE_MAX];

    memset(rp, 0, sizeof *rp);
    if (!r->raw_frame)
        return false;
    for (int k = 0; k < MAX_D; k++)
        if (!raw_open_frame(b, fb, r, frames[k], &rp->raw[k], &rp->frame[k], why, sizeof why))
            die("(l) the raw handover of a pool frame: %s", why); /* it opened for r->vk */
    return true;
}

static void raw_pool_close(struct raw_pool *rp)
{
    for (int k = 0; k < MAX_D; k++) {
        av_frame_free(&rp->frame[k]);
        ffcl_raw_close(&rp->raw[k]);
    }
}

static void run_in_flight(struct bench *b, struct ffcl_bench *fb, struct ffcl_run *r, int reps, const char *label,
                          struct ffcl_result *res)
{
    const int n = b->cpu_device ? 8 : 32;
    clmem_av_sync *sync[ORDERS] = {NULL};
    bool runs[ORDERS] = {true, false, false};
    AVFrame *frames[MAX_D], *out = frame_new();
    double *samples = malloc(sizeof(double) * (size_t)reps * ORDERS * IN_FLIGHT);
    struct raw_pool rp;
    struct copier c;

    if (!samples)
        die("out of memory");
    res->stream = n;
    if (clmem_av_sync_create(fb->bridge, fb->device, CLMEM_AV_ORDER_DEVICE, MAX_D, &sync[O_DEVICE]) != CLMEM_OK)
        snprintf(res->no_device, sizeof res->no_device, "%s", clmem_error_message());
    runs[O_DEVICE] = sync[O_DEVICE] != NULL;
    for (int k = 0; k < MAX_D; k++) {
        frames[k] = frame_new();
        av_check(av_hwframe_get_buffer(r->vk_frames, frames[k], 0), "av_hwframe_get_buffer((l) stream)");
    }
    copier_setup(fb, &c, r, frames);
    runs[O_RAW] = raw_pool_open(b, fb, r, frames, &rp);
    for (int o = 0; o < ORDERS; o++) /* untimed: each frame's first map imports it */
        if (runs[o]) {
            watch_in_flight(label, o, 0);
            rep_stream(fb, r, &c, sync[o], o == O_RAW ? &rp : NULL, frames, MAX_D, MAX_D, out);
        }
    for (int i = 0; i < reps; i++)
        for (int o = 0; o < ORDERS; o++)
            for (int j = 0; j < IN_FLIGHT && runs[o]; j++) {
                /* Each order and D has the watchdog's whole time. */
                if (i == 0)
                    watch_in_flight(label, o, in_flight_d[j]);
                samples[(o * IN_FLIGHT + j) * reps + i] =
                    rep_stream(fb, r, &c, sync[o], o == O_RAW ? &rp : NULL, frames, in_flight_d[j], n, out);
                if (i == 0) {
                    printf("%s D=%d ", order_name[o], in_flight_d[j]);
                    fflush(stdout);
                }
            }
    for (int o = 0; o < ORDERS; o++)
        for (int j = 0; j < IN_FLIGHT && runs[o]; j++)
            res->flight[o][j] = summarize(samples + (o * IN_FLIGHT + j) * reps, reps, n);
    if (sync[O_DEVICE])
        check_clmem(clmem_av_sync_finish(sync[O_DEVICE], FINISH_TIMEOUT_NS), "clmem_av_sync_finish((l))");
    /* Each pool frame holds the resident frame's bytes, which are the
     * pattern: FFmpeg's download of the last one shows the copies landed. */
    {
        AVFrame *back = sw_new(r->sw, r->width, r->height);
        long bad = 0;
        av_check(av_hwframe_transfer_data(back, frames[0], 0), "av_hwframe_transfer_data((l) stream check)");
        for (int p = 0; p < c.planes; p++) {
            int rows = p ? r->height / 2 : r->height, bytes = av_image_get_linesize(r->sw, r->width, p);
            for (int y = 0; y < rows; y++)
                bad += memcmp(back->data[p] + (size_t)y * back->linesize[p],
                              r->pattern->data[p] + (size_t)y * r->pattern->linesize[p], (size_t)bytes) != 0;
        }
        if (bad)
            fail(b, "(l) %dx%d %s frames in flight: a pool frame differs from the frame copied into it in %ld rows",
                 r->width, r->height, av_get_pix_fmt_name(r->sw), bad);
        av_frame_free(&back);
    }
    /* The copies are done once the resident frame's semaphores are at the
     * value the last one signalled: the command pool can go. */
    wait_frame(fb, r->vk, c.planes);
    fb->fn.destroy_pool(fb->vk->act_dev, c.pool, NULL);
    if (runs[O_RAW])
        raw_pool_close(&rp);
    for (int k = 0; k < MAX_D; k++)
        av_frame_free(&frames[k]);
    clmem_av_sync_unref(sync[O_DEVICE]);
    av_frame_free(&out);
    free(samples);
}

/* ------------------------------------------------------------- results */

static const struct ffcl_result *result_at_point(int width, int height, int format)
{
    for (int i = 0; i < nresults; i++)
        if (results[i].width == width && results[i].height == height && results[i].format == format)
            return &results[i];
    return NULL;
}

/* The rows (size_bytes: the frame's bytes, planes packed):
 * ffcl_<fmt>_<w>x<h> for today (baseline), mapped (clmem) and the floor
 * (floor), one frame a rep (batch 1, ring 0); _overhead, mapped minus
 * floor paired by rep; _in_flight_host and _in_flight_device per frame
 * (frames_per_rep F, ring D). The targets (relative, judged on any GPU):
 * mapped within 10 % or 40 us of the floor, whichever is larger, for each
 * format at 1920x1080 and 3840x2160; mapped at least 10x faster than
 * today, and device order at D = 4 at least 1.5x D = 1's frames/s, at
 * 1920x1080 NV12. */
static void record_ffcl(struct bench *b)
{
    static char text[NTARGETS][112], measure[NTARGETS][64], why[NTARGETS][320];
    int nt = 0;

    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *r = &results[i];
        char m[80];
        snprintf(m, sizeof m, "ffcl_%s_%dx%d", format_name[r->format], r->width, r->height);
        for (int w = 0; w < R_COUNT; w++)
            record_row("l", r->bytes, m, route_variant[w], &r->s[w], 1, 0);
        snprintf(m, sizeof m, "ffcl_%s_%dx%d_overhead", format_name[r->format], r->width, r->height);
        record_paired_row("l", r->bytes, m, &r->over, 1);
        snprintf(m, sizeof m, "ffcl_%s_%dx%d_raw_overhead", format_name[r->format], r->width, r->height);
        record_paired_row("l", r->bytes, m, &r->raw_over, 1);
        snprintf(m, sizeof m, "ffcl_%s_%dx%d_share", format_name[r->format], r->width, r->height);
        record_paired_row("l", r->bytes, m, &r->share, 1);
        for (int o = 0; o < ORDERS; o++)
            for (int j = 0; j < IN_FLIGHT; j++) {
                /* The raw handover is device order's, made with the raw calls: its variant "raw". */
                snprintf(m, sizeof m, "ffcl_%s_%dx%d_in_flight_%s", format_name[r->format], r->width, r->height,
                         order_name[o == O_HOST ? O_HOST : O_DEVICE]);
                record_row("l", r->bytes, m, o == O_RAW ? "raw" : "clmem", &r->flight[o][j], 1, in_flight_d[j]);
            }
    }
    for (int t = 0; t < NTARGETS; t++) {
        /* t 0..3: within the floor, NV12 then RGBA, 1080p then 4K; 4: 10x today; 5: D = 4 */
        int format = t < 4 ? t / 2 : 0, width = t < 4 && t % 2 ? 3840 : 1920, height = width == 3840 ? 2160 : 1080;
        enum AVPixelFormat sw = formats[format];
        const struct ffcl_result *at = result_at_point(width, height, format);
        struct target_spec spec = {"l", measure[t], frame_bytes(sw, width, height), text[t], true};
        const char *missing = NULL;

        snprintf(measure[t], sizeof measure[t], "ffcl_%s_%dx%d%s", format_name[format], width, height,
                 t == 5 ? "_in_flight_device" : "");
        if (t < 4)
            snprintf(text[t], sizeof text[t], "mapped within 10%% or 40 us of the floor, %s %dx%d",
                     av_get_pix_fmt_name(sw), width, height);
        else if (t == 4)
            snprintf(text[t], sizeof text[t], "mapped at least 10x faster than today, %s %dx%d",
                     av_get_pix_fmt_name(sw), width, height);
        else
            snprintf(text[t], sizeof text[t], "device order, D = 4, at least 1.5x D = 1's frames/s, %s %dx%d",
                     av_get_pix_fmt_name(sw), width, height);
        if (!at)
            snprintf(why[t], sizeof why[t], "the frames here are smaller; the target is at %dx%d", width, height);
        else if (*at->no_mapped)
            snprintf(why[t], sizeof why[t], "the mapped route did not run here");
        else if (t != 5 && *at->no_today)
            snprintf(why[t], sizeof why[t], "today's route and the floor did not run here");
        else if (t == 5 && !at->flight[O_DEVICE][IN_FLIGHT - 1].have)
            snprintf(why[t], sizeof why[t], "device order did not run here");
        else
            why[t][0] = '\0';
        missing = why[t][0] ? why[t] : NULL;
        if (missing) {
            targets[nt++] = record_target(b, &spec, false, missing, 0, 0, VERDICT_NOT_REACHED);
        } else if (t < 4) {
            double bound = fmax(0.10 * at->s[R_FLOOR].median, 40.0);
            targets[nt++] = record_target(b, &spec, true, NULL, at->over.pairs, at->over.median,
                                          paired_verdict_within(&at->over, bound));
        } else if (t == 4) {
            enum verdict v = at->ratio_lo >= 10.0  ? VERDICT_MET
                             : at->ratio_hi < 10.0 ? VERDICT_MISSED
                                                   : VERDICT_UNCLEAR;
            targets[nt++] = record_target(b, &spec, true, NULL, at->ratio_n, at->ratio, v);
        } else {
            double gain = at->flight[O_DEVICE][0].median / at->flight[O_DEVICE][IN_FLIGHT - 1].median;
            targets[nt++] = record_target(b, &spec, true, NULL, at->flight[O_DEVICE][IN_FLIGHT - 1].reps, gain,
                                          gain >= 1.5 ? VERDICT_MET : VERDICT_MISSED);
        }
    }
}

/* The median, or "-" where the route did not run. */
static const char *cell(const struct summary *s, char *buf, size_t len)
{
    if (s->have)
        snprintf(buf, len, "%.1f", s->median);
    else
        snprintf(buf, len, "-");
    return buf;
}

void run_ffmpeg_cl(struct bench *b, bool quick, int reps)
{
    const bool small = b->cpu_device && quick;
    const int sizes[NSIZES][2] = {{small ? 320 : 1920, small ? 180 : 1080}, {small ? 640 : 3840, small ? 360 : 2160}};
    double *samples = malloc(sizeof(double) * (size_t)reps * (R_COUNT + 1));
    struct ffcl_bench fb;
    bool warmed = false;

    memset(results, 0, sizeof results);
    memset(targets, 0, sizeof targets);
    nresults = 0;
    not_run[0] = '\0';
    if (!samples)
        die("out of memory");
    if (!ffcl_open(b, &fb)) {
        record_skip("l", "FFmpeg's OpenCL filters", "%s", not_run);
        free(samples);
        return;
    }
    for (int s = 0; s < NSIZES; s++)
        for (int f = 0; f < NFORMATS; f++) {
            struct ffcl_result *res = &results[nresults++];
            struct ffcl_run r;
            AVFrame *out = frame_new();
            char label[48], c[R_COUNT][32];

            snprintf(label, sizeof label, "(l) %dx%d %s", sizes[s][0], sizes[s][1], format_name[f]);
            /* Progress as it goes, as (x) prints it: a run cut short still
             * shows how far it got. */
            printf("\n%s: ", label);
            fflush(stdout);
            watchdog("(l) FFmpeg's OpenCL filters", label);
            memset(res, 0, sizeof *res);
            run_setup(&fb, &r, res, sizes[s][0], sizes[s][1], f);
            raw_setup(b, &fb, &r, res);
            /* Untimed: the first frame through each graph, and the map's
             * first of the frame (its import, kept per pool frame). */
            reps_untimed(&fb, &r, res, out);
            /* The first frame size and format that runs also warms the
             * GPU up: its routes run untimed for WARM_UP_US first (in one
             * H100 run of two the first one measured ran its floor at
             * 107 us a frame, against 66-68 us in the other and later). */
            if (!warmed && (!*res->no_today || !*res->no_mapped)) {
                for (double t0 = now_us(); now_us() - t0 < WARM_UP_US;)
                    reps_untimed(&fb, &r, res, out);
                warmed = true;
            }
            /* Right after today's host copies a route runs slower (the map
             * by about 8 us at 1920x1080 on the H100): the order is a
             * Williams square, so that in every four reps each route goes
             * first once and follows each other route once within a rep.
             * Turning (i + k) alone kept the mapped route right after
             * today's in three reps of four, and the raw route in none. */
            for (int i = 0; i < reps; i++)
                for (int k = 0; k < R_COUNT; k++) {
                    enum route w = (enum route)((i + williams[k]) % R_COUNT);
                    double us = rep_route(&fb, &r, w, res, out);
                    if (us >= 0) {
                        samples[w * reps + i] = us;
                        av_frame_unref(out);
                    }
                }
            /* paired first: summarize() sorts the samples in place */
            if (!*res->no_today && !*res->no_mapped) {
                res->over = summarize_paired(samples + R_MAPPED * reps, samples + R_FLOOR * reps,
                                             samples + R_COUNT * reps, reps);
                ratio_interval(samples + R_TODAY * reps, samples + R_MAPPED * reps, reps, res);
            }
            if (r.raw_frame) {
                res->share =
                    summarize_paired(samples + R_MAPPED * reps, samples + R_RAW * reps, samples + R_COUNT * reps, reps);
                if (!*res->no_today)
                    res->raw_over = summarize_paired(samples + R_RAW * reps, samples + R_FLOOR * reps,
                                                     samples + R_COUNT * reps, reps);
            }
            for (int w = 0; w < R_COUNT; w++)
                if (w == R_MAPPED ? !*res->no_mapped : w == R_RAW ? r.raw_frame != NULL : !*res->no_today)
                    res->s[w] = summarize(samples + w * reps, reps, 1);
            run_check(b, &fb, &r, res);
            /* The routes' medians now, so that a run cut short in the
             * frames in flight still has them. */
            printf("routes (us a frame: today %s, mapped %s, floor %s; way %s); ",
                   cell(&res->s[R_TODAY], c[R_TODAY], sizeof c[R_TODAY]),
                   cell(&res->s[R_MAPPED], c[R_MAPPED], sizeof c[R_MAPPED]),
                   cell(&res->s[R_FLOOR], c[R_FLOOR], sizeof c[R_FLOOR]), res->way);
            fflush(stdout);
            if (!*res->no_mapped)
                run_in_flight(b, &fb, &r, reps, label, res);
            printf("in flight done\n");
            av_frame_free(&out);
            run_teardown(&r);
            if (*res->no_mapped)
                record_skip("l", label + 4, "mapped route: %s", res->no_mapped);
            if (*res->no_today)
                record_skip("l", label + 4, "today's route and the floor: %s", res->no_today);
            if (!*res->no_mapped && *res->no_device)
                record_skip("l", label + 4, "device order: %s", res->no_device);
        }
    alarm(0);
    free(samples);
    ffcl_close(&fb);
    record_ffcl(b);
}

/* What frames in flight can give at most. Host after host, each frame
 * still takes its own map, filter and unmap (FFmpeg's filter finishes its
 * queue before it returns the frame): only what the copy adds can
 * overlap. So in device order a frame takes at least R, against C + R at
 * D = 1, and D = 4 gives at most (C + R) / R of D = 1's frames/s (and at
 * most 4x), C being what the copy adds at D = 1 (D = 1 minus the mapped
 * route: the copy, and the semaphore hops around it) and R a frame's own
 * time: the mapped route's, or made with the raw calls, the raw route's.
 * A copy longer than R on its queue would lower it further; that time is
 * not measured apart. */
static double most_gain(double copy, double route)
{
    return fmin((copy + route) / route, (double)in_flight_d[IN_FLIGHT - 1]);
}

static void print_in_flight_bound(void)
{
    bool header = false;

    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *x = &results[i];
        const struct summary *d1 = &x->flight[O_DEVICE][0], *d4 = &x->flight[O_DEVICE][IN_FLIGHT - 1];
        const struct summary *raw1 = &x->flight[O_RAW][0], *raw4 = &x->flight[O_RAW][IN_FLIGHT - 1];
        char name[32], raw[16] = "-", most_raw[16] = "-", got_raw[16] = "-";
        double copy;

        if (!d1->have || !d4->have || !x->s[R_MAPPED].have)
            continue;
        if (!header) {
            printf("  the most D = 4 can give over D = 1 in device order, each frame's map, filter and unmap\n"
                   "    following the last on the host: (C + R) / R, at most 4x; C = what the copy adds at D = 1\n"
                   "    (D = 1 minus mapped), R = a frame's own map, filter and unmap: mapped, or raw's; raw: got =\n"
                   "    what D = 4 gave over D = 1 with the raw calls' handover (sync raw above)\n");
            printf("  %-10s %-5s %8s %8s %8s %9s %9s %11s %10s\n", "frame", "fmt", "C", "mapped", "raw", "D=4 got",
                   "at most", "raw: most", "raw: got");
            header = true;
        }
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        copy = fmax(d1->median - x->s[R_MAPPED].median, 0.0);
        if (x->s[R_RAW].have) {
            snprintf(raw, sizeof raw, "%.1f", x->s[R_RAW].median);
            snprintf(most_raw, sizeof most_raw, "%.2fx", most_gain(copy, x->s[R_RAW].median));
        }
        if (raw1->have && raw4->have)
            snprintf(got_raw, sizeof got_raw, "%.2fx", raw1->median / raw4->median);
        printf("  %-10s %-5s %8.1f %8.1f %8s %8.2fx %8.2fx %11s %10s\n", name, format_name[x->format], copy,
               x->s[R_MAPPED].median, raw, d1->median / d4->median, most_gain(copy, x->s[R_MAPPED].median), most_raw,
               got_raw);
    }
}

void print_ffmpeg_cl(void)
{
    printf(
        "\n(l) FFmpeg's OpenCL filters on Vulkan frames (libclmem-av's map): " FILTER ", buffersrc -> filter ->\n"
        "    buffersink on OpenCL frames; microseconds a frame, median of the reps. today = av_hwframe_transfer_data\n"
        "    Vulkan -> software frame -> FFmpeg's own OpenCL frame (hwupload's way), the filter; mapped =\n"
        "    clmem_av_cl_map without a sync object (host order; the vk-image way hands over in device order), the\n"
        "    filter, av_frame_unref of the mapped frame; floor = the filter on an OpenCL frame already resident\n");
    if (*not_run) {
        printf("  skipped: %s\n", not_run);
        return;
    }
    printf("%-10s %-5s %-15s %10s %10s %10s %24s %22s  %s\n", "frame", "fmt", "way", "today", "mapped", "floor",
           "mapped-floor", "today/mapped", "reads");
    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *x = &results[i];
        char name[32], c[R_COUNT][32], over[48] = "-", ratio[48] = "-";
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        if (x->over.have) {
            snprintf(over, sizeof over, "%.1f (%.1f..%.1f)", x->over.median, x->over.lo, x->over.hi);
            snprintf(ratio, sizeof ratio, "%.1fx (%.1f..%.1f)", x->ratio, x->ratio_lo, x->ratio_hi);
        }
        printf("%-10s %-5s %-15s %10s %10s %10s %24s %22s  %s\n", name, format_name[x->format], x->way,
               cell(&x->s[R_TODAY], c[0], sizeof c[0]), cell(&x->s[R_MAPPED], c[1], sizeof c[1]),
               cell(&x->s[R_FLOOR], c[2], sizeof c[2]), over, ratio, x->over.have ? paired_reads(&x->over) : "");
    }
    printf("    way: the image way the map took (clmem_av_cl_frame_way; none: the map refused); mapped-floor: the\n"
           "    median of mapped minus floor within each rep (95%% interval); today/mapped: the median of today over\n"
           "    mapped within each rep (95%% interval; > 1: the map wins); reads: can't tell when mapped-floor's\n"
           "    interval holds 0, few samples under %d reps; -: the route did not run (below, why)\n",
           MIN_VERDICT_SAMPLES);
    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *x = &results[i];
        if (*x->no_mapped)
            printf("  %dx%d %s: mapped route skipped: %s\n", x->width, x->height, format_name[x->format], x->no_mapped);
        else
            printf("  %dx%d %s: mapped through %s's pool\n", x->width, x->height, format_name[x->format], x->setup);
        if (*x->no_today)
            printf("  %dx%d %s: today's route and the floor skipped: %s\n", x->width, x->height, format_name[x->format],
                   x->no_today);
    }

    printf("\n(l) the map's handover made with the raw calls: raw = the vk-image way's device-order handover\n"
           "    (Vulkan: barriers to EXTERNAL, a semaphore; OpenCL: its wait, the acquire, clFinish), the filter, and\n"
           "    the hand-back (OpenCL: the release, a signal, clFlush; Vulkan: barriers back, FFmpeg's semaphores),\n"
           "    each call made directly on the map's own images, in turn with the routes above\n");
    printf("%-10s %-5s %10s %24s %24s  %s\n", "frame", "fmt", "raw", "raw-floor", "mapped-raw", "reads");
    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *x = &results[i];
        char name[32], c[32], over[48] = "-", share[48] = "-";
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        if (!x->s[R_RAW].have) {
            printf("  %s %s: raw route skipped: %s\n", name, format_name[x->format], x->no_raw);
            continue;
        }
        if (x->raw_over.have)
            snprintf(over, sizeof over, "%.1f (%.1f..%.1f)", x->raw_over.median, x->raw_over.lo, x->raw_over.hi);
        snprintf(share, sizeof share, "%.1f (%.1f..%.1f)", x->share.median, x->share.lo, x->share.hi);
        printf("%-10s %-5s %10s %24s %24s  %s\n", name, format_name[x->format], cell(&x->s[R_RAW], c, sizeof c), over,
               share, paired_reads(&x->share));
    }
    printf("    raw-floor: what the handover costs at the least, raw minus floor within each rep (95%% interval);\n"
           "    mapped-raw: the library's share, mapped minus raw within each rep (both signal a timeline of their\n"
           "    own submissions; raw leaves out the library's checks and bookkeeping); reads: of mapped-raw\n");

    printf(
        "\n(l) frames in flight on frames the GPU produced: a stream of F frames through D frames of the pool, each\n"
        "    written by a vkCmdCopyImage from a resident Vulkan frame on FFmpeg's %s queue with FFmpeg's\n"
        "    semaphores, D copies ahead (the next copy into a pool frame is submitted once its map is\n"
        "    unreferenced), then map, the filter, unref; until every frame's semaphores are signalled\n",
        copy_queue);
    printf("%-10s %-5s %-7s %3s %5s %12s %10s %8s\n", "frame", "fmt", "sync", "D", "F", "us a frame", "fps", "vs D=1");
    for (int i = 0; i < nresults; i++) {
        const struct ffcl_result *x = &results[i];
        char name[32];
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        for (int o = 0; o < ORDERS; o++)
            for (int j = 0; j < IN_FLIGHT; j++) {
                const struct summary *y = &x->flight[o][j];
                if (!y->have)
                    continue;
                printf("%-10s %-5s %-7s %3d %5d %12.1f %10.1f %7.2fx\n", name, format_name[x->format], order_name[o],
                       in_flight_d[j], x->stream, y->median, 1e6 / y->median, x->flight[o][0].median / y->median);
            }
        if (!*x->no_mapped && *x->no_device)
            printf("  %s %s: device order skipped: %s\n", name, format_name[x->format], x->no_device);
    }
    printf(
        "    sync: host = no sync object, device = CLMEM_AV_ORDER_DEVICE, raw = device order's handover made with\n"
        "    the raw calls (as the raw route above, each pool frame's own; no map); us a frame: the stream's time /\n"
        "    F, median of the reps; fps: frames per second at that median; vs D=1: fps against D = 1 of the same\n"
        "    sync; formats whose mapped route did not run have no rows, and raw has rows only where the raw route\n"
        "    ran\n");
    print_in_flight_bound();
    for (int t = 0; t < NTARGETS; t++)
        if (targets[t])
            print_target_line(targets[t]);
}
#else
void run_ffmpeg_cl(struct bench *b, bool quick, int reps)
{
    (void)b;
    (void)quick;
    (void)reps;
    record_skip("l", "FFmpeg's OpenCL filters", "%s", LIBAVFILTER_FOUND);
}

void print_ffmpeg_cl(void)
{
    printf("\n(l) FFmpeg's OpenCL filters on Vulkan frames: skipped: clmem-bench was not built with libavfilter (%s)\n",
           LIBAVFILTER_FOUND);
}
#endif
