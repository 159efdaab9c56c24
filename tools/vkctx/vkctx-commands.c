/* SPDX-License-Identifier: MIT */
/* The Vulkan context's one-shot transfer commands (vkctx.h): a fill, a
 * buffer copy and the copies between buffers and images, each recorded,
 * submitted and waited for on the context's queue, its writes made
 * visible to the host and to later commands. */
#include "vkctx.h"

#include <stdbool.h>

/* Record, submit and wait for one command buffer. */
static VkResult run_once(struct vkctx *ctx, void (*record)(VkCommandBuffer, const void *), const void *arg)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = ctx->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1};
    VkCommandBuffer cb;
    VkResult r = vkAllocateCommandBuffers(ctx->device, &ai, &cb);
    if (r != VK_SUCCESS)
        return r;
    if ((r = vkBeginCommandBuffer(cb, &bi)) == VK_SUCCESS) {
        record(cb, arg);
        r = vkEndCommandBuffer(cb);
    }
    si.pCommandBuffers = &cb;
    if (r == VK_SUCCESS)
        r = vkQueueSubmit(ctx->queue, 1, &si, VK_NULL_HANDLE);
    if (r == VK_SUCCESS)
        r = vkQueueWaitIdle(ctx->queue);
    vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
    return r;
}

struct fill_args {
    VkBuffer buffer;
    VkDeviceSize offset, size;
    uint32_t value;
};

/* Make transfer writes visible to the host and to later commands. */
static void barrier_after_transfer(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void record_fill(VkCommandBuffer cb, const void *arg)
{
    const struct fill_args *a = arg;
    vkCmdFillBuffer(cb, a->buffer, a->offset, a->size, a->value);
    barrier_after_transfer(cb);
}

VkResult vkctx_fill(struct vkctx *ctx, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t value)
{
    struct fill_args a = {buffer, offset, size, value};
    return run_once(ctx, record_fill, &a);
}

struct copy_args {
    VkBuffer src, dst;
    VkDeviceSize size;
};

static void record_copy(VkCommandBuffer cb, const void *arg)
{
    const struct copy_args *a = arg;
    VkBufferCopy region = {0, 0, a->size};
    vkCmdCopyBuffer(cb, a->src, a->dst, 1, &region);
    barrier_after_transfer(cb);
}

VkResult vkctx_copy(struct vkctx *ctx, VkBuffer src, VkBuffer dst, VkDeviceSize size)
{
    struct copy_args a = {src, dst, size};
    return run_once(ctx, record_copy, &a);
}

struct image_copy_args {
    VkBuffer buffer;
    VkDeviceSize offset;
    uint32_t row_texels;
    VkImage image;
    VkImageAspectFlagBits aspect;
    uint32_t width, height;
    VkImageLayout layout;
    bool to_image;
};

static void record_image_copy(VkCommandBuffer cb, const void *arg)
{
    const struct image_copy_args *a = arg;
    VkImageMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                   .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT,
                                   .dstAccessMask =
                                       a->to_image ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT,
                                   .oldLayout = a->layout,
                                   .newLayout = VK_IMAGE_LAYOUT_GENERAL,
                                   .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .image = a->image,
                                   /* COLOR covers every plane of a non-disjoint two-plane image */
                                   .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    VkBufferImageCopy region = {.bufferOffset = a->offset,
                                .bufferRowLength = a->row_texels,
                                .imageSubresource = {(VkImageAspectFlags)a->aspect, 0, 0, 1},
                                .imageExtent = {a->width, a->height, 1}};
    if (a->layout == VK_IMAGE_LAYOUT_UNDEFINED)
        before.srcAccessMask = 0;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &before);
    if (a->to_image)
        vkCmdCopyBufferToImage(cb, a->buffer, a->image, VK_IMAGE_LAYOUT_GENERAL, 1, &region);
    else
        vkCmdCopyImageToBuffer(cb, a->image, VK_IMAGE_LAYOUT_GENERAL, a->buffer, 1, &region);
    barrier_after_transfer(cb);
}

VkResult vkctx_copy_buffer_to_image(struct vkctx *ctx, VkBuffer src, VkDeviceSize buffer_offset,
                                    uint32_t buffer_row_texels, VkImage dst, VkImageAspectFlagBits aspect,
                                    uint32_t width, uint32_t height, VkImageLayout layout)
{
    struct image_copy_args a = {src, buffer_offset, buffer_row_texels, dst, aspect, width, height, layout, true};
    return run_once(ctx, record_image_copy, &a);
}

VkResult vkctx_copy_image_to_buffer(struct vkctx *ctx, VkImage src, VkImageAspectFlagBits aspect, uint32_t width,
                                    uint32_t height, VkImageLayout layout, VkBuffer dst, VkDeviceSize buffer_offset,
                                    uint32_t buffer_row_texels)
{
    struct image_copy_args a = {dst, buffer_offset, buffer_row_texels, src, aspect, width, height, layout, false};
    return run_once(ctx, record_image_copy, &a);
}
