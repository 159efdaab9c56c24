/* SPDX-License-Identifier: MIT */
/* gate_probe: which OpenCL enqueue calls return at once, and which wait on
 * the host, while earlier commands on the same in-order queue are (a) held
 * behind a user event that another thread completes 300 ms later, or
 * (b) a kernel that runs for about 300 ms? Raw calls only, no clmem.
 *
 * One process, one Vulkan device and the OpenCL device of the same UUID;
 * 16 MiB of device-local Vulkan memory imported as an opaque fd; one
 * binary semaphore Vulkan exports and OpenCL imports (OpenCL signals,
 * Vulkan waits). For each case: what is already enqueued (and flushed),
 * then the call timed, then whether it returned before the gate opened
 * (or the kernel completed), then a clFinish.
 *
 *   release:  acquired before; clEnqueueReleaseExternalMemObjectsKHR
 *   release-q2: acquired before; a marker on the queue, then the release
 *             on a second queue of the context, waiting on that marker
 *   acquire:  clEnqueueAcquireExternalMemObjectsKHR
 *   signal:   clEnqueueSignalSemaphoresKHR + clFlush, then vkQueueSubmit
 *             waiting on the semaphore (timed separately)
 *   marker:   clEnqueueMarkerWithWaitList (a plain command, the control)
 *   kernel:   clEnqueueNDRangeKernel of a second kernel (the control)
 *
 * Usage: gate_probe [gate_ms]   (default 300). Prints one line a case. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }

static const char *KSRC =
    "__kernel void bump(__global uint *p) { p[4] = p[5] + 1u; }\n"
    "__kernel void spin(__global volatile uint *p, uint n) {\n"
    "  uint x = p[2];\n"
    "  for (uint i = 1; i <= n; i++) { for (uint j = 0; j < 2000u; j++) x = x * 1664525u + 1013904223u; p[3] = x; }\n"
    "  p[1] = 0xD0Eu;\n"
    "}\n";

static VkInstance inst; static VkPhysicalDevice pd; static VkDevice vdev; static VkQueue vq; static uint8_t uuid[16];
static VkFence fence;
static cl_platform_id plat; static cl_device_id dev; static cl_context ctx; static cl_command_queue q, q2;
static cl_kernel k_bump, k_spin;
static clEnqueueAcquireExternalMemObjectsKHR_fn acquire; static clEnqueueReleaseExternalMemObjectsKHR_fn release;
static clCreateSemaphoreWithPropertiesKHR_fn create_sem; static clEnqueueSignalSemaphoresKHR_fn signal_sem;
static cl_mem mem; static cl_semaphore_khr csem; static VkSemaphore vsem;

static uint32_t find_type(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    printf("no memory type 0x%x\n", want); _exit(1);
}

static void vk_open(void) {
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ic = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ic.pApplicationInfo = &app;
    VK(vkCreateInstance(&ic, 0, &inst));
    uint32_t npd = 8; VkPhysicalDevice pds[8]; VK(vkEnumeratePhysicalDevices(inst, &npd, pds));
    for (uint32_t i = 0; i < npd; i++) {
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
        vkGetPhysicalDeviceProperties2(pds[i], &p2);
        if (!pd || p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { pd = pds[i]; memcpy(uuid, id.deviceUUID, 16); }
    }
    float prio = 1; VkDeviceQueueCreateInfo qc = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, 0, 1, &prio};
    const char *ext[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; dc.queueCreateInfoCount = 1; dc.pQueueCreateInfos = &qc;
    dc.enabledExtensionCount = 2; dc.ppEnabledExtensionNames = ext;
    VK(vkCreateDevice(pd, &dc, 0, &vdev));
    vkGetDeviceQueue(vdev, 0, 0, &vq);
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VK(vkCreateFence(vdev, &fci, 0, &fence));
}

static void cl_open(void) {
    cl_platform_id plats[8]; cl_uint np = 0; CL(clGetPlatformIDs(8, plats, &np));
    for (cl_uint i = 0; i < np && !dev; i++) {
        cl_device_id ds[8]; cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd)) continue;
        for (cl_uint j = 0; j < nd; j++) {
            uint8_t u[16];
            if (!clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, u, NULL) && !memcmp(u, uuid, 16)) { dev = ds[j]; plat = plats[i]; break; }
        }
    }
    if (!dev) { printf("no OpenCL device with the Vulkan device's UUID\n"); _exit(1); }
    cl_int e; cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    ctx = clCreateContext(cp, 1, &dev, NULL, NULL, &e); CL(e);
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e); CL(e);
    q2 = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e); CL(e);
#define EXT(var, type, name) var = (type)clGetExtensionFunctionAddressForPlatform(plat, name); if (!var) { printf("missing %s\n", name); _exit(1); }
    EXT(acquire, clEnqueueAcquireExternalMemObjectsKHR_fn, "clEnqueueAcquireExternalMemObjectsKHR");
    EXT(release, clEnqueueReleaseExternalMemObjectsKHR_fn, "clEnqueueReleaseExternalMemObjectsKHR");
    EXT(create_sem, clCreateSemaphoreWithPropertiesKHR_fn, "clCreateSemaphoreWithPropertiesKHR");
    EXT(signal_sem, clEnqueueSignalSemaphoresKHR_fn, "clEnqueueSignalSemaphoresKHR");
    cl_program pr = clCreateProgramWithSource(ctx, 1, &KSRC, NULL, &e); CL(e);
    CL(clBuildProgram(pr, 1, &dev, "", NULL, NULL));
    k_bump = clCreateKernel(pr, "bump", &e); CL(e);
    k_spin = clCreateKernel(pr, "spin", &e); CL(e);
}

static void shared_objects(void) {
    PFN_vkGetMemoryFdKHR get_mem_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(vdev, "vkGetMemoryFdKHR");
    PFN_vkGetSemaphoreFdKHR get_sem_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(vdev, "vkGetSemaphoreFdKHR");
    VkExternalMemoryBufferCreateInfo xb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &xb}; bc.size = 16 << 20;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    VkBuffer buf; VK(vkCreateBuffer(vdev, &bc, 0, &buf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(vdev, buf, &mr);
    VkExportMemoryAllocateInfo xa = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &xa, mr.size, find_type(mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    VkDeviceMemory vmem; VK(vkAllocateMemory(vdev, &ma, 0, &vmem)); VK(vkBindBufferMemory(vdev, buf, vmem, 0));
    int fd = -1; VkMemoryGetFdInfoKHR mfi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, vmem, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(get_mem_fd(vdev, &mfi, &fd));
    cl_int e; cl_mem_properties mp[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, 0};
    mem = clCreateBufferWithProperties(ctx, mp, CL_MEM_READ_WRITE, mr.size, NULL, &e); CL(e);

    VkExportSemaphoreCreateInfo xs = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, 0, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo sc = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &xs};
    VK(vkCreateSemaphore(vdev, &sc, 0, &vsem));
    VkSemaphoreGetFdInfoKHR sfi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, 0, vsem, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    int sfd = -1; VK(get_sem_fd(vdev, &sfi, &sfd));
    cl_semaphore_properties_khr sp[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                        CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)sfd,
                                        0x2053 /* CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR */, (cl_semaphore_properties_khr)(uintptr_t)dev,
                                        0 /* its end */, 0};
    csem = create_sem(ctx, sp, &e); CL(e);
}

/* ------------------------------------------------------------ the gate */
struct gate { cl_event ev; int ms; atomic_bool open; pthread_t t; };
static void *open_late(void *arg) {
    struct gate *g = arg;
    usleep((useconds_t)g->ms * 1000);
    atomic_store(&g->open, 1);
    clSetUserEventStatus(g->ev, CL_COMPLETE);
    return NULL;
}

static uint32_t spin_n; /* outer iterations for about gate_ms */

/* What comes before the timed call: a bump kernel behind a user event
 * (gated = 1) or a spin kernel of about gate_ms (gated = 0). Returns the
 * event to ask "done yet?" of. */
static cl_event hold(int gated, struct gate *g, int ms) {
    cl_int e; cl_event k;
    if (gated) {
        g->ev = clCreateUserEvent(ctx, &e); CL(e);
        g->ms = ms; atomic_init(&g->open, 0);
        CL(clSetKernelArg(k_bump, 0, sizeof mem, &mem));
        size_t one = 1;
        CL(clEnqueueNDRangeKernel(q, k_bump, 1, NULL, &one, NULL, 1, &g->ev, &k));
        CL(clFlush(q));
        pthread_create(&g->t, NULL, open_late, g);
    } else {
        CL(clSetKernelArg(k_spin, 0, sizeof mem, &mem));
        CL(clSetKernelArg(k_spin, 1, sizeof spin_n, &spin_n));
        size_t one = 1;
        CL(clEnqueueNDRangeKernel(q, k_spin, 1, NULL, &one, NULL, 0, NULL, &k));
        CL(clFlush(q));
    }
    return k;
}

static int done(cl_event ev) {
    cl_int st = 0; clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    return st == CL_COMPLETE;
}

static void report(const char *call, int gated, double ms, int returned_before, const char *extra) {
    printf("%-8s %-18s call %9.3f ms  returned %s %s%s\n", call, gated ? "behind a user event" : "behind a running kernel", ms,
           returned_before ? "BEFORE" : "after", gated ? "the gate opened" : "the kernel completed", extra);
    fflush(stdout);
}

static void finish(int gated, struct gate *g, cl_event k) {
    CL(clFinish(q)); CL(clFinish(q2));
    if (gated) { pthread_join(g->t, NULL); clReleaseEvent(g->ev); }
    clReleaseEvent(k);
}

static void one_case(const char *what, int gated, int ms) {
    struct gate g; cl_event k, ev = NULL; double t0, t1; int before; char extra[128] = "";
    int acquired = 0;

    /* The kernels use the memory: acquired first, but for the acquire case. */
    if (strcmp(what, "acquire")) { CL(acquire(q, 1, &mem, 0, NULL, NULL)); CL(clFinish(q)); acquired = 1; }
    k = hold(gated, &g, ms);
    t0 = now_ms();
    if (!strcmp(what, "release")) {
        CL(release(q, 1, &mem, 0, NULL, &ev)); acquired = 0;
    } else if (!strcmp(what, "release-q2")) {
        cl_event m;
        CL(clEnqueueMarkerWithWaitList(q, 0, NULL, &m));
        CL(release(q2, 1, &mem, 1, &m, &ev)); acquired = 0;
        CL(clFlush(q2));
        clReleaseEvent(m);
    } else if (!strcmp(what, "acquire")) {
        CL(acquire(q, 1, &mem, 0, NULL, &ev)); acquired = 1; /* the held kernel ran on unacquired memory: only its timing matters */
    } else if (!strcmp(what, "signal")) {
        CL(signal_sem(q, 1, &csem, NULL, 0, NULL, &ev));
        CL(clFlush(q));
    } else if (!strcmp(what, "marker")) {
        CL(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev));
    } else {
        size_t one = 1;
        CL(clSetKernelArg(k_bump, 0, sizeof mem, &mem));
        CL(clEnqueueNDRangeKernel(q, k_bump, 1, NULL, &one, NULL, 0, NULL, &ev));
    }
    t1 = now_ms();
    before = gated ? !atomic_load(&g.open) : !done(k);
    if (!strcmp(what, "signal")) {
        /* Vulkan's wait on OpenCL's signal: does vkQueueSubmit return at once? */
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.waitSemaphoreCount = 1; si.pWaitSemaphores = &vsem;
        si.pWaitDstStageMask = &stage;
        double s0 = now_ms();
        VK(vkQueueSubmit(vq, 1, &si, fence));
        double s1 = now_ms();
        int sub_before = gated ? !atomic_load(&g.open) : !done(k);
        VK(vkWaitForFences(vdev, 1, &fence, VK_TRUE, 10000000000ull)); VK(vkResetFences(vdev, 1, &fence));
        snprintf(extra, sizeof extra, "; then vkQueueSubmit waiting on it: %.3f ms, returned %s", s1 - s0,
                 sub_before ? "BEFORE" : "after");
    }
    report(what, gated, t1 - t0, before, extra);
    finish(gated, &g, k);
    if (ev) clReleaseEvent(ev);
    if (acquired) { CL(release(q, 1, &mem, 0, NULL, NULL)); CL(clFinish(q)); }
}

int main(int argc, char **argv) {
    int ms = argc > 1 ? atoi(argv[1]) : 300;
    vk_open(); cl_open(); shared_objects();
    { /* calibrate the spin kernel to about `ms`: grow n until one run takes a quarter of it, then scale */
        cl_event k; double t0, took = 0;
        size_t one = 1;
        CL(clSetKernelArg(k_spin, 0, sizeof mem, &mem));
        CL(acquire(q, 1, &mem, 0, NULL, NULL)); CL(clFinish(q));
        for (spin_n = 16;; spin_n *= 2) {
            CL(clSetKernelArg(k_spin, 1, sizeof spin_n, &spin_n));
            t0 = now_ms();
            CL(clEnqueueNDRangeKernel(q, k_spin, 1, NULL, &one, NULL, 0, NULL, &k)); CL(clFinish(q)); clReleaseEvent(k);
            took = now_ms() - t0;
            if (took >= ms / 4.0 || spin_n >= (1u << 30)) break;
        }
        spin_n = (uint32_t)((double)spin_n * ms / took);
        CL(clSetKernelArg(k_spin, 1, sizeof spin_n, &spin_n));
        t0 = now_ms();
        CL(clEnqueueNDRangeKernel(q, k_spin, 1, NULL, &one, NULL, 0, NULL, &k)); CL(clFinish(q)); clReleaseEvent(k);
        printf("spin kernel: %u iterations, %.1f ms alone\n", spin_n, now_ms() - t0);
        CL(release(q, 1, &mem, 0, NULL, NULL)); CL(clFinish(q));
    }
    const char *cases[] = {"marker", "kernel", "signal", "acquire", "release", "release-q2"};
    for (int r = 0; r < 2; r++)
        for (int gated = 1; gated >= 0; gated--)
            for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
                one_case(cases[c], gated, ms);
    printf("done\n");
    return 0;
}
