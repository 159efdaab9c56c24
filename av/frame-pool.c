/* SPDX-License-Identifier: MIT */
/* libclmem-av's frame pool, which clmem_av_frames_setup() gives a Vulkan
 * frames context: each plane a linear VkImage bound to a dedicated
 * allocation of its own, exportable as the frames context's export types.
 * clmem_av_frames_setup_optimal() gives the same pool with optimal-tiling
 * images, which OpenCL takes only as images imported from the fd.
 *
 * Why not FFmpeg's own pool: FFmpeg 5.1 allocates a frame's memory
 * dedicated only where Vulkan prefers or requires it, and NVIDIA says
 * neither for linear images. On the H200, an OpenCL kernel's writes to
 * such non-dedicated exported memory read back wrong in Vulkan
 * (docs/driver-notes.md): linear RGBA8 images, exact in a dedicated
 * allocation; FFmpeg's 1920x1080 NV12 frames, 1.29 million of 6.2 million
 * luma bytes, none in this pool's dedicated ones. Vulkan cannot be told to
 * allocate an image's memory dedicated through FFmpeg's alloc_pnext (the
 * image does not exist yet), so the pool is ours.
 *
 * The pool lives as long as the frames context: AVHWFramesContext.free is
 * where FFmpeg lets its owner let go, and a user-set pool is never freed by
 * FFmpeg. So setup keeps the caller's free callback, puts its own in its
 * place, and calls the caller's from it. The pools are listed by frames
 * context, which is how that callback finds its own.
 *
 * FFmpeg never maps a frame of the pool: AVVkFrame.flags leaves out
 * VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT (the pool keeps the real bits).
 * FFmpeg 5.1 maps a linear host-visible frame to transfer it
 * (av_hwframe_transfer_data, av_hwframe_map), and on the host-mapped path
 * the import holds the memory's one mapping (Vulkan allows one at a time)
 * for as long as it lives, which is past the last handle's unref, until
 * its teardown completed: a transfer then mapped the memory a second time
 * (VUID-vkMapMemory-memory-00678, and VUID-vkUnmapMemory-memory-00689
 * after), unless the caller called clmem_bridge_finish() first. Without
 * the bit FFmpeg transfers the frame with its staging copies, which also
 * wait on the frame's semaphores as its map does not; av_hwframe_map()
 * refuses the frame. On a GPU the memory is device-local and nothing
 * changes. */
#include "config.h"
#include "error-private.h"
#include "frame-pool.h"

#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct av_pool {
    struct av_pool *next;                 /* the list of pools (pools_lock) */
    AVHWFramesContext *frames;            /* whose pool this is */
    const AVVulkanDeviceContext *vk;      /* the frames context's device (lives longer than the frames) */
    VkImageTiling tiling;                 /* every image's: LINEAR, or OPTIMAL (clmem_av_frames_setup_optimal()) */
    void (*caller_free)(AVHWFramesContext *frames); /* the free callback setup found, called from ours */
    PFN_vkCreateImage create_image;
    PFN_vkDestroyImage destroy_image;
    PFN_vkGetImageMemoryRequirements get_requirements;
    PFN_vkAllocateMemory allocate;
    PFN_vkFreeMemory free_memory;
    PFN_vkBindImageMemory bind;
    PFN_vkCreateSemaphore create_semaphore;
    PFN_vkDestroySemaphore destroy_semaphore;
    PFN_vkWaitSemaphores wait_semaphores;
    PFN_vkSignalSemaphore signal_semaphore;
    VkPhysicalDeviceMemoryProperties memory_props;
    atomic_uint hidden_flags; /* memory property bits the frames' AVVkFrame.flags leave out */
    /* FFmpeg's trial image's DRM format modifier list (frames-setup.c), or
     * a count of 0: first in the frames context's create_pnext. */
    VkImageDrmFormatModifierListCreateInfoEXT trial_list;
    uint64_t *trial_modifiers;
};

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct av_pool *pools;

static struct av_pool *pool_find_locked(const AVHWFramesContext *frames)
{
    struct av_pool *p = pools;
    while (p && p->frames != frames)
        p = p->next;
    return p;
}

/* Off the list: the frames context is being freed. */
static void pool_unlist(struct av_pool *pool)
{
    pthread_mutex_lock(&pools_lock);
    for (struct av_pool **at = &pools; *at; at = &(*at)->next)
        if (*at == pool) {
            *at = pool->next;
            break;
        }
    pthread_mutex_unlock(&pools_lock);
}

/* Gives the frame's images, memory and semaphores back to Vulkan once
 * the last submission signalling its semaphores (FFmpeg's, or a device-order
 * release's) completed, as FFmpeg's own pool waits (vkDeviceWaitIdle
 * there, which Vulkan wants synchronised with every queue of the device). */
static void frame_free(void *opaque, uint8_t *data)
{
    struct av_pool *pool = opaque;
    AVVkFrame *f = (AVVkFrame *)data;
    VkDevice dev = pool->vk->act_dev;
    uint32_t n = 0;

    while (n < AV_NUM_DATA_POINTERS && f->sem[n])
        n++;
    if (n) {
        VkSemaphoreWaitInfo wait = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                    .semaphoreCount = n,
                                    .pSemaphores = f->sem,
                                    .pValues = f->sem_value};
        pool->wait_semaphores(dev, &wait, UINT64_MAX);
    }
    for (int i = 0; i < AV_NUM_DATA_POINTERS; i++) {
        if (f->img[i])
            pool->destroy_image(dev, f->img[i], pool->vk->alloc);
        if (f->mem[i])
            pool->free_memory(dev, f->mem[i], pool->vk->alloc);
        if (f->sem[i])
            pool->destroy_semaphore(dev, f->sem[i], pool->vk->alloc);
    }
    av_free(f->internal);
    av_free(f);
}

/* The first memory type of `bits` with all of `want`, or -1. */
static int memory_type(const struct av_pool *pool, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < pool->memory_props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (pool->memory_props.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

/* Plane p: its image, its dedicated memory, its timeline semaphore. */
static bool plane_make(struct av_pool *pool, AVVkFrame *f, int p, uint32_t width, uint32_t height,
                       VkExternalMemoryHandleTypeFlags export_types)
{
    const AVHWFramesContext *frames = pool->frames;
    const AVVulkanFramesContext *fc = frames->hwctx;
    VkDevice dev = pool->vk->act_dev;
    uint32_t qfs[5], nqf = clmem__av_queue_families(pool->vk, qfs);
    /* Not chained: fc->create_pnext. av_hwframe_ctx_init() of FFmpeg 5.1
     * adds a DRM format modifier list to it on a device with
     * VK_EXT_image_drm_format_modifier, whatever the tiling (for its own
     * pool), and a modifier list is invalid on a linear image (on the H200
     * OpenCL's writes to the last 56 rows of 1920x1080 frames were then
     * lost: docs/driver-notes.md). */
    VkExternalMemoryImageCreateInfo external = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO,
                                                .handleTypes = export_types};
    VkImageCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                             .pNext = export_types ? &external : NULL,
                             .flags = VK_IMAGE_CREATE_ALIAS_BIT, /* as FFmpeg's own */
                             .imageType = VK_IMAGE_TYPE_2D,
                             .format = av_vkfmt_from_pixfmt(frames->sw_format)[p],
                             .extent = {width, height, 1},
                             .mipLevels = 1,
                             .arrayLayers = 1,
                             .samples = VK_SAMPLE_COUNT_1_BIT,
                             .tiling = pool->tiling,
                             .usage = fc->usage,
                             .sharingMode = nqf > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
                             .queueFamilyIndexCount = nqf,
                             .pQueueFamilyIndices = qfs,
                             .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
    VkMemoryDedicatedAllocateInfo dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    VkExportMemoryAllocateInfo export = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                         .pNext = &dedicated,
                                         .handleTypes = export_types};
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .pNext = export_types ? (void *)&export : (void *)&dedicated};
    VkSemaphoreTypeCreateInfo timeline = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                          .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &timeline};
    VkMemoryRequirements req;
    VkResult r;
    int type;

    /* A failure is recorded (FFmpeg only sees no frame): av_hwframe_get_buffer's
     * caller reads why in clmem_error_message(). */
    if ((r = pool->create_image(dev, &ici, pool->vk->alloc, &f->img[p])) != VK_SUCCESS) {
        f->img[p] = VK_NULL_HANDLE;
        clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateImage", r,
                        "Making plane %d's %s image (format %d, usage 0x%x, export 0x%x) failed.", p,
                        pool->tiling == VK_IMAGE_TILING_OPTIMAL ? "optimal-tiling" : "linear", (int)ici.format,
                        (unsigned)ici.usage, (unsigned)export_types);
        return false;
    }
    pool->get_requirements(dev, f->img[p], &req);
    /* Exported: device memory, zero-copy on a GPU. Not exported (the
     * host-mapped path is all the bridge has): host-visible memory, as
     * FFmpeg gives its linear frames. */
    type = memory_type(pool, req.memoryTypeBits,
                       export_types ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    if (type < 0)
        type = memory_type(pool, req.memoryTypeBits, 0);
    dedicated.image = f->img[p];
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)type;
    r = type < 0 ? VK_ERROR_FEATURE_NOT_PRESENT : pool->allocate(dev, &mai, pool->vk->alloc, &f->mem[p]);
    if (r != VK_SUCCESS) {
        f->mem[p] = VK_NULL_HANDLE;
        clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkAllocateMemory", r,
                        "Allocating plane %d's dedicated memory (%llu bytes, type %d of bits 0x%x, export 0x%x) "
                        "failed.",
                        p, (unsigned long long)req.size, type, (unsigned)req.memoryTypeBits, (unsigned)export_types);
        return false;
    }
    f->size[p] = (size_t)req.size;
    /* HOST_VISIBLE is kept from FFmpeg (the file's comment says why). */
    f->flags |= pool->memory_props.memoryTypes[type].propertyFlags & ~(VkMemoryPropertyFlags)VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    atomic_fetch_or(&pool->hidden_flags,
                    pool->memory_props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    if ((r = pool->bind(dev, f->img[p], f->mem[p], 0)) != VK_SUCCESS) {
        clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkBindImageMemory", r,
                        "Binding plane %d's memory failed.", p);
        return false;
    }
    if ((r = pool->create_semaphore(dev, &sci, pool->vk->alloc, &f->sem[p])) != VK_SUCCESS) {
        f->sem[p] = VK_NULL_HANDLE;
        clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateSemaphore", r,
                        "Making plane %d's timeline semaphore failed.", p);
        return false;
    }
    f->layout[p] = VK_IMAGE_LAYOUT_UNDEFINED;
    f->access[p] = 0;
    f->sem_value[p] = 0; /* a new timeline semaphore's value: FFmpeg's first wait passes at once */
    return true;
}

/* The pool's allocator: one frame of the frames context's size and format. */
static AVBufferRef *frame_alloc(void *opaque, size_t size)
{
    struct av_pool *pool = opaque;
    const AVHWFramesContext *frames = pool->frames;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(frames->sw_format);
    int planes = av_pix_fmt_count_planes(frames->sw_format);
    AVVkFrame *f = av_vk_frame_alloc();
    VkExternalMemoryHandleTypeFlags export_types = 0;
    AVBufferRef *ref;
    bool ok = f != NULL;

    (void)size;
    /* Asked per frame, as FFmpeg's pool does: the usage is the frames
     * context's once av_hwframe_ctx_init() set its default, which is
     * before the first frame. */
    if (ok && clmem__av_export_types(pool->vk, frames, true, pool->tiling, &export_types) != CLMEM_OK)
        ok = false;
    if (f)
        f->tiling = pool->tiling;
    for (int p = 0; ok && p < planes; p++) {
        uint32_t w = (uint32_t)frames->width, h = (uint32_t)frames->height;
        if (p > 0) { /* chroma planes: rounded up, as FFmpeg makes them */
            w = (uint32_t)AV_CEIL_RSHIFT(frames->width, desc->log2_chroma_w);
            h = (uint32_t)AV_CEIL_RSHIFT(frames->height, desc->log2_chroma_h);
        }
        ok = plane_make(pool, f, p, w, h, export_types);
    }
    ref = ok ? av_buffer_create((uint8_t *)f, sizeof *f, frame_free, pool, 0) : NULL;
    if (!f || (ok && !ref))
        clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating a frame's AVVkFrame failed.");
    if (!ref && f)
        frame_free(pool, (uint8_t *)f);
    return ref;
}

/* The frames context is being freed (FFmpeg has uninitialised it, and
 * every frame of it has come back): the pool goes, then the caller's own
 * callback runs. */
static void frames_free(AVHWFramesContext *frames)
{
    struct av_pool *pool;
    void (*caller_free)(AVHWFramesContext *);

    pthread_mutex_lock(&pools_lock);
    pool = pool_find_locked(frames);
    pthread_mutex_unlock(&pools_lock);
    if (!pool)
        return;
    caller_free = pool->caller_free;
    pool_unlist(pool);
    av_buffer_pool_uninit(&frames->pool); /* frees the frames it holds; the pool's last frees `pool` */
    if (caller_free)
        caller_free(frames);
}

static void pool_free(void *opaque)
{
    struct av_pool *pool = opaque;
    free(pool->trial_modifiers);
    free(pool);
}

clmem_status clmem__av_pool_install(AVHWFramesContext *frames, const AVVulkanDeviceContext *vk, VkImageTiling tiling,
                                    uint64_t *modifiers, uint32_t count)
{
    struct av_pool *pool = calloc(1, sizeof *pool);
    PFN_vkGetPhysicalDeviceMemoryProperties memory_props =
        (PFN_vkGetPhysicalDeviceMemoryProperties)clmem__av_instance_proc(vk, "vkGetPhysicalDeviceMemoryProperties");
    AVVulkanFramesContext *fc = frames->hwctx;

    if (!pool) {
        free(modifiers);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the frame pool failed.");
    }
    pool->trial_modifiers = modifiers;
    atomic_init(&pool->hidden_flags, 0);
    pool->frames = frames;
    pool->vk = vk;
    pool->tiling = tiling;
#define DEVICE_PROC(field, name) ((pool->field = (void *)clmem__av_device_proc(vk, name)) != NULL)
    if (!memory_props || !DEVICE_PROC(create_image, "vkCreateImage") ||
        !DEVICE_PROC(destroy_image, "vkDestroyImage") ||
        !DEVICE_PROC(get_requirements, "vkGetImageMemoryRequirements") ||
        !DEVICE_PROC(allocate, "vkAllocateMemory") || !DEVICE_PROC(free_memory, "vkFreeMemory") ||
        !DEVICE_PROC(bind, "vkBindImageMemory") || !DEVICE_PROC(create_semaphore, "vkCreateSemaphore") ||
        !DEVICE_PROC(destroy_semaphore, "vkDestroySemaphore") || !DEVICE_PROC(wait_semaphores, "vkWaitSemaphores") ||
        !DEVICE_PROC(signal_semaphore, "vkSignalSemaphore")) {
        pool_free(pool);
        return CLMEM_ERR_UNSUPPORTED;
    }
#undef DEVICE_PROC
    memory_props(vk->phys_dev, &pool->memory_props);
    frames->pool = av_buffer_pool_init2(sizeof(AVVkFrame), pool, frame_alloc, pool_free);
    if (!frames->pool) {
        pool_free(pool);
        return clmem_error_set(CLMEM_ERR_NO_MEMORY, CLMEM_API_NONE, "av_buffer_pool_init2", 0,
                               "Making the frame pool failed.");
    }
    if (count) {
        pool->trial_list.sType = VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_LIST_CREATE_INFO_EXT;
        pool->trial_list.pNext = fc->create_pnext;
        pool->trial_list.drmFormatModifierCount = count;
        pool->trial_list.pDrmFormatModifiers = modifiers;
        fc->create_pnext = &pool->trial_list;
    }
    pool->caller_free = frames->free;
    frames->free = frames_free;
    pthread_mutex_lock(&pools_lock);
    pool->next = pools;
    pools = pool;
    pthread_mutex_unlock(&pools_lock);
    return CLMEM_OK;
}

clmem_status clmem__av_pool_check(const AVHWFramesContext *frames, bool *ours, struct av_pool_facts *facts)
{
    const struct av_pool *pool;
    bool listed;

    pthread_mutex_lock(&pools_lock);
    pool = pool_find_locked(frames);
    listed = pool != NULL;
    if (pool && facts) {
        facts->hidden_flags = atomic_load(&pool->hidden_flags);
        facts->tiling = pool->tiling;
        facts->wait_semaphores = pool->wait_semaphores;
        facts->signal_semaphore = pool->signal_semaphore;
    }
    pthread_mutex_unlock(&pools_lock);
    *ours = listed;
    if (listed && frames->free != frames_free)
        return clmem__fail(CLMEM_ERR_INVALID_VALUE,
                           "The frames context's free callback was replaced after clmem_av_frames_setup(): "
                           "libclmem-av's frame pool would never be freed. Set AVHWFramesContext.free "
                           "before clmem_av_frames_setup(), which calls it from its own.");
    return CLMEM_OK;
}
