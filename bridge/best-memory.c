/* SPDX-License-Identifier: MIT */
/* The easy call is the fast call: which device extensions to enable for
 * sharing (clmem_bridge_device_extensions) and which memory to allocate so
 * that the bridge shares it best (clmem_bridge_best_memory). Without them
 * the obvious program allocates host-visible memory on a device created
 * with no external-memory extension, and on a GPU that takes the
 * host-mapped path, which copies at every acquire and release. */
#include "config.h"
#include "bridge.h"
#include "export.h"
#include "fail.h"
#include "vkfn.h"

/* In the order an import's BEST tries the paths they serve. */
static const char *const sharing_extensions[] = {"VK_KHR_external_memory_fd", "VK_EXT_external_memory_dma_buf",
                                                 "VK_KHR_external_semaphore_fd"};

static clmem_status device_extensions(VkInstance instance, PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                      VkPhysicalDevice physical_device,
                                      const char *names_out[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX], uint32_t *count_out)
{
    struct vkfn vk;
    uint32_t n = 0;

    if (count_out)
        *count_out = 0;
    if (!instance || !physical_device || !names_out || !count_out)
        return fail_null(!instance          ? "instance"
                         : !physical_device ? "physical_device"
                         : !names_out       ? "names_out"
                                            : "count_out");
    if (clmem__vkfn_load_instance(&vk, get_instance_proc_addr, instance) != CLMEM_OK)
        return clmem_error_status();
    for (unsigned i = 0; i < sizeof sharing_extensions / sizeof sharing_extensions[0]; i++) {
        /* dma-buf export is an fd export: it needs the first one too */
        if (i == 1 && n == 0)
            continue;
        if (clmem__vk_device_has_extension(&vk, physical_device, sharing_extensions[i]))
            names_out[n++] = sharing_extensions[i];
    }
    for (uint32_t i = n; i < CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX; i++)
        names_out[i] = NULL;
    *count_out = n;
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_device_extensions(VkInstance instance,
                                                         PFN_vkGetInstanceProcAddr get_instance_proc_addr,
                                                         VkPhysicalDevice physical_device,
                                                         const char *names_out[CLMEM_BRIDGE_DEVICE_EXTENSIONS_MAX],
                                                         uint32_t *count_out)
{
    return clmem__error_in(__func__,
                           device_extensions(instance, get_instance_proc_addr, physical_device, names_out, count_out));
}

/* What clmem_bridge_best_memory() answers. */
struct memory_choice {
    clmem_bridge_path path;
    VkMemoryPropertyFlags property_flags;
    VkExternalMemoryHandleTypeFlags export_types;
};

/* Writes the choice to each output the caller gave. */
static void put_choice(const struct memory_choice *c, clmem_bridge_path *path_out,
                       VkMemoryPropertyFlags *property_flags_out, VkExternalMemoryHandleTypeFlags *export_types_out)
{
    if (path_out)
        *path_out = c->path;
    if (property_flags_out)
        *property_flags_out = c->property_flags;
    if (export_types_out)
        *export_types_out = c->export_types;
}

static clmem_status best_memory(const clmem_bridge *b, clmem_bridge_path *path_out,
                                VkMemoryPropertyFlags *property_flags_out,
                                VkExternalMemoryHandleTypeFlags *export_types_out)
{
    /* The outputs on failure. */
    static const struct memory_choice none = {CLMEM_BRIDGE_PATH_BEST, 0, 0};
    static const struct memory_choice choices[] = {
        /* device memory, exported: zero-copy on a GPU */
        {CLMEM_BRIDGE_PATH_OPAQUE_FD, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
         VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT},
        {CLMEM_BRIDGE_PATH_DMA_BUF, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
         VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT},
        /* host-visible memory wrapped by OpenCL: zero-copy on CPU and
         * host-unified devices, copies at acquire and release elsewhere */
        {CLMEM_BRIDGE_PATH_HOST_MAPPED, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0},
    };

    put_choice(&none, path_out, property_flags_out, export_types_out);
    if (!b || !path_out || !property_flags_out || !export_types_out)
        return fail_null(!b                    ? "bridge"
                         : !path_out           ? "path_out"
                         : !property_flags_out ? "property_flags_out"
                                               : "export_types_out");
    BRIDGE_LIVE(b, "clmem_bridge_best_memory");
    for (unsigned i = 0; i < sizeof choices / sizeof choices[0]; i++)
        if (b->caps.path[CAPS_PATH(choices[i].path)].status == CLMEM_OK) {
            put_choice(&choices[i], path_out, property_flags_out, export_types_out);
            return CLMEM_OK;
        }
    return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                       "No path shares memory between %s and %s (%s): opaque fd: %s dma-buf: %s host-mapped: %s",
                       b->caps.vk_device_name, b->caps.cl_device_name, b->caps.cl_platform_name,
                       b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_OPAQUE_FD)].message,
                       b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_DMA_BUF)].message,
                       b->caps.path[CAPS_PATH(CLMEM_BRIDGE_PATH_HOST_MAPPED)].message);
}

CLMEM_EXPORT clmem_status clmem_bridge_best_memory(const clmem_bridge *b, clmem_bridge_path *path_out,
                                                   VkMemoryPropertyFlags *property_flags_out,
                                                   VkExternalMemoryHandleTypeFlags *export_types_out)
{
    return clmem__error_in(__func__, best_memory(b, path_out, property_flags_out, export_types_out));
}
