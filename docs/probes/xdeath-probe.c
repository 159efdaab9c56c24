/* SPDX-License-Identifier: MIT */
/* xdeath_probe: what happens to the other side when one process of a
 * Vulkan -> OpenCL cross-process pair dies with GPU work in flight?
 * Raw calls only, no clmem. fork() first, before any driver loads.
 *
 * Mode consumer-dies: the parent (producer, Vulkan) exports 16 MiB of
 *   device-local memory (opaque fd) to the child (consumer, OpenCL), which
 *   imports it, acquires it and starts a long kernel that keeps writing an
 *   increasing counter to word 0 (and writes 0xD0E at word 1 when it ends).
 *   The parent samples word 0 through its own queue (copy + fence) while
 *   the kernel runs, SIGKILLs the child, times waitpid, and keeps sampling:
 *   when does the dead process's kernel stop writing the memory? Then it
 *   fills and reads the memory itself, frees it, allocates anew, and exits:
 *   does any of that hang?
 * Mode producer-dies: the roles turn round. The child (producer, Vulkan)
 *   exports memory and a binary semaphore P, submits a long chain of fills
 *   that signals P, says READY and is SIGKILLed at once by the parent
 *   (consumer, OpenCL), which then (a: "early") had already enqueued its
 *   wait on P before the kill, or (b: "late") enqueues the wait after the
 *   child was reaped. Does the consumer's queue complete (the dead
 *   process's submission drained and P signalled), or wedge? Then the
 *   consumer uses the imported memory after the producer is gone.
 * Usage: xdeath_probe consumer-dies [kernel_outer_iterations]
 *        xdeath_probe producer-dies early|late [fills_of_256MiB] */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <poll.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d (line %d)\n", #x, r_, __LINE__); fflush(stdout); _exit(1); } } while (0)
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }

struct hello { uint8_t uuid[16]; uint64_t size; };

static void send_fds(int s, const void *buf, size_t len, const int *fds, int n) {
    struct iovec iov = {(void *)buf, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 4)]; memset(cbuf, 0, sizeof cbuf);
    struct msghdr m = {0}; m.msg_iov = &iov; m.msg_iovlen = 1;
    if (n) {
        m.msg_control = cbuf; m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m); c->cmsg_level = SOL_SOCKET; c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n); memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    }
    if (sendmsg(s, &m, 0) != (ssize_t)len) { perror("sendmsg"); _exit(1); }
}
static int recv_fds(int s, void *buf, size_t len, int *fds, int max) {
    struct iovec iov = {buf, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    struct msghdr m = {0}; m.msg_iov = &iov; m.msg_iovlen = 1; m.msg_control = cbuf; m.msg_controllen = sizeof cbuf;
    ssize_t r = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
    if (r != (ssize_t)len) { printf("recvmsg got %zd of %zu (%s)\n", r, len, strerror(errno)); _exit(1); }
    int n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int)); if (n > max) n = max;
            memcpy(fds, CMSG_DATA(c), sizeof(int) * n);
        }
    return n;
}
static void msg(int s, uint32_t v) { if (write(s, &v, 4) != 4) { perror("write"); _exit(1); } }
static uint32_t wait_msg(int s) { uint32_t v; if (read(s, &v, 4) != 4) { printf("peer gone\n"); _exit(1); } return v; }

/* ------------------------------------------------------------ OpenCL side */
static const char *KSRC =
    "__kernel void writer(__global volatile uint *p, uint n) {\n"
    "  uint x = p[2];\n"
    "  for (uint i = 1; i <= n; i++) {\n"
    "    for (uint j = 0; j < 2000u; j++) x = x * 1664525u + 1013904223u;\n"
    "    p[0] = i; p[3] = x; mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "  }\n"
    "  p[1] = 0xD0Eu;\n"
    "}\n"
    "__kernel void bump(__global uint *p) { p[4] = p[5] + 1u; }\n";

struct clside {
    cl_platform_id plat; cl_device_id dev; cl_context ctx; cl_command_queue q; cl_program pr;
    clCreateSemaphoreWithPropertiesKHR_fn create_sem; clEnqueueWaitSemaphoresKHR_fn wait_sem;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire; clEnqueueReleaseExternalMemObjectsKHR_fn release;
};
static void cl_open(struct clside *c, const uint8_t uuid[16]) {
    cl_platform_id plats[8]; cl_uint np = 0; CL(clGetPlatformIDs(8, plats, &np));
    c->dev = 0;
    for (cl_uint i = 0; i < np && !c->dev; i++) {
        cl_device_id ds[8]; cl_uint nd = 0;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd)) continue;
        for (cl_uint j = 0; j < nd; j++) {
            uint8_t u[16];
            if (!clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, u, NULL) && !memcmp(u, uuid, 16)) { c->dev = ds[j]; c->plat = plats[i]; break; }
        }
    }
    if (!c->dev) { printf("cl: no OpenCL device with the Vulkan device's UUID\n"); _exit(1); }
    cl_int e; cl_context_properties cp[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)c->plat, 0};
    c->ctx = clCreateContext(cp, 1, &c->dev, NULL, NULL, &e); CL(e);
    c->q = clCreateCommandQueueWithProperties(c->ctx, c->dev, NULL, &e); CL(e);
    c->create_sem = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(c->plat, "clCreateSemaphoreWithPropertiesKHR");
    c->wait_sem = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(c->plat, "clEnqueueWaitSemaphoresKHR");
    c->acquire = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(c->plat, "clEnqueueAcquireExternalMemObjectsKHR");
    c->release = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(c->plat, "clEnqueueReleaseExternalMemObjectsKHR");
    if (!c->create_sem || !c->wait_sem || !c->acquire || !c->release) { printf("cl: extension entry points missing\n"); _exit(1); }
    c->pr = clCreateProgramWithSource(c->ctx, 1, &KSRC, NULL, &e); CL(e);
    CL(clBuildProgram(c->pr, 1, &c->dev, "", NULL, NULL));
}
static cl_mem cl_import(struct clside *c, int fd, uint64_t size) {
    cl_int e;
    cl_mem_properties mp[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, 0};
    cl_mem m = clCreateBufferWithProperties(c->ctx, mp, CL_MEM_READ_WRITE, size, NULL, &e); CL(e);
    return m;
}

/* ------------------------------------------------------------ Vulkan side */
struct vkside {
    VkInstance inst; VkPhysicalDevice pd; VkDevice dev; VkQueue q; uint8_t uuid[16];
    PFN_vkGetMemoryFdKHR get_mem_fd; PFN_vkGetSemaphoreFdKHR get_sem_fd;
    VkCommandPool pool; VkFence fence;
    VkBuffer stg; VkDeviceMemory smem; volatile uint32_t *host;
};
static uint32_t find_type(VkPhysicalDevice pd, uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp; vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    printf("no memory type 0x%x\n", want); _exit(1);
}
static void vk_open(struct vkside *v) {
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO}; app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ic = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO}; ic.pApplicationInfo = &app;
    VK(vkCreateInstance(&ic, 0, &v->inst));
    uint32_t npd = 8; VkPhysicalDevice pds[8]; VK(vkEnumeratePhysicalDevices(v->inst, &npd, pds));
    v->pd = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < npd; i++) {
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
        vkGetPhysicalDeviceProperties2(pds[i], &p2);
        if (!v->pd || p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { v->pd = pds[i]; memcpy(v->uuid, id.deviceUUID, 16); }
    }
    float prio = 1; VkDeviceQueueCreateInfo qc = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, 0, 1, &prio};
    const char *ext[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO}; dc.queueCreateInfoCount = 1; dc.pQueueCreateInfos = &qc;
    dc.enabledExtensionCount = 2; dc.ppEnabledExtensionNames = ext;
    VK(vkCreateDevice(v->pd, &dc, 0, &v->dev));
    vkGetDeviceQueue(v->dev, 0, 0, &v->q);
    v->get_mem_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(v->dev, "vkGetMemoryFdKHR");
    v->get_sem_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(v->dev, "vkGetSemaphoreFdKHR");
    VkCommandPoolCreateInfo pc = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, 0};
    VK(vkCreateCommandPool(v->dev, &pc, 0, &v->pool));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO}; VK(vkCreateFence(v->dev, &fci, 0, &v->fence));
    VkBufferCreateInfo sbc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO}; sbc.size = 4096; sbc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VK(vkCreateBuffer(v->dev, &sbc, 0, &v->stg));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(v->dev, v->stg, &mr);
    VkMemoryAllocateInfo sma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, 0, mr.size,
                                find_type(v->pd, mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)};
    VK(vkAllocateMemory(v->dev, &sma, 0, &v->smem)); VK(vkBindBufferMemory(v->dev, v->stg, v->smem, 0));
    VK(vkMapMemory(v->dev, v->smem, 0, 4096, 0, (void **)&v->host));
}
static void vk_exportable(struct vkside *v, VkDeviceSize size, VkBuffer *buf, VkDeviceMemory *mem, int *fd) {
    VkExternalMemoryBufferCreateInfo xb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &xb}; bc.size = size;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    VK(vkCreateBuffer(v->dev, &bc, 0, buf));
    VkMemoryRequirements mr; vkGetBufferMemoryRequirements(v->dev, *buf, &mr);
    VkExportMemoryAllocateInfo xa = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &xa, mr.size, find_type(v->pd, mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    VK(vkAllocateMemory(v->dev, &ma, 0, mem)); VK(vkBindBufferMemory(v->dev, *buf, *mem, 0));
    if (fd) { VkMemoryGetFdInfoKHR mfi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, *mem, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT}; VK(v->get_mem_fd(v->dev, &mfi, fd)); }
}
/* Copy words 0..7 of buf to the host and wait; returns the fence wait's ms, -1 on timeout. */
static double vk_sample(struct vkside *v, VkBuffer buf, VkCommandBuffer cb, uint32_t out[8]) {
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkResetCommandBuffer(cb, 0)); VK(vkBeginCommandBuffer(cb, &bi));
    VkBufferCopy cp = {0, 0, 32}; vkCmdCopyBuffer(cb, buf, v->stg, 1, &cp); VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cb;
    double a = now_ms();
    VK(vkQueueSubmit(v->q, 1, &si, v->fence));
    VkResult r = vkWaitForFences(v->dev, 1, &v->fence, VK_TRUE, 5000000000ull);
    if (r == VK_TIMEOUT) return -1;
    VK(r); VK(vkResetFences(v->dev, 1, &v->fence));
    for (int i = 0; i < 8; i++) out[i] = v->host[i];
    return now_ms() - a;
}
static VkCommandBuffer vk_cb(struct vkside *v) {
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, v->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cb; VK(vkAllocateCommandBuffers(v->dev, &cai, &cb)); return cb;
}

/* ------------------------------------------------------------ consumer dies */
static int cd_child(int s, uint32_t outer, int high) {
    struct hello h; int fd;
    if (high) { int hs = dup2(s, 900); close(s); s = hs; }
    if (recv_fds(s, &h, sizeof h, &fd, 1) != 1) { printf("child: want 1 fd\n"); return 1; }
    struct clside c; cl_open(&c, h.uuid);
    cl_mem m = cl_import(&c, fd, h.size);
    cl_int e; cl_kernel k = clCreateKernel(c.pr, "writer", &e); CL(e);
    CL(clSetKernelArg(k, 0, sizeof m, &m)); CL(clSetKernelArg(k, 1, sizeof outer, &outer));
    size_t one = 1;
    CL(c.acquire(c.q, 1, &m, 0, NULL, NULL));
    CL(clEnqueueNDRangeKernel(c.q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    CL(c.release(c.q, 1, &m, 0, NULL, NULL));
    CL(clFlush(c.q));
    printf("child: socket fd %d; OpenCL and Vulkan opened before it? %s\n", s, high ? "yes (socket moved to fd 900)" : "no (socket is the lower fd)");
    msg(s, 1); /* RUNNING (queued and flushed) */
    for (;;) pause();
}
static int consumer_dies(uint32_t outer, int high) {
    int sv[2]; if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) { perror("socketpair"); return 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { close(sv[0]); _exit(cd_child(sv[1], outer, high)); }
    close(sv[1]);
    struct vkside v; vk_open(&v);
    VkBuffer buf; VkDeviceMemory mem; int fd;
    vk_exportable(&v, 16u << 20, &buf, &mem, &fd);
    VkCommandBuffer cb = vk_cb(&v);
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb, &bi)); vkCmdFillBuffer(cb, buf, 0, VK_WHOLE_SIZE, 0); VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cb;
    VK(vkQueueSubmit(v.q, 1, &si, v.fence)); VK(vkWaitForFences(v.dev, 1, &v.fence, VK_TRUE, UINT64_MAX)); VK(vkResetFences(v.dev, 1, &v.fence));
    struct hello h; memcpy(h.uuid, v.uuid, 16); h.size = 16u << 20;
    send_fds(sv[0], &h, sizeof h, &fd, 1); close(fd);
    wait_msg(sv[0]);
    uint32_t w[8], last = 0; double t0 = now_ms(), first_nonzero = -1;
    /* Wait for the kernel to be seen writing, at most 10 s. */
    while (now_ms() - t0 < 10000) {
        double f = vk_sample(&v, buf, cb, w);
        if (f < 0) { printf("RESULT consumer-dies: the producer's sample copy TIMED OUT while the consumer runs\n"); _exit(2); }
        if (w[0]) { first_nonzero = now_ms() - t0; break; }
        usleep(1000);
    }
    if (first_nonzero < 0) { printf("RESULT consumer-dies: kernel never seen writing in 10 s\n"); kill(pid, SIGKILL); waitpid(pid, NULL, 0); return 1; }
    double a = now_ms(); uint32_t w0a = w[0]; usleep(100000); vk_sample(&v, buf, cb, w);
    double rate = (w[0] - w0a) / (now_ms() - a);
    printf("consumer-dies: kernel seen writing %.1f ms after RUNNING; counter %u -> %u in 100 ms (%.1f per ms of the %u outer iterations: ~%.0f ms total)\n",
           first_nonzero, w0a, w[0], rate, outer, rate > 0 ? outer / rate : -1.0);
    last = w[0];
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    double tk = now_ms(); kill(pid, SIGKILL);
    double t_eof = -1, t_pidfd = -1, last_change = 0, max_fence = 0; uint32_t changes = 0, samples = 0;
    while (now_ms() - tk < 3000) {
        struct pollfd pf[2] = {{sv[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
        poll(pf, pidfd >= 0 ? 2 : 1, 0);
        if (t_eof < 0 && (pf[0].revents & (POLLIN | POLLHUP))) { char c; if (read(sv[0], &c, 1) == 0) t_eof = now_ms() - tk; }
        if (t_pidfd < 0 && pidfd >= 0 && (pf[1].revents & POLLIN)) t_pidfd = now_ms() - tk;
        double f = vk_sample(&v, buf, cb, w); samples++;
        if (f < 0) { printf("RESULT consumer-dies: the producer's copy TIMED OUT after the kill\n"); _exit(2); }
        if (f > max_fence) max_fence = f;
        if (w[0] != last) { last = w[0]; last_change = now_ms() - tk; changes++; }
        usleep(200);
    }
    int st; waitpid(pid, &st, 0); double treap = now_ms() - tk;
    printf("consumer-dies: after the kill: %u samples in 3 s, counter changed %u times, last change %.2f ms after SIGKILL, final %u, done-marker 0x%x, slowest sample %.2f ms\n",
           samples, changes, last_change, last, w[1], max_fence);
    printf("consumer-dies: socket EOF at %.2f ms, pidfd readable (exited) at %.2f ms, last GPU write at %.2f ms after SIGKILL: EOF %s the GPU work stopped\n",
           t_eof, t_pidfd, last_change, t_eof < last_change ? "CAME BEFORE" : "came after");
    /* The producer reuses the memory: a fill, then read back. */
    VK(vkResetCommandBuffer(cb, 0)); VK(vkBeginCommandBuffer(cb, &bi)); vkCmdFillBuffer(cb, buf, 0, 32, 0xABCD); VK(vkEndCommandBuffer(cb));
    VK(vkQueueSubmit(v.q, 1, &si, v.fence)); VK(vkWaitForFences(v.dev, 1, &v.fence, VK_TRUE, UINT64_MAX)); VK(vkResetFences(v.dev, 1, &v.fence));
    vk_sample(&v, buf, cb, w);
    usleep(200000);
    uint32_t w2[8]; vk_sample(&v, buf, cb, w2);
    printf("consumer-dies: producer's fill read back 0x%x, 200 ms later 0x%x (%s)\n", w[0], w2[0], w2[0] == 0xABCD ? "kept" : "OVERWRITTEN by the dead consumer");
    double fa = now_ms();
    vkDestroyBuffer(v.dev, buf, 0); vkFreeMemory(v.dev, mem, 0);
    vk_exportable(&v, 16u << 20, &buf, &mem, NULL);
    VK(vkDeviceWaitIdle(v.dev));
    printf("consumer-dies: free + new allocation + vkDeviceWaitIdle: %.2f ms\n", now_ms() - fa);
    vkDestroyBuffer(v.dev, buf, 0); vkFreeMemory(v.dev, mem, 0);
    vkDestroyBuffer(v.dev, v.stg, 0); vkFreeMemory(v.dev, v.smem, 0);
    vkDestroyFence(v.dev, v.fence, 0); vkDestroyCommandPool(v.dev, v.pool, 0);
    fa = now_ms(); vkDestroyDevice(v.dev, 0); vkDestroyInstance(v.inst, 0);
    printf("RESULT consumer-dies: kernel writes stopped %.2f ms after SIGKILL (waitpid %.2f ms); producer queue never stuck; teardown %.2f ms\n",
           last_change, treap, now_ms() - fa);
    return 0;
}

/* ------------------------------------------------------------ producer dies */
static int pd_child(int s, uint32_t fills) {
    struct vkside v; vk_open(&v);
    VkBuffer buf, big; VkDeviceMemory mem, bigmem; int fds[2];
    vk_exportable(&v, 16u << 20, &buf, &mem, &fds[0]);
    vk_exportable(&v, 256u << 20, &big, &bigmem, NULL);
    VkExportSemaphoreCreateInfo xs = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, 0, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &xs};
    VkSemaphore P; VK(vkCreateSemaphore(v.dev, &sci, 0, &P));
    VkSemaphoreGetFdInfoKHR sfi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, 0, P, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VK(v.get_sem_fd(v.dev, &sfi, &fds[1]));
    struct hello h; memcpy(h.uuid, v.uuid, 16); h.size = 16u << 20;
    send_fds(s, &h, sizeof h, fds, 2); close(fds[0]); close(fds[1]);
    wait_msg(s); /* consumer imported */
    VkCommandBuffer cb = vk_cb(&v);
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb, &bi));
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, 0, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
    for (uint32_t i = 0; i < fills; i++) {
        vkCmdFillBuffer(cb, big, 0, VK_WHOLE_SIZE, i);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, 0, 0, 0);
    }
    vkCmdFillBuffer(cb, buf, 0, 16, 0x5EED);
    VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO}; si.commandBufferCount = 1; si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = 1; si.pSignalSemaphores = &P;
    VK(vkQueueSubmit(v.q, 1, &si, VK_NULL_HANDLE));
    msg(s, 2); /* READY: submitted, P signals when the fills end */
    for (;;) pause();
}
struct finisher { cl_command_queue q; volatile int done; cl_int r; double at; };
static void *finish_thread(void *p) { struct finisher *f = p; f->r = clFinish(f->q); f->at = now_ms(); f->done = 1; return NULL; }
static int producer_dies(int late, uint32_t fills) {
    int sv[2]; if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) { perror("socketpair"); return 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { close(sv[0]); _exit(pd_child(sv[1], fills)); }
    close(sv[1]);
    struct hello h; int fds[2];
    if (recv_fds(sv[0], &h, sizeof h, fds, 2) != 2) { printf("consumer: want 2 fds\n"); return 1; }
    struct clside c; cl_open(&c, h.uuid);
    cl_mem m = cl_import(&c, fds[0], h.size);
    cl_int e;
    cl_semaphore_properties_khr sp[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)fds[1], 0};
    cl_semaphore_khr P = c.create_sem(c.ctx, sp, &e); CL(e);
    cl_kernel k = clCreateKernel(c.pr, "bump", &e); CL(e); CL(clSetKernelArg(k, 0, sizeof m, &m));
    size_t one = 1;
    msg(sv[0], 1);
    wait_msg(sv[0]); /* READY */
    double t0 = now_ms();
    if (!late) CL(c.wait_sem(c.q, 1, &P, NULL, 0, NULL, NULL));
    kill(pid, SIGKILL); int st; waitpid(pid, &st, 0);
    double treap = now_ms() - t0;
    if (late) CL(c.wait_sem(c.q, 1, &P, NULL, 0, NULL, NULL));
    CL(c.acquire(c.q, 1, &m, 0, NULL, NULL));
    CL(clEnqueueNDRangeKernel(c.q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    CL(c.release(c.q, 1, &m, 0, NULL, NULL));
    struct finisher f = {c.q, 0, 0, 0};
    pthread_t th; pthread_create(&th, NULL, finish_thread, &f);
    while (!f.done && now_ms() - t0 < 10000) usleep(1000);
    if (!f.done) {
        printf("RESULT producer-dies %s fills=%u: the consumer's queue WEDGED (clFinish not back 10 s after the kill; waitpid %.2f ms)\n",
               late ? "late" : "early", fills, treap);
        fflush(stdout); _exit(3);
    }
    pthread_join(th, NULL);
    uint32_t w[8];
    CL(clEnqueueReadBuffer(c.q, m, CL_TRUE, 0, 32, w, 0, NULL, NULL));
    printf("consumer: clFinish %d after %.2f ms; words 0x%x 0x%x ... [4]=%u\n", f.r, f.at - t0, w[0], w[1], w[4]);
    /* The memory after the producer is gone: write, read back. */
    uint32_t pat[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
    CL(clEnqueueWriteBuffer(c.q, m, CL_TRUE, 0, 32, pat, 0, NULL, NULL));
    CL(clEnqueueReadBuffer(c.q, m, CL_TRUE, 0, 32, back, 0, NULL, NULL));
    printf("RESULT producer-dies %s fills=%u: queue completed %.2f ms after the kill (waitpid %.2f ms); fill marker %s; memory usable after: %s\n",
           late ? "late" : "early", fills, f.at - t0, treap, w[0] == 0x5EED ? "present" : "ABSENT",
           memcmp(pat, back, 32) ? "NO" : "yes");
    clReleaseKernel(k);
    ((clReleaseSemaphoreKHR_fn)clGetExtensionFunctionAddressForPlatform(c.plat, "clReleaseSemaphoreKHR"))(P);
    clReleaseMemObject(m); clReleaseProgram(c.pr); clReleaseCommandQueue(c.q); clReleaseContext(c.ctx);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "consumer-dies"))
        return consumer_dies(argc > 2 ? (uint32_t)atoi(argv[2]) : 2000000u, argc > 3 && !strcmp(argv[3], "high"));
    if (argc > 2 && !strcmp(argv[1], "producer-dies"))
        return producer_dies(!strcmp(argv[2], "late"), argc > 3 ? (uint32_t)atoi(argv[3]) : 400u);
    fprintf(stderr, "usage: %s consumer-dies [outer] | producer-dies early|late [fills]\n", argv[0]);
    return 2;
}
