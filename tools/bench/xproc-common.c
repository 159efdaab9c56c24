/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: what every measure shares. The
 * frames themselves, one per slot (exportable Vulkan memory, a fill command
 * that writes XPROC_VALUE(slot) into word 0, a zero command and a fence),
 * their check after a measure, the measures' labels, and the CPU time of
 * both processes. */
#include "xproc-common.h"

#include <time.h>

const char *const xmeasure_label[XM_COUNT] = {"in-process (e)", "xproc D=1",       "raw D=1",      "in-proc ring D=4",
                                              "xproc D=4",      "xproc batch D=4", "/dev/shm D=1", "/dev/shm D=4"};

/* ------------------------------------------------------------ the frames */

/* The frames, device-local on the opaque-fd path, host-visible otherwise,
 * each anchored so that its memory outlives the bridge's imports of it; the
 * readback buffer for the check. */
void xproc_frames_setup(struct xrun *r)
{
    struct bench *b = r->b;
    bool fd_path = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    VkMemoryPropertyFlags props = fd_path ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                          : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};

    for (int s = 0; s < XPROC_SLOTS; s++) {
        struct xframe *f = &r->f[s];
        f->owner = calloc(1, sizeof *f->owner);
        if (!f->owner)
            die("out of memory");
        f->owner->bridge = b->bridge;
        atomic_init(&f->owner->freed, 0);
        check_clmem(clmem_bridge_vk_buffer_create(b->bridge, r->k->bytes,
                                                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                                  props, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                                  &f->owner->buf.buffer, &f->owner->buf.mem),
                    "clmem_bridge_vk_buffer_create(an exportable frame)");
        f->buf = f->owner->buf;
        f->anchor = clmem_keepalive_new(anchored_buf_release, f->owner);
        if (!f->anchor)
            die("clmem_keepalive_new failed");
        f->memory_type = CLMEM_IPC_MEMORY_TYPE_BY_FLAGS;
        f->fill = record_fill_word0(b, f->buf.buffer, XPROC_VALUE(s));
        f->zero = begin_commands(b);
        vkCmdFillBuffer(f->zero, f->buf.buffer, 0, 8, 0);
        end_commands(f->zero);
        check_vk(vkCreateFence(b->vk.device, &fi, NULL, &f->fence), "vkCreateFence");
    }
    check_clmem(
        clmem_bridge_vk_buffer_create(b->bridge, 8 * XPROC_SLOTS, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                      &r->readback.buffer, &r->readback.mem),
        "clmem_bridge_vk_buffer_create(readback)");
    check_vk(vkMapMemory(b->vk.device, r->readback.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&r->readback_ptr),
             "vkMapMemory(readback)");
}

/* After the last measure of a frame kind, its consumer processes gone. */
void xproc_frames_teardown(struct xrun *r)
{
    struct bench *b = r->b;
    check_vk(vkDeviceWaitIdle(b->vk.device), "vkDeviceWaitIdle");
    check_cl(clFinish(b->queue), "clFinish(before the teardowns)");
    for (int s = 0; s < XPROC_SLOTS; s++) {
        VkCommandBuffer cbs[2] = {r->f[s].fill, r->f[s].zero};
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, 2, cbs);
        vkDestroyFence(b->vk.device, r->f[s].fence, NULL);
        /* The memory goes once the bridge's imports of it let go (their
         * teardowns complete through the driver's callbacks once the
         * markers ran: clFinish above), as size.c waits for its buffer;
         * the consumer processes are gone, their imports with them. */
        clmem_keepalive_unref(r->f[s].anchor);
        if (!anchored_buf_free(r->f[s].owner, teardown_deadline())) /* left to the anchor, which may still run */
            fail(b, "(x): a frame's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    }
    vkUnmapMemory(b->vk.device, r->readback.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, r->readback.buffer, &r->readback.mem);
}

/* Words 0 and 1 of every slot set to 0, and nothing counted. */
void xproc_frames_zero(struct xrun *r)
{
    for (int s = 0; s < XPROC_SLOTS; s++) {
        submit_and_wait(r->b, r->f[s].zero, "vkQueueSubmit(zero a frame)");
        r->f[s].uses = 0;
    }
}

/* After a measure: every slot's p[1] is its kernels' count x its value:
 * each kernel saw its own frame's write. */
bool xproc_frames_check(struct xrun *r, const char *what, char *why, size_t len)
{
    VkCommandBuffer cb = begin_commands(r->b);
    for (int s = 0; s < XPROC_SLOTS; s++) {
        VkBufferCopy region = {0, (VkDeviceSize)s * 8, 8};
        vkCmdCopyBuffer(cb, r->f[s].buf.buffer, r->readback.buffer, 1, &region);
    }
    end_commands(cb);
    submit_and_wait(r->b, cb, "vkQueueSubmit(read the frames back)");
    vkFreeCommandBuffers(r->b->vk.device, r->b->vk.pool, 1, &cb);
    for (int s = 0; s < XPROC_SLOTS; s++) {
        uint32_t w0 = r->readback_ptr[2 * s], w1 = r->readback_ptr[2 * s + 1];
        uint32_t want1 = r->f[s].uses * XPROC_VALUE(s), want0 = r->f[s].uses ? XPROC_VALUE(s) + 1 : 0;
        if (w0 != want0 || w1 != want1) {
            snprintf(why, len, "%s, slot %d after %u frames: words 0x%x 0x%x, want 0x%x 0x%x", what, s, r->f[s].uses,
                     w0, w1, want0, want1);
            return false;
        }
    }
    return true;
}

void xproc_fence_reset(struct bench *b, VkFence f)
{
    check_vk(vkResetFences(b->vk.device, 1, &f), "vkResetFences");
}

void xproc_submit_fill(struct xrun *r, int s)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &r->f[s].fill};
    xproc_fence_reset(r->b, r->f[s].fence);
    check_vk(vkQueueSubmit(r->b->vk.queue, 1, &si, r->f[s].fence), "vkQueueSubmit(fill)");
}

/* ------------------------------------------------------------ CPU time */

static double clock_us(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The CPU clocks of both processes (every thread of each): the producer's
 * and, while it runs, the consumer's, read from here at any time. */
double xproc_cpu_us(pid_t pid)
{
    clockid_t child;
    double us = clock_us(CLOCK_PROCESS_CPUTIME_ID);
    if (pid > 0 && clock_getcpuclockid(pid, &child) == 0)
        us += clock_us(child);
    return us;
}
