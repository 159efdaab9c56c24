/* SPDX-License-Identifier: MIT */
/* Internal: the one table of image formats the bridge shares. Every
 * question "what is this VkFormat to OpenCL" is answered here: the
 * cl_image_format and texel size of each plane, the plane count and
 * subsampling, and which ways of sharing the format can take (linear plane
 * buffers on every path, image2d views of them, optimal tiling straight
 * from an fd). clmem_bridge_vk_image_create, the image import, the
 * optimal-tiling live check and the public format queries all read it;
 * nothing else in the bridge names a VkFormat. */
#ifndef CLMEM_FORMATS_H
#define CLMEM_FORMATS_H
#include "opencl/cl-compat.h"
#include "clmem-bridge.h"

#include <stdbool.h>
#include <stdint.h>

/* How the bytes of one component read: for the live check's pattern, which
 * must be a valid value of the type (no NaN for the float formats), and for
 * messages. */
enum format_component {
    COMPONENT_UNORM8,
    COMPONENT_UNORM16,
    COMPONENT_UNORM10X6, /* 16 bits, the value in the top 10 (P010) */
    COMPONENT_HALF,
    COMPONENT_FLOAT
};

struct format_plane {
    cl_image_format cl;           /* one texel of the plane, as OpenCL reads it */
    const char *cl_name;          /* "CL_RG, CL_UNORM_INT8", for messages */
    uint8_t texel_bytes;          /* components * component bytes */
    uint8_t components;
    uint8_t width_shift;          /* the plane's extent is the image's >> shift (4:2:0 chroma: 1) */
    uint8_t height_shift;
    VkImageAspectFlagBits aspect; /* COLOR for one plane; PLANE_0, PLANE_1 for two */
};

/* Bits of image_format.offers: what the format can be shared as. */
enum format_offer {
    FORMAT_LINEAR_PLANES = 1u << 0, /* linear tiling, each plane a buffer with its row pitch: every path */
    FORMAT_LINEAR_VIEW = 1u << 1,   /* ... and an image2d view of that buffer, where the device can make one */
    FORMAT_OPTIMAL_FD = 1u << 2     /* optimal tiling as one OpenCL image from the fd: fd paths only, after the
                                       per-bridge live check */
};

#define FORMAT_MAX_PLANES 2

struct image_format {
    VkFormat vk;
    const char *name; /* "VK_FORMAT_R8_UNORM" */
    uint8_t plane_count;
    uint8_t offers; /* format_offer bits */
    enum format_component component;
    uint8_t component_bytes;
    struct format_plane planes[FORMAT_MAX_PLANES];
};

/* The number of entries; the table's index of a format is stable for the
 * life of the process (the bridge keeps live-check results by it). */
#define FORMAT_COUNT 11

/* The entry for f, or NULL when the bridge does not know the format. */
const struct image_format *clmem__format_find(VkFormat f);
const struct image_format *clmem__format_at(unsigned index); /* NULL past the end */
unsigned clmem__format_index(const struct image_format *f);

/* The extent of plane p of an image of `width` x `height`. */
uint32_t clmem__format_plane_width(const struct image_format *f, unsigned p, uint32_t width);
uint32_t clmem__format_plane_height(const struct image_format *f, unsigned p, uint32_t height);

/* "VK_FORMAT_R8_UNORM", or "VkFormat 1234" (in buf) for one not in the table. */
const char *clmem__format_name(VkFormat f, char buf[32]);

/* Texel (x, y) of plane p of the live check's pattern number `salt`, in
 * texel_bytes bytes at out: every component differs by x, y, plane and
 * salt, and is a valid value of its type (floats in [1, 2), no NaN). */
void clmem__format_pattern(const struct image_format *f, unsigned p, uint32_t x, uint32_t y, uint32_t salt,
                           unsigned char *out);

/* The list of the table's format names for messages ("VK_FORMAT_R8_UNORM, ..."). */
const char *clmem__format_list(void);

/* CLMEM_ERR_UNSUPPORTED: the bridge shares no images of `format`. */
clmem_status clmem__format_unknown(VkFormat format);
#endif
