/* SPDX-License-Identifier: MIT */
/* Frames in flight: Vulkan writes frames, OpenCL reads them, through a
 * clmem_bridge_ring of 3 slots of 4 frames. Each batch of 4 frames costs
 * one semaphore signal and one wait each way, so on a GPU the context
 * switch between Vulkan and OpenCL is paid once per 4 frames, and 3
 * batches are in flight. The same calls run with device ordering (opaque-fd
 * semaphores, where OpenCL has cl_khr_external_semaphore) or host ordering.
 * Built with nothing but `pkg-config --cflags --libs clmem-bridge`. */
#include <clmem-bridge.h>
#include <stdbool.h>
#include <stdio.h>

#define SLOTS 3
#define BATCH 4
#define FRAMES (SLOTS * BATCH)
#define FRAME_BYTES (64 * 1024)
#define TOTAL 96 /* frames to carry */
#define TIMEOUT_NS UINT64_C(5000000000)

static const char *src =
    "__kernel void check(__global const uint *frame, __global uint *bad, uint want) {\n"
    "    if (frame[get_global_id(0)] != want) atomic_inc(bad);\n"
    "}\n";

int main(void)
{
    /* Vulkan, with the fd extensions where the device offers them. */
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    VkPhysicalDevice pd;
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS ||
        vkEnumeratePhysicalDevices(instance, &n, &pd) < 0 || n == 0)
        return 77; /* no Vulkan */
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t next = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &next);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = next,
                              .ppEnabledExtensionNames = exts};
    VkDevice device;
    VkQueue vq;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;
    vkGetDeviceQueue(device, 0, 0, &vq); /* family 0: graphics and compute on every driver we know */

    /* OpenCL on the paired device, and the bridge. */
    cl_platform_id platform;
    cl_device_id cl_dev;
    if (clmem_bridge_pair(instance, NULL, pd, &platform, &cl_dev) != CLMEM_OK &&
        (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl_dev, NULL) != CL_SUCCESS))
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cl_dev, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, cl_dev, NULL, &err); /* in order */
    clmem_bridge_info info = {.size = sizeof info, .instance = instance, .physical_device = pd,
                              .device = device, .context = ctx, .cl_device = cl_dev};
    clmem_bridge *bridge;
    if (clmem_bridge_create(&info, &bridge) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }

    /* The frames, in the memory the bridge shares best: exported device
     * memory where an fd path works, host-visible memory (zero-copy on CPU
     * devices) elsewhere. */
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags export_types;
    if (clmem_bridge_best_memory(bridge, &path, &props, &export_types) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    VkBuffer buf[FRAMES];
    clmem_bridge_vk_memory mem[FRAMES];
    clmem_handle *frame[FRAMES];
    for (int i = 0; i < FRAMES; i++) {
        if (clmem_bridge_vk_buffer_create(bridge, FRAME_BYTES, VK_BUFFER_USAGE_TRANSFER_DST_BIT, props, export_types,
                                          &buf[i], &mem[i]) != CLMEM_OK ||
            clmem_bridge_import_vk(bridge, &mem[i], 0, FRAME_BYTES, path, NULL, queue, CL_MEM_READ_ONLY,
                                   &frame[i]) != CLMEM_OK) {
            fprintf(stderr, "frame %d: %s\n", i, clmem_error_message());
            return 1;
        }
    }

    /* Two binary semaphores per slot, exportable where device ordering
     * works. (No anchor: this program destroys them itself at the end.) */
    bool device_ordered = clmem_bridge_check_semaphore(bridge, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) == CLMEM_OK;
    VkExportSemaphoreCreateInfo esci = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                        .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                 .pNext = device_ordered ? &esci : NULL};
    VkSemaphore vk_sem[2 * SLOTS];
    clmem_bridge_semaphore *sem[2 * SLOTS];
    for (int i = 0; i < 2 * SLOTS; i++)
        if (vkCreateSemaphore(device, &sci, NULL, &vk_sem[i]) != VK_SUCCESS ||
            clmem_bridge_semaphore_import(bridge, vq, vk_sem[i], CLMEM_BRIDGE_SEMAPHORE_BEST, NULL, &sem[i]) !=
                CLMEM_OK) {
            fprintf(stderr, "semaphore %d: %s\n", i, clmem_error_message());
            return 1;
        }

    /* The ring: ready[s] = sem[s], done[s] = sem[SLOTS + s]. */
    clmem_bridge_ring_info ri = {.size = sizeof ri, .frame_count = FRAMES, .batch_size = BATCH,
                                 .frames = frame, .ready = sem, .done = sem + SLOTS, .queue = queue};
    clmem_bridge_ring *ring;
    if (clmem_bridge_ring_create(bridge, &ri, &ring) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }

    /* Vulkan: a command buffer and a fence per slot, recorded again for
     * each batch once the slot's last submission completed. */
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    vkCreateCommandPool(device, &pci, NULL, &pool);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = SLOTS};
    VkCommandBuffer cb[SLOTS];
    vkAllocateCommandBuffers(device, &cai, cb);
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, .flags = VK_FENCE_CREATE_SIGNALED_BIT};
    VkFence fence[SLOTS];
    for (int s = 0; s < SLOTS; s++)
        vkCreateFence(device, &fci, NULL, &fence[s]);

    /* OpenCL: the kernel that checks a frame, and its error count. */
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(prog, 1, &cl_dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(prog, "check", &err);
    cl_uint zero = 0, bad = 0;
    cl_mem bad_mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
    clSetKernelArg(k, 1, sizeof bad_mem, &bad_mem);

    /* One thread plays both sides here: Vulkan keeps SLOTS batches ahead
     * of OpenCL. (On two threads, each side runs its own loop.) */
    int produced = 0, consumed = 0, failed = 0;
    while (consumed < TOTAL && !failed) {
        while (produced < TOTAL && produced - consumed < FRAMES) {
            clmem_bridge_ring_frame f[BATCH];
            for (int p = 0; p < BATCH; p++)
                failed |= clmem_bridge_ring_vk_next(ring, 0, TIMEOUT_NS, &f[p]) != CLMEM_OK;
            if (failed)
                break;
            uint32_t s = f[0].index / BATCH;
            vkWaitForFences(device, 1, &fence[s], VK_TRUE, UINT64_MAX);
            vkResetFences(device, 1, &fence[s]);
            VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            vkBeginCommandBuffer(cb[s], &bi);
            /* Every word of a frame: its sequence number. Then the frame
             * goes to OpenCL ("Synchronisation with Vulkan" in
             * clmem-bridge.h): exported memory (the fd paths) is released
             * to VK_QUEUE_FAMILY_EXTERNAL, host-mapped memory made visible
             * to the host, through which OpenCL reads it. Vulkan overwrites
             * a frame without reading it, so it takes it back without an
             * acquire. */
            VkBufferMemoryBarrier bb[BATCH];
            for (int p = 0; p < BATCH; p++) {
                vkCmdFillBuffer(cb[s], buf[f[p].index], 0, VK_WHOLE_SIZE, (uint32_t)f[p].sequence);
                bb[p] = (VkBufferMemoryBarrier){
                    .sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                    .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                    .dstAccessMask = export_types ? 0 : VK_ACCESS_HOST_READ_BIT,
                    .srcQueueFamilyIndex = export_types ? 0 : VK_QUEUE_FAMILY_IGNORED,
                    .dstQueueFamilyIndex = export_types ? VK_QUEUE_FAMILY_EXTERNAL : VK_QUEUE_FAMILY_IGNORED,
                    .buffer = buf[f[p].index],
                    .size = VK_WHOLE_SIZE};
            }
            vkCmdPipelineBarrier(cb[s], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, NULL, BATCH,
                                 bb, 0, NULL);
            vkEndCommandBuffer(cb[s]);
            /* One submission per batch: the first frame's wait, the last
             * frame's signal. */
            VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .waitSemaphoreCount = f[0].wait_semaphore != VK_NULL_HANDLE,
                               .pWaitSemaphores = &f[0].wait_semaphore, .pWaitDstStageMask = &stage,
                               .commandBufferCount = 1, .pCommandBuffers = &cb[s],
                               .signalSemaphoreCount = 1, .pSignalSemaphores = &f[BATCH - 1].signal_semaphore};
            failed |= vkQueueSubmit(vq, 1, &si, fence[s]) != VK_SUCCESS;
            failed |= clmem_bridge_ring_vk_submitted(ring, &f[BATCH - 1]) != CLMEM_OK;
            produced += BATCH;
        }
        /* OpenCL: the oldest batch, its kernels, and back to Vulkan. */
        clmem_bridge_ring_batch batch;
        if (failed || clmem_bridge_ring_cl_next(ring, TIMEOUT_NS, 0, NULL, &batch, NULL) != CLMEM_OK) {
            failed = 1;
            break;
        }
        for (uint32_t i = 0; i < batch.count; i++) {
            cl_mem m = clmem_handle_mem(batch.frames[i]);
            cl_uint want = (cl_uint)(batch.first_sequence + i);
            size_t words = FRAME_BYTES / 4;
            clSetKernelArg(k, 0, sizeof m, &m);
            clSetKernelArg(k, 2, sizeof want, &want);
            clEnqueueNDRangeKernel(queue, k, 1, NULL, &words, NULL, 0, NULL, NULL);
        }
        failed |= clmem_bridge_ring_cl_done(ring, &batch, 0, NULL, NULL) != CLMEM_OK;
        consumed += (int)batch.count;
    }
    if (failed)
        fprintf(stderr, "the ring stopped: %s\n", clmem_error_message());

    /* The end of the stream: Vulkan waits on the done semaphores no frame
     * carried, so that every semaphore ends unsignalled. */
    VkSemaphore waits[SLOTS];
    VkPipelineStageFlags stages[SLOTS] = {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                          VK_PIPELINE_STAGE_ALL_COMMANDS_BIT};
    uint32_t nwaits = 0;
    if (!failed && clmem_bridge_ring_vk_drain(ring, TIMEOUT_NS, SLOTS, waits, &nwaits) == CLMEM_OK && nwaits) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .waitSemaphoreCount = nwaits,
                           .pWaitSemaphores = waits, .pWaitDstStageMask = stages};
        vkQueueSubmit(vq, 1, &si, VK_NULL_HANDLE);
    }
    clEnqueueReadBuffer(queue, bad_mem, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL);
    vkQueueWaitIdle(vq);
    clmem_bridge_handle_path(frame[0], &path);
    printf("carried %d frames of %d KiB in batches of %d, %d batches in flight, through the %s path with %s "
           "ordering: %s\n",
           consumed, FRAME_BYTES / 1024, BATCH, SLOTS, clmem_bridge_path_name(path),
           device_ordered ? "device" : "host",
           failed ? "FAILED" : bad ? "some words were wrong" : "OpenCL saw every frame as Vulkan wrote it");

    /* Teardown: the ring, then the semaphores and frames, then wait until
     * the library holds nothing of the device, before vkDestroyDevice. */
    clmem_bridge_ring_unref(ring);
    for (int i = 0; i < 2 * SLOTS; i++) {
        clmem_bridge_semaphore_unref(sem[i]); /* releases OpenCL's semaphore */
        vkDestroySemaphore(device, vk_sem[i], NULL);
    }
    for (int i = 0; i < FRAMES; i++)
        clmem_handle_unref(frame[i]);
    if (clmem_bridge_device_finish(device, TIMEOUT_NS) != CLMEM_OK)
        fprintf(stderr, "%s\n", clmem_error_message());
    for (int i = 0; i < FRAMES; i++)
        clmem_bridge_vk_buffer_destroy(bridge, buf[i], &mem[i]);
    clmem_bridge_unref(bridge);
    for (int s = 0; s < SLOTS; s++)
        vkDestroyFence(device, fence[s], NULL);
    vkDestroyCommandPool(device, pool, NULL);
    clReleaseMemObject(bad_mem);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return failed || bad ? 1 : 0;
}
