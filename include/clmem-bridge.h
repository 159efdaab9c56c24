/*
 * clmem-bridge.h - share Vulkan memory with OpenCL without copying it.
 *
 * libclmem-bridge imports memory that Vulkan exported into OpenCL
 * (cl_khr_external_memory: opaque fd, dma-buf), or, where a driver lacks
 * those extensions, wraps Vulkan's host-mapped memory (CL_MEM_USE_HOST_PTR),
 * which is zero-copy on CPU and unified-memory OpenCL devices. Either way
 * the result is an ordinary clmem_handle whose anchor chains both APIs'
 * lifetimes: the Vulkan memory's keepalive is dropped only after every
 * command that could touch the memory has completed and OpenCL destroyed
 * the cl_mem (see clmem_bridge_import_vk for the three conditions).
 *
 * Everything goes through a bridge object (clmem_bridge): one VkDevice
 * paired with one cl_context. It owns what the import needs and would
 * otherwise be process-global: the Vulkan and OpenCL extension entry
 * points (loaded through the application's vkGetInstanceProcAddr when it
 * passes one), the capability answer worked out once at creation, and the
 * import cache. (Host mappings are shared by all bridges of a VkDevice:
 * Vulkan allows one mapping of a VkDeviceMemory at a time.) Every import,
 * handle and semaphore holds a reference on its bridge.
 *
 * Requirements: a Vulkan 1.1 instance (physical-device queries use the 1.1
 * core functions); OpenCL 3.0 for clCreateBufferWithProperties on the fd
 * paths. Errors are reported as in clmem.h: a clmem_status, with the failing
 * call, its raw native code and a sentence in clmem_error_*().
 *
 * Threads and blocking, for every function below: any function may be
 * called from any thread; "Blocks:" in each comment says on what it can
 * wait. A keepalive passed to the bridge (vk_keepalive, keepalive) has its
 * last reference dropped, and so its callback run, on one of: the thread
 * that dropped the last handle (PoCL, whose destruction is synchronous), an
 * OpenCL driver thread (an event or destructor callback), or the thread in
 * clmem_bridge_finish(). Its callback must therefore be thread-safe and must
 * not call blocking OpenCL functions (clFinish, clWaitForEvents).
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
typedef enum clmem_bridge_path {
    CLMEM_BRIDGE_PATH_BEST = 0,       /* choose: opaque fd, then dma-buf, then host-mapped */
    CLMEM_BRIDGE_PATH_OPAQUE_FD = 1,  /* VK_KHR_external_memory_fd + cl_khr_external_memory_opaque_fd */
    CLMEM_BRIDGE_PATH_DMA_BUF = 2,    /* VK_EXT_external_memory_dma_buf + cl_khr_external_memory_dma_buf */
    CLMEM_BRIDGE_PATH_HOST_MAPPED = 3 /* vkMapMemory + CL_MEM_USE_HOST_PTR */
} clmem_bridge_path;

/* A short name ("opaque-fd", "dma-buf", "host-mapped", "best"); static.
 * Blocks: never. */
const char *clmem_bridge_path_name(clmem_bridge_path path);

/* --------------------------------------------------------------- pairing */

/*
 * Find the OpenCL platform and device whose CL_DEVICE_UUID_KHR
 * (cl_khr_device_uuid) equals the Vulkan physical device's deviceUUID, to
 * make the cl_context a bridge is created with. Either out-parameter may be
 * NULL. get_instance_proc_addr may be NULL (the loader's); instance is what
 * it is called with. Pairs on deviceUUID: the driver UUIDs differ between
 * the APIs even for one driver.
 * Errors: CLMEM_ERR_NULL_POINTER (instance, physical_device),
 * CLMEM_ERR_DEVICE_MISMATCH (no OpenCL device has that UUID),
 * CLMEM_ERR_UNSUPPORTED (no OpenCL device offers cl_khr_device_uuid, or
 * Vulkan lacks vkGetPhysicalDeviceProperties2), CLMEM_ERR_OPENCL.
 * Blocks: on the driver queries only.
 */
clmem_status clmem_bridge_pair(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                               VkPhysicalDevice physical_device, cl_platform_id *platform_out,
                               cl_device_id *device_out);

/* ---------------------------------------------------------- the bridge */

typedef struct clmem_bridge clmem_bridge;

/* Bits of clmem_bridge_info.flags. */
enum clmem_bridge_flag {
    /* Every clmem_bridge_import_vk() is a new driver import: no import
     * cache for this bridge. */
    CLMEM_BRIDGE_NO_IMPORT_CACHE = 1u << 0
};

/*
 * What a bridge is made from. Set `size` to sizeof(clmem_bridge_info):
 * fields added later go at the end, and a smaller size means they are
 * absent (zero). The bridge borrows the Vulkan objects (they must outlive
 * it: call clmem_bridge_finish() before vkDestroyDevice) and retains the
 * cl_context.
 */
typedef struct clmem_bridge_info {
    size_t size;                                      /* sizeof(clmem_bridge_info) */
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;                                  /* made from physical_device */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* NULL: the Vulkan loader's */
    cl_context context;
    cl_device_id cl_device; /* NULL: the context's device whose CL_DEVICE_UUID_KHR is Vulkan's
                               deviceUUID (or its only device, when none is) */
    uint32_t flags;         /* clmem_bridge_flag bits */
} clmem_bridge_info;

/*
 * Make a bridge: load the entry points, check the pairing and work out,
 * once, which memory paths and semaphore modes work (clmem_bridge_caps()).
 * A pair whose device UUIDs differ still gets a bridge: its fd paths then
 * report CLMEM_ERR_DEVICE_MISMATCH, naming both UUIDs, and host-mapped
 * stays available. On success *out has one reference, the caller's.
 * Errors: CLMEM_ERR_NULL_POINTER (info, out, or a handle in info),
 * CLMEM_ERR_INVALID_VALUE (info->size too small, unknown flags),
 * CLMEM_ERR_DEVICE_MISMATCH (cl_device is not in the context, or the
 * context has several devices and none has Vulkan's UUID),
 * CLMEM_ERR_UNSUPPORTED (a Vulkan 1.1 entry point is missing),
 * CLMEM_ERR_OPENCL, CLMEM_ERR_NO_MEMORY. On error *out is NULL and nothing
 * is retained.
 * Blocks: on the driver queries (tens of microseconds to a millisecond).
 */
clmem_status clmem_bridge_create(const clmem_bridge_info *info, clmem_bridge **out);

/* One more reference; returns b. NULL-safe. Blocks: never. */
clmem_bridge *clmem_bridge_ref(clmem_bridge *b);

/* Drop one reference. The bridge lives on while imports, handles or
 * semaphores made from it do (each holds a reference); the last reference
 * releases the cl_context. That last reference can be dropped on a driver
 * thread when teardowns are still pending: call clmem_bridge_finish()
 * first. NULL-safe. Blocks: never. */
void clmem_bridge_unref(clmem_bridge *b);

/*
 * What an application calls before vkDestroyDevice: wait until every
 * Vulkan keepalive of this bridge's dropped imports has been released.
 * While waiting it also does the teardown work itself whenever its
 * conditions are met (so that it does not depend on when the driver runs
 * its callbacks).
 * Returns CLMEM_OK once nothing of this bridge holds Vulkan memory any
 * more; CLMEM_ERR_IN_USE at once, releasing nothing, when imports still
 * have handles or semaphores are still alive (the sentence gives the
 * counts); CLMEM_ERR_TIMEOUT when device work the teardowns wait for was
 * still pending after timeout_ns (the sentence gives the count). Never
 * waits longer than timeout_ns (0: just check). CLMEM_ERR_NULL_POINTER.
 * Blocks: up to timeout_ns, on device work enqueued before the last
 * handles were dropped.
 */
clmem_status clmem_bridge_finish(clmem_bridge *b, uint64_t timeout_ns);

/* The bridge's OpenCL context and device, and its Vulkan device.
 * Borrowed; NULL for a NULL bridge. Blocks: never. */
cl_context       clmem_bridge_context(const clmem_bridge *b);
cl_device_id     clmem_bridge_cl_device(const clmem_bridge *b);
VkDevice         clmem_bridge_vk_device(const clmem_bridge *b);

/* ---------------------------------------------------------- capabilities */

/* Bits of clmem_bridge_caps(). */
enum clmem_bridge_cap {
    CLMEM_BRIDGE_CAP_OPAQUE_FD = 1u << 0,             /* opaque-fd memory import works */
    CLMEM_BRIDGE_CAP_DMA_BUF = 1u << 1,               /* dma-buf memory import works */
    CLMEM_BRIDGE_CAP_HOST_MAPPED = 1u << 2,           /* host-mapped sharing works */
    CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY = 1u << 3, /* ...and is zero-copy (CPU or host-unified device) */
    CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD = 1u << 4,   /* opaque-fd binary semaphore import works */
    CLMEM_BRIDGE_CAP_SEMAPHORE_SYNC_FD = 1u << 5,     /* sync-fd binary semaphore import works */
    CLMEM_BRIDGE_CAP_OPAQUE_FD_DEDICATED_ONLY = 1u << 6, /* Vulkan exports opaque-fd buffers only from
                                                            dedicated allocations */
    CLMEM_BRIDGE_CAP_IMAGE_VIEW = 1u << 7 /* OpenCL can make image2d views of plane buffers
                                             (clmem_bridge_import_vk_image, CLMEM_BRIDGE_IMAGE_AS_IMAGE) */
};

/* Every clmem_bridge_cap bit that holds for the bridge's pair, as worked out
 * at creation; 0 for a NULL bridge. Blocks: never. */
uint32_t clmem_bridge_caps(const clmem_bridge *b);

/*
 * Can `path` (not BEST) carry memory on this bridge? The answer worked out
 * at creation, which asked both sides and trusted no one source alone: the
 * OpenCL extension string and CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
 * the Vulkan device extensions and vkGetPhysicalDeviceExternalBufferProperties,
 * and for the fd paths that the device UUIDs match.
 * Returns CLMEM_OK, or CLMEM_ERR_UNSUPPORTED / CLMEM_ERR_DEVICE_MISMATCH
 * with clmem_error_message() naming exactly what is missing;
 * CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE (BEST or unknown).
 * Blocks: never.
 */
clmem_status clmem_bridge_check_path(const clmem_bridge *b, clmem_bridge_path path);

/* ----------------------------------------------------------- semaphore modes */

typedef enum clmem_bridge_semaphore_mode {
    CLMEM_BRIDGE_SEMAPHORE_BEST = 0,        /* device ordering if possible, else host ordering */
    CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD = 1,   /* device ordering through an opaque fd */
    CLMEM_BRIDGE_SEMAPHORE_SYNC_FD = 2,     /* device ordering through a sync fd */
    CLMEM_BRIDGE_SEMAPHORE_HOST_ORDERED = 3 /* host ordering (no OpenCL extension needed) */
} clmem_bridge_semaphore_mode;

/* The same as clmem_bridge_check_path() for a semaphore mode (OPAQUE_FD,
 * SYNC_FD; HOST_ORDERED always works). Blocks: never. */
clmem_status clmem_bridge_check_semaphore(const clmem_bridge *b, clmem_bridge_semaphore_mode mode);

/* ---------------------------------------------------------- Vulkan memory */

/*
 * What the bridge needs to know about a VkDeviceMemory. Vulkan cannot be
 * asked these afterwards, so the allocator passes them on. This struct is
 * frozen: a future field comes with a new struct and new functions.
 */
typedef struct clmem_bridge_vk_memory {
    VkDevice device;                              /* must be the bridge's VkDevice */
    VkDeviceMemory memory;
    VkDeviceSize allocation_size;                 /* VkMemoryAllocateInfo::allocationSize */
    VkMemoryPropertyFlags property_flags;         /* of the memory type it came from */
    VkExternalMemoryHandleTypeFlags export_types; /* VkExportMemoryAllocateInfo::handleTypes; 0 if none */
    VkBool32 dedicated;                           /* allocated with VkMemoryDedicatedAllocateInfo */
} clmem_bridge_vk_memory;

/*
 * Convenience for the allocation everyone writes: a VkBuffer of `size` bytes
 * with `usage`, exportable as `export_types` (may be 0), bound to new memory
 * of a type with `property_flags`, on the bridge's device. The allocation is
 * dedicated when Vulkan requires or prefers it (VkMemoryDedicatedRequirements)
 * or reports the handle type as dedicated-only. The caller owns both
 * afterwards and frees them with clmem_bridge_vk_buffer_destroy() (or
 * vkDestroyBuffer + vkFreeMemory). Needs VK_KHR_external_memory_fd enabled
 * on the device when export_types is not 0. On error nothing is left
 * allocated. Blocks: on the Vulkan allocation.
 */
clmem_status clmem_bridge_vk_buffer_create(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage,
                                           VkMemoryPropertyFlags property_flags,
                                           VkExternalMemoryHandleTypeFlags export_types, VkBuffer *buffer_out,
                                           clmem_bridge_vk_memory *memory_out);
/* Destroys the buffer and frees the memory (either may be null handles).
 * Blocks: never. */
void clmem_bridge_vk_buffer_destroy(clmem_bridge *b, VkBuffer buffer, const clmem_bridge_vk_memory *memory);

/* ---------------------------------------------------------------- import */

/*
 * Make the bytes [offset, offset + size) of Vulkan memory usable by OpenCL
 * as a buffer, with no copy on the fd paths and on zero-copy host-mapped
 * devices. On success *out is a new handle (one reference, the caller's)
 * whose cl_mem is in the bridge's context, paired with `queue` (a queue of
 * that context), and whose keepalive is the import's.
 *
 * Lifetime: the bridge takes one reference on vk_keepalive (the caller
 * keeps its own; it should keep the VkDeviceMemory alive) and drops it only
 * when, after the import's last handle is gone, all of these hold:
 *  (a) every command enqueued before that last unref on every queue a
 *      handle of this import was made for (this queue, a cache hit's queue,
 *      clmem_bridge_handle_for_queue()) has completed: the bridge enqueues
 *      a marker on each;
 *  (b) the memory was handed back to Vulkan, if it was left acquired;
 *  (c) OpenCL has destroyed the cl_mem.
 * No timeout gives up on these. The last clmem_handle_unref() only enqueues
 * the markers; it does not wait for device work. (NVIDIA runs a cl_mem's
 * destructor callback before the kernels using it completed, so (c) alone
 * is not enough: docs/driver-notes.md.)
 *
 * path: CLMEM_BRIDGE_PATH_BEST picks the first of opaque fd, dma-buf,
 * host-mapped that the bridge supports and that memory->export_types (or,
 * for host-mapped, memory->property_flags: HOST_VISIBLE | HOST_COHERENT)
 * allows.
 *
 * For the fd paths the fd comes from vkGetMemoryFdKHR and the whole
 * allocation is imported; a non-zero offset or a smaller size becomes a
 * sub-buffer, whose origin must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN
 * (the same rule holds on the host-mapped path, so code does not depend on
 * the path). The host-mapped path maps the allocation with vkMapMemory
 * (shared between all imports of one VkDeviceMemory, whichever bridge of
 * the VkDevice made them; do not map it yourself while imported).
 *
 * Before OpenCL touches the memory, and before Vulkan touches it again, pass
 * ownership with clmem_bridge_acquire() / clmem_bridge_release().
 *
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_ZERO_SIZE, CLMEM_ERR_INVALID_VALUE
 * (range beyond the allocation, misaligned offset, unknown path, host-pointer
 * flags), CLMEM_ERR_CONTEXT_MISMATCH (queue not in the bridge's context),
 * CLMEM_ERR_DEVICE_MISMATCH (memory->device is not the bridge's VkDevice, or
 * an fd path on a pair whose UUIDs differ), CLMEM_ERR_UNSUPPORTED (with what
 * is missing), CLMEM_ERR_VULKAN, CLMEM_ERR_OPENCL (raw code, e.g. NVIDIA's
 * 999), CLMEM_ERR_NO_MEMORY. On any error *out is NULL and nothing is
 * leaked: no fd, no cl_mem, no mapping, no reference.
 *
 * Cost: a driver import (about 0.2 ms to 15 ms on an H200, by size) unless
 * the bridge's import cache holds a live import of the same memory, offset,
 * size, flags and path; then one lock, one lookup and one allocation.
 * Blocks: on the driver import; on the host-mapped path also on a blocking
 * clEnqueueMapBuffer on `queue`.
 */
clmem_status clmem_bridge_import_vk(clmem_bridge *b, const clmem_bridge_vk_memory *memory, VkDeviceSize offset,
                                    VkDeviceSize size, clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/*
 * Import an fd the caller already holds (CLMEM_BRIDGE_PATH_OPAQUE_FD or
 * CLMEM_BRIDGE_PATH_DMA_BUF) covering an allocation of allocation_size
 * bytes, and make [offset, offset + size) a handle as
 * clmem_bridge_import_vk() does, with the same lifetime rules for keepalive
 * (may be NULL). Never cached: each fd is a new import by definition.
 *
 * fd ownership, exactly: on CLMEM_OK the fd belongs to the import. It stays
 * open while the cl_mem lives and is closed when OpenCL destroyed the cl_mem;
 * the caller must not close it, nor use it again. (The driver is given a
 * duplicate, F_DUPFD_CLOEXEC, which it closes itself, as NVIDIA was measured
 * to do; the library closes the caller's fd after it.) On any error the fd is
 * still the caller's, open and untouched, whichever step failed.
 * Blocks: on the driver import.
 */
clmem_status clmem_bridge_import_fd(clmem_bridge *b, int fd, clmem_bridge_path path, uint64_t allocation_size,
                                    uint64_t offset, uint64_t size, clmem_keepalive *keepalive,
                                    cl_command_queue queue, cl_mem_flags flags, clmem_handle **out);

/*
 * Another handle of h's import (the same cl_mem and keepalive), paired with
 * `queue`, another queue of the bridge's context. From now on the import's
 * teardown also waits for the commands enqueued on `queue` before its last
 * handle goes (rule (a) above). Work on a queue that no handle names is the
 * caller's to finish before dropping the last handle: the bridge cannot see
 * it. On success *out has one reference, the caller's.
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE (h did not come
 * from the bridge), CLMEM_ERR_CONTEXT_MISMATCH, CLMEM_ERR_OPENCL,
 * CLMEM_ERR_NO_MEMORY. Blocks: never (one lock).
 */
clmem_status clmem_bridge_handle_for_queue(const clmem_handle *h, cl_command_queue queue, clmem_handle **out);

/* The path a bridge handle was imported through, in *path_out.
 * CLMEM_ERR_INVALID_VALUE when h did not come from the bridge.
 * Blocks: never. */
clmem_status clmem_bridge_handle_path(const clmem_handle *h, clmem_bridge_path *path_out);

/* ---------------------------------------------------------------- images */

/*
 * Vulkan images into OpenCL, with their real row pitch.
 *
 * The way that works on every path is a LINEAR VkImage whose memory is
 * imported as a buffer: each plane becomes its own handle whose cl_mem is a
 * buffer (a sub-buffer where the plane does not start the allocation)
 * covering exactly the plane's bytes, and whose row_pitch (clmem.h) is the
 * plane's VkSubresourceLayout.rowPitch. The row-pitch contract: texel (x, y)
 * of the plane starts at byte y * row_pitch + x * texel_bytes of that
 * buffer (clmem_bridge_image_plane_format() gives texel_bytes and the
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
 *    bridge: the layout of an image imported so is the driver's (NVIDIA
 *    lists no handle type in
 *    CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR),
 *    so nothing but a live check can say OpenCL reads Vulkan's pixels.
 *
 * Formats (clmem_bridge_image_formats()): R8, R8G8, R16, R8G8B8A8, B8G8R8A8
 * (UNORM), R32 and R32G32B32A32 SFLOAT, R16G16B16A16 SFLOAT, and the
 * two-plane 4:2:0 formats NV12 (VK_FORMAT_G8_B8R8_2PLANE_420_UNORM) and
 * P010 (VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16): plane 0 is Y
 * (CL_R), plane 1 is Cb and Cr interleaved (CL_RG, Cb in .x) at half the
 * width and half the height; their extent must be even. The two-plane
 * formats have no optimal-tiling import (core OpenCL has no two-plane
 * image).
 *
 * Image layouts: Vulkan defines a linear image's bytes in
 * VK_IMAGE_LAYOUT_GENERAL (and PREINITIALIZED), so hand an image to OpenCL
 * in GENERAL and expect it back in GENERAL; for optimal tiling, GENERAL too.
 * Ownership between the APIs moves with clmem_bridge_acquire() and
 * clmem_bridge_release() on each plane's handle, as for buffers; each plane
 * is its own import (two for NV12), so acquire and release each.
 */

#define CLMEM_BRIDGE_IMAGE_MAX_PLANES 3

/* One plane of a clmem_bridge_vk_image. Linear tiling only (zero for
 * optimal tiling, whose layout is the driver's). */
typedef struct clmem_bridge_vk_image_plane {
    VkDeviceSize offset;    /* the plane's first byte in memory.memory: memory_offset + VkSubresourceLayout.offset */
    VkDeviceSize size;      /* VkSubresourceLayout.size */
    VkDeviceSize row_pitch; /* VkSubresourceLayout.rowPitch, in bytes */
    uint32_t width;         /* the plane's extent in its own texels (half the image's for 4:2:0 chroma) */
    uint32_t height;
} clmem_bridge_vk_image_plane;

/*
 * What the image import needs to know about a VkImage, so that it asks
 * Vulkan nothing: clmem_bridge_vk_image_create() fills it, and an
 * application that allocates its images itself fills it from
 * vkGetImageSubresourceLayout (one call per plane aspect) and its own
 * allocation. `image` is not used by the import: memory laid out as an
 * image by other means (a video decoder's buffer) can be described with
 * VK_NULL_HANDLE. This struct is frozen: a future field comes with a new
 * struct and new functions.
 */
typedef struct clmem_bridge_vk_image {
    VkImage image;
    clmem_bridge_vk_memory memory; /* the memory the image is bound to */
    VkDeviceSize memory_offset;    /* vkBindImageMemory's memoryOffset */
    VkDeviceSize size;             /* VkMemoryRequirements.size: the bytes from memory_offset the image uses */
    VkFormat format;               /* one of clmem_bridge_image_formats() */
    VkExtent2D extent;             /* 2D, one mip level, one array layer */
    VkImageTiling tiling;          /* VK_IMAGE_TILING_LINEAR or VK_IMAGE_TILING_OPTIMAL */
    VkImageUsageFlags usage;
    uint32_t plane_count;          /* 1, or 2 for NV12 and P010 */
    clmem_bridge_vk_image_plane planes[CLMEM_BRIDGE_IMAGE_MAX_PLANES];
} clmem_bridge_vk_image;

/* The formats the bridge shares, in a static array; *count_out (not NULL)
 * gets their number. Blocks: never. */
const VkFormat *clmem_bridge_image_formats(uint32_t *count_out);

/* "VK_FORMAT_R8_UNORM"...; NULL for a format the bridge does not share.
 * Static. Blocks: never. */
const char *clmem_bridge_image_format_name(VkFormat format);

/*
 * How OpenCL sees plane `plane` of `format`: its cl_image_format (the
 * format of the image view, and how to read the plane buffer's texels) and
 * the bytes of one texel. Either out-parameter may be NULL.
 * Errors: CLMEM_ERR_UNSUPPORTED (a format the bridge does not share; the
 * message lists those it does), CLMEM_ERR_INVALID_VALUE (plane past the
 * format's planes). Blocks: never.
 */
clmem_status clmem_bridge_image_plane_format(VkFormat format, uint32_t plane, cl_image_format *cl_format_out,
                                             uint32_t *texel_bytes_out);

/*
 * Convenience for the image allocation an interop program writes: a 2D
 * VkImage (one mip level, one layer, VK_SHARING_MODE_EXCLUSIVE, initial
 * layout UNDEFINED) of `format`, `extent`, `tiling` and `usage`, exportable
 * as `export_types` (may be 0), bound at offset 0 to new memory of a type
 * with `property_flags`. The allocation is dedicated when Vulkan requires
 * or prefers it (VkMemoryDedicatedRequirements) or reports the handle type
 * as dedicated-only for the image. For linear tiling *image_out's planes
 * come from vkGetImageSubresourceLayout.
 *
 * The caller owns the image and memory afterwards and frees them with
 * clmem_bridge_vk_image_destroy() (or vkDestroyImage + vkFreeMemory), after
 * every import of it is gone (clmem_bridge_import_vk's rules). Linear
 * tiling usually needs HOST_VISIBLE memory on CPU devices (lavapipe) and is
 * limited to transfer usage on many GPUs: ask for what the import needs
 * (VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT).
 *
 * Errors: CLMEM_ERR_NULL_POINTER (b, image_out), CLMEM_ERR_ZERO_SIZE (an
 * extent of 0), CLMEM_ERR_INVALID_VALUE (tiling not LINEAR or OPTIMAL; an
 * odd extent for a 4:2:0 format), CLMEM_ERR_UNSUPPORTED (a format the
 * bridge does not share; or Vulkan cannot make this image: format, tiling,
 * usage, extent or export type, as vkGetPhysicalDeviceImageFormatProperties2
 * answers; or no memory type with property_flags can hold it, each named),
 * CLMEM_ERR_VULKAN (the raw VkResult). On error *image_out is zeroed and
 * nothing is left allocated. Needs VK_KHR_external_memory_fd on the device
 * when export_types is not 0. Blocks: on the Vulkan allocation.
 */
clmem_status clmem_bridge_vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent, VkImageTiling tiling,
                                          VkImageUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                          VkExternalMemoryHandleTypeFlags export_types,
                                          clmem_bridge_vk_image *image_out);

/* Destroys the image and frees its memory (either may be null handles;
 * NULL image does nothing). Blocks: never. */
void clmem_bridge_vk_image_destroy(clmem_bridge *b, const clmem_bridge_vk_image *image);

/* Bits of clmem_bridge_import_vk_image()'s image_flags. */
enum clmem_bridge_image_flag {
    /* The handle's cl_mem is an OpenCL image2d (row_pitch 0) rather than the
     * plane buffer: for linear tiling a view made from the plane buffer with
     * its pitch; for optimal tiling (which needs it) the image imported from
     * the fd. */
    CLMEM_BRIDGE_IMAGE_AS_IMAGE = 1u << 0
};

/*
 * Make plane `plane` of a Vulkan image usable by OpenCL. On success *out is
 * a new handle (one reference, the caller's) paired with `queue`, whose
 * cl_mem is in the bridge's context:
 *  - linear tiling, image_flags 0: a buffer covering the plane's bytes
 *    [planes[plane].offset, + planes[plane].size) of image->memory, and
 *    row_pitch = planes[plane].row_pitch. This is exactly
 *    clmem_bridge_import_vk() of that range with the pitch on the handle:
 *    the same paths, the same rule that the offset be a multiple of
 *    CL_DEVICE_MEM_BASE_ADDR_ALIGN, the same cache, acquire, release,
 *    handle_for_queue and teardown (clmem_bridge_import_vk says when the
 *    Vulkan keepalive is dropped);
 *  - linear, CLMEM_BRIDGE_IMAGE_AS_IMAGE: an image2d of the plane's
 *    cl_image_format, width and height made from that buffer with the same
 *    row pitch; row_pitch on the handle is 0 (it is an image);
 *  - optimal tiling, CLMEM_BRIDGE_IMAGE_AS_IMAGE (required): an image2d
 *    imported from the whole allocation's fd, on the fd paths, once
 *    clmem_bridge_image_live_check() passed for the format and path on this
 *    bridge.
 * The handle keeps its import alive like any bridge handle: the cl_mem
 * (and the buffer under a view) lives while a handle does, and the
 * teardown waits for the commands on its queues.
 *
 * path: as for clmem_bridge_import_vk (BEST picks opaque fd, dma-buf,
 * host-mapped, the first that image->memory allows; for optimal tiling the
 * first fd path). flags: cl_mem_flags of the buffer and of the image
 * (CL_MEM_READ_ONLY for an image a kernel reads with read_image*).
 *
 * Errors: CLMEM_ERR_NULL_POINTER (b, image, image->memory.memory, queue,
 * out); CLMEM_ERR_INVALID_VALUE (plane past the format's planes; unknown
 * image_flags bits; plane_count, extent or a plane's width, height,
 * row_pitch or size that do not fit the format; a plane offset that is not a
 * multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN, naming the plane, its offset and
 * the alignment; optimal tiling without CLMEM_BRIDGE_IMAGE_AS_IMAGE or with
 * a memory_offset other than 0; a tiling other than LINEAR or OPTIMAL);
 * CLMEM_ERR_UNSUPPORTED (a format the bridge does not share; an image view
 * the device cannot make: no image support, no images from buffers, the
 * plane's cl_image_format not supported, or a pitch that is not a multiple
 * of CL_DEVICE_IMAGE_PITCH_ALIGNMENT texels, naming the alignment and the
 * pitch; optimal tiling on the host-mapped path, where no fd path works,
 * where the format offers none, where no live check ran yet for it, or
 * where the live check failed, saying which); and every error of
 * clmem_bridge_import_vk. On any error *out is NULL and nothing is leaked.
 * Cost and blocking: those of clmem_bridge_import_vk, plus clCreateImage
 * for a view (cached with the import).
 */
clmem_status clmem_bridge_import_vk_image(clmem_bridge *b, const clmem_bridge_vk_image *image, uint32_t plane,
                                          clmem_bridge_path path, clmem_keepalive *vk_keepalive,
                                          cl_command_queue queue, cl_mem_flags flags, uint32_t image_flags,
                                          clmem_handle **out);

/*
 * Can images of `format` with `tiling` go through `path` (not BEST) as
 * `image_flags` and `flags` ask, on this bridge? The format-level part of
 * the import's answer, without an image: the format table, the path's
 * answer, whether Vulkan makes such images exportable for the path
 * (vkGetPhysicalDeviceImageFormatProperties2 with transfer usage; for
 * host-mapped, without export), for a view the device's image-from-buffer
 * support and the plane formats (clGetSupportedImageFormats with flags),
 * and for optimal tiling the kept result of the live check (which this
 * call never runs). The pitch rule of a view depends on the image and is
 * checked by the import.
 * Returns CLMEM_OK, or CLMEM_ERR_UNSUPPORTED with the sentence the import
 * would give; CLMEM_ERR_NULL_POINTER; CLMEM_ERR_INVALID_VALUE (BEST or an
 * unknown path, unknown image_flags, a tiling other than LINEAR or OPTIMAL).
 * Blocks: on driver queries only.
 */
clmem_status clmem_bridge_check_image(const clmem_bridge *b, VkFormat format, VkImageTiling tiling,
                                      clmem_bridge_path path, cl_mem_flags flags, uint32_t image_flags);

/*
 * The live check that decides whether optimal-tiling images of `format` are
 * offered on `path` (an fd path; BEST: the first the bridge supports) of
 * this bridge. Once per bridge, format and path: a 67x19 exportable
 * optimal-tiling image (usage TRANSFER_SRC | TRANSFER_DST, plus SAMPLED and
 * STORAGE where the format allows them; memory as
 * clmem_bridge_vk_image_create allocates it, device-local where there is
 * such a type); Vulkan writes
 * known texels (vkCmdCopyBufferToImage, on vk_queue, a queue of
 * vk_queue_family of the bridge's VkDevice), OpenCL imports the fd as an
 * image, acquires it on `queue`, reads every texel back (clEnqueueReadImage)
 * and compares, writes new texels (clEnqueueWriteImage) and releases it,
 * and Vulkan reads them (vkCmdCopyImageToBuffer) and compares. The result
 * is kept by the bridge; later calls return it without running again.
 *
 * Returns CLMEM_OK when the check passed (now or before);
 * CLMEM_ERR_UNSUPPORTED when it failed (now or before: the sentence says
 * which texel or which call), or when optimal tiling is not offered at all
 * here (a format without it, the host-mapped path, an fd path the bridge
 * lacks, OpenCL without images; nothing is run or kept then);
 * CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE (unknown path),
 * CLMEM_ERR_CONTEXT_MISMATCH (queue), and CLMEM_ERR_VULKAN,
 * CLMEM_ERR_OPENCL, CLMEM_ERR_NO_MEMORY when the check could not be set up
 * (nothing is kept: it runs again next time). The check's image is an
 * import of this bridge like any other: it is freed when its teardown is
 * done, which clmem_bridge_finish() waits for. A driver may lay out images
 * of other usages differently; the check proves the format with the usage
 * above. Submits to vk_queue, so call it where you could call vkQueueSubmit on it.
 * Blocks: on the Vulkan and OpenCL work (milliseconds), and while another
 * thread runs a live check on this bridge.
 */
clmem_status clmem_bridge_image_live_check(clmem_bridge *b, VkFormat format, clmem_bridge_path path, VkQueue vk_queue,
                                           uint32_t vk_queue_family, cl_command_queue queue);

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
 * CLMEM_ERR_INVALID_VALUE and enqueues nothing; so is a handle of another
 * bridge. The state belongs to the imported memory (cached handles share
 * it); do not race acquire against release on one import.
 * Blocks: never (enqueues only).
 */
clmem_status clmem_bridge_acquire(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event_out);
clmem_status clmem_bridge_release(clmem_bridge *b, const clmem_handle *h, cl_uint num_events,
                                  const cl_event *wait_list, cl_event *event_out);

/*
 * The same for `count` handles at once, all on `queue`, after the events in
 * wait_list. clmem_bridge_acquire(b, h, ...) is acquire_many(b, 1, &h,
 * clmem_handle_queue(h), ...): one code path.
 *
 * What is enqueued: on the fd paths ONE clEnqueueAcquireExternalMemObjectsKHR
 * (release: ...Release...) for all the fd-path handles of the call (opaque
 * fd and dma-buf together); for each host-mapped handle its unmap (release:
 * map). Each command waits for wait_list. *event_out (if not NULL; the
 * caller releases it) completes when all of them did: the command's own
 * event when there is one command, else a marker waiting for every
 * command's event. Only the first OpenCL command after Vulkan work pays
 * the GPU's context switch (docs/latency.md): hand a batch over in one call.
 *
 * queue: a queue of the bridge's context that a handle of EACH import was
 * made for (the handle's own queue, or one from
 * clmem_bridge_handle_for_queue()), so that each import's teardown waits
 * for it and can hand the memory back there.
 *
 * All or nothing. Every entry is checked before anything is enqueued:
 *   CLMEM_ERR_NULL_POINTER: b, queue, handles (when count > 0), or an entry;
 *   CLMEM_ERR_INVALID_VALUE: an entry not from clmem-bridge, of another
 *   bridge, a frame of a frame ring (the ring hands its frames over),
 *   whose import has no handle for `queue`, listed twice (two handles of
 *   one import count as the same entry: they share its state), or
 *   (acquire) already acquired / (release) not acquired.
 * The sentence names the first bad entry. On any of these nothing is
 * enqueued, nothing waits on wait_list, and no handle's state changes. When
 * the driver refuses a command after others of the call were accepted
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
 * Do not race two calls for the same import (nor with the single calls).
 * Cost: one lock per entry and count^2/2 pointer comparisons for the
 * duplicate check; an allocation above 16 entries. Blocks: never
 * (enqueues only).
 */
clmem_status clmem_bridge_acquire_many(clmem_bridge *b, cl_uint count, const clmem_handle *const *handles,
                                       cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event_out);
clmem_status clmem_bridge_release_many(clmem_bridge *b, cl_uint count, const clmem_handle *const *handles,
                                       cl_command_queue queue, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event_out);

/* ----------------------------------------------------------- semaphores */

/*
 * A Vulkan binary semaphore made usable from OpenCL queues, so that a frame
 * can be handed over with no host wait:
 *
 *   Vulkan: vkQueueSubmit(..., signal = ready)
 *   OpenCL: clmem_bridge_semaphore_wait(b, ready)  acquire  kernels  release
 *           clmem_bridge_semaphore_signal(b, done)
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
 * signal). Opaque fd is imported once and reused. Binary semaphores must
 * alternate strictly: a second signal before the wait hung on NVIDIA.
 */
typedef struct clmem_bridge_semaphore clmem_bridge_semaphore;

/*
 * Import `semaphore` (a binary VkSemaphore of the bridge's device, created
 * exportable with VkExportSemaphoreCreateInfo for the fd modes; with BEST,
 * create it exportable as opaque fd whenever clmem_bridge_check_semaphore()
 * says opaque fd works, since BEST then picks it) for use on OpenCL queues
 * of the bridge's context. `vk_queue` is used by host ordering only (may be
 * VK_NULL_HANDLE for the fd modes). The bridge takes a reference on
 * vk_keepalive (which should keep the VkSemaphore alive) and drops it after
 * the OpenCL semaphore is released, when the last reference to *out goes.
 * On success *out has one reference, the caller's, and holds one on b.
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE, CLMEM_ERR_UNSUPPORTED
 * (naming what is missing), CLMEM_ERR_VULKAN, CLMEM_ERR_OPENCL,
 * CLMEM_ERR_NO_MEMORY. On error *out is NULL and nothing is leaked.
 * Blocks: on the driver import.
 */
clmem_status clmem_bridge_semaphore_import(clmem_bridge *b, VkQueue vk_queue, VkSemaphore semaphore,
                                           clmem_bridge_semaphore_mode mode, clmem_keepalive *vk_keepalive,
                                           clmem_bridge_semaphore **out);

/* The mode chosen at import (never BEST). Blocks: never. */
clmem_bridge_semaphore_mode clmem_bridge_semaphore_get_mode(const clmem_bridge_semaphore *sem);

/* NULL-safe; the last unref releases the OpenCL semaphore, then drops
 * vk_keepalive and the bridge reference. Blocks: never. */
clmem_bridge_semaphore *clmem_bridge_semaphore_ref(clmem_bridge_semaphore *sem);
void                    clmem_bridge_semaphore_unref(clmem_bridge_semaphore *sem);

/*
 * Make later commands on `queue` wait until Vulkan signalled the semaphore
 * (after the events in wait_list); *event_out, if not NULL, gets an event
 * for the wait. Device ordering: clEnqueueWaitSemaphoresKHR, no host wait.
 * Host ordering: returns once the signal arrived (the wait_list is waited
 * for first) and *event_out is an already complete event.
 * CLMEM_ERR_INVALID_VALUE for a semaphore of another bridge.
 * Blocks: host ordering only, on the Vulkan signal and the wait list.
 */
clmem_status clmem_bridge_semaphore_wait(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue,
                                         cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

/*
 * Signal the semaphore for Vulkan once the commands enqueued so far on
 * `queue` (and the events in wait_list) completed. Device ordering:
 * clEnqueueSignalSemaphoresKHR followed by clFlush, so that the signal
 * reaches the device now rather than at the next host wait (without the
 * flush, Vulkan's wait can stall until something else flushes the queue).
 * Host ordering: finishes the queue, then submits the Vulkan signal.
 * Blocks: host ordering only, on clFinish(queue).
 */
clmem_status clmem_bridge_semaphore_signal(clmem_bridge *b, clmem_bridge_semaphore *sem, cl_command_queue queue,
                                           cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

/* ----------------------------------------------------------- frame ring */

/*
 * A frame ring: N imported frames (buffers, or image planes imported as
 * buffers) that Vulkan writes and OpenCL reads, round robin, in batches of
 * K frames with ONE semaphore signal and ONE wait per batch each way. On an
 * NVIDIA GPU each direction of a handoff pays a context switch of ~157 us
 * whatever is handed over, so K frames per batch pay it once instead of K
 * times (docs/latency.md has the measurements and how to choose N and K).
 *
 * The frames are grouped into D = N / K slots of K consecutive frames
 * (frames[s*K .. s*K + K) form slot s), each with its own pair of binary
 * semaphores: Vulkan signals ready[s] when a batch in slot s is written,
 * OpenCL signals done[s] when it let go of it. Batches are numbered 0, 1,
 * 2, ...; batch b lives in slot b % D, so up to D batches are in flight:
 * Vulkan writes one while OpenCL reads others.
 *
 *   producer (Vulkan)                        consumer (OpenCL)
 *   clmem_bridge_ring_vk_next(&f)            clmem_bridge_ring_cl_next(&batch)
 *   record writes to f.handle's memory         -- the batch's frames are
 *   vkQueueSubmit(wait = f.wait_semaphore,        acquired on the ring's queue
 *                 signal = f.signal_semaphore) kernels on batch.frames[0..count)
 *   clmem_bridge_ring_vk_submitted(&f)       clmem_bridge_ring_cl_done(&batch)
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
 *    wait (a second signal before the wait hung the NVIDIA driver):
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
 * Threads: one producer and one consumer, on the same thread or on two.
 * The producer calls (vk_next, vk_submitted) must not run concurrently with
 * each other, nor the consumer calls (cl_next, cl_done) with each other;
 * a producer call and a consumer call may. With host ordering the producer
 * calls submit to the ready semaphores' vk_queue: make them where you may
 * call vkQueueSubmit on it (Vulkan's external synchronisation), typically
 * on the thread that submits the frames.
 *
 * Ownership: the ring holds one reference on each frame handle, each
 * semaphore and the bridge, and retains the queue, until its last
 * reference goes; the frames and semaphores belong to one ring at a time.
 * The semaphores' state belongs to the ring while it lives: do not wait on
 * or signal them yourself. To end a stream cleanly, call
 * clmem_bridge_ring_vk_drain() and submit the waits it gives: up to D done
 * semaphores are otherwise left signalled. Frames cannot be acquired or
 * released outside the ring while it lives (CLMEM_ERR_INVALID_VALUE).
 */
typedef struct clmem_bridge_ring clmem_bridge_ring;

/* What a ring is made from. Set `size` to sizeof(clmem_bridge_ring_info);
 * fields added later go at the end. */
typedef struct clmem_bridge_ring_info {
    size_t size;                           /* sizeof(clmem_bridge_ring_info) */
    uint32_t frame_count;                  /* N: frames in the ring, a multiple of batch_size */
    uint32_t batch_size;                   /* K: frames per batch (per semaphore signal and wait) */
    clmem_handle *const *frames;           /* N handles of the bridge, of N different imports, none acquired */
    clmem_bridge_semaphore *const *ready;  /* N / K semaphores: Vulkan signals ready[s] when slot s is written */
    clmem_bridge_semaphore *const *done;   /* N / K semaphores: OpenCL signals done[s] when it let go of slot s */
    cl_command_queue queue;                /* where the ring's commands go: an in-order queue that a handle of
                                              every frame's import was made for */
    uint32_t flags;                        /* 0 */
} clmem_bridge_ring_info;

/*
 * Make a ring. All 2 * N / K semaphores must be different, of the bridge,
 * and of one mode: OPAQUE_FD (device ordering) or HOST_ORDERED (a sync-fd
 * import carries one signal, and the ring reuses its semaphores).
 * On success *out has one reference, the caller's.
 * Errors: CLMEM_ERR_NULL_POINTER (b, info, out, a list or an entry),
 * CLMEM_ERR_INVALID_VALUE (info->size too small, flags, a count of 0, N not
 * a multiple of K, a frame not from the bridge, of another bridge, listed
 * twice, already acquired, in another ring, or without a handle for
 * `queue`; a semaphore of another bridge, listed twice or in another ring;
 * mixed modes; an out-of-order queue),
 * CLMEM_ERR_UNSUPPORTED (sync-fd semaphores), CLMEM_ERR_OPENCL,
 * CLMEM_ERR_VULKAN (host ordering: vkCreateFence), CLMEM_ERR_NO_MEMORY.
 * On error *out is NULL and nothing is held.
 * Blocks: never (a queue query; host ordering: D vkCreateFence).
 */
clmem_status clmem_bridge_ring_create(clmem_bridge *b, const clmem_bridge_ring_info *info, clmem_bridge_ring **out);

/* One more reference; returns ring. NULL-safe. Blocks: never. */
clmem_bridge_ring *clmem_bridge_ring_ref(clmem_bridge_ring *ring);

/* Drop one reference; the last drops the ring's references on the frames,
 * semaphores and bridge. Frames OpenCL still holds are handed back by their
 * imports' teardowns, as for any handle. Call it after both sides stopped,
 * and before destroying the semaphores: finish the OpenCL queue and wait
 * for the Vulkan queue first (vkQueueWaitIdle), so that no signal or wait
 * of the ring's is still pending. NULL-safe.
 * Blocks: host ordering only, on Vulkan batches submitted that OpenCL never
 * took (their fences). */
void clmem_bridge_ring_unref(clmem_bridge_ring *ring);

/* Bits of clmem_bridge_ring_vk_next()'s flags. */
enum clmem_bridge_ring_vk_flag {
    /* This frame ends its batch, even with fewer than K frames (the last
     * frames of a stream): it carries the batch's signal, and the next
     * frame starts the next slot. */
    CLMEM_BRIDGE_RING_END_BATCH = 1u << 0
};

/* A frame handed to Vulkan. This struct is frozen: a future field comes
 * with a new struct and new functions. */
typedef struct clmem_bridge_ring_frame {
    uint64_t sequence;            /* 0, 1, 2, ...: frames handed to Vulkan since the ring was made */
    uint64_t batch;               /* the batch it belongs to (slot batch % D) */
    uint32_t index;               /* which frame: info.frames[index] */
    uint32_t position;            /* its place in the batch, 0 .. K - 1 */
    clmem_handle *handle;         /* info.frames[index], borrowed from the ring */
    VkSemaphore wait_semaphore;   /* not VK_NULL_HANDLE: the submission that writes this frame must wait
                                     on it (first frame of a batch whose slot OpenCL used before) */
    VkSemaphore signal_semaphore; /* not VK_NULL_HANDLE: the submission that writes this frame, or one
                                     after it on the same queue, must signal it (last frame of a batch) */
} clmem_bridge_ring_frame;

/*
 * The next frame for Vulkan to write. The frames of a batch come in order,
 * slot after slot. The first frame of a batch may carry wait_semaphore:
 * Vulkan's semaphore wait orders only the submission (VkSubmitInfo) it is
 * in, so put the writes of the batch's frames in that submission, or begin
 * each later frame's commands with a barrier from
 * VK_PIPELINE_STAGE_ALL_COMMANDS_BIT. The last frame of the batch carries
 * signal_semaphore; a signal covers everything submitted earlier on its
 * queue, so one signal after the batch's writes hands over all of them.
 * The frame's memory is Vulkan's until the batch is handed to OpenCL (a
 * queue-family release to VK_QUEUE_FAMILY_EXTERNAL belongs in the writes'
 * commands, as for any external memory).
 * flags: CLMEM_BRIDGE_RING_END_BATCH, or 0.
 * Returns CLMEM_OK with *frame_out filled; CLMEM_ERR_TIMEOUT when the slot
 * was not free within timeout_ns (0: do not wait; UINT64_MAX: no limit),
 * changing nothing; CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE
 * (unknown flags; after vk_drain; the slot's previous batch was never
 * reported with vk_submitted, so OpenCL could never hand it back),
 * CLMEM_ERR_OPENCL (host ordering: the release's event).
 * Blocks: at the first frame of a slot, until OpenCL's cl_done for the
 * slot's previous batch was called (both orderings) and, with host
 * ordering, until that release completed on the device.
 */
clmem_status clmem_bridge_ring_vk_next(clmem_bridge_ring *ring, uint32_t flags, uint64_t timeout_ns,
                                       clmem_bridge_ring_frame *frame_out);

/*
 * Say that the Vulkan work for `frame`, and for every frame handed out
 * before it, is submitted (vkQueueSubmit returned), with the frame's
 * semaphores. Call it in order; once per frame, or once for the last frame
 * of one submission. When a batch's last frame is reported, OpenCL may take
 * the batch (cl_next). Host ordering: submits a wait on ready[s] with the
 * ring's fence to the semaphore's vk_queue, which is how cl_next learns
 * that Vulkan's writes completed.
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE (a frame not
 * handed out, or already reported), CLMEM_ERR_VULKAN (host ordering: the
 * fence submission was refused; the batch is not handed to OpenCL, and
 * reporting the same frame again retries it).
 * Blocks: never (host ordering: one vkQueueSubmit per batch).
 */
clmem_status clmem_bridge_ring_vk_submitted(clmem_bridge_ring *ring, const clmem_bridge_ring_frame *frame);

/*
 * End the producer's side: wait until OpenCL handed back every batch Vulkan
 * submitted, then give, in waits_out, the done semaphores that are
 * signalled for Vulkan and that no frame carried yet (device ordering: up
 * to one per slot; host ordering: none, and the releases have completed).
 * Submit a wait on each (a VkSubmitInfo with only waits will do): then
 * every semaphore of the ring is unsignalled with nothing pending, and
 * once the ring is dropped they may be destroyed, or given to a new ring.
 * Afterwards vk_next refuses (CLMEM_ERR_INVALID_VALUE).
 * capacity: room in waits_out; the ring's slot count (frame_count /
 * batch_size) always suffices.
 * Errors: CLMEM_ERR_NULL_POINTER (ring, count_out; waits_out with a
 * capacity); CLMEM_ERR_INVALID_VALUE (a batch is handed out but not ended
 * or not reported submitted; capacity too small, with *count_out the room
 * needed); CLMEM_ERR_TIMEOUT (OpenCL had not handed everything back within
 * timeout_ns); CLMEM_ERR_OPENCL (host ordering: a release ended in an
 * error). On an error nothing changes.
 * Blocks: until OpenCL's cl_done for every batch (another thread's, or
 * already called on this one); with host ordering also until the releases
 * completed.
 */
clmem_status clmem_bridge_ring_vk_drain(clmem_bridge_ring *ring, uint64_t timeout_ns, uint32_t capacity,
                                        VkSemaphore *waits_out, uint32_t *count_out);

/* A batch handed to OpenCL. This struct is frozen. */
typedef struct clmem_bridge_ring_batch {
    uint64_t batch;              /* its number (slot batch % D) */
    uint64_t first_sequence;     /* the sequence of frames[0]; frames[i] is sequence first_sequence + i */
    uint32_t first_index;        /* frames[i] is info.frames[first_index + i] */
    uint32_t count;              /* frames in the batch: K, or fewer when Vulkan ended it early */
    clmem_handle *const *frames; /* count handles, borrowed from the ring */
} clmem_bridge_ring_batch;

/*
 * The next batch for OpenCL: enqueues, on the ring's queue, the wait for
 * Vulkan's signal (device ordering: clEnqueueWaitSemaphoresKHR, after
 * wait_list) and the acquire of the batch's frames (one
 * clmem_bridge_acquire_many: one extension call on the fd paths).
 * *event_out (if not NULL; the caller releases it) is the acquire's event.
 * Enqueue the batch's kernels on the ring's queue after it (it is in-order),
 * then call cl_done.
 * Returns CLMEM_OK with *batch_out filled; CLMEM_ERR_TIMEOUT when Vulkan
 * had not submitted the next batch (host ordering: or its writes had not
 * completed) within timeout_ns (0: do not wait; UINT64_MAX: no limit),
 * changing nothing (on one thread, take a batch only once vk_submitted
 * reported it: nothing else can report it while cl_next waits); CLMEM_ERR_NULL_POINTER; CLMEM_ERR_OPENCL / CLMEM_ERR_VULKAN
 * with the failing call (the batch is not taken; a retry does not wait on
 * the semaphore twice).
 * Blocks: until the producer reported the batch's last frame submitted;
 * with host ordering also until Vulkan's writes completed (a fence).
 */
clmem_status clmem_bridge_ring_cl_next(clmem_bridge_ring *ring, uint64_t timeout_ns, cl_uint num_events,
                                       const cl_event *wait_list, clmem_bridge_ring_batch *batch_out,
                                       cl_event *event_out);

/*
 * Hand the batch back to Vulkan, after the commands enqueued on the ring's
 * queue so far and wait_list: one clmem_bridge_release_many of its frames,
 * then (device ordering) the signal of done[s] and a clFlush. Batches are
 * handed back in the order they were taken. *event_out (if not NULL; the
 * caller releases it) is the release's event.
 * Errors: CLMEM_ERR_NULL_POINTER, CLMEM_ERR_INVALID_VALUE (not the oldest
 * batch OpenCL holds), CLMEM_ERR_OPENCL (the release was refused: nothing
 * changed, call it again). When only the semaphore signal is refused, the
 * ring finishes the queue instead (clFinish) so that Vulkan may write
 * without it, and returns CLMEM_OK.
 * Blocks: never (on the fallback only, clFinish).
 */
clmem_status clmem_bridge_ring_cl_done(clmem_bridge_ring *ring, const clmem_bridge_ring_batch *batch,
                                       cl_uint num_events, const cl_event *wait_list, cl_event *event_out);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_BRIDGE_H */
