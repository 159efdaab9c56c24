/* SPDX-License-Identifier: MIT */
/* CLBlast's SGEMM on matrices that Vulkan wrote, with padded rows, through
 * clmem handles: no copy on the fd paths and on CPU devices. Built with
 * `pkg-config --cflags --libs clmem-bridge clblast` and -lm (fabs, fmax). */
#include <clmem-bridge.h>
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>

enum { M = 64, K = 48, N = 40, PITCH = 256 }; /* every row padded to 256 bytes */
static float a[M][PITCH / 4], b[K][PITCH / 4], c[M][PITCH / 4];

/* One Vulkan command buffer, submitted and waited for. */
static void vk_run(VkDevice dev, VkQueue q, VkCommandBuffer cb, void (*record)(VkCommandBuffer, void *), void *arg)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb, &bi);
    record(cb, arg);
    vkEndCommandBuffer(cb);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE);
    vkQueueWaitIdle(q);
}
static void write_ab(VkCommandBuffer cb, void *buf) /* Vulkan writes A and B */
{
    vkCmdUpdateBuffer(cb, ((VkBuffer *)buf)[0], 0, sizeof a, a);
    vkCmdUpdateBuffer(cb, ((VkBuffer *)buf)[1], 0, sizeof b, b);
}
static void copy_c(VkCommandBuffer cb, void *buf) /* C to host-visible staging */
{
    VkBufferCopy region = {0, 0, sizeof c};
    vkCmdCopyBuffer(cb, ((VkBuffer *)buf)[2], ((VkBuffer *)buf)[3], 1, &region);
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0,
                         NULL);
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
    float prio = 1.0f;
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX]; /* what sharing needs, where offered */
    uint32_t n_exts = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &n_exts);
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = n_exts,
                              .ppEnabledExtensionNames = exts};
    VkDevice device;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;
    VkQueue vq;
    vkGetDeviceQueue(device, 0, 0, &vq);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    vkCreateCommandPool(device, &pci, NULL, &pool);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool, .commandBufferCount = 1};
    VkCommandBuffer cb;
    vkAllocateCommandBuffers(device, &cai, &cb);

    cl_platform_id platform;
    cl_device_id cl_dev;
    if (clmem_bridge_pair(instance, NULL, pd, &platform, &cl_dev) != CLMEM_OK &&
        (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl_dev, NULL) != CL_SUCCESS))
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cl_dev, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, cl_dev, NULL, &err);
    clmem_bridge_info info = {.size = sizeof info, .instance = instance, .physical_device = pd,
                              .device = device, .context = ctx, .cl_device = cl_dev};
    clmem_bridge *bridge;
    if (clmem_bridge_create(&info, &bridge) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }

    /* The memory the bridge shares best: exported device memory where an
     * fd path works, host-visible memory where only host-mapped does. */
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags export;
    if (clmem_bridge_best_memory(bridge, &path, &props, &export) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    const VkDeviceSize size[4] = {sizeof a, sizeof b, sizeof c, sizeof c};
    VkBuffer buf[4];
    clmem_bridge_vk_memory mem[4];
    clmem_handle *h[3];
    for (int i = 0; i < 4; i++) { /* A, B, C, and a staging buffer to read C */
        VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        if (clmem_bridge_vk_buffer_create(bridge, size[i], usage, i < 3 ? props : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, i < 3 ? export : 0, &buf[i],
                                          &mem[i]) != CLMEM_OK ||
            (i < 3 && clmem_bridge_import_vk_pitched(bridge, &mem[i], 0, size[i], PITCH, sizeof(float), path, NULL,
                                                     queue, CL_MEM_READ_WRITE, &h[i]) != CLMEM_OK)) {
            fprintf(stderr, "%s\n", clmem_error_message());
            return 1;
        }
    }

    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            a[i][k] = (float)((i + 2 * k) % 7) * 0.5f - 1.5f;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            b[k][j] = (float)((3 * k + j) % 5) - 2.0f;
    vk_run(device, vq, cb, write_ab, buf);

    /* C = A B on the handles' queue; a leading dimension is a row pitch in
     * elements, exact because the import checked the pitch's multiple. */
    cl_command_queue q = clmem_handle_queue(h[0]);
    cl_event gemm, done;
    clmem_bridge_acquire_many(bridge, 3, h, q, 0, NULL, NULL);
    CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, M, N, K, 1.0f,
                                        clmem_handle_mem(h[0]), 0, clmem_handle_row_pitch(h[0]) / sizeof(float),
                                        clmem_handle_mem(h[1]), 0, clmem_handle_row_pitch(h[1]) / sizeof(float), 0.0f,
                                        clmem_handle_mem(h[2]), 0, clmem_handle_row_pitch(h[2]) / sizeof(float), &q,
                                        &gemm);
    if (st != CLBlastSuccess) {
        fprintf(stderr, "CLBlastSgemm: status %d\n", (int)st);
        return 1;
    }
    clmem_bridge_release_many(bridge, 3, h, q, 1, &gemm, &done); /* back to Vulkan */
    clWaitForEvents(1, &done);
    clReleaseEvent(gemm);
    clReleaseEvent(done);

    /* Vulkan reads C; the CPU checks it. Every input is a multiple of 1/2
     * and every sum small, so float is exact: the tolerance 1e-3 is slack. */
    vk_run(device, vq, cb, copy_c, buf);
    void *p;
    vkMapMemory(device, mem[3].memory, 0, sizeof c, 0, &p);
    const float(*got)[PITCH / 4] = p;
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0;
            for (int k = 0; k < K; k++)
                want += (double)a[i][k] * b[k][j];
            worst = fmax(worst, fabs(got[i][j] - want));
        }
    vkUnmapMemory(device, mem[3].memory);
    printf("CLBlast SGEMM %dx%dx%d on Vulkan memory through the %s path, ld %u: max error %g (tolerance 1e-3)\n", M, K,
           N, clmem_bridge_path_name(path), (unsigned)(clmem_handle_row_pitch(h[0]) / sizeof(float)), worst);

    for (int i = 0; i < 3; i++)
        clmem_handle_unref(h[i]);
    if (clmem_bridge_device_finish(device, UINT64_C(5000000000)) != CLMEM_OK) { /* OpenCL let go of the memory */
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    for (int i = 0; i < 4; i++)
        clmem_bridge_vk_buffer_destroy(bridge, buf[i], &mem[i]);
    clmem_bridge_unref(bridge);
    CLBlastClearCache();
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return worst <= 1e-3 ? 0 : 1;
}
