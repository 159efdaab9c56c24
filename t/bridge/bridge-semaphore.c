/* SPDX-License-Identifier: MIT */
/* Vulkan -> OpenCL -> Vulkan ping-pong ordered only by semaphores, every
 * value checked. Iteration i: Vulkan logs the shared word (what OpenCL made
 * of the previous value) and writes i, then signals `ready`; OpenCL waits
 * on `ready`, acquires, a kernel records the word (must be i) and replaces
 * it with i*3+1, releases and signals `done`, which the next Vulkan
 * submission waits on. No host wait inside the loop on the device-ordered
 * path. 10000 iterations with device ordering (or argv[1]); 300 with host
 * ordering, where each step blocks the host anyway. */
#include "t/lib/bridge-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdlib.h>
#include <time.h>

static const char step_source[] =
    "__kernel void pingpong(__global uint *shared, __global uint *results, uint i) {\n"
    "    results[i] = shared[0];\n"
    "    shared[0] = shared[0] * 3u + 1u;\n"
    "}\n";

static bool exportable_semaphore(struct vkctx *vk)
{
    VkPhysicalDeviceExternalSemaphoreInfo info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
                                                  .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkExternalSemaphoreProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    if (!vk->has_semaphore_fd)
        return false;
    vkGetPhysicalDeviceExternalSemaphoreProperties(vk->physical_device, &info, &props);
    return props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;
}

static VkSemaphore make_semaphore(struct vkctx *vk, bool exportable)
{
    VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                      .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = exportable ? &ex : NULL};
    VkSemaphore s;
    if (vkCreateSemaphore(vk->device, &ci, NULL, &s) != VK_SUCCESS)
        tap_bail("vkCreateSemaphore failed");
    return s;
}

static void on_semaphore_released(void *user)
{
    struct vkctx *vk = ((void **)user)[0];
    VkSemaphore s = (VkSemaphore)((void **)user)[1];
    vkDestroySemaphore(vk->device, s, NULL);
    free(user);
}

/* An anchor owning the VkSemaphore, as an application's would. */
static clmem_keepalive *semaphore_anchor(struct vkctx *vk, VkSemaphore s)
{
    void **pair = malloc(2 * sizeof *pair);
    pair[0] = vk;
    pair[1] = (void *)s;
    return clmem_keepalive_new(on_semaphore_released, pair);
}

static void buffer_barrier(VkCommandBuffer cb, VkBuffer b, uint32_t src_family, uint32_t dst_family)
{
    vk_buffer_barrier(cb, b, src_family, dst_family, VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
}

/* Iteration i's Vulkan work: log shared[0] into log[i], then shared[0] = i.
 * External memory changes hands with queue-family ownership transfers. */
static VkCommandBuffer record_step(struct vkctx *vk, VkBuffer shared, bool external, VkBuffer log, uint32_t i,
                                   bool write)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = vk->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkBufferCopy region = {0, 4 * (VkDeviceSize)i, 4};
    uint32_t ext = external ? VK_QUEUE_FAMILY_EXTERNAL : VK_QUEUE_FAMILY_IGNORED;
    uint32_t own = external ? vk->queue_family : VK_QUEUE_FAMILY_IGNORED;
    VkCommandBuffer cb;

    if (vkAllocateCommandBuffers(vk->device, &ai, &cb) != VK_SUCCESS || vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS)
        tap_bail("allocating command buffer %u failed", i);
    buffer_barrier(cb, shared, ext, own);
    vkCmdCopyBuffer(cb, shared, log, 1, &region);
    buffer_barrier(cb, shared, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    if (write)
        vkCmdFillBuffer(cb, shared, 0, 4, i);
    buffer_barrier(cb, shared, own, ext);
    {
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                             NULL);
    }
    if (vkEndCommandBuffer(cb) != VK_SUCCESS)
        tap_bail("recording command buffer %u failed", i);
    return cb;
}

int main(int argc, char **argv)
{
    struct vkctx vk;
    struct cl_fixture f;
    struct vk_owned shared, log;
    clmem_keepalive *shared_ka, *log_ka, *ready_ka, *done_ka;
    clmem_bridge *b;
    clmem_bridge_semaphore *ready = NULL, *done = NULL;
    clmem_handle *h = NULL;
    VkSemaphore ready_vk, done_vk;
    VkCommandBuffer *cbs;
    cl_kernel k;
    cl_mem results;
    uint32_t n, *seen, *logged = NULL, caps;
    bool device_ordered, exportable;
    clmem_status s;
    int fds_before, wrong_cl = 0, wrong_vk = 0, failed_calls = 0;
    struct timespec t0, t1;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk); /* the paired device, where there is one */
    b = bridge_open(&vk, &f, 0);
    caps = clmem_bridge_caps(b);
    exportable = exportable_semaphore(&vk);
    device_ordered = exportable && (caps & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD);
    tap_is_int(clmem_bridge_check_semaphore(b, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) == CLMEM_OK,
               (caps & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD) != 0,
               "check_semaphore(opaque fd) agrees with the caps (%s)",
               caps & CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD ? "works" : clmem_error_message());
    n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : device_ordered ? 10000 : 300;
    k = cl_fixture_kernel(&f, step_source, "pingpong");
    results = cl_fixture_buffer(&f, 4 * (size_t)n);
    /* Count before any Vulkan object of the test exists: exportable memory
     * is an fd of its own on some drivers (lavapipe: a memfd). */
    fds_before = fd_count();
    shared_ka = vk_owned_new(&shared, b, &vk, 4096, path_memory_props(CLMEM_BRIDGE_PATH_BEST),
                             path_export_types(&vk, CLMEM_BRIDGE_PATH_BEST));
    log_ka = vk_owned_new(&log, b, &vk, 4 * ((VkDeviceSize)n + 1),
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    if (vkctx_fill(&vk, shared.buffer, 0, VK_WHOLE_SIZE, 0xFFFFFFFFu) != VK_SUCCESS)
        tap_bail("initial fill failed");
    ready_vk = make_semaphore(&vk, exportable);
    done_vk = make_semaphore(&vk, exportable);
    ready_ka = semaphore_anchor(&vk, ready_vk);
    done_ka = semaphore_anchor(&vk, done_vk);

    s = clmem_bridge_import_vk(b, &shared.memory, 0, 4096, CLMEM_BRIDGE_PATH_BEST, shared_ka, f.queue,
                               CL_MEM_READ_WRITE, &h);
    tap_ok(s == CLMEM_OK, "import the shared buffer (%s)", s ? clmem_error_message() : "ok");
    s = clmem_bridge_semaphore_import(b, vk.queue, ready_vk, CLMEM_BRIDGE_SEMAPHORE_BEST, ready_ka, &ready);
    tap_ok(s == CLMEM_OK, "import semaphore 'ready' (%s)", s ? clmem_error_message() : "ok");
    s = clmem_bridge_semaphore_import(b, vk.queue, done_vk, CLMEM_BRIDGE_SEMAPHORE_BEST, done_ka, &done);
    tap_ok(s == CLMEM_OK, "import semaphore 'done' (%s)", s ? clmem_error_message() : "ok");
    clmem_keepalive_unref(shared_ka);
    clmem_keepalive_unref(ready_ka);
    clmem_keepalive_unref(done_ka);
    if (!h || !ready || !done)
        tap_bail("cannot run the ping-pong");
    tap_is_int(clmem_bridge_semaphore_get_mode(ready),
               device_ordered ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED,
               "mode %s ordering, as the capabilities say", device_ordered ? "device (opaque fd)" : "host");
    tap_is_int(clmem_bridge_semaphore_get_mode(done), clmem_bridge_semaphore_get_mode(ready),
               "both semaphores got the same mode");
    tap_diag("%u iterations, %s ordering, Vulkan %s, OpenCL %s", n, device_ordered ? "device" : "host",
             vk.device_name, f.device_name);

    cbs = calloc(n + 1, sizeof *cbs);
    for (uint32_t i = 0; i <= n; i++)
        cbs[i] = record_step(&vk, shared.buffer, shared.memory.export_types != 0, log.buffer, i, i < n);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; i < n; i++) {
        cl_mem mem = clmem_handle_mem(h);
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = i > 0,
                           .pWaitSemaphores = &done_vk,
                           .pWaitDstStageMask = &stage,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cbs[i],
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &ready_vk};
        failed_calls += vkQueueSubmit(vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS;
        failed_calls += clmem_bridge_semaphore_wait(b, ready, f.queue, 0, NULL, NULL) != CLMEM_OK;
        failed_calls += clmem_bridge_acquire(b, h, 0, NULL, NULL) != CLMEM_OK;
        clSetKernelArg(k, 0, sizeof mem, &mem);
        clSetKernelArg(k, 1, sizeof results, &results);
        clSetKernelArg(k, 2, sizeof i, &i);
        {
            size_t one = 1;
            failed_calls += clEnqueueNDRangeKernel(f.queue, k, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS;
        }
        failed_calls += clmem_bridge_release(b, h, 0, NULL, NULL) != CLMEM_OK;
        failed_calls += clmem_bridge_semaphore_signal(b, done, f.queue, 0, NULL, NULL) != CLMEM_OK;
    }
    {   /* the last step: Vulkan logs what OpenCL made of n-1 */
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = n > 0,
                           .pWaitSemaphores = &done_vk,
                           .pWaitDstStageMask = &stage,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cbs[n]};
        failed_calls += vkQueueSubmit(vk.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS;
        failed_calls += vkQueueWaitIdle(vk.queue) != VK_SUCCESS;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tap_is_int(failed_calls, 0, "every submit, wait, acquire, kernel, release and signal was accepted");
    tap_diag("%.1f us per iteration (Vulkan write + OpenCL kernel, both directions, semaphores only)",
             ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / (n ? n : 1));

    seen = malloc(4 * (size_t)n);
    clEnqueueReadBuffer(f.queue, results, CL_TRUE, 0, 4 * (size_t)n, seen, 0, NULL, NULL);
    vkMapMemory(vk.device, log.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&logged);
    for (uint32_t i = 0; i < n; i++) {
        if (seen[i] != i && wrong_cl++ < 3)
            tap_diag("iteration %u: OpenCL saw 0x%08x, want 0x%08x", i, seen[i], i);
        if (logged[i + 1] != i * 3u + 1u && wrong_vk++ < 3)
            tap_diag("iteration %u: Vulkan saw 0x%08x, want 0x%08x", i, logged[i + 1], i * 3u + 1u);
    }
    tap_is_int(wrong_cl, 0, "OpenCL saw every value Vulkan wrote (%u of them)", n);
    tap_is_int(wrong_vk, 0, "Vulkan saw every value OpenCL wrote (%u of them)", n);
    tap_is_int(logged[0], 0xFFFFFFFFu, "before the first step Vulkan saw the initial fill");
    vkUnmapMemory(vk.device, log.memory.memory);
    free(seen);

    clmem_bridge_semaphore_unref(ready);
    clmem_bridge_semaphore_unref(done);
    clmem_handle_unref(h);
    s = bridge_settle(b);
    tap_ok(s == CLMEM_OK, "bridge_settle after the last handle and semaphore -> CLMEM_OK (%s)",
           s ? clmem_error_message() : "ok");
    tap_is_int(atomic_load(&shared.released), 1, "the shared buffer's anchor ran once after the last handle");
    for (uint32_t i = 0; i <= n; i++)
        vkFreeCommandBuffers(vk.device, vk.pool, 1, &cbs[i]);
    free(cbs);
    clmem_keepalive_unref(log_ka);
    tap_is_int(fd_count(), fds_before, "no file descriptor leaked (semaphore and memory fds included)");
    clmem_bridge_unref(b);
    clReleaseMemObject(results);
    clReleaseKernel(k);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error");
    vkctx_close(&vk);
    return tap_done();
}
