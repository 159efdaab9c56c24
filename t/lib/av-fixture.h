/* SPDX-License-Identifier: MIT */
/* What the libclmem-av tests share: FFmpeg's Vulkan device (optionally
 * with the validation layer, counting its errors), the bridge and OpenCL
 * fixture on it, frames contexts set up by clmem_av_frames_setup(),
 * software frames with a pattern, an inverting kernel over a frame's
 * planes, and the check of every byte a download gives back. */
#ifndef CLMEM_T_AV_FIXTURE_H
#define CLMEM_T_AV_FIXTURE_H
#include "cl-fixture.h"
#include "clmem-av.h"

#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <stdbool.h>

struct av_fixture {
    AVBufferRef *device;
    AVVulkanDeviceContext *vk;
    struct cl_fixture cl;
    clmem_bridge *bridge;
    clmem_bridge_path path; /* opaque fd where the bridge has it, else host-mapped */
    cl_kernel invert;
    bool validation; /* FFmpeg's device runs with the Khronos validation layer */
};

/* FFmpeg's Vulkan device (with "debug" = 1 when `validation`, the layer is
 * installed and CLMEM_VALIDATION is not 0: av_fixture_validation_errors()
 * counts what it reports),
 * OpenCL on the device paired with it (or the first), the bridge. Skips
 * the whole test, naming why, where FFmpeg makes no Vulkan device. */
void av_fixture_open(struct av_fixture *f, bool validation);
void av_fixture_close(struct av_fixture *f);

/* Errors the validation layer reported through FFmpeg's log so far (0
 * without the layer); each is printed as a TAP diagnostic. */
int av_fixture_validation_errors(void);

/* A device entry point of FFmpeg's device; bails out if missing. */
PFN_vkVoidFunction av_fixture_device_proc(const struct av_fixture *f, const char *name);

/* The timeline semaphore's value now. */
uint64_t av_fixture_counter(const struct av_fixture *f, VkSemaphore sem);

/* An initialised frames context of w x h frames of `sw`, set up by
 * clmem_av_frames_setup() (bails out on failure). */
AVBufferRef *av_fixture_frames(const struct av_fixture *f, enum AVPixelFormat sw, int w, int h);

/* The same, set up by clmem_av_frames_setup_optimal() when `optimal`;
 * where `why` is not NULL and the set-up says CLMEM_ERR_UNSUPPORTED (the
 * device makes no such frames), NULL with its sentence in `why`. */
AVBufferRef *av_fixture_frames_set_up(const struct av_fixture *f, enum AVPixelFormat sw, int w, int h, bool optimal,
                                      char *why, size_t len);

/* A frame of the pool (bails out on failure). */
AVFrame *av_fixture_frame(AVBufferRef *frames);

/* A software frame of `sw`, w x h, whose bytes differ by plane, row,
 * column and salt. */
AVFrame *av_fixture_pattern(enum AVPixelFormat sw, int w, int h, unsigned salt);

/* Rows of plane p of a software frame, and the bytes of a row in use
 * (chroma planes of 4:2:0 formats rounded up, as FFmpeg makes them). */
size_t av_fixture_plane_rows(const AVFrame *fr, int p);
size_t av_fixture_plane_row_bytes(const AVFrame *fr, int p);

/* Enqueue the kernel that inverts every byte of every plane (255 - b),
 * through each plane's row pitch, on f's queue after wait_list. */
void av_fixture_invert(struct av_fixture *f, const clmem_av_frame_planes *planes, cl_uint num_events,
                       const cl_event *wait_list, cl_event *event_out);

/* Does `got` hold the inverse of `want` in every byte of every plane? If
 * not, `why` says where. */
bool av_fixture_inverted(const AVFrame *want, const AVFrame *got, char *why, size_t len);

/* Download hw into a new software frame (bails out on failure). */
AVFrame *av_fixture_download(AVFrame *hw);
#endif
