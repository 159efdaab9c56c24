/* SPDX-License-Identifier: MIT */
/* Images: bad input (t/lib/image-fixture.h says how the image tests work).
 * Misaligned planes, planes past the format's, formats the bridge does not
 * share, the view's pitch rule, optimal tiling asked for as a buffer or on
 * the host-mapped path, descriptions that do not fit the format, unknown
 * flags and NULL: each with its documented status and a message that
 * names the fault, and nothing leaked (no reference on the caller's
 * anchor, no import, no fd). */
#include "t/lib/image-fixture.h"
#include "t/lib/fd-count.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ bad input */

static atomic_int counted_releases;
static void count_release(void *user)
{
    (void)user;
    atomic_fetch_add(&counted_releases, 1);
}

static void check_bad_input(struct image_env *e, clmem_bridge_path path)
{
    const struct image_fmt *rgba8 = image_fmt_of(VK_FORMAT_R8G8B8A8_UNORM);
    const struct image_fmt *nv12 = image_fmt_of(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM);
    clmem_keepalive *counted = clmem_keepalive_new(count_release, NULL);
    int fds_before = fd_count();
    clmem_handle *out = NULL;
    struct subject img, buf;
    clmem_bridge_vk_image d;
    char text[64];
    clmem_status st;

    atomic_store(&counted_releases, 0);
    subject_described(e, rgba8, 33, 7, path, 1, false, &buf);
    if (subject_image(e, rgba8, 33, 7, VK_IMAGE_TILING_LINEAR, path, &img) != CLMEM_OK)
        img = buf, img.ka = clmem_keepalive_ref(buf.ka); /* no linear RGBA8 image: the described one stands in */

    /* misaligned plane offset */
    if (e->base_align > 1) {
        d = img.desc;
        d.planes[0].offset += e->base_align / 2;
        /* Room for the moved plane, so that its offset is the one fault: a
         * range past the allocation would be reported first
         * (clmem.h, "Errors and the order of checks"). Refused before any import. */
        d.memory.allocation_size += e->base_align;
        snprintf(text, sizeof text, "offset %llu", (unsigned long long)d.planes[0].offset);
        st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, text, "CL_DEVICE_MEM_BASE_ADDR_ALIGN",
                       "a plane offset that is not a multiple of the sub-buffer alignment");
        clmem_handle_unref(out), out = NULL;
    } else {
        tap_skip("CL_DEVICE_MEM_BASE_ADDR_ALIGN is 1 byte: no offset is misaligned",
                 "bad input: a misaligned plane offset");
    }
    {
        struct subject n;
        subject_described(e, nv12, 34, 8, path, 1, false, &n);
        d = n.desc;
        d.planes[1].offset += e->base_align > 1 ? e->base_align / 2 : 0;
        snprintf(text, sizeof text, "offset %llu", (unsigned long long)d.planes[1].offset);
        st = clmem_bridge_import_vk_image(e->b, &d, 1, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        if (e->base_align > 1)
            expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, text, "plane 1",
                           "NV12 whose CbCr plane starts at a misaligned offset");
        clmem_handle_unref(out), out = NULL;
        /* plane index past the planes */
        st = clmem_bridge_import_vk_image(e->b, &n.desc, 2, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "clmem_bridge_import_vk_image: plane 2 is past the 2 planes",
                       NULL, "plane 2 of NV12");
        clmem_handle_unref(out), out = NULL;
        tap_is_int(clmem_bridge_image_plane_format(nv12->vk, 2, NULL, NULL), CLMEM_ERR_INVALID_VALUE,
                   "bad input: clmem_bridge_image_plane_format(NV12, plane 2) -> CLMEM_ERR_INVALID_VALUE");
        /* The plane is an index from 0, not VK_IMAGE_ASPECT_PLANE_n_BIT;
         * a one-plane format (an FFmpeg plane's R8G8) has plane 0 only. */
        {
            cl_image_format cf = {0, 0};
            uint32_t tb = 0;
            clmem_status p1 = clmem_bridge_image_plane_format(nv12->vk, 1, &cf, &tb);
            tap_ok(p1 == CLMEM_OK && cf.image_channel_order == CL_RG && cf.image_channel_data_type == CL_UNORM_INT8 &&
                       tb == 2,
                   "plane index: clmem_bridge_image_plane_format(NV12, 1) is the CbCr plane: CL_RG, CL_UNORM_INT8, "
                   "2 bytes a texel (%s)",
                   p1 ? clmem_error_message() : "ok");
            tap_is_int(clmem_bridge_image_plane_format(nv12->vk, VK_IMAGE_ASPECT_PLANE_1_BIT, NULL, NULL),
                       CLMEM_ERR_INVALID_VALUE,
                       "plane index: VK_IMAGE_ASPECT_PLANE_1_BIT is no plane index -> CLMEM_ERR_INVALID_VALUE");
            tap_is_int(clmem_bridge_image_plane_format(VK_FORMAT_R8G8_UNORM, 1, NULL, NULL), CLMEM_ERR_INVALID_VALUE,
                       "plane index: a one-plane format (R8G8) has no plane 1 -> CLMEM_ERR_INVALID_VALUE");
        }
        /* the optimal import of a two-plane format */
        d = n.desc;
        d.tiling = VK_IMAGE_TILING_OPTIMAL;
        st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE,
                                          CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "offers no optimal-tiling import", NULL, "optimal-tiling NV12");
        clmem_handle_unref(out), out = NULL;
        clmem_keepalive_unref(n.ka);
    }
    st = clmem_bridge_import_vk_image(e->b, &img.desc, 1, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "plane 1 is past the 1 plane", NULL, "plane 1 of RGBA8");
    clmem_handle_unref(out), out = NULL;

    /* unsupported format */
    {
        clmem_bridge_vk_image made;
        st = clmem_bridge_vk_image_create(e->b, VK_FORMAT_R8G8B8_UNORM, (VkExtent2D){16, 16}, VK_IMAGE_TILING_LINEAR,
                                          VK_IMAGE_USAGE_TRANSFER_SRC_BIT, path_memory_props(path), 0, &made);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, made.image ? (clmem_handle *)1 : NULL, "VkFormat 23",
                       "VK_FORMAT_G8_B8R8_2PLANE_420_UNORM", "clmem_bridge_vk_image_create of VK_FORMAT_R8G8B8_UNORM");
        d = buf.desc;
        d.format = VK_FORMAT_R8G8B8_UNORM;
        st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "VkFormat 23", NULL, "importing a VK_FORMAT_R8G8B8_UNORM image");
        clmem_handle_unref(out), out = NULL;
        st = clmem_bridge_check_image(e->b, VK_FORMAT_BC1_RGB_UNORM_BLOCK, VK_IMAGE_TILING_LINEAR, path, 0, 0);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "does not share", NULL, "clmem_bridge_check_image of BC1");
    }

    /* the view's pitch rule */
    if (clmem_bridge_caps(e->b) & CLMEM_BRIDGE_CAP_IMAGE_VIEW) {
        if (e->pitch_align > 1) {
            struct subject bad;
            /* 35 texels a row: odd, so a multiple of no alignment of 2 texels or more */
            subject_described(e, rgba8, 33, 7, path, 8, false, &bad);
            snprintf(text, sizeof text, "row pitch is %llu bytes", (unsigned long long)bad.desc.planes[0].row_pitch);
            st = clmem_bridge_import_vk_image(e->b, &bad.desc, 0, path, counted, e->f->queue, CL_MEM_READ_ONLY,
                                              CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
            expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, text, "CL_DEVICE_IMAGE_PITCH_ALIGNMENT",
                           "an image view of a plane whose pitch breaks the view's alignment");
            clmem_handle_unref(out), out = NULL;
            st = clmem_bridge_import_vk_image(e->b, &bad.desc, 0, path, counted, e->f->queue, CL_MEM_READ_ONLY, 0,
                                              &out);
            tap_ok(st == CLMEM_OK && clmem_handle_row_pitch(out) == bad.desc.planes[0].row_pitch,
                   "bad input: ...while the same plane as a buffer handle works at that pitch (%s)",
                   st ? clmem_error_message() : "ok");
            clmem_handle_unref(out), out = NULL;
            clmem_keepalive_unref(bad.ka);
        } else {
            tap_skip("CL_DEVICE_IMAGE_PITCH_ALIGNMENT is at most 1 texel: every pitch fits",
                     "bad input: a pitch that breaks the view's alignment");
            tap_skip("CL_DEVICE_IMAGE_PITCH_ALIGNMENT is at most 1 texel: every pitch fits",
                     "bad input: the same plane as a buffer");
        }
    } else {
        st = clmem_bridge_import_vk_image(e->b, &buf.desc, 0, path, counted, e->f->queue, CL_MEM_READ_ONLY,
                                          CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
        expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "2D images from buffers", "CL_DEVICE_IMAGE_PITCH_ALIGNMENT",
                       "an image view where the device makes no images from buffers");
        clmem_handle_unref(out), out = NULL;
        tap_skip("no image2d views on this device (the point above), so no pitch can break their alignment",
                 "bad input: a pitch that breaks the view's alignment");
    }

    /* optimal tiling asked for as a buffer; on the host-mapped path at all
     * (the fd paths' answers are check_optimal_offer's) */
    {
        struct subject opt;
        clmem_status made = subject_image(e, rgba8, 33, 7, VK_IMAGE_TILING_OPTIMAL, path, &opt);
        if (made == CLMEM_OK) {
            st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0,
                                              &out);
            expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "CLMEM_BRIDGE_IMAGE_AS_IMAGE", NULL,
                           "an optimal-tiling image without CLMEM_BRIDGE_IMAGE_AS_IMAGE");
            clmem_handle_unref(out), out = NULL;
            if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
                st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE,
                                                  CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
                expect_refused(st, CLMEM_ERR_UNSUPPORTED, out, "fd paths only", NULL,
                               "an optimal-tiling image on the host-mapped path");
                clmem_handle_unref(out), out = NULL;
            }
            clmem_keepalive_unref(opt.ka);
        } else {
            tap_skip(clmem_error_message(), "bad input: optimal-tiling RGBA8 images (Vulkan makes none here)");
            if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED)
                tap_skip("no optimal-tiling RGBA8 image", "bad input: an optimal-tiling image on the host-mapped path");
        }
    }

    /* description that does not fit the format */
    d = buf.desc;
    d.planes[0].size = d.planes[0].row_pitch * (d.planes[0].height - 1);
    st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "less than the", NULL, "a plane size smaller than its rows");
    clmem_handle_unref(out), out = NULL;
    d = buf.desc;
    d.planes[0].row_pitch = 33 * 4 - 4;
    st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "row pitch 128", NULL, "a row pitch shorter than a row");
    clmem_handle_unref(out), out = NULL;
    st = clmem_bridge_import_vk_image(e->b, &buf.desc, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 1u << 5,
                                      &out);
    expect_refused(st, CLMEM_ERR_INVALID_VALUE, out, "unknown bits 0x20", NULL, "unknown image_flags");
    clmem_handle_unref(out), out = NULL;
    st = clmem_bridge_import_vk_image(e->b, NULL, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    expect_refused(st, CLMEM_ERR_NULL_POINTER, out, "image", NULL, "a NULL image");

    clmem_keepalive_unref(img.ka);
    clmem_keepalive_unref(buf.ka);
    clmem_keepalive_unref(counted);
    tap_is_int(atomic_load(&counted_releases), 1,
               "bad input: the refused imports took no reference on the caller's anchor (released once, by its owner)");
    tap_is_int(clmem_bridge_finish(e->b, 0), CLMEM_OK, "bad input: no import of the refused calls is alive");
    tap_is_int(fd_count(), fds_before, "bad input: no file descriptor leaked");
}

int main(void)
{
    struct image_env e;

    image_env_open(&e, "bridge-image-errors");
    image_for_each_path(&e, "bad image input", check_bad_input);
    image_env_close(&e);
    return tap_done();
}
