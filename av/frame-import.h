/* SPDX-License-Identifier: MIT */
/* clmem_av_frame_import() with the Vulkan keepalive chosen by the caller
 * (frame-import.c): the OpenCL frames' cache (cl-frames.c) keeps a pool
 * frame's imports alive with a reference on the frames context, not on
 * the frame, so that the frame still goes back to the pool. */
#ifndef CLMEM_AV_FRAME_IMPORT_H
#define CLMEM_AV_FRAME_IMPORT_H
#include "ffmpeg-vk.h"

/* As clmem_av_frame_import(); `given`, when not NULL, is the keepalive
 * the imports hold (a reference is taken) instead of a reference on the
 * frame. With `as_images`, a frame of clmem_av_frames_setup_optimal() is
 * taken too: every plane is imported with CLMEM_BRIDGE_IMAGE_AS_IMAGE, an
 * optimal-tiling plane's VkImage as an OpenCL image (once the bridge's
 * live check for the plane's format passed). */
clmem_status clmem__av_frame_import(clmem_bridge *b, const AVFrame *frame, clmem_bridge_path path,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_keepalive *given, bool as_images,
                                    clmem_av_frame_planes *out);
#endif
