/* SPDX-License-Identifier: MIT */
/* One handoff there and back: Vulkan writes a pattern into memory it shares
 * with OpenCL, hands it over (clmem_bridge_acquire), an OpenCL kernel
 * inverts every byte in place, OpenCL hands it back (clmem_bridge_release),
 * and Vulkan copies it into a host-visible buffer, where every byte is
 * checked. The Vulkan memory is freed by its anchor once OpenCL is done with
 * it (at the latest in clmem_bridge_device_finish(), before vkDestroyDevice).
 *
 * The barriers on Vulkan's side, and why each is there, are on the page
 * "Synchronisation with Vulkan" of clmem-bridge.h (make doc renders it as
 * doc/html/vulkan_sync.html). Run it with the Khronos validation layer,
 * which must stay silent:
 *   VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation ./bridge-example
 * Built with nothing but `pkg-config --cflags --libs clmem-bridge`. */
#include <clmem-bridge.h>
#include <stdio.h>

#define SIZE ((VkDeviceSize)1 << 20)
#define TIMEOUT_NS UINT64_C(5000000000)

struct vk_buffer {
    clmem_bridge *bridge;
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
};

/* The application's anchor: what it does when nobody needs the memory. It
 * may run on an OpenCL driver thread, so it only frees and prints. */
static void free_vulkan_buffer(void *user)
{
    struct vk_buffer *b = user;
    clmem_bridge_vk_buffer_destroy(b->bridge, b->buffer, &b->memory);
    printf("Vulkan memory freed after OpenCL let go\n");
}

static const char *src = "__kernel void invert(__global uint *p) { p[get_global_id(0)] = ~p[get_global_id(0)]; }";

/* The pattern Vulkan writes: a different value in every word. */
static uint32_t pattern(size_t word)
{
    return (uint32_t)word * 2654435761u + 12345u;
}

/* The barrier around OpenCL's use of the shared buffer ("Synchronisation
 * with Vulkan" in clmem-bridge.h).
 * Exported memory (the fd paths) changes owner with a queue-family
 * ownership transfer: `to_opencl` releases it to VK_QUEUE_FAMILY_EXTERNAL
 * after Vulkan's writes, otherwise it is acquired back before Vulkan's
 * reads. Host-mapped memory is not exported: OpenCL reaches it as the host
 * does, so Vulkan's writes are made visible to the host, and OpenCL's
 * writes need nothing (the next vkQueueSubmit makes host writes visible). */
static void handoff_barrier(VkCommandBuffer cb, const struct vk_buffer *shared, uint32_t family, int to_opencl)
{
    int external = shared->memory.export_types != 0;
    VkBufferMemoryBarrier bb = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                .buffer = shared->buffer,
                                .size = VK_WHOLE_SIZE};
    VkPipelineStageFlags src_stage, dst_stage;

    if (to_opencl) {
        bb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        src_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
        if (external) { /* the release: its destination masks are ignored */
            bb.srcQueueFamilyIndex = family;
            bb.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
            dst_stage = VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
        } else {
            bb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
            dst_stage = VK_PIPELINE_STAGE_HOST_BIT;
        }
    } else {
        if (!external)
            return;
        /* the acquire: its source masks are ignored */
        bb.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
        bb.dstQueueFamilyIndex = family;
        bb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        src_stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
        dst_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    }
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, NULL, 1, &bb, 0, NULL);
}

/* Record a copy with its handoff barriers into cb, submit it and wait for
 * its fence: host order, the simplest way to order Vulkan and OpenCL (a
 * semaphore through clmem_bridge_semaphore_wait() is the other). */
static int copy_and_wait(VkDevice device, VkQueue vq, VkCommandBuffer cb, VkFence fence, VkBuffer from, VkBuffer to,
                         const struct vk_buffer *shared, uint32_t family, int to_opencl)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkBufferCopy region = {0, 0, SIZE};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};

    if (vkResetCommandBuffer(cb, 0) != VK_SUCCESS || vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS)
        return 0;
    if (!to_opencl)
        handoff_barrier(cb, shared, family, 0); /* before Vulkan reads what OpenCL wrote */
    vkCmdCopyBuffer(cb, from, to, 1, &region);
    if (to_opencl) {
        handoff_barrier(cb, shared, family, 1); /* after Vulkan's writes */
    } else { /* the copy's result, for the host to read */
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                             NULL);
    }
    return vkEndCommandBuffer(cb) == VK_SUCCESS && vkResetFences(device, 1, &fence) == VK_SUCCESS &&
           vkQueueSubmit(vq, 1, &si, fence) == VK_SUCCESS &&
           vkWaitForFences(device, 1, &fence, VK_TRUE, TIMEOUT_NS) == VK_SUCCESS;
}

int main(void)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    VkPhysicalDevice pd;
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS ||
        vkEnumeratePhysicalDevices(instance, &n, &pd) < 0 || n == 0)
        return 77; /* no Vulkan */
    /* A queue family that can copy (graphics and compute families can). */
    VkQueueFamilyProperties families[16];
    uint32_t nfam = 0, family = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, NULL);
    nfam = nfam < 16 ? nfam : 16;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, families);
    while (family < nfam && !(families[family].queueFlags &
                              (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)))
        family++;
    if (family == nfam)
        return 77;
    /* The device extensions the bridge shares through, where offered. */
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t n_exts = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &n_exts);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = n_exts, .ppEnabledExtensionNames = exts};
    VkDevice device;
    VkQueue vq;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;
    vkGetDeviceQueue(device, family, 0, &vq);

    /* OpenCL: the device paired by UUID, else the first one. */
    cl_platform_id platform;
    cl_device_id cl_dev;
    if (clmem_bridge_pair(instance, NULL, pd, &platform, &cl_dev) != CLMEM_OK &&
        (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl_dev, NULL) != CL_SUCCESS))
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cl_dev, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, cl_dev, NULL, &err);

    /* The bridge: this VkDevice paired with this cl_context. */
    clmem_bridge_info info = {.size = sizeof info, .instance = instance, .physical_device = pd,
                              .device = device, .context = ctx, .cl_device = cl_dev};
    clmem_bridge *bridge;
    if (clmem_bridge_create(&info, &bridge) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }

    /* The shared buffer, in the memory this bridge shares best: exported
     * device memory where an fd path works (zero-copy on a GPU),
     * host-visible memory where only the host-mapped path does (zero-copy
     * on a CPU). And a host-visible buffer the host reads and writes: the
     * pattern goes up from it, OpenCL's result comes back into it. */
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags export_types;
    struct vk_buffer vb = {.bridge = bridge}, host = {.bridge = bridge};
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    uint32_t *words = NULL;
    if (clmem_bridge_best_memory(bridge, &path, &props, &export_types) != CLMEM_OK ||
        clmem_bridge_vk_buffer_create(bridge, SIZE, usage, props, export_types, &vb.buffer, &vb.memory) != CLMEM_OK ||
        clmem_bridge_vk_buffer_create(bridge, SIZE, usage,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                      &host.buffer, &host.memory) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    if (vkMapMemory(device, host.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&words) != VK_SUCCESS)
        return 1;
    clmem_keepalive *vk_anchor = clmem_keepalive_new(free_vulkan_buffer, &vb);

    clmem_handle *h = NULL;
    clmem_status s = clmem_bridge_import_vk(bridge, &vb.memory, 0, SIZE, path, vk_anchor, queue,
                                            CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(vk_anchor); /* the import holds its own reference */
    if (s != CLMEM_OK) {
        fprintf(stderr, "import failed: %s\n", clmem_error_message());
        return 1;
    }
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(prog, 1, &cl_dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(prog, "invert", &err);
    cl_mem m = clmem_handle_mem(h);
    size_t nwords = SIZE / 4;
    clSetKernelArg(k, 0, sizeof m, &m);

    /* Vulkan: a command buffer and a fence for the two copies. */
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = family};
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vkCreateCommandPool(device, &pci, NULL, &pool);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    vkAllocateCommandBuffers(device, &cai, &cb);
    vkCreateFence(device, &fci, NULL, &fence);

    /* 1. Vulkan writes the pattern (a copy from the host's buffer), then
     *    releases the memory; the fence says it all completed. */
    for (size_t i = 0; i < nwords; i++)
        words[i] = pattern(i);
    int ok = copy_and_wait(device, vq, cb, fence, host.buffer, vb.buffer, &vb, family, 1);

    /* 2. OpenCL: acquire, invert every byte in place, release. */
    cl_event done = NULL;
    ok = ok && clmem_bridge_acquire(bridge, h, 0, NULL, NULL) == CLMEM_OK; /* OpenCL owns the memory */
    ok = ok && clEnqueueNDRangeKernel(queue, k, 1, NULL, &nwords, NULL, 0, NULL, NULL) == CL_SUCCESS;
    ok = ok && clmem_bridge_release(bridge, h, 0, NULL, &done) == CLMEM_OK; /* back to Vulkan */
    ok = ok && clWaitForEvents(1, &done) == CL_SUCCESS; /* Vulkan waits for the release */
    if (done)
        clReleaseEvent(done);

    /* 3. Vulkan acquires the memory back and copies it to the host's
     *    buffer; the host checks every byte. */
    for (size_t i = 0; i < nwords; i++)
        words[i] = 0;
    ok = ok && copy_and_wait(device, vq, cb, fence, vb.buffer, host.buffer, &vb, family, 0);
    size_t wrong = 0, first_wrong = 0;
    for (size_t i = 0; ok && i < nwords; i++) {
        uint32_t want = ~pattern(i);
        for (int byte = 0; byte < 4; byte++) {
            if ((((words[i] ^ want) >> (8 * byte)) & 0xffu) == 0)
                continue;
            if (wrong++ == 0)
                first_wrong = 4 * i + (size_t)byte;
        }
    }

    clmem_bridge_handle_path(h, &path);
    if (!ok)
        printf("shared %llu bytes through the %s path: a call failed (%s)\n", (unsigned long long)SIZE,
               clmem_bridge_path_name(path), clmem_error_message());
    else if (wrong)
        printf("shared %llu bytes through the %s path: %zu bytes wrong, the first at byte %zu\n",
               (unsigned long long)SIZE, clmem_bridge_path_name(path), wrong, first_wrong);
    else
        printf("shared %llu bytes through the %s path: Vulkan wrote them, OpenCL inverted them in place, "
               "Vulkan read them back: every byte checked\n",
               (unsigned long long)SIZE, clmem_bridge_path_name(path));
    clmem_handle_unref(h); /* the last handle: OpenCL lets go, then the anchor frees the Vulkan memory */

    /* Before vkDestroyDevice: wait until the library holds nothing of the
     * device (the anchor has run by then). The context needs nothing. */
    vkUnmapMemory(device, host.memory.memory);
    clmem_bridge_vk_buffer_destroy(bridge, host.buffer, &host.memory);
    if (clmem_bridge_device_finish(device, TIMEOUT_NS) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    clmem_bridge_unref(bridge);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return ok && !wrong ? 0 : 1;
}
