/* SPDX-License-Identifier: MIT */
#include "vkctx.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint validation_errors;

unsigned vkctx_validation_errors(void)
{
    return atomic_load(&validation_errors);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)types;
    (void)user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        atomic_fetch_add(&validation_errors, 1);
        printf("# validation error: %s\n", data->pMessage);
        fflush(stdout);
    }
    return VK_FALSE;
}

static bool instance_has_layer(const char *name)
{
    uint32_t n = 0;
    VkLayerProperties *layers;
    bool found = false;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n)
        return false;
    layers = calloc(n, sizeof *layers);
    if (layers && vkEnumerateInstanceLayerProperties(&n, layers) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(layers[i].layerName, name) == 0;
    free(layers);
    return found;
}

static bool device_has_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    VkExtensionProperties *ext;
    bool found = false;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
        return false;
    ext = calloc(n, sizeof *ext);
    if (ext && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) >= VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    free(ext);
    return found;
}

static bool create_instance(struct vkctx *ctx)
{
    const char *layer = "VK_LAYER_KHRONOS_validation";
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    const char *env = getenv("CLMEM_VALIDATION");
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "clmem", .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r;

    ctx->validation = !(env && strcmp(env, "0") == 0) && instance_has_layer(layer);
    if (ctx->validation) {
        ci.enabledLayerCount = 1;
        ci.ppEnabledLayerNames = &layer;
        ci.enabledExtensionCount = 1;
        ci.ppEnabledExtensionNames = &ext;
    }
    r = vkCreateInstance(&ci, NULL, &ctx->instance);
    if (r != VK_SUCCESS) {
        snprintf(ctx->error, sizeof ctx->error, "vkCreateInstance failed: %d (no Vulkan driver?)", r);
        ctx->instance = VK_NULL_HANDLE;
        return false;
    }
    /* The loader's: every Vulkan call here goes through it. */
    ctx->get_instance_proc_addr = vkGetInstanceProcAddr;
    if (ctx->validation) {
        VkDebugUtilsMessengerCreateInfoEXT mi = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
                                                 .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                                                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
                                                 .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                                                VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                                                VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                                                 .pfnUserCallback = on_message};
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(ctx->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create || create(ctx->instance, &mi, NULL, &ctx->messenger) != VK_SUCCESS)
            ctx->messenger = VK_NULL_HANDLE;
    }
    return true;
}

int vkctx_count_devices(struct vkctx *ctx)
{
    uint32_t n = 0;
    memset(ctx, 0, sizeof *ctx);
    if (!create_instance(ctx))
        return -1;
    vkEnumeratePhysicalDevices(ctx->instance, &n, NULL);
    vkctx_close(ctx);
    return (int)n;
}

/* ------------------------------------------------ choosing the device */

#define MAX_DEVICES 16

struct device_facts {
    VkPhysicalDevice handle;
    VkPhysicalDeviceProperties props;
    bool has_uuid; /* the device offers Vulkan 1.1, so deviceUUID could be asked */
    uint8_t uuid[VK_UUID_SIZE];
};

/* The physical devices (at most MAX_DEVICES) with their names and UUIDs;
 * 0 with ctx->error set when there are none. */
static uint32_t list_devices(struct vkctx *ctx, struct device_facts *out)
{
    VkPhysicalDevice devices[MAX_DEVICES];
    uint32_t n = MAX_DEVICES;

    if (vkEnumeratePhysicalDevices(ctx->instance, &n, devices) < VK_SUCCESS || n == 0) {
        snprintf(ctx->error, sizeof ctx->error, "no Vulkan physical device");
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct device_facts *d = &out[i];
        memset(d, 0, sizeof *d);
        d->handle = devices[i];
        vkGetPhysicalDeviceProperties(devices[i], &d->props);
        /* vkGetPhysicalDeviceProperties2 is core 1.1: only for a device
         * that offers 1.1 (the instance asks for 1.1). */
        if (d->props.apiVersion >= VK_API_VERSION_1_1) {
            VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
            VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
            vkGetPhysicalDeviceProperties2(devices[i], &p2);
            memcpy(d->uuid, id.deviceUUID, sizeof d->uuid);
            d->has_uuid = true;
        }
    }
    return n;
}

void vkctx_format_uuid(const uint8_t u[VK_UUID_SIZE], char out[37])
{
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* "...; there is 1 Vulkan device: 0 = llvmpipe (...), UUID 6c6c...": what
 * exists, appended to ctx->error (truncated to fit). */
static void append_device_list(struct vkctx *ctx, const struct device_facts *d, uint32_t n)
{
    size_t used = strlen(ctx->error);
    int w = snprintf(ctx->error + used, sizeof ctx->error - used,
                     "; there %s %u Vulkan device%s:", n == 1 ? "is" : "are", (unsigned)n, n == 1 ? "" : "s");
    for (uint32_t i = 0; i < n && w >= 0 && (used += (size_t)w) < sizeof ctx->error; i++) {
        char uuid[37] = "unknown (Vulkan 1.0 device)";
        if (d[i].has_uuid)
            vkctx_format_uuid(d[i].uuid, uuid);
        w = snprintf(ctx->error + used, sizeof ctx->error - used, "%s %u = %s, UUID %s", i ? ";" : "", (unsigned)i,
                     d[i].props.deviceName, uuid);
    }
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 32 hex digits, any dashes anywhere ignored, either case. */
static bool parse_uuid(const char *s, uint8_t out[VK_UUID_SIZE])
{
    int digits = 0;
    for (; *s; s++) {
        int v;
        if (*s == '-')
            continue;
        if ((v = hex_digit(*s)) < 0 || digits == 2 * VK_UUID_SIZE)
            return false;
        if (digits % 2 == 0)
            out[digits / 2] = (uint8_t)(v << 4);
        else
            out[digits / 2] |= (uint8_t)v;
        digits++;
    }
    return digits == 2 * VK_UUID_SIZE;
}

/* The index into d of the device CLMEM_VK_DEVICE (`want`) names, or of the
 * default (want NULL or empty: the first discrete GPU, else the first); -1
 * with ctx->error set. */
static int choose_device(struct vkctx *ctx, const struct device_facts *d, uint32_t n, const char *want)
{
    uint8_t uuid[VK_UUID_SIZE];
    size_t len = want ? strlen(want) : 0;

    if (len == 0) {
        for (uint32_t i = 0; i < n; i++)
            if (d[i].props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
                return (int)i;
        return 0;
    }
    /* Only decimal digits: an index. (32 of them read as a UUID: no host
     * has that many devices.) */
    if (strspn(want, "0123456789") == len && len != 2 * VK_UUID_SIZE) {
        unsigned long index = len <= 9 ? strtoul(want, NULL, 10) : (unsigned long)-1;
        if (index < n)
            return (int)index;
        snprintf(ctx->error, sizeof ctx->error,
                 "CLMEM_VK_DEVICE=%s asks for Vulkan device index %s (only digits: an index), which does not exist",
                 want, want);
        append_device_list(ctx, d, n);
        return -1;
    }
    if (parse_uuid(want, uuid)) {
        char text[37];
        for (uint32_t i = 0; i < n; i++)
            if (d[i].has_uuid && memcmp(d[i].uuid, uuid, sizeof uuid) == 0)
                return (int)i;
        vkctx_format_uuid(uuid, text);
        snprintf(ctx->error, sizeof ctx->error,
                 "CLMEM_VK_DEVICE=%s asks for the Vulkan device with deviceUUID %s, which no device has", want, text);
        append_device_list(ctx, d, n);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        if (strstr(d[i].props.deviceName, want))
            return (int)i;
    snprintf(ctx->error, sizeof ctx->error,
             "CLMEM_VK_DEVICE=%s: no Vulkan device name contains '%s' (nor is it an index or a deviceUUID)", want,
             want);
    append_device_list(ctx, d, n);
    return -1;
}

/* Device `index`, or (index < 0) the one CLMEM_VK_DEVICE names, with its
 * facts in *chosen; false with ctx->error set. */
static bool pick_device(struct vkctx *ctx, int index, struct device_facts *chosen)
{
    struct device_facts d[MAX_DEVICES];
    uint32_t n = list_devices(ctx, d);
    int i;

    if (n == 0)
        return false;
    if (index >= 0) {
        if ((uint32_t)index >= n) {
            snprintf(ctx->error, sizeof ctx->error, "no Vulkan physical device %d", index);
            append_device_list(ctx, d, n);
            return false;
        }
        i = index;
    } else if ((i = choose_device(ctx, d, n, getenv("CLMEM_VK_DEVICE"))) < 0) {
        return false;
    }
    *chosen = d[i];
    ctx->device_index = i;
    return true;
}

int vkctx_find_device(struct vkctx *ctx)
{
    struct device_facts chosen;
    int index = -1;

    memset(ctx, 0, sizeof *ctx);
    if (!create_instance(ctx))
        return -1;
    if (pick_device(ctx, -1, &chosen))
        index = ctx->device_index;
    {
        char why[sizeof ctx->error];
        memcpy(why, ctx->error, sizeof why);
        vkctx_close(ctx);
        memcpy(ctx->error, why, sizeof why);
    }
    return index;
}

bool vkctx_open(struct vkctx *ctx, int index)
{
    const char *extensions[4];
    uint32_t next = 0, nfam = 0;
    VkQueueFamilyProperties fams[16];
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci[2] = {
        {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1, .pQueuePriorities = &priority},
        {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1, .pQueuePriorities = &priority}};
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = qci};
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    struct device_facts chosen;
    VkResult r;

    memset(ctx, 0, sizeof *ctx);
    if (!create_instance(ctx))
        return false;
    if (!pick_device(ctx, index, &chosen))
        goto fail;
    ctx->physical_device = chosen.handle;
    memcpy(ctx->device_name, chosen.props.deviceName, sizeof ctx->device_name);
    memcpy(ctx->device_uuid, chosen.uuid, sizeof ctx->device_uuid);
    ctx->has_device_uuid = chosen.has_uuid;

    nfam = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical_device, &nfam, fams);
    for (ctx->queue_family = 0; ctx->queue_family < nfam; ctx->queue_family++)
        if (fams[ctx->queue_family].queueFlags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT))
            break;
    if (ctx->queue_family == nfam) {
        snprintf(ctx->error, sizeof ctx->error, "%s has no compute or graphics queue", ctx->device_name);
        goto fail;
    }
    qci[0].queueFamilyIndex = ctx->queue_family;
    for (uint32_t i = 0; i < nfam && !ctx->has_transfer_queue; i++)
        if ((fams[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
            !(fams[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) && fams[i].queueCount > 0) {
            ctx->has_transfer_queue = true;
            ctx->transfer_family = i;
            qci[1].queueFamilyIndex = i;
            dci.queueCreateInfoCount = 2;
        }
    if ((ctx->has_memory_fd = device_has_extension(ctx->physical_device, "VK_KHR_external_memory_fd")))
        extensions[next++] = "VK_KHR_external_memory_fd";
    if (ctx->has_memory_fd &&
        (ctx->has_dma_buf = device_has_extension(ctx->physical_device, "VK_EXT_external_memory_dma_buf")))
        extensions[next++] = "VK_EXT_external_memory_dma_buf";
    if ((ctx->has_semaphore_fd = device_has_extension(ctx->physical_device, "VK_KHR_external_semaphore_fd")))
        extensions[next++] = "VK_KHR_external_semaphore_fd";
    dci.enabledExtensionCount = next;
    dci.ppEnabledExtensionNames = extensions;
    /* Two-plane formats (NV12, P010) are Y'CbCr formats: enable the feature
     * where the device has it (core in 1.1, optional). */
    VkPhysicalDeviceSamplerYcbcrConversionFeatures ycbcr = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SAMPLER_YCBCR_CONVERSION_FEATURES};
    if (chosen.props.apiVersion >= VK_API_VERSION_1_1) {
        VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &ycbcr};
        vkGetPhysicalDeviceFeatures2(ctx->physical_device, &f2);
        if (ycbcr.samplerYcbcrConversion) {
            ycbcr.pNext = NULL;
            dci.pNext = &ycbcr;
        }
    }
    r = vkCreateDevice(ctx->physical_device, &dci, NULL, &ctx->device);
    if (r != VK_SUCCESS) {
        snprintf(ctx->error, sizeof ctx->error, "vkCreateDevice(%s) failed: %d", ctx->device_name, r);
        ctx->device = VK_NULL_HANDLE;
        goto fail;
    }
    vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
    pci.queueFamilyIndex = ctx->queue_family;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    r = vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->pool);
    if (r != VK_SUCCESS) {
        snprintf(ctx->error, sizeof ctx->error, "vkCreateCommandPool failed: %d", r);
        ctx->pool = VK_NULL_HANDLE;
        goto fail;
    }
    if (ctx->has_transfer_queue) {
        vkGetDeviceQueue(ctx->device, ctx->transfer_family, 0, &ctx->transfer_queue);
        pci.queueFamilyIndex = ctx->transfer_family;
        r = vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->transfer_pool);
        if (r != VK_SUCCESS) {
            snprintf(ctx->error, sizeof ctx->error, "vkCreateCommandPool(transfer family %u) failed: %d",
                     ctx->transfer_family, r);
            ctx->transfer_pool = VK_NULL_HANDLE;
            goto fail;
        }
    }
    return true;
fail : {
    char why[sizeof ctx->error];
    memcpy(why, ctx->error, sizeof why);
    vkctx_close(ctx);
    memcpy(ctx->error, why, sizeof why);
}
    return false;
}

void vkctx_close(struct vkctx *ctx)
{
    if (ctx->device) {
        vkDeviceWaitIdle(ctx->device);
        if (ctx->pool)
            vkDestroyCommandPool(ctx->device, ctx->pool, NULL);
        if (ctx->transfer_pool)
            vkDestroyCommandPool(ctx->device, ctx->transfer_pool, NULL);
        vkDestroyDevice(ctx->device, NULL);
    }
    if (ctx->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            ctx->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(ctx->instance, ctx->messenger, NULL);
    }
    if (ctx->instance)
        vkDestroyInstance(ctx->instance, NULL);
    memset(ctx, 0, sizeof *ctx);
}
