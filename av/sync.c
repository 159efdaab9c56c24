/* SPDX-License-Identifier: MIT */
/* clmem_av_sync: the order of frame handoffs on one bridge, chosen once
 * (clmem-av.h says what each order does and costs). Host order is
 * frame-sync.c's, device order sync-device.c's; this file makes the
 * object, picks the order and dispatches. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "sync.h"

#include <stdio.h>
#include <stdlib.h>

CLMEM_EXPORT const char *clmem_av_order_name(clmem_av_order order)
{
    static const char *const names[] = {
        [CLMEM_AV_ORDER_BEST] = "best",
        [CLMEM_AV_ORDER_HOST] = "host",
        [CLMEM_AV_ORDER_DEVICE] = "device",
    };

    return (unsigned)order < sizeof names / sizeof names[0] ? names[order] : "unknown-order";
}

clmem_status clmem__av_device_order_check(clmem_bridge *b, const AVVulkanDeviceContext *vk)
{
    clmem_status s;

    if ((s = clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD)) != CLMEM_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        return clmem__fail(s, "Device order needs semaphores both APIs share, and the bridge cannot share them: %s",
                           why);
    }
    if (!clmem__av_has_device_extension(vk, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "Device order needs semaphores both APIs share, and FFmpeg's Vulkan device did not "
                           "enable VK_KHR_external_semaphore_fd (FFmpeg enables it where the device offers it).");
    return CLMEM_OK;
}

static void sync_free(clmem_av_sync *sync)
{
    if (sync->order == CLMEM_AV_ORDER_DEVICE)
        clmem__av_device_close(sync);
    pthread_mutex_destroy(&sync->lock);
    clmem_bridge_unref(sync->bridge);
    av_buffer_unref(&sync->device);
    free(sync);
}

static clmem_status av_sync_create(clmem_bridge *b, AVBufferRef *device_ref, clmem_av_order order,
                                   uint32_t frames_in_flight, clmem_av_sync **out)
{
    const AVVulkanDeviceContext *vk;
    clmem_av_sync *sync;
    clmem_status s;

    if (out)
        *out = NULL;
    if (!b || !device_ref || !out)
        return clmem__null_arg(!b ? "b" : !device_ref ? "device_ref" : "out");
    if (!(vk = clmem__av_vk_device_arg(device_ref)))
        return CLMEM_ERR_INVALID_VALUE;
    if (order != CLMEM_AV_ORDER_BEST && order != CLMEM_AV_ORDER_HOST && order != CLMEM_AV_ORDER_DEVICE)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "order %d is not a clmem_av_order.", (int)order);
    if (frames_in_flight == 0 || frames_in_flight > CLMEM_AV_MAX_IN_FLIGHT)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "frames_in_flight is %u: give 1 to %u.", frames_in_flight,
                           CLMEM_AV_MAX_IN_FLIGHT);
    if (vk->act_dev != clmem_bridge_vk_device(b))
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH,
                           "The bridge is on another VkDevice than FFmpeg's device context: make it with "
                           "clmem_av_bridge_create() from this device context.");
    /* BEST: device order where it works and frames overlap. One frame at a
     * time host order is faster (no Vulkan submission: clmem-av.h). */
    if (order == CLMEM_AV_ORDER_BEST)
        order = frames_in_flight >= 2 && clmem__av_device_order_check(b, vk) == CLMEM_OK ? CLMEM_AV_ORDER_DEVICE
                                                                                          : CLMEM_AV_ORDER_HOST;
    else if (order == CLMEM_AV_ORDER_DEVICE && (s = clmem__av_device_order_check(b, vk)) != CLMEM_OK)
        return s;

    if (!(sync = calloc(1, sizeof *sync)))
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the sync object failed.");
    if (!(sync->device = av_buffer_ref(device_ref))) {
        free(sync);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Taking a reference on FFmpeg's device context failed.");
    }
    refcount_init(&sync->refs);
    pthread_mutex_init(&sync->lock, NULL);
    sync->bridge = clmem_bridge_ref(b);
    sync->vk = vk;
    sync->order = CLMEM_AV_ORDER_HOST;
    sync->nslots = frames_in_flight;
    sync->host.wait = (PFN_vkWaitSemaphores)clmem__av_device_proc(vk, "vkWaitSemaphores");
    sync->host.signal = (PFN_vkSignalSemaphore)clmem__av_device_proc(vk, "vkSignalSemaphore");
    if (!sync->host.wait || !sync->host.signal) {
        sync_free(sync);
        return CLMEM_ERR_UNSUPPORTED;
    }
    if (order == CLMEM_AV_ORDER_DEVICE) {
        sync->order = CLMEM_AV_ORDER_DEVICE;
        if ((s = clmem__av_device_open(sync)) != CLMEM_OK) {
            sync_free(sync); /* closes what the open made */
            return s;
        }
    }
    *out = sync;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_sync_create(clmem_bridge *b, AVBufferRef *device_ref, clmem_av_order order,
                                               uint32_t frames_in_flight, clmem_av_sync **out)
{
    return clmem__error_in(__func__, av_sync_create(b, device_ref, order, frames_in_flight, out));
}

CLMEM_EXPORT clmem_av_order clmem_av_sync_get_order(const clmem_av_sync *sync)
{
    return sync ? sync->order : CLMEM_AV_ORDER_BEST;
}

CLMEM_EXPORT clmem_av_sync *clmem_av_sync_ref(clmem_av_sync *sync)
{
    if (sync)
        refcount_get(&sync->refs);
    return sync;
}

CLMEM_EXPORT void clmem_av_sync_unref(clmem_av_sync *sync)
{
    if (sync && refcount_put(&sync->refs))
        sync_free(sync);
}

static clmem_status av_sync_finish(clmem_av_sync *sync, uint64_t timeout_ns)
{
    clmem_status s = CLMEM_OK;

    if (!sync)
        return clmem__null_arg("sync");
    if (sync->order == CLMEM_AV_ORDER_DEVICE) {
        pthread_mutex_lock(&sync->lock);
        s = clmem__av_device_finish_locked(sync, timeout_ns);
        pthread_mutex_unlock(&sync->lock);
    }
    return s;
}

CLMEM_EXPORT clmem_status clmem_av_sync_finish(clmem_av_sync *sync, uint64_t timeout_ns)
{
    return clmem__error_in(__func__, av_sync_finish(sync, timeout_ns));
}

/* The arguments of an acquire or release: the sync given, then the frame,
 * its planes and the queue read against the sync's bridge. */
static clmem_status read_frame_call(const clmem_av_sync *sync, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, struct av_frame_call *c)
{
    if (!sync)
        return clmem__null_arg("sync");
    return clmem__av_frame_call(sync->bridge, frame, planes, queue, c);
}

static clmem_status av_sync_acquire(clmem_av_sync *sync, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out)
{
    struct av_frame_call c;
    clmem_status s;

    if (event_out)
        *event_out = NULL;
    if ((s = read_frame_call(sync, frame, planes, queue, &c)) != CLMEM_OK)
        return s;
    if (sync->order == CLMEM_AV_ORDER_HOST)
        return clmem__av_host_acquire(sync->bridge, &c, &sync->host, planes, queue, timeout_ns, event_out);
    pthread_mutex_lock(&sync->lock);
    s = clmem__av_device_acquire_locked(sync, &c, frame, planes, queue, timeout_ns, event_out);
    pthread_mutex_unlock(&sync->lock);
    return s;
}

CLMEM_EXPORT clmem_status clmem_av_sync_acquire(clmem_av_sync *sync, AVFrame *frame,
                                                const clmem_av_frame_planes *planes, cl_command_queue queue,
                                                uint64_t timeout_ns, cl_event *event_out)
{
    return clmem__error_in(__func__, av_sync_acquire(sync, frame, planes, queue, timeout_ns, event_out));
}

static clmem_status av_sync_release(clmem_av_sync *sync, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, cl_uint num_events, const cl_event *wait_list)
{
    struct av_frame_call c;
    clmem_status s;

    if ((s = read_frame_call(sync, frame, planes, queue, &c)) != CLMEM_OK)
        return s;
    if (sync->order == CLMEM_AV_ORDER_HOST)
        return clmem__av_host_release(sync->bridge, &c, &sync->host, planes, queue, num_events, wait_list);
    pthread_mutex_lock(&sync->lock);
    s = clmem__av_device_release_locked(sync, &c, planes, queue, num_events, wait_list);
    pthread_mutex_unlock(&sync->lock);
    return s;
}

CLMEM_EXPORT clmem_status clmem_av_sync_release(clmem_av_sync *sync, AVFrame *frame,
                                                const clmem_av_frame_planes *planes, cl_command_queue queue,
                                                cl_uint num_events, const cl_event *wait_list)
{
    return clmem__error_in(__func__, av_sync_release(sync, frame, planes, queue, num_events, wait_list));
}
