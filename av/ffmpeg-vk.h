/* SPDX-License-Identifier: MIT */
/* What every part of libclmem-av asks of an FFmpeg Vulkan frame or device
 * context: the contexts behind an AVBufferRef, the Vulkan entry points
 * through FFmpeg's get_proc_addr, and which software formats are imported
 * and how FFmpeg 5.1 lays them out (one VkImage per plane). */
#ifndef CLMEM_AV_FFMPEG_VK_H
#define CLMEM_AV_FFMPEG_VK_H

#include "clmem-av.h"

#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/version.h>
#include <stdbool.h>

/* FFmpeg 6.1 (libavutil 58.29.100) added AVVulkanDeviceContext.lock_queue
 * and AVVulkanFramesContext.lock_frame: who submits to FFmpeg's queues, or
 * touches a frame's sem_value, layout and access, takes them. FFmpeg 5.1
 * has neither (the caller keeps other threads off FFmpeg's device: see
 * clmem_av_sync_acquire()). A libavutil's soname is its major version, so
 * the headers built with are the library run with. */
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100)
#define CLMEM_AV_FFMPEG_LOCKS 1
#else
#define CLMEM_AV_FFMPEG_LOCKS 0
#endif

/* A software format libclmem-av imports: FFmpeg's per-plane image formats
 * and the 4:2:0 subsampling of planes after the first. */
struct av_format {
    enum AVPixelFormat sw_format;
    const char *name;
    uint32_t planes;
    bool subsampled; /* planes 1.. are half width and half height (rounded up, as FFmpeg makes them) */
};

/* The format's row, or NULL (with CLMEM_ERR_UNSUPPORTED recorded, naming
 * those imported) for any other. */
const struct av_format *clmem__av_format(enum AVPixelFormat sw_format);

/* The Vulkan device context of a device or frames context buffer, or NULL
 * when it is not of AV_HWDEVICE_TYPE_VULKAN. */
AVVulkanDeviceContext *clmem__av_vk_device(const AVHWDeviceContext *dev);

/* clmem__av_vk_device() of an argument `device_ref`: NULL, with
 * CLMEM_ERR_INVALID_VALUE recorded, when it is not a Vulkan device's. */
const AVVulkanDeviceContext *clmem__av_vk_device_arg(const AVBufferRef *device_ref);

/* Does FFmpeg's device context list `name` among its enabled device
 * extensions? */
bool clmem__av_has_device_extension(const AVVulkanDeviceContext *vk, const char *name);

/* A device entry point through FFmpeg's loader (get_proc_addr, then
 * vkGetDeviceProcAddr), or NULL with CLMEM_ERR_UNSUPPORTED recorded. */
PFN_vkVoidFunction clmem__av_device_proc(const AVVulkanDeviceContext *vk, const char *name);

/* An instance entry point through FFmpeg's loader, or NULL with
 * CLMEM_ERR_UNSUPPORTED recorded. */
PFN_vkVoidFunction clmem__av_instance_proc(const AVVulkanDeviceContext *vk, const char *name);

/* The frame's AVVkFrame, frames context and software format row, checked:
 * CLMEM_ERR_INVALID_VALUE for a frame of another pix_fmt or without its
 * AVVkFrame or frames context, CLMEM_ERR_UNSUPPORTED for a software format
 * not imported. */
clmem_status clmem__av_frame_parts(const AVFrame *frame, AVVkFrame **vkf_out, AVHWFramesContext **frames_out,
                                   const struct av_format **format_out);

/* The distinct queue families of the device context, which FFmpeg makes
 * its images with (its p->qfs, concurrent where more than one): qfs gets
 * them, the count is returned. */
uint32_t clmem__av_queue_families(const AVVulkanDeviceContext *vk, uint32_t qfs[5]);

/* vkGetPhysicalDeviceImageFormatProperties2 for a 2D image of plane
 * `plane`'s format of sw_format, made as FFmpeg makes its images
 * (aliasable), with what the caller asks chained on the query (info_next)
 * and on the answer (props_next). */
VkResult clmem__av_query_plane_image(PFN_vkGetPhysicalDeviceImageFormatProperties2 query, VkPhysicalDevice pd,
                                     enum AVPixelFormat sw_format, int plane, VkImageTiling tiling,
                                     VkImageUsageFlags usage, void *info_next, void *props_next);

/* The handle types a frame of the frames context is exportable as. Vulkan
 * cannot be asked which types memory was allocated exportable as; FFmpeg
 * 5.1's pool (vulkan_pool_alloc) exports every frame as each type whose
 * extension its device enabled and for which
 * vkGetPhysicalDeviceImageFormatProperties2 accepts plane 0's format with
 * the frames context's tiling, usage (and modifiers). This asks the same.
 * `ours`: the frames are libclmem-av's pool's (frame-pool.c), whose images
 * have the pool's tiling `ours_tiling` (linear, or optimal for
 * clmem_av_frames_setup_optimal()) whatever the frames context's tiling
 * says (setup gives FFmpeg's trial image a tiling of its own), and which
 * exports what this answers for that tiling; `ours_tiling` is not read
 * otherwise. */
clmem_status clmem__av_export_types(const AVVulkanDeviceContext *vk, const AVHWFramesContext *frames, bool ours,
                                    VkImageTiling ours_tiling, VkExternalMemoryHandleTypeFlags *types_out);

#endif
