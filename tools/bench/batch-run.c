/* SPDX-License-Identifier: MIT */
/* clmem-bench: the batch run measured: the clmem variant through the ring,
 * the raw variant through the same driver calls, block by block. */
#include "bench.h"

/* One staged copy of a frame, as the staged-copy measure makes it. */
static void batch_staged_rep(struct batch_ctx *c, bool keep)
{
    struct bench *b = c->b;
    double t0 = now_us();
    submit_and_wait(b, c->copy_cb, "vkQueueSubmit(batch staging copy)");
    check_cl(clEnqueueWriteBuffer(b->queue, c->plain, CL_TRUE, 0, (size_t)c->frame_size, c->staging_ptr, 0, NULL,
                                  NULL),
             "clEnqueueWriteBuffer(batch staged)");
    if (keep && c->nstaged < c->staged_cap)
        c->staged[c->nstaged++] = now_us() - t0;
}

static void submit_batch(struct batch_ctx *c, enum variant v, uint32_t first, int count, VkSemaphore wait,
                         VkSemaphore signal)
{
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = wait != VK_NULL_HANDLE,
                       .pWaitSemaphores = &wait,
                       .pWaitDstStageMask = &stage,
                       .commandBufferCount = (uint32_t)count,
                       .pCommandBuffers = &c->fill[v][c->handoff == H_TRANSFER][first],
                       .signalSemaphoreCount = signal != VK_NULL_HANDLE,
                       .pSignalSemaphores = &signal};
    check_vk(vkQueueSubmit(handoff_queue(c), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(batch)");
}

static void run_kernels(struct batch_ctx *c, enum variant v, uint32_t first, uint32_t count)
{
    size_t one = 1;
    for (uint32_t i = 0; i < count; i++) {
        check_cl(clEnqueueNDRangeKernel(c->b->queue, c->kernel[v][first + i], 1, NULL, &one, NULL, 0, NULL, NULL),
                 "clEnqueueNDRangeKernel(batch)");
        c->uses[v][first + i]++;
    }
}

/* The clmem variant: everything through the ring. */
static void lib_produce(struct batch_ctx *c)
{
    clmem_bridge_ring_frame fr[MAX_BATCH];
    for (int p = 0; p < c->k; p++)
        check_clmem(clmem_bridge_ring_vk_next(c->ring, 0, BATCH_TIMEOUT_NS, &fr[p]), "clmem_bridge_ring_vk_next");
    submit_batch(c, V_CLMEM, fr[0].index, c->k, fr[0].wait_semaphore, fr[c->k - 1].signal_semaphore);
    check_clmem(clmem_bridge_ring_vk_submitted(c->ring, &fr[c->k - 1]), "clmem_bridge_ring_vk_submitted");
}

static void lib_consume(struct batch_ctx *c)
{
    clmem_bridge_ring_batch bt;
    check_clmem(clmem_bridge_ring_cl_next(c->ring, BATCH_TIMEOUT_NS, 0, NULL, &bt, NULL), "clmem_bridge_ring_cl_next");
    run_kernels(c, V_CLMEM, bt.first_index, bt.count);
    check_clmem(clmem_bridge_ring_cl_done(c->ring, &bt, 0, NULL, NULL), "clmem_bridge_ring_cl_done");
}

/* The raw variant: the same driver calls, the ring's order kept by hand. */
static void raw_produce(struct batch_ctx *c)
{
    struct bench *b = c->b;
    bool host = c->handoff == H_HOST;
    struct bsems *set = &c->sems[V_RAW][handoff_mode(c->handoff)];
    uint32_t s = (uint32_t)(c->raw_produced % (uint64_t)c->d);
    struct braw_slot *slot = &c->raw_slot[s];
    VkSemaphore wait = VK_NULL_HANDLE;

    if (slot->released) { /* host ordering: OpenCL's release of the slot, on the host */
        check_cl(clWaitForEvents(1, &slot->released), "clWaitForEvents(raw release)");
        clReleaseEvent(slot->released);
        slot->released = NULL;
    }
    if (slot->done_pending)
        wait = set->done[s];
    slot->done_pending = false;
    submit_batch(c, V_RAW, s * (uint32_t)c->k, c->k, wait, set->ready[s]);
    if (host) {
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &set->ready[s],
                           .pWaitDstStageMask = &stage};
        check_vk(vkQueueSubmit(b->vk.queue, 1, &si, set->fence[s]), "vkQueueSubmit(raw host-ordered wait)");
        slot->fence_in_flight = true;
    }
    c->raw_produced++;
}

static void raw_consume(struct batch_ctx *c)
{
    struct bench *b = c->b;
    bool host = c->handoff == H_HOST, fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    struct bsems *set = &c->sems[V_RAW][handoff_mode(c->handoff)];
    uint32_t s = (uint32_t)(c->raw_consumed % (uint64_t)c->d), first = s * (uint32_t)c->k;
    struct braw_slot *slot = &c->raw_slot[s];
    cl_mem mems[MAX_BATCH];
    cl_event ev = NULL;

    if (host) {
        check_vk(vkWaitForFences(b->vk.device, 1, &set->fence[s], VK_TRUE, BATCH_TIMEOUT_NS), "vkWaitForFences");
        check_vk(vkResetFences(b->vk.device, 1, &set->fence[s]), "vkResetFences");
        slot->fence_in_flight = false;
    } else {
        check_cl(b->ext.wait_semaphores(b->queue, 1, &set->cl_ready[s], NULL, 0, NULL, NULL),
                 "clEnqueueWaitSemaphoresKHR(raw)");
    }
    for (int i = 0; i < c->k; i++)
        mems[i] = c->raw[first + i].mem;
    if (fd) {
        check_cl(b->ext.acquire_external(b->queue, (cl_uint)c->k, mems, 0, NULL, NULL), "raw acquire (batch)");
    } else {
        for (int i = 0; i < c->k; i++) {
            check_cl(clEnqueueUnmapMemObject(b->queue, mems[i], c->raw[first + i].cl_map, 0, NULL, NULL),
                     "raw unmap (batch)");
            c->raw[first + i].cl_map = NULL;
        }
    }
    run_kernels(c, V_RAW, first, (uint32_t)c->k);
    if (fd) {
        check_cl(b->ext.release_external(b->queue, (cl_uint)c->k, mems, 0, NULL, host ? &ev : NULL),
                 "raw release (batch)");
    } else {
        for (int i = 0; i < c->k; i++) {
            cl_int err = CL_SUCCESS;
            bool last = i + 1 == c->k;
            c->raw[first + i].cl_map =
                clEnqueueMapBuffer(b->queue, mems[i], CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, c->raw[first + i].size,
                                   0, NULL, host && last ? &ev : NULL, &err);
            check_cl(err, "raw map (batch)");
        }
    }
    if (host) {
        check_cl(clFlush(b->queue), "clFlush");
        slot->released = ev; /* The in-order queue: the last command's event covers the batch */
    } else {
        check_cl(b->ext.signal_semaphores(b->queue, 1, &set->cl_done[s], NULL, 0, NULL, NULL),
                 "clEnqueueSignalSemaphoresKHR(raw)");
        check_cl(clFlush(b->queue), "clFlush");
        slot->done_pending = true;
    }
    c->raw_consumed++;
}

/* One block of `frames` frames; returns microseconds per frame. Up to D
 * batches in flight; at the end both queues are drained (a host wait, as
 * the semaphore handoff ends its blocks). */
static double batch_block(struct batch_ctx *c, enum variant v, int frames)
{
    int nb = frames / c->k, produced = 0, consumed = 0;
    double t0 = now_us();
    while (consumed < nb) {
        while (produced < nb && produced - consumed < c->d) {
            (v == V_CLMEM ? lib_produce : raw_produce)(c);
            produced++;
        }
        (v == V_CLMEM ? lib_consume : raw_consume)(c);
        consumed++;
    }
    check_vk(vkQueueWaitIdle(handoff_queue(c)), "vkQueueWaitIdle(batch block)");
    check_cl(clFinish(c->b->queue), "clFinish(batch block)");
    return (now_us() - t0) / frames;
}

static void batch_config_begin(struct batch_ctx *c, int k, int d, enum handoff h)
{
    struct bench *b = c->b;
    struct bsems *lib = &c->sems[V_CLMEM][handoff_mode(h)];
    clmem_bridge_ring_info info = {.size = sizeof info,
                                   .frame_count = (uint32_t)(k * d),
                                   .batch_size = (uint32_t)k,
                                   .frames = c->handles,
                                   .ready = lib->lib_ready,
                                   .done = lib->lib_done,
                                   .queue = b->queue};
    c->k = k;
    c->d = d;
    c->handoff = h;
    memset(c->raw_slot, 0, sizeof c->raw_slot);
    c->raw_produced = c->raw_consumed = 0;
    for (int v = V_CLMEM; v <= V_RAW; v++)
        for (int i = 0; i < k * d; i++) {
            c->uses[v][i] = 0;
            check_vk(vkctx_fill(&b->vk, v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer, 4, 4, 0),
                     "vkctx_fill(word 1)");
        }
    check_clmem(clmem_bridge_ring_create(b->bridge, &info, &c->ring), "clmem_bridge_ring_create");
}

/* The end of a configuration: the ring drained and its last waits
 * submitted, the raw variant likewise; then every frame's words checked. */
static void batch_config_end(struct batch_ctx *c)
{
    struct bench *b = c->b;
    struct bsems *raw = &c->sems[V_RAW][handoff_mode(c->handoff)];
    VkSemaphore waits[2 * MAX_RING];
    VkPipelineStageFlags stages[2 * MAX_RING];
    uint32_t n = 0, got = 0;
    char sz[32];

    check_clmem(clmem_bridge_ring_vk_drain(c->ring, BATCH_TIMEOUT_NS, MAX_RING, waits, &got),
                "clmem_bridge_ring_vk_drain");
    n = got;
    for (int s = 0; s < c->d; s++) {
        if (c->raw_slot[s].done_pending)
            waits[n++] = raw->done[s];
        if (c->raw_slot[s].released) {
            clWaitForEvents(1, &c->raw_slot[s].released);
            clReleaseEvent(c->raw_slot[s].released);
        }
    }
    memset(c->raw_slot, 0, sizeof c->raw_slot);
    for (uint32_t i = 0; i < n; i++)
        stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    if (n) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .waitSemaphoreCount = n,
                           .pWaitSemaphores = waits,
                           .pWaitDstStageMask = stages};
        check_vk(vkQueueSubmit(handoff_queue(c), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit(the last waits)");
    }
    check_vk(vkQueueWaitIdle(handoff_queue(c)), "vkQueueWaitIdle");
    check_cl(clFinish(b->queue), "clFinish");
    clmem_bridge_ring_unref(c->ring);
    c->ring = NULL;
    for (int v = V_CLMEM; v <= V_RAW; v++)
        for (int i = 0; i < c->k * c->d; i++) {
            uint32_t got_words[2], want0 = FRAME_VALUE(i) + 1u, want1 = c->uses[v][i] * FRAME_VALUE(i);
            check_vk(vkctx_copy(&b->vk, v == V_CLMEM ? c->lib[i]->buf.buffer : c->raw_buf[i].buffer,
                                c->staging.buffer, 8),
                     "vkctx_copy(batch read back)");
            got_words[0] = c->staging_ptr[0];
            got_words[1] = c->staging_ptr[1];
            if (got_words[0] != want0 || got_words[1] != want1) {
                fail(b, "%s %s, batch %d, ring %d, frame %d of %s: Vulkan sees word 0 = 0x%08x (want 0x%08x), "
                        "word 1 = 0x%08x (want 0x%08x: %u kernels each saw Vulkan's 0x%08x)",
                     handoff_label[c->handoff], variant_name[v], c->k, c->d, i, size_text(c->frame_size, sz, sizeof sz),
                     got_words[0], want0, got_words[1], want1, c->uses[v][i], FRAME_VALUE(i));
                break;
            }
        }
}

/* Why `frames` frames of frame_size (each variant's), a staging buffer and
 * a plain cl buffer cannot run here, or NULL. */
static const char *batch_unfit(const struct bench *b, uint64_t frame_size, int frames, char *why, size_t len)
{
    uint64_t total = frame_size * (uint64_t)(frames + 2);
    bool host_path = b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED || b->cpu_device;
    if (frame_size > b->cl_max_alloc || (b->vk_max_alloc && frame_size > b->vk_max_alloc))
        snprintf(why, len, "a frame is above the largest allocation of OpenCL or Vulkan");
    else if (total > b->cl_global_mem / 10 * 9)
        snprintf(why, len, "%llu MiB in all is more than 90%% of the OpenCL device's %llu MiB",
                 (unsigned long long)(total / MIB), (unsigned long long)(b->cl_global_mem / MIB));
    else if (host_path && b->host_mem && total > b->host_mem / 4 * 3)
        snprintf(why, len, "%llu MiB of host memory is more than 75%% of %llu MiB", (unsigned long long)(total / MIB),
                 (unsigned long long)(b->host_mem / MIB));
    else
        return NULL;
    return why;
}

static int frames_per_block(int n, bool quick)
{
    int rounds = quick ? 2 : (64 + n - 1) / n;
    if (!quick && rounds < 4)
        rounds = 4;
    return n * rounds;
}

/* The rows: the staged copy of a frame, then per handoff, configuration
 * and variant the time per frame (size_bytes: the frame size; reps: the
 * blocks; batch and ring: the configuration's). */
static void record_batches(const struct batch_results *r)
{
    record_row("batches", r->frame_size, "batch_staged_copy", "baseline", &r->staged, 1, 0);
    for (int h = 0; h < H_COUNT; h++)
        for (int i = 0; i < r->npoints; i++)
            for (int v = V_CLMEM; v <= V_RAW; v++)
                record_row("batches", r->frame_size, handoff_measure[h], variant_name[v], &r->points[i].s[h][v],
                           r->points[i].batch, r->points[i].ring);
}

void run_batches(struct bench *b, const struct options *o, struct batch_results *out)
{
    struct batch_ctx c;
    int maxk = 1, maxd = 1, npoints = o->nbatches * o->nrings, configs = 0;
    uint64_t frame_size = o->batch_frame_size ? o->batch_frame_size
                          : o->quick           ? 4 * KIB
                          : b->cpu_device      ? 1 * MIB
                                               : 256 * MIB;
    char sz[32], why[256];
    double t_start = now_us();

    memset(out, 0, sizeof *out);
    for (int i = 0; i < o->nbatches; i++)
        maxk = o->batches[i] > maxk ? o->batches[i] : maxk;
    for (int i = 0; i < o->nrings; i++)
        maxd = o->rings[i] > maxd ? o->rings[i] : maxd;
    out->frame_size = frame_size;
    if (batch_unfit(b, frame_size, 2 * maxk * maxd, why, sizeof why)) {
        printf("\nbatches: skipped, %d frames of %s (%s)\n", 2 * maxk * maxd, size_text(frame_size, sz, sizeof sz),
               why);
        record_skip("batches", "batch run", "%d frames of %s: %s", 2 * maxk * maxd, sz, why);
        return;
    }
    out->points = calloc((size_t)npoints, sizeof *out->points);
    if (!out->points)
        die("out of memory");
    batch_setup(&c, b, frame_size, maxk * maxd, npoints * H_COUNT + 2, out);
    printf("\nbatches: frames of %s, %d of them per variant; batch sizes", size_text(frame_size, sz, sizeof sz),
           maxk * maxd);
    for (int i = 0; i < o->nbatches; i++)
        printf(" %d", o->batches[i]);
    printf("; ring sizes");
    for (int i = 0; i < o->nrings; i++)
        printf(" %d", o->rings[i]);
    printf("; %d blocks per variant\n", o->blocks);
    for (int h = 0; h < H_COUNT; h++)
        if (out->why_not[h][0]) {
            printf("  %s: left out, %s\n", handoff_label[h], out->why_not[h]);
            record_skip("batches", handoff_label[h], "%s", out->why_not[h]);
        }
    fflush(stdout);

    batch_staged_rep(&c, false); /* warm-up */
    for (int bi = 0; bi < o->nbatches; bi++)
        for (int ri = 0; ri < o->nrings; ri++) {
            struct batch_point *pt = &out->points[out->npoints++];
            int k = o->batches[bi], d = o->rings[ri], n = k * d, frames = frames_per_block(n, o->quick);
            pt->batch = k;
            pt->ring = d;
            for (int h = 0; h < H_COUNT; h++) {
                double *lib = calloc((size_t)o->blocks, sizeof *lib), *raw = calloc((size_t)o->blocks, sizeof *raw);
                char what[96];
                if (!lib || !raw)
                    die("out of memory");
                if (out->why_not[h][0]) {
                    free(lib);
                    free(raw);
                    continue;
                }
                snprintf(what, sizeof what, "batches (%s, batch %d, ring %d)", handoff_label[h], k, d);
                watchdog(what, size_text(frame_size, sz, sizeof sz));
                batch_staged_rep(&c, true);
                batch_config_begin(&c, k, d, (enum handoff)h);
                batch_block(&c, V_CLMEM, n); /* warm-up: every frame once */
                batch_block(&c, V_RAW, n);
                for (int blk = 0; blk < o->blocks; blk++)
                    for (int turn = 0; turn < 2; turn++) {
                        enum variant v = (blk % 2 == 0) == (turn == 0) ? V_CLMEM : V_RAW;
                        (v == V_CLMEM ? lib : raw)[blk] = batch_block(&c, v, frames);
                    }
                batch_config_end(&c);
                alarm(0);
                pt->s[h][V_CLMEM] = summarize(lib, o->blocks, frames);
                pt->s[h][V_RAW] = summarize(raw, o->blocks, frames);
                printf("  %-15s ring %d batch %2d: clmem %9.2f us/frame [%.2f .. %.2f], raw %9.2f us/frame, "
                       "%d blocks of %d frames\n",
                       handoff_label[h], d, k, pt->s[h][V_CLMEM].median, pt->s[h][V_CLMEM].min,
                       pt->s[h][V_CLMEM].max, pt->s[h][V_RAW].median, o->blocks, frames);
                fflush(stdout);
                configs++;
                free(lib);
                free(raw);
            }
        }
    out->staged = summarize(c.staged, c.nstaged, 1);
    batch_teardown(&c);
    out->ran = true;
    printf("  (batches done in %.1f s: %d configurations, staged copy of a frame %.2f us, median of %d)\n",
           (now_us() - t_start) / 1e6, configs, out->staged.median, out->staged.reps);
    fflush(stdout);
    record_batches(out);
}
