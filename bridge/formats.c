/* SPDX-License-Identifier: MIT */
/* The image format table (formats.h says who reads it). One row per
 * VkFormat: its planes' OpenCL formats and sizes, and what it offers.
 *
 * Two-plane 4:2:0 formats (NV12, P010) are two planes: Y at full size, and
 * CbCr interleaved at half width and half height. Vulkan names the chroma
 * plane B8R8 (Cb first), so the plane's RG reads Cb in .x and Cr in .y, as
 * NV12 and P010 store them. They offer no optimal tiling: core OpenCL has
 * no two-plane image to import one into.
 *
 * P010's components hold the value in their top 10 bits (X6: six padding
 * bits below), so reading them as CL_UNORM_INT16 gives the 10-bit value
 * scaled to [0, 1], as P010 is meant to be read. */
#include "config.h"
#include "error-private.h"
#include "export.h"
#include "formats.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ALL (FORMAT_LINEAR_PLANES | FORMAT_LINEAR_VIEW | FORMAT_OPTIMAL_FD)
#define PLANES_ONLY (FORMAT_LINEAR_PLANES | FORMAT_LINEAR_VIEW)
#define COLOR VK_IMAGE_ASPECT_COLOR_BIT

/* A row names each format once: the macros spell the messages' names
 * ("VK_FORMAT_R8_UNORM", "CL_R, CL_UNORM_INT8") from the constants.
 * PLANE: the OpenCL channel order and type, texel bytes, components, width
 * and height shifts, aspect. A format: its VkFormat, what it offers, its
 * component kind and bytes, then its planes. */
#define PLANE(order, type, texel_bytes, components, wshift, hshift, aspect)               \
    {                                                                                     \
        {order, type}, #order ", " #type, texel_bytes, components, wshift, hshift, aspect \
    }
#define ONE_PLANE(vk, offers, component, component_bytes, plane) \
    {                                                            \
        vk, #vk, 1, offers, component, component_bytes,          \
        {                                                        \
            plane                                                \
        }                                                        \
    }
#define TWO_PLANES(vk, offers, component, component_bytes, plane0, plane1) \
    {                                                                      \
        vk, #vk, 2, offers, component, component_bytes,                    \
        {                                                                  \
            plane0, plane1                                                 \
        }                                                                  \
    }

static const struct image_format table[FORMAT_COUNT] = {
    ONE_PLANE(VK_FORMAT_R8_UNORM, ALL, COMPONENT_UNORM8, 1, PLANE(CL_R, CL_UNORM_INT8, 1, 1, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R8G8_UNORM, ALL, COMPONENT_UNORM8, 1, PLANE(CL_RG, CL_UNORM_INT8, 2, 2, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R16_UNORM, ALL, COMPONENT_UNORM16, 2, PLANE(CL_R, CL_UNORM_INT16, 2, 1, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R8G8B8A8_UNORM, ALL, COMPONENT_UNORM8, 1, PLANE(CL_RGBA, CL_UNORM_INT8, 4, 4, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_B8G8R8A8_UNORM, ALL, COMPONENT_UNORM8, 1, PLANE(CL_BGRA, CL_UNORM_INT8, 4, 4, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R32_SFLOAT, ALL, COMPONENT_FLOAT, 4, PLANE(CL_R, CL_FLOAT, 4, 1, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R16G16B16A16_SFLOAT, ALL, COMPONENT_HALF, 2, PLANE(CL_RGBA, CL_HALF_FLOAT, 8, 4, 0, 0, COLOR)),
    ONE_PLANE(VK_FORMAT_R32G32B32A32_SFLOAT, ALL, COMPONENT_FLOAT, 4, PLANE(CL_RGBA, CL_FLOAT, 16, 4, 0, 0, COLOR)),
    /* NV12 */
    TWO_PLANES(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, PLANES_ONLY, COMPONENT_UNORM8, 1,
               PLANE(CL_R, CL_UNORM_INT8, 1, 1, 0, 0, VK_IMAGE_ASPECT_PLANE_0_BIT),
               PLANE(CL_RG, CL_UNORM_INT8, 2, 2, 1, 1, VK_IMAGE_ASPECT_PLANE_1_BIT)),
    /* P010 */
    TWO_PLANES(VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16, PLANES_ONLY, COMPONENT_UNORM10X6, 2,
               PLANE(CL_R, CL_UNORM_INT16, 2, 1, 0, 0, VK_IMAGE_ASPECT_PLANE_0_BIT),
               PLANE(CL_RG, CL_UNORM_INT16, 4, 2, 1, 1, VK_IMAGE_ASPECT_PLANE_1_BIT)),
    /* FFmpeg's image of P010's chroma plane (libclmem-av: one image per plane) */
    ONE_PLANE(VK_FORMAT_R16G16_UNORM, ALL, COMPONENT_UNORM16, 2, PLANE(CL_RG, CL_UNORM_INT16, 4, 2, 0, 0, COLOR)),
};

const struct image_format *clmem__format_find(VkFormat f)
{
    for (unsigned i = 0; i < FORMAT_COUNT; i++)
        if (table[i].vk == f)
            return &table[i];
    return NULL;
}

const struct image_format *clmem__format_at(unsigned index)
{
    return index < FORMAT_COUNT ? &table[index] : NULL;
}

unsigned clmem__format_index(const struct image_format *f)
{
    return (unsigned)(f - table);
}

/* Vulkan rounds a subsampled plane's extent down: the 4:2:0 formats need an
 * even extent (VUID-VkImageCreateInfo-format-04712, -04713), checked where
 * images are made and imported. */
uint32_t clmem__format_plane_width(const struct image_format *f, unsigned p, uint32_t width)
{
    return width >> f->planes[p].width_shift;
}

uint32_t clmem__format_plane_height(const struct image_format *f, unsigned p, uint32_t height)
{
    return height >> f->planes[p].height_shift;
}

const char *clmem__format_name(VkFormat f, char buf[32])
{
    const struct image_format *e = clmem__format_find(f);
    if (e)
        return e->name;
    snprintf(buf, 32, "VkFormat %d", (int)f);
    return buf;
}

void clmem__format_pattern(const struct image_format *f, unsigned p, uint32_t x, uint32_t y, uint32_t salt,
                           unsigned char *out)
{
    const struct format_plane *fp = &f->planes[p];

    for (unsigned k = 0; k < fp->components; k++) {
        uint32_t v = x * 7u + y * 131u + k * 17u + p * 53u + salt * 29u + 1u;
        switch (f->component) {
        case COMPONENT_UNORM8: out[k] = (unsigned char)v; break;
        case COMPONENT_UNORM16: {
            uint16_t w = (uint16_t)(v * 257u);
            memcpy(out + 2 * k, &w, 2);
            break;
        }
        case COMPONENT_UNORM10X6: {
            uint16_t w = (uint16_t)((v & 0x3ffu) << 6);
            memcpy(out + 2 * k, &w, 2);
            break;
        }
        case COMPONENT_HALF: {
            uint16_t w = (uint16_t)(0x3c00u | (v & 0x3ffu));
            memcpy(out + 2 * k, &w, 2);
            break;
        }
        case COMPONENT_FLOAT: {
            uint32_t w = 0x3f800000u | ((v * 2654435761u) & 0x7fffffu);
            memcpy(out + 4 * k, &w, 4);
            break;
        }
        }
    }
}

/* Built once from the table, so that the names are written in one place. */
static char list_text[FORMAT_COUNT * 64];
static pthread_once_t list_once = PTHREAD_ONCE_INIT;

static void build_list(void)
{
    size_t used = 0;
    for (unsigned i = 0; i < FORMAT_COUNT && used < sizeof list_text; i++) {
        int n = snprintf(list_text + used, sizeof list_text - used, "%s%s", i ? ", " : "", table[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
}

const char *clmem__format_list(void)
{
    pthread_once(&list_once, build_list);
    return list_text;
}

clmem_status clmem__format_unknown(VkFormat format)
{
    return clmem__fail(CLMEM_ERR_UNSUPPORTED, "clmem-bridge does not share images of VkFormat %d; it shares %s.",
                       (int)format, clmem__format_list());
}

/* ------------------------------------------------------------- public */

static VkFormat format_list[FORMAT_COUNT];
static pthread_once_t format_list_once = PTHREAD_ONCE_INIT;

static void build_format_list(void)
{
    for (unsigned i = 0; i < FORMAT_COUNT; i++)
        format_list[i] = table[i].vk;
}

CLMEM_EXPORT const VkFormat *clmem_bridge_image_formats(uint32_t *count_out)
{
    pthread_once(&format_list_once, build_format_list);
    if (count_out)
        *count_out = FORMAT_COUNT;
    return format_list;
}

CLMEM_EXPORT const char *clmem_bridge_image_format_name(VkFormat format)
{
    const struct image_format *f = clmem__format_find(format);
    return f ? f->name : NULL;
}

static clmem_status image_plane_format(VkFormat format, uint32_t plane, cl_image_format *cl_format_out,
                                       uint32_t *texel_bytes_out)
{
    const struct image_format *f = clmem__format_find(format);

    if (!f)
        return clmem__format_unknown(format);
    if (plane >= f->plane_count)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE, "Plane %u is past the %u plane%s of %s.", plane, f->plane_count,
                           f->plane_count == 1 ? "" : "s", f->name);
    if (cl_format_out)
        *cl_format_out = f->planes[plane].cl;
    if (texel_bytes_out)
        *texel_bytes_out = f->planes[plane].texel_bytes;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_image_plane_format(VkFormat format, uint32_t plane,
                                                          cl_image_format *cl_format_out, uint32_t *texel_bytes_out)
{
    return clmem__error_in(__func__, image_plane_format(format, plane, cl_format_out, texel_bytes_out));
}
