/* SPDX-License-Identifier: MIT */
/* clmem-bench (x): the producer's side through libclmem-ipc, the consumer
 * being a second clmem-bench process (xproc-child.c). */
#include "xproc.h"

#include <unistd.h>

/* ------------------------------------------------------------ through libclmem-ipc */

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

/* D frames in flight through libclmem-ipc. D=1: the round trip of each
 * frame, from the fill's submission to the frame back from next(). D=4:
 * blocks of K frames, each ended by clmem_ipc_producer_wait_all(), K frames
 * / K. */
void xproc_run_ipc(struct xrun *r, struct xresult *res, int slots, enum xmeasure m)
{
    struct bench *b = r->b;
    char *why = res->why[m];
    int sock, done = 0;
    pid_t pid = xproc_spawn_consumer("ipc", &sock);
    clmem_ipc_producer_info info = {.size = sizeof info, .instance = b->vk.instance,
                                    .get_instance_proc_addr = b->vk.get_instance_proc_addr,
                                    .physical_device = b->vk.physical_device, .device = b->vk.device,
                                    .socket_fd = sock};
    clmem_ipc_producer *p = NULL;
    uint32_t i = 0;
    bool ok = clmem_ipc_producer_create(&info, &p) == CLMEM_OK && ipc_offer(r, p, slots) &&
              clmem_ipc_producer_start(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
    if (!p)
        close(sock);
    if (ok && !xproc_path_note[0])
        snprintf(xproc_path_note, sizeof xproc_path_note, "the consumer process imports through the %s path",
                 clmem_bridge_path_name(clmem_ipc_producer_peer_path(p)));
    xproc_frames_zero(r);
    if (slots == 1) {
        ok = ok && clmem_ipc_producer_next(p, 0, &i) == CLMEM_OK; /* The one frame */
        for (int f = 0; ok && f < r->warmup + r->frames; f++) {
            double t0 = now_us();
            xproc_submit_fill(r, (int)i);
            ok = clmem_ipc_producer_ready(p, i, r->f[i].fence, XPROC_TIMEOUT_NS) == CLMEM_OK &&
                 clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, &i) == CLMEM_OK;
            r->f[i].uses++;
            if (f >= r->warmup)
                r->samples[done++] = now_us() - t0;
        }
    } else {
        for (int blk = -1; ok && blk < r->blocks; blk++) { /* block -1: the warm-up */
            int n = blk < 0 ? r->warmup : r->frames;
            double t0 = now_us();
            for (int f = 0; ok && f < n; f++) {
                ok = clmem_ipc_producer_next(p, XPROC_TIMEOUT_NS, &i) == CLMEM_OK;
                if (!ok)
                    break;
                xproc_submit_fill(r, (int)i);
                ok = clmem_ipc_producer_ready(p, i, r->f[i].fence, XPROC_TIMEOUT_NS) == CLMEM_OK;
                r->f[i].uses++;
            }
            ok = ok && clmem_ipc_producer_wait_all(p, XPROC_TIMEOUT_NS) == CLMEM_OK;
            if (blk >= 0)
                r->samples[done++] = (now_us() - t0) / n;
        }
    }
    if (!ok)
        snprintf(why, sizeof res->why[0], "%s", clmem_error_message());
    clmem_ipc_producer_destroy(p); /* BYE: the consumer ends */
    char child[256] = "";
    bool child_ok = xproc_reap(pid, child, sizeof child);
    if (ok && !child_ok)
        snprintf(why, sizeof res->why[0], "%s", child);
    if (ok && child_ok) {
        res->s[m] = summarize(r->samples, done, slots == 1 ? 1 : r->frames);
        res->ran[m] = xproc_frames_check(r, xmeasure_label[m], why, sizeof res->why[0]);
    }
    if (!res->ran[m])
        fail(b, "(x) %s %s: %s", r->k->label, xmeasure_label[m], why);
}

