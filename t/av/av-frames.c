/* SPDX-License-Identifier: MIT */
/* libclmem-av: FFmpeg's own Vulkan frames into OpenCL.
 *
 * On FFmpeg's Vulkan device (lavapipe on the CPU machines, the GPU on the
 * H200): frames pools set up by clmem_av_frames_setup() for NV12, P010,
 * RGBA and BGRA; a frame uploaded with av_hwframe_transfer_data, imported
 * plane by plane, changed by an OpenCL kernel through each plane's row
 * pitch between clmem_av_frame_acquire and _release, and downloaded with
 * av_hwframe_transfer_data, which must see OpenCL's writes; the timeline
 * semaphores (acquire waits for work another thread signals later,
 * release waits for a kernel held behind a user event another thread opens
 * later); the frame's reference held while OpenCL uses it, a frame dropped
 * by FFmpeg and a frames context torn down while imported; a re-import is
 * a cache hit; bad input, with nothing leaked.
 *
 * Skips, naming why, only where FFmpeg cannot make a Vulkan device. Built
 * twice: plain (host-mapped on the CPU machines) and with
 * t/lib/fake-nvidia-import.c (t/av/fakefd-av-frames, the opaque-fd path on the
 * CPU machines). */
/* Tests the deprecated clmem_av_frame_acquire/_release. */
#define CLMEM_DISABLE_DEPRECATION_WARNINGS
#include "t/lib/av-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define W 64
#define H 32

static struct av_fixture fx; /* FFmpeg's device, OpenCL, the bridge, the kernel: main() opens it */
static AVBufferRef *device_ref;
static AVVulkanDeviceContext *vk;
static struct cl_fixture cl;
static clmem_bridge *bridge;
static clmem_bridge_path path;

/* The error record's sentence after a failure, for a test point's text. */
static const char *why_not(clmem_status s)
{
    return s == CLMEM_OK ? "CLMEM_OK" : clmem_error_message();
}

static PFN_vkVoidFunction device_proc(const char *name)
{
    return av_fixture_device_proc(&fx, name);
}

static uint64_t counter(VkSemaphore sem)
{
    return av_fixture_counter(&fx, sem);
}

/* A Vulkan frames context of W x H frames of `sw`, not initialised. */
static AVBufferRef *frames_alloc(AVBufferRef *dev, enum AVPixelFormat sw)
{
    AVBufferRef *ref = av_hwframe_ctx_alloc(dev);
    AVHWFramesContext *fc;

    if (!ref)
        tap_bail("av_hwframe_ctx_alloc failed");
    fc = (AVHWFramesContext *)ref->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = W;
    fc->height = H;
    return ref;
}

/* A frames context of W x H frames; set up by clmem_av_frames_setup()
 * when `setup`, with free_cb as its free callback (set before, as
 * clmem-av.h asks). NULL, where may_be_unsupported, when setup says the
 * device cannot make the format's frames linear: the caller skips. */
static AVBufferRef *frames_new_freed_by(AVBufferRef *dev, enum AVPixelFormat sw, bool setup,
                                        void (*free_cb)(AVHWFramesContext *), bool may_be_unsupported)
{
    AVBufferRef *ref = frames_alloc(dev, sw);
    AVHWFramesContext *fc = (AVHWFramesContext *)ref->data;
    clmem_status s;
    int r;

    fc->free = free_cb;
    if (setup && (s = clmem_av_frames_setup(ref)) == CLMEM_ERR_UNSUPPORTED && may_be_unsupported) {
        av_buffer_unref(&ref);
        return NULL; /* the device lacks linear images of the format: the caller skips, naming it */
    }
    if (setup && s != CLMEM_OK)
        tap_bail("clmem_av_frames_setup(%s): %s", av_get_pix_fmt_name(sw), clmem_error_message());
    if ((r = av_hwframe_ctx_init(ref)) < 0)
        tap_bail("av_hwframe_ctx_init(%s, %s): %d", av_get_pix_fmt_name(sw), setup ? "set up" : "FFmpeg's default",
                 r);
    return ref;
}

static AVBufferRef *frames_new(AVBufferRef *dev, enum AVPixelFormat sw, bool setup)
{
    return frames_new_freed_by(dev, sw, setup, NULL, false);
}

/* A frame of FFmpeg's own pool (no clmem_av_frames_setup): of its default
 * tiling, or else, where linear_too, a linear one. FFmpeg 5.1 cannot make
 * some on a GPU: its linear frames need host-visible memory (the H200 has
 * none for linear images: "No memory type found for flags 0x2"), its
 * default tiling a DRM modifier for the format. NULL then, saying why. */
static AVFrame *ffmpeg_pool_frame(AVBufferRef *dev, enum AVPixelFormat sw, bool linear_too, AVBufferRef **frames_out,
                                  char *why, size_t len)
{
    size_t at = 0;

    for (int linear = 0; linear < (linear_too ? 2 : 1); linear++) {
        AVBufferRef *ref = frames_alloc(dev, sw);
        AVFrame *f = av_frame_alloc();
        const char *step = "av_hwframe_ctx_init";
        int r;

        if (linear)
            ((AVVulkanFramesContext *)((AVHWFramesContext *)ref->data)->hwctx)->tiling = VK_IMAGE_TILING_LINEAR;
        if ((r = av_hwframe_ctx_init(ref)) >= 0) {
            step = "av_hwframe_get_buffer";
            r = av_hwframe_get_buffer(ref, f, 0);
        }
        if (r >= 0) {
            *frames_out = ref;
            return f;
        }
        at += (size_t)snprintf(why + at, at < len ? len - at : 0, "%s%s tiling: %s returned %d", linear ? "; " : "",
                               linear ? "linear" : "default", step, r);
        av_frame_free(&f);
        av_buffer_unref(&ref);
    }
    *frames_out = NULL;
    return NULL;
}

/* A frame of FFmpeg's own pool with linear tiling and host-visible memory
 * (FFmpeg's linear frames are), or NULL saying why FFmpeg made none. */
static AVFrame *ffmpeg_pool_linear_frame(enum AVPixelFormat sw, AVBufferRef **frames_out, char *why, size_t len)
{
    AVBufferRef *ref = frames_alloc(device_ref, sw);
    AVFrame *f = av_frame_alloc();
    int r;

    ((AVVulkanFramesContext *)((AVHWFramesContext *)ref->data)->hwctx)->tiling = VK_IMAGE_TILING_LINEAR;
    if ((r = av_hwframe_ctx_init(ref)) < 0 || (r = av_hwframe_get_buffer(ref, f, 0)) < 0) {
        snprintf(why, len, "FFmpeg makes no linear %s frame here (%d)", av_get_pix_fmt_name(sw), r);
    } else if (((AVVkFrame *)f->data[0])->tiling != VK_IMAGE_TILING_LINEAR ||
               !(((AVVkFrame *)f->data[0])->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
        snprintf(why, len, "FFmpeg's linear %s frame here is not host-visible", av_get_pix_fmt_name(sw));
    } else {
        *frames_out = ref;
        return f;
    }
    av_frame_free(&f);
    av_buffer_unref(&ref);
    *frames_out = NULL;
    return NULL;
}

/* A software frame of `sw`, W x H, with a pattern that differs by plane,
 * row, byte and salt. */
static AVFrame *sw_pattern(enum AVPixelFormat sw, unsigned salt)
{
    return av_fixture_pattern(sw, W, H, salt);
}

/* ------------------------------------------------------------ round trip */

/* av_hwframe_ctx_init's answer for a frames context of FFmpeg's own
 * defaults (no setup): negative where FFmpeg cannot make the format's
 * frames on this device at all. */
static int ffmpeg_can_make(enum AVPixelFormat sw)
{
    AVBufferRef *ref = frames_alloc(device_ref, sw);
    int r = av_hwframe_ctx_init(ref);

    av_buffer_unref(&ref);
    return r;
}

/* The TAP points of one round trip, skipped together where the device
 * cannot make the format's frames (linear). */
#define ROUND_TRIP_POINTS 10

static void round_trip(enum AVPixelFormat sw, uint32_t want_planes)
{
    const char *name = av_get_pix_fmt_name(sw);
    int ffmpeg_own = ffmpeg_can_make(sw);
    AVBufferRef *frames = ffmpeg_own < 0 ? NULL : frames_new_freed_by(device_ref, sw, true, NULL, true);
    AVFrame *hw, *up, *down;
    AVVkFrame *vkf;
    clmem_av_frame_planes planes;
    uint64_t before[4] = {0};
    bool pitch_ok = true, sem_ok = true;
    char why[160] = "";
    clmem_status s;
    int r;

    if (!frames) {
        char unsupported[256];
        if (ffmpeg_own < 0)
            snprintf(unsupported, sizeof unsupported,
                     "FFmpeg cannot make %s frames on this Vulkan device at all: av_hwframe_ctx_init of its own "
                     "default pool returned %d (on the H200: \"There are no supported modifiers for the given "
                     "sw_format\", whatever the tiling)",
                     name, ffmpeg_own);
        else
            snprintf(unsupported, sizeof unsupported, "%s", clmem_error_message());
        for (int i = 0; i < ROUND_TRIP_POINTS; i++)
            tap_skip(unsupported, "%s: round trip", name);
        return;
    }
    hw = av_fixture_frame(frames);
    up = sw_pattern(sw, 1);
    down = sw_pattern(sw, 2);
    vkf = (AVVkFrame *)hw->data[0];
    if ((r = av_hwframe_transfer_data(hw, up, 0)) < 0)
        tap_bail("%s: upload with av_hwframe_transfer_data: %d", name, r);
    tap_ok(vkf->tiling == VK_IMAGE_TILING_LINEAR,
           "%s: clmem_av_frames_setup made the pool's frames linear (tiling %d)", name, (int)vkf->tiling);
    {
        /* libclmem-av's pool: a VkDeviceMemory per plane, the image at its
         * start (each a dedicated allocation: clmem-av.h says why), and
         * not FFmpeg's pool (whose buffers' opaque is the frames context). */
        bool own = av_buffer_pool_buffer_get_opaque(hw->buf[0]) != (void *)frames->data;
        for (uint32_t p = 0; p < want_planes; p++)
            own = own && vkf->mem[p] && vkf->offset[p] == 0 && (p == 0 || vkf->mem[p] != vkf->mem[p - 1]);
        tap_ok(own, "%s: the frame is libclmem-av's, each plane in memory of its own", name);
    }

    s = clmem_av_frame_import(bridge, hw, path, cl.queue, CL_MEM_READ_WRITE, &planes);
    if (!tap_ok(s == CLMEM_OK && planes.count == want_planes, "%s: clmem_av_frame_import -> %u planes on %s",
                name, want_planes, clmem_bridge_path_name(path)))
        tap_bail("%s: %s", name, clmem_error_message());
    for (uint32_t p = 0; p < planes.count; p++) {
        uint32_t texel = 0;
        clmem_bridge_image_plane_format(planes.formats[p], 0, NULL, &texel);
        pitch_ok = pitch_ok && clmem_handle_row_pitch(planes.planes[p]) >= texel * planes.widths[p] &&
                   planes.widths[p] * texel == av_fixture_plane_row_bytes(up, (int)p) &&
                   planes.heights[p] == av_fixture_plane_rows(up, (int)p);
        before[p] = vkf->sem_value[p];
    }
    tap_ok(pitch_ok, "%s: each plane's row pitch holds a row of its width, and its extent is the plane's", name);

    s = clmem_av_frame_acquire(bridge, hw, &planes, cl.queue, UINT64_MAX, NULL);
    tap_ok(s == CLMEM_OK, "%s: clmem_av_frame_acquire (%s)", name, why_not(s));
    av_fixture_invert(&fx, &planes, 0, NULL, NULL);
    s = clmem_av_frame_release(bridge, hw, &planes, cl.queue, 0, NULL);
    tap_ok(s == CLMEM_OK, "%s: clmem_av_frame_release (%s)", name, why_not(s));
    for (uint32_t p = 0; p < planes.count; p++)
        sem_ok = sem_ok && vkf->sem_value[p] == before[p] + 1 && counter(vkf->sem[p]) == before[p] + 1;
    tap_ok(sem_ok, "%s: release signalled each plane's timeline semaphore at sem_value + 1 and stored it", name);

    /* FFmpeg downloads the frame while its planes are still imported: it
     * never maps a frame of libclmem-av's pool (which hides HOST_VISIBLE),
     * so the host-mapped path's mapping is never doubled. */
    if ((r = av_hwframe_transfer_data(down, hw, 0)) < 0)
        tap_bail("%s: download with av_hwframe_transfer_data: %d", name, r);
    tap_ok(av_fixture_inverted(up, down, why, sizeof why),
           "%s: FFmpeg's download, the planes still imported, sees the kernel's writes %s", name, why);
    tap_ok(!(vkf->flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT),
           "%s: the frame's flags do not show HOST_VISIBLE to FFmpeg (flags 0x%x)", name, (unsigned)vkf->flags);
    clmem_av_frame_planes_unref(&planes);
    s = clmem_bridge_finish(bridge, 10000000000ull);
    tap_ok(s == CLMEM_OK, "%s: the imports' teardowns are done (%s)", name, why_not(s));

    av_frame_free(&up);
    av_frame_free(&down);
    av_frame_free(&hw);
    av_buffer_unref(&frames);
}

/* ------------------------------------------------------------ sync */

struct later {
    VkSemaphore sem;
    uint64_t value;
    cl_event user;
    uint64_t counter_before; /* the semaphore's value just before the event opened */
    atomic_bool done;
};

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void *signal_later(void *arg)
{
    struct later *l = arg;
    PFN_vkSignalSemaphore sig = (PFN_vkSignalSemaphore)device_proc("vkSignalSemaphore");
    VkSemaphoreSignalInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = l->sem,
                                  .value = l->value};
    sleep_ms(200);
    atomic_store(&l->done, true);
    sig(vk->act_dev, &info);
    return NULL;
}

static void *open_later(void *arg)
{
    struct later *l = arg;
    sleep_ms(200);
    l->counter_before = counter(l->sem);
    atomic_store(&l->done, true);
    clSetUserEventStatus(l->user, CL_COMPLETE);
    return NULL;
}

static void sync_order(void)
{
    AVBufferRef *frames = frames_new(device_ref, AV_PIX_FMT_RGBA, true);
    AVFrame *hw = av_fixture_frame(frames);
    AVVkFrame *vkf = (AVVkFrame *)hw->data[0];
    clmem_av_frame_planes planes;
    struct later l = {0};
    pthread_t t;
    cl_event kernel_done = NULL;
    uint64_t v;
    clmem_status s;

    if (clmem_av_frame_import(bridge, hw, path, cl.queue, CL_MEM_READ_WRITE, &planes) != CLMEM_OK)
        tap_bail("sync: import: %s", clmem_error_message());

    /* As if FFmpeg had submitted work that signals sem_value + 1 later. */
    v = ++vkf->sem_value[0];
    s = clmem_av_frame_acquire(bridge, hw, &planes, cl.queue, 0, NULL);
    tap_ok(s == CLMEM_ERR_TIMEOUT, "sync: acquire with timeout 0 before FFmpeg's work signalled -> "
                                   "CLMEM_ERR_TIMEOUT (%s)", clmem_status_name(s));
    l.sem = vkf->sem[0];
    l.value = v;
    pthread_create(&t, NULL, signal_later, &l);
    s = clmem_av_frame_acquire(bridge, hw, &planes, cl.queue, UINT64_MAX, NULL);
    tap_ok(s == CLMEM_OK && atomic_load(&l.done),
           "sync: acquire returned only after another thread signalled sem_value, 200 ms later (%s)", why_not(s));
    pthread_join(t, NULL);

    /* A kernel held behind a user event another thread opens later: the
     * release must not signal FFmpeg before it ran. */
    memset(&l, 0, sizeof l);
    l.sem = vkf->sem[0];
    l.user = clCreateUserEvent(cl.context, NULL);
    av_fixture_invert(&fx, &planes, 1, &l.user, &kernel_done);
    pthread_create(&t, NULL, open_later, &l);
    s = clmem_av_frame_release(bridge, hw, &planes, cl.queue, 0, NULL);
    {
        cl_int st = -1;
        clGetEventInfo(kernel_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        tap_ok(s == CLMEM_OK && atomic_load(&l.done) && st == CL_COMPLETE && l.counter_before == v &&
                   counter(vkf->sem[0]) == v + 1 && vkf->sem_value[0] == v + 1,
               "sync: release returned after the held kernel completed; the semaphore was still at %llu while it "
               "was held and is at %llu now (%s)",
               (unsigned long long)l.counter_before, (unsigned long long)counter(vkf->sem[0]), why_not(s));
    }
    pthread_join(t, NULL);
    clReleaseEvent(kernel_done);
    clReleaseEvent(l.user);

    clmem_av_frame_planes_unref(&planes);
    av_frame_free(&hw);
    av_buffer_unref(&frames);
    clmem_bridge_finish(bridge, 10000000000ull);
}

/* ------------------------------------------------------------ lifetime */

static atomic_bool frames_freed;

static void frames_free_cb(AVHWFramesContext *fc)
{
    (void)fc;
    atomic_store(&frames_freed, true);
}

static void *open_event(void *arg)
{
    sleep_ms(200);
    clSetUserEventStatus((cl_event)arg, CL_COMPLETE);
    return NULL;
}

static void lifetime(void)
{
    AVBufferRef *frames = frames_new_freed_by(device_ref, AV_PIX_FMT_NV12, true, frames_free_cb, false);
    AVFrame *a = av_fixture_frame(frames), *b2;
    AVVkFrame *pa = (AVVkFrame *)a->data[0];
    clmem_av_frame_planes planes, again;
    uint64_t before, before_counter;
    cl_event user;
    pthread_t t;
    clmem_status s;

    if (clmem_av_frame_import(bridge, a, path, cl.queue, CL_MEM_READ_WRITE, &planes) != CLMEM_OK)
        tap_bail("lifetime: import: %s", clmem_error_message());

    /* Re-import while imported: the bridge's cache. */
    s = clmem_av_frame_import(bridge, a, path, cl.queue, CL_MEM_READ_WRITE, &again);
    tap_ok(s == CLMEM_OK && clmem_handle_mem(again.planes[0]) == clmem_handle_mem(planes.planes[0]) &&
               clmem_handle_mem(again.planes[1]) == clmem_handle_mem(planes.planes[1]),
           "lifetime: importing the frame again is a cache hit (the same cl_mem per plane)");
    clmem_av_frame_planes_unref(&again);

    /* OpenCL still uses the frame (a kernel behind a user event) when the
     * caller drops its planes and FFmpeg's frame. */
    if (clmem_av_frame_acquire(bridge, a, &planes, cl.queue, UINT64_MAX, NULL) != CLMEM_OK)
        tap_bail("lifetime: acquire: %s", clmem_error_message());
    user = clCreateUserEvent(cl.context, NULL);
    av_fixture_invert(&fx, &planes, 1, &user, NULL);
    clFlush(cl.queue);
    /* The planes dropped while acquired: allowed, but no release means
     * FFmpeg's semaphores are not signalled (clmem-av.h). */
    before = pa->sem_value[0];
    clmem_av_frame_planes_unref(&planes);
    av_frame_free(&a);
    b2 = av_fixture_frame(frames);
    tap_ok((AVVkFrame *)b2->data[0] != pa,
           "lifetime: a frame FFmpeg dropped while OpenCL uses it is not back in the pool (the next frame is "
           "another)");
    av_frame_free(&b2);

    before_counter = counter(pa->sem[0]);

    /* And the frames context torn down meanwhile. */
    atomic_store(&frames_freed, false);
    av_buffer_unref(&frames);
    tap_ok(!atomic_load(&frames_freed), "lifetime: the frames context outlives its unref while a frame is imported");

    pthread_create(&t, NULL, open_event, user);
    s = clmem_bridge_finish(bridge, 10000000000ull);
    pthread_join(t, NULL);
    tap_ok(s == CLMEM_OK && atomic_load(&frames_freed),
           "lifetime: once the held kernel ran and the teardowns were done, the frame went back and the frames "
           "context was freed (%s)",
           why_not(s));
    tap_ok(before_counter == before,
           "lifetime: planes dropped while acquired and the frame dropped: no release, so FFmpeg's semaphore was "
           "not signalled (counter %llu, sem_value %llu, when they were dropped), and the teardown handed the "
           "memory back",
           (unsigned long long)before_counter, (unsigned long long)before);
    clReleaseEvent(user);
}

/* FFmpeg's device context dropped while a frame of it is imported: the
 * imports hold the frame, its frames context holds the device. A probe
 * reference of ours counts who else holds it. */
static void device_lifetime(void)
{
    AVBufferRef *dev = NULL, *probe, *frames;
    AVFrame *hw;
    clmem_bridge *b2 = NULL;
    clmem_av_frame_planes planes;
    cl_event user;
    pthread_t t;
    int held_while_imported, held_after;
    clmem_status s;

    if (av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0) < 0)
        tap_bail("device lifetime: a second FFmpeg Vulkan device");
    probe = av_buffer_ref(dev);
    if (clmem_av_bridge_create(dev, cl.context, 0, &b2) != CLMEM_OK)
        tap_bail("device lifetime: bridge: %s", clmem_error_message());
    frames = frames_new(dev, AV_PIX_FMT_RGBA, true);
    hw = av_fixture_frame(frames);
    if (clmem_av_frame_import(b2, hw, CLMEM_BRIDGE_PATH_BEST, cl.queue, CL_MEM_READ_WRITE, &planes) != CLMEM_OK ||
        clmem_av_frame_acquire(b2, hw, &planes, cl.queue, UINT64_MAX, NULL) != CLMEM_OK)
        tap_bail("device lifetime: import or acquire: %s", clmem_error_message());
    user = clCreateUserEvent(cl.context, NULL);
    av_fixture_invert(&fx, &planes, 1, &user, NULL);
    clFlush(cl.queue);
    pthread_create(&t, NULL, open_event, user);
    s = clmem_av_frame_release(b2, hw, &planes, cl.queue, 0, NULL);
    pthread_join(t, NULL);
    /* Everything of the caller's dropped but the bridge: planes, frame,
     * frames context, device. A second kernel keeps the imports alive. */
    clReleaseEvent(user);
    user = clCreateUserEvent(cl.context, NULL);
    clEnqueueMarkerWithWaitList(cl.queue, 1, &user, NULL);
    clFlush(cl.queue);
    clmem_av_frame_planes_unref(&planes);
    av_frame_free(&hw);
    av_buffer_unref(&frames);
    av_buffer_unref(&dev);
    held_while_imported = av_buffer_get_ref_count(probe);
    clSetUserEventStatus(user, CL_COMPLETE);
    if (s == CLMEM_OK)
        s = clmem_bridge_finish(b2, 10000000000ull);
    held_after = av_buffer_get_ref_count(probe);
    tap_ok(s == CLMEM_OK && held_while_imported > 1 && held_after == 1,
           "device lifetime: FFmpeg's device context dropped while a frame was imported lives on (held by %d "
           "references besides ours), and once the teardowns were done only ours is left (%d) (%s)",
           held_while_imported - 1, held_after, why_not(s));
    clReleaseEvent(user);
    clmem_bridge_unref(b2);
    av_buffer_unref(&probe); /* the device goes now, after the bridge */
}

/* ------------------------------------------------------------ bad input */

static bool zeroed(const clmem_av_frame_planes *p)
{
    static const clmem_av_frame_planes zero;
    return memcmp(p, &zero, sizeof zero) == 0;
}

static void expect(clmem_status got, clmem_status want, const char *needle, const clmem_av_frame_planes *p,
                   const char *what)
{
    const char *msg = clmem_error_message();
    tap_ok(got == want && (!needle || strstr(msg, needle)) && (!p || zeroed(p)),
           "bad input: %s -> %s%s%s%s, nothing returned (%s: %s)", what, clmem_status_name(want),
           needle ? ", naming \"" : "", needle ? needle : "", needle ? "\"" : "", clmem_status_name(got), msg);
}

static void bad_input(void)
{
    struct fd_snapshot fds;
    clmem_av_frame_planes planes;
    AVFrame *sw = sw_pattern(AV_PIX_FMT_NV12, 3);
    AVBufferRef *frames, *other_dev = NULL, *plain_dev;
    AVFrame *hw;
    clmem_bridge *out = (clmem_bridge *)1;
    char why[256];
    int r;

    fd_snapshot_take(&fds);
    memset(&planes, 0x55, sizeof planes);
    expect(clmem_av_frame_import(bridge, sw, path, cl.queue, 0, &planes), CLMEM_ERR_INVALID_VALUE, "nv12", &planes,
           "a software NV12 frame");
    expect(clmem_av_frame_import(NULL, sw, path, cl.queue, 0, &planes), CLMEM_ERR_NULL_POINTER, NULL, &planes,
           "a NULL bridge");
    expect(clmem_av_bridge_create(NULL, cl.context, 0, &out), CLMEM_ERR_NULL_POINTER, NULL, NULL,
           "clmem_av_bridge_create of a NULL device");
    tap_ok(out == NULL, "bad input: clmem_av_bridge_create's *out is NULL on error");
    expect(clmem_av_frames_setup(NULL), CLMEM_ERR_NULL_POINTER, NULL, NULL, "clmem_av_frames_setup(NULL)");

    /* An unsupported software format; and setup after init. */
    {
        AVBufferRef *ref = frames_alloc(device_ref, AV_PIX_FMT_YUV444P);
        AVHWFramesContext *fc = (AVHWFramesContext *)ref->data;
        expect(clmem_av_frames_setup(ref), CLMEM_ERR_UNSUPPORTED, "yuv444p", NULL,
               "clmem_av_frames_setup of a yuv444p pool");
        tap_ok(((AVVulkanFramesContext *)fc->hwctx)->tiling == VK_IMAGE_TILING_OPTIMAL &&
                   !((AVVulkanFramesContext *)fc->hwctx)->create_pnext,
               "bad input: the refused frames context is unchanged");
        av_buffer_unref(&ref);
        /* The format is checked before the tiling, so a frame of either
         * tiling is refused for its format. */
        if ((hw = ffmpeg_pool_frame(device_ref, AV_PIX_FMT_YUV444P, true, &ref, why, sizeof why)))
            expect(clmem_av_frame_import(bridge, hw, path, cl.queue, 0, &planes), CLMEM_ERR_UNSUPPORTED, "yuv444p",
                   &planes, "a yuv444p frame");
        else
            tap_skip(why, "bad input: a yuv444p frame (FFmpeg makes none on this device)");
        av_frame_free(&hw);
        av_buffer_unref(&ref);
        ref = frames_new(device_ref, AV_PIX_FMT_NV12, true);
        expect(clmem_av_frames_setup(ref), CLMEM_ERR_INVALID_VALUE, "already has a pool", NULL,
               "clmem_av_frames_setup after av_hwframe_ctx_init");
        av_buffer_unref(&ref);
    }

    /* Tilings libclmem-av's pool does not make; and a free callback
     * replaced after setup, which would leave the pool unfreed. */
    {
        AVBufferRef *ref = frames_alloc(device_ref, AV_PIX_FMT_NV12);
        AVHWFramesContext *fc = (AVHWFramesContext *)ref->data;
        AVVulkanFramesContext *vfc = fc->hwctx;
        vfc->tiling = VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT;
        expect(clmem_av_frames_setup(ref), CLMEM_ERR_INVALID_VALUE, "allocates linear frames itself", NULL,
               "clmem_av_frames_setup of a frames context asking for DRM format modifiers");
        tap_ok(vfc->tiling == VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT && !fc->pool && !fc->free,
               "bad input: the refused frames context is unchanged (tiling, no pool, no free callback)");
        av_buffer_unref(&ref);
    }
    frames = frames_new(device_ref, AV_PIX_FMT_NV12, true);
    {
        AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
        void (*pool_free)(AVHWFramesContext *) = fc->free;
        hw = av_fixture_frame(frames);
        fc->free = frames_free_cb;
        expect(clmem_av_frame_import(bridge, hw, path, cl.queue, 0, &planes), CLMEM_ERR_INVALID_VALUE,
               "free callback was replaced", &planes, "a frame whose frames context's free callback was replaced "
                                                      "after clmem_av_frames_setup");
        fc->free = pool_free; /* put back, so that the pool is freed below */
        av_frame_free(&hw);
        av_buffer_unref(&frames);
    }

    /* A frame of FFmpeg's default tiling, not set up. */
    if (!(hw = ffmpeg_pool_frame(device_ref, AV_PIX_FMT_NV12, false, &frames, why, sizeof why)))
        tap_skip(why, "bad input: a tiled frame (FFmpeg's own pool makes no NV12 frame on this device)");
    else if (((AVVkFrame *)hw->data[0])->tiling == VK_IMAGE_TILING_LINEAR)
        tap_skip("FFmpeg's default tiling is linear on this device", "bad input: a tiled frame");
    else
        expect(clmem_av_frame_import(bridge, hw, path, cl.queue, 0, &planes), CLMEM_ERR_UNSUPPORTED,
               "clmem_av_frames_setup", &planes, "a frame of FFmpeg's default (tiled) pool");
    av_frame_free(&hw);
    av_buffer_unref(&frames);

    /* A linear host-visible frame of FFmpeg's own pool on the host-mapped
     * path: FFmpeg maps it itself to transfer it, so the import, which
     * holds the memory's one mapping, refuses it. */
    if (clmem_bridge_check_path(bridge, CLMEM_BRIDGE_PATH_HOST_MAPPED) != CLMEM_OK)
        tap_skip(clmem_error_message(), "bad input: FFmpeg's own linear host-visible frame on the host-mapped path");
    else if (!(hw = ffmpeg_pool_linear_frame(AV_PIX_FMT_RGBA, &frames, why, sizeof why)))
        tap_skip(why, "bad input: FFmpeg's own linear host-visible frame on the host-mapped path");
    else
        expect(clmem_av_frame_import(bridge, hw, CLMEM_BRIDGE_PATH_HOST_MAPPED, cl.queue, 0, &planes),
               CLMEM_ERR_UNSUPPORTED, "maps to transfer it", &planes,
               "FFmpeg's own linear host-visible frame on the host-mapped path");
    av_frame_free(&hw);
    av_buffer_unref(&frames);

    /* Planes that do not match the frame. */
    frames = frames_new(device_ref, AV_PIX_FMT_NV12, true);
    hw = av_fixture_frame(frames);
    {
        clmem_av_frame_planes one = {0};
        if (clmem_av_frame_import(bridge, hw, path, cl.queue, 0, &planes) != CLMEM_OK)
            tap_bail("import: %s", clmem_error_message());
        one.count = 1;
        one.planes[0] = planes.planes[0];
        expect(clmem_av_frame_acquire(bridge, hw, &one, cl.queue, 0, NULL), CLMEM_ERR_INVALID_VALUE,
               "holds 1 planes", NULL, "acquire with one plane of an NV12 frame");
        /* FFmpeg's own signal of sem_value may still be on its way (a
         * loaded lavapipe queue): let it land first, so that "nothing
         * signalled" compares with what FFmpeg left, not with a race. */
        AVVkFrame *vkf = (AVVkFrame *)hw->data[0];
        uint64_t before = vkf->sem_value[0];
        for (int waited = 0; counter(vkf->sem[0]) < before && waited < 5000; waited++)
            usleep(1000);
        expect(clmem_av_frame_release(bridge, hw, &planes, cl.queue, 0, NULL), CLMEM_ERR_INVALID_VALUE, NULL, NULL,
               "release of a frame not acquired");
        tap_ok(vkf->sem_value[0] == before && counter(vkf->sem[0]) == before,
               "bad input: the refused release signalled nothing (sem_value %llu, counter %llu, %llu before)",
               (unsigned long long)vkf->sem_value[0], (unsigned long long)counter(vkf->sem[0]),
               (unsigned long long)before);
        clmem_av_frame_planes_unref(&planes);
    }
    av_frame_free(&hw);
    av_buffer_unref(&frames);

    /* A frame of another device. */
    if ((r = av_hwdevice_ctx_create(&other_dev, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0)) < 0)
        tap_bail("a second FFmpeg Vulkan device: %d", r);
    frames = frames_new(other_dev, AV_PIX_FMT_NV12, true);
    hw = av_fixture_frame(frames);
    expect(clmem_av_frame_import(bridge, hw, path, cl.queue, 0, &planes), CLMEM_ERR_DEVICE_MISMATCH,
           "another VkDevice", &planes, "a frame of another FFmpeg device");
    av_frame_free(&hw);
    av_buffer_unref(&frames);
    av_buffer_unref(&other_dev);

    /* Memory FFmpeg did not allocate exportable as an opaque fd: a device
     * context of the same VkDevice that lists no external-memory extension
     * (it keeps VK_EXT_image_drm_format_modifier where FFmpeg's has it, so
     * that frames can be linear and device-local on a GPU). */
    plain_dev = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    {
        static const char *drm_only[] = {VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME};
        AVVulkanDeviceContext *pv = ((AVHWDeviceContext *)plain_dev->data)->hwctx;
        bool drm = false;
        for (int i = 0; i < vk->nb_enabled_dev_extensions; i++)
            drm = drm || strcmp(vk->enabled_dev_extensions[i], drm_only[0]) == 0;
        *pv = *vk;
        pv->enabled_dev_extensions = drm ? drm_only : NULL;
        pv->nb_enabled_dev_extensions = drm ? 1 : 0;
        if ((r = av_hwdevice_ctx_init(plain_dev)) < 0)
            tap_bail("av_hwdevice_ctx_init of FFmpeg's device without extensions: %d", r);
    }
    frames = frames_new(plain_dev, AV_PIX_FMT_NV12, true);
    hw = av_fixture_frame(frames);
    expect(clmem_av_frame_import(bridge, hw, CLMEM_BRIDGE_PATH_OPAQUE_FD, cl.queue, 0, &planes),
           CLMEM_ERR_UNSUPPORTED, "VK_KHR_external_memory_fd", &planes,
           "opaque fd for a frame FFmpeg allocated without export");
    av_frame_free(&hw);
    av_buffer_unref(&frames);
    av_buffer_unref(&plain_dev);

    av_frame_free(&sw);
    {
        clmem_status s = clmem_bridge_finish(bridge, 10000000000ull);
        tap_ok(s == CLMEM_OK, "bad input: no import is left behind (%s)", why_not(s));
    }
    fd_describe_new(&fds, why, sizeof why);
    tap_ok(strcmp(why, "none") == 0, "bad input: no fd is left open (new: %s)", why);
}

int main(void)
{
    clmem_bridge *paired = NULL;
    clmem_status s;

    /* FFmpeg's device, two more, and a dozen frames pools: valgrind and the
     * sanitizers slow them many times over. */
    tap_watchdog("av-frames", getenv("CLMEM_TEST_INSTRUMENTED") ? 1800 : 300);
    av_fixture_open(&fx, false); /* FFmpeg's device, OpenCL on it, the bridge on both */
    device_ref = fx.device;
    vk = fx.vk;
    cl = fx.cl;
    bridge = fx.bridge;
    path = fx.path;

    /* The bridge with no context given: paired by UUID, or, where no
     * OpenCL device says its UUID (PoCL), the only OpenCL device there is. */
    {
        cl_platform_id ps[8];
        cl_device_id ds[8];
        bool by_uuid = clmem_bridge_pair(vk->inst, vk->get_proc_addr, vk->phys_dev, NULL, NULL) == CLMEM_OK;
        int n = cl_all_devices(ps, ds, 8);
        s = clmem_av_bridge_create(device_ref, NULL, 0, &paired);
        if (by_uuid || n == 1)
            tap_ok(s == CLMEM_OK && clmem_bridge_vk_device(paired) == vk->act_dev &&
                       clmem_bridge_context(paired) != NULL,
                   "clmem_av_bridge_create without a context makes a context of its own on %s (%s)",
                   by_uuid ? "the OpenCL device with FFmpeg's UUID" : "the only OpenCL device, none saying its UUID",
                   why_not(s));
        else
            tap_ok(s == CLMEM_ERR_UNSUPPORTED && strstr(clmem_error_message(), "pass a context"),
                   "clmem_av_bridge_create without a context: %d OpenCL devices and none says its UUID -> "
                   "CLMEM_ERR_UNSUPPORTED, asking for a context (%s)",
                   n, clmem_error_message());
        clmem_bridge_unref(paired);
    }
    tap_ok(clmem_bridge_vk_device(bridge) == vk->act_dev && clmem_bridge_context(bridge) == cl.context,
           "clmem_av_bridge_create on FFmpeg's device and %s", cl.device_name);

    round_trip(AV_PIX_FMT_NV12, 2);
    round_trip(AV_PIX_FMT_P010, 2);
    round_trip(AV_PIX_FMT_RGBA, 1);
    round_trip(AV_PIX_FMT_BGRA, 1);
    round_trip(AV_PIX_FMT_YUV420P, 3);
    sync_order();
    lifetime();
    device_lifetime();
    bad_input();

    s = clmem_bridge_finish(bridge, 10000000000ull);
    tap_ok(s == CLMEM_OK, "finish: everything handed back (%s)", why_not(s));
    av_fixture_close(&fx);
    return tap_done();
}
