/* SPDX-License-Identifier: MIT */
/* clmem-bench (l): the entry points of FFmpeg's VkDevice that (l) calls,
 * through FFmpeg's own vkGetInstanceProcAddr (FFmpeg may load another
 * Vulkan loader than the one the bench links). */
#include "config.h"
#include "ffvk.h"

#include <stdio.h>

bool ffvk_load(struct ffvk *fn, const AVVulkanDeviceContext *vk, char *why, size_t len)
{
    PFN_vkGetDeviceProcAddr dpa = (PFN_vkGetDeviceProcAddr)vk->get_proc_addr(vk->inst, "vkGetDeviceProcAddr");

    if (!dpa) {
        snprintf(why, len, "FFmpeg's Vulkan instance returns no vkGetDeviceProcAddr");
        return false;
    }
#define DEVICE_FN(field, name)                                     \
    if (!(fn->field = (PFN_##name)dpa(vk->act_dev, #name))) {      \
        snprintf(why, len, "FFmpeg's VkDevice returns no " #name); \
        return false;                                              \
    }
    DEVICE_FN(wait_semaphores, vkWaitSemaphores)
    DEVICE_FN(create_semaphore, vkCreateSemaphore)
    DEVICE_FN(destroy_semaphore, vkDestroySemaphore)
    DEVICE_FN(create_pool, vkCreateCommandPool)
    DEVICE_FN(destroy_pool, vkDestroyCommandPool)
    DEVICE_FN(allocate_cbs, vkAllocateCommandBuffers)
    DEVICE_FN(begin_cb, vkBeginCommandBuffer)
    DEVICE_FN(end_cb, vkEndCommandBuffer)
    DEVICE_FN(barrier, vkCmdPipelineBarrier)
    DEVICE_FN(copy_image, vkCmdCopyImage)
    DEVICE_FN(submit, vkQueueSubmit)
    DEVICE_FN(wait_idle, vkQueueWaitIdle)
    DEVICE_FN(get_queue, vkGetDeviceQueue)
#undef DEVICE_FN
    /* Only where FFmpeg enabled VK_KHR_external_semaphore_fd (llvmpipe has
     * none): NULL otherwise, and the raw route says so. */
    fn->get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)dpa(vk->act_dev, "vkGetSemaphoreFdKHR");
    return true;
}
