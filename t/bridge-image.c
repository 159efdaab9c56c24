/* Images through the bridge (issue 9): every format, pixel-exact, on every
 * path the machine has.
 *
 * A round trip: Vulkan writes a pattern that differs by row, column,
 * component and plane (vkCmdCopyBufferToImage); OpenCL transforms every
 * texel, reading through the plane handle's row pitch (or through an image
 * view / an optimal-tiling image, where those are offered); Vulkan reads the
 * result back (vkCmdCopyImageToBuffer) and every texel is compared. Widths
 * 33 and 1921 (34 and 1922 for the 4:2:0 formats, which need an even
 * extent), so rows are not tightly packed. The same round trips also run on
 * memory laid out as an image by hand in a VkBuffer (rows padded on
 * purpose, padding checked untouched), which is how an application shares
 * a decoder's NV12 frame, and which runs the two-plane formats where Vulkan
 * makes no such images (lavapipe).
 *
 * Then: plane handles behave like buffer handles (cache, handle_for_queue,
 * acquire/release rules, the import kept alive, the teardown order); bad
 * input, each with its documented status and nothing leaked; and 0
 * validation-layer errors.
 *
 * The test's format facts are its own table below, not the library's: the
 * library's table is what is being checked. */
#include "bridge-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ formats */

enum kind { K_U8 = 0, K_U16 = 1, K_10X6 = 2, K_HALF = 3, K_FLOAT = 4 }; /* the kernels' numbering */

struct fmt {
    VkFormat vk;
    const char *name;
    unsigned planes;
    enum kind kind;
    unsigned comp_bytes;
    unsigned comps[2];
    unsigned shift[2]; /* plane extent = image extent >> shift */
    bool optimal;      /* offered as an optimal-tiling import (after the live check) */
};

static const struct fmt fmts[] = {
    {VK_FORMAT_R8_UNORM, "R8", 1, K_U8, 1, {1, 0}, {0, 0}, true},
    {VK_FORMAT_R8G8_UNORM, "RG8", 1, K_U8, 1, {2, 0}, {0, 0}, true},
    {VK_FORMAT_R16_UNORM, "R16", 1, K_U16, 2, {1, 0}, {0, 0}, true},
    {VK_FORMAT_R8G8B8A8_UNORM, "RGBA8", 1, K_U8, 1, {4, 0}, {0, 0}, true},
    {VK_FORMAT_B8G8R8A8_UNORM, "BGRA8", 1, K_U8, 1, {4, 0}, {0, 0}, true},
    {VK_FORMAT_R32_SFLOAT, "R32F", 1, K_FLOAT, 4, {1, 0}, {0, 0}, true},
    {VK_FORMAT_R16G16B16A16_SFLOAT, "RGBA16F", 1, K_HALF, 2, {4, 0}, {0, 0}, true},
    {VK_FORMAT_R32G32B32A32_SFLOAT, "RGBA32F", 1, K_FLOAT, 4, {4, 0}, {0, 0}, true},
    {VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, "NV12", 2, K_U8, 1, {1, 2}, {0, 1}, false},
    {VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16, "P010", 2, K_10X6, 2, {1, 2}, {0, 1}, false},
    {VK_FORMAT_R16G16_UNORM, "RG16", 1, K_U16, 2, {2, 0}, {0, 0}, true},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

static unsigned texel_bytes(const struct fmt *f, unsigned p)
{
    return f->comps[p] * f->comp_bytes;
}

static VkImageAspectFlagBits plane_aspect(const struct fmt *f, unsigned p)
{
    return f->planes == 1 ? VK_IMAGE_ASPECT_COLOR_BIT : p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                               : VK_IMAGE_ASPECT_PLANE_1_BIT;
}

/* The raw bits of component c of texel (x, y) of plane p: differs by all of
 * them and by salt, and is a valid value of its type (floats in [1, 2)). */
static uint32_t pattern(enum kind k, uint32_t x, uint32_t y, unsigned c, unsigned p, uint32_t salt)
{
    uint32_t v = x * 3u + y * 101u + c * 37u + p * 71u + salt * 13u + 5u;
    switch (k) {
    case K_U8: return v & 0xffu;
    case K_U16: return (v * 251u) & 0xffffu;
    case K_10X6: return (v & 0x3ffu) << 6;
    case K_HALF: return 0x3c00u | (v & 0x3ffu);
    case K_FLOAT: return 0x3f800000u | ((v * 40503u) & 0x7fffffu);
    }
    return 0;
}

/* What the kernels make of it (the same arithmetic as theirs). */
static uint32_t transform(enum kind k, uint32_t b)
{
    switch (k) {
    case K_U8: return (b * 3u + 1u) & 0xffu;
    case K_U16: return (b * 3u + 1u) & 0xffffu;
    case K_10X6: return (((b >> 6) * 3u + 1u) & 0x3ffu) << 6;
    case K_HALF: return 0x3c00u | (((b & 0x3ffu) * 3u + 1u) & 0x3ffu);
    case K_FLOAT: return 0x3f800000u | (((b & 0x7fffffu) * 3u + 1u) & 0x7fffffu);
    }
    return 0;
}

static void put_component(unsigned char *at, unsigned bytes, uint32_t v)
{
    if (bytes == 1) {
        *at = (unsigned char)v;
    } else if (bytes == 2) {
        uint16_t w = (uint16_t)v;
        memcpy(at, &w, 2);
    } else {
        memcpy(at, &v, 4);
    }
}

static uint32_t get_component(const unsigned char *at, unsigned bytes)
{
    uint16_t w;
    uint32_t v;
    if (bytes == 1)
        return *at;
    if (bytes == 2) {
        memcpy(&w, at, 2);
        return w;
    }
    memcpy(&v, at, 4);
    return v;
}

/* Plane p's texels, tightly packed, of the pattern (salt). */
static void fill_plane(const struct fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt, unsigned char *out,
                       size_t row_bytes)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (unsigned c = 0; c < f->comps[p]; c++)
                put_component(out + y * row_bytes + ((size_t)x * f->comps[p] + c) * f->comp_bytes, f->comp_bytes,
                              pattern(f->kind, x, y, c, p, salt));
}

/* Every texel of plane p (tight) is transform(pattern(salt)); else why. */
static bool plane_transformed(const struct fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt,
                              const unsigned char *got, char *why, size_t why_len)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (unsigned c = 0; c < f->comps[p]; c++) {
                uint32_t v = get_component(got + (((size_t)y * w + x) * f->comps[p] + c) * f->comp_bytes,
                                           f->comp_bytes);
                uint32_t want = transform(f->kind, pattern(f->kind, x, y, c, p, salt));
                if (v != want) {
                    snprintf(why, why_len, "plane %u texel (%u, %u) component %u is 0x%x, want 0x%x (pattern 0x%x)",
                             p, x, y, c, v, want, pattern(f->kind, x, y, c, p, salt));
                    return false;
                }
            }
    return true;
}

/* ------------------------------------------------------------ kernels */

/* In place through the row pitch: component i of row y of the plane. */
static const char pitch_source[] =
    "__kernel void plane_xform(__global uchar *base, uint pitch, uint kind) {\n"
    "    size_t i = get_global_id(0), y = get_global_id(1);\n"
    "    __global uchar *row = base + y * pitch;\n"
    "    if (kind == 0) {\n"
    "        row[i] = (uchar)(row[i] * 3u + 1u);\n"
    "    } else if (kind <= 3) {\n"
    "        __global ushort *r = (__global ushort *)row;\n"
    "        uint b = r[i];\n"
    "        if (kind == 1) b = (b * 3u + 1u) & 0xffffu;\n"
    "        else if (kind == 2) b = (((b >> 6) * 3u + 1u) & 0x3ffu) << 6;\n"
    "        else b = 0x3c00u | (((b & 0x3ffu) * 3u + 1u) & 0x3ffu);\n"
    "        r[i] = (ushort)b;\n"
    "    } else {\n"
    "        __global uint *r = (__global uint *)row;\n"
    "        uint b = r[i];\n"
    "        r[i] = 0x3f800000u | (((b & 0x7fffffu) * 3u + 1u) & 0x7fffffu);\n"
    "    }\n"
    "}\n";

/* Image to image, through read_imagef / write_imagef: the same transform,
 * done on the values (exact for these formats and values). */
static const char image_source[] =
    "float tr(float f, uint kind) {\n"
    "    uint v;\n"
    "    if (kind == 0) { v = (convert_uint_sat_rte(f * 255.0f) * 3u + 1u) & 0xffu; return (float)v / 255.0f; }\n"
    "    if (kind == 1) { v = (convert_uint_sat_rte(f * 65535.0f) * 3u + 1u) & 0xffffu; return (float)v / 65535.0f; }\n"
    "    if (kind == 2) {\n"
    "        v = (((convert_uint_sat_rte(f * 65535.0f) >> 6) * 3u + 1u) & 0x3ffu) << 6;\n"
    "        return (float)v / 65535.0f;\n"
    "    }\n"
    "    if (kind == 3) { v = (convert_uint_sat_rte((f - 1.0f) * 1024.0f) * 3u + 1u) & 0x3ffu; return 1.0f + (float)v / 1024.0f; }\n"
    "    v = (convert_uint_sat_rte((f - 1.0f) * 8388608.0f) * 3u + 1u) & 0x7fffffu;\n"
    "    return 1.0f + (float)v / 8388608.0f;\n"
    "}\n"
    "__kernel void image_xform(__read_only image2d_t src, __write_only image2d_t dst, uint kind) {\n"
    "    int2 p = (int2)((int)get_global_id(0), (int)get_global_id(1));\n"
    "    float4 v = read_imagef(src, p);\n"
    "    write_imagef(dst, p, (float4)(tr(v.x, kind), tr(v.y, kind), tr(v.z, kind), tr(v.w, kind)));\n"
    "}\n";

/* ------------------------------------------------------------ environment */

struct env {
    struct vkctx *vk;
    struct cl_fixture *f;
    clmem_bridge *b;
    cl_kernel pitch_k;
    cl_kernel image_k; /* NULL without image support */
    cl_uint base_align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, bytes */
    cl_uint pitch_align; /* CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels */
    const char *device;
};

static cl_int run_pitch(struct env *e, const struct fmt *f, unsigned p, cl_mem mem, uint32_t pitch, uint32_t w,
                        uint32_t h)
{
    cl_uint kind = f->kind;
    size_t global[2] = {(size_t)w * f->comps[p], h};
    cl_int err = clSetKernelArg(e->pitch_k, 0, sizeof mem, &mem);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->pitch_k, 1, sizeof pitch, &pitch);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->pitch_k, 2, sizeof kind, &kind);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(e->f->queue, e->pitch_k, 2, NULL, global, NULL, 0, NULL, NULL);
    return err;
}

static cl_int run_image(struct env *e, const struct fmt *f, cl_mem src, cl_mem dst, uint32_t w, uint32_t h)
{
    cl_uint kind = f->kind;
    size_t global[2] = {w, h};
    cl_int err = clSetKernelArg(e->image_k, 0, sizeof src, &src);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->image_k, 1, sizeof dst, &dst);
    if (err == CL_SUCCESS)
        err = clSetKernelArg(e->image_k, 2, sizeof kind, &kind);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(e->f->queue, e->image_k, 2, NULL, global, NULL, 0, NULL, NULL);
    return err;
}

/* ------------------------------------------------------------ subjects */

/* What is shared: a VkImage from clmem_bridge_vk_image_create, or a VkBuffer
 * laid out as an image by hand (described). Its Vulkan objects belong to
 * an anchor, whose release frees them, as an application's would. */
struct subject {
    struct env *e;
    const struct fmt *f;
    uint32_t width, height;
    bool described;
    clmem_bridge_vk_image desc;
    VkBuffer buffer;        /* described */
    VkImageLayout layout;   /* images: the layout it is in */
    clmem_keepalive *ka;    /* the caller's reference */
    atomic_int released;
    clmem_bridge *bridge;   /* for the release */
};

static void subject_release(void *user)
{
    struct subject *s = user;
    if (s->described)
        clmem_bridge_vk_buffer_destroy(s->bridge, s->buffer, &s->desc.memory);
    else
        clmem_bridge_vk_image_destroy(s->bridge, &s->desc);
    atomic_fetch_add(&s->released, 1);
}

static uint32_t plane_w(const struct subject *s, unsigned p)
{
    return s->width >> s->f->shift[p];
}

static uint32_t plane_h(const struct subject *s, unsigned p)
{
    return s->height >> s->f->shift[p];
}

static void subject_anchor(struct subject *s)
{
    atomic_init(&s->released, 0);
    s->bridge = s->e->b;
    s->ka = clmem_keepalive_new(subject_release, s);
    if (!s->ka)
        tap_bail("clmem_keepalive_new failed");
}

/* A VkImage: CLMEM_OK, or the status of clmem_bridge_vk_image_create
 * (CLMEM_ERR_UNSUPPORTED: Vulkan makes no such image; the message says). */
static clmem_status subject_image(struct env *e, const struct fmt *f, uint32_t w, uint32_t h, VkImageTiling tiling,
                                  clmem_bridge_path path, struct subject *s)
{
    clmem_status st;

    memset(s, 0, sizeof *s);
    s->e = e;
    s->f = f;
    s->width = w;
    s->height = h;
    s->layout = VK_IMAGE_LAYOUT_UNDEFINED;
    st = clmem_bridge_vk_image_create(e->b, f->vk, (VkExtent2D){w, h}, tiling,
                                      VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                      path_memory_props(path), path_export_types(e->vk, path), &s->desc);
    if (st == CLMEM_OK)
        subject_anchor(s);
    return st;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

/* A VkBuffer laid out as an image: each plane at a multiple of the
 * sub-buffer alignment (plane 0 not at 0, so that it is a sub-buffer), rows
 * `pitch_extra` bytes longer than the texels and then rounded up to
 * pitch_unit bytes (the view's pitch rule when that is the device's). */
static void subject_described(struct env *e, const struct fmt *f, uint32_t w, uint32_t h, clmem_bridge_path path,
                              uint32_t pitch_extra, bool view_aligned, struct subject *s)
{
    uint64_t at = e->base_align, align = e->base_align > 64 ? e->base_align : 64;
    VkDeviceSize size;
    clmem_status st;

    memset(s, 0, sizeof *s);
    s->e = e;
    s->f = f;
    s->width = w;
    s->height = h;
    s->described = true;
    s->desc.format = f->vk;
    s->desc.extent = (VkExtent2D){w, h};
    s->desc.tiling = VK_IMAGE_TILING_LINEAR;
    s->desc.plane_count = f->planes;
    for (unsigned p = 0; p < f->planes; p++) {
        clmem_bridge_vk_image_plane *pl = &s->desc.planes[p];
        uint64_t unit = view_aligned && e->pitch_align ? (uint64_t)e->pitch_align * texel_bytes(f, p) : texel_bytes(f, p);
        pl->width = plane_w(s, p);
        pl->height = plane_h(s, p);
        pl->row_pitch = round_up((uint64_t)pl->width * texel_bytes(f, p) + pitch_extra, unit);
        pl->offset = round_up(at, align);
        pl->size = pl->row_pitch * pl->height;
        at = pl->offset + pl->size + 1;
    }
    size = round_up(at + e->base_align, 256);
    st = clmem_bridge_vk_buffer_create(e->b, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                       path_memory_props(path), path_export_types(e->vk, path), &s->buffer,
                                       &s->desc.memory);
    if (st != CLMEM_OK)
        tap_bail("clmem_bridge_vk_buffer_create(%llu) for a described %s failed: %s", (unsigned long long)size,
                 f->name, clmem_error_message());
    s->desc.size = s->desc.memory.allocation_size;
    subject_anchor(s);
}

/* Host-visible staging, mapped. */
struct staging {
    struct vk_owned o;
    clmem_keepalive *ka;
    unsigned char *data;
};

static bool staging_open(struct env *e, VkDeviceSize size, struct staging *st)
{
    st->ka = vk_owned_new(&st->o, e->b, e->vk, size,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    st->data = NULL;
    return vkMapMemory(e->vk->device, st->o.memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&st->data) == VK_SUCCESS;
}

static void staging_close(struct env *e, struct staging *st)
{
    if (st->data)
        vkUnmapMemory(e->vk->device, st->o.memory.memory);
    clmem_keepalive_unref(st->ka); /* never imported: frees it here */
}

#define PADDING 0xA5

/* Vulkan writes the pattern (salt) into every plane. */
static bool subject_upload(struct subject *s, uint32_t salt, char *why, size_t why_len)
{
    struct env *e = s->e;
    struct staging st;
    VkResult r = VK_SUCCESS;

    if (s->described) {
        if (!staging_open(e, s->desc.memory.allocation_size, &st)) {
            snprintf(why, why_len, "mapping the staging buffer failed");
            staging_close(e, &st);
            return false;
        }
        memset(st.data, PADDING, (size_t)s->desc.memory.allocation_size);
        for (unsigned p = 0; p < s->f->planes; p++)
            fill_plane(s->f, p, plane_w(s, p), plane_h(s, p), salt, st.data + s->desc.planes[p].offset,
                       (size_t)s->desc.planes[p].row_pitch);
        r = vkctx_copy(e->vk, st.o.buffer, s->buffer, s->desc.memory.allocation_size);
        staging_close(e, &st);
    } else {
        for (unsigned p = 0; p < s->f->planes && r == VK_SUCCESS; p++) {
            size_t row = (size_t)plane_w(s, p) * texel_bytes(s->f, p);
            if (!staging_open(e, row * plane_h(s, p), &st)) {
                snprintf(why, why_len, "mapping the staging buffer failed");
                staging_close(e, &st);
                return false;
            }
            fill_plane(s->f, p, plane_w(s, p), plane_h(s, p), salt, st.data, row);
            r = vkctx_copy_buffer_to_image(e->vk, st.o.buffer, 0, 0, s->desc.image, plane_aspect(s->f, p),
                                           plane_w(s, p), plane_h(s, p), s->layout);
            s->layout = VK_IMAGE_LAYOUT_GENERAL;
            staging_close(e, &st);
        }
    }
    if (r != VK_SUCCESS)
        snprintf(why, why_len, "the Vulkan upload failed: VkResult %d", r);
    return r == VK_SUCCESS;
}

/* Vulkan reads plane p back, tightly packed, into out; for a described
 * buffer, the padding around the rows must be untouched. */
static bool subject_download(struct subject *s, unsigned p, unsigned char *out, char *why, size_t why_len)
{
    struct env *e = s->e;
    struct staging st;
    size_t row = (size_t)plane_w(s, p) * texel_bytes(s->f, p);
    bool good = true;
    VkResult r;

    if (s->described) {
        const clmem_bridge_vk_image_plane *pl = &s->desc.planes[p];
        if (!staging_open(e, s->desc.memory.allocation_size, &st)) {
            snprintf(why, why_len, "mapping the staging buffer failed");
            staging_close(e, &st);
            return false;
        }
        r = vkctx_copy(e->vk, s->buffer, st.o.buffer, s->desc.memory.allocation_size);
        for (uint32_t y = 0; r == VK_SUCCESS && y < pl->height; y++) {
            const unsigned char *src = st.data + pl->offset + y * pl->row_pitch;
            memcpy(out + y * row, src, row);
            for (size_t i = row; good && i < pl->row_pitch; i++)
                if (src[i] != PADDING) {
                    snprintf(why, why_len, "plane %u row %u: padding byte %zu is 0x%02x, want it untouched (0x%02x)",
                             p, y, i, src[i], PADDING);
                    good = false;
                }
        }
    } else {
        if (!staging_open(e, row * plane_h(s, p), &st)) {
            snprintf(why, why_len, "mapping the staging buffer failed");
            staging_close(e, &st);
            return false;
        }
        memset(st.data, 0x5a, row * plane_h(s, p)); /* so that bytes the copy never wrote show */
        r = vkctx_copy_image_to_buffer(e->vk, s->desc.image, plane_aspect(s->f, p), plane_w(s, p), plane_h(s, p),
                                       s->layout, st.o.buffer, 0, 0);
        s->layout = VK_IMAGE_LAYOUT_GENERAL;
        if (r == VK_SUCCESS)
            memcpy(out, st.data, row * plane_h(s, p));
    }
    staging_close(e, &st);
    if (r != VK_SUCCESS) {
        snprintf(why, why_len, "the Vulkan read-back failed: VkResult %d", r);
        good = false;
    }
    return good;
}

/* The caller's anchor reference goes; once the imports let go too
 * (bridge_settle), the Vulkan objects must have been freed, once. */
static bool subject_done(struct subject *s, char *why, size_t why_len)
{
    clmem_status settled;

    clmem_keepalive_unref(s->ka);
    s->ka = NULL;
    settled = bridge_settle(s->e->b);
    if (settled != CLMEM_OK) {
        snprintf(why, why_len, "bridge_settle returned %s: %s", clmem_status_name(settled), clmem_error_message());
        return false;
    }
    if (atomic_load(&s->released) != 1) {
        snprintf(why, why_len, "the Vulkan objects were freed %d times after the last handle, want once",
                 atomic_load(&s->released));
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ round trips */

/* What OpenCL reads of plane p through its row pitch before the kernel
 * runs, against what Vulkan uploaded (salt 1): a note for a failing trip's
 * message, saying which direction broke (the upload not seen at the
 * layout's positions, or the kernel's writes not seen by Vulkan). */
static void note_upload_seen(struct subject *s, unsigned p, cl_mem mem, size_t pitch, char *note, size_t len)
{
    uint32_t w = plane_w(s, p), h = plane_h(s, p);
    size_t row = (size_t)w * texel_bytes(s->f, p), n = row * h;
    size_t origin[3] = {0, 0, 0}, region[3] = {row, h, 1};
    unsigned char *want = malloc(n), *seen = malloc(n);
    cl_int err;

    note[0] = '\0';
    if (!want || !seen) {
        free(want);
        free(seen);
        return;
    }
    fill_plane(s->f, p, w, h, 1, want, row);
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
    size_t n = (size_t)plane_w(s, p) * texel_bytes(s->f, p);
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
    struct env *e = s->e;
    clmem_handle *h[2] = {NULL, NULL};
    unsigned char *got = NULL;
    char why[512] = "", seen[2][160] = {"", ""};
    bool good = subject_upload(s, 1, why, sizeof why);
    bool padded = false;
    cl_event done[2] = {NULL, NULL};
    for (unsigned p = 0; p < s->f->planes; p++)
        padded = padded || s->desc.planes[p].row_pitch > (VkDeviceSize)s->desc.planes[p].width * texel_bytes(s->f, p);
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
                    err = run_pitch(e, s->f, p, clmem_handle_mem(h[p]), clmem_handle_row_pitch(h[p]), pl->width,
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
        got = malloc((size_t)plane_w(s, p) * plane_h(s, p) * texel_bytes(s->f, p));
        good = got && subject_download(s, p, got, why, sizeof why);
        if (good && !(good = plane_transformed(s->f, p, plane_w(s, p), plane_h(s, p), 1, got, why, sizeof why)))
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
    struct env *e = src->e;
    const struct fmt *f = src->f;
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
        } else if ((err = run_image(e, f, clmem_handle_mem(hs[p]), clmem_handle_mem(hd[p]), plane_w(src, p),
                                    plane_h(src, p))) != CL_SUCCESS) {
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
        unsigned char *got = malloc((size_t)plane_w(dst, p) * plane_h(dst, p) * texel_bytes(f, p));
        good = got && subject_download(dst, p, got, why, sizeof why) &&
               plane_transformed(f, p, plane_w(dst, p), plane_h(dst, p), 1, got, why, sizeof why);
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

static void image_round_trip(struct env *e, const struct fmt *f, uint32_t w, uint32_t h, clmem_bridge_path path,
                       enum variant v)
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

/* ------------------------------------------------------------ the image kernel alone */

/* The image kernel on plain OpenCL images (no bridge): its arithmetic is
 * exact for every format the device has, so that a failure of a view or
 * optimal round trip (which run on GPUs only) is the sharing's. */
static void check_image_kernel(struct env *e)
{
    for (unsigned i = 0; i < NFMTS; i++) {
        const struct fmt *f = &fmts[i];
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
                fill_plane(f, p, w, h, 1, in, (size_t)w * tb);
                err = clEnqueueWriteImage(e->f->queue, src, CL_TRUE, origin, region, 0, 0, in, 0, NULL, NULL);
                if (err == CL_SUCCESS)
                    err = run_image(e, f, src, dst, w, h);
                if (err == CL_SUCCESS)
                    err = clEnqueueReadImage(e->f->queue, dst, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL);
                good = err == CL_SUCCESS && plane_transformed(f, p, w, h, 1, out, why, sizeof why);
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

/* ------------------------------------------------------------ the format table */

static void check_format_table(void)
{
    uint32_t n = 0;
    const VkFormat *list = clmem_bridge_image_formats(&n);
    bool good = n == NFMTS;
    char why[256] = "";

    for (unsigned i = 0; good && i < NFMTS; i++) {
        const struct fmt *f = &fmts[i];
        bool listed = false;
        for (uint32_t j = 0; j < n; j++)
            listed = listed || list[j] == f->vk;
        for (unsigned p = 0; good && p < f->planes; p++) {
            uint32_t tb = 0;
            if (clmem_bridge_image_plane_format(f->vk, p, NULL, &tb) != CLMEM_OK || tb != texel_bytes(f, p)) {
                snprintf(why, sizeof why, "%s plane %u: texel bytes %u, want %u", f->name, p, tb, texel_bytes(f, p));
                good = false;
            }
        }
        if (good && (!listed || !clmem_bridge_image_format_name(f->vk))) {
            snprintf(why, sizeof why, "%s is not listed or has no name", f->name);
            good = false;
        }
    }
    tap_ok(good, "the bridge's format table lists the %zu formats with their planes' texel sizes (%u listed)%s%s",
           NFMTS, n, good ? "" : ": ", why);
}

/* ------------------------------------------------------------ behaviour */

static void CL_CALLBACK count_destroyed(cl_mem m, void *user)
{
    (void)m;
    atomic_fetch_add((atomic_int *)user, 1);
}

/* Plane handles behave like buffer handles: described NV12 (runs on every
 * path and machine). */
static void check_behaviour(struct env *e, clmem_bridge_path path)
{
    const struct fmt *nv12 = &fmts[8];
    const char *pn = clmem_bridge_path_name(path);
    struct subject s;
    clmem_handle *y = NULL, *uv = NULL, *y2 = NULL, *yq = NULL;
    clmem_bridge_path got_path = CLMEM_BRIDGE_PATH_BEST;
    cl_command_queue other;
    cl_int err = CL_SUCCESS;
    atomic_int destroyed;
    clmem_status st;
    char why[512] = "";

    atomic_init(&destroyed, 0);
    subject_described(e, nv12, 34, 8, path, 3, false, &s);
    subject_upload(&s, 1, why, sizeof why);
    st = clmem_bridge_import_vk_image(e->b, &s.desc, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &y);
    if (st == CLMEM_OK)
        st = clmem_bridge_import_vk_image(e->b, &s.desc, 1, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &uv);
    if (!tap_ok(st == CLMEM_OK, "%s behaviour: NV12 planes import (%s)", pn, st ? clmem_error_message() : "ok")) {
        clmem_handle_unref(y);
        subject_done(&s, why, sizeof why);
        return;
    }
    tap_ok(clmem_handle_mem(y) != clmem_handle_mem(uv) && clmem_handle_keepalive(y) != clmem_handle_keepalive(uv) &&
               clmem_handle_row_pitch(y) == s.desc.planes[0].row_pitch &&
               clmem_handle_row_pitch(uv) == s.desc.planes[1].row_pitch,
           "%s behaviour: each plane is its own import (Y pitch %u, CbCr pitch %u)", pn, clmem_handle_row_pitch(y),
           clmem_handle_row_pitch(uv));
    st = clmem_bridge_import_vk_image(e->b, &s.desc, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0, &y2);
    tap_ok(st == CLMEM_OK && clmem_handle_mem(y2) == clmem_handle_mem(y) &&
               clmem_handle_keepalive(y2) == clmem_handle_keepalive(y) && clmem_handle_row_pitch(y2) ==
               clmem_handle_row_pitch(y),
           "%s behaviour: importing plane 0 again is a cache hit: same cl_mem, anchor and row pitch (%s)", pn,
           st ? clmem_error_message() : "ok");
    {
        /* The same plane imported with another pitch is another import. */
        clmem_bridge_vk_image other_pitch = s.desc;
        clmem_handle *hp = NULL;
        other_pitch.planes[0].row_pitch -= 1; /* still holds the row of 34 texels of 1 byte */
        st = clmem_bridge_import_vk_image(e->b, &other_pitch, 0, path, s.ka, e->f->queue, CL_MEM_READ_WRITE, 0,
                                          &hp);
        tap_ok(st == CLMEM_OK && clmem_handle_mem(hp) != clmem_handle_mem(y) &&
                   clmem_handle_row_pitch(hp) == other_pitch.planes[0].row_pitch,
               "%s behaviour: the same bytes with another row pitch are another import, not a cache hit (%s)", pn,
               st ? clmem_error_message() : "ok");
        clmem_handle_unref(hp);
    }
    other = clCreateCommandQueueWithProperties(e->f->context, e->f->device, NULL, &err);
    st = err == CL_SUCCESS ? clmem_bridge_handle_for_queue(uv, other, &yq) : CLMEM_ERR_OPENCL;
    tap_ok(st == CLMEM_OK && clmem_handle_mem(yq) == clmem_handle_mem(uv) && clmem_handle_queue(yq) == other &&
               clmem_handle_row_pitch(yq) == clmem_handle_row_pitch(uv),
           "%s behaviour: handle_for_queue keeps the plane's cl_mem and row pitch on the other queue (%s)", pn,
           st ? clmem_error_message() : "ok");
    st = clmem_bridge_handle_path(uv, &got_path);
    tap_ok(st == CLMEM_OK && (path == CLMEM_BRIDGE_PATH_BEST || got_path == path),
           "%s behaviour: handle_path says %s", pn, clmem_bridge_path_name(got_path));
    st = clmem_bridge_acquire(e->b, y, 0, NULL, NULL);
    tap_ok(st == CLMEM_OK && clmem_bridge_acquire(e->b, y2, 0, NULL, NULL) == CLMEM_ERR_INVALID_VALUE,
           "%s behaviour: acquire works, and acquiring the cached handle of the acquired plane again is "
           "CLMEM_ERR_INVALID_VALUE", pn);
    tap_is_int(clmem_bridge_release(e->b, uv, 0, NULL, NULL), CLMEM_ERR_INVALID_VALUE,
               "%s behaviour: releasing the CbCr plane, which is not acquired, is CLMEM_ERR_INVALID_VALUE", pn);
    tap_is_int(clmem_bridge_finish(e->b, 0), CLMEM_ERR_IN_USE,
               "%s behaviour: finish while plane handles live -> CLMEM_ERR_IN_USE", pn);
    clSetMemObjectDestructorCallback(clmem_handle_mem(y), count_destroyed, &destroyed);
    clSetMemObjectDestructorCallback(clmem_handle_mem(uv), count_destroyed, &destroyed);
    /* The Y plane is left acquired on purpose: the teardown hands it back. */
    clmem_keepalive_unref(s.ka);
    s.ka = NULL;
    clmem_handle_unref(y);
    clmem_handle_unref(y2);
    tap_ok(bridge_settle(e->b) == CLMEM_ERR_IN_USE && atomic_load(&s.released) == 0,
           "%s behaviour: the CbCr handles keep their import, and the memory, alive after the Y plane's went", pn);
    st = clmem_bridge_acquire(e->b, uv, 0, NULL, NULL);
    err = st == CLMEM_OK ? run_pitch(e, nv12, 1, clmem_handle_mem(uv), clmem_handle_row_pitch(uv), 17, 4) : -1;
    if (st == CLMEM_OK)
        st = clmem_bridge_release(e->b, uv, 0, NULL, NULL);
    clFinish(e->f->queue);
    tap_ok(st == CLMEM_OK && err == CL_SUCCESS, "%s behaviour: the CbCr plane still works (%s; kernel %d)", pn,
           st ? clmem_error_message() : "ok", err);
    clmem_handle_unref(uv);
    clmem_handle_unref(yq);
    st = bridge_settle(e->b);
    tap_ok(st == CLMEM_OK && atomic_load(&s.released) == 1 && atomic_load(&destroyed) == 2,
           "%s behaviour: after the last plane handle, the teardown destroyed both cl_mems and then freed the Vulkan "
           "memory, once (%s; destroyed %d, freed %d)",
           pn, st ? clmem_error_message() : "ok", atomic_load(&destroyed), atomic_load(&s.released));
    if (err == CL_SUCCESS || other)
        clReleaseCommandQueue(other);
}

/* ------------------------------------------------------------ bad input */

static atomic_int counted_releases;
static void count_release(void *user)
{
    (void)user;
    atomic_fetch_add(&counted_releases, 1);
}

/* One point: the call returned `want`, left *out NULL, and its message
 * holds `a` (and `b` when not NULL). */
static void refused(clmem_status got, clmem_status want, const clmem_handle *out, const char *a, const char *b,
                    const char *what)
{
    const char *msg = got != CLMEM_OK ? clmem_error_message() : "";
    bool named = strstr(msg, a) != NULL && (!b || strstr(msg, b) != NULL);
    tap_ok(got == want && !out && named, "bad input: %s -> %s, *out NULL, naming \"%s\"%s%s%s (%s: %s)", what,
           clmem_status_name(want), a, b ? " and \"" : "", b ? b : "", b ? "\"" : "", clmem_status_name(got), msg);
}

static void check_bad_input(struct env *e, clmem_bridge_path path)
{
    const struct fmt *rgba8 = &fmts[3], *nv12 = &fmts[8];
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
         * (clmem-bridge.h, "Which error wins"). Refused before any import. */
        d.memory.allocation_size += e->base_align;
        snprintf(text, sizeof text, "offset %llu", (unsigned long long)d.planes[0].offset);
        st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        refused(st, CLMEM_ERR_INVALID_VALUE, out, text, "CL_DEVICE_MEM_BASE_ADDR_ALIGN",
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
            refused(st, CLMEM_ERR_INVALID_VALUE, out, text, "Plane 1",
                    "NV12 whose CbCr plane starts at a misaligned offset");
        clmem_handle_unref(out), out = NULL;
        /* plane index past the planes */
        st = clmem_bridge_import_vk_image(e->b, &n.desc, 2, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        refused(st, CLMEM_ERR_INVALID_VALUE, out, "Plane 2 is past the 2 planes", NULL, "plane 2 of NV12");
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
        refused(st, CLMEM_ERR_UNSUPPORTED, out, "offers no optimal-tiling import", NULL, "optimal-tiling NV12");
        clmem_handle_unref(out), out = NULL;
        clmem_keepalive_unref(n.ka);
    }
    st = clmem_bridge_import_vk_image(e->b, &img.desc, 1, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    refused(st, CLMEM_ERR_INVALID_VALUE, out, "Plane 1 is past the 1 plane", NULL, "plane 1 of RGBA8");
    clmem_handle_unref(out), out = NULL;

    /* unsupported format */
    {
        clmem_bridge_vk_image made;
        st = clmem_bridge_vk_image_create(e->b, VK_FORMAT_R8G8B8_UNORM, (VkExtent2D){16, 16}, VK_IMAGE_TILING_LINEAR,
                                          VK_IMAGE_USAGE_TRANSFER_SRC_BIT, path_memory_props(path), 0, &made);
        refused(st, CLMEM_ERR_UNSUPPORTED, made.image ? (clmem_handle *)1 : NULL, "VkFormat 23",
                "VK_FORMAT_G8_B8R8_2PLANE_420_UNORM", "clmem_bridge_vk_image_create of VK_FORMAT_R8G8B8_UNORM");
        d = buf.desc;
        d.format = VK_FORMAT_R8G8B8_UNORM;
        st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
        refused(st, CLMEM_ERR_UNSUPPORTED, out, "VkFormat 23", NULL, "importing a VK_FORMAT_R8G8B8_UNORM image");
        clmem_handle_unref(out), out = NULL;
        st = clmem_bridge_check_image(e->b, VK_FORMAT_BC1_RGB_UNORM_BLOCK, VK_IMAGE_TILING_LINEAR, path, 0, 0);
        refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "does not share", NULL, "clmem_bridge_check_image of BC1");
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
            refused(st, CLMEM_ERR_UNSUPPORTED, out, text, "CL_DEVICE_IMAGE_PITCH_ALIGNMENT",
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
        refused(st, CLMEM_ERR_UNSUPPORTED, out, "2D images from buffers", "CL_DEVICE_IMAGE_PITCH_ALIGNMENT",
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
            refused(st, CLMEM_ERR_INVALID_VALUE, out, "CLMEM_BRIDGE_IMAGE_AS_IMAGE", NULL,
                    "an optimal-tiling image without CLMEM_BRIDGE_IMAGE_AS_IMAGE");
            clmem_handle_unref(out), out = NULL;
            if (path == CLMEM_BRIDGE_PATH_HOST_MAPPED) {
                st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE,
                                                  CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
                refused(st, CLMEM_ERR_UNSUPPORTED, out, "fd paths only", NULL,
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
    refused(st, CLMEM_ERR_INVALID_VALUE, out, "less than the", NULL, "a plane size smaller than its rows");
    clmem_handle_unref(out), out = NULL;
    d = buf.desc;
    d.planes[0].row_pitch = 33 * 4 - 4;
    st = clmem_bridge_import_vk_image(e->b, &d, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    refused(st, CLMEM_ERR_INVALID_VALUE, out, "row pitch 128", NULL, "a row pitch shorter than a row");
    clmem_handle_unref(out), out = NULL;
    st = clmem_bridge_import_vk_image(e->b, &buf.desc, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 1u << 5,
                                      &out);
    refused(st, CLMEM_ERR_INVALID_VALUE, out, "unknown bits 0x20", NULL, "unknown image_flags");
    clmem_handle_unref(out), out = NULL;
    st = clmem_bridge_import_vk_image(e->b, NULL, 0, path, counted, e->f->queue, CL_MEM_READ_WRITE, 0, &out);
    refused(st, CLMEM_ERR_NULL_POINTER, out, "image", NULL, "a NULL image");

    clmem_keepalive_unref(img.ka);
    clmem_keepalive_unref(buf.ka);
    clmem_keepalive_unref(counted);
    tap_is_int(atomic_load(&counted_releases), 1,
               "bad input: the refused imports took no reference on the caller's anchor (released once, by its owner)");
    tap_is_int(clmem_bridge_finish(e->b, 0), CLMEM_OK, "bad input: no import of the refused calls is alive");
    tap_is_int(fd_count(), fds_before, "bad input: no file descriptor leaked");
}

/* ------------------------------------------------------------ optimal tiling */

static const char *check_results[NFMTS]; /* "passed", or the failure, per format (NULL: not run) */
static char check_failures[NFMTS][640];

/* Where optimal tiling is offered, and the live checks themselves: before
 * any round trip, so that "no live check has run" can be seen. */
static void check_optimal_offer(struct env *e)
{
    const struct fmt *r8 = &fmts[0], *nv12 = &fmts[8];
    clmem_status st;

    st = clmem_bridge_image_live_check(e->b, r8->vk, CLMEM_BRIDGE_PATH_HOST_MAPPED, e->vk->queue,
                                       e->vk->queue_family, e->f->queue);
    refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "fd paths only", NULL, "the live check on the host-mapped path");
    st = clmem_bridge_image_live_check(e->b, nv12->vk, CLMEM_BRIDGE_PATH_BEST, e->vk->queue, e->vk->queue_family,
                                       e->f->queue);
    refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "offers no optimal-tiling import", NULL, "the live check of NV12");

    if (clmem_bridge_check_path(e->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK) {
        /* Optimal tiling is not offered here, and says why precisely: the
         * opaque-fd path's own answer. */
        char why[700];
        snprintf(why, sizeof why, "%s", clmem_error_message());
        st = clmem_bridge_image_live_check(e->b, r8->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                           e->vk->queue_family, e->f->queue);
        refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "has no opaque-fd path", why,
                "the live check where the bridge has no opaque-fd path (with the path's answer)");
        st = clmem_bridge_check_image(e->b, r8->vk, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD,
                                      CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
        refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "has no opaque-fd path", NULL,
                "check_image of optimal tiling there");
        {
            struct subject opt;
            clmem_handle *out = NULL;
            if (subject_image(e, r8, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) ==
                CLMEM_OK) {
                st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_BEST, opt.ka, e->f->queue,
                                                  CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
                refused(st, CLMEM_ERR_UNSUPPORTED, out, "none fits", NULL,
                        "importing an exportable optimal-tiling image with BEST there");
                clmem_handle_unref(out);
                clmem_keepalive_unref(opt.ka);
            } else {
                tap_skip(clmem_error_message(), "bad input: an optimal-tiling image with BEST there");
            }
        }
        return;
    }

    /* Before any live check: not offered, and saying so. */
    st = clmem_bridge_check_image(e->b, r8->vk, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD,
                                  CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE);
    refused(st, CLMEM_ERR_UNSUPPORTED, NULL, "clmem_bridge_image_live_check", NULL,
            "check_image of optimal tiling before the live check");
    {
        struct subject opt;
        clmem_handle *out = NULL;
        if (subject_image(e, r8, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) == CLMEM_OK) {
            st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, opt.ka, e->f->queue,
                                              CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
            refused(st, CLMEM_ERR_UNSUPPORTED, out, "none has run", NULL,
                    "importing an optimal-tiling image before the live check");
            clmem_handle_unref(out);
            clmem_keepalive_unref(opt.ka);
        } else {
            tap_skip(clmem_error_message(), "bad input: an optimal-tiling image before the live check");
        }
    }
    /* The checks: each an answer, kept. */
    for (unsigned i = 0; i < NFMTS; i++) {
        const struct fmt *f = &fmts[i];
        clmem_status again;
        if (!f->optimal)
            continue;
        st = clmem_bridge_image_live_check(e->b, f->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                           e->vk->queue_family, e->f->queue);
        if (st == CLMEM_ERR_UNSUPPORTED)
            snprintf(check_failures[i], sizeof check_failures[i], "%s", clmem_error_message());
        again = clmem_bridge_image_live_check(e->b, f->vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, e->vk->queue,
                                              e->vk->queue_family, e->f->queue);
        /* UNSUPPORTED is either the check's kept failure ("The live check of
         * ... failed") or "not offered" before any check (OpenCL lacks the
         * format); only the former is a failed live check. */
        check_results[i] = st == CLMEM_OK                                                          ? "passed"
                           : st == CLMEM_ERR_UNSUPPORTED && strstr(check_failures[i], "The live check") ? check_failures[i]
                                                                                                    : NULL;
        tap_ok((st == CLMEM_OK || st == CLMEM_ERR_UNSUPPORTED) && again == st,
               "opaque-fd: the live check of optimal-tiling %s gives an answer, the same the second time (%s%s%s; "
               "again: %s)",
               f->name, clmem_status_name(st), st ? ": " : "", st ? check_failures[i] : "", clmem_status_name(again));
        tap_diag("opaque-fd optimal %s: %s", f->name, st == CLMEM_OK ? "offered (live check passed)"
                                                                   : st == CLMEM_ERR_UNSUPPORTED ? check_failures[i]
                                                                                                 : "not run");
    }
}

/* Where a live check failed, the import says so. */
static void check_failed_optimal(struct env *e)
{
    bool any = false;

    if (clmem_bridge_check_path(e->b, CLMEM_BRIDGE_PATH_OPAQUE_FD) != CLMEM_OK)
        return;
    for (unsigned i = 0; i < NFMTS && !any; i++) {
        const struct fmt *f = &fmts[i];
        struct subject opt;
        clmem_handle *out = NULL;
        clmem_status st;

        if (!check_results[i] || strcmp(check_results[i], "passed") == 0)
            continue;
        any = true;
        if (subject_image(e, f, 16, 16, VK_IMAGE_TILING_OPTIMAL, CLMEM_BRIDGE_PATH_OPAQUE_FD, &opt) != CLMEM_OK) {
            tap_skip(clmem_error_message(), "bad input: optimal-tiling %s where its live check failed", f->name);
            continue;
        }
        st = clmem_bridge_import_vk_image(e->b, &opt.desc, 0, CLMEM_BRIDGE_PATH_OPAQUE_FD, opt.ka, e->f->queue,
                                          CL_MEM_READ_WRITE, CLMEM_BRIDGE_IMAGE_AS_IMAGE, &out);
        refused(st, CLMEM_ERR_UNSUPPORTED, out, "live check", "failed",
                "importing an optimal-tiling image whose format failed the live check");
        clmem_handle_unref(out);
        clmem_keepalive_unref(opt.ka);
    }
    if (!any) {
        char why[256];
        snprintf(why, sizeof why, "every format passed the optimal-tiling live check on %s", e->device);
        tap_skip(why, "bad input: optimal tiling where the live check failed");
    }
}

/* Exported images get a dedicated allocation, whatever Vulkan prefers: on
 * NVIDIA 580 a linear RGBA8 image in non-dedicated exported memory read
 * back through Vulkan wrong what OpenCL wrote (docs/driver-notes.md). The
 * fd-path round trips above catch that only on such a GPU; this catches a
 * change of the allocation anywhere. */
static void check_exported_dedicated(struct env *e)
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

/* ------------------------------------------------------------ main */

int main(void)
{
    static const struct {
        uint32_t w, h;
    } sizes[] = {{33, 7}, {1921, 3}};
    static const clmem_bridge_path paths[] = {CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_PATH_OPAQUE_FD};
    struct vkctx vk;
    struct cl_fixture f;
    struct env e;
    cl_bool images = CL_FALSE;
    cl_uint bits = 0;
    int fds_start;

    bridge_open_vulkan(&vk);
    cl_fixture_open_paired(&f, &vk);
    memset(&e, 0, sizeof e);
    e.vk = &vk;
    e.f = &f;
    e.device = f.device_name;
    e.b = bridge_open(&vk, &f, 0);
    clGetDeviceInfo(f.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    e.base_align = bits / 8 ? bits / 8 : 1;
    clGetDeviceInfo(f.device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof e.pitch_align, &e.pitch_align, NULL);
    clGetDeviceInfo(f.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    e.pitch_k = cl_fixture_kernel(&f, pitch_source, "plane_xform");
    e.image_k = images ? cl_fixture_kernel(&f, image_source, "image_xform") : NULL;
    tap_diag("Vulkan device: %s; validation layer %s; OpenCL device: %s (%s); bridge caps 0x%x", vk.device_name,
             vk.validation ? "on" : "not installed", f.device_name, f.platform_name, clmem_bridge_caps(e.b));
    tap_diag("CL_DEVICE_MEM_BASE_ADDR_ALIGN %u bytes, CL_DEVICE_IMAGE_PITCH_ALIGNMENT %u texels, images %s",
             e.base_align, e.pitch_align, images ? "yes" : "no");
    fds_start = fd_count();

    check_format_table();
    if (e.image_k)
        check_image_kernel(&e);
    else
        tap_skip("CL_DEVICE_IMAGE_SUPPORT is false", "the image kernel on plain OpenCL images");
    check_optimal_offer(&e);
    check_exported_dedicated(&e);

    for (unsigned pi = 0; pi < sizeof paths / sizeof paths[0]; pi++) {
        clmem_bridge_path path = paths[pi];
        if (clmem_bridge_check_path(e.b, path) != CLMEM_OK) {
            tap_skip(clmem_error_message(), "%s: image round trips, behaviour and bad input",
                     clmem_bridge_path_name(path));
            continue;
        }
        for (unsigned i = 0; i < NFMTS; i++)
            for (unsigned z = 0; z < 2; z++) {
                /* 4:2:0 needs an even extent: 34x8 and 1922x4 */
                uint32_t w = sizes[z].w + (fmts[i].planes > 1), h = sizes[z].h + (fmts[i].planes > 1);
                for (int v = V_PLANES; v <= V_DESCRIBED_VIEW; v++)
                    image_round_trip(&e, &fmts[i], w, h, path, (enum variant)v);
            }
        check_behaviour(&e, path);
        check_bad_input(&e, path);
    }
    check_failed_optimal(&e);

    tap_is_int(bridge_settle(e.b), CLMEM_OK, "nothing of the bridge holds Vulkan memory at the end");
    tap_is_int(fd_count(), fds_start, "no file descriptor leaked over the whole test");
    clmem_bridge_unref(e.b);
    clReleaseKernel(e.pitch_k);
    if (e.image_k)
        clReleaseKernel(e.image_k);
    cl_fixture_close(&f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               vk.validation ? "" : " (layer not installed: nothing counted)");
    vkctx_close(&vk);
    return tap_done();
}
