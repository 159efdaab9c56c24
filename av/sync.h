/* SPDX-License-Identifier: MIT */
/* The sync object (clmem-av.h, clmem_av_sync): what sync.c makes and
 * dispatches, and what device order (sync-device.c) keeps per frame in
 * flight. */
#ifndef CLMEM_AV_SYNC_H
#define CLMEM_AV_SYNC_H
#include "frame-sync.h"
#include "refcount.h"

#include <pthread.h>

/* Device order's Vulkan calls, resolved once through FFmpeg's loader. */
struct av_device_fns {
    PFN_vkGetDeviceQueue get_queue;
    PFN_vkCreateCommandPool create_pool;
    PFN_vkDestroyCommandPool destroy_pool;
    PFN_vkAllocateCommandBuffers allocate_buffers;
    PFN_vkBeginCommandBuffer begin;
    PFN_vkEndCommandBuffer end;
    PFN_vkCmdPipelineBarrier barrier;
    PFN_vkQueueSubmit submit;
    PFN_vkCreateSemaphore create_semaphore;
    PFN_vkDestroySemaphore destroy_semaphore;
    PFN_vkGetSemaphoreCounterValue counter;
};

enum av_slot_state {
    SLOT_FREE,      /* nothing pending: may take a frame */
    SLOT_ACQUIRED,  /* its frame is OpenCL's */
    SLOT_RELEASING, /* its release's submission signals `progress` at `done_at` */
    SLOT_BROKEN     /* a submission failed with a semaphore left signalled: never used again */
};

/* One frame in flight, device order: everything made once and reused. */
struct av_slot {
    enum av_slot_state state;
    VkSemaphore to_cl, from_cl;               /* binary, exportable as opaque fd */
    clmem_bridge_semaphore *cl_to, *cl_from;  /* their OpenCL imports */
    VkCommandBuffer acquire_cb, release_cb;
    uint64_t done_at;                          /* `progress` value of its last submission */
    AVFrame *frame;                            /* a reference on the frame while in flight */
    AVVkFrame *vkf;                            /* the frame's, while acquired or releasing */
};

struct clmem_av_sync {
    clmem_refcount refs;
    pthread_mutex_t lock; /* the slots, the command pool, the submissions */
    clmem_bridge *bridge;
    AVBufferRef *device; /* FFmpeg's device context: outlives our Vulkan objects */
    const AVVulkanDeviceContext *vk;
    clmem_av_order order; /* HOST or DEVICE */
    struct av_host_fns host;
    /* device order */
    struct av_device_fns fn;
    uint32_t family, index; /* FFmpeg's queue the submissions go to */
    uint32_t qfs[5], nqf;   /* the families FFmpeg shares its images among */
    VkQueue queue;
    VkCommandPool pool;
    VkSemaphore progress; /* timeline: signalled by every submission, at ++submitted */
    uint64_t submitted;
    uint32_t nslots;
    struct av_slot slots[CLMEM_AV_MAX_IN_FLIGHT];
};

/* Can device order work for this bridge and FFmpeg device? CLMEM_OK, or
 * CLMEM_ERR_UNSUPPORTED naming what is missing. */
clmem_status clmem__av_device_order_check(clmem_bridge *b, const AVVulkanDeviceContext *vk);

/* Make and unmake device order's objects (sync->lock not needed: the
 * object is not shared yet, or no more). */
clmem_status clmem__av_device_open(clmem_av_sync *sync);
void clmem__av_device_close(clmem_av_sync *sync);

/* Wait up to timeout_ns until every submission completed, letting go of
 * the frames they held (sync->lock held). */
clmem_status clmem__av_device_finish_locked(clmem_av_sync *sync, uint64_t timeout_ns);

/* The bridge's optimal-tiling live check for `format`
 * (clmem_bridge_image_live_check()), submitted to device order's queue
 * under sync->lock and FFmpeg's queue lock; OpenCL's side on `queue`.
 * The bridge keeps the answer: later calls only read it. */
clmem_status clmem__av_device_live_check(clmem_av_sync *sync, VkFormat format, cl_command_queue queue);

/* Device order's acquire and release (sync->lock held). */
clmem_status clmem__av_device_acquire_locked(clmem_av_sync *sync, const struct av_frame_call *c, AVFrame *frame,
                                             const clmem_av_frame_planes *planes, cl_command_queue queue,
                                             uint64_t timeout_ns, cl_event *event_out);
clmem_status clmem__av_device_release_locked(clmem_av_sync *sync, const struct av_frame_call *c,
                                             const clmem_av_frame_planes *planes, cl_command_queue queue,
                                             cl_uint num_events, const cl_event *wait_list);
#endif
