/* SPDX-License-Identifier: MIT */
/* The fewest calls that share Vulkan memory with OpenCL: a bridge, the
 * memory it shares best, one import, OpenCL writing it between acquire and
 * release, and the end before vkDestroyDevice. Vulkan does not touch the
 * memory here; examples/bridge-example.c adds Vulkan's side (its barriers)
 * and checks every byte. Built with `pkg-config --cflags --libs clmem-bridge`. */
#include <clmem-bridge.h>
#include <stdio.h>

#define SIZE (1u << 20)

int main(void)
{
    /* Vulkan: the first device, with the extensions the bridge shares through. */
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    VkPhysicalDevice pd;
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &instance) != VK_SUCCESS ||
        vkEnumeratePhysicalDevices(instance, &n, &pd) < 0 || n == 0)
        return 77; /* no Vulkan */
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t n_exts = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &n_exts);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = n_exts,
                              .ppEnabledExtensionNames = exts};
    VkDevice device;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;

    /* OpenCL: the device with Vulkan's deviceUUID, else any (host-mapped). */
    cl_platform_id platform;
    cl_device_id cl_dev;
    if (clmem_bridge_pair(instance, NULL, pd, &platform, &cl_dev) != CLMEM_OK &&
        (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
         clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl_dev, NULL) != CL_SUCCESS))
        return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cl_dev, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(ctx, cl_dev, NULL, &err);

    /* The bridge, the memory it shares best, and one import of it. */
    clmem_bridge_info info = {.size = sizeof info, .instance = instance, .physical_device = pd,
                              .device = device, .context = ctx, .cl_device = cl_dev};
    clmem_bridge *bridge = NULL;
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags export_types;
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
    clmem_handle *h = NULL;
    if (clmem_bridge_create(&info, &bridge) != CLMEM_OK ||
        clmem_bridge_best_memory(bridge, &path, &props, &export_types) != CLMEM_OK ||
        clmem_bridge_vk_buffer_create(bridge, SIZE, VK_BUFFER_USAGE_TRANSFER_DST_BIT, props, export_types, &buffer,
                                      &memory) != CLMEM_OK ||
        clmem_bridge_import_vk(bridge, &memory, 0, SIZE, path, NULL, queue, CL_MEM_READ_WRITE, &h) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }

    /* OpenCL owns the memory from the acquire to the release. */
    const cl_uint value = 42;
    cl_event released;
    if (clmem_bridge_acquire(bridge, h, 0, NULL, NULL) != CLMEM_OK ||
        clEnqueueFillBuffer(queue, clmem_handle_mem(h), &value, sizeof value, 0, SIZE, 0, NULL, NULL) != CL_SUCCESS ||
        clmem_bridge_release(bridge, h, 0, NULL, &released) != CLMEM_OK || clWaitForEvents(1, &released) != CL_SUCCESS) {
        fprintf(stderr, "the handoff failed: %s\n", clmem_error_message());
        return 1;
    }
    clReleaseEvent(released); /* the memory is Vulkan's again */
    printf("OpenCL wrote %u bytes of Vulkan memory through the %s path\n", SIZE, clmem_bridge_path_name(path));

    /* The end: drop the handle, wait until the library holds nothing of
     * the device, then free the memory and destroy the device. */
    clmem_handle_unref(h);
    if (clmem_bridge_device_finish(device, 5000000000u /* ns */) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    clmem_bridge_vk_buffer_destroy(bridge, buffer, &memory);
    clmem_bridge_unref(bridge);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return 0;
}
