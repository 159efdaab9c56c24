/* SPDX-License-Identifier: MIT */
#include "ring-fixture.h"
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_BYTES ((VkDeviceSize)RING_FRAME_WORDS * 4)

/* What Vulkan writes into word j of sequence q, and what OpenCL writes
 * back; the kernel below computes the same in OpenCL C. */
static uint32_t vk_value(uint64_t q, uint32_t j)
{
    return ((uint32_t)q * 0x9E3779B1u) ^ (j * 0x85EBCA77u) ^ 0xA5A5A5A5u;
}

static uint32_t cl_value(uint64_t q, uint32_t j)
{
    return vk_value(q, j) * 3u + 1u + j;
}

static const char kernel_source[] =
    "uint vk_value(uint q, uint j) { return (q * 0x9E3779B1u) ^ (j * 0x85EBCA77u) ^ 0xA5A5A5A5u; }\n"
    "__kernel void frame_step(__global uint *frame, __global uint *results, uint q, uint words) {\n"
    "    uint bad = 0, first = 0xffffffffu;\n"
    "    for (uint j = 0; j < words; j++) {\n"
    "        uint want = vk_value(q, j);\n"
    "        if (frame[j] != want) { if (bad == 0) first = j; bad++; }\n"
    "        frame[j] = want * 3u + 1u + j;\n"
    "    }\n"
    "    results[2 * q] = bad;\n"
    "    results[2 * q + 1] = first;\n"
    "}\n";

void ring_fail(struct ring_run *r, atomic_int *counter, const char *fmt, ...)
{
    va_list ap;
    atomic_fetch_add(counter, 1);
    if (atomic_flag_test_and_set(&r->error_set))
        return;
    va_start(ap, fmt);
    vsnprintf(r->first_error, sizeof r->first_error, fmt, ap);
    va_end(ap);
}

static void semaphore_destroy(void *user)
{
    struct ring_run *r = ((void **)user)[0];
    VkSemaphore s = (VkSemaphore)((void **)user)[1];
    vkDestroySemaphore(r->vk->device, s, NULL);
    free(user);
}

static clmem_bridge_semaphore *semaphore_new(struct ring_run *r, VkSemaphore *vk_out)
{
    VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                      .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                .pNext = r->mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? &ex : NULL};
    void **pair = malloc(2 * sizeof *pair);
    clmem_bridge_semaphore *sem = NULL;
    clmem_keepalive *ka;
    clmem_status s;

    if (!pair || vkCreateSemaphore(r->vk->device, &ci, NULL, vk_out) != VK_SUCCESS)
        tap_bail("vkCreateSemaphore failed");
    pair[0] = r;
    pair[1] = (void *)*vk_out;
    ka = clmem_keepalive_new(semaphore_destroy, pair);
    s = clmem_bridge_semaphore_import(r->b, r->vk->queue, *vk_out, r->mode, ka, &sem);
    clmem_keepalive_unref(ka);
    if (s != CLMEM_OK)
        tap_bail("%s: clmem_bridge_semaphore_import failed: %s", r->label, clmem_error_message());
    return sem;
}

void ring_run_open(struct ring_run *r, struct vkctx *vk, struct cl_fixture *f, clmem_bridge *b,
                   clmem_bridge_path path, clmem_bridge_semaphore_mode mode, uint32_t n, uint32_t k, uint64_t total,
                   const char *label)
{
    clmem_bridge_ring_info info = {.size = sizeof info};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = vk->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, .flags = VK_FENCE_CREATE_SIGNALED_BIT};
    cl_uint all_ones = 0xFFFFFFFFu;
    clmem_status s;

    if (k > 64)
        tap_bail("ring_run_open: batches of at most 64 frames");
    memset(r, 0, sizeof *r);
    atomic_flag_clear(&r->error_set);
    r->vk = vk;
    r->f = f;
    r->b = b;
    r->path = path;
    r->mode = mode;
    r->n = n;
    r->k = k;
    r->depth = n / k;
    r->total = total;
    r->label = label;
    r->mem = calloc(n, sizeof *r->mem);
    r->mem_ka = calloc(n, sizeof *r->mem_ka);
    r->frames = calloc(n, sizeof *r->frames);
    r->last_seq = calloc(n, sizeof *r->last_seq);
    r->vk_sems = calloc(2 * r->depth, sizeof *r->vk_sems);
    r->sems = calloc(2 * r->depth, sizeof *r->sems);
    r->cbs = calloc(r->depth, sizeof *r->cbs);
    r->fences = calloc(r->depth, sizeof *r->fences);
    if (!r->mem || !r->mem_ka || !r->frames || !r->last_seq || !r->vk_sems || !r->sems || !r->cbs || !r->fences)
        tap_bail("out of memory");

    for (uint32_t i = 0; i < n; i++) {
        r->mem_ka[i] = vk_owned_new(&r->mem[i], b, vk, FRAME_BYTES, path_memory_props(path),
                                    path_export_types(vk, path));
        s = clmem_bridge_import_vk(b, &r->mem[i].memory, 0, FRAME_BYTES, path, r->mem_ka[i], f->queue,
                                   CL_MEM_READ_WRITE, &r->frames[i]);
        if (s != CLMEM_OK)
            tap_bail("%s: importing frame %u (%s) failed: %s", label, i, clmem_bridge_path_name(path),
                     clmem_error_message());
        r->last_seq[i] = UINT64_MAX;
    }
    for (uint32_t i = 0; i < 2 * r->depth; i++)
        r->sems[i] = semaphore_new(r, &r->vk_sems[i]);

    r->log_ka = vk_owned_new(&r->log, b, vk, FRAME_BYTES * total,
                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    if (vkctx_fill(vk, r->log.buffer, 0, VK_WHOLE_SIZE, 0xDEADBEEFu) != VK_SUCCESS)
        tap_bail("filling the log failed");
    r->results = cl_fixture_buffer(f, 8 * (size_t)total);
    if (clEnqueueFillBuffer(f->queue, r->results, &all_ones, sizeof all_ones, 0, 8 * (size_t)total, 0, NULL, NULL) !=
            CL_SUCCESS ||
        clFinish(f->queue) != CL_SUCCESS)
        tap_bail("filling the results failed");
    r->kernel = cl_fixture_kernel(f, kernel_source, "frame_step");
    ai.commandBufferCount = r->depth;
    if (vkAllocateCommandBuffers(vk->device, &ai, r->cbs) != VK_SUCCESS)
        tap_bail("vkAllocateCommandBuffers failed");
    for (uint32_t i = 0; i < r->depth; i++)
        if (vkCreateFence(vk->device, &fi, NULL, &r->fences[i]) != VK_SUCCESS)
            tap_bail("vkCreateFence failed");

    info.frame_count = n;
    info.batch_size = k;
    info.frames = r->frames;
    info.ready = r->sems;
    info.done = r->sems + r->depth;
    info.queue = f->queue;
    s = clmem_bridge_ring_create(b, &info, &r->ring);
    if (!tap_ok(s == CLMEM_OK, "%s: a ring of %u frames in %u slot%s of %u (%s frames, %s semaphores) (%s)", label,
                n, r->depth, r->depth == 1 ? "" : "s", k, clmem_bridge_path_name(path),
                mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? "opaque-fd" : "host-ordered",
                s ? clmem_error_message() : "ok"))
        tap_bail("cannot run the ring");
}

/* Frame `index`'s memory is OpenCL's when this runs: external memory comes
 * back with a queue-family acquire (host-mapped memory needs none). */
static void record_log_copy(struct ring_run *r, VkCommandBuffer cb, uint32_t index)
{
    bool ext = r->mem[index].memory.export_types != 0;
    uint32_t from = ext ? VK_QUEUE_FAMILY_EXTERNAL : VK_QUEUE_FAMILY_IGNORED;
    uint32_t own = ext ? r->vk->queue_family : VK_QUEUE_FAMILY_IGNORED;
    VkBuffer buf = r->mem[index].buffer;

    vk_buffer_barrier(cb, buf, from, own, VK_ACCESS_MEMORY_WRITE_BIT,
                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    if (r->last_seq[index] != UINT64_MAX) {
        VkBufferCopy region = {0, FRAME_BYTES * r->last_seq[index], FRAME_BYTES};
        vkCmdCopyBuffer(cb, buf, r->log.buffer, 1, &region);
        vk_buffer_barrier(cb, buf, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, VK_ACCESS_TRANSFER_READ_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT);
    }
}

static void record_host_barrier(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

bool ring_produce_batch(struct ring_run *r)
{
    clmem_bridge_ring_frame fr[64], *last = NULL;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pWaitDstStageMask = &stage};
    uint32_t data[RING_FRAME_WORDS], count = 0, slot = 0;
    VkCommandBuffer cb;
    clmem_status s;

    if (r->produced == r->total)
        return false;
    for (uint32_t p = 0; p < r->k && r->produced + p < r->total; p++) {
        uint64_t q = r->produced + p;
        uint32_t flags = q + 1 == r->total ? CLMEM_BRIDGE_RING_END_BATCH : 0;
        clmem_bridge_ring_frame *f = &fr[p];
        uint64_t batch = q / r->k; /* every batch but the run's last is full */
        bool first_round = batch < r->depth, device = r->mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD;

        s = clmem_bridge_ring_vk_next(r->ring, flags, RING_TIMEOUT_NS, f);
        if (s != CLMEM_OK) {
            ring_fail(r, &r->bad_calls, "vk_next of frame %llu: %s", (unsigned long long)q, clmem_error_message());
            return false;
        }
        if (f->sequence != q || f->batch != batch || f->position != p ||
            f->index != (uint32_t)(batch % r->depth) * r->k + p || f->handle != r->frames[f->index])
            ring_fail(r, &r->bad_order,
                      "vk_next gave sequence %llu batch %llu position %u index %u; want %llu, %llu, %u, %u",
                      (unsigned long long)f->sequence, (unsigned long long)f->batch, f->position, f->index,
                      (unsigned long long)q, (unsigned long long)batch, p,
                      (uint32_t)(batch % r->depth) * r->k + p);
        if ((f->wait_semaphore != VK_NULL_HANDLE) != (device && p == 0 && !first_round) ||
            (f->wait_semaphore && f->wait_semaphore != r->vk_sems[r->depth + batch % r->depth]))
            ring_fail(r, &r->bad_order, "frame %llu: wait semaphore %p, want %s", (unsigned long long)q,
                      (void *)f->wait_semaphore,
                      device && p == 0 && !first_round ? "done[slot]" : "none");
        if ((f->signal_semaphore != VK_NULL_HANDLE) != (p + 1 == r->k || flags) ||
            (f->signal_semaphore && f->signal_semaphore != r->vk_sems[batch % r->depth]))
            ring_fail(r, &r->bad_order, "frame %llu: signal semaphore %p, want %s", (unsigned long long)q,
                      (void *)f->signal_semaphore, p + 1 == r->k || flags ? "ready[slot]" : "none");
        count++;
        slot = (uint32_t)(batch % r->depth);
    }
    last = &fr[count - 1];

    /* The slot's command buffer, once its previous submission completed. */
    cb = r->cbs[slot];
    if (vkWaitForFences(r->vk->device, 1, &r->fences[slot], VK_TRUE, RING_TIMEOUT_NS) != VK_SUCCESS ||
        vkResetFences(r->vk->device, 1, &r->fences[slot]) != VK_SUCCESS ||
        vkResetCommandBuffer(cb, 0) != VK_SUCCESS || vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS) {
        ring_fail(r, &r->bad_calls, "preparing the command buffer of slot %u failed", slot);
        return false;
    }
    for (uint32_t p = 0; p < count; p++) {
        uint32_t index = fr[p].index;
        bool ext = r->mem[index].memory.export_types != 0;
        record_log_copy(r, cb, index);
        for (uint32_t j = 0; j < RING_FRAME_WORDS; j++)
            data[j] = vk_value(fr[p].sequence, j);
        vkCmdUpdateBuffer(cb, r->mem[index].buffer, 0, FRAME_BYTES, data);
        vk_buffer_barrier(cb, r->mem[index].buffer, ext ? r->vk->queue_family : VK_QUEUE_FAMILY_IGNORED,
                          ext ? VK_QUEUE_FAMILY_EXTERNAL : VK_QUEUE_FAMILY_IGNORED, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_MEMORY_READ_BIT);
        r->last_seq[index] = fr[p].sequence;
    }
    record_host_barrier(cb);
    if (vkEndCommandBuffer(cb) != VK_SUCCESS) {
        ring_fail(r, &r->bad_calls, "recording the batch of frame %llu failed", (unsigned long long)fr[0].sequence);
        return false;
    }
    si.pCommandBuffers = &cb;
    si.waitSemaphoreCount = fr[0].wait_semaphore != VK_NULL_HANDLE;
    si.pWaitSemaphores = &fr[0].wait_semaphore;
    si.signalSemaphoreCount = last->signal_semaphore != VK_NULL_HANDLE;
    si.pSignalSemaphores = &last->signal_semaphore;
    if (vkQueueSubmit(r->vk->queue, 1, &si, r->fences[slot]) != VK_SUCCESS) {
        ring_fail(r, &r->bad_calls, "vkQueueSubmit of frame %llu failed", (unsigned long long)fr[0].sequence);
        return false;
    }
    s = clmem_bridge_ring_vk_submitted(r->ring, last);
    if (s != CLMEM_OK) {
        ring_fail(r, &r->bad_calls, "vk_submitted of frame %llu: %s", (unsigned long long)last->sequence,
                  clmem_error_message());
        return false;
    }
    r->produced += count;
    return true;
}

void ring_run_kernels(struct ring_run *r, const clmem_bridge_ring_batch *bt)
{
    cl_uint words = RING_FRAME_WORDS;
    for (uint32_t i = 0; i < bt->count; i++) {
        cl_mem mem = clmem_handle_mem(bt->frames[i]);
        cl_uint q = (cl_uint)(bt->first_sequence + i);
        size_t one = 1;
        cl_int err = clSetKernelArg(r->kernel, 0, sizeof mem, &mem);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(r->kernel, 1, sizeof r->results, &r->results);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(r->kernel, 2, sizeof q, &q);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(r->kernel, 3, sizeof words, &words);
        if (err == CL_SUCCESS)
            err = clEnqueueNDRangeKernel(r->f->queue, r->kernel, 1, NULL, &one, NULL, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            ring_fail(r, &r->bad_calls, "the kernel of frame %u failed: %d", q, err);
    }
}

bool ring_consume_batch(struct ring_run *r)
{
    clmem_bridge_ring_batch bt;
    uint64_t batch = r->consumed / r->k;
    uint32_t want = r->total - r->consumed < r->k ? (uint32_t)(r->total - r->consumed) : r->k;
    clmem_status s;

    if (r->consumed == r->total)
        return false;
    s = clmem_bridge_ring_cl_next(r->ring, RING_TIMEOUT_NS, 0, NULL, &bt, NULL);
    if (s != CLMEM_OK) {
        ring_fail(r, &r->bad_calls, "cl_next of batch %llu: %s", (unsigned long long)batch, clmem_error_message());
        return false;
    }
    if (bt.batch != batch || bt.first_sequence != r->consumed || bt.count != want ||
        bt.first_index != (uint32_t)(batch % r->depth) * r->k)
        ring_fail(r, &r->bad_order,
                  "cl_next gave batch %llu, first sequence %llu, %u frames from index %u; want %llu, %llu, %u, %u",
                  (unsigned long long)bt.batch, (unsigned long long)bt.first_sequence, bt.count, bt.first_index,
                  (unsigned long long)batch, (unsigned long long)r->consumed, want,
                  (uint32_t)(batch % r->depth) * r->k);
    ring_run_kernels(r, &bt);
    s = clmem_bridge_ring_cl_done(r->ring, &bt, 0, NULL, NULL);
    if (s != CLMEM_OK) {
        ring_fail(r, &r->bad_calls, "cl_done of batch %llu: %s", (unsigned long long)batch, clmem_error_message());
        return false;
    }
    r->consumed += bt.count;
    return true;
}

void ring_run_check(struct ring_run *r)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = r->vk->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1};
    uint32_t *results = malloc(8 * (size_t)r->total), *logged = NULL;
    long long wrong_cl = 0, wrong_vk = 0, unlogged = 0;
    VkCommandBuffer cb;
    VkResult vr;

    tap_ok(atomic_load(&r->bad_calls) == 0, "%s: every ring call, submission and kernel was accepted (%d failed%s%s)",
           r->label, atomic_load(&r->bad_calls), r->first_error[0] ? "; first: " : "", r->first_error);
    tap_ok(atomic_load(&r->bad_order) == 0,
           "%s: the ring handed out slot after slot, frame after frame, with the semaphores of each batch (%d "
           "wrong)",
           r->label, atomic_load(&r->bad_order));
    tap_ok(r->produced == r->total && r->consumed == r->total, "%s: %llu frames produced and %llu consumed, of %llu",
           r->label, (unsigned long long)r->produced, (unsigned long long)r->consumed,
           (unsigned long long)r->total);

    /* The end of the stream: the done semaphores Vulkan still has to wait
     * on, waited on, so that every semaphore ends unsignalled. */
    {
        VkSemaphore waits[64];
        VkPipelineStageFlags stages[64];
        uint32_t count = 99;
        uint64_t batches = (r->total + r->k - 1) / r->k;
        uint32_t want = r->mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? (batches < r->depth ? (uint32_t)batches : r->depth)
                                                                    : 0;
        clmem_bridge_ring_frame fr;
        clmem_status s = clmem_bridge_ring_vk_drain(r->ring, RING_TIMEOUT_NS, 64, waits, &count);
        tap_ok(s == CLMEM_OK && count == want,
               "%s: vk_drain gives the %u done semaphores Vulkan has not waited on (%u; %s)", r->label, want, count,
               s ? clmem_error_message() : "ok");
        for (uint32_t i = 0; i < count && i < 64; i++)
            stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        if (s == CLMEM_OK && count) {
            VkSubmitInfo wi = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .waitSemaphoreCount = count,
                               .pWaitSemaphores = waits,
                               .pWaitDstStageMask = stages};
            if (vkQueueSubmit(r->vk->queue, 1, &wi, VK_NULL_HANDLE) != VK_SUCCESS)
                tap_bail("%s: submitting the drain's waits failed", r->label);
        }
        s = clmem_bridge_ring_vk_next(r->ring, 0, 0, &fr);
        tap_is_int(s, CLMEM_ERR_INVALID_VALUE, "%s: after vk_drain, vk_next refuses", r->label);
    }

    /* The last sequence of every frame, as Vulkan sees it. */
    if (clFinish(r->f->queue) != CL_SUCCESS || vkQueueWaitIdle(r->vk->queue) != VK_SUCCESS)
        tap_bail("%s: draining the queues failed", r->label);
    if (vkAllocateCommandBuffers(r->vk->device, &ai, &cb) != VK_SUCCESS || vkBeginCommandBuffer(cb, &bi) != VK_SUCCESS)
        tap_bail("the final log's command buffer");
    for (uint32_t i = 0; i < r->n; i++)
        record_log_copy(r, cb, i);
    record_host_barrier(cb);
    si.pCommandBuffers = &cb;
    vr = vkEndCommandBuffer(cb);
    if (vr == VK_SUCCESS)
        vr = vkQueueSubmit(r->vk->queue, 1, &si, VK_NULL_HANDLE);
    if (vr == VK_SUCCESS)
        vr = vkQueueWaitIdle(r->vk->queue);
    vkFreeCommandBuffers(r->vk->device, r->vk->pool, 1, &cb);
    if (vr != VK_SUCCESS)
        tap_bail("%s: the final log copy failed: %d", r->label, vr);

    if (!results || clEnqueueReadBuffer(r->f->queue, r->results, CL_TRUE, 0, 8 * (size_t)r->total, results, 0, NULL,
                                        NULL) != CL_SUCCESS)
        tap_bail("reading the results back failed");
    if (vkMapMemory(r->vk->device, r->log.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&logged) != VK_SUCCESS)
        tap_bail("mapping the log failed");
    for (uint64_t q = 0; q < r->total; q++) {
        const uint32_t *words = logged + q * RING_FRAME_WORDS;
        if (results[2 * q] != 0 && wrong_cl++ < 3)
            tap_diag("%s: frame %llu: OpenCL found %u of %u words not what Vulkan wrote, the first at word %u",
                     r->label, (unsigned long long)q, results[2 * q], RING_FRAME_WORDS, results[2 * q + 1]);
        if (words[0] == 0xDEADBEEFu) {
            if (unlogged++ < 3)
                tap_diag("%s: frame %llu was never logged by Vulkan", r->label, (unsigned long long)q);
            continue;
        }
        for (uint32_t j = 0; j < RING_FRAME_WORDS; j++)
            if (words[j] != cl_value(q, j)) {
                if (wrong_vk++ < 3)
                    tap_diag("%s: frame %llu word %u: Vulkan saw 0x%08x, want 0x%08x", r->label,
                             (unsigned long long)q, j, words[j], cl_value(q, j));
                break;
            }
    }
    vkUnmapMemory(r->vk->device, r->log.memory.memory);
    free(results);
    tap_ok(wrong_cl == 0, "%s: OpenCL saw every word Vulkan wrote, in all %llu frames (%lld frames wrong)", r->label,
           (unsigned long long)r->total, wrong_cl);
    tap_ok(wrong_vk == 0 && unlogged == 0,
           "%s: Vulkan saw every word OpenCL wrote, in all %llu frames (%lld frames wrong, %lld never logged)",
           r->label, (unsigned long long)r->total, wrong_vk, unlogged);
}

void ring_run_close(struct ring_run *r)
{
    clFinish(r->f->queue);
    vkQueueWaitIdle(r->vk->queue);
    clmem_bridge_ring_unref(r->ring);
    for (uint32_t i = 0; i < 2 * r->depth; i++)
        clmem_bridge_semaphore_unref(r->sems[i]); /* the anchors destroy the VkSemaphores */
    for (uint32_t i = 0; i < r->n; i++) {
        clmem_handle_unref(r->frames[i]);
        clmem_keepalive_unref(r->mem_ka[i]);
    }
    for (uint32_t i = 0; i < r->depth; i++)
        vkDestroyFence(r->vk->device, r->fences[i], NULL);
    vkFreeCommandBuffers(r->vk->device, r->vk->pool, r->depth, r->cbs);
    clReleaseKernel(r->kernel);
    clReleaseMemObject(r->results);
    clmem_keepalive_unref(r->log_ka);
    {
        /* The frames' anchors write into r->mem: they must have run before
         * it is freed. */
        clmem_status s = bridge_settle(r->b);
        int once = 0;
        for (uint32_t i = 0; i < r->n; i++)
            once += atomic_load(&r->mem[i].released) == 1;
        if (!tap_ok(s == CLMEM_OK && once == (int)r->n,
                    "%s: once the ring, semaphores and frames are dropped, every frame's Vulkan memory is freed, "
                    "once (%d of %u; %s)",
                    r->label, once, r->n, s ? clmem_error_message() : "settled"))
            tap_bail("the frames' memory is still held: cannot free their records");
    }
    free(r->mem);
    free(r->mem_ka);
    free(r->frames);
    free(r->last_seq);
    free(r->vk_sems);
    free(r->sems);
    free(r->cbs);
    free(r->fences);
}

int ring_test_passes(void)
{
    const char *v = getenv("CLMEM_TEST_RING_PASSES");
    /* 2 under valgrind and the sanitizers (t/lib/tap.h), where a pass takes
     * minutes: the exported fds are checked after every pass anyway */
    int n = v ? atoi(v) : getenv("CLMEM_TEST_INSTRUMENTED") ? 2 : 3;
    return n < 2 ? 2 : n > RING_TEST_MAX_PASSES ? RING_TEST_MAX_PASSES : n;
}
