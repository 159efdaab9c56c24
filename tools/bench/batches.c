/* SPDX-License-Identifier: MIT */
/* clmem-bench: the batch run (--batches, frames in flight through a
 * clmem_bridge_ring): its frames, semaphores and staging, made and torn down. */
#include "bench.h"

/*
 * --batches: frames in flight. For each batch size K, each ring size D (the
 * slots, so D batches in flight and N = K * D frames) and each handoff:
 *   semaphores      a clmem_bridge_ring with device-ordered (opaque-fd)
 *                   semaphores, Vulkan's writes on the graphics/compute queue;
 *   host waits      the same ring with host-ordered semaphores (the host
 *                   waits on a fence for Vulkan and on an event for OpenCL);
 *   transfer queue  the semaphore ring with Vulkan's writes on a queue of a
 *                   transfer-only family (where the device has one);
 * the time per frame of blocks of F frames (Vulkan fills word 0 of each
 * frame of a batch in one submission, OpenCL runs the one-work-item kernel
 * on each), the clmem blocks through the ring, the raw blocks through the
 * same driver calls made directly (one acquire/release extension call per
 * batch, one semaphore wait/signal per batch, the host-ordered variant's
 * fence and event), alternating block by block. Beside them the staged copy
 * of one frame (as the staged copy, at the frame size), one rep before each
 * configuration, so that all of it is interleaved in one run.
 */

const char *const handoff_measure[H_COUNT] = {"ring_semaphore", "ring_host", "ring_transfer"};
const char *const handoff_label[H_COUNT] = {"semaphores", "host waits", "transfer queue"};

VkQueue handoff_queue(const struct batch_ctx *c)
{
    return c->handoff == H_TRANSFER ? c->b->vk.transfer_queue : c->b->vk.queue;
}

int handoff_mode(enum handoff h)
{
    return h == H_HOST; /* 0: device ordering, 1: host */
}

/* Recorded once, submitted again while a previous submission may still be
 * pending (a frame's next batch is submitted before the device ran the
 * last): SIMULTANEOUS_USE. */
static VkCommandBuffer record_fill_reusable(struct bench *b, VkCommandPool pool, VkBuffer buffer, uint32_t value)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    VkCommandBuffer cb;
    check_vk(vkAllocateCommandBuffers(b->vk.device, &ai, &cb), "vkAllocateCommandBuffers");
    check_vk(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    vkCmdFillBuffer(cb, buffer, 0, 4, value);
    end_commands(cb);
    return cb;
}

/* The semaphores of every handoff that can run; why_not says why not. */
static void batch_semaphores(struct batch_ctx *c, struct batch_results *out)
{
    struct bench *b = c->b;
    bool device = clmem_bridge_check_semaphore(b->bridge, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD) == CLMEM_OK;

    if (!device)
        snprintf(out->why_not[H_SEM], sizeof out->why_not[H_SEM], "needs device ordering: %s", clmem_error_message());
    else if (!b->get_semaphore_fd || !b->ext.create_semaphore || !b->ext.wait_semaphores ||
             !b->ext.signal_semaphores || !b->ext.release_semaphore)
        snprintf(out->why_not[H_SEM], sizeof out->why_not[H_SEM],
                 "the raw cl_khr_semaphore / vkGetSemaphoreFdKHR entry points are missing");
    if (!b->vk.has_transfer_queue)
        snprintf(out->why_not[H_TRANSFER], sizeof out->why_not[H_TRANSFER],
                 "%s has no transfer-only queue family", b->vk.device_name);
    else if (out->why_not[H_SEM][0])
        snprintf(out->why_not[H_TRANSFER], sizeof out->why_not[H_TRANSFER], "%s", out->why_not[H_SEM]);
    for (int m = 0; m < 2; m++) {
        if (m == 0 && out->why_not[H_SEM][0])
            continue;
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            struct bsems *set = &c->sems[v][m];
            for (int i = 0; i < MAX_RING; i++) {
                set->ready[i] = semaphore_create(b, m == 0);
                set->done[i] = semaphore_create(b, m == 0);
                if (v == V_CLMEM) {
                    clmem_bridge_semaphore_mode mode =
                        m == 0 ? CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD : CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED;
                    check_clmem(lib_semaphore_import(b, set->ready[i], mode, &set->lib_ready[i]),
                                "clmem_bridge_semaphore_import (batch run)");
                    check_clmem(lib_semaphore_import(b, set->done[i], mode, &set->lib_done[i]),
                                "clmem_bridge_semaphore_import (batch run)");
                } else if (m == 0) {
                    set->cl_ready[i] = raw_semaphore_import(b, set->ready[i]);
                    set->cl_done[i] = raw_semaphore_import(b, set->done[i]);
                } else {
                    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
                    check_vk(vkCreateFence(b->vk.device, &fi, NULL, &set->fence[i]), "vkCreateFence");
                }
            }
            set->ok = true;
        }
    }
}

static void batch_semaphores_teardown(struct batch_ctx *c)
{
    struct bench *b = c->b;
    vkDeviceWaitIdle(b->vk.device);
    clFinish(b->queue);
    for (int m = 0; m < 2; m++)
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            struct bsems *set = &c->sems[v][m];
            for (int i = 0; set->ok && i < MAX_RING; i++) {
                if (v == V_CLMEM) { /* their anchors destroy the VkSemaphores */
                    clmem_bridge_semaphore_unref(set->lib_ready[i]);
                    clmem_bridge_semaphore_unref(set->lib_done[i]);
                    continue;
                }
                if (set->cl_ready[i])
                    b->ext.release_semaphore(set->cl_ready[i]);
                if (set->cl_done[i])
                    b->ext.release_semaphore(set->cl_done[i]);
                if (set->fence[i])
                    vkDestroyFence(b->vk.device, set->fence[i], NULL);
                vkDestroySemaphore(b->vk.device, set->ready[i], NULL);
                vkDestroySemaphore(b->vk.device, set->done[i], NULL);
            }
        }
}

void batch_setup(struct batch_ctx *c, struct bench *b, uint64_t frame_size, int nframes, int staged_cap,
                        struct batch_results *out)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->frame_size = frame_size;
    c->nframes = nframes;
    c->lib = calloc((size_t)nframes, sizeof *c->lib);
    c->lib_anchor = calloc((size_t)nframes, sizeof *c->lib_anchor);
    c->handles = calloc((size_t)nframes, sizeof *c->handles);
    c->raw_buf = calloc((size_t)nframes, sizeof *c->raw_buf);
    c->raw = calloc((size_t)nframes, sizeof *c->raw);
    c->staged = calloc((size_t)staged_cap, sizeof *c->staged);
    c->staged_cap = staged_cap;
    if (!c->lib || !c->lib_anchor || !c->handles || !c->raw_buf || !c->raw || !c->staged)
        die("out of memory");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        c->kernel[v] = calloc((size_t)nframes, sizeof *c->kernel[v]);
        c->uses[v] = calloc((size_t)nframes, sizeof *c->uses[v]);
        for (int q = 0; q < 2; q++)
            c->fill[v][q] = calloc((size_t)nframes, sizeof *c->fill[v][q]);
        if (!c->kernel[v] || !c->uses[v] || !c->fill[v][0] || !c->fill[v][1])
            die("out of memory");
    }
    for (int i = 0; i < nframes; i++) {
        cl_int err;
        cl_mem mem;
        /* clmem: memory owned by an anchor, imported through the bridge */
        c->lib[i] = calloc(1, sizeof *c->lib[i]);
        if (!c->lib[i])
            die("out of memory");
        shared_buf_create(b, &c->lib[i]->buf, frame_size);
        c->lib[i]->bridge = b->bridge;
        atomic_init(&c->lib[i]->freed, 0);
        c->lib_anchor[i] = clmem_keepalive_new(anchored_buf_release, c->lib[i]);
        if (!c->lib_anchor[i])
            die("clmem_keepalive_new failed");
        check_clmem(clmem_bridge_import_vk(b->bridge, &c->lib[i]->buf.mem, 0, frame_size, b->path, c->lib_anchor[i],
                                           b->queue, CL_MEM_READ_WRITE, &c->handles[i]),
                    "clmem_bridge_import_vk (batch frame)");
        /* raw: its own memory, imported with the raw calls */
        shared_buf_create(b, &c->raw_buf[i], frame_size);
        raw_import(b, &c->raw_buf[i].mem, &c->raw[i]);
        raw_watch(&c->raw[i]);
        for (int v = V_CLMEM; v <= V_RAW; v++) {
            VkBuffer buf = v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer;
            mem = v == V_CLMEM ? clmem_handle_mem(c->handles[i]) : c->raw[i].mem;
            c->kernel[v][i] = clCreateKernel(b->program, "bump", &err);
            check_cl(err, "clCreateKernel (batch frame)");
            check_cl(clSetKernelArg(c->kernel[v][i], 0, sizeof mem, &mem), "clSetKernelArg");
            check_vk(vkctx_fill(&b->vk, buf, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(batch frame)");
            c->fill[v][0][i] = record_fill_reusable(b, b->vk.pool, buf, FRAME_VALUE(i));
            if (b->vk.has_transfer_queue)
                c->fill[v][1][i] = record_fill_reusable(b, b->vk.transfer_pool, buf, FRAME_VALUE(i));
        }
    }
    staging_buf_create(b, &c->staging, frame_size);
    check_vk(vkMapMemory(b->vk.device, c->staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&c->staging_ptr),
             "vkMapMemory(batch staging)");
    {
        cl_int err;
        c->plain = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)frame_size, NULL, &err);
        check_cl(err, "clCreateBuffer(batch plain)");
    }
    c->copy_cb = record_copy(b, c->lib[0]->buf.buffer, c->staging.buffer, frame_size);
    batch_semaphores(c, out);
}

void batch_teardown(struct batch_ctx *c)
{
    struct bench *b = c->b;
    double deadline;

    batch_semaphores_teardown(c);
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        for (int i = 0; i < c->nframes; i++) {
            clReleaseKernel(c->kernel[v][i]);
            vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &c->fill[v][0][i]);
            if (c->fill[v][1][i])
                vkFreeCommandBuffers(b->vk.device, b->vk.transfer_pool, 1, &c->fill[v][1][i]);
        }
        free(c->kernel[v]);
        free(c->uses[v]);
        free(c->fill[v][0]);
        free(c->fill[v][1]);
    }
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &c->copy_cb);
    clReleaseMemObject(c->plain);
    vkUnmapMemory(b->vk.device, c->staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, c->staging.buffer, &c->staging.mem);
    for (int i = 0; i < c->nframes; i++) {
        clmem_handle_unref(c->handles[i]);
        raw_teardown(b, &c->raw[i]);
        clmem_bridge_vk_buffer_destroy(b->bridge, c->raw_buf[i].buffer, &c->raw_buf[i].mem);
    }
    /* As size_teardown: the cached bridge still holds the size run's
     * semaphores, so the frames' teardowns complete through the driver's
     * callbacks; then the anchors free the memory. */
    check_cl(clFinish(b->queue), "clFinish(before the batch teardowns)");
    for (int i = 0; i < c->nframes; i++)
        clmem_keepalive_unref(c->lib_anchor[i]);
    deadline = teardown_deadline();
    for (int i = 0; i < c->nframes; i++) {
        if (!anchored_buf_free(c->lib[i], deadline))
            fail(b, "batch frame %d's anchor was not released %d s after its import went", i, DESTROY_WAIT_S);
    }
    free(c->lib);
    free(c->lib_anchor);
    free(c->handles);
    free(c->raw_buf);
    free(c->raw);
    free(c->staged);
}
