/* SPDX-License-Identifier: MIT */
/* The fault-injection test's Vulkan objects (t/fault/fault-run.h lists the
 * groups): the bridge's buffer and image makers as operations, the image
 * the image sequences import (with the caller's anchor on it), and the
 * driver's trial imports of such an image. */
#include "fault-run.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <string.h>

/* The run's image has optimal tiling (else linear) in exactly the
 * sequences that need an optimal-tiling import. */
static bool seq_optimal(const struct sequence *seq)
{
    return seq->needs == NEEDS_OPTIMAL_IMAGE;
}

/* The image sequences' VkImage: IMAGE_FORMAT (or `format`) with the
 * sequence's tiling, exportable for its path, in memory of the path's
 * properties where Vulkan has such a type for it, else any (a CPU device
 * has no device-local type; the live check falls back the same way). */
static clmem_status image_make(struct fault_env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal, VkFormat format,
                               clmem_bridge_vk_image *out)
{
    VkImageTiling tiling = optimal ? VK_IMAGE_TILING_OPTIMAL : VK_IMAGE_TILING_LINEAR;
    clmem_status s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE,
                                                  path_memory_props(path), path_export_types(&e->vk, path), out);
    if (s == CLMEM_ERR_UNSUPPORTED && path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        s = clmem_bridge_vk_image_create(b, format, (VkExtent2D){IMAGE_W, IMAGE_H}, tiling, IMAGE_USAGE, 0,
                                         path_export_types(&e->vk, path), out);
    return s;
}

/* The caller's anchor on the image: its release frees the image and its
 * memory, as an application's would, and drops its bridge reference. May
 * run on a driver thread or inside clmem_bridge_finish. */
static void image_owned_release(void *user)
{
    struct run *r = user;
    clmem_bridge *b = r->o.bridge;

    clmem_bridge_vk_image_destroy(b, &r->image);
    r->o.bridge = NULL;
    atomic_fetch_add(&r->o.released, 1);
    clmem_bridge_unref(b);
}

/* The live check an optimal-tiling import needs, on the run's bridge, and
 * its own import finished, so that nothing of it runs inside the sequence. */
static void image_live_check(struct fault_env *e, clmem_bridge *b)
{
    clmem_status s = clmem_bridge_image_live_check(b, e->optimal_format, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk.queue,
                                                   e->vk.queue_family, e->f.queue);
    if (s != CLMEM_OK)
        tap_bail("the live check of optimal-tiling %s passed on the first bridge but returned %s on a run's: %s",
                 clmem_bridge_image_format_name(e->optimal_format), clmem_status_name(s), clmem_error_message());
    if ((s = clmem_bridge_finish(b, SETTLE_NS)) != CLMEM_OK)
        tap_bail("clmem_bridge_finish after the live check returned %s: %s", clmem_status_name(s),
                 clmem_error_message());
}

clmem_keepalive *image_owned_new(struct run *r)
{
    struct fault_env *e = r->e;
    clmem_keepalive *ka;
    clmem_status s;

    memset(&r->o, 0, sizeof r->o);
    r->o.vk = &e->vk;
    atomic_init(&r->o.released, 0);
    if (seq_optimal(r->seq))
        image_live_check(e, r->b);
    s = image_make(e, r->b, r->seq->path, seq_optimal(r->seq), seq_optimal(r->seq) ? e->optimal_format : IMAGE_FORMAT,
                   &r->image);
    if (s != CLMEM_OK)
        tap_bail("clmem_bridge_vk_image_create for %s failed: %s", r->seq->name, clmem_error_message());
    r->o.memory = r->image.memory; /* for the checks on the memory */
    r->o.bridge = clmem_bridge_ref(r->b);
    if (!(ka = clmem_keepalive_new(image_owned_release, r)))
        tap_bail("clmem_keepalive_new failed");
    return ka;
}

/* The bridge's Vulkan buffers and images: one operation, as do_op (t/fault/fault-run.c)
 * hands it over. */
clmem_status fault_do_vk_op(struct run *r, struct op op)
{
    switch (op.kind) {
    case OP_VK_CREATE:
        r->vk_buffer = (VkBuffer)(uintptr_t)1;
        memset(&r->vk_memory, 0xa5, sizeof r->vk_memory);
        return clmem_bridge_vk_buffer_create(r->b, ALLOC_SIZE, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                             0, &r->vk_buffer, &r->vk_memory);
    case OP_VK_DESTROY:
        clmem_bridge_vk_buffer_destroy(r->b, r->vk_buffer, &r->vk_memory);
        r->vk_buffer = VK_NULL_HANDLE;
        memset(&r->vk_memory, 0, sizeof r->vk_memory);
        return CLMEM_OK;
    case OP_VK_IMAGE_CREATE:
        memset(&r->vk_image, 0xa5, sizeof r->vk_image);
        return clmem_bridge_vk_image_create(r->b, IMAGE_FORMAT, (VkExtent2D){IMAGE_W, IMAGE_H},
                                            VK_IMAGE_TILING_LINEAR, IMAGE_USAGE,
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                            0, &r->vk_image);
    case OP_VK_IMAGE_DESTROY:
        clmem_bridge_vk_image_destroy(r->b, &r->vk_image);
        memset(&r->vk_image, 0, sizeof r->vk_image);
        return CLMEM_OK;
    default: tap_bail("%s is not an operation on the bridge's Vulkan buffers and images", op_name(op));
    }
}

/* ------------------------------------------ the driver's trial imports */

/* One import of plane 0 (as image_flags asks) of an image made as the
 * image sequences make theirs, on b; dropped and finished. CLMEM_OK, or
 * the failing call's status, with its message in why. */
clmem_status fault_image_trial(struct fault_env *e, clmem_bridge *b, clmem_bridge_path path, bool optimal,
                               VkFormat format, uint32_t image_flags, char *why, size_t why_len)
{
    clmem_bridge_vk_image image;
    clmem_handle *h = NULL;
    clmem_keepalive *ka;
    atomic_int released;
    clmem_status s = image_make(e, b, path, optimal, format, &image);

    if (s != CLMEM_OK) {
        snprintf(why, why_len, "clmem_bridge_vk_image_create: %s", clmem_error_message());
        return s;
    }
    atomic_init(&released, 0);
    if (!(ka = clmem_keepalive_new(count_release, &released)))
        tap_bail("clmem_keepalive_new failed");
    s = clmem_bridge_import_vk_image(b, &image, 0, path, ka, e->f.queue, CL_MEM_READ_WRITE, image_flags, &h);
    if (s != CLMEM_OK)
        snprintf(why, why_len, "clmem_bridge_import_vk_image: %s", clmem_error_message());
    clmem_keepalive_unref(ka);
    clmem_handle_unref(h);
    if (clmem_bridge_finish(b, SETTLE_NS) != CLMEM_OK || atomic_load(&released) != 1)
        tap_bail("a trial image import on the first bridge was not let go: %s", clmem_error_message());
    clmem_bridge_vk_image_destroy(b, &image);
    return s;
}
