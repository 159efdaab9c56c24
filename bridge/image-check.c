/* SPDX-License-Identifier: MIT */
/* clmem_bridge_image_live_check: is an optimal-tiling image of this format,
 * imported from its fd as an OpenCL image, laid out as OpenCL expects? The
 * extension leaves that to the driver (an empty
 * CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
 * says so on NVIDIA), so the bridge asks the driver the only way that
 * proves it: Vulkan writes known texels, OpenCL reads them through the very
 * import clmem_bridge_import_vk_image makes, then OpenCL writes and Vulkan
 * reads. Each direction compares every byte.
 *
 * The result is kept per bridge, format and fd path (image.h): a pass or a
 * failure of the driver (an import, handoff or read that OpenCL refuses
 * with a code about the request, or a texel that differs) is an answer; a
 * failure to set the check up (a Vulkan allocation, a submission) or an
 * OpenCL code of the moment (out of resources, a vendor's code) is not, and
 * is returned without being kept. check_lock is held for the whole check,
 * so a format is checked once however many threads ask.
 *
 * The image the check imports is owned by a keepalive, as an application's
 * would be: it is destroyed when the import's teardown lets go of it
 * (clmem_bridge_finish() waits for that like for any import), never while
 * OpenCL may still touch it. */
#include "config.h"
#include "export.h"
#include "fail.h"
#include "fault.h"
#include "handoff-handles.h"
#include "image.h"
#include "vk-buffer.h"
#include "vk-image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_WIDTH 67u
#define CHECK_HEIGHT 19u

/* ------------------------------------------------------------ Vulkan side */

/* One command buffer: record, submit, wait on a fence. */
struct vk_once {
    clmem_bridge *b;
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
};

static clmem_status vk_once_open(struct vk_once *o, clmem_bridge *b, VkQueue queue, uint32_t family)
{
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = family};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r;

    memset(o, 0, sizeof *o);
    o->b = b;
    o->queue = queue;
    if ((r = b->vk.CreateCommandPool(b->device, &pci, NULL, &o->pool)) != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkCreateCommandPool", r,
                               "The live check could not make a command pool for queue family %u.", family);
    ai.commandPool = o->pool;
    if ((r = b->vk.AllocateCommandBuffers(b->device, &ai, &o->cb)) != VK_SUCCESS ||
        (r = b->vk.CreateFence(b->device, &fci, NULL, &o->fence)) != VK_SUCCESS) {
        b->vk.DestroyCommandPool(b->device, o->pool, NULL);
        o->pool = VK_NULL_HANDLE;
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkAllocateCommandBuffers", r,
                               "The live check could not make a command buffer and fence.");
    }
    return CLMEM_OK;
}

static void vk_once_close(struct vk_once *o)
{
    if (o->fence)
        o->b->vk.DestroyFence(o->b->device, o->fence, NULL);
    if (o->pool)
        o->b->vk.DestroyCommandPool(o->b->device, o->pool, NULL); /* frees the command buffer */
}

static VkResult vk_once_begin(struct vk_once *o)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    return o->b->vk.BeginCommandBuffer(o->cb, &bi);
}

static clmem_status vk_once_submit(struct vk_once *o, const char *what)
{
    const struct vkfn *vk = &o->b->vk;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &o->cb};
    VkResult r = vk->EndCommandBuffer(o->cb);

    if (r == VK_SUCCESS)
        r = vk->ResetFences(o->b->device, 1, &o->fence);
    if (r == VK_SUCCESS)
        r = vk->QueueSubmit(o->queue, 1, &si, o->fence);
    if (r == VK_SUCCESS)
        r = vk->WaitForFences(o->b->device, 1, &o->fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkQueueSubmit", r,
                               "The live check's Vulkan %s failed.", what);
    return CLMEM_OK;
}

static void image_barrier(struct vk_once *o, VkImage image, VkImageLayout from, VkImageLayout to,
                          VkAccessFlags src_access, VkAccessFlags dst_access)
{
    VkImageMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                               .srcAccessMask = src_access,
                               .dstAccessMask = dst_access,
                               .oldLayout = from,
                               .newLayout = to,
                               .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .image = image,
                               .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    o->b->vk.CmdPipelineBarrier(o->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0,
                                NULL, 0, NULL, 1, &mb);
}

/* Vulkan writes the staging buffer's texels into the image, which ends in
 * VK_IMAGE_LAYOUT_GENERAL (the layout the bridge hands images over in). */
static clmem_status vk_upload_to_image(struct vk_once *o, VkBuffer staging, VkImage image)
{
    VkBufferImageCopy region = {.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                                .imageExtent = {CHECK_WIDTH, CHECK_HEIGHT, 1}};
    VkResult r = vk_once_begin(o);

    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkBeginCommandBuffer", r,
                               "The live check could not record its upload.");
    image_barrier(o, image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
                  VK_ACCESS_TRANSFER_WRITE_BIT);
    o->b->vk.CmdCopyBufferToImage(o->cb, staging, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    image_barrier(o, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL,
                  VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    return vk_once_submit(o, "upload (vkCmdCopyBufferToImage)");
}

/* Vulkan reads the image (in GENERAL, as OpenCL handed it back) into the
 * staging buffer. */
static clmem_status vk_read_back_image(struct vk_once *o, VkImage image, VkBuffer staging)
{
    VkBufferImageCopy region = {.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
                                .imageExtent = {CHECK_WIDTH, CHECK_HEIGHT, 1}};
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    VkResult r = vk_once_begin(o);

    if (r != VK_SUCCESS)
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkBeginCommandBuffer", r,
                               "The live check could not record its read-back.");
    image_barrier(o, image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL, VK_ACCESS_MEMORY_WRITE_BIT,
                  VK_ACCESS_TRANSFER_READ_BIT);
    o->b->vk.CmdCopyImageToBuffer(o->cb, image, VK_IMAGE_LAYOUT_GENERAL, staging, 1, &region);
    o->b->vk.CmdPipelineBarrier(o->cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                                NULL, 0, NULL);
    return vk_once_submit(o, "read-back (vkCmdCopyImageToBuffer)");
}

/* The imported image, owned by its keepalive: destroyed when the import's
 * teardown drops it (or at once if the import never took it). */
struct owned_image {
    clmem_bridge *bridge; /* borrowed: the import record holds the bridge past this release */
    clmem_bridge_vk_image image;
};

static void owned_image_release(void *user)
{
    struct owned_image *o = user;
    clmem_bridge_vk_image_destroy(o->bridge, &o->image);
    free(o);
}

/* A host-visible staging buffer, mapped. */
struct staging {
    VkBuffer buffer;
    clmem_bridge_vk_memory memory;
    unsigned char *data;
};

static clmem_status staging_open(clmem_bridge *b, VkDeviceSize size, VkBufferUsageFlags usage, struct staging *st)
{
    clmem_status s = clmem__vk_buffer_create(b, size, usage,
                                             VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                             0, &st->buffer, &st->memory);
    VkResult r;

    st->data = NULL;
    if (s != CLMEM_OK)
        return s;
    r = b->vk.MapMemory(b->device, st->memory.memory, 0, VK_WHOLE_SIZE, 0, (void **)&st->data);
    if (r != VK_SUCCESS) {
        clmem_bridge_vk_buffer_destroy(b, st->buffer, &st->memory);
        st->buffer = VK_NULL_HANDLE;
        return clmem_error_set(CLMEM_ERR_VULKAN, CLMEM_API_VULKAN, "vkMapMemory", r,
                               "The live check could not map its staging buffer.");
    }
    return CLMEM_OK;
}

static void staging_close(clmem_bridge *b, struct staging *st)
{
    if (!st->buffer)
        return;
    if (st->data)
        b->vk.UnmapMemory(b->device, st->memory.memory);
    clmem_bridge_vk_buffer_destroy(b, st->buffer, &st->memory);
    st->buffer = VK_NULL_HANDLE;
}

static void fill_pattern(const struct image_format *f, uint32_t salt, unsigned char *data)
{
    unsigned tb = f->planes[0].texel_bytes;
    for (uint32_t y = 0; y < CHECK_HEIGHT; y++)
        for (uint32_t x = 0; x < CHECK_WIDTH; x++)
            clmem__format_pattern(f, 0, x, y, salt, data + ((size_t)y * CHECK_WIDTH + x) * tb);
}

/* The first byte that differs, as a sentence in why; true when none does. */
static bool same_texels(const struct image_format *f, const unsigned char *want, const unsigned char *got,
                        const char *direction, char *why, size_t why_len)
{
    unsigned tb = f->planes[0].texel_bytes;
    size_t n = (size_t)CHECK_WIDTH * CHECK_HEIGHT * tb;

    for (size_t i = 0; i < n; i++)
        if (want[i] != got[i]) {
            size_t texel = i / tb;
            snprintf(why, why_len,
                     "%s: texel (%zu, %zu) byte %zu is 0x%02x, want 0x%02x (the driver lays the two APIs' "
                     "optimal-tiling images out differently)",
                     direction, texel % CHECK_WIDTH, texel / CHECK_WIDTH, i % tb, got[i], want[i]);
            return false;
        }
    return true;
}

/* ------------------------------------------------------------ the check */

/* Is an OpenCL code the driver's answer about this kind of image? The
 * codes that describe the request (an image format it does not take, an
 * INVALID_* of the import's properties or of the image) are: the same
 * request gets the same answer, so it is kept. Resource codes, a failed
 * event in a wait list, the INVALID_* of the objects the check was given
 * (platform, device, context, queue, events: checked valid on entry, so
 * broken since) and codes outside the standard ranges (a vendor's own,
 * such as one for a context that failed in earlier work) describe the
 * moment, not the format: keeping them would refuse the format for the
 * bridge's life. */
static bool cl_code_answers(cl_int err)
{
    switch (err) {
    case CL_INVALID_PLATFORM:
    case CL_INVALID_DEVICE:
    case CL_INVALID_CONTEXT:
    case CL_INVALID_COMMAND_QUEUE:
    case CL_INVALID_EVENT_WAIT_LIST:
    case CL_INVALID_EVENT: return false;
    default:
        return err == CL_IMAGE_FORMAT_MISMATCH || err == CL_IMAGE_FORMAT_NOT_SUPPORTED ||
               (err <= CL_INVALID_VALUE && err >= CL_MAX_SIZE_RESTRICTION_EXCEEDED);
    }
}

/* A check's OpenCL call failed with err. An answer: `why` says so and the
 * check failed (kept). Otherwise the call's failure is returned as
 * CLMEM_ERR_OPENCL, not kept. */
static clmem_status cl_call_failed(const char *call, cl_int err, char *why, size_t why_len)
{
    if (!cl_code_answers(err))
        return clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, call, err,
                               "The live check's %s failed with a code that says nothing of the format; nothing is "
                               "kept.",
                               call);
    snprintf(why, why_len, "%s returned %d", call, err);
    return CLMEM_ERR_UNSUPPORTED;
}

/* A bridge step of the check failed with s: an OpenCL refusal that answers
 * (see cl_code_answers) fails the check, `why` naming the step; any other
 * failure is returned as it is, not kept. */
static clmem_status step_failed(clmem_status s, const char *step, char *why, size_t why_len)
{
    if (s != CLMEM_ERR_OPENCL || !cl_code_answers(clmem_error_native_code()))
        return s;
    snprintf(why, why_len, "%s: %s", step, clmem_error_message());
    return CLMEM_ERR_UNSUPPORTED;
}

/* Runs the check. CLMEM_OK: passed. CLMEM_ERR_UNSUPPORTED with `why`
 * filled: the driver failed it (kept). Anything else: could not be set up,
 * or OpenCL failed for a reason of the moment (recorded, not kept). */
static clmem_status run_check(clmem_bridge *b, const struct image_format *f, clmem_bridge_path path,
                              VkQueue vk_queue, uint32_t family, cl_command_queue queue, char *why, size_t why_len)
{
    const VkFormatFeatureFlags features_wanted = VK_FORMAT_FEATURE_TRANSFER_SRC_BIT | VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
    const unsigned tb = f->planes[0].texel_bytes;
    const size_t bytes = (size_t)CHECK_WIDTH * CHECK_HEIGHT * tb;
    VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    VkFormatProperties fp;
    struct owned_image *owned = NULL;
    clmem_keepalive *ka = NULL;
    struct staging up = {0}, down = {0};
    struct vk_once once = {0};
    clmem_handle *h = NULL;
    unsigned char *host = NULL;
    cl_event released = NULL;
    size_t origin[3] = {0, 0, 0}, region[3] = {CHECK_WIDTH, CHECK_HEIGHT, 1};
    clmem_status s;
    cl_int err;

    b->vk.GetPhysicalDeviceFormatProperties(b->physical_device, f->vk, &fp);
    if ((fp.optimalTilingFeatures & features_wanted) != features_wanted) {
        snprintf(why, why_len, "%s cannot copy to and from optimal-tiling %s images (format features 0x%x)",
                 b->caps.vk_device_name, f->name, (unsigned)fp.optimalTilingFeatures);
        return CLMEM_ERR_UNSUPPORTED;
    }
    if (fp.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT)
        usage |= VK_IMAGE_USAGE_SAMPLED_BIT;
    if (fp.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT)
        usage |= VK_IMAGE_USAGE_STORAGE_BIT;

    owned = calloc(1, sizeof *owned);
    host = malloc(bytes);
    if (!owned || !host) {
        free(owned);
        free(host);
        return clmem__fail(CLMEM_ERR_NO_MEMORY, "Allocating the live check failed.");
    }
    owned->bridge = b;
    s = clmem__vk_image_create(b, f->vk, (VkExtent2D){CHECK_WIDTH, CHECK_HEIGHT}, VK_IMAGE_TILING_OPTIMAL, usage,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                               (VkExternalMemoryHandleTypeFlags)clmem__path_handle_type(path), &owned->image);
    if (s == CLMEM_ERR_UNSUPPORTED) /* no device-local type for it (a CPU device): any type */
        s = clmem__vk_image_create(b, f->vk, (VkExtent2D){CHECK_WIDTH, CHECK_HEIGHT}, VK_IMAGE_TILING_OPTIMAL, usage, 0,
                                   (VkExternalMemoryHandleTypeFlags)clmem__path_handle_type(path), &owned->image);
    if (s != CLMEM_OK) {
        free(owned);
        free(host);
        return s;
    }
    if (!(ka = clmem_keepalive_new(owned_image_release, owned))) {
        clmem_bridge_vk_image_destroy(b, &owned->image);
        free(owned);
        free(host);
        return CLMEM_ERR_NO_MEMORY;
    }
    if ((s = staging_open(b, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &up)) != CLMEM_OK ||
        (s = staging_open(b, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &down)) != CLMEM_OK ||
        (s = vk_once_open(&once, b, vk_queue, family)) != CLMEM_OK)
        goto done;

    /* Vulkan -> OpenCL */
    fill_pattern(f, 1, up.data);
    if ((s = vk_upload_to_image(&once, up.buffer, owned->image.image)) != CLMEM_OK)
        goto done;
    s = clmem__import_optimal(b, &owned->image, path, ka, queue, CL_MEM_READ_WRITE, &h);
    if (s != CLMEM_OK) {
        s = step_failed(s, "OpenCL could not import it", why, why_len);
        goto done;
    }
    if ((s = clmem__handoff_one(true, b, h, 0, NULL, NULL)) != CLMEM_OK) {
        s = step_failed(s, "acquiring it failed", why, why_len);
        goto done;
    }
    err = clEnqueueReadImage(queue, clmem_handle_mem(h), CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = cl_call_failed("clEnqueueReadImage", err, why, why_len);
        goto done;
    }
    if (!same_texels(f, up.data, host, "Vulkan wrote, OpenCL read", why, why_len)) {
        s = CLMEM_ERR_UNSUPPORTED;
        goto done;
    }

    /* OpenCL -> Vulkan */
    fill_pattern(f, 2, host);
    err = clEnqueueWriteImage(queue, clmem_handle_mem(h), CL_TRUE, origin, region, 0, 0, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = cl_call_failed("clEnqueueWriteImage", err, why, why_len);
        goto done;
    }
    if ((s = clmem__handoff_one(false, b, h, 0, NULL, &released)) != CLMEM_OK) {
        s = step_failed(s, "releasing it failed", why, why_len);
        goto done;
    }
    if ((err = clWaitForEvents(1, &released)) != CL_SUCCESS) {
        s = cl_call_failed("clWaitForEvents (on the release)", err, why, why_len);
        goto done;
    }
    if ((s = vk_read_back_image(&once, owned->image.image, down.buffer)) != CLMEM_OK)
        goto done;
    if (!same_texels(f, host, down.data, "OpenCL wrote, Vulkan read", why, why_len))
        s = CLMEM_ERR_UNSUPPORTED;

done:
    if (released)
        clReleaseEvent(released);
    clmem_handle_unref(h); /* the teardown hands the image back and frees it through ka */
    clmem_keepalive_unref(ka);
    vk_once_close(&once);
    staging_close(b, &up);
    staging_close(b, &down);
    free(host);
    return s;
}

static clmem_status image_live_check(clmem_bridge *b, VkFormat format, clmem_bridge_path path, VkQueue vk_queue,
                                     uint32_t vk_queue_family, cl_command_queue queue)
{
    const struct image_format *f;
    clmem_bridge_path fd_path;
    struct image_check *slot;
    char why[CAPS_MESSAGE_MAX - 160] = "";
    clmem_status s;

    if (!b || !vk_queue || !queue)
        return fail_null(!b ? "bridge" : !vk_queue ? "vk_queue" : "queue");
    BRIDGE_LIVE(b, "clmem_bridge_image_live_check");
    /* In clmem-bridge.h's order ("Which error wins"): the arguments on
     * their own (the path's value, the format table), then the queue's
     * context, then what this bridge can do. */
    if (path != CLMEM_BRIDGE_PATH_BEST && path != CLMEM_BRIDGE_PATH_OPAQUE_FD && path != CLMEM_BRIDGE_PATH_DMA_BUF &&
        path != CLMEM_BRIDGE_PATH_HOST_MAPPED)
        return fail_unknown_path((int)path);
    if (!(f = clmem__format_find(format)))
        return clmem__format_unknown(format);
    if (!(f->offers & FORMAT_OPTIMAL_FD))
        return clmem__fail(CLMEM_ERR_UNSUPPORTED,
                           "%s offers no optimal-tiling import (core OpenCL has no image of %u planes to import "
                           "it into); nothing to check.",
                           f->name, f->plane_count);
    if ((s = clmem__bridge_check_queue(b, queue)) != CLMEM_OK ||
        (s = clmem__image_optimal_path(b, NULL, path, &fd_path)) != CLMEM_OK ||
        (s = clmem__caps_report(&b->caps.image_from_fd)) != CLMEM_OK ||
        (s = clmem__image_cl_format_supported(b, f, 0, CL_MEM_READ_WRITE, CHECK_WIDTH, CHECK_HEIGHT)) != CLMEM_OK)
        return s;

    pthread_mutex_lock(&b->check_lock);
    slot = clmem__image_check_slot(b, f, fd_path);
    if (slot->state == IMAGE_CHECK_NOT_RUN) {
        s = run_check(b, f, fd_path, vk_queue, vk_queue_family, queue, why, sizeof why);
        if (s == CLMEM_OK) {
            slot->state = IMAGE_CHECK_PASSED;
            slot->answer.status = CLMEM_OK;
            slot->answer.message[0] = '\0';
        } else if (s == CLMEM_ERR_UNSUPPORTED && why[0]) {
            size_t len = strlen(why);
            if (why[len - 1] == '.') /* an inner message's own full stop: the sentence below ends with one */
                why[len - 1] = '\0';
            slot->state = IMAGE_CHECK_FAILED;
            slot->answer.status = CLMEM_ERR_UNSUPPORTED;
            snprintf(slot->answer.message, sizeof slot->answer.message,
                     "The live check of optimal-tiling %s images on the %s path of %s failed, so they are not "
                     "offered on this bridge: %s.",
                     f->name, clmem_bridge_path_name(fd_path), b->caps.cl_device_name, why);
        } else {
            pthread_mutex_unlock(&b->check_lock);
            return s; /* could not be set up: recorded by the step that failed, not kept */
        }
    }
    s = clmem__caps_report(&slot->answer);
    pthread_mutex_unlock(&b->check_lock);
    return s;
}

CLMEM_EXPORT clmem_status clmem_bridge_image_live_check(clmem_bridge *b, VkFormat format, clmem_bridge_path path,
                                                        VkQueue vk_queue, uint32_t vk_queue_family,
                                                        cl_command_queue queue)
{
    return clmem__error_in(__func__, image_live_check(b, format, path, vk_queue, vk_queue_family, queue));
}
