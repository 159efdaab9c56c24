/* SPDX-License-Identifier: MIT */
/* Which sharing paths and semaphore modes work for a bridge's (Vulkan,
 * OpenCL) device pair, worked out once at creation. Each check asks both
 * sides, and on each side both the extension list and the handle-type
 * query, because drivers have been seen to advertise one and not the
 * other. A failed check's sentence lists everything missing. */
#include "config.h"
#include "caps.h"
#include "error-private.h"
#include "export.h"
#include "opencl/query-cl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

CLMEM_EXPORT const char *clmem_bridge_path_name(clmem_bridge_path path)
{
    switch (path) {
    case CLMEM_BRIDGE_PATH_BEST: return "best";
    case CLMEM_BRIDGE_PATH_OPAQUE_FD: return "opaque-fd";
    case CLMEM_BRIDGE_PATH_DMA_BUF: return "dma-buf";
    case CLMEM_BRIDGE_PATH_HOST_MAPPED: return "host-mapped";
    }
    return "unknown-path";
}

/* Collects "what is missing" phrases into one sentence. */
struct missing {
    char text[CAPS_MESSAGE_MAX - 96];
    size_t len;
    int count;
    bool mismatch; /* one of them is "not the same device" */
};

static void missing_add(struct missing *m, const char *fmt, ...)
{
    va_list ap;
    int n;

    m->count++;
    if (m->len >= sizeof m->text)
        return;
    if (m->count > 1) {
        n = snprintf(m->text + m->len, sizeof m->text - m->len, "; ");
        m->len += n > 0 ? (size_t)n : 0;
    }
    if (m->len >= sizeof m->text)
        return;
    va_start(ap, fmt);
    n = vsnprintf(m->text + m->len, sizeof m->text - m->len, fmt, ap);
    va_end(ap);
    m->len += n > 0 ? (size_t)n : 0;
}

static void answer_set(struct cap_answer *a, const struct missing *m, const char *fmt, const char *what)
{
    if (m->count == 0) {
        a->status = CLMEM_OK;
        a->message[0] = '\0';
        return;
    }
    /* Different devices is its own status, whatever else is missing: the
     * fix is another pairing, not another driver. */
    a->status = m->mismatch ? CLMEM_ERR_DEVICE_MISMATCH : CLMEM_ERR_UNSUPPORTED;
    snprintf(a->message, sizeof a->message, fmt, what, m->text);
}

static void uuid_to_hex(const unsigned char uuid[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

/* The inputs every check reads. */
struct pair {
    const struct vkfn *vk;
    VkPhysicalDevice pd;
    cl_device_id cl;
    const struct bridge_caps *caps; /* names */
    unsigned char vk_uuid[VK_UUID_SIZE];
};

static void check_same_device(const struct pair *p, struct missing *m)
{
    unsigned char cl_uuid[16];
    char a[33], b[33];

    if (!clmem__cl_device_uuid(p->cl, cl_uuid)) {
        missing_add(m, "cl_khr_device_uuid (not offered by %s on %s), so the devices cannot be matched",
                    p->caps->cl_platform_name, p->caps->cl_device_name);
    } else if (memcmp(cl_uuid, p->vk_uuid, 16) != 0) {
        uuid_to_hex(p->vk_uuid, a);
        uuid_to_hex(cl_uuid, b);
        missing_add(m, "the same device: %s has deviceUUID %s and %s has CL_DEVICE_UUID_KHR %s",
                    p->caps->vk_device_name, a, p->caps->cl_device_name, b);
        m->mismatch = true;
    }
}

/* The OpenCL side of an fd import: the extension `cl_ext`, and the handle
 * type `type` in the device's list `query` of the types it imports. */
static void check_cl_import(const struct pair *p, struct missing *m, const char *cl_ext, cl_device_info query,
                            const char *query_name, cl_uint type, const char *type_name)
{
    if (!clmem__cl_device_has_extension(p->cl, cl_ext))
        missing_add(m, "%s (not offered by %s)", cl_ext, p->caps->cl_platform_name);
    if (!clmem__cl_device_lists_handle_type(p->cl, query, type))
        missing_add(m, "%s in %s of %s", type_name, query_name, p->caps->cl_device_name);
}

static void check_fd_path(const struct pair *p, const struct vkfn *dev_fn, clmem_bridge_path path,
                          struct cap_answer *a, struct cap_answer *cl_side, bool *dedicated_only)
{
    bool dma = path == CLMEM_BRIDGE_PATH_DMA_BUF;
    const char *cl_ext = dma ? "cl_khr_external_memory_dma_buf" : "cl_khr_external_memory_opaque_fd";
    const char *vk_ext = dma ? "VK_EXT_external_memory_dma_buf" : "VK_KHR_external_memory_fd";
    cl_uint cl_type = dma ? CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR : CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR;
    struct missing m = {.len = 0};

    check_cl_import(p, &m, cl_ext, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                    "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR", cl_type,
                    dma ? "CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR" : "CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR");
    answer_set(cl_side, &m, "Importing %s fds needs: %s.", dma ? "dma-buf" : "opaque");
    if (!clmem__vk_device_has_extension(p->vk, p->pd, vk_ext)) {
        missing_add(&m, "%s (not offered by %s)", vk_ext, p->caps->vk_device_name);
    } else {
        VkPhysicalDeviceExternalBufferInfo info = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
            .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
            .handleType = dma ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT
                              : VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
        };
        VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
        VkExternalMemoryFeatureFlags features;

        p->vk->GetPhysicalDeviceExternalBufferProperties(p->pd, &info, &props);
        features = props.externalMemoryProperties.externalMemoryFeatures;
        if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
            missing_add(&m, "vkGetPhysicalDeviceExternalBufferProperties to say %s can export buffers as %s",
                        p->caps->vk_device_name, dma ? "dma-buf" : "opaque fd");
        if (dedicated_only)
            *dedicated_only = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
        if (!dev_fn->GetMemoryFdKHR)
            missing_add(&m, "vkGetMemoryFdKHR on the VkDevice (enable %s when creating it)", vk_ext);
    }
    check_same_device(p, &m);
    answer_set(a, &m, "The %s path needs: %s.", clmem_bridge_path_name(path));
}

static void check_host_mapped(const struct pair *p, struct cap_answer *a)
{
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkPhysicalDeviceMemoryProperties mp;
    struct missing m = {.len = 0};
    bool found = false;

    p->vk->GetPhysicalDeviceMemoryProperties(p->pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount && !found; i++)
        found = (mp.memoryTypes[i].propertyFlags & want) == want;
    if (!found)
        missing_add(&m, "a HOST_VISIBLE | HOST_COHERENT memory type, and %s has none", p->caps->vk_device_name);
    answer_set(a, &m, "The %s path needs: %s.", "host-mapped");
}

static void check_semaphore(const struct pair *p, const struct vkfn *dev_fn, clmem_bridge_semaphore_mode mode,
                            struct cap_answer *a)
{
    bool sync = mode == CLMEM_BRIDGE_SEMAPHORE_SYNC_FD;
    const char *cl_ext = sync ? "cl_khr_external_semaphore_sync_fd" : "cl_khr_external_semaphore_opaque_fd";
    cl_uint cl_type = sync ? CL_SEMAPHORE_HANDLE_SYNC_FD_KHR : CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR;
    VkPhysicalDeviceExternalSemaphoreInfo info = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
        .handleType = sync ? VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT
                           : VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkExternalSemaphoreProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    struct missing m = {.len = 0};

    if (!clmem__cl_device_has_extension(p->cl, "cl_khr_external_semaphore"))
        missing_add(&m, "cl_khr_external_semaphore (not offered by %s)", p->caps->cl_platform_name);
    check_cl_import(p, &m, cl_ext, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR,
                    "CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR", cl_type,
                    sync ? "CL_SEMAPHORE_HANDLE_SYNC_FD_KHR" : "CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR");
    if (!clmem__vk_device_has_extension(p->vk, p->pd, "VK_KHR_external_semaphore_fd")) {
        missing_add(&m, "VK_KHR_external_semaphore_fd (not offered by %s)", p->caps->vk_device_name);
    } else {
        p->vk->GetPhysicalDeviceExternalSemaphoreProperties(p->pd, &info, &props);
        if (!(props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT))
            missing_add(&m, "vkGetPhysicalDeviceExternalSemaphoreProperties to say %s can export %s semaphores",
                        p->caps->vk_device_name, sync ? "sync fd" : "opaque fd");
        if (!dev_fn->GetSemaphoreFdKHR)
            missing_add(&m, "vkGetSemaphoreFdKHR on the VkDevice (enable VK_KHR_external_semaphore_fd when "
                            "creating it)");
    }
    check_same_device(p, &m);
    answer_set(a, &m, "%s semaphore import needs: %s.", sync ? "Sync-fd" : "Opaque-fd");
}

/* The OpenCL device's version as major * 10 + minor ("OpenCL 3.0 ..." -> 30). */
static int cl_device_version(cl_device_id dev)
{
    char text[128] = "";
    int major = 0, minor = 0;

    if (clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof text - 1, text, NULL) != CL_SUCCESS ||
        sscanf(text, "OpenCL %d.%d", &major, &minor) != 2)
        return 0;
    return major * 10 + minor;
}

/* Images: image2d views of plane buffers, and images imported from an fd
 * (the fd path's own answer, the format and the live check come on top). */
static void check_image_sharing(const struct pair *p, struct bridge_caps *caps)
{
    cl_bool images = CL_FALSE;
    int version = cl_device_version(p->cl);
    bool from_buffer_ext = clmem__cl_device_has_extension(p->cl, "cl_khr_image2d_from_buffer");
    struct missing view = {.len = 0}, from_fd = {.len = 0};

    if (clGetDeviceInfo(p->cl, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL) != CL_SUCCESS)
        images = CL_FALSE;
    /* 0 where images from buffers are not supported (OpenCL 3.0); older
     * devices without cl_khr_image2d_from_buffer may not answer at all. */
    if (clGetDeviceInfo(p->cl, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof caps->image_pitch_align,
                        &caps->image_pitch_align, NULL) != CL_SUCCESS)
        caps->image_pitch_align = 0;
    if (clGetDeviceInfo(p->cl, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, sizeof caps->image_base_align,
                        &caps->image_base_align, NULL) != CL_SUCCESS)
        caps->image_base_align = 0;
    if (!images) {
        missing_add(&view, "CL_DEVICE_IMAGE_SUPPORT (false on %s)", caps->cl_device_name);
        missing_add(&from_fd, "CL_DEVICE_IMAGE_SUPPORT (false on %s)", caps->cl_device_name);
    }
    if (!(version >= 20 || from_buffer_ext) || caps->image_pitch_align == 0)
        missing_add(&view,
                    "2D images from buffers (cl_khr_image2d_from_buffer, or OpenCL 2.0 or later; %s is OpenCL %d.%d, "
                    "%s the extension and reports CL_DEVICE_IMAGE_PITCH_ALIGNMENT %u)",
                    caps->cl_device_name, version / 10, version % 10, from_buffer_ext ? "lists" : "does not list",
                    (unsigned)caps->image_pitch_align);
    if (version < 30)
        missing_add(&from_fd, "OpenCL 3.0 for clCreateImageWithProperties (%s is OpenCL %d.%d)",
                    caps->cl_device_name, version / 10, version % 10);
    answer_set(&caps->image_view, &view, "An %s needs: %s.", "image2d view of a plane buffer");
    answer_set(&caps->image_from_fd, &from_fd, "An %s needs: %s.", "OpenCL image imported from an fd");
}

clmem_status clmem__caps_compute(struct bridge_caps *caps, const struct vkfn *vk, VkPhysicalDevice pd,
                                 cl_device_id cl_device)
{
    struct pair p = {.vk = vk, .pd = pd, .cl = cl_device, .caps = caps};
    bool dedicated_only = false;
    clmem_status s;

    memset(caps, 0, sizeof *caps);
    if ((s = clmem__cl_device_base_align(cl_device, &caps->base_align_bytes)) != CLMEM_OK)
        return s;
    caps->uses_host_memory = clmem__cl_device_uses_host_memory(cl_device);
    clmem__cl_device_names(cl_device, caps->cl_device_name, sizeof caps->cl_device_name, caps->cl_platform_name,
                           sizeof caps->cl_platform_name);
    clmem__vk_device_identity(vk, pd, p.vk_uuid, caps->vk_device_name);
    caps->vk_vendor_id = clmem__vk_vendor_id(vk, pd);

    check_fd_path(&p, vk, CLMEM_BRIDGE_PATH_OPAQUE_FD, &caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_OPAQUE_FD)],
                  &caps->cl_import[CLMEM_BRIDGE_PATH_OPAQUE_FD], &dedicated_only);
    check_fd_path(&p, vk, CLMEM_BRIDGE_PATH_DMA_BUF, &caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_DMA_BUF)],
                  &caps->cl_import[CLMEM_BRIDGE_PATH_DMA_BUF], NULL);
    check_host_mapped(&p, &caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_HOST_MAPPED)]);
    check_image_sharing(&p, caps);
    check_semaphore(&p, vk, CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD, &caps->semaphore[CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD]);
    check_semaphore(&p, vk, CLMEM_BRIDGE_SEMAPHORE_SYNC_FD, &caps->semaphore[CLMEM_BRIDGE_SEMAPHORE_SYNC_FD]);

    if (caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_OPAQUE_FD)].status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_OPAQUE_FD | (dedicated_only ? CLMEM_BRIDGE_CAP_OPAQUE_FD_DEDICATED_ONLY : 0);
    if (caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_DMA_BUF)].status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_DMA_BUF;
    if (caps->path[CAPS_PATH(CLMEM_BRIDGE_PATH_HOST_MAPPED)].status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_HOST_MAPPED |
                      (caps->uses_host_memory ? CLMEM_BRIDGE_CAP_HOST_MAPPED_ZERO_COPY : 0);
    if (caps->semaphore[CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD].status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_SEMAPHORE_OPAQUE_FD;
    if (caps->semaphore[CLMEM_BRIDGE_SEMAPHORE_SYNC_FD].status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_SEMAPHORE_SYNC_FD;
    if (caps->image_view.status == CLMEM_OK)
        caps->bits |= CLMEM_BRIDGE_CAP_IMAGE_VIEW;
    return CLMEM_OK;
}

clmem_status clmem__caps_report(const struct cap_answer *a)
{
    if (a->status == CLMEM_OK)
        return CLMEM_OK;
    return clmem__fail(a->status, "%s", a->message);
}
