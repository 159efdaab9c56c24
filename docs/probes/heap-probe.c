/* SPDX-License-Identifier: MIT */
/* Raw calls only, no clmem. Results and what they mean:
 * docs/driver-notes.md, "The heap grows on the opaque-fd import path".
 * Needs a Vulkan device with VK_KHR_external_memory_fd and the OpenCL
 * device of the same UUID with cl_khr_external_memory_opaque_fd (NVIDIA).
 * Build and run:
 *   cc -std=gnu11 -O2 -o /tmp/heap docs/probes/heap-probe.c -lOpenCL -lvulkan
 *   /tmp/heap 5000           (import/release cycles per case) */
/* heap-probe: does the NVIDIA driver's opaque-fd import grow the heap per
 * import/release cycle when no library is involved? Raw calls only. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
static atomic_int destroyed;
static void CL_CALLBACK on_destroy(cl_mem m, void *u) { (void)m; (void)u; atomic_fetch_add(&destroyed, 1); }
static size_t heap(void) { struct mallinfo2 mi = mallinfo2(); return mi.uordblks + mi.hblkhd; }
static int nfds(void) { int n = 0; for (int k = 0; k < 4096; k++) if (fcntl(k, F_GETFD) != -1) n++; return n; }

int main(int argc, char **argv) {
    int cycles = argc > 1 ? atoi(argv[1]) : 5000;
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ic = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ic.pApplicationInfo = &app;
    VkInstance inst; VK(vkCreateInstance(&ic, 0, &inst));
    uint32_t npd = 8; VkPhysicalDevice pds[8]; VK(vkEnumeratePhysicalDevices(inst, &npd, pds));
    VkPhysicalDevice pd = pds[0]; uint8_t uuid[16];
    for (uint32_t i = 0; i < npd; i++) {
        VkPhysicalDeviceIDProperties idp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &idp};
        vkGetPhysicalDeviceProperties2(pds[i], &p2);
        if (p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || i == 0) { pd = pds[i]; memcpy(uuid, idp.deviceUUID, 16); }
    }
    float prio = 1; VkDeviceQueueCreateInfo qc = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, 0, 1, &prio};
    const char *dext[] = {"VK_KHR_external_memory_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; dc.queueCreateInfoCount = 1; dc.pQueueCreateInfos = &qc;
    dc.enabledExtensionCount = 1; dc.ppEnabledExtensionNames = dext;
    VkDevice dev; VK(vkCreateDevice(pd, &dc, 0, &dev));
    PFN_vkGetMemoryFdKHR getfd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    VkExternalMemoryBufferCreateInfo eb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO}; bc.pNext = &eb; bc.size = 1 << 20;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer b; VK(vkCreateBuffer(dev, &bc, 0, &b));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, b, &mr);
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t mt = 0; while (!((mr.memoryTypeBits >> mt) & 1) || !(mp.memoryTypes[mt].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) mt++;
    VkExportMemoryAllocateInfo ex = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &ex, mr.size, mt};
    VkDeviceMemory m; VK(vkAllocateMemory(dev, &ma, 0, &m)); VK(vkBindBufferMemory(dev, b, m, 0));

    cl_uint np = 0; clGetPlatformIDs(0, 0, &np); cl_platform_id plats[8]; clGetPlatformIDs(np > 8 ? 8 : np, plats, 0);
    cl_device_id cld = 0; cl_platform_id plat = 0;
    for (cl_uint i = 0; i < np && i < 8; i++) {
        cl_uint nd = 0; cl_device_id ds[8]; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd)) continue;
        for (cl_uint j = 0; j < nd && j < 8; j++) { cl_uchar uu[16] = {0}; if (!clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, uu, 0) && !memcmp(uu, uuid, 16)) { cld = ds[j]; plat = plats[i]; } }
    }
    if (!cld) { printf("no paired OpenCL device\n"); return 0; }
    cl_int err; cl_context ctx = clCreateContext(0, 1, &cld, 0, 0, &err); CL(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cld, 0, &err); CL(err);
    clEnqueueAcquireExternalMemObjectsKHR_fn acq = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    clEnqueueReleaseExternalMemObjectsKHR_fn rel = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");

    for (int variant = 0; variant < 3; variant++) {
        /* 0: import+release; 1: + destructor callback, wait for it; 2: + acquire/release + callback */
        size_t h0 = 0; int f0 = 0;
        for (int it = -200; it < cycles; it++) {
            if (it == 0) { h0 = heap(); f0 = nfds(); }
            VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, m, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
            int fd = -1; VK(getfd(dev, &gi, &fd));
            cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                         CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cld, CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
            cl_mem cm = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, mr.size, 0, &err); CL(err);
            int want = atomic_load(&destroyed) + 1;
            if (variant >= 1) CL(clSetMemObjectDestructorCallback(cm, on_destroy, 0));
            if (variant == 2) { CL(acq(q, 1, &cm, 0, 0, 0)); CL(rel(q, 1, &cm, 0, 0, 0)); CL(clFinish(q)); }
            CL(clReleaseMemObject(cm));
            if (variant >= 1) { struct timespec ts = {0, 20000}; int n = 0; while (atomic_load(&destroyed) < want && n++ < 100000) nanosleep(&ts, 0); }
        }
        usleep(200000);
        size_t h1 = heap(); int f1 = nfds();
        printf("variant %d (%s): %d cycles, heap %+.1f B/cycle, fds %d -> %d\n", variant,
               variant == 0 ? "import+release" : variant == 1 ? "import+destructor cb+release+wait" : "import+cb+acquire/release+release+wait",
               cycles, ((double)h1 - (double)h0) / cycles, f0, f1);
    }
    return 0;
}
