/* SPDX-License-Identifier: MIT */
/* clmem-bench: the devices: Vulkan, the OpenCL device, the bridges, the path,
 * the raw entry points and the memory limits. */
#include "bench.h"

/* One work-item: the smallest kernel that reads and writes the shared
 * memory. p[1] accumulates every frame's p[0], so after K frames it shows
 * whether each kernel saw its own frame's Vulkan write (ordering), not only
 * the last one. */
static const char kernel_source[] = "__kernel void bump(__global uint *p) {\n"
                                    "    uint v = p[0];\n"
                                    "    p[0] = v + 1u;\n"
                                    "    p[1] = p[1] + v;\n"
                                    "}\n";

/* The paired OpenCL device, or the first one there is. */
static void pick_opencl(struct bench *b)
{
    clmem_status s = clmem_bridge_pair(b->vk.instance, b->vk.get_instance_proc_addr, b->vk.physical_device,
                                       &b->platform, &b->device);
    cl_platform_id platforms[16];
    cl_uint np = 0;

    if (s == CLMEM_OK) {
        snprintf(b->pair_note, sizeof b->pair_note, "paired with the Vulkan device by deviceUUID");
        return;
    }
    snprintf(b->pair_note, sizeof b->pair_note, "the first OpenCL device (clmem_bridge_pair: %s)",
             clmem_error_message());
    if (clGetPlatformIDs(16, platforms, &np) != CL_SUCCESS)
        np = 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &b->device, &nd) == CL_SUCCESS && nd > 0) {
            b->platform = platforms[p];
            return;
        }
    }
    printf("clmem-bench: no OpenCL device, nothing to measure\n");
    exit(77);
}

/* A bridge on the bench's Vulkan device, context and OpenCL device, with
 * `flags` (clmem_bridge_info.flags); any failure ends the run, naming what
 * it was for. The caller owns the one reference. */
clmem_bridge *bench_bridge_create(struct bench *b, uint32_t flags, const char *what)
{
    clmem_bridge_info info = {.size = sizeof info,
                              .instance = b->vk.instance,
                              .physical_device = b->vk.physical_device,
                              .device = b->vk.device,
                              .get_instance_proc_addr = b->vk.get_instance_proc_addr,
                              .context = b->context,
                              .cl_device = b->device,
                              .flags = flags};
    clmem_bridge *br = NULL;
    check_clmem(clmem_bridge_create(&info, &br), what);
    return br;
}

void setup(struct bench *b, const struct options *o)
{
    cl_context_properties cprops[3] = {CL_CONTEXT_PLATFORM, 0, 0};
    cl_device_type type = 0;
    cl_int err;

    /* The validation layer (tools/vkctx/vkctx.c turns it on when installed) slows
     * every Vulkan call; a benchmark runs without it unless asked. */
    if (!o->validate)
        setenv("CLMEM_VALIDATION", "0", 1);
    if (!vkctx_open(&b->vk, -1)) {
        const char *want = getenv("CLMEM_VK_DEVICE");
        struct vkctx probe;
        /* Asking for a device that is not there is a mistake, not a
         * machine without Vulkan: an error, not a skip. */
        if (want && *want && vkctx_find_device(&probe) < 0 && vkctx_count_devices(&probe) > 0)
            die("%s", b->vk.error);
        printf("clmem-bench: no usable Vulkan device, nothing to measure: %s\n", b->vk.error);
        exit(77);
    }
    vkGetPhysicalDeviceProperties(b->vk.physical_device, &b->vk_props);
    pick_opencl(b);

    cprops[1] = (cl_context_properties)b->platform;
    b->context = clCreateContext(cprops, 1, &b->device, NULL, NULL, &err);
    check_cl(err, "clCreateContext");
    b->queue = clCreateCommandQueueWithProperties(b->context, b->device, NULL, &err);
    check_cl(err, "clCreateCommandQueueWithProperties");
    b->program = clCreateProgramWithSource(b->context, 1, (const char *[]){kernel_source}, NULL, &err);
    check_cl(err, "clCreateProgramWithSource");
    check_cl(clBuildProgram(b->program, 1, &b->device, "", NULL, NULL), "clBuildProgram");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        b->kernel[v] = clCreateKernel(b->program, "bump", &err);
        check_cl(err, "clCreateKernel");
    }

    clGetDeviceInfo(b->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    b->cpu_device = (type & CL_DEVICE_TYPE_CPU) != 0;

    /* The bridges, before anything is timed. */
    b->bridge = bench_bridge_create(b, 0, "clmem_bridge_create");
    b->bridge_uncached =
        bench_bridge_create(b, CLMEM_BRIDGE_NO_IMPORT_CACHE, "clmem_bridge_create(CLMEM_BRIDGE_NO_IMPORT_CACHE)");

    /* The bridge answered this at creation (the flag does not change it). */
    if (clmem_bridge_check_path(b->bridge, CLMEM_BRIDGE_PATH_OPAQUE_FD) == CLMEM_OK) {
        b->path = CLMEM_BRIDGE_PATH_OPAQUE_FD;
        snprintf(b->path_note, sizeof b->path_note, "clmem_bridge_check_path(opaque-fd) is OK");
    } else {
        snprintf(b->path_note, sizeof b->path_note, "opaque fd is not possible: %s", clmem_error_message());
        b->path = CLMEM_BRIDGE_PATH_HOST_MAPPED;
        check_clmem(clmem_bridge_check_path(b->bridge, CLMEM_BRIDGE_PATH_HOST_MAPPED),
                    "clmem_bridge_check_path(host-mapped)");
    }

    raw_resolve(b);
    {
        cl_ulong v = 0;
        VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        clGetDeviceInfo(b->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, NULL);
        b->cl_max_alloc = v;
        clGetDeviceInfo(b->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, NULL);
        b->cl_global_mem = v;
        vkGetPhysicalDeviceProperties2(b->vk.physical_device, &p2);
        b->vk_max_alloc = m3.maxMemoryAllocationSize;
        b->host_mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    }

    semaphores_setup(b);
}
