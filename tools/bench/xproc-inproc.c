/* SPDX-License-Identifier: MIT */
/* clmem-bench (x): the same frames in one process, what the cross-process
 * measures are held against: the semaphore handoff's one-frame handoff with the bench's two
 * semaphores, and a clmem_bridge_ring of the four frames, batch 1. */
#include "xproc.h"

/* ------------------------------------------------------------ in one process */

/* The bridge's imports of the slots (plane 0's range), with a kernel each. */
struct inproc {
    clmem_handle *h[XPROC_SLOTS];
    cl_kernel k[XPROC_SLOTS];
};

static void inproc_setup(struct xrun *r, struct inproc *ip)
{
    struct bench *b = r->b;
    for (int s = 0; s < XPROC_SLOTS; s++) {
        cl_int err;
        cl_mem m;
        check_clmem(clmem_bridge_import_vk(b->bridge, &r->f[s].buf.mem, 0, r->k->plane_size[0], b->path, r->f[s].anchor,
                                           b->queue, CL_MEM_READ_WRITE, &ip->h[s]),
                    "clmem_bridge_import_vk(an (x) frame)");
        ip->k[s] = clCreateKernel(b->program, "bump", &err);
        check_cl(err, "clCreateKernel");
        m = clmem_handle_mem(ip->h[s]);
        check_cl(clSetKernelArg(ip->k[s], 0, sizeof m, &m), "clSetKernelArg");
    }
}

static void inproc_teardown(struct xrun *r, struct inproc *ip)
{
    check_cl(clFinish(r->b->queue), "clFinish");
    for (int s = 0; s < XPROC_SLOTS; s++) { /* The imports hold the frames' anchors until their teardown */
        clmem_handle_unref(ip->h[s]);
        clReleaseKernel(ip->k[s]);
    }
}

static void enqueue_bump(struct bench *b, cl_kernel k)
{
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(b->queue, k, 1, NULL, &one, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
}

/* The semaphore handoff on slot 0: K frames one at a time, ordered by the bench's semaphores;
 * time per frame. */
static double inproc_e_block(struct xrun *r, struct inproc *ip, int frames)
{
    struct bench *b = r->b;
    struct sem_set *set = &b->sem[V_CLMEM];
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo last = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .waitSemaphoreCount = 1,
                         .pWaitSemaphores = &set->done, .pWaitDstStageMask = &stage};
    double t0 = now_us();
    for (int f = 0; f < frames; f++) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                           .pCommandBuffers = &r->f[0].fill, .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &set->ready};
        if (f > 0) {
            si.waitSemaphoreCount = 1;
            si.pWaitSemaphores = &set->done;
            si.pWaitDstStageMask = &stage;
        }
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(fill, semaphores)");
        check_clmem(clmem_bridge_semaphore_wait(b->bridge, set->lib_ready, b->queue, 0, NULL, NULL),
                    "clmem_bridge_semaphore_wait");
        check_clmem(clmem_bridge_acquire(b->bridge, ip->h[0], 0, NULL, NULL), "clmem_bridge_acquire");
        enqueue_bump(b, ip->k[0]);
        check_clmem(clmem_bridge_release(b->bridge, ip->h[0], 0, NULL, NULL), "clmem_bridge_release");
        check_clmem(clmem_bridge_semaphore_signal(b->bridge, set->lib_done, b->queue, 0, NULL, NULL),
                    "clmem_bridge_semaphore_signal");
        r->f[0].uses++;
    }
    check_vk(vkQueueSubmit(b->vk.queue, 1, &last, VK_NULL_HANDLE), "vkQueueSubmit(final wait)");
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    return (now_us() - t0) / frames;
}

/* The in-process ring of the four slots, batch 1: K frames / K. */
struct ring_sems {
    VkSemaphore ready[XPROC_SLOTS], done[XPROC_SLOTS];
    clmem_bridge_semaphore *lib_ready[XPROC_SLOTS], *lib_done[XPROC_SLOTS];
};

static double ring_block(struct xrun *r, struct inproc *ip, struct ring_sems *rs, int frames, char *why, size_t len)
{
    struct bench *b = r->b;
    clmem_bridge_ring_info info = {.size = sizeof info, .frame_count = XPROC_SLOTS, .batch_size = 1,
                                   .frames = ip->h, .ready = rs->lib_ready, .done = rs->lib_done, .queue = b->queue};
    clmem_bridge_ring *ring;
    VkSemaphore waits[XPROC_SLOTS];
    uint32_t nwaits = 0;
    int produced = 0, consumed = 0;

    if (clmem_bridge_ring_create(b->bridge, &info, &ring) != CLMEM_OK) {
        snprintf(why, len, "clmem_bridge_ring_create: %s", clmem_error_message());
        return -1;
    }
    double t0 = now_us();
    while (consumed < frames) {
        /* Vulkan keeps up to four frames ahead; OpenCL takes the oldest. */
        while (produced < frames && produced - consumed < XPROC_SLOTS) {
            clmem_bridge_ring_frame fr;
            VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            check_clmem(clmem_bridge_ring_vk_next(ring, produced == frames - 1 ? CLMEM_BRIDGE_RING_END_BATCH : 0,
                                                  BATCH_TIMEOUT_NS, &fr),
                        "clmem_bridge_ring_vk_next");
            VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1,
                               .pCommandBuffers = &r->f[fr.index].fill,
                               .waitSemaphoreCount = fr.wait_semaphore ? 1 : 0, .pWaitSemaphores = &fr.wait_semaphore,
                               .pWaitDstStageMask = &stage, .signalSemaphoreCount = fr.signal_semaphore ? 1 : 0,
                               .pSignalSemaphores = &fr.signal_semaphore};
            check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(ring frame)");
            check_clmem(clmem_bridge_ring_vk_submitted(ring, &fr), "clmem_bridge_ring_vk_submitted");
            produced++;
        }
        clmem_bridge_ring_batch batch;
        check_clmem(clmem_bridge_ring_cl_next(ring, BATCH_TIMEOUT_NS, 0, NULL, &batch, NULL),
                    "clmem_bridge_ring_cl_next");
        enqueue_bump(b, ip->k[batch.first_index]);
        r->f[batch.first_index].uses++;
        check_clmem(clmem_bridge_ring_cl_done(ring, &batch, 0, NULL, NULL), "clmem_bridge_ring_cl_done");
        consumed++;
    }
    check_clmem(clmem_bridge_ring_vk_drain(ring, BATCH_TIMEOUT_NS, XPROC_SLOTS, waits, &nwaits),
                "clmem_bridge_ring_vk_drain");
    if (nwaits) {
        VkPipelineStageFlags stages[XPROC_SLOTS];
        for (uint32_t i = 0; i < nwaits; i++)
            stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .waitSemaphoreCount = nwaits,
                           .pWaitSemaphores = waits, .pWaitDstStageMask = stages};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(drain waits)");
    }
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    double per = (now_us() - t0) / frames;
    clmem_bridge_ring_unref(ring);
    return per;
}

void xproc_run_inproc(struct xrun *r, struct xresult *res)
{
    struct bench *b = r->b;
    struct inproc ip = {0};
    struct ring_sems rs = {0};
    char why[256];

    inproc_setup(r, &ip);
    if (!b->sem_ok) {
        snprintf(res->why[X_INPROC_E], sizeof res->why[0], "the bench's semaphores are not usable: %s", b->sem_note);
        snprintf(res->why[X_RING4], sizeof res->why[0], "the bench's semaphores are not usable");
    } else {
        xproc_frames_zero(r);
        inproc_e_block(r, &ip, r->warmup);
        for (int blk = 0; blk < r->blocks; blk++)
            r->samples[blk] = inproc_e_block(r, &ip, r->frames);
        res->s[X_INPROC_E] = summarize(r->samples, r->blocks, r->frames);
        res->ran[X_INPROC_E] = xproc_frames_check(r, "in-process (e)", res->why[X_INPROC_E], sizeof res->why[0]);
        if (!res->ran[X_INPROC_E])
            fail(b, "(x) %s: %s", r->k->label, res->why[X_INPROC_E]);

        /* The ring's semaphores, in the semaphore handoff's mode. */
        bool ok = true;
        for (int s = 0; s < XPROC_SLOTS && ok; s++) {
            rs.ready[s] = semaphore_create(b, b->sem_exportable);
            rs.done[s] = semaphore_create(b, b->sem_exportable);
            ok = lib_semaphore_import(b, rs.ready[s], b->sem_mode, &rs.lib_ready[s]) == CLMEM_OK &&
                 lib_semaphore_import(b, rs.done[s], b->sem_mode, &rs.lib_done[s]) == CLMEM_OK;
        }
        if (!ok)
            snprintf(res->why[X_RING4], sizeof res->why[0], "clmem_bridge_semaphore_import: %s", clmem_error_message());
        xproc_frames_zero(r);
        double per = ok ? ring_block(r, &ip, &rs, r->warmup, why, sizeof why) : -1;
        for (int blk = 0; blk < r->blocks && per >= 0; blk++)
            per = r->samples[blk] = ring_block(r, &ip, &rs, r->frames, why, sizeof why);
        if (ok && per < 0)
            snprintf(res->why[X_RING4], sizeof res->why[0], "%s", why);
        else if (ok) {
            res->s[X_RING4] = summarize(r->samples, r->blocks, r->frames);
            res->ran[X_RING4] = xproc_frames_check(r, "in-process ring", res->why[X_RING4], sizeof res->why[0]);
            if (!res->ran[X_RING4])
                fail(b, "(x) %s: %s", r->k->label, res->why[X_RING4]);
        }
        check_vk(vkDeviceWaitIdle(b->vk.device), "vkDeviceWaitIdle");
        for (int s = 0; s < XPROC_SLOTS; s++) { /* their anchors destroy the VkSemaphores */
            clmem_bridge_semaphore_unref(rs.lib_ready[s]);
            clmem_bridge_semaphore_unref(rs.lib_done[s]);
        }
    }
    inproc_teardown(r, &ip);
}

