/* SPDX-License-Identifier: MIT */
/* subbuf_probe: does running CLBlast's SGEMM on sub-buffers of imported
 * Vulkan memory cost more than running it on the imported buffers
 * themselves? Raw calls only, no clmem.
 *
 * clmem-bench (i) showed the bridge's zero-copy way 34 us (1024^2) and
 * 203 us (4096^2) a rep slower than the same calls made by hand. The one
 * difference in what reaches the driver: the bridge imports the whole
 * Vulkan allocation (its size is the memory's, rounded up by Vulkan) and
 * hands out a sub-buffer [0, bytes) of it; the hand-made way runs SGEMM
 * on the whole import.
 *
 * A, B, C: n x n floats, rows padded to 256 bytes, device-local Vulkan
 * memory exported as opaque fds and imported once each. Ways, interleaved
 * rep by rep, each timed from the acquire to the release's event:
 *   whole:  acquire the three imports, SGEMM on them, release;
 *   sub:    acquire the three imports, SGEMM on sub-buffers [0, bytes) of
 *           them, release (what the bridge does);
 *   exact:  a second import of the same fds with size = bytes (smaller
 *           than the allocation), acquire, SGEMM on it, release: is that
 *           allowed here, and does it cost what whole does?
 *   floor:  SGEMM on plain OpenCL buffers;
 *   after:  whole, each rep started right after a 4-byte vkCmdFillBuffer on
 *           a transfer-only queue (the queue family clmem-bench (i) copies
 *           on), waited for with a fence, untimed: what the first OpenCL
 *           command after Vulkan's work costs.
 * And the same three ways with a one-work-item kernel instead of SGEMM.
 * Prints medians and the paired median (sub - whole, exact - whole).
 * Usage: subbuf_probe [reps] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <clblast_c.h>
#include <vulkan/vulkan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }

static VkInstance inst; static VkPhysicalDevice pd; static VkDevice vdev; static uint8_t uuid[16];
static VkQueue xq; static VkCommandBuffer fill_cb; static VkFence fence; static uint32_t xfamily;
static cl_platform_id plat; static cl_device_id dev; static cl_context ctx; static cl_command_queue q;
static cl_kernel k_bump;
static clEnqueueAcquireExternalMemObjectsKHR_fn acquire; static clEnqueueReleaseExternalMemObjectsKHR_fn release;
static PFN_vkGetMemoryFdKHR get_mem_fd;

static uint32_t find_type(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    printf("no memory type 0x%x\n", want); _exit(1);
}

static void open_both(void) {
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
    uint32_t nf = 16; VkQueueFamilyProperties fp[16]; vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fp);
    for (uint32_t i = 0; i < nf; i++)
        if ((fp[i].queueFlags & VK_QUEUE_TRANSFER_BIT) && !(fp[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))) { xfamily = i; break; }
    printf("Vulkan's fill runs on queue family %u%s\n", xfamily, xfamily ? " (transfer only)" : " (no transfer-only family)");
    float prio = 1; VkDeviceQueueCreateInfo qc = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, xfamily, 1, &prio};
    const char *ext[] = {"VK_KHR_external_memory_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; dc.queueCreateInfoCount = 1; dc.pQueueCreateInfos = &qc;
    dc.enabledExtensionCount = 1; dc.ppEnabledExtensionNames = ext;
    VK(vkCreateDevice(pd, &dc, 0, &vdev));
    get_mem_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(vdev, "vkGetMemoryFdKHR");
    vkGetDeviceQueue(vdev, xfamily, 0, &xq);
    {
        VkCommandPoolCreateInfo pc = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0, 0, xfamily};
        VkCommandPool pool; VK(vkCreateCommandPool(vdev, &pc, 0, &pool));
        VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
        VK(vkAllocateCommandBuffers(vdev, &cai, &fill_cb));
        VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO}; bc.size = 4096; bc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        VkBuffer sb; VK(vkCreateBuffer(vdev, &bc, 0, &sb));
        VkMemoryRequirements mr; vkGetBufferMemoryRequirements(vdev, sb, &mr);
        VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, 0, mr.size, find_type(mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
        VkDeviceMemory sm; VK(vkAllocateMemory(vdev, &ma, 0, &sm)); VK(vkBindBufferMemory(vdev, sb, sm, 0));
        VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK(vkBeginCommandBuffer(fill_cb, &bi)); vkCmdFillBuffer(fill_cb, sb, 0, 4, 0xA5u); VK(vkEndCommandBuffer(fill_cb));
        VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VK(vkCreateFence(vdev, &fci, 0, &fence));
    }

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
    acquire = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    release = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    if (!acquire || !release) { printf("missing the external memory calls\n"); _exit(1); }
    const char *src = "__kernel void bump(__global uint *p) { p[0] = p[1] + 1u; }\n";
    cl_program pr = clCreateProgramWithSource(ctx, 1, &src, NULL, &e); CL(e);
    CL(clBuildProgram(pr, 1, &dev, "", NULL, NULL));
    k_bump = clCreateKernel(pr, "bump", &e); CL(e);
}

struct mat { VkDeviceSize alloc; cl_mem whole, sub, exact, plain; };

static cl_mem import_fd(VkDeviceMemory m, size_t size, cl_int *e) {
    int fd = -1; VkMemoryGetFdInfoKHR mfi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, m, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(get_mem_fd(vdev, &mfi, &fd));
    cl_mem_properties mp[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, 0};
    cl_mem out = clCreateBufferWithProperties(ctx, mp, CL_MEM_READ_WRITE, size, NULL, e);
    if (*e != CL_SUCCESS) close(fd);
    return out;
}

static int exact_ok = 1;
static void make(struct mat *mt, size_t bytes, const float *init) {
    VkExternalMemoryBufferCreateInfo xb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &xb}; bc.size = bytes;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buf; VK(vkCreateBuffer(vdev, &bc, 0, &buf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(vdev, buf, &mr);
    VkExportMemoryAllocateInfo xa = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &xa, mr.size, find_type(mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    VkDeviceMemory m; VK(vkAllocateMemory(vdev, &ma, 0, &m)); VK(vkBindBufferMemory(vdev, buf, m, 0));
    mt->alloc = mr.size;
    cl_int e;
    mt->whole = import_fd(m, mr.size, &e); CL(e);
    cl_buffer_region reg = {0, bytes};
    mt->sub = clCreateSubBuffer(mt->whole, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &e); CL(e);
    mt->exact = import_fd(m, bytes, &e);
    if (e != CL_SUCCESS) { if (exact_ok) printf("import of %zu of %llu bytes: error %d (the exact way is left out)\n", bytes, (unsigned long long)mr.size, e); exact_ok = 0; mt->exact = NULL; }
    mt->plain = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &e); CL(e);
    CL(acquire(q, 1, &mt->whole, 0, NULL, NULL));
    CL(clEnqueueWriteBuffer(q, mt->whole, CL_TRUE, 0, bytes, init, 0, NULL, NULL));
    CL(clEnqueueWriteBuffer(q, mt->plain, CL_TRUE, 0, bytes, init, 0, NULL, NULL));
    CL(release(q, 1, &mt->whole, 0, NULL, NULL)); CL(clFinish(q));
}

enum { WHOLE, SUB, EXACT, FLOOR, AFTER, NWAYS };
static const char *names[NWAYS] = {"whole", "sub", "exact", "floor", "after"};

static void vk_fill(void) {
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &fill_cb;
    VK(vkQueueSubmit(xq, 1, &si, fence)); VK(vkWaitForFences(vdev, 1, &fence, VK_TRUE, 5000000000ull)); VK(vkResetFences(vdev, 1, &fence));
}

static double rep(int way, struct mat *m, size_t n, size_t ld, int gemm) {
    cl_mem acq[3], use[3]; cl_event ev = NULL, rel = NULL;
    for (int i = 0; i < 3; i++) {
        acq[i] = way == EXACT ? m[i].exact : m[i].whole;
        use[i] = way == WHOLE || way == AFTER ? m[i].whole : way == SUB ? m[i].sub : way == EXACT ? m[i].exact : m[i].plain;
    }
    if (way == AFTER) vk_fill();
    double t0 = now_us();
    if (way != FLOOR) CL(acquire(q, 3, acq, 0, NULL, NULL));
    if (gemm) {
        CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
                                            use[0], 0, ld, use[1], 0, ld, 0.0f, use[2], 0, ld, &q, &ev);
        if (st != CLBlastSuccess) { printf("CLBlastSgemm: %d\n", (int)st); _exit(1); }
    } else {
        size_t one = 1;
        CL(clSetKernelArg(k_bump, 0, sizeof use[2], &use[2]));
        CL(clEnqueueNDRangeKernel(q, k_bump, 1, NULL, &one, NULL, 0, NULL, &ev));
    }
    if (way != FLOOR) CL(release(q, 3, acq, 1, &ev, &rel));
    CL(clWaitForEvents(1, way != FLOOR ? &rel : &ev));
    double t = now_us() - t0;
    clReleaseEvent(ev); if (rel) clReleaseEvent(rel);
    return t;
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp); return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; }

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 40;
    size_t sizes[] = {1024, 4096};
    open_both();
    for (int s = 0; s < 2; s++) {
        size_t n = sizes[s], pitch = (n * 4 + 4 + 255) / 256 * 256, bytes = n * pitch, ld = pitch / 4;
        float *init = malloc(bytes);
        for (size_t i = 0; i < bytes / 4; i++) init[i] = (float)(i % 7) * 0.25f;
        struct mat m[3];
        exact_ok = 1;
        for (int i = 0; i < 3; i++) make(&m[i], bytes, init);
        printf("n = %zu: %zu bytes a matrix in allocations of %llu\n", n, bytes, (unsigned long long)m[0].alloc);
        for (int gemm = 1; gemm >= 0; gemm--) {
            double *t = calloc((size_t)reps * NWAYS, sizeof *t), *d = calloc((size_t)reps * 3, sizeof *d);
            for (int w = 0; w < NWAYS; w++) /* warm-up */
                if (w != EXACT || exact_ok) rep(w, m, n, ld, gemm), rep(w, m, n, ld, gemm);
            for (int r = 0; r < reps; r++)
                for (int w = 0; w < NWAYS; w++)
                    t[w * reps + r] = w != EXACT || exact_ok ? rep(w, m, n, ld, gemm) : 0;
            for (int r = 0; r < reps; r++) {
                d[r] = t[SUB * reps + r] - t[WHOLE * reps + r];
                d[reps + r] = t[EXACT * reps + r] - t[WHOLE * reps + r];
                d[2 * reps + r] = t[AFTER * reps + r] - t[WHOLE * reps + r];
            }
            printf("  %-6s", gemm ? "SGEMM" : "bump");
            for (int w = 0; w < NWAYS; w++)
                if (w != EXACT || exact_ok) printf("  %s %.1f", names[w], median(t + w * reps, reps));
            printf("  | sub-whole %.1f", median(d, reps));
            if (exact_ok) printf("  exact-whole %.1f", median(d + reps, reps));
            printf("  after-whole %.1f", median(d + 2 * reps, reps));
            printf(" us (medians of %d)\n", reps);
            fflush(stdout);
            free(t); free(d);
        }
        free(init);
    }
    printf("done\n");
    return 0;
}
