/* SPDX-License-Identifier: MIT */
/* clmem-bench: FFmpeg's Vulkan frames into OpenCL, through libclmem-av.
 * NV12 frames of 1920x1080 and 3840x2160 (320x180 and 640x360 with --quick
 * on a CPU device), in a pool set up with clmem_av_frames_setup(), on a
 * Vulkan device of FFmpeg's own (av_hwdevice_ctx_create) that the bench's
 * OpenCL context pairs with.
 *
 * One frame at a time, interleaved rep by rep, each timed from "FFmpeg
 * holds the frame" to "FFmpeg holds it again, changed", the same
 * 1-work-item kernel on the luma plane in between (the kernel is not what
 * is measured: moving the frame is):
 *   staged:    what users write today: av_hwframe_transfer_data into a
 *              software frame, clEnqueueWriteBuffer per plane into plain
 *              cl buffers, the kernel, a blocking clEnqueueReadBuffer per
 *              plane, av_hwframe_transfer_data back, and a wait for that
 *              upload (FFmpeg returns before its upload completed);
 *   planes:    (the "(g)" column) the bridge's plane handoff of the same
 *              imported planes, timed as the image-frames measure times
 *              an image's: clmem_bridge_acquire per plane, the kernel,
 *              clmem_bridge_release per plane, clFinish. No
 *              semaphore: the floor the others are read against;
 *   by hand:   what host order does, written with the bridge's calls and
 *              raw Vulkan: vkWaitSemaphores of the planes' timelines,
 *              clmem_bridge_acquire_many, the kernel,
 *              clmem_bridge_release_many, clFinish, vkSignalSemaphore per
 *              plane (sem_value + 1). libclmem-av host minus this is the
 *              library's own share;
 *   host:      clmem_av_frame_acquire, the kernel, clmem_av_frame_release
 *              (host order: it returns once the release completed and
 *              FFmpeg's semaphores are signalled);
 *   device:    where device order works (shared semaphores): a sync object
 *              of CLMEM_AV_ORDER_DEVICE, acquire, the kernel, release, and
 *              a host wait for the frame's timeline semaphores, so that a
 *              frame is timed end to end.
 * The planes are imported once, untimed (as the frames of a pool are
 * imported once and reused).
 *
 * Frames in flight: for each order that works, D = 1, 2, 4 frames of the
 * pool, each imported once, carry a stream of F frames: FFmpeg uploads
 * frame i into pool frame i % D (asynchronously; its upload waits on the
 * device for the release of that frame's previous use), then acquire, the
 * kernel, release; the stream is timed until FFmpeg's semaphores of every
 * frame are signalled. Microseconds a frame = the stream's time / F;
 * frames per second = 1e6 over that; median of the reps. Beside them, in
 * the same reps, the stream's floor: the same uploads into the same four
 * frames with no OpenCL at all (FFmpeg's av_hwframe_transfer_data copies
 * each frame into its staging memory on the calling thread, so no D can
 * take a frame below it).
 *
 * The targets, set on the H200 (record_ffmpeg_frames says which), are
 * judged there only.
 *
 * Checked after the reps: each frame, downloaded, holds what was uploaded
 * with luma byte 0 raised once per kernel since. Built with libclmem-av
 * only: without it, the FFmpeg-frames measure prints why it did not run. */
/* Measures the deprecated clmem_av_frame_acquire/_release as well. */
#define CLMEM_DISABLE_DEPRECATION_WARNINGS
#include "bench.h"

#if HAVE_LIBAV
#include <clmem-av.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

/* The one-frame ways; J_STAGED and J_ZERO have a frame each, the others
 * share J_ZERO's. */
enum way { J_STAGED, J_ZERO, J_HANDOFF, J_BY_HAND, J_DEVICE, J_COUNT };
#define J_FRAMES 2
static const char *const way_variant[J_COUNT] = {"baseline", "clmem", "clmem", "raw", "clmem"};
static const char *const way_measure[J_COUNT] = {"", "", "_handoff_g", "_by_hand", "_device"};
#define FRAME_SIZES 2
#define IN_FLIGHT 3 /* D = 1, 2, 4 */
static const int in_flight_d[IN_FLIGHT] = {1, 2, 4};

struct ffmpeg_result {
    int width, height;
    struct summary s[J_COUNT];
    struct paired lib;                   /* host minus by hand, paired by rep: the library's share */
    struct summary flight[2][IN_FLIGHT]; /* [0] host order, [1] device order; per frame */
    struct summary upload;               /* FFmpeg's uploads alone, through D = 4: the stream's floor */
    int stream;                          /* F: frames per stream */
};
static struct ffmpeg_result results[FRAME_SIZES];
static int nresults;
static char not_run[NOTE_MAX];
static char path_name[32];
/* The targets, set on the H200 (record_ffmpeg_frames). */
#define NTARGETS 5 /* three at 1920x1080, two at 3840x2160 */
static const struct target *targets[NTARGETS];
static char no_device[NOTE_MAX]; /* why device order did not run; empty when it did */

static const char *bump_source = "__kernel void bump(__global uchar *luma) { luma[0] = (uchar)(luma[0] + 1); }\n";

/* What both ways share: FFmpeg's device, the bridge on it, the kernel. */
struct ffmpeg_bench {
    AVBufferRef *device;
    const AVVulkanDeviceContext *vk;
    PFN_vkWaitSemaphores wait_semaphores;
    PFN_vkSignalSemaphore signal_semaphore;
    clmem_bridge *bridge;
    clmem_av_sync *sync[2]; /* host order; device order, or NULL where it does not work */
    cl_program program;
    cl_kernel kernel;
};

/* One frame size. */
struct ffmpeg_run {
    int width, height;
    AVBufferRef *frames;
    AVFrame *hw[J_FRAMES];
    AVFrame *sw;       /* The staged way's software frame, and the upload's source */
    AVFrame *pattern;  /* what both frames were uploaded with */
    cl_mem plain[2];   /* The staged way's plane buffers */
    size_t plane_bytes[2];
    clmem_av_frame_planes planes; /* The zero-copy way's, imported once */
    int bumps[J_FRAMES]; /* kernels run on each frame so far */
};

static void av_check(int r, const char *what)
{
    if (r < 0) {
        char text[128];
        av_strerror(r, text, sizeof text);
        die("%s returned %d (%s)", what, r, text);
    }
}

/* FFmpeg's upload returns before it completed: wait for the frame's
 * timeline semaphores to reach the value its last submission signals. */
static void wait_frame(struct ffmpeg_bench *fb, AVFrame *hw)
{
    AVVkFrame *f = (AVVkFrame *)hw->data[0];
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 2,
                                .pSemaphores = f->sem,
                                .pValues = f->sem_value};
    check_vk(fb->wait_semaphores(fb->vk->act_dev, &info, UINT64_MAX), "vkWaitSemaphores((j) upload)");
}

/* The sync objects, one of each order that works here (device order: where
 * semaphores can be shared; no_device says why not otherwise). */
static void syncs_create(struct ffmpeg_bench *fb)
{
    check_clmem(clmem_av_sync_create(fb->bridge, fb->device, CLMEM_AV_ORDER_HOST, 4, &fb->sync[0]),
                "clmem_av_sync_create((j) host order)");
    if (clmem_av_sync_create(fb->bridge, fb->device, CLMEM_AV_ORDER_DEVICE, 4, &fb->sync[1]) != CLMEM_OK)
        snprintf(no_device, sizeof no_device, "%s", clmem_error_message());
}

static void syncs_drop(struct ffmpeg_bench *fb)
{
    for (int o = 0; o < 2; o++) {
        clmem_av_sync_unref(fb->sync[o]);
        fb->sync[o] = NULL;
    }
}

static bool ffmpeg_open(struct bench *b, struct ffmpeg_bench *fb)
{
    PFN_vkGetDeviceProcAddr device_proc;
    clmem_status s;
    cl_int err;
    int r;

    memset(fb, 0, sizeof *fb);
    av_log_set_level(AV_LOG_ERROR);
    if ((r = av_hwdevice_ctx_create(&fb->device, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0)) < 0) {
        snprintf(not_run, sizeof not_run, "FFmpeg cannot make a Vulkan device here (av_hwdevice_ctx_create: %d)", r);
        return false;
    }
    fb->vk = ((AVHWDeviceContext *)fb->device->data)->hwctx;
    /* The bench's context, if FFmpeg's device is the one it pairs with. */
    if ((s = clmem_av_bridge_create(fb->device, b->context, 0, &fb->bridge)) != CLMEM_OK) {
        snprintf(not_run, sizeof not_run, "no bridge on FFmpeg's Vulkan device and the bench's OpenCL device: %s",
                 clmem_error_message());
        av_buffer_unref(&fb->device);
        return false;
    }
    device_proc = (PFN_vkGetDeviceProcAddr)fb->vk->get_proc_addr(fb->vk->inst, "vkGetDeviceProcAddr");
    fb->wait_semaphores = device_proc ? (PFN_vkWaitSemaphores)device_proc(fb->vk->act_dev, "vkWaitSemaphores") : NULL;
    fb->signal_semaphore =
        device_proc ? (PFN_vkSignalSemaphore)device_proc(fb->vk->act_dev, "vkSignalSemaphore") : NULL;
    if (!fb->wait_semaphores || !fb->signal_semaphore)
        die("(j): FFmpeg's VkDevice returns no vkWaitSemaphores or vkSignalSemaphore");
    syncs_create(fb);
    fb->program = clCreateProgramWithSource(b->context, 1, &bump_source, NULL, &err);
    check_cl(err, "clCreateProgramWithSource((j))");
    check_cl(clBuildProgram(fb->program, 1, &b->device, "", NULL, NULL), "clBuildProgram((j))");
    fb->kernel = clCreateKernel(fb->program, "bump", &err);
    check_cl(err, "clCreateKernel((j))");
    return true;
}

static void ffmpeg_close(struct ffmpeg_bench *fb)
{
    syncs_drop(fb);
    clReleaseKernel(fb->kernel);
    clReleaseProgram(fb->program);
    clmem_bridge_unref(fb->bridge);
    av_buffer_unref(&fb->device);
}

static AVFrame *sw_frame(int width, int height)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        die("out of memory");
    f->format = AV_PIX_FMT_NV12;
    f->width = width;
    f->height = height;
    av_check(av_frame_get_buffer(f, 0), "av_frame_get_buffer((j))");
    return f;
}

static void run_setup(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r, int width, int height)
{
    AVHWFramesContext *fc;
    cl_int err;

    memset(r, 0, sizeof *r);
    r->width = width;
    r->height = height;
    if (!(r->frames = av_hwframe_ctx_alloc(fb->device)))
        die("out of memory");
    fc = (AVHWFramesContext *)r->frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = AV_PIX_FMT_NV12;
    fc->width = width;
    fc->height = height;
    check_clmem(clmem_av_frames_setup(r->frames), "clmem_av_frames_setup((j))");
    av_check(av_hwframe_ctx_init(r->frames), "av_hwframe_ctx_init((j))");

    r->pattern = sw_frame(width, height);
    r->sw = sw_frame(width, height);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            r->pattern->data[0][(size_t)y * r->pattern->linesize[0] + x] = (uint8_t)(x + 3 * y);
    for (int y = 0; y < height / 2; y++)
        memset(r->pattern->data[1] + (size_t)y * r->pattern->linesize[1], 128 + y % 16, (size_t)width);
    for (int w = 0; w < J_FRAMES; w++) {
        if (!(r->hw[w] = av_frame_alloc()))
            die("out of memory");
        av_check(av_hwframe_get_buffer(r->frames, r->hw[w], 0), "av_hwframe_get_buffer((j))");
        av_check(av_hwframe_transfer_data(r->hw[w], r->pattern, 0), "av_hwframe_transfer_data((j) upload)");
        wait_frame(fb, r->hw[w]);
    }
    for (int p = 0; p < 2; p++) {
        r->plane_bytes[p] = (size_t)r->sw->linesize[p] * (size_t)(p ? height / 2 : height);
        r->plain[p] = clCreateBuffer(b->context, CL_MEM_READ_WRITE, r->plane_bytes[p], NULL, &err);
        check_cl(err, "clCreateBuffer((j) plane)");
    }
    check_clmem(clmem_av_frame_import(fb->bridge, r->hw[J_ZERO], CLMEM_BRIDGE_PATH_BEST, b->queue,
                                      CL_MEM_READ_WRITE, &r->planes),
                "clmem_av_frame_import((j))");
    {
        clmem_bridge_path path = CLMEM_BRIDGE_PATH_BEST;
        clmem_bridge_handle_path(r->planes.planes[0], &path);
        snprintf(path_name, sizeof path_name, "%s", clmem_bridge_path_name(path));
    }
}

static void bump(struct bench *b, struct ffmpeg_bench *fb, cl_mem luma)
{
    size_t one = 1;
    check_cl(clSetKernelArg(fb->kernel, 0, sizeof luma, &luma), "clSetKernelArg((j))");
    check_cl(clEnqueueNDRangeKernel(b->queue, fb->kernel, 1, NULL, &one, NULL, 0, NULL, NULL),
             "clEnqueueNDRangeKernel((j))");
}

static double rep_staged(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    double t0 = now_us();

    av_check(av_hwframe_transfer_data(r->sw, r->hw[J_STAGED], 0), "av_hwframe_transfer_data((j) download)");
    for (int p = 0; p < 2; p++)
        check_cl(clEnqueueWriteBuffer(b->queue, r->plain[p], CL_FALSE, 0, r->plane_bytes[p], r->sw->data[p], 0,
                                      NULL, NULL),
                 "clEnqueueWriteBuffer((j))");
    bump(b, fb, r->plain[0]);
    for (int p = 0; p < 2; p++)
        check_cl(clEnqueueReadBuffer(b->queue, r->plain[p], CL_TRUE, 0, r->plane_bytes[p], r->sw->data[p], 0, NULL,
                                     NULL),
                 "clEnqueueReadBuffer((j))");
    av_check(av_hwframe_transfer_data(r->hw[J_STAGED], r->sw, 0), "av_hwframe_transfer_data((j) upload)");
    wait_frame(fb, r->hw[J_STAGED]);
    return now_us() - t0;
}

static double rep_zero_copy(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    double t0 = now_us();

    check_clmem(clmem_av_frame_acquire(fb->bridge, r->hw[J_ZERO], &r->planes, b->queue, UINT64_MAX, NULL),
                "clmem_av_frame_acquire((j))");
    bump(b, fb, clmem_handle_mem(r->planes.planes[0]));
    check_clmem(clmem_av_frame_release(fb->bridge, r->hw[J_ZERO], &r->planes, b->queue, 0, NULL),
                "clmem_av_frame_release((j))");
    return now_us() - t0;
}

/* The image-frames measure's plane handoff of the same planes: no semaphore of FFmpeg's. */
static double rep_handoff(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    double t0 = now_us();

    for (uint32_t p = 0; p < r->planes.count; p++)
        check_clmem(clmem_bridge_acquire(fb->bridge, r->planes.planes[p], 0, NULL, NULL),
                    "clmem_bridge_acquire((j) plane)");
    bump(b, fb, clmem_handle_mem(r->planes.planes[0]));
    for (uint32_t p = 0; p < r->planes.count; p++)
        check_clmem(clmem_bridge_release(fb->bridge, r->planes.planes[p], 0, NULL, NULL),
                    "clmem_bridge_release((j) plane)");
    check_cl(clFinish(b->queue), "clFinish((j) plane handoff)");
    return now_us() - t0;
}

/* Host order written by hand: FFmpeg's timelines waited and signalled
 * with raw Vulkan around the bridge's handoff of both planes at once. */
static double rep_by_hand(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    AVVkFrame *f = (AVVkFrame *)r->hw[J_ZERO]->data[0];
    VkSemaphoreWaitInfo wait = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = r->planes.count,
                                .pSemaphores = f->sem,
                                .pValues = f->sem_value};
    double t0 = now_us();

    check_vk(fb->wait_semaphores(fb->vk->act_dev, &wait, UINT64_MAX), "vkWaitSemaphores((j) by hand)");
    check_clmem(clmem_bridge_acquire_many(fb->bridge, r->planes.count, r->planes.planes, b->queue, 0, NULL, NULL),
                "clmem_bridge_acquire_many((j) by hand)");
    bump(b, fb, clmem_handle_mem(r->planes.planes[0]));
    check_clmem(clmem_bridge_release_many(fb->bridge, r->planes.count, r->planes.planes, b->queue, 0, NULL, NULL),
                "clmem_bridge_release_many((j) by hand)");
    check_cl(clFinish(b->queue), "clFinish((j) by hand)");
    for (uint32_t p = 0; p < r->planes.count; p++) {
        VkSemaphoreSignalInfo sig = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, f->sem[p], f->sem_value[p] + 1};
        check_vk(fb->signal_semaphore(fb->vk->act_dev, &sig), "vkSignalSemaphore((j) by hand)");
        f->sem_value[p]++;
    }
    return now_us() - t0;
}

/* Device order, one frame timed end to end: until FFmpeg's semaphores are
 * signalled. */
static double rep_device(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    double t0 = now_us();

    check_clmem(clmem_av_sync_acquire(fb->sync[1], r->hw[J_ZERO], &r->planes, b->queue, UINT64_MAX, NULL),
                "clmem_av_sync_acquire((j) device order)");
    bump(b, fb, clmem_handle_mem(r->planes.planes[0]));
    check_clmem(clmem_av_sync_release(fb->sync[1], r->hw[J_ZERO], &r->planes, b->queue, 0, NULL),
                "clmem_av_sync_release((j) device order)");
    wait_frame(fb, r->hw[J_ZERO]);
    return now_us() - t0;
}

/* A stream of `n` frames through `d` frames of the pool in the sync
 * object's order (the file's comment); microseconds a frame. frames[],
 * planes[] and ups[] are the d pool frames, their planes, and each one's
 * upload source (FFmpeg 5.1 uploads asynchronously from its memory, where
 * the device imports host memory, without a reference on it). */
static double rep_stream(struct bench *b, struct ffmpeg_bench *fb, clmem_av_sync *sync, AVFrame **frames,
                         clmem_av_frame_planes *planes, AVFrame **ups, int d, int n)
{
    double t0 = now_us();

    for (int i = 0; i < n; i++) {
        int k = i % d;
        av_check(av_hwframe_transfer_data(frames[k], ups[k], 0), "av_hwframe_transfer_data((j) stream upload)");
        check_clmem(clmem_av_sync_acquire(sync, frames[k], &planes[k], b->queue, UINT64_MAX, NULL),
                    "clmem_av_sync_acquire((j) stream)");
        bump(b, fb, clmem_handle_mem(planes[k].planes[0]));
        check_clmem(clmem_av_sync_release(sync, frames[k], &planes[k], b->queue, 0, NULL),
                    "clmem_av_sync_release((j) stream)");
    }
    for (int k = 0; k < d && k < n; k++)
        wait_frame(fb, frames[k]);
    return (now_us() - t0) / n;
}

/* hw, downloaded into back, against the pattern with luma byte 0 raised
 * by `bumps`: how many luma bytes and chroma rows differ. */
static long frame_wrong(struct ffmpeg_run *r, AVFrame *back, AVFrame *hw, int bumps)
{
    long wrong = 0;

    av_check(av_hwframe_transfer_data(back, hw, 0), "av_hwframe_transfer_data((j) check)");
    for (int y = 0; y < r->height; y++) {
        const uint8_t *got = back->data[0] + (size_t)y * back->linesize[0];
        const uint8_t *want = r->pattern->data[0] + (size_t)y * r->pattern->linesize[0];
        for (int x = 0; x < r->width; x++)
            wrong += got[x] != (uint8_t)(want[x] + (x == 0 && y == 0 ? bumps : 0));
    }
    for (int y = 0; y < r->height / 2; y++)
        wrong += memcmp(back->data[1] + (size_t)y * back->linesize[1],
                        r->pattern->data[1] + (size_t)y * r->pattern->linesize[1], (size_t)r->width) != 0;
    return wrong;
}

/* Each frame, downloaded, is the pattern with luma byte 0 raised once a
 * kernel. */
static void run_check(struct bench *b, struct ffmpeg_run *r)
{
    static const char *const way_label[J_FRAMES] = {"staged", "zero-copy"};
    AVFrame *back = sw_frame(r->width, r->height);

    for (int w = 0; w < J_FRAMES; w++) {
        long wrong = frame_wrong(r, back, r->hw[w], r->bumps[w]);
        if (wrong)
            fail(b, "(j) %dx%d %s: %ld luma bytes or chroma rows differ from the upload and %d kernels", r->width,
                 r->height, way_label[w], wrong, r->bumps[w]);
    }
    av_frame_free(&back);
}

/* FFmpeg's uploads alone, frame i into pool frame i % d, until each
 * frame's semaphores are signalled: no libclmem-av call. */
static double rep_upload(struct ffmpeg_bench *fb, AVFrame **frames, AVFrame **ups, int d, int n)
{
    double t0 = now_us();

    for (int i = 0; i < n; i++)
        av_check(av_hwframe_transfer_data(frames[i % d], ups[i % d], 0), "av_hwframe_transfer_data((j) upload alone)");
    for (int k = 0; k < d && k < n; k++)
        wait_frame(fb, frames[k]);
    return (now_us() - t0) / n;
}

/* The stream's frames, downloaded: each the pattern with luma byte 0 raised
 * once (one kernel since its last upload). */
static void stream_check(struct bench *b, struct ffmpeg_run *r, AVFrame **frames, int d, const char *what)
{
    AVFrame *back = sw_frame(r->width, r->height);

    for (int k = 0; k < d; k++) {
        long wrong = frame_wrong(r, back, frames[k], 1);
        if (wrong)
            fail(b, "(j) %dx%d %s: pool frame %d: %ld luma bytes or chroma rows differ from its upload and one kernel",
                 r->width, r->height, what, k, wrong);
    }
    av_frame_free(&back);
}

/* Frames in flight, both orders where they work: D pool frames, each
 * imported once, streams of F frames, `reps` streams a configuration,
 * the orders and D interleaved stream by stream. */
static void run_in_flight(struct bench *b, struct ffmpeg_bench *fb, struct ffmpeg_run *r, int reps,
                          struct ffmpeg_result *res)
{
    const int n = b->cpu_device ? 8 : 32;
    AVFrame *frames[4], *ups[4];
    clmem_av_frame_planes planes[4];
    double *samples = malloc(sizeof(double) * (size_t)reps * (2 * IN_FLIGHT + 1));

    if (!samples)
        die("out of memory");
    res->stream = n;
    for (int k = 0; k < 4; k++) {
        if (!(frames[k] = av_frame_alloc()))
            die("out of memory");
        av_check(av_hwframe_get_buffer(r->frames, frames[k], 0), "av_hwframe_get_buffer((j) stream)");
        ups[k] = r->pattern; /* kept alive by the run */
        check_clmem(clmem_av_frame_import(fb->bridge, frames[k], CLMEM_BRIDGE_PATH_BEST, b->queue, CL_MEM_READ_WRITE,
                                          &planes[k]),
                    "clmem_av_frame_import((j) stream)");
    }
    for (int o = 0; o < 2; o++) /* untimed: the first frames of each */
        if (fb->sync[o])
            rep_stream(b, fb, fb->sync[o], frames, planes, ups, 4, 4);
    rep_upload(fb, frames, ups, 4, 4);
    for (int i = 0; i < reps; i++) {
        /* The uploads alone first: the last stream (D = 4) leaves each
         * frame as stream_check expects it. */
        samples[2 * IN_FLIGHT * reps + i] = rep_upload(fb, frames, ups, 4, n);
        for (int o = 0; o < 2; o++)
            for (int j = 0; j < IN_FLIGHT && fb->sync[o]; j++)
                samples[(o * IN_FLIGHT + j) * reps + i] =
                    rep_stream(b, fb, fb->sync[o], frames, planes, ups, in_flight_d[j], n);
    }
    res->upload = summarize(samples + 2 * IN_FLIGHT * reps, reps, n);
    for (int o = 0; o < 2; o++)
        for (int j = 0; j < IN_FLIGHT; j++)
            if (fb->sync[o])
                res->flight[o][j] = summarize(samples + (o * IN_FLIGHT + j) * reps, reps, n);
    for (int o = 0; o < 2; o++)
        if (fb->sync[o])
            check_clmem(clmem_av_sync_finish(fb->sync[o], FINISH_TIMEOUT_NS), "clmem_av_sync_finish((j))");
    stream_check(b, r, frames, 4, "frames in flight");
    for (int k = 0; k < 4; k++) {
        clmem_av_frame_planes_unref(&planes[k]);
        av_frame_free(&frames[k]);
    }
    free(samples);
}

/* The planes go, and their imports' teardowns end, before the frames do. */
/* clmem_bridge_finish() refuses while a semaphore of the bridge is alive,
 * and a device-order sync object holds its semaphores for its life: the
 * sync objects go first (their work is done: run_in_flight finished them),
 * and new ones are made for the next size. */
static void run_unimport(struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    clmem_av_frame_planes_unref(&r->planes);
    syncs_drop(fb);
    check_clmem(clmem_bridge_finish(fb->bridge, FINISH_TIMEOUT_NS), "clmem_bridge_finish((j))");
    syncs_create(fb);
}

static void run_teardown(struct ffmpeg_run *r)
{
    for (int p = 0; p < 2; p++)
        clReleaseMemObject(r->plain[p]);
    for (int w = 0; w < J_FRAMES; w++)
        av_frame_free(&r->hw[w]);
    av_frame_free(&r->sw);
    av_frame_free(&r->pattern);
    av_buffer_unref(&r->frames);
}

/* The rows (size_bytes: the frame's NV12 bytes): ffmpeg_nv12_WxH for staged
 * and libclmem-av's host order, _handoff_g, _by_hand and _device beside
 * them (one frame a rep: batch 1); _overhead, host minus by hand paired by
 * rep (min and max the bounds of the median's 95 % interval, reps the
 * pairs); _in_flight_host and _in_flight_device per frame (batch the
 * stream's F, ring the frames in flight D). The targets, set on the H200:
 * host order within 5 us of the image-frames measure's plane handoff, and at least 90x staged,
 * at 1920x1080 and 3840x2160; device order at D = 4 at least 1.5x D = 1's
 * frames per second at 1920x1080. */
static void record_ffmpeg_frames(struct bench *b)
{
    static const struct {
        int width, height;
        double ratio;
    } goal[FRAME_SIZES] = {{1920, 1080, 90}, {3840, 2160, 180}};
    int nt = 0;

    for (int i = 0; i < nresults; i++) {
        const struct ffmpeg_result *r = &results[i];
        uint64_t bytes = (uint64_t)r->width * (uint64_t)r->height * 3 / 2;
        char measure[80];
        for (int w = 0; w < J_COUNT; w++) {
            snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d%s", r->width, r->height, way_measure[w]);
            record_row("j", bytes, measure, way_variant[w], &r->s[w], 1, 0);
        }
        snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d_overhead", r->width, r->height);
        record_paired_row("j", bytes, measure, &r->lib, 1);
        for (int ord = 0; ord < 2; ord++)
            for (int j = 0; j < IN_FLIGHT; j++) {
                snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d_in_flight_%s", r->width, r->height,
                         ord ? "device" : "host");
                record_row("j", bytes, measure, "clmem", &r->flight[ord][j], 1, in_flight_d[j]);
            }
        snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d_upload_alone", r->width, r->height);
        record_row("j", bytes, measure, "raw", &r->upload, 1, 4);
    }
    for (int g = 0; g < FRAME_SIZES; g++) {
        static char text[FRAME_SIZES][3][96], measure[FRAME_SIZES][64];
        const struct ffmpeg_result *at = NULL;
        uint64_t bytes = (uint64_t)goal[g].width * (uint64_t)goal[g].height * 3 / 2;
        char why[128];
        snprintf(measure[g], sizeof measure[g], "ffmpeg_nv12_%dx%d", goal[g].width, goal[g].height);
        snprintf(text[g][0], sizeof text[g][0], "host order within 5 us of (g)'s plane handoff at %dx%d",
                 goal[g].width, goal[g].height);
        snprintf(text[g][1], sizeof text[g][1], "host order at least %.0fx staged at %dx%d", goal[g].ratio,
                 goal[g].width, goal[g].height);
        snprintf(text[g][2], sizeof text[g][2], "device order, D = 4, at least 1.5x D = 1's frames/s at %dx%d",
                 goal[g].width, goal[g].height);
        for (int i = 0; i < nresults; i++)
            if (results[i].width == goal[g].width && results[i].height == goal[g].height)
                at = &results[i];
        snprintf(why, sizeof why, "the frames here are smaller; the target is at %dx%d", goal[g].width,
                 goal[g].height);
        for (int k = 0; k < (g == 0 ? 3 : 2); k++) {
            struct target_spec spec = {"j", measure[g], bytes, text[g][k], true};
            if (!at) {
                targets[nt++] = record_target(b, &spec, false, why, 0, 0, VERDICT_NOT_REACHED);
                continue;
            }
            if (k == 0) {
                double over = at->s[J_ZERO].median - at->s[J_HANDOFF].median;
                targets[nt++] = record_target(b, &spec, true, NULL, at->s[J_ZERO].reps, over,
                                              over <= 5.0 ? VERDICT_MET : VERDICT_MISSED);
            } else if (k == 1) {
                double ratio = at->s[J_STAGED].median / at->s[J_ZERO].median;
                targets[nt++] = record_target(b, &spec, true, NULL, at->s[J_ZERO].reps, ratio,
                                              ratio >= goal[g].ratio ? VERDICT_MET : VERDICT_MISSED);
            } else if (at->flight[1][0].have && at->flight[1][IN_FLIGHT - 1].have) {
                double gain = at->flight[1][0].median / at->flight[1][IN_FLIGHT - 1].median;
                targets[nt++] = record_target(b, &spec, true, NULL, at->flight[1][IN_FLIGHT - 1].reps, gain,
                                              gain >= 1.5 ? VERDICT_MET : VERDICT_MISSED);
            } else {
                targets[nt++] = record_target(b, &spec, false, "device order did not run here", 0, 0,
                                              VERDICT_NOT_REACHED);
            }
        }
    }
}

void run_ffmpeg_frames(struct bench *b, bool quick, int reps)
{
    const int sizes[FRAME_SIZES][2] = {{b->cpu_device && quick ? 320 : 1920, b->cpu_device && quick ? 180 : 1080},
                                       {b->cpu_device && quick ? 640 : 3840, b->cpu_device && quick ? 360 : 2160}};
    double *samples = malloc(sizeof(double) * (size_t)reps * (J_COUNT + 1));
    struct ffmpeg_bench fb;

    memset(results, 0, sizeof results);
    nresults = 0;

    if (!samples)
        die("out of memory");
    if (!ffmpeg_open(b, &fb)) {
        record_skip("j", "FFmpeg frames", "%s", not_run);
        free(samples);
        return;
    }
    for (int s = 0; s < FRAME_SIZES; s++) {
        struct ffmpeg_run r;
        char label[32];
        snprintf(label, sizeof label, "(j) %dx%d", sizes[s][0], sizes[s][1]);
        watchdog("(j) FFmpeg frames", label);
        run_setup(b, &fb, &r, sizes[s][0], sizes[s][1]);
        /* Untimed: FFmpeg makes its staging buffers and the first
         * handoffs warm up. Each way that runs a kernel on the zero-copy
         * frame raises its luma byte 0 once. */
        rep_staged(b, &fb, &r);
        rep_zero_copy(b, &fb, &r);
        r.bumps[J_STAGED] = r.bumps[J_ZERO] = 1;
        for (int i = 0; i < reps; i++) {
            samples[J_STAGED * reps + i] = rep_staged(b, &fb, &r);
            samples[J_HANDOFF * reps + i] = rep_handoff(b, &fb, &r);
            samples[J_BY_HAND * reps + i] = rep_by_hand(b, &fb, &r);
            samples[J_ZERO * reps + i] = rep_zero_copy(b, &fb, &r);
            r.bumps[J_STAGED]++;
            r.bumps[J_ZERO] += 3;
            if (fb.sync[1]) {
                samples[J_DEVICE * reps + i] = rep_device(b, &fb, &r);
                r.bumps[J_ZERO]++;
            }
        }
        results[nresults].width = r.width;
        results[nresults].height = r.height;
        /* paired first: summarize() sorts the samples in place */
        results[nresults].lib = summarize_paired(samples + J_ZERO * reps, samples + J_BY_HAND * reps,
                                                 samples + J_COUNT * reps, reps);
        for (int w = 0; w < J_COUNT; w++)
            if (w != J_DEVICE || fb.sync[1])
                results[nresults].s[w] = summarize(samples + w * reps, reps, 1);
        run_in_flight(b, &fb, &r, reps, &results[nresults]);
        nresults++;
        run_unimport(&fb, &r);
        run_check(b, &r);
        run_teardown(&r);
    }
    alarm(0);
    free(samples);
    ffmpeg_close(&fb);
    record_ffmpeg_frames(b);
    if (*no_device)
        record_skip("j", "device order", "%s", no_device);
}

void print_ffmpeg_frames(void)
{
    printf("\n(j) FFmpeg's Vulkan frames into OpenCL (libclmem-av): NV12, a 1-work-item kernel on the luma plane;\n"
           "    microseconds a frame, median (min..max). One frame at a time: staged = av_hwframe_transfer_data +\n"
           "    clEnqueueWriteBuffer per plane, the kernel, clEnqueueReadBuffer + av_hwframe_transfer_data back;\n"
           "    (g) = the bridge's plane handoff of the same planes, no semaphore (clmem_bridge_acquire per plane,\n"
           "    release per plane, clFinish); by hand = host order in raw calls around the bridge's handoff\n"
           "    (vkWaitSemaphores, acquire_many, release_many, clFinish, vkSignalSemaphore per plane); host =\n"
           "    clmem_av_frame_acquire/_release; lib = the library's own share: the median of host minus by hand\n"
           "    within each rep (95%% interval); device = a device-order sync object, timed until FFmpeg's\n"
           "    semaphores are signalled\n");
    if (*not_run) {
        printf("  skipped: %s\n", not_run);
        return;
    }
    printf("%-10s %-12s %11s %9s %9s %9s %20s %9s %9s %9s  %s\n", "frame", "path", "staged", "(g)", "by hand", "host",
           "lib", "host-(g)", "staged/h", "device", "lib reads");
    for (int i = 0; i < nresults; i++) {
        const struct ffmpeg_result *x = &results[i];
        char name[32], dev[32] = "-", lib[48];
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        if (x->s[J_DEVICE].have)
            snprintf(dev, sizeof dev, "%.1f", x->s[J_DEVICE].median);
        snprintf(lib, sizeof lib, "%.1f (%.1f..%.1f)", x->lib.median, x->lib.lo, x->lib.hi);
        printf("%-10s %-12s %11.1f %9.1f %9.1f %9.1f %20s %9.1f %8.1fx %9s  %s\n", name, path_name,
               x->s[J_STAGED].median, x->s[J_HANDOFF].median, x->s[J_BY_HAND].median, x->s[J_ZERO].median, lib,
               x->s[J_ZERO].median - x->s[J_HANDOFF].median, x->s[J_STAGED].median / x->s[J_ZERO].median, dev,
               paired_reads(&x->lib));
    }
    printf("    host-(g): host order minus (g)'s handoff; staged/h: staged over host order (> 1: sharing wins);\n"
           "    lib reads: can't tell when lib's interval holds 0, few samples under %d reps\n",
           MIN_VERDICT_SAMPLES);
    printf("    host, min..max:");
    for (int i = 0; i < nresults; i++)
        printf(" %dx%d %.1f..%.1f;", results[i].width, results[i].height, results[i].s[J_ZERO].min,
               results[i].s[J_ZERO].max);
    printf(" fps host:");
    for (int i = 0; i < nresults; i++)
        printf(" %.0f", 1e6 / results[i].s[J_ZERO].median);
    printf("\n");
    if (*no_device)
        printf("    device order did not run: %s\n", no_device);

    printf("\n(j) frames in flight: a stream of F frames through D frames of the pool, FFmpeg uploading each\n"
           "    (av_hwframe_transfer_data), acquire, the kernel, release; microseconds a frame (the stream's time\n"
           "    / F, until FFmpeg's semaphores of every frame are signalled), median of the streams, frames per\n"
           "    second, and frames per second against D = 1 of the same order; \"upload\" is the stream's floor,\n"
           "    FFmpeg's uploads alone into the same 4 frames with no OpenCL, and its \"vs D=1\" the most any D\n"
           "    could gain)\n");
    printf("%-10s %-7s %3s %5s %26s %10s %8s\n", "frame", "sync", "D", "F", "us a frame", "fps", "vs D=1");
    for (int i = 0; i < nresults; i++) {
        const struct summary *u = &results[i].upload;
        const int base = results[i].flight[1][0].have ? 1 : 0; /* "vs D=1": device order's where it ran */
        char name[32], cell[64];
        snprintf(name, sizeof name, "%dx%d", results[i].width, results[i].height);
        for (int o = 0; o < 2; o++)
            for (int j = 0; j < IN_FLIGHT; j++) {
                const struct summary *y = &results[i].flight[o][j];
                if (!y->have)
                    continue;
                snprintf(cell, sizeof cell, "%.1f (%.1f..%.1f)", y->median, y->min, y->max);
                printf("%-10s %-7s %3d %5d %26s %10.1f %7.2fx\n", name, o ? "device" : "host", in_flight_d[j],
                       results[i].stream, cell, 1e6 / y->median, results[i].flight[o][0].median / y->median);
            }
        if (u->have && results[i].flight[base][0].have) {
            snprintf(cell, sizeof cell, "%.1f (%.1f..%.1f)", u->median, u->min, u->max);
            printf("%-10s %-7s %3d %5d %26s %10.1f %7.2fx\n", name, "upload", 4, results[i].stream, cell,
                   1e6 / u->median, results[i].flight[base][0].median / u->median);
        }
    }
    if (*no_device)
        printf("    device order did not run: %s\n", no_device);
    for (int t = 0; t < NTARGETS; t++)
        if (targets[t])
            print_target_line(targets[t]);
}
#else
void run_ffmpeg_frames(struct bench *b, bool quick, int reps)
{
    (void)b;
    (void)quick;
    (void)reps;
    record_skip("j", "FFmpeg frames", "%s", AV_BUILT);
}

void print_ffmpeg_frames(void)
{
    printf("\n(j) FFmpeg's Vulkan frames into OpenCL: skipped: %s\n", AV_BUILT);
}
#endif
