/* SPDX-License-Identifier: MIT */
/* Images: round trips, pixel-exact, of every format on every path the
 * machine has (t/lib/image-fixture.h says how a round trip goes): linear
 * images through their plane buffers and through image views, optimal-
 * tiling images where their live check passed, and described buffers
 * through plane buffers and image views. Widths 33 and 1921 (34 and 1922
 * for the 4:2:0 formats, which need an even extent), so rows are not
 * tightly packed. A variant the machine does not offer is a skip that
 * names why. */
#include "t/lib/image-fixture.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ round trips */

/* What OpenCL reads of plane p through its row pitch before the kernel
 * runs, against what Vulkan uploaded (salt 1): a note for a failing trip's
 * message, saying which direction broke (the upload not seen at the
 * layout's positions, or the kernel's writes not seen by Vulkan). */
static void note_upload_seen(struct subject *s, unsigned p, cl_mem mem, size_t pitch, char *note, size_t len)
{
    uint32_t w = subject_plane_w(s, p), h = subject_plane_h(s, p);
    size_t row = (size_t)w * image_texel_bytes(s->f, p), n = row * h;
    size_t origin[3] = {0, 0, 0}, region[3] = {row, h, 1};
    unsigned char *want = malloc(n), *seen = malloc(n);
    cl_int err;

    note[0] = '\0';
    if (!want || !seen) {
        free(want);
        free(seen);
        return;
    }
    image_fill_plane(s->f, p, w, h, 1, want, row);
    err = clEnqueueReadBufferRect(s->e->f->queue, mem, CL_TRUE, origin, origin, region, pitch, 0, row, 0, seen, 0,
                                  NULL, NULL);
    if (err != CL_SUCCESS) {
        snprintf(note, len, "; reading plane %u before the kernel failed: %d", p, err);
    } else {
        size_t i = 0;
        while (i < n && want[i] == seen[i])
            i++;
        if (i == n)
            snprintf(note, len, "; before the kernel OpenCL read Vulkan's upload of plane %u exactly", p);
        else
            snprintf(note, len,
                     "; before the kernel OpenCL read byte %zu of row %zu of plane %u as 0x%02x where Vulkan "
                     "uploaded 0x%02x",
                     i % row, i / row, p, seen[i], want[i]);
    }
    free(want);
    free(seen);
}

/* For a failing plane: what OpenCL reads of the row's first bytes now
 * (acquired again for the read), so that the message tells a kernel that
 * computed the wrong bytes from writes Vulkan did not see. */
static void note_cl_reads_now(struct subject *s, unsigned p, clmem_handle *h, char *note, size_t len)
{
    unsigned char got[8] = {0};
    size_t n = (size_t)subject_plane_w(s, p) * image_texel_bytes(s->f, p);
    cl_event done = NULL;
    cl_int err;

    n = n < sizeof got ? n : sizeof got;
    if (clmem_bridge_acquire(s->e->b, h, 0, NULL, NULL) != CLMEM_OK) {
        snprintf(note, len, "; acquiring it again failed: %s", clmem_error_message());
        return;
    }
    err = clEnqueueReadBuffer(s->e->f->queue, clmem_handle_mem(h), CL_TRUE, 0, n, got, 0, NULL, NULL);
    if (clmem_bridge_release(s->e->b, h, 0, NULL, &done) == CLMEM_OK && done) {
        clWaitForEvents(1, &done);
        clReleaseEvent(done);
    }
    if (err != CL_SUCCESS)
        snprintf(note, len, "; reading it again through OpenCL failed: %d", err);
    else
        snprintf(note, len, "; OpenCL now reads row 0 as %02x %02x %02x %02x %02x %02x %02x %02x", got[0], got[1],
                 got[2], got[3], got[4], got[5], got[6], got[7]);
}

/* Buffer handles: each plane through its row pitch, in place. One point. */
static void trip_planes(struct subject *s, clmem_bridge_path path, const char *label)
{
    struct image_env *e = s->e;
    clmem_handle *h[2] = {NULL, NULL};
    unsigned char *got = NULL;
    char why[512] = "", seen[2][160] = {"", ""};
    bool good = subject_upload(s, 1, why, sizeof why);
    bool padded = false;
    cl_event done[2] = {NULL, NULL};
    for (unsigned p = 0; p < s->f->planes; p++)
        padded = padded ||
                 s->desc.planes[p].row_pitch > (VkDeviceSize)s->desc.planes[p].width * image_texel_bytes(s->f, p);
    clmem_status st;
    cl_int err;

    for (unsigned p = 0; good && p < s->f->planes; p++) {
        const clmem_bridge_vk_image_plane *pl = &s->desc.planes[p];
        size_t mem_size = 0;
        st = clmem_bridge_import_vk_image(e->b, &s->desc, p, path, s->ka, e->f->queue, CL_MEM_READ_WRITE, 0, &h[p]);
        if (st != CLMEM_OK) {
            snprintf(why, sizeof why, "import of plane %u failed: %s", p, clmem_error_message());
            good = false;
            break;
        }
        clGetMemObjectInfo(clmem_handle_mem(h[p]), CL_MEM_SIZE, sizeof mem_size, &mem_size, NULL);
        if (clmem_handle_row_pitch(h[p]) != pl->row_pitch || mem_size != pl->size) {
            snprintf(why, sizeof why, "plane %u: handle row_pitch %u and buffer size %zu, want %llu and %llu", p,
                     clmem_handle_row_pitch(h[p]), mem_size, (unsigned long long)pl->row_pitch,
                     (unsigned long long)pl->size);
            good = false;
        } else if ((st = clmem_bridge_acquire(e->b, h[p], 0, NULL, NULL)) != CLMEM_OK) {
            snprintf(why, sizeof why, "acquire of plane %u failed: %s", p, clmem_error_message());
            good = false;
        } else if ((note_upload_seen(s, p, clmem_handle_mem(h[p]), clmem_handle_row_pitch(h[p]), seen[p],
                                     sizeof seen[p]),
                    err = run_pitch_kernel(e, s->f, p, clmem_handle_mem(h[p]), clmem_handle_row_pitch(h[p]), pl->width,
                                           pl->height)) != CL_SUCCESS) {
            snprintf(why, sizeof why, "the kernel on plane %u failed to enqueue: %d", p, err);
            good = false;
        } else if ((st = clmem_bridge_release(e->b, h[p], 0, NULL, &done[p])) != CLMEM_OK) {
            snprintf(why, sizeof why, "release of plane %u failed: %s", p, clmem_error_message());
            good = false;
        }
    }
    for (unsigned p = 0; p < 2; p++)
        if (done[p]) {
            if (clWaitForEvents(1, &done[p]) != CL_SUCCESS && good) {
                snprintf(why, sizeof why, "waiting for the release of plane %u failed", p);
                good = false;
            }
            clReleaseEvent(done[p]);
        }
    for (unsigned p = 0; good && p < s->f->planes; p++) {
        got = malloc((size_t)subject_plane_w(s, p) * subject_plane_h(s, p) * image_texel_bytes(s->f, p));
        good = got && subject_download(s, p, got, why, sizeof why);
        if (good && !(good = image_plane_transformed(s->f, p, subject_plane_w(s, p), subject_plane_h(s, p), 1, got,
                                                     why, sizeof why)))
            note_cl_reads_now(s, p, h[p], why + strlen(why), sizeof why - strlen(why));
        free(got);
    }
    if (good && atomic_load(&s->released) != 0) {
        snprintf(why, sizeof why, "the Vulkan objects were freed while handles lived");
        good = false;
    }
    clmem_handle_unref(h[0]);
    clmem_handle_unref(h[1]);
    if (!subject_done(s, why[0] ? why + strlen(why) : why, sizeof why - strlen(why)))
        good = false;
    tap_ok(good, "%s: every texel of %u plane%s through the row pitch%s%s%s%s%s", label, s->f->planes,
           s->f->planes == 1 ? "" : "s", padded ? " (rows padded)" : " (rows tightly packed)", good ? "" : ": ", why,
           good ? "" : seen[0], good ? "" : seen[1]);
}

/* Image handles: src read through an image, dst written through one. One
 * point; a skip, naming why, where the import refuses a view of these
 * planes as CLMEM_ERR_UNSUPPORTED (the pitch or offset rule of the device). */
static void trip_images(struct subject *src, struct subject *dst, clmem_bridge_path path, const char *label)
{
    struct image_env *e = src->e;
    const struct image_fmt *f = src->f;
    clmem_handle *hs[2] = {NULL, NULL}, *hd[2] = {NULL, NULL};
    char why[512] = "", refusal[700] = "";
    bool good = subject_upload(src, 1, why, sizeof why) && subject_upload(dst, 7, why, sizeof why);
    clmem_status st;
    cl_int err;

    for (unsigned p = 0; good && p < f->planes; p++) {
        cl_mem_object_type type = 0;
        if ((st = clmem_bridge_import_vk_image(e->b, &src->desc, p, path, src->ka, e->f->queue, CL_MEM_READ_ONLY,
                                               CLMEM_BRIDGE_IMAGE_AS_IMAGE, &hs[p])) != CLMEM_OK ||
            (st = clmem_bridge_import_vk_image(e->b, &dst->desc, p, path, dst->ka, e->f->queue, CL_MEM_WRITE_ONLY,
                                               CLMEM_BRIDGE_IMAGE_AS_IMAGE, &hd[p])) != CLMEM_OK) {
            if (st == CLMEM_ERR_UNSUPPORTED)
                snprintf(refusal, sizeof refusal, "%s", clmem_error_message());
            snprintf(why, sizeof why, "import of plane %u as an image failed: %s", p, clmem_error_message());
            good = false;
            break;
        }
    clGetMemObjectInfo(clmem_handle_mem(hs[p]), CL_MEM_TYPE, sizeof type, &type, NULL);
        if (type != CL_MEM_OBJECT_IMAGE2D || clmem_handle_row_pitch(hs[p]) != 0) {
            snprintf(why, sizeof why, "plane %u: the handle carries object type 0x%x with row_pitch %u, want an "
                                      "image2d with 0", p, (unsigned)type, clmem_handle_row_pitch(hs[p]));
            good = false;
        } else if ((st = clmem_bridge_acquire(e->b, hs[p], 0, NULL, NULL)) != CLMEM_OK ||
                   (st = clmem_bridge_acquire(e->b, hd[p], 0, NULL, NULL)) != CLMEM_OK) {
            snprintf(why, sizeof why, "acquire of plane %u failed: %s", p, clmem_error_message());
            good = false;
        } else if ((err = run_image_kernel(e, f, clmem_handle_mem(hs[p]), clmem_handle_mem(hd[p]),
                                           subject_plane_w(src, p), subject_plane_h(src, p))) != CL_SUCCESS) {
            snprintf(why, sizeof why, "the image kernel on plane %u failed to enqueue: %d", p, err);
            good = false;
        } else if ((st = clmem_bridge_release(e->b, hs[p], 0, NULL, NULL)) != CLMEM_OK ||
                   (st = clmem_bridge_release(e->b, hd[p], 0, NULL, NULL)) != CLMEM_OK) {
            snprintf(why, sizeof why, "release of plane %u failed: %s", p, clmem_error_message());
            good = false;
        }
    }
    if (clFinish(e->f->queue) != CL_SUCCESS && good) {
        snprintf(why, sizeof why, "clFinish failed");
        good = false;
    }
    for (unsigned p = 0; good && p < f->planes; p++) {
        unsigned char *got =
            malloc((size_t)subject_plane_w(dst, p) * subject_plane_h(dst, p) * image_texel_bytes(f, p));
        good = got && subject_download(dst, p, got, why, sizeof why) &&
               image_plane_transformed(f, p, subject_plane_w(dst, p), subject_plane_h(dst, p), 1, got, why, sizeof why);
        free(got);
    }
    for (unsigned p = 0; p < 2; p++) {
        clmem_handle_unref(hs[p]);
        clmem_handle_unref(hd[p]);
    }
    if (!subject_done(src, why + strlen(why), sizeof why - strlen(why)) ||
        !subject_done(dst, why + strlen(why), sizeof why - strlen(why)))
        good = false;
    if (refusal[0] && !good && strstr(why, "bridge_settle") == NULL && strstr(why, "freed") == NULL)
        tap_skip(refusal, "%s", label);
    else
        tap_ok(good, "%s: every texel read through an image and written through another%s%s", label,
               good ? "" : ": ", why);
}

enum variant { V_PLANES, V_VIEW, V_OPTIMAL, V_DESCRIBED_PLANES, V_DESCRIBED_VIEW };

static void image_round_trip(struct image_env *e, const struct image_fmt *f, uint32_t w, uint32_t h,
                             clmem_bridge_path path, enum variant v)
{
    static const char *names[] = {"linear image, plane buffers", "linear image, image views",
                                  "optimal-tiling image", "described buffer, plane buffers",
                                  "described buffer, image views"};
    char label[256];
    struct subject a, b;
    VkImageTiling tiling = v == V_OPTIMAL ? VK_IMAGE_TILING_OPTIMAL : VK_IMAGE_TILING_LINEAR;
    clmem_status st;

    snprintf(label, sizeof label, "%s %s %ux%u, %s", clmem_bridge_path_name(path), f->name, w, h, names[v]);
    if (v == V_VIEW || v == V_OPTIMAL) {
        st = clmem_bridge_check_image(e->b, f->vk, tiling, path, CL_MEM_READ_ONLY, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        if (st == CLMEM_OK)
            st = clmem_bridge_check_image(e->b, f->vk, tiling, path, CL_MEM_WRITE_ONLY, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        if (st != CLMEM_OK) {
            if (st != CLMEM_ERR_UNSUPPORTED)
                tap_ok(false, "%s: clmem_bridge_check_image returned %s: %s", label, clmem_status_name(st),
                       clmem_error_message());
            else
                tap_skip(clmem_error_message(), "%s", label);
            return;
        }
    }
    if (v == V_DESCRIBED_PLANES || v == V_DESCRIBED_VIEW) {
        subject_described(e, f, w, h, path, 1, v == V_DESCRIBED_VIEW, &a);
        if (v == V_DESCRIBED_PLANES) {
            trip_planes(&a, path, label);
        } else {
            subject_described(e, f, w, h, path, 1, true, &b);
            trip_images(&a, &b, path, label);
        }
        return;
    }
    st = subject_image(e, f, w, h, tiling, path, &a);
    if (st != CLMEM_OK) {
        if (st != CLMEM_ERR_UNSUPPORTED)
            tap_ok(false, "%s: clmem_bridge_vk_image_create returned %s: %s", label, clmem_status_name(st),
                   clmem_error_message());
        else
            tap_skip(clmem_error_message(), "%s", label);
        return;
    }
    for (unsigned p = 0; tiling == VK_IMAGE_TILING_LINEAR && p < f->planes; p++)
        if (a.desc.planes[p].offset % e->base_align != 0) {
            char why[700];
            snprintf(why, sizeof why,
                     "plane %u of the %s images %s makes starts at offset %llu, not a multiple of "
                     "CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes on %s), so it cannot be a sub-buffer",
                     p, f->name, e->vk->device_name, (unsigned long long)a.desc.planes[p].offset, e->base_align,
                     e->device);
            clmem_keepalive_unref(a.ka);
            tap_skip(why, "%s", label);
            return;
        }
    if (v == V_PLANES) {
        trip_planes(&a, path, label);
        return;
    }
    st = subject_image(e, f, w, h, tiling, path, &b);
    if (st != CLMEM_OK) {
        tap_ok(false, "%s: the second image: %s", label, clmem_error_message());
        clmem_keepalive_unref(a.ka);
        return;
    }
    trip_images(&a, &b, path, label);
}

/* The live checks an optimal-tiling import needs, on this bridge, so that
 * the formats that pass them make their round trips
 * (t/bridge/bridge-image-optimal checks the answers themselves). */
static void run_live_checks(struct image_env *e)
{
    if (clmem_bridge_check_path(e->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK)
        return;
    for (unsigned i = 0; i < IMAGE_FMT_COUNT; i++)
        if (image_fmts[i].optimal)
            clmem_bridge_image_live_check(e->b, image_fmts[i].vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                          e->vk->queue_family, e->f->queue);
}

static void round_trips(struct image_env *e, clmem_bridge_path path)
{
    static const struct {
        uint32_t w, h;
    } sizes[] = {{33, 7}, {1921, 3}};

    for (unsigned i = 0; i < IMAGE_FMT_COUNT; i++)
        for (unsigned z = 0; z < 2; z++) {
            /* 4:2:0 needs an even extent: 34x8 and 1922x4 */
            uint32_t w = sizes[z].w + (image_fmts[i].planes > 1), h = sizes[z].h + (image_fmts[i].planes > 1);
            for (int v = V_PLANES; v <= V_DESCRIBED_VIEW; v++)
                image_round_trip(e, &image_fmts[i], w, h, path, (enum variant)v);
        }
}

int main(void)
{
    struct image_env e;

    image_env_open(&e, "bridge-image-trips");
    run_live_checks(&e);
    image_for_each_path(&e, "image round trips", round_trips);
    image_env_close(&e);
    return tap_done();
}
