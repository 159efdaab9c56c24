/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: libclmem-ipc's protocol made with
 * the raw calls and no library call, both sides, so that libclmem-ipc minus
 * this is the library's own cost across processes.
 *
 * The memory's opaque fd crosses a socketpair once (SCM_RIGHTS, in HELLO);
 * the consumer imports it the way libclmem-ipc's consumer does on the path
 * the bench's devices take (opaque fd: straight into OpenCL; host-mapped:
 * into the consumer's VkDevice, mapped, and shared with OpenCL as
 * CL_MEM_USE_HOST_PTR) and answers ACCEPT. Per frame, as libclmem-ipc: the
 * producer submits Vulkan's write with a fence, waits for it on the host
 * and sends READY; the consumer acquires the memory, runs the kernel,
 * releases it, waits for the release on the host (clWaitForEvents) and
 * sends FREE. Both directions are ordered by the host, as the library's:
 * no semaphore crosses the processes. */
#include "xproc-common.h"

#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------ the producer */

/* The lowest memory type whose flags are the allocation's, as
 * CLMEM_IPC_MEMORY_TYPE_BY_FLAGS asks libclmem-ipc to find. */
static uint32_t memory_type_of(struct bench *b, VkMemoryPropertyFlags flags)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(b->vk.physical_device, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if (mp.memoryTypes[i].propertyFlags == flags)
            return i;
    return UINT32_MAX;
}

bool xproc_raw_open(struct xrun *r, struct raw_producer *x, int slot, char *why, size_t len)
{
    struct bench *b = r->b;
    const clmem_bridge_vk_memory *m = &r->f[slot].buf.mem;
    VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                 .memory = m->memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    struct xproc_msg hello = {.type = XMSG_HELLO,
                              .bytes = m->allocation_size,
                              .slots = 1,
                              .path = (uint32_t)b->path,
                              .memory_type = memory_type_of(b, m->property_flags),
                              .dedicated = m->dedicated};
    struct xproc_msg accept;
    int fd = -1;
    bool sent;

    x->slot = slot;
    x->pid = xproc_spawn_consumer("raw", &x->sock);
    if (b->get_memory_fd(m->device, &info, &fd) != VK_SUCCESS) {
        snprintf(why, len, "vkGetMemoryFdKHR failed on the raw protocol's frame");
        close(x->sock); /* the consumer ends at EOF */
        x->sock = -1;
        return false;
    }
    sent = xproc_msg_send(x->sock, &hello, &fd, 1);
    close(fd); /* the consumer has its own copy */
    if (!sent || xproc_msg_recv(x->sock, &accept, NULL, 0) != 0 || accept.type != XMSG_ACCEPT) {
        snprintf(why, len, "the raw protocol's consumer did not accept the frame (its stderr says why)");
        close(x->sock);
        x->sock = -1;
        return false;
    }
    return true;
}

/* One frame, from the write's submission to its FREE, as libclmem-ipc's
 * D=1 is timed. */
bool xproc_raw_frame(struct xrun *r, struct raw_producer *x, double *us)
{
    struct bench *b = r->b;
    struct xproc_msg msg = {.type = XMSG_READY, .slot = 0, .value = XPROC_VALUE(x->slot)};
    double t0 = now_us();
    xproc_submit_fill(r, x->slot);
    if (vkWaitForFences(b->vk.device, 1, &r->f[x->slot].fence, VK_TRUE, XPROC_TIMEOUT_NS) != VK_SUCCESS ||
        !xproc_msg_send(x->sock, &msg, NULL, 0) || xproc_msg_recv(x->sock, &msg, NULL, 0) != 0 || msg.type != XMSG_FREE)
        return false;
    *us = now_us() - t0;
    r->f[x->slot].uses++;
    return true;
}

bool xproc_raw_close(struct raw_producer *x, char *why, size_t len)
{
    if (x->sock >= 0)
        close(x->sock); /* EOF: the consumer tears down and exits */
    x->sock = -1;
    return xproc_reap(x->pid, why, len);
}

/* ------------------------------------------------------------ the consumer */

struct raw_consumer {
    VkDeviceMemory memory;
    VkBuffer dedicated_to;
    void *vk_base;
    cl_mem mem;
    void *cl_map; /* host-mapped: OpenCL's map while the producer holds the frame */
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire;
    clEnqueueReleaseExternalMemObjectsKHR_fn release;
};

static int raw_fail(const char *what, int code)
{
    fprintf(stderr, "clmem-bench (x) raw consumer: %s (%d)\n", what, code);
    return 1;
}

/* The fd into OpenCL, as libclmem-ipc's consumer imports it: takes fd. */
static int raw_consumer_import(struct consumer_devices *c, const struct xproc_msg *h, int fd, struct raw_consumer *rc)
{
    cl_int err = CL_SUCCESS;
    if (h->path == CLMEM_BRIDGE_PATH_OPAQUE_FD) {
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                     CLMEM_CL_MEM_DEVICE_HANDLE_LIST,         (cl_mem_properties)(uintptr_t)c->device,
                                     CLMEM_CL_DEVICE_HANDLE_LIST_END,         0};
        rc->acquire = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
            c->platform, "clEnqueueAcquireExternalMemObjectsKHR");
        rc->release = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
            c->platform, "clEnqueueReleaseExternalMemObjectsKHR");
        if (!rc->acquire || !rc->release) {
            close(fd);
            return raw_fail("clEnqueueAcquire/ReleaseExternalMemObjectsKHR cannot be resolved", 0);
        }
        rc->mem = clCreateBufferWithProperties(c->context, props, CL_MEM_READ_WRITE, h->bytes, NULL, &err);
        if (err != CL_SUCCESS || !rc->mem) {
            close(fd); /* the driver takes the fd only on success */
            return raw_fail("clCreateBufferWithProperties(opaque fd)", err);
        }
        return 0;
    }
    VkImportMemoryFdInfoKHR import = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                      .fd = fd};
    VkMemoryDedicatedAllocateInfo dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = &import,
                               .allocationSize = h->bytes,
                               .memoryTypeIndex = h->memory_type};
    VkResult vr;
    if (h->dedicated) {
        VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                                .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                 .pNext = &ext,
                                 .size = h->bytes,
                                 .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
        vr = vkCreateBuffer(c->vk.device, &bi, NULL, &rc->dedicated_to);
        if (vr != VK_SUCCESS) {
            close(fd);
            return raw_fail("vkCreateBuffer(the dedicated import's buffer)", vr);
        }
        dedicated.buffer = rc->dedicated_to;
        import.pNext = &dedicated;
    }
    vr = vkAllocateMemory(c->vk.device, &ai, NULL, &rc->memory);
    if (vr != VK_SUCCESS) {
        close(fd); /* a failed import leaves the fd ours */
        return raw_fail("vkAllocateMemory(VkImportMemoryFdInfoKHR)", vr);
    }
    vr = vkMapMemory(c->vk.device, rc->memory, 0, VK_WHOLE_SIZE, 0, &rc->vk_base);
    if (vr != VK_SUCCESS)
        return raw_fail("vkMapMemory", vr);
    rc->mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, h->bytes, rc->vk_base, &err);
    if (err != CL_SUCCESS)
        return raw_fail("clCreateBuffer(CL_MEM_USE_HOST_PTR)", err);
    rc->cl_map =
        clEnqueueMapBuffer(c->queue, rc->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, h->bytes, 0, NULL, NULL, &err);
    return err == CL_SUCCESS ? 0 : raw_fail("clEnqueueMapBuffer", err);
}

/* One frame: acquire, the kernel, release, the release waited for. */
static int raw_consume(struct consumer_devices *c, const struct xproc_msg *h, struct raw_consumer *rc)
{
    size_t one = 1;
    cl_event done = NULL;
    cl_int err;
    if (h->path == CLMEM_BRIDGE_PATH_OPAQUE_FD)
        err = rc->acquire(c->queue, 1, &rc->mem, 0, NULL, NULL);
    else
        err = clEnqueueUnmapMemObject(c->queue, rc->mem, rc->cl_map, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return raw_fail("acquiring the frame", err);
    clSetKernelArg(c->bump, 0, sizeof rc->mem, &rc->mem);
    err = clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return raw_fail("clEnqueueNDRangeKernel", err);
    if (h->path == CLMEM_BRIDGE_PATH_OPAQUE_FD)
        err = rc->release(c->queue, 1, &rc->mem, 0, NULL, &done);
    else
        rc->cl_map = clEnqueueMapBuffer(c->queue, rc->mem, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, h->bytes, 0, NULL,
                                        &done, &err);
    if (err != CL_SUCCESS)
        return raw_fail("releasing the frame", err);
    err = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    return err == CL_SUCCESS ? 0 : raw_fail("clWaitForEvents(the release)", err);
}

static void CL_CALLBACK raw_destroyed(cl_mem mem, void *user)
{
    (void)mem;
    atomic_store((atomic_int *)user, 1);
}

/* The raw protocol's consumer: HELLO's memory imported, ACCEPT, then a
 * frame consumed for each READY and FREE said, until EOF. */
int xproc_consume_raw(struct consumer_devices *c, int sock)
{
    struct raw_consumer rc = {0};
    struct xproc_msg hello, msg;
    int fd = -1, status;
    int nfds = xproc_msg_recv(sock, &hello, &fd, 1);
    if (nfds != 1 || hello.type != XMSG_HELLO) {
        if (nfds == 1)
            close(fd);
        return raw_fail("the raw HELLO did not come with one fd", nfds);
    }
    status = raw_consumer_import(c, &hello, fd, &rc);
    msg = (struct xproc_msg){.type = XMSG_ACCEPT};
    if (status == 0 && !xproc_msg_send(sock, &msg, NULL, 0))
        status = raw_fail("sending ACCEPT", 0);
    while (status == 0 && xproc_msg_recv(sock, &msg, NULL, 0) == 0 && msg.type == XMSG_READY) {
        status = raw_consume(c, &hello, &rc);
        msg.type = XMSG_FREE;
        if (status == 0 && !xproc_msg_send(sock, &msg, NULL, 0))
            break;
    }
    /* In the bridge's order: OpenCL's map undone, the cl_mem destroyed,
     * then Vulkan's mapping and memory. */
    if (rc.cl_map)
        clEnqueueUnmapMemObject(c->queue, rc.mem, rc.cl_map, 0, NULL, NULL);
    clFinish(c->queue);
    if (rc.mem) {
        atomic_int gone;
        atomic_init(&gone, 0);
        clSetMemObjectDestructorCallback(rc.mem, raw_destroyed, &gone);
        clReleaseMemObject(rc.mem);
        if (!wait_until_set(&gone, teardown_deadline()))
            status = raw_fail("OpenCL did not destroy the import in time; its memory is left to the exit", 0);
        else
            rc.mem = NULL;
    }
    if (rc.mem)
        return status;
    if (rc.vk_base)
        vkUnmapMemory(c->vk.device, rc.memory);
    if (rc.memory)
        vkFreeMemory(c->vk.device, rc.memory, NULL);
    if (rc.dedicated_to)
        vkDestroyBuffer(c->vk.device, rc.dedicated_to, NULL);
    return status;
}
