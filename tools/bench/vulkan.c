/* SPDX-License-Identifier: MIT */
/* clmem-bench: the Vulkan buffers and command buffers every variant uses. */
#include "bench.h"

void anchored_buf_release(void *user)
{
    struct anchored_buf *a = user;
    clmem_bridge_vk_buffer_destroy(a->bridge, a->buf.buffer, &a->buf.mem);
    atomic_store(&a->freed, 1);
}

/* Once the anchor released a (its last import went) by deadline_us, frees
 * a: true. Otherwise false, and a stays allocated: the anchor may still run. */
bool anchored_buf_free(struct anchored_buf *a, double deadline_us)
{
    if (!wait_until_set(&a->freed, deadline_us))
        return false;
    free(a);
    return true;
}

static const VkBufferUsageFlags buffer_usage =
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;

/* The memory a path shares: exportable device-local memory for opaque fd,
 * host-visible coherent memory for host-mapped (bridge/import.c's rule). */
void shared_buf_create(struct bench *b, struct vk_buf *out, uint64_t size)
{
    bool fd = b->path == CLMEM_BRIDGE_PATH_OPAQUE_FD;
    clmem_status s = clmem_bridge_vk_buffer_create(
        b->bridge, size, buffer_usage,
        fd ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        fd ? VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT : 0, &out->buffer, &out->mem);
    check_clmem(s, "clmem_bridge_vk_buffer_create(shared buffer)");
}

/* The staging buffer of the staged copy. HOST_CACHED first: the host reads it (the
 * clEnqueueWriteBuffer source), and reading uncached (write-combined)
 * memory would make the baseline slower than a careful program's. */
bool staging_buf_create(struct bench *b, struct vk_buf *out, uint64_t size)
{
    const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    clmem_status s = clmem_bridge_vk_buffer_create(b->bridge, size, buffer_usage,
                                                   coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0, &out->buffer,
                                                   &out->mem);
    if (s == CLMEM_ERR_UNSUPPORTED) {
        s = clmem_bridge_vk_buffer_create(b->bridge, size, buffer_usage, coherent, 0, &out->buffer, &out->mem);
        check_clmem(s, "clmem_bridge_vk_buffer_create(staging buffer)");
        return false;
    }
    check_clmem(s, "clmem_bridge_vk_buffer_create(staging buffer)");
    return true;
}

VkCommandBuffer begin_commands(struct bench *b)
{
    return begin_commands_in(b, b->vk.pool);
}

VkCommandBuffer begin_commands_in(struct bench *b, VkCommandPool pool)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    /* No ONE_TIME_SUBMIT: these are recorded once and submitted every rep. */
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VkCommandBuffer cb;
    check_vk(vkAllocateCommandBuffers(b->vk.device, &ai, &cb), "vkAllocateCommandBuffers");
    check_vk(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    return cb;
}

/* The same barrier as tools/vkctx/vkctx-commands.c: transfer writes made
 * visible to the host and to whatever reads the memory next. */
void end_commands(VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0,
                         NULL);
    check_vk(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

VkCommandBuffer record_fill_word0(struct bench *b, VkBuffer buffer, uint32_t value)
{
    VkCommandBuffer cb = begin_commands(b);
    vkCmdFillBuffer(cb, buffer, 0, 4, value);
    end_commands(cb);
    return cb;
}

VkCommandBuffer record_copy(struct bench *b, VkBuffer src, VkBuffer dst, uint64_t size)
{
    return record_copy_in(b, b->vk.pool, src, dst, size);
}

VkCommandBuffer record_copy_in(struct bench *b, VkCommandPool pool, VkBuffer src, VkBuffer dst, uint64_t size)
{
    VkCommandBuffer cb = begin_commands_in(b, pool);
    VkBufferCopy region = {0, 0, size};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    end_commands(cb);
    return cb;
}

void submit_and_wait(struct bench *b, VkCommandBuffer cb, const char *what)
{
    submit_and_wait_on(b->vk.queue, cb, what);
}

void submit_and_wait_on(VkQueue queue, VkCommandBuffer cb, const char *what)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    check_vk(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE), what);
    check_vk(vkQueueWaitIdle(queue), what);
}
