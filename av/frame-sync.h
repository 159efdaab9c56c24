/* SPDX-License-Identifier: MIT */
/* What acquire and release share, in both orders: the frame and its
 * planes checked against each other, FFmpeg's locks, and host order
 * (frame-sync.c); device order is sync-device.c's. */
#ifndef CLMEM_AV_FRAME_SYNC_H
#define CLMEM_AV_FRAME_SYNC_H
#include "ffmpeg-vk.h"

/* A frame as acquire and release see it. */
struct av_frame_call {
    AVVkFrame *vkf;
    AVHWFramesContext *frames;
    const AVVulkanDeviceContext *vk;
    uint32_t planes; /* the frame's plane count, planes->count */
};

/* The timeline calls host order makes. */
struct av_host_fns {
    PFN_vkWaitSemaphores wait;
    PFN_vkSignalSemaphore signal;
};

/* Checks, in the order clmem-bridge.h's "Which error wins" gives: NULL
 * arguments; frame of AV_PIX_FMT_VULKAN with its parts; planes as many as
 * the frame's and each a plane of this frame (CLMEM_ERR_INVALID_VALUE);
 * the frame on the bridge's VkDevice (CLMEM_ERR_DEVICE_MISMATCH). */
clmem_status clmem__av_frame_call(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                  cl_command_queue queue, struct av_frame_call *out);

/* FFmpeg's frame lock (AVVulkanFramesContext.lock_frame, FFmpeg 6.1 and
 * later): held while an AVVkFrame's sem_value, layout and access are read
 * for a submission and written after it. Nothing on FFmpeg 5.1. */
void clmem__av_lock_frame(const struct av_frame_call *c);
void clmem__av_unlock_frame(const struct av_frame_call *c);

/* Host order (clmem-av.h, clmem_av_order). */
clmem_status clmem__av_host_acquire(clmem_bridge *b, const struct av_frame_call *c, const struct av_host_fns *fns,
                                    const clmem_av_frame_planes *planes, cl_command_queue queue, uint64_t timeout_ns,
                                    cl_event *event_out);
clmem_status clmem__av_host_release(clmem_bridge *b, const struct av_frame_call *c, const struct av_host_fns *fns,
                                    const clmem_av_frame_planes *planes, cl_command_queue queue, cl_uint num_events,
                                    const cl_event *wait_list);
/* The host-order handoff of clmem_av_frame_acquire() and
 * clmem_av_frame_release(), for the library's own callers (the OpenCL
 * frames' map): the public pair is deprecated for applications, which have
 * clmem_av_sync_* to do the same. The sentence is the calling public
 * function's. */
clmem_status clmem__av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                     cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out);
clmem_status clmem__av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                     cl_command_queue queue, cl_uint num_events, const cl_event *wait_list);
#endif
