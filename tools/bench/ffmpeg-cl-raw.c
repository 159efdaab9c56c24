/* SPDX-License-Identifier: MIT */
/* clmem-bench (l): the map's handover of an optimal-tiling frame (the
 * vk-image way, in device order) made with the raw calls, no library
 * function in the timed loop: what clmem_av_cl_map() and the unmap cost
 * at the least on this driver.
 *
 * The same calls as av/sync-device.c, in the same order, on the same
 * queue of FFmpeg's transfer family:
 *   acquire  Vulkan: wait for FFmpeg's semaphores at sem_value; barriers:
 *                    layout GENERAL, released to VK_QUEUE_FAMILY_EXTERNAL;
 *                    signal to_cl (a command buffer recorded per frame,
 *                    since FFmpeg may have changed the layout)
 *            OpenCL: wait to_cl; acquire the images; clFinish (FFmpeg's
 *                    filters enqueue on queues of their own)
 *   release  OpenCL: release the images; signal from_cl; clFlush
 *            Vulkan: wait from_cl; barriers: acquired from EXTERNAL;
 *                    signal FFmpeg's semaphores at sem_value + 1
 * Each submission also signals a timeline of its own, which shows each
 * command buffer done before it is recorded again, as the library's does.
 * Left out: the library's checks and bookkeeping. The images are the
 * library's own imports of the frame (kept per pool frame, retained here),
 * acquired only while the library has them released. */
#include "config.h"
#include "ffmpeg-cl-raw.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* A semaphore of FFmpeg's device, its kind given by `next` (timeline, or
 * exportable binary). */
static VkSemaphore semaphore_new(struct ffcl_raw *r, const void *next)
{
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = next};
    VkSemaphore s;

    check_vk(r->fn->create_semaphore(r->vk->act_dev, &info, NULL, &s), "vkCreateSemaphore((l) raw)");
    return s;
}

/* NVIDIA's driver never closes a memory fd imported at a number that a
 * semaphore fd it took had (docs/driver-notes.md); the bridge moves its
 * memory fds off the numbers of the semaphore fds it hands OpenCL, but
 * cannot see these. So where the driver closed the semaphore's fd, its
 * number is taken again (by /dev/null) until the bench exits. */
static void keep_number_taken(int fd)
{
    int keep;

    if (fcntl(fd, F_GETFD) != -1)
        return; /* still open: the driver's to close */
    if ((keep = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || keep == fd)
        return;
    if (dup2(keep, fd) == fd)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    close(keep);
}

/* OpenCL's import of semaphore s of FFmpeg's device (raw.c's), its
 * fd's number then kept taken. */
static cl_semaphore_khr semaphore_import(struct ffcl_raw *r, VkSemaphore s)
{
    VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                    .semaphore = s,
                                    .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    cl_semaphore_khr cs;
    int fd = -1;

    check_vk(r->fn->get_semaphore_fd(r->vk->act_dev, &info, &fd), "vkGetSemaphoreFdKHR((l) raw)");
    cs = raw_semaphore_from_fd(r->b, fd);
    keep_number_taken(fd);
    return cs;
}

bool ffcl_raw_open(struct ffcl_raw *r, struct bench *b, const AVVulkanDeviceContext *vk, const struct ffvk *fn,
                   cl_command_queue cq, const AVFrame *mapped, char *why, size_t len)
{
    const int all[5] = {vk->queue_family_index, vk->queue_family_tx_index, vk->queue_family_comp_index,
                        vk->queue_family_encode_index, vk->queue_family_decode_index};
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 2};
    VkSemaphoreTypeCreateInfo timeline = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                          .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkExportSemaphoreCreateInfo exportable = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                              .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkCommandBuffer cbs[2];
    uint32_t families = 0;
    cl_uint planes = 0;

    memset(r, 0, sizeof *r);
    if (vk->queue_family_tx_index < 0) {
        snprintf(why, len, "FFmpeg's Vulkan device has no transfer queue family");
        return false;
    }
    if (!b->ext.create_semaphore || !b->ext.wait_semaphores || !b->ext.signal_semaphores || !b->ext.release_semaphore ||
        !b->ext.acquire_external || !b->ext.release_external) {
        snprintf(why, len,
                 "the OpenCL platform resolves no cl_khr_external_semaphore or cl_khr_external_memory "
                 "entry points");
        return false;
    }
    if (!fn->get_semaphore_fd) {
        snprintf(why, len, "FFmpeg's Vulkan device did not enable VK_KHR_external_semaphore_fd");
        return false;
    }
    /* From here nothing fails but by dying: ffcl_raw_close() undoes it. */
    r->b = b;
    r->vk = vk;
    r->fn = fn;
    while (planes < RAW_MAX_PLANES && mapped->data[planes])
        planes++;
    for (int i = 0; i < 5; i++) {
        bool seen = all[i] < 0;
        for (int j = 0; j < i && !seen; j++)
            seen = all[j] == all[i];
        families += !seen;
    }

    /* The queue the library's sync object submits to (av/sync-device.c). */
    fn->get_queue(vk->act_dev, (uint32_t)vk->queue_family_tx_index,
                  vk->nb_tx_queues > 0 ? (uint32_t)vk->nb_tx_queues - 1 : 0, &r->queue);
    r->own_family = families > 1 ? VK_QUEUE_FAMILY_IGNORED : (uint32_t)vk->queue_family_tx_index;
    pci.queueFamilyIndex = (uint32_t)vk->queue_family_tx_index;
    check_vk(fn->create_pool(vk->act_dev, &pci, NULL, &r->pool), "vkCreateCommandPool((l) raw)");
    ai.commandPool = r->pool;
    check_vk(fn->allocate_cbs(vk->act_dev, &ai, cbs), "vkAllocateCommandBuffers((l) raw)");
    r->acquire_cb = cbs[0];
    r->release_cb = cbs[1];
    r->progress = semaphore_new(r, &timeline);
    r->to_cl = semaphore_new(r, &exportable);
    r->from_cl = semaphore_new(r, &exportable);
    r->cl_to = semaphore_import(r, r->to_cl);
    r->cl_from = semaphore_import(r, r->from_cl);
    r->cq = cq;
    check_cl(clRetainCommandQueue(cq), "clRetainCommandQueue((l) raw)");
    for (cl_uint p = 0; p < planes; p++) {
        r->images[p] = (cl_mem)mapped->data[p];
        check_cl(clRetainMemObject(r->images[p]), "clRetainMemObject((l) raw)");
    }
    r->planes = planes;
    return true;
}

/* The barriers of every plane: to OpenCL (layout GENERAL, released to
 * EXTERNAL) or back from it (acquired from EXTERNAL). */
static void record(struct ffcl_raw *r, VkCommandBuffer cb, const AVVkFrame *f, bool to_opencl)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkImageMemoryBarrier bar[RAW_MAX_PLANES];

    for (cl_uint p = 0; p < r->planes; p++)
        bar[p] = (VkImageMemoryBarrier){.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                        .srcAccessMask = 0,
                                        .dstAccessMask =
                                            to_opencl ? 0 : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
                                        .oldLayout = to_opencl ? f->layout[p] : VK_IMAGE_LAYOUT_GENERAL,
                                        .newLayout = VK_IMAGE_LAYOUT_GENERAL,
                                        .srcQueueFamilyIndex = to_opencl ? r->own_family : VK_QUEUE_FAMILY_EXTERNAL,
                                        .dstQueueFamilyIndex = to_opencl ? VK_QUEUE_FAMILY_EXTERNAL : r->own_family,
                                        .image = f->img[p],
                                        .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    check_vk(r->fn->begin_cb(cb, &begin), "vkBeginCommandBuffer((l) raw)");
    r->fn->barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, NULL, 0, NULL,
                   r->planes, bar);
    check_vk(r->fn->end_cb(cb), "vkEndCommandBuffer((l) raw)");
}

/* Wait until the submission that last used a command buffer is done
 * (*done on the timeline), so that it may be recorded again. */
static void wait_done(struct ffcl_raw *r, uint64_t done)
{
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 1,
                                .pSemaphores = &r->progress,
                                .pValues = &done};
    check_vk(r->fn->wait_semaphores(r->vk->act_dev, &info, UINT64_MAX), "vkWaitSemaphores((l) raw)");
}

/* Submit cb: waits (binary semaphores' values are ignored), signals, and
 * the timeline at the next value, which *done gets. */
static void submit(struct ffcl_raw *r, VkCommandBuffer cb, uint32_t nwait, const VkSemaphore *wait,
                   const uint64_t *wait_values, uint32_t nsignal, const VkSemaphore *signal,
                   const uint64_t *signal_values, uint64_t *done, const char *what)
{
    VkSemaphore signals[RAW_MAX_PLANES + 1];
    uint64_t values[RAW_MAX_PLANES + 1];
    VkPipelineStageFlags stages[RAW_MAX_PLANES];
    VkTimelineSemaphoreSubmitInfo timeline = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                              .waitSemaphoreValueCount = nwait,
                                              .pWaitSemaphoreValues = wait_values,
                                              .signalSemaphoreValueCount = nsignal + 1,
                                              .pSignalSemaphoreValues = values};
    VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .pNext = &timeline,
                         .waitSemaphoreCount = nwait,
                         .pWaitSemaphores = wait,
                         .pWaitDstStageMask = stages,
                         .commandBufferCount = 1,
                         .pCommandBuffers = &cb,
                         .signalSemaphoreCount = nsignal + 1,
                         .pSignalSemaphores = signals};

    for (uint32_t i = 0; i < nwait; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    for (uint32_t i = 0; i < nsignal; i++) {
        signals[i] = signal[i];
        values[i] = signal_values ? signal_values[i] : 0;
    }
    signals[nsignal] = r->progress;
    values[nsignal] = r->submitted + 1;
    check_vk(r->fn->submit(r->queue, 1, &info, VK_NULL_HANDLE), what);
    *done = ++r->submitted;
}

void ffcl_raw_acquire(struct ffcl_raw *r, AVVkFrame *f)
{
    wait_done(r, r->acquire_done);
    record(r, r->acquire_cb, f, true);
    submit(r, r->acquire_cb, r->planes, f->sem, f->sem_value, 1, &r->to_cl, NULL, &r->acquire_done,
           "vkQueueSubmit((l) raw acquire)");
    check_cl(r->b->ext.wait_semaphores(r->cq, 1, &r->cl_to, NULL, 0, NULL, NULL),
             "clEnqueueWaitSemaphoresKHR((l) raw)");
    check_cl(r->b->ext.acquire_external(r->cq, r->planes, r->images, 0, NULL, NULL),
             "clEnqueueAcquireExternalMemObjectsKHR((l) raw)");
    check_cl(clFinish(r->cq), "clFinish((l) raw)");
}

void ffcl_raw_release(struct ffcl_raw *r, AVVkFrame *f)
{
    uint64_t zero = 0, signal_values[RAW_MAX_PLANES];

    check_cl(r->b->ext.release_external(r->cq, r->planes, r->images, 0, NULL, NULL),
             "clEnqueueReleaseExternalMemObjectsKHR((l) raw)");
    check_cl(r->b->ext.signal_semaphores(r->cq, 1, &r->cl_from, NULL, 0, NULL, NULL),
             "clEnqueueSignalSemaphoresKHR((l) raw)");
    check_cl(clFlush(r->cq), "clFlush((l) raw)");
    for (cl_uint p = 0; p < r->planes; p++)
        signal_values[p] = f->sem_value[p] + 1;
    wait_done(r, r->release_done);
    record(r, r->release_cb, f, false);
    submit(r, r->release_cb, 1, &r->from_cl, &zero, r->planes, f->sem, signal_values, &r->release_done,
           "vkQueueSubmit((l) raw release)");
    for (cl_uint p = 0; p < r->planes; p++) {
        f->sem_value[p] = signal_values[p];
        f->layout[p] = VK_IMAGE_LAYOUT_GENERAL;
        f->access[p] = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    }
}

void ffcl_raw_close(struct ffcl_raw *r)
{
    if (!r->b)
        return;
    check_vk(r->fn->wait_idle(r->queue), "vkQueueWaitIdle((l) raw)");
    check_cl(clFinish(r->cq), "clFinish((l) raw)");
    for (cl_uint p = 0; p < r->planes; p++)
        clReleaseMemObject(r->images[p]);
    r->b->ext.release_semaphore(r->cl_to);
    r->b->ext.release_semaphore(r->cl_from);
    r->fn->destroy_semaphore(r->vk->act_dev, r->to_cl, NULL);
    r->fn->destroy_semaphore(r->vk->act_dev, r->from_cl, NULL);
    r->fn->destroy_semaphore(r->vk->act_dev, r->progress, NULL);
    /* The semaphore fds' numbers stay taken until the bench exits (keep_number_taken()). */
    r->fn->destroy_pool(r->vk->act_dev, r->pool, NULL); /* frees the command buffers */
    clReleaseCommandQueue(r->cq);
    memset(r, 0, sizeof *r);
}
