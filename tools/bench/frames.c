/* SPDX-License-Identifier: MIT */
/* clmem-bench: image frames. */
#include "bench.h"

/* image frames: a linear VkImage of 1920x1080 or 3840x2160 in RGBA8 or
 * NV12 reaching an OpenCL kernel, two ways, interleaved rep by rep:
 *   staged: vkCmdCopyImageToBuffer of every plane into persistently mapped
 *     staging + vkQueueWaitIdle, clEnqueueWriteBuffer of each plane into a
 *     plain cl buffer, the one-work-item kernel on plane 0, clFinish;
 *   zero-copy: clmem_bridge_acquire of each plane handle
 *     (clmem_bridge_import_vk_image, imported once before timing), the
 *     kernel on plane 0's buffer, clmem_bridge_release of each, clFinish.
 * A format or size the device cannot make is a line saying why. */

/* The image-frames measure's results, for its summary table (the CSV has them as rows). */
#define MAX_FRAME_RESULTS 4
struct frame_result {
    const char *label; /* "1920x1080 RGBA8" */
    struct summary staged, handoff;
};
static struct frame_result frame_results[MAX_FRAME_RESULTS];
static int n_frame_results;

struct anchored_image {
    clmem_bridge_vk_image img;
    clmem_bridge *bridge; /* borrowed: the bench's */
    atomic_int freed;
};

static void anchored_image_release(void *user)
{
    struct anchored_image *a = user;
    clmem_bridge_vk_image_destroy(a->bridge, &a->img);
    atomic_store(&a->freed, 1);
}

static VkImageAspectFlagBits frame_aspect(const clmem_bridge_vk_image *img, unsigned p)
{
    return img->plane_count == 1 ? VK_IMAGE_ASPECT_COLOR_BIT : p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                                      : VK_IMAGE_ASPECT_PLANE_1_BIT;
}

static void run_frame(struct bench *b, VkFormat format, const char *fmt_name, const char *fmt_key, uint32_t w,
                      uint32_t h, int reps)
{
    bool fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    struct anchored_image *a = calloc(1, sizeof *a);
    clmem_keepalive *ka;
    clmem_handle *hd[2] = {NULL, NULL};
    cl_mem plain[2] = {NULL, NULL};
    uint64_t off[2] = {0, 0}, bytes[2] = {0, 0}, total = 0;
    struct vk_buf staging;
    unsigned char *mapped = NULL;
    VkCommandBuffer copy_cb;
    double *st = calloc((size_t)reps, sizeof *st), *zc = calloc((size_t)reps, sizeof *zc);
    char label[64], what[160];
    clmem_status s;
    cl_int err;

    snprintf(label, sizeof label, "%ux%u %s", w, h, fmt_name);
    if (!a || !st || !zc)
        die("out of memory");
    a->bridge = b->bridge;
    atomic_init(&a->freed, 0);
    s = clmem_bridge_vk_image_create(
        b->bridge, format, (VkExtent2D){w, h}, VK_IMAGE_TILING_LINEAR,
        VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0, &a->img);
    if (s != CLMEM_OK) {
        record_skip("g", label, "%s", clmem_error_message());
        printf("  (g) frame %-16s skipped: %s\n", label, clmem_error_message());
        free(a);
        free(st);
        free(zc);
        return;
    }
    if (!(ka = clmem_keepalive_new(anchored_image_release, a)))
        die("clmem_keepalive_new failed");
    for (unsigned p = 0; p < a->img.plane_count; p++) {
        uint32_t tb = 0;
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        off[p] = total;
        bytes[p] = (uint64_t)a->img.planes[p].width * a->img.planes[p].height * tb;
        total += bytes[p];
    }
    staging_buf_create(b, &staging, total);
    check_vk(vkMapMemory(b->vk.device, staging.mem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped),
             "vkMapMemory(frame staging)");
    /* Vulkan writes the frame once: a byte pattern, plane by plane. */
    for (uint64_t i = 0; i < total; i++)
        mapped[i] = (unsigned char)(i * 7u + i / 4099u);
    for (unsigned p = 0; p < a->img.plane_count; p++) {
        uint32_t tb = 0;
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        check_vk(vkctx_copy_buffer_to_image(&b->vk, staging.buffer, off[p], 0, a->img.image, frame_aspect(&a->img, p),
                                            a->img.planes[p].width, a->img.planes[p].height,
                                            p == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_GENERAL),
                 "vkctx_copy_buffer_to_image(frame)");
        snprintf(what, sizeof what, "clmem_bridge_import_vk_image(%s plane %u)", label, p);
        check_clmem(clmem_bridge_import_vk_image(b->bridge, &a->img, p, b->path, ka, b->queue, CL_MEM_READ_WRITE, 0,
                                                 &hd[p]),
                    what);
        plain[p] = clCreateBuffer(b->context, CL_MEM_READ_WRITE, (size_t)bytes[p], NULL, &err);
        check_cl(err, "clCreateBuffer(frame plane)");
    }
    clmem_keepalive_unref(ka); /* The imports hold it now */
    /* The staged copy, recorded once: every plane into staging, tightly packed. */
    copy_cb = begin_commands(b);
    {
        VkImageMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                   .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                                   .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
                                   .oldLayout = VK_IMAGE_LAYOUT_GENERAL,
                                   .newLayout = VK_IMAGE_LAYOUT_GENERAL,
                                   .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .image = a->img.image,
                                   .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
        vkCmdPipelineBarrier(copy_cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL,
                             0, NULL, 1, &mb);
        for (unsigned p = 0; p < a->img.plane_count; p++) {
            VkBufferImageCopy region = {.bufferOffset = off[p],
                                        .imageSubresource = {(VkImageAspectFlags)frame_aspect(&a->img, p), 0, 0, 1},
                                        .imageExtent = {a->img.planes[p].width, a->img.planes[p].height, 1}};
            vkCmdCopyImageToBuffer(copy_cb, a->img.image, VK_IMAGE_LAYOUT_GENERAL, staging.buffer, 1, &region);
        }
    }
    end_commands(copy_cb);

    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        double t0, t1, t2;
        cl_mem m;

        t0 = now_us();
        submit_and_wait(b, copy_cb, "vkQueueSubmit(frame staged copy)");
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_cl(clEnqueueWriteBuffer(b->queue, plain[p], CL_FALSE, 0, (size_t)bytes[p], mapped + off[p], 0,
                                          NULL, NULL),
                     "clEnqueueWriteBuffer(frame plane)");
        m = plain[0];
        check_cl(clSetKernelArg(b->kernel[V_RAW], 0, sizeof m, &m), "clSetKernelArg");
        enqueue_kernel(b, V_RAW);
        check_cl(clFinish(b->queue), "clFinish(frame staged)");
        t1 = now_us();
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_clmem(clmem_bridge_acquire(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_acquire(frame plane)");
        m = clmem_handle_mem(hd[0]);
        check_cl(clSetKernelArg(b->kernel[V_CLMEM], 0, sizeof m, &m), "clSetKernelArg");
        enqueue_kernel(b, V_CLMEM);
        for (unsigned p = 0; p < a->img.plane_count; p++)
            check_clmem(clmem_bridge_release(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_release(frame plane)");
        check_cl(clFinish(b->queue), "clFinish(frame handoff)");
        t2 = now_us();
        if (rep >= 0) {
            st[rep] = t1 - t0;
            zc[rep] = t2 - t1;
        }
    }
    /* Correctness, once: the last plane's last row as OpenCL sees it
     * through the plane handle's row pitch, and the staged copy's last
     * bytes, are what Vulkan wrote (the kernel touches plane 0's first 8
     * bytes only). */
    {
        unsigned p = a->img.plane_count - 1;
        uint32_t tb = 0, rowb;
        unsigned char *row;
        size_t origin[3] = {0, a->img.planes[p].height - 1, 0}, hostorg[3] = {0, 0, 0}, region[3];
        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        rowb = a->img.planes[p].width * tb;
        region[0] = rowb;
        region[1] = 1;
        region[2] = 1;
        row = malloc(2 * (size_t)rowb);
        if (!row)
            die("out of memory");
        check_clmem(clmem_bridge_acquire(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_acquire(frame check)");
        check_cl(clEnqueueReadBufferRect(b->queue, clmem_handle_mem(hd[p]), CL_TRUE, origin, hostorg, region,
                                         clmem_handle_row_pitch(hd[p]), 0, rowb, 0, row, 0, NULL, NULL),
                 "clEnqueueReadBufferRect(frame check)");
        check_clmem(clmem_bridge_release(b->bridge, hd[p], 0, NULL, NULL), "clmem_bridge_release(frame check)");
        check_cl(clEnqueueReadBuffer(b->queue, plain[p], CL_TRUE, (size_t)bytes[p] - rowb, rowb, row + rowb, 0, NULL,
                                     NULL),
                 "clEnqueueReadBuffer(frame check)");
        if (memcmp(row, mapped + off[p] + bytes[p] - rowb, rowb) != 0 ||
            memcmp(row + rowb, mapped + off[p] + bytes[p] - rowb, rowb) != 0)
            fail(b, "(g) frame %s: the last row of plane %u differs from what Vulkan wrote (zero-copy %s, staged %s)",
                 label, p, memcmp(row, mapped + off[p] + bytes[p] - rowb, rowb) ? "differs" : "ok",
                 memcmp(row + rowb, mapped + off[p] + bytes[p] - rowb, rowb) ? "differs" : "ok");
        free(row);
    }
    if (n_frame_results < MAX_FRAME_RESULTS) {
        struct frame_result *fr = &frame_results[n_frame_results++];
        static char labels[MAX_FRAME_RESULTS][64];
        char measure[96];
        snprintf(labels[n_frame_results - 1], 64, "%s", label);
        fr->label = labels[n_frame_results - 1];
        fr->staged = summarize(st, reps, 1);
        fr->handoff = summarize(zc, reps, 1);
        /* size_bytes is the frame's texel bytes; one frame per handoff, no ring */
        snprintf(measure, sizeof measure, "frame_staged_copy_%ux%u_%s", w, h, fmt_key);
        record_row("g", total, measure, "baseline", &fr->staged, 1, 0);
        snprintf(measure, sizeof measure, "frame_handoff_%ux%u_%s", w, h, fmt_key);
        record_row("g", total, measure, "clmem", &fr->handoff, 1, 0);
        printf("  (g) frame %-16s staged %10.1f us [%.1f .. %.1f]  zero-copy %9.1f us [%.1f .. %.1f]  %7.1fx  n=%d%s\n",
               label, fr->staged.median, fr->staged.min, fr->staged.max, fr->handoff.median, fr->handoff.min,
               fr->handoff.max, fr->handoff.median > 0 ? fr->staged.median / fr->handoff.median : 0.0, reps,
               reps < MIN_VERDICT_SAMPLES ? " (few samples)" : "");
        fflush(stdout);
    }

    check_vk(vkQueueWaitIdle(b->vk.queue), "vkQueueWaitIdle");
    vkFreeCommandBuffers(b->vk.device, b->vk.pool, 1, &copy_cb);
    for (unsigned p = 0; p < 2; p++) {
        clmem_handle_unref(hd[p]);
        if (plain[p])
            clReleaseMemObject(plain[p]);
    }
    vkUnmapMemory(b->vk.device, staging.mem.memory);
    clmem_bridge_vk_buffer_destroy(b->bridge, staging.buffer, &staging.mem);
    /* As size_teardown: the cached bridge's teardowns complete through the
     * driver's callbacks once the markers ran. */
    check_cl(clFinish(b->queue), "clFinish(before the frame's teardown)");
    if (wait_until_set(&a->freed, teardown_deadline()))
        free(a);
    else /* leave it to the anchor, which may still run */
        fail(b, "the frame %s's image was not freed %d s after its last plane handle went", label, DESTROY_WAIT_S);
    free(st);
    free(zc);
}

void run_frames(struct bench *b, bool quick, int reps)
{
    static const struct {
        uint32_t w, h;
    } sizes[] = {{1920, 1080}, {3840, 2160}};
    static const struct {
        VkFormat vk;
        const char *name, *key;
    } formats[] = {{VK_FORMAT_R8G8B8A8_UNORM, "RGBA8", "rgba8"}, {VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, "NV12", "nv12"}};

    printf("\n(g) frames: linear images on the %s path; staged = vkCmdCopyImageToBuffer + vkQueueWaitIdle +\n"
           "    clEnqueueWriteBuffer per plane; zero-copy = acquire the plane handles, release; each with the\n"
           "    1-work-item kernel on plane 0 and clFinish; interleaved rep by rep\n",
           clmem_bridge_path_name(b->path));
    for (size_t z = 0; z < (quick ? 1u : 2u); z++)
        for (size_t f = 0; f < 2; f++) {
            watchdog("(g) frames", formats[f].name);
            run_frame(b, formats[f].vk, formats[f].name, formats[f].key, sizes[z].w, sizes[z].h, reps);
            alarm(0);
        }
}

void print_frames(void)
{
    printf("\nFrames, medians in microseconds: staged copy vs zero-copy handoff (> 1x: sharing wins)\n");
    if (!n_frame_results) {
        printf("  none: the device made no frame (the lines above say why)\n");
        return;
    }
    printf("%-16s %12s %12s %9s\n", "frame", "staged", "zero-copy", "ratio");
    for (int i = 0; i < n_frame_results; i++) {
        const struct frame_result *fr = &frame_results[i];
        printf("%-16s %12.1f %12.1f %8.1fx\n", fr->label, fr->staged.median, fr->handoff.median,
               fr->handoff.median > 0 ? fr->staged.median / fr->handoff.median : 0.0);
    }
}
