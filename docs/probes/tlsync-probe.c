/* SPDX-License-Identifier: MIT */
/* Raw calls only, no clmem. Results and what they mean:
 * docs/driver-notes.md, "Ordering OpenCL after a Vulkan timeline semaphore".
 * Needs a Vulkan device with VK_KHR_external_memory_fd and
 * VK_KHR_external_semaphore_fd and the OpenCL device of the same UUID with
 * cl_khr_external_memory_opaque_fd and cl_khr_external_semaphore_opaque_fd
 * (NVIDIA; lavapipe has no semaphore export). Build and run:
 *   cc -std=gnu11 -O2 -o /tmp/tlsync docs/probes/tlsync-probe.c -lOpenCL -lvulkan
 *   /tmp/tlsync 400          (frames per mode) */
/* tlsync_probe: what does it cost to order OpenCL after a Vulkan timeline
 * semaphore (FFmpeg's AVVkFrame sync) on the device rather than on the host?
 * Raw calls only, one process. A 1 MiB exportable buffer imported into
 * OpenCL; a timeline semaphore T stands for FFmpeg's per-plane semaphore.
 * Per frame, starting at T = v:
 *   host:   vkWaitSemaphores(T >= v); acquire, kernel, release; clFinish;
 *           vkSignalSemaphore(T = v + 1)                  (libclmem-av today)
 *   dev-Q:  vkQueueSubmit on queue Q with no command buffer: wait T >= v,
 *           signal binary S1; OpenCL waits S1, acquire, kernel, release,
 *           signals S2, clFlush; vkQueueSubmit on Q: wait S2, signal T = v+1;
 *           then the host waits T >= v + 1 (to time one frame end to end)
 *   Q = G (graphics/compute family) or X (a transfer-only family).
 * Before each frame, optionally (suffix +w), Vulkan does real work on G
 * (vkCmdFillBuffer of the buffer, signalling T = v), as FFmpeg's upload
 * would.  Usage: tlsync_probe [frames]  */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d (line %d)\n", #x, r_, __LINE__); exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d (line %d)\n", #x, r_, __LINE__); exit(1); } } while (0)
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp_d(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static VkDevice dev; static VkQueue qG, qX; static int haveX;
static VkSemaphore T, S1, S2; static uint64_t tv;
static VkCommandBuffer fillcb; static VkBuffer vbuf;
static cl_command_queue cq; static cl_mem cbuf; static cl_kernel ck;
static cl_semaphore_khr c1, c2;
static clEnqueueWaitSemaphoresKHR_fn cWait; static clEnqueueSignalSemaphoresKHR_fn cSig;
static clEnqueueAcquireExternalMemObjectsKHR_fn cAcq; static clEnqueueReleaseExternalMemObjectsKHR_fn cRel;
static PFN_vkWaitSemaphores vWait; static PFN_vkSignalSemaphore vSig;

static void host_wait_T(uint64_t v) {
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, 0, 0, 1, &T, &v};
    VK(vWait(dev, &wi, UINT64_MAX));
}
static void submit_sem(VkQueue q, VkSemaphore w, uint64_t wv, VkSemaphore s, uint64_t sv, VkCommandBuffer cb) {
    VkPipelineStageFlags st = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    uint64_t wvals[1] = {wv}, svals[1] = {sv};
    VkTimelineSemaphoreSubmitInfo ti = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, 0, w ? 1 : 0, wvals, s ? 1 : 0, svals};
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti};
    if (w) { si.waitSemaphoreCount = 1; si.pWaitSemaphores = &w; si.pWaitDstStageMask = &st; }
    if (s) { si.signalSemaphoreCount = 1; si.pSignalSemaphores = &s; }
    if (cb) { si.commandBufferCount = 1; si.pCommandBuffers = &cb; }
    VK(vkQueueSubmit(q, 1, &si, VK_NULL_HANDLE));
}

/* one frame; returns its time in us */
static double frame(char mode, char qsel, int work) {
    double a = now_us();
    size_t one = 1;
    if (work) { submit_sem(qG, VK_NULL_HANDLE, 0, T, tv + 1, fillcb); tv++; }     /* "FFmpeg's upload" signals T = v */
    else { VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, 0, T, tv + 1}; VK(vSig(dev, &si)); tv++; }
    uint64_t v = tv;
    if (mode == 'h') {
        host_wait_T(v);
        CL(cAcq(cq, 1, &cbuf, 0, NULL, NULL));
        CL(clEnqueueNDRangeKernel(cq, ck, 1, NULL, &one, NULL, 0, NULL, NULL));
        CL(cRel(cq, 1, &cbuf, 0, NULL, NULL));
        CL(clFinish(cq));
        VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, 0, T, v + 1}; VK(vSig(dev, &si));
    } else {
        VkQueue q = qsel == 'X' ? qX : qG;
        submit_sem(q, T, v, S1, 0, VK_NULL_HANDLE);
        CL(cWait(cq, 1, &c1, NULL, 0, NULL, NULL));
        CL(cAcq(cq, 1, &cbuf, 0, NULL, NULL));
        CL(clEnqueueNDRangeKernel(cq, ck, 1, NULL, &one, NULL, 0, NULL, NULL));
        CL(cRel(cq, 1, &cbuf, 0, NULL, NULL));
        CL(cSig(cq, 1, &c2, NULL, 0, NULL, NULL));
        CL(clFlush(cq));
        submit_sem(q, S2, 0, T, v + 1, VK_NULL_HANDLE);
        host_wait_T(v + 1);
    }
    tv = v + 1;
    return now_us() - a;
}

static void run(const char *name, char mode, char qsel, int work, int n) {
    if (qsel == 'X' && !haveX) { printf("%-10s skipped: no transfer-only queue family\n", name); return; }
    double *t = calloc(n, sizeof *t);
    for (int i = 0; i < 20; i++) frame(mode, qsel, work);
    for (int i = 0; i < n; i++) t[i] = frame(mode, qsel, work);
    qsort(t, n, sizeof *t, cmp_d);
    printf("RESULT %-10s per frame us: median %.1f p10 %.1f p90 %.1f (n=%d)\n", name, t[n / 2], t[n / 10], t[n * 9 / 10], n);
    free(t);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 400;
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ic = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ic.pApplicationInfo = &app;
    VkInstance inst; VK(vkCreateInstance(&ic, 0, &inst));
    uint32_t npd = 8; VkPhysicalDevice pds[8]; VK(vkEnumeratePhysicalDevices(inst, &npd, pds));
    VkPhysicalDevice pd = pds[0]; uint8_t uuid[16];
    for (uint32_t i = 0; i < npd; i++) {
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
        vkGetPhysicalDeviceProperties2(pds[i], &p2);
        if (i == 0 || p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { pd = pds[i]; memcpy(uuid, id.deviceUUID, 16); }
    }
    uint32_t nq = 16; VkQueueFamilyProperties qf[16]; vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    uint32_t fG = 0, fX = UINT32_MAX;
    for (uint32_t i = 0; i < nq; i++) {
        if ((qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) fG = i;
        if ((qf[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(qf[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) && fX == UINT32_MAX) fX = i;
    }
    haveX = fX != UINT32_MAX;
    float prio = 1; VkDeviceQueueCreateInfo qc[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, fG, 1, &prio},
                                                     {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, fX, 1, &prio}};
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES}; f12.timelineSemaphore = VK_TRUE;
    const char *ext[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12}; dc.queueCreateInfoCount = haveX ? 2 : 1; dc.pQueueCreateInfos = qc;
    dc.enabledExtensionCount = 2; dc.ppEnabledExtensionNames = ext;
    VK(vkCreateDevice(pd, &dc, 0, &dev));
    vkGetDeviceQueue(dev, fG, 0, &qG); if (haveX) vkGetDeviceQueue(dev, fX, 0, &qX);
    vWait = (PFN_vkWaitSemaphores)vkGetDeviceProcAddr(dev, "vkWaitSemaphores");
    vSig = (PFN_vkSignalSemaphore)vkGetDeviceProcAddr(dev, "vkSignalSemaphore");
    PFN_vkGetMemoryFdKHR getMemFd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    PFN_vkGetSemaphoreFdKHR getSemFd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");
    printf("queue families: G=%u X=%s\n", fG, haveX ? "yes" : "none");
    /* buffer */
    const VkDeviceSize size = 1 << 20;
    VkExternalMemoryBufferCreateInfo xb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &xb}; bc.size = size; bc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VK(vkCreateBuffer(dev, &bc, 0, &vbuf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(dev, vbuf, &mr);
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t mt = 0; for (uint32_t i = 0; i < mp.memoryTypeCount; i++) if ((mr.memoryTypeBits >> i & 1) && (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) { mt = i; break; }
    VkExportMemoryAllocateInfo xa = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &xa, mr.size, mt};
    VkDeviceMemory mem; VK(vkAllocateMemory(dev, &ma, 0, &mem)); VK(vkBindBufferMemory(dev, vbuf, mem, 0));
    int mfd; VkMemoryGetFdInfoKHR mfi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, mem, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(getMemFd(dev, &mfi, &mfd));
    /* semaphores */
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, 0, VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo tsci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &tci}; VK(vkCreateSemaphore(dev, &tsci, 0, &T));
    VkExportSemaphoreCreateInfo xs = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, 0, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo bsci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &xs};
    VK(vkCreateSemaphore(dev, &bsci, 0, &S1)); VK(vkCreateSemaphore(dev, &bsci, 0, &S2));
    int s1fd, s2fd; VkSemaphoreGetFdInfoKHR sfi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, 0, S1, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(getSemFd(dev, &sfi, &s1fd)); sfi.semaphore = S2; VK(getSemFd(dev, &sfi, &s2fd));
    /* fill command buffer on G */
    VkCommandPoolCreateInfo pc = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0, 0, fG}; VkCommandPool pool; VK(vkCreateCommandPool(dev, &pc, 0, &pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VK(vkAllocateCommandBuffers(dev, &cai, &fillcb));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(fillcb, &bi)); vkCmdFillBuffer(fillcb, vbuf, 0, 4096, 7); VK(vkEndCommandBuffer(fillcb));
    /* OpenCL */
    cl_platform_id plats[8]; cl_uint np = 0; CL(clGetPlatformIDs(8, plats, &np));
    cl_device_id cd = 0; cl_platform_id cp = 0;
    for (cl_uint i = 0; i < np && !cd; i++) {
        cl_device_id ds[8]; cl_uint nd = 0; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd)) continue;
        for (cl_uint j = 0; j < nd; j++) { uint8_t u[16]; if (!clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, u, NULL) && !memcmp(u, uuid, 16)) { cd = ds[j]; cp = plats[i]; break; } }
    }
    if (!cd) { printf("no OpenCL device with the Vulkan UUID\n"); return 1; }
    cl_int e; cl_context_properties cprops[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)cp, 0};
    cl_context ctx = clCreateContext(cprops, 1, &cd, NULL, NULL, &e); CL(e);
    cq = clCreateCommandQueueWithProperties(ctx, cd, NULL, &e); CL(e);
    cWait = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(cp, "clEnqueueWaitSemaphoresKHR");
    cSig = (clEnqueueSignalSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(cp, "clEnqueueSignalSemaphoresKHR");
    cAcq = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(cp, "clEnqueueAcquireExternalMemObjectsKHR");
    cRel = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(cp, "clEnqueueReleaseExternalMemObjectsKHR");
    clCreateSemaphoreWithPropertiesKHR_fn cCreate = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(cp, "clCreateSemaphoreWithPropertiesKHR");
    cl_mem_properties mpr[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)mfd, 0};
    cbuf = clCreateBufferWithProperties(ctx, mpr, CL_MEM_READ_WRITE, size, NULL, &e); CL(e);
    cl_semaphore_properties_khr p1[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)s1fd, 0};
    c1 = cCreate(ctx, p1, &e); CL(e);
    cl_semaphore_properties_khr p2[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)s2fd, 0};
    c2 = cCreate(ctx, p2, &e); CL(e);
    const char *src = "__kernel void k(__global uint *p) { if (get_global_id(0) == 0) p[1] = p[0] + 1u; }";
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &e); CL(e); CL(clBuildProgram(pr, 1, &cd, "", NULL, NULL));
    ck = clCreateKernel(pr, "k", &e); CL(e); CL(clSetKernelArg(ck, 0, sizeof cbuf, &cbuf));
    run("host", 'h', 'G', 0, n);
    run("dev-G", 'd', 'G', 0, n);
    run("dev-X", 'd', 'X', 0, n);
    run("host+w", 'h', 'G', 1, n);
    run("dev-G+w", 'd', 'G', 1, n);
    run("dev-X+w", 'd', 'X', 1, n);
    run("host", 'h', 'G', 0, n);
    VK(vkDeviceWaitIdle(dev)); CL(clFinish(cq));
    return 0;
}
