/* SPDX-License-Identifier: MIT */
/* Images: the formats. The bridge's format table against the test's own
 * (t/lib/image-fixture.h says how the image tests work); the image kernel on
 * plain OpenCL images, exact for every format the device has, so that a
 * failing view or optimal-tiling round trip is the sharing's; and exported
 * images as dedicated allocations. */
#include "t/lib/image-fixture.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the format table */

static void check_format_table(void)
{
    uint32_t n = 0;
    const VkFormat *list = clmem_bridge_image_formats(&n);
    bool good = n == IMAGE_FMT_COUNT;
    char why[256] = "";

    for (unsigned i = 0; good && i < IMAGE_FMT_COUNT; i++) {
        const struct image_fmt *f = &image_fmts[i];
        bool listed = false;
        for (uint32_t j = 0; j < n; j++)
            listed = listed || list[j] == f->vk;
        for (unsigned p = 0; good && p < f->planes; p++) {
            uint32_t tb = 0;
            if (clmem_bridge_image_plane_format(f->vk, p, NULL, &tb) != CLMEM_OK || tb != image_texel_bytes(f, p)) {
                snprintf(why, sizeof why, "%s plane %u: texel bytes %u, want %u", f->name, p, tb,
                         image_texel_bytes(f, p));
                good = false;
            }
        }
        if (good && (!listed || !clmem_bridge_image_format_name(f->vk))) {
            snprintf(why, sizeof why, "%s is not listed or has no name", f->name);
            good = false;
        }
    }
    tap_ok(good, "the bridge's format table lists the %d formats with their planes' texel sizes (%u listed)%s%s",
           IMAGE_FMT_COUNT, n, good ? "" : ": ", why);
}

/* ------------------------------------------------------------ the image kernel alone */

/* The image kernel on plain OpenCL images (no bridge): its arithmetic is
 * exact for every format the device has, so that a failure of a view or
 * optimal round trip (which run on GPUs only) is the sharing's. */
static void check_image_kernel(struct image_env *e)
{
    for (unsigned i = 0; i < IMAGE_FMT_COUNT; i++) {
        const struct image_fmt *f = &image_fmts[i];
        for (unsigned p = 0; p < f->planes; p++) {
            cl_image_format cf;
            uint32_t tb = 0, w = 37, h = 5;
            cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = h};
            size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
            unsigned char *in = malloc((size_t)w * h * 16), *out = malloc((size_t)w * h * 16);
            char why[256] = "";
            cl_int e1 = CL_SUCCESS, e2 = CL_SUCCESS, err;
            cl_mem src, dst;
            bool good;

            clmem_bridge_image_plane_format(f->vk, p, &cf, &tb);
            src = clCreateImage(e->f->context, CL_MEM_READ_ONLY, &cf, &desc, NULL, &e1);
            dst = clCreateImage(e->f->context, CL_MEM_WRITE_ONLY, &cf, &desc, NULL, &e2);
            if (e1 != CL_SUCCESS || e2 != CL_SUCCESS) {
                char skip[160];
                snprintf(skip, sizeof skip, "%s has no 2D images of plane %u of %s (clCreateImage: %d, %d)",
                         e->device, p, f->name, e1, e2);
                tap_skip(skip, "the image kernel on plain OpenCL images of %s plane %u", f->name, p);
            } else {
                image_fill_plane(f, p, w, h, 1, in, (size_t)w * tb);
                err = clEnqueueWriteImage(e->f->queue, src, CL_TRUE, origin, region, 0, 0, in, 0, NULL, NULL);
                if (err == CL_SUCCESS)
                    err = run_image_kernel(e, f, src, dst, w, h);
                if (err == CL_SUCCESS)
                    err = clEnqueueReadImage(e->f->queue, dst, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL);
                good = err == CL_SUCCESS && image_plane_transformed(f, p, w, h, 1, out, why, sizeof why);
                tap_ok(good, "the image kernel transforms plain OpenCL images of %s plane %u exactly%s%s (%d)",
                       f->name, p, good ? "" : ": ", why, err);
            }
            if (e1 == CL_SUCCESS)
                clReleaseMemObject(src);
            if (e2 == CL_SUCCESS)
                clReleaseMemObject(dst);
            free(in);
            free(out);
        }
    }
}

/* ------------------------------------------------------------ allocations */


/* Exported images get a dedicated allocation, whatever Vulkan prefers: on
 * NVIDIA 580 a linear RGBA8 image in non-dedicated exported memory read
 * back through Vulkan wrong what OpenCL wrote (docs/driver-notes.md). The
 * fd-path round trips (t/bridge/bridge-image-trips) catch that only on such a
 * GPU; this catches a change of the allocation anywhere. */
static void check_exported_dedicated(struct image_env *e)
{
    clmem_bridge_vk_image img;
    clmem_status st;

    if (!e->vk->has_memory_fd) {
        tap_skip("the Vulkan device has no VK_KHR_external_memory_fd", "exported images are dedicated allocations");
        return;
    }
    for (int linear = 0; linear <= 1; linear++) {
        VkImageTiling tiling = linear ? VK_IMAGE_TILING_LINEAR : VK_IMAGE_TILING_OPTIMAL;
        st = clmem_bridge_vk_image_create(e->b, VK_FORMAT_R8G8B8A8_UNORM, (VkExtent2D){33, 7}, tiling,
                                          VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                          VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, &img);
        if (st == CLMEM_ERR_UNSUPPORTED) {
            tap_skip(clmem_error_message(), "an exported %s RGBA8 image is a dedicated allocation",
                     linear ? "linear" : "optimal-tiling");
            continue;
        }
        tap_ok(st == CLMEM_OK && img.memory.dedicated == VK_TRUE,
               "an exported %s RGBA8 image is a dedicated allocation (%s; dedicated %u)",
               linear ? "linear" : "optimal-tiling", st ? clmem_error_message() : "ok", (unsigned)img.memory.dedicated);
        clmem_bridge_vk_image_destroy(e->b, &img);
    }
}

int main(void)
{
    struct image_env e;

    image_env_open(&e, "bridge-image-formats");
    check_format_table();
    if (e.image_k)
        check_image_kernel(&e);
    else
        tap_skip("CL_DEVICE_IMAGE_SUPPORT is false", "the image kernel on plain OpenCL images");
    check_exported_dedicated(&e);
    image_env_close(&e);
    return tap_done();
}
