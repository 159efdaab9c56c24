/* SPDX-License-Identifier: MIT */
/* clmem_bridge_vk_image_create: an exportable 2D VkImage of a format the
 * bridge shares, bound to memory of its own (dedicated when Vulkan requires
 * or prefers it, or reports the export type dedicated-only), described by a
 * clmem_bridge_vk_image that the import reads instead of asking Vulkan:
 * for linear tiling, each plane's offset, size and row pitch from
 * vkGetImageSubresourceLayout. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "vk-buffer.h"
#include "vk-image.h"

#include <stdio.h>
#include <string.h>

static const char *tiling_name(VkImageTiling t)
{
    return t == VK_IMAGE_TILING_LINEAR ? "linear" : t == VK_IMAGE_TILING_OPTIMAL ? "optimal" : "other";
}

clmem_status clmem__vk_image_supported(clmem_bridge *b, const struct image_format *f, VkImageTiling tiling,
                                       VkImageUsageFlags usage, VkExternalMemoryHandleTypeFlags export_types,
                                       const VkExtent2D *extent, bool *dedicated_only)
{
    const struct vkfn *vk = &b->vk;
    VkPhysicalDeviceImageFormatInfo2 info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
                                             .format = f->vk,
                                             .type = VK_IMAGE_TYPE_2D,
                                             .tiling = tiling,
                                             .usage = usage};
    VkImageFormatProperties2 props = {.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2};
    VkResult r;

    if (dedicated_only)
        *dedicated_only = false;
    r = vk->GetPhysicalDeviceImageFormatProperties2(b->physical_device, &info, &props);
    if (r != VK_SUCCESS)
        return clmem_error_set(r == VK_ERROR_FORMAT_NOT_SUPPORTED ? CLMEM_ERR_UNSUPPORTED : CLMEM_ERR_VULKAN,
                               CLMEM_API_VULKAN, "vkGetPhysicalDeviceImageFormatProperties2", r,
                               "%s cannot make %s images with %s tiling and usage 0x%x.", b->caps.vk_device_name,
                               f->name, tiling_name(tiling), (unsigned)usage);
    if (extent && (extent->width > props.imageFormatProperties.maxExtent.width ||
                   extent->height > props.imageFormatProperties.maxExtent.height))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED, "%s makes %s images with %s tiling of at most %ux%u, not %ux%u.",
                           b->caps.vk_device_name, f->name, tiling_name(tiling),
                           props.imageFormatProperties.maxExtent.width, props.imageFormatProperties.maxExtent.height,
                           extent->width, extent->height);
    for (uint32_t bit = 1; bit && bit <= export_types; bit <<= 1) {
        VkPhysicalDeviceExternalImageFormatInfo ext = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO,
            .handleType = (VkExternalMemoryHandleTypeFlagBits)bit};
        VkExternalImageFormatProperties ext_props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
        VkExternalMemoryFeatureFlags features;

        if (!(export_types & bit))
            continue;
        info.pNext = &ext;
        props.pNext = &ext_props;
        r = vk->GetPhysicalDeviceImageFormatProperties2(b->physical_device, &info, &props);
        features = r == VK_SUCCESS ? ext_props.externalMemoryProperties.externalMemoryFeatures : 0;
        if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
            return clmem_error_set(CLMEM_ERR_UNSUPPORTED, r == VK_SUCCESS ? CLMEM_API_NONE : CLMEM_API_VULKAN,
                                   r == VK_SUCCESS ? NULL : "vkGetPhysicalDeviceImageFormatProperties2", r,
                                   "%s cannot export %s images with %s tiling and usage 0x%x as handle type 0x%x.",
                                   b->caps.vk_device_name, f->name, tiling_name(tiling), (unsigned)usage,
                                   (unsigned)bit);
        if (dedicated_only && (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT))
            *dedicated_only = true;
    }
    return CLMEM_OK;
}

/* The plane layouts of a linear image, as the import will read them. */
static void describe_planes(clmem_bridge *b, const struct image_format *f, VkImage image, VkExtent2D extent,
                            clmem_bridge_vk_image *out)
{
    for (unsigned p = 0; p < f->plane_count; p++) {
        VkImageSubresource sub = {.aspectMask = (VkImageAspectFlags)f->planes[p].aspect};
        VkSubresourceLayout layout;
        b->vk.GetImageSubresourceLayout(b->device, image, &sub, &layout);
        out->planes[p].offset = out->memory_offset + layout.offset;
        out->planes[p].size = layout.size;
        out->planes[p].row_pitch = layout.rowPitch;
        out->planes[p].width = clmem__format_plane_width(f, p, extent.width);
        out->planes[p].height = clmem__format_plane_height(f, p, extent.height);
    }
}

clmem_status clmem__vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent, VkImageTiling tiling,
                                    VkImageUsageFlags usage, VkMemoryPropertyFlags property_flags,
                                    VkExternalMemoryHandleTypeFlags export_types, clmem_bridge_vk_image *image_out)
{
    const struct image_format *f = clmem__format_find(format);
    VkExternalMemoryImageCreateInfo external = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO,
                                                .handleTypes = export_types};
    VkImageCreateInfo create = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                                .pNext = export_types ? &external : NULL,
                                .imageType = VK_IMAGE_TYPE_2D,
                                .format = format,
                                .extent = {extent.width, extent.height, 1},
                                .mipLevels = 1,
                                .arrayLayers = 1,
                                .samples = VK_SAMPLE_COUNT_1_BIT,
                                .tiling = tiling,
                                .usage = usage,
                                .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
                                .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
    VkImage image = VK_NULL_HANDLE;
    bool dedicated_only = false;
    char what[128];
    clmem_status s;
    VkResult r;

    if (image_out)
        memset(image_out, 0, sizeof *image_out);
    if (!b || !image_out)
        return fail_null(!b ? "bridge" : "image_out");
    BRIDGE_LIVE(b, "clmem_bridge_vk_image_create");
    if (!f)
        return clmem__format_unknown(format);
    if (extent.width == 0 || extent.height == 0)
        return fail_empty_extent(CLMEM_ERR_ZERO_SIZE, extent);
    if (tiling != VK_IMAGE_TILING_LINEAR && tiling != VK_IMAGE_TILING_OPTIMAL)
        return fail_unknown_tiling("tiling", (int)tiling);
    if (f->plane_count > 1 && (extent.width % 2 || extent.height % 2))
        return fail_odd_420_extent(f->name, extent);
    if ((s = clmem__vk_image_supported(b, f, tiling, usage, export_types, &extent, &dedicated_only)) != CLMEM_OK)
        return s;

    const struct vkfn *vk = &b->vk;
    r = FAULT("vkCreateImage") ? VK_ERROR_OUT_OF_HOST_MEMORY : vk->CreateImage(b->device, &create, NULL, &image);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateImage", r,
                               "Creating a %ux%u %s image with %s tiling failed.", extent.width, extent.height,
                               f->name, tiling_name(tiling));
    snprintf(what, sizeof what, "%s image with %s tiling", f->name, tiling_name(tiling));
    /* Exported images always get a dedicated allocation. On NVIDIA 580 a
     * linear RGBA8 or BGRA8 image in non-dedicated exported memory, written
     * in place by OpenCL, read back wrong through Vulkan for some data
     * (texel bytes that vary within a texel) and right for other data,
     * while OpenCL read its own writes right; with a dedicated allocation it
     * read back exact every time (docs/probes/img-diff-probe.c,
     * docs/driver-notes.md). Vulkan said neither "requires" nor "prefers". */
    s = clmem__vk_memory_bind_new(b, VK_NULL_HANDLE, image, "image", what, property_flags, export_types,
                                  dedicated_only || export_types != 0, &image_out->memory);
    if (s != CLMEM_OK) {
        vk->DestroyImage(b->device, image, NULL);
        return s;
    }
    image_out->image = image;
    image_out->memory_offset = 0;
    image_out->size = image_out->memory.allocation_size;
    image_out->format = format;
    image_out->extent = extent;
    image_out->tiling = tiling;
    image_out->usage = usage;
    image_out->plane_count = f->plane_count;
    if (tiling == VK_IMAGE_TILING_LINEAR)
        describe_planes(b, f, image, extent, image_out);
    return CLMEM_OK;
}

CLMEM_EXPORT clmem_status clmem_bridge_vk_image_create(clmem_bridge *b, VkFormat format, VkExtent2D extent,
                                                       VkImageTiling tiling, VkImageUsageFlags usage,
                                                       VkMemoryPropertyFlags property_flags,
                                                       VkExternalMemoryHandleTypeFlags export_types,
                                                       clmem_bridge_vk_image *image_out)
{
    return clmem__error_in(
        __func__, clmem__vk_image_create(b, format, extent, tiling, usage, property_flags, export_types, image_out));
}

CLMEM_EXPORT void clmem_bridge_vk_image_destroy(clmem_bridge *b, const clmem_bridge_vk_image *image)
{
    if (!b || !image)
        return;
    BRIDGE_LIVE(b, "clmem_bridge_vk_image_destroy");
    if (image->image)
        b->vk.DestroyImage(b->device, image->image, NULL);
    if (image->memory.memory) {
        clmem__own_memory_forget(&b->own, image->memory.memory); /* before the handle can be reused */
        b->vk.FreeMemory(b->device, image->memory.memory, NULL);
    }
}
