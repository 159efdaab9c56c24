/**
 * @file clmem-av.h
 * @brief clmem-av.h - FFmpeg's Vulkan frames into OpenCL without copying them.
 *
 * libclmem-av is where FFmpeg's types meet libclmem-bridge: a frame of
 * AV_PIX_FMT_VULKAN (an AVVkFrame: one VkImage, VkDeviceMemory and timeline
 * semaphore per plane) becomes one clmem_handle per plane, each a buffer
 * covering the plane's bytes with the plane's real row pitch, imported
 * through clmem_bridge_import_vk_image(). No byte is copied on the fd paths
 * and on zero-copy host-mapped devices.
 *
 * What an FFmpeg user calls:
 * @code
 *   clmem_av_bridge_create(device_ref, NULL, 0, &b);     // once per device
 *   clmem_av_frames_setup(frames_ref);                   // before av_hwframe_ctx_init
 *   ...
 *   clmem_av_frame_import(b, frame, CLMEM_BRIDGE_PATH_BEST, queue, CL_MEM_READ_WRITE, &planes);
 *   clmem_av_frame_acquire(b, frame, &planes, queue, timeout_ns, NULL);
 *   kernels on clmem_handle_mem(planes.planes[i]), rows clmem_handle_row_pitch() apart
 *   clmem_av_frame_release(b, frame, &planes, queue, 0, NULL);
 *   clmem_av_frame_planes_unref(&planes);                // any time after the release
 *   av_frame_free(&frame);                               // any time: the handles hold it
 * @endcode
 *
 * Which frames: those of an AVHWFramesContext set up by
 * clmem_av_frames_setup(), whose pool (libclmem-av's own) makes every
 * plane a linear image in a dedicated allocation; frames of another
 * context whose images are linear are imported too, but on NVIDIA only the
 * set-up ones share right (clmem_av_frames_setup() says why). Software
 * formats: NV12, P010, RGBA and BGRA.
 *
 * Synchronisation is ordered on the host in this version: acquire waits on
 * the host until FFmpeg's work on the frame completed (vkWaitSemaphores for
 * each plane's sem_value), and release waits on the host until OpenCL's
 * release completed, then signals sem_value + 1 from the host
 * (vkSignalSemaphore) and stores it in the frame, as FFmpeg requires of
 * every user of a frame. The cost is the two host waits: the CPU thread
 * sleeps while the GPU finishes FFmpeg's work, and again while it finishes
 * OpenCL's, so the two APIs' work on one frame does not overlap.
 *
 * Requirements: FFmpeg 5.1 or later (libavutil 57), whose Vulkan device
 * context is version 1.2 with timeline semaphores. Errors are reported as
 * in clmem.h. This header includes <clmem-bridge.h> and libavutil's
 * <libavutil/frame.h> and <libavutil/buffer.h>. Every function here is in
 * version node CLMEM_AV_0.2 (`@since 0.2`).
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
 * that the bridge owns. With a context, it is used as clmem_bridge_create()
 * uses clmem_bridge_info::context (its device paired by UUID).
 *
 * The bridge borrows FFmpeg's Vulkan objects: keep device_ref (or a frames
 * context of it) until clmem_bridge_finish() returned CLMEM_OK, as for any
 * bridge before vkDestroyDevice. Imported frames keep their frames context,
 * and so the device, alive themselves.
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
 * @retval CLMEM_ERR_UNSUPPORTED     context NULL and no OpenCL device offers
 *                                   cl_khr_device_uuid; or as for
 *                                   clmem_bridge_create().
 * @retval CLMEM_ERR_OPENCL          Pairing, clCreateContext or a query
 *                                   failed.
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is NULL (when out is not NULL) and nothing is retained.
 * @par Blocks
 *      On the driver queries of pairing and of clmem_bridge_create() (a
 *      millisecond or so), and on clCreateContext when context is NULL.
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
 * invalid on linear images). Where the frames context's usage is 0, the
 * images get FFmpeg's default usage (transfers, sampled, storage) less
 * what Vulkan cannot make linear images of the format with. A new frame's
 * layouts are VK_IMAGE_LAYOUT_UNDEFINED and its timeline semaphores start
 * at sem_value 0, which FFmpeg's first submission on it waits for and
 * passes.
 *
 * Why its own pool: FFmpeg 5.1's pool allocates a plane dedicated only
 * where Vulkan prefers or requires it, and NVIDIA says neither for linear
 * images; on the H200 an OpenCL kernel's writes to such non-dedicated
 * exported memory read back wrong in Vulkan (linear RGBA8 images: wrong,
 * and exact in a dedicated allocation; FFmpeg's 1920x1080 NV12 frames:
 * 1.29 million of 6.2 million luma bytes wrong, none with this pool:
 * docs/driver-notes.md). FFmpeg cannot be asked for a dedicated
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
 * @retval CLMEM_ERR_UNSUPPORTED   sw_format is not NV12, P010, RGBA or BGRA;
 *                                 or Vulkan makes no linear images of its
 *                                 plane formats, even for transfers only.
 * @par On error
 *      The frames context is unchanged.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_status clmem_av_frames_setup(AVBufferRef *frames_ref);

/**
 * At most this many planes has a frame clmem_av_frame_import() imports.
 * @since 0.2
 */
#define CLMEM_AV_MAX_PLANES 4

/**
 * A frame's planes in OpenCL, from clmem_av_frame_import().
 *
 * This struct is frozen: a future field comes with a new struct and new
 * functions.
 * @since 0.2
 */
typedef struct clmem_av_frame_planes {
    uint32_t count; /**< Planes: 2 for NV12 and P010, 1 for RGBA and BGRA. */
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
 * (clmem_bridge_import_vk()'s three conditions). So the frame goes back to
 * FFmpeg's pool only after that, whatever order the caller drops the frame
 * and the handles in, and a frames context torn down while frames are
 * imported lives on until then.
 *
 * The host-mapped path maps the plane's memory (vkMapMemory) while it is
 * imported, and FFmpeg maps linear host-visible frames itself to transfer
 * them (av_hwframe_transfer_data, av_hwframe_map); Vulkan allows one
 * mapping of a memory at a time. On that path, drop the planes and let
 * clmem_bridge_finish() return CLMEM_OK before FFmpeg transfers the frame.
 * The fd paths map nothing.
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
 * @retval CLMEM_ERR_UNSUPPORTED     sw_format is not NV12, P010, RGBA or
 *                                   BGRA; the frame is tiled (optimal, or a
 *                                   DRM modifier other than linear: set the
 *                                   pool up with clmem_av_frames_setup());
 *                                   an fd path (asked, or the only one the
 *                                   bridge has) for memory FFmpeg did not
 *                                   allocate exportable as it (the sentence
 *                                   says why: its device lacks
 *                                   VK_KHR_external_memory_fd, or Vulkan
 *                                   cannot export such images); and the
 *                                   bridge import's own.
 * @retval CLMEM_ERR_VULKAN          A Vulkan query failed.
 * @retval CLMEM_ERR_OPENCL          An OpenCL call failed (the import).
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is zeroed (when not NULL); no handle, frame reference or fd is
 *      left behind.
 * @par Threads
 *      The frame reference is dropped (av_frame_free) where the imports'
 *      Vulkan keepalives are: possibly on an OpenCL driver thread, or in
 *      clmem_bridge_finish() (clmem-bridge.h). That returns the frame to
 *      FFmpeg's pool, which is thread-safe; but when it was the last
 *      reference to an unreffed frames context, FFmpeg frees the pool
 *      there, calling vkDeviceWaitIdle, which Vulkan wants externally
 *      synchronised with every queue of the device. So drop a frames
 *      context whose frames were imported only after
 *      clmem_bridge_finish() returned CLMEM_OK, or while no thread
 *      submits to FFmpeg's device.
 * @par Blocks
 *      On the Vulkan layout queries and the driver imports; on the
 *      host-mapped path also a blocking clEnqueueMapBuffer on queue.
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
 *      clmem_handle_unref() does (clmem-bridge.h).
 * @par Blocks
 *      Never.
 * @since 0.2
 */
void clmem_av_frame_planes_unref(clmem_av_frame_planes *planes);

/**
 * Hand the frame to OpenCL: wait on the host until FFmpeg's work on it
 * completed (each plane's timeline semaphore reached sem_value), then
 * clmem_bridge_acquire_many() of the planes on `queue`.
 *
 * The frame's Vulkan image layout is not changed: no Vulkan command is
 * recorded. The planes are linear, whose bytes the driver lays out the
 * same in every layout FFmpeg leaves a frame in on NVIDIA and lavapipe
 * (Vulkan itself defines a linear image's bytes only in
 * VK_IMAGE_LAYOUT_GENERAL).
 *
 * @param b          The bridge the planes were imported by.
 * @param frame      The frame the planes were imported from.
 * @param planes     Its planes.
 * @param queue      A queue of the bridge's context with a handle of each
 *                   plane's import (their own queue, or
 *                   clmem_bridge_handle_for_queue()).
 * @param timeout_ns How long to wait at most for FFmpeg's work, in
 *                   nanoseconds; UINT64_MAX has no limit.
 * @param[out] event_out If not NULL, the acquire's event, the caller's to
 *                   release; NULL on error.
 * @retval CLMEM_OK                The acquire is enqueued.
 * @retval CLMEM_ERR_NULL_POINTER  b, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE frame is not of AV_PIX_FMT_VULKAN, or
 *                                 planes does not hold as many planes as the
 *                                 frame has; and those of
 *                                 clmem_bridge_acquire_many().
 * @retval CLMEM_ERR_TIMEOUT       FFmpeg's work had not completed within
 *                                 timeout_ns; nothing is enqueued.
 * @retval CLMEM_ERR_VULKAN        vkWaitSemaphores failed.
 * @retval CLMEM_ERR_OPENCL        The acquire was refused.
 * @par On error
 *      Nothing is enqueued and the frame is unchanged.
 * @par Blocks
 *      Up to timeout_ns, on FFmpeg's work on the frame.
 * @since 0.2
 */
clmem_status clmem_av_frame_acquire(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, uint64_t timeout_ns, cl_event *event_out);

/**
 * Hand the frame back to FFmpeg: clmem_bridge_release_many() of the planes
 * on `queue` after wait_list, a host wait until it completed, then for
 * each plane vkSignalSemaphore(sem, sem_value + 1) and sem_value + 1 stored
 * in the frame, so that FFmpeg's next submission on the frame (a filter, a
 * download) waits for it and sees OpenCL's writes.
 *
 * layout is left as it was (no Vulkan command changed it: see
 * clmem_av_frame_acquire()); access becomes VK_ACCESS_MEMORY_READ_BIT |
 * VK_ACCESS_MEMORY_WRITE_BIT, what FFmpeg records after external use.
 *
 * @param b          The bridge the planes were imported by.
 * @param frame      The frame the planes were imported from and acquired.
 * @param planes     Its planes.
 * @param queue      The queue they were acquired on.
 * @param num_events How many events wait_list has.
 * @param wait_list  The events the release waits for too (kernels on other
 *                   queues), or NULL.
 * @retval CLMEM_OK                The release completed and the semaphores
 *                                 are signalled.
 * @retval CLMEM_ERR_NULL_POINTER  b, frame, planes or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE frame is not of AV_PIX_FMT_VULKAN, or
 *                                 planes does not match it; and those of
 *                                 clmem_bridge_release_many() (a plane not
 *                                 acquired).
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
 *      (clWaitForEvents).
 * @since 0.2
 */
clmem_status clmem_av_frame_release(clmem_bridge *b, AVFrame *frame, const clmem_av_frame_planes *planes,
                                    cl_command_queue queue, cl_uint num_events, const cl_event *wait_list);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_AV_H */
