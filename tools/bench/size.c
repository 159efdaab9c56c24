/* SPDX-License-Identifier: MIT */
/* clmem-bench: one size's buffers, imports and command buffers, made before
 * its measures and torn down after them, and the check of the frames. */
#include "bench.h"

void enqueue_kernel(struct bench *b, enum variant v)
{
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(b->queue, b->kernel[v], 1, NULL, &one, NULL, 0, NULL, NULL),
             "clEnqueueNDRangeKernel");
}

static VkBuffer variant_buffer(struct size_run *s, enum variant v)
{
    return v == V_CLMEM ? s->lib->buf.buffer : s->raw_buf.buffer;
}

/* Vulkan's view of words 0 and 1, through the staging buffer. */
static void vulkan_words(struct bench *b, struct size_run *s, VkBuffer buffer, uint32_t out[2])
{
    check_vk(vkctx_copy(&b->vk, buffer, s->staging.buffer, 8), "vkctx_copy(read back)");
    out[0] = s->staging_ptr[0];
    out[1] = s->staging_ptr[1];
}

void check_frames(struct bench *b, struct size_run *s, enum variant v, int frames, const char *what)
{
    uint32_t got[2], want0 = FRAME_VALUE(frames - 1) + 1u, want1 = 0;
    char sz[32];
    for (int f = 0; f < frames; f++)
        want1 += FRAME_VALUE(f);
    vulkan_words(b, s, variant_buffer(s, v), got);
    if (got[0] != want0 || got[1] != want1)
        fail(b, "%s %s at %s: Vulkan sees word 0 = 0x%08x (want 0x%08x), word 1 = 0x%08x (want 0x%08x, the sum "
                "of %d frames' values)",
             what, variant_name[v], size_text(s->size, sz, sizeof sz), got[0], want0, got[1], want1, frames);
}

/* Word 1 starts each host-wait handoff run and semaphore handoff block at 0. Vulkan owns the memory
 * between frames, so it may write it. */
void reset_sum(struct bench *b, struct size_run *s, enum variant v)
{
    check_vk(vkctx_fill(&b->vk, variant_buffer(s, v), 4, 4, 0), "vkctx_fill(word 1)");
}

void size_setup(struct bench *b, struct size_run *s)
{
    cl_int err;
    s->lib = calloc(1, sizeof *s->lib);
    if (!s->lib)
        die("out of memory");
    shared_buf_create(b, &s->lib->buf, s->size);
    s->lib->bridge = b->bridge;
    atomic_init(&s->lib->freed, 0);
    s->lib_anchor = clmem_keepalive_new(anchored_buf_release, s->lib);
    if (!s->lib_anchor)
        die("clmem_keepalive_new failed");
    shared_buf_create(b, &s->raw_buf, s->size);
    s->staging_cached = staging_buf_create(b, &s->staging, s->size);
    check_vk(vkMapMemory(b->vk.device, s->staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&s->staging_ptr),
             "vkMapMemory(staging)");
    s->plain = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)s->size, NULL, &err);
    check_cl(err, "clCreateBuffer(plain)");
    check_vk(vkctx_fill(&b->vk, s->lib->buf.buffer, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(pattern)");
    check_vk(vkctx_fill(&b->vk, s->raw_buf.buffer, 0, VK_WHOLE_SIZE, PATTERN), "vkctx_fill(pattern)");
    s->copy_cb = record_copy(b, s->lib->buf.buffer, s->staging.buffer, s->size);
    s->nfill = s->warmup_frames + s->frames;
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        s->fill_cb[v] = calloc((size_t)s->nfill, sizeof *s->fill_cb[v]);
        if (!s->fill_cb[v])
            die("out of memory");
        for (int f = 0; f < s->nfill; f++)
            s->fill_cb[v][f] = record_fill_word0(b, variant_buffer(s, (enum variant)v), FRAME_VALUE(f));
    }
    size_t n = (size_t)(s->nfill + (s->reps > s->import_reps ? s->reps : s->import_reps) + s->blocks + 8);
    s->samples = calloc(n, sizeof *s->samples);
    s->samples2 = calloc(n, sizeof *s->samples2);
    s->samples3 = calloc(n, sizeof *s->samples3);
    if (!s->samples || !s->samples2 || !s->samples3)
        die("out of memory");
}

void size_teardown(struct bench *b, struct size_run *s)
{
    clmem_status st;
    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    for (int v = V_CLMEM; v <= V_RAW; v++) {
        vkFreeCommandBuffers(b->vk.device, b->vk.pool, (uint32_t)s->nfill, s->fill_cb[v]);
        free(s->fill_cb[v]);
    }
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &s->copy_cb);
    clReleaseMemObject(s->plain);
    vkUnmapMemory(b->vk.device, s->staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, s->staging.buffer, &s->staging.mem);
    clmem_bridge_vk_buffer_destroy(b->bridge, s->raw_buf.buffer, &s->raw_buf.mem);
    /* Every handle is gone. A bridge drops its keepalive reference after
     * an import's last handle, once the device work is done: a driver
     * callback, or clmem_bridge_finish doing it itself. The uncached
     * bridge's imports were each finished already; this must hold. */
    st = clmem_bridge_finish(b->bridge_uncached, FINISH_TIMEOUT_NS);
    if (st != CLMEM_OK)
        fail(b, "clmem_bridge_finish (uncached bridge) returned %s: %s", clmem_status_name(st),
             clmem_error_message());
    /* The cached bridge still holds the semaphores, so it cannot be
     * finished here: its teardowns complete through the driver's callbacks
     * once the markers the last unref enqueued ran (clFinish). Then the
     * bench's reference is the last and dropping it frees the memory. */
    check_cl(clFinish(b->queue), "clFinish(before the teardowns)");
    clmem_keepalive_unref(s->lib_anchor);
    if (!anchored_buf_free(s->lib, teardown_deadline()))
        fail(b, "the clmem buffer's anchor was not released %d s after its last import went", DESTROY_WAIT_S);
    free(s->samples);
    free(s->samples2);
    free(s->samples3);
}
