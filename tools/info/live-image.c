/* SPDX-License-Identifier: MIT */
/* clmem-info: every image format the bridge shares, checked live on a
 * supported path: plane buffers, image2d views and optimal tiling. */
#include "config.h"

#include "info.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte k of texel (x, y) of plane p: below 0x70, so that no half or float
 * component is a NaN or infinity. */
static unsigned char image_byte(uint32_t x, uint32_t y, unsigned p, unsigned k)
{
    return (unsigned char)((x * 7u + y * 13u + p * 5u + k * 3u) % 0x70u);
}

/* What the images made here are for: a staging copy in, and none out. */
#define IMAGE_USAGE (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT)

/* usage's flag names, as "TRANSFER_SRC|TRANSFER_DST", into buf; a bit this
 * table does not know prints as hex. */
static const char *usage_names(VkImageUsageFlags usage, char *buf, size_t len)
{
    static const struct {
        VkImageUsageFlags bit;
        const char *name;
    } names[] = {
        {VK_IMAGE_USAGE_TRANSFER_SRC_BIT, "TRANSFER_SRC"},
        {VK_IMAGE_USAGE_TRANSFER_DST_BIT, "TRANSFER_DST"},
        {VK_IMAGE_USAGE_SAMPLED_BIT, "SAMPLED"},
        {VK_IMAGE_USAGE_STORAGE_BIT, "STORAGE"},
        {VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, "COLOR_ATTACHMENT"},
        {VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT, "DEPTH_STENCIL_ATTACHMENT"},
        {VK_IMAGE_USAGE_TRANSIENT_ATTACHMENT_BIT, "TRANSIENT_ATTACHMENT"},
        {VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT, "INPUT_ATTACHMENT"},
    };
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (usage & names[i].bit) {
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "|" : "", names[i].name);
            usage &= ~names[i].bit;
        }
    if (usage || !used)
        snprintf(buf + used, used < len ? len - used : 0, "%s0x%x", used ? "|" : "", (unsigned)usage);
    return buf;
}

/* Into why: clmem_bridge_vk_image_create's message after the call's name
 * (once), with the usage this tool asked for by its flag names where the
 * library's sentence gives it as a number ("usage 0x3"). */
static void image_create_failure(char *why, size_t len)
{
    static const char call[] = "clmem_bridge_vk_image_create: ";
    const char *message = clmem_error_message();
    char number[32], names[128];
    const char *at;

    if (strncmp(message, call, sizeof call - 1) == 0)
        message += sizeof call - 1;
    snprintf(number, sizeof number, "usage 0x%x", (unsigned)IMAGE_USAGE);
    at = strstr(message, number);
    if (!at) {
        snprintf(why, len, "%s%s", call, message);
        return;
    }
    snprintf(why, len, "%s%.*susage %s%s", call, (int)(at - message), message,
             usage_names(IMAGE_USAGE, names, sizeof names), at + strlen(number));
}

static void on_image_released(void *user)
{
    atomic_store(&((struct anchor_state *)user)->released, true);
}

/* Every byte of plane p (tight, w x h texels of tb bytes) is the pattern. */
static bool image_bytes_match(const unsigned char *got, unsigned p, uint32_t w, uint32_t h, uint32_t tb,
                              char *why, size_t len)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t k = 0; k < tb; k++)
                if (got[((size_t)y * w + x) * tb + k] != image_byte(x, y, p, k)) {
                    snprintf(why, len, "plane %u texel (%u, %u) byte %u is 0x%02x, want 0x%02x", p, x, y, k,
                             got[((size_t)y * w + x) * tb + k], image_byte(x, y, p, k));
                    return false;
                }
    return true;
}

/* Vulkan writes the pattern into every plane of a linear image; then each
 * plane is imported (as a buffer, or with AS_IMAGE as a view) and OpenCL
 * reads it back: clEnqueueReadBufferRect through the handle's row pitch, or
 * clEnqueueReadImage. ROW_UNSUPPORTED where a step says the machine cannot
 * (Vulkan makes no such image, the import refuses it as unsupported);
 * `why` says what. *no_image is true when the image itself could not be
 * made, so that neither way can be checked. */
static enum row_status image_live(struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, clmem_bridge_path path,
                                  VkFormat format, bool as_image, char *why, size_t len, bool *no_image)
{
    bool fd = path != CLMEM_BRIDGE_PATH_HOST_MAPPED;
    clmem_bridge_vk_image img;
    clmem_handle *h[CLMEM_BRIDGE_IMAGE_MAX_PLANES] = {NULL, NULL, NULL};
    struct anchor_state *anchor;
    clmem_keepalive *ka;
    enum row_status st = ROW_OK;
    clmem_status s;

    s = clmem_bridge_vk_image_create(
        bridge, format, (VkExtent2D){IMAGE_WIDTH, IMAGE_HEIGHT}, VK_IMAGE_TILING_LINEAR, IMAGE_USAGE,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
           : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? (path == CLMEM_BRIDGE_PATH_DMA_BUF ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                                : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT)
           : 0,
        &img);
    *no_image = s != CLMEM_OK;
    if (s != CLMEM_OK) {
        image_create_failure(why, len);
        return check_status(s);
    }
    anchor = xrealloc(NULL, sizeof *anchor);
    atomic_init(&anchor->released, false);
    if (!(ka = clmem_keepalive_new(on_image_released, anchor))) {
        snprintf(why, len, "clmem_keepalive_new failed");
        free(anchor);
        clmem_bridge_vk_image_destroy(bridge, &img);
        return ROW_FAILED;
    }
    for (unsigned p = 0; p < img.plane_count && st == ROW_OK; p++) {
        uint32_t tb = 0, w = img.planes[p].width, hgt = img.planes[p].height;
        size_t bytes;
        VkBuffer staging = VK_NULL_HANDLE;
        clmem_bridge_vk_memory smem;
        unsigned char *data = NULL;
        VkResult vr;

        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        bytes = (size_t)w * hgt * tb;
        if (clmem_bridge_vk_buffer_create(bridge, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0,
                                          &staging, &smem) != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_vk_buffer_create (staging): %s", clmem_error_message());
            st = ROW_FAILED;
        } else if ((vr = vkMapMemory(ctx->device, smem.memory, 0, VK_WHOLE_SIZE, 0, (void **)&data)) != VK_SUCCESS) {
            native_failure(why, len, CLMEM_API_VULKAN, "vkMapMemory (staging)", vr, NULL);
            st = ROW_FAILED;
        } else {
            for (uint32_t y = 0; y < hgt; y++)
                for (uint32_t x = 0; x < w; x++)
                    for (uint32_t k = 0; k < tb; k++)
                        data[((size_t)y * w + x) * tb + k] = image_byte(x, y, p, k);
            vkUnmapMemory(ctx->device, smem.memory);
            vr = vkctx_copy_buffer_to_image(ctx, staging, 0, 0, img.image,
                                            img.plane_count == 1 ? VK_IMAGE_ASPECT_COLOR_BIT
                                            : p == 0             ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                                 : VK_IMAGE_ASPECT_PLANE_1_BIT,
                                            w, hgt, p == 0 ? VK_IMAGE_LAYOUT_UNDEFINED : VK_IMAGE_LAYOUT_GENERAL);
            if (vr != VK_SUCCESS) {
                char plane[32];
                snprintf(plane, sizeof plane, "plane %u", p);
                native_failure(why, len, CLMEM_API_VULKAN, "vkCmdCopyBufferToImage", vr, plane);
                st = ROW_FAILED;
            }
        }
        if (staging)
            clmem_bridge_vk_buffer_destroy(bridge, staging, &smem);
    }
    for (unsigned p = 0; p < img.plane_count && st == ROW_OK; p++) {
        uint32_t tb = 0, w = img.planes[p].width, hgt = img.planes[p].height;
        unsigned char *got;
        cl_int err;

        clmem_bridge_image_plane_format(format, p, NULL, &tb);
        s = clmem_bridge_import_vk_image(bridge, &img, p, path, ka, env->queue,
                                         as_image ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE,
                                         as_image ? CLMEM_BRIDGE_IMAGE_AS_IMAGE : 0, &h[p]);
        if (s != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_import_vk_image (plane %u): %s", p, clmem_error_message());
            st = check_status(s);
            break;
        }
        if (clmem_bridge_acquire(bridge, h[p], 0, NULL, NULL) != CLMEM_OK) {
            snprintf(why, len, "clmem_bridge_acquire (plane %u): %s", p, clmem_error_message());
            st = ROW_FAILED;
            break;
        }
        got = xrealloc(NULL, (size_t)w * hgt * tb);
        if (as_image) {
            size_t origin[3] = {0, 0, 0}, region[3] = {w, hgt, 1};
            err = clEnqueueReadImage(env->queue, clmem_handle_mem(h[p]), CL_TRUE, origin, region, 0, 0, got, 0,
                                     NULL, NULL);
        } else {
            size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)w * tb, hgt, 1};
            err = clEnqueueReadBufferRect(env->queue, clmem_handle_mem(h[p]), CL_TRUE, origin, origin, region,
                                          clmem_handle_row_pitch(h[p]), 0, (size_t)w * tb, 0, got, 0, NULL, NULL);
        }
        if (err != CL_SUCCESS) {
            char plane[32];
            snprintf(plane, sizeof plane, "plane %u", p);
            native_failure(why, len, CLMEM_API_OPENCL, as_image ? "clEnqueueReadImage" : "clEnqueueReadBufferRect",
                           err, plane);
            st = ROW_FAILED;
        } else if (!image_bytes_match(got, p, w, hgt, tb, why, len)) {
            st = ROW_FAILED;
        }
        free(got);
        if (clmem_bridge_release(bridge, h[p], 0, NULL, NULL) != CLMEM_OK && st == ROW_OK) {
            snprintf(why, len, "clmem_bridge_release (plane %u): %s", p, clmem_error_message());
            st = ROW_FAILED;
        }
    }
    clFinish(env->queue);
    for (unsigned p = 0; p < CLMEM_BRIDGE_IMAGE_MAX_PLANES; p++)
        clmem_handle_unref(h[p]);
    clmem_keepalive_unref(ka);
    /* As trip_teardown: free the image only once the bridge let go of it. */
    if (!atomic_load(&anchor->released) && clmem_bridge_finish(bridge, FINISH_TIMEOUT_NS) != CLMEM_OK) {
        if (st == ROW_OK)
            snprintf(why, len, "clmem_bridge_finish after the last plane handle: %s (image leaked, not freed)",
                     clmem_error_message());
        return ROW_FAILED; /* anchor leaked on purpose */
    }
    if (!atomic_load(&anchor->released)) {
        snprintf(why, len, "the import still held the image after clmem_bridge_finish (image leaked, not freed)");
        return ROW_FAILED;
    }
    free(anchor);
    clmem_bridge_vk_image_destroy(bridge, &img);
    return st;
}

static struct image_rec *add_image(struct report *r, int bridge, clmem_bridge_path path, VkFormat format)
{
    struct image_rec *ir;
    r->images = grow_array(r->images, r->n_images, &r->images_allocated, sizeof *r->images);
    ir = &r->images[r->n_images++];
    memset(ir, 0, sizeof *ir);
    ir->bridge = bridge;
    ir->path = clmem_bridge_path_name(path);
    ir->format = clmem_bridge_image_format_name(format);
    return ir;
}

/* Every format the bridge shares, on one path the pair supports: plane
 * buffers and views run live here, optimal tiling by the bridge's live
 * check. */
void check_images(struct report *r, struct vkctx *ctx, struct cl_env *env, clmem_bridge *bridge, int bi,
                  clmem_bridge_path path)
{
    uint32_t n = 0;
    const VkFormat *formats = clmem_bridge_image_formats(&n);
    unsigned errors_before = vkctx_validation_errors();

    for (uint32_t i = 0; i < n; i++) {
        struct image_rec *ir = add_image(r, bi, path, formats[i]);
        bool no_image = false, no_view_image = false;
        clmem_status s;

        ir->status[IMG_PLANES] =
            image_live(ctx, env, bridge, path, formats[i], false, ir->reason[IMG_PLANES], TEXT, &no_image);
        /* The view needs the same linear image: when Vulkan could not make
         * it, the view has the planes' reason (one footnote, not two). */
        if (no_image) {
            ir->status[IMG_VIEW] = ir->status[IMG_PLANES];
            snprintf(ir->reason[IMG_VIEW], TEXT, "%s", ir->reason[IMG_PLANES]);
        } else if ((s = clmem_bridge_check_image(bridge, formats[i], VK_IMAGE_TILING_LINEAR, path, CL_MEM_READ_ONLY,
                                                 CLMEM_BRIDGE_IMAGE_AS_IMAGE)) != CLMEM_OK) {
            snprintf(ir->reason[IMG_VIEW], TEXT, "%s", clmem_error_message());
            ir->status[IMG_VIEW] = check_status(s);
        } else {
            ir->status[IMG_VIEW] =
                image_live(ctx, env, bridge, path, formats[i], true, ir->reason[IMG_VIEW], TEXT, &no_view_image);
        }
        s = clmem_bridge_image_live_check(bridge, formats[i], path, ctx->queue, ctx->queue_family, env->queue);
        if (s != CLMEM_OK)
            snprintf(ir->reason[IMG_OPTIMAL], TEXT, "%s", clmem_error_message());
        ir->status[IMG_OPTIMAL] = check_status(s);
        for (int w = 0; w < IMG_WAYS; w++)
            r->failures += ir->status[w] == ROW_FAILED;
    }
    if (vkctx_validation_errors() != errors_before) {
        struct image_rec *ir = &r->images[r->n_images - 1];
        snprintf(ir->reason[IMG_PLANES], TEXT,
                 "the Vulkan validation layer reported %u error(s) in the image checks (the '# validation error' "
                 "lines)",
                 vkctx_validation_errors() - errors_before);
        if (ir->status[IMG_PLANES] != ROW_FAILED)
            r->failures++;
        ir->status[IMG_PLANES] = ROW_FAILED;
    }
}
