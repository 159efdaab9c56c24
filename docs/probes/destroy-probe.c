/* SPDX-License-Identifier: MIT */
/* Raw calls only, no clmem. Results and what they mean:
 * docs/driver-notes.md, "NVIDIA runs a cl_mem's destructor callback before
 * kernels using it have completed". Needs a Vulkan device with
 * VK_KHR_external_memory_fd and the OpenCL device of the same UUID with
 * cl_khr_external_memory_opaque_fd (NVIDIA). Build and run:
 *   cc -std=gnu11 -O2 -o /tmp/destroy docs/probes/destroy-probe.c -lOpenCL -lvulkan
 *   timeout 40 /tmp/destroy 2000000   (iterations of the spinning kernel) */
/* destroy-probe: on this driver, does a cl_mem's destructor callback run
 * before a kernel that uses it has completed? Raw calls only.
 * Run it under `timeout 40`: on NVIDIA 580 the last case (imported buffer,
 * kernel gated on a user event) hung before the release. The kernel-complete
 * callback time is printed too, but NVIDIA delivers it late (20-36 ms after
 * clFinish returned): compare the destructor time with clFinish's. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
static _Atomic double t_cb, t_done; static cl_event kev; static _Atomic cl_int st_at_cb = -99;
static void CL_CALLBACK on_destroy(cl_mem m, void *u) { (void)m; (void)u; cl_int s = -98; clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, 0); st_at_cb = s; t_cb = now(); }
static void CL_CALLBACK on_done(cl_event e, cl_int s, void *u) { (void)e; (void)s; (void)u; t_done = now(); }
static const char *src = "__kernel void spin(__global uint *p, uint n){ uint x = p[0]; for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u; p[1] = x; }";

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? strtoul(argv[1], 0, 10) : 100000000u;
    setvbuf(stdout, 0, _IOLBF, 0);
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
    cl_command_queue qa = clCreateCommandQueueWithProperties(ctx, cld, 0, &err); CL(err);
    cl_command_queue qb = clCreateCommandQueueWithProperties(ctx, cld, 0, &err); CL(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, 0, &err); CL(err); CL(clBuildProgram(prog, 1, &cld, "", 0, 0));
    cl_kernel k = clCreateKernel(prog, "spin", &err); CL(err);
    clEnqueueAcquireExternalMemObjectsKHR_fn acq = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    clEnqueueReleaseExternalMemObjectsKHR_fn rel = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    (void)qa;
    for (int imported = 0; imported < 2; imported++)
    for (int gated = 0; gated < 2; gated++) {
        cl_mem cm;
        printf("case imported=%d gated=%d\n", imported, gated);
        if (imported) {
            VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, m, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
            int fd = -1; VK(getfd(dev, &gi, &fd));
            cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cld, CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
            cm = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, mr.size, 0, &err); CL(err);
            CL(acq(qb, 1, &cm, 0, 0, 0));
        } else { cm = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, 0, &err); CL(err); }
        CL(clSetKernelArg(k, 0, sizeof cm, &cm)); CL(clSetKernelArg(k, 1, sizeof n, &n));
        cl_event gate = 0; if (gated) { gate = clCreateUserEvent(ctx, &err); CL(err); }
        size_t g = 1; t_cb = 0; t_done = 0; st_at_cb = -99;
        CL(clEnqueueNDRangeKernel(qb, k, 1, 0, &g, &g, gated ? 1 : 0, gated ? &gate : 0, &kev));
        CL(clSetEventCallback(kev, CL_COMPLETE, on_done, 0));
        if (imported) CL(rel(qb, 1, &cm, 0, 0, 0));
        CL(clFlush(qb));
        CL(clSetMemObjectDestructorCallback(cm, on_destroy, 0));
        double t0 = now();
        printf("  releasing\n");
        CL(clReleaseMemObject(cm));
        printf("  released\n");
        double t_rel = now();
        if (gated) { usleep(200000); CL(clSetUserEventStatus(gate, CL_COMPLETE)); }
        double t_gate = now();
        printf("  finishing\n");
        CL(clFinish(qb)); double t_fin = now();
        usleep(100000);
        printf("%s, %s: release returned +%.3f ms; gate opened +%.3f ms; destructor cb +%.3f ms (kernel status then %d); kernel complete cb +%.3f ms; clFinish +%.3f ms => destructor %s completion by %.3f ms\n",
               imported ? "imported opaque-fd" : "plain cl_mem", gated ? "kernel gated on user event" : "kernel ungated",
               t_rel - t0, t_gate - t0, t_cb ? t_cb - t0 : -1.0, st_at_cb, t_done ? t_done - t0 : -1.0, t_fin - t0,
               (t_cb && t_done && t_cb < t_done) ? "BEFORE" : "after", (t_cb && t_done) ? t_done - t_cb : 0.0);
        clReleaseEvent(kev); if (gate) clReleaseEvent(gate);
    }
    return 0;
}
