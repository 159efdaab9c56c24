/* SPDX-License-Identifier: MIT */
#include "image-fixture.h"
#include "fd-count.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ formats */

const struct image_fmt image_fmts[IMAGE_FMT_COUNT] = {
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

const struct image_fmt *image_fmt_of(VkFormat vk)
{
    for (unsigned i = 0; i < IMAGE_FMT_COUNT; i++)
        if (image_fmts[i].vk == vk)
            return &image_fmts[i];
    tap_bail("VkFormat %d is not in the test's format table", (int)vk);
}

unsigned image_texel_bytes(const struct image_fmt *f, unsigned p)
{
    return f->comps[p] * f->comp_bytes;
}

static VkImageAspectFlagBits plane_aspect(const struct image_fmt *f, unsigned p)
{
    return f->planes == 1 ? VK_IMAGE_ASPECT_COLOR_BIT : p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                               : VK_IMAGE_ASPECT_PLANE_1_BIT;
}

/* The raw bits of component c of texel (x, y) of plane p: differs by all of
 * them and by salt, and is a valid value of its type (floats in [1, 2)). */
static uint32_t pattern(enum image_kind k, uint32_t x, uint32_t y, unsigned c, unsigned p, uint32_t salt)
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
static uint32_t transform(enum image_kind k, uint32_t b)
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

void image_fill_plane(const struct image_fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt,
                      unsigned char *out, size_t row_bytes)
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (unsigned c = 0; c < f->comps[p]; c++)
                put_component(out + y * row_bytes + ((size_t)x * f->comps[p] + c) * f->comp_bytes, f->comp_bytes,
                              pattern(f->kind, x, y, c, p, salt));
}

bool image_plane_transformed(const struct image_fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt,
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

/* ------------------------------------------------------------ the world */

void image_env_open(struct image_env *e, const char *name)
{
    cl_bool images = CL_FALSE;
    cl_uint bits = 0;

    memset(e, 0, sizeof *e);
    bridge_test_open(&e->t, name, 0);
    e->vk = &e->t.vk;
    e->f = &e->t.f;
    e->b = e->t.b;
    e->device = e->f->device_name;
    clGetDeviceInfo(e->f->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    e->base_align = bits / 8 ? bits / 8 : 1;
    clGetDeviceInfo(e->f->device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof e->pitch_align, &e->pitch_align, NULL);
    clGetDeviceInfo(e->f->device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    e->pitch_k = cl_fixture_kernel(e->f, pitch_source, "plane_xform");
    e->image_k = images ? cl_fixture_kernel(e->f, image_source, "image_xform") : NULL;
    tap_diag("validation layer %s; bridge caps 0x%x", e->vk->validation ? "on" : "not installed",
             clmem_bridge_caps(e->b));
    tap_diag("CL_DEVICE_MEM_BASE_ADDR_ALIGN %u bytes, CL_DEVICE_IMAGE_PITCH_ALIGNMENT %u texels, images %s",
             e->base_align, e->pitch_align, images ? "yes" : "no");
    e->fds_start = fd_count();
}

void image_env_close(struct image_env *e)
{
    bool layer = e->vk->validation;

    tap_is_int(bridge_settle(e->b), CLMEM_OK, "nothing of the bridge holds Vulkan memory at the end");
    tap_is_int(fd_count(), e->fds_start, "no file descriptor leaked over the whole test");
    clmem_bridge_unref(e->b);
    e->b = e->t.b = NULL;
    clReleaseKernel(e->pitch_k);
    if (e->image_k)
        clReleaseKernel(e->image_k);
    cl_fixture_close(e->f);
    tap_is_int(vkctx_validation_errors(), 0, "the Vulkan validation layer reported no error%s",
               layer ? "" : " (layer not installed: nothing counted)");
    vkctx_close(e->vk);
}

void image_for_each_path(struct image_env *e, const char *what,
                         void (*check)(struct image_env *e, clmem_bridge_path path))
{
    static const clmem_bridge_path paths[] = {CLMEM_BRIDGE_PATH_HOST_MAPPED, CLMEM_BRIDGE_PATH_OPAQUE_FD};

    for (unsigned i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (clmem_bridge_check_path(e->b, paths[i]) != CLMEM_OK) {
            tap_skip(clmem_error_message(), "%s: %s", clmem_bridge_path_name(paths[i]), what);
            continue;
        }
        check(e, paths[i]);
    }
}

cl_int run_pitch_kernel(struct image_env *e, const struct image_fmt *f, unsigned p, cl_mem mem, uint32_t pitch,
                        uint32_t w, uint32_t h)
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

cl_int run_image_kernel(struct image_env *e, const struct image_fmt *f, cl_mem src, cl_mem dst, uint32_t w,
                        uint32_t h)
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

static void subject_release(void *user)
{
    struct subject *s = user;
    if (s->described)
        clmem_bridge_vk_buffer_destroy(s->bridge, s->buffer, &s->desc.memory);
    else
        clmem_bridge_vk_image_destroy(s->bridge, &s->desc);
    atomic_fetch_add(&s->released, 1);
}

uint32_t subject_plane_w(const struct subject *s, unsigned p)
{
    return s->width >> s->f->shift[p];
}

uint32_t subject_plane_h(const struct subject *s, unsigned p)
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

clmem_status subject_image(struct image_env *e, const struct image_fmt *f, uint32_t w, uint32_t h,
                           VkImageTiling tiling, clmem_bridge_path path, struct subject *s)
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

void subject_described(struct image_env *e, const struct image_fmt *f, uint32_t w, uint32_t h,
                       clmem_bridge_path path, uint32_t pitch_extra, bool view_aligned, struct subject *s)
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
        uint64_t unit = view_aligned && e->pitch_align ? (uint64_t)e->pitch_align * image_texel_bytes(f, p)
                                                       : image_texel_bytes(f, p);
        pl->width = subject_plane_w(s, p);
        pl->height = subject_plane_h(s, p);
        pl->row_pitch = round_up((uint64_t)pl->width * image_texel_bytes(f, p) + pitch_extra, unit);
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


#define PADDING 0xA5

/* A staging buffer of `size` bytes, mapped; false, with why, when the
 * mapping failed (the buffer is closed then). */
static bool staging_open(struct image_env *e, VkDeviceSize size, struct vk_staging *st, char *why, size_t why_len)
{
    if (vk_staging_open(st, e->b, e->vk, size))
        return true;
    snprintf(why, why_len, "mapping the staging buffer failed");
    vk_staging_close(st);
    return false;
}

bool subject_upload(struct subject *s, uint32_t salt, char *why, size_t why_len)
{
    struct image_env *e = s->e;
    struct vk_staging st;
    VkResult r = VK_SUCCESS;

    if (s->described) {
        unsigned char *data;
        if (!staging_open(e, s->desc.memory.allocation_size, &st, why, why_len))
            return false;
        data = st.data;
        memset(data, PADDING, (size_t)s->desc.memory.allocation_size);
        for (unsigned p = 0; p < s->f->planes; p++)
            image_fill_plane(s->f, p, subject_plane_w(s, p), subject_plane_h(s, p), salt,
                             data + s->desc.planes[p].offset, (size_t)s->desc.planes[p].row_pitch);
        r = vkctx_copy(e->vk, st.o.buffer, s->buffer, s->desc.memory.allocation_size);
        vk_staging_close(&st);
    } else {
        for (unsigned p = 0; p < s->f->planes && r == VK_SUCCESS; p++) {
            size_t row = (size_t)subject_plane_w(s, p) * image_texel_bytes(s->f, p);
            if (!staging_open(e, row * subject_plane_h(s, p), &st, why, why_len))
                return false;
            image_fill_plane(s->f, p, subject_plane_w(s, p), subject_plane_h(s, p), salt, st.data, row);
            r = vkctx_copy_buffer_to_image(e->vk, st.o.buffer, 0, 0, s->desc.image, plane_aspect(s->f, p),
                                           subject_plane_w(s, p), subject_plane_h(s, p), s->layout);
            s->layout = VK_IMAGE_LAYOUT_GENERAL;
            vk_staging_close(&st);
        }
    }
    if (r != VK_SUCCESS)
        snprintf(why, why_len, "the Vulkan upload failed: VkResult %d", r);
    return r == VK_SUCCESS;
}

bool subject_download(struct subject *s, unsigned p, unsigned char *out, char *why, size_t why_len)
{
    struct image_env *e = s->e;
    struct vk_staging st;
    size_t row = (size_t)subject_plane_w(s, p) * image_texel_bytes(s->f, p);
    bool good = true;
    VkResult r;

    if (s->described) {
        const clmem_bridge_vk_image_plane *pl = &s->desc.planes[p];
        const unsigned char *data;
        if (!vk_read_back(&st, e->b, e->vk, s->buffer, s->desc.memory.allocation_size, why, why_len)) {
            vk_staging_close(&st);
            return false;
        }
        data = st.data;
        for (uint32_t y = 0; y < pl->height; y++) {
            const unsigned char *src = data + pl->offset + y * pl->row_pitch;
            memcpy(out + y * row, src, row);
            for (size_t i = row; good && i < pl->row_pitch; i++)
                if (src[i] != PADDING) {
                    snprintf(why, why_len, "plane %u row %u: padding byte %zu is 0x%02x, want it untouched (0x%02x)",
                             p, y, i, src[i], PADDING);
                    good = false;
                }
        }
        vk_staging_close(&st);
        return good;
    }
    if (!staging_open(e, row * subject_plane_h(s, p), &st, why, why_len))
        return false;
    memset(st.data, 0x5a, row * subject_plane_h(s, p)); /* so that bytes the copy never wrote show */
    r = vkctx_copy_image_to_buffer(e->vk, s->desc.image, plane_aspect(s->f, p), subject_plane_w(s, p),
                                   subject_plane_h(s, p), s->layout, st.o.buffer, 0, 0);
    s->layout = VK_IMAGE_LAYOUT_GENERAL;
    if (r == VK_SUCCESS)
        memcpy(out, st.data, row * subject_plane_h(s, p));
    vk_staging_close(&st);
    if (r != VK_SUCCESS) {
        snprintf(why, why_len, "the Vulkan read-back failed: VkResult %d", r);
        good = false;
    }
    return good;
}

bool subject_done(struct subject *s, char *why, size_t why_len)
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

/* ------------------------------------------------------------ refusals */

void expect_refused(clmem_status got, clmem_status want, const clmem_handle *out, const char *a, const char *b,
                    const char *what)
{
    const char *msg = got != CLMEM_OK ? clmem_error_message() : "";
    bool named = strstr(msg, a) != NULL && (!b || strstr(msg, b) != NULL);
    tap_ok(got == want && !out && named, "bad input: %s -> %s, *out NULL, naming \"%s\"%s%s%s (%s: %s)", what,
           clmem_status_name(want), a, b ? " and \"" : "", b ? b : "", b ? "\"" : "", clmem_status_name(got), msg);
}
