/* clmem_av_frame_acquire() and clmem_av_frame_release(): FFmpeg's timeline
 * semaphores, ordered on the host (clmem-av.h says what that costs). */
#include "config.h"
#include "export.h"
#include "ffmpeg-vk.h"

/* The frame and its planes, checked against each other. */
static clmem_status frame_and_planes(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                     cl_command_queue queue, AVVkFrame **vkf_out,
                                     const AVVulkanDeviceContext **vk_out)
{
    AVHWFramesContext *frames;
    const struct av_format *format;
    clmem_status s;

    if (!b || !frame || !planes || !queue)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "%s is NULL.",
                               !b ? "b" : !frame ? "frame" : !planes ? "planes" : "queue");
    if ((s = clmem__av_frame_parts(frame, vkf_out, &frames, &format)) != CLMEM_OK)
        return s;
    if (planes->count != format->planes)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "planes holds %u planes, and the frame (%s) has %u: pass the planes "
                               "clmem_av_frame_import() gave for this frame.",
                               planes->count, format->name, format->planes);
    *vk_out = clmem__av_vk_device(frames->device_ctx);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                                 cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out)
{
    AVVkFrame *vkf;
    const AVVulkanDeviceContext *vk;
    PFN_vkWaitSemaphores wait;
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    VkResult r;
    clmem_status s;

    if (event_out)
        *event_out = NULL;
    if ((s = frame_and_planes(b, frame, planes, queue, &vkf, &vk)) != CLMEM_OK)
        return s;
    if (!(wait = (PFN_vkWaitSemaphores)clmem__av_device_proc(vk, "vkWaitSemaphores")))
        return CLMEM_ERR_UNSUPPORTED;

    /* Every submission of FFmpeg's on the frame signals sem_value: once each
     * plane's semaphore reached it, FFmpeg's work on the frame is done. */
    info.semaphoreCount = planes->count;
    info.pSemaphores = vkf->sem;
    info.pValues = vkf->sem_value;
    r = wait(vk->act_dev, &info, timeout_ns);
    if (r == VK_TIMEOUT)
        return clmem_error_set(CLMEM_ERR_TIMEOUT, CLMEM_API_VULKAN, "vkWaitSemaphores", r,
                               "FFmpeg's work on the frame had not completed within %llu ns.",
                               (unsigned long long)timeout_ns);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkWaitSemaphores", r,
                               "Waiting for FFmpeg's work on the frame failed.");
    return clmem_bridge_acquire_many(b, planes->count, planes->planes, queue, 0,
                                     NULL, event_out);
}

CLMEM_EXPORT clmem_status clmem_av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                                 cl_command_queue queue, cl_uint num_events,
                                                 const cl_event *wait_list)
{
    AVVkFrame *vkf;
    const AVVulkanDeviceContext *vk;
    PFN_vkSignalSemaphore signal;
    cl_event released = NULL;
    cl_int err, status = CL_COMPLETE;
    clmem_status s;

    if ((s = frame_and_planes(b, frame, planes, queue, &vkf, &vk)) != CLMEM_OK)
        return s;
    if (!(signal = (PFN_vkSignalSemaphore)clmem__av_device_proc(vk, "vkSignalSemaphore")))
        return CLMEM_ERR_UNSUPPORTED;
    if ((s = clmem_bridge_release_many(b, planes->count, planes->planes, queue,
                                       num_events, wait_list, &released)) != CLMEM_OK)
        return s;

    /* The host waits for the release (and so for everything before it on
     * the in-order queue), then signals for FFmpeg. */
    err = clWaitForEvents(1, &released);
    if (err == CL_SUCCESS)
        err = clGetEventInfo(released, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    clReleaseEvent(released);

    for (uint32_t p = 0; p < planes->count; p++) {
        VkSemaphoreSignalInfo info = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, vkf->sem[p],
                                      vkf->sem_value[p] + 1};
        VkResult r = signal(vk->act_dev, &info);
        if (r != VK_SUCCESS)
            return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkSignalSemaphore", r,
                                   "Signalling plane %u's timeline semaphore for FFmpeg failed.", p);
        vkf->sem_value[p]++;
        vkf->access[p] = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    }
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clWaitForEvents", err,
                               "Waiting for the frame's release failed; the frame is handed back to FFmpeg "
                               "with undefined contents.");
    if (status < 0)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clEnqueueReleaseExternalMemObjectsKHR", status,
                               "The frame's release, or a command before it, ended in an error; the frame is "
                               "handed back to FFmpeg with undefined contents.");
    return CLMEM_OK;
}
