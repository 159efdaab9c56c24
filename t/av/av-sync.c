/* SPDX-License-Identifier: MIT */
/* libclmem-av's orders (clmem-av.h, clmem_av_order and clmem_av_sync):
 *
 *  - frames in flight: a stream of NV12 frames through D = 1, 2 and 4
 *    frames of a pool, FFmpeg uploading one frame while OpenCL has others,
 *    every byte of every frame checked in FFmpeg's download of it;
 *  - lifetime under overlap, twice: OpenCL's kernel held behind a kernel
 *    still running on the device, then behind a user event that another
 *    thread sets complete late. The release returns at once in device
 *    order (and only after the kernel in host order), but behind a user
 *    event where the driver's own clEnqueueReleaseExternalMemObjectsKHR
 *    waits for it (NVIDIA's does; measured here with raw calls first);
 *    FFmpeg's next use of the frame (a download) waits for OpenCL; a frame
 *    dropped while OpenCL's work on it is pending does not come back from
 *    FFmpeg's pool before it completed, and comes back with OpenCL's
 *    bytes; a new upload into it then wins;
 *  - the host-mapped path without the per-frame clmem_bridge_finish():
 *    FFmpeg's transfers never map the frame (the pool hides
 *    HOST_VISIBLE), so the import's mapping is never doubled;
 *  - bad input, changing nothing;
 *  - with the Khronos validation layer installed, FFmpeg's device runs in
 *    debug mode and the layer reports nothing from the first frames
 *    context to the last frame.
 *
 * Host order runs everywhere. Device order needs semaphores both APIs
 * share: where the bridge or FFmpeg's device has none (lavapipe + PoCL),
 * its points skip, naming what is missing. Built twice: plain
 * (host-mapped on the CPU machines) and with t/lib/fake-nvidia-import.c
 * (t/av/fakefd-av-sync, the opaque-fd memory path). */
/* Tests the deprecated clmem_av_frame_acquire/_release beside the sync object. */
#define CLMEM_DISABLE_DEPRECATION_WARNINGS
#include "t/lib/av-fixture.h"
#include "t/lib/spin-kernel.h"
#include "t/lib/tap.h"

#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 64
#define H 32
#define TIMEOUT_NS 10000000000ull

static struct av_fixture f;

static const char *why_not(clmem_status s)
{
    return s == CLMEM_OK ? "CLMEM_OK" : clmem_error_message();
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ------------------------------------------------------------ frames in flight */

/* clmem_bridge_finish() refuses while a semaphore of the bridge is alive,
 * and a device-order sync object holds its semaphores for its whole life.
 * So a case that needs its imports' teardowns done ends its sync object's
 * work, drops the object, finishes the bridge, and makes a new sync object
 * of the same order for what follows. */
static clmem_status finish_case(clmem_av_sync **syncp)
{
    clmem_av_order order = clmem_av_sync_get_order(*syncp);
    clmem_status s = clmem_av_sync_finish(*syncp, TIMEOUT_NS);

    clmem_av_sync_unref(*syncp);
    *syncp = NULL;
    if (s == CLMEM_OK)
        s = clmem_bridge_finish(f.bridge, TIMEOUT_NS);
    if (s == CLMEM_OK)
        s = clmem_av_sync_create(f.bridge, f.device, order, 4, syncp);
    return s;
}

/* A stream of 3 D + 2 frames through D frames of the pool, each imported
 * once: frame i is uploaded into pool frame i % D (FFmpeg's upload waits
 * for OpenCL's release of that frame's previous use), acquired, inverted
 * and released; before the upload, FFmpeg downloads what OpenCL left of
 * frame i - D, which must be the inverse of its upload, every byte. */
static void frames_in_flight(clmem_av_sync **syncp, int d)
{
    clmem_av_sync *sync = *syncp;
    const char *order = clmem_av_order_name(clmem_av_sync_get_order(sync));
    AVBufferRef *frames = av_fixture_frames(&f, AV_PIX_FMT_NV12, W, H);
    AVFrame *hw[4], *ups[4] = {NULL};
    clmem_av_frame_planes planes[4];
    int n = 3 * d + 2, wrong = 0, checked = 0;
    char why[160] = "", first[200] = "";
    clmem_status s = CLMEM_OK;

    for (int k = 0; k < d; k++) {
        hw[k] = av_fixture_frame(frames);
        if (clmem_av_frame_import(f.bridge, hw[k], f.path, f.cl.queue, CL_MEM_READ_WRITE, &planes[k]) != CLMEM_OK)
            tap_bail("in flight: import: %s", clmem_error_message());
    }
    for (int i = 0; i < n + d && s == CLMEM_OK; i++) {
        int k = i % d, r;
        if (i >= d) { /* FFmpeg's next use of the frame: it waits for OpenCL's release */
            AVFrame *want = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, (unsigned)(i - d));
            AVFrame *got = av_fixture_download(hw[k]);
            checked++;
            if (!av_fixture_inverted(want, got, why, sizeof why)) {
                if (!wrong++)
                    snprintf(first, sizeof first, "frame %d: %s", i - d, why);
            }
            av_frame_free(&want);
            av_frame_free(&got);
        }
        if (i >= n)
            continue;
        /* FFmpeg 5.1 uploads asynchronously, straight from the software
         * frame's memory where the device imports host memory (lavapipe),
         * without a reference on it: keep it until the frame's next use. */
        av_frame_free(&ups[k]);
        ups[k] = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, (unsigned)i);
        if ((r = av_hwframe_transfer_data(hw[k], ups[k], 0)) < 0)
            tap_bail("in flight: upload: %d", r);
        if ((s = clmem_av_sync_acquire(sync, hw[k], &planes[k], f.cl.queue, TIMEOUT_NS, NULL)) != CLMEM_OK)
            break;
        av_fixture_invert(&f, &planes[k], 0, NULL, NULL);
        s = clmem_av_sync_release(sync, hw[k], &planes[k], f.cl.queue, 0, NULL);
    }
    tap_ok(s == CLMEM_OK && checked == n && wrong == 0,
           "%s order, %d frame%s in flight: %d NV12 frames, every byte of each as OpenCL left it in FFmpeg's "
           "download (%d checked, %d wrong%s%s; %s)",
           order, d, d == 1 ? "" : "s", n, checked, wrong, wrong ? ", first " : "", first, why_not(s));
    for (int k = 0; k < d; k++) {
        clmem_av_frame_planes_unref(&planes[k]);
        av_frame_free(&hw[k]);
        av_frame_free(&ups[k]);
    }
    if (finish_case(syncp) != CLMEM_OK)
        tap_bail("in flight: finish: %s", clmem_error_message());
    av_buffer_unref(&frames);
}

/* ------------------------------------------------------------ overlap */

/* What holds OpenCL's work on a frame back: a kernel still running before
 * it on the queue (calibrated to at least hold_ms), or a user event that
 * another thread sets complete hold_ms later. Both are work the release
 * and FFmpeg must wait for, on the device. The hold must outlast what the
 * test does on the host meanwhile (three FFmpeg uploads, 3 frames taken):
 * 600 ms, and 30 s under valgrind or a sanitizer (tap.h): there FFmpeg's
 * uploads alone took longer than 600 ms, and on a loaded 2-core machine
 * the three of them outlasted a 4.6-s kernel, and under valgrind, beside
 * another valgrind test on two cores, a 12-s hold. */
enum hold_kind { HOLD_RUNNING, HOLD_GATE };
static double hold_ms;

struct hold {
    enum hold_kind kind;
    cl_event user;  /* HOLD_GATE */
    cl_event spin;  /* HOLD_RUNNING: the running kernel */
    atomic_bool opened;
    pthread_t t;
};

static cl_kernel spin_k;
static cl_mem spin_mem;
static cl_uint spin_n;
static int spin_launches; /* kernels of spin_n iterations a hold enqueues, so that they run hold_ms */
static bool release_waits_behind_user_event; /* this driver's, measured by driver_release_behind_gate() */

static void *open_late(void *arg)
{
    struct hold *h = arg;
    sleep_ms((int)hold_ms);
    atomic_store(&h->opened, true);
    clSetUserEventStatus(h->user, CL_COMPLETE);
    return NULL;
}

static const char *hold_name(enum hold_kind kind)
{
    return kind == HOLD_GATE ? "behind a user event" : "behind a running kernel";
}

/* The work held back: from now on, OpenCL's next command on the queue
 * waits for h (the gate's thread sets it complete hold_ms from now). */
static void hold_start(struct hold *h, enum hold_kind kind)
{
    h->kind = kind;
    h->user = h->spin = NULL;
    atomic_init(&h->opened, false);
    if (kind == HOLD_GATE) {
        h->user = clCreateUserEvent(f.cl.context, NULL);
        pthread_create(&h->t, NULL, open_late, h);
        return;
    }
    /* spin_launches kernels back to back on the in-order queue: the hold
     * ends when the last one does. */
    for (int i = 0; i < spin_launches; i++) {
        if (h->spin)
            clReleaseEvent(h->spin);
        h->spin = NULL;
        if (spin_enqueue(f.cl.queue, spin_k, spin_mem, spin_n, 0, NULL, &h->spin) != CL_SUCCESS)
            tap_bail("enqueueing the spin kernel failed");
    }
}

/* OpenCL's kernel on `planes`, after h; flushed. */
static void hold_invert(struct hold *h, const clmem_av_frame_planes *planes)
{
    av_fixture_invert(&f, planes, h->kind == HOLD_GATE ? 1 : 0, h->kind == HOLD_GATE ? &h->user : NULL, NULL);
    clFlush(f.cl.queue);
}

/* Is the work still held back? */
static bool held(struct hold *h)
{
    cl_int status = CL_COMPLETE;

    if (h->kind == HOLD_GATE)
        return !atomic_load(&h->opened);
    clGetEventInfo(h->spin, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    return status > CL_COMPLETE;
}

static void hold_end(struct hold *h)
{
    if (h->kind == HOLD_GATE) {
        pthread_join(h->t, NULL);
        clReleaseEvent(h->user);
    } else {
        clWaitForEvents(1, &h->spin);
        clReleaseEvent(h->spin);
    }
}

typedef cl_int(CL_API_CALL *external_fn)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                                         cl_event *);

/* Does this driver's own clEnqueueReleaseExternalMemObjectsKHR wait on the
 * host while an earlier command on its queue waits for an incomplete user
 * event? NVIDIA's does (docs/driver-notes.md; docs/probes/gate-probe.c),
 * and then no release, device order's included, can return before the
 * gate opens. Raw calls on memory the bridge made and imported for this
 * alone; the bridge finished after. false where there is no such call. */
static bool driver_release_behind_gate(void)
{
    external_fn acquire = (external_fn)clGetExtensionFunctionAddressForPlatform(
                    f.cl.platform, "clEnqueueAcquireExternalMemObjectsKHR"),
                release = (external_fn)clGetExtensionFunctionAddressForPlatform(
                    f.cl.platform, "clEnqueueReleaseExternalMemObjectsKHR");
    const VkDeviceSize size = 65536;
    clmem_bridge_vk_memory m;
    VkBuffer buf;
    clmem_handle *h = NULL;
    struct hold g;
    cl_mem mem;
    bool waited;

    if (!acquire || !release || f.path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return false;
    if (clmem_bridge_vk_buffer_create(f.bridge, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                      f.path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                                          : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                      &buf, &m) != CLMEM_OK ||
        clmem_bridge_import_vk(f.bridge, &m, 0, size, f.path, NULL, f.cl.queue, CL_MEM_READ_WRITE, &h) != CLMEM_OK)
        tap_bail("the raw release check: making or importing its buffer: %s", clmem_error_message());
    mem = clmem_handle_mem(h);
    if (acquire(f.cl.queue, 1, &mem, 0, NULL, NULL) != CL_SUCCESS || clFinish(f.cl.queue) != CL_SUCCESS)
        tap_bail("the raw release check: clEnqueueAcquireExternalMemObjectsKHR failed");
    hold_start(&g, HOLD_GATE);
    if (clEnqueueMarkerWithWaitList(f.cl.queue, 1, &g.user, NULL) != CL_SUCCESS)
        tap_bail("the raw release check: clEnqueueMarkerWithWaitList failed");
    clFlush(f.cl.queue);
    if (release(f.cl.queue, 1, &mem, 0, NULL, NULL) != CL_SUCCESS)
        tap_bail("the raw release check: clEnqueueReleaseExternalMemObjectsKHR failed");
    waited = atomic_load(&g.opened);
    hold_end(&g);
    clFinish(f.cl.queue);
    clmem_handle_unref(h);
    if (clmem_bridge_finish(f.bridge, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("the raw release check: finish: %s", clmem_error_message());
    clmem_bridge_vk_buffer_destroy(f.bridge, buf, &m);
    tap_diag("this driver's clEnqueueReleaseExternalMemObjectsKHR, behind a command waiting on a user event: "
             "returned %s the event was set complete",
             waited ? "only once" : "before");
    return waited;
}

#define OVERLAP_POINTS 5

/* Acquire `planes` of `hw`, then OpenCL's kernel on them behind h. */
static clmem_status held_work(clmem_av_sync *sync, AVFrame *hw, const clmem_av_frame_planes *planes,
                              struct hold *h, enum hold_kind kind)
{
    clmem_status s = clmem_av_sync_acquire(sync, hw, planes, f.cl.queue, TIMEOUT_NS, NULL);

    hold_start(h, kind);
    if (s == CLMEM_OK)
        hold_invert(h, planes);
    return s;
}

/* Lifetime under overlap, OpenCL's work held back by `kind`. */
static void overlap(clmem_av_sync **syncp, enum hold_kind kind)
{
    clmem_av_sync *sync = *syncp;
    const bool device = clmem_av_sync_get_order(sync) == CLMEM_AV_ORDER_DEVICE;
    const char *order = clmem_av_order_name(clmem_av_sync_get_order(sync)), *behind = hold_name(kind);
    /* Whether device order's release can return while the work is held:
     * not behind a user event where the driver's own release waits. */
    const bool can_return_early = device && !(kind == HOLD_GATE && release_waits_behind_user_event);
    AVBufferRef *frames = av_fixture_frames(&f, AV_PIX_FMT_NV12, W, H);
    AVFrame *a = av_fixture_frame(frames), *b, *up_a = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, 100),
            *up_b = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, 200), *got;
    clmem_av_frame_planes pa, pb;
    struct hold h;
    bool early, done_before;
    char why[160];
    clmem_status s;

    if (av_hwframe_transfer_data(a, up_a, 0) < 0 ||
        clmem_av_frame_import(f.bridge, a, f.path, f.cl.queue, CL_MEM_READ_WRITE, &pa) != CLMEM_OK)
        tap_bail("overlap: upload or import: %s", clmem_error_message());

    /* 1, 2: the release, and FFmpeg's next use of the frame, with OpenCL's
     * kernel held. */
    if ((s = held_work(sync, a, &pa, &h, kind)) == CLMEM_OK)
        s = clmem_av_sync_release(sync, a, &pa, f.cl.queue, 0, NULL);
    early = held(&h);
    if (can_return_early)
        tap_ok(s == CLMEM_OK && early, "%s order, %s: the release returned while OpenCL's kernel was still held (%s)",
               order, behind, why_not(s));
    else if (device)
        tap_ok(s == CLMEM_OK && !early,
               "%s order, %s: the release returned once the event was set complete, as this driver's own "
               "clEnqueueReleaseExternalMemObjectsKHR does there (%s)",
               order, behind, why_not(s));
    else
        tap_ok(s == CLMEM_OK && !early, "%s order, %s: the release returned only once OpenCL's held kernel had run (%s)",
               order, behind, why_not(s));
    got = av_fixture_download(a);
    done_before = !held(&h);
    tap_ok(done_before && av_fixture_inverted(up_a, got, why, sizeof why),
           "%s order, %s: FFmpeg's next use of the frame (a download) waited for OpenCL's held kernel and sees "
           "its writes%s%s",
           order, behind, done_before ? "" : " (it returned while the kernel was held)", why);
    av_frame_free(&got);
    hold_end(&h);
    clmem_av_frame_planes_unref(&pa);

    /* 3-5: a frame dropped while OpenCL's work on it is pending. Device
     * order: released, the kernel still held. Host order, whose release
     * waits: dropped acquired, never released. */
    b = av_fixture_frame(frames);
    if (av_hwframe_transfer_data(b, up_b, 0) < 0 ||
        clmem_av_frame_import(f.bridge, b, f.path, f.cl.queue, CL_MEM_READ_WRITE, &pb) != CLMEM_OK)
        tap_bail("overlap: upload or import: %s", clmem_error_message());
    {
        AVVkFrame *vb = (AVVkFrame *)b->data[0];
        AVFrame *others[3], *others_up[3];
        bool never_b = true, still_held;

        s = held_work(sync, b, &pb, &h, kind);
        if (s == CLMEM_OK && device)
            s = clmem_av_sync_release(sync, b, &pb, f.cl.queue, 0, NULL);
        clmem_av_frame_planes_unref(&pb);
        av_frame_free(&b);
        for (int i = 0; i < 3; i++) {
            others_up[i] = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, 300 + (unsigned)i);
            others[i] = av_fixture_frame(frames);
            never_b = never_b && (AVVkFrame *)others[i]->data[0] != vb;
            av_hwframe_transfer_data(others[i], others_up[i], 0); /* new uploads into the pool's other frames */
        }
        still_held = held(&h);
        if (device && !can_return_early)
            /* The release returned once the work was let go: what can be
             * seen is that the frame stays out of the pool. */
            tap_ok(s == CLMEM_OK && never_b,
                   "%s order, %s: a frame dropped right after its release does not come back from FFmpeg's pool "
                   "(3 frames taken, all others; %s)",
                   order, behind, why_not(s));
        else
            tap_ok(s == CLMEM_OK && never_b && still_held,
                   "%s order, %s: a frame dropped while OpenCL's kernel on it is held does not come back from "
                   "FFmpeg's pool (3 frames taken, all others%s; %s)",
                   order, behind, still_held ? "" : "; the kernel was no longer held when they were", why_not(s));
        hold_end(&h);
        if ((s = finish_case(syncp)) != CLMEM_OK)
            tap_bail("overlap: finish: %s", clmem_error_message());
        sync = *syncp;
        for (int i = 0; i < 3; i++) { /* a download waits for each upload */
            AVFrame *done = av_fixture_download(others[i]);
            av_frame_free(&done);
            av_frame_free(&others[i]);
            av_frame_free(&others_up[i]);
        }

        /* The frame is back in the pool now: FFmpeg's pool hands out the
         * frame given back last first. */
        {
            AVFrame *taken[8];
            int n = 0;
            b = NULL;
            while (n < 8 && !b) {
                taken[n] = av_fixture_frame(frames);
                if ((AVVkFrame *)taken[n]->data[0] == vb)
                    b = taken[n];
                else
                    n++;
            }
            for (int i = 0; i < n; i++)
                av_frame_free(&taken[i]);
        }
        got = b ? av_fixture_download(b) : NULL;
        tap_ok(got && av_fixture_inverted(up_b, got, why, sizeof why),
               "%s order, %s: once OpenCL's work completed the frame came back from the pool holding OpenCL's "
               "bytes%s%s",
               order, behind, got ? "" : " (it did not come back in 8 frames)", why);
        av_frame_free(&got);
        if (b) {
            AVFrame *again = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, 400), *back;
            bool same = true;
            av_hwframe_transfer_data(b, again, 0); /* `again` kept until the download below waited */
            back = av_fixture_download(b);
            for (int p = 0; p < 2; p++)
                for (int y = 0; y < (p ? H / 2 : H); y++)
                    same = same && memcmp(back->data[p] + y * back->linesize[p],
                                          again->data[p] + y * again->linesize[p], W) == 0;
            tap_ok(same, "%s order, %s: a new upload into the recycled frame is what FFmpeg downloads next", order,
                   behind);
            av_frame_free(&again);
            av_frame_free(&back);
        } else {
            tap_ok(false, "%s order, %s: a new upload into the recycled frame (the frame never came back)", order,
                   behind);
        }
        av_frame_free(&b);
    }
    av_frame_free(&a);
    av_frame_free(&up_a);
    av_frame_free(&up_b);
    av_buffer_unref(&frames);
}

/* ------------------------------------------------------------ formats */

/* Every software format libclmem-av imports, and an odd NV12 extent
 * (FFmpeg's chroma plane is then rounded up: 33x17 for 65x33): a frame
 * uploaded, inverted by OpenCL plane by plane, downloaded, every byte
 * checked. Here so that the validation layer sees each format's frames
 * context set up and initialised. */
static const struct {
    enum AVPixelFormat sw;
    int w, h;
} format_cases[] = {{AV_PIX_FMT_NV12, W, H}, {AV_PIX_FMT_P010, W, H},  {AV_PIX_FMT_RGBA, W, H},
                    {AV_PIX_FMT_BGRA, W, H}, {AV_PIX_FMT_NV12, 65, 33}};
#define FORMAT_POINTS ((int)(sizeof format_cases / sizeof format_cases[0]))

static void formats(clmem_av_sync **syncp)
{
    clmem_av_sync *sync = *syncp;

    for (int i = 0; i < FORMAT_POINTS; i++) {
        AVBufferRef *ref = av_hwframe_ctx_alloc(f.device);
        AVHWFramesContext *fc = (AVHWFramesContext *)ref->data;
        AVFrame *hw, *up, *got;
        clmem_av_frame_planes planes;
        char name[64], why[160] = "";
        clmem_status s;

        snprintf(name, sizeof name, "%s %dx%d", av_get_pix_fmt_name(format_cases[i].sw), format_cases[i].w,
                 format_cases[i].h);
        fc->format = AV_PIX_FMT_VULKAN;
        fc->sw_format = format_cases[i].sw;
        fc->width = format_cases[i].w;
        fc->height = format_cases[i].h;
        if ((s = clmem_av_frames_setup(ref)) == CLMEM_ERR_UNSUPPORTED) {
            tap_skip(clmem_error_message(), "%s: round trip", name);
            av_buffer_unref(&ref);
            continue;
        }
        if (s != CLMEM_OK || av_hwframe_ctx_init(ref) < 0)
            tap_bail("%s: setup or init: %s", name, clmem_error_message());
        hw = av_fixture_frame(ref);
        up = av_fixture_pattern(format_cases[i].sw, format_cases[i].w, format_cases[i].h, 600 + (unsigned)i);
        if (av_hwframe_transfer_data(hw, up, 0) < 0)
            tap_bail("%s: upload failed", name);
        if ((s = clmem_av_frame_import(f.bridge, hw, f.path, f.cl.queue, CL_MEM_READ_WRITE, &planes)) == CLMEM_OK &&
            (s = clmem_av_sync_acquire(sync, hw, &planes, f.cl.queue, TIMEOUT_NS, NULL)) == CLMEM_OK) {
            av_fixture_invert(&f, &planes, 0, NULL, NULL);
            s = clmem_av_sync_release(sync, hw, &planes, f.cl.queue, 0, NULL);
        }
        got = av_fixture_download(hw);
        tap_ok(s == CLMEM_OK && av_fixture_inverted(up, got, why, sizeof why),
               "%s, %s order: every byte of every plane as OpenCL left it (%s%s%s)", name,
               clmem_av_order_name(clmem_av_sync_get_order(sync)), why_not(s), *why ? "; " : "", why);
        clmem_av_frame_planes_unref(&planes);
        av_frame_free(&got);
        av_frame_free(&up);
        av_frame_free(&hw);
        if (finish_case(syncp) != CLMEM_OK)
            tap_bail("%s: finish: %s", name, clmem_error_message());
        sync = *syncp;
        av_buffer_unref(&ref);
    }
}

/* ------------------------------------------------------------ no finish */

/* The sequence clmem-av.h once required a clmem_bridge_finish() in: import,
 * acquire, kernel, release, drop the planes, and FFmpeg downloads at once,
 * the import's teardown (and on the host-mapped path its mapping) maybe
 * still there. Twice per frame, three frames. */
static void no_finish(void)
{
    AVBufferRef *frames = av_fixture_frames(&f, AV_PIX_FMT_NV12, W, H);
    int wrong = 0;
    char why[160] = "";
    clmem_status s = CLMEM_OK;

    for (int i = 0; i < 6 && s == CLMEM_OK; i++) {
        AVFrame *hw = av_fixture_frame(frames), *up = av_fixture_pattern(AV_PIX_FMT_NV12, W, H, 500 + (unsigned)i),
                *got;
        clmem_av_frame_planes planes;
        if (av_hwframe_transfer_data(hw, up, 0) < 0)
            tap_bail("no finish: upload failed");
        if ((s = clmem_av_frame_import(f.bridge, hw, f.path, f.cl.queue, CL_MEM_READ_WRITE, &planes)) == CLMEM_OK &&
            (s = clmem_av_frame_acquire(f.bridge, hw, &planes, f.cl.queue, TIMEOUT_NS, NULL)) == CLMEM_OK) {
            av_fixture_invert(&f, &planes, 0, NULL, NULL);
            s = clmem_av_frame_release(f.bridge, hw, &planes, f.cl.queue, 0, NULL);
        }
        clmem_av_frame_planes_unref(&planes);
        got = av_fixture_download(hw);
        wrong += !av_fixture_inverted(up, got, why, sizeof why);
        av_frame_free(&got);
        av_frame_free(&up);
        av_frame_free(&hw);
    }
    tap_ok(s == CLMEM_OK && wrong == 0,
           "%s path: six frames downloaded right after their planes were dropped, no clmem_bridge_finish() between, "
           "all as OpenCL left them (%d wrong %s; %s)",
           clmem_bridge_path_name(f.path), wrong, why, why_not(s));
    if (clmem_bridge_finish(f.bridge, TIMEOUT_NS) != CLMEM_OK)
        tap_bail("no finish: finish: %s", clmem_error_message());
    av_buffer_unref(&frames);
}

/* ------------------------------------------------------------ bad input */

static void expect(clmem_status got, clmem_status want, const char *needle, const char *what)
{
    const char *msg = clmem_error_message();
    tap_ok(got == want && (!needle || strstr(msg, needle)), "bad input: %s -> %s%s%s%s (%s: %s)", what,
           clmem_status_name(want), needle ? ", naming \"" : "", needle ? needle : "", needle ? "\"" : "",
           clmem_status_name(got), msg);
}

/* What every sync object refuses, in its own order. */
static void refused(clmem_av_sync **syncp)
{
    clmem_av_sync *sync = *syncp;
    const char *order = clmem_av_order_name(clmem_av_sync_get_order(sync));
    AVBufferRef *frames = av_fixture_frames(&f, AV_PIX_FMT_NV12, W, H);
    AVFrame *a = av_fixture_frame(frames), *b = av_fixture_frame(frames);
    AVVkFrame *va = (AVVkFrame *)a->data[0], *vb = (AVVkFrame *)b->data[0];
    clmem_av_frame_planes pa, pb;
    uint64_t before_a, before_b, counter_b;
    char what[160];
    clmem_status s;

    if (clmem_av_frame_import(f.bridge, a, f.path, f.cl.queue, CL_MEM_READ_WRITE, &pa) != CLMEM_OK ||
        clmem_av_frame_import(f.bridge, b, f.path, f.cl.queue, CL_MEM_READ_WRITE, &pb) != CLMEM_OK)
        tap_bail("refused: import: %s", clmem_error_message());
    before_a = va->sem_value[0];
    before_b = vb->sem_value[0];
    snprintf(what, sizeof what, "%s order: release of a frame not acquired", order);
    expect(clmem_av_sync_release(sync, a, &pa, f.cl.queue, 0, NULL), CLMEM_ERR_INVALID_VALUE, NULL, what);
    snprintf(what, sizeof what, "%s order: acquire of frame b with frame a's planes", order);
    expect(clmem_av_sync_acquire(sync, b, &pa, f.cl.queue, TIMEOUT_NS, NULL), CLMEM_ERR_INVALID_VALUE,
           "not this frame's", what);
    if ((s = clmem_av_sync_acquire(sync, a, &pa, f.cl.queue, TIMEOUT_NS, NULL)) != CLMEM_OK ||
        (s = clmem_av_sync_acquire(sync, b, &pb, f.cl.queue, TIMEOUT_NS, NULL)) != CLMEM_OK)
        tap_bail("refused: acquire: %s", clmem_error_message());
    counter_b = av_fixture_counter(&f, vb->sem[0]);
    snprintf(what, sizeof what, "%s order: release of frame b with frame a's planes, both acquired", order);
    expect(clmem_av_sync_release(sync, b, &pa, f.cl.queue, 0, NULL), CLMEM_ERR_INVALID_VALUE, "not this frame's",
           what);
    tap_ok(vb->sem_value[0] == before_b && av_fixture_counter(&f, vb->sem[0]) == counter_b,
           "bad input: %s order: the refused release signalled nothing and left sem_value alone", order);
    if (clmem_av_sync_get_order(sync) == CLMEM_AV_ORDER_DEVICE) {
        snprintf(what, sizeof what, "%s order: acquire of a frame acquired already", order);
        expect(clmem_av_sync_acquire(sync, a, &pa, f.cl.queue, TIMEOUT_NS, NULL), CLMEM_ERR_INVALID_VALUE,
               "already", what);
    } else {
        /* Host order: the bridge's own state says it. */
        snprintf(what, sizeof what, "%s order: acquire of a frame acquired already", order);
        expect(clmem_av_sync_acquire(sync, a, &pa, f.cl.queue, TIMEOUT_NS, NULL), CLMEM_ERR_INVALID_VALUE, NULL,
               what);
    }
    s = clmem_av_sync_release(sync, a, &pa, f.cl.queue, 0, NULL);
    if (s == CLMEM_OK)
        s = clmem_av_sync_release(sync, b, &pb, f.cl.queue, 0, NULL);
    if (s == CLMEM_OK)
        s = clmem_av_sync_finish(sync, TIMEOUT_NS);
    tap_ok(s == CLMEM_OK && va->sem_value[0] == before_a + 1 && vb->sem_value[0] == before_b + 1 &&
               av_fixture_counter(&f, va->sem[0]) == before_a + 1 && av_fixture_counter(&f, vb->sem[0]) == before_b + 1,
           "%s order: after the refusals each frame's own release signalled its own semaphore once (%s)", order,
           why_not(s));
    clmem_av_frame_planes_unref(&pa);
    clmem_av_frame_planes_unref(&pb);
    av_frame_free(&a);
    av_frame_free(&b);
    if (finish_case(syncp) != CLMEM_OK)
        tap_bail("refused: finish: %s", clmem_error_message());
    av_buffer_unref(&frames);
}
#define REFUSED_POINTS 6

static void bad_input(void)
{
    clmem_av_sync *sync = (clmem_av_sync *)1;
    AVBufferRef *other = NULL;
    clmem_status s;

    expect(clmem_av_sync_create(NULL, f.device, CLMEM_AV_ORDER_HOST, 1, &sync), CLMEM_ERR_NULL_POINTER, "b",
           "a NULL bridge");
    tap_ok(sync == NULL, "bad input: clmem_av_sync_create's *out is NULL on error");
    expect(clmem_av_sync_create(f.bridge, NULL, CLMEM_AV_ORDER_HOST, 1, &sync), CLMEM_ERR_NULL_POINTER,
           "device_ref", "a NULL device");
    expect(clmem_av_sync_create(f.bridge, f.device, (clmem_av_order)7, 1, &sync), CLMEM_ERR_INVALID_VALUE, "order",
           "order 7");
    expect(clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_HOST, 0, &sync), CLMEM_ERR_INVALID_VALUE,
           "frames_in_flight", "0 frames in flight");
    expect(clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_HOST, CLMEM_AV_MAX_IN_FLIGHT + 1, &sync),
           CLMEM_ERR_INVALID_VALUE, "frames_in_flight", "CLMEM_AV_MAX_IN_FLIGHT + 1 frames in flight");
    if (av_hwdevice_ctx_create(&other, AV_HWDEVICE_TYPE_VULKAN, NULL, NULL, 0) < 0)
        tap_bail("a second FFmpeg Vulkan device");
    expect(clmem_av_sync_create(f.bridge, other, CLMEM_AV_ORDER_HOST, 1, &sync), CLMEM_ERR_DEVICE_MISMATCH,
           "another VkDevice", "another FFmpeg device than the bridge's");
    av_buffer_unref(&other);
    expect(clmem_av_sync_acquire(NULL, NULL, NULL, NULL, 0, NULL), CLMEM_ERR_NULL_POINTER, "sync",
           "clmem_av_sync_acquire of a NULL sync");
    expect(clmem_av_sync_finish(NULL, 0), CLMEM_ERR_NULL_POINTER, "sync", "clmem_av_sync_finish of a NULL sync");
    tap_ok(strcmp(clmem_av_order_name(CLMEM_AV_ORDER_HOST), "host") == 0 &&
               strcmp(clmem_av_order_name(CLMEM_AV_ORDER_DEVICE), "device") == 0 &&
               strcmp(clmem_av_order_name(CLMEM_AV_ORDER_BEST), "best") == 0 &&
               strcmp(clmem_av_order_name((clmem_av_order)9), "unknown-order") == 0 &&
               clmem_av_sync_get_order(NULL) == CLMEM_AV_ORDER_BEST,
           "the orders' names");
    /* BEST with one frame in flight is host order, whatever the device
     * (one frame at a time host order is the faster one). */
    s = clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_BEST, 1, &sync);
    tap_ok(s == CLMEM_OK && clmem_av_sync_get_order(sync) == CLMEM_AV_ORDER_HOST,
           "BEST with 1 frame in flight runs host order (%s)", why_not(s));
    clmem_av_sync_unref(sync);
}

int main(void)
{
    clmem_av_sync *host = NULL, *device = NULL, *best = NULL;
    char no_device[1200] = "";
    double spin_ms;
    clmem_status s;

    tap_watchdog("av-sync", getenv("CLMEM_TEST_INSTRUMENTED") ? 1800 : 300);
    av_fixture_open(&f, true);

    spin_k = spin_kernel(&f.cl);
    spin_mem = cl_fixture_buffer(&f.cl, 64);
    /* One kernel runs at most 2^32 - 1 iterations (about 4.7 s natively on
     * the CPU machines): longer holds are several kernels in a row. */
    hold_ms = tap_time_bound_ms(600.0, 30000.0);
    const double kernel_ms = hold_ms < 2000.0 ? hold_ms : 2000.0;
    spin_n = spin_calibrate(&f.cl, spin_k, kernel_ms, &spin_ms);
    if (!(spin_ms > 0.0))
        tap_bail("the spin kernel's calibration measured no time (%.3f ms)", spin_ms);
    for (spin_launches = 1; spin_launches * spin_ms < hold_ms; spin_launches++)
        ;
    tap_ok(spin_ms >= kernel_ms,
           "the kernels that hold OpenCL's work run at least %.0f ms: %d of %u iterations, %.1f ms each", hold_ms,
           spin_launches, spin_n, spin_ms);
    release_waits_behind_user_event = driver_release_behind_gate();

    bad_input();

    s = clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_HOST, 4, &host);
    if (!tap_ok(s == CLMEM_OK && clmem_av_sync_get_order(host) == CLMEM_AV_ORDER_HOST, "a host-order sync object (%s)",
                why_not(s)))
        tap_bail("%s", clmem_error_message());
    s = clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_DEVICE, 4, &device);
    if (s == CLMEM_OK)
        tap_ok(clmem_av_sync_get_order(device) == CLMEM_AV_ORDER_DEVICE, "a device-order sync object");
    else
        tap_ok(s == CLMEM_ERR_UNSUPPORTED && strstr(clmem_error_message(), "semaphore"),
               "no device order here -> CLMEM_ERR_UNSUPPORTED naming the semaphores (%s)", clmem_error_message());
    if (s != CLMEM_OK)
        snprintf(no_device, sizeof no_device, "no device order: %s", clmem_error_message());
    s = clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_BEST, 4, &best);
    tap_ok(s == CLMEM_OK && clmem_av_sync_get_order(best) == (device ? CLMEM_AV_ORDER_DEVICE : CLMEM_AV_ORDER_HOST),
           "BEST with 4 frames in flight runs %s order, the order that works here with frames overlapping (%s)",
           device ? "device" : "host", why_not(s));
    clmem_av_sync_unref(best);

    /* One sync object at a time from here: each case finishes the bridge
     * (finish_case), which another object's semaphores would stop. */
    clmem_av_sync_unref(device);
    device = NULL;
    clmem_av_sync_unref(host);
    host = NULL;
    for (int o = 0; o < 2; o++) {
        clmem_av_sync **sync = o ? &device : &host;
        if (o == 1 && !*no_device &&
            clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_DEVICE, 4, &device) != CLMEM_OK)
            tap_bail("a second device-order sync object: %s", clmem_error_message());
        if (o == 0 && clmem_av_sync_create(f.bridge, f.device, CLMEM_AV_ORDER_HOST, 4, &host) != CLMEM_OK)
            tap_bail("a second host-order sync object: %s", clmem_error_message());
        if (!*sync) {
            for (int d = 1; d <= 4; d *= 2)
                tap_skip(no_device, "device order, %d frame%s in flight", d, d == 1 ? "" : "s");
            for (int i = 0; i < 2 * OVERLAP_POINTS; i++)
                tap_skip(no_device, "device order: lifetime under overlap, point %d of %d", i + 1,
                         2 * OVERLAP_POINTS);
            for (int i = 0; i < REFUSED_POINTS; i++)
                tap_skip(no_device, "device order: bad input, point %d of %d", i + 1, REFUSED_POINTS);
            for (int i = 0; i < FORMAT_POINTS; i++)
                tap_skip(no_device, "device order: format %d of %d", i + 1, FORMAT_POINTS);
            continue;
        }
        frames_in_flight(sync, 1);
        frames_in_flight(sync, 2);
        frames_in_flight(sync, 4);
        overlap(sync, HOLD_RUNNING);
        overlap(sync, HOLD_GATE);
        refused(sync);
        formats(sync);
        clmem_av_sync_unref(*sync);
        *sync = NULL;
    }
    no_finish();

    clmem_av_sync_unref(host);
    clmem_av_sync_unref(device);
    s = clmem_bridge_finish(f.bridge, TIMEOUT_NS);
    tap_ok(s == CLMEM_OK, "finish: everything handed back (%s)", why_not(s));
    if (f.validation)
        tap_ok(av_fixture_validation_errors() == 0,
               "the Vulkan validation layer (FFmpeg's device in debug mode) reported no error, from the first frames "
               "context to the last frame (%d)",
               av_fixture_validation_errors());
    else
        tap_skip("the Khronos validation layer is not installed", "the Vulkan validation layer reported no error");
    clReleaseMemObject(spin_mem);
    clReleaseKernel(spin_k);
    av_fixture_close(&f);
    return tap_done();
}
