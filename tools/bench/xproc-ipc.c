/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes through libclmem-ipc, both sides:
 * the producer (this process, the bench's Vulkan device) and the consumer
 * role of the consumer process (xproc-child.c runs it). At one frame in
 * flight the producer takes turns with the same protocol made with the raw
 * calls (xproc-raw.c), frame by frame, for the library's share. */
#include "xproc-common.h"

#include <math.h>
#include <unistd.h>

/* ------------------------------------------------------------ the producer */

static bool ipc_offer(struct xrun *r, clmem_ipc_producer *p, int slots)
{
    for (int s = 0; s < slots; s++) {
        clmem_status st;
        if (r->k->format == VK_FORMAT_UNDEFINED) {
            st = clmem_ipc_producer_add_buffer(p, &r->f[s].buf.mem, r->f[s].memory_type, 0, r->k->bytes, 0, NULL);
        } else {
            clmem_bridge_vk_image img = {.memory = r->f[s].buf.mem, .size = r->k->bytes, .format = r->k->format,
                                         .extent = {r->k->width, r->k->height}, .tiling = VK_IMAGE_TILING_LINEAR,
                                         .plane_count = r->k->planes};
            for (uint32_t p2 = 0; p2 < r->k->planes; p2++)
                img.planes[p2] = (clmem_bridge_vk_image_plane){r->k->plane_offset[p2], r->k->plane_size[p2],
                                                               r->k->pitch[p2], p2 ? r->k->width / 2 : r->k->width,
                                                               p2 ? r->k->height / 2 : r->k->height};
            st = clmem_ipc_producer_add_image(p, &img, r->f[s].memory_type, NULL);
        }
        if (st != CLMEM_OK)
            return false;
    }
    return true;
}

/* One frame through libclmem-ipc at D=1: from the fill's submission to
 * the frame back from next(); *i is the frame the producer holds. */
static bool ipc_frame(struct xrun *r, clmem_ipc_producer *p, uint32_t *i, double *us)
{
    double t0 = now_us();
    xproc_submit_fill(r, (int)*i);
    if (clmem_ipc_producer_ready(p, *i, r->f[*i].fence, XPROC_TIMEOUT_NS) != CLMEM_OK ||
        clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, i) != CLMEM_OK)
        return false;
    *us = now_us() - t0;
    r->f[*i].uses++;
    return true;
}

/* D frames in flight through libclmem-ipc. D=1: the round trip of each
 * frame, from the fill's submission to the frame back from next(), taking
 * turns frame by frame with the same protocol made with the raw calls
 * (xproc-raw.c, on slot 1, its own consumer process), each going first in
 * every other pair; the library's share is the paired difference. D=4:
 * blocks of K frames, each ended by clmem_ipc_producer_wait_all(), K frames
 * / K; batched (XM_IPC_BATCH_D4), the same blocks with every free frame
 * handed over in one READY. CPU time: both processes' CPU clocks over the
 * timed frames. */
void xproc_run_ipc(struct xrun *r, struct xresult *res, int slots, enum xmeasure m)
{
    struct bench *b = r->b;
    char *why = res->why[m];
    int sock, done = 0;
    bool batched = m == XM_IPC_BATCH_D4;
    pid_t pid = xproc_spawn_consumer(batched ? "ipc-batch" : "ipc", &sock);
    clmem_ipc_producer_info info = {.size = sizeof info, .instance = b->vk.instance,
                                    .get_instance_proc_addr = b->vk.get_instance_proc_addr,
                                    .physical_device = b->vk.physical_device, .device = b->vk.device,
                                    .socket_fd = sock};
    clmem_ipc_producer *p = NULL;
    struct raw_producer raw = {.sock = -1};
    bool raw_ok = false;
    double cpu_lib = 0, cpu_raw = 0, *raw_samples = NULL;
    uint32_t i = 0;
    bool ok = clmem_ipc_producer_create(&info, &p) == CLMEM_OK && ipc_offer(r, p, slots) &&
              clmem_ipc_producer_start(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
    if (!p)
        close(sock);
    if (ok && !res->peer_path)
        res->peer_path = clmem_bridge_path_name(clmem_ipc_producer_peer_path(p));
    xproc_frames_zero(r);
    if (slots == 1) {
        raw_samples = calloc((size_t)r->frames + 1, sizeof *raw_samples);
        if (!raw_samples)
            die("out of memory");
        raw_ok = ok && xproc_raw_open(r, &raw, 1, res->why[XM_RAW_D1], sizeof res->why[0]);
        ok = ok && clmem_ipc_producer_next(p, 0, &i) == CLMEM_OK; /* the one frame */
        for (int f = 0; ok && f < r->warmup + r->frames; f++) {
            bool timed = f >= r->warmup;
            double lib_us = 0, raw_us = 0;
            for (int turn = 0; ok && turn < 2; turn++) {
                bool lib_now = (turn == 0) == (f % 2 == 0); /* the library first in even frames */
                if (!lib_now && !raw_ok)
                    continue;
                double c0 = xproc_cpu_us(lib_now ? pid : raw.pid);
                if (lib_now)
                    ok = ipc_frame(r, p, &i, &lib_us);
                else if (!xproc_raw_frame(r, &raw, &raw_us)) {
                    raw_ok = false;
                    snprintf(res->why[XM_RAW_D1], sizeof res->why[0], "the raw protocol's consumer stopped answering");
                }
                double c1 = xproc_cpu_us(lib_now ? pid : raw.pid);
                if (timed)
                    *(lib_now ? &cpu_lib : &cpu_raw) += c1 - c0;
            }
            if (timed) {
                raw_samples[done] = raw_us;
                r->samples[done++] = lib_us;
            }
        }
    } else if (batched) {
        /* Every frame free at once: filled, one fence on the last fill
         * (a fence covers every earlier submission of its queue), one
         * READY. A block ends where its frames run out. */
        for (int blk = -1; ok && blk < r->blocks; blk++) {
            int n = blk < 0 ? r->warmup : r->frames;
            double c0 = xproc_cpu_us(pid), t0 = now_us();
            for (int f = 0; ok && f < n;) {
                uint32_t idx[XPROC_SLOTS], got = 0;
                uint32_t room = (uint32_t)(n - f < slots ? n - f : slots);
                ok = clmem_ipc_producer_next_many(p, XPROC_TIMEOUT_NS, room, idx, &got) == CLMEM_OK;
                for (uint32_t k = 0; ok && k < got; k++) {
                    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                       .commandBufferCount = 1,
                                       .pCommandBuffers = &r->f[idx[k]].fill};
                    VkFence fence = k + 1 == got ? r->f[idx[k]].fence : VK_NULL_HANDLE;
                    if (fence)
                        xproc_fence_reset(b, fence);
                    check_vk(vkQueueSubmit(b->vk.queue, 1, &si, fence), "vkQueueSubmit(fill)");
                    r->f[idx[k]].uses++;
                }
                ok = ok &&
                     clmem_ipc_producer_ready_many(p, got, idx, r->f[idx[got - 1]].fence, XPROC_TIMEOUT_NS) == CLMEM_OK;
                f += (int)got;
            }
            ok = ok && clmem_ipc_producer_wait_all(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
            if (blk >= 0) {
                r->samples[done++] = (now_us() - t0) / n;
                cpu_lib += xproc_cpu_us(pid) - c0;
            }
        }
    } else {
        for (int blk = -1; ok && blk < r->blocks; blk++) { /* block -1: the warm-up */
            int n = blk < 0 ? r->warmup : r->frames;
            double c0 = xproc_cpu_us(pid), t0 = now_us();
            for (int f = 0; ok && f < n; f++) {
                ok = clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, &i) == CLMEM_OK;
                if (!ok)
                    break;
                xproc_submit_fill(r, (int)i);
                ok = clmem_ipc_producer_ready(p, i, r->f[i].fence, XPROC_TIMEOUT_NS) == CLMEM_OK;
                r->f[i].uses++;
            }
            ok = ok && clmem_ipc_producer_wait_all(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
            if (blk >= 0) {
                r->samples[done++] = (now_us() - t0) / n;
                cpu_lib += xproc_cpu_us(pid) - c0;
            }
        }
    }
    if (!ok)
        snprintf(why, sizeof res->why[0], "%s", clmem_error_message());
    clmem_ipc_producer_destroy(p); /* BYE: the consumer ends */
    char child[256] = "";
    bool child_ok = xproc_reap(pid, child, sizeof child);
    if (ok && !child_ok)
        snprintf(why, sizeof res->why[0], "%s", child);
    if (raw.pid > 0) {
        char raw_child[256] = "";
        if (!xproc_raw_close(&raw, raw_child, sizeof raw_child) && raw_ok) {
            raw_ok = false;
            snprintf(res->why[XM_RAW_D1], sizeof res->why[0], "%s", raw_child);
        }
    }
    if (ok && child_ok) {
        int frames = slots == 1 ? done : done * r->frames;
        if (raw_ok) {
            double *diff = calloc((size_t)done + 1, sizeof *diff);
            if (!diff)
                die("out of memory");
            res->lib1 = summarize_paired(r->samples, raw_samples, diff, done);
            free(diff);
            res->s[XM_RAW_D1] = summarize(raw_samples, done, 1);
            res->cpu[XM_RAW_D1] = done ? cpu_raw / done : NAN;
        }
        res->s[m] = summarize(r->samples, done, slots == 1 ? 1 : r->frames);
        res->cpu[m] = frames ? cpu_lib / frames : NAN;
        res->ran[m] = xproc_frames_check(r, xmeasure_label[m], why, sizeof res->why[0]);
        /* the raw frames are slot 1's, checked with the rest */
        if (slots == 1)
            res->ran[XM_RAW_D1] = raw_ok && res->ran[m];
        if (raw_ok && !res->ran[m])
            snprintf(res->why[XM_RAW_D1], sizeof res->why[0], "the frames' check failed: %s", why);
    }
    if (slots == 1 && !res->ran[XM_RAW_D1]) {
        if (!res->why[XM_RAW_D1][0])
            snprintf(res->why[XM_RAW_D1], sizeof res->why[0], "libclmem-ipc's D=1 did not run");
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[XM_RAW_D1], res->why[XM_RAW_D1]);
    }
    free(raw_samples);
    if (!res->ran[m])
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
}

/* ------------------------------------------------------------ the consumer */

/* libclmem-ipc's consumer: the bump kernel on plane 0 of every frame, each
 * frame's planes let go once the kernel is enqueued, until the producer's
 * BYE; batched, the frames come by clmem_ipc_consumer_next_many() and are
 * let go together once every kernel of the batch is enqueued. It takes the
 * socket. */
int xproc_consume_ipc(struct consumer_devices *c, int sock, bool batched)
{
    clmem_bridge_info bi = {.size = sizeof bi,
                            .instance = c->vk.instance,
                            .physical_device = c->vk.physical_device,
                            .device = c->vk.device,
                            .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                            .context = c->context,
                            .cl_device = c->device};
    clmem_bridge *bridge;
    clmem_ipc_consumer *consumer;
    if (clmem_bridge_create(&bi, &bridge) != CLMEM_OK)
        return xproc_consumer_fail("clmem_bridge_create");
    clmem_ipc_consumer_info ci = {.size = sizeof ci,
                                  .bridge = bridge,
                                  .instance = c->vk.instance,
                                  .get_instance_proc_addr = c->vk.get_instance_proc_addr,
                                  .physical_device = c->vk.physical_device,
                                  .queue = c->queue,
                                  .socket_fd = sock};
    if (clmem_ipc_consumer_create(&ci, &consumer) != CLMEM_OK)
        return xproc_consumer_fail("clmem_ipc_consumer_create");
    if (clmem_ipc_consumer_start(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return xproc_consumer_fail("clmem_ipc_consumer_start");
    for (;;) {
        clmem_ipc_frame fs[XPROC_SLOTS];
        uint32_t n = 0;
        size_t one = 1;
        if (batched ? clmem_ipc_consumer_next_many(consumer, XPROC_TIMEOUT_NS, XPROC_SLOTS, fs, &n, NULL) != CLMEM_OK
                    : clmem_ipc_consumer_next(consumer, XPROC_TIMEOUT_NS, &fs[0], NULL) != CLMEM_OK)
            return xproc_consumer_fail(batched ? "clmem_ipc_consumer_next_many" : "clmem_ipc_consumer_next");
        if (!batched)
            n = fs[0].plane_count ? 1 : 0;
        if (n == 0)
            break;
        for (uint32_t k = 0; k < n; k++) {
            cl_mem m = clmem_handle_mem(fs[k].planes[0].handle);
            clSetKernelArg(c->bump, 0, sizeof m, &m);
            if (clEnqueueNDRangeKernel(c->queue, c->bump, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
                return xproc_consumer_fail("clEnqueueNDRangeKernel");
        }
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t p = 0; p < fs[k].plane_count; p++)
                clmem_handle_unref(fs[k].planes[p].handle); /* the release point: after the kernels */
    }
    if (clmem_ipc_consumer_state(consumer) != CLMEM_IPC_STATE_ENDED) {
        fprintf(stderr, "clmem-bench (x) consumer: the stream ended %s\n",
                clmem_ipc_state_name(clmem_ipc_consumer_state(consumer)));
        return 1;
    }
    if (clmem_ipc_consumer_destroy(consumer, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return xproc_consumer_fail("clmem_ipc_consumer_destroy");
    if (clmem_bridge_finish(bridge, XPROC_TIMEOUT_NS) != CLMEM_OK)
        return xproc_consumer_fail("clmem_bridge_finish");
    clmem_bridge_unref(bridge);
    return 0;
}
