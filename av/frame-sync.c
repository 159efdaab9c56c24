/* SPDX-License-Identifier: MIT */
/* clmem_av_frame_acquire() and clmem_av_frame_release(): host order, and
 * what both orders check of a frame and its planes.
 *
 * Host order's cost, a frame: acquire is a vkWaitSemaphores of every
 * plane at once (it returns at once when FFmpeg's work completed) and one
 * clmem_bridge_acquire_many(); release one clmem_bridge_release_many(),
 * clFinish, the release event's status (a query, no wait), and one
 * vkSignalSemaphore per plane (Vulkan signals one semaphore per call from
 * the host). clFinish is the wait clmem-bench's (g) times the bridge's
 * plane handoff with, so that (j) compares like with like. The Vulkan
 * entry points are resolved once: by libclmem-av's pool for its frames,
 * by the sync object for its calls; only frames of FFmpeg's own pool
 * through these two calls resolve them per call (about 1 us a pair
 * through the loader on the CPU machines). */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "frame-pool.h"
#include "frame-sync.h"
#include "plane-owner.h"

#if CLMEM_AV_FFMPEG_LOCKS
void clmem__av_lock_frame(const struct av_frame_call *c)
{
    const AVVulkanFramesContext *fc = c->frames->hwctx;
    if (fc->lock_frame)
        fc->lock_frame(c->frames, c->vkf);
}

void clmem__av_unlock_frame(const struct av_frame_call *c)
{
    const AVVulkanFramesContext *fc = c->frames->hwctx;
    if (fc->unlock_frame)
        fc->unlock_frame(c->frames, c->vkf);
}
#else
void clmem__av_lock_frame(const struct av_frame_call *c)
{
    (void)c;
}

void clmem__av_unlock_frame(const struct av_frame_call *c)
{
    (void)c;
}
#endif

clmem_status clmem__av_frame_call(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                  cl_command_queue queue, struct av_frame_call *out)
{
    const struct av_format *format;
    clmem_status s;

    if (!b || !frame || !planes || !queue)
        return clmem__null_arg(!b ? "b" : !frame ? "frame" : !planes ? "planes" : "queue");
    if ((s = clmem__av_frame_parts(frame, &out->vkf, &out->frames, &format)) != CLMEM_OK)
        return s;
    if (planes->count != format->planes)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "planes holds %u planes, and the frame (%s) has %u: pass the planes "
                           "clmem_av_frame_import() gave for this frame.",
                           planes->count, format->name, format->planes);
    if (!clmem__av_planes_show(planes, out->vkf->img))
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "planes are not this frame's: clmem_av_frame_import() made them from another frame "
                           "(or did not make them); pass the planes it gave for this frame.");
    out->vk = clmem__av_vk_device(out->frames->device_ctx);
    out->planes = format->planes;
    if (out->vk->act_dev != clmem_bridge_vk_device(b))
        return clmem__fail(CLMEM_ERR_DEVICE_MISMATCH, "The frame is on another VkDevice than the bridge's.");
    return CLMEM_OK;
}

clmem_status clmem__av_host_acquire(clmem_bridge *b, const struct av_frame_call *c, const struct av_host_fns *fns,
                                    const clmem_av_frame_planes *planes, cl_command_queue queue, uint64_t timeout_ns,
                                    cl_event *event_out)
{
    uint64_t values[CLMEM_AV_MAX_PLANES];
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = c->planes,
                                .pSemaphores = c->vkf->sem,
                                .pValues = values};
    VkResult r;

    /* Every submission of FFmpeg's on the frame signals sem_value: once each
     * plane's semaphore reached it, FFmpeg's work on the frame is done. The
     * values are read under FFmpeg's frame lock, not waited under it. */
    clmem__av_lock_frame(c);
    for (uint32_t p = 0; p < c->planes; p++)
        values[p] = c->vkf->sem_value[p];
    clmem__av_unlock_frame(c);
    r = fns->wait(c->vk->act_dev, &info, timeout_ns);
    if (r == VK_TIMEOUT)
        return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_VULKAN, "vkWaitSemaphores", r,
                               "FFmpeg's work on the frame had not completed within %s.",
                               clmem__duration(timeout_ns).text);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkWaitSemaphores", r,
                               "Waiting for FFmpeg's work on the frame failed.");
    return clmem_bridge_acquire_many(b, planes->count, planes->planes, queue, 0, NULL, event_out);
}

clmem_status clmem__av_host_release(clmem_bridge *b, const struct av_frame_call *c, const struct av_host_fns *fns,
                                    const clmem_av_frame_planes *planes, cl_command_queue queue, cl_uint num_events,
                                    const cl_event *wait_list)
{
    cl_event released = NULL;
    cl_int err, status = CL_COMPLETE;
    clmem_status s;

    if ((s = clmem_bridge_release_many(b, planes->count, planes->planes, queue, num_events, wait_list, &released)) !=
        CLMEM_OK)
        return s;

    /* The host waits for the release (and so for everything before it on
     * the queue), then signals for FFmpeg. */
    err = clFinish(queue);
    if (err == CL_SUCCESS)
        err = clGetEventInfo(released, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    clReleaseEvent(released);

    clmem__av_lock_frame(c);
    for (uint32_t p = 0; p < c->planes; p++) {
        VkSemaphoreSignalInfo info = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, c->vkf->sem[p],
                                      c->vkf->sem_value[p] + 1};
        VkResult r = fns->signal(c->vk->act_dev, &info);
        if (r != VK_SUCCESS) {
            clmem__av_unlock_frame(c);
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkSignalSemaphore", r,
                                   "Signalling plane %u's timeline semaphore for FFmpeg failed.", p);
        }
        c->vkf->sem_value[p]++;
        c->vkf->access[p] = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    }
    clmem__av_unlock_frame(c);
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clFinish", err,
                               "Waiting for the frame's release failed; the frame is handed back to FFmpeg "
                               "with undefined contents.");
    if (status < 0)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueReleaseExternalMemObjectsKHR", status,
                               "The frame's release, or a command before it, ended in an error; the frame is "
                               "handed back to FFmpeg with undefined contents.");
    return CLMEM_OK;
}

/* The timeline calls for a frame: its pool's, resolved once, or (a frame
 * of FFmpeg's own pool) resolved now. */
static clmem_status host_fns(const struct av_frame_call *c, struct av_host_fns *fns)
{
    struct av_pool_facts facts;
    bool ours = false;
    clmem_status s;

    if ((s = clmem__av_pool_check(c->frames, &ours, &facts)) != CLMEM_OK)
        return s;
    if (ours) {
        fns->wait = facts.wait_semaphores;
        fns->signal = facts.signal_semaphore;
        return CLMEM_OK;
    }
    fns->wait = (PFN_vkWaitSemaphores)clmem__av_device_proc(c->vk, "vkWaitSemaphores");
    fns->signal = (PFN_vkSignalSemaphore)clmem__av_device_proc(c->vk, "vkSignalSemaphore");
    return fns->wait && fns->signal ? CLMEM_OK : CLMEM_ERR_UNSUPPORTED;
}

clmem_status clmem__av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                     cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out)
{
    struct av_frame_call c;
    struct av_host_fns fns;
    clmem_status s;

    if (event_out)
        *event_out = NULL;
    if ((s = clmem__av_frame_call(b, frame, planes, queue, &c)) != CLMEM_OK || (s = host_fns(&c, &fns)) != CLMEM_OK)
        return s;
    return clmem__av_host_acquire(b, &c, &fns, planes, queue, timeout_ns, event_out);
}

CLMEM_EXPORT clmem_status clmem_av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                                 cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out)
{
    return clmem__error_in(__func__, clmem__av_frame_acquire(b, frame, planes, queue, timeout_ns, event_out));
}

clmem_status clmem__av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                     cl_command_queue queue, cl_uint num_events, const cl_event *wait_list)
{
    struct av_frame_call c;
    struct av_host_fns fns;
    clmem_status s;

    if ((s = clmem__av_frame_call(b, frame, planes, queue, &c)) != CLMEM_OK || (s = host_fns(&c, &fns)) != CLMEM_OK)
        return s;
    return clmem__av_host_release(b, &c, &fns, planes, queue, num_events, wait_list);
}

CLMEM_EXPORT clmem_status clmem_av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                                 cl_command_queue queue, cl_uint num_events, const cl_event *wait_list)
{
    return clmem__error_in(__func__, clmem__av_frame_release(b, frame, planes, queue, num_events, wait_list));
}
