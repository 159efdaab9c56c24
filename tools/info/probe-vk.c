/* SPDX-License-Identifier: MIT */
/* clmem-info: the Vulkan physical devices, how each pairs with an OpenCL
 * device, and the checks of every pair (live.c) one device at a time. */
#include "config.h"

#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clmem_status_name() without its prefix: "OK", "DEVICE_MISMATCH". */
static const char *status_name(clmem_status s)
{
    const char *name = clmem_status_name(s);
    if (strncmp(name, "CLMEM_ERR_", 10) == 0)
        return name + 10;
    if (strncmp(name, "CLMEM_STATUS_", 13) == 0)
        return name + 13;
    if (strncmp(name, "CLMEM_", 6) == 0)
        return name + 6;
    return name;
}

static const char *vk_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static void describe_vk_device(const struct vkctx *ctx, struct vk_dev *v)
{
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    uint32_t api;

    vkGetPhysicalDeviceProperties2(ctx->physical_device, &props);
    api = props.properties.apiVersion;
    v->opened = true;
    snprintf(v->name, sizeof v->name, "%s", props.properties.deviceName);
    v->type = vk_type_name(props.properties.deviceType);
    memcpy(v->uuid, id.deviceUUID, sizeof v->uuid);
    snprintf(v->api_version, sizeof v->api_version, "%u.%u.%u", VK_API_VERSION_MAJOR(api),
             VK_API_VERSION_MINOR(api), VK_API_VERSION_PATCH(api));
    /* vkctx enables each of these exactly when the device offers it
     * (dma-buf builds on memory_fd, so it is enabled only with it). */
    v->has_memory_fd = ctx->has_memory_fd;
    v->has_dma_buf = ctx->has_dma_buf;
    v->has_semaphore_fd = ctx->has_semaphore_fd;
}

static int find_cl_device(const struct report *r, cl_device_id id)
{
    for (int i = 0; i < r->n_cl; i++)
        if (r->cl[i].id == id)
            return i;
    return -1;
}

static void pair_vk_device(const struct report *r, const struct vkctx *ctx, struct vk_dev *v)
{
    cl_device_id dev = NULL;
    clmem_status s =
        clmem_bridge_pair(ctx->instance, ctx->get_instance_proc_addr, ctx->physical_device, NULL, &dev);

    v->pair_status = status_name(s);
    v->paired = s == CLMEM_OK ? find_cl_device(r, dev) : -1;
    if (s != CLMEM_OK)
        snprintf(v->reason, sizeof v->reason, "%s", clmem_error_message());
    else if (v->paired < 0)
        snprintf(v->reason, sizeof v->reason, "paired with an OpenCL device beyond the first %d listed",
                 MAX_CL_DEVICES);
}

void run_vulkan(struct report *r)
{
    struct vkctx ctx;
    int n = vkctx_count_devices(&ctx), first = 0, last;
    const char *want = getenv("CLMEM_VK_DEVICE");

    r->vulkan_built = true;
    if (n < 0) {
        snprintf(r->vk_error, sizeof r->vk_error, "%s", ctx.error);
        return;
    }
    if (n == 0) {
        snprintf(r->vk_error, sizeof r->vk_error, "no Vulkan physical device");
        return;
    }
    if (n > MAX_VK_DEVICES)
        n = MAX_VK_DEVICES;
    last = n - 1;
    /* CLMEM_VK_DEVICE (index, deviceUUID or name: tools/vkctx/vkctx.h) limits
     * the checks to that one device; naming none is a failure. */
    if (want && *want) {
        r->vk_total = n;
        snprintf(r->vk_selector, sizeof r->vk_selector, "%s", want);
        first = last = vkctx_find_device(&ctx);
        if (first < 0) {
            snprintf(r->vk_error, sizeof r->vk_error, "%s", ctx.error);
            r->vk_select_failed = true;
            r->failures++;
            return;
        }
    }
    /* One vkctx (instance and device) per physical device, open only
     * while that device's checks run. */
    for (int i = first; i <= last; i++) {
        struct vk_dev *v = &r->vk[r->n_vk];
        v->index = i;
        v->paired = -1;
        if (!vkctx_open(&ctx, i)) {
            snprintf(v->reason, sizeof v->reason, "%s", ctx.error);
            r->n_vk++;
            r->failures++;
            continue;
        }
        describe_vk_device(&ctx, v);
        pair_vk_device(r, &ctx, v);
        for (int cl = 0; cl < r->n_cl; cl++)
            check_pair(r, &ctx, r->n_vk, cl);
        r->n_vk++;
        vkctx_close(&ctx);
    }
}
