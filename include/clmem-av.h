/* SPDX-License-Identifier: MIT */
/**
 * @file clmem-av.h
 * @brief clmem-av.h - FFmpeg's Vulkan frames into OpenCL without copying them.
 *
 * libclmem-av's header (@ref libclmem_av). It includes <clmem-bridge.h>
 * and libavutil's <libavutil/frame.h> and <libavutil/buffer.h>.
 */

/**
 * @defgroup libclmem_av libclmem-av
 * @brief FFmpeg's Vulkan frames into OpenCL, one handle per plane.
 *
 * libclmem-av is where FFmpeg's types meet libclmem-bridge: a frame of
 * AV_PIX_FMT_VULKAN (an AVVkFrame: one VkImage, VkDeviceMemory and timeline
 * semaphore per plane) becomes one ::clmem_handle per plane, each a buffer
 * covering the plane's bytes with the plane's real row pitch, imported
 * through clmem_bridge_import_vk_image(). No byte is copied on the fd paths
 * and on zero-copy host-mapped devices.
 *
 * What an FFmpeg user calls:
 * @code
 *   clmem_av_bridge_create(device_ref, NULL, 0, &b);     // once per device
 *   clmem_av_sync_create(b, device_ref, CLMEM_AV_ORDER_BEST, 4, &sync); // once: the order
 *   clmem_av_frames_setup(frames_ref);                   // before av_hwframe_ctx_init
 *   ...
 *   clmem_av_frame_import(b, frame, CLMEM_BRIDGE_PATH_BEST, queue, CL_MEM_READ_WRITE, &planes);
 *   clmem_av_sync_acquire(sync, frame, &planes, queue, timeout_ns, NULL);
 *   kernels on clmem_handle_mem(planes.planes[i]), rows clmem_handle_row_pitch() apart
 *   clmem_av_sync_release(sync, frame, &planes, queue, 0, NULL);
 *   clmem_av_frame_planes_unref(&planes);                // any time after the release
 *   av_frame_free(&frame);                               // any time: the handles hold it
 *   ...
 *   clmem_av_sync_finish(sync, timeout_ns); clmem_av_sync_unref(sync);
 *   clmem_bridge_device_finish(clmem_bridge_vk_device(b), timeout_ns); clmem_bridge_unref(b);
 *   av_buffer_unref(&device_ref);                        // last
 * @endcode
 * clmem_av_frame_acquire() and clmem_av_frame_release(), host order
 * without a sync object (@ref av_order), are deprecated: a sync object in
 * host order does the same. With context NULL the bridge
 * makes its own OpenCL context: on the device with the Vulkan device's
 * UUID, or, where no OpenCL device says its UUID (a CPU OpenCL), on the
 * only OpenCL device there is.
 *
 * Which frames: those of an AVHWFramesContext set up by
 * clmem_av_frames_setup(), whose pool (libclmem-av's own) makes every
 * plane a linear image in a dedicated allocation; frames of another
 * context whose images are linear are imported too, but on some drivers
 * only the set-up ones share right (clmem_av_frames_setup() says why).
 * Software formats: NV12, P010, RGBA, BGRA and YUV420P, of any extent FFmpeg makes,
 * odd ones too: FFmpeg's frame is one single-plane image per plane, the
 * chroma plane of a 65x33 NV12 frame a 33x17 R8G8 image, which Vulkan
 * allows (the bridge's own NV12 images are one two-plane
 * VK_FORMAT_G8_B8R8_2PLANE_420_UNORM image, which Vulkan makes of even
 * extents only, so clmem_bridge_vk_image_create() refuses 65x33).
 *
 * @anchor av_lifetime
 * @par Lifetime
 * The imports hold a reference on their frame, and so on its frames
 * context and FFmpeg's device context, until their teardowns are done
 * (@ref lifetime_teardown); so FFmpeg's device context may be dropped
 * while frames are imported. But the bridge borrows FFmpeg's VkDevice
 * without a reference: drop device_ref last, after
 * clmem_bridge_device_finish() returned CLMEM_OK (@ref
 * lifetime_device_end; a sync object holds a reference of its own). A
 * frame's planes may be dropped while acquired: the import's teardown
 * hands the memory back once OpenCL's commands completed, and the frame
 * goes back to FFmpeg's pool only then; but nothing signals the frame's
 * semaphores, so FFmpeg's next use would not wait for OpenCL: free such a
 * frame, or release it first.
 *
 * @par Requirements
 * FFmpeg 5.1 or later (libavutil 57), whose Vulkan device context is
 * version 1.2 with timeline semaphores. With FFmpeg 6.1 or later
 * (libavutil 58.29) the library takes FFmpeg's queue and frame locks
 * (AVVulkanDeviceContext.lock_queue, AVVulkanFramesContext.lock_frame);
 * FFmpeg 5.1 has none, and clmem_av_sync_acquire() says what the caller
 * then keeps apart. Errors are reported as in clmem.h (@ref errors); the
 * calls before the sync object are in version node CLMEM_AV_0.2, the sync
 * object's in CLMEM_AV_0.3, the OpenCL frames' (@ref av_cl) in
 * CLMEM_AV_0.4 (@ref versioning).
 */

/**
 * @defgroup av_setup The bridge and the frames context
 * @ingroup libclmem_av
 * @brief A bridge on FFmpeg's Vulkan device; a frames context whose
 * frames OpenCL can read.
 */
#ifndef CLMEM_AV_H
#define CLMEM_AV_H

#include <clmem-bridge.h>
#include <libavutil/buffer.h>
#include <libavutil/frame.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Make a bridge (clmem-bridge.h) on the Vulkan device of an FFmpeg Vulkan
 * device context: its instance, physical device and device, with FFmpeg's
 * get_proc_addr as the bridge's vkGetInstanceProcAddr (FFmpeg may have
 * loaded Vulkan itself).
 *
 * With context NULL, the OpenCL device is the one whose CL_DEVICE_UUID_KHR
 * is the Vulkan device's deviceUUID (clmem_bridge_pair()), in a new context
 * that the bridge owns; where no OpenCL device offers cl_khr_device_uuid
 * (a CPU OpenCL), the only OpenCL device of all platforms, as
 * clmem_bridge_create() takes a context's only device (its bridge then shares through the
 * host-mapped path: the fd paths need matching UUIDs). With a context, it
 * is used as clmem_bridge_create() uses clmem_bridge_info::context (its
 * device paired by UUID).
 *
 * The bridge borrows FFmpeg's Vulkan objects, taking no reference on
 * device_ref: drop device_ref last (@ref av_lifetime).
 *
 * @param device_ref An AVBufferRef of an AVHWDeviceContext of type
 *                   AV_HWDEVICE_TYPE_VULKAN (borrowed: no reference is
 *                   taken).
 * @param context    The OpenCL context, or NULL to pair by UUID and make
 *                   one.
 * @param flags      clmem_bridge_info::flags (clmem_bridge_flag bits).
 * @param[out] out   The bridge, one reference, the caller's
 *                   (clmem_bridge_unref()).
 * @retval CLMEM_OK                  *out is the bridge.
 * @retval CLMEM_ERR_NULL_POINTER    device_ref or out is NULL, or the
 *                                   device context has no instance,
 *                                   physical device or device.
 * @retval CLMEM_ERR_INVALID_VALUE   device_ref is not a Vulkan device
 *                                   context, or flags has unknown bits.
 * @retval CLMEM_ERR_DEVICE_MISMATCH context NULL and no OpenCL device has
 *                                   the Vulkan device's UUID; or the errors
 *                                   of clmem_bridge_create().
 * @retval CLMEM_ERR_UNSUPPORTED     context NULL, no OpenCL device offers
 *                                   cl_khr_device_uuid, and there is not
 *                                   exactly one OpenCL device (the sentence
 *                                   gives the count: pass a context); or as
 *                                   for clmem_bridge_create().
 * @retval CLMEM_ERR_OPENCL          Pairing, clCreateContext or a query
 *                                   failed.
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is NULL (when out is not NULL) and nothing is retained.
 * @par Blocks
 *      On the driver queries of pairing and of clmem_bridge_create() (a
 *      millisecond or so), and on clCreateContext when context is NULL.
 * @ingroup av_setup
 * @since 0.2
 */
clmem_status clmem_av_bridge_create(AVBufferRef *device_ref, cl_context context, uint32_t flags,
                                    clmem_bridge **out);

/**
 * Set up a Vulkan frames context, before av_hwframe_ctx_init(), so that its
 * frames can be imported by clmem_av_frame_import().
 *
 * It gives the frames context libclmem-av's own frame pool: every frame's
 * planes are VK_IMAGE_TILING_LINEAR images (OpenCL reads them as rows),
 * each bound at offset 0 to a dedicated allocation of its own
 * (VkMemoryDedicatedAllocateInfo), device-local and exportable as opaque
 * fd (and dma-buf) where FFmpeg's device enabled VK_KHR_external_memory_fd
 * (and Vulkan exports such images), host-visible where it exports nothing
 * (the host-mapped path). The images are made without the frames
 * context's create_pnext (where FFmpeg puts a DRM format modifier list,
 * invalid on linear images).
 *
 * FFmpeg's own calls on these frames. The frames' AVVkFrame.flags leave
 * out VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, so that FFmpeg never maps
 * their memory (on the host-mapped path the import holds the memory's one
 * mapping while it lives): av_hwframe_transfer_data() moves them with its
 * staging copies, which wait on the frame's semaphores, and
 * av_hwframe_map() refuses them. av_hwframe_ctx_init() makes one trial
 * frame of its own with the frames context's tiling and create_pnext; on
 * a device with VK_EXT_image_drm_format_modifier setup gives the frames
 * context VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT and a modifier list of
 * its own first in create_pnext (the linear modifier where Vulkan takes it
 * for every plane format and the usage, else those it takes), so that the
 * trial image is valid (FFmpeg 5.1 adds a list whatever the tiling, and a
 * list on a linear image is invalid usage); elsewhere the tiling becomes
 * VK_IMAGE_TILING_LINEAR. The pool's frames are linear either way. Where the frames context's usage is 0, the
 * images get FFmpeg's default usage (transfers, sampled, storage) less
 * what Vulkan cannot make linear images of the format with. A new frame's
 * layouts are VK_IMAGE_LAYOUT_UNDEFINED and its timeline semaphores start
 * at sem_value 0, which FFmpeg's first submission on it waits for and
 * passes.
 *
 * Why its own pool: FFmpeg 5.1's pool allocates a plane dedicated only
 * where Vulkan prefers or requires it, and a driver may say neither for
 * linear images while an OpenCL kernel's writes to such non-dedicated
 * exported memory read back wrong in Vulkan (NVIDIA; none wrong with this
 * pool: docs/driver-notes.md). FFmpeg cannot be asked for a dedicated
 * allocation. Why linear: FFmpeg 5.1 otherwise tiles frames with the
 * driver's layout, which OpenCL cannot read as rows.
 *
 * The pool lives as long as the frames context: setup keeps the
 * AVHWFramesContext.free callback it finds, puts its own in its place, and
 * calls the caller's from it, after the pool let go of its frames. Set
 * free (and user_opaque) before clmem_av_frames_setup(), not after:
 * clmem_av_frame_import() refuses the frames of a context whose free
 * callback was replaced since (the pool would never be freed).
 *
 * @param frames_ref An AVBufferRef of an AVHWFramesContext allocated with
 *                   av_hwframe_ctx_alloc() on a Vulkan device, with
 *                   format AV_PIX_FMT_VULKAN and sw_format set, not yet
 *                   initialised (borrowed).
 * @retval CLMEM_OK                The frames context is set up.
 * @retval CLMEM_ERR_NULL_POINTER  frames_ref is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE Not a Vulkan frames context; format is not
 *                                 AV_PIX_FMT_VULKAN; it has a pool already
 *                                 (initialised, or a pool of the caller's);
 *                                 its tiling is neither FFmpeg's default
 *                                 (VK_IMAGE_TILING_OPTIMAL) nor
 *                                 VK_IMAGE_TILING_LINEAR; or create_pnext
 *                                 lists DRM format modifiers. The sentence
 *                                 says which.
 * @retval CLMEM_ERR_NO_MEMORY     Allocating the pool failed.
 * @retval CLMEM_ERR_UNSUPPORTED   sw_format is not NV12, P010, RGBA, BGRA or
 *                                 YUV420P;
 *                                 Vulkan makes no linear images of its
 *                                 plane formats, even for transfers only;
 *                                 or, on a device with DRM format
 *                                 modifiers, none of them takes every plane
 *                                 format with the usage (FFmpeg's trial
 *                                 image would be invalid).
 * @par On error
 *      The frames context is unchanged.
 * @par Blocks
 *      Never.
 * @ingroup av_setup
 * @since 0.2
 */
clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref);

/**
 * Set a Vulkan frames context up, before av_hwframe_ctx_init(), for frames
 * OpenCL takes as images: optimal tiling, exportable as opaque fds.
 *
 * The frames context gets libclmem-av's pool, as with
 * clmem_av_frames_setup(), whose frames here are one optimal-tiling
 * VkImage per plane (FFmpeg's own layout for its frames: R8 and R8G8 for
 * NV12, R16 and R16G16 for P010, R8 three times for YUV420P, R8G8B8A8 or
 * B8G8R8A8 for RGBA and BGRA), each bound at offset 0 to a dedicated
 * allocation of its own that is exported as an opaque fd (and as a dma-buf
 * where FFmpeg's device enabled that too). Their layout is the driver's:
 * OpenCL cannot read them as rows, so clmem_av_frame_import() refuses
 * them. They are made for the image way (CLMEM_AV_CL_WAY_VK_IMAGE), each
 * plane's VkImage imported as an OpenCL image
 * (clmem_bridge_import_vk_image() with optimal tiling), which is the way
 * on NVIDIA's driver, where OpenCL makes no image2d from a buffer
 * (@ref av_cl says how clmem_av_cl_map() hands them over). FFmpeg's own
 * transfers (av_hwframe_transfer_data(),
 * hwupload, hwdownload) work on them as on any of its frames.
 *
 * Where the frames context's usage is 0, the images get the usage the
 * bridge's live check (clmem_bridge_image_live_check()) proves an
 * optimal-tiling import with: transfers, plus sampled and storage where
 * every plane format's optimal-tiling features allow them. A usage the
 * caller set is kept; a driver may lay out images of another usage
 * differently from the checked ones. The frames context's tiling must be
 * FFmpeg's default (VK_IMAGE_TILING_OPTIMAL); on a device with DRM format
 * modifiers setup gives FFmpeg's trial image a modifier list of its own,
 * as clmem_av_frames_setup() does. A new frame's layouts are
 * VK_IMAGE_LAYOUT_UNDEFINED and its timeline semaphores start at
 * sem_value 0. The pool's lifetime and the free callback are as for
 * clmem_av_frames_setup().
 *
 * @param frames_ref As for clmem_av_frames_setup().
 * @retval CLMEM_OK                The frames context is set up.
 * @retval CLMEM_ERR_NULL_POINTER  frames_ref is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE As for clmem_av_frames_setup(), and a
 *                                 tiling other than FFmpeg's default
 *                                 (VK_IMAGE_TILING_OPTIMAL).
 * @retval CLMEM_ERR_NO_MEMORY     Allocating the pool failed.
 * @retval CLMEM_ERR_UNSUPPORTED   sw_format is not NV12, P010, RGBA, BGRA or
 *                                 YUV420P; FFmpeg's device did not enable
 *                                 VK_KHR_external_memory_fd; Vulkan cannot
 *                                 copy to and from optimal-tiling images of
 *                                 the plane formats, or makes none of them
 *                                 with the usage exportable as an opaque
 *                                 fd; or the trial image's modifier list
 *                                 fails as for clmem_av_frames_setup(). The
 *                                 sentence names the format.
 * @par On error
 *      The frames context is unchanged.
 * @par Blocks
 *      Never.
 * @ingroup av_setup
 * @since 0.4
 */
clmem_status clmem_av_frames_setup_optimal(AVBufferRef *frames_ref);

/**
 * @defgroup av_frames Frames
 * @ingroup libclmem_av
 * @brief A frame's planes as handles, and host order without a sync object.
 */

/**
 * At most this many planes has a frame clmem_av_frame_import() imports.
 * @ingroup av_frames
 * @since 0.2
 */
#define CLMEM_AV_MAX_PLANES 4

/**
 * A frame's planes in OpenCL, from clmem_av_frame_import().
 *
 * This struct is frozen: a future field comes with a new struct and new
 * functions.
 * @ingroup av_frames
 * @since 0.2
 */
typedef struct clmem_av_frame_planes {
    uint32_t count; /**< Planes: 2 for NV12 and P010, 1 for RGBA and BGRA, 3 for YUV420P. */
    clmem_handle *planes[CLMEM_AV_MAX_PLANES]; /**< planes[0 .. count): one reference each, the holder's.
                                                    A buffer of the plane's bytes; texel (x, y) starts at
                                                    y * clmem_handle_row_pitch() + x * texel bytes. */
    VkFormat formats[CLMEM_AV_MAX_PLANES];     /**< The plane image's format (VK_FORMAT_R8_UNORM and
                                                    VK_FORMAT_R8G8_UNORM for NV12, ...):
                                                    clmem_bridge_image_plane_format() gives its texel
                                                    bytes and cl_image_format. */
    uint32_t widths[CLMEM_AV_MAX_PLANES];      /**< The plane's width in its own texels. */
    uint32_t heights[CLMEM_AV_MAX_PLANES];     /**< The plane's height in rows. */
} clmem_av_frame_planes;

/**
 * Import a frame of AV_PIX_FMT_VULKAN: one handle per plane, each with its
 * row pitch, paired with `queue`.
 *
 * Each plane's layout is read from Vulkan (vkGetImageSubresourceLayout,
 * with VK_IMAGE_ASPECT_MEMORY_PLANE_0_BIT_EXT for a DRM modifier), and the
 * plane is imported with clmem_bridge_import_vk_image() (its paths, cache,
 * acquire, release and teardown rules hold). What Vulkan cannot be asked
 * afterwards is worked out as FFmpeg 5.1's pool chose it: the export types
 * by the question FFmpeg asked Vulkan (opaque fd, dma-buf), and a dedicated
 * allocation where Vulkan prefers or requires one.
 *
 * Lifetime: the handles' imports hold a reference on the frame (its
 * buffers and its frames context, as av_frame_ref() takes them) as their
 * Vulkan keepalive, dropped by the imports' teardowns, that is after the
 * last handle is gone and OpenCL's commands on the frame completed
 * (@ref lifetime_teardown). So the frame goes back to
 * FFmpeg's pool only after that, whatever order the caller drops the frame
 * and the handles in, and a frames context torn down while frames are
 * imported lives on until then.
 *
 * The host-mapped path maps the plane's memory (vkMapMemory) while it is
 * imported, until the import's teardown; Vulkan allows one mapping of a
 * memory at a time, and FFmpeg never maps a frame of a set-up pool
 * (clmem_av_frames_setup()), so FFmpeg may transfer the frame whenever it
 * is FFmpeg's, imported or not. A frame of FFmpeg's own pool that FFmpeg
 * made linear and host-visible it maps itself to transfer it, so such a
 * frame is refused on that path. The fd paths map nothing.
 *
 * Cost: importing a frame whose planes are still imported (a handle of
 * them is alive) is a cache hit per plane: a lock, a lookup and an
 * allocation, plus the layout queries (a few microseconds). Otherwise one
 * driver import per plane (clmem_bridge_import_vk()'s cost). Each call
 * adds one frame reference to the imports it hits, held until their
 * teardown.
 *
 * @param b          The bridge, on the frame's VkDevice
 *                   (clmem_av_bridge_create()).
 * @param frame      The frame (borrowed; a reference is taken as above).
 * @param path       As for clmem_bridge_import_vk(): BEST picks opaque fd,
 *                   dma-buf, host-mapped, the first the memory allows.
 * @param queue      A queue of the bridge's context.
 * @param flags      cl_mem_flags of the plane buffers.
 * @param[out] out   The planes; each handle's reference is the caller's
 *                   (clmem_av_frame_planes_unref()).
 * @retval CLMEM_OK                  *out holds the planes.
 * @retval CLMEM_ERR_NULL_POINTER    b, frame, queue or out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   frame is not of AV_PIX_FMT_VULKAN (the
 *                                   sentence names its pix_fmt), has no
 *                                   AVVkFrame or no frames context; its
 *                                   frames context was set up and its free
 *                                   callback replaced since (see
 *                                   clmem_av_frames_setup()); and the
 *                                   bridge import's own (flags, path).
 * @retval CLMEM_ERR_DEVICE_MISMATCH The frame's VkDevice is not the
 *                                   bridge's (a frame of another device).
 * @retval CLMEM_ERR_UNSUPPORTED     sw_format is not NV12, P010, RGBA,
 *                                   BGRA or YUV420P; the frame is tiled (optimal, or a
 *                                   DRM modifier other than linear: set the
 *                                   pool up with clmem_av_frames_setup());
 *                                   an fd path (asked, or the only one the
 *                                   bridge has) for memory FFmpeg did not
 *                                   allocate exportable as it (the sentence
 *                                   says why: its device lacks
 *                                   VK_KHR_external_memory_fd, or Vulkan
 *                                   cannot export such images); the
 *                                   host-mapped path for a linear
 *                                   host-visible frame of FFmpeg's own pool
 *                                   (FFmpeg maps it itself); and the bridge
 *                                   import's own.
 * @retval CLMEM_ERR_VULKAN          A Vulkan query failed.
 * @retval CLMEM_ERR_OPENCL          An OpenCL call failed (the import).
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is zeroed (when not NULL); no handle, frame reference or fd is
 *      left behind.
 * @par Threads
 *      The frame reference is dropped (av_frame_free) where the imports'
 *      Vulkan keepalives are (@ref lifetime_callbacks): possibly on an
 *      OpenCL driver thread, or in clmem_bridge_finish() or
 *      clmem_bridge_device_finish(). That returns the frame to
 *      FFmpeg's pool, which is thread-safe; but when it was the last
 *      reference to an unreffed frames context, FFmpeg frees the pool
 *      there, calling vkDeviceWaitIdle, which Vulkan wants externally
 *      synchronised with every queue of the device. So drop a frames
 *      context whose frames were imported only after
 *      clmem_bridge_device_finish() returned CLMEM_OK, or while no thread
 *      submits to FFmpeg's device.
 * @par Blocks
 *      On the Vulkan layout queries and the driver imports; on the
 *      host-mapped path also a blocking clEnqueueMapBuffer on queue.
 * @ingroup av_frames
 * @since 0.2
 */
clmem_status clmem_av_frame_import(clmem_bridge *b, const AVFrame *frame, clmem_bridge_path path,
                                   cl_command_queue queue, cl_mem_flags flags, clmem_av_frame_planes *out);

/**
 * Drop the caller's references on the planes and zero *planes.
 *
 * @param planes The planes, or NULL (which does nothing); a zeroed struct
 *               does nothing either.
 * @par Threads
 *      A plane's last handle starts its import's teardown, as
 *      clmem_handle_unref() does (@ref lifetime_teardown).
 * @par Blocks
 *      Never.
 * @ingroup av_frames
 * @since 0.2
 */
void clmem_av_frame_planes_unref(clmem_av_frame_planes *planes);

/**
 * Host order (clmem_av_order) without a sync object: wait on the host
 * until FFmpeg's work on the frame completed (each plane's timeline
 * semaphore reached sem_value, read under FFmpeg's frame lock where it
 * has one), then clmem_bridge_acquire_many() of the planes on `queue`.
 *
 * The frame's Vulkan image layout is not changed: no Vulkan command is
 * recorded. The planes are linear, whose bytes the driver lays out the
 * same in every layout FFmpeg leaves a frame in on NVIDIA and lavapipe
 * (Vulkan itself defines a linear image's bytes only in
 * VK_IMAGE_LAYOUT_GENERAL).
 *
 * Cost: one vkWaitSemaphores of every plane (it returns at once when
 * FFmpeg's work completed) and one clmem_bridge_acquire_many(); the Vulkan
 * entry points are resolved once per frames context of
 * clmem_av_frames_setup() (per call for frames of FFmpeg's own pool).
 *
 * @param b          The bridge the planes were imported by.
 * @param frame      The frame the planes were imported from.
 * @param planes     Its planes: clmem_av_frame_import() of this very frame
 *                   (planes of another frame are refused).
 * @param queue      A queue of the bridge's context with a handle of each
 *                   plane's import (their own queue, or
 *                   clmem_bridge_handle_for_queue()).
 * @param timeout_ns How long to wait at most for FFmpeg's work, in
 *                   nanoseconds; UINT64_MAX has no limit.
 * @param[out] event_out If not NULL, the acquire's event, the caller's to
 *                   release; NULL on error.
 * @retval CLMEM_OK                The acquire is enqueued.
 * @retval CLMEM_ERR_NULL_POINTER  b, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE frame is not of AV_PIX_FMT_VULKAN;
 *                                 planes does not hold as many planes as the
 *                                 frame has, or they are not this frame's
 *                                 (imported from another frame); and those
 *                                 of clmem_bridge_acquire_many() (already
 *                                 acquired).
 * @retval CLMEM_ERR_DEVICE_MISMATCH The frame is on another VkDevice than
 *                                 the bridge's.
 * @retval CLMEM_ERR_TIMEOUT       FFmpeg's work had not completed within
 *                                 timeout_ns; nothing is enqueued.
 * @retval CLMEM_ERR_VULKAN        vkWaitSemaphores failed.
 * @retval CLMEM_ERR_OPENCL        The acquire was refused.
 * @par On error
 *      Nothing is enqueued and the frame is unchanged.
 * @par Blocks
 *      Up to timeout_ns, on FFmpeg's work on the frame.
 * @ingroup av_frames
 * @since 0.2
 * @deprecated Since 0.3: use clmem_av_sync_acquire() on a sync object in host order
 *             (clmem_av_sync_create() with CLMEM_AV_ORDER_HOST), which does
 *             the same.
 */
CLMEM_DEPRECATED_FOR(clmem_av_sync_acquire)
clmem_status clmem_av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out);

/**
 * Host order (clmem_av_order) without a sync object: hand the frame back
 * to FFmpeg. clmem_bridge_release_many() of the planes on `queue` after
 * wait_list, a host wait until it completed (clFinish(queue)), then for
 * each plane vkSignalSemaphore(sem, sem_value + 1) and sem_value + 1
 * stored in the frame (under FFmpeg's frame lock where it has one), so that FFmpeg's
 * next submission on the frame (a filter, a download) waits for it and
 * sees OpenCL's writes.
 *
 * layout is left as it was (no Vulkan command changed it: see
 * clmem_av_frame_acquire()); access becomes VK_ACCESS_MEMORY_READ_BIT |
 * VK_ACCESS_MEMORY_WRITE_BIT, what FFmpeg records after external use.
 *
 * Cost: one clmem_bridge_release_many(), clFinish, the release event's
 * status, and one vkSignalSemaphore per plane (Vulkan signals one semaphore
 * per call from the host).
 *
 * @param b          The bridge the planes were imported by.
 * @param frame      The frame the planes were imported from and acquired.
 * @param planes     Its planes (planes of another frame are refused).
 * @param queue      The queue they were acquired on.
 * @param num_events How many events wait_list has.
 * @param wait_list  The events the release waits for too (kernels on other
 *                   queues), or NULL.
 * @retval CLMEM_OK                The release completed and the semaphores
 *                                 are signalled.
 * @retval CLMEM_ERR_NULL_POINTER  b, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE frame is not of AV_PIX_FMT_VULKAN, or
 *                                 planes is not this frame's (the count
 *                                 differs, or they were imported from
 *                                 another frame); and those of
 *                                 clmem_bridge_release_many() (a plane not
 *                                 acquired). Nothing is enqueued or
 *                                 signalled.
 * @retval CLMEM_ERR_DEVICE_MISMATCH The frame is on another VkDevice than
 *                                 the bridge's.
 * @retval CLMEM_ERR_OPENCL        The release was refused (nothing changed),
 *                                 or it or a command before it ended in an
 *                                 error: the semaphores are signalled anyway
 *                                 so that FFmpeg never waits forever, and the
 *                                 frame's contents are undefined.
 * @retval CLMEM_ERR_VULKAN        vkSignalSemaphore failed; sem_value is
 *                                 left at the value not signalled.
 * @par Threads
 *      It writes the frame's AVVkFrame (sem_value, access), as FFmpeg's
 *      own calls do: do not call it while another thread hands the same
 *      frame to FFmpeg.
 * @par Blocks
 *      On the release and everything enqueued on queue before it
 *      (clFinish).
 * @ingroup av_frames
 * @since 0.2
 * @deprecated Since 0.3: use clmem_av_sync_release() on a sync object in host order
 *             (clmem_av_sync_create() with CLMEM_AV_ORDER_HOST), which does
 *             the same.
 */
CLMEM_DEPRECATED_FOR(clmem_av_sync_release)
clmem_status clmem_av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, cl_uint num_events, const cl_event *wait_list);

/**
 * @defgroup av_order Ordering
 * @ingroup libclmem_av
 * @brief Which order a frame's handoff runs in, host or device, and the
 * sync object that runs it.
 *
 * FFmpeg requires every user of a frame to wait for each plane's timeline
 * semaphore at sem_value before touching it, and to signal sem_value + 1
 * when done (storing it in the frame). OpenCL has binary semaphores only,
 * so it cannot wait on those timelines itself; either the host or a Vulkan
 * submission stands in between:
 *  - Host order: clmem_av_frame_acquire() and clmem_av_frame_release(), or
 *    a sync object of CLMEM_AV_ORDER_HOST; works on every path. Acquire
 *    waits on the host for FFmpeg's work (vkWaitSemaphores), release waits
 *    on the host until OpenCL's release completed (clFinish), then signals
 *    each plane's timeline semaphore from the host (vkSignalSemaphore). It
 *    submits nothing to Vulkan, so it pays no GPU context switch, and one
 *    frame at a time it is the faster order. Its cost is the host waits: a
 *    thread sleeps while the GPU finishes FFmpeg's work, and again while it
 *    finishes OpenCL's; FFmpeg's and OpenCL's work never overlap.
 *  - Device order: a sync object of CLMEM_AV_ORDER_DEVICE. Neither call
 *    waits on the host: acquire submits, on FFmpeg's Vulkan device, a wait
 *    for each plane's timeline semaphore at sem_value and a signal of a
 *    binary semaphore that OpenCL waits on before the acquire; release has
 *    OpenCL signal a second binary semaphore after the release, and
 *    submits a wait for it and the signal of each plane's timeline
 *    semaphore at sem_value + 1. So FFmpeg's work on one frame and OpenCL's
 *    on another overlap when several frames are in flight. A semaphore
 *    submission costs more than a host wait one frame at a time, least on
 *    a transfer-only queue, where the GPU does not switch context as its
 *    graphics queue does. Needs semaphores both APIs share
 *    (clmem_bridge_check_semaphore() with CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD,
 *    as on NVIDIA) and FFmpeg's device with VK_KHR_external_semaphore_fd;
 *    a CPU OpenCL imports no semaphore, so there only host order exists.
 *    One thing can still hold the calls on the host, and it is the
 *    driver's: on NVIDIA's driver (580), clEnqueueAcquireExternalMemObjectsKHR,
 *    clEnqueueReleaseExternalMemObjectsKHR and clEnqueueSignalSemaphoresKHR
 *    each wait on the host while an earlier command on their queue waits
 *    for a user event (clCreateUserEvent) that is not yet complete. They
 *    do not wait for a kernel that is merely running, so device order's
 *    calls return at once behind running work; behind a user event they
 *    return once it is set complete.
 *
 * CLMEM_AV_ORDER_BEST takes device order where it works and more than one
 * frame is in flight, host order otherwise; clmem_av_sync_get_order() says
 * which runs. clmem-bench's measure (j) times both, beside the bridge's
 * plane handoff of the same frame (clmem-bench(1); docs/performance.md).
 */

/**
 * How a frame's handoff between FFmpeg and OpenCL is ordered: host or
 * device order (@ref av_order).
 * @ingroup av_order
 * @since 0.3
 */
typedef enum clmem_av_order {
    CLMEM_AV_ORDER_BEST = 0,  /**< Device order where it works and frames_in_flight is 2 or more, else host. */
    CLMEM_AV_ORDER_HOST = 1,  /**< Host order. */
    CLMEM_AV_ORDER_DEVICE = 2 /**< Device order. */
} clmem_av_order;

/**
 * An order's short name.
 *
 * @param order Any value.
 * @return "host", "device", "best", or "unknown-order"; static storage.
 * @par Blocks
 *      Never.
 * @ingroup av_order
 * @since 0.3
 */
const char *clmem_av_order_name(clmem_av_order order);

/**
 * Most frames a sync object keeps in flight (clmem_av_sync_create()).
 * @ingroup av_order
 * @since 0.3
 */
#define CLMEM_AV_MAX_IN_FLIGHT 16

/**
 * What orders the handoffs of frames between FFmpeg and OpenCL on one
 * bridge: the order chosen at creation and, for device order, the
 * library's own Vulkan objects on FFmpeg's device (a command pool, two
 * binary semaphores and two command buffers per frame in flight, all made
 * once and reused, and a timeline semaphore counting its submissions).
 * Opaque and reference-counted.
 * @ingroup av_order
 * @since 0.3
 */
typedef struct clmem_av_sync clmem_av_sync;

/**
 * Make a sync object.
 *
 * Device order submits to one queue of FFmpeg's device: queue
 * nb_tx_queues - 1 of its transfer family (queue_family_tx_index). FFmpeg
 * picks as that family the one with the fewest other capabilities, a
 * transfer-only family where the device has one (NVIDIA's), where a
 * semaphore-only submission does not pay the GPU's context switch between
 * Vulkan and OpenCL that the graphics queue pays.
 *
 * @param b                The bridge, on FFmpeg's device
 *                         (clmem_av_bridge_create()); a reference is taken.
 * @param device_ref       FFmpeg's Vulkan device context (the bridge's); a
 *                         reference is taken, so that the sync object's
 *                         Vulkan objects go before the device.
 * @param order            CLMEM_AV_ORDER_BEST, _HOST or _DEVICE.
 * @param frames_in_flight 1 to CLMEM_AV_MAX_IN_FLIGHT: how many frames may
 *                         be acquired, or released with their Vulkan
 *                         submission not yet completed, at once (device
 *                         order; host order has one at a time per thread).
 * @param[out] out         The sync object, one reference, the caller's.
 * @retval CLMEM_OK                  *out is the sync object;
 *                                   clmem_av_sync_get_order() says which
 *                                   order it runs.
 * @retval CLMEM_ERR_NULL_POINTER    b, device_ref or out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   device_ref is not a Vulkan device
 *                                   context, order is unknown, or
 *                                   frames_in_flight is 0 or above
 *                                   CLMEM_AV_MAX_IN_FLIGHT.
 * @retval CLMEM_ERR_DEVICE_MISMATCH The bridge is on another VkDevice.
 * @retval CLMEM_ERR_UNSUPPORTED     CLMEM_AV_ORDER_DEVICE where it cannot
 *                                   work: the sentence names what is
 *                                   missing (OpenCL's semaphore import,
 *                                   FFmpeg's VK_KHR_external_semaphore_fd,
 *                                   a Vulkan entry point).
 * @retval CLMEM_ERR_VULKAN          Making a Vulkan object failed.
 * @retval CLMEM_ERR_OPENCL          Importing a semaphore into OpenCL failed.
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is NULL (when out is not NULL); nothing is made or held.
 * @par Blocks
 *      On the driver calls (device order: 2 x frames_in_flight semaphore
 *      exports and imports).
 * @ingroup av_order
 * @since 0.3
 */
clmem_status clmem_av_sync_create(clmem_bridge *b, AVBufferRef *device_ref, clmem_av_order order,
                                  uint32_t frames_in_flight, clmem_av_sync **out);

/**
 * The order the sync object runs.
 *
 * @param sync The sync object, or NULL.
 * @return CLMEM_AV_ORDER_HOST or CLMEM_AV_ORDER_DEVICE (never BEST);
 *         CLMEM_AV_ORDER_BEST for NULL.
 * @par Blocks
 *      Never.
 * @ingroup av_order
 * @since 0.3
 */
clmem_av_order clmem_av_sync_get_order(const clmem_av_sync *sync);

/**
 * One more reference.
 *
 * @param sync The sync object, or NULL.
 * @return sync (NULL for NULL).
 * @par Blocks
 *      Never.
 * @ingroup av_order
 * @since 0.3
 */
clmem_av_sync *clmem_av_sync_ref(clmem_av_sync *sync);

/**
 * Drop one reference. The last waits until the sync object's Vulkan
 * submissions completed (call clmem_av_sync_finish() first to bound that
 * wait), destroys its Vulkan objects, releases its OpenCL semaphores and
 * drops its references on the bridge, on FFmpeg's device context and on
 * frames still held. A frame acquired and never released keeps its
 * timeline semaphores where they were (FFmpeg's next use does not wait for
 * OpenCL): release every frame you acquired.
 *
 * @param sync The sync object, or NULL (which does nothing).
 * @par Blocks
 *      The last reference, on the sync object's Vulkan submissions (each
 *      waits on OpenCL's signal of its frame).
 * @ingroup av_order
 * @since 0.3
 */
void clmem_av_sync_unref(clmem_av_sync *sync);

/**
 * Wait until every Vulkan submission of the sync object completed: after
 * CLMEM_OK FFmpeg's semaphores of every frame released through it are
 * signalled, and the frames it held are let go.
 *
 * @param sync       The sync object.
 * @param timeout_ns How long to wait at most, in nanoseconds.
 * @retval CLMEM_OK               Nothing of the sync object is pending.
 * @retval CLMEM_ERR_TIMEOUT      A submission was still pending (OpenCL had
 *                                not signalled its frame).
 * @retval CLMEM_ERR_VULKAN       vkWaitSemaphores failed.
 * @retval CLMEM_ERR_NULL_POINTER sync is NULL.
 * @par Blocks
 *      Up to timeout_ns.
 * @ingroup av_order
 * @since 0.3
 */
clmem_status clmem_av_sync_finish(clmem_av_sync *sync, uint64_t timeout_ns);

/**
 * Hand the frame to OpenCL in the sync object's order, then
 * clmem_bridge_acquire_many() of its planes on `queue`.
 *
 * Host order: clmem_av_frame_acquire(). Device order: one vkQueueSubmit
 * that waits for each plane's timeline semaphore at sem_value and records
 * each plane image's move to VK_IMAGE_LAYOUT_GENERAL and its queue-family
 * release to VK_QUEUE_FAMILY_EXTERNAL (as FFmpeg's own CUDA interop does),
 * signalling a binary semaphore; then, on `queue`, the wait for that
 * semaphore (clEnqueueWaitSemaphoresKHR) and the acquire. Returns once
 * submitted and enqueued.
 *
 * @param sync       The sync object.
 * @param frame      The frame the planes were imported from.
 * @param planes     Its planes (clmem_av_frame_import() of this frame).
 * @param queue      An in-order queue of the bridge's context with a handle
 *                   of each plane's import.
 * @param timeout_ns Host order: as for clmem_av_frame_acquire(). Device
 *                   order: how long to wait at most for one of the
 *                   frames_in_flight slots to come free.
 * @param[out] event_out If not NULL, the acquire's event, the caller's to
 *                   release; NULL on error.
 * @retval CLMEM_OK                The acquire is enqueued.
 * @retval CLMEM_ERR_NULL_POINTER  sync, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE As for clmem_av_frame_acquire(); device
 *                                 order also: the frame is acquired through
 *                                 this sync object already, or `queue` is
 *                                 out of order.
 * @retval CLMEM_ERR_DEVICE_MISMATCH The frame is on another VkDevice.
 * @retval CLMEM_ERR_TIMEOUT       Host order: FFmpeg's work had not
 *                                 completed. Device order: frames_in_flight
 *                                 frames were acquired or their releases
 *                                 pending on the device for all of
 *                                 timeout_ns. Nothing is submitted.
 * @retval CLMEM_ERR_VULKAN        A Vulkan call failed; nothing is
 *                                 enqueued.
 * @retval CLMEM_ERR_OPENCL        The wait or the acquire was refused after
 *                                 the Vulkan submission: the frame is handed
 *                                 back to FFmpeg by a second submission, as
 *                                 a release would (sem_value advanced by
 *                                 one, layout GENERAL, its bytes as they
 *                                 were).
 * @par On error
 *      But for CLMEM_ERR_OPENCL above, nothing is submitted or enqueued and
 *      the frame is unchanged.
 * @par Threads
 *      Calls on one sync object take its lock. Device order submits to a
 *      queue of FFmpeg's device: with FFmpeg 6.1 and later (libavutil
 *      58.29) under FFmpeg's queue lock (AVVulkanDeviceContext.lock_queue)
 *      and frame lock (AVVulkanFramesContext.lock_frame). FFmpeg 5.1 has
 *      neither: no other thread may submit to FFmpeg's device (FFmpeg's
 *      transfers, filters, another sync object) while the call runs, as
 *      Vulkan requires of a VkQueue and FFmpeg 5.1 itself does not ensure:
 *      make FFmpeg's calls and these from one thread, or under one lock of
 *      yours.
 * @par Blocks
 *      Host order: as clmem_av_frame_acquire(). Device order: only when
 *      frames_in_flight frames are in flight, until the oldest release's
 *      Vulkan submission completed; and where the driver's enqueue calls
 *      wait behind an incomplete user event on `queue` (NVIDIA's: see
 *      @ref av_order), until it is set complete.
 * @ingroup av_order
 * @since 0.3
 */
clmem_status clmem_av_sync_acquire(clmem_av_sync *sync, AVFrame *frame, const clmem_av_frame_planes *planes,
                                   cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out);

/**
 * Hand the frame back to FFmpeg in the sync object's order, after
 * clmem_bridge_release_many() of its planes on `queue` (after wait_list).
 *
 * Host order: clmem_av_frame_release(). Device order: on `queue`, the
 * release and the signal of a binary semaphore
 * (clEnqueueSignalSemaphoresKHR, then clFlush); then one vkQueueSubmit that
 * waits for it, records each plane image's queue-family acquire from
 * VK_QUEUE_FAMILY_EXTERNAL, and signals each plane's timeline semaphore at
 * sem_value + 1, which it stores in the frame with layout
 * VK_IMAGE_LAYOUT_GENERAL and access VK_ACCESS_MEMORY_READ_BIT |
 * VK_ACCESS_MEMORY_WRITE_BIT. Returns once enqueued and submitted: FFmpeg's
 * next submission on the frame (an upload into it, a download, a filter)
 * waits on the device for OpenCL's work. Until that submission completed
 * the sync object holds a reference on the frame.
 *
 * @param sync       The sync object.
 * @param frame      The frame, acquired through sync.
 * @param planes     Its planes.
 * @param queue      The queue they were acquired on.
 * @param num_events How many events wait_list has.
 * @param wait_list  Events the release waits for too, or NULL.
 * @retval CLMEM_OK                Enqueued and submitted (host order: done).
 * @retval CLMEM_ERR_NULL_POINTER  sync, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE As for clmem_av_frame_release(); device
 *                                 order also: the frame is not acquired
 *                                 through this sync object. Nothing
 *                                 changed.
 * @retval CLMEM_ERR_OPENCL        The release was refused: nothing changed.
 *                                 (Host order: as clmem_av_frame_release().)
 * @retval CLMEM_ERR_VULKAN        Device order: vkQueueSubmit failed after
 *                                 OpenCL's release was enqueued: FFmpeg's
 *                                 semaphores are not signalled, and the
 *                                 slot is not used again.
 * @par Threads
 *      As clmem_av_sync_acquire().
 * @par Blocks
 *      Host order: as clmem_av_frame_release(). Device order: never for
 *      the GPU's work (if OpenCL refuses the semaphore signal,
 *      clFinish(queue) instead); but where the driver's enqueue calls wait
 *      behind an incomplete user event on `queue` (NVIDIA's: see
 *      @ref av_order), until it is set complete.
 * @ingroup av_order
 * @since 0.3
 */
clmem_status clmem_av_sync_release(clmem_av_sync *sync, AVFrame *frame, const clmem_av_frame_planes *planes,
                                   cl_command_queue queue, cl_uint num_events, const cl_event *wait_list);

/**
 * @defgroup av_cl FFmpeg's OpenCL filters on Vulkan frames
 * @ingroup libclmem_av
 * @brief A Vulkan frame as an AV_PIX_FMT_OPENCL frame, for libavfilter's
 * OpenCL filters (avgblur_opencl, unsharp_opencl, overlay_opencl, ...).
 *
 * FFmpeg maps Vulkan frames to VAAPI and DRM only; these calls make the
 * OpenCL side: an FFmpeg OpenCL device over the bridge's own cl_context
 * (clmem_av_cl_device_create()), an OpenCL frames context that matches a
 * Vulkan one (clmem_av_cl_frames_create()), and a map call
 * (clmem_av_cl_map(), av_hwframe_map() in spirit) whose AV_PIX_FMT_OPENCL
 * frame holds one image2d cl_mem per plane over the Vulkan frame's own
 * memory. Feed that frame to a filter graph (buffersrc with the OpenCL
 * frames context as hw_frames_ctx); av_frame_unref() of it, by you or by
 * the filter, hands the Vulkan frame back to FFmpeg.
 * @code
 *   clmem_av_cl_device_create(b, &cl_device);              // once per bridge
 *   clmem_av_cl_frames_create(cl_device, vk_frames, &cl_frames); // once per Vulkan frames context
 *   ...
 *   AVFrame *cl = av_frame_alloc();
 *   cl->hw_frames_ctx = av_buffer_ref(cl_frames);
 *   clmem_av_cl_map(b, NULL, cl, vk_frame, AV_HWFRAME_MAP_READ);
 *   av_buffersrc_add_frame(src_ctx, cl);                   // the graph unrefs it when done
 *   av_buffersink_get_frame(sink_ctx, out);                // an OpenCL frame of the filter's
 * @endcode
 *
 * @par Which images (clmem_av_cl_way)
 * The library chooses, by the path the frame's planes take
 * (clmem_av_frame_import() with CLMEM_BRIDGE_PATH_BEST), and
 * clmem_av_cl_frame_way() names the way that ran:
 *  - CLMEM_AV_CL_WAY_HOST_PTR, on the host-mapped path (a CPU OpenCL such
 *    as PoCL with lavapipe): CL_MEM_USE_HOST_PTR images over the Vulkan
 *    memory's host mapping, with the plane's row pitch. The map tells
 *    OpenCL the host wrote the bytes (a map with
 *    CL_MAP_WRITE_INVALIDATE_REGION and its unmap, unless
 *    AV_HWFRAME_MAP_OVERWRITE), and the unmap of a writable mapping reads
 *    OpenCL's bytes back (a map for reading and its unmap); on a CPU OpenCL
 *    both are the host pointer itself, and no byte moves.
 *  - CLMEM_AV_CL_WAY_BUFFER_VIEW, on the fd paths where the OpenCL device
 *    has cl_khr_image2d_from_buffer: image2d views of the plane buffers.
 *    The plane's row pitch must be a multiple of
 *    CL_DEVICE_IMAGE_PITCH_ALIGNMENT texels (else CLMEM_ERR_UNSUPPORTED,
 *    saying so).
 *  - CLMEM_AV_CL_WAY_VK_IMAGE, for frames of
 *    clmem_av_frames_setup_optimal() (the way on NVIDIA's OpenCL, which has
 *    no cl_khr_image2d_from_buffer): each plane's optimal-tiling VkImage
 *    imported as an OpenCL image through an fd path
 *    (clmem_bridge_import_vk_image() with optimal tiling, after the
 *    bridge's live check for the plane's format, which the first map runs
 *    on FFmpeg's transfer queue). Such images change layout: each map
 *    records, on FFmpeg's transfer queue and with libclmem-av's own command
 *    pool, a barrier that waits for FFmpeg's semaphores, moves every plane
 *    to VK_IMAGE_LAYOUT_GENERAL and releases it to
 *    VK_QUEUE_FAMILY_EXTERNAL; the unmap's acquires it back from EXTERNAL
 *    and signals FFmpeg's semaphores at sem_value + 1, leaving layout[p]
 *    GENERAL. That is device order (clmem_av_order), whatever the map was
 *    given: the caller's sync object when it is in device order, else one
 *    the OpenCL frames context keeps (up to CLMEM_AV_MAX_IN_FLIGHT frames
 *    mapped at once). The map still waits for the acquire before it
 *    returns; after the unmap FFmpeg's semaphores are signalled by the GPU
 *    once OpenCL's release completed, which FFmpeg's next use of the frame
 *    waits for. Where device order cannot work (no semaphores both APIs
 *    share) or the bridge does not import a plane's format so, the map
 *    answers CLMEM_ERR_UNSUPPORTED naming the way and why.
 * A frame whose planes take an fd path on a device without
 * cl_khr_image2d_from_buffer is refused with CLMEM_ERR_UNSUPPORTED,
 * pointing to clmem_av_frames_setup_optimal().
 *
 * @par Software formats
 * NV12 (CL_R and CL_RG, CL_UNORM_INT8), P010 (CL_R and CL_RG,
 * CL_UNORM_INT16), RGBA (CL_RGBA), BGRA (CL_BGRA) and YUV420P (three CL_R
 * planes), the image formats FFmpeg's own OpenCL frames use; where the
 * OpenCL device makes no read-write 2D images of one of them (PoCL 3.1 has
 * no CL_RG), CLMEM_ERR_UNSUPPORTED names the format and the image format
 * missing.
 *
 * @par Who owns what
 * The OpenCL device holds its own reference on the bridge's cl_context
 * (released when FFmpeg frees the device) and a queue of its own
 * (AVOpenCLDeviceContext.command_queue) on which maps acquire and release
 * the planes. A mapped frame's buf[0] owns the mapping: references on the
 * Vulkan frame, the OpenCL frames context, the bridge and the sync
 * object, and the plane handles and images, unless they are a kept pool
 * frame's (below), which the OpenCL frames context owns. The images are
 * the frame's data[p]; use them only while the mapped frame lives. Until
 * the unmap the Vulkan frame is OpenCL's: hand it to FFmpeg (a transfer, a
 * Vulkan filter) only after, as after clmem_av_frame_release(). FFmpeg's
 * OpenCL filters finish their own queue (clFinish) before they drop an
 * input frame, so OpenCL's reads are done when the unmap releases the
 * planes.
 *
 * @par Imports kept per pool frame
 * An OpenCL frames context of clmem_av_cl_frames_create() keeps, for each
 * frame of libclmem-av's pool (clmem_av_frames_setup() or
 * clmem_av_frames_setup_optimal()) mapped into it, the frame's plane
 * imports and images from its first map until the OpenCL
 * frames context is freed: mapping a frame the pool handed out before
 * costs no driver import and no clCreateImage. The kept imports hold a
 * reference on the Vulkan frames context, not on the frame, so the frame
 * goes back to the pool between maps as usual. So free the OpenCL frames
 * context (and the filter graphs holding it) before
 * clmem_bridge_finish() or clmem_bridge_device_finish(), which wait for
 * imports to be dropped. Frames of FFmpeg's own pool, and maps into an
 * OpenCL frames context made otherwise, import per map (a cache hit per
 * plane while a handle of the same frame is alive).
 *
 * @par Cost
 * A map of a kept pool frame is the acquire in host order or the sync
 * object's, the host-ptr upkeep above (a map and unmap per plane, the
 * host pointer itself on a CPU OpenCL), and a wait for the acquire
 * (clFinish of the device's queue), because the filters enqueue on queues
 * of their own; its first map also imports the planes (one driver import
 * per plane) and makes the images. The vk-image way adds two Vulkan
 * submissions a map (the barriers, on FFmpeg's transfer queue) and the
 * semaphore wait and signal on OpenCL's side; the first map of a plane
 * format on a bridge also runs the bridge's live check (milliseconds).
 * The calls are in version node CLMEM_AV_0.4.
 */

/**
 * Which images a mapped frame's planes are (@ref av_cl).
 * @ingroup av_cl
 * @since 0.4
 */
typedef enum clmem_av_cl_way {
    CLMEM_AV_CL_WAY_NONE = 0,        /**< Not a frame of clmem_av_cl_map(). */
    CLMEM_AV_CL_WAY_HOST_PTR = 1,    /**< CL_MEM_USE_HOST_PTR images over the host mapping (host-mapped path). */
    CLMEM_AV_CL_WAY_BUFFER_VIEW = 2, /**< image2d views of the plane buffers (cl_khr_image2d_from_buffer). */
    CLMEM_AV_CL_WAY_VK_IMAGE = 3     /**< Each plane's optimal-tiling VkImage imported as an image. */
} clmem_av_cl_way;

/**
 * A way's short name.
 *
 * @param way Any value.
 * @return "host-ptr-image", "buffer-view", "vk-image", "none", or
 *         "unknown-way"; static storage.
 * @par Blocks
 *      Never.
 * @ingroup av_cl
 * @since 0.4
 */
const char *clmem_av_cl_way_name(clmem_av_cl_way way);

/**
 * Make an FFmpeg device context of AV_HWDEVICE_TYPE_OPENCL over the
 * bridge's OpenCL context: AVOpenCLDeviceContext.context is
 * clmem_bridge_context(b) (retained: the device releases it when FFmpeg
 * frees it), device_id clmem_bridge_cl_device(b), command_queue a new
 * in-order queue (FFmpeg holds it). Initialised (av_hwdevice_ctx_init()).
 *
 * @param b        The bridge (borrowed).
 * @param[out] out The device context, one reference, the caller's
 *                 (av_buffer_unref()).
 * @retval CLMEM_OK               *out is the device context.
 * @retval CLMEM_ERR_NULL_POINTER b or out is NULL.
 * @retval CLMEM_ERR_OPENCL       Making the queue failed, or
 *                                av_hwdevice_ctx_init() refused the device
 *                                (the sentence gives its code).
 * @retval CLMEM_ERR_NO_MEMORY    av_hwdevice_ctx_alloc() failed (or FFmpeg
 *                                was built without OpenCL).
 * @par On error
 *      *out is NULL (when out is not NULL); nothing is retained.
 * @par Blocks
 *      On clCreateCommandQueueWithProperties.
 * @ingroup av_cl
 * @since 0.4
 */
clmem_status clmem_av_cl_device_create(clmem_bridge *b, AVBufferRef **out);

/**
 * Make an OpenCL frames context that matches a Vulkan one: format
 * AV_PIX_FMT_OPENCL, the Vulkan frames context's sw_format, width and
 * height, initialised with an empty pool (mapped frames bring their own
 * images; FFmpeg allocates images of its own only if asked for a buffer of
 * it, as hwupload does). Give it as hw_frames_ctx to the mapped frames and
 * to the filter graph's buffer source. It keeps the imports of the pool
 * frames mapped into it (@ref av_cl): its AVHWFramesContext.free and
 * user_opaque are the library's; leave them as they are.
 *
 * @param cl_device_ref An OpenCL device context (clmem_av_cl_device_create()),
 *                      borrowed: the frames context takes its own reference.
 * @param vk_frames_ref A Vulkan frames context (borrowed; only read).
 * @param[out] out      The frames context, one reference, the caller's.
 * @retval CLMEM_OK                *out is the frames context.
 * @retval CLMEM_ERR_NULL_POINTER  An argument is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE cl_device_ref is not an OpenCL device
 *                                 context, or vk_frames_ref not a frames
 *                                 context of AV_PIX_FMT_VULKAN frames.
 * @retval CLMEM_ERR_UNSUPPORTED   sw_format is none of those offered, or the
 *                                 OpenCL device makes no read-write 2D
 *                                 images of a plane's image format (the
 *                                 sentence names both).
 * @retval CLMEM_ERR_OPENCL        Listing the image formats failed, or
 *                                 av_hwframe_ctx_init() refused (its code).
 * @retval CLMEM_ERR_NO_MEMORY     av_hwframe_ctx_alloc() failed.
 * @par On error
 *      *out is NULL (when out is not NULL); nothing is held.
 * @par Blocks
 *      Never for long (driver queries).
 * @ingroup av_cl
 * @since 0.4
 */
clmem_status clmem_av_cl_frames_create(AVBufferRef *cl_device_ref, AVBufferRef *vk_frames_ref, AVBufferRef **out);

/**
 * Map a Vulkan frame to an AV_PIX_FMT_OPENCL frame over the same memory,
 * as av_hwframe_map() would: dst->hw_frames_ctx names the OpenCL frames
 * context (clmem_av_cl_frames_create() of src's frames context), and
 * nothing else of dst is set.
 *
 * The frame's planes are imported (clmem_av_frame_import(), or as images
 * for a frame of clmem_av_frames_setup_optimal()) and handed to OpenCL: in
 * host order without a sync object (clmem_av_frame_acquire(), waiting
 * without limit for FFmpeg's work on the frame, as FFmpeg's own transfers
 * do), or through the sync object's acquire, or in device order for the
 * vk-image way; then one image2d per plane is made where the way needs
 * one (@ref av_cl). On CLMEM_OK dst is
 * AV_PIX_FMT_OPENCL, src's width and height, data[p] the images, buf[0]
 * the mapping, hw_frames_ctx as given, and src's properties (pts, colour,
 * crop, side data: av_frame_copy_props()).
 *
 * The unmap is the last reference of dst's buf[0] going (av_frame_unref(),
 * av_frame_free(), a filter dropping its input): a writable host-ptr
 * mapping's bytes are brought back to the host, the planes are released in
 * the same order (clmem_av_frame_release(), or the sync object's release),
 * so that FFmpeg's next use of the Vulkan frame waits for OpenCL, and the
 * images, planes and references go. The unmap cannot report a failure;
 * the release signals FFmpeg's semaphores even then, so FFmpeg never
 * waits forever.
 *
 * @param b     The bridge, on src's Vulkan device, whose cl_context is the
 *              OpenCL device's (a reference is taken for the mapping).
 * @param sync  A sync object on b, or NULL for host order (a reference is
 *              taken for the mapping). The vk-image way uses it only when
 *              it is in device order (@ref av_cl).
 * @param dst   The frame to fill: only hw_frames_ctx set.
 * @param src   A frame of AV_PIX_FMT_VULKAN (a reference is taken).
 * @param flags AV_HWFRAME_MAP_READ, _WRITE, _OVERWRITE (the Vulkan bytes
 *              need not reach OpenCL) and _DIRECT (always direct) bits;
 *              0 is read and write.
 * @retval CLMEM_OK                  dst is the mapped frame.
 * @retval CLMEM_ERR_NULL_POINTER    b, dst or src is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   flags has other bits; dst has no
 *                                   hw_frames_ctx, or holds a frame; src is
 *                                   not a Vulkan frame; dst's frames context
 *                                   is not AV_PIX_FMT_OPENCL on an OpenCL
 *                                   device, or its sw_format or size is not
 *                                   src's (the sentence gives both); and
 *                                   those of clmem_av_frame_import() and the
 *                                   acquire: a frame mapped already, and
 *                                   not yet unmapped, is OpenCL's, and a
 *                                   second map of it is refused.
 * @retval CLMEM_ERR_DEVICE_MISMATCH The OpenCL device's context is not the
 *                                   bridge's, or src is on another VkDevice.
 * @retval CLMEM_ERR_UNSUPPORTED     sw_format is not offered, the OpenCL
 *                                   device lacks a plane's image format
 *                                   (named), or no image way fits the path
 *                                   the planes took; for the vk-image way,
 *                                   device order cannot work here or the
 *                                   bridge imports no optimal-tiling image
 *                                   of a plane's format (its live check's
 *                                   answer quoted) (@ref av_cl).
 * @retval CLMEM_ERR_OPENCL          An image, the acquire or the wait for
 *                                   it failed.
 * @retval CLMEM_ERR_TIMEOUT         Device order: the sync object's frames
 *                                   in flight are all mapped and not yet
 *                                   unmapped.
 * @retval CLMEM_ERR_VULKAN          A Vulkan call failed.
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      dst is unchanged, and so is src's frame: a failure after the acquire
 *      releases it again, as the unmap would (sem_value advanced by one).
 *      No handle, image, reference or fd is left behind.
 * @par Threads
 *      As the acquire and release it makes (clmem_av_frame_acquire(),
 *      clmem_av_sync_acquire()); the unmap runs on the thread that drops
 *      the mapped frame's last reference.
 * @par Blocks
 *      Until FFmpeg's work on src completed (host order), on the driver
 *      imports of a frame not imported yet, and on the acquire (clFinish).
 * @ingroup av_cl
 * @since 0.4
 */
clmem_status clmem_av_cl_map(clmem_bridge *b, clmem_av_sync *sync, AVFrame *dst, const AVFrame *src, int flags);

/**
 * Which images a mapped frame holds: the way the map chose.
 *
 * @param mapped A frame of clmem_av_cl_map(), or any frame, or NULL.
 * @return Its way; CLMEM_AV_CL_WAY_NONE for NULL or a frame clmem_av_cl_map()
 *         did not make.
 * @par Blocks
 *      Never.
 * @ingroup av_cl
 * @since 0.4
 */
clmem_av_cl_way clmem_av_cl_frame_way(const AVFrame *mapped);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_AV_H */
