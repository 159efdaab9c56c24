/* SPDX-License-Identifier: MIT */
/* Which frame's plane each buffer clmem_av_frame_import() made shows, so
 * that acquire and release refuse planes of another frame
 * (plane-owner.c). */
#ifndef CLMEM_AV_PLANE_OWNER_H
#define CLMEM_AV_PLANE_OWNER_H
#include "ffmpeg-vk.h"

/* Record that the plane buffer `mem` shows the plane image `image`, for as
 * long as `mem` lives (a destructor callback forgets it). A cache hit's
 * buffer, already recorded with the same image, costs a lookup.
 * CLMEM_ERR_OPENCL when the callback cannot be set, CLMEM_ERR_NO_MEMORY;
 * nothing is recorded then. */
clmem_status clmem__av_plane_owner_add(cl_mem mem, VkImage image);

/* Does every planes->planes[p] (p < planes->count) show images[p]? One
 * lock and a lookup per plane. */
bool clmem__av_planes_show(const clmem_av_frame_planes *planes, const VkImage *images);
#endif
