/*
 * clmem-bridge.h - share Vulkan memory with OpenCL without copying it.
 *
 * libclmem-bridge imports memory that Vulkan exported into OpenCL
 * (cl_khr_external_memory: opaque fd, dma-buf), or, where a driver lacks
 * those extensions, wraps Vulkan's host-mapped memory (CL_MEM_USE_HOST_PTR),
 * which is zero-copy on CPU and unified-memory OpenCL devices. Either way
 * the result is an ordinary clmem_handle whose anchor chains both APIs'
 * lifetimes: the Vulkan memory's anchor is dropped only after OpenCL has
 * destroyed the cl_mem, which OpenCL does only once every command that
 * used it has completed.
 *
 * Requirements: a Vulkan 1.1 instance (physical-device queries use the 1.1
 * core functions); OpenCL 3.0 for clCreateBufferWithProperties on the fd
 * paths. Errors are reported as in clmem.h: a clmem_status, with the failing
 * call, its raw native code and a sentence in clmem_error_*().
 *
 * This is the only clmem header that includes <vulkan/vulkan.h>.
 */
#ifndef CLMEM_BRIDGE_H
#define CLMEM_BRIDGE_H

#include <clmem.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- paths */

/* How memory travels from Vulkan to OpenCL. */
typedef enum clmem_path {
    CLMEM_PATH_BEST = 0,       /* choose: opaque fd, then dma-buf, then host-mapped */
    CLMEM_PATH_OPAQUE_FD = 1,  /* VK_KHR_external_memory_fd + cl_khr_external_memory_opaque_fd */
    CLMEM_PATH_DMA_BUF = 2,    /* VK_EXT_external_memory_dma_buf + cl_khr_external_memory_dma_buf */
    CLMEM_PATH_HOST_MAPPED = 3 /* vkMapMemory + CL_MEM_USE_HOST_PTR */
} clmem_path;

/* A short name ("opaque-fd", "dma-buf", "host-mapped", "best"); static. */
const char *clmem_path_name(clmem_path path);

/* --------------------------------------------------------------- pairing */

/*
 * Find the OpenCL platform and device whose CL_DEVICE_UUID_KHR
 * (cl_khr_device_uuid) equals the Vulkan physical device's deviceUUID.
 * Either out-parameter may be NULL. Pairs on deviceUUID: the driver UUIDs
 * differ between the APIs even for one driver.
 * Errors: CLMEM_ERR_NULL_POINTER (physical_device), CLMEM_ERR_DEVICE_MISMATCH
 * (no OpenCL device has that UUID), CLMEM_ERR_UNSUPPORTED (no OpenCL device
 * offers cl_khr_device_uuid, so UUIDs cannot be compared), CLMEM_ERR_OPENCL.
 */
clmem_status clmem_bridge_pair(VkPhysicalDevice physical_device, cl_platform_id *platform_out,
                               cl_device_id *device_out);

/* ---------------------------------------------------------- capabilities */

/* Bits of clmem_bridge_caps(). */
enum clmem_cap {
    CLMEM_CAP_OPAQUE_FD = 1u << 0,             /* opaque-fd memory import works */
    CLMEM_CAP_DMA_BUF = 1u << 1,               /* dma-buf memory import works */
    CLMEM_CAP_HOST_MAPPED = 1u << 2,           /* host-mapped sharing works */
    CLMEM_CAP_HOST_MAPPED_ZERO_COPY = 1u << 3, /* ...and is zero-copy (CPU or host-unified device) */
    CLMEM_CAP_SEMAPHORE_OPAQUE_FD = 1u << 4,   /* opaque-fd binary semaphore import works */
    CLMEM_CAP_SEMAPHORE_SYNC_FD = 1u << 5,     /* sync-fd binary semaphore import works */
    CLMEM_CAP_OPAQUE_FD_DEDICATED_ONLY = 1u << 6 /* Vulkan exports opaque-fd buffers only from
                                                    dedicated allocations */
};

/*
 * Can `path` (not CLMEM_PATH_BEST) carry memory from this Vulkan device to
 * this OpenCL device? Asks both sides and does not trust one source alone:
 * the OpenCL extension string and CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
 * the Vulkan device extensions and vkGetPhysicalDeviceExternalBufferProperties,
 * and for the fd paths that the device UUIDs match.
 * Returns CLMEM_OK, or CLMEM_ERR_UNSUPPORTED / CLMEM_ERR_DEVICE_MISMATCH with
 * clmem_error_message() naming exactly what is missing. Queries only; cheap
 * enough to call once per device pair, not per frame.
 */
clmem_status clmem_bridge_check_path(VkPhysicalDevice physical_device, cl_device_id device, clmem_path path);

/* The same for semaphores: handle_type is VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT
 * or VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT. */
clmem_status clmem_bridge_check_semaphore(VkPhysicalDevice physical_device, cl_device_id device,
                                          VkExternalSemaphoreHandleTypeFlagBits handle_type);

/* Every clmem_cap bit that holds for the pair, in *caps_out. Errors only for
 * NULL arguments or a failing query; an unsupported path is a clear bit. */
clmem_status clmem_bridge_caps(VkPhysicalDevice physical_device, cl_device_id device, uint32_t *caps_out);

/* ---------------------------------------------------------- Vulkan memory */

/*
 * What the bridge needs to know about a VkDeviceMemory. Vulkan cannot be
 * asked these afterwards, so the allocator passes them on. This struct is
 * frozen: a future field comes with a new struct and new functions.
 */
typedef struct clmem_vk_memory {
    VkDevice device;
    VkDeviceMemory memory;
    VkDeviceSize allocation_size;                 /* VkMemoryAllocateInfo::allocationSize */
    VkMemoryPropertyFlags property_flags;         /* of the memory type it came from */
    VkExternalMemoryHandleTypeFlags export_types; /* VkExportMemoryAllocateInfo::handleTypes; 0 if none */
    VkBool32 dedicated;                           /* allocated with VkMemoryDedicatedAllocateInfo */
} clmem_vk_memory;

/*
 * Convenience for the allocation everyone writes: a VkBuffer of `size` bytes
 * with `usage`, exportable as `export_types` (may be 0), bound to new memory
 * of a type with `property_flags`. The allocation is dedicated when Vulkan
 * requires or prefers it (VkMemoryDedicatedRequirements) or reports the
 * handle type as dedicated-only. The caller owns both afterwards and frees
 * them with clmem_bridge_vk_buffer_destroy() (or vkDestroyBuffer + vkFreeMemory).
 * Needs VK_KHR_external_memory_fd enabled on the device when export_types is
 * not 0. On error nothing is left allocated.
 */
clmem_status clmem_bridge_vk_buffer_create(VkPhysicalDevice physical_device, VkDevice device, VkDeviceSize size,
                                           VkBufferUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                           VkExternalMemoryHandleTypeFlags export_types, VkBuffer *buffer_out,
                                           clmem_vk_memory *memory_out);
void clmem_bridge_vk_buffer_destroy(VkBuffer buffer, const clmem_vk_memory *memory);

/* ---------------------------------------------------------------- import */

/*
 * Make the bytes [offset, offset + size) of Vulkan memory usable by OpenCL
 * as a buffer, with no copy on the fd paths and on zero-copy host-mapped
 * devices. On success *out is a new handle (one reference, the caller's)
 * whose cl_mem is in `context`, paired with `queue`, and whose keep-alive
 * holds the OpenCL objects (retained) chained before `vk_keep_alive`: the
 * bridge takes one reference on vk_keep_alive (the caller keeps its own) and
 * drops it only after OpenCL destroyed the cl_mem, i.e. after the last
 * handle is gone, the handle's queue was finished and every other command
 * using the cl_mem completed. That drop may happen on a thread of the
 * OpenCL driver when work is still pending on other queues.
 *
 * path: CLMEM_PATH_BEST picks the first of opaque fd, dma-buf, host-mapped
 * that both sides support and that memory->export_types (or, for
 * host-mapped, memory->property_flags: HOST_VISIBLE | HOST_COHERENT) allows.
 *
 * For the fd paths the fd comes from vkGetMemoryFdKHR (VK_KHR_external_memory_fd
 * must be enabled on memory->device) and the whole allocation is imported;
 * a non-zero offset or a smaller size becomes a sub-buffer, whose origin
 * must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (the same rule holds
 * on the host-mapped path, so code does not depend on the path).
 * The host-mapped path maps the allocation with vkMapMemory (shared between
 * imports of one VkDeviceMemory; do not map it yourself while imported).
 *
 * Before OpenCL touches the memory, and before Vulkan touches it again, pass
 * ownership with clmem_bridge_acquire() / clmem_bridge_release().
 *
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_ZERO_SIZE, CLMEM_ERR_INVALID_VALUE
 * (range beyond the allocation, misaligned offset, unknown path),
 * CLMEM_ERR_CONTEXT_MISMATCH (queue not in context), CLMEM_ERR_UNSUPPORTED
 * (with what is missing), CLMEM_ERR_VULKAN, CLMEM_ERR_OPENCL (raw code, e.g.
 * NVIDIA's 999), CLMEM_ERR_NO_MEMORY. On any error *out is NULL and nothing
 * is leaked: no fd, no cl_mem, no mapping, no reference.
 *
 * Cost: a driver import (about 0.2 ms to 15 ms on an H200, by size) unless
 * the import cache holds a live import of the same memory, offset, size,
 * flags and context; then one lock, one lookup and one allocation.
 */
clmem_status clmem_bridge_import_vk(const clmem_vk_memory *memory, VkDeviceSize offset, VkDeviceSize size,
                                    clmem_path path, clmem_keepalive *vk_keep_alive, cl_context context,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/*
 * Import an fd the caller already holds (path CLMEM_PATH_OPAQUE_FD or
 * CLMEM_PATH_DMA_BUF) covering an allocation of allocation_size bytes, and
 * make [offset, offset + size) a handle as clmem_bridge_import_vk() does.
 *
 * fd ownership, exactly: on CLMEM_OK the fd belongs to the import. It stays
 * open while the cl_mem lives and is closed when OpenCL destroyed the cl_mem;
 * the caller must not close it, nor use it again. (The driver is given a
 * duplicate, F_DUPFD_CLOEXEC, which it closes itself, as NVIDIA was measured
 * to do; the library closes the caller's fd after it.) On any error the fd is
 * still the caller's, open and untouched, whichever step failed.
 *
 * keep_alive (may be NULL) is held until OpenCL destroyed the cl_mem, as above.
 */
clmem_status clmem_bridge_import_fd(int fd, clmem_path path, uint64_t allocation_size, uint64_t offset,
                                    uint64_t size, clmem_keepalive *keep_alive, cl_context context,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/*
 * Turn the import cache on (the default) or off for the whole process;
 * returns whether it was on. Off, every clmem_bridge_import_vk() is a new
 * driver import; live cached imports stay valid and leave the cache with
 * their last handle. clmem_bridge_import_fd() is never cached: each fd is
 * a new import by definition.
 */
int clmem_bridge_cache_set_enabled(int enabled);

/* The path a bridge handle was imported through, in *path_out.
 * CLMEM_ERR_INVALID_VALUE when h did not come from the bridge. */
clmem_status clmem_bridge_handle_path(const clmem_handle *h, clmem_path *path_out);

/* ------------------------------------------------------------- handoff */

/*
 * Pass ownership of the memory behind h to OpenCL (acquire) or back to
 * Vulkan (release), on h's queue, after the events in wait_list; *event_out
 * (if not NULL) gets an event for the operation, which the caller releases.
 *
 * Fd paths: clEnqueueAcquireExternalMemObjectsKHR / ...Release... on the
 * imported buffer. Host-mapped path: the unmap / map that CL_MEM_USE_HOST_PTR
 * needs for the device and host to see each other's writes (free on
 * zero-copy devices). The same calls work on every path.
 *
 * Vulkan's side of the ordering is the caller's: its writes must have
 * completed (fence, vkQueueWaitIdle, or a semaphore passed through the
 * bridge) before the acquire runs, and Vulkan must not touch the memory
 * until the release's event completed.
 *
 * Acquiring what is acquired, or releasing what is not, is
 * CLMEM_ERR_INVALID_VALUE and enqueues nothing. The state belongs to the
 * imported memory (cached handles share it); do not race acquire against
 * release on one import.
 */
clmem_status clmem_bridge_acquire(const clmem_handle *h, cl_uint num_events, const cl_event *wait_list,
                                  cl_event *event_out);
clmem_status clmem_bridge_release(const clmem_handle *h, cl_uint num_events, const cl_event *wait_list,
                                  cl_event *event_out);

/* ----------------------------------------------------------- semaphores */

/*
 * A Vulkan binary semaphore made usable from OpenCL queues, so that a frame
 * can be handed over with no host wait:
 *
 *   Vulkan: vkQueueSubmit(..., signal = ready)
 *   OpenCL: clmem_bridge_semaphore_wait(ready)  acquire  kernels  release
 *           clmem_bridge_semaphore_signal(done)
 *   Vulkan: vkQueueSubmit(wait = done, ...)
 *
 * Two ways to carry it, chosen at import:
 *  - device ordering (cl_khr_external_semaphore): the VkSemaphore is exported
 *    (vkGetSemaphoreFdKHR; opaque fd, or sync fd) and imported with
 *    clCreateSemaphoreWithPropertiesKHR. Waits and signals happen on the
 *    devices; the host never blocks. The driver takes the fd on a successful
 *    import (NVIDIA closes it during the import); on failure the library
 *    closes the fd it exported.
 *  - host ordering, where OpenCL lacks the extensions (CPU machines, the
 *    host-mapped path): wait submits a Vulkan wait on the semaphore with a
 *    fence and blocks until it signalled; signal finishes the OpenCL queue
 *    and submits a Vulkan signal. Same calls, same meaning, with the host
 *    in the middle. It submits to `vk_queue`, so call wait and signal where
 *    you could call vkQueueSubmit on it (Vulkan's external synchronisation).
 *
 * Sync-fd semaphores are exported with copy transference: the fd carries one
 * pending signal, so a sync-fd import is good for one wait (import again per
 * signal). Opaque fd is imported once and reused.
 */
typedef struct clmem_semaphore clmem_semaphore;

typedef enum clmem_semaphore_mode {
    CLMEM_SEMAPHORE_BEST = 0,         /* device ordering if possible, else host ordering */
    CLMEM_SEMAPHORE_OPAQUE_FD = 1,    /* device ordering through an opaque fd */
    CLMEM_SEMAPHORE_SYNC_FD = 2,      /* device ordering through a sync fd */
    CLMEM_SEMAPHORE_HOST_ORDERED = 3  /* host ordering (no OpenCL extension needed) */
} clmem_semaphore_mode;

/*
 * Import `semaphore` (a binary VkSemaphore created exportable with
 * VkExportSemaphoreCreateInfo for the fd modes; with CLMEM_SEMAPHORE_BEST,
 * create it exportable as opaque fd whenever clmem_bridge_check_semaphore()
 * says opaque fd works, since BEST then picks it) of `vk_device` for use on
 * OpenCL queues of `device` in `context`. `vk_queue` is used by host
 * ordering only (may be VK_NULL_HANDLE for the fd modes). The bridge takes a
 * reference on vk_keep_alive (which should keep the VkSemaphore alive) and
 * drops it after the OpenCL semaphore is released, when the last reference
 * to *out goes. On success *out has one reference, the caller's.
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE, CLMEM_ERR_UNSUPPORTED
 * (naming what is missing), CLMEM_ERR_VULKAN, CLMEM_ERR_OPENCL,
 * CLMEM_ERR_NO_MEMORY. On error *out is NULL and nothing is leaked.
 */
clmem_status clmem_bridge_semaphore_import(VkDevice vk_device, VkQueue vk_queue, VkSemaphore semaphore,
                                           clmem_semaphore_mode mode, clmem_keepalive *vk_keep_alive,
                                           cl_context context, cl_device_id device, clmem_semaphore **out);

/* The mode chosen at import (never CLMEM_SEMAPHORE_BEST). */
clmem_semaphore_mode clmem_bridge_semaphore_mode(const clmem_semaphore *sem);

clmem_semaphore *clmem_bridge_semaphore_ref(clmem_semaphore *sem);  /* NULL-safe */
void             clmem_bridge_semaphore_unref(clmem_semaphore *sem); /* NULL-safe */

/*
 * Make later commands on `queue` wait until Vulkan signalled the semaphore
 * (after the events in wait_list); *event_out, if not NULL, gets an event
 * for the wait. Device ordering: clEnqueueWaitSemaphoresKHR, no host wait.
 * Host ordering: returns once the signal arrived (the wait_list is waited
 * for first) and *event_out is an already complete event.
 */
clmem_status clmem_bridge_semaphore_wait(clmem_semaphore *sem, cl_command_queue queue, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *event_out);

/*
 * Signal the semaphore for Vulkan once the commands enqueued so far on
 * `queue` (and the events in wait_list) completed. Device ordering:
 * clEnqueueSignalSemaphoresKHR followed by clFlush, so that the signal
 * reaches the device now rather than at the next host wait (without the
 * flush, Vulkan's wait can stall until something else flushes the queue).
 * Host ordering: finishes the queue, then submits the Vulkan signal.
 */
clmem_status clmem_bridge_semaphore_signal(clmem_semaphore *sem, cl_command_queue queue, cl_uint num_events,
                                           const cl_event *wait_list, cl_event *event_out);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_BRIDGE_H */
