/* SPDX-License-Identifier: MIT */
/* libclmem-av's frame pool (frame-pool.c says why it exists): linear (or,
 * for clmem_av_frames_setup_optimal(), optimal-tiling) frames, each plane
 * in a dedicated allocation of its own. */
#ifndef CLMEM_AV_POOL_H
#define CLMEM_AV_POOL_H
#include "ffmpeg-vk.h"

/* Give the frames context (not yet initialised, no pool) libclmem-av's
 * pool, whose frames' memory is exportable as clmem__av_export_types()
 * says; its free callback becomes the pool's, which calls the one it had.
 * `modifiers` (malloc'd, `count` of them, or NULL): the DRM format
 * modifier list FFmpeg's trial image is made with (frames-setup.c), which
 * the pool keeps and puts first in the frames context's create_pnext. The
 * pool owns the list from this call on, on error too. `tiling`: its
 * frames' images, VK_IMAGE_TILING_LINEAR or VK_IMAGE_TILING_OPTIMAL. */
clmem_status clmem__av_pool_install(AVHWFramesContext *frames, const AVVulkanDeviceContext *vk, VkImageTiling tiling,
                                    uint64_t *modifiers, uint32_t count);

/* What the pool knows of its frames beyond the AVVkFrame. */
struct av_pool_facts {
    /* Memory property bits a frame's memory has and its AVVkFrame.flags
     * does not show: the pool hides HOST_VISIBLE from FFmpeg, so that
     * FFmpeg never maps a frame's memory (the host-mapped path holds its
     * one mapping while imported: frame-pool.c). */
    VkMemoryPropertyFlags hidden_flags;
    /* The tiling of every image of the pool: VK_IMAGE_TILING_LINEAR, or
     * VK_IMAGE_TILING_OPTIMAL (clmem_av_frames_setup_optimal()). */
    VkImageTiling tiling;
    /* The device's timeline calls, resolved once for the pool. */
    PFN_vkWaitSemaphores wait_semaphores;
    PFN_vkSignalSemaphore signal_semaphore;
};

/* *ours: are the frames context's frames libclmem-av's (each plane
 * dedicated)? If so and facts is not NULL, *facts is filled.
 * CLMEM_ERR_INVALID_VALUE where they are and the free callback that frees
 * the pool was replaced since. Costs a lock and a walk of the pools. */
clmem_status clmem__av_pool_check(const AVHWFramesContext *frames, bool *ours, struct av_pool_facts *facts);
#endif
