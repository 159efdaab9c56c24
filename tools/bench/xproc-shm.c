/* SPDX-License-Identifier: MIT */
/* clmem-bench (x): what programs do today without sharing, the producer's
 * side: each frame copied out of Vulkan into a /dev/shm file whose fd the
 * consumer got once; its messages, which the consumer process
 * (xproc-child.c) answers. */
#include "xproc.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>

/* ------------------------------------------------------------ through /dev/shm */

bool xproc_shm_send(int sock, const struct shm_msg *m, const int *fds, int nfds)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {(void *)m, sizeof *m};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(&control, 0, sizeof control);
        h.msg_control = control.space;
        h.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    return sendmsg(sock, &h, MSG_NOSIGNAL) == (ssize_t)sizeof *m;
}

/* One message, its fds in fds (up to max, the rest closed): how many came,
 * or -1 when no whole message did. */
int xproc_shm_recv(int sock, struct shm_msg *m, int *fds, int max)
{
    union {
        char space[CMSG_SPACE(sizeof(int) * XPROC_SLOTS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {m, sizeof *m};
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space,
                       .msg_controllen = sizeof control.space};
    ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);
    int got = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); n > 0 && c; c = CMSG_NXTHDR(&h, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
                if (got < max)
                    fds[got++] = fd;
                else
                    close(fd);
            }
    return n == (ssize_t)sizeof *m ? got : -1;
}

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
        shm_unlink(name); /* The fds are all anyone needs */
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
    struct shm_msg hello = {.type = 1, .bytes = bytes, .slots = (uint32_t)slots};
    ok = xproc_shm_send(sock, &hello, fds, slots);
    for (int s = 0; s < slots; s++)
        close(fds[s]);

    int total = r->warmup + frames;
    double t0 = now_us();
    for (int f = 0; ok && f < total; f++) {
        int s = f % slots;
        struct shm_msg msg;
        if (f == r->warmup)
            t0 = now_us();
        if (in_flight == slots) { /* The slot's previous frame first */
            ok = xproc_shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
            in_flight--;
        }
        double f0 = now_us();
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &copy[s]};
        xproc_fence_reset(b, r->f[s].fence);
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(write the frame, copy it out)");
        check_vk(vkWaitForFences(b->vk.device, 1, &r->f[s].fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        memcpy(shm[s], staged[s], bytes);
        msg = (struct shm_msg){.type = 2, .slot = (uint32_t)s, .value = XPROC_VALUE(s)};
        ok = ok && xproc_shm_send(sock, &msg, NULL, 0);
        in_flight++;
        if (slots == 1) {
            ok = ok && xproc_shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
            in_flight--;
            if (f >= r->warmup)
                r->samples[done++] = now_us() - f0;
        }
    }
    while (ok && in_flight) {
        struct shm_msg msg;
        ok = xproc_shm_recv(sock, &msg, NULL, 0) == 0 && msg.type == 3;
        in_flight--;
    }
    if (slots > 1)
        r->samples[done++] = (now_us() - t0) / frames;
    if (!ok)
        snprintf(why, sizeof res->why[0], "the /dev/shm consumer stopped answering");
    close(sock); /* The consumer ends at EOF */
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
        res->ran[m] = true;
    } else {
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
    }
}

