/* SPDX-License-Identifier: MIT */
/* Fixture for the image tests, t/bridge/bridge-image-*.c (one program per topic:
 * formats, round trips, plane handles, bad input, optimal tiling).
 *
 * A round trip: Vulkan writes a pattern that differs by row, column,
 * component and plane (vkCmdCopyBufferToImage); OpenCL transforms every
 * texel, reading through the plane handle's row pitch (or through an image
 * view / an optimal-tiling image, where those are offered); Vulkan reads
 * the result back (vkCmdCopyImageToBuffer) and every texel is compared.
 * What is shared is a "subject": a VkImage from
 * clmem_bridge_vk_image_create, or a VkBuffer laid out as an image by hand
 * (described: rows padded on purpose, padding checked untouched), which is
 * how an application shares a decoder's NV12 frame, and which runs the
 * two-plane formats where Vulkan makes no such images (lavapipe).
 *
 * The test's format facts are its own table (image_fmts), not the
 * library's: the library's table is what is being checked. */
#ifndef CLMEM_T_IMAGE_FIXTURE_H
#define CLMEM_T_IMAGE_FIXTURE_H
#include "bridge-fixture.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------ formats */

enum image_kind { K_U8 = 0, K_U16 = 1, K_10X6 = 2, K_HALF = 3, K_FLOAT = 4 }; /* the kernels' numbering */

struct image_fmt {
    VkFormat vk;
    const char *name;
    unsigned planes;
    enum image_kind kind;
    unsigned comp_bytes;
    unsigned comps[2];
    unsigned shift[2]; /* plane extent = image extent >> shift */
    bool optimal;      /* offered as an optimal-tiling import (after the live check) */
};

#define IMAGE_FMT_COUNT 11
extern const struct image_fmt image_fmts[IMAGE_FMT_COUNT];

/* The row of image_fmts for vk; bails out when there is none. */
const struct image_fmt *image_fmt_of(VkFormat vk);

unsigned image_texel_bytes(const struct image_fmt *f, unsigned p);

/* Plane p's texels, tightly packed, of the pattern (salt), rows row_bytes
 * apart. */
void image_fill_plane(const struct image_fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt,
                      unsigned char *out, size_t row_bytes);

/* Every texel of plane p (tight) is what the kernels make of the pattern
 * (salt); else false, with the first texel that is not in why. */
bool image_plane_transformed(const struct image_fmt *f, unsigned p, uint32_t w, uint32_t h, uint32_t salt,
                             const unsigned char *got, char *why, size_t why_len);

/* ------------------------------------------------------------ the world */

struct image_env {
    struct bridge_test t;
    /* shorthands for t's */
    struct vkctx *vk;
    struct cl_fixture *f;
    clmem_bridge *b;
    cl_kernel pitch_k;
    cl_kernel image_k;   /* NULL without image support */
    cl_uint base_align;  /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, bytes */
    cl_uint pitch_align; /* CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels */
    const char *device;
    int fds_start;
};

/* The start of an image test: bridge_test_open, the kernels, the device's
 * alignments, named in diagnostic lines, and the fd count. */
void image_env_open(struct image_env *e, const char *name);

/* Runs check(e, path) for host-mapped and then opaque fd; where the
 * bridge has no such path, one skip instead, naming `what` and the
 * bridge's reason. */
void image_for_each_path(struct image_env *e, const char *what,
                         void (*check)(struct image_env *e, clmem_bridge_path path));

/* Its end, three TAP points: nothing of the bridge holds Vulkan memory
 * (bridge_settle), no fd leaked since image_env_open, and no error from
 * the validation layer; then everything is closed. */
void image_env_close(struct image_env *e);

/* The transform in place, through the row pitch: component i of row y of
 * plane p of a w x h plane. */
cl_int run_pitch_kernel(struct image_env *e, const struct image_fmt *f, unsigned p, cl_mem mem, uint32_t pitch,
                        uint32_t w, uint32_t h);

/* The transform image to image, through read_imagef / write_imagef: the
 * same arithmetic, done on the values (exact for these formats and values). */
cl_int run_image_kernel(struct image_env *e, const struct image_fmt *f, cl_mem src, cl_mem dst, uint32_t w,
                        uint32_t h);

/* ------------------------------------------------------------ subjects */

/* What is shared. Its Vulkan objects belong to an anchor, whose release
 * frees them, as an application's would. */
struct subject {
    struct image_env *e;
    const struct image_fmt *f;
    uint32_t width, height;
    bool described;
    clmem_bridge_vk_image desc;
    VkBuffer buffer;        /* described */
    VkImageLayout layout;   /* images: the layout it is in */
    clmem_keepalive *ka;    /* the caller's reference */
    atomic_int released;
    clmem_bridge *bridge;   /* for the release */
};

uint32_t subject_plane_w(const struct subject *s, unsigned p);
uint32_t subject_plane_h(const struct subject *s, unsigned p);

/* A VkImage: CLMEM_OK, or the status of clmem_bridge_vk_image_create
 * (CLMEM_ERR_UNSUPPORTED: Vulkan makes no such image; the message says). */
clmem_status subject_image(struct image_env *e, const struct image_fmt *f, uint32_t w, uint32_t h,
                           VkImageTiling tiling, clmem_bridge_path path, struct subject *s);

/* A VkBuffer laid out as an image: each plane at a multiple of the
 * sub-buffer alignment (plane 0 not at 0, so that it is a sub-buffer), rows
 * `pitch_extra` bytes longer than the texels and then rounded up to whole
 * texels, or to the view's pitch alignment when view_aligned (the view's
 * pitch rule when that is the device's). Bails out when Vulkan fails. */
void subject_described(struct image_env *e, const struct image_fmt *f, uint32_t w, uint32_t h,
                       clmem_bridge_path path, uint32_t pitch_extra, bool view_aligned, struct subject *s);

/* Vulkan writes the pattern (salt) into every plane. */
bool subject_upload(struct subject *s, uint32_t salt, char *why, size_t why_len);

/* Vulkan reads plane p back, tightly packed, into out; for a described
 * buffer, the padding around the rows must be untouched. */
bool subject_download(struct subject *s, unsigned p, unsigned char *out, char *why, size_t why_len);

/* The caller's anchor reference goes; once the imports let go too
 * (bridge_settle), the Vulkan objects must have been freed, once. */
bool subject_done(struct subject *s, char *why, size_t why_len);

/* ------------------------------------------------------------ refusals */

/* One point: the call returned `want`, left *out NULL, and its message
 * holds `a` (and `b` when not NULL). */
void expect_refused(clmem_status got, clmem_status want, const clmem_handle *out, const char *a, const char *b,
                    const char *what);
#endif
