/* Which sharing paths work for a (Vulkan, OpenCL) device pair. Each check
 * asks both sides, and on each side both the extension list and the
 * handle-type query, because drivers have been seen to advertise one and
 * not the other. The message of a failed check lists everything missing. */
#include "config.h"
#include "clmem-bridge.h"
#include "export.h"
#include "query.h"

#include <stdio.h>
#include <string.h>

CLMEM_EXPORT const char *clmem_path_name(clmem_path path)
{
    switch (path) {
    case CLMEM_PATH_BEST: return "best";
    case CLMEM_PATH_OPAQUE_FD: return "opaque-fd";
    case CLMEM_PATH_DMA_BUF: return "dma-buf";
    case CLMEM_PATH_HOST_MAPPED: return "host-mapped";
    }
    return "unknown-path";
}

/* Collects "what is missing" phrases into one sentence. */
struct missing {
    char text[480];
    size_t len;
    int count;
};

static void missing_add(struct missing *m, const char *fmt, const char *a, const char *b)
{
    int n;
    if (m->len >= sizeof m->text)
        return;
    n = snprintf(m->text + m->len, sizeof m->text - m->len, m->count ? "; " : "");
    m->len += n > 0 ? (size_t)n : 0;
    if (m->len < sizeof m->text) {
        n = snprintf(m->text + m->len, sizeof m->text - m->len, fmt, a, b);
        m->len += n > 0 ? (size_t)n : 0;
    }
    m->count++;
}

struct names {
    char cl_device[256];
    char cl_platform[256];
    char vk_device[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    unsigned char vk_uuid[VK_UUID_SIZE];
};

static void get_names(VkPhysicalDevice pd, cl_device_id device, struct names *n)
{
    clmem__cl_device_names(device, n->cl_device, sizeof n->cl_device, n->cl_platform, sizeof n->cl_platform);
    clmem__vk_device_identity(pd, n->vk_uuid, n->vk_device);
}

static void check_vk_buffer_export(VkPhysicalDevice pd, VkExternalMemoryHandleTypeFlagBits type,
                                   const struct names *n, struct missing *m, bool *dedicated_only)
{
    VkPhysicalDeviceExternalBufferInfo info = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
        .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        .handleType = type,
    };
    VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};

    vkGetPhysicalDeviceExternalBufferProperties(pd, &info, &props);
    if (!(props.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
        missing_add(m, "vkGetPhysicalDeviceExternalBufferProperties says %s cannot export buffers as %s",
                    n->vk_device, type == VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT ? "opaque fd" : "dma-buf");
    if (dedicated_only)
        *dedicated_only = (props.externalMemoryProperties.externalMemoryFeatures &
                           VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
}

static void check_same_device(cl_device_id device, const struct names *n, struct missing *m, bool *mismatch)
{
    unsigned char cl_uuid[16];
    if (!clmem__cl_device_uuid(device, cl_uuid))
        missing_add(m, "cl_khr_device_uuid (not offered by %s on %s), so the devices cannot be matched",
                    n->cl_platform, n->cl_device);
    else if (memcmp(cl_uuid, n->vk_uuid, 16) != 0) {
        missing_add(m, "the same device: %s and %s have different device UUIDs", n->vk_device, n->cl_device);
        *mismatch = true;
    }
}

static clmem_status check_fd_path(VkPhysicalDevice pd, cl_device_id device, clmem_path path,
                                  bool *dedicated_only)
{
    bool dma = path == CLMEM_PATH_DMA_BUF;
    const char *cl_ext = dma ? "cl_khr_external_memory_dma_buf" : "cl_khr_external_memory_opaque_fd";
    const char *vk_ext = dma ? "VK_EXT_external_memory_dma_buf" : "VK_KHR_external_memory_fd";
    cl_uint cl_type = dma ? CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR : CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR;
    struct names n;
    struct missing m = {.len = 0};
    bool mismatch = false;

    get_names(pd, device, &n);
    if (!clmem__cl_device_has_extension(device, cl_ext))
        missing_add(&m, "%s (not offered by %s)", cl_ext, n.cl_platform);
    if (!clmem__cl_device_lists_handle_type(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, cl_type))
        missing_add(&m, "%s in CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR of %s",
                    dma ? "CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR" : "CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR",
                    n.cl_device);
    if (!clmem__vk_device_has_extension(pd, vk_ext))
        missing_add(&m, "%s (not offered by %s)", vk_ext, n.vk_device);
    else
        check_vk_buffer_export(pd,
                               dma ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                                   : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                               &n, &m, dedicated_only);
    check_same_device(device, &n, &m, &mismatch);
    if (m.count == 0)
        return CLMEM_OK;
    return clmem_error_set(mismatch && m.count == 1 ? CLMEM_ERR_DEVICE_MISMATCH : CLMEM_ERR_UNSUPPORTED,
                           CLMEM_API_NONE, NULL, 0, "The %s path needs: %s.", clmem_path_name(path), m.text);
}

static bool vk_has_host_coherent_type(VkPhysicalDevice pd)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((mp.memoryTypes[i].propertyFlags & want) == want)
            return true;
    return false;
}

static clmem_status check_host_mapped(VkPhysicalDevice pd, cl_device_id device)
{
    struct names n;
    get_names(pd, device, &n);
    if (!vk_has_host_coherent_type(pd))
        return clmem_error_set(CLMEM_ERR_UNSUPPORTED, CLMEM_API_NONE, NULL, 0,
                               "The host-mapped path needs a HOST_VISIBLE | HOST_COHERENT memory type, and %s "
                               "has none.",
                               n.vk_device);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_check_path(VkPhysicalDevice physical_device, cl_device_id device,
                                                  clmem_path path)
{
    if (!physical_device || !device)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !physical_device ? "physical_device" : "device");
    switch (path) {
    case CLMEM_PATH_OPAQUE_FD:
    case CLMEM_PATH_DMA_BUF: return check_fd_path(physical_device, device, path, NULL);
    case CLMEM_PATH_HOST_MAPPED: return check_host_mapped(physical_device, device);
    case CLMEM_PATH_BEST: break;
    }
    return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                           "clmem_bridge_check_path takes one concrete path, not %d.", (int)path);
}

CLMEM_EXPORT clmem_status clmem_bridge_check_semaphore(VkPhysicalDevice physical_device, cl_device_id device,
                                                       VkExternalSemaphoreHandleTypeFlagBits handle_type)
{
    bool sync = handle_type == VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT;
    const char *cl_ext = sync ? "cl_khr_external_semaphore_sync_fd" : "cl_khr_external_semaphore_opaque_fd";
    cl_uint cl_type = sync ? CL_SEMAPHORE_HANDLE_SYNC_FD_KHR : CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR;
    VkPhysicalDeviceExternalSemaphoreInfo info = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO, .handleType = handle_type};
    VkExternalSemaphoreProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    struct names n;
    struct missing m = {.len = 0};
    bool mismatch = false;

    if (!physical_device || !device)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !physical_device ? "physical_device" : "device");
    if (handle_type != VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT && !sync)
        return clmem_error_set(CLMEM_ERR_INVALID_VALUE, CLMEM_API_NONE, NULL, 0,
                               "Semaphore handle type 0x%x is neither opaque fd nor sync fd.",
                               (unsigned)handle_type);
    get_names(physical_device, device, &n);
    if (!clmem__cl_device_has_extension(device, "cl_khr_external_semaphore"))
        missing_add(&m, "%s (not offered by %s)", "cl_khr_external_semaphore", n.cl_platform);
    if (!clmem__cl_device_has_extension(device, cl_ext))
        missing_add(&m, "%s (not offered by %s)", cl_ext, n.cl_platform);
    if (!clmem__cl_device_lists_handle_type(device, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, cl_type))
        missing_add(&m, "%s in CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR of %s",
                    sync ? "CL_SEMAPHORE_HANDLE_SYNC_FD_KHR" : "CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR", n.cl_device);
    if (!clmem__vk_device_has_extension(physical_device, "VK_KHR_external_semaphore_fd"))
        missing_add(&m, "%s (not offered by %s)", "VK_KHR_external_semaphore_fd", n.vk_device);
    else {
        vkGetPhysicalDeviceExternalSemaphoreProperties(physical_device, &info, &props);
        if (!(props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT))
            missing_add(&m, "vkGetPhysicalDeviceExternalSemaphoreProperties says %s cannot export %s semaphores",
                        n.vk_device, sync ? "sync fd" : "opaque fd");
    }
    check_same_device(device, &n, &m, &mismatch);
    if (m.count == 0)
        return CLMEM_OK;
    return clmem_error_set(mismatch && m.count == 1 ? CLMEM_ERR_DEVICE_MISMATCH : CLMEM_ERR_UNSUPPORTED,
                           CLMEM_API_NONE, NULL, 0, "%s semaphore import needs: %s.",
                           sync ? "Sync-fd" : "Opaque-fd", m.text);
}

CLMEM_EXPORT clmem_status clmem_bridge_caps(VkPhysicalDevice physical_device, cl_device_id device,
                                            uint32_t *caps_out)
{
    uint32_t caps = 0;
    bool dedicated_only = false;

    if (caps_out)
        *caps_out = 0;
    if (!physical_device || !device || !caps_out)
        return clmem_error_set(CLMEM_ERR_NULL_POINTER, CLMEM_API_NONE, NULL, 0, "The %s argument is NULL.",
                               !physical_device ? "physical_device" : !device ? "device" : "caps_out");
    if (check_fd_path(physical_device, device, CLMEM_PATH_OPAQUE_FD, &dedicated_only) == CLMEM_OK) {
        caps |= CLMEM_CAP_OPAQUE_FD;
        if (dedicated_only)
            caps |= CLMEM_CAP_OPAQUE_FD_DEDICATED_ONLY;
    }
    if (check_fd_path(physical_device, device, CLMEM_PATH_DMA_BUF, NULL) == CLMEM_OK)
        caps |= CLMEM_CAP_DMA_BUF;
    if (check_host_mapped(physical_device, device) == CLMEM_OK) {
        caps |= CLMEM_CAP_HOST_MAPPED;
        if (clmem__cl_device_uses_host_memory(device))
            caps |= CLMEM_CAP_HOST_MAPPED_ZERO_COPY;
    }
    if (clmem_bridge_check_semaphore(physical_device, device, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT) ==
        CLMEM_OK)
        caps |= CLMEM_CAP_SEMAPHORE_OPAQUE_FD;
    if (clmem_bridge_check_semaphore(physical_device, device, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT) ==
        CLMEM_OK)
        caps |= CLMEM_CAP_SEMAPHORE_SYNC_FD;
    *caps_out = caps;
    return CLMEM_OK;
}
