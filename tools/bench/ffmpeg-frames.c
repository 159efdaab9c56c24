/* clmem-bench: (j) FFmpeg's Vulkan frames into OpenCL, through libclmem-av.
 * NV12 frames of 1920x1080 and 3840x2160 (320x180 and 640x360 with --quick
 * on a CPU device), in a pool set up with clmem_av_frames_setup(), on a
 * Vulkan device of FFmpeg's own (av_hwdevice_ctx_create) that the bench's
 * OpenCL context pairs with. Two ways, interleaved rep by rep, each on a
 * frame of its own, each timed from "FFmpeg holds the frame" to "FFmpeg
 * holds it again, changed", with the same 1-work-item kernel on the luma
 * plane in between (the kernel is not what is measured: moving the frame
 * is):
 *   staged:    what users write today: av_hwframe_transfer_data into a
 *              software frame, clEnqueueWriteBuffer per plane into plain
 *              cl buffers, the kernel, a blocking clEnqueueReadBuffer per
 *              plane, av_hwframe_transfer_data back, and a wait for that
 *              upload (FFmpeg returns before its upload completed);
 *   zero-copy: the frame's planes imported once, untimed (as the frames of
 *              a pool are imported once and reused), then per rep
 *              clmem_av_frame_acquire, the kernel, clmem_av_frame_release
 *              (which returns once the release completed and FFmpeg's
 *              semaphores are signalled).
 * Frames per second are 1e6 over the median microseconds. The targets, set
 * on the H200: zero-copy at least 100x staged at 1080p and 200x at 4K. Checked
 * after the reps: each frame, downloaded, holds what was uploaded with luma
 * byte 0 raised once per rep. Built with libclmem-av only: without it, (j)
 * prints why it did not run. */
#include "bench.h"

#if HAVE_LIBAV
#include <clmem-av.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

enum way { J_STAGED, J_ZERO, J_COUNT };
static const char *const way_variant[J_COUNT] = {"baseline", "clmem"};
#define FRAME_SIZES 2

struct ffmpeg_result {
    int width, height;
    struct summary s[J_COUNT];
};
static struct ffmpeg_result results[FRAME_SIZES];
static int nresults;
static char not_run[1152];
static char path_name[32];
static const struct target *targets[FRAME_SIZES];

static const char *bump_source = "__kernel void bump(__global uchar *luma) { luma[0] = (uchar)(luma[0] + 1); }\n";

/* What both ways share: FFmpeg's device, the bridge on it, the kernel. */
struct ffmpeg_bench {
    AVBufferRef *device;
    const AVVulkanDeviceContext *vk;
    PFN_vkWaitSemaphores wait_semaphores;
    clmem_bridge *bridge;
    cl_program program;
    cl_kernel kernel;
};

/* One frame size. */
struct ffmpeg_run {
    int width, height;
    AVBufferRef *frames;
    AVFrame *hw[J_COUNT];
    AVFrame *sw;       /* the staged way's software frame, and the upload's source */
    AVFrame *pattern;  /* what both frames were uploaded with */
    cl_mem plain[2];   /* the staged way's plane buffers */
    size_t plane_bytes[2];
    clmem_av_frame_planes planes; /* the zero-copy way's, imported once */
    int bumps;         /* kernels run on each frame so far */
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
    if (!fb->wait_semaphores)
        die("(j): FFmpeg's VkDevice returns no vkWaitSemaphores");
    fb->program = clCreateProgramWithSource(b->context, 1, &bump_source, NULL, &err);
    check_cl(err, "clCreateProgramWithSource((j))");
    check_cl(clBuildProgram(fb->program, 1, &b->device, "", NULL, NULL), "clBuildProgram((j))");
    fb->kernel = clCreateKernel(fb->program, "bump", &err);
    check_cl(err, "clCreateKernel((j))");
    return true;
}

static void ffmpeg_close(struct ffmpeg_bench *fb)
{
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
    for (int w = 0; w < J_COUNT; w++) {
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

/* Each frame, downloaded, is the pattern with luma byte 0 raised once a
 * kernel. */
static void run_check(struct bench *b, struct ffmpeg_run *r)
{
    static const char *const way_label[J_COUNT] = {"staged", "zero-copy"};
    AVFrame *back = sw_frame(r->width, r->height);

    for (int w = 0; w < J_COUNT; w++) {
        long wrong = 0;
        av_check(av_hwframe_transfer_data(back, r->hw[w], 0), "av_hwframe_transfer_data((j) check)");
        for (int y = 0; y < r->height; y++) {
            const uint8_t *got = back->data[0] + (size_t)y * back->linesize[0];
            const uint8_t *want = r->pattern->data[0] + (size_t)y * r->pattern->linesize[0];
            for (int x = 0; x < r->width; x++)
                wrong += got[x] != (uint8_t)(want[x] + (x == 0 && y == 0 ? r->bumps : 0));
        }
        for (int y = 0; y < r->height / 2; y++)
            wrong += memcmp(back->data[1] + (size_t)y * back->linesize[1],
                            r->pattern->data[1] + (size_t)y * r->pattern->linesize[1], (size_t)r->width) != 0;
        if (wrong)
            fail(b, "(j) %dx%d %s: %ld luma bytes or chroma rows differ from the upload and %d kernels", r->width,
                 r->height, way_label[w], wrong, r->bumps);
    }
    av_frame_free(&back);
}

/* The zero-copy frame's planes go first: on the host-mapped path the import
 * holds the memory's one mapping, which FFmpeg's download of a linear frame
 * needs, so the check comes after the imports' teardowns ended. */
static void run_unimport(struct ffmpeg_bench *fb, struct ffmpeg_run *r)
{
    clmem_av_frame_planes_unref(&r->planes);
    check_clmem(clmem_bridge_finish(fb->bridge, FINISH_TIMEOUT_NS), "clmem_bridge_finish((j))");
}

static void run_teardown(struct ffmpeg_run *r)
{
    for (int p = 0; p < 2; p++)
        clReleaseMemObject(r->plain[p]);
    for (int w = 0; w < J_COUNT; w++)
        av_frame_free(&r->hw[w]);
    av_frame_free(&r->sw);
    av_frame_free(&r->pattern);
    av_buffer_unref(&r->frames);
}

/* The rows, ffmpeg_nv12_WxH (size_bytes: the frame's NV12 bytes; one
 * frame a rep: batch 1), and the targets at 1920x1080 and 3840x2160. */
static void record_ffmpeg_frames(struct bench *b)
{
    static const struct {
        int width, height;
        double ratio;
        const char *text;
    } goal[FRAME_SIZES] = {{1920, 1080, 100, "zero-copy at least 100x staged at 1920x1080"},
                           {3840, 2160, 200, "zero-copy at least 200x staged at 3840x2160"}};
    for (int i = 0; i < nresults; i++) {
        char measure[64];
        snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d", results[i].width, results[i].height);
        for (int w = 0; w < J_COUNT; w++)
            record_row("j", (uint64_t)results[i].width * (uint64_t)results[i].height * 3 / 2, measure, way_variant[w],
                       &results[i].s[w], 1, 0);
    }
    for (int g = 0; g < FRAME_SIZES; g++) {
        char measure[64], why[128];
        struct target_spec spec = {"j", measure, (uint64_t)goal[g].width * (uint64_t)goal[g].height * 3 / 2,
                                   goal[g].text};
        const struct ffmpeg_result *at = NULL;
        snprintf(measure, sizeof measure, "ffmpeg_nv12_%dx%d", goal[g].width, goal[g].height);
        for (int i = 0; i < nresults; i++)
            if (results[i].width == goal[g].width && results[i].height == goal[g].height)
                at = &results[i];
        if (at) {
            double ratio = at->s[J_STAGED].median / at->s[J_ZERO].median;
            targets[g] = record_target(b, &spec, true, NULL, at->s[J_ZERO].reps, ratio,
                                       ratio >= goal[g].ratio ? VERDICT_MET : VERDICT_MISSED);
        } else {
            snprintf(why, sizeof why, "the frames here are smaller; the target is at %dx%d", goal[g].width,
                     goal[g].height);
            targets[g] = record_target(b, &spec, false, why, 0, 0, VERDICT_NOT_REACHED);
        }
    }
}

void run_ffmpeg_frames(struct bench *b, bool quick, int reps)
{
    const int sizes[FRAME_SIZES][2] = {{b->cpu_device && quick ? 320 : 1920, b->cpu_device && quick ? 180 : 1080},
                                       {b->cpu_device && quick ? 640 : 3840, b->cpu_device && quick ? 360 : 2160}};
    double *samples = malloc(sizeof(double) * (size_t)reps * J_COUNT);
    struct ffmpeg_bench fb;

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
         * handoffs warm up. */
        rep_staged(b, &fb, &r);
        rep_zero_copy(b, &fb, &r);
        r.bumps = 1;
        for (int i = 0; i < reps; i++) {
            samples[J_STAGED * reps + i] = rep_staged(b, &fb, &r);
            samples[J_ZERO * reps + i] = rep_zero_copy(b, &fb, &r);
            r.bumps++;
        }
        results[nresults].width = r.width;
        results[nresults].height = r.height;
        for (int w = 0; w < J_COUNT; w++)
            results[nresults].s[w] = summarize(samples + w * reps, reps, 1);
        nresults++;
        run_unimport(&fb, &r);
        run_check(b, &r);
        run_teardown(&r);
    }
    alarm(0);
    free(samples);
    ffmpeg_close(&fb);
    record_ffmpeg_frames(b);
}

void print_ffmpeg_frames(void)
{
    printf("\n(j) FFmpeg's Vulkan frames into OpenCL (libclmem-av): NV12, staged = av_hwframe_transfer_data +\n"
           "    clEnqueueWriteBuffer per plane, a kernel, clEnqueueReadBuffer + av_hwframe_transfer_data back;\n"
           "    zero-copy = clmem_av_frame_acquire, the kernel, clmem_av_frame_release; microseconds a frame,\n"
           "    median and min..max, and frames per second\n");
    if (*not_run) {
        printf("  skipped: %s\n", not_run);
        return;
    }
    printf("%-10s %-12s %26s %10s %26s %10s %9s\n", "frame", "path", "staged", "fps", "zero-copy", "fps", "ratio");
    for (int i = 0; i < nresults; i++) {
        const struct ffmpeg_result *x = &results[i];
        char name[32], cell[J_COUNT][64];
        snprintf(name, sizeof name, "%dx%d", x->width, x->height);
        for (int w = 0; w < J_COUNT; w++)
            snprintf(cell[w], sizeof cell[w], "%.1f (%.1f..%.1f)", x->s[w].median, x->s[w].min, x->s[w].max);
        printf("%-10s %-12s %26s %10.1f %26s %10.1f %8.1fx\n", name, path_name, cell[J_STAGED],
               1e6 / x->s[J_STAGED].median, cell[J_ZERO], 1e6 / x->s[J_ZERO].median,
               x->s[J_STAGED].median / x->s[J_ZERO].median);
    }
    for (int g = 0; g < FRAME_SIZES; g++)
        if (targets[g])
            print_target_line(targets[g]);
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
