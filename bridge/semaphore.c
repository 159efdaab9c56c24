/* SPDX-License-Identifier: MIT */
/* Vulkan binary semaphores on OpenCL queues: device ordering through
 * cl_khr_external_semaphore (opaque fd, sync fd), and the same calls with
 * the host in the middle where OpenCL lacks the extensions. */
#include "config.h"
#include "bridge.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "fd-numbers.h"
#include "semaphore.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* Export the VkSemaphore and import it into OpenCL. The fd is ours until
 * the driver accepts it; NVIDIA closes it during a successful import. */
static clmem_status import_device(struct clmem_bridge_semaphore *sem, VkSemaphore semaphore)
{
    clmem_bridge *b = sem->bridge;
    const struct clext *ext = &b->cl;
    bool sync = sem->mode == CLMEM_BRIDGE_SEMAPHORE_SYNC_FD;
    PFN_vkGetSemaphoreFdKHR get_fd = b->vk.GetSemaphoreFdKHR;
    VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                    .semaphore = semaphore,
                                    .handleType = sync ? VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT
                                                       : VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    cl_int err = CL_OUT_OF_RESOURCES;
    int fd = -1;
    VkResult r;

    if (!get_fd)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "vkGetSemaphoreFdKHR is not available: enable VK_KHR_external_semaphore_fd on the "
                           "VkDevice.");
    if (!ext->create_semaphore || !ext->wait_semaphores || !ext->signal_semaphores ||
        !ext->release_semaphore)
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "The OpenCL platform does not return the cl_khr_semaphore entry points.");
    r = FAULT("vkGetSemaphoreFdKHR") ? VK_ERROR_TOO_MANY_OBJECTS : get_fd(b->device, &info, &fd);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkGetSemaphoreFdKHR", r,
                               "Exporting the semaphore as %s failed (was it created with "
                               "VkExportSemaphoreCreateInfo?).",
                               sync ? "sync fd" : "opaque fd");
    clmem__fd_number_note_semaphore(fd); /* no memory fd is imported at this number later: fd-numbers.h */
    {
        /* 0x2053: the semaphore device list. Debian 12's headers lack it,
         * and the memory list (0x2051) gives CL_INVALID_PROPERTY here. */
        cl_semaphore_properties_khr props[] = {
            CL_SEMAPHORE_TYPE_KHR,
            CL_SEMAPHORE_TYPE_BINARY_KHR,
            sync ? CL_SEMAPHORE_HANDLE_SYNC_FD_KHR : CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
            (cl_semaphore_properties_khr)fd,
            CLMEM_CL_SEMAPHORE_DEVICE_HANDLE_LIST,
            (cl_semaphore_properties_khr)(uintptr_t)b->cl_device,
            CLMEM_CL_DEVICE_HANDLE_LIST_END,
            0,
        };
        sem->cl_sem = FAULT("clCreateSemaphoreWithPropertiesKHR") ? NULL
                                                                   : ext->create_semaphore(b->context, props, &err);
    }
    if (err != CL_SUCCESS || !sem->cl_sem) {
        if (sem->cl_sem)
            ext->release_semaphore(sem->cl_sem);
        sem->cl_sem = NULL;
        close(fd); /* the driver did not take it */
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateSemaphoreWithPropertiesKHR", err,
                               "Importing the semaphore fd failed.");
    }
    return CLMEM_OK;
}

static clmem_status import_host(struct clmem_bridge_semaphore *sem, VkQueue vk_queue, VkSemaphore semaphore)
{
    clmem_bridge *b = sem->bridge;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r;

    if (!vk_queue)
        return clmem__fail(CLMEM_ERR_NULL_POINTER,
                           "Host ordering needs the VkQueue to submit the semaphore's wait and signal to.");
    r = FAULT("vkCreateFence") ? VK_ERROR_OUT_OF_HOST_MEMORY : b->vk.CreateFence(b->device, &fi, NULL, &sem->fence);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateFence", r,
                               "Creating the fence for host ordering failed.");
    sem->vk_queue = vk_queue;
    sem->vk_sem = semaphore;
    return CLMEM_OK;
}

static clmem_status semaphore_import(clmem_bridge *b, VkQueue vk_queue, VkSemaphore semaphore,
                                     clmem_bridge_semaphore_mode mode, clmem_keepalive *vk_keepalive,
                                     clmem_bridge_semaphore **out)
{
    struct clmem_bridge_semaphore *sem;
    clmem_status s;

    if (out)
        *out = NULL;
    if (!b || !semaphore || !out)
        return fail_null(!b ? "bridge" : !semaphore ? "semaphore" : "out");
    BRIDGE_LIVE(b, "clmem_bridge_semaphore_import");
    if (mode > CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Unknown semaphore mode %d.", (int)mode);
    /* The bridge's answer, worked out at creation, decides BEST and checks
     * a named device mode. */
    if (mode == CLMEM_BRIDGE_SEMAPHORE_BEST)
        mode = b->caps.semaphore[CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD].status == CLMEM_OK
                   ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD
                   : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
    else if (mode != CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED &&
             (s = clmem__caps_report(&b->caps.semaphore[mode])) != CLMEM_OK)
        return s;

    sem = FAULT("semaphore_alloc") ? NULL : calloc(1, sizeof *sem);
    if (!sem)
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a semaphore failed.");
    refcount_init(&sem->refs);
    sem->live = MARK_SEMAPHORE;
    atomic_init(&sem->in_ring, false);
    sem->mode = mode;
    sem->bridge = b;
    sem->vk_sem = semaphore;
    if (mode == CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        s = import_host(sem, vk_queue, semaphore);
    else
        s = import_device(sem, semaphore);
    if (s != CLMEM_OK) {
        free(sem);
        return s;
    }
    clmem_bridge_ref(b);
    clmem__bridge_semaphore_count(b, +1);
    sem->vk_keepalive = clmem_keepalive_ref(vk_keepalive);
    *out = sem;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_semaphore_import(clmem_bridge *b, VkQueue vk_queue, VkSemaphore semaphore,
                                                        clmem_bridge_semaphore_mode mode, clmem_keepalive *vk_keepalive,
                                                        clmem_bridge_semaphore **out)
{
    return clmem__error_in(__func__, semaphore_import(b, vk_queue, semaphore, mode, vk_keepalive, out));
}

CLMEM_EXPORT clmem_bridge_semaphore_mode clmem_bridge_semaphore_get_mode(const clmem_bridge_semaphore *sem)
{
    if (!sem)
        return CLMEM_BRIDGE_SEMAPHORE_BEST;
    LIVE_CHECK(sem->live, MARK_SEMAPHORE, "clmem_bridge_semaphore_get_mode", sem);
    return sem->mode;
}

CLMEM_EXPORT clmem_bridge_semaphore *clmem_bridge_semaphore_ref(clmem_bridge_semaphore *sem)
{
    if (sem)
        live_ref(&sem->refs, &sem->live, MARK_SEMAPHORE, "clmem_bridge_semaphore_ref", sem);
    return sem;
}

CLMEM_EXPORT void clmem_bridge_semaphore_unref(clmem_bridge_semaphore *sem)
{
    clmem_keepalive *vk_keepalive;
    clmem_bridge *b;

    if (!sem || !live_unref(&sem->refs, &sem->live, MARK_SEMAPHORE, "clmem_bridge_semaphore_unref", sem))
        return;
    b = sem->bridge;
    if (sem->cl_sem)
        b->cl.release_semaphore(sem->cl_sem);
    if (sem->fence)
        b->vk.DestroyFence(b->device, sem->fence, NULL);
    vk_keepalive = sem->vk_keepalive;
    live_free(sem, &sem->live, sizeof *sem);
    clmem_keepalive_unref(vk_keepalive);
    clmem__bridge_semaphore_count(b, -1);
    clmem_bridge_unref(b);
}

/* Host ordering hands back an event that is already complete, so callers
 * can treat both modes alike. */
static clmem_status complete_event(cl_command_queue queue, cl_event *event_out)
{
    cl_context context = NULL;
    cl_int err;

    if (!event_out)
        return CLMEM_OK;
    err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
    if (err == CL_SUCCESS)
        *event_out = clCreateUserEvent(context, &err);
    if (err == CL_SUCCESS && (err = clSetUserEventStatus(*event_out, CL_COMPLETE)) != CL_SUCCESS) {
        clReleaseEvent(*event_out);
        *event_out = NULL;
    }
    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clCreateUserEvent", err,
                               "Making the completed event for host ordering failed.");
    return CLMEM_OK;
}

/* Host ordering: the caller's wait list, waited for on the host. */
static clmem_status wait_on_host(cl_uint num_events, const cl_event *wait_list)
{
    cl_int err;

    if (num_events && (err = clWaitForEvents(num_events, wait_list)) != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clWaitForEvents", err,
                               "Waiting for the wait list failed.");
    return CLMEM_OK;
}

/* The end of a host-ordered wait or signal: the Vulkan call's result r,
 * recorded with `sentence` when it failed, else the caller's event, made
 * complete. */
static clmem_status host_ordered_end(VkResult r, const char *call, const char *sentence, cl_command_queue queue,
                                     cl_event *event_out)
{
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, call, r, "%s", sentence);
    return complete_event(queue, event_out);
}

static clmem_status check_call(const clmem_bridge *b, const clmem_bridge_semaphore *sem, cl_command_queue queue,
                               cl_event *event_out, const char *call)
{
    if (event_out)
        *event_out = NULL;
    if (!b || !sem || !queue)
        return fail_null(!b ? "bridge" : !sem ? "semaphore" : "queue");
    BRIDGE_LIVE(b, call);
    LIVE_CHECK(sem->live, MARK_SEMAPHORE, call, sem);
    if (sem->bridge != b)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "The semaphore belongs to bridge %p, not to bridge %p.",
                           (void *)sem->bridge, (void *)b);
    return CLMEM_OK;
}

/* The device-ordered wait or signal: OpenCL's own enqueue, a signal
 * flushed so that Vulkan, waiting on it, sees it. */
static clmem_status enqueue_on_device(clmem_bridge *b, clmem_bridge_semaphore *sem, bool signal, cl_command_queue queue,
                                      cl_uint num_events, const cl_event *wait_list, cl_event *event_out)
{
    cl_int err = signal ? b->cl.signal_semaphores(queue, 1, &sem->cl_sem, NULL, num_events, wait_list, event_out)
                        : b->cl.wait_semaphores(queue, 1, &sem->cl_sem, NULL, num_events, wait_list, event_out);

    if (err == CL_SUCCESS && signal)
        err = clFlush(queue);
    if (err != CL_SUCCESS)
        return clmem_error_set(
            CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, signal ? "clEnqueueSignalSemaphoresKHR" : "clEnqueueWaitSemaphoresKHR",
            err, signal ? "Enqueueing the semaphore signal failed." : "Enqueueing the semaphore wait failed.");
    return CLMEM_OK;
}

/* Host order's wait, once OpenCL's wait list is done: the host learns that
 * Vulkan signalled by having Vulkan consume the signal in a submission
 * with a fence. */
static clmem_status host_wait(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue, cl_event *event_out)
{
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = 1,
                       .pWaitSemaphores = &sem->vk_sem,
                       .pWaitDstStageMask = &stage};
    VkResult r = b->vk.QueueSubmit(sem->vk_queue, 1, &si, sem->fence);

    if (r == VK_SUCCESS) {
        r = b->vk.WaitForFences(b->device, 1, &sem->fence, VK_TRUE, UINT64_MAX);
        /* Reset even after a failed wait, so the next wait's submit is valid. */
        VkResult reset = b->vk.ResetFences(b->device, 1, &sem->fence);
        if (r == VK_SUCCESS)
            r = reset;
    }
    return host_ordered_end(r, "vkQueueSubmit/vkWaitForFences", "Waiting for the semaphore on the host failed.", queue,
                            event_out);
}

/* Host order's signal, once OpenCL's wait list is done: OpenCL's work
 * finished first, then Vulkan signals. */
static clmem_status host_signal(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue,
                                cl_event *event_out)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .signalSemaphoreCount = 1, .pSignalSemaphores = &sem->vk_sem};
    cl_int err = clFinish(queue);

    if (err != CL_SUCCESS)
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clFinish", err,
                               "Finishing the queue before the host-ordered signal failed.");
    return host_ordered_end(b->vk.QueueSubmit(sem->vk_queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit",
                            "Submitting the semaphore signal failed.", queue, event_out);
}

/* A wait or a signal: the checks, then OpenCL's own enqueue in device
 * order, or in host order OpenCL's wait list waited for and Vulkan's side
 * done from the host. */
clmem_status clmem__semaphore_enqueue(enum semaphore_op op, clmem_bridge *b, clmem_bridge_semaphore *sem,
                                      cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                      cl_event *event_out)
{
    bool signal = op == SEMAPHORE_SIGNAL;
    clmem_status s =
        check_call(b, sem, queue, event_out, signal ? "clmem_bridge_semaphore_signal" : "clmem_bridge_semaphore_wait");

    if (s != CLMEM_OK)
        return s;
    if (sem->mode != CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED)
        return enqueue_on_device(b, sem, signal, queue, num_events, wait_list, event_out);
    if ((s = wait_on_host(num_events, wait_list)) != CLMEM_OK)
        return s;
    return signal ? host_signal(b, sem, queue, event_out) : host_wait(b, sem, queue, event_out);
}

CLMEM_EXPORT clmem_status clmem_bridge_semaphore_wait(clmem_bridge *b, clmem_bridge_semaphore *sem,
                                                      cl_command_queue queue, cl_uint num_events,
                                                      const cl_event *wait_list, cl_event *event_out)
{
    return clmem__error_in(__func__,
                           clmem__semaphore_enqueue(SEMAPHORE_WAIT, b, sem, queue, num_events, wait_list, event_out));
}

CLMEM_EXPORT clmem_status clmem_bridge_semaphore_signal(clmem_bridge *b, clmem_bridge_semaphore *sem,
                                                        cl_command_queue queue, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event_out)
{
    return clmem__error_in(__func__,
                           clmem__semaphore_enqueue(SEMAPHORE_SIGNAL, b, sem, queue, num_events, wait_list, event_out));
}
