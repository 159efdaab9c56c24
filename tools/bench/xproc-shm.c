/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: what programs do today without
 * sharing, both sides. The producer copies each frame out of Vulkan into a
 * /dev/shm file whose fd the consumer got once (in HELLO) and says READY;
 * the consumer role of the consumer process (xproc-child.c runs it) writes
 * the frame into its cl_mem, runs the kernel and says FREE. */
#include "xproc-common.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>

/* ------------------------------------------------------------ the producer */

/* The producer's side: per frame, Vulkan writes word 0 and copies the frame
 * into its slot's staging buffer, the host copies that into the slot's
 * /dev/shm file, READY; the slot is written again after its FREE. */
void xproc_run_shm(struct xrun *r, struct xresult *res, int slots, enum xmeasure m, int frames)
{
    struct bench *b = r->b;
    char *why = res->why[m];
    uint64_t bytes = r->k->bytes;
    int fds[XPROC_SLOTS];
    void *shm[XPROC_SLOTS];
    struct vk_buf staging[XPROC_SLOTS];
    void *staged[XPROC_SLOTS];
    VkCommandBuffer copy[XPROC_SLOTS];
    int sock, done = 0, in_flight = 0;
    bool ok = true;

    for (int s = 0; s < slots; s++) {
        char name[64];
        snprintf(name, sizeof name, "/clmem-bench-xproc-%d-%d", (int)getpid(), s);
        fds[s] = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fds[s] < 0)
            die("(x): shm_open(%s): %s", name, strerror(errno));
        shm_unlink(name); /* the fds are all anyone needs */
        if (ftruncate(fds[s], (off_t)bytes) != 0 ||
            (shm[s] = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[s], 0)) == MAP_FAILED)
            die("(x): a /dev/shm file of %llu bytes: %s", (unsigned long long)bytes, strerror(errno));
        staging_buf_create(b, &staging[s], bytes);
        check_vk(vkMapMemory(b->vk.device, staging[s].mem.memory, 0, VK_WHOLE_SIZE, 0, &staged[s]), "vkMapMemory");
        copy[s] = begin_commands(b);
        vkCmdFillBuffer(copy[s], r->f[s].buf.buffer, 0, 4, XPROC_VALUE(s));
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
        vkCmdPipelineBarrier(copy[s], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                             NULL, 0, NULL);
        VkBufferCopy region = {0, 0, bytes};
        vkCmdCopyBuffer(copy[s], r->f[s].buf.buffer, staging[s].buffer, 1, &region);
        end_commands(copy[s]);
    }
    pid_t pid = xproc_spawn_consumer("shm", &sock);
    struct xproc_msg hello = {.type = XMSG_HELLO, .bytes = bytes, .slots = (uint32_t)slots};
    ok = xproc_msg_send(sock, &hello, fds, slots);
    for (int s = 0; s < slots; s++)
        close(fds[s]);

    int total = r->warmup + frames;
    double t0 = now_us(), c0 = xproc_cpu_us(pid), cpu = 0;
    for (int f = 0; ok && f < total; f++) {
        int s = f % slots;
        struct xproc_msg msg;
        if (f == r->warmup) {
            t0 = now_us();
            c0 = xproc_cpu_us(pid);
        }
        if (in_flight == slots) { /* the slot's previous frame first */
            ok = xproc_msg_recv(sock, &msg, NULL, 0) == 0 && msg.type == XMSG_FREE;
            in_flight--;
        }
        double f0 = now_us();
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &copy[s]};
        xproc_fence_reset(b, r->f[s].fence);
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(write the frame, copy it out)");
        check_vk(vkWaitForFences(b->vk.device, 1, &r->f[s].fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        memcpy(shm[s], staged[s], bytes);
        msg = (struct xproc_msg){.type = XMSG_READY, .slot = (uint32_t)s, .value = XPROC_VALUE(s)};
        ok = ok && xproc_msg_send(sock, &msg, NULL, 0);
        in_flight++;
        if (slots == 1) {
            ok = ok && xproc_msg_recv(sock, &msg, NULL, 0) == 0 && msg.type == XMSG_FREE;
            in_flight--;
            if (f >= r->warmup)
                r->samples[done++] = now_us() - f0;
        }
    }
    while (ok && in_flight) {
        struct xproc_msg msg;
        ok = xproc_msg_recv(sock, &msg, NULL, 0) == 0 && msg.type == XMSG_FREE;
        in_flight--;
    }
    if (slots > 1)
        r->samples[done++] = (now_us() - t0) / frames;
    cpu = xproc_cpu_us(pid) - c0; /* before the consumer's teardown */
    if (!ok)
        snprintf(why, sizeof res->why[0], "the /dev/shm consumer stopped answering");
    close(sock); /* the consumer ends at EOF */
    char child[256] = "";
    if (!xproc_reap(pid, child, sizeof child) && ok) {
        ok = false;
        snprintf(why, sizeof res->why[0], "%s (it checks word 0 of every frame)", child);
    }
    for (int s = 0; s < slots; s++) {
        munmap(shm[s], bytes);
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &copy[s]);
        vkUnmapMemory(b->vk.device, staging[s].mem.memory);
        clmem_bridge_vk_buffer_destroy(b->bridge, staging[s].buffer, &staging[s].mem);
    }
    if (ok) {
        res->s[m] = summarize(r->samples, done, slots == 1 ? 1 : frames);
        res->cpu[m] = cpu / frames;
        res->ran[m] = true;
    } else {
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
    }
}

/* ------------------------------------------------------------ the consumer */

/* The /dev/shm copy's consumer: each frame written into its slot's
 * cl_mem, the kernel, FREE once it completed. */
int xproc_consume_shm(struct consumer_devices *c, int sock)
{
    struct xproc_msg hello, msg;
    int fds[XPROC_SLOTS];
    void *shm[XPROC_SLOTS];
    cl_mem mem[XPROC_SLOTS];
    cl_int err;
    uint32_t wrong = 0;
    int nfds = xproc_msg_recv(sock, &hello, fds, XPROC_SLOTS);
    if (nfds < 1 || hello.type != XMSG_HELLO || hello.slots != (uint32_t)nfds) {
        for (int s = 0; s < nfds; s++)
            close(fds[s]);
        return xproc_consumer_fail("the /dev/shm HELLO");
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        shm[s] = mmap(NULL, hello.bytes, PROT_READ, MAP_SHARED, fds[s], 0);
        close(fds[s]);
        mem[s] = clCreateBuffer(c->context, CL_MEM_READ_WRITE, hello.bytes, NULL, &err);
        if (shm[s] == MAP_FAILED || err != CL_SUCCESS)
            return xproc_consumer_fail("mapping a /dev/shm slot or making its cl_mem");
    }
    while (xproc_msg_recv(sock, &msg, NULL, 0) == 0 && msg.type == XMSG_READY && msg.slot < hello.slots) {
        size_t one = 1;
        uint32_t s = msg.slot;
        wrong += *(volatile uint32_t *)shm[s] != msg.value;
        if (clEnqueueWriteBuffer(c->queue, mem[s], CL_FALSE, 0, hello.bytes, shm[s], 0, NULL, NULL) != CL_SUCCESS)
            return xproc_consumer_fail("clEnqueueWriteBuffer");
        clSetKernelArg(c->bump, 0, sizeof mem[s], &mem[s]);
        clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL);
        if (clFinish(c->queue) != CL_SUCCESS)
            return xproc_consumer_fail("clFinish");
        msg.type = XMSG_FREE;
        if (!xproc_msg_send(sock, &msg, NULL, 0))
            break;
    }
    for (uint32_t s = 0; s < hello.slots; s++) {
        munmap(shm[s], hello.bytes);
        clReleaseMemObject(mem[s]);
    }
    if (wrong)
        fprintf(stderr, "clmem-bench (x) consumer: %u frames read from /dev/shm were not what the producer wrote\n",
                wrong);
    return wrong ? 1 : 0;
}
