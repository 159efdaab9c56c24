/* SPDX-License-Identifier: MIT */
/* A Vulkan context for clmem's tools and tests (not installed): instance,
 * physical device, device with the external-memory extensions the device
 * offers (and the samplerYcbcrConversion feature where it has it, for the
 * two-plane formats), one queue, a command pool, and one-shot transfer
 * commands; and a second queue and pool of a transfer-only family where
 * there is one.
 *
 * With the Khronos validation layer installed (and CLMEM_VALIDATION not
 * "0"), it is enabled and every message of severity ERROR is counted
 * through a VK_EXT_debug_utils messenger, and printed as a "# " line. */
#ifndef CLMEM_VKCTX_H
#define CLMEM_VKCTX_H
#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

struct vkctx {
    VkInstance instance;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /* the instance-level one every call went through
                                                         (the loader's), for clmem_bridge_info */
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    VkCommandPool pool;
    /* A queue of a transfer-only family (TRANSFER without GRAPHICS or
     * COMPUTE), where the device has one: Vulkan work there does not make
     * an NVIDIA GPU's graphics/compute engine switch context against
     * OpenCL (docs/latency.md). VK_NULL_HANDLE otherwise. */
    bool has_transfer_queue;
    VkQueue transfer_queue;
    uint32_t transfer_family;
    VkCommandPool transfer_pool; /* of transfer_family, resettable buffers */
    VkDebugUtilsMessengerEXT messenger;
    bool validation;       /* the validation layer is on */
    bool has_memory_fd;    /* VK_KHR_external_memory_fd enabled */
    bool has_dma_buf;      /* VK_EXT_external_memory_dma_buf enabled */
    bool has_semaphore_fd; /* VK_KHR_external_semaphore_fd enabled */
    int device_index;      /* of physical_device, in vkEnumeratePhysicalDevices order */
    bool has_device_uuid;  /* device_uuid is known (the device offers Vulkan 1.1) */
    uint8_t device_uuid[VK_UUID_SIZE];
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    char error[512]; /* why vkctx_open failed */
};

/* The number of validation errors reported so far (all contexts). */
unsigned vkctx_validation_errors(void);

/* Number of physical devices, or -1 with ctx->error set. Needs no device. */
int vkctx_count_devices(struct vkctx *ctx);

/* Opens physical device `index` (vkEnumeratePhysicalDevices order), or,
 * with index < 0, the one CLMEM_VK_DEVICE names:
 *   - only decimal digits: the index ("CLMEM_VK_DEVICE=1"), which a name
 *     made of digits ("4090") therefore never is;
 *   - 32 hex digits, either case, dashes anywhere optional: the deviceUUID
 *     ("0123abcd-0000-1111-2222-456789abcdef", as clmem-info prints it),
 *     which tells apart two identical GPUs of one host (32 decimal digits
 *     are a UUID too);
 *   - anything else: the first device whose name contains it;
 * unset or empty: the first discrete GPU, else the first device.
 * Returns false with ctx->error set (and nothing left open) when there is
 * no Vulkan or no such device; the error names what was asked and lists
 * the devices there are (index, name, UUID). */
bool vkctx_open(struct vkctx *ctx, int index);

/* The index vkctx_open(ctx, -1) would open (CLMEM_VK_DEVICE or the
 * default), or -1 with ctx->error set. Opens no device; leaves nothing
 * open. */
int vkctx_find_device(struct vkctx *ctx);
void vkctx_close(struct vkctx *ctx);

/* A deviceUUID as clmem-info prints it and CLMEM_VK_DEVICE takes it:
 * "0123abcd-0000-1111-2222-456789abcdef". */
void vkctx_format_uuid(const uint8_t uuid[VK_UUID_SIZE], char out[37]);
/* One-shot commands, submitted and waited for (vkQueueWaitIdle). */
VkResult vkctx_fill(struct vkctx *ctx, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t value);
VkResult vkctx_copy(struct vkctx *ctx, VkBuffer src, VkBuffer dst, VkDeviceSize size);

/*
 * One-shot image copies (vkCmdCopyBufferToImage, vkCmdCopyImageToBuffer) of
 * one plane (`aspect`: VK_IMAGE_ASPECT_COLOR_BIT, or PLANE_0/PLANE_1 of a
 * two-plane format) of width x height texels, from or to a buffer holding
 * them at buffer_offset, buffer_row_texels texels a row (0: tightly packed).
 * The image is in `layout` before (UNDEFINED discards its contents) and in
 * VK_IMAGE_LAYOUT_GENERAL after, the layout images are handed to OpenCL in:
 * the copies run in GENERAL, after a barrier that transitions the whole
 * image (every plane) from `layout` and makes earlier writes, OpenCL's
 * included once the host saw them complete, visible. The transfer's writes
 * are made visible to the host and to later commands.
 */
VkResult vkctx_copy_buffer_to_image(struct vkctx *ctx, VkBuffer src, VkDeviceSize buffer_offset,
                                    uint32_t buffer_row_texels, VkImage dst, VkImageAspectFlagBits aspect,
                                    uint32_t width, uint32_t height, VkImageLayout layout);
VkResult vkctx_copy_image_to_buffer(struct vkctx *ctx, VkImage src, VkImageAspectFlagBits aspect, uint32_t width,
                                    uint32_t height, VkImageLayout layout, VkBuffer dst, VkDeviceSize buffer_offset,
                                    uint32_t buffer_row_texels);
#endif
