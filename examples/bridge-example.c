/* Vulkan memory shared with OpenCL, which adds one to every word in place;
 * the Vulkan memory is freed by its anchor once OpenCL is done with it (at
 * the latest in clmem_bridge_device_finish(), before vkDestroyDevice).
 * Built with nothing but `pkg-config --cflags --libs clmem-bridge`. */
#include <clmem-bridge.h>
#include <stdio.h>

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

static const char *src = "__kernel void inc(__global uint *p) { p[get_global_id(0)] += 1u; }";

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
    /* The device extensions the bridge shares through, where offered. */
    const char *exts[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX];
    uint32_t n_exts = 0;
    clmem_bridge_device_extensions(instance, NULL, pd, exts, &n_exts);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = n_exts, .ppEnabledExtensionNames = exts};
    VkDevice device;
    if (vkCreateDevice(pd, &dci, NULL, &device) != VK_SUCCESS)
        return 1;

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

    /* The memory this bridge shares best: exported device memory where an
     * fd path works (zero-copy on a GPU), host-visible memory where only
     * the host-mapped path does (zero-copy on a CPU). */
    clmem_bridge_path path;
    VkMemoryPropertyFlags props;
    VkExternalMemoryHandleTypeFlags export_types;
    struct vk_buffer vb = {.bridge = bridge};
    const VkDeviceSize size = 1 << 20;
    if (clmem_bridge_best_memory(bridge, &path, &props, &export_types) != CLMEM_OK ||
        clmem_bridge_vk_buffer_create(bridge, size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, props, export_types,
                                      &vb.buffer, &vb.memory) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    clmem_keepalive *vk_anchor = clmem_keepalive_new(free_vulkan_buffer, &vb);

    clmem_handle *h = NULL;
    clmem_status s = clmem_bridge_import_vk(bridge, &vb.memory, 0, size, path, vk_anchor, queue,
                                            CL_MEM_READ_WRITE, &h);
    clmem_keepalive_unref(vk_anchor); /* the import holds its own reference */
    if (s != CLMEM_OK) {
        fprintf(stderr, "import failed: %s\n", clmem_error_message());
        return 1;
    }
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(prog, 1, &cl_dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(prog, "inc", &err);
    cl_mem m = clmem_handle_mem(h);
    size_t words = size / 4;
    clSetKernelArg(k, 0, sizeof m, &m);

    clmem_bridge_acquire(bridge, h, 0, NULL, NULL); /* OpenCL owns the memory */
    clEnqueueNDRangeKernel(queue, k, 1, NULL, &words, NULL, 0, NULL, NULL);
    cl_event done;
    clmem_bridge_release(bridge, h, 0, NULL, &done); /* back to Vulkan */
    clWaitForEvents(1, &done);
    clReleaseEvent(done);

    clmem_bridge_handle_path(h, &path);
    printf("shared %llu bytes through the %s path\n", (unsigned long long)size, clmem_bridge_path_name(path));
    clmem_handle_unref(h); /* the last handle: OpenCL lets go, then the anchor frees the Vulkan memory */

    /* Before vkDestroyDevice: wait until the library holds nothing of the
     * device (the anchor has run by then). The context needs nothing. */
    if (clmem_bridge_device_finish(device, UINT64_C(5000000000)) != CLMEM_OK) {
        fprintf(stderr, "%s\n", clmem_error_message());
        return 1;
    }
    clmem_bridge_unref(bridge);

    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return 0;
}
