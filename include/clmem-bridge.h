/* SPDX-License-Identifier: MIT */
/**
 * @file clmem-bridge.h
 * @brief clmem-bridge.h - share Vulkan memory with OpenCL without copying it.
 *
 * libclmem-bridge's header (@ref libclmem_bridge). It includes clmem.h and
 * <vulkan/vulkan.h>, and is the only clmem header that needs Vulkan but
 * for those built on it (clmem-av.h, clmem-ipc.h). Two of the rules pages
 * are here: @ref lifetime and @ref vulkan_sync.
 */

/**
 * @page lifetime Lifetime and teardown
 *
 * @section lifetime_borrow Handles borrow, anchors hold
 * A ::clmem_handle borrows its cl_mem and queue: making one never retains
 * them, and dropping it never releases them. What keeps them alive is its
 * anchor, a ::clmem_keepalive: clmem_keepalive_new_cl() retains a cl_mem
 * and a queue and releases the memory, then the queue;
 * clmem_keepalive_new() runs a callback of yours; clmem_keepalive_chain()
 * holds two anchors and drops the first, then the second, so chain the
 * OpenCL side before the Vulkan side. A handle takes its own reference on
 * its anchor and the caller keeps theirs. clmem_handle_keepalive() gives
 * the anchor, to keep what it holds alive beyond the handle.
 *
 * A bridge (::clmem_bridge) retains its cl_context and borrows the Vulkan
 * objects (instance, physical device, device), which must outlive its
 * imports (@ref lifetime_device_end). Every import, handle, semaphore and
 * ring holds a reference on its bridge, so clmem_bridge_unref() drops only
 * the caller's.
 *
 * @section lifetime_teardown An import's teardown
 * Every handle of one import (the first, a cache hit's, those of
 * clmem_bridge_handle_for_queue()) shares the import's anchor. When the
 * last of them goes, the bridge drops its reference on the Vulkan
 * keepalive given to the import only once all three of these hold:
 *  - (a) every command enqueued before that last unref, on every queue a
 *    handle of the import was made for, has completed: the bridge enqueues
 *    a marker on each (and flushes it);
 *  - (b) the memory was handed back to Vulkan, if it was left acquired: the
 *    bridge enqueues the release itself on the acquiring queue once that
 *    queue's marker completed, and waits for it too;
 *  - (c) OpenCL has destroyed the cl_mem: the bridge releases it only after
 *    (a) and (b), and drops the keepalive from its destructor callback.
 *
 * (c) alone would not be enough: a driver may run a cl_mem's destructor
 * callback before the kernels using it completed (docs/driver-notes.md).
 * No timeout gives up on these conditions.
 *
 * The last clmem_handle_unref() waits for no device work. It enqueues at
 * most the host-mapped path's unmap of OpenCL's own mapping (which must
 * come before the caller's next command on that host memory; the fd paths
 * have none) and hands the import to the library's thread
 * (@ref threads_teardown), which enqueues the markers;
 * clmem_bridge_finish() and clmem_bridge_device_finish() enqueue them
 * themselves for an import the thread has not reached. A marker enqueued
 * after the unref still waits for everything enqueued before it. Only if
 * enqueueing a marker or registering its callback fails does the thread
 * (or that unref) block instead, in clFinish or clWaitForEvents.
 *
 * The bridge sees only the queues its handles name. Work on a queue no
 * handle names is the caller's to finish (clFinish, or wait for its
 * events) before dropping the last handle; or make a handle for that queue
 * with clmem_bridge_handle_for_queue(), and the teardown waits for it too.
 * A cl_mem the caller retained itself holds back (c) until it is released.
 *
 * @section lifetime_keepalives Keepalives given to the bridge
 * An import takes its own reference on the keepalive it is given
 * (vk_keepalive, keepalive; NULL for none) and drops it when its teardown
 * is complete. A cache hit's keepalive is held by the import too, as if it
 * had made the import (@ref bridge_import_cache): the import holds each
 * distinct anchor once, the first import's and every hit's alike, all
 * until the teardown, never replaced and never dropped early. A hit
 * passing an anchor the import holds already takes no reference and no
 * memory, and costs the same on the millionth re-import as on the first; a
 * hit passing a new anchor adds one reference (and one slot) until the
 * import's teardown, however short that caller's use. So to re-import a
 * long-lived frame per use, pass the frame's one anchor each time, not a
 * new anchor per use.
 *
 * A semaphore's vk_keepalive is dropped when its last reference goes,
 * after the OpenCL semaphore is released (clmem_bridge_semaphore_unref()).
 *
 * @section lifetime_callbacks Where a keepalive's callback runs
 * A keepalive given to the bridge has its last reference dropped, and so
 * its callback run, on whichever thread completes its import's teardown,
 * and no thread is promised: an OpenCL driver thread (a marker's event
 * callback or the destructor callback), the thread in
 * clmem_bridge_finish() or clmem_bridge_device_finish(), or the library's
 * thread when the device work was already done (for an import that failed
 * inside the call that made it, that call's thread). Never inside a
 * function of this library that holds a lock of the bridge: the callback
 * may call this library again.
 *
 * @section lifetime_callback_calls What a keepalive's callback may call
 * It runs in an OpenCL callback, so OpenCL's rule for those holds: it must
 * return promptly, must be thread-safe, and must not call blocking OpenCL
 * functions (clFinish, clWaitForEvents, a blocking read, write or map) nor
 * create contexts or queues. Non-blocking OpenCL calls are fine:
 * clGet*Info (e.g. clGetEventInfo), clRetain* and clRelease* of events,
 * queues and memory objects (release there only a cl_mem whose commands
 * completed: a driver may block in clReleaseMemObject while a kernel uses
 * it), clSetUserEventStatus. Of this library it may call the functions
 * whose "Blocks" paragraph says Never (clmem_keepalive_unref(),
 * clmem_handle_unref(), clmem_bridge_unref(), clmem_bridge_caps(), ...),
 * but not clmem_bridge_finish() nor clmem_bridge_device_finish(), which
 * wait for the very teardown the callback is part of.
 *
 * @section lifetime_device_end Before vkDestroyDevice and clReleaseContext
 * What a program does at the end of a VkDevice, in this order:
 *  1. drop every handle, semaphore and ring of the device's bridges (and,
 *     with libclmem-ipc, destroy the consumers: clmem_ipc_consumer_destroy());
 *  2. call clmem_bridge_device_finish() for the VkDevice and get CLMEM_OK:
 *     it finds every bridge made for it, those the application dropped
 *     included, and waits until every teardown of their imports is
 *     complete (each cl_mem destroyed, each keepalive dropped, each host
 *     mapping unmapped). CLMEM_ERR_IN_USE comes at once while handles or
 *     semaphores are alive, CLMEM_ERR_TIMEOUT when device work is still
 *     pending: then the memory, and so the device, must stay;
 *  3. free the Vulkan memory that was imported (with a keepalive or
 *     without), then vkDestroyDevice.
 *
 * The bridges themselves may be dropped before or after step 2; a bridge
 * the application still holds makes no Vulkan call after step 2 unless a
 * function is called with it. clmem_bridge_finish() does step 2 for one
 * bridge the application still holds.
 *
 * Before clReleaseContext and clReleaseCommandQueue nothing is needed: a
 * bridge retains its cl_context, and an import every queue a handle of it
 * was made for, until the teardowns that need them complete.
 *
 * A program that skips step 2 gets no error: the teardown completes later,
 * on a driver thread or the library's, once the device work enqueued
 * before it completes, and it calls Vulkan (vkUnmapMemory on the
 * host-mapped path, and the keepalive's callback, which usually frees the
 * VkDeviceMemory). After vkDestroyDevice that is undefined behaviour, and
 * can crash on a driver thread some time after the device went
 * (docs/driver-notes.md). A process that exits first abandons the pending
 * teardowns.
 *
 * libclmem-av and libclmem-ipc add their own steps: drop FFmpeg's device
 * context last (@ref libclmem_av), and destroy a consumer before step 2
 * (clmem_ipc_consumer_destroy()).
 */

/**
 * @page vulkan_sync Synchronisation with Vulkan
 * @brief The Vulkan half of a handoff: barriers and an order between the
 * two APIs' work.
 *
 * clmem_bridge_acquire() and clmem_bridge_release() (and their _many
 * forms, and a frame ring's clmem_bridge_ring_cl_next() and
 * clmem_bridge_ring_cl_done()) enqueue the OpenCL half of a handoff. The
 * Vulkan half is the application's, in its own command buffers and
 * submissions: a pipeline barrier after Vulkan's last access before the
 * acquire, a barrier before Vulkan's first access after the release, and
 * an order between the two APIs' work (a fence, an event, or a semaphore).
 * examples/bridge-example.c in the source tree does all of it, on every
 * path; this page says why each piece is there.
 *
 * Which barrier depends on the path the import went through, which
 * clmem_bridge_handle_path() tells, and which follows from the memory:
 *  - the fd paths (opaque fd, dma-buf): the memory was exported
 *    (clmem_bridge_vk_memory::export_types is not 0). OpenCL reaches it as
 *    an external API on the same device, so its ownership moves between
 *    Vulkan and OpenCL with queue-family ownership transfers to and from
 *    VK_QUEUE_FAMILY_EXTERNAL.
 *  - the host-mapped path: the memory is host-visible and host-coherent and
 *    is not exported (export_types is 0). OpenCL reaches it through the
 *    bridge's vkMapMemory pointer: to Vulkan, OpenCL's reads and writes are
 *    host accesses. No ownership transfer (the memory is not external, and
 *    VK_QUEUE_FAMILY_EXTERNAL is only for memory that is); host memory
 *    dependencies instead.
 *
 * @section vulkan_sync_before Before clmem_bridge_acquire(): Vulkan hands the memory over
 * Record this barrier after Vulkan's last write (or read) of the range, in
 * the same submission:
 *
 * | field | fd paths: release to VK_QUEUE_FAMILY_EXTERNAL | host-mapped path |
 * |---|---|---|
 * | srcStageMask | the stage of Vulkan's last access (TRANSFER after a copy or vkCmdFillBuffer, COMPUTE_SHADER after a dispatch) | the same |
 * | srcAccessMask | Vulkan's writes (TRANSFER_WRITE, SHADER_WRITE) | the same |
 * | dstStageMask | BOTTOM_OF_PIPE (a release ignores it) | HOST |
 * | dstAccessMask | 0 (a release ignores it) | HOST_READ and HOST_WRITE |
 * | srcQueueFamilyIndex | the family of the queue that records it | VK_QUEUE_FAMILY_IGNORED |
 * | dstQueueFamilyIndex | VK_QUEUE_FAMILY_EXTERNAL | VK_QUEUE_FAMILY_IGNORED |
 * | barrier | a VkBufferMemoryBarrier on the imported range (a VkImageMemoryBarrier for an image, oldLayout and newLayout GENERAL) | the same, or a VkMemoryBarrier |
 *
 * Then make the acquire run only after that submission completed:
 *  - host order: wait for the submission's fence (vkWaitForFences, or
 *    vkQueueWaitIdle), then call clmem_bridge_acquire();
 *  - a semaphore: signal a binary semaphore in the same submission, import
 *    it with clmem_bridge_semaphore_import(), and call
 *    clmem_bridge_semaphore_wait() on the handle's queue before the
 *    acquire. With device ordering (CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD, an fd
 *    path on a GPU) OpenCL's queue waits on the device; with host ordering
 *    (CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED) the call itself waits, on the
 *    host, until the semaphore signalled, so the barrier's HOST destination
 *    above is what makes Vulkan's writes visible to OpenCL. A frame ring
 *    does this with its ready semaphores: submit the batch's writes, its
 *    barriers and the frame's signal_semaphore together.
 *
 * The Vulkan specification's "External Resource Sharing" asks exactly this
 * of memory shared with another API: release ownership in the source API,
 * make sure the release completed with a semaphore or a fence, then
 * acquire in the destination API (here clmem_bridge_acquire(), whose
 * clEnqueueAcquireExternalMemObjectsKHR is OpenCL's acquire). Without the
 * release, the first access by the other API takes ownership implicitly
 * and the memory's contents are undefined. A fence alone does not make
 * device writes visible to the host; the HOST barrier does ("Waiting on
 * Fences").
 *
 * @section vulkan_sync_after After clmem_bridge_release(): Vulkan takes the memory back
 * Vulkan may touch the range only once the release completed:
 *  - host order: wait for the release's event (clWaitForEvents on
 *    event_out), then submit the Vulkan work that uses the range;
 *  - a semaphore: call clmem_bridge_semaphore_signal() on the handle's
 *    queue after the release and make Vulkan's submission wait on that
 *    semaphore (pWaitSemaphores, with the first stage that uses the range
 *    in pWaitDstStageMask). A frame ring's clmem_bridge_ring_cl_done()
 *    signals its done semaphore, which clmem_bridge_ring_vk_next() hands
 *    back as the frame's wait_semaphore.
 *
 * Record this barrier before Vulkan's first access, in the submission that
 * waits:
 *
 * | field | fd paths: acquire from VK_QUEUE_FAMILY_EXTERNAL | host-mapped path |
 * |---|---|---|
 * | srcStageMask | TOP_OF_PIPE (or the semaphore wait's stage) | none needed |
 * | srcAccessMask | 0 (an acquire ignores it) | |
 * | dstStageMask | the stage of Vulkan's first access (TRANSFER for a copy) | |
 * | dstAccessMask | that access (TRANSFER_READ, SHADER_READ, ...) | |
 * | srcQueueFamilyIndex | VK_QUEUE_FAMILY_EXTERNAL | |
 * | dstQueueFamilyIndex | the family of the queue that records it | |
 *
 * On the host-mapped path OpenCL's writes are host writes to host-coherent
 * memory, completed before the host submits: every vkQueueSubmit makes
 * the host's earlier writes visible to the work it submits ("Host Write
 * Ordering Guarantees"), so no barrier is needed on Vulkan's side.
 *
 * When Vulkan overwrites the whole range without reading it (a producer
 * that fills a frame again), the acquire may be left out: the contents are
 * undefined without it, and an overwrite does not care. Before Vulkan
 * reads what OpenCL wrote, it is required. The release before the next
 * acquire is always required.
 *
 * @section vulkan_sync_family Which family, which queue
 *  - VK_QUEUE_FAMILY_EXTERNAL stands for a queue outside this Vulkan
 *    instance on the same physical device. The bridge's fd paths work only
 *    between devices with the same UUID (clmem_bridge_pair()), so it is the
 *    one to use. (The Vulkan specification also asks for the same
 *    driverUUID, which a vendor's Vulkan and OpenCL drivers may not report;
 *    VK_QUEUE_FAMILY_FOREIGN_EXT, from VK_EXT_queue_family_foreign, makes no
 *    such demand and may cost more. Write the transfers even where a driver
 *    was found to read back right without them: docs/driver-notes.md.)
 *  - A buffer created with VK_SHARING_MODE_EXCLUSIVE that Vulkan uses on
 *    two queue families also needs the ordinary transfers between them; the
 *    release to VK_QUEUE_FAMILY_EXTERNAL is recorded on the family that
 *    accessed it last, the acquire on the family that will access it next.
 *  - Images: hand them over in VK_IMAGE_LAYOUT_GENERAL and expect them back
 *    in it (@ref bridge_image); each plane's handle is acquired and
 *    released on its own.
 *  - Binary semaphores alternate strictly between one signal and one wait:
 *    a second signal before the wait is invalid usage, and hung a driver
 *    (docs/driver-notes.md). A frame ring keeps that order for you.
 *
 * @section vulkan_sync_check Checking it
 * Run the program with the Khronos validation layer
 * (`VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation`; Debian:
 * vulkan-validationlayers), which prints any error it finds, and add
 * `VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT`
 * to check Vulkan's own barriers (hazards between Vulkan commands) too.
 * The layer cannot see OpenCL's side, which is why the barriers above
 * matter. examples/bridge-example.c runs silent under both, and prints the
 * path and "every byte checked".
 */

/**
 * @defgroup libclmem_bridge libclmem-bridge
 * @brief Vulkan memory into OpenCL without copying it, handed back and forth.
 *
 * libclmem-bridge imports memory that Vulkan exported into OpenCL
 * (cl_khr_external_memory: opaque fd, dma-buf), or, where a driver lacks
 * those extensions, wraps Vulkan's host-mapped memory (CL_MEM_USE_HOST_PTR),
 * which is zero-copy on CPU and unified-memory OpenCL devices. Either way
 * the result is an ordinary ::clmem_handle whose anchor chains both APIs'
 * lifetimes: the Vulkan memory's keepalive is dropped only after every
 * command that could touch the memory has completed and OpenCL destroyed
 * the cl_mem (@ref lifetime_teardown).
 *
 * Everything goes through a bridge object (::clmem_bridge): one VkDevice
 * paired with one cl_context. It owns what the import needs and would
 * otherwise be process-global: the Vulkan and OpenCL extension entry
 * points (loaded through the application's vkGetInstanceProcAddr when it
 * passes one), the capability answer worked out once at creation, and the
 * import cache. (Host mappings are shared by all bridges of a VkDevice:
 * Vulkan allows one mapping of a VkDeviceMemory at a time.)
 *
 * Requirements: a Vulkan 1.1 instance (physical-device queries use the 1.1
 * core functions); OpenCL 3.0 for clCreateBufferWithProperties on the fd
 * paths. Errors are reported as in clmem.h (@ref errors); the rules of
 * every call are on the pages @ref lifetime, @ref errors, @ref threads,
 * @ref versioning and @ref vulkan_sync. clmem(7) is the overview.
 */
#ifndef CLMEM_BRIDGE_H
#define CLMEM_BRIDGE_H

#include <clmem.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup bridge_path Paths
 * @ingroup libclmem_bridge
 * @brief How memory travels from Vulkan to OpenCL: opaque fd, dma-buf, host-mapped.
 */

/**
 * How memory travels from Vulkan to OpenCL.
 * @ingroup bridge_path
 * @since 0.2
 */
typedef enum clmem_bridge_path {
    CLMEM_BRIDGE_PATH_BEST = 0,       /**< Choose: opaque fd, then dma-buf, then host-mapped. */
    CLMEM_BRIDGE_PATH_OPAQUE_FD = 1,  /**< VK_KHR_external_memory_fd + cl_khr_external_memory_opaque_fd. */
    CLMEM_BRIDGE_PATH_DMA_BUF = 2,    /**< VK_EXT_external_memory_dma_buf + cl_khr_external_memory_dma_buf. */
    CLMEM_BRIDGE_PATH_HOST_MAPPED = 3 /**< vkMapMemory + CL_MEM_USE_HOST_PTR. */
} clmem_bridge_path;

/**
 * A path's short name.
 *
 * @param path Any value.
 * @return "opaque-fd", "dma-buf", "host-mapped", "best", or "unknown-path"
 *         for a value that is not a path; static storage, never free it.
 * @par Blocks
 *      Never.
 * @ingroup bridge_path
 * @since 0.2
 */
const char *clmem_bridge_path_name(clmem_bridge_path path);

/**
 * @defgroup bridge_pairing Pairing devices
 * @ingroup libclmem_bridge
 * @brief The OpenCL device that is the Vulkan device, by deviceUUID.
 */

/**
 * Find the OpenCL platform and device whose CL_DEVICE_UUID_KHR
 * (cl_khr_device_uuid) equals the Vulkan physical device's deviceUUID, to
 * make the cl_context a bridge is created with.
 *
 * Pairs on deviceUUID: the driver UUIDs differ between the APIs even for
 * one driver.
 *
 * @param instance               The Vulkan instance physical_device belongs
 *                               to; what get_instance_proc_addr is called
 *                               with.
 * @param get_instance_proc_addr The application's vkGetInstanceProcAddr, or
 *                               NULL for the loader's.
 * @param physical_device        The Vulkan device to pair.
 * @param[out] platform_out      The OpenCL platform, or NULL if not wanted.
 * @param[out] device_out        The OpenCL device, or NULL if not wanted.
 *                               Both are OpenCL's objects, not retained:
 *                               nothing is the caller's to release.
 * @retval CLMEM_OK                  The device (and platform) were found.
 * @retval CLMEM_ERR_NULL_POINTER    instance or physical_device is NULL.
 * @retval CLMEM_ERR_DEVICE_MISMATCH No OpenCL device has that UUID.
 * @retval CLMEM_ERR_UNSUPPORTED     No OpenCL device offers
 *                                   cl_khr_device_uuid, or Vulkan lacks
 *                                   vkGetPhysicalDeviceProperties2.
 * @retval CLMEM_ERR_OPENCL          An OpenCL query failed.
 * @par Blocks
 *      On the driver queries only.
 * @ingroup bridge_pairing
 * @since 0.2
 */
clmem_status clmem_bridge_pair(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                               VkPhysicalDevice physical_device, cl_platform_id *platform_out,
                               cl_device_id *device_out);

/**
 * @defgroup bridge_object The bridge object
 * @ingroup libclmem_bridge
 * @brief One VkDevice paired with one cl_context, and what an import needs;
 * finishing with a device (@ref lifetime_device_end).
 */

/**
 * A bridge: one VkDevice paired with one cl_context, and everything an
 * import needs (entry points, capability answer, import cache). Opaque,
 * reference-counted.
 * @ingroup bridge_object
 * @since 0.2
 */
typedef struct clmem_bridge clmem_bridge;

/**
 * Bits of clmem_bridge_info::flags.
 * @ingroup bridge_object
 * @since 0.2
 */
enum clmem_bridge_flag {
    /** Every clmem_bridge_import_vk() is a new driver import: no import
     *  cache for this bridge. */
    CLMEM_BRIDGE_NO_IMPORT_CACHE = 1u << 0
};

/**
 * What a bridge is made from.
 *
 * Set `size` to sizeof(clmem_bridge_info) (@ref versioned_structs). The
 * bridge borrows the Vulkan objects (what to call before vkDestroyDevice:
 * @ref lifetime_device_end) and retains the cl_context.
 * @ingroup bridge_object
 * @since 0.2
 */
typedef struct clmem_bridge_info {
    size_t size;                                      /**< sizeof(clmem_bridge_info). */
    VkInstance instance;                              /**< The Vulkan instance (borrowed). */
    VkPhysicalDevice physical_device;                 /**< The Vulkan physical device (borrowed). */
    VkDevice device;                                  /**< Made from physical_device (borrowed). */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /**< NULL: the Vulkan loader's. */
    cl_context context;                               /**< The OpenCL context (retained by the bridge). */
    cl_device_id cl_device; /**< NULL: the context's device whose CL_DEVICE_UUID_KHR is Vulkan's
                                 deviceUUID (or its only device, when none is). */
    uint32_t flags;         /**< clmem_bridge_flag bits. */
} clmem_bridge_info;

/**
 * Make a bridge: load the entry points, check the pairing and work out,
 * once, which memory paths and semaphore modes work (clmem_bridge_caps()).
 *
 * A pair whose device UUIDs differ still gets a bridge: its fd paths then
 * report CLMEM_ERR_DEVICE_MISMATCH, naming both UUIDs, and host-mapped
 * stays available.
 *
 * @param info     What the bridge is made from; read only during the call.
 * @param[out] out The bridge, with one reference, the caller's (release it
 *                 with clmem_bridge_unref()). It retains info->context and
 *                 borrows the Vulkan objects.
 * @retval CLMEM_OK                  *out is the bridge.
 * @retval CLMEM_ERR_NULL_POINTER    info, out, or a handle in info is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   info->size is too small or above 4096,
 *                                   or flags has unknown bits.
 * @retval CLMEM_ERR_DEVICE_MISMATCH cl_device is not in the context, or the
 *                                   context has several devices and none has
 *                                   Vulkan's UUID.
 * @retval CLMEM_ERR_UNSUPPORTED     A Vulkan 1.1 entry point is missing;
 *                                   or info->size is larger than this
 *                                   library's sizeof(clmem_bridge_info) and
 *                                   a byte past it is not zero (a field of a
 *                                   newer header is set).
 * @retval CLMEM_ERR_OPENCL          An OpenCL query or the retain failed.
 * @retval CLMEM_ERR_NO_MEMORY       An allocation failed.
 * @par On error
 *      *out is NULL and nothing is retained.
 * @par Blocks
 *      On the driver queries (tens of microseconds to a millisecond).
 * @ingroup bridge_object
 * @since 0.2
 */
clmem_status clmem_bridge_create(const clmem_bridge_info *info, clmem_bridge **out);

/**
 * One more reference to a bridge.
 *
 * @param b The bridge, or NULL.
 * @return b (NULL for NULL). The new reference is the caller's.
 * @par Blocks
 *      Never.
 * @ingroup bridge_object
 * @since 0.2
 */
clmem_bridge *clmem_bridge_ref(clmem_bridge *b);

/**
 * Drop one reference.
 *
 * The bridge lives on while imports, handles or semaphores made from it do
 * (each holds a reference); the last reference releases the cl_context.
 *
 * Dropping your last reference while teardowns are pending is safe: the
 * bridge stays, held by them, and goes (releasing the cl_context) on
 * whichever thread completes the last of them, a driver thread included.
 * Finishing first (clmem_bridge_finish()) is needed for your Vulkan
 * objects, not for the bridge: after the last unref,
 * clmem_bridge_device_finish() is how you learn that the teardowns are
 * complete (@ref lifetime_device_end).
 *
 * @param b The bridge, or NULL (which does nothing).
 * @par Misuse
 *      An unref too many aborts with one line naming this call
 *      (@ref misuse).
 * @par Blocks
 *      Never.
 * @ingroup bridge_object
 * @since 0.2
 */
void clmem_bridge_unref(clmem_bridge *b);

/**
 * Wait until the teardown of every dropped import of this bridge is
 * complete. clmem_bridge_device_finish() does this for every bridge of a
 * VkDevice, including those already dropped: that is the call to make
 * before vkDestroyDevice.
 *
 * Every import counts, whether it was given a keepalive or NULL: an
 * import's teardown is complete when its three conditions hold
 * (@ref lifetime_teardown), that is when OpenCL has destroyed its cl_mem
 * (and the sub-buffer or image made from it), after the commands enqueued
 * before its last handle went completed; its keepalives, if any, are
 * dropped then. So after CLMEM_OK the application may destroy what the
 * imports used without a keepalive too (a buffer whose memory it frees
 * itself, as examples/ring-example.c does).
 *
 * While waiting it also does the teardown work itself: it enqueues the
 * markers of an import the teardown thread has not reached yet, and it
 * completes a teardown whenever its conditions are met (so that it does
 * not depend on when the driver runs its callbacks). Never waits longer
 * than timeout_ns.
 *
 * @param b          The bridge.
 * @param timeout_ns How long to wait at most, in nanoseconds; 0 just
 *                   checks.
 * @retval CLMEM_OK               Nothing of this bridge holds Vulkan memory
 *                                any more: the cl_mem of every dropped
 *                                import, with or without a keepalive, has
 *                                been destroyed, and every keepalive given
 *                                to its imports has been dropped.
 * @retval CLMEM_ERR_IN_USE       Returned at once, releasing nothing: imports
 *                                still have handles or semaphores are still
 *                                alive (the sentence gives the counts).
 * @retval CLMEM_ERR_TIMEOUT      Device work the teardowns wait for was
 *                                still pending after timeout_ns (the
 *                                sentence gives the count); the keepalives
 *                                are still held, so the memory, and the
 *                                device, must stay.
 * @retval CLMEM_ERR_NULL_POINTER b is NULL.
 * @par Threads
 *      Keepalive callbacks of the teardowns it completes run on the calling
 *      thread.
 * @par Blocks
 *      Up to timeout_ns, on device work enqueued before the last handles
 *      were dropped.
 * @ingroup bridge_object
 * @since 0.2
 */
clmem_status clmem_bridge_finish(clmem_bridge *b, uint64_t timeout_ns);

/**
 * Before vkDestroyDevice: wait until the library holds nothing of `device`.
 *
 * The call a program makes at the end of a VkDevice, before freeing the
 * imported memory and vkDestroyDevice (step 2 of @ref lifetime_device_end,
 * which also says what happens without it).
 *
 * Keyed by the VkDevice, not by a bridge: it finds every bridge made for
 * `device`, the ones the application already dropped included (those live
 * on while their imports tear down, and have nothing else to call finish
 * on), and does for each what clmem_bridge_finish() does. A bridge the
 * application dropped goes during the call, on the calling thread (its
 * cl_context reference released there). A bridge the application still
 * holds stays, with nothing pending: it makes no Vulkan call after
 * CLMEM_OK unless a function is called with it, so it may be dropped
 * before or after vkDestroyDevice. As vkDeviceWaitIdle, it does not stop
 * other threads from starting new work on the device meanwhile.
 *
 * @param device     The VkDevice bridges were made for
 *                   (clmem_bridge_info::device). One that no bridge of this
 *                   process was made for is CLMEM_OK at once.
 * @param timeout_ns How long to wait at most, in nanoseconds, for all the
 *                   device's bridges together; 0 just checks; UINT64_MAX
 *                   waits as long as it takes.
 * @retval CLMEM_OK               The library holds nothing of `device`: every
 *                                teardown of its imports is complete (their
 *                                cl_mem destroyed, their keepalives dropped,
 *                                their host mappings unmapped), and every
 *                                bridge of it that the application dropped
 *                                is gone. vkDestroyDevice may follow.
 * @retval CLMEM_ERR_IN_USE       Handles, semaphores or rings of a bridge of
 *                                the device are still alive (the sentence
 *                                gives the counts); returned without waiting
 *                                for that bridge.
 * @retval CLMEM_ERR_TIMEOUT      Device work the teardowns wait for was still
 *                                pending after timeout_ns (the sentence
 *                                gives the count): the device must stay.
 * @retval CLMEM_ERR_NULL_POINTER device is VK_NULL_HANDLE.
 * @retval CLMEM_ERR_NO_MEMORY    An allocation failed.
 * @par Threads
 *      Keepalive callbacks of the teardowns it completes run on the calling
 *      thread. Never call it from a keepalive's callback: it would wait for
 *      the teardown the callback is part of.
 * @par Blocks
 *      Up to timeout_ns, on device work enqueued before the last handles
 *      were dropped.
 * @ingroup bridge_object
 * @since 0.3
 */
clmem_status clmem_bridge_device_finish(VkDevice device, uint64_t timeout_ns);

/**
 * The bridge's OpenCL context.
 *
 * @param b The bridge, or NULL.
 * @return The context, borrowed (the bridge holds the reference); NULL for
 *         a NULL bridge.
 * @par Blocks
 *      Never.
 * @ingroup bridge_object
 * @since 0.2
 */
cl_context clmem_bridge_context(const clmem_bridge *b);

/**
 * The bridge's OpenCL device.
 *
 * @param b The bridge, or NULL.
 * @return The device, borrowed; NULL for a NULL bridge.
 * @par Blocks
 *      Never.
 * @ingroup bridge_object
 * @since 0.2
 */
cl_device_id clmem_bridge_cl_device(const clmem_bridge *b);

/**
 * The bridge's Vulkan device.
 *
 * @param b The bridge, or NULL.
 * @return The VkDevice, borrowed (the application's); VK_NULL_HANDLE for a
 *         NULL bridge.
 * @par Blocks
 *      Never.
 * @ingroup bridge_object
 * @since 0.2
 */
VkDevice clmem_bridge_vk_device(const clmem_bridge *b);

/**
 * @defgroup bridge_caps Capabilities
 * @ingroup libclmem_bridge
 * @brief Which paths work on a bridge, the extensions to enable, and the memory
 * a bridge shares best.
 */

/**
 * Bits of clmem_bridge_caps().
 * @ingroup bridge_caps
 * @since 0.2
 */
enum clmem_bridge_cap {
    CLMEM_BRIDGE_CAP_OPAQUE_FD = 1u << 0,             /**< Opaque-fd memory import works. */
    CLMEM_BRIDGE_CAP_DMA_BUF = 1u << 1,               /**< Dma-buf memory import works. */
    CLMEM_BRIDGE_CAP_HOST_MAPPED = 1u << 2,           /**< Host-mapped sharing works. */
    CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY = 1u << 3, /**< ...and is zero-copy (CPU or host-unified device). */
    CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD = 1u << 4,   /**< Opaque-fd binary semaphore import works. */
    CLMEM_BRIDGE_CAP_SEMAPHORE_SYNC_FD = 1u << 5,     /**< Sync-fd binary semaphore import works. */
    CLMEM_BRIDGE_CAP_OPAQUE_FD_DEDICATED_ONLY = 1u << 6, /**< Vulkan exports opaque-fd buffers only from
                                                              dedicated allocations. */
    CLMEM_BRIDGE_CAP_IMAGE_VIEW = 1u << 7 /**< OpenCL can make image2d views of plane buffers
                                               (clmem_bridge_import_vk_image(), CLMEM_BRIDGE_IMAGE_AS_IMAGE). */
};

/**
 * What the bridge can do.
 *
 * @param b The bridge, or NULL.
 * @return Every clmem_bridge_cap bit that holds for the bridge's pair, as
 *         worked out at creation; 0 for a NULL bridge.
 * @par Blocks
 *      Never.
 * @ingroup bridge_caps
 * @since 0.2
 */
uint32_t clmem_bridge_caps(const clmem_bridge *b);

/**
 * Can `path` (not BEST) carry memory on this bridge?
 *
 * The answer worked out at creation, which asked both sides and trusted no
 * one source alone: the OpenCL extension string and
 * CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, the Vulkan device
 * extensions and vkGetPhysicalDeviceExternalBufferProperties, and for the
 * fd paths that the device UUIDs match.
 *
 * @param b    The bridge.
 * @param path OPAQUE_FD, DMA_BUF or HOST_MAPPED.
 * @retval CLMEM_OK                  The path works.
 * @retval CLMEM_ERR_UNSUPPORTED     Something is missing:
 *                                   clmem_error_message() names exactly
 *                                   what, on both sides.
 * @retval CLMEM_ERR_DEVICE_MISMATCH An fd path on a pair whose device UUIDs
 *                                   differ (the sentence names both).
 * @retval CLMEM_ERR_NULL_POINTER    b is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   path is BEST or unknown.
 * @par Blocks
 *      Never.
 * @ingroup bridge_caps
 * @since 0.2
 */
clmem_status clmem_bridge_check_path(const clmem_bridge *b, clmem_bridge_path path);

/**
 * Room clmem_bridge_device_extensions() needs in its names_out array.
 * @ingroup bridge_caps
 * @since 0.3
 */
#define CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX 4

/**
 * The Vulkan device extensions the bridge shares through, of those the
 * physical device offers: enable them when creating the VkDevice.
 *
 * Without them the fd paths cannot work, whatever the drivers offer, and a
 * bridge on a GPU falls back to the host-mapped path, which copies at every
 * acquire and release. The names are, in this order and where offered:
 * VK_KHR_external_memory_fd (the opaque-fd path), VK_EXT_external_memory_dma_buf
 * (the dma-buf path; listed only with the first) and
 * VK_KHR_external_semaphore_fd (device-ordered semaphores). They need
 * Vulkan 1.1 or VK_KHR_external_memory / VK_KHR_external_semaphore, which
 * 1.1 made core.
 *
 * @param instance               The VkInstance physical_device came from.
 * @param get_instance_proc_addr The application's vkGetInstanceProcAddr, or
 *                               NULL for the loader's (as for
 *                               clmem_bridge_create()).
 * @param physical_device        The physical device.
 * @param[out] names_out         Room for CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX
 *                               names: the offered ones first, then NULL.
 *                               Static strings, never to be freed.
 * @param[out] count_out         How many names were written (0 when the
 *                               device offers none).
 * @retval CLMEM_OK               *count_out names are in names_out.
 * @retval CLMEM_ERR_NULL_POINTER An argument is NULL (*count_out is 0).
 * @retval CLMEM_ERR_VULKAN       vkGetInstanceProcAddr did not give the
 *                                instance functions the query needs.
 * @par Cost
 *      One vkEnumerateDeviceExtensionProperties per extension name (at
 *      most 3), as when a bridge is made.
 * @par Blocks
 *      Never.
 * @ingroup bridge_caps
 * @since 0.3
 */
clmem_status clmem_bridge_device_extensions(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                            VkPhysicalDevice physical_device,
                                            const char *names_out[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX],
                                            uint32_t *count_out);

/**
 * The memory this bridge shares best: what to pass to
 * clmem_bridge_vk_buffer_create() or clmem_bridge_vk_image_create() (or to
 * one's own vkAllocateMemory), and the path to import it through.
 *
 * The first path that works on the bridge (clmem_bridge_check_path()), in
 * the order an import's CLMEM_BRIDGE_PATH_BEST tries them:
 *  - opaque fd: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, exported as
 *    VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT. Zero-copy: OpenCL uses
 *    the device memory itself (a GPU vendor's own OpenCL driver).
 *  - dma-buf: VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, exported as
 *    VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT. Zero-copy.
 *  - host-mapped: VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
 *    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, not exported (export types 0).
 *    Zero-copy on CPU and host-unified OpenCL devices
 *    (CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY); elsewhere OpenCL copies at
 *    each acquire and release.
 *
 * So the same program shares device memory with no copy on a GPU and
 * host memory with no copy on a CPU. Memory allocated as told here may
 * still be imported through CLMEM_BRIDGE_PATH_BEST, which picks the same
 * path for it.
 *
 * @param b                       The bridge.
 * @param[out] path_out           The path (never BEST on success).
 * @param[out] property_flags_out The memory type's property flags to ask
 *                                for.
 * @param[out] export_types_out   The handle types to export as (0 for the
 *                                host-mapped path).
 * @retval CLMEM_OK               All three are set.
 * @retval CLMEM_ERR_NULL_POINTER An argument is NULL.
 * @retval CLMEM_ERR_UNSUPPORTED  No path works on this pair; the sentence
 *                                says, for each path, what is missing.
 * @par On error
 *      *path_out is CLMEM_BRIDGE_PATH_BEST and the flags are 0 (for those
 *      not NULL).
 * @par Cost
 *      Reads what the bridge worked out at creation; no driver call.
 * @par Blocks
 *      Never.
 * @ingroup bridge_caps
 * @since 0.3
 */
clmem_status clmem_bridge_best_memory(const clmem_bridge *b, clmem_bridge_path *path_out,
                                      VkMemoryPropertyFlags *property_flags_out,
                                      VkExternalMemoryHandleTypeFlags *export_types_out);

/**
 * @defgroup bridge_semaphore_mode Semaphore modes
 * @ingroup libclmem_bridge
 * @brief How a semaphore orders OpenCL work against Vulkan's, and which modes work.
 */

/**
 * How a semaphore orders OpenCL work against Vulkan's.
 * @ingroup bridge_semaphore_mode
 * @since 0.2
 */
typedef enum clmem_bridge_semaphore_mode {
    CLMEM_BRIDGE_SEMAPHORE_BEST = 0,        /**< Device ordering if possible (opaque fd), else host ordering. */
    CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD = 1,   /**< Device ordering through an opaque fd. */
    CLMEM_BRIDGE_SEMAPHORE_SYNC_FD = 2,     /**< Device ordering through a sync fd. */
    CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED = 3 /**< Host ordering (no OpenCL extension needed). */
} clmem_bridge_semaphore_mode;

/**
 * The same as clmem_bridge_check_path() for a semaphore mode.
 *
 * @param b    The bridge.
 * @param mode OPAQUE_FD or SYNC_FD; HOST_ORDERED always works.
 * @retval CLMEM_OK                  The mode works (always for
 *                                   HOST_ORDERED).
 * @retval CLMEM_ERR_UNSUPPORTED     Something is missing, named in
 *                                   clmem_error_message().
 * @retval CLMEM_ERR_DEVICE_MISMATCH The pair's device UUIDs differ.
 * @retval CLMEM_ERR_NULL_POINTER    b is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   mode is BEST or unknown.
 * @par Blocks
 *      Never.
 * @ingroup bridge_semaphore_mode
 * @since 0.2
 */
clmem_status clmem_bridge_check_semaphore(const clmem_bridge *b, clmem_bridge_semaphore_mode mode);

/**
 * @defgroup bridge_vk_memory Vulkan memory
 * @ingroup libclmem_bridge
 * @brief What the bridge needs to know of a VkDeviceMemory, and the exportable
 * buffer everyone allocates.
 */

/**
 * What the bridge needs to know about a VkDeviceMemory.
 *
 * Vulkan cannot be asked these afterwards, so the allocator passes them
 * on, and the bridge trusts them, except where it can check:
 * allocation_size is checked against the size the bridge allocated when
 * the memory came from clmem_bridge_vk_buffer_create() or
 * clmem_bridge_vk_image_create() of the importing bridge (until its
 * destroy call); and on the host-mapped path, where Vulkan's mapping of
 * the memory shows it, a size whose last byte lies in address space that
 * is not mapped at all. Either mismatch is CLMEM_ERR_INVALID_VALUE at
 * import.
 * Otherwise the caller is trusted: a size larger than the allocation that
 * stays inside other mappings (a CPU driver's memory may lie in the C
 * library's heap: docs/driver-notes.md), and any size on the fd paths,
 * gives OpenCL a buffer that reaches past the allocation.
 * (vkGetDeviceMemoryCommitment cannot tell: it answers only for lazily
 * allocated memory.) This struct is frozen: a future field comes with a
 * new struct and new functions.
 * @ingroup bridge_vk_memory
 * @since 0.2
 */
typedef struct clmem_bridge_vk_memory {
    VkDevice device;                              /**< Must be the bridge's VkDevice. */
    VkDeviceMemory memory;                        /**< The memory (the caller's). */
    VkDeviceSize allocation_size;                 /**< VkMemoryAllocateInfo::allocationSize. */
    VkMemoryPropertyFlags property_flags;         /**< Of the memory type it came from. */
    VkExternalMemoryHandleTypeFlags export_types; /**< VkExportMemoryAllocateInfo::handleTypes; 0 if none. */
    VkBool32 dedicated;                           /**< Allocated with VkMemoryDedicatedAllocateInfo. */
} clmem_bridge_vk_memory;

/**
 * Convenience for the allocation everyone writes: a VkBuffer bound to new
 * memory, on the bridge's device.
 *
 * The buffer has `size` bytes and `usage`, is exportable as `export_types`
 * (may be 0), and is bound to new memory of a type with `property_flags`.
 * The allocation is dedicated when Vulkan requires or prefers it
 * (VkMemoryDedicatedRequirements) or reports the handle type as
 * dedicated-only. Needs VK_KHR_external_memory_fd enabled on the device
 * when export_types is not 0.
 *
 * @param b              The bridge.
 * @param size           The buffer's size in bytes.
 * @param usage          VkBufferCreateInfo::usage.
 * @param property_flags The memory type's required property flags.
 * @param export_types   The external handle types to export as, or 0.
 * @param[out] buffer_out The buffer.
 * @param[out] memory_out What the bridge needs to know of its memory, for
 *                        clmem_bridge_import_vk().
 * @retval CLMEM_OK               Both are the caller's.
 * @retval CLMEM_ERR_NULL_POINTER b, buffer_out or memory_out is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE    size is 0.
 * @retval CLMEM_ERR_UNSUPPORTED  No memory type with property_flags can
 *                                hold the buffer.
 * @retval CLMEM_ERR_VULKAN       vkCreateBuffer, vkAllocateMemory or
 *                                vkBindBufferMemory failed.
 * @par On error
 *      Nothing is left allocated: *buffer_out is VK_NULL_HANDLE and
 *      *memory_out is zeroed (when not NULL).
 * @par Ownership
 *      The caller owns the buffer and the memory afterwards and frees them
 *      with clmem_bridge_vk_buffer_destroy() on this bridge, which also
 *      forgets the allocation's size: the bridge keeps it until then, to
 *      check imports of the memory against (clmem_bridge_vk_memory). Freed
 *      with vkFreeMemory instead, the record stays until the bridge goes,
 *      and a later allocation that Vulkan gives the same handle would be
 *      checked against the old size.
 * @par Blocks
 *      On the Vulkan allocation.
 * @ingroup bridge_vk_memory
 * @since 0.2
 */
clmem_status clmem_bridge_vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                           VkMemoryPropertyFlags property_flags,
                                           VkExternalMemoryHandleTypeFlags export_types, VkBuffer *buffer_out,
                                           clmem_bridge_vk_memory *memory_out);

/**
 * Destroy the buffer and free the memory clmem_bridge_vk_buffer_create()
 * made.
 *
 * Call it only once nothing uses them: for memory given to an import, once
 * the import dropped its keepalive (clmem_bridge_finish() returned
 * CLMEM_OK, or the keepalive's callback ran).
 *
 * @param b      The bridge (NULL does nothing).
 * @param buffer The buffer, or VK_NULL_HANDLE.
 * @param memory The memory, or NULL, or one whose memory is VK_NULL_HANDLE.
 * @par Blocks
 *      Never.
 * @ingroup bridge_vk_memory
 * @since 0.2
 */
void clmem_bridge_vk_buffer_destroy(clmem_bridge *b, VkBuffer buffer, const clmem_bridge_vk_memory *memory);

/**
 * @defgroup bridge_import Importing memory
 * @ingroup libclmem_bridge
 * @brief Vulkan memory, or an fd, as a ::clmem_handle in the bridge's context.
 *
 * An import makes a range of Vulkan memory a cl_mem in the bridge's
 * context, carried by a ::clmem_handle; its teardown follows its last
 * handle (@ref lifetime_teardown). Before OpenCL touches the memory,
 * and before Vulkan touches it again, pass ownership with
 * clmem_bridge_acquire() and clmem_bridge_release() (@ref bridge_handoff,
 * @ref vulkan_sync).
 *
 * @anchor bridge_import_cache
 * @par The import cache
 * The key of an import is (memory, offset, size, flags, path, row pitch),
 * where the row pitch is 0 for clmem_bridge_import_vk(), the pitch for
 * clmem_bridge_import_vk_pitched(), and the plane's pitch for a buffer
 * handle of clmem_bridge_import_vk_image() (an image view adds its format
 * and extent). A call whose key equals that of a live import (one with a
 * handle left) is a cache hit: it makes no new import, and the new handle
 * carries the same cl_mem, the same anchor and the same acquire state. The
 * import also holds the hit's keepalive (@ref lifetime_keepalives). An
 * entry goes with its import's last handle. A bridge made with
 * CLMEM_BRIDGE_NO_IMPORT_CACHE has no cache: every call is a new import.
 * clmem_bridge_import_fd() is never cached.
 *
 * @anchor bridge_import_aliases
 * @par Two imports of the same bytes
 * Calls whose keys differ are different imports even where their ranges
 * overlap or are equal (a buffer range and a pitched plane handle of that
 * exact range; BEST and a named path; other flags). Each has its own
 * cl_mem, anchor, teardown and acquire state, and they alias the same
 * memory. The bridge does not track aliases: acquiring one acquires only
 * that one, and acquiring the other while the first is acquired is allowed
 * (as two entries of one clmem_bridge_acquire_many() too). Hand over every
 * alias a command uses, and order commands on them as you would on two
 * buffers over the same bytes: on one in-order queue, or with events;
 * OpenCL does not know they alias.
 */

/**
 * Make the bytes [offset, offset + size) of Vulkan memory usable by OpenCL
 * as a buffer, with no copy on the fd paths and on zero-copy host-mapped
 * devices.
 *
 * Lifetime: the bridge takes one reference on vk_keepalive (the caller
 * keeps its own; it should keep the VkDeviceMemory alive) and drops it when
 * the import's teardown is complete, after its last handle is gone and the
 * commands that could touch the memory completed (@ref lifetime_teardown;
 * on a cache hit too: @ref lifetime_keepalives).
 *
 * For the fd paths the fd comes from vkGetMemoryFdKHR and the whole
 * allocation is imported; a non-zero offset or a smaller size becomes a
 * sub-buffer, whose origin must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN
 * (the same rule holds on the host-mapped path, so code does not depend on
 * the path). That fd is the library's own and the caller never sees it: the
 * driver takes it on a successful import, and on error the library closes
 * it, so nothing is left open. The host-mapped
 * path maps the allocation with vkMapMemory (shared between all imports of
 * one VkDeviceMemory, whichever bridge of the VkDevice made them; do not
 * map it yourself while imported).
 *
 * Before OpenCL touches the memory, and before Vulkan touches it again, pass
 * ownership with clmem_bridge_acquire() / clmem_bridge_release().
 *
 * A call whose key (memory, offset, size, flags, path, row pitch 0) equals
 * that of a live import is a cache hit (@ref bridge_import_cache); the same
 * bytes under another key are another import (@ref bridge_import_aliases).
 *
 * Cost: a driver import (docs/performance.md gives what it was measured to
 * cost), or on a cache hit one read lock of one of the cache's shards (never a
 * bridge-wide lock), one lookup whose length does not grow with the number
 * of live imports, the import's own lock, and one allocation (clmem-bench
 * measure (k) measures how these stay flat).
 *
 * @param b            The bridge.
 * @param memory       The Vulkan memory; memory->device must be the
 *                     bridge's VkDevice. Read during the call only.
 * @param offset       Where the range starts in the allocation.
 * @param size         The range's size in bytes.
 * @param path         CLMEM_BRIDGE_PATH_BEST picks the first of opaque fd,
 *                     dma-buf, host-mapped that the bridge supports and that
 *                     memory->export_types (or, for host-mapped,
 *                     memory->property_flags: HOST_VISIBLE | HOST_COHERENT)
 *                     allows.
 * @param vk_keepalive The anchor that keeps the Vulkan memory alive, or
 *                     NULL; the bridge takes its own reference and drops it
 *                     at the import's teardown, on a cache hit too
 *                     (@ref lifetime_keepalives).
 * @param queue        A queue of the bridge's context, which the handle is
 *                     paired with.
 * @param flags        cl_mem_flags for the buffer (no host-pointer flags).
 * @param[out] out     A new handle, one reference, the caller's, whose
 *                     cl_mem is in the bridge's context and covers exactly
 *                     [offset, offset + size): its byte 0 is byte `offset`
 *                     of the memory (clmem.h, clmem_handle), and whose
 *                     keepalive is the import's; row_pitch 0.
 * @retval CLMEM_OK                   *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER     b, memory, memory->device,
 *                                    memory->memory, queue or out is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE        size (or the allocation size) is 0.
 * @retval CLMEM_ERR_INVALID_VALUE    The range is beyond the allocation, the
 *                                    offset is misaligned, the path is
 *                                    unknown, or flags has host-pointer
 *                                    flags; or memory->allocation_size is
 *                                    not the allocation's, where the bridge
 *                                    can tell (clmem_bridge_vk_memory).
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_DEVICE_MISMATCH  memory->device is not the bridge's
 *                                    VkDevice, or an fd path on a pair whose
 *                                    UUIDs differ.
 * @retval CLMEM_ERR_UNSUPPORTED      The path cannot work here, with what is
 *                                    missing.
 * @retval CLMEM_ERR_VULKAN           A Vulkan call failed.
 * @retval CLMEM_ERR_OPENCL           An OpenCL call failed (the raw code,
 *                                    as the driver returned it).
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par On error
 *      *out is NULL and nothing is leaked: no fd, no cl_mem, no mapping, no
 *      reference.
 * @par Threads
 *      vk_keepalive's last reference, and so its callback, is dropped on an
 *      OpenCL driver thread, the library's thread, or the thread in
 *      clmem_bridge_finish() or clmem_bridge_device_finish()
 *      (@ref lifetime_callbacks).
 * @par Blocks
 *      On the driver import; on the host-mapped path also on a blocking
 *      clEnqueueMapBuffer on `queue`.
 * @ingroup bridge_import
 * @since 0.2
 */
clmem_status clmem_bridge_import_vk(clmem_bridge *b, const clmem_bridge_vk_memory *memory, VkDeviceSize offset,
                                    VkDeviceSize size, clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/**
 * clmem_bridge_import_vk() for a range that holds rows: a matrix, or a plane
 * of pixels, whose rows are `row_pitch` bytes apart. The handles carry
 * row_pitch (clmem_handle_row_pitch()), so a consumer finds the rows without
 * the range pretending to be an image.
 *
 * Everything else is clmem_bridge_import_vk()'s: the paths, the sub-buffer
 * rule for a non-zero offset, the lifetime of vk_keepalive
 * (@ref lifetime_teardown), ownership passing with clmem_bridge_acquire()
 * and clmem_bridge_release(), and the import cache, whose key includes the
 * row pitch: the same range imported with another pitch, or with none, is a
 * separate import of the same memory (@ref bridge_import_aliases).
 *
 * The pitch is checked as clmem_handle_wrap_checked() checks a handle's,
 * before anything is imported: it must not be 0 (a packed range needs
 * none: use clmem_bridge_import_vk()), it must fit in the range (row_pitch
 * <= size), and, when element_size is not 0, it must be a multiple of it, so
 * that a leading dimension in elements (row_pitch / element_size, which a
 * BLAS takes) is exact. Nothing is asked of the rows' count: the last row
 * may be shorter than the pitch. A size of 0 is CLMEM_ERR_ZERO_SIZE whatever
 * the pitch: the size is checked first, then the pitch in the order above,
 * then what clmem_bridge_import_vk() checks.
 *
 * element_size is only checked, never kept: a handle carries a row pitch
 * and no element size, so the cache key has none either. The same range
 * and pitch imported with element_size 0 and then 4 is one import (the
 * second call is a cache hit, and gets a handle on the first import);
 * with element_size 3 the second call is refused (256 is no multiple of
 * 3) before the cache is looked at.
 *
 * Cost: clmem_bridge_import_vk()'s; the pitch checks are arithmetic.
 *
 * @param b            The bridge.
 * @param memory       As for clmem_bridge_import_vk().
 * @param offset       Where the range starts in the allocation.
 * @param size         The range's size in bytes.
 * @param row_pitch    The bytes from one row's start to the next's; not 0,
 *                     at most size.
 * @param element_size The size in bytes of one element of a row (4 for a
 *                     float matrix), whose multiple row_pitch must be; 0 to
 *                     name none and check no multiple.
 * @param path         As for clmem_bridge_import_vk().
 * @param vk_keepalive As for clmem_bridge_import_vk(): the bridge takes its
 *                     own reference.
 * @param queue        A queue of the bridge's context.
 * @param flags        cl_mem_flags for the buffer (no host-pointer flags).
 * @param[out] out     A new handle, one reference, the caller's; its
 *                     clmem_handle_row_pitch() is row_pitch, and every
 *                     handle of the import (cache hits,
 *                     clmem_bridge_handle_for_queue()) carries the same.
 * @retval CLMEM_OK                   *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER     b, memory, memory->device,
 *                                    memory->memory, queue or out is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE        size (or the allocation size) is 0.
 * @retval CLMEM_ERR_INVALID_VALUE    row_pitch is 0, larger than size, or
 *                                    not a multiple of a non-zero
 *                                    element_size; or any of
 *                                    clmem_bridge_import_vk()'s reasons.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_DEVICE_MISMATCH  As for clmem_bridge_import_vk().
 * @retval CLMEM_ERR_UNSUPPORTED      The path cannot work here, with what is
 *                                    missing.
 * @retval CLMEM_ERR_VULKAN           A Vulkan call failed.
 * @retval CLMEM_ERR_OPENCL           An OpenCL call failed (raw code).
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par On error
 *      *out is NULL and nothing is leaked: no fd, no cl_mem, no mapping, no
 *      reference. A bad pitch is found before any driver call.
 * @par Threads
 *      As for clmem_bridge_import_vk(): vk_keepalive's callback can run on a
 *      driver thread.
 * @par Blocks
 *      As clmem_bridge_import_vk() does.
 * @ingroup bridge_import
 * @since 0.3
 */
clmem_status clmem_bridge_import_vk_pitched(clmem_bridge *b, const clmem_bridge_vk_memory *memory,
                                            VkDeviceSize offset, VkDeviceSize size, uint32_t row_pitch,
                                            uint32_t element_size, clmem_bridge_path path,
                                            clmem_keepalive *vk_keepalive, cl_command_queue queue,
                                            cl_mem_flags flags, clmem_handle **out);

/**
 * Import an fd the caller already holds, and make [offset, offset + size) a
 * handle as clmem_bridge_import_vk() does, with the same lifetime rules for
 * keepalive. Never cached: each fd is a new import by definition.
 *
 * fd ownership, exactly: on CLMEM_OK the fd belongs to the import. It stays
 * open while the cl_mem lives and is closed when OpenCL destroyed the cl_mem;
 * the caller must not close it, nor use it again. (The driver is given a
 * duplicate, F_DUPFD_CLOEXEC, which the driver takes and closes itself; the
 * library closes the caller's fd after it.) On any error the fd is still the
 * caller's, open and untouched, whichever step failed.
 *
 * The duplicate, like the fd clmem_bridge_import_vk() exports, never has a
 * number that a semaphore fd the bridge imported had: NVIDIA's driver never
 * closes a memory fd imported at such a number, and keeps the memory until
 * the process exits (docs/driver-notes.md). Semaphore fds imported
 * into OpenCL outside the bridge are not known to it: import semaphores
 * through clmem_bridge_semaphore_import().
 *
 * @param b               The bridge.
 * @param fd              The fd: an opaque fd or a dma-buf, as path says.
 * @param path            CLMEM_BRIDGE_PATH_OPAQUE_FD or
 *                        CLMEM_BRIDGE_PATH_DMA_BUF.
 * @param allocation_size The size of the allocation the fd covers.
 * @param offset          Where the range starts.
 * @param size            The range's size in bytes.
 * @param keepalive       The anchor that keeps the memory alive, or NULL;
 *                        the bridge takes its own reference.
 * @param queue           A queue of the bridge's context.
 * @param flags           cl_mem_flags for the buffer.
 * @param[out] out        A new handle, one reference, the caller's.
 * @retval CLMEM_OK                   *out is the handle; the fd is the
 *                                    import's.
 * @retval CLMEM_ERR_NULL_POINTER     b, queue or out is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE        size or allocation_size is 0.
 * @retval CLMEM_ERR_INVALID_VALUE    fd is negative, path is not an fd path,
 *                                    or the range is beyond the allocation or
 *                                    misaligned.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_UNSUPPORTED      OpenCL does not import this fd type
 *                                    (the Vulkan side, and whether the fd
 *                                    comes from Vulkan at all, is the
 *                                    caller's).
 * @retval CLMEM_ERR_OPENCL           The driver import failed (raw code).
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par On error
 *      *out is NULL, and the fd is still the caller's, open and untouched,
 *      whichever step failed.
 * @par Threads
 *      As for clmem_bridge_import_vk(): keepalive's callback can run on a
 *      driver thread.
 * @par Blocks
 *      On the driver import.
 * @ingroup bridge_import
 * @since 0.2
 */
clmem_status clmem_bridge_import_fd(clmem_bridge *b, int fd, clmem_bridge_path path, uint64_t allocation_size,
                                    uint64_t offset, uint64_t size, clmem_keepalive *keepalive,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/**
 * Another handle of h's import (the same cl_mem and keepalive), paired with
 * `queue`, another queue of the bridge's context.
 *
 * From now on the import's teardown also waits for the commands enqueued
 * on `queue` before its last handle goes (condition (a) of
 * @ref lifetime_teardown). Work on a queue that no handle names is the
 * caller's to finish before dropping the last handle: the bridge cannot
 * see it.
 *
 * @param h        A handle from clmem_bridge_import_vk() or
 *                 clmem_bridge_import_fd() (borrowed).
 * @param queue    A queue of the bridge's context.
 * @param[out] out The new handle, one reference, the caller's.
 * @retval CLMEM_OK                   *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER     h, queue or out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE    h did not come from the bridge.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_OPENCL           A query or retain of queue failed.
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par Blocks
 *      Never (one lock).
 * @ingroup bridge_import
 * @since 0.2
 */
clmem_status clmem_bridge_handle_for_queue(const clmem_handle *h, cl_command_queue queue, clmem_handle **out);

/**
 * The path a bridge handle was imported through.
 *
 * @param h             The handle (borrowed).
 * @param[out] path_out The path (never BEST).
 * @retval CLMEM_OK                *path_out is the path.
 * @retval CLMEM_ERR_NULL_POINTER  h or path_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE h did not come from the bridge.
 * @par Blocks
 *      Never.
 * @ingroup bridge_import
 * @since 0.2
 */
clmem_status clmem_bridge_handle_path(const clmem_handle *h, clmem_bridge_path *path_out);

/**
 * @defgroup bridge_image Images
 * @ingroup libclmem_bridge
 * @brief A Vulkan image reaches OpenCL one plane at a time, with its row pitch.
 */

/**
 * At most this many planes has an image the bridge shares
 * (clmem_bridge_vk_image::planes).
 * @ingroup bridge_image
 * @since 0.2
 */
#define CLMEM_BRIDGE_IMAGE_MAX_PLANES 3

/**
 * One plane of a clmem_bridge_vk_image.
 *
 * Linear tiling only: zero for optimal tiling, whose layout is the
 * driver's.
 * @ingroup bridge_image
 * @since 0.2
 */
typedef struct clmem_bridge_vk_image_plane {
    VkDeviceSize offset;    /**< The plane's first byte in memory.memory: memory_offset +
                                 VkSubresourceLayout.offset. */
    VkDeviceSize size;      /**< VkSubresourceLayout.size. */
    VkDeviceSize row_pitch; /**< VkSubresourceLayout.rowPitch, in bytes. */
    uint32_t width;         /**< The plane's width in its own texels (half the image's for 4:2:0 chroma). */
    uint32_t height;        /**< The plane's height in its own texels (half the image's for 4:2:0 chroma). */
} clmem_bridge_vk_image_plane;

/**
 * What the image import needs to know about a VkImage, so that it asks
 * Vulkan nothing.
 *
 * clmem_bridge_vk_image_create() fills it, and an application that
 * allocates its images itself fills it from vkGetImageSubresourceLayout
 * (one call per plane aspect) and its own allocation. `image` is not used
 * by the import: memory laid out as an image by other means (a video
 * decoder's buffer) can be described with VK_NULL_HANDLE. This struct is
 * frozen: a future field comes with a new struct and new functions.
 *
 * Vulkan images into OpenCL, with their real row pitch:
 *
 * The way that works on every path is a LINEAR VkImage whose memory is
 * imported as a buffer: each plane becomes its own handle whose cl_mem is a
 * buffer (a sub-buffer where the plane does not start the allocation)
 * covering exactly the plane's bytes (byte 0 of the cl_mem is the plane's
 * first byte, so a consumer's offset is 0), and whose row_pitch (clmem.h)
 * is the plane's VkSubresourceLayout.rowPitch, always a multiple of the
 * plane's texel size (the import refuses another). The row-pitch
 * contract: texel
 * (x, y) of the plane starts at byte y * row_pitch + x * texel_bytes of
 * that buffer (clmem_bridge_image_plane_format() gives texel_bytes and the
 * plane's cl_image_format); the bytes between a row's last texel and the
 * next row are padding that belongs to Vulkan's layout: read them, never
 * rely on them.
 *
 * Two views more, each only where it is proven to work:
 *  - an image2d view of a linear plane (CLMEM_BRIDGE_IMAGE_AS_IMAGE): an
 *    OpenCL image made from that plane buffer with the same pitch
 *    (cl_khr_image2d_from_buffer, core in OpenCL 2.0), offered when the
 *    device makes images from buffers and the pitch is a multiple of
 *    CL_DEVICE_IMAGE_PITCH_ALIGNMENT texels;
 *  - an OPTIMAL-tiling image imported straight from the fd as an OpenCL
 *    image (clCreateImageWithProperties), offered on the fd paths only, and
 *    only for a format that passed clmem_bridge_image_live_check() on this
 *    bridge: the layout of an image imported so is the driver's (where
 *    CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
 *    lists no handle type, as on NVIDIA's driver: docs/driver-notes.md),
 *    so nothing but a live check can say OpenCL reads Vulkan's pixels.
 *
 * Formats (clmem_bridge_image_formats()): R8, R8G8, R16, R16G16, R8G8B8A8,
 * B8G8R8A8 (UNORM), R32 and R32G32B32A32 SFLOAT, R16G16B16A16 SFLOAT, and
 * the two-plane 4:2:0 formats NV12 (VK_FORMAT_G8_B8R8_2PLANE_420_UNORM) and
 * P010 (VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16): plane 0 is Y
 * (CL_R), plane 1 is Cb and Cr interleaved (CL_RG, Cb in .x) at half the
 * width and half the height; their extent must be even. The two-plane
 * formats have no optimal-tiling import (core OpenCL has no two-plane
 * image).
 *
 * Image layouts: Vulkan defines a linear image's bytes in
 * VK_IMAGE_LAYOUT_GENERAL (and PREINITIALIZED), so hand an image to OpenCL
 * in GENERAL and expect it back in GENERAL; for optimal tiling, GENERAL
 * too. Ownership between the APIs moves with clmem_bridge_acquire() and
 * clmem_bridge_release() on each plane's handle, as for buffers; each plane
 * is its own import (two for NV12), so acquire and release each.
 * @ingroup bridge_image
 * @since 0.2
 */
typedef struct clmem_bridge_vk_image {
    VkImage image;                 /**< The image (the caller's); not used by the import, may be
                                        VK_NULL_HANDLE. */
    clmem_bridge_vk_memory memory; /**< The memory the image is bound to. */
    VkDeviceSize memory_offset;    /**< vkBindImageMemory's memoryOffset (0 for optimal tiling). */
    VkDeviceSize size;             /**< VkMemoryRequirements.size: the bytes from memory_offset the image uses. */
    VkFormat format;               /**< One of clmem_bridge_image_formats(). */
    VkExtent2D extent;             /**< 2D, one mip level, one array layer. */
    VkImageTiling tiling;          /**< VK_IMAGE_TILING_LINEAR or VK_IMAGE_TILING_OPTIMAL. */
    VkImageUsageFlags usage;       /**< VkImageCreateInfo::usage. */
    uint32_t plane_count;          /**< 1, or 2 for NV12 and P010. */
    clmem_bridge_vk_image_plane planes[CLMEM_BRIDGE_IMAGE_MAX_PLANES]; /**< planes[0] to
                                        planes[plane_count - 1]: their layouts for linear tiling, zero for
                                        optimal tiling. */
} clmem_bridge_vk_image;

/**
 * The formats the bridge shares.
 *
 * They are those listed at clmem_bridge_vk_image. The two-plane 4:2:0
 * formats (NV12, P010) need an even width and height: the chroma plane
 * has one texel per 2x2 block of luma, and Vulkan refuses odd extents for
 * them. clmem_bridge_vk_image_create() and clmem_bridge_import_vk_image()
 * refuse an odd extent with CLMEM_ERR_INVALID_VALUE and a sentence saying
 * so, before anything is allocated or imported.
 *
 * @param[out] count_out Gets their number: the array has no terminator, so
 *                       pass it (NULL is tolerated and left alone).
 * @return A static array of *count_out formats; never free it.
 * @par Blocks
 *      Never.
 * @ingroup bridge_image
 * @since 0.2
 */
const VkFormat *clmem_bridge_image_formats(uint32_t *count_out);

/**
 * A shared format's name.
 *
 * @param format Any value.
 * @return "VK_FORMAT_R8_UNORM"...: static storage, never free it; NULL for
 *         a format the bridge does not share.
 * @par Blocks
 *      Never.
 * @ingroup bridge_image
 * @since 0.2
 */
const char *clmem_bridge_image_format_name(VkFormat format);

/**
 * How OpenCL sees plane `plane` of `format`: its cl_image_format (the
 * format of the image view, and how to read the plane buffer's texels) and
 * the bytes of one texel.
 *
 * @param format               A format of clmem_bridge_image_formats().
 * @param plane                The plane's index within `format`, from 0:
 *                             the index of clmem_bridge_vk_image::planes[]
 *                             and of clmem_bridge_import_vk_image()'s
 *                             `plane`, and the n of Vulkan's
 *                             VK_IMAGE_ASPECT_PLANE_n_BIT (not the aspect
 *                             bit itself). A two-plane format has 0 (Y) and
 *                             1 (Cb and Cr interleaved); every other format
 *                             has 0 only, including the one-plane formats
 *                             each of FFmpeg's planes has (R8 for NV12's Y,
 *                             R8G8 for its CbCr).
 * @param[out] cl_format_out   The plane's cl_image_format, or NULL if not
 *                             wanted.
 * @param[out] texel_bytes_out The bytes of one of its texels, or NULL if
 *                             not wanted.
 * @retval CLMEM_OK                The out-parameters are set.
 * @retval CLMEM_ERR_UNSUPPORTED   The bridge does not share the format (the
 *                                 message lists those it does).
 * @retval CLMEM_ERR_INVALID_VALUE plane is past the format's planes.
 * @par Blocks
 *      Never.
 * @ingroup bridge_image
 * @since 0.2
 */
clmem_status clmem_bridge_image_plane_format(VkFormat format, uint32_t plane, cl_image_format *cl_format_out,
                                             uint32_t *texel_bytes_out);

/**
 * Convenience for the image allocation an interop program writes: a 2D
 * VkImage bound to new memory, on the bridge's device.
 *
 * The image (one mip level, one layer, VK_SHARING_MODE_EXCLUSIVE, initial
 * layout UNDEFINED) has `format`, `extent`, `tiling` and `usage`, is
 * exportable as `export_types` (may be 0), and is bound at offset 0 to new
 * memory of a type with `property_flags`. The allocation is dedicated
 * (VkMemoryDedicatedAllocateInfo) when the image is exported (export_types
 * not 0: on one GPU, linear images in exported memory that was not
 * dedicated read back wrong through Vulkan after OpenCL wrote them:
 * docs/driver-notes.md), and when Vulkan requires or prefers it. For linear
 * tiling
 * *image_out's planes come from vkGetImageSubresourceLayout. Needs
 * VK_KHR_external_memory_fd on the device when export_types is not 0.
 *
 * Linear tiling usually needs HOST_VISIBLE memory on CPU devices and is
 * limited to transfer usage on many GPUs: ask for what
 * the import needs (VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
 * VK_IMAGE_USAGE_TRANSFER_DST_BIT).
 *
 * @param b              The bridge.
 * @param format         A format of clmem_bridge_image_formats().
 * @param extent         The image's width and height; both even for a
 *                       4:2:0 format.
 * @param tiling         VK_IMAGE_TILING_LINEAR or VK_IMAGE_TILING_OPTIMAL.
 * @param usage          VkImageCreateInfo::usage.
 * @param property_flags The memory type's required property flags.
 * @param export_types   The external handle types to export as, or 0.
 * @param[out] image_out The image, its memory and its planes, as
 *                       clmem_bridge_import_vk_image() reads them.
 * @retval CLMEM_OK                The image and memory are the caller's.
 * @retval CLMEM_ERR_NULL_POINTER  b or image_out is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE     extent has a width or height of 0.
 * @retval CLMEM_ERR_INVALID_VALUE tiling is not LINEAR or OPTIMAL, or the
 *                                 extent is odd for a 4:2:0 format.
 * @retval CLMEM_ERR_UNSUPPORTED   The bridge does not share the format; or
 *                                 Vulkan cannot make this image: format,
 *                                 tiling, usage, extent or export type, as
 *                                 vkGetPhysicalDeviceImageFormatProperties2
 *                                 answers; or no memory type with
 *                                 property_flags can hold it; each named.
 * @retval CLMEM_ERR_VULKAN        vkGetPhysicalDeviceImageFormatProperties2
 *                                 failed otherwise, or vkCreateImage,
 *                                 vkAllocateMemory or vkBindImageMemory
 *                                 failed (the raw VkResult).
 * @par On error
 *      *image_out is zeroed (when not NULL) and nothing is left allocated.
 * @par Ownership
 *      The caller owns the image and memory afterwards and frees them with
 *      clmem_bridge_vk_image_destroy() on this bridge (which also forgets
 *      the allocation's size, as clmem_bridge_vk_buffer_destroy() does),
 *      after every import of it is gone (@ref lifetime_teardown).
 * @par Blocks
 *      On the Vulkan allocation.
 * @ingroup bridge_image
 * @since 0.2
 */
clmem_status clmem_bridge_vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent, VkImageTiling tiling,
                                          VkImageUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                          VkExternalMemoryHandleTypeFlags export_types,
                                          clmem_bridge_vk_image *image_out);

/**
 * Destroy the image and free the memory clmem_bridge_vk_image_create()
 * made.
 *
 * Call it only once nothing uses them: for an image given to imports, once
 * every import of it dropped its keepalive (clmem_bridge_finish() returned
 * CLMEM_OK, or the keepalive's callback ran).
 *
 * @param b     The bridge (NULL does nothing).
 * @param image The image, or NULL (which does nothing); its image and its
 *              memory.memory may each be a null handle.
 * @par Blocks
 *      Never.
 * @ingroup bridge_image
 * @since 0.2
 */
void clmem_bridge_vk_image_destroy(clmem_bridge *b, const clmem_bridge_vk_image *image);

/**
 * Bits of clmem_bridge_import_vk_image()'s and clmem_bridge_check_image()'s
 * image_flags.
 * @ingroup bridge_image
 * @since 0.2
 */
enum clmem_bridge_image_flag {
    /** The handle's cl_mem is an OpenCL image2d (row_pitch 0) rather than
     *  the plane buffer: for linear tiling a view made from the plane buffer
     *  with its pitch; for optimal tiling (which needs it) the image
     *  imported from the fd. */
    CLMEM_BRIDGE_IMAGE_AS_IMAGE = 1u << 0
};

/**
 * Make plane `plane` of a Vulkan image usable by OpenCL.
 *
 * On success *out is a new handle paired with `queue`, whose cl_mem is in
 * the bridge's context:
 *  - linear tiling, image_flags 0: a buffer covering the plane's bytes
 *    [planes[plane].offset, + planes[plane].size) of image->memory, and
 *    row_pitch = planes[plane].row_pitch. This is exactly
 *    clmem_bridge_import_vk() of that range with the pitch on the handle:
 *    the same paths, the same rule that the offset be a multiple of
 *    CL_DEVICE_MEM_BASE_ADDR_ALIGN, the same cache, acquire, release,
 *    handle_for_queue and teardown (when the Vulkan keepalive is dropped:
 *    @ref lifetime_teardown);
 *  - linear, CLMEM_BRIDGE_IMAGE_AS_IMAGE: an image2d of the plane's
 *    cl_image_format, width and height made from that buffer with the same
 *    row pitch; row_pitch on the handle is 0 (it is an image);
 *  - optimal tiling, CLMEM_BRIDGE_IMAGE_AS_IMAGE (required): an image2d
 *    imported from the whole allocation's fd, on the fd paths, once
 *    clmem_bridge_image_live_check() passed for the format and path on
 *    this bridge.
 *
 * The handle keeps its import alive like any bridge handle: the cl_mem
 * (and the buffer under a view) lives while a handle does, and the
 * teardown waits for the commands on its queues.
 *
 * Cost: that of clmem_bridge_import_vk(), plus clCreateImage for a view
 * (cached with the import).
 *
 * @param b            The bridge.
 * @param image        The image's description; image->memory.device must
 *                     be the bridge's VkDevice. Read during the call only.
 *                     Its extent must be even for NV12 and P010.
 * @param plane        The plane: 0, or 1 for a two-plane format (as for
 *                     clmem_bridge_image_plane_format()).
 * @param path         As for clmem_bridge_import_vk(): BEST picks opaque
 *                     fd, dma-buf, host-mapped, the first that
 *                     image->memory allows; for optimal tiling the first
 *                     fd path.
 * @param vk_keepalive The anchor that keeps the image's memory alive, or
 *                     NULL; the bridge takes its own reference and drops it
 *                     when the teardown is complete
 *                     (@ref lifetime_teardown).
 * @param queue        A queue of the bridge's context, which the handle is
 *                     paired with.
 * @param flags        cl_mem_flags of the buffer and of the image
 *                     (CL_MEM_READ_ONLY for an image a kernel reads with
 *                     read_image*; no host-pointer flags).
 * @param image_flags  clmem_bridge_image_flag bits.
 * @param[out] out     A new handle, one reference, the caller's.
 * @retval CLMEM_OK                   *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER     b, image, image->memory.device,
 *                                    image->memory.memory, queue or out is
 *                                    NULL.
 * @retval CLMEM_ERR_INVALID_VALUE    plane is past the format's planes;
 *                                    unknown image_flags bits; plane_count,
 *                                    extent (empty, or odd for 4:2:0) or a
 *                                    plane's width, height, row_pitch (less
 *                                    than a row, not a multiple of the texel
 *                                    size, or over 32 bits) or size that do
 *                                    not fit the format; a plane offset that
 *                                    is not a multiple of
 *                                    CL_DEVICE_MEM_BASE_ADDR_ALIGN, naming
 *                                    the plane, its offset and the
 *                                    alignment; optimal tiling without
 *                                    CLMEM_BRIDGE_IMAGE_AS_IMAGE or with a
 *                                    memory_offset other than 0; a tiling
 *                                    other than LINEAR or OPTIMAL; and those
 *                                    of clmem_bridge_import_vk() (a range
 *                                    beyond the allocation, an unknown path,
 *                                    host-pointer flags).
 * @retval CLMEM_ERR_ZERO_SIZE        image->memory.allocation_size is 0.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_DEVICE_MISMATCH  image->memory.device is not the
 *                                    bridge's VkDevice, or an fd path on a
 *                                    pair whose UUIDs differ.
 * @retval CLMEM_ERR_UNSUPPORTED      A format the bridge does not share; an
 *                                    image view the device cannot make: no
 *                                    image support, no images from buffers,
 *                                    the plane's cl_image_format not
 *                                    supported, a plane larger than
 *                                    CL_DEVICE_IMAGE2D_MAX_WIDTH or _HEIGHT,
 *                                    a pitch that is not a multiple of
 *                                    CL_DEVICE_IMAGE_PITCH_ALIGNMENT texels
 *                                    (naming the alignment and the pitch),
 *                                    or on the host-mapped path a mapping
 *                                    not aligned to
 *                                    CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT
 *                                    texels; optimal tiling on the
 *                                    host-mapped path, where no fd path
 *                                    works or the memory is not exportable
 *                                    as it, where OpenCL imports no images
 *                                    from an fd, where the format offers
 *                                    none, where no live check ran yet for
 *                                    it, or where the live check failed,
 *                                    saying which; a linear RGBA8 or BGRA8
 *                                    image whose memory is not dedicated
 *                                    (memory.dedicated) through an fd path on
 *                                    a driver where such images read back
 *                                    wrong (NVIDIA: docs/driver-notes.md);
 *                                    and a path that cannot work here, as
 *                                    for clmem_bridge_import_vk().
 * @retval CLMEM_ERR_VULKAN           A Vulkan call failed.
 * @retval CLMEM_ERR_OPENCL           An OpenCL call failed (the import, or
 *                                    clCreateImage for a view; raw code).
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par On error
 *      Every error of clmem_bridge_import_vk() can be returned. *out is
 *      NULL and nothing is leaked.
 * @par Threads
 *      As for clmem_bridge_import_vk(): vk_keepalive's callback can run on
 *      a driver thread.
 * @par Blocks
 *      Those of clmem_bridge_import_vk() (the driver import; on the
 *      host-mapped path also a blocking clEnqueueMapBuffer on `queue`),
 *      plus clCreateImage for a view.
 * @ingroup bridge_image
 * @since 0.2
 */
clmem_status clmem_bridge_import_vk_image(clmem_bridge *b, const clmem_bridge_vk_image *image, uint32_t plane,
                                          clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                                          cl_command_queue queue, cl_mem_flags flags, uint32_t image_flags,
                                          clmem_handle **out);

/**
 * Can images of `format` with `tiling` go through `path` (not BEST) as
 * `image_flags` and `flags` ask, on this bridge?
 *
 * The format-level part of the import's answer, without an image: the
 * format table, the path's answer, whether Vulkan makes such images
 * exportable for the path (vkGetPhysicalDeviceImageFormatProperties2 with
 * transfer usage; for host-mapped, without export), for a view the
 * device's image-from-buffer support and the plane formats
 * (clGetSupportedImageFormats with flags), and for optimal tiling the kept
 * result of the live check (which this call never runs). The pitch rule of
 * a view depends on the image and is checked by the import.
 *
 * @param b           The bridge.
 * @param format      Any VkFormat.
 * @param tiling      VK_IMAGE_TILING_LINEAR or VK_IMAGE_TILING_OPTIMAL.
 * @param path        OPAQUE_FD, DMA_BUF or HOST_MAPPED.
 * @param flags       cl_mem_flags the image would be imported with.
 * @param image_flags clmem_bridge_image_flag bits.
 * @retval CLMEM_OK                  The import would be offered.
 * @retval CLMEM_ERR_UNSUPPORTED     It would not, with the sentence the
 *                                   import would give.
 * @retval CLMEM_ERR_DEVICE_MISMATCH An fd path on a pair whose device UUIDs
 *                                   differ (the path's answer).
 * @retval CLMEM_ERR_NULL_POINTER    b is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   path is BEST or unknown, image_flags
 *                                   has unknown bits, tiling is other than
 *                                   LINEAR or OPTIMAL, or optimal tiling is
 *                                   asked without CLMEM_BRIDGE_IMAGE_AS_IMAGE.
 * @retval CLMEM_ERR_VULKAN          vkGetPhysicalDeviceImageFormatProperties2
 *                                   failed other than with
 *                                   VK_ERROR_FORMAT_NOT_SUPPORTED.
 * @par Blocks
 *      On driver queries only.
 * @ingroup bridge_image
 * @since 0.2
 */
clmem_status clmem_bridge_check_image(const clmem_bridge *b, VkFormat format, VkImageTiling tiling,
                                      clmem_bridge_path path, cl_mem_flags flags, uint32_t image_flags);

/**
 * The live check that decides whether optimal-tiling images of `format`
 * are offered on `path` of this bridge.
 *
 * Once per bridge, format and path: a 67x19 exportable optimal-tiling
 * image (usage TRANSFER_SRC | TRANSFER_DST, plus SAMPLED and STORAGE where
 * the format allows them; memory as clmem_bridge_vk_image_create()
 * allocates it, device-local where there is such a type); Vulkan writes
 * known texels (vkCmdCopyBufferToImage, on vk_queue), OpenCL imports the fd
 * as an image, acquires it on `queue`, reads every texel back
 * (clEnqueueReadImage) and compares, writes new texels
 * (clEnqueueWriteImage) and releases it, and Vulkan reads them
 * (vkCmdCopyImageToBuffer) and compares. The result is kept by the bridge;
 * later calls return it without running again.
 *
 * The check's image is an import of this bridge like any other: it is
 * freed when its teardown is done, which clmem_bridge_finish() waits for.
 * A driver may lay out images of other usages differently; the check
 * proves the format with the usage above.
 *
 * @param b               The bridge.
 * @param format          A format of clmem_bridge_image_formats().
 * @param path            An fd path; BEST: the first the bridge supports.
 * @param vk_queue        A queue of vk_queue_family of the bridge's
 *                        VkDevice, which the check submits to.
 * @param vk_queue_family vk_queue's queue family.
 * @param queue           A queue of the bridge's context, which OpenCL's
 *                        side of the check runs on.
 * @retval CLMEM_OK                   The check passed (now or before).
 * @retval CLMEM_ERR_UNSUPPORTED      The check failed (now or before: the
 *                                    sentence says which texel or which
 *                                    call); or optimal tiling is not
 *                                    offered at all here (a format the
 *                                    bridge does not share, a format without
 *                                    it, the host-mapped path, an fd path the
 *                                    bridge lacks, OpenCL without images or
 *                                    without the format; nothing is run or
 *                                    kept then); or Vulkan cannot make the
 *                                    check's image or a host-visible
 *                                    staging buffer (nothing is kept).
 * @retval CLMEM_ERR_DEVICE_MISMATCH  An fd path on a pair whose device UUIDs
 *                                    differ (nothing is run or kept).
 * @retval CLMEM_ERR_NULL_POINTER     b, vk_queue or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE    path is unknown.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_OPENCL           queue's context cannot be queried (not
 *                                    a valid queue); or an OpenCL call of
 *                                    the check failed with a code that says
 *                                    nothing of the format (out of
 *                                    resources or memory, a failed event,
 *                                    an invalid context, queue or event, a
 *                                    vendor's own code such as one for a
 *                                    context that failed in earlier work):
 *                                    the sentence names the call, nothing
 *                                    is kept, it runs again next time. A
 *                                    refusal with a code about the request
 *                                    (an image format not supported, any
 *                                    other INVALID_* code) is the driver's
 *                                    answer: CLMEM_ERR_UNSUPPORTED, kept.
 * @retval CLMEM_ERR_VULKAN           The check could not be set up (an
 *                                    allocation, a submission): nothing is
 *                                    kept, it runs again next time.
 * @retval CLMEM_ERR_NO_MEMORY        Likewise, for a host allocation.
 * @par Threads
 *      Submits to vk_queue, so call it where you could call vkQueueSubmit
 *      on it.
 * @par Blocks
 *      On the Vulkan and OpenCL work (milliseconds), and while another
 *      thread runs a live check on this bridge.
 * @ingroup bridge_image
 * @since 0.2
 */
clmem_status clmem_bridge_image_live_check(clmem_bridge *b, VkFormat format, clmem_bridge_path path, VkQueue vk_queue,
                                           uint32_t vk_queue_family, cl_command_queue queue);

/**
 * @defgroup bridge_handoff Handing memory over
 * @ingroup libclmem_bridge
 * @brief Ownership from Vulkan to OpenCL and back (@ref vulkan_sync).
 */

/**
 * Pass ownership of the memory behind h to OpenCL, on h's queue, after the
 * events in wait_list.
 *
 * Fd paths: clEnqueueAcquireExternalMemObjectsKHR on the imported buffer.
 * Host-mapped path: the unmap that CL_MEM_USE_HOST_PTR needs for the
 * device to see the host's writes (free on zero-copy devices). The same
 * call works on every path.
 *
 * Vulkan's side of the ordering is the caller's: its writes must have
 * completed (fence, vkQueueWaitIdle, or a semaphore passed through the
 * bridge) before the acquire runs, after a barrier that hands the memory
 * over: a release to VK_QUEUE_FAMILY_EXTERNAL on the fd paths, a barrier
 * to the host stage on the host-mapped path. The page @ref vulkan_sync
 * gives each field of those barriers, and of the ones Vulkan records
 * after clmem_bridge_release().
 *
 * The state belongs to the import (the handles of a cache hit and of
 * clmem_bridge_handle_for_queue() share it); do not race acquire against
 * release on one import. Another import of the same bytes (an alias:
 * @ref bridge_import_aliases) has its own state, which this call neither
 * reads nor changes.
 *
 * @param b          The bridge h's import was made by.
 * @param h          The handle (borrowed).
 * @param num_events How many events wait_list has.
 * @param wait_list  The events to wait for first, or NULL.
 * @param[out] event_out If not NULL, an event for the operation, which the
 *                   caller releases.
 * @retval CLMEM_OK                The acquire is enqueued.
 * @retval CLMEM_ERR_NULL_POINTER  b or h is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE The memory is already acquired, h did
 *                                 not come from the bridge, it is a handle
 *                                 of another bridge, or it is a frame of a
 *                                 frame ring (clmem_bridge_ring_create()),
 *                                 which alone hands its frames over;
 *                                 nothing is enqueued.
 * @retval CLMEM_ERR_OPENCL        The enqueue failed.
 * @par Blocks
 *      Not on anything of this library's: it enqueues only; the driver's
 *      enqueue itself may block (@ref threads_blocks).
 * @ingroup bridge_handoff
 * @since 0.2
 */
clmem_status clmem_bridge_acquire(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event_out);

/**
 * Pass ownership of the memory behind h back to Vulkan, on h's queue,
 * after the events in wait_list.
 *
 * Fd paths: clEnqueueReleaseExternalMemObjectsKHR. Host-mapped path: the
 * map that CL_MEM_USE_HOST_PTR needs for the host to see the device's
 * writes (free on zero-copy devices). Vulkan must not touch the memory
 * until the release's event completed (or a semaphore signalled after it:
 * clmem_bridge_semaphore_signal()), and on the fd paths reads it only after
 * an acquire from VK_QUEUE_FAMILY_EXTERNAL (@ref vulkan_sync).
 * Everything said of clmem_bridge_acquire() holds here too.
 *
 * @param b          The bridge h's import was made by.
 * @param h          The handle (borrowed).
 * @param num_events How many events wait_list has.
 * @param wait_list  The events to wait for first, or NULL.
 * @param[out] event_out If not NULL, an event for the operation, which the
 *                   caller releases.
 * @retval CLMEM_OK                The release is enqueued.
 * @retval CLMEM_ERR_NULL_POINTER  b or h is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE The memory is not acquired, h did not
 *                                 come from the bridge, it is a handle of
 *                                 another bridge, or it is a frame of a
 *                                 frame ring; nothing is enqueued.
 * @retval CLMEM_ERR_OPENCL        The enqueue failed.
 * @par Blocks
 *      Not on anything of this library's: it enqueues only; the driver's
 *      enqueue itself may block (@ref threads_blocks).
 * @ingroup bridge_handoff
 * @since 0.2
 */
clmem_status clmem_bridge_release(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event_out);

/**
 * Pass ownership of the memory behind `count` handles to OpenCL at once,
 * all on `queue`, after the events in wait_list.
 *
 * clmem_bridge_acquire(b, h, ...) is clmem_bridge_acquire_many(b, 1, &h,
 * clmem_handle_queue(h), ...): one code path.
 *
 * What is enqueued: on the fd paths ONE clEnqueueAcquireExternalMemObjectsKHR
 * for all the fd-path handles of the call (opaque fd and dma-buf together);
 * for each host-mapped handle its unmap. Each command waits for wait_list.
 * Only the first OpenCL command after Vulkan work pays the GPU's context
 * switch (docs/latency.md): hand a batch over in one call.
 *
 * All or nothing. Every entry is checked before anything is enqueued; the
 * sentence names the first bad entry. On any of these
 * (CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE) nothing is enqueued,
 * nothing waits on wait_list, and no handle's state changes. When the
 * driver refuses a command after others of the call were accepted
 * (CLMEM_ERR_OPENCL, the raw code and call recorded), the accepted ones are
 * undone by enqueueing their inverse after them, so that again no state
 * changes; only if an undo is refused too does the sentence say how many
 * buffers stay where the commands put them (and their state says so).
 *
 * count 0: a valid call with nothing to hand over. Returns CLMEM_OK without
 * looking at `handles`; with event_out, *event_out is a marker on queue
 * that completes after wait_list (so code that waits on the call's event
 * works for an empty batch too), and nothing at all is enqueued without.
 * queue must still be a queue of the bridge's context
 * (CLMEM_ERR_NULL_POINTER, CLMEM_ERR_CONTEXT_MISMATCH, CLMEM_ERR_OPENCL).
 *
 * Cost: one lock per entry, and for the duplicate check up to 16 entries
 * count^2/2 pointer comparisons, above 16 one pass through a table of the
 * entries (linear in count) and two allocations.
 *
 * @param b          The bridge every handle's import was made by.
 * @param count      How many handles; 0 is a valid call (above).
 * @param handles    `count` handles (borrowed); not looked at when count is
 *                   0. Two handles of one import count as the same entry:
 *                   they share its state. The type is the one an array of
 *                   handles (`clmem_handle *hs[n]`) and a ring's batch
 *                   (clmem_bridge_ring_batch::frames) convert to without a
 *                   cast; neither the array nor the handles are written.
 * @param queue      A queue of the bridge's context that a handle of EACH
 *                   import was made for (the handle's own queue, or one from
 *                   clmem_bridge_handle_for_queue()), so that each import's
 *                   teardown waits for it and can hand the memory back
 *                   there.
 * @param num_events How many events wait_list has.
 * @param wait_list  The events every command waits for first, or NULL.
 * @param[out] event_out If not NULL, an event that completes when all of the
 *                   call's commands did: the command's own event when there
 *                   is one command, else a marker waiting for every
 *                   command's event. The caller releases it; NULL on error.
 * @retval CLMEM_OK                   The commands are enqueued (count 0: the
 *                                    marker, when event_out asks for one).
 * @retval CLMEM_ERR_NULL_POINTER     b or queue is NULL, handles is NULL
 *                                    with a count above 0, or an entry is
 *                                    NULL; nothing is enqueued.
 * @retval CLMEM_ERR_INVALID_VALUE    An entry did not come from
 *                                    clmem-bridge, belongs to another
 *                                    bridge, is a frame of a frame ring (the
 *                                    ring hands its frames over), has an
 *                                    import with no handle for `queue` (so a
 *                                    queue of another context, when count is
 *                                    above 0), is listed twice, or is
 *                                    already acquired; nothing is enqueued.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH count is 0 and queue is not in the
 *                                    bridge's context.
 * @retval CLMEM_ERR_OPENCL           The driver refused a command, or the
 *                                    marker for event_out (accepted commands
 *                                    are undone, as above); or, count 0,
 *                                    queue is not a valid queue.
 * @retval CLMEM_ERR_NO_MEMORY        More than 16 entries, and allocating
 *                                    the call's lists failed; nothing is
 *                                    enqueued.
 * @par Ownership
 *      The handles stay the caller's (borrowed for the call). The memory is
 *      OpenCL's from the acquires on, until clmem_bridge_release_many() or
 *      clmem_bridge_release() hands it back.
 * @par Threads
 *      Do not race two calls for the same import (nor with the single
 *      calls).
 * @par Blocks
 *      Not on anything of this library's: it enqueues only; the driver's
 *      enqueue itself may block (@ref threads_blocks).
 * @ingroup bridge_handoff
 * @since 0.2
 */
clmem_status clmem_bridge_acquire_many(clmem_bridge *b, cl_uint count, clmem_handle *const *handles,
                                       cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event_out);

/**
 * Pass ownership of the memory behind `count` handles back to Vulkan at
 * once, all on `queue`, after the events in wait_list.
 *
 * clmem_bridge_release(b, h, ...) is clmem_bridge_release_many(b, 1, &h,
 * clmem_handle_queue(h), ...): one code path. Everything said of
 * clmem_bridge_acquire_many() holds here too, the other way round: on the
 * fd paths ONE clEnqueueReleaseExternalMemObjectsKHR for all the fd-path
 * handles of the call (opaque fd and dma-buf together); for each
 * host-mapped handle its map. Each command waits for wait_list. Vulkan must
 * not touch the memory until the call's event completed.
 *
 * All or nothing, checked and undone as for clmem_bridge_acquire_many();
 * count 0 is the same valid call, with the same marker.
 *
 * Cost: one lock per entry, and for the duplicate check up to 16 entries
 * count^2/2 pointer comparisons, above 16 one pass through a table of the
 * entries (linear in count) and two allocations.
 *
 * @param b          The bridge every handle's import was made by.
 * @param count      How many handles; 0 is a valid call.
 * @param handles    `count` handles (borrowed); not looked at when count is
 *                   0. Two handles of one import count as the same entry.
 * @param queue      A queue of the bridge's context that a handle of EACH
 *                   import was made for (the handle's own queue, or one from
 *                   clmem_bridge_handle_for_queue()).
 * @param num_events How many events wait_list has.
 * @param wait_list  The events every command waits for first, or NULL.
 * @param[out] event_out If not NULL, an event that completes when all of the
 *                   call's commands did (the command's own event when there
 *                   is one command, else a marker). The caller releases it;
 *                   NULL on error.
 * @retval CLMEM_OK                   The commands are enqueued (count 0: the
 *                                    marker, when event_out asks for one).
 * @retval CLMEM_ERR_NULL_POINTER     b or queue is NULL, handles is NULL
 *                                    with a count above 0, or an entry is
 *                                    NULL; nothing is enqueued.
 * @retval CLMEM_ERR_INVALID_VALUE    An entry did not come from
 *                                    clmem-bridge, belongs to another
 *                                    bridge, is a frame of a frame ring, has
 *                                    an import with no handle for `queue`,
 *                                    is listed twice, or is not acquired;
 *                                    nothing is enqueued.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH count is 0 and queue is not in the
 *                                    bridge's context.
 * @retval CLMEM_ERR_OPENCL           The driver refused a command, or the
 *                                    marker for event_out (accepted commands
 *                                    are undone); or, count 0, queue is not
 *                                    a valid queue.
 * @retval CLMEM_ERR_NO_MEMORY        More than 16 entries, and allocating
 *                                    the call's lists failed; nothing is
 *                                    enqueued.
 * @par Ownership
 *      The handles stay the caller's. The memory is Vulkan's again once the
 *      event completed.
 * @par Threads
 *      Do not race two calls for the same import (nor with the single
 *      calls).
 * @par Blocks
 *      Not on anything of this library's: it enqueues only; the driver's
 *      enqueue itself may block (@ref threads_blocks).
 * @ingroup bridge_handoff
 * @since 0.2
 */
clmem_status clmem_bridge_release_many(clmem_bridge *b, cl_uint count, clmem_handle *const *handles,
                                       cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event_out);

/**
 * @defgroup bridge_semaphore Semaphores
 * @ingroup libclmem_bridge
 * @brief Vulkan binary semaphores waited on and signalled from OpenCL queues.
 */

/**
 * A Vulkan binary semaphore made usable from OpenCL queues, so that a frame
 * can be handed over with no host wait:
 *
 * @code
 *   Vulkan: vkQueueSubmit(..., signal = ready)
 *   OpenCL: clmem_bridge_semaphore_wait(b, ready)  acquire  kernels  release
 *           clmem_bridge_semaphore_signal(b, done)
 *   Vulkan: vkQueueSubmit(wait = done, ...)
 * @endcode
 *
 * Two ways to carry it, chosen at import:
 *  - device ordering (cl_khr_external_semaphore): the VkSemaphore is exported
 *    (vkGetSemaphoreFdKHR; opaque fd, or sync fd) and imported with
 *    clCreateSemaphoreWithPropertiesKHR. Waits and signals happen on the
 *    devices; the host never blocks. The driver takes the fd on a successful
 *    import; on failure the library closes the fd it exported. The bridge
 *    notes the fd's number and never imports memory at it afterwards
 *    (clmem_bridge_import_fd() says why).
 *  - host ordering, where OpenCL lacks the extensions (CPU machines, the
 *    host-mapped path): wait submits a Vulkan wait on the semaphore with a
 *    fence and blocks until it signalled; signal finishes the OpenCL queue
 *    and submits a Vulkan signal. Same calls, same meaning, with the host
 *    in the middle. It submits to `vk_queue`, so call wait and signal where
 *    you could call vkQueueSubmit on it (Vulkan's external synchronisation).
 *
 * Sync-fd semaphores are exported with copy transference: the fd carries one
 * pending signal, so a sync-fd import is good for one wait (import again per
 * signal). Opaque fd is imported once and reused. Binary semaphores must
 * alternate strictly between one signal and one wait
 * (@ref vulkan_sync_family).
 *
 * Opaque and reference-counted; each holds a reference on its bridge.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
typedef struct clmem_bridge_semaphore clmem_bridge_semaphore;

/**
 * Import `semaphore` for use on OpenCL queues of the bridge's context.
 *
 * `semaphore` is a binary VkSemaphore of the bridge's device, created
 * exportable with VkExportSemaphoreCreateInfo for the fd modes; with BEST,
 * create it exportable as opaque fd whenever clmem_bridge_check_semaphore()
 * says opaque fd works, since BEST then picks it.
 *
 * @param b            The bridge.
 * @param vk_queue     The queue host ordering submits to (may be
 *                     VK_NULL_HANDLE for the fd modes).
 * @param semaphore    The Vulkan semaphore (borrowed: keep it alive with
 *                     vk_keepalive).
 * @param mode         The mode; BEST picks opaque fd when the bridge says it
 *                     works, host ordering otherwise.
 * @param vk_keepalive The anchor that keeps the VkSemaphore alive, or NULL:
 *                     the bridge takes a reference and drops it after the
 *                     OpenCL semaphore is released, when the last reference
 *                     to *out goes.
 * @param[out] out     The semaphore, one reference, the caller's; it holds
 *                     one on b.
 * @retval CLMEM_OK                *out is the semaphore.
 * @retval CLMEM_ERR_NULL_POINTER  b, semaphore or out is NULL, or vk_queue
 *                                 is for host ordering.
 * @retval CLMEM_ERR_INVALID_VALUE mode is unknown.
 * @retval CLMEM_ERR_UNSUPPORTED   The mode cannot work here (naming what is
 *                                 missing).
 * @retval CLMEM_ERR_DEVICE_MISMATCH An fd mode on a pair whose device UUIDs
 *                                 differ.
 * @retval CLMEM_ERR_VULKAN        vkGetSemaphoreFdKHR or vkCreateFence
 *                                 failed.
 * @retval CLMEM_ERR_OPENCL        clCreateSemaphoreWithPropertiesKHR failed.
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed.
 * @par On error
 *      *out is NULL and nothing is leaked.
 * @par Blocks
 *      On the driver import.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
clmem_status clmem_bridge_semaphore_import(clmem_bridge *b, VkQueue vk_queue, VkSemaphore semaphore,
                                           clmem_bridge_semaphore_mode mode, clmem_keepalive *vk_keepalive,
                                           clmem_bridge_semaphore **out);

/**
 * The mode chosen at import.
 *
 * @param sem The semaphore, or NULL.
 * @return The mode, never BEST for a semaphore; CLMEM_BRIDGE_SEMAPHORE_BEST
 *         for NULL.
 * @par Blocks
 *      Never.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
clmem_bridge_semaphore_mode clmem_bridge_semaphore_get_mode(const clmem_bridge_semaphore *sem);

/**
 * One more reference to a semaphore.
 *
 * @param sem The semaphore, or NULL.
 * @return sem (NULL for NULL). The new reference is the caller's.
 * @par Blocks
 *      Never.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
clmem_bridge_semaphore *clmem_bridge_semaphore_ref(clmem_bridge_semaphore *sem);

/**
 * Drop one reference; the last unref releases the OpenCL semaphore, then
 * drops vk_keepalive and the bridge reference.
 *
 * @param sem The semaphore, or NULL (which does nothing).
 * @par Threads
 *      vk_keepalive's callback, when that was its last reference, runs on
 *      the calling thread.
 * @par Blocks
 *      Never.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
void clmem_bridge_semaphore_unref(clmem_bridge_semaphore *sem);

/**
 * Make later commands on `queue` wait until Vulkan signalled the semaphore
 * (after the events in wait_list).
 *
 * Device ordering: clEnqueueWaitSemaphoresKHR, no host wait. Host ordering:
 * returns once the signal arrived (the wait_list is waited for first) and
 * *event_out is an already complete event.
 *
 * @param b          The bridge the semaphore was imported through.
 * @param sem        The semaphore.
 * @param queue      A queue of the bridge's context.
 * @param num_events How many events wait_list has.
 * @param wait_list  The events to wait for first, or NULL.
 * @param[out] event_out If not NULL, an event for the wait, which the
 *                   caller releases.
 * @retval CLMEM_OK                The wait is enqueued (host ordering: it
 *                                 happened).
 * @retval CLMEM_ERR_NULL_POINTER  b, sem or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE sem belongs to another bridge.
 * @retval CLMEM_ERR_OPENCL        An OpenCL call failed.
 * @retval CLMEM_ERR_VULKAN        Host ordering's submit or fence wait
 *                                 failed.
 * @par Blocks
 *      Host ordering only, on the Vulkan signal and the wait list.
 * @ingroup bridge_semaphore
 * @since 0.2
 */
clmem_status clmem_bridge_semaphore_wait(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue,
                                         cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

/**
 * Signal the semaphore for Vulkan once the commands enqueued so far on
 * `queue` (and the events in wait_list) completed.
 *
 * Device ordering: clEnqueueSignalSemaphoresKHR followed by clFlush, so that
 * the signal reaches the device now rather than at the next host wait
 * (without the flush, Vulkan's wait can stall until something else flushes
 * the queue). Host ordering: finishes the queue, then submits the Vulkan
 * signal, and *event_out is an already complete event.
 *
 * @param b          The bridge the semaphore was imported through.
 * @param sem        The semaphore.
 * @param queue      A queue of the bridge's context.
 * @param num_events How many events wait_list has.
 * @param wait_list  The events to wait for first, or NULL.
 * @param[out] event_out If not NULL, an event for the signal, which the
 *                   caller releases.
 * @retval CLMEM_OK                The signal is enqueued and flushed (host
 *                                 ordering: submitted).
 * @retval CLMEM_ERR_NULL_POINTER  b, sem or queue is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE sem belongs to another bridge.
 * @retval CLMEM_ERR_OPENCL        An OpenCL call failed.
 * @retval CLMEM_ERR_VULKAN        Host ordering's vkQueueSubmit failed.
 * @par Blocks
 *      Host ordering only, on the wait list and clFinish(queue).
 * @ingroup bridge_semaphore
 * @since 0.2
 */
clmem_status clmem_bridge_semaphore_signal(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue,
                                           cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

/**
 * @defgroup bridge_ring The frame ring
 * @ingroup libclmem_bridge
 * @brief Frames in flight between a Vulkan producer and an OpenCL consumer,
 * in batches, in order.
 */

/**
 * A frame ring: N imported frames (buffers, or image planes imported as
 * buffers) that Vulkan writes and OpenCL reads, round robin, in batches of
 * K frames with ONE semaphore signal and ONE wait per batch each way.
 *
 * On a GPU each direction of a handoff can pay a switch between the two
 * APIs' contexts whatever is handed over, so K frames per batch pay it
 * once instead of K times (docs/latency.md says how to choose N and K,
 * docs/performance.md what was measured).
 *
 * The frames are grouped into D = N / K slots of K consecutive frames
 * (`frames[s*K .. s*K + K)` form slot s), each with its own pair of binary
 * semaphores: Vulkan signals ready[s] when a batch in slot s is written,
 * OpenCL signals done[s] when it let go of it. Batches are numbered 0, 1,
 * 2, ...; batch b lives in slot b % D, so up to D batches are in flight:
 * Vulkan writes one while OpenCL reads others.
 *
 * @code
 *   producer (Vulkan)                        consumer (OpenCL)
 *   clmem_bridge_ring_vk_next(&f)            clmem_bridge_ring_cl_next(&batch)
 *   record writes to f.handle's memory         -- the batch's frames are
 *   vkQueueSubmit(wait = f.wait_semaphore,        acquired on the ring's queue
 *                 signal = f.signal_semaphore) kernels on batch.frames[0..count)
 *   clmem_bridge_ring_vk_submitted(&f)       clmem_bridge_ring_cl_done(&batch)
 * @endcode
 *
 * The ring keeps the order:
 *  - Vulkan never writes a frame OpenCL may still read: a slot is handed to
 *    Vulkan again only after OpenCL's cl_done for its previous batch, and
 *    the first frame of the batch then carries done[s] to wait on (host
 *    ordering: vk_next waits on the host until the release completed);
 *  - OpenCL never reads a frame Vulkan may still write: cl_next enqueues
 *    the wait on ready[s] before the acquire (host ordering: it waits on
 *    the host, through a fence, until Vulkan's signal arrived);
 *  - each binary semaphore alternates strictly between one signal and one
 *    wait (@ref vulkan_sync_family):
 *    vk_next does not hand out slot s before cl_done enqueued the signal
 *    Vulkan will wait on, and cl_next does not enqueue a wait before
 *    vk_submitted reported the signal submitted.
 *
 * Device ordering (semaphores imported as CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD):
 * no call waits for device work; the host only waits where the other side
 * has not yet SUBMITTED what it must wait for. Host ordering (semaphores
 * imported as CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED, the only mode where
 * OpenCL lacks cl_khr_external_semaphore, as on the CPU machines): the same
 * calls, with the host waiting where the device would; wait_semaphore is
 * then always VK_NULL_HANDLE, and vk_submitted submits a wait on ready[s]
 * with a fence of the ring's to the semaphore's vk_queue.
 *
 * Opaque and reference-counted (clmem_bridge_ring_create(),
 * clmem_bridge_ring_ref(), clmem_bridge_ring_unref()).
 *
 * @par Threads
 *      One producer and one consumer, on the same thread or on two. The
 *      producer calls (vk_next, vk_submitted, and vk_drain, which ends the
 *      producer's side) must not run concurrently with each other, nor the
 *      consumer calls (cl_next, cl_done) with each other; a producer call
 *      and a consumer call may. With host ordering the producer calls
 *      submit to the ready semaphores' vk_queue: make them where you may
 *      call vkQueueSubmit on it (Vulkan's external synchronisation),
 *      typically on the thread that submits the frames.
 * @par Ownership
 *      The ring holds one reference on each frame handle, each semaphore
 *      and the bridge, and retains the queue, until its last reference
 *      goes; the frames and semaphores belong to one ring at a time. The
 *      semaphores' state belongs to the ring while it lives: do not wait on
 *      or signal them yourself. To end a stream cleanly, call
 *      clmem_bridge_ring_vk_drain() and submit the waits it gives: up to D
 *      done semaphores are otherwise left signalled. Frames cannot be
 *      acquired or released outside the ring while it lives
 *      (CLMEM_ERR_INVALID_VALUE).
 * @ingroup bridge_ring
 * @since 0.2
 */
typedef struct clmem_bridge_ring clmem_bridge_ring;

/**
 * What a ring is made from.
 *
 * Set `size` to sizeof(clmem_bridge_ring_info) (@ref versioned_structs).
 * Everything is read
 * during clmem_bridge_ring_create() only; the ring takes its own
 * references on what it keeps.
 * @ingroup bridge_ring
 * @since 0.2
 */
typedef struct clmem_bridge_ring_info {
    size_t size;          /**< sizeof(clmem_bridge_ring_info). */
    uint32_t frame_count; /**< N: frames in the ring, a multiple of batch_size. */
    uint32_t batch_size;  /**< K: frames per batch (per semaphore signal and wait). */
    clmem_handle *const *frames;          /**< N handles of the bridge, of N different imports, none
                                               acquired. */
    clmem_bridge_semaphore *const *ready; /**< N / K semaphores: Vulkan signals ready[s] when slot s is
                                               written. */
    clmem_bridge_semaphore *const *done;  /**< N / K semaphores: OpenCL signals done[s] when it let go of
                                               slot s. */
    cl_command_queue queue; /**< Where the ring's commands go: an in-order queue that a handle of every
                                 frame's import was made for. */
    uint32_t flags;         /**< 0 (no flags are defined yet). */
} clmem_bridge_ring_info;

/**
 * Make a ring.
 *
 * All 2 * N / K semaphores must be different, of the bridge, and of one
 * mode: OPAQUE_FD (device ordering) or HOST_ORDERED (a sync-fd import
 * carries one signal, and the ring reuses its semaphores).
 *
 * @param b        The bridge the frames and semaphores come from.
 * @param info     What the ring is made from; read during the call only.
 * @param[out] out The ring, with one reference, the caller's (drop it with
 *                 clmem_bridge_ring_unref()).
 * @retval CLMEM_OK                   *out is the ring.
 * @retval CLMEM_ERR_NULL_POINTER     b, info or out is NULL; info->frames,
 *                                    info->ready, info->done or info->queue
 *                                    is NULL; or an entry of one of the
 *                                    lists is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE    info->size is too small or above 4096
 *                                    (checked before the other fields,
 *                                    since it says which may be read);
 *                                    flags is not 0; a count of 0, or N not
 *                                    a multiple of K; an out-of-order queue;
 *                                    a frame that
 *                                    did not come from clmem-bridge, of
 *                                    another bridge, listed twice (two
 *                                    handles of one import count as one),
 *                                    already acquired, in another ring, or
 *                                    without a handle for `queue`; a
 *                                    semaphore of another bridge, listed
 *                                    twice (the same object or the same
 *                                    VkSemaphore) or in another ring
 *                                    (including one made at the same time
 *                                    from the same frames or semaphores);
 *                                    mixed modes.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH info->queue is not in the bridge's
 *                                    context.
 * @retval CLMEM_ERR_UNSUPPORTED      A semaphore was imported as a sync fd;
 *                                    or info->size is larger than this
 *                                    library's sizeof(clmem_bridge_ring_info)
 *                                    and a byte past it is not zero.
 * @retval CLMEM_ERR_OPENCL           The queue's context or properties
 *                                    cannot be queried, or retaining it
 *                                    failed.
 * @retval CLMEM_ERR_VULKAN           Host ordering: vkCreateFence failed.
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed.
 * @par On error
 *      *out is NULL (when out is not NULL) and nothing is held.
 * @par Ownership
 *      On success the ring holds a reference on every frame handle, every
 *      semaphore and b, and retains info->queue; the caller keeps its own
 *      references.
 * @par Blocks
 *      Never (a queue query; host ordering: D vkCreateFence).
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_create(clmem_bridge *b, const clmem_bridge_ring_info *info, clmem_bridge_ring **out);

/**
 * One more reference to a ring.
 *
 * @param ring The ring, or NULL.
 * @return ring (NULL for NULL). The new reference is the caller's.
 * @par Blocks
 *      Never.
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_bridge_ring *clmem_bridge_ring_ref(clmem_bridge_ring *ring);

/**
 * Drop one reference; the last drops the ring's references on the frames,
 * semaphores and bridge, and releases its queue.
 *
 * Frames OpenCL still holds are handed back by their imports' teardowns,
 * as for any handle. Call it after both sides stopped, and before
 * destroying the semaphores: finish the OpenCL queue and wait for the
 * Vulkan queue first (vkQueueWaitIdle), so that no signal or wait of the
 * ring's is still pending.
 *
 * @param ring The ring, or NULL (which does nothing).
 * @par Threads
 *      When the ring held a frame's last handle, that import's teardown
 *      starts here, as for clmem_handle_unref(): its Vulkan keepalive is
 *      dropped as any import's is (@ref lifetime_callbacks).
 * @par Blocks
 *      Host ordering only, on Vulkan batches submitted that OpenCL never
 *      took (their fences).
 * @ingroup bridge_ring
 * @since 0.2
 */
void clmem_bridge_ring_unref(clmem_bridge_ring *ring);

/**
 * Bits of clmem_bridge_ring_vk_next()'s flags.
 * @ingroup bridge_ring
 * @since 0.2
 */
enum clmem_bridge_ring_vk_flag {
    /** This frame ends its batch, even with fewer than K frames (the last
     *  frames of a stream): it carries the batch's signal, and the next
     *  frame starts the next slot. */
    CLMEM_BRIDGE_RING_END_BATCH = 1u << 0
};

/**
 * A frame handed to Vulkan, by clmem_bridge_ring_vk_next().
 *
 * This struct is frozen: a future field comes with a new struct and new
 * functions.
 * @ingroup bridge_ring
 * @since 0.2
 */
typedef struct clmem_bridge_ring_frame {
    uint64_t sequence;            /**< 0, 1, 2, ...: frames handed to Vulkan since the ring was made. */
    uint64_t batch;               /**< The batch it belongs to (slot batch % D). */
    uint32_t index;               /**< Which frame: info.frames[index]. */
    uint32_t position;            /**< Its place in the batch, 0 .. K - 1. */
    clmem_handle *handle;         /**< info.frames[index], borrowed from the ring. */
    VkSemaphore wait_semaphore;   /**< Not VK_NULL_HANDLE: the submission that writes this frame must
                                       wait on it (first frame of a batch whose slot OpenCL used before). */
    VkSemaphore signal_semaphore; /**< Not VK_NULL_HANDLE: the submission that writes this frame, or one
                                       after it on the same queue, must signal it (last frame of a
                                       batch). */
} clmem_bridge_ring_frame;

/**
 * The next frame for Vulkan to write.
 *
 * The frames of a batch come in order, slot after slot. The first frame of
 * a batch may carry wait_semaphore: Vulkan's semaphore wait orders only the
 * submission (VkSubmitInfo) it is in, so put the writes of the batch's
 * frames in that submission, or begin each later frame's commands with a
 * barrier from VK_PIPELINE_STAGE_ALL_COMMANDS_BIT. The last frame of the
 * batch carries signal_semaphore; a signal covers everything submitted
 * earlier on its queue, so one signal after the batch's writes hands over
 * all of them. Then report the submission with
 * clmem_bridge_ring_vk_submitted().
 *
 * @param ring           The ring.
 * @param flags          CLMEM_BRIDGE_RING_END_BATCH, or 0.
 * @param timeout_ns     How long to wait at most for the slot, in
 *                       nanoseconds: 0 does not wait; UINT64_MAX has no
 *                       limit.
 * @param[out] frame_out The frame.
 * @retval CLMEM_OK                *frame_out is filled.
 * @retval CLMEM_ERR_TIMEOUT       The slot was not free within timeout_ns
 *                                 (OpenCL had not handed its previous batch
 *                                 back; host ordering: or that release had
 *                                 not completed), changing nothing.
 * @retval CLMEM_ERR_NULL_POINTER  ring or frame_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE Unknown flags; the ring was drained
 *                                 (clmem_bridge_ring_vk_drain()); or the
 *                                 slot's previous batch was never reported
 *                                 with vk_submitted, so OpenCL could never
 *                                 hand it back.
 * @retval CLMEM_ERR_OPENCL        Host ordering: the release's event (its
 *                                 query failed, or the release ended in an
 *                                 error); nothing changed, and the next
 *                                 call waits again.
 * @par Ownership
 *      frame_out->handle is borrowed from the ring. The frame's memory is
 *      Vulkan's until the batch is handed to OpenCL (a queue-family release
 *      to VK_QUEUE_FAMILY_EXTERNAL belongs in the writes' commands, as for
 *      any external memory; on the host-mapped path a barrier to the host
 *      stage: @ref vulkan_sync).
 * @par Threads
 *      A producer call (see clmem_bridge_ring).
 * @par Blocks
 *      At the first frame of a slot, up to timeout_ns: until OpenCL's
 *      cl_done for the slot's previous batch was called (both orderings)
 *      and, with host ordering, until that release completed on the
 *      device.
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_vk_next(clmem_bridge_ring *ring, uint32_t flags, uint64_t timeout_ns,
                                       clmem_bridge_ring_frame *frame_out);

/**
 * Say that the Vulkan work for `frame`, and for every frame handed out
 * before it, is submitted (vkQueueSubmit returned), with the frame's
 * semaphores.
 *
 * Call it in order; once per frame, or once for the last frame of one
 * submission. When a batch's last frame is reported, OpenCL may take the
 * batch (clmem_bridge_ring_cl_next()). Host ordering: submits a wait on
 * ready[s] with the ring's fence to the semaphore's vk_queue, which is how
 * cl_next learns that Vulkan's writes completed.
 *
 * @param ring  The ring.
 * @param frame A frame vk_next handed out (read during the call only).
 * @retval CLMEM_OK                The frames up to `frame` are reported;
 *                                 every batch they end is OpenCL's to take.
 * @retval CLMEM_ERR_NULL_POINTER  ring or frame is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE A frame not handed out, or already
 *                                 reported.
 * @retval CLMEM_ERR_VULKAN        Host ordering: the fence submission was
 *                                 refused; the batch is not handed to
 *                                 OpenCL, and reporting the same frame again
 *                                 retries it.
 * @par Threads
 *      A producer call (see clmem_bridge_ring). With host ordering it
 *      submits to the ready semaphore's vk_queue: call it where you may
 *      call vkQueueSubmit on it.
 * @par Blocks
 *      Never (host ordering: one vkQueueSubmit per batch).
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_vk_submitted(clmem_bridge_ring *ring, const clmem_bridge_ring_frame *frame);

/**
 * End the producer's side: wait until OpenCL handed back every batch Vulkan
 * submitted, then give, in waits_out, the done semaphores that are
 * signalled for Vulkan and that no frame carried yet (device ordering: up
 * to one per slot; host ordering: none, and the releases have completed).
 *
 * Submit a wait on each (a VkSubmitInfo with only waits will do): then
 * every semaphore of the ring is unsignalled with nothing pending, and
 * once the ring is dropped they may be destroyed, or given to a new ring.
 * Afterwards vk_next refuses (CLMEM_ERR_INVALID_VALUE).
 *
 * @param ring           The ring.
 * @param timeout_ns     How long to wait at most, in nanoseconds: 0 does
 *                       not wait; UINT64_MAX has no limit.
 * @param capacity       Room in waits_out; the ring's slot count
 *                       (frame_count / batch_size) always suffices.
 * @param[out] waits_out The semaphores to wait on, *count_out of them; may
 *                       be NULL when capacity is 0.
 * @param[out] count_out How many waits_out holds; 0 on an error, but for a
 *                       capacity too small, where it is the room needed.
 * @retval CLMEM_OK                *count_out semaphores are in waits_out (0
 *                                 or more); the producer's side is ended.
 * @retval CLMEM_ERR_NULL_POINTER  ring or count_out is NULL, or waits_out
 *                                 is NULL with a capacity.
 * @retval CLMEM_ERR_INVALID_VALUE A batch is handed out but not ended
 *                                 (CLMEM_BRIDGE_RING_END_BATCH) or not
 *                                 reported submitted; or capacity is too
 *                                 small, with *count_out the room needed.
 * @retval CLMEM_ERR_TIMEOUT       OpenCL had not handed everything back
 *                                 within timeout_ns (host ordering: or a
 *                                 release had not completed).
 * @retval CLMEM_ERR_OPENCL        Host ordering: a release ended in an error
 *                                 (or asking whether it completed failed).
 * @par On error
 *      Nothing changes: the producer's side is not ended.
 * @par Threads
 *      A producer call (see clmem_bridge_ring).
 * @par Blocks
 *      Up to timeout_ns: until OpenCL's cl_done for every batch (another
 *      thread's, or already called on this one); with host ordering also
 *      until the releases completed.
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_vk_drain(clmem_bridge_ring *ring, uint64_t timeout_ns, uint32_t capacity,
                                        VkSemaphore *waits_out, uint32_t *count_out);

/**
 * A batch handed to OpenCL, by clmem_bridge_ring_cl_next().
 *
 * This struct is frozen: a future field comes with a new struct and new
 * functions.
 * @ingroup bridge_ring
 * @since 0.2
 */
typedef struct clmem_bridge_ring_batch {
    uint64_t batch;              /**< Its number (slot batch % D). */
    uint64_t first_sequence;     /**< The sequence of frames[0]; frames[i] is sequence first_sequence + i. */
    uint32_t first_index;        /**< frames[i] is info.frames[first_index + i]. */
    uint32_t count;              /**< Frames in the batch: K, or fewer when Vulkan ended it early. */
    clmem_handle *const *frames; /**< count handles, borrowed from the ring. */
} clmem_bridge_ring_batch;

/**
 * The next batch for OpenCL: enqueues, on the ring's queue, the wait for
 * Vulkan's signal (device ordering: clEnqueueWaitSemaphoresKHR, after
 * wait_list) and the acquire of the batch's frames (one
 * clmem_bridge_acquire_many(): one extension call on the fd paths).
 *
 * Enqueue the batch's kernels on the ring's queue after it (it is
 * in-order), then call clmem_bridge_ring_cl_done(). On one thread, take a
 * batch only once vk_submitted reported it: nothing else can report it
 * while cl_next waits.
 *
 * @param ring           The ring.
 * @param timeout_ns     How long to wait at most, in nanoseconds: 0 does
 *                       not wait; UINT64_MAX has no limit.
 * @param num_events     How many events wait_list has.
 * @param wait_list      The events the wait (device ordering) or the
 *                       acquire (host ordering) waits for first, or NULL.
 * @param[out] batch_out The batch.
 * @param[out] event_out If not NULL, the acquire's event, which the caller
 *                       releases; NULL on error.
 * @retval CLMEM_OK               *batch_out is filled.
 * @retval CLMEM_ERR_TIMEOUT      Vulkan had not submitted the next batch
 *                                (host ordering: or its writes had not
 *                                completed) within timeout_ns, changing
 *                                nothing.
 * @retval CLMEM_ERR_NULL_POINTER ring or batch_out is NULL.
 * @retval CLMEM_ERR_OPENCL       The wait (device ordering) or the acquire
 *                                was refused, with the failing call; the
 *                                batch is not taken, and a retry does not
 *                                wait on the semaphore twice.
 * @retval CLMEM_ERR_VULKAN       Host ordering: waiting for or resetting
 *                                the fence failed, with the failing call;
 *                                the batch is not taken.
 * @retval CLMEM_ERR_NO_MEMORY    A batch of more than 16 frames, and
 *                                allocating the acquire's lists failed; the
 *                                batch is not taken.
 * @par Ownership
 *      batch_out->frames are borrowed from the ring; their memory is
 *      OpenCL's, on the ring's queue, until clmem_bridge_ring_cl_done().
 * @par Threads
 *      A consumer call (see clmem_bridge_ring).
 * @par Blocks
 *      Up to timeout_ns: until the producer reported the batch's last frame
 *      submitted; with host ordering also until Vulkan's writes completed
 *      (a fence).
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_cl_next(clmem_bridge_ring *ring, uint64_t timeout_ns, cl_uint num_events,
                                       const cl_event *wait_list, clmem_bridge_ring_batch *batch_out,
                                       cl_event *event_out);

/**
 * Hand the batch back to Vulkan, after the commands enqueued on the ring's
 * queue so far and wait_list: one clmem_bridge_release_many() of its
 * frames, then (device ordering) the signal of done[s] and a clFlush.
 *
 * Batches are handed back in the order they were taken. When only the
 * semaphore signal is refused, the ring finishes the queue instead
 * (clFinish) so that Vulkan may write without it, and returns CLMEM_OK.
 *
 * @param ring           The ring.
 * @param batch          The oldest batch OpenCL holds, as cl_next gave it.
 * @param num_events     How many events wait_list has.
 * @param wait_list      The events the release waits for too, or NULL.
 * @param[out] event_out If not NULL, the release's event, which the caller
 *                       releases; NULL on error.
 * @retval CLMEM_OK                The release is enqueued (device ordering:
 *                                 with the signal and the flush, or the
 *                                 queue finished instead).
 * @retval CLMEM_ERR_NULL_POINTER  ring or batch is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE Not the oldest batch OpenCL holds (or it
 *                                 holds none).
 * @retval CLMEM_ERR_OPENCL        The release was refused: nothing changed,
 *                                 call it again.
 * @retval CLMEM_ERR_NO_MEMORY     A batch of more than 16 frames, and
 *                                 allocating the release's lists failed:
 *                                 nothing changed, call it again.
 * @par Ownership
 *      The batch's frames are the ring's again: enqueue nothing more on
 *      them. vk_next hands them to Vulkan again (device ordering: with
 *      done[s] to wait on; host ordering: once the release completed).
 * @par Threads
 *      A consumer call (see clmem_bridge_ring).
 * @par Blocks
 *      Never (on the fallback only, clFinish).
 * @ingroup bridge_ring
 * @since 0.2
 */
clmem_status clmem_bridge_ring_cl_done(clmem_bridge_ring *ring, const clmem_bridge_ring_batch *batch,
                                       cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_BRIDGE_H */
