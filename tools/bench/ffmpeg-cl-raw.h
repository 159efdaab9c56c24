/* SPDX-License-Identifier: MIT */
/* clmem-bench (l): the map's handover of an optimal-tiling frame (the
 * vk-image way, in device order), made with the raw calls
 * (ffmpeg-cl-raw.c). Only with libavfilter (HAVE_LIBAVFILTER). */
#ifndef CLMEM_BENCH_FFMPEG_CL_RAW_H
#define CLMEM_BENCH_FFMPEG_CL_RAW_H

#include "bench.h"
#include "ffvk.h"

#include <libavutil/frame.h>
#include <libavutil/hwcontext_vulkan.h>

#define RAW_MAX_PLANES 4

/* What one pool frame's raw handover holds: the queue of FFmpeg's transfer
 * family the library submits to, a command buffer each way, a timeline of
 * its submissions, two binary semaphores shared with OpenCL, and the
 * frame's OpenCL images (the library's own imports, retained). */
struct ffcl_raw {
    struct bench *b;
    const AVVulkanDeviceContext *vk;
    const struct ffvk *fn;
    VkQueue queue;
    uint32_t own_family; /* the barriers' family: FFmpeg's images are CONCURRENT where it has several */
    VkCommandPool pool;
    VkCommandBuffer acquire_cb, release_cb;
    uint64_t acquire_done, release_done; /* progress at which each command buffer's last submission is done */
    VkSemaphore progress;                /* timeline: signalled at ++submitted by every submission */
    uint64_t submitted;
    VkSemaphore to_cl, from_cl;
    cl_semaphore_khr cl_to, cl_from;
    cl_command_queue cq;
    cl_mem images[RAW_MAX_PLANES];
    cl_uint planes;
};

/* Set up r for the frames of FFmpeg's device `vk` (`fn` its entry
 * points), on OpenCL queue cq, with the images of `mapped`
 * (a frame clmem_av_cl_map() mapped the vk-image way; they are retained).
 * False, with why, where the raw calls cannot be made here. */
bool ffcl_raw_open(struct ffcl_raw *r, struct bench *b, const AVVulkanDeviceContext *vk, const struct ffvk *fn,
                   cl_command_queue cq, const AVFrame *mapped, char *why, size_t len);
/* The map's half: FFmpeg's frame f handed to OpenCL (after FFmpeg's work
 * on it) and acquired there, done on the host when it returns. */
void ffcl_raw_acquire(struct ffcl_raw *r, AVVkFrame *f);
/* The unmap's half: released by OpenCL and handed back to FFmpeg, its
 * semaphores at sem_value + 1 once OpenCL's work is done. */
void ffcl_raw_release(struct ffcl_raw *r, AVVkFrame *f);
void ffcl_raw_close(struct ffcl_raw *r);

#endif
