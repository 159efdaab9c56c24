/* SPDX-License-Identifier: MIT */
/* ring-fd-probe (build: cc -std=c11 -O1 -o /tmp/ring-fd-probe docs/probes/ring-fd-probe.c -lvulkan -lOpenCL -lpthread;
 * run: /tmp/ring-fd-probe PASSES): raw Vulkan + OpenCL, no library. Makes,
 * pass after pass, the objects a frame ring of 3 makes: 3 exportable
 * device-local frames imported into OpenCL through opaque fds, 6 binary
 * semaphores exported as opaque fds and imported into OpenCL (ready and
 * done per slot), a fence per slot; runs 300 frames through them (Vulkan
 * signals ready, OpenCL waits, acquires, runs a kernel, releases, signals
 * done, Vulkan waits on done before reusing the slot); then destroys
 * everything, both sides idle. After each pass it counts this process's fds
 * and names the ones open now that were not open before the first pass.
 * Kinds of pass, each run PASSES times in its own phase:
 *   mem      - the frames' imports alone, acquired and released once each;
 *   sem      - the semaphores alone, signalled and waited 300 times;
 *   memk     - the frames alone, 300 acquire + kernel + release, no semaphore;
 *   ring-nok - the ring's traffic without the kernel (acquire and release);
 *   ring     - both, with the traffic above;
 *   ring-sub - the ring, its kernel on a sub-buffer of each frame's first
 *              KiB (as the bridge hands out for a range);
 *   ring-cb  - the ring, its cl_mems released from a marker's event
 *              callback on the driver's thread (as the bridge's teardown);
 *   ring-subcb - both;
 *   ring-vk, ring-cb-vk - ring and ring-cb with Vulkan writing each frame
 *              (from and back to VK_QUEUE_FAMILY_EXTERNAL) in the
 *              submission that signals ready, as the library's ring test;
 *   ring-nodrain, ring-cb-nodrain - ring and ring-cb with no final drain:
 *              Vulkan never waits on the last done signals of the pass
 *              (as a ring dropped after its last batch leaves them).
 *   ring-dcb, ring-cb-dcb, ring-cb-vk-dcb - with a destructor callback on
 *              each frame's cl_mem, as the bridge sets one;
 *   semfirst, semfirst-ping - 4 semaphores made (pinged once each way),
 *              released; then 3 frames, whose fds take the numbers the
 *              semaphores' fds had; acquire + kernel + release; released.
 *              The frame at a semaphore's old number is never closed
 *              (found 2026-12-02: NVIDIA 580 on the H200, every pass);
 *   semfirst-moved - the same, with each memory fd moved off the numbers
 *              semaphore fds had (fcntl F_DUPFD) before the import: the
 *              workaround bridge/fd-numbers.c applies.
 * A second argument runs only the kind it names. RFP_BYTES sets the frame
 * size (1 MiB by default; the library's ring tests use 1 KiB), RFP_LOG=1
 * prints each exported fd's number.
 * It tells whether the driver's own fd count grows and levels off, and
 * from what, with no library in the way. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#define SEM_DEVICE_LIST 0x2053

#define VK(x) do { VkResult r_ = (x); if (r_) { printf("VKFAIL %s = %d\n", #x, r_); exit(1); } } while (0)
#define CL(x) do { cl_int r_ = (x); if (r_) { printf("CLFAIL %s = %d\n", #x, r_); exit(1); } } while (0)

enum { DEPTH = 3, FRAMES = 300 };
static size_t FRAME_BYTES = 1 << 20; /* RFP_BYTES in the environment: another size */
static int with_destructor; /* *-dcb kinds: a destructor callback on each frame's cl_mem, as the bridge sets */
static int move_mem_fds;    /* semfirst-moved: memory fds moved off the numbers semaphore fds had */
static unsigned char sem_numbers[4096];
static atomic_int destructed;
static void CL_CALLBACK on_destroyed(cl_mem m, void *user)
{
    (void)m;
    (void)user;
    atomic_fetch_add(&destructed, 1);
}

static VkPhysicalDevice pd;
static VkDevice dev;
static VkQueue q;
static uint32_t qfam;
static PFN_vkGetMemoryFdKHR get_mem_fd;
static PFN_vkGetSemaphoreFdKHR get_sem_fd;
static cl_context ctx;
static cl_command_queue cq;
static cl_device_id cld;
static cl_kernel kern;
static clEnqueueAcquireExternalMemObjectsKHR_fn acq;
static clEnqueueReleaseExternalMemObjectsKHR_fn rel;
static clCreateSemaphoreWithPropertiesKHR_fn sem_create;
static clEnqueueWaitSemaphoresKHR_fn sem_wait;
static clEnqueueSignalSemaphoresKHR_fn sem_signal;
static clReleaseSemaphoreKHR_fn sem_release;

/* fd numbers open now, as a bitmap of the first 4096 */
static int fds_now(unsigned char *open_map)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (open_map)
        memset(open_map, 0, 4096);
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d))
            continue;
        n++;
        if (open_map && fd < 4096)
            open_map[fd] = 1;
    }
    closedir(d);
    return n;
}

static uint32_t memtype(uint32_t bits, VkMemoryPropertyFlags want)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
            return i;
    return UINT32_MAX;
}

struct frame {
    VkBuffer buf;
    VkDeviceMemory mem;
    cl_mem cm;
    cl_mem sub; /* ring-sub*: the first KiB, what the kernel gets (as the bridge's sub-buffer) */
};

/* ring-*cb: the cl_mems released from an event callback on the driver's
 * thread, as the bridge's teardown does, not on this thread. */
static atomic_int released_in_cb;
static void CL_CALLBACK release_from_cb(cl_event ev, cl_int status, void *user)
{
    struct frame *f = user;
    (void)ev;
    (void)status;
    if (f->sub)
        clReleaseMemObject(f->sub);
    clReleaseMemObject(f->cm);
    atomic_fetch_add(&released_in_cb, 1);
}

static void frame_make(struct frame *f)
{
    VkExternalMemoryBufferCreateInfo eb = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, 0,
                                           VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bc = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &eb};
    bc.size = FRAME_BYTES;
    bc.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VK(vkCreateBuffer(dev, &bc, 0, &f->buf));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, f->buf, &mr);
    VkExportMemoryAllocateInfo ex = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, 0,
                                     VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ma = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &ex, mr.size,
                               memtype(mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    VK(vkAllocateMemory(dev, &ma, 0, &f->mem));
    VK(vkBindBufferMemory(dev, f->buf, f->mem, 0));
    VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, 0, f->mem,
                               VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    VK(get_mem_fd(dev, &gi, &fd));
    while (move_mem_fds && fd < 4096 && sem_numbers[fd]) { /* the workaround the bridge applies (bridge/fd-numbers.c) */
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
        close(fd);
        fd = moved;
    }
    if (getenv("RFP_LOG"))
        printf(" [mem fd %d]", fd);
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                 CL_MEM_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cld,
                                 CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_int err;
    f->cm = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, mr.size, 0, &err);
    CL(err); /* the driver owns fd now */
    if (with_destructor)
        CL(clSetMemObjectDestructorCallback(f->cm, on_destroyed, NULL));
}

static void frame_free(struct frame *f, int from_cb)
{
    if (from_cb) {
        cl_event ev;
        CL(clEnqueueMarkerWithWaitList(cq, 0, 0, &ev));
        CL(clSetEventCallback(ev, CL_COMPLETE, release_from_cb, f));
        CL(clFlush(cq));
        clReleaseEvent(ev);
        return; /* the Vulkan side goes once the callback ran: frame_free_vk */
    }
    if (f->sub)
        clReleaseMemObject(f->sub);
    clReleaseMemObject(f->cm);
    vkDestroyBuffer(dev, f->buf, 0);
    vkFreeMemory(dev, f->mem, 0);
}

static void frame_free_vk(struct frame *f)
{
    vkDestroyBuffer(dev, f->buf, 0);
    vkFreeMemory(dev, f->mem, 0);
}

struct sem {
    VkSemaphore vk;
    cl_semaphore_khr cl;
};

static void sem_make(struct sem *s)
{
    VkExportSemaphoreCreateInfo ex = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, 0,
                                      VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ex};
    VK(vkCreateSemaphore(dev, &ci, 0, &s->vk));
    VkSemaphoreGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, 0, s->vk,
                                  VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    VK(get_sem_fd(dev, &gi, &fd));
    if (fd >= 0 && fd < 4096)
        sem_numbers[fd] = 1;
    if (getenv("RFP_LOG"))
        printf(" [sem fd %d]", fd);
    cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                           CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)fd,
                                           SEM_DEVICE_LIST, (cl_semaphore_properties_khr)(uintptr_t)cld, 0, 0};
    cl_int err;
    s->cl = sem_create(ctx, props, &err);
    CL(err); /* the driver closed fd */
}

static void sem_free(struct sem *s)
{
    sem_release(s->cl);
    vkDestroySemaphore(dev, s->vk, 0);
}

/* ring-vk*: each submission writes its frame, as the library's ring test
 * does: the buffer taken back from VK_QUEUE_FAMILY_EXTERNAL, filled, and
 * handed to it again, in the command buffer that signals ready. */
static VkCommandPool cpool;
static VkCommandBuffer slot_cb[DEPTH];
static VkBuffer touch_buf;
static int touch_slot = -1;

static void ext_barrier(VkCommandBuffer cb, VkBuffer buf, uint32_t from, uint32_t to)
{
    VkBufferMemoryBarrier bb = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, 0, VK_ACCESS_MEMORY_WRITE_BIT,
                                VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, from, to, buf, 0,
                                VK_WHOLE_SIZE};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, 0, 1, &bb,
                         0, 0);
}

/* One submit on Vulkan's queue: waits (optional), signals (optional), fence. */
static void vk_submit(VkSemaphore wait, VkSemaphore signal, VkFence fence)
{
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    if (touch_slot >= 0) {
        VkCommandBuffer cb = slot_cb[touch_slot];
        VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        VK(vkResetCommandBuffer(cb, 0));
        VK(vkBeginCommandBuffer(cb, &bi));
        ext_barrier(cb, touch_buf, VK_QUEUE_FAMILY_EXTERNAL, qfam);
        vkCmdFillBuffer(cb, touch_buf, 0, 1024, 0x01020304u);
        ext_barrier(cb, touch_buf, qfam, VK_QUEUE_FAMILY_EXTERNAL);
        VK(vkEndCommandBuffer(cb));
        si.commandBufferCount = 1;
        si.pCommandBuffers = &slot_cb[touch_slot];
        touch_slot = -1;
    }
    si.waitSemaphoreCount = wait != VK_NULL_HANDLE;
    si.pWaitSemaphores = &wait;
    si.pWaitDstStageMask = &stage;
    si.signalSemaphoreCount = signal != VK_NULL_HANDLE;
    si.pSignalSemaphores = &signal;
    VK(vkQueueSubmit(q, 1, &si, fence));
}

static void pass(const char *kind)
{
    int with_mem = strcmp(kind, "sem") != 0, with_sem = strcmp(kind, "mem") != 0 && strcmp(kind, "memk") != 0;
    int with_kernel = strcmp(kind, "ring-nok") != 0, traffic = strcmp(kind, "mem") != 0;
    int use_sub = strstr(kind, "sub") != NULL, from_cb = strstr(kind, "cb") != NULL;
    int no_drain = strstr(kind, "nodrain") != NULL; /* Vulkan never waits on the last done signals */
    int touch = strstr(kind, "-vk") != NULL;         /* Vulkan writes each frame before signalling ready */
    with_destructor = strstr(kind, "dcb") != NULL;
    move_mem_fds = strstr(kind, "moved") != NULL;
    struct frame fr[DEPTH];
    struct sem ready[DEPTH], done[DEPTH];
    VkFence fence[DEPTH];
    int done_pending[DEPTH] = {0};

    if (strncmp(kind, "semfirst", 8) == 0) {
        /* Semaphores made, (pinged,) released; then frames whose fds take
         * the numbers the semaphores' fds had; used; released. */
        struct sem s2[4];
        for (int i = 0; i < 4; i++)
            sem_make(&s2[i]);
        if (strstr(kind, "ping")) {
            for (int i = 0; i < 4; i += 2) {
                vk_submit(VK_NULL_HANDLE, s2[i].vk, VK_NULL_HANDLE);
                CL(sem_wait(cq, 1, &s2[i].cl, 0, 0, 0, 0));
                CL(sem_signal(cq, 1, &s2[i + 1].cl, 0, 0, 0, 0));
                CL(clFlush(cq));
                vk_submit(s2[i + 1].vk, VK_NULL_HANDLE, VK_NULL_HANDLE);
            }
            CL(clFinish(cq));
            VK(vkQueueWaitIdle(q));
        }
        for (int i = 0; i < 4; i++)
            sem_free(&s2[i]);
        for (int i = 0; i < DEPTH; i++) {
            frame_make(&fr[i]);
            fr[i].sub = NULL;
            size_t g = FRAME_BYTES / 4 < 256 ? FRAME_BYTES / 4 : 256;
            CL(acq(cq, 1, &fr[i].cm, 0, 0, 0));
            CL(clSetKernelArg(kern, 0, sizeof fr[i].cm, &fr[i].cm));
            CL(clEnqueueNDRangeKernel(cq, kern, 1, 0, &g, 0, 0, 0, 0));
            CL(rel(cq, 1, &fr[i].cm, 0, 0, 0));
        }
        CL(clFinish(cq));
        for (int i = 0; i < DEPTH; i++)
            frame_free(&fr[i], 0);
        return;
    }
    for (int i = 0; i < DEPTH; i++) {
        VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, 0, VK_FENCE_CREATE_SIGNALED_BIT};
        VK(vkCreateFence(dev, &fi, 0, &fence[i]));
        if (with_mem) {
            frame_make(&fr[i]);
            fr[i].sub = NULL;
            if (use_sub) {
                cl_buffer_region rg = {0, 1024};
                cl_int err;
                fr[i].sub = clCreateSubBuffer(fr[i].cm, 0, CL_BUFFER_CREATE_TYPE_REGION, &rg, &err);
                CL(err);
            }
        }
        if (with_sem) {
            sem_make(&ready[i]);
            sem_make(&done[i]);
        }
    }
    if (!traffic) {
        for (int i = 0; i < DEPTH; i++) {
            CL(acq(cq, 1, &fr[i].cm, 0, 0, 0));
            CL(rel(cq, 1, &fr[i].cm, 0, 0, 0));
        }
    } else if (!with_sem) {
        for (int n = 0; n < FRAMES; n++) {
            int s = n % DEPTH;
            size_t g = 256;
            CL(acq(cq, 1, &fr[s].cm, 0, 0, 0));
            CL(clSetKernelArg(kern, 0, sizeof fr[s].cm, &fr[s].cm));
            CL(clEnqueueNDRangeKernel(cq, kern, 1, 0, &g, 0, 0, 0, 0));
            CL(rel(cq, 1, &fr[s].cm, 0, 0, 0));
            CL(clFlush(cq));
        }
    } else {
        for (int n = 0; n < FRAMES; n++) {
            int s = n % DEPTH;
            VK(vkWaitForFences(dev, 1, &fence[s], VK_TRUE, UINT64_MAX));
            VK(vkResetFences(dev, 1, &fence[s]));
            if (touch && with_mem) {
                touch_slot = s;
                touch_buf = fr[s].buf;
            }
            vk_submit(done_pending[s] ? done[s].vk : VK_NULL_HANDLE, ready[s].vk, fence[s]);
            done_pending[s] = 0;
            CL(sem_wait(cq, 1, &ready[s].cl, 0, 0, 0, 0));
            if (with_mem) {
                CL(acq(cq, 1, &fr[s].cm, 0, 0, 0));
                if (with_kernel) {
                    size_t g = FRAME_BYTES / 4 < 256 ? FRAME_BYTES / 4 : 256;
                    cl_mem km = fr[s].sub ? fr[s].sub : fr[s].cm;
                    CL(clSetKernelArg(kern, 0, sizeof km, &km));
                    CL(clEnqueueNDRangeKernel(cq, kern, 1, 0, &g, 0, 0, 0, 0));
                }
                CL(rel(cq, 1, &fr[s].cm, 0, 0, 0));
            }
            CL(sem_signal(cq, 1, &done[s].cl, 0, 0, 0, 0));
            CL(clFlush(cq));
            done_pending[s] = 1;
        }
        for (int s = 0; s < DEPTH && !no_drain; s++)
            if (done_pending[s]) {
                VK(vkWaitForFences(dev, 1, &fence[s], VK_TRUE, UINT64_MAX));
                VK(vkResetFences(dev, 1, &fence[s]));
                vk_submit(done[s].vk, VK_NULL_HANDLE, fence[s]);
            }
    }
    CL(clFinish(cq));
    VK(vkQueueWaitIdle(q));
    for (int i = 0; i < DEPTH; i++) {
        if (with_sem) {
            sem_free(&ready[i]);
            sem_free(&done[i]);
        }
        if (with_mem)
            frame_free(&fr[i], from_cb);
        vkDestroyFence(dev, fence[i], 0);
    }
    if (from_cb && with_mem) {
        for (int waited = 0; atomic_load(&released_in_cb) < DEPTH && waited < 5000; waited++)
            usleep(1000);
        if (atomic_load(&released_in_cb) < DEPTH)
            printf(" [%d of %d callbacks in 5 s]", atomic_load(&released_in_cb), DEPTH);
        atomic_store(&released_in_cb, 0);
        for (int i = 0; i < DEPTH; i++)
            frame_free_vk(&fr[i]);
    }
}

static void fd_targets(const unsigned char *before, char *out, size_t len)
{
    unsigned char now[4096];
    size_t at = 0;
    fds_now(now);
    out[0] = '\0';
    for (int fd = 0; fd < 4096 && at + 80 < len; fd++)
        if (now[fd] && !before[fd]) {
            char path[64], target[256] = "?";
            ssize_t n;
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            if ((n = readlink(path, target, sizeof target - 1)) > 0)
                target[n] = '\0';
            at += (size_t)snprintf(out + at, len - at, " %d->%s", fd, target);
        }
}

int main(int argc, char **argv)
{
    int passes = argc > 1 ? atoi(argv[1]) : 6;
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance inst;
    VK(vkCreateInstance(&ici, 0, &inst));
    uint32_t n = 1;
    VK(vkEnumeratePhysicalDevices(inst, &n, &pd) < 0);
    if (!n)
        return 1;
    VkPhysicalDeviceIDProperties idp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &idp};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    float prio = 1;
    VkDeviceQueueCreateInfo qc = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, 0, 0, qfam, 1, &prio};
    const char *dext[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dc = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dc.queueCreateInfoCount = 1;
    dc.pQueueCreateInfos = &qc;
    dc.enabledExtensionCount = 2;
    dc.ppEnabledExtensionNames = dext;
    VK(vkCreateDevice(pd, &dc, 0, &dev));
    vkGetDeviceQueue(dev, qfam, 0, &q);
    get_mem_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    get_sem_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");
    {
        VkCommandPoolCreateInfo pc = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, 0,
                                      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, qfam};
        VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, 0, 0,
                                          VK_COMMAND_BUFFER_LEVEL_PRIMARY, DEPTH};
        VK(vkCreateCommandPool(dev, &pc, 0, &cpool));
        ai.commandPool = cpool;
        VK(vkAllocateCommandBuffers(dev, &ai, slot_cb));
    }

    cl_uint np = 0;
    cl_platform_id plats[8], plat = 0;
    clGetPlatformIDs(8, plats, &np);
    for (cl_uint i = 0; i < np && i < 8 && !cld; i++) {
        cl_uint nd = 0;
        cl_device_id ds[8];
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 8, ds, &nd))
            continue;
        for (cl_uint j = 0; j < nd && j < 8; j++) {
            cl_uchar uu[16] = {0};
            clGetDeviceInfo(ds[j], CL_DEVICE_UUID_KHR, 16, uu, 0);
            if (!memcmp(uu, idp.deviceUUID, 16)) {
                plat = plats[i];
                cld = ds[j];
            }
        }
    }
    if (!cld) {
        printf("no OpenCL device with the Vulkan device's UUID (%s)\n", p2.properties.deviceName);
        return 0;
    }
    cl_int err;
    ctx = clCreateContext(0, 1, &cld, 0, 0, &err);
    CL(err);
    cq = clCreateCommandQueueWithProperties(ctx, cld, 0, &err);
    CL(err);
#define EXT(var, name) var = (void *)clGetExtensionFunctionAddressForPlatform(plat, name)
    EXT(acq, "clEnqueueAcquireExternalMemObjectsKHR");
    EXT(rel, "clEnqueueReleaseExternalMemObjectsKHR");
    EXT(sem_create, "clCreateSemaphoreWithPropertiesKHR");
    EXT(sem_wait, "clEnqueueWaitSemaphoresKHR");
    EXT(sem_signal, "clEnqueueSignalSemaphoresKHR");
    EXT(sem_release, "clReleaseSemaphoreKHR");
    const char *src = "__kernel void k(__global uint *p) { p[get_global_id(0)] += 1u; }\n";
    cl_program pg = clCreateProgramWithSource(ctx, 1, &src, 0, &err);
    CL(err);
    CL(clBuildProgram(pg, 1, &cld, "", 0, 0));
    kern = clCreateKernel(pg, "k", &err);
    CL(err);
    printf("Vulkan %s + OpenCL, ring of %d, %d frames a pass\n", p2.properties.deviceName, DEPTH, FRAMES);

    const char *all[] = {"mem", "sem", "memk", "ring-nok", "ring", "ring-sub", "ring-cb", "ring-subcb",
                         "ring-nodrain", "ring-cb-nodrain", "ring-vk", "ring-cb-vk", "ring-dcb", "ring-cb-dcb",
                         "ring-cb-vk-dcb", "semfirst", "semfirst-ping", "semfirst-moved"};
    if (getenv("RFP_BYTES"))
        FRAME_BYTES = (size_t)atoll(getenv("RFP_BYTES"));
    const char *only = argc > 2 ? argv[2] : NULL; /* one kind's name, to keep a run short */
    for (int k = 0; k < (int)(sizeof all / sizeof all[0]); k++) {
        const char *const *kinds = all;
        if (only && strcmp(only, all[k]) != 0)
            continue;
        unsigned char before[4096];
        int start = fds_now(before);
        printf("%-8s fds before: %d; after each pass:", kinds[k], start);
        for (int p = 0; p < passes; p++) {
            pass(kinds[k]);
            printf(" %d", fds_now(NULL));
            fflush(stdout);
        }
        char names[2048];
        fd_targets(before, names, sizeof names);
        printf("\n%-8s fds open now and not before the first pass:%s\n", kinds[k], names[0] ? names : " none");
    }
    return 0;
}
