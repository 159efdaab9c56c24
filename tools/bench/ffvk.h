/* SPDX-License-Identifier: MIT */
/* clmem-bench (l): the entry points of FFmpeg's VkDevice that (l) calls
 * (ffvk.c). Only with libavfilter (HAVE_LIBAVFILTER). */
#ifndef CLMEM_BENCH_FFVK_H
#define CLMEM_BENCH_FFVK_H

#include <libavutil/hwcontext_vulkan.h>
#include <stdbool.h>
#include <stddef.h>

struct ffvk {
    PFN_vkWaitSemaphores wait_semaphores;
    PFN_vkCreateSemaphore create_semaphore;
    PFN_vkDestroySemaphore destroy_semaphore;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd; /* NULL without VK_KHR_external_semaphore_fd */
    PFN_vkCreateCommandPool create_pool;
    PFN_vkDestroyCommandPool destroy_pool;
    PFN_vkAllocateCommandBuffers allocate_cbs;
    PFN_vkBeginCommandBuffer begin_cb;
    PFN_vkEndCommandBuffer end_cb;
    PFN_vkCmdPipelineBarrier barrier;
    PFN_vkCmdCopyImage copy_image;
    PFN_vkQueueSubmit submit;
    PFN_vkQueueWaitIdle wait_idle;
    PFN_vkGetDeviceQueue get_queue;
};

/* Resolve the entry points on FFmpeg's device `vk`; false, naming the
 * first one missing in why, where one (but get_semaphore_fd) is. */
bool ffvk_load(struct ffvk *fn, const AVVulkanDeviceContext *vk, char *why, size_t len);

#endif
