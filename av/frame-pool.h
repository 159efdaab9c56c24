/* libclmem-av's frame pool (frame-pool.c says why it exists): linear frames,
 * each plane in a dedicated allocation of its own. */
#ifndef CLMEM_AV_POOL_H
#define CLMEM_AV_POOL_H
#include "ffmpeg-vk.h"

/* Give the frames context (not yet initialised, no pool) libclmem-av's
 * pool, whose frames' memory is exportable as clmem__av_export_types()
 * says; its free callback becomes the pool's, which calls the one it had. */
clmem_status clmem__av_pool_install(AVHWFramesContext *frames, const AVVulkanDeviceContext *vk);

/* *ours: are the frames context's frames libclmem-av's (each plane
 * dedicated)? CLMEM_ERR_INVALID_VALUE where they are and the free callback
 * that frees the pool was replaced since. */
clmem_status clmem__av_pool_check(const AVHWFramesContext *frames, bool *ours);
#endif
